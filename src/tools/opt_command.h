// `hloverlap opt IN.hlo [-o OUT.hlo]`: parse, verify, transform, print.
//
// Reads a module (file, `-` for stdin, `.hlo.gz`), verifies it, runs the
// pass pipeline given by `--passes=PIPELINE TEXT` or `--preset=NAME`
// (passes/pass_registry.h: `inline,collective-pipeliner{depth=2}`)
// with per-loop rules (`--loop=`), writes the remarks (`--remarks=-|FILE`,
// text or JSON lines) and prints the result in the current default XLA
// style. XLA flags (`XLA_FLAGS`, `--xla-flags`) set the options of the
// passes they concern (tools/xla_flags.h); with no --passes/--preset, the
// passes they turn on make the pipeline. Each flag's effect is printed on
// stderr; unrelated XLA flags are warnings, never errors.
#ifndef HLOVERLAP_TOOLS_OPT_COMMAND_H_
#define HLOVERLAP_TOOLS_OPT_COMMAND_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "passes/pass.h"
#include "tools/cli_util.h"
#include "tools/xla_flags.h"

namespace CLI {
class App;
class Validator;
}  // namespace CLI

namespace hloverlap {

struct OptCommandOptions {
  std::string input;
  std::string output = "-";
  bool verify = true;  // --no-verify turns off input verification
  std::string passes;  // --passes=PIPELINE TEXT (empty: none)
  std::string preset;  // --preset=NAME
  std::vector<std::string> loop_rules;  // --loop=SELECTOR:POLICY, repeatable
  std::string remarks;                  // --remarks=-|FILE (empty: none)
  std::string remarks_format = "text";  // --remarks-format=text|json
  // Per-loop summary of the remarks on stderr: --remarks-summary forces it,
  // --no-remarks-summary turns it off; by default it is on when the remarks
  // go to a file.
  bool remarks_summary = false;
  bool no_remarks_summary = false;
  bool verify_each = false;  // --verify-each
  bool time_passes = false;  // --time-passes: per-pass wall time to stderr
  // Flags that set a pass's declared option (empty: the declared default).
  std::string pipeline_depth;          // --pipeline-depth=N
  std::string memory_budget;           // --memory-budget=BYTES[KMG]
  std::string in_flight_limit;         // --in-flight-limit=N (scheduler)
  std::string scheduler_memory_limit;  // --scheduler-memory-limit=BYTES
  std::string gpu;                     // --gpu=h100|h200 (cost model)
  // --max-module-instructions=N (0: the default, relative to the input).
  int64_t max_module_instructions = 0;
  std::string dump_after;              // --dump-after=PASS
  std::string dump_path;               // --dump-path=FILE
  bool print_metadata = true;          // --no-metadata
  bool print_backend_config = true;    // --no-backend-config
  int64_t elide_constants_above = -1;  // --elide-constants=N
  // --xla-flags="..." (applied after the XLA_FLAGS environment variable,
  // see xla_flags.h); use_xla_flags_env=false ignores XLA_FLAGS.
  std::string xla_flags;
  bool use_xla_flags_env = true;  // --no-xla-flags-env
  // --list-passes / --list-presets / --list-xla-flags [--json]: print and
  // exit (no input).
  bool list_passes = false;
  bool list_presets = false;
  bool list_xla_flags = false;
  bool list_json = false;
};

void RegisterOptCommand(CLI::App& app, CommandContext& ctx);

// The pipeline `opt` runs for `options` (--passes, --preset, or the passes
// the XLA flags turn on; notes about what the flags changed go to stderr)
// and the context it runs in (options from the flags and the command line,
// --loop rules). `explain` builds its pipeline here too, so it runs exactly
// what `opt` runs.
struct OptPipeline {
  std::string spec;  // the pass names, comma-separated (empty: none)
  PassPipeline pipeline;
  PassContext context;
  // The cost model context.cost_oracle points to (plans, --preset=auto).
  std::shared_ptr<const CostOracle> oracle;
  // With `predict_steps`, RunPipelineOnInput asks the oracle (the simulator
  // `hloverlap sim` runs) for the input's and the output's step, exposed
  // communication and peak: the summary's last lines, explain's step change.
  bool predict_steps = false;
  std::optional<StepPrediction> input_step;
  std::optional<StepPrediction> output_step;
};
absl::StatusOr<OptPipeline> BuildOptPipeline(const OptCommandOptions& options,
                                             const PassOptions& flag_options,
                                             const XlaFlagsResult& flags);

// Runs `built` on `module` the way `opt` (and `explain`) do: the --loop
// selectors checked against the input's loops, the remarks named after the
// input's instructions, what did not happen as asked printed on stderr.
absl::StatusOr<bool> RunPipelineOnInput(OptPipeline& built, Module& module);

// The remarks as `--remarks-format` asks, for opt's and explain's
// --remarks: JSON lines, or the text lines and then one line of counts
// ("remarks: 24 passed, 14 missed, 0 failures").
std::string RemarksFileText(const RemarkSink& remarks, std::string_view format);

// Writes opt's and explain's --remarks=`path` (RemarksFileText of
// `format`) to the file `path` and returns ""; for `path` '-' writes
// nothing and returns the text, which the command shows where its
// --remarks=- puts it (opt: stderr; explain: after the report). Errors
// name the file.
absl::StatusOr<std::string> WriteRemarks(const RemarkSink& remarks,
                                         const std::string& path,
                                         std::string_view format);

// A CLI11 check of a flag by the pass option it sets (one range or list,
// declared once, by the pass): opt's and explain's --pipeline-depth,
// --in-flight-limit and --gpu.
CLI::Validator DeclaredOptionCheck(std::string_view pass,
                                   std::string_view option);

// A flag that sets the option `option` of `pass` for every run: its name
// is the one the pass declares for it (PassOptionInfo::flag), its check the
// option's type and range (DeclaredOptionCheck). An internal error naming
// the command, pass and option when the pass declares no such option or no
// flag for it (a renamed option): nothing is registered then, and the
// command refuses to run (CommandContext::AddRegistrationError) rather than
// silently lose the flag.
absl::Status AddDeclaredOptionFlag(CLI::App& cmd, std::string_view pass,
                                   std::string_view option, std::string& value,
                                   std::string_view help);

// The flags that set the passes' options, for opt and explain alike:
// --pipeline-depth, --memory-budget, --in-flight-limit,
// --scheduler-memory-limit, --gpu, --xla-flags and --no-xla-flags-env.
// Declares every one it can; the first AddDeclaredOptionFlag error.
absl::Status AddPassOptionFlags(CLI::App& cmd, OptCommandOptions& options);

// Every flag value and output path of `options`, checked before any work
// (before the input is read): --passes/--preset (one, parsed), the byte
// sizes, each --loop rule, and that -o, --remarks and --dump-after's file
// can be written. `explain` checks its own (the same flags) here too.
absl::Status CheckOptFlagValues(const OptCommandOptions& options);

// What opt and explain know from their flags before any work: every value
// and output path checked (CheckOptFlagValues), then the XLA flags
// (XLA_FLAGS unless --no-xla-flags-env, then --xla-flags) applied, their
// effect printed as `print` asks. Errors are user errors naming the flag.
struct CheckedOptFlags {
  PassOptions flag_options;  // the passes' options as the XLA flags set them
  XlaFlagsResult xla_flags;  // what they turned on and off
};
absl::StatusOr<CheckedOptFlags> CheckOptFlags(const OptCommandOptions& options,
                                              XlaFlagsPrint print);

// Runs `opt` and returns the exit code.
int RunOptCommand(const OptCommandOptions& options);

}  // namespace hloverlap

#endif  // HLOVERLAP_TOOLS_OPT_COMMAND_H_
