// Latency estimators: how long instructions take, for schedulers and the
// simulator.
//
// A scheduler needs two numbers (XLA's LatencyEstimator, reference/
// xla_lhs.md §1.9), both in microseconds:
//   NodeCostUs(instr)     time the instruction occupies the compute stream;
//   AsyncLatencyUs(start) time between an async start and its done (the
//                         collective, or the async computation, in flight).
// AnalyticalLatencyEstimator (the default) answers both from GpuCostModel.
// Other estimators (measured profiles, a fixed-cost estimator for tests)
// implement the same interface.
#ifndef HLOVERLAP_ANALYSIS_LATENCY_ESTIMATOR_H_
#define HLOVERLAP_ANALYSIS_LATENCY_ESTIMATOR_H_

#include <memory>
#include <string_view>

#include "analysis/gpu_cost_model.h"
#include "hlo/instruction.h"

namespace hloverlap {

class LatencyEstimator {
 public:
  virtual ~LatencyEstimator() = default;
  virtual std::string_view name() const = 0;
  // Compute-stream occupancy; async starts and dones should cost ~0.
  virtual double NodeCostUs(const Instruction& instr) const = 0;
  // Start-to-done latency of an async pair; 0 for other instructions.
  virtual double AsyncLatencyUs(const Instruction& start) const = 0;
};

// The default: roofline compute costs and the collective table.
class AnalyticalLatencyEstimator : public LatencyEstimator {
 public:
  explicit AnalyticalLatencyEstimator(GpuSpec spec,
                                      const CollectiveTable* table = nullptr)
      : model_(std::move(spec), table) {}
  std::string_view name() const override { return "analytical"; }
  double NodeCostUs(const Instruction& instr) const override {
    return model_.TimeUs(instr);
  }
  double AsyncLatencyUs(const Instruction& start) const override {
    return model_.AsyncLatencyUs(start);
  }
  const GpuCostModel& model() const { return model_; }

 private:
  GpuCostModel model_;
};

// XLA's "approximate" estimator in microseconds, for tests and comparisons:
// async pair 5000 units, fusions 1000, convolutions/dots/custom-calls 5000
// (here 50 / 10 / 50 us as XLA's SOL estimator scales them), else 0.
class ApproximateLatencyEstimator : public LatencyEstimator {
 public:
  std::string_view name() const override { return "approximate"; }
  double NodeCostUs(const Instruction& instr) const override;
  double AsyncLatencyUs(const Instruction& start) const override;
};

// The estimator named "analytical" (with gpu "h100"/"h200") or
// "approximate"; nullptr if unknown.
std::unique_ptr<LatencyEstimator> MakeLatencyEstimator(std::string_view name,
                                                       std::string_view gpu);

}  // namespace hloverlap

#endif  // HLOVERLAP_ANALYSIS_LATENCY_ESTIMATOR_H_
