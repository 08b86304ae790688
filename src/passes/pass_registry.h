// Passes that describe themselves: the registry, declared options, the
// pipeline text and the preset table.
//
// Every pass registers itself in its own .cc, with its help and the options
// it reads (name, type, range or values, help; the default is the field's
// initializer in PassOptions, so it is written once):
//
//   void RegisterCollectivePipelinerPass(PassRegistry& registry) {
//     registry.Add<CollectivePipelinerPass>(
//         "pipeline all-gathers (prefetch) and ...",
//         {PassOptionInfo::Int("depth", &PassOptions::pipeline_depth, 1, 64,
//                              "prefetch depth ...")
//              .SetFlag("--pipeline-depth")});
//   }
//
// and `GlobalPassRegistry()` calls every Register*Pass in the order
// `--list-passes` prints them. An explicit list rather than self-registering
// static objects: the passes are a static archive, and the linker drops an
// object file nothing references (with its static initializer), so a pass
// only the registry names would silently vanish from the tool; whole-archive
// linking would have to be repeated on every test and fuzz binary. With the
// list, linking the registry links every pass, and a pass that does not
// register is a link error.
//
// Pipeline text: passes separated by commas, each with optional options in
// braces, checked against the declarations:
//
//   inline,dce,collective-pipeliner{depth=2,all-gather=true},async-collectives
//
// Errors name the pass, the option and what is allowed:
//
//   pass 'collective-pipeliner': option 'depth=0': expected an integer from
//   1 to 64
//   pass 'collective-pipeliner' has no option 'mode'; its options: depth,
//   all-gather, reduce-scatter, all-reduce
//
// Command-line flags that set an option for every run of a pass
// (`--pipeline-depth`, `--in-flight-limit`, `--gpu`) are checked by the same
// declaration (PassOptionInfo::Check); an option in the pipeline text
// applies to that one run and wins over the flag.
//
// Presets are pipeline text in one table (Presets()); `hloverlap opt
// --list-presets [--json]` prints it and the Python package reads it from
// there.
#ifndef HLOVERLAP_PASSES_PASS_REGISTRY_H_
#define HLOVERLAP_PASSES_PASS_REGISTRY_H_

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "passes/pass.h"

namespace hloverlap {

// One option a pass reads from PassOptions.
struct PassOptionInfo {
  enum class Type { kInt, kBool, kEnum };

  static PassOptionInfo Int(std::string name, int PassOptions::*field,
                            int64_t min, int64_t max, std::string help);
  static PassOptionInfo Bool(std::string name, bool PassOptions::*field,
                             std::string help);
  static PassOptionInfo Enum(std::string name, std::string PassOptions::*field,
                             std::vector<std::string> values, std::string help);
  // The command-line flag that sets the option for every run ("--gpu").
  PassOptionInfo& SetFlag(std::string f) {
    flag = std::move(f);
    return *this;
  }
  // The PassOptions::option_sources key a set records its source under (for
  // remarks that say why something is off), e.g. "pipeline_all_gather".
  PassOptionInfo& SetSourceKey(std::string key) {
    source_key = std::move(key);
    return *this;
  }

  // OK when `value` is a valid value; else an error saying what is allowed
  // (no location: the caller prefixes the pass or flag).
  absl::Status Check(std::string_view value) const;
  // Sets the option from a value Check accepted; records `source` (the
  // text that set it) under source_key.
  void Set(PassOptions& options, std::string_view value,
           std::string_view source) const;
  // The value in `options` as text ("2", "true", "h200").
  std::string Get(const PassOptions& options) const;
  // "int 1..64", "bool", "h100|h200".
  std::string TypeText() const;
  nlohmann::ordered_json ToJson() const;

  std::string name;
  Type type = Type::kInt;
  int64_t min = 0;
  int64_t max = 0;
  std::vector<std::string> values;  // kEnum
  std::string help;
  std::string flag;
  std::string source_key;
  int PassOptions::*int_field = nullptr;
  bool PassOptions::*bool_field = nullptr;
  std::string PassOptions::*string_field = nullptr;
};

struct PassInfo {
  std::string name;
  std::string help;
  std::vector<PassOptionInfo> options;
  std::unique_ptr<Pass> (*make)() = nullptr;

  const PassOptionInfo* FindOption(std::string_view option) const;
};

class PassRegistry {
 public:
  template <typename P>
  void Add(std::string help, std::vector<PassOptionInfo> options = {}) {
    AddInfo(PassInfo{std::string(P().name()), std::move(help),
                     std::move(options),
                     [] { return std::unique_ptr<Pass>(new P()); }});
  }
  const std::vector<PassInfo>& passes() const { return passes_; }
  const PassInfo* Find(std::string_view name) const;

 private:
  void AddInfo(PassInfo info);
  std::vector<PassInfo> passes_;
};

// Every pass of this build (see the header comment).
const PassRegistry& GlobalPassRegistry();
const PassInfo* FindPass(std::string_view name);
// An option of a registered pass; nullptr if there is none.
const PassOptionInfo* FindPassOption(std::string_view pass,
                                     std::string_view option);

// One pass of a pipeline text: its name and the options given in braces
// (checked, in order).
struct PassSpec {
  const PassInfo* info = nullptr;
  PassOptionValues options;
  std::string Text() const;  // "collective-pipeliner{depth=2}"
};
// "NAME" or "NAME{k=v,...}".
std::string PassRunText(std::string_view name, const PassOptionValues& options);

// Parses and checks pipeline text (see the header comment).
absl::StatusOr<std::vector<PassSpec>> ParsePipelineText(std::string_view text);
std::string PipelineText(const std::vector<PassSpec>& specs);
PassPipeline BuildPipeline(const std::vector<PassSpec>& specs);

// The pieces presets (and auto's candidates, and the pipeline XLA flags
// ask for) are written with, each spelled here only:
//   the cleanup preset, which every preset starts with;
inline constexpr std::string_view kCleanupPipeline =
    "inline,tuple-simplify,dce";
//   the cleanup after a loop rewrite (no call left to inline);
inline constexpr std::string_view kRewriteCleanup = "tuple-simplify,dce";
//   XLA:GPU's last passes: async conversion, then scheduling.
inline constexpr std::string_view kXlaGpuTail =
    "async-collectives,latency-hiding-scheduler";
// The parts joined with commas:
//   JoinPipeline({kCleanupPipeline, "collective-hoist", kRewriteCleanup}) ==
//   "inline,tuple-simplify,dce,collective-hoist,tuple-simplify,dce".
std::string JoinPipeline(std::initializer_list<std::string_view> parts);

// A named pipeline (`--preset=NAME`).
struct PresetInfo {
  std::string name;
  std::string pipeline;  // pipeline text
  std::string help;
};
const std::vector<PresetInfo>& Presets();
const PresetInfo* FindPreset(std::string_view name);
// The passes of a preset; an unknown name is an error listing the presets.
absl::StatusOr<std::vector<PassSpec>> PresetPasses(std::string_view preset);

// `hloverlap opt --list-passes` / `--list-presets`, as text or JSON.
std::string ListPassesText();
nlohmann::ordered_json ListPassesJson();
std::string ListPresetsText();
nlohmann::ordered_json ListPresetsJson();

}  // namespace hloverlap

#endif  // HLOVERLAP_PASSES_PASS_REGISTRY_H_
