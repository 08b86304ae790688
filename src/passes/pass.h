// Pass interface, options shared by passes, and pass pipelines.
//
// A pass rewrites a module in place and says whether it changed anything:
//
//   absl::StatusOr<bool> Run(Module& module, PassContext& context);
//
// Passes never crash on input they cannot handle: they leave it unchanged
// and emit a `missed` remark. Internal errors come back as a Status naming
// the pass, loop and instruction.
//
// Pipelines are built from pipeline text ("inline,dce,
// collective-pipeliner{depth=2}") or a preset ("xla-gpu"); the passes, their
// declared options and the presets are in passes/pass_registry.h.
//
// Instrumentations hook around every pass run of a pipeline (as MLIR's
// PassInstrumentation): verify-each, dump-after and per-pass timing are
// instrumentations (passes/pass_instrumentation.h), not special cases of
// PassPipeline::Run.
//
// Module-size guard. Every rewrite that adds instructions (double
// buffering, the pipeliner's prologues, peeled iterations and sinks, the
// collective hoist, call inlining, async conversion) first predicts how many
// it adds and reserves them with PassContext::size_guard.Reserve; over the
// limit (--max-module-instructions) the pipeline stops with a user error
// located at the loop or call, before anything is built:
//
//   m.hlo:40:3: pass double-buffer: unrolling while loop w.15 (computation
//   body.14) would add 393230 instructions: the module would grow from 210
//   to 393440 instructions, over the limit of 250000 (...); raise it with
//   --max-module-instructions=N, or leave the loop alone (...)
//
// Forcing `--loop=all:double-buffer=on` on a nest of depth 16 doubles it 16
// times: without the guard that allocates gigabytes before anything fails.
#ifndef HLOVERLAP_PASSES_PASS_H_
#define HLOVERLAP_PASSES_PASS_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/module.h"
#include "passes/loop_policy.h"
#include "passes/planning.h"
#include "passes/remarks.h"

namespace hloverlap {

struct PassOptions {
  // Collective kinds the pipeliner may move.
  bool pipeline_all_gather = true;
  bool pipeline_reduce_scatter = true;
  bool pipeline_all_reduce = true;
  // Default prefetch depth for all-gathers (iterations ahead).
  int pipeline_depth = 1;
  // Extra live bytes the hoist, the pipeliner and double buffering may add
  // together in one pipeline run (PassContext::memory); unset = no limit.
  std::optional<int64_t> memory_budget_bytes;
  // Per-loop rules from --loop=, in order.
  std::vector<LoopRule> loop_rules;
  // Double buffering: by default only innermost loops containing collectives.
  bool double_buffer_default = true;
  // Double buffering planned (double_buffering.h): a loop is unrolled only
  // when the cost oracle predicts a gain; false (the fixed presets, XLA's
  // flag): every loop the policy selects, as XLA does.
  bool double_buffer_plan = false;
  // Reduction deferral (opt-in): in every loop, not only those whose
  // --loop policy says defer-reduce=on.
  bool defer_reduction = false;
  // Async conversion: collective kinds left synchronous, each with the flag
  // that said so (XLA's --xla_gpu_disable_async_collectives=...).
  std::vector<std::pair<Opcode, std::string>> synchronous_collectives;
  // Latency-hiding scheduler: async collectives in flight at once (1 as
  // XLA:GPU, 2 allowed), live-bytes limit (unset = none), the GPU preset of
  // the analytical cost model ("h100", "h200").
  int collective_in_flight_limit = 1;
  std::optional<int64_t> scheduler_memory_limit_bytes;
  // Without an explicit limit: XLA's, (0.8 x the GPU's memory - the entry's
  // parameter and output bytes) x this / 100
  // (--xla_gpu_memory_limit_slop_factor).
  std::optional<int> scheduler_memory_slop_percent;
  std::string gpu = "h200";
  // donors-to-aliases: what an output must share with a donated parameter
  // ("layout": shape and layout; "shardy": also the Shardy sharding, for a
  // module before partitioning).
  std::string donor_match = "layout";
  // Module-size guard: the most instructions the module may have after a
  // rewrite; unset: ModuleSizeGuard's default (relative to the input).
  std::optional<int64_t> max_module_instructions;
  // The flag that set an option, as written, keyed by the option's field
  // name ("pipeline_all_gather", "double_buffer_default"), so remarks can
  // say why something is off.
  std::map<std::string, std::string> option_sources;
  // " (SOURCE)" when option_sources has `option`, else "".
  std::string SourceOf(std::string_view option) const;
  // The source of `option`, else `fallback`.
  std::string SourceOr(std::string_view option, std::string fallback) const;
};

// Counts the module's instructions for the module-size guard (see above).
class ModuleSizeGuard {
 public:
  // The default limit: kDefaultGrowth x the instructions the pipeline
  // started with, at least kDefaultMinimum (about 150 MB of IR). Passes
  // that grow a module on their own (double buffering every innermost loop,
  // depth-2 pipelining) stay far below 16x; repeated doubling of a nest
  // does not.
  static constexpr int64_t kDefaultGrowth = 16;
  static constexpr int64_t kDefaultMinimum = 100'000;

  // Sets the limit (`limit`: --max-module-instructions; unset: the
  // default) and, on the first call, the input size the default is relative
  // to (PassPipeline calls it before every pass; Reserve on its first call
  // when nobody did).
  void Sync(const Module& module, std::optional<int64_t> limit);

  // A rewrite (`what`, e.g. "unrolling while loop w.3 (computation b)") of
  // `at` is about to add `count` instructions (all it creates, before it
  // removes what it replaces: the peak). OK when the module's instructions
  // now (a sum over computations, cheap) plus `count` stay within the
  // limit. Else a ResourceExhausted error located at `at`, saying what would
  // be added, the module's size, the limit, how to raise it and `avoid` (how
  // to keep the rewrite off); passes return it unchanged (IsModuleSizeLimit)
  // so the pipeline stops before building anything.
  absl::Status Reserve(const Module& module, const Instruction& at,
                       std::string_view what, int64_t count,
                       std::string_view avoid);

  int64_t limit() const;

 private:
  std::optional<int64_t> explicit_limit_;
  int64_t input_ = -1;  // instructions at the first Sync
};

// Whether `status` is ModuleSizeGuard::Reserve's refusal.
bool IsModuleSizeLimit(const absl::Status& status);

struct PassContext {
  PassOptions options;
  RemarkSink remarks;
  ModuleSizeGuard size_guard;
  // What loop passes' plans ask (planning.h); nullptr: no predicted times
  // (compute-duplicating candidates are still refused).
  const CostOracle* cost_oracle = nullptr;
  // --memory-budget, spent once per pipeline run (PassPipeline::Run resets
  // it from options.memory_budget_bytes).
  MemoryLedger memory;
};

class Pass {
 public:
  virtual ~Pass() = default;
  virtual std::string_view name() const = 0;
  virtual absl::StatusOr<bool> Run(Module& module, PassContext& context) = 0;
};

// Hooks around each pass run of a PassPipeline. `index` counts the runs of
// the pipeline from 0; `occurrence` counts the runs of this pass's name
// from 1 (the second `dce` of a pipeline is occurrence 2) and
// `occurrences` is how many runs of that name the pipeline has.
// Declared options of one pass run with their values (pass_registry.h).
struct PassOptionInfo;
using PassOptionValues =
    std::vector<std::pair<const PassOptionInfo*, std::string>>;

class PassInstrumentation {
 public:
  struct PassRun {
    const Pass& pass;
    int index = 0;
    int occurrence = 1;
    int occurrences = 1;
  };
  virtual ~PassInstrumentation() = default;
  virtual void RunBeforePass(const PassRun& run, const Module& module,
                             PassContext& context) {}
  // After a pass that succeeded; an error stops the pipeline.
  virtual absl::Status RunAfterPass(const PassRun& run, const Module& module,
                                    PassContext& context) {
    return absl::OkStatus();
  }
  // After a pass that returned an error (the pipeline stops).
  virtual void RunAfterPassFailed(const PassRun& run, const Module& module,
                                  PassContext& context) {}
};

// Runs passes in order. A pass added with options (from pipeline text,
// "collective-pipeliner{depth=2}") runs with them set on a copy of
// context.options; the next pass sees the pipeline's options again.
// Instrumentations run in the order added: RunBeforePass before each pass,
// RunAfterPass(Failed) after it.
class PassPipeline {
 public:
  void Add(std::unique_ptr<Pass> pass) { Add(std::move(pass), {}); }
  // `options` are set for this run only (PassOptionInfo::Set), each with
  // the pass's pipeline text as its source.
  void Add(std::unique_ptr<Pass> pass, PassOptionValues options);
  void AddInstrumentation(std::unique_ptr<PassInstrumentation> instrumentation);
  const std::vector<std::unique_ptr<Pass>>& passes() const { return passes_; }
  absl::StatusOr<bool> Run(Module& module, PassContext& context);

 private:
  std::vector<std::unique_ptr<Pass>> passes_;
  std::vector<PassOptionValues> options_;  // per pass
  std::vector<std::unique_ptr<PassInstrumentation>> instrumentations_;
};

// A pass by name ("dce"); nullptr if unknown. KnownPassNames lists them
// (pass_registry.h has their help and options).
std::unique_ptr<Pass> CreatePass(std::string_view name);
std::vector<std::string> KnownPassNames();

// Builds a pipeline from pipeline text or a preset. Unknown names and
// options are errors that list the known ones.
absl::StatusOr<PassPipeline> BuildPipeline(std::string_view pipeline_text);
absl::StatusOr<PassPipeline> BuildPreset(std::string_view preset);
std::vector<std::string> KnownPresets();

}  // namespace hloverlap

#endif  // HLOVERLAP_PASSES_PASS_H_
