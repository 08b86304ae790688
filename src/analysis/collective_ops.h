// Which instructions perform a collective, in every form XLA emits one:
// the one classifier behind `hloverlap explain` (analysis/module_summary.h),
// the cost model (analysis/gpu_cost_model.h) and the simulator.
//
//   %ar = f32[8] all-reduce(%x)                      sync
//   %ags = (f32[8], f32[16]) all-gather-start(%x)    async, native start
//   %s = ((f32[8]), f32[16]) async-start(%x), calls=%w
//        %w: ROOT all-gather(...), or a fusion holding one   async wrapper
//   %f = f32[] fusion(%x), kind=kCustom, calls=%c,
//        backend_config={"fusion_backend_config":{"kind":
//        "__triton_collective",...}}
//        %c: ROOT all-reduce(...)                    sync (Triton collective
//                                                    fusion: one kernel)
//   %f = f32[8] fusion(%x), calls=%c  %c: ROOT all-reduce-start(...)
//   %d = f32[8] all-reduce-done(%f)                  async (the fusion is
//                                                    the start)
//   %ar = (f32[8], bf16[4]) all-reduce(%a, %b)       combined: one
//                                                    collective over both
//
// A collective inside a fusion or an async wrapper counts once, at the
// scheduled instruction (the fusion or the start): walkers classify the
// instructions of scheduled computations and do not count what the
// computations those instructions call contain again.
#ifndef HLOVERLAP_ANALYSIS_COLLECTIVE_OPS_H_
#define HLOVERLAP_ANALYSIS_COLLECTIVE_OPS_H_

#include <optional>
#include <string_view>

#include "hlo/instruction.h"

namespace hloverlap {

struct CollectiveOp {
  // The collective instruction: `instr` itself, or the one inside the
  // fusion / async wrapper it calls.
  const Instruction* collective = nullptr;
  // The synchronous opcode (kAllGather for all-gather-start and for an
  // async-start wrapping an all-gather, kCollectivePermute for send).
  Opcode kind = Opcode::kAllGather;
  // A -done waits for it (it runs beside the compute stream).
  bool async = false;
  // A fusion performs it (a Triton collective fusion, or a fusion that
  // wraps a collective).
  bool fused = false;
};

// What collective `instr` performs, nullopt when none. -done halves,
// async-update and recv are not collectives here (recv is the receiving
// half of a send).
std::optional<CollectiveOp> ClassifyCollective(const Instruction& instr);

// The bytes collective `coll` moves, as the loop passes and the async
// conversion report it (remark metric bytes_moved): the larger of its result
// and its operands, all of them (a combined collective moves each): an
// all-gather's result, a reduce-scatter's operands, an all-reduce's either.
// The cost model's bytes (gpu_cost_model.h) are the algorithm's instead.
int64_t CollectiveBytesMoved(const Instruction& coll);

// "all-gather", "reduce-scatter", ... (the opcode's name for collective
// opcodes, "collective" otherwise).
std::string_view CollectiveKindName(Opcode kind);

// True for a fusion whose backend_config says `"kind":"__triton_collective"`.
bool IsTritonCollectiveFusion(const Instruction& instr);

}  // namespace hloverlap

#endif  // HLOVERLAP_ANALYSIS_COLLECTIVE_OPS_H_
