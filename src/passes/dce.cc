#include "passes/dce.h"

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "analysis/call_graph.h"
#include "hlo/opcode_traits.h"
#include "passes/pass_registry.h"

namespace hloverlap {

bool HasSideEffect(const Instruction& instr) {
  if (Traits(instr.opcode()).side_effect) return true;
  switch (instr.opcode()) {
    // Not side effects, but structure DCE keeps.
    case Opcode::kParameter:
    case Opcode::kAfterAll:
    case Opcode::kAddDependency:
    case Opcode::kDomain:
      return true;
    case Opcode::kCustomCall:
      return instr.FindRawAttribute("custom_call_has_side_effect") != nullptr;
    default:
      return false;
  }
}

absl::StatusOr<bool> DcePass::RunOnComputation(Computation& computation,
                                               bool remove_dead_collectives) {
  // Counts of live users; an instruction dies when it has none, is not the
  // root, has no control successors and no side effects. Its operands are
  // then revisited.
  // Control successors count as users: an instruction ordered before a
  // dead one dies with it (in the same run).
  absl::flat_hash_map<Instruction*, int64_t> live_users;
  std::vector<Instruction*> work;
  for (const auto& p : computation.instructions()) {
    live_users[p.get()] = p->user_count() + p->control_successors().size();
    work.push_back(p.get());
  }
  absl::flat_hash_set<Instruction*> dead;
  while (!work.empty()) {
    Instruction* inst = work.back();
    work.pop_back();
    if (dead.contains(inst) || inst == computation.root() ||
        live_users[inst] != 0 || HasSideEffect(*inst)) {
      continue;
    }
    if (!remove_dead_collectives &&
        (IsCollective(inst->opcode()) || IsAsyncStart(inst->opcode()) ||
         IsAsyncDone(inst->opcode()))) {
      continue;
    }
    dead.insert(inst);
    absl::flat_hash_set<Instruction*> seen_ops;
    for (Instruction* op : inst->operands()) {
      if (!seen_ops.insert(op).second) continue;
      if (--live_users[op] == 0) work.push_back(op);
    }
    for (Instruction* pred : inst->control_predecessors()) {
      if (--live_users[pred] == 0) work.push_back(pred);
    }
  }
  if (dead.empty()) return false;
  // Every control successor of a dead instruction is dead too.
  absl::Status s = computation.RemoveInstructions(dead);
  if (!s.ok()) return s;
  return true;
}

bool RemoveUnreachableComputations(Module& module) {
  CallGraph graph(module);
  absl::flat_hash_set<const Computation*> unreachable;
  for (const auto& c : module.computations()) {
    if (!graph.IsReachable(c.get())) unreachable.insert(c.get());
  }
  // All at once: one scan of the module, not one per computation.
  return !unreachable.empty() && module.RemoveComputations(unreachable).ok();
}

absl::StatusOr<bool> DcePass::Run(Module& module, PassContext& context) {
  bool changed = false;
  for (const auto& c : module.computations()) {
    auto r = RunOnComputation(*c, remove_dead_collectives_);
    if (!r.ok()) return r.status();
    changed |= *r;
  }
  changed |= RemoveUnreachableComputations(module);
  return changed;
}

// Registration (passes/pass_registry.h).
void RegisterDcePass(PassRegistry& registry) {
  registry.Add<DcePass>(
      "remove dead instructions and unreachable computations");
}

}  // namespace hloverlap
