#include "sim/sim_cost_oracle.h"

#include <utility>

#include "sim/simulator.h"

namespace hloverlap {

SimCostOracle::SimCostOracle(SimOptions options)
    : options_(std::move(options)) {
  options_.record_trace = false;
}

absl::StatusOr<StepPrediction> SimCostOracle::PredictStep(
    const Module& module) const {
  absl::StatusOr<SimResult> r = Simulate(module, options_);
  if (!r.ok()) return r.status();
  StepPrediction p;
  p.step_us = r->step_time_us;
  p.compute_us = r->compute_us;
  p.communication_us = r->communication_us;
  p.exposed_communication_us = r->exposed_communication_us;
  p.peak_memory_bytes = r->peak_memory_bytes;
  return p;
}

double SimCostOracle::ComputeUs(const Instruction& instr) const {
  // A fresh model: GpuCostModel memoizes computation times by address, and
  // passes free and create computations between queries.
  GpuCostModel model(options_.spec, options_.table);
  return model.TimeUs(instr);
}

double SimCostOracle::CollectiveUs(const Instruction& instr) const {
  std::optional<CollectiveInfo> info = GpuCostModel::GetCollectiveInfo(instr);
  if (!info.has_value()) return 0;
  return GpuCostModel(options_.spec, options_.table).CollectiveTimeUs(*info);
}

double SimCostOracle::BatchedCollectiveUs(const Instruction& instr,
                                          int64_t batch) const {
  std::optional<CollectiveInfo> info = GpuCostModel::GetCollectiveInfo(instr);
  if (!info.has_value() || batch <= 0) return 0;
  constexpr int64_t kMax = int64_t{1} << 62;
  info->bytes = info->bytes > kMax / batch ? kMax : info->bytes * batch;
  return GpuCostModel(options_.spec, options_.table).CollectiveTimeUs(*info);
}

}  // namespace hloverlap
