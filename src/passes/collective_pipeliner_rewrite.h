// The collective pipeliner's rewrites (passes/collective_pipeliner.h): each
// builds, in a LoopRewrite the LoopPassDriver commits, a new loop next to
// the old one with the prologue before it and the epilogue after it, and
// replaces the old loop at commit. The pass decides (analysis, plans,
// remarks); this unit only builds. Backward, prefetching all-gather %ag one
// iteration ahead:
//
//   %w = while(%t), body=%b        ->  %ag.prefetch0 = all-gather(...)  // it.
//   0 %b: %ag = all-gather(%x)           %w.1 = while(tuple(...,
//   %ag.prefetch0))
//       ... uses %ag ...               %b.pipelined: uses the carried %ag,
//                                        %ag.next = all-gather(next %x)
//                                      the last iteration peeled after %w.1
//
// Forward (a reduce-scatter stored by dynamic-update-slice runs in the next
// iteration) and sink (one batched collective after the loop) likewise.
#ifndef HLOVERLAP_PASSES_COLLECTIVE_PIPELINER_REWRITE_H_
#define HLOVERLAP_PASSES_COLLECTIVE_PIPELINER_REWRITE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "analysis/while_loop_analysis.h"
#include "hlo/module.h"
#include "passes/loop_rewrite.h"

namespace hloverlap {
namespace pipeliner {

using InstrMap = absl::flat_hash_map<const Instruction*, Instruction*>;

// Per-loop state.

struct LoopState {
  Module* module = nullptr;
  Instruction* while_instr = nullptr;
  std::string loop_path;
  WhileLoopInfo info;
  Computation* parent = nullptr;
  Computation* body = nullptr;
  Computation* cond = nullptr;
  Instruction* body_param = nullptr;
  Instruction* init = nullptr;
  int64_t n = 0;  // state tuple size
  // False when PrepareLoop failed on a rewritten loop.
  bool analyzable = true;
};

// A reduce-scatter or all-reduce the forward and sink rewrites move: its
// formatting ops and the dynamic-update-slice storing it into loop state
// element buffer_index.
struct ForwardCandidate {
  Instruction* collective = nullptr;
  std::vector<Instruction*> formatting;  // collective's user .. last before DUS
  Instruction* dus = nullptr;
  int64_t buffer_index = 0;
};

// An element read through an optimization barrier of a tuple,
// get-tuple-element(opt-barrier(tuple(a0, .., an)), k), has the value of
// a_k; nullptr for anything else.
Instruction* BarrierAlias(const Instruction* x);
// The instructions of `roots`' operand trees (post-order), stopping at the
// keys of `stop` and at `leaf_param`; with `follow_aliases`, a BarrierAlias
// read has its alias as only operand.
std::vector<Instruction*> Ancestors(const std::vector<Instruction*>& roots,
                                    const InstrMap& stop,
                                    const Instruction* leaf_param = nullptr,
                                    bool follow_aliases = false);

// Backward (prefetch) of `cands` (post-order) by `depth` iterations; returns
// the new loop.
absl::StatusOr<Instruction*> RewriteBackward(
    LoopState& ls, const std::vector<Instruction*>& cands, int depth,
    LoopRewrite& txn);
// Forward: the collectives of iteration i run in iteration i+1.
absl::StatusOr<Instruction*> RewriteForward(
    LoopState& ls, const std::vector<ForwardCandidate>& cands,
    LoopRewrite& txn);
// Forward-sink: the per-iteration operands are stored into an [N, ...]
// buffer and one batched collective runs after the loop.
absl::StatusOr<Instruction*> RewriteSink(
    LoopState& ls, const std::vector<ForwardCandidate>& cands,
    LoopRewrite& txn);

}  // namespace pipeliner
}  // namespace hloverlap

#endif  // HLOVERLAP_PASSES_COLLECTIVE_PIPELINER_REWRITE_H_
