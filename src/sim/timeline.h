// The timeline of the simulator: walks a scheduled module (instruction
// order = the schedule) on a model GPU and accumulates the step time,
// compute, communication and exposed time into a SimResult (without the
// liveness peak; Simulate in sim/simulator.h adds it). See simulator.h for
// the model (streams, control flow, costs).
//
// Loops are summarized, not replayed. Every step is translation-invariant
// in time, so what a run of a loop body does depends only on its state:
// the free times of the collective and async-compute streams relative to
// the compute stream's time (clamped at 0, and only for the streams the
// body uses). Iterations are simulated until one starts from the state the
// one before started from (usually the second or third: a body waits for
// what it issues); every later iteration repeats that one exactly, so they
// are added as that many repetitions in O(1). A whole loop (and a call) is
// memoized per (instruction, entry state): an inner loop reached again from
// an equal state is one lookup, so nesting does not multiply work:
//
//   %outer = while(...), known_trip_count=1000
//     body: all-gather-start; %inner = while(...), known_trip_count=1000;
//           all-gather-done
//   %outer: iteration 0 simulated; 1..999 start with nothing in flight,
//           as 0 did: summarized.
//   %inner: iteration 0 starts with the outer all-gather in flight, 1 with
//           nothing, 2 as 1: 0 and 1 simulated, 2..999 summarized; in
//           %outer's summarized iterations it is not run at all.
//
// A loop that has not settled after SimOptions::max_expanded_iterations
// (or once SimOptions::max_simulated_steps steps were simulated) is
// extrapolated from its last iteration: SimResult::extrapolated_iterations
// counts those estimates; summarized_iterations the exact repetitions. The
// figures equal a replay of every iteration (SimOptions::summarize =
// false) but for rounding (sums in another order: 1e-9 relative, tested on
// the corpus). In the trace, summarized iterations are copies of the
// steady one (up to max_expanded_iterations per loop and a million copied
// events in all), then one slice "w #64..#999 (summarized)".
#ifndef HLOVERLAP_SIM_TIMELINE_H_
#define HLOVERLAP_SIM_TIMELINE_H_

#include "hlo/module.h"
#include "sim/sim_types.h"

namespace hloverlap {

// `module` must have an entry computation.
SimResult SimulateTimeline(const Module& module, const SimOptions& options);

}  // namespace hloverlap

#endif  // HLOVERLAP_SIM_TIMELINE_H_
