#include "hlo/instruction.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "hlo/computation.h"
#include "hlo/printer.h"

namespace hloverlap {

Instruction::Instruction(Opcode opcode, std::string name, Shape shape)
    : opcode_(opcode), name_(std::move(name)), shape_(std::move(shape)) {}

Instruction::Instruction(Opcode opcode, std::string name, SharedShape shape)
    : opcode_(opcode), name_(std::move(name)), shape_(std::move(shape)) {}

bool Instruction::IsUserOf(const Instruction* operand) const {
  return std::find(operands_.begin(), operands_.end(), operand) !=
         operands_.end();
}

void Instruction::AddUser(Instruction* user) {
  if (std::find(users_.begin(), users_.end(), user) == users_.end()) {
    users_.push_back(user);
  }
}

void Instruction::RemoveUserIfUnused(Instruction* user) {
  if (user->IsUserOf(this)) return;
  auto it = std::find(users_.begin(), users_.end(), user);
  if (it != users_.end()) users_.erase(it);
}

void Instruction::AppendOperand(Instruction* operand) {
  // users_ mirrors operands_: `this` is already a user of `operand` iff it
  // is among this instruction's operands. Scan whichever list is shorter
  // (scanning only operand's users made parsing a value read by N
  // instructions O(N^2); scanning only the operands, a wide tuple).
  bool user = operands_.size() < operand->users_.size()
                  ? IsUserOf(operand)
                  : std::find(operand->users_.begin(), operand->users_.end(),
                              this) != operand->users_.end();
  operands_.push_back(operand);
  if (!user) operand->users_.push_back(this);
}

void Instruction::ReplaceOperandWith(int64_t i, Instruction* new_operand) {
  Instruction* old = operands_[i];
  if (old == new_operand) return;
  operands_[i] = new_operand;
  new_operand->AddUser(this);
  old->RemoveUserIfUnused(this);
}

void Instruction::ReplaceOperandsWith(Instruction* old_operand,
                                      Instruction* new_operand) {
  if (old_operand == new_operand) return;
  bool replaced = false;
  for (Instruction*& op : operands_) {
    if (op == old_operand) {
      op = new_operand;
      replaced = true;
    }
  }
  if (replaced) {
    new_operand->AddUser(this);
    old_operand->RemoveUserIfUnused(this);
  }
}

absl::Status Instruction::ReplaceAllUsesWith(Instruction* other) {
  if (other == this) return absl::OkStatus();
  if (!shape().Compatible(other->shape())) {
    return absl::InternalError(
        absl::StrCat("ReplaceAllUsesWith: ", name_, " has shape ",
                     shape().ToString(), " but replacement ", other->name(),
                     " has shape ", other->shape().ToString()));
  }
  UserList users = users_;
  for (Instruction* user : users) {
    if (user == other) continue;  // other may use this (e.g. a wrapper)
    user->ReplaceOperandsWith(this, other);
  }
  if (parent_ != nullptr && parent_->root() == this) parent_->set_root(other);
  return absl::OkStatus();
}

void Instruction::DetachOperands() {
  auto ops = operands_;
  operands_.clear();
  for (Instruction* op : ops) op->RemoveUserIfUnused(this);
}

void Instruction::AddControlPredecessor(Instruction* predecessor) {
  if (std::find(control_predecessors_.begin(), control_predecessors_.end(),
                predecessor) != control_predecessors_.end()) {
    return;
  }
  control_predecessors_.push_back(predecessor);
  predecessor->control_successors_.push_back(this);
}

namespace {
// Erases `item` from `list`, freeing the list when it becomes empty.
void EraseEdge(BoxedList<std::vector<Instruction*>>& list,
               const Instruction* item) {
  std::vector<Instruction*>& v = list.mutable_value();
  auto it = std::find(v.begin(), v.end(), item);
  if (it != v.end()) v.erase(it);
  if (v.empty()) list.clear();
}
}  // namespace

void Instruction::RemoveControlPredecessor(Instruction* predecessor) {
  if (std::find(control_predecessors_.begin(), control_predecessors_.end(),
                predecessor) == control_predecessors_.end()) {
    return;
  }
  EraseEdge(control_predecessors_, predecessor);
  EraseEdge(predecessor->control_successors_, this);
}

void Instruction::DropAllControlDependencies() {
  std::vector<Instruction*> preds = control_predecessors_;
  for (Instruction* p : preds) RemoveControlPredecessor(p);
  std::vector<Instruction*> succs = control_successors_;
  for (Instruction* s : succs) s->RemoveControlPredecessor(this);
}

const RawAttribute* Instruction::FindRawAttribute(std::string_view name) const {
  for (const RawAttribute& a : attrs_.raw) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

void Instruction::set_source_position(SourcePosition position) {
  constexpr uint32_t kMaxColumn = (uint32_t{1} << 24) - 1;
  source_line_ = position.line;
  source_column_ = std::min(position.column, kMaxColumn);
}

void Instruction::CopyAttributesFrom(const Instruction& other) {
  source_line_ = other.source_line_;
  source_column_ = other.source_column_;
  const InstructionAttributes& o = other.attrs_;
  InstructionAttributes& a = attrs_;
  a.dimensions = o.dimensions;
  a.has_dimensions = o.has_dimensions;
  a.tuple_index = o.tuple_index;
  a.parameter_number = o.parameter_number;
  a.iota_dimension = o.iota_dimension;
  a.slice = o.slice;
  a.dynamic_slice_sizes = o.dynamic_slice_sizes;
  a.padding = o.padding;
  a.dot = o.dot;
  a.comparison_direction = o.comparison_direction;
  a.comparison_type = o.comparison_type;
  a.channel_id = o.channel_id;
  a.replica_groups = o.replica_groups;
  a.use_global_device_ids = o.use_global_device_ids;
  a.constrain_layout = o.constrain_layout;
  a.source_target_pairs = o.source_target_pairs;
  a.fusion_kind = o.fusion_kind;
  a.custom_call_target = o.custom_call_target;
  a.branch_computations_form = o.branch_computations_form;
  a.is_composite = o.is_composite;
  a.literal = o.literal ? std::make_unique<Literal>(*o.literal) : nullptr;
  a.metadata = o.metadata;
  a.frontend_attributes = o.frontend_attributes;
  a.backend_config = o.backend_config;
  a.backend_config_is_raw = o.backend_config_is_raw;
  a.while_config = o.while_config;
  a.sharding = o.sharding;
  a.raw = o.raw;
  called_computations_ = other.called_computations_;
}

std::string Instruction::ToString() const {
  std::string out;
  AppendInstruction(*this, out);
  return out;
}

}  // namespace hloverlap
