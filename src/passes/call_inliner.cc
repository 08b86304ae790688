#include "passes/call_inliner.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "analysis/call_graph.h"
#include "hlo/clone.h"
#include "passes/dce.h"
#include "passes/pass_registry.h"

namespace hloverlap {

bool CallInlinerPass::MustStayCall(const Instruction& call) {
  const Computation* callee = call.to_apply();
  if (callee == nullptr) return false;
  // Shardy's HLO round trip: a shard_map body is exported as
  // custom-call(xla.sdy.GlobalToLocalShape) ->
  // call(%xla.sdy.manual_computation_body*)
  // -> custom-call(xla.sdy.LocalToGlobalShape); XLA's importer rebuilds the
  // manual computation from exactly that pattern.
  return callee->name().rfind("xla.sdy.manual_computation_body", 0) == 0;
}

absl::Status CallInlinerPass::InlineCall(Instruction* call) {
  Computation* caller = call->parent();
  Computation* callee = call->to_apply();
  Module* module = caller != nullptr ? caller->parent() : nullptr;
  if (callee == nullptr || module == nullptr) {
    return absl::InternalError(
        absl::StrCat("inline: call ", call->name(), " has no callee"));
  }
  if (callee->num_parameters() != call->operand_count()) {
    return absl::InternalError(
        absl::StrCat("inline: call ", call->name(), " passes ",
                     call->operand_count(), " operands to ", callee->name(),
                     " which takes ", callee->num_parameters()));
  }
  absl::flat_hash_map<const Instruction*, Instruction*> map;
  std::vector<Instruction*> cloned;
  for (Instruction* inst : callee->MakeInstructionPostOrder()) {
    if (inst->opcode() == Opcode::kParameter) {
      int64_t n = inst->parameter_number();
      if (n < 0 || n >= call->operand_count()) {
        return absl::InternalError(absl::StrCat(
            "inline: parameter ", inst->name(), " of ", callee->name(),
            " has no matching operand in ", call->name()));
      }
      map[inst] = call->operand(n);
      continue;
    }
    std::vector<Instruction*> ops;
    ops.reserve(inst->operand_count());
    for (Instruction* op : inst->operands()) ops.push_back(map.at(op));
    auto clone = CloneInstruction(
        *inst, module->UniqueInstructionName(inst->name()), ops);
    if (clone->attrs().channel_id.has_value()) {
      clone->mutable_attrs().channel_id = module->NextChannelId();
    }
    Instruction* added = caller->AddInstruction(std::move(clone), call);
    map[inst] = added;
    cloned.push_back(added);
  }
  for (const auto& p : callee->instructions()) {
    if (p->opcode() == Opcode::kParameter) continue;
    for (Instruction* pred : p->control_predecessors()) {
      auto it = map.find(pred);
      if (it != map.end() && it->second->parent() == caller &&
          it->second->opcode() != Opcode::kParameter) {
        map[p.get()]->AddControlPredecessor(it->second);
      }
    }
  }
  for (Instruction* pred : call->control_predecessors()) {
    for (Instruction* c : cloned) c->AddControlPredecessor(pred);
  }
  std::vector<Instruction*> succs = call->control_successors();
  for (Instruction* succ : succs) {
    for (Instruction* c : cloned) {
      if (c->users().empty()) succ->AddControlPredecessor(c);
    }
    if (cloned.empty()) {
      for (Instruction* pred : call->control_predecessors()) {
        succ->AddControlPredecessor(pred);
      }
    }
  }
  call->DropAllControlDependencies();
  Instruction* new_root = map.at(callee->root());
  absl::Status s = call->ReplaceAllUsesWith(new_root);
  if (!s.ok()) return s;
  return caller->RemoveInstruction(call);
}

absl::StatusOr<bool> CallInlinerPass::Run(Module& module,
                                          PassContext& context) {
  bool changed = false;
  CallGraph graph(module);
  // Callers are visited after their callees (post-order), so by the time a
  // call is inlined its callee holds no calls any more.
  std::vector<Computation*> order = graph.PostOrder();
  for (Computation* comp : order) {
    std::vector<Instruction*> calls;
    for (const auto& p : comp->instructions()) {
      if (p->opcode() == Opcode::kCall && p->to_apply() != nullptr &&
          p->to_apply()->execution_thread().empty() && !MustStayCall(*p)) {
        calls.push_back(p.get());
      }
    }
    for (Instruction* call : calls) {
      // Module-size guard: a copy of the callee (whose own calls are
      // inlined already) per call; calls of calls grow exponentially.
      if (absl::Status s = context.size_guard.Reserve(
              module, *call,
              absl::StrCat("inlining call ", call->name(), " (computation ",
                           comp->name(), ") of ", call->to_apply()->name()),
              call->to_apply()->instruction_count(), "");
          !s.ok()) {
        return s;
      }
      absl::Status s = InlineCall(call);
      if (!s.ok()) {
        Remark r;
        r.pass = "inline";
        r.kind = RemarkKind::kFailure;
        r.name = "PassFailed";
        DescribeInstruction(*call, module, r);
        r.message = std::string(s.message());
        context.remarks.Emit(std::move(r));
        continue;
      }
      changed = true;
    }
  }
  // Drop callees that lost their last caller.
  if (changed) RemoveUnreachableComputations(module);
  return changed;
}

// Registration (passes/pass_registry.h).
void RegisterCallInlinerPass(PassRegistry& registry) {
  registry.Add<CallInlinerPass>("inline call instructions");
}

}  // namespace hloverlap
