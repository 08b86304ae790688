// Latency-hiding scheduler: orders every computation so that async
// collectives overlap independent compute (after XLA's LatencyHidingScheduler,
// reference/xla_lhs.md §1-2).
//
// The IR's instruction order is the schedule: the pass reorders the
// instructions of every non-fusion computation (entry, loop bodies and
// conditions, called and async-wrapped computations; callees first, so a
// loop's cost and collective use are known when its caller is scheduled)
// and sets `is_scheduled=true` on the module.
//
// List scheduling, bottom-up (from the root towards the parameters). Each
// instruction has a cost (time on the compute stream) and each async
// start -> done edge a latency (the collective's time), both from a
// LatencyEstimator (analysis/latency_estimator.h; default: the analytical
// GPU model for --gpu). Going backwards in time, scheduling an instruction
// at `t` makes its operands ready at `t + latency`; picking a node before
// it is ready is a stall. For a while / call / conditional the cost is the
// trip count times the scheduled callee's estimated duration.
//
// Resources: async collectives (all-gather-start, all-reduce-start,
// collective-permute-start, async-start wrapping a collective) share one
// collective stream with at most `collective_in_flight_limit` collectives in
// flight (default 1, as XLA:GPU; 2 lets two overlap each other). Async
// compute (async-start of a fusion or other computation) has its own limit
// (2, as XLA). A while / call / conditional whose callee has collectives in
// flight needs that many slots, so an outer collective is not kept in
// flight across a loop whose body uses the stream. If nothing fits, the best
// candidate is taken anyway (a remark says so) rather than failing.
//
// Memory pressure: with a memory limit (--scheduler-memory-limit, XLA's
// slop factor, or what --memory-budget leaves: the input's peak plus the
// budget), live bytes are tracked over the
// buffers of analysis/buffer_analysis.h (a buffer becomes live when the
// last user of a value holding it is scheduled and dies at its definition;
// tuples, get-tuple-elements, bitcasts, reshapes, whiles, in-place updates
// and -done halves hold their operands' buffers, an async start its
// operands' until the done; a GEMM's workspace counts only while it runs;
// parameters are the caller's and not counted, except the entry's against
// the limit; a loop, call or conditional adds its callee's peak while it
// runs). The peak reported and held against the limit is the one model's:
// PeakOverSequence over the order found, the number `hloverlap sim`
// reports for the module. If the order found exceeds the limit and the
// input order does not, the input order is kept; otherwise the schedule is
// still produced and a `missed` remark gives the peak. Under
// --memory-budget a final peak above the input's plus the budget is a
// `missed` MemoryBudgetNotMet remark with the numbers.
//
// Priority chain: the first rule that distinguishes two ready candidates
// decides ("first" = picked first bottom-up = placed later in program
// order):
//   0. the root is placed last; parameters first (in number order);
//      "nops" (get-tuple-element, bitcast, tuple, constant, partition-id,
//      replica-id, opt-barrier, after-all) are taken as soon as ready, so
//      they sit right before their first user;
//      candidates that would exceed a resource limit are skipped;
//   1. memory (only with a limit and live bytes above half of it): if live
//      >= limit, the smaller increase in live bytes; then a candidate that
//      stays within the limit;
//   2. async dones first (a done is placed as late as possible: just
//      before its first use);
//   3. less stall (the candidate whose ready time is closest to now);
//   4. an async start that frees a resource other ready dones wait for
//      (limit reached);
//   5. other candidates before async starts that do not depend on another
//      async op (async depth 0): starts float up, as early as their
//      operands allow, above independent compute;
//   6. higher async depth (longest path of async latencies from the
//      computation's inputs);
//   7. a candidate that uses an async done's result (unlocks the done);
//   8. a candidate after which more operands become ready;
//   9. original order (the later instruction is placed later).
// Rules XLA has and this scheduler does not: force-early/-delay hints,
// scheduling groups (_scheduling_group_id), "avoid waste", selective
// overlap, and the GPU rule refusing to overlap two collectives over the
// same devices (limit 2 is the user's explicit choice here).
//
// Remarks (pass "latency-hiding-scheduler"): per async collective pair, the
// estimated latency and the part hidden behind compute (passed when at
// least half is hidden, else missed with the reason); per scheduled
// computation that has collectives, an analysis remark with the estimated
// duration, exposed collective time and peak memory; a missed remark when
// the memory limit is exceeded or a resource limit had to be broken.
#ifndef HLOVERLAP_PASSES_LATENCY_HIDING_SCHEDULER_H_
#define HLOVERLAP_PASSES_LATENCY_HIDING_SCHEDULER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "analysis/latency_estimator.h"
#include "passes/pass.h"

namespace hloverlap {

struct SchedulerConfig {
  int collective_in_flight_limit = 1;
  int async_compute_limit = 2;
  // Limit on the computation's peak as PeakOverSequence counts it (the
  // peak `hloverlap sim` reports; for the entry, parameters included).
  std::optional<int64_t> memory_limit_bytes;
  // The computation is a while body (its outputs take over the loop
  // state's buffers, counted by the caller).
  bool is_loop_body = false;
  // Select by scanning every ready candidate against the whole chain (the
  // reference the O(log n) selection is tested against).
  bool reference_selection = false;
};

// Estimated timing of one async pair in a scheduled sequence.
struct AsyncPairTiming {
  Instruction* start = nullptr;
  Instruction* done = nullptr;
  bool collective = false;  // on the collective stream
  double latency_us = 0;
  double exposed_us = 0;  // time the compute stream waits at the done
  int64_t instructions_between = 0;
};

// Forward estimate of a sequence: compute stream in program order, async
// collectives on `in_flight_limit` collective slots.
struct SequenceTiming {
  double duration_us = 0;
  double exposed_us = 0;
  int64_t peak_in_flight = 0;  // collectives in flight at once
  std::vector<AsyncPairTiming> pairs;
};

// Per-callee facts the scheduler of a caller uses.
struct CalleeInfo {
  double duration_us = 0;
  int64_t collectives_in_flight = 0;
  // Its peak in its scheduled order (PeakOverSequence, parameters the
  // caller's): live only while its caller's instruction runs.
  int64_t peak_memory_bytes = 0;
};
using CalleeInfoMap = absl::flat_hash_map<const Computation*, CalleeInfo>;

struct ComputationSchedule {
  std::vector<Instruction*> order;
  // The order's peak (analysis/buffer_analysis.h's PeakOverSequence): for
  // the entry, the module's peak as `hloverlap sim` reports it.
  int64_t peak_memory_bytes = 0;
  bool memory_limit_exceeded = false;
  int64_t resource_limit_overrides = 0;  // times a limit had to be broken
};

// Schedules one computation (does not modify it).
absl::StatusOr<ComputationSchedule> ScheduleComputation(
    const Computation& computation, const LatencyEstimator& estimator,
    const SchedulerConfig& config, const CalleeInfoMap& callees);

// Estimates a computation in its stored order.
SequenceTiming EstimateSequence(const Computation& computation,
                                const LatencyEstimator& estimator,
                                int in_flight_limit,
                                const CalleeInfoMap& callees);

// Cost of an instruction on the compute stream, using callee durations for
// while / call / conditional when known.
double ScheduledNodeCostUs(const Instruction& instr,
                           const LatencyEstimator& estimator,
                           const CalleeInfoMap& callees);

class LatencyHidingSchedulerPass : public Pass {
 public:
  std::string_view name() const override { return "latency-hiding-scheduler"; }
  // Options from PassOptions: collective_in_flight_limit,
  // scheduler_memory_limit_bytes, gpu.
  absl::StatusOr<bool> Run(Module& module, PassContext& context) override;
};

}  // namespace hloverlap

#endif  // HLOVERLAP_PASSES_LATENCY_HIDING_SCHEDULER_H_
