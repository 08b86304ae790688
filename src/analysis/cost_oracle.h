// The cost model a loop pass's plan asks (passes/planning.h): an interface
// here, below both passes/ and sim/, so that passes never include the
// simulator and the simulator never includes passes. The simulator's
// implementation is sim/sim_cost_oracle.h; `hloverlap opt` injects it
// through PassContext::cost_oracle.
//
// Example: the pipeliner asks ComputeUs of a prefetch chain's instructions
// (what prefetching would compute again) and CollectiveUs of the all-gather
// (what it would hide); `--preset=auto` asks PredictStep of each candidate
// pipeline's output and keeps the fastest.
#ifndef HLOVERLAP_ANALYSIS_COST_ORACLE_H_
#define HLOVERLAP_ANALYSIS_COST_ORACLE_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "hlo/module.h"

namespace hloverlap {

// A whole module's predicted step on one device, as `hloverlap sim
// --format=json` reports it. The simulator's oracle (sim/sim_cost_oracle.h)
// copies these from its SimResult (sim/sim_types.h), the owner of their
// definitions; times are microseconds of one run of the entry computation.
struct StepPrediction {
  // Until every stream (compute, collective, async compute) is idle.
  double step_us = 0;
  // Busy time of the compute stream: kernels, with the time they lose to
  // collectives in flight beside them.
  double compute_us = 0;
  // Every collective's time on the collective streams, hidden or not.
  double communication_us = 0;
  // How long the compute stream waits for collectives: a sync collective
  // from its issue to its end, an async one at its -done.
  double exposed_communication_us = 0;
  // Liveness peak over the schedule, entry parameters included (bytes).
  int64_t peak_memory_bytes = 0;
};

// The cost model a plan asks. Implementations must be deterministic.
class CostOracle {
 public:
  virtual ~CostOracle() = default;
  // The module's step, simulated as written (schedule = instruction order).
  virtual absl::StatusOr<StepPrediction> PredictStep(
      const Module& module) const = 0;
  // One run of `instr` on the compute stream: a kernel's time, a loop's
  // trip count x (condition + body), a call its callee's; a collective its
  // collective time (CollectiveUs).
  virtual double ComputeUs(const Instruction& instr) const = 0;
  // One run of collective `instr` alone on a collective stream.
  virtual double CollectiveUs(const Instruction& instr) const = 0;
  // One run of collective `instr` over `batch` times its bytes (a sunk
  // collective batching `batch` iterations' worth); by default `batch` runs.
  virtual double BatchedCollectiveUs(const Instruction& instr,
                                     int64_t batch) const {
    return static_cast<double>(batch) * CollectiveUs(instr);
  }
};

}  // namespace hloverlap

#endif  // HLOVERLAP_ANALYSIS_COST_ORACLE_H_
