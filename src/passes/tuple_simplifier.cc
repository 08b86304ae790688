#include "passes/tuple_simplifier.h"

#include "passes/pass_registry.h"

namespace hloverlap {
namespace {

// The instruction a get-tuple-element of a tuple forwards, or null.
Instruction* ForwardedByGte(const Instruction* gte) {
  if (gte->opcode() != Opcode::kGetTupleElement || gte->operand_count() != 1) {
    return nullptr;
  }
  const Instruction* t = gte->operand(0);
  if (t->opcode() != Opcode::kTuple) return nullptr;
  int64_t i = gte->tuple_index();
  if (i < 0 || i >= t->operand_count()) return nullptr;
  return t->operand(i);
}

// x when `tuple` is tuple(gte(x,0), ..., gte(x,n-1)) and x has n elements.
Instruction* RebuiltTupleSource(const Instruction* tuple) {
  if (tuple->opcode() != Opcode::kTuple || tuple->operand_count() == 0) {
    return nullptr;
  }
  Instruction* source = nullptr;
  for (int64_t i = 0; i < tuple->operand_count(); ++i) {
    const Instruction* op = tuple->operand(i);
    if (op->opcode() != Opcode::kGetTupleElement || op->tuple_index() != i) {
      return nullptr;
    }
    if (source == nullptr) {
      source = op->operand(0);
    } else if (op->operand(0) != source) {
      return nullptr;
    }
  }
  if (!source->shape().IsTuple() ||
      source->shape().tuple_size() != tuple->operand_count()) {
    return nullptr;
  }
  return source;
}

}  // namespace

absl::StatusOr<bool> TupleSimplifierPass::Run(Module& module,
                                              PassContext& context) {
  bool changed = false;
  for (const auto& comp : module.computations()) {
    for (Instruction* inst : comp->MakeInstructionPostOrder()) {
      Instruction* replacement = ForwardedByGte(inst);
      // A root tuple stays: loop bodies and analyses expect tuple roots.
      if (replacement == nullptr && comp->root() != inst) {
        replacement = RebuiltTupleSource(inst);
      }
      if (replacement == nullptr || replacement == inst) continue;
      if (!inst->control_predecessors().empty() ||
          !inst->control_successors().empty()) {
        continue;  // keep ordering constraints intact
      }
      if (!(replacement->shape() == inst->shape()) &&
          !replacement->shape().Compatible(inst->shape())) {
        continue;
      }
      if (inst->users().empty() && comp->root() != inst) continue;
      absl::Status s = inst->ReplaceAllUsesWith(replacement);
      if (!s.ok()) return s;
      changed = true;
    }
  }
  return changed;
}

// Registration (passes/pass_registry.h).
void RegisterTupleSimplifierPass(PassRegistry& registry) {
  registry.Add<TupleSimplifierPass>(
      "forward tuple elements, drop rebuilt tuples");
}

}  // namespace hloverlap
