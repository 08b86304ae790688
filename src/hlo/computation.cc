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
  raw->unique_id_ = parent_ != nullptr
                        ? parent_->NextUniqueId()
                        : static_cast<int64_t>(instructions_.size());
  if (raw->opcode() == Opcode::kParameter) parameters_dirty_ = true;
  if (before == nullptr) {
    instructions_.push_back(std::move(instruction));
  } else {
    // Searched from both ends at once: passes insert before a while loop
    // or a root, usually near one end of a large computation, so a
    // forward-only search made many inserts quadratic.
    auto it = instructions_.end();
    if (insert_hint_ < instructions_.size() &&
        instructions_[insert_hint_].get() == before) {
      it = instructions_.begin() + insert_hint_;
    }
    for (size_t lo = 0, hi = instructions_.size();
         it == instructions_.end() && lo < hi; ++lo) {
      if (instructions_[lo].get() == before) {
        it = instructions_.begin() + lo;
        break;
      }
      if (instructions_[--hi].get() == before) {
        it = instructions_.begin() + hi;
        break;
      }
    }
    const size_t at = static_cast<size_t>(it - instructions_.begin());
    instructions_.insert(it, std::move(instruction));
    insert_hint_ = at + 1;  // `before` moved one slot on
  }
  return raw;
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
  for (Instruction* inst : set) inst->users_.clear();
  if (set.size() == 1) {
    // One instruction (a pass replacing a loop): found from both ends, no
    // hash lookup per instruction of a large computation.
    const Instruction* only = *set.begin();
    for (size_t lo = 0, hi = instructions_.size(); lo < hi; ++lo) {
      if (instructions_[lo].get() == only) {
        instructions_.erase(instructions_.begin() + lo);
        break;
      }
      if (instructions_[--hi].get() == only) {
        instructions_.erase(instructions_.begin() + hi);
        break;
      }
    }
    return absl::OkStatus();
  }
  instructions_.erase(
      std::remove_if(instructions_.begin(), instructions_.end(),
                     [&](const std::unique_ptr<Instruction>& p) {
                       return set.contains(p.get());
                     }),
      instructions_.end());
  return absl::OkStatus();
}

const std::vector<Instruction*>& Computation::parameters() const {
  if (!parameters_dirty_.load(std::memory_order_acquire)) return parameters_;
  std::lock_guard<std::mutex> lock(parameters_mutex_);
  if (!parameters_dirty_.load(std::memory_order_relaxed)) return parameters_;
  parameters_.clear();
  for (const auto& p : instructions_) {
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
  // Iterative DFS in stored order; operands and control predecessors first.
  std::vector<Instruction*> order;
  order.reserve(instructions_.size());
  absl::flat_hash_map<const Instruction*, uint8_t> state;  // 1 visiting, 2 done
  state.reserve(instructions_.size());
  std::vector<std::pair<Instruction*, size_t>> stack;
  for (const auto& p : instructions_) {
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
  for (const auto& p : instructions_) {
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
