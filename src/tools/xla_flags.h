// XLA flags as a JAX user already has them (`XLA_FLAGS` or
// `hloverlap opt --xla-flags="..."`), mapped onto hloverlap's pass options.
//
// The text is split like XLA splits XLA_FLAGS: whitespace-separated
// `--name=value` (or `-name=value`, or a bare `--name` meaning true), values
// may be quoted ('...' or "..."). Flags that concern collective pipelining
// map to PassOptions:
//
//   --xla_gpu_enable_pipelined_all_gather=B      all-gather prefetch
//   --xla_gpu_enable_pipelined_reduce_scatter=B  reduce-scatter delay
//   --xla_gpu_enable_pipelined_all_reduce=B      all-reduce delay
//   --xla_gpu_enable_pipelined_collectives=true  all three (false: no
//                                                effect, as in XLA)
//   --xla_gpu_pipeline_{all_gather,reduce_scatter,all_reduce}=on|off|default
//   --xla_gpu_enable_while_loop_double_buffering=B
//   --xla_gpu_enable_while_loop_unrolling=WHILE_LOOP_UNROLLING_...
//                                                double buffering on/off
//
// XLA flags hloverlap knows but has no equivalent for (latency hiding
// scheduler, collective-permute decomposer, async collectives, ...) and
// flags it does not know are returned as warnings (`ignored ...`), never
// errors. Malformed text (a word that is not a flag, an unterminated quote,
// a value that is not a boolean for a mapped boolean flag) is an
// InvalidArgument error naming the word.
#ifndef HLOVERLAP_TOOLS_XLA_FLAGS_H_
#define HLOVERLAP_TOOLS_XLA_FLAGS_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
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
  // "XLA_FLAGS: --xla_gpu_graph_level=0 ignored (not an option hloverlap
  // knows)".
  std::vector<std::string> warnings;
  // One line per flag that was applied ("--xla_gpu_enable_pipelined_all_
  // gather=true: all-gather prefetch on").
  std::vector<std::string> applied;
  // True when a flag turned any collective pipelining on.
  bool pipelining_requested = false;
};

// Applies `text` to `options` (later flags win). Errors leave `options`
// partially updated; callers exit on them.
absl::Status ApplyXlaFlags(std::string_view text, std::string_view origin,
                           PassOptions& options, XlaFlagsResult& result);

// What opt and explain do: XLA_FLAGS (when `use_env`), then `command_line`
// (--xla-flags), applied to `options`; the warnings go to stderr.
absl::Status ApplyXlaFlagsFromEnvAndCommandLine(std::string_view command_line,
                                                bool use_env,
                                                PassOptions& options,
                                                XlaFlagsResult& result);

// Parses `--loop=` rules into options.loop_rules (errors name the rule).
absl::Status AddLoopRules(const std::vector<std::string>& rules,
                          PassOptions& options);

}  // namespace hloverlap

#endif  // HLOVERLAP_TOOLS_XLA_FLAGS_H_
