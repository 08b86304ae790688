#include "passes/planning.h"

#include "hlo/buffer_semantics.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace hloverlap {

std::string MemoryLedger::Describe(int64_t pending) const {
  return absl::StrCat("the memory budget (", budget_.value_or(0),
                      " bytes for this pipeline run, ", spent_ + pending,
                      " spent)");
}

void AddEstimateMetrics(const CandidateEstimate& e,
                        std::vector<std::pair<std::string, int64_t>>& metrics) {
  if (e.predicted) {
    auto us = [](double v) {
      if (!std::isfinite(v)) return int64_t{0};
      return static_cast<int64_t>(std::llround(std::clamp(v, -1e15, 1e15)));
    };
    metrics.emplace_back("hidden_us", us(e.hidden_us));
    metrics.emplace_back("added_compute_us", us(e.added_compute_us));
    metrics.emplace_back("gain_us", us(e.gain_us()));
  }
  metrics.emplace_back("extra_live_bytes", e.extra_live_bytes);
}

int64_t ExtraLiveBytes(const Shape& value, int64_t copies) {
  // One opinion on what a kept value costs: the buffer analysis' leaves.
  const int64_t bytes = ArrayBytes(value);
  if (copies <= 0 || bytes <= 0) return 0;
  constexpr int64_t kMax = int64_t{1} << 62;
  return bytes > kMax / copies ? kMax : bytes * copies;
}

}  // namespace hloverlap
