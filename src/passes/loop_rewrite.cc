#include "passes/loop_rewrite.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "hlo/absl_compat.h"
#include "hlo/clone.h"
#include "hlo/ir_util.h"
#include "hlo/verifier.h"

namespace hloverlap {
namespace {

// The test's fault injection (ScopedLoopRewriteFault); empty outside tests.
LoopRewriteFault& InjectedFault() {
  static LoopRewriteFault* fault = new LoopRewriteFault();
  return *fault;
}

// A copy of `src` under its own name, with its instruction order, control
// edges, channel ids and callees, placed before it (its instructions keep
// their names too: `src` goes before the names are read as unique again).
// Every instruction of `src` and its copy are recorded in `map`.
absl::StatusOr<Computation*> CopyInPlaceOf(
    const Computation& src, Module& module,
    absl::flat_hash_map<const Instruction*, Instruction*>& map,
    std::vector<Computation*>& created) {
  auto copy = std::make_unique<Computation>(src.name());
  copy->set_execution_thread(src.execution_thread());
  copy->set_is_fusion_computation(src.IsFusionComputation());
  Computation* dst = module.AddComputation(std::move(copy), &src);
  created.push_back(dst);
  for (Instruction* inst : src.MakeInstructionPostOrder()) {
    std::vector<Instruction*> ops;
    ops.reserve(inst->operand_count());
    for (Instruction* op : inst->operands()) {
      auto it = map.find(op);
      if (it == map.end() || it->second->parent() != dst) {
        return absl::InternalError(
            absl::StrCat("copying ", src.name(), ": operand ", op->name(),
                         " of ", inst->name(), " is not in the computation"));
      }
      ops.push_back(it->second);
    }
    map[inst] = dst->AddInstruction(CloneInstruction(*inst, inst->name(), ops));
  }
  std::vector<Instruction*> order;
  order.reserve(src.instruction_count());
  for (const auto& inst : src.instructions()) {
    Instruction* c = map.at(inst.get());
    for (Instruction* pred : inst->control_predecessors()) {
      c->AddControlPredecessor(map.at(pred));
    }
    order.push_back(c);
  }
  if (src.root() != nullptr) dst->set_root(map.at(src.root()));
  if (absl::Status s = dst->SetInstructionOrder(order); !s.ok()) return s;
  return dst;
}

}  // namespace

ScopedLoopRewriteFault::ScopedLoopRewriteFault(LoopRewriteFault fault)
    : previous_(std::move(InjectedFault())) {
  InjectedFault() = std::move(fault);
}

ScopedLoopRewriteFault::~ScopedLoopRewriteFault() {
  InjectedFault() = std::move(previous_);
}

absl::Status LoopRewrite::Fault(std::string_view step) {
  const LoopRewriteFault& fault = InjectedFault();
  if (!fault) return absl::OkStatus();
  absl::Status s = fault(step);
  if (s.ok()) return s;
  return absl::InternalError(absl::StrCat(AsAbsl(step), ": ", s.message()));
}

absl::Status LoopRewrite::Checkpoint(std::string_view step) const {
  return Fault(step);
}

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

absl::StatusOr<std::pair<Computation*, Computation*>> LoopRewrite::CloneLoop(
    const Instruction& while_instr, std::string_view suffix) {
  return CloneLoopComputations(while_instr, suffix, &computations_);
}

absl::Status LoopRewrite::CloneInto(
    absl::Span<Instruction* const> instructions, Computation& comp,
    absl::flat_hash_map<const Instruction*, Instruction*>& map,
    const CloneIntoOptions& options) {
  return CloneInstructionsInto(instructions, comp, map, options,
                               Created(&comp) ? nullptr : &instructions_,
                               &computations_);
}

void LoopRewrite::MoveControlEdges(Instruction* old, Instruction* preds_to,
                                   Instruction* result) {
  for (Instruction* pred : old->control_predecessors()) {
    preds_to->AddControlPredecessor(pred);
  }
  std::vector<Instruction*> succs = old->control_successors();
  for (Instruction* succ : succs) succ->AddControlPredecessor(result);
  old->DropAllControlDependencies();
}

bool LoopRewrite::Created(const Computation* c) const {
  return std::find(computations_.begin(), computations_.end(), c) !=
         computations_.end();
}

absl::Status LoopRewrite::CopyLoopComputations(Instruction* loop,
                                               std::string_view what,
                                               AppendedState& out) {
  const Computation* parent = loop->parent();
  if (loop->opcode() != Opcode::kWhile || loop->operand_count() != 1 ||
      loop->called_computations().size() != 2 || parent == nullptr ||
      !loop->shape().IsTuple()) {
    return absl::InternalError(absl::StrCat(AsAbsl(what), ": ", loop->name(),
                                            " is not a while of a tuple"));
  }
  const Computation* old_cond = loop->while_condition();
  const Computation* old_body = loop->while_body();
  if (old_cond == nullptr || old_body == nullptr) {
    return absl::InternalError(absl::StrCat(AsAbsl(what), ": ", loop->name(),
                                            " has no condition or body"));
  }
  if (old_cond->num_parameters() != 1 || old_body->num_parameters() != 1 ||
      old_body->root() == nullptr ||
      old_body->root()->opcode() != Opcode::kTuple) {
    return absl::InternalError(absl::StrCat(
        AsAbsl(what), " to ", loop->name(),
        ": its condition and body need one parameter and a root tuple"));
  }
  for (const Computation* c : {old_cond, old_body}) {
    absl::StatusOr<Computation*> copy =
        CopyInPlaceOf(*c, *module_, out.map, computations_);
    if (!copy.ok()) return copy.status();
    (c == old_cond ? out.condition : out.body) = *copy;
  }
  for (const auto& [old, copy] : out.map) moved_.insert_or_assign(old, copy);
  return absl::OkStatus();
}

absl::Status LoopRewrite::Register(const Replacement& r) {
  maybe_unused_.push_back(r.old_loop->while_condition());
  maybe_unused_.push_back(r.old_loop->while_body());
  // What named the old loop names the new one (a loop copied with its
  // parent, then replaced in the copy).
  for (auto& [old, copy] : moved_) {
    if (copy == r.old_loop) copy = r.new_loop;
  }
  if (!Created(r.old_loop->parent())) {
    moved_.insert_or_assign(r.old_loop, r.new_loop);
    replacements_.push_back(r);
    return absl::OkStatus();
  }
  moved_.erase(r.old_loop);
  return Replace(r);
}

absl::StatusOr<AppendedState> LoopRewrite::CopyLoop(Instruction* loop) {
  if (absl::Status s = Fault("copying a loop"); !s.ok()) return s;
  AppendedState out;
  if (absl::Status s = CopyLoopComputations(loop, "copying loop", out);
      !s.ok()) {
    return s;
  }
  auto w = CloneInstruction(*loop, loop->name(), {loop->operand(0)});
  w->mutable_called_computations() = {out.condition, out.body};
  out.loop = Add(*loop->parent(), std::move(w), loop);
  if (absl::Status s = Register({loop, out.loop, nullptr}); !s.ok()) return s;
  return out;
}

absl::Status LoopRewrite::ReplaceAtCommit(Instruction* old, Instruction* with) {
  if (absl::Status s = Fault("replacing an instruction at commit"); !s.ok()) {
    return s;
  }
  if (old == nullptr || with == nullptr) {
    return absl::InternalError("replacing a null instruction at commit");
  }
  if (old == with || old->parent() == nullptr || Created(old->parent()) ||
      !old->shape().Compatible(with->shape())) {
    return absl::InternalError(
        absl::StrCat("replacing ", old->name(), " by ", with->name(),
                     " at commit: not an instruction of an existing "
                     "computation with the same shape"));
  }
  use_replacements_.push_back({old, with});
  return absl::OkStatus();
}

absl::Status LoopRewrite::ReplaceLoopAtCommit(Instruction* old,
                                              Instruction* with,
                                              Instruction* preds_to) {
  if (absl::Status s = Fault("replacing a loop at commit"); !s.ok()) return s;
  if (old == nullptr || with == nullptr || preds_to == nullptr ||
      old->opcode() != Opcode::kWhile || with->opcode() != Opcode::kWhile ||
      old->parent() == nullptr || Created(old->parent()) ||
      with->parent() != old->parent() ||
      old->called_computations().size() != 2 ||
      !old->shape().Compatible(with->shape())) {
    return absl::InternalError(absl::StrCat(
        "replacing loop ", old == nullptr ? "(null)" : old->name(),
        " at commit: not a while of an existing computation replaced by a "
        "while of the same shape next to it"));
  }
  return Register({old, with, nullptr, preds_to});
}

void LoopRewrite::RenameAtCommit(Computation* comp, std::string from,
                                 std::string to,
                                 const Computation* once_removed) {
  renames_.push_back({comp, std::move(from), std::move(to), once_removed});
}

void LoopRewrite::ApplyRenames() {
  if (renames_.empty()) return;
  absl::flat_hash_set<std::string> names;
  for (const auto& comp : module_->computations()) {
    for (const auto& inst : comp->instructions()) names.insert(inst->name());
  }
  for (const Rename& r : renames_) {
    if (r.once_removed != nullptr &&
        module_->ContainsComputation(r.once_removed)) {
      continue;
    }
    for (const auto& inst : r.comp->instructions()) {
      std::string_view n = inst->name();
      if (n.size() <= r.from.size() ||
          n.substr(n.size() - r.from.size()) != r.from) {
        continue;
      }
      std::string shorter = absl::StrCat(
          AsAbsl(n.substr(0, n.size() - r.from.size())), AsAbsl(r.to));
      if (names.contains(shorter)) continue;
      names.erase(inst->name());
      names.insert(shorter);
      inst->set_name(std::move(shorter));
    }
  }
  module_->InvalidateNameCache();
}

absl::StatusOr<AppendedState> LoopRewrite::AppendLoopState(
    Instruction* loop, absl::Span<Instruction* const> inits,
    const AppendLoopStateOptions& options) {
  if (absl::Status s = Fault("appending loop state"); !s.ok()) return s;
  AppendedState out;
  if (absl::Status s = CopyLoopComputations(loop, "appending loop state", out);
      !s.ok()) {
    return s;
  }
  Computation* parent = loop->parent();
  const int64_t old_size = loop->shape().tuple_size();
  Shape shape = loop->shape();
  for (const Instruction* init : inits) {
    shape.mutable_tuple_shapes().push_back(init->shape());
  }
  for (Computation* c : {out.condition, out.body}) {
    Instruction* p = c->parameter(0);
    for (const Instruction* init : inits) {
      p->mutable_shape().mutable_tuple_shapes().push_back(init->shape());
    }
  }
  // Reads of the new elements in the body, right after its parameter (or
  // before options.reads_before's copy), and passed on by the root.
  Instruction* param = out.body->parameter(0);
  const Instruction* reads_at = NextInOrder(param);
  if (options.reads_before != nullptr) {
    auto it = out.map.find(options.reads_before);
    if (it == out.map.end() || it->second->parent() != out.body) {
      return absl::InternalError(
          absl::StrCat("appending loop state to ", loop->name(), ": ",
                       options.reads_before->name(), " is not in its body"));
    }
    reads_at = it->second;
  }
  Instruction* root = out.body->root();
  for (size_t k = 0; k < inits.size(); ++k) {
    const std::string read_name =
        k < options.read_names.size() && !options.read_names[k].empty()
            ? options.read_names[k]
            : absl::StrCat(inits[k]->name(), ".carried");
    Instruction* read = out.body->AddInstruction(
        NewGetTupleElement(*module_, read_name, param,
                           old_size + static_cast<int64_t>(k)),
        reads_at);
    root->AppendOperand(read);
    root->mutable_shape().mutable_tuple_shapes().push_back(read->shape());
    out.reads.push_back(read);
  }
  // The new init tuple (in place of the old one when it is a tuple
  // instruction, else of get-tuple-elements of it, before the loop) and the
  // new while next to the old one.
  Instruction* old_init = loop->operand(0);
  std::vector<Instruction*> elements;
  const Instruction* tuple_before = loop;
  std::string tuple_name;
  const bool fresh = !options.init_name.empty();
  if (old_init->opcode() == Opcode::kTuple) {
    elements.assign(old_init->operands().begin(), old_init->operands().end());
    if (!fresh) {
      tuple_before = old_init;
      tuple_name = old_init->name();
    }
  } else {
    for (int64_t k = 0; k < old_size; ++k) {
      elements.push_back(Add(
          *parent,
          NewGetTupleElement(*module_, absl::StrCat(old_init->name(), ".", k),
                             old_init, k),
          loop));
    }
  }
  if (fresh) {
    tuple_name = module_->UniqueInstructionName(options.init_name);
  } else if (tuple_name.empty()) {
    tuple_name =
        module_->UniqueInstructionName(absl::StrCat(loop->name(), ".init"));
  }
  elements.insert(elements.end(), inits.begin(), inits.end());
  // A copy of the old tuple keeps its metadata and other attributes.
  std::unique_ptr<Instruction> tuple =
      old_init->opcode() == Opcode::kTuple && !fresh
          ? CloneInstruction(*old_init, std::move(tuple_name), elements)
          : NewTuple(std::move(tuple_name), elements);
  tuple->mutable_shape() = shape;
  Instruction* new_init = Add(*parent, std::move(tuple), tuple_before);
  auto w = CloneInstruction(*loop, loop->name(), {new_init});
  w->mutable_shape() = shape;
  w->mutable_called_computations() = {out.condition, out.body};
  out.loop = Add(*parent, std::move(w), loop);
  // Users other than get-tuple-element (and the root) read the old state
  // through a tuple of get-tuple-elements of the new loop.
  Replacement r{loop, out.loop, nullptr};
  if (parent->root() == loop || !OnlyGteUsers(loop)) {
    std::vector<Instruction*> parts;
    for (int64_t k = 0; k < old_size; ++k) {
      parts.push_back(
          Add(*parent,
              NewGetTupleElement(*module_, absl::StrCat(loop->name(), ".", k),
                                 out.loop, k),
              loop));
    }
    auto bridge = NewTuple(
        module_->UniqueInstructionName(absl::StrCat(loop->name(), ".state")),
        parts);
    r.bridge = Add(*parent, std::move(bridge), loop);
  }
  if (absl::Status s = Register(r); !s.ok()) return s;
  return out;
}

absl::Status LoopRewrite::Replace(const Replacement& r) {
  Instruction* old = r.old_loop;
  Computation* parent = old->parent();
  if (r.preds_to != nullptr) {
    // ReplaceLoopAtCommit: a loop built from scratch takes the old one's
    // place and name; the operand stays.
    MoveControlEdges(old, r.preds_to, r.new_loop);
    if (absl::Status s = old->ReplaceAllUsesWith(r.new_loop); !s.ok()) {
      return s;
    }
    std::string name = old->name();
    if (absl::Status s = parent->RemoveInstruction(old); !s.ok()) return s;
    r.new_loop->set_name(std::move(name));
    return absl::OkStatus();
  }
  MoveControlEdges(old, r.new_loop, r.new_loop);
  std::vector<Instruction*> users(old->users().begin(), old->users().end());
  for (Instruction* u : users) {
    u->ReplaceOperandsWith(
        old, u->opcode() == Opcode::kGetTupleElement || r.bridge == nullptr
                 ? r.new_loop
                 : r.bridge);
  }
  if (parent->root() == old && r.bridge != nullptr) {
    parent->set_root(r.bridge);
  }
  Instruction* old_init = old->operand(0);
  if (absl::Status s = parent->RemoveInstruction(old); !s.ok()) {
    return absl::InternalError(
        absl::StrCat("replacing loop ", old->name(), ": ", s.message()));
  }
  if (old_init->opcode() == Opcode::kTuple && old_init->users().empty() &&
      parent->root() != old_init && old_init->control_successors().empty()) {
    return parent->RemoveInstruction(old_init);
  }
  return absl::OkStatus();
}

absl::Status LoopRewrite::Commit(std::string_view what) {
  if (absl::Status s = Fault("commit"); !s.ok()) {
    Rollback();
    return absl::InternalError(absl::StrCat(AsAbsl(what), s.message()));
  }
  std::vector<const Computation*> verify(computations_.begin(),
                                         computations_.end());
  absl::flat_hash_set<const Computation*> parents;
  for (const Replacement& r : replacements_) {
    if (parents.insert(r.old_loop->parent()).second) {
      verify.push_back(r.old_loop->parent());
    }
  }
  for (const Computation* c : verify) {
    std::vector<std::string> problems = VerifyComputationAll(*c);
    if (!problems.empty()) {
      Rollback();
      return absl::InternalError(absl::StrCat(AsAbsl(what), problems.front()));
    }
  }
  // A copy whose state the caller changed replaces a loop read only by
  // get-tuple-elements.
  for (const Replacement& r : replacements_) {
    if (r.bridge == nullptr &&
        !r.new_loop->shape().Compatible(r.old_loop->shape()) &&
        (!OnlyGteUsers(r.old_loop) ||
         r.old_loop->parent()->root() == r.old_loop)) {
      const std::string loop = r.old_loop->name();
      Rollback();
      return absl::InternalError(absl::StrCat(
          AsAbsl(what), loop, " changes its state but is used whole"));
    }
  }
  for (const Replacement& r : replacements_) {
    if (absl::Status s = Replace(r); !s.ok()) return s;
  }
  // Instructions replaced at commit (ReplaceAtCommit checked the shapes),
  // their control edges moved to the replacement.
  for (const auto& [old, with] : use_replacements_) {
    MoveControlEdges(old, with, with);
    if (absl::Status s = old->ReplaceAllUsesWith(with); !s.ok()) return s;
    if (old->users().empty() && old->parent()->root() != old &&
        old->control_successors().empty()) {
      if (absl::Status s = old->parent()->RemoveInstruction(old); !s.ok()) {
        return s;
      }
    }
  }
  // The old conditions and bodies (with the loops nested in them) that
  // nothing else calls: at once (one scan of the module), else one by one.
  absl::flat_hash_set<const Computation*> unused;
  for (Computation* c : maybe_unused_) {
    if (module_->ContainsComputation(c)) unused.insert(c);
  }
  if (!module_->RemoveComputations(unused).ok()) {
    for (bool progress = true; progress;) {
      progress = false;
      for (Computation* c : maybe_unused_) {
        if (unused.contains(c) && module_->RemoveComputation(c).ok()) {
          unused.erase(c);
          progress = true;
        }
      }
    }
  }
  ApplyRenames();
  Clear();
  return absl::OkStatus();
}

void LoopRewrite::Clear() {
  instructions_.clear();
  computations_.clear();
  replacements_.clear();
  use_replacements_.clear();
  maybe_unused_.clear();
  renames_.clear();
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
  Clear();
  moved_.clear();
}

}  // namespace hloverlap
