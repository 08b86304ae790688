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
// known_trip_count, else 1; a known_trip_count the condition contradicts
// is reported in SimResult::warnings) times condition + body, nested loops
// too; call runs its callee; conditional runs its most expensive branch.
// Iterations that repeat a steady state are summarized rather than replayed,
// and loops reached again from an equal state are looked up, so the work is
// near-linear in the module and independent of nesting depth (sim/timeline.h).
//
// Costs come from analysis/gpu_cost_model.h (roofline per kernel,
// collective table interpolated in log-size), memoized per instruction.
//
// Peak memory: liveness over the schedule (sim/liveness.h).
//
// Units (this header includes them all, so callers need only this one):
//   sim/sim_types.h       SimOptions, SimResult, SimCollective, SimEvent
//   sim/timeline.h        the streams and control flow (SimulateTimeline)
//   sim/liveness.h        peak memory (ComputePeakMemory)
//   sim/report.h          text and JSON reports, XLA's memory report total
//   sim/chrome_trace.h    the timeline as a Chrome trace
//   sim/spec_overrides.h  preset and --gpu-spec `key value` overrides
//   sim/simulator.h       Simulate (timeline + liveness), trip counts
#ifndef HLOVERLAP_SIM_SIMULATOR_H_
#define HLOVERLAP_SIM_SIMULATOR_H_

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "hlo/module.h"
#include "sim/chrome_trace.h"
#include "sim/liveness.h"
#include "sim/report.h"
#include "sim/sim_types.h"
#include "sim/spec_overrides.h"

namespace hloverlap {

// Simulates `module` (its entry computation) under `options`. Errors only
// for a module without an entry computation.
absl::StatusOr<SimResult> Simulate(const Module& module,
                                   const SimOptions& options);

// The times the timeline runs `while_instr`: its trip count
// (WhileLoopInfo::trip_count), else 1, a loop whose count is unknown named
// in `result.unknown_trip_counts`, a contradicted known_trip_count in
// `result.warnings`.
int64_t SimLoopTripCount(const Instruction& while_instr, SimResult& result);

// True when `module` holds no fusion and no cuBLAS GEMM custom-call: XLA has
// not fused it (a front-end or hloverlap output module), so every op would
// be its own kernel (SimResult::unfused).
bool IsUnfusedModule(const Module& module);

}  // namespace hloverlap

#endif  // HLOVERLAP_SIM_SIMULATOR_H_
