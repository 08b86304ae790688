// The collective pipeliner's rewrites and the builders they share (see
// passes/collective_pipeliner_rewrite.h).
#include "passes/collective_pipeliner_rewrite.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
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
#include "passes/dce.h"

namespace hloverlap {
namespace pipeliner {

// ---------------------------------------------------------------------------
// Small builders.

// Produces, in a target computation, the value of loop-state element `index`.
using StateProvider = std::function<Instruction*(int64_t index)>;

// An element read through an optimization barrier of a tuple,
// get-tuple-element(opt-barrier(tuple(a0, .., an)), k), has the value of
// a_k: prefetch chains follow a_k only (remat wraps the weight slices and
// the carried activations in one barrier). nullptr for anything else.
Instruction* BarrierAlias(const Instruction* x) {
  if (x->opcode() != Opcode::kGetTupleElement || x->operand_count() != 1) {
    return nullptr;
  }
  const Instruction* barrier = x->operand(0);
  if (barrier->opcode() != Opcode::kOptBarrier ||
      barrier->operand_count() != 1) {
    return nullptr;
  }
  Instruction* tuple = barrier->operand(0);
  int64_t k = x->tuple_index();
  if (tuple->opcode() != Opcode::kTuple || k < 0 ||
      k >= tuple->operand_count()) {
    return nullptr;
  }
  return tuple->operand(k);
}

// The ancestors of `roots` inside `comp` (roots included) in post-order,
// not descending into instructions that are already in `stop`. With
// `follow_aliases`, a BarrierAlias read has its alias as only operand.
std::vector<Instruction*> Ancestors(const std::vector<Instruction*>& roots,
                                    const InstrMap& stop,
                                    const Instruction* leaf_param,
                                    bool follow_aliases) {
  // Reads of the loop parameter are leaves: never descend into the
  // parameter itself.
  auto is_leaf = [&](const Instruction* i) {
    return leaf_param != nullptr && IsGteOf(i, leaf_param);
  };
  std::vector<Instruction*> order;
  absl::flat_hash_set<const Instruction*> visited;
  std::vector<std::pair<Instruction*, size_t>> stack;
  for (Instruction* root : roots) {
    if (stop.contains(root) || !visited.insert(root).second) continue;
    stack.push_back({root, 0});
    while (!stack.empty()) {
      auto& [inst, next] = stack.back();
      Instruction* alias = follow_aliases ? BarrierAlias(inst) : nullptr;
      if (alias != nullptr) {
        if (next == 0) {
          next = 1;
          if (!stop.contains(alias) && visited.insert(alias).second) {
            stack.push_back({alias, 0});
          }
          continue;
        }
        order.push_back(inst);
        stack.pop_back();
        continue;
      }
      if (!is_leaf(inst) && next < static_cast<size_t>(inst->operand_count())) {
        Instruction* op = inst->operand(next++);
        if (!stop.contains(op) && visited.insert(op).second) {
          stack.push_back({op, 0});
        }
        continue;
      }
      order.push_back(inst);
      stack.pop_back();
    }
  }
  return order;
}

namespace {

// Clones the body instructions needed for `roots` into `target`, reading the
// loop state through `provider` (get-tuple-elements of the body parameter are
// replaced by provider(index)). `map` may be pre-seeded with replacements.
absl::Status CloneBodySubset(const Computation& body,
                             const std::vector<Instruction*>& roots,
                             Computation& target, const StateProvider& provider,
                             InstrMap& map, LoopRewrite& txn,
                             std::string_view suffix,
                             const Instruction* insert_before,
                             bool follow_aliases = false) {
  const Instruction* param = body.parameter(0);
  // Map get-tuple-elements of the parameter first (they are leaves).
  std::vector<Instruction*> order =
      Ancestors(roots, map, param, follow_aliases);
  std::vector<Instruction*> to_clone;
  to_clone.reserve(order.size());
  CloneIntoOptions options;
  options.suffix = std::string(suffix);
  options.insert_before = insert_before;
  // Clones what was collected so far (an alias needs its target cloned).
  auto flush = [&]() -> absl::Status {
    if (to_clone.empty()) return absl::OkStatus();
    absl::Status s = txn.CloneInto(to_clone, target, map, options);
    to_clone.clear();
    return s;
  };
  for (Instruction* inst : order) {
    if (follow_aliases) {
      if (Instruction* alias = BarrierAlias(inst)) {
        if (absl::Status s = flush(); !s.ok()) return s;
        auto it = map.find(alias);
        if (it == map.end()) {
          return absl::InternalError(
              absl::StrCat("no value for ", inst->name(), " (through ",
                           inst->operand(0)->name(), ")"));
        }
        map[inst] = it->second;
        continue;
      }
    }
    if (inst == param) {
      return absl::InternalError(
          absl::StrCat("the loop parameter of ", body.name(),
                       " is used other than through get-tuple-element"));
    }
    if (inst->opcode() == Opcode::kGetTupleElement &&
        inst->operand(0) == param) {
      Instruction* v = provider(inst->tuple_index());
      if (v == nullptr) {
        return absl::InternalError(absl::StrCat(
            "no value for loop state element ", inst->tuple_index()));
      }
      map[inst] = v;
      continue;
    }
    to_clone.push_back(inst);
  }
  return flush();
}

// Reads element `index` of a tuple-shaped value in `comp`: the operand when
// the value is a tuple instruction, else a new get-tuple-element.
Instruction* TupleElement(Instruction* tuple, int64_t index, Computation& comp,
                          LoopRewrite& txn, const Instruction* before) {
  if (tuple->opcode() == Opcode::kTuple && index < tuple->operand_count()) {
    return tuple->operand(index);
  }
  return txn.Add(comp,
                 NewGetTupleElement(*comp.parent(),
                                    absl::StrCat(tuple->name(), ".gte", index),
                                    tuple, index),
                 before);
}

Instruction* MakeTuple(Computation& comp, std::vector<Instruction*> elements,
                       std::string_view base, LoopRewrite& txn,
                       const Instruction* before) {
  return txn.Add(comp,
                 NewTuple(comp.parent()->UniqueInstructionName(base), elements),
                 before);
}

Instruction* MakeConstant(Computation& comp, const IntValue& value,
                          LoopRewrite& txn, const Instruction* before) {
  return txn.Add(
      comp, NewConstant(*comp.parent(), "constant", value.ToLiteral()), before);
}

// Provider reading the loop's initial state in the parent computation.
StateProvider InitProvider(LoopState& ls, LoopRewrite& txn) {
  return [&ls, &txn](int64_t index) -> Instruction* {
    if (index < 0 || index >= ls.n) return nullptr;
    return TupleElement(ls.init, index, *ls.parent, txn, ls.while_instr);
  };
}

// Builds a new while instruction in the parent from `old` with a new init,
// condition, body and trip count; its counter starts where the old one was
// in iteration `first` (known_init_step, where the old loop had one).
Instruction* BuildWhile(LoopState& ls, Instruction* init, Computation* cond,
                        Computation* body, int64_t trip_count, int64_t first,
                        LoopRewrite& txn) {
  auto w = std::make_unique<Instruction>(
      Opcode::kWhile, ls.module->UniqueInstructionName(ls.while_instr->name()),
      init->shape());
  w->CopyAttributesFrom(*ls.while_instr);
  w->mutable_called_computations() = {cond, body};
  w->AppendOperand(init);
  SetWhileTripCount(*w, trip_count, ls.info.KnownInitStepFrom(first));
  return txn.Add(*ls.parent, std::move(w), ls.while_instr);
}

// At commit (LoopRewrite::ReplaceAtCommit) the old while's uses and control
// edges go to `result`, and the old while is removed. Its condition and body
// (and the loops nested in them) are then unreachable unless shared; the pass
// removes unreachable computations once at the end (per loop it would cost
// O(module) each time).
absl::Status ReplaceLoopBy(LoopState& ls, Instruction* result,
                           LoopRewrite& txn) {
  return txn.ReplaceAtCommit(ls.while_instr, result);
}

// Ends a new body: a root tuple of `elems` (shape `state`, named after the
// old root), then its dead code (collectives included) removed.
absl::Status SetBodyRoot(LoopState& ls, Computation* body, const Shape& state,
                         absl::Span<Instruction* const> elems) {
  std::unique_ptr<Instruction> root = NewTuple(
      ls.module->UniqueInstructionName(ls.body->root()->name()), elems);
  root->mutable_shape() = state;
  body->set_root(body->AddInstruction(std::move(root)));
  return DcePass::RunOnComputation(*body, /*remove_dead_collectives=*/true)
      .status();
}

// The new loop's result, a tuple of `elems` after it, replaces the old
// loop at commit (ReplaceLoopBy).
absl::Status ReplaceLoopByResult(LoopState& ls,
                                 absl::Span<Instruction* const> elems,
                                 LoopRewrite& txn) {
  Instruction* result = MakeTuple(
      *ls.parent, std::vector<Instruction*>(elems.begin(), elems.end()),
      absl::StrCat(ls.while_instr->name(), ".result"), txn, ls.while_instr);
  return ReplaceLoopBy(ls, result, txn);
}

// ---------------------------------------------------------------------------
// The rewrites. Each builds the new loop in `txn` next to the old one and
// returns it; the old loop is replaced when LoopPassDriver commits `txn`.

// The condition of a loop prefetching `depth` iterations ahead (over
// `new_state`): it runs while the counter has not reached `last_bound`, its
// value in iteration trips - depth.
Computation* PrefetchCondition(LoopState& ls, const Shape& new_state,
                               const IntValue& last_bound, LoopRewrite& txn) {
  Module& module = *ls.module;
  const int64_t k = *ls.info.iv_index;
  Instruction* cp = nullptr;
  Computation* cond = txn.NewComputation(
      absl::StrCat(ls.cond->name(), ".pipelined"), new_state, ls.cond, &cp);
  Instruction* iv =
      cond->AddInstruction(NewGetTupleElement(module, "iv", cp, k));
  Instruction* bound = cond->AddInstruction(
      NewConstant(module, "bound", last_bound.ToLiteral()));
  Instruction* cmp = cond->AddInstruction(
      Opcode::kCompare, module.UniqueInstructionName("continue"),
      Shape::Scalar(PrimitiveType::kPred), {iv, bound});
  cmp->mutable_attrs().comparison_direction =
      ls.info.counts_down ? ComparisonDirection::kGt : ComparisonDirection::kLt;
  cond->set_root(cmp);
  return cond;
}

// The last `depth` iterations of loop `w`, which prefetched `cands`
// (carried in its state after the old elements, `depth` rows of them),
// peeled after it; returns their final state.
absl::StatusOr<Instruction*> PeelAfterPrefetchLoop(
    LoopState& ls, const std::vector<Instruction*>& cands, Instruction* w,
    int depth, LoopRewrite& txn) {
  const int64_t n = ls.n;
  const int64_t m = cands.size();
  Instruction* state = w;
  for (int64_t d = 0; d < depth; ++d) {
    Instruction* prev = state;
    StateProvider provider = [&](int64_t index) -> Instruction* {
      return TupleElement(prev, index, *ls.parent, txn, ls.while_instr);
    };
    InstrMap peel_map;
    for (int64_t j = 0; j < m; ++j) {
      peel_map[cands[j]] =
          TupleElement(w, n + d * m + j, *ls.parent, txn, ls.while_instr);
    }
    absl::Status s =
        CloneBodySubset(*ls.body, {ls.body->root()}, *ls.parent, provider,
                        peel_map, txn, absl::StrCat("peel", d), ls.while_instr);
    if (!s.ok()) {
      return s;
    }
    state = peel_map.at(ls.body->root());
  }
  return state;
}

}  // namespace

// Backward (prefetch) of `cands` (post-order) by `depth` iterations.
absl::StatusOr<Instruction*> RewriteBackward(
    LoopState& ls, const std::vector<Instruction*>& cands, int depth,
    LoopRewrite& txn) {
  Module& module = *ls.module;
  const int64_t n = ls.n;
  const int64_t m = cands.size();
  const int64_t k = *ls.info.iv_index;
  const int64_t trips = *ls.info.trip_count;
  const PrimitiveType iv_type = ls.info.iv_type;
  auto slot = [&](int64_t d, int64_t j) { return n + d * m + j; };
  // The new condition compares against the counter's value in iteration
  // trips - depth, which needs a counter that does not wrap (the caller
  // checked no_wrap).
  std::optional<IntValue> last_bound = ls.info.IvAt(trips - depth);
  std::optional<IntValue> delta = ls.info.StepTimes(depth);
  if (!ls.info.no_wrap || !last_bound.has_value() || !delta.has_value()) {
    return absl::InternalError(
        "the induction variable of a prefetched loop must not wrap");
  }

  // 1. Prologue: the collectives of iterations 0..depth-1.
  std::vector<Instruction*> init_elems;
  StateProvider init_provider = InitProvider(ls, txn);
  for (int64_t i = 0; i < n; ++i) init_elems.push_back(init_provider(i));
  std::vector<Instruction*> prefetched(depth * m);
  for (int64_t d = 0; d < depth; ++d) {
    Instruction* iv_value =
        MakeConstant(*ls.parent, *ls.info.IvAt(d), txn, ls.while_instr);
    StateProvider provider = [&](int64_t index) -> Instruction* {
      if (index == k) return iv_value;
      return init_provider(index);
    };
    InstrMap map;
    absl::Status s =
        CloneBodySubset(*ls.body, cands, *ls.parent, provider, map, txn,
                        absl::StrCat("prefetch", d), ls.while_instr,
                        /*follow_aliases=*/true);
    if (!s.ok()) {
      return s;
    }
    for (int64_t j = 0; j < m; ++j) prefetched[d * m + j] = map.at(cands[j]);
  }
  std::vector<Instruction*> new_init = init_elems;
  new_init.insert(new_init.end(), prefetched.begin(), prefetched.end());

  std::vector<Shape> shapes = ls.while_instr->shape().tuple_shapes();
  for (int64_t d = 0; d < depth; ++d) {
    for (int64_t j = 0; j < m; ++j) shapes.push_back(cands[j]->shape());
  }
  Shape new_state = Shape::Tuple(shapes);
  Instruction* init_tuple = MakeTuple(
      *ls.parent, new_init, absl::StrCat(ls.init->name(), ".pipelined"), txn,
      ls.while_instr);

  // 2. New body: uses the carried value, prefetches iteration i + depth.
  Instruction* p = nullptr;
  Computation* body = txn.NewComputation(
      absl::StrCat(ls.body->name(), ".pipelined"), new_state, ls.body, &p);
  InstrMap map;
  map[ls.body_param] = p;
  for (int64_t j = 0; j < m; ++j) {
    map[cands[j]] = body->AddInstruction(NewGetTupleElement(
        module, absl::StrCat(cands[j]->name(), ".carried"), p, slot(0, j)));
  }
  {
    std::vector<Instruction*> rest;
    for (Instruction* inst : ls.body->MakeInstructionPostOrder()) {
      if (!map.contains(inst)) rest.push_back(inst);
    }
    CloneIntoOptions options;
    options.suffix = "";
    options.fresh_channel_ids = false;
    absl::Status s = txn.CloneInto(rest, *body, map, options);
    if (!s.ok()) {
      return s;
    }
  }
  // Next prefetch: the chain again with iv + depth*step.
  std::vector<Instruction*> next(m);
  {
    Instruction* iv_cur =
        body->AddInstruction(NewGetTupleElement(module, "iv", p, k));
    Instruction* delta_constant = body->AddInstruction(
        NewConstant(module, "constant", delta->ToLiteral()));
    Instruction* iv_next = body->AddInstruction(
        Opcode::kAdd, module.UniqueInstructionName("iv.next"),
        Shape::Scalar(iv_type), {iv_cur, delta_constant});
    InstrMap next_map;
    StateProvider provider = [&](int64_t index) -> Instruction* {
      if (index == k) return iv_next;
      // Invariant elements: reuse the body's own reads.
      return body->AddInstruction(
          NewGetTupleElement(module, absl::StrCat("state.", index), p, index));
    };
    // Into the new body: its instructions die with it on a rollback.
    absl::Status s =
        CloneBodySubset(*ls.body, cands, *body, provider, next_map, txn, "next",
                        nullptr, /*follow_aliases=*/true);
    if (!s.ok()) {
      return s;
    }
    for (int64_t j = 0; j < m; ++j) next[j] = next_map.at(cands[j]);
  }
  {
    const Instruction* old_root = ls.body->root();
    std::vector<Instruction*> elems;
    for (int64_t i = 0; i < n; ++i)
      elems.push_back(map.at(old_root->operand(i)));
    for (int64_t d = 0; d + 1 < depth; ++d) {
      for (int64_t j = 0; j < m; ++j) {
        elems.push_back(body->AddInstruction(
            NewGetTupleElement(module, absl::StrCat(cands[j]->name(), ".ahead"),
                               p, slot(d + 1, j))));
      }
    }
    for (int64_t j = 0; j < m; ++j) elems.push_back(next[j]);
    std::vector<Shape> es;
    for (Instruction* e : elems) es.push_back(e->shape());
    if (absl::Status s = SetBodyRoot(ls, body, Shape::Tuple(es), elems);
        !s.ok()) {
      return s;
    }
  }

  // 3. New condition: exactly trips - depth iterations.
  Computation* cond = PrefetchCondition(ls, new_state, *last_bound, txn);

  // 4. The new loop.
  Instruction* w =
      BuildWhile(ls, init_tuple, cond, body, trips - depth, 0, txn);

  // 5. The last `depth` iterations, peeled after the loop.
  absl::StatusOr<Instruction*> state =
      PeelAfterPrefetchLoop(ls, cands, w, depth, txn);
  if (!state.ok()) return state.status();
  if (absl::Status s = ReplaceLoopBy(ls, *state, txn); !s.ok()) return s;
  return w;
}

namespace {

// A fresh computation over `new_state` holding clones of the old body's
// instructions except `cut` (the parameter maps to the new one); `map`
// receives the clones. The caller adds the root.
absl::StatusOr<Computation*> CloneBodyExcept(
    LoopState& ls, const Shape& new_state, std::string_view suffix,
    const absl::flat_hash_set<const Instruction*>& cut, InstrMap& map,
    LoopRewrite& txn, Instruction** param) {
  Computation* body = txn.NewComputation(
      absl::StrCat(ls.body->name(), AsAbsl(suffix)), new_state, ls.body, param);
  map[ls.body_param] = *param;
  std::vector<Instruction*> rest;
  for (Instruction* inst : ls.body->MakeInstructionPostOrder()) {
    if (!cut.contains(inst) && !map.contains(inst)) rest.push_back(inst);
  }
  CloneIntoOptions options;
  options.suffix = "";
  options.fresh_channel_ids = false;
  absl::Status s = txn.CloneInto(rest, *body, map, options);
  if (!s.ok()) return s;
  return body;
}

// The state of the forward and sink rewrites' new loop: the old elements,
// then per candidate the shapes it appends, from slot first[ci] on.
struct WideState {
  Shape shape;
  std::vector<int64_t> first;
  // The old elements the candidates' stores write (their buffer_index).
  absl::flat_hash_set<int64_t> stored;
};

// The state of `ls` widened by `appended(c)` for each candidate `c`.
WideState WidenState(
    const LoopState& ls, const std::vector<ForwardCandidate>& cands,
    const std::function<std::vector<Shape>(const ForwardCandidate&)>&
        appended) {
  WideState state;
  std::vector<Shape> shapes = ls.while_instr->shape().tuple_shapes();
  for (const ForwardCandidate& c : cands) {
    state.first.push_back(shapes.size());
    for (Shape& s : appended(c)) shapes.push_back(std::move(s));
    state.stored.insert(c.buffer_index);
  }
  state.shape = Shape::Tuple(shapes);
  return state;
}

// The new body of the forward and sink rewrites, before its root: clones of
// the old body's instructions but the root and the candidates' collectives,
// formatting ops and stores; `map` takes the old instructions (the
// parameter included) to their clones.
struct BodyWithoutCandidates {
  Computation* comp = nullptr;
  Instruction* param = nullptr;
  InstrMap map;

  // A new read of state element `index` in the body.
  Instruction* ReadState(int64_t index) const {
    return comp->AddInstruction(NewGetTupleElement(
        *comp->parent(), absl::StrCat("state.", index), param, index));
  }
};

// The new body over `new_state` (named with `suffix`) without the
// candidates and the root (the caller rebuilds it).
absl::StatusOr<BodyWithoutCandidates> CloneBodyWithoutCandidates(
    LoopState& ls, const Shape& new_state, std::string_view suffix,
    const std::vector<ForwardCandidate>& cands, LoopRewrite& txn) {
  absl::flat_hash_set<const Instruction*> cut = {ls.body->root()};
  for (const ForwardCandidate& c : cands) {
    cut.insert(c.collective);
    cut.insert(c.dus);
    for (Instruction* f : c.formatting) cut.insert(f);
  }
  BodyWithoutCandidates body;
  absl::StatusOr<Computation*> comp =
      CloneBodyExcept(ls, new_state, suffix, cut, body.map, txn, &body.param);
  if (!comp.ok()) return comp.status();
  body.comp = *comp;
  return body;
}

// A copy of the loop condition over `new_state` (it reads only the old
// elements).
absl::StatusOr<Computation*> CloneCondition(LoopState& ls,
                                            const Shape& new_state,
                                            std::string_view suffix,
                                            LoopRewrite& txn) {
  Instruction* cp = nullptr;
  Computation* cond = txn.NewComputation(
      absl::StrCat(ls.cond->name(), AsAbsl(suffix)), new_state, ls.cond, &cp);
  InstrMap cmap;
  cmap[ls.cond->parameter(0)] = cp;
  std::vector<Instruction*> rest;
  for (Instruction* inst : ls.cond->MakeInstructionPostOrder()) {
    if (inst != ls.cond->parameter(0)) rest.push_back(inst);
  }
  CloneIntoOptions options;
  options.suffix = "";
  options.fresh_channel_ids = false;
  absl::Status s = txn.CloneInto(rest, *cond, cmap, options);
  if (!s.ok()) return s;
  cond->set_root(cmap.at(ls.cond->root()));
  return cond;
}

// The new loop of the forward and sink rewrites: `body`, the old condition
// over `new_state` (named with `suffix`), `trips` iterations counted from
// iteration `first`.
absl::StatusOr<Instruction*> BuildLoopWithOldCondition(
    LoopState& ls, Instruction* init, const Shape& new_state,
    std::string_view suffix, Computation* body, int64_t trips, int64_t first,
    LoopRewrite& txn) {
  absl::StatusOr<Computation*> cond =
      CloneCondition(ls, new_state, suffix, txn);
  if (!cond.ok()) return cond.status();
  return BuildWhile(ls, init, *cond, body, trips, first, txn);
}

// The deferred part of candidate `c`, added to `comp` before `before`
// (recorded in `record` when not null): its collective on the raw value
// slot(raw), its formatting (invariant operands through `map`) and its store
// into `buffer` at the indices slot(idx), slot(idx + 1), ...
Instruction* DeferredStore(const ForwardCandidate& c, int64_t raw, int64_t idx,
                           Computation& comp, Instruction* buffer,
                           const std::function<Instruction*(int64_t)>& slot,
                           InstrMap& map, LoopRewrite* record,
                           const Instruction* before) {
  Module& module = *comp.parent();
  auto add = [&](std::unique_ptr<Instruction> inst) {
    return record != nullptr ? record->Add(comp, std::move(inst), before)
                             : comp.AddInstruction(std::move(inst), before);
  };
  Instruction* raw_value = slot(raw);
  auto coll = CloneInstruction(*c.collective,
                               module.UniqueInstructionName(absl::StrCat(
                                   c.collective->name(), ".pipelined")),
                               {raw_value});
  coll->mutable_attrs().channel_id =
      c.collective->attrs().channel_id.has_value()
          ? std::optional<int64_t>(module.NextChannelId())
          : std::nullopt;
  Instruction* cur = add(std::move(coll));
  const Instruction* prev_orig = c.collective;
  for (Instruction* f : c.formatting) {
    std::vector<Instruction*> ops;
    for (Instruction* op : f->operands()) {
      ops.push_back(op == prev_orig ? cur : map.at(op));
    }
    cur = add(CloneInstruction(
        *f, module.UniqueInstructionName(absl::StrCat(f->name(), ".pipelined")),
        ops));
    prev_orig = f;
  }
  std::vector<Instruction*> dus_ops = {buffer, cur};
  for (int64_t r = 2; r < c.dus->operand_count(); ++r) {
    dus_ops.push_back(slot(idx + r - 2));
  }
  return add(CloneInstruction(
      *c.dus,
      module.UniqueInstructionName(absl::StrCat(c.dus->name(), ".pipelined")),
      dus_ops));
}

}  // namespace

// Forward: the collectives of iteration i run in iteration i+1.
absl::StatusOr<Instruction*> RewriteForward(
    LoopState& ls, const std::vector<ForwardCandidate>& cands,
    LoopRewrite& txn) {
  const int64_t n = ls.n;
  const Instruction* old_root = ls.body->root();
  // Per candidate the raw operand (slot first[ci]), then the store's
  // indices.
  const WideState state = WidenState(ls, cands, [](const ForwardCandidate& c) {
    std::vector<Shape> shapes = {c.collective->operand(0)->shape()};
    for (int64_t r = 2; r < c.dus->operand_count(); ++r) {
      shapes.push_back(c.dus->operand(r)->shape());
    }
    return shapes;
  });

  // Values each iteration produces for the new state, given a map of the
  // body's instructions: the old outputs (stored buffers passed through),
  // the raw operands and the indices.
  auto iteration_outputs = [&](InstrMap& map, const StateProvider& buffer_in) {
    std::vector<Instruction*> elems;
    for (int64_t i = 0; i < n; ++i) {
      elems.push_back(state.stored.contains(i) ? buffer_in(i)
                                               : map.at(old_root->operand(i)));
    }
    for (const ForwardCandidate& c : cands) {
      elems.push_back(map.at(c.collective->operand(0)));
      for (int64_t r = 2; r < c.dus->operand_count(); ++r) {
        elems.push_back(map.at(c.dus->operand(r)));
      }
    }
    return elems;
  };
  // Roots that an iteration needs: outputs except the stored buffers, the
  // raw operands and the indices.
  std::vector<Instruction*> needed;
  for (int64_t i = 0; i < n; ++i) {
    if (!state.stored.contains(i)) needed.push_back(old_root->operand(i));
  }
  for (const ForwardCandidate& c : cands) {
    needed.push_back(c.collective->operand(0));
    for (int64_t r = 2; r < c.dus->operand_count(); ++r) {
      needed.push_back(c.dus->operand(r));
    }
  }

  // 1. Iteration 0, peeled before the loop, without the collectives.
  StateProvider init_provider = InitProvider(ls, txn);
  InstrMap peel_map;
  absl::Status s = CloneBodySubset(*ls.body, needed, *ls.parent, init_provider,
                                   peel_map, txn, "peel", ls.while_instr);
  if (!s.ok()) {
    return s;
  }
  std::vector<Instruction*> peeled = iteration_outputs(peel_map, init_provider);
  Instruction* init_tuple =
      MakeTuple(*ls.parent, peeled, absl::StrCat(ls.init->name(), ".pipelined"),
                txn, ls.while_instr);

  // 2. New body: store the previous iteration's slice, then compute this
  // iteration without its collectives (the old root is rebuilt below; the
  // candidates' collectives, formatting and stores are replaced by the
  // deferred stores).
  absl::StatusOr<BodyWithoutCandidates> b =
      CloneBodyWithoutCandidates(ls, state.shape, ".pipelined", cands, txn);
  if (!b.ok()) return b.status();
  {
    auto slot = [&](int64_t index) { return b->ReadState(index); };
    absl::flat_hash_map<int64_t, Instruction*> stores;
    for (size_t ci = 0; ci < cands.size(); ++ci) {
      const ForwardCandidate& c = cands[ci];
      Instruction* buffer = b->map.at(c.dus->operand(0));
      stores[c.buffer_index] =
          DeferredStore(c, state.first[ci], state.first[ci] + 1, *b->comp,
                        buffer, slot, b->map, nullptr, nullptr);
    }
    StateProvider buffers = [&](int64_t i) { return stores.at(i); };
    std::vector<Instruction*> elems = iteration_outputs(b->map, buffers);
    if (absl::Status s = SetBodyRoot(ls, b->comp, state.shape, elems);
        !s.ok()) {
      return s;
    }
  }

  // 3. Condition: the old one, reading the wider state. 4. The loop runs
  // the remaining trips - 1 iterations.
  absl::StatusOr<Instruction*> built =
      BuildLoopWithOldCondition(ls, init_tuple, state.shape, ".pipelined",
                                b->comp, *ls.info.trip_count - 1, 1, txn);
  if (!built.ok()) return built.status();
  Instruction* w = *built;

  // 5. Epilogue: the last iteration's collectives and stores.
  auto slot_after = [&](int64_t index) {
    return TupleElement(w, index, *ls.parent, txn, ls.while_instr);
  };
  // Invariant operands of formatting ops, recomputed after the loop.
  InstrMap epi_map;
  {
    std::vector<Instruction*> roots;
    for (const ForwardCandidate& c : cands) {
      const Instruction* prev = c.collective;
      for (Instruction* f : c.formatting) {
        for (Instruction* op : f->operands()) {
          if (op != prev) roots.push_back(op);
        }
        prev = f;
      }
    }
    s = CloneBodySubset(*ls.body, roots, *ls.parent, slot_after, epi_map, txn,
                        "epilogue", ls.while_instr);
    if (!s.ok()) {
      return s;
    }
  }
  std::vector<Instruction*> final_elems;
  absl::flat_hash_map<int64_t, Instruction*> final_stores;
  for (size_t ci = 0; ci < cands.size(); ++ci) {
    const ForwardCandidate& c = cands[ci];
    Instruction* buffer = slot_after(c.buffer_index);
    final_stores[c.buffer_index] =
        DeferredStore(c, state.first[ci], state.first[ci] + 1, *ls.parent,
                      buffer, slot_after, epi_map, &txn, ls.while_instr);
  }
  for (int64_t i = 0; i < n; ++i) {
    final_elems.push_back(state.stored.contains(i) ? final_stores.at(i)
                                                   : slot_after(i));
  }
  s = ReplaceLoopByResult(ls, final_elems, txn);
  if (!s.ok()) return s;
  return w;
}

namespace {

// `shape` with a leading dimension of size n (default layout when `shape`
// has a layout).
Shape Batched(const Shape& shape, int64_t n) {
  absl::InlinedVector<int64_t, 6> dims = {n};
  dims.insert(dims.end(), shape.dimensions().begin(), shape.dimensions().end());
  Shape out(shape.element_type(), std::move(dims));
  if (shape.has_layout()) out.SetDefaultLayout();
  return out;
}

// After a sunk loop: candidate `c`'s batched collective over its stacked
// `rows`, its formatting with a leading dimension, reshaped into the output
// buffer.
Instruction* SinkAfterLoop(LoopState& ls, const ForwardCandidate& c,
                           Instruction* rows, int64_t trips, LoopRewrite& txn) {
  Module& module = *ls.module;
  auto add = [&](std::unique_ptr<Instruction> inst) {
    return txn.Add(*ls.parent, std::move(inst), ls.while_instr);
  };
  auto coll = CloneInstruction(
      *c.collective,
      module.UniqueInstructionName(absl::StrCat(c.collective->name(), ".sunk")),
      {rows});
  coll->set_shape(Batched(c.collective->shape(), trips));
  if (c.collective->opcode() == Opcode::kReduceScatter) {
    coll->mutable_attrs().dimensions[0] += 1;
  }
  if (c.collective->attrs().channel_id.has_value()) {
    coll->mutable_attrs().channel_id = module.NextChannelId();
  }
  Instruction* cur = add(std::move(coll));
  for (const Instruction* f : c.formatting) {
    auto g = CloneInstruction(
        *f, module.UniqueInstructionName(absl::StrCat(f->name(), ".sunk")),
        {cur});
    g->set_shape(Batched(f->shape(), trips));
    if (f->opcode() == Opcode::kTranspose) {
      auto& dims = g->mutable_attrs().dimensions;
      for (auto& d : dims) d += 1;
      dims.insert(dims.begin(), 0);
    }
    cur = add(std::move(g));
  }
  const Shape& out = ls.while_instr->shape().tuple_shapes(c.buffer_index);
  auto reshape = std::make_unique<Instruction>(
      Opcode::kReshape,
      module.UniqueInstructionName(absl::StrCat(c.dus->name(), ".sunk")), out);
  reshape->AppendOperand(cur);
  return add(std::move(reshape));
}

}  // namespace

absl::StatusOr<Instruction*> RewriteSink(
    LoopState& ls, const std::vector<ForwardCandidate>& cands,
    LoopRewrite& txn) {
  Module& module = *ls.module;
  const int64_t n = ls.n;
  const int64_t trips = *ls.info.trip_count;
  // Per candidate a buffer of its operand's rows (slot first[ci]), one row
  // per iteration.
  const WideState state =
      WidenState(ls, cands, [trips](const ForwardCandidate& c) {
        return std::vector<Shape>{
            Batched(c.collective->operand(0)->shape(), trips)};
      });

  // 1. Initial state: the old one plus zero-filled row buffers.
  StateProvider init_provider = InitProvider(ls, txn);
  std::vector<Instruction*> init_elems;
  for (int64_t i = 0; i < n; ++i) init_elems.push_back(init_provider(i));
  for (size_t ci = 0; ci < cands.size(); ++ci) {
    const Shape& rows = state.shape.tuple_shapes(state.first[ci]);
    Instruction* z =
        txn.Add(*ls.parent,
                NewConstant(module, "zero",
                            Literal(Shape::Scalar(rows.element_type()))),
                ls.while_instr);
    init_elems.push_back(txn.Add(
        *ls.parent,
        NewScalarBroadcast(
            module, absl::StrCat(cands[ci].collective->name(), ".rows.init"), z,
            rows),
        ls.while_instr));
  }
  Instruction* init_tuple =
      MakeTuple(*ls.parent, init_elems, absl::StrCat(ls.init->name(), ".sunk"),
                txn, ls.while_instr);

  // 2. Body: everything but the collectives, formatting and stores; each
  // iteration's operand goes to row `index` of its buffer.
  absl::StatusOr<BodyWithoutCandidates> b =
      CloneBodyWithoutCandidates(ls, state.shape, ".sunk", cands, txn);
  if (!b.ok()) return b.status();
  Computation* body = b->comp;
  const InstrMap& map = b->map;
  std::vector<Instruction*> elems;
  for (int64_t i = 0; i < n; ++i) {
    // A sunk output is only written after the loop.
    elems.push_back(state.stored.contains(i)
                        ? b->ReadState(i)
                        : map.at(ls.body->root()->operand(i)));
  }
  for (size_t ci = 0; ci < cands.size(); ++ci) {
    const ForwardCandidate& c = cands[ci];
    Instruction* x = map.at(c.collective->operand(0));
    const Shape& rows = state.shape.tuple_shapes(state.first[ci]);
    Instruction* row = body->AddInstruction(
        Opcode::kReshape,
        module.UniqueInstructionName(absl::StrCat(x->name(), ".row")),
        Batched(x->shape(), 1), {x});
    Instruction* index = map.at(c.dus->operand(2));
    std::vector<Instruction*> ops = {b->ReadState(state.first[ci]), row, index};
    for (int64_t d = 0; d < x->shape().rank(); ++d) {
      ops.push_back(body->AddInstruction(
          NewConstant(module, "zero",
                      Literal(Shape::Scalar(index->shape().element_type())))));
    }
    elems.push_back(
        body->AddInstruction(Opcode::kDynamicUpdateSlice,
                             module.UniqueInstructionName(
                                 absl::StrCat(c.collective->name(), ".rows")),
                             rows, ops));
  }
  if (absl::Status s = SetBodyRoot(ls, body, state.shape, elems); !s.ok()) {
    return s;
  }

  // 3. Condition: the old one, reading the wider state. 4. The loop keeps
  // its trip count.
  absl::StatusOr<Instruction*> built = BuildLoopWithOldCondition(
      ls, init_tuple, state.shape, ".sunk", body, trips, 0, txn);
  if (!built.ok()) return built.status();
  Instruction* w = *built;

  // 5. After the loop: one batched collective per candidate.
  absl::flat_hash_map<int64_t, Instruction*> finals;
  for (size_t ci = 0; ci < cands.size(); ++ci) {
    const ForwardCandidate& c = cands[ci];
    Instruction* rows =
        TupleElement(w, state.first[ci], *ls.parent, txn, ls.while_instr);
    finals[c.buffer_index] = SinkAfterLoop(ls, c, rows, trips, txn);
  }
  std::vector<Instruction*> final_elems;
  for (int64_t i = 0; i < n; ++i) {
    final_elems.push_back(
        finals.contains(i)
            ? finals.at(i)
            : TupleElement(w, i, *ls.parent, txn, ls.while_instr));
  }
  if (absl::Status s = ReplaceLoopByResult(ls, final_elems, txn); !s.ok()) {
    return s;
  }
  return w;
}

}  // namespace pipeliner
}  // namespace hloverlap
