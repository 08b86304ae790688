// XLA flags as a JAX user already has them (`XLA_FLAGS` or
// `hloverlap opt --xla-flags="..."`), mapped onto hloverlap's passes and
// their options.
//
// The text is split like XLA splits XLA_FLAGS: whitespace-separated
// `--name=value` (or `-name=value`, or a bare `--name` meaning true), values
// may be quoted ('...' or "..."). Every flag that concerns a pass hloverlap
// has is mapped:
//
//   collective pipeliner
//     --xla_gpu_enable_pipelined_all_gather=B      all-gather prefetch
//     --xla_gpu_enable_pipelined_reduce_scatter=B  reduce-scatter delay
//     --xla_gpu_enable_pipelined_all_reduce=B      all-reduce delay
//     --xla_gpu_enable_pipelined_collectives=true  all three (false: no
//                                                  effect, as in XLA)
//     --xla_gpu_pipeline_{all_gather,reduce_scatter,all_reduce}=on|off|default
//   double buffering
//     --xla_gpu_enable_while_loop_double_buffering=B
//     --xla_gpu_enable_while_loop_unrolling=WHILE_LOOP_UNROLLING_...
//   async conversion
//     --xla_gpu_disable_async_collectives=allreduce,alltoall,...  kinds left
//                                                  synchronous (XLA's
//                                                  CollectiveOpType names)
//     --xla_gpu_enable_async_{all_reduce,all_gather,reduce_scatter,
//       all_to_all,collective_permute,collective_broadcast}=B, and
//     --xla_gpu_enable_async_collectives=B         (older XLA)
//   latency-hiding scheduler
//     --xla_gpu_enable_latency_hiding_scheduler=B  run it (after async
//                                                  conversion)
//     --xla_gpu_experimental_parallel_collective_overlap_limit=N
//                                                  collectives in flight
//     --xla_gpu_memory_limit_slop_factor=P         memory limit, as XLA's
//
// Each mapped flag is one row of a table in xla_flags.cc: its name, the pass
// it concerns, the values it takes and its handler (--list-xla-flags prints
// the table).
//
// A flag that turns a pass on or off is recorded in XlaFlagsResult::passes:
// without --passes/--preset those passes make the pipeline
// (PipelineFromXlaFlags: cleanup, then XLA:GPU's order); with one, a pass a
// flag turned off is left out and a pass a flag asked for that the
// pipeline lacks is a warning (ApplyXlaFlagsToPipeline). XLA flags for
// things hloverlap does not do (combiners, runtime settings, P2P
// pipelining, profile-guided latencies, ...) and flags it does not know are
// warnings (`ignored (why)`), never errors. Malformed text (a word that is
// not a flag, an unterminated quote, a value a mapped flag cannot take) is
// an InvalidArgument error naming the word.
#ifndef HLOVERLAP_TOOLS_XLA_FLAGS_H_
#define HLOVERLAP_TOOLS_XLA_FLAGS_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "nlohmann/json.hpp"
#include "passes/pass.h"

namespace hloverlap {

struct XlaFlag {
  std::string name;   // without the leading dashes
  std::string value;  // empty when none was given
  bool has_value = false;
  std::string text;  // as written
};

// Splits flag text into flags. `origin` ("XLA_FLAGS", "--xla-flags") starts
// error messages.
absl::StatusOr<std::vector<XlaFlag>> SplitXlaFlags(std::string_view text,
                                                   std::string_view origin);

struct XlaFlagsResult {
  // One line per flag that was not applied, e.g.
  // "XLA_FLAGS: --xla_gpu_graph_level=0 ignored (a runtime (CUDA graph)
  // setting)".
  std::vector<std::string> warnings;
  // One line per flag that was applied ("--xla-flags:
  // --xla_gpu_enable_pipelined_all_gather=true: all-gather prefetch on").
  std::vector<std::string> applied;
  // Both, in flag order, each starting "note: " or "warning: ".
  std::vector<std::string> lines;
  // True when a flag turned any collective pipelining on.
  bool pipelining_requested = false;
  // Passes the flags turned on or off, by pass name, with the deciding flag
  // ("XLA_FLAGS: --xla_gpu_enable_latency_hiding_scheduler=true"); later
  // flags win.
  struct PassSwitch {
    bool on = false;
    std::string flag;
  };
  std::map<std::string, PassSwitch> passes;
};

// `hloverlap opt --list-xla-flags [--json]`: the flags above, each with the
// pass it concerns, the values it takes and (JSON "pipelining_values") the
// values, lower case ("" for the bare flag), that turn a collective
// pipelining on; then the flags known and ignored (by name prefix, with
// why). The Python package reads the JSON (python/hloverlap/xla.py).
std::string ListXlaFlagsText();
nlohmann::ordered_json ListXlaFlagsJson();

// Applies `text` to `options` (later flags win). Errors leave `options`
// partially updated; callers exit on them.
absl::Status ApplyXlaFlags(std::string_view text, std::string_view origin,
                           PassOptions& options, XlaFlagsResult& result);

// What goes to stderr: the ignored flags only, or a line per flag.
enum class XlaFlagsPrint { kNothing, kWarnings, kAll };

// What opt and explain do: XLA_FLAGS (when `use_env`), then `command_line`
// (--xla-flags), applied to `options`, then `print`ed to stderr.
absl::Status ApplyXlaFlagsFromEnvAndCommandLine(
    std::string_view command_line, bool use_env, PassOptions& options,
    XlaFlagsResult& result, XlaFlagsPrint print = XlaFlagsPrint::kWarnings);

// The pipeline spec the flags ask for on their own (no --passes/--preset):
// "inline,tuple-simplify,dce," then the passes they turned on in XLA:GPU's
// order (collective-pipeliner with its cleanup, double-buffer,
// async-collectives, latency-hiding-scheduler); empty when none.
std::string PipelineFromXlaFlags(const XlaFlagsResult& result);

// Adjusts an explicit pipeline (`pipeline_name`: "--preset=xla-gpu",
// "--passes"): drops the passes a flag turned off; returns the notes and
// warnings to print (those, and flags asking for a pass it does not run).
std::vector<std::string> ApplyXlaFlagsToPipeline(
    const XlaFlagsResult& result, std::string_view pipeline_name,
    std::vector<std::string>& passes);

// Parses `--loop=` rules into options.loop_rules (errors name the rule).
absl::Status AddLoopRules(const std::vector<std::string>& rules,
                          PassOptions& options);

}  // namespace hloverlap

#endif  // HLOVERLAP_TOOLS_XLA_FLAGS_H_
