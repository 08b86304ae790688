// The timeline of the simulator: walks a scheduled module (instruction
// order = the schedule) on a model GPU and accumulates the step time,
// compute, communication and exposed time into a SimResult (without the
// liveness peak; Simulate in sim/simulator.h adds it). See simulator.h for
// the model (streams, control flow, costs).
#ifndef HLOVERLAP_SIM_TIMELINE_H_
#define HLOVERLAP_SIM_TIMELINE_H_

#include "hlo/module.h"
#include "sim/sim_types.h"

namespace hloverlap {

// `module` must have an entry computation.
SimResult SimulateTimeline(const Module& module, const SimOptions& options);

}  // namespace hloverlap

#endif  // HLOVERLAP_SIM_TIMELINE_H_
