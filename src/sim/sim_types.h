// The simulator's options and results (sim/simulator.h runs it).
//
// SimOptions: the device constants (GpuSpec), the collective table, the
// device count of "all devices" groups, whether to record the timeline for
// the Chrome trace, and the achieved-vs-roofline factors of the preset
// (sim/sim_preset.inc, overridden by `--gpu-spec`, see sim/spec_overrides.h).
// SimResult: the step time and its breakdown, one SimCollective per async
// or sync collective of the module (aggregated over every time it runs), the
// liveness peak and, with record_trace, the timeline as SimEvents (in start
// order; sim/chrome_trace.h writes them as a Chrome trace).
//
//   SimOptions o;                  // H200, the compiled-in preset
//   o.record_trace = true;
//   SimResult r = *Simulate(module, o);
//   r.step_time_us, r.exposed_communication_us, r.collectives[0].exposed_us
#ifndef HLOVERLAP_SIM_SIM_TYPES_H_
#define HLOVERLAP_SIM_SIM_TYPES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/gpu_cost_model.h"

namespace hloverlap {

// How an unfused module's compute is priced (SimResult::unfused): as the
// kernels XLA:GPU will fuse it into (analysis/fusion_estimate.h), or one
// kernel per op (an upper bound). Modules with fusions are priced as
// written either way.
enum class UnfusedCompute { kXlaFused, kPerOp };

struct SimOptions {
  GpuSpec spec;  // device constants (H200Spec() by default)
  // Collective table; nullptr = the compiled-in one.
  const CollectiveTable* table = nullptr;
  // Devices taking part in collectives whose replica groups are empty (all
  // devices); 0 = the module's num_partitions x replica_count.
  int64_t devices = 0;
  // Record the per-kernel timeline (needed for the Chrome trace).
  bool record_trace = false;
  // A loop's iterations are simulated until one starts from the same state
  // as the one before (the steady state; the rest repeat it exactly and are
  // summarized), at most this many; the rest of a loop that has not reached
  // a steady state by then is extrapolated from its last iteration. In the
  // trace, summarized iterations are shown one by one up to this many.
  int64_t max_expanded_iterations = 64;
  // Steps simulated (instructions run, summed over every iteration
  // simulated) after which loops not yet in a steady state are
  // extrapolated after their first iteration: bounds the work on inputs
  // whose loops never settle.
  int64_t max_simulated_steps = 20'000'000;
  // Summarize steady-state iterations and look up loops and calls reached
  // again from an equal state. false: replay every iteration (up to
  // max_expanded_iterations) and every loop, exponential in nesting depth;
  // the reference the summarized figures are tested against.
  bool summarize = true;

  // Achieved-vs-roofline factors of real kernels (defaults: the compiled-in
  // preset sim/sim_preset.inc, fitted by bench/sim_fidelity.py; --gpu-spec
  // replaces them). On the GPU a kernel takes
  //   kernel_overhead_us (+ gemm_overhead_us for a GEMM)
  //     + max(compute_us / compute_efficiency, memory_us / memory_efficiency)
  // where compute_us / memory_us are the cost model's roofline terms (the
  // cost model's own GpuSpec::kernel_launch_us is not used here: launches
  // are the host's, below).
  double kernel_overhead_us = 0;  // GPU time of a kernel beyond the roofline
  double gemm_overhead_us = 0;    // GEMMs (cuBLAS), on top of it
  double memory_efficiency = 1;   // fused kernels' HBM rate / copy rate
  double compute_efficiency = 1;  // GEMMs at real shapes / peak GEMM rate
  // The host. XLA:GPU launches every kernel from one host thread, and a
  // kernel cannot start before it is launched: runs of short kernels are
  // bound by the launch rate, long kernels let the host run ahead.
  //   a launch (kernel, collective, async start): host += host_launch_us
  //     (+ gemm_host_launch_us for a GEMM); the kernel starts at
  //     max(its stream free, host);
  //   the host runs at most host_max_lead_us ahead of the compute stream
  //     (the launch queue is bounded);
  //   a step begins with host_step_us on the host (dispatch, argument
  //     handling), overlapping the previous step's tail as far as the host
  //     was ahead at its end (steps run back to back);
  //   a while loop without known_trip_count reads its predicate on the
  //     host every iteration (the host waits for the GPU); XLA runs loops
  //     with known_trip_count without their condition.
  // All 0: the compute stream never waits for the host.
  double host_launch_us = 0;
  double gemm_host_launch_us = 0;
  double host_max_lead_us = 0;
  double host_step_us = 0;
  // Fraction of an async-compute kernel's time (another stream, e.g.
  // XLA's async dynamic-update-slice fusions) that the compute stream loses
  // to it (shared HBM and SMs): 0 = free overlap, 1 = serial.
  double async_compute_contention = 0;
  // Contention with collectives in flight (issue 25). NCCL's kernels run
  // on the SMs and move their bytes through HBM while a collective is on
  // the collective stream, so a compute-stream kernel beside one runs
  // slower: a compute-bound kernel at (1 - collective_sm_share) of its
  // rate (the SMs NCCL's thread blocks hold), a memory-bound one at
  // (1 - collective_hbm_share) (the HBM bandwidth the collective's traffic
  // takes). Only the part of the kernel that overlaps the collective
  // stream's busy time is slowed. 0: free overlap.
  double collective_sm_share = 0;
  double collective_hbm_share = 0;
  // Unfused modules (IsUnfusedModule, sim/simulator.h): the preset key
  // `unfused_compute xla-fused|per-op` sets it.
  UnfusedCompute unfused_compute = UnfusedCompute::kXlaFused;

  SimOptions();
};

// One async or sync collective of the module, aggregated over every time
// it runs.
struct SimCollective {
  std::string name;  // the start (or sync) instruction
  std::string kind;  // "all-gather", "reduce-scatter", ...
  std::string computation;
  std::string loop_path;  // "while.3 x4 > while.7 x8", "" at top level
  std::string source;     // "file.py:12" or op_name, "" if none
  int64_t bytes = 0;      // full buffer per run
  int64_t group_size = 0;
  int64_t count = 0;      // times run
  double time_us = 0;     // total time on the collective stream
  double exposed_us = 0;  // total time the compute stream waited for it
  bool async = true;
};

// One slice of the timeline (record_trace only).
struct SimEvent {
  enum class Track { kCompute, kCollective, kAsyncCompute };
  Track track = Track::kCompute;
  std::string name;
  std::string category;  // "kernel", "collective", "loop", "iteration", ...
  double start_us = 0;
  double duration_us = 0;
  int depth = 0;             // loop nesting (loop / iteration slices)
  int64_t collective = -1;   // index into SimResult::collectives
  double issue_us = -1;      // collectives: when the compute stream issued it
  double done_us = -1;       // collectives: when the -done ran (wait end)
  double exposed_us = 0;     // collectives: how long the -done waited
  double flops = 0;          // kernels: the cost model's FLOPs
  double bytes = 0;          // kernels: the cost model's HBM bytes
  double contention_us = 0;  // kernels: time lost to collectives beside it
};

struct SimResult {
  std::string gpu;
  double step_time_us = 0;
  double compute_us = 0;        // busy time of the compute stream
  double compute_bound_us = 0;  // kernels whose FLOPs set their time
  double memory_bound_us = 0;   // kernels whose HBM bytes set their time
  double flops = 0;             // all kernels
  double hbm_bytes = 0;         // all kernels
  double communication_us = 0;  // total collective time
  double exposed_communication_us = 0;
  // Compute stream idle waiting for the host's launches (SimOptions'
  // host_*: runs of kernels shorter than their launch).
  double launch_bound_us = 0;
  double async_compute_us = 0;       // busy time of the async compute stream
  double async_compute_wait_us = 0;  // compute stream waiting for it
  // Compute-stream time lost to collectives in flight (SimOptions'
  // collective_sm_share / collective_hbm_share); part of compute_us.
  double contention_us = 0;
  int64_t kernels = 0;  // kernel launches simulated
  // Loop iterations (over every run of a loop, nested ones multiplied) not
  // simulated one by one: extrapolated ones are estimated from the last
  // simulated iteration (a loop that never settled, max_expanded_iterations
  // or max_simulated_steps); summarized ones repeat a simulated iteration
  // exactly (a steady state, or a loop run again from an equal state). The
  // reports print the first (when not 0), not the second.
  int64_t extrapolated_iterations = 0;
  int64_t summarized_iterations = 0;
  std::vector<std::string> unknown_trip_counts;  // loops run once
  // "while.3: KnownTripCountContradicted: ..." (while_loop_analysis.h).
  std::vector<std::string> warnings;
  // The module is as XLA's front end emits it, not fused (no fusion, no
  // cuBLAS GEMM custom-call, yet kernels): every op is its own kernel, so
  // step_time_us is an upper bound, not comparable with XLA's final
  // modules (a prediction needs XLA's final module, e.g. the JAX bridge's
  // final_hlo()).
  bool unfused = false;
  // An unfused module priced as XLA will fuse it (UnfusedCompute::
  // kXlaFused): step_time_us estimates the step of XLA's final module.
  bool xla_fused_estimate = false;
  std::vector<SimCollective> collectives;  // in first-issue order
  // Liveness peak (bytes) and where it is reached.
  int64_t peak_memory_bytes = 0;
  std::string peak_memory_at;   // instruction (computation) at the peak
  int64_t parameter_bytes = 0;  // entry parameters (part of the peak)
  // XLA's buffer assignment total (memory_usage_report.txt), -1 if unknown;
  // set by the caller, printed with the difference.
  int64_t xla_memory_report_bytes = -1;
  std::vector<SimEvent> events;  // record_trace only, in start order
};

}  // namespace hloverlap

#endif  // HLOVERLAP_SIM_SIM_TYPES_H_
