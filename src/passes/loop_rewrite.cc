#include "passes/loop_rewrite.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "hlo/absl_compat.h"
#include "hlo/verifier.h"

namespace hloverlap {

Instruction* LoopRewrite::Add(Computation& comp,
                              std::unique_ptr<Instruction> inst,
                              const Instruction* before) {
  Instruction* added = comp.AddInstruction(std::move(inst), before);
  instructions_.push_back(added);
  return added;
}

Computation* LoopRewrite::NewComputation(std::string_view base,
                                         const Shape& param_shape,
                                         const Computation* before,
                                         Instruction** param) {
  auto comp =
      std::make_unique<Computation>(module_->UniqueComputationName(base));
  Computation* c = module_->AddComputation(std::move(comp), before);
  computations_.push_back(c);
  auto p = std::make_unique<Instruction>(
      Opcode::kParameter, module_->UniqueInstructionName("param"), param_shape);
  p->mutable_attrs().parameter_number = 0;
  *param = c->AddInstruction(std::move(p));
  return c;
}

absl::Status LoopRewrite::Commit(Instruction* old, Instruction* result,
                                 Instruction* preds_to,
                                 const std::vector<const Computation*>& verify,
                                 std::string_view what) {
  for (const Computation* c : verify) {
    std::vector<std::string> problems = VerifyComputationAll(*c);
    if (!problems.empty()) {
      Rollback();
      return absl::InternalError(absl::StrCat(AsAbsl(what), problems.front()));
    }
  }
  for (Instruction* pred : old->control_predecessors()) {
    preds_to->AddControlPredecessor(pred);
  }
  std::vector<Instruction*> succs = old->control_successors();
  for (Instruction* succ : succs) succ->AddControlPredecessor(result);
  old->DropAllControlDependencies();
  if (absl::Status s = old->ReplaceAllUsesWith(result); !s.ok()) {
    Rollback();
    return s;
  }
  Release();
  return absl::OkStatus();
}

void LoopRewrite::Release() {
  instructions_.clear();
  computations_.clear();
}

void LoopRewrite::Rollback() {
  absl::flat_hash_set<Computation*> created(computations_.begin(),
                                            computations_.end());
  absl::flat_hash_map<Computation*, absl::flat_hash_set<Instruction*>> by_comp;
  for (Instruction* inst : instructions_) {
    if (!created.contains(inst->parent())) by_comp[inst->parent()].insert(inst);
  }
  for (auto& [comp, set] : by_comp) {
    for (Instruction* inst : set) inst->DropAllControlDependencies();
    (void)comp->RemoveInstructions(set);
  }
  // Created computations only call each other: remove callers first by
  // retrying until nothing more goes.
  for (bool progress = true; progress && !computations_.empty();) {
    progress = false;
    for (size_t k = computations_.size(); k-- > 0;) {
      if (module_->RemoveComputation(computations_[k]).ok()) {
        computations_.erase(computations_.begin() + k);
        progress = true;
      }
    }
  }
  Release();
}

}  // namespace hloverlap
