// Per-loop control of pipelining and double buffering.
//
// A loop's policy comes from, in increasing precedence:
//   1. defaults (pipelining on at depth 1; double buffering on for innermost
//      loops that contain collectives, decided by that pass),
//   2. frontend attributes on the while instruction, settable from JAX with
//      jax.experimental.xla_metadata.set_xla_metadata:
//        _hloverlap_pipeline="off" | "on" | "depth=2" | "sink"
//        _hloverlap_double_buffer="off" | "on"
//        _xla_loop_unroll_strategy="double-buffer" | "full"
//      set_xla_metadata tags every instruction of its scope, the loops
//      nested in it included. So an _hloverlap_* attribute counts only for
//      the outermost loop of the scope that set it: a loop whose enclosing
//      loop carries the same attribute with the same value has inherited
//      it, and it is ignored there (the loop keeps its default); a nested
//      loop with a different value was given its own (an inner
//      set_xla_metadata), and its own value wins. (A nested scope that
//      repeats the enclosing scope's value cannot be told from the
//      inherited one in the HLO: use a --loop rule for that loop.)
//   3. command-line rules `--loop=<selector>:<policy>`, later rules winning,
//      e.g. --loop=innermost:pipeline=depth=2,
//      --loop='op_name~transpose:double-buffer=off' (the full
//      grammar is LoopRuleHelp(), printed by `hloverlap opt --help`).
//      A selector that matches no loop is a warning naming the loops that
//      exist (CheckLoopRulesMatch); a prefetch depth larger than a loop
//      allows (trip count - 1) is clamped with a warning by the pipeliner.
#ifndef HLOVERLAP_PASSES_LOOP_POLICY_H_
#define HLOVERLAP_PASSES_LOOP_POLICY_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/call_graph.h"
#include "passes/remarks.h"

namespace hloverlap {

struct LoopSelector {
  enum class Kind { kName, kOpNameRegex, kDepth, kInnermost, kOutermost, kAll };
  Kind kind = Kind::kAll;
  std::string text;  // name or regex
  int depth = 0;
};

struct LoopPolicy {
  std::optional<bool> pipeline;       // on/off
  std::optional<int> pipeline_depth;  // iterations ahead for prefetch
  std::optional<bool> sink;           // forward-sink instead of forward
  std::optional<bool> double_buffer;  // on/off
  std::optional<bool> defer_reduce;   // reduction deferral on/off (opt-in)
  std::string source;  // where the deciding setting came from (for remarks)
};

struct LoopRule {
  LoopSelector selector;
  LoopPolicy policy;
  std::string text;  // as given
};

// Parses one `--loop=` value. Errors name the offending part.
absl::StatusOr<LoopRule> ParseLoopRule(std::string_view text);

// The `--loop=` grammar, for --help (several lines, no trailing newline).
std::string_view LoopRuleHelp();

// Whether `selector` selects `loop`.
bool LoopSelectorMatches(const LoopSelector& selector, const LoopNode& loop);

// Emits a `missed` remark (pass "loop-policy", marked `warn`) for every
// rule whose selector matches no loop of `module`, listing the loops that
// exist (path, depth, op_name), so a misspelt name or regex does not go
// unnoticed. Returns how many rules matched nothing.
int CheckLoopRulesMatch(const Module& module,
                        const std::vector<LoopRule>& rules,
                        RemarkSink& remarks);

// An _hloverlap_* frontend attribute of a loop and whether it counts there
// (see the file comment): `inherited_from` names the enclosing loop whose
// scope set it, empty when the attribute is the loop's own.
struct LoopAttributeUse {
  std::string key;
  std::string value;
  std::string inherited_from;
  bool inherited() const { return !inherited_from.empty(); }
};
std::vector<LoopAttributeUse> LoopPolicyAttributes(const LoopNode& loop);

// Emits, for every loop of `module` with an _hloverlap_* attribute, one
// `analysis` remark (pass "loop-policy") per attribute saying what it
// decides for that loop (LoopAttributeApplied, with the --loop rule that
// overrides it, if any) or that it was inherited and is ignored there
// (LoopAttributeInherited); a malformed value is the same
// IgnoredLoopAttribute warning the passes give. Reported before the passes
// run, so whatever the passes or the plan do, the attributes' effect is in
// the remarks. Returns how many remarks it emitted.
int ReportLoopAttributes(const Module& module,
                         const std::vector<LoopRule>& rules,
                         RemarkSink& remarks);

// The effective policy of a loop (frontend attributes, then rules in order).
// Malformed frontend attribute values are reported through `warning`.
LoopPolicy ResolveLoopPolicy(const LoopNode& loop,
                             const std::vector<LoopRule>& rules,
                             std::string* warning = nullptr);

}  // namespace hloverlap

#endif  // HLOVERLAP_PASSES_LOOP_POLICY_H_
