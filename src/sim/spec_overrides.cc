// Preset and `--gpu-spec` overrides (see the header).
#include "sim/spec_overrides.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace hloverlap {

namespace {

constexpr std::string_view kSimPresetText =
#include "sim/sim_preset.inc"
    ;

}  // namespace

std::string_view DefaultSimPresetText() { return kSimPresetText; }

SimOptions::SimOptions() : spec(H200Spec()) {
  // The compiled-in text is tested; were it broken the factors stay at 1.
  absl::Status st = ApplySimOverrides(*this, kSimPresetText);
  (void)st;
}

namespace {

absl::Status ApplyOverrides(GpuSpec& spec, SimOptions* sim,
                            std::string_view text) {
  int64_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string line(text.substr(pos, end - pos));
    pos = end + 1;
    ++line_no;
    if (size_t hash = line.find('#'); hash != std::string::npos) {
      line.resize(hash);
    }
    std::vector<std::string> fields;
    for (size_t i = 0; i < line.size();) {
      while (i < line.size() &&
             std::isspace(static_cast<unsigned char>(line[i])))
        ++i;
      size_t j = i;
      while (j < line.size() &&
             !std::isspace(static_cast<unsigned char>(line[j])))
        ++j;
      if (j > i) fields.push_back(line.substr(i, j - i));
      i = j;
    }
    if (fields.empty()) continue;
    auto error = [&](const std::string& what) {
      return absl::InvalidArgumentError(
          absl::StrCat("gpu spec line ", line_no, ": ", what));
    };
    if (fields.size() != 2) return error("expected 'key value'");
    if (sim != nullptr && fields[0] == "unfused_compute") {
      if (fields[1] == "xla-fused") {
        sim->unfused_compute = UnfusedCompute::kXlaFused;
      } else if (fields[1] == "per-op") {
        sim->unfused_compute = UnfusedCompute::kPerOp;
      } else {
        return error(
            absl::StrCat("unfused_compute is xla-fused or per-op, "
                         "not '",
                         fields[1], "'"));
      }
      continue;
    }
    char* endp = nullptr;
    double v = std::strtod(fields[1].c_str(), &endp);
    if (endp == fields[1].c_str() || *endp != '\0' || !std::isfinite(v) ||
        v < 0) {
      return error(absl::StrCat("bad number '", fields[1], "'"));
    }
    const std::string& k = fields[0];
    if (k == "matmul_flops") {
      spec.matmul_flops = v;
    } else if (k == "vector_flops") {
      spec.vector_flops = v;
    } else if (k == "hbm_bytes_per_second") {
      spec.hbm_bytes_per_second = v;
    } else if (k == "kernel_launch_us") {
      spec.kernel_launch_us = v;
    } else if (k == "memory_bytes") {
      if (v > 9e18) return error("memory_bytes too large");
      spec.memory_bytes = static_cast<int64_t>(v);
    } else if (sim != nullptr && k == "kernel_overhead_us") {
      sim->kernel_overhead_us = v;
    } else if (sim != nullptr && k == "gemm_overhead_us") {
      sim->gemm_overhead_us = v;
    } else if (sim != nullptr && k == "host_launch_us") {
      sim->host_launch_us = v;
    } else if (sim != nullptr && k == "gemm_host_launch_us") {
      sim->gemm_host_launch_us = v;
    } else if (sim != nullptr && k == "host_max_lead_us") {
      sim->host_max_lead_us = v;
    } else if (sim != nullptr && k == "host_step_us") {
      sim->host_step_us = v;
    } else if (sim != nullptr && k == "memory_efficiency" && v > 0 && v <= 1) {
      sim->memory_efficiency = v;
    } else if (sim != nullptr && k == "compute_efficiency" && v > 0 && v <= 1) {
      sim->compute_efficiency = v;
    } else if (sim != nullptr && k == "async_compute_contention" && v <= 1) {
      sim->async_compute_contention = v;
    } else if (sim != nullptr && k == "collective_sm_share" && v < 1) {
      sim->collective_sm_share = v;
    } else if (sim != nullptr && k == "collective_hbm_share" && v < 1) {
      sim->collective_hbm_share = v;
    } else if (sim != nullptr &&
               (k == "memory_efficiency" || k == "compute_efficiency" ||
                k == "async_compute_contention")) {
      return error(absl::StrCat(k, " must be in (0, 1]"));
    } else if (sim != nullptr &&
               (k == "collective_sm_share" || k == "collective_hbm_share")) {
      return error(absl::StrCat(k, " must be in [0, 1)"));
    } else {
      return error(absl::StrCat("unknown key '", k, "'"));
    }
    if ((k == "matmul_flops" || k == "vector_flops" ||
         k == "hbm_bytes_per_second") &&
        !(v > 0)) {
      return error(absl::StrCat(k, " must be positive"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<GpuSpec> ApplyGpuSpecOverrides(GpuSpec spec,
                                              std::string_view text) {
  absl::Status st = ApplyOverrides(spec, nullptr, text);
  if (!st.ok()) return st;
  return spec;
}

absl::Status ApplySimOverrides(SimOptions& options, std::string_view text) {
  GpuSpec spec = options.spec;
  SimOptions copy = options;
  absl::Status st = ApplyOverrides(spec, &copy, text);
  if (!st.ok()) return st;
  options = copy;
  options.spec = spec;
  return absl::OkStatus();
}
}  // namespace hloverlap
