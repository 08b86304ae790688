#include "hlo/computation.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "hlo/module.h"

namespace hloverlap {

Computation::Computation(std::string name) : name_(std::move(name)) {}

bool Computation::is_entry() const {
  return parent_ != nullptr && parent_->entry() == this;
}

Instruction* Computation::AddInstruction(
    std::unique_ptr<Instruction> instruction, const Instruction* before) {
  Instruction* raw = instruction.get();
  raw->parent_ = this;
  raw->unique_id_ =
      parent_ != nullptr ? parent_->NextUniqueId() : instruction_count();
  if (raw->opcode() == Opcode::kParameter) parameters_dirty_ = true;
  if (before == nullptr || before->parent() != this ||
      (before->order_flags_ & Instruction::kOrderRemoved) != 0) {
    // (An anchor elsewhere or removed: appended, as a search would fail.)
    instructions_.push_back(std::move(instruction));
  } else {
    // The anchor is owned by this computation, so flagging it is safe.
    const_cast<Instruction*>(before)->order_flags_ |= Instruction::kOrderAnchor;
    pending_.push_back({before, std::move(instruction)});
  }
  return raw;
}

void Computation::ApplyPendingEdits() const {
  std::vector<PendingInsert> pending = std::move(pending_);
  pending_.clear();
  pending_removals_ = 0;
  // Per anchor, the indices of its queued instructions in insertion order.
  absl::flat_hash_map<const Instruction*, std::vector<size_t>> queued;
  queued.reserve(pending.size());
  for (size_t k = 0; k < pending.size(); ++k) {
    queued[pending[k].before].push_back(k);
  }
  std::vector<std::unique_ptr<Instruction>> merged;
  merged.reserve(instructions_.size() + pending.size());
  auto place = [&](std::unique_ptr<Instruction> inst) {
    if (inst == nullptr) return;
    if ((inst->order_flags_ & Instruction::kOrderRemoved) != 0) return;
    inst->order_flags_ = 0;
    merged.push_back(std::move(inst));
  };
  // Emits the queue of `anchor`, each entry after its own queue;
  // iterative, as a chain of queued anchors may be long.
  std::vector<std::pair<const Instruction*, size_t>> stack;
  auto emit_queue_of = [&](const Instruction* anchor) {
    auto found = queued.find(anchor);
    if (found == queued.end()) return;
    stack.push_back({anchor, 0});
    while (!stack.empty()) {
      const Instruction* a = stack.back().first;
      const size_t next = stack.back().second;
      std::vector<size_t>& q = queued.find(a)->second;
      if (next >= q.size()) {
        q.clear();  // emitted: a second visit emits nothing
        stack.pop_back();
        if (!stack.empty()) {
          // The queued instruction whose own queue just ended goes now.
          const Instruction* pa = stack.back().first;
          place(std::move(pending[queued.find(pa)->second[stack.back().second]]
                              .instruction));
          ++stack.back().second;
        }
        continue;
      }
      const size_t k = q[next];
      if (queued.contains(pending[k].instruction.get())) {
        stack.push_back({pending[k].instruction.get(), 0});  // its queue first
      } else {
        place(std::move(pending[k].instruction));
        ++stack.back().second;
      }
    }
  };
  for (auto& p : instructions_) {
    if ((p->order_flags_ & Instruction::kOrderAnchor) != 0) {
      emit_queue_of(p.get());
    }
    place(std::move(p));
  }
  // Defensive: anything whose anchor chain did not lead here goes last.
  for (auto& p : pending) {
    if (p.instruction == nullptr) continue;
    emit_queue_of(p.instruction.get());
    if (p.instruction != nullptr) place(std::move(p.instruction));
  }
  instructions_ = std::move(merged);
}

Instruction* Computation::AddInstruction(
    Opcode opcode, std::string name, Shape shape,
    absl::Span<Instruction* const> operands) {
  auto inst =
      std::make_unique<Instruction>(opcode, std::move(name), std::move(shape));
  for (Instruction* op : operands) inst->AppendOperand(op);
  return AddInstruction(std::move(inst));
}

absl::Status Computation::RemoveInstruction(Instruction* instruction) {
  absl::flat_hash_set<Instruction*> set = {instruction};
  return RemoveInstructions(set);
}

absl::Status Computation::RemoveInstructions(
    const absl::flat_hash_set<Instruction*>& set) {
  for (Instruction* inst : set) {
    if (inst->parent() != this) {
      return absl::InternalError(absl::StrCat(
          "RemoveInstructions: ", inst->name(), " is not in ", name_));
    }
    if ((inst->order_flags_ & Instruction::kOrderRemoved) != 0) {
      return absl::InternalError(absl::StrCat(
          "RemoveInstructions: ", inst->name(), " was already removed"));
    }
    if (inst == root_) {
      return absl::InternalError(
          absl::StrCat("RemoveInstructions: cannot remove root ", inst->name(),
                       " of ", name_));
    }
    for (Instruction* user : inst->users()) {
      if (!set.contains(user)) {
        return absl::InternalError(
            absl::StrCat("RemoveInstructions: ", inst->name(),
                         " is still used by ", user->name(), " in ", name_));
      }
    }
    for (Instruction* succ : inst->control_successors()) {
      if (!set.contains(succ)) {
        return absl::InternalError(absl::StrCat(
            "RemoveInstructions: ", inst->name(),
            " is a control predecessor of ", succ->name(), " in ", name_));
      }
    }
  }
  for (Instruction* inst : set) {
    inst->DetachOperands();
    auto preds = inst->control_predecessors();
    for (Instruction* p : preds) inst->RemoveControlPredecessor(p);
    if (inst->opcode() == Opcode::kParameter) parameters_dirty_ = true;
  }
  for (Instruction* inst : set) {
    inst->users_.clear();
    inst->order_flags_ |= Instruction::kOrderRemoved;
  }
  // Leaving the stored order waits for its next read (ApplyPendingEdits):
  // erasing now would cost O(n) per call, quadratic for a pass replacing
  // each of many loops in a large computation.
  pending_removals_ += set.size();
  return absl::OkStatus();
}

const std::vector<Instruction*>& Computation::parameters() const {
  if (!parameters_dirty_.load(std::memory_order_acquire)) return parameters_;
  std::lock_guard<std::mutex> lock(parameters_mutex_);
  if (!parameters_dirty_.load(std::memory_order_relaxed)) return parameters_;
  parameters_.clear();
  for (const auto& p : instructions()) {
    if (p->opcode() != Opcode::kParameter) continue;
    int64_t n = p->parameter_number();
    if (n < 0 || n >= (int64_t{1} << 20)) continue;
    if (static_cast<int64_t>(parameters_.size()) <= n) {
      parameters_.resize(n + 1, nullptr);
    }
    if (parameters_[n] == nullptr) parameters_[n] = p.get();
  }
  parameters_dirty_.store(false, std::memory_order_release);
  return parameters_;
}

absl::Status Computation::SetInstructionOrder(
    const std::vector<Instruction*>& order) {
  if (HasPendingEdits()) ApplyPendingEdits();
  if (order.size() != instructions_.size()) {
    return absl::InternalError(absl::StrCat(
        "SetInstructionOrder: ", name_, " has ", instructions_.size(),
        " instructions, order has ", order.size()));
  }
  absl::flat_hash_map<Instruction*, std::unique_ptr<Instruction>*> owned;
  owned.reserve(instructions_.size());
  for (auto& p : instructions_) owned[p.get()] = &p;
  std::vector<std::unique_ptr<Instruction>> reordered;
  reordered.reserve(order.size());
  for (Instruction* inst : order) {
    auto it = owned.find(inst);
    if (it == owned.end() || *it->second == nullptr) {
      // Restore what was moved so far before failing.
      for (auto& p : reordered) *owned[p.get()] = std::move(p);
      return absl::InternalError(
          absl::StrCat("SetInstructionOrder: ", name_,
                       ": order is not a permutation of the instructions"));
    }
    reordered.push_back(std::move(*it->second));
  }
  instructions_ = std::move(reordered);
  return absl::OkStatus();
}

std::vector<Instruction*> Computation::MakeInstructionPostOrder() const {
  const auto& stored = instructions();
  // Iterative DFS in stored order; operands and control predecessors first.
  std::vector<Instruction*> order;
  order.reserve(stored.size());
  absl::flat_hash_map<const Instruction*, uint8_t> state;  // 1 visiting, 2 done
  state.reserve(stored.size());
  std::vector<std::pair<Instruction*, size_t>> stack;
  for (const auto& p : stored) {
    Instruction* start = p.get();
    if (state[start] != 0) continue;
    stack.push_back({start, 0});
    state[start] = 1;
    while (!stack.empty()) {
      auto& [inst, next] = stack.back();
      const size_t num_ops = inst->operands().size();
      const size_t total = num_ops + inst->control_predecessors().size();
      if (next < total) {
        Instruction* dep = next < num_ops
                               ? inst->operand(next)
                               : inst->control_predecessors()[next - num_ops];
        ++next;
        if (dep->parent() != this) continue;
        uint8_t& s = state[dep];
        if (s == 0) {
          s = 1;
          stack.push_back({dep, 0});
        }
        continue;
      }
      state[inst] = 2;
      order.push_back(inst);
      stack.pop_back();
    }
  }
  return order;
}

std::vector<Computation*> Computation::CalledComputations() const {
  std::vector<Computation*> out;
  absl::flat_hash_set<Computation*> seen;
  for (const auto& p : instructions()) {
    for (Computation* c : p->called_computations()) {
      if (c != nullptr && seen.insert(c).second) out.push_back(c);
    }
  }
  return out;
}

std::string Computation::SignatureString() const {
  std::string out = "(";
  const std::vector<Instruction*>& params = parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    if (i > 0) out.append(", ");
    if (params[i] == nullptr) {
      out.append("<missing>");
      continue;
    }
    absl::StrAppend(&out, params[i]->name(), ": ");
    params[i]->shape().AppendTo(out, /*print_layout=*/false);
  }
  out.append(") -> ");
  if (root_ != nullptr) root_->shape().AppendTo(out, /*print_layout=*/false);
  return out;
}

}  // namespace hloverlap
