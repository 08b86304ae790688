#include "passes/planning.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "hlo/buffer_semantics.h"

namespace hloverlap {

std::string MemoryLedger::Describe(int64_t pending) const {
  return absl::StrCat("the memory budget (", budget_.value_or(0),
                      " bytes for this pipeline run, ", spent_ + pending,
                      " spent)");
}

namespace {

// Microseconds rounded, finite and far from int64's limits.
int64_t RoundUs(double v) {
  if (!std::isfinite(v)) return 0;
  return static_cast<int64_t>(std::llround(std::clamp(v, -1e15, 1e15)));
}

std::string Ms(double us) {
  return absl::StrFormat("%.3f ms", std::isfinite(us) ? us / 1e3 : 0.0);
}

}  // namespace

void AddPredictedMetrics(
    const CandidateEstimate& e,
    std::vector<std::pair<std::string, int64_t>>& metrics) {
  if (!e.predicted) return;
  metrics.emplace_back("hidden_us", RoundUs(e.hidden_us));
  metrics.emplace_back("added_compute_us", RoundUs(e.added_compute_us));
  if (e.added_communication_us != 0) {
    metrics.emplace_back("added_communication_us",
                         RoundUs(e.added_communication_us));
  }
  metrics.emplace_back("net_us", RoundUs(e.net_us()));
}

void AddEstimateMetrics(const CandidateEstimate& e,
                        std::vector<std::pair<std::string, int64_t>>& metrics) {
  AddPredictedMetrics(e, metrics);
  metrics.emplace_back("extra_live_bytes", e.extra_live_bytes);
}

std::string DescribeEstimate(const CandidateEstimate& e) {
  if (!e.predicted) return "no cost model: times not predicted";
  std::string out =
      absl::StrCat("predicted ", Ms(e.net_us()),
                   " of communication off the critical path (", Ms(e.hidden_us),
                   " hidden, ", Ms(e.added_compute_us), " of compute added");
  if (e.added_communication_us != 0) {
    absl::StrAppend(&out, ", ", Ms(e.added_communication_us),
                    " of communication added where nothing overlaps it");
  }
  out += ")";
  return out;
}

namespace {
constexpr int64_t kMaxLiveBytes = int64_t{1} << 62;
}  // namespace

int64_t ExtraLiveBytes(const Shape& value, int64_t copies) {
  // One opinion on what a kept value costs: the buffer analysis' leaves.
  const int64_t bytes = ArrayBytes(value);
  if (copies <= 0 || bytes <= 0) return 0;
  return bytes > kMaxLiveBytes / copies ? kMaxLiveBytes : bytes * copies;
}

int64_t AddLiveBytes(int64_t a, int64_t b) {
  return b > kMaxLiveBytes - a ? kMaxLiveBytes : a + b;
}

}  // namespace hloverlap
