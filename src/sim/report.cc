// Text and JSON reports (see the header).
#include "sim/report.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "support/byte_size.h"

namespace hloverlap {
namespace {

std::string Ms(double us) { return absl::StrFormat("%.3f ms", us / 1000); }

std::string Bytes(int64_t b) { return HumanBytes(b, ByteFormat::kReport); }

// A time on a grid of 1e-6 us, so that figures equal but for rounding
// (a loop summarized rather than replayed adds its iterations in another
// order) sort as equal and keep their first-issue order.
double SortKey(double us) {
  return std::isnan(us) ? -INFINITY : std::round(us * 1e6);
}

std::vector<size_t> ByExposed(const SimResult& r) {
  std::vector<size_t> order(r.collectives.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    double ea = SortKey(r.collectives[a].exposed_us);
    double eb = SortKey(r.collectives[b].exposed_us);
    if (ea != eb) return ea > eb;
    return SortKey(r.collectives[a].time_us) >
           SortKey(r.collectives[b].time_us);
  });
  return order;
}

}  // namespace

// What the step time of an unfused module is (SimResult::unfused).
constexpr char kUnfusedNote[] =
    "  (unfused module: an upper bound, every op its own kernel; not "
    "comparable\n"
    "   with XLA's final modules -- for a prediction, sim XLA's final "
    "module of\n"
    "   the program, e.g. hloverlap.jax's BridgeCompiled.final_hlo())\n";

// An unfused module priced as XLA will fuse it (SimResult::
// xla_fused_estimate).
constexpr char kFusedEstimateNote[] =
    "  (unfused module: compute estimated as XLA:GPU will fuse it, "
    "analysis/fusion_estimate.h;\n"
    "   XLA's final module of the program is the reference)\n";

std::string FormatSimText(const SimResult& r, int top) {
  std::string out;
  double step = r.step_time_us;
  auto pct = [&](double v) { return step > 0 ? 100.0 * v / step : 0.0; };
  absl::StrAppendFormat(&out, "GPU model:                %s\n", r.gpu);
  absl::StrAppendFormat(&out, "step time:                %s\n", Ms(step));
  if (r.unfused) {
    out += r.xla_fused_estimate ? kFusedEstimateNote : kUnfusedNote;
  }
  absl::StrAppendFormat(&out,
                        "compute:                  %s (%.1f%%), %d kernels\n",
                        Ms(r.compute_us), pct(r.compute_us), r.kernels);
  absl::StrAppendFormat(
      &out,
      "  compute-bound kernels:  %s (%.1f TFLOP, %.0f TFLOP/s achieved)\n"
      "  memory-bound kernels:   %s (%.1f GB of HBM traffic in all "
      "kernels)\n",
      Ms(r.compute_bound_us), r.flops / 1e12,
      r.compute_bound_us > 0 ? r.flops / r.compute_bound_us / 1e6 : 0.0,
      Ms(r.memory_bound_us), r.hbm_bytes / 1e9);
  absl::StrAppendFormat(&out, "communication:            %s (%.1f%%)\n",
                        Ms(r.communication_us), pct(r.communication_us));
  double hidden = r.communication_us - r.exposed_communication_us;
  absl::StrAppendFormat(
      &out,
      "exposed communication:    %s (%.1f%% of step; %.1f%% of "
      "communication hidden)\n",
      Ms(r.exposed_communication_us), pct(r.exposed_communication_us),
      r.communication_us > 0 ? 100.0 * hidden / r.communication_us : 100.0);
  if (r.launch_bound_us > 0) {
    absl::StrAppendFormat(&out,
                          "launch-bound idle:        %s (%.1f%% of step; the "
                          "compute stream waiting for kernel launches)\n",
                          Ms(r.launch_bound_us), pct(r.launch_bound_us));
  }
  if (r.contention_us > 0) {
    absl::StrAppendFormat(&out,
                          "contention:               %s (%.1f%% of step; "
                          "compute slowed by collectives beside it, in "
                          "compute)\n",
                          Ms(r.contention_us), pct(r.contention_us));
  }
  if (r.async_compute_us > 0) {
    absl::StrAppendFormat(&out, "async compute:            %s (waited %s)\n",
                          Ms(r.async_compute_us), Ms(r.async_compute_wait_us));
  }
  if (!r.unknown_trip_counts.empty()) {
    absl::StrAppendFormat(&out, "unknown trip counts (run once): %s\n",
                          absl::StrJoin(r.unknown_trip_counts, ", "));
  }
  for (const std::string& w : r.warnings) {
    absl::StrAppend(&out, "warning: ", w, "\n");
  }
  if (r.extrapolated_iterations > 0) {
    absl::StrAppendFormat(&out, "extrapolated iterations:  %d\n",
                          r.extrapolated_iterations);
  }
  absl::StrAppendFormat(&out,
                        "peak memory (liveness):   %s (%d bytes; "
                        "parameters %s) at %s\n",
                        Bytes(r.peak_memory_bytes), r.peak_memory_bytes,
                        Bytes(r.parameter_bytes), r.peak_memory_at);
  if (r.xla_memory_report_bytes >= 0) {
    double diff =
        static_cast<double>(r.peak_memory_bytes - r.xla_memory_report_bytes);
    double x = static_cast<double>(r.xla_memory_report_bytes);
    absl::StrAppendFormat(&out,
                          "XLA buffer assignment:    %s; liveness peak - XLA "
                          "= %+.3f GiB (%+.1f%%)\n",
                          Bytes(r.xla_memory_report_bytes),
                          diff / (1024.0 * 1024 * 1024),
                          x > 0 ? 100.0 * diff / x : 0.0);
  }
  if (r.collectives.empty()) {
    out += "\nno collectives\n";
    return out;
  }
  out += "\ncollectives by exposed time:\n";
  absl::StrAppendFormat(&out, "  %-28s %-15s %10s %6s %11s %11s  %s\n", "name",
                        "kind", "bytes", "runs", "time ms", "exposed ms",
                        "loop / source");
  std::vector<size_t> order = ByExposed(r);
  size_t shown = 0;
  for (size_t idx : order) {
    if (top > 0 && shown >= static_cast<size_t>(top)) {
      absl::StrAppendFormat(&out, "  ... %d more\n", order.size() - shown);
      break;
    }
    const SimCollective& c = r.collectives[idx];
    std::string where = c.loop_path.empty() ? "(top level)" : c.loop_path;
    if (!c.source.empty()) where += "  " + c.source;
    absl::StrAppendFormat(&out, "  %-28s %-15s %10s %6d %11.3f %11.3f  %s\n",
                          c.name, c.kind + (c.async ? "" : " (sync)"),
                          Bytes(c.bytes), c.count, c.time_us / 1000,
                          c.exposed_us / 1000, where);
    ++shown;
  }
  return out;
}

std::string FormatSimJson(const SimResult& r) {
  nlohmann::ordered_json j;
  j["gpu"] = r.gpu;
  j["step_time_ms"] = r.step_time_us / 1000;
  // "fused" (XLA's final modules), "xla-fused estimate" (an unfused module
  // priced as XLA will fuse it) or "unfused upper bound" (every op its own
  // kernel; SimResult::unfused).
  j["step_time_kind"] = !r.unfused             ? "fused"
                        : r.xla_fused_estimate ? "xla-fused estimate"
                                               : "unfused upper bound";
  j["compute_ms"] = r.compute_us / 1000;
  j["compute_bound_ms"] = r.compute_bound_us / 1000;
  j["memory_bound_ms"] = r.memory_bound_us / 1000;
  j["tflop"] = r.flops / 1e12;
  j["hbm_gb"] = r.hbm_bytes / 1e9;
  j["communication_ms"] = r.communication_us / 1000;
  j["exposed_communication_ms"] = r.exposed_communication_us / 1000;
  j["launch_bound_ms"] = r.launch_bound_us / 1000;
  j["contention_ms"] = r.contention_us / 1000;
  j["async_compute_ms"] = r.async_compute_us / 1000;
  j["async_compute_wait_ms"] = r.async_compute_wait_us / 1000;
  j["kernels"] = r.kernels;
  j["extrapolated_iterations"] = r.extrapolated_iterations;
  j["unknown_trip_counts"] = r.unknown_trip_counts;
  if (!r.warnings.empty()) j["warnings"] = r.warnings;
  j["peak_memory_bytes"] = r.peak_memory_bytes;
  j["peak_memory_at"] = r.peak_memory_at;
  j["parameter_bytes"] = r.parameter_bytes;
  if (r.xla_memory_report_bytes >= 0) {
    j["xla_memory_report_bytes"] = r.xla_memory_report_bytes;
    j["peak_memory_diff_bytes"] =
        r.peak_memory_bytes - r.xla_memory_report_bytes;
  }
  nlohmann::ordered_json cs = nlohmann::ordered_json::array();
  for (size_t idx : ByExposed(r)) {
    const SimCollective& c = r.collectives[idx];
    nlohmann::ordered_json e;
    e["name"] = c.name;
    e["kind"] = c.kind;
    e["async"] = c.async;
    e["bytes"] = c.bytes;
    e["group_size"] = c.group_size;
    e["count"] = c.count;
    e["time_ms"] = c.time_us / 1000;
    e["exposed_ms"] = c.exposed_us / 1000;
    e["computation"] = c.computation;
    e["loop_path"] = c.loop_path;
    e["source"] = c.source;
    cs.push_back(std::move(e));
  }
  j["collectives"] = std::move(cs);
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

int64_t ParseMemoryReportTotalBytes(std::string_view report) {
  size_t pos = report.find("Total bytes:");
  if (pos == std::string_view::npos) return -1;
  pos += 12;
  while (pos < report.size() && report[pos] == ' ') ++pos;
  int64_t v = 0;
  bool any = false;
  while (pos < report.size() && report[pos] >= '0' && report[pos] <= '9') {
    if (v > (INT64_MAX - 9) / 10) return -1;
    v = v * 10 + (report[pos] - '0');
    ++pos;
    any = true;
  }
  return any ? v : -1;
}

}  // namespace hloverlap
