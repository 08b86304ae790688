// Planning: what loop passes ask before they rewrite (DESIGN.md, "Planning:
// legal is not enough").
//
// A loop pass works in three steps: analyze (legal candidates, or a reason),
// plan (this unit: the cost oracle predicts each candidate's effect on the
// step, the memory ledger says whether its extra live bytes fit), apply (the
// LoopRewrite transaction, passes/loop_rewrite.h). A candidate is taken only
// when its predicted net saving (communication hidden less what it adds) is
// positive and the ledger allows it; otherwise a `missed` remark named
// `NotProfitable` or `OverMemoryBudget` carries the predicted numbers (metrics,
// in microseconds and bytes).
//
// The oracle is an interface (analysis/cost_oracle.h, below both passes and
// sim): passes never include the simulator. The tool
// injects the simulator's (sim/sim_cost_oracle.h, the model `hloverlap sim`
// runs) through PassContext::cost_oracle; without one (unit tests, library
// users) a candidate that duplicates compute is still refused, with no
// predicted times.
//
// Example: the seed's accumulation loop (corpus seed_gspmd_fsdp_accum, 03)
// after the layer loops were pipelined holds an all-gather whose operand
// chain is the whole forward layer loop; prefetching it for the next
// microbatch computes that loop twice per iteration:
//
//   missed: collective-pipeliner: all-gather not prefetched: its operand
//     chain computes while.175 (while), which the rest of the iteration also
//     uses: prefetching would compute it again every iteration
//     [NotProfitable] (hidden_us=..., added_compute_us=..., net_us=-...)
#ifndef HLOVERLAP_PASSES_PLANNING_H_
#define HLOVERLAP_PASSES_PLANNING_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/cost_oracle.h"
#include "hlo/module.h"
#include "passes/remarks.h"

namespace hloverlap {

// --memory-budget, spent once per pipeline run by every pass that adds live
// bytes (hoist, pipeliner, double buffering). Unset budget: everything fits.
class MemoryLedger {
 public:
  // A new pipeline run (PassPipeline::Run).
  void Reset(std::optional<int64_t> budget) {
    budget_ = budget;
    spent_ = 0;
    input_peak_.reset();
    started_ = true;
  }
  // The peak of the pipeline's input (analysis/buffer_analysis.h, what
  // `hloverlap sim` reports), set with a budget: the final peak must stay
  // within it plus the budget, whatever the scheduler's reordering adds
  // (latency_hiding_scheduler.h).
  void SetInputPeak(int64_t bytes) { input_peak_ = bytes; }
  std::optional<int64_t> input_peak() const { return input_peak_; }
  // For a pass run outside a pipeline: Reset unless a run started.
  void StartIfNeeded(std::optional<int64_t> budget) {
    if (!started_) Reset(budget);
  }
  // Whether `bytes` more fit (on top of `pending`, bytes a plan has taken
  // but not yet spent).
  bool Allows(int64_t bytes, int64_t pending = 0) const {
    return !budget_.has_value() || spent_ + pending + bytes <= *budget_;
  }
  void Spend(int64_t bytes) { spent_ += bytes; }
  std::optional<int64_t> budget() const { return budget_; }
  int64_t spent() const { return spent_; }
  // "the memory budget (B bytes for this pipeline run, S spent)".
  std::string Describe(int64_t pending = 0) const;

 private:
  std::optional<int64_t> budget_;
  int64_t spent_ = 0;
  std::optional<int64_t> input_peak_;
  bool started_ = false;
};

// A candidate's predicted effect on the step, per run of the enclosing
// loop nest's outermost step (microseconds; bytes).
struct CandidateEstimate {
  double hidden_us = 0;         // exposed communication the rewrite hides
  double added_compute_us = 0;  // compute and copies the rewrite adds
  // Communication the rewrite adds where nothing overlaps it (a sink's
  // batched collective after the loop).
  double added_communication_us = 0;
  int64_t extra_live_bytes = 0;
  bool predicted = false;  // false: no oracle, times unknown
  // Communication hidden less what the rewrite adds: the candidate's own
  // estimate, taken alone; not a change of the step (only a simulation of
  // the whole module says that, `hloverlap sim`).
  double net_us() const {
    return hidden_us - added_compute_us - added_communication_us;
  }
};

// Remark names of plan refusals (Remark::name).
inline constexpr std::string_view kNotProfitable = "NotProfitable";
inline constexpr std::string_view kOverMemoryBudget = "OverMemoryBudget";

// Appends the estimate's figures to remark metrics (hidden_us,
// added_compute_us, net_us rounded to microseconds when predicted;
// extra_live_bytes always): the one place a remark carries its estimate
// (explain's plan rows read it).
void AddEstimateMetrics(const CandidateEstimate& e,
                        std::vector<std::pair<std::string, int64_t>>& metrics);

// Appends the predicted times only (hidden_us, added_compute_us,
// added_communication_us when not 0, net_us; nothing when not predicted):
// for remarks that already carry extra_live_bytes.
void AddPredictedMetrics(const CandidateEstimate& e,
                         std::vector<std::pair<std::string, int64_t>>& metrics);

// The estimate in words for a remark's message: "predicted 1.200 ms of
// communication off the critical path (1.300 ms hidden, 0.100 ms of compute
// added)", or "no cost model: times not predicted".
std::string DescribeEstimate(const CandidateEstimate& e);

// The extra live bytes of keeping `copies` more values of `value`'s shape
// live across a loop iteration (prefetched or delayed collectives, hoisted
// stacks, sunk collectives' operands, a double-buffered iteration's
// collectives): all its array leaves (ArrayBytes, hlo/buffer_semantics.h),
// each a buffer of its own (XLA's copy insertion gives every loop-state
// element one), saturating at 2^62. The one estimate every pass and its
// remarks use, to be replaced by the buffer analysis.
int64_t ExtraLiveBytes(const Shape& value, int64_t copies = 1);
// `a` + `b` extra live bytes, saturating as ExtraLiveBytes.
int64_t AddLiveBytes(int64_t a, int64_t b);

}  // namespace hloverlap

#endif  // HLOVERLAP_PASSES_PLANNING_H_
