// Collective helpers of the simulator (see the header).
#include "sim/collectives.h"

#include "hlo/computation.h"

namespace hloverlap {

std::string CollectiveKindName(Opcode op) {
  switch (op) {
    case Opcode::kAllGather:
      return "all-gather";
    case Opcode::kAllReduce:
      return "all-reduce";
    case Opcode::kReduceScatter:
      return "reduce-scatter";
    case Opcode::kAllToAll:
      return "all-to-all";
    case Opcode::kRaggedAllToAll:
      return "ragged-all-to-all";
    case Opcode::kCollectivePermute:
      return "collective-permute";
    case Opcode::kCollectiveBroadcast:
      return "collective-broadcast";
    default:
      return "collective";
  }
}

// The collective instruction an async start wraps (itself otherwise).
const Instruction* WrappedCollective(const Instruction& instr) {
  if (instr.opcode() != Opcode::kAsyncStart) return &instr;
  const Computation* wrapped = instr.to_apply();
  if (wrapped == nullptr) return &instr;
  if (wrapped->root() != nullptr && IsCollective(wrapped->root()->opcode())) {
    return wrapped->root();
  }
  for (const auto& i : wrapped->instructions()) {
    if (IsCollective(i->opcode())) return i.get();
  }
  return &instr;
}
}  // namespace hloverlap
