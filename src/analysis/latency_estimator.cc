// Latency estimators (see the header).
#include "analysis/latency_estimator.h"

#include "hlo/opcode_traits.h"

namespace hloverlap {

double ApproximateLatencyEstimator::NodeCostUs(const Instruction& instr) const {
  switch (instr.opcode()) {
    case Opcode::kFusion:
      return instr.attrs().fusion_kind == "kLoop" ? 10 : 50;
    case Opcode::kConvolution:
    case Opcode::kDot:
      return 50;
    case Opcode::kCustomCall:
      return 10;
    default:
      return IsCollective(instr.opcode()) ? 50 : 0;
  }
}

double ApproximateLatencyEstimator::AsyncLatencyUs(
    const Instruction& start) const {
  return IsStartLike(start.opcode()) ? 50 : 0;
}

std::unique_ptr<LatencyEstimator> MakeLatencyEstimator(std::string_view name,
                                                       std::string_view gpu) {
  if (name == "approximate") {
    return std::make_unique<ApproximateLatencyEstimator>();
  }
  if (name == "analytical" || name.empty()) {
    std::optional<GpuSpec> spec = GpuSpecByName(gpu.empty() ? "h200" : gpu);
    if (!spec.has_value()) return nullptr;
    return std::make_unique<AnalyticalLatencyEstimator>(*std::move(spec));
  }
  return nullptr;
}

}  // namespace hloverlap
