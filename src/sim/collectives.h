// What the simulator reads off a collective instruction: the collective an
// async start wraps and the name of its kind.
//
//   %s = ((f32[8]), f32[16]) async-start(%x), calls=%wrapped
//   %wrapped: ROOT %ag = f32[16] all-gather(%p), ...
//   WrappedCollective(s) == ag; CollectiveKindName(kAllGather) ==
//   "all-gather"
#ifndef HLOVERLAP_SIM_COLLECTIVES_H_
#define HLOVERLAP_SIM_COLLECTIVES_H_

#include <string>

#include "hlo/instruction.h"

namespace hloverlap {

// "all-gather", "reduce-scatter", ... ("collective" for other opcodes).
std::string CollectiveKindName(Opcode op);

// The collective instruction an async start wraps (itself otherwise).
const Instruction* WrappedCollective(const Instruction& instr);

}  // namespace hloverlap

#endif  // HLOVERLAP_SIM_COLLECTIVES_H_
