// Timeline simulator: walks a scheduled module (instruction order = the
// schedule) on a model GPU and predicts its step time, how much of the
// communication is hidden behind compute, and the peak memory.
//
// Streams (as XLA:GPU runs a module):
//   * compute: every kernel (fusion, cuBLAS GEMM custom-call, unfused op),
//     sync collectives too, one after another in schedule order;
//   * collective: async collectives (`all-gather-start` ... `-done`,
//     `async-start` wrapping a collective, send/recv). One collective at a
//     time, in issue order (XLA's default of one collective stream). A
//     collective starts when it is issued on the compute stream and the
//     collective stream is free; it occupies the stream until it completes;
//   * async compute: `async-start` wrapping compute (fusions on another
//     execution thread), copy-start/copy-done.
// A `-done` waits for its start's completion; waiting for a collective is
// exposed communication (attributed to that collective).
//
// Control flow is expanded: while loops run their trip count
// (analysis/while_loop_analysis.h: proven from the condition, else
// known_trip_count, else 1) times condition + body, nested loops too; a
// known_trip_count the condition contradicts is reported in `warnings`;
// call runs its callee;
// conditional runs its most expensive branch. Loops with more than
// `max_expanded_iterations` iterations simulate that many and extrapolate
// the rest from the last iteration (the steady state).
//
// Costs come from analysis/gpu_cost_model.h (roofline per kernel,
// collective table interpolated in log-size), memoized per instruction.
//
// Peak memory: liveness over the schedule. Every array leaf an instruction
// defines is a buffer from its definition to its last use in the same
// computation; get-tuple-element, tuple, bitcast, while (loop state),
// in-place dynamic-update-slice fusions, output_to_operand_aliasing
// custom-calls and async -done halves alias existing buffers. A while body's
// values that become the next loop state take over the state's buffers.
// Called computations add their own peak (without their parameters) at the
// call point. Fused computations allocate nothing.
#ifndef HLOVERLAP_SIM_SIMULATOR_H_
#define HLOVERLAP_SIM_SIMULATOR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/gpu_cost_model.h"
#include "hlo/module.h"

namespace hloverlap {

struct SimOptions {
  GpuSpec spec;  // device constants (H200Spec() by default)
  // Collective table; nullptr = the compiled-in one.
  const CollectiveTable* table = nullptr;
  // Devices taking part in collectives whose replica groups are empty (all
  // devices); 0 = the module's num_partitions x replica_count.
  int64_t devices = 0;
  // Record the per-kernel timeline (needed for the Chrome trace).
  bool record_trace = false;
  // Loops longer than this are extrapolated from their last simulated
  // iteration.
  int64_t max_expanded_iterations = 64;

  // Achieved-vs-roofline factors of real kernels (defaults: the compiled-in
  // preset sim/sim_preset.inc; a calibration replaces them with
  // --gpu-spec). A kernel takes
  //   launch + kernel_overhead_us
  //     + max(compute_us / compute_efficiency, memory_us / memory_efficiency)
  // where compute_us / memory_us are the cost model's roofline terms.
  double kernel_overhead_us = 0;  // ramp-up and tail beyond the launch
  double memory_efficiency = 1;   // fused kernels' HBM rate / copy rate
  double compute_efficiency = 1;  // GEMMs at real shapes / peak GEMM rate
  // Fraction of an async-compute kernel's time (another stream, e.g.
  // XLA's async dynamic-update-slice fusions) that the compute stream loses
  // to it (shared HBM and SMs): 0 = free overlap, 1 = serial.
  double async_compute_contention = 0;

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
  int depth = 0;            // loop nesting (loop / iteration slices)
  int64_t collective = -1;  // index into SimResult::collectives
  double issue_us = -1;     // collectives: when the compute stream issued it
  double done_us = -1;      // collectives: when the -done ran (wait end)
  double exposed_us = 0;    // collectives: how long the -done waited
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
  double async_compute_us = 0;       // busy time of the async compute stream
  double async_compute_wait_us = 0;  // compute stream waiting for it
  int64_t kernels = 0;               // kernel launches simulated
  int64_t extrapolated_iterations = 0;
  std::vector<std::string> unknown_trip_counts;  // loops run once
  // "while.3: KnownTripCountContradicted: ..." (while_loop_analysis.h).
  std::vector<std::string> warnings;
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

// Simulates `module` (its entry computation) under `options`. Errors only
// for a module without an entry computation.
absl::StatusOr<SimResult> Simulate(const Module& module,
                                   const SimOptions& options);

// Peak memory from liveness alone (see above).
struct PeakMemory {
  int64_t bytes = 0;
  std::string at;
  int64_t parameter_bytes = 0;
};
PeakMemory ComputePeakMemory(const Module& module);

// Chrome-trace JSON ("traceEvents"): one track (thread) per stream, loop
// and iteration slices enclosing their kernels, flow events from the
// compute stream where a collective is issued to the collective and from
// the collective to where it is waited for, and the compute that ran while
// it was in flight in its args.
std::string ChromeTraceJson(const SimResult& result);

// The report: text (default) and JSON (`step_time_ms` etc.). `top` limits
// the collectives listed in text (0 = all).
std::string FormatSimText(const SimResult& result, int top = 20);
std::string FormatSimJson(const SimResult& result);

// Overrides preset constants from `key value` lines ('#' comments):
// matmul_flops, vector_flops, hbm_bytes_per_second, kernel_launch_us,
// memory_bytes. Unknown keys and bad numbers are InvalidArgument naming the
// line.
absl::StatusOr<GpuSpec> ApplyGpuSpecOverrides(GpuSpec spec,
                                              std::string_view text);
// The same for SimOptions: the GpuSpec keys above plus kernel_overhead_us,
// memory_efficiency, compute_efficiency, async_compute_contention.
absl::Status ApplySimOverrides(SimOptions& options, std::string_view text);
// The compiled-in preset text (sim/sim_preset.inc).
std::string_view DefaultSimPresetText();

// "total bytes" of XLA's memory_usage_report.txt (`Total bytes: N`), or -1.
int64_t ParseMemoryReportTotalBytes(std::string_view report);

}  // namespace hloverlap

#endif  // HLOVERLAP_SIM_SIMULATOR_H_
