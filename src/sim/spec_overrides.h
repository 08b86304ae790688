// The simulator's device constants and achieved-vs-roofline factors as
// text: `key value` lines ('#' comments), the format of the compiled-in
// preset (sim/sim_preset.inc, applied by SimOptions' constructor) and of
// `hloverlap sim --gpu-spec=FILE`, which overrides it:
//
//   # H200 measured by bench/calibrate_gpu.py
//   matmul_flops 7.1e14
//   kernel_overhead_us 2.5
//
// ApplyGpuSpecOverrides knows the GpuSpec keys, ApplySimOverrides those and
// SimOptions' factors. A bad line is InvalidArgument naming it ("gpu spec
// line 3: unknown key 'bogus'"); nothing is changed then.
#ifndef HLOVERLAP_SIM_SPEC_OVERRIDES_H_
#define HLOVERLAP_SIM_SPEC_OVERRIDES_H_

#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analysis/gpu_cost_model.h"
#include "sim/sim_types.h"

namespace hloverlap {

// Overrides preset constants from `key value` lines ('#' comments):
// matmul_flops, vector_flops, hbm_bytes_per_second, kernel_launch_us,
// memory_bytes. Unknown keys and bad numbers are InvalidArgument naming the
// line.
absl::StatusOr<GpuSpec> ApplyGpuSpecOverrides(GpuSpec spec,
                                              std::string_view text);
// The same for SimOptions: the GpuSpec keys above plus kernel_overhead_us,
// gemm_overhead_us, memory_efficiency, compute_efficiency,
// async_compute_contention, collective_sm_share, collective_hbm_share,
// host_launch_us, gemm_host_launch_us,
// host_max_lead_us, host_step_us (sim/sim_types.h says what each is), and
// `unfused_compute xla-fused|per-op` (SimOptions::unfused_compute).
absl::Status ApplySimOverrides(SimOptions& options, std::string_view text);
// The compiled-in preset text (sim/sim_preset.inc).
std::string_view DefaultSimPresetText();

}  // namespace hloverlap

#endif  // HLOVERLAP_SIM_SPEC_OVERRIDES_H_
