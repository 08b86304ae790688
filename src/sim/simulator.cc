// Timeline simulator (see the header): trip counts and Simulate.
#include "sim/simulator.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "analysis/gpu_cost_model.h"
#include "analysis/while_loop_analysis.h"
#include "hlo/computation.h"
#include "hlo/instruction.h"
#include "sim/liveness.h"
#include "sim/timeline.h"

namespace hloverlap {

int64_t SimLoopTripCount(const Instruction& w, SimResult& result) {
  // The trip count of analysis/while_loop_analysis.h, as everywhere.
  const WhileLoopInfo info = AnalyzeWhileLoop(w);
  if (!info.trip_count.has_value()) {
    result.unknown_trip_counts.push_back(w.name());
  }
  if (!info.contradiction.empty()) {
    result.warnings.push_back(absl::StrCat(
        w.name(), ": KnownTripCountContradicted: ", info.contradiction));
  }
  return std::max<int64_t>(0, info.trip_count.value_or(1));
}

bool IsUnfusedModule(const Module& module) {
  for (const auto& c : module.computations()) {
    for (const auto& i : c->instructions()) {
      if (i->opcode() == Opcode::kFusion || IsGemmCustomCall(*i)) return false;
    }
  }
  return true;
}

absl::StatusOr<SimResult> Simulate(const Module& module,
                                   const SimOptions& options) {
  if (module.entry() == nullptr) {
    return absl::InvalidArgumentError("module has no entry computation");
  }
  SimResult r = SimulateTimeline(module, options);
  r.unfused = r.kernels > 0 && IsUnfusedModule(module);
  PeakMemory peak = ComputePeakMemory(module);
  r.peak_memory_bytes = peak.bytes;
  r.peak_memory_at = peak.at;
  r.parameter_bytes = peak.parameter_bytes;
  return r;
}

}  // namespace hloverlap
