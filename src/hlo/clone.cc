#include "hlo/clone.h"

#include <algorithm>
#include <functional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "hlo/absl_compat.h"
#include "hlo/computation.h"
#include "hlo/opcode_traits.h"

namespace hloverlap {

std::unique_ptr<Instruction> CloneInstruction(
    const Instruction& instruction, std::string name,
    absl::Span<Instruction* const> new_operands) {
  auto clone = std::make_unique<Instruction>(
      instruction.opcode(), std::move(name), instruction.shape());
  clone->CopyAttributesFrom(instruction);
  for (Instruction* op : new_operands) clone->AppendOperand(op);
  return clone;
}

namespace {

// Copies the instructions of `src` into `dst` (operands and control edges
// remapped). Names come from `rename`; computations called are mapped with
// `computation_map` when present there.
absl::Status CopyInstructions(
    const Computation& src, Computation& dst,
    const std::function<std::string(const Instruction&)>& rename,
    const absl::flat_hash_map<const Computation*, Computation*>&
        computation_map,
    Module* channel_source) {
  absl::flat_hash_map<const Instruction*, Instruction*> map;
  map.reserve(src.instruction_count());
  for (Instruction* inst : src.MakeInstructionPostOrder()) {
    std::vector<Instruction*> ops;
    ops.reserve(inst->operand_count());
    for (Instruction* op : inst->operands()) {
      auto it = map.find(op);
      if (it == map.end()) {
        return absl::InternalError(absl::StrCat(
            "CloneComputation ", src.name(), ": operand ", op->name(), " of ",
            inst->name(), " is not in the computation"));
      }
      ops.push_back(it->second);
    }
    auto clone = CloneInstruction(*inst, rename(*inst), ops);
    for (Computation*& c : clone->mutable_called_computations()) {
      auto it = computation_map.find(c);
      if (it != computation_map.end()) c = it->second;
    }
    if (channel_source != nullptr && clone->attrs().channel_id.has_value()) {
      clone->mutable_attrs().channel_id = channel_source->NextChannelId();
    }
    map[inst] = dst.AddInstruction(std::move(clone));
  }
  for (const auto& p : src.instructions()) {
    for (Instruction* pred : p->control_predecessors()) {
      auto it = map.find(pred);
      if (it != map.end()) map[p.get()]->AddControlPredecessor(it->second);
    }
  }
  if (src.root() != nullptr) dst.set_root(map[src.root()]);
  return absl::OkStatus();
}

absl::StatusOr<Computation*> CloneComputationImpl(
    const Computation& computation, std::string_view suffix, Module* module,
    bool deep, absl::flat_hash_map<const Computation*, Computation*>& cloned) {
  absl::flat_hash_map<const Computation*, Computation*> callee_map;
  if (deep) {
    for (Computation* callee : computation.CalledComputations()) {
      auto it = cloned.find(callee);
      if (it != cloned.end()) {
        callee_map[callee] = it->second;
        continue;
      }
      auto c = CloneComputationImpl(*callee, suffix, module, deep, cloned);
      if (!c.ok()) return c.status();
      callee_map[callee] = *c;
    }
  }
  auto copy = std::make_unique<Computation>(module->UniqueComputationName(
      absl::StrCat(computation.name(), ".", AsAbsl(suffix))));
  copy->set_is_fusion_computation(computation.IsFusionComputation());
  copy->set_execution_thread(computation.execution_thread());
  Computation* added = module->AddComputation(std::move(copy));
  std::function<std::string(const Instruction&)> rename =
      [&](const Instruction& inst) {
        return module->UniqueInstructionName(
            absl::StrCat(inst.name(), ".", AsAbsl(suffix)));
      };
  absl::Status s =
      CopyInstructions(computation, *added, rename, callee_map, module);
  if (!s.ok()) {
    (void)module->RemoveComputation(added);
    return s;
  }
  cloned[&computation] = added;
  return added;
}

}  // namespace

absl::StatusOr<Computation*> CloneComputation(const Computation& computation,
                                              std::string_view suffix,
                                              Module* target, bool deep) {
  Module* module = target != nullptr ? target : computation.parent();
  if (module == nullptr) {
    return absl::InternalError(absl::StrCat(
        "CloneComputation: ", computation.name(), " has no module"));
  }
  absl::flat_hash_map<const Computation*, Computation*> cloned;
  return CloneComputationImpl(computation, suffix, module, deep, cloned);
}

namespace {

int64_t SaturatingAdd(int64_t a, int64_t b) {
  return std::min(kCloneCostSaturated, a + b);  // both <= 2^62: no overflow
}

// Instructions created by cloning instructions / computations with nested
// loops copied (memoized per computation; -1 marks one being computed, so a
// computation that calls itself saturates instead of recursing forever).
class CloneCostModel {
 public:
  explicit CloneCostModel(bool deep_clone_loops) : deep_(deep_clone_loops) {}

  int64_t OfInstruction(const Instruction& inst, int depth) {
    int64_t cost = 1;
    if (deep_ && inst.opcode() == Opcode::kWhile &&
        inst.called_computations().size() == 2) {
      for (const Computation* c : inst.called_computations()) {
        cost = SaturatingAdd(cost, OfComputation(c, depth + 1));
      }
    }
    // fusion, async-start: a computation of their own (calls=).
    if (Traits(inst.opcode()).callees == CalleeForm::kCalls &&
        inst.to_apply() != nullptr) {
      cost = SaturatingAdd(cost, inst.to_apply()->instruction_count());
    }
    return cost;
  }

  int64_t OfComputation(const Computation* comp, int depth) {
    if (comp == nullptr) return 0;
    // Deeper than any real loop nest: treat as unbounded.
    if (depth > kMaxDepth) return kCloneCostSaturated;
    auto [it, fresh] = memo_.try_emplace(comp, -1);
    if (!fresh) return it->second < 0 ? kCloneCostSaturated : it->second;
    int64_t cost = 0;
    for (const auto& inst : comp->instructions()) {
      cost = SaturatingAdd(cost, OfInstruction(*inst, depth));
      if (cost == kCloneCostSaturated) break;
    }
    memo_[comp] = cost;
    return cost;
  }

 private:
  static constexpr int kMaxDepth = 512;
  const bool deep_;
  absl::flat_hash_map<const Computation*, int64_t> memo_;
};

}  // namespace

int64_t CloneCost(absl::Span<Instruction* const> instructions,
                  bool deep_clone_loops) {
  CloneCostModel model(deep_clone_loops);
  int64_t cost = 0;
  for (const Instruction* inst : instructions) {
    cost = SaturatingAdd(cost, model.OfInstruction(*inst, 0));
  }
  return cost;
}

int64_t LoopCloneCost(const Instruction& while_instr) {
  if (while_instr.opcode() != Opcode::kWhile ||
      while_instr.called_computations().size() != 2) {
    return 0;
  }
  return CloneCostModel(true).OfInstruction(while_instr, 0) - 1;
}

absl::StatusOr<std::pair<Computation*, Computation*>> CloneLoopComputations(
    const Instruction& while_instr, std::string_view suffix,
    std::vector<Computation*>* created_computations) {
  if (while_instr.opcode() != Opcode::kWhile ||
      while_instr.called_computations().size() != 2) {
    return absl::InternalError(absl::StrCat(
        "CloneLoopComputations: ", while_instr.name(), " is not a while"));
  }
  Computation* result[2] = {nullptr, nullptr};
  for (int i = 0; i < 2; ++i) {
    const Computation* src = while_instr.called_computations()[i];
    Module* module = src->parent();
    if (module == nullptr) {
      return absl::InternalError(absl::StrCat(
          "CloneLoopComputations: ", src->name(), " has no module"));
    }
    // An empty suffix keeps the name (made unique), without a trailing dot.
    auto copy = std::make_unique<Computation>(module->UniqueComputationName(
        suffix.empty() ? src->name()
                       : absl::StrCat(src->name(), ".", AsAbsl(suffix))));
    copy->set_execution_thread(src->execution_thread());
    // Insert before the source so callees stay before callers.
    Computation* dst = module->AddComputation(std::move(copy), src);
    if (created_computations != nullptr) created_computations->push_back(dst);
    absl::flat_hash_map<const Instruction*, Instruction*> map;
    CloneIntoOptions options;
    options.suffix = std::string(suffix);
    absl::Status s =
        CloneInstructionsInto(src->MakeInstructionPostOrder(), *dst, map,
                              options, nullptr, created_computations);
    if (!s.ok()) return s;
    if (src->root() != nullptr) dst->set_root(map.at(src->root()));
    result[i] = dst;
  }
  return std::make_pair(result[0], result[1]);
}

absl::Status CloneInstructionsInto(
    absl::Span<Instruction* const> instructions, Computation& dst,
    absl::flat_hash_map<const Instruction*, Instruction*>& map,
    const CloneIntoOptions& options, std::vector<Instruction*>* created,
    std::vector<Computation*>* created_computations) {
  Module* module = dst.parent();
  if (module == nullptr) {
    return absl::InternalError(
        absl::StrCat("CloneInstructionsInto: ", dst.name(), " has no module"));
  }
  for (Instruction* inst : instructions) {
    std::vector<Instruction*> ops;
    ops.reserve(inst->operand_count());
    for (Instruction* op : inst->operands()) {
      auto it = map.find(op);
      if (it == map.end()) {
        return absl::InternalError(
            absl::StrCat("CloneInstructionsInto ", dst.name(), ": operand ",
                         op->name(), " of ", inst->name(), " has no clone"));
      }
      ops.push_back(it->second);
    }
    std::string name = module->UniqueInstructionName(
        options.suffix.empty()
            ? inst->name()
            : absl::StrCat(inst->name(), ".", options.suffix));
    auto clone = CloneInstruction(*inst, std::move(name), ops);
    if (options.fresh_channel_ids && clone->attrs().channel_id.has_value()) {
      clone->mutable_attrs().channel_id = module->NextChannelId();
    }
    if (options.deep_clone_loops && inst->opcode() == Opcode::kWhile &&
        inst->called_computations().size() == 2) {
      auto loops =
          CloneLoopComputations(*inst, options.suffix, created_computations);
      if (!loops.ok()) return loops.status();
      clone->mutable_called_computations() = {loops->first, loops->second};
    }
    // Every async computation has exactly one async-start and every fused
    // computation one fusion: a cloned start or fusion gets its own copy
    // (collectives in it get fresh channel ids), and an async start's
    // updates/done name that copy when they name a computation at all.
    if (Traits(inst->opcode()).callees == CalleeForm::kCalls &&
        clone->to_apply() != nullptr) {
      absl::StatusOr<Computation*> wrapped = CloneComputation(
          *clone->to_apply(), options.suffix.empty() ? "clone" : options.suffix,
          module);
      if (!wrapped.ok()) return wrapped.status();
      if (created_computations != nullptr) {
        created_computations->push_back(*wrapped);
      }
      clone->mutable_called_computations()[0] = *wrapped;
    } else if ((inst->opcode() == Opcode::kAsyncUpdate ||
                inst->opcode() == Opcode::kAsyncDone) &&
               !clone->called_computations().empty() && !ops.empty()) {
      clone->mutable_called_computations() = ops[0]->called_computations();
    }
    Instruction* added =
        dst.AddInstruction(std::move(clone), options.insert_before);
    map[inst] = added;
    if (created != nullptr) created->push_back(added);
  }
  for (Instruction* inst : instructions) {
    Instruction* clone = map.at(inst);
    for (Instruction* pred : inst->control_predecessors()) {
      auto it = map.find(pred);
      if (it != map.end() && it->second->parent() == &dst &&
          it->second != clone) {
        clone->AddControlPredecessor(it->second);
      }
    }
  }
  return absl::OkStatus();
}

std::unique_ptr<Module> CloneModule(const Module& module) {
  auto copy = std::make_unique<Module>(module.name());
  copy->set_is_scheduled(module.is_scheduled());
  copy->set_replica_count(module.replica_count());
  copy->set_num_partitions(module.num_partitions());
  copy->set_entry_computation_layout(module.entry_computation_layout());
  copy->frontend_attributes() = module.frontend_attributes();
  copy->raw_header_attributes() = module.raw_header_attributes();
  copy->stack_frames() = module.stack_frames();
  copy->set_dropped_control_predecessors(module.dropped_control_predecessors());
  // Create every computation first so that calls map to the copies
  // whatever the computation order.
  absl::flat_hash_map<const Computation*, Computation*> map;
  for (const auto& c : module.computations()) {
    auto comp = std::make_unique<Computation>(c->name());
    comp->set_is_fusion_computation(c->IsFusionComputation());
    comp->set_execution_thread(c->execution_thread());
    Computation* added = copy->AddComputation(std::move(comp));
    map[c.get()] = added;
    if (c.get() == module.entry()) copy->set_entry(added);
  }
  for (const auto& c : module.computations()) {
    Computation* added = map[c.get()];
    std::function<std::string(const Instruction&)> rename =
        [](const Instruction& inst) { return inst.name(); };
    (void)CopyInstructions(*c, *added, rename, map, nullptr);
    // CopyInstructions adds in post-order; restore the source's stored order
    // (it may be a schedule).
    absl::flat_hash_map<std::string_view, Instruction*> by_name;
    for (const auto& inst : added->instructions()) {
      by_name[inst->name()] = inst.get();
    }
    std::vector<Instruction*> order;
    order.reserve(c->instruction_count());
    for (const auto& inst : c->instructions()) {
      auto it = by_name.find(inst->name());
      if (it != by_name.end()) order.push_back(it->second);
    }
    if (order.size() == static_cast<size_t>(added->instruction_count())) {
      (void)added->SetInstructionOrder(order);
    }
  }
  return copy;
}

absl::Status ReplaceInstruction(Instruction* old_instruction,
                                Instruction* new_instruction) {
  absl::Status s = old_instruction->ReplaceAllUsesWith(new_instruction);
  if (!s.ok()) return s;
  Computation* parent = old_instruction->parent();
  if (old_instruction->users().empty() &&
      old_instruction->control_successors().empty() && parent != nullptr &&
      parent->root() != old_instruction) {
    return parent->RemoveInstruction(old_instruction);
  }
  return absl::OkStatus();
}

}  // namespace hloverlap
