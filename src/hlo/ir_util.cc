#include "hlo/ir_util.h"

#include <memory>
#include <utility>

#include "hlo/computation.h"

namespace hloverlap {

bool HasControlDeps(const Instruction* i) {
  return !i->control_predecessors().empty() || !i->control_successors().empty();
}

bool IsGteOf(const Instruction* i, const Instruction* tuple) {
  return i != nullptr && i->opcode() == Opcode::kGetTupleElement &&
         i->operand_count() == 1 && i->operand(0) == tuple;
}

bool IsGteOf(const Instruction* i, const Instruction* tuple, int64_t index) {
  return IsGteOf(i, tuple) && i->tuple_index() == index;
}

bool OnlyGteUsers(const Instruction* i) {
  for (const Instruction* u : i->users()) {
    if (u->opcode() != Opcode::kGetTupleElement) return false;
  }
  return true;
}

std::unique_ptr<Instruction> NewGetTupleElement(Module& module,
                                                std::string_view base,
                                                Instruction* tuple,
                                                int64_t index) {
  auto gte = std::make_unique<Instruction>(Opcode::kGetTupleElement,
                                           module.UniqueInstructionName(base),
                                           tuple->shape().tuple_shapes(index));
  gte->mutable_attrs().tuple_index = index;
  gte->AppendOperand(tuple);
  return gte;
}

std::unique_ptr<Instruction> NewConstant(Module& module, std::string_view base,
                                         Literal literal) {
  auto c = std::make_unique<Instruction>(
      Opcode::kConstant, module.UniqueInstructionName(base), literal.shape());
  c->mutable_attrs().literal = std::make_unique<Literal>(std::move(literal));
  return c;
}

std::unique_ptr<Instruction> NewScalarBroadcast(Module& module,
                                                std::string_view base,
                                                Instruction* scalar,
                                                const Shape& shape) {
  auto b = std::make_unique<Instruction>(
      Opcode::kBroadcast, module.UniqueInstructionName(base), shape);
  b->mutable_attrs().has_dimensions = true;
  b->AppendOperand(scalar);
  return b;
}

std::unique_ptr<Instruction> NewTuple(std::string name,
                                      absl::Span<Instruction* const> elements) {
  Shape shape = Shape::Tuple({});
  for (const Instruction* e : elements) {
    shape.mutable_tuple_shapes().push_back(e->shape());
  }
  auto tuple =
      std::make_unique<Instruction>(Opcode::kTuple, std::move(name), shape);
  for (Instruction* e : elements) tuple->AppendOperand(e);
  return tuple;
}

const Instruction* NextInOrder(const Instruction* i) {
  const auto& insts = i->parent()->instructions();
  for (size_t k = 0; k + 1 < insts.size(); ++k) {
    if (insts[k].get() == i) return insts[k + 1].get();
  }
  return nullptr;
}

}  // namespace hloverlap
