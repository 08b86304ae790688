// Peak memory of a scheduled module from liveness over its schedule (the
// instruction order), as XLA's buffer assignment would reach it: the
// simulator's view of analysis/buffer_analysis.h (which buffers exist,
// which values alias them, how long they live; see there).
//
//   %a = f32[1M] parameter(0)          live: a                    4 MB
//   %b = f32[1M] exponential(%a)       live: a, b                 8 MB
//   %c = f32[1M] negate(%b)            c takes b's buffer         8 MB
//   peak 8 MB at b
#ifndef HLOVERLAP_SIM_LIVENESS_H_
#define HLOVERLAP_SIM_LIVENESS_H_

#include "analysis/buffer_analysis.h"
#include "hlo/module.h"

namespace hloverlap {

using PeakMemory = MemoryPeak;
PeakMemory ComputePeakMemory(const Module& module);

}  // namespace hloverlap

#endif  // HLOVERLAP_SIM_LIVENESS_H_
