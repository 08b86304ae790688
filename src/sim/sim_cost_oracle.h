// The simulator as the cost oracle of pass plans (passes/planning.h).
//
// PredictStep runs the same Simulate as `hloverlap sim` (sim/simulator.h):
// the step, compute, communication, exposed communication and peak memory a
// plan compares. ComputeUs and CollectiveUs are the cost model's per-op
// times (analysis/gpu_cost_model.h) that the timeline sums: a while loop
// costs its trip count x (condition + body), a collective its table time.
// The tool builds one per `opt`/`explain` run and puts it in
// PassContext::cost_oracle; passes see only the interface.
#ifndef HLOVERLAP_SIM_SIM_COST_ORACLE_H_
#define HLOVERLAP_SIM_SIM_COST_ORACLE_H_

#include "analysis/cost_oracle.h"
#include "analysis/gpu_cost_model.h"
#include "sim/sim_types.h"

namespace hloverlap {

class SimCostOracle : public CostOracle {
 public:
  explicit SimCostOracle(SimOptions options);
  absl::StatusOr<StepPrediction> PredictStep(
      const Module& module) const override;
  double ComputeUs(const Instruction& instr) const override;
  double CollectiveUs(const Instruction& instr) const override;
  double BatchedCollectiveUs(const Instruction& instr,
                             int64_t batch) const override;

 private:
  SimOptions options_;
};

}  // namespace hloverlap

#endif  // HLOVERLAP_SIM_SIM_COST_ORACLE_H_
