// The loop-rewrite transaction every loop pass builds its rewrite in
// (DESIGN.md, "Facts and rewrites shared by every pass").
//
// A rewrite never edits the loop it replaces: it creates new computations
// (condition, body, the peeled iterations' callees), new instructions in
// existing computations (prologue, epilogue, the new while) and records them
// here. Commit verifies the new computations, moves the old loop's control
// edges and uses to the result and marks the transaction done; the caller
// then removes the old loop. Rollback (or destruction before Commit) removes
// everything recorded, so a rewrite that fails anywhere leaves the module as
// it was:
//
//   LoopRewrite txn(module);
//   Computation* body = txn.NewComputation("body.pipelined", state, ...);
//   ... txn.Add(*parent, std::move(prologue_instr), old_while) ...
//   Instruction* w = txn.Add(*parent, NewWhile(...), old_while);
//   SetWhileTripCount(*w, trips - 1, ...);       // typed backend config
//   if (absl::Status s = txn.Commit(old_while, w, w, {cond, body},
//                                   "rewritten loop does not verify: ");
//       !s.ok()) return s;                        // rolled back
//
// Used by the collective pipeliner and double buffering. (The hoist still
// appends loop state in place; see collective_hoist.h.)
#ifndef HLOVERLAP_PASSES_LOOP_REWRITE_H_
#define HLOVERLAP_PASSES_LOOP_REWRITE_H_

#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "hlo/module.h"

namespace hloverlap {

class LoopRewrite {
 public:
  explicit LoopRewrite(Module& module) : module_(&module) {}
  LoopRewrite(const LoopRewrite&) = delete;
  LoopRewrite& operator=(const LoopRewrite&) = delete;
  // Rolls back unless committed or released.
  ~LoopRewrite() { Rollback(); }

  Module& module() const { return *module_; }

  // Adds `inst` to `comp` (before `before`, else at the end) and records it.
  Instruction* Add(Computation& comp, std::unique_ptr<Instruction> inst,
                   const Instruction* before = nullptr);
  // A fresh computation named after `base` with one parameter of
  // `param_shape` (returned in `param`), placed before `before`.
  Computation* NewComputation(std::string_view base, const Shape& param_shape,
                              const Computation* before, Instruction** param);

  // What was created, for the clone utilities that append to them
  // (CloneInstructionsInto, CloneLoopComputations).
  std::vector<Instruction*>& instructions() { return instructions_; }
  std::vector<Computation*>& computations() { return computations_; }

  // Verifies `verify` (VerifyComputationAll; an error is `what` + the first
  // problem), then moves `old`'s control predecessors to `preds_to`, its
  // control successors and uses to `result`, and keeps what was built. On
  // any failure everything is rolled back and the error returned. `old` is
  // left in place, unused: the caller removes it.
  absl::Status Commit(Instruction* old, Instruction* result,
                      Instruction* preds_to,
                      const std::vector<const Computation*>& verify,
                      std::string_view what);
  // Keeps what was recorded without a commit (instructions that live in a
  // computation another transaction owns).
  void Release();
  // Removes every recorded instruction and computation.
  void Rollback();

 private:
  Module* module_;
  std::vector<Instruction*> instructions_;  // in computations that existed
  std::vector<Computation*> computations_;  // created computations
};

}  // namespace hloverlap

#endif  // HLOVERLAP_PASSES_LOOP_REWRITE_H_
