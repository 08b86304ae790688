#include "passes/collective_hoist.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "analysis/buffer_analysis.h"
#include "analysis/call_graph.h"
#include "analysis/collective_ops.h"
#include "analysis/while_loop_analysis.h"
#include "hlo/absl_compat.h"
#include "hlo/ir_util.h"
#include "passes/loop_pass_driver.h"
#include "passes/loop_rewrite.h"
#include "passes/pass_registry.h"
#include "passes/planning.h"

namespace hloverlap {
namespace {

constexpr std::string_view kPassName = "collective-hoist";

// The loop-state element index `index` of `loop` is passed through unchanged
// by its body: root(index) == get-tuple-element(param, index).
bool PassedThrough(const Instruction* loop, int64_t index) {
  const Computation* body = loop->while_body();
  const Instruction* root = body->root();
  if (body->num_parameters() != 1 || root == nullptr ||
      root->opcode() != Opcode::kTuple || index >= root->operand_count()) {
    return false;
  }
  return IsGteOf(root->operand(index), body->parameter(0), index);
}

// Structural facts both loops must have so that a state element can be
// appended (LoopRewrite::AppendLoopState) and the loop's callers still see
// the same values. Empty string = fine, else the reason.
std::string CanAppendState(const Instruction* loop, const CallGraph& callers) {
  const Computation* body = loop->while_body();
  const Computation* cond = loop->while_condition();
  if (loop->operand_count() != 1 ||
      loop->operand(0)->opcode() != Opcode::kTuple) {
    return absl::StrCat(loop->name(), "'s operand is not a tuple instruction");
  }
  if (loop->operand(0)->user_count() != 1) {
    return absl::StrCat(loop->name(), "'s operand tuple has other users");
  }
  if (!OnlyGteUsers(loop)) {
    return absl::StrCat(loop->name(),
                        " is used by something other than get-tuple-element");
  }
  // A root loop has no users to check, but its result shape is the
  // computation's: growing the state would change the caller's view.
  if (loop->parent() != nullptr && loop->parent()->root() == loop) {
    return absl::StrCat(loop->name(), " is the root of ",
                        loop->parent()->name(),
                        " (its state is the computation's result)");
  }
  for (const Computation* c : {body, cond}) {
    if (callers.CallSites(c).size() != 1) {
      return absl::StrCat(c->name(), " is called from more than one place");
    }
    if (c->num_parameters() != 1 || c->parameter(0) == nullptr ||
        !OnlyGteUsers(c->parameter(0))) {
      return absl::StrCat(c->name(),
                          "'s parameter has users other than "
                          "get-tuple-element");
    }
  }
  if (body->root() == nullptr || body->root()->opcode() != Opcode::kTuple ||
      body->root()->user_count() != 0) {
    return absl::StrCat(body->name(), "'s root is not a plain tuple");
  }
  return "";
}

struct Candidate {
  Instruction* ag = nullptr;
  Instruction* reshape = nullptr;  // may be null
  Instruction* ds = nullptr;
  int64_t inner_index = 0;  // X's state index in the inner loop
  int64_t outer_index = 0;  // its state index in the outer loop
  Instruction* outer_value =
      nullptr;             // the stacked value before the outer loop
  int64_t gather_dim = 0;  // dimension of X (and G) that is gathered
  int64_t factor = 1;      // replica group size
};

// Stacked copies of the hoisted value: the inner body stores row i of the
// gathered stack into state element r (`dus(gte(param, r), reshape(value),
// i, ...)`) in every iteration i = 0..N-1 (JAX saves the gathered weights of
// each layer for the backward loop this way). After the loop, element r is
// the gathered stack itself, so its uses after the loop read `gathered_outer`
// instead (the copies become dead; XLA's while-loop simplifier drops them).
// Returns the number of loop results forwarded.
int64_t ForwardStackedCopies(Instruction* inner, Instruction* value,
                             Instruction* index, Instruction* gathered_outer) {
  WhileLoopInfo info = AnalyzeWhileLoop(*inner);
  const Shape& gs = gathered_outer->shape();
  // Rows 0..N-1 in order: a counter from 0 by 1 that does not wrap.
  if (!info.has_induction_variable() || !info.trip_count_proven() ||
      !info.no_wrap || !info.start->IsZero() ||
      info.step != info.CounterConstant(1) ||
      *info.trip_count != gs.dimensions(0)) {
    return 0;
  }
  Computation* body = inner->while_body();
  Instruction* param = body->parameter(0);
  Instruction* root = body->root();
  if (!IsGteOf(index, param, *info.iv_index)) return 0;
  std::vector<Instruction*> rows = {value};
  for (Instruction* u : value->users()) {
    if (u->opcode() == Opcode::kReshape) rows.push_back(u);
  }
  int64_t forwarded = 0;
  for (Instruction* row : rows) {
    const Shape& rs = row->shape();
    if (!rs.IsArray() || rs.rank() != gs.rank() || rs.dimensions(0) != 1) {
      continue;
    }
    for (Instruction* dus : row->users()) {
      if (dus->opcode() != Opcode::kDynamicUpdateSlice ||
          dus->operand_count() != gs.rank() + 2 || dus->operand(1) != row ||
          !(dus->operand(2) == index ||
            IsGteOf(dus->operand(2), param, *info.iv_index)) ||
          dus->shape() != gs || HasControlDeps(dus)) {
        continue;
      }
      bool full_rows = true;  // every other dimension is whole
      for (int64_t j = 1; j < gs.rank(); ++j) {
        full_rows &= rs.dimensions(j) == gs.dimensions(j);
      }
      Instruction* buf = dus->operand(0);
      if (!full_rows || buf->opcode() != Opcode::kGetTupleElement ||
          buf->operand(0) != param) {
        continue;
      }
      const int64_t r = buf->tuple_index();
      int64_t in_root = 0;
      for (Instruction* op : root->operands()) in_root += op == dus;
      if (r >= root->operand_count() || root->operand(r) != dus ||
          in_root != 1) {
        continue;
      }
      std::vector<Instruction*> results;
      for (Instruction* u : inner->users()) {
        if (u->opcode() == Opcode::kGetTupleElement && u->tuple_index() == r &&
            u->shape() == gs) {
          results.push_back(u);
        }
      }
      for (Instruction* res : results) {
        if (res->ReplaceAllUsesWith(gathered_outer).ok()) ++forwarded;
      }
    }
  }
  return forwarded;
}

// What a hoist built: the new loops, each old instruction of their
// conditions and bodies -> its copy, the gathered stack.
struct Hoisted {
  AppendedState outer;
  AppendedState inner;
  Instruction* gathered = nullptr;
  int64_t forwarded = 0;  // stacked copies read from the gathered stack
};

// Builds the hoist of `c.ag` out of `outer` in `txn` (the driver commits
// it): the gathered stack `gshape` before `outer`, carried by both loops (new
// conditions and bodies), the all-gather replaced by a slice of it.
absl::Status BuildHoist(LoopRewrite& txn, const Candidate& c,
                        const Shape& gshape, Instruction* inner,
                        Instruction* outer,
                        const CollectiveHoistPass::BeforeCommitHook& hook,
                        Hoisted& h) {
  Module& module = txn.module();
  auto g = std::make_unique<Instruction>(
      Opcode::kAllGather,
      module.UniqueInstructionName(absl::StrCat(c.ag->name(), ".hoisted")),
      gshape);
  g->CopyAttributesFrom(*c.ag);
  g->mutable_attrs().dimensions = DimensionVector{c.gather_dim};
  g->mutable_attrs().has_dimensions = true;
  if (g->attrs().channel_id.has_value()) {
    g->mutable_attrs().channel_id = module.NextChannelId();
  }
  g->AppendOperand(c.outer_value);
  h.gathered = txn.Add(*outer->parent(), std::move(g), outer);
  absl::StatusOr<AppendedState> o = txn.AppendLoopState(outer, {h.gathered});
  if (!o.ok()) return o.status();
  h.outer = *std::move(o);
  absl::StatusOr<AppendedState> i =
      txn.AppendLoopState(h.outer.map.at(inner), {h.outer.reads[0]});
  if (!i.ok()) return i.status();
  h.inner = *std::move(i);
  // In the new inner body: the all-gather becomes a slice of the carried
  // stack (and the reshape of it).
  Computation* body = h.inner.body;
  Instruction* ag = h.inner.map.at(c.ag);
  const Instruction* old_ds = h.inner.map.at(c.ds);
  Shape ds_shape = old_ds->shape();
  ds_shape.set_dimension(c.gather_dim,
                         ds_shape.dimensions(c.gather_dim) * c.factor);
  auto ds = std::make_unique<Instruction>(
      Opcode::kDynamicSlice,
      module.UniqueInstructionName(absl::StrCat(c.ds->name(), ".hoisted")),
      ds_shape);
  ds->CopyAttributesFrom(*old_ds);
  ds->mutable_attrs().dynamic_slice_sizes[c.gather_dim] *= c.factor;
  ds->AppendOperand(h.inner.reads[0]);
  for (int64_t j = 1; j < old_ds->operand_count(); ++j) {
    ds->AppendOperand(old_ds->operand(j));
  }
  Instruction* value = body->AddInstruction(std::move(ds), ag);
  if (c.reshape != nullptr) {
    auto rs =
        std::make_unique<Instruction>(Opcode::kReshape,
                                      module.UniqueInstructionName(absl::StrCat(
                                          c.reshape->name(), ".hoisted")),
                                      ag->shape());
    rs->CopyAttributesFrom(*c.reshape);
    rs->AppendOperand(value);
    value = body->AddInstruction(std::move(rs), ag);
  }
  if (absl::Status s = txn.Checkpoint("slicing the carried stack"); !s.ok()) {
    return s;
  }
  absl::Status s = ag->ReplaceAllUsesWith(value);
  if (s.ok()) s = body->RemoveInstruction(ag);
  if (s.ok()) s = txn.Checkpoint("replacing the all-gather");
  if (!s.ok()) return s;
  h.forwarded = ForwardStackedCopies(h.inner.loop, value, old_ds->operand(1),
                                     h.outer.reads[0]);
  if (s = txn.Checkpoint("forwarding stacked copies"); !s.ok()) return s;
  if (hook) return hook(*body);
  return absl::OkStatus();
}

// Why a candidate is left alone: the remark's name and the reason.
struct Refusal {
  std::string name;
  std::string why;
};

// The slice of a stacked value that `ag` gathers, in `c` (ag, reshape, ds,
// gather_dim, factor); a refusal when it is not one whole slice along
// dimension 0 (of X, returned in `x`).
std::optional<Refusal> MatchSlice(Instruction* ag, Candidate& c,
                                  Instruction** x) {
  c.ag = ag;
  if (ag->operand_count() != 1 || ag->dimensions().size() != 1 ||
      HasControlDeps(ag) || !ag->shape().IsArray()) {
    return Refusal{
        "UnsupportedCollective",
        "not a single-operand array all-gather without control edges"};
  }
  Instruction* op = ag->operand(0);
  if (op->opcode() == Opcode::kReshape) {
    c.reshape = op;
    op = op->operand(0);
  }
  if (op->opcode() != Opcode::kDynamicSlice) {
    return Refusal{"NotSlicedPerIteration",
                   "its operand is not dynamic-slice (or reshape of one)"};
  }
  c.ds = op;
  *x = op->operand(0);
  const Shape& xs = (*x)->shape();
  const DimensionVector& sizes = op->attrs().dynamic_slice_sizes;
  bool slice_ok = xs.IsArray() && xs.rank() >= 2 &&
                  static_cast<int64_t>(sizes.size()) == xs.rank() &&
                  sizes[0] == 1 && !xs.is_dynamic();
  for (int64_t j = 1; slice_ok && j < xs.rank(); ++j) {
    slice_ok = sizes[j] == xs.dimensions(j);
  }
  if (!slice_ok) {
    return Refusal{"NotSlicedPerIteration",
                   "the dynamic-slice does not take one whole slice along "
                   "dimension 0"};
  }
  int64_t d = ag->dimensions()[0];
  if (c.reshape != nullptr) {
    const Shape& rs = c.reshape->shape();
    bool drop0 = rs.IsArray() && rs.rank() == xs.rank() - 1;
    for (int64_t j = 0; drop0 && j < rs.rank(); ++j) {
      drop0 = rs.dimensions(j) == xs.dimensions(j + 1);
    }
    if (!drop0) {
      return Refusal{"NotSlicedPerIteration",
                     "the reshape does more than drop the sliced dimension"};
    }
    c.gather_dim = d + 1;
  } else {
    c.gather_dim = d;
  }
  const Shape& in = ag->operand(0)->shape();
  if (c.gather_dim <= 0 || c.gather_dim >= xs.rank() || d < 0 ||
      d >= in.rank() || in.dimensions(d) <= 0 ||
      ag->shape().dimensions(d) % in.dimensions(d) != 0) {
    return Refusal{"NotSlicedPerIteration", "unexpected all-gather dimension"};
  }
  c.factor = ag->shape().dimensions(d) / in.dimensions(d);
  return std::nullopt;
}

// The analysis of one all-gather of `inner`'s body (nested in `outer`, at
// `node`): the candidate, or why it is left alone.
std::optional<Refusal> FindCandidate(Instruction* ag, const LoopNode& node,
                                     const PassOptions& options,
                                     const CallGraph& callers, Candidate& c) {
  Instruction* inner = node.while_instr;
  Instruction* outer = node.parent->while_instr;
  if (inner->parent() != outer->while_body()) {
    return Refusal{
        "NotDirectlyNested",
        absl::StrCat(inner->name(), " is not directly in the body of ",
                     outer->name())};
  }
  for (const LoopNode* n : {static_cast<const LoopNode*>(node.parent), &node}) {
    LoopPolicy policy = ResolveLoopPolicy(*n, options.loop_rules);
    if (policy.pipeline.has_value() && !*policy.pipeline) {
      return Refusal{"PipeliningOff",
                     absl::StrCat("the policy of ", n->while_instr->name(),
                                  " says pipeline=off (", policy.source, ")")};
    }
  }
  Instruction* x = nullptr;
  if (std::optional<Refusal> no = MatchSlice(ag, c, &x); no.has_value()) {
    return no;
  }
  // X: an inner-loop state element passed through unchanged ...
  Computation* body = inner->while_body();
  Instruction* param =
      body->num_parameters() == 1 ? body->parameter(0) : nullptr;
  if (param == nullptr || x->opcode() != Opcode::kGetTupleElement ||
      x->operand(0) != param || !PassedThrough(inner, x->tuple_index())) {
    return Refusal{"NotLoopInvariant",
                   absl::StrCat("the sliced value is not a state element that ",
                                inner->name(), " passes through unchanged")};
  }
  c.inner_index = x->tuple_index();
  // ... whose initial value is an outer-loop invariant.
  Instruction* t1 = inner->operand(0);
  Instruction* v1 =
      t1->opcode() == Opcode::kTuple && c.inner_index < t1->operand_count()
          ? t1->operand(c.inner_index)
          : nullptr;
  Computation* obody = outer->while_body();
  Instruction* oparam =
      obody->num_parameters() == 1 ? obody->parameter(0) : nullptr;
  if (v1 == nullptr || oparam == nullptr ||
      v1->opcode() != Opcode::kGetTupleElement || v1->operand(0) != oparam ||
      !PassedThrough(outer, v1->tuple_index())) {
    return Refusal{"NotLoopInvariant",
                   absl::StrCat("the stacked value changes in ", outer->name(),
                                " (not an invariant state element)")};
  }
  c.outer_index = v1->tuple_index();
  std::string why = CanAppendState(outer, callers);
  if (why.empty()) why = CanAppendState(inner, callers);
  if (!why.empty()) return Refusal{"OpaqueLoopState", why};
  c.outer_value = outer->operand(0)->operand(c.outer_index);
  return std::nullopt;
}

}  // namespace

namespace {

// The predicted effect of hoisting `ag` (slice `ds`, `factor` devices) out
// of `outer` as one all-gather of shape `gshape`: per step the per-iteration
// gathers (outer trips x inner trips) are replaced by one, exposed before the
// loop; every inner iteration slices `factor` times more bytes.
CandidateEstimate EstimateHoist(const Instruction& ag, const Instruction& ds,
                                const Shape& gshape, int64_t factor,
                                const Instruction& inner,
                                const Instruction& outer,
                                const CostOracle* oracle) {
  CandidateEstimate e;
  e.extra_live_bytes = ExtraLiveBytes(gshape);
  std::optional<int64_t> inner_trips = AnalyzeWhileLoop(inner).trip_count;
  std::optional<int64_t> outer_trips = AnalyzeWhileLoop(outer).trip_count;
  if (oracle == nullptr || !inner_trips.has_value() ||
      !outer_trips.has_value()) {
    return e;
  }
  e.predicted = true;
  const double runs =
      static_cast<double>(*inner_trips) * static_cast<double>(*outer_trips);
  // The hoisted gather moves the stack (factor x the slices' bytes, each
  // slice once) in one collective: its time is the per-slice time scaled by
  // the inner trip count, at best.
  const double once =
      oracle->CollectiveUs(ag) * static_cast<double>(*inner_trips);
  e.hidden_us = runs * oracle->CollectiveUs(ag) - once;
  e.added_compute_us =
      runs * oracle->ComputeUs(ds) * static_cast<double>(factor - 1);
  return e;
}

// The plan's refusal of a candidate with estimate `e` (over the ledger, or
// no predicted gain), or none.
std::optional<Refusal> CheckPlan(const CandidateEstimate& e,
                                 const MemoryLedger& memory) {
  if (!memory.Allows(e.extra_live_bytes)) {
    return Refusal{std::string(kOverMemoryBudget),
                   absl::StrCat("the gathered stack needs ", e.extra_live_bytes,
                                " bytes, over ", memory.Describe())};
  }
  if (e.predicted && e.net_us() <= 0) {
    return Refusal{
        std::string(kNotProfitable),
        absl::StrCat(
            "the predicted net saving is not positive: gathering the stack "
            "once "
            "costs as much as the per-iteration gathers it replaces (",
            std::llround(e.hidden_us), " us of communication saved, ",
            std::llround(e.added_compute_us), " us of copies added)")};
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<bool> CollectiveHoistPass::Run(Module& module,
                                              PassContext& context) {
  LoopPassDriver driver(kPassName, module, context);
  for (LoopNode* node : driver.nest().InnermostFirst()) {
    if (node->parent == nullptr) continue;
    std::vector<Instruction*> ags;
    for (const auto& i : node->while_instr->while_body()->instructions()) {
      if (i->opcode() == Opcode::kAllGather) ags.push_back(i.get());
    }
    for (Instruction* ag : ags) {
      Instruction* inner = node->while_instr;
      Instruction* outer = node->parent->while_instr;
      Remark r;
      r.pass = std::string(kPassName);
      r.direction = "hoist";
      DescribeInstruction(*ag, module, r);
      r.loop = node->path;
      r.Metric("bytes_moved", CollectiveBytesMoved(*ag));
      auto missed = [&](const Refusal& no) {
        r.kind = RemarkKind::kMissed;
        r.name = no.name;
        r.message = absl::StrCat("all-gather not hoisted out of ",
                                 outer->name(), ": ", no.why);
        context.remarks.Emit(r);
      };
      Candidate c;
      if (std::optional<Refusal> no =
              FindCandidate(ag, *node, context.options, driver.callers(), c);
          no.has_value()) {
        missed(*no);
        continue;
      }
      Shape gshape = c.ds->operand(0)->shape();
      gshape.set_dimension(c.gather_dim,
                           gshape.dimensions(c.gather_dim) * c.factor);
      // Plan: the gathered stack must fit the ledger, and gathering it
      // once must cost less than the per-iteration gathers it replaces.
      CandidateEstimate e = EstimateHoist(*ag, *c.ds, gshape, c.factor, *inner,
                                          *outer, context.cost_oracle);
      if (std::optional<Refusal> no = CheckPlan(e, context.memory);
          no.has_value()) {
        AddEstimateMetrics(e, r.metrics);
        missed(*no);
        continue;
      }
      r.Metric("extra_live_bytes", e.extra_live_bytes);
      LoopRewriteRequest request;
      request.at = ag;
      request.loop = node->path;
      request.what = absl::StrCat("hoisting all-gather ", ag->name(),
                                  " out of ", outer->name());
      // Module-size guard: the gathered stack, its state reads in both
      // loops, the slice and its reshape.
      request.added_instructions = 5;
      request.avoid =
          "keep pipelining off the loop (--loop=SELECTOR:pipeline=off)";
      request.extra_live_bytes = e.extra_live_bytes;
      request.verify_what = "the hoisted loops do not verify: ";
      Hoisted h;
      absl::StatusOr<bool> done =
          driver.Rewrite(request, [&](LoopRewrite& txn) {
            return BuildHoist(txn, c, gshape, inner, outer, before_commit_, h);
          });
      if (!done.ok()) return done.status();
      if (!*done) continue;
      // The old loops, their conditions and bodies are gone: what pointed
      // into them now points to the copies.
      for (Instruction*& other : ags) other = driver.Moved(other);
      r.Metric("stacked_copies_forwarded", h.forwarded);
      r.kind = RemarkKind::kPassed;
      r.name = "HoistedAllGather";
      // The gathered stack is new: a name of the output, not a clone.
      r.format =
          "hoisted all-gather out of {outer}: the stacked value is gathered "
          "once before the loop ({gathered}) instead of once per iteration "
          "of {outer}";
      r.Loop("outer", node->parent->while_instr->name())
          .Text("gathered", h.gathered->name());
      context.remarks.Emit(r);
    }
  }
  return driver.changed();
}

// Registration (passes/pass_registry.h).
void RegisterCollectiveHoistPass(PassRegistry& registry) {
  registry.Add<CollectiveHoistPass>(
      "gather loop-invariant stacked weights once before the enclosing "
      "loop instead of once per iteration");
}

}  // namespace hloverlap
