// Module summary: the data behind `hloverlap explain`.
//
// Walks the call graph from the entry computation and records
//   - every computation with its instruction count and role (entry, while
//     body, fused, ...), and whether it is reachable from the entry;
//   - the while-loop nesting tree: a while inside a body (directly or through
//     calls, conditionals, async wrappers, ...) that another while runs is
//     that while's child; each loop carries its trip count when the while's
//     induction variable pattern proves it or, where the loop cannot be
//     analysed, its backend_config says so ({"known_trip_count":{"n":"8"}})
//     (while_loop_analysis.h);
//   - every collective (synchronous ones, the native -start forms and the
//     collectives wrapped by async-start) with its kind, result bytes and
//     replica groups, attributed to its innermost loop;
//   - aggregates of collectives per (loop or computation, kind, replica
//     groups) and totals.
// A computation reached in several loop contexts is counted in each (the
// summary describes what runs, not what is written). Never fails: cycles in
// the call graph are cut, and a hostile module cannot make the walk exceed
// kMaxLoopNodes loop nodes (truncated is then set).
#ifndef HLOVERLAP_ANALYSIS_MODULE_SUMMARY_H_
#define HLOVERLAP_ANALYSIS_MODULE_SUMMARY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/int_value.h"
#include "hlo/module.h"

namespace hloverlap {

// The collective kind of an instruction ("all-gather" for all-gather and
// all-gather-start, ...), or empty when it is not a collective (the -done
// halves and async-start are not: the collective an async-start wraps is
// found in its wrapped computation).
std::string_view CollectiveKind(const Instruction& instruction);
// Bytes a collective produces: the result shape (element 1 of the tuple for
// all-gather-start / collective-permute-start).
int64_t CollectiveResultBytes(const Instruction& instruction);
// "replica_groups=..." / "source_target_pairs=..." text, or "" when absent.
std::string CollectiveGroupsText(const Instruction& instruction);

struct ComputationSummary {
  const Computation* computation = nullptr;
  std::string name;
  int64_t instruction_count = 0;
  // "entry", "while body", "while condition", "fused", "async wrapped",
  // "branch", "call", "custom-call callee", "applied" (to_apply of reduce,
  // all-reduce, sort, ...), or "unused" (no caller and not the entry).
  std::string role;
  bool reachable = false;  // from the entry
};

struct LoopSummary {
  const Instruction* instruction = nullptr;  // the while
  std::string name;
  std::string computation;  // where the while is
  std::string body;
  std::string condition;
  std::string op_name;  // metadata op_name, may be empty
  // The trip count of analysis/while_loop_analysis.h: proven from the
  // condition, else (loop not analysable) backend_config known_trip_count,
  // else unknown. kBackendConfig also when known_trip_count is present and
  // agrees with the proof.
  std::optional<int64_t> trip_count;
  enum class TripCountSource { kUnknown, kBackendConfig, kInferred };
  TripCountSource trip_count_source = TripCountSource::kUnknown;
  // Induction variable facts when the pattern was recognised (values of the
  // counter's type; the step as the signed distance it moves).
  std::optional<int64_t> iv_index;
  std::optional<IntValue> iv_start;
  std::optional<IntValue> iv_step;
  std::optional<IntValue> iv_bound;
  // Why the trip count could not be inferred (empty when it was).
  std::string unknown_reason;
  // known_trip_count contradicted by the condition (the analysis's warning
  // text; the proven count is used). Empty when none.
  std::string trip_count_warning;
  int parent = -1;  // index in ModuleSummary::loops, -1 = outermost
  std::vector<int> children;
  int depth = 0;  // 0 = outermost
  // Times the body runs per execution of the module: the product of the trip
  // counts of this loop and its ancestors (nullopt if any is unknown or the
  // product overflows).
  std::optional<int64_t> body_executions;
};

struct CollectiveSummary {
  const Instruction* instruction = nullptr;
  std::string name;
  std::string kind;    // "all-gather", "reduce-scatter", ...
  bool async = false;  // a -start op or wrapped by async-start
  std::string computation;
  int loop = -1;  // innermost loop, -1 = outside loops
  int64_t bytes = 0;
  std::string groups;  // CollectiveGroupsText
  // Executions per module execution (1 outside loops).
  std::optional<int64_t> executions;
};

// Collectives aggregated by place (loop, or computation when outside loops),
// kind and groups.
struct CollectiveGroup {
  int loop = -1;
  std::string computation;  // for loop == -1
  std::string kind;
  std::string groups;
  int64_t count = 0;
  int64_t async_count = 0;
  int64_t bytes = 0;  // sum of result bytes (static, one execution each)
  std::optional<int64_t> bytes_per_execution;  // weighted by executions
};

struct CollectiveKindTotal {
  std::string kind;
  int64_t count = 0;
  int64_t bytes = 0;
  std::optional<int64_t> bytes_per_execution;
};

struct ModuleSummary {
  std::string module_name;
  int64_t replica_count = 1;
  int64_t num_partitions = 1;
  bool is_scheduled = false;
  std::string entry;  // entry computation name

  std::vector<ComputationSummary> computations;  // module order
  std::vector<LoopSummary> loops;                // pre-order (parents first)
  std::vector<CollectiveSummary> collectives;    // traversal order
  std::vector<CollectiveGroup> groups;           // by first appearance
  std::vector<CollectiveKindTotal> kind_totals;  // by first appearance

  int64_t instruction_count = 0;  // all computations
  int64_t reachable_instruction_count = 0;
  int64_t collective_count = 0;
  int64_t collective_bytes = 0;
  // Weighted by executions; nullopt when any collective's count is unknown.
  std::optional<int64_t> collective_bytes_per_execution;
  int max_loop_depth = 0;  // 0 = no loops; 1 = loops but none nested, ...
  bool truncated = false;
};

inline constexpr int kMaxLoopNodes = 100000;

ModuleSummary SummarizeModule(const Module& module);

}  // namespace hloverlap

#endif  // HLOVERLAP_ANALYSIS_MODULE_SUMMARY_H_
