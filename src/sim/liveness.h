// Peak memory of a scheduled module from liveness over its schedule (the
// instruction order), as XLA's buffer assignment would reach it.
//
// Every array leaf an instruction defines is a buffer from its definition
// to its last use in the same computation; get-tuple-element, tuple,
// bitcast, while (loop state), in-place dynamic-update-slice fusions,
// output_to_operand_aliasing custom-calls and async -done halves alias
// existing buffers; an elementwise op or fusion writes over an operand
// buffer of its size that dies there. A while body's values that become the
// next loop state take over the state's buffers. Called computations add
// their own peak (without their parameters) at the call point. Fused
// computations allocate nothing. Entry parameters are live throughout.
//
//   %a = f32[1M] parameter(0)          live: a                    4 MB
//   %b = f32[1M] exponential(%a)       live: a, b                 8 MB
//   %c = f32[1M] negate(%b)            c takes b's buffer         8 MB
//   peak 8 MB at b
#ifndef HLOVERLAP_SIM_LIVENESS_H_
#define HLOVERLAP_SIM_LIVENESS_H_

#include <cstdint>
#include <string>

#include "hlo/module.h"

namespace hloverlap {

struct PeakMemory {
  int64_t bytes = 0;
  std::string at;  // instruction (computation) at the peak
  int64_t parameter_bytes = 0;
};
PeakMemory ComputePeakMemory(const Module& module);

}  // namespace hloverlap

#endif  // HLOVERLAP_SIM_LIVENESS_H_
