#include "passes/reduction_deferral.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "analysis/call_graph.h"
#include "analysis/collective_ops.h"
#include "analysis/while_loop_analysis.h"
#include "hlo/absl_compat.h"
#include "hlo/clone.h"
#include "hlo/ir_util.h"
#include "passes/loop_pass_driver.h"
#include "passes/loop_rewrite.h"
#include "passes/pass_registry.h"
#include "passes/planning.h"

namespace hloverlap {
namespace {

constexpr std::string_view kPassName = "defer-reduction";
// The longest reshape/multiply/... chain looked through between the
// collective and the accumulating add.
constexpr int kMaxChain = 8;

bool IsReduction(const Instruction* i) {
  return i->opcode() == Opcode::kAllReduce ||
         i->opcode() == Opcode::kReduceScatter;
}

std::string KindName(const Instruction& c) {
  return c.opcode() == Opcode::kReduceScatter ? "reduce-scatter" : "all-reduce";
}

// `to_apply` is `ROOT add(x, y)` of its two parameters.
bool IsSumComputation(const Computation* c) {
  if (c == nullptr || c->num_parameters() != 2 || c->root() == nullptr) {
    return false;
  }
  const Instruction* r = c->root();
  return r->opcode() == Opcode::kAdd && r->operand_count() == 2 &&
         r->operand(0) != r->operand(1) &&
         r->operand(0)->opcode() == Opcode::kParameter &&
         r->operand(1)->opcode() == Opcode::kParameter;
}

// A constant scalar, or a broadcast of one: the same in every iteration and
// cheap to build again after the loop.
bool IsConstantScale(const Instruction* x) {
  if (x->opcode() == Opcode::kConstant) return x->shape().IsScalar();
  return x->opcode() == Opcode::kBroadcast && x->operand_count() == 1 &&
         x->operand(0)->opcode() == Opcode::kConstant &&
         x->operand(0)->shape().IsScalar() && !HasControlDeps(x);
}

bool IsLinearLayoutOp(Opcode op) {
  return op == Opcode::kReshape || op == Opcode::kBitcast ||
         op == Opcode::kCopy || op == Opcode::kTranspose;
}

// An accumulation `acc.next = add(acc, chain(C(g)))` at state element
// `index`; `chain` lists the operations from C's user to the add's operand.
struct Candidate {
  int64_t index = 0;
  Instruction* acc = nullptr;  // get-tuple-element(param, index)
  Instruction* add = nullptr;  // the root's operand `index`
  Instruction* collective = nullptr;
  std::vector<Instruction*> chain;  // C's user first
  std::string unsupported;          // why the chain cannot be deferred
  // Stacked (scanned layers): the add reads element `inner_index` of the
  // inner loop `inner`, whose body stores C's result row by row:
  // dus(buffer, row(C(x)), index, 0, ...), row a reshape adding the
  // leading dimension.
  Instruction* inner = nullptr;
  int64_t inner_index = 0;
  Instruction* row = nullptr;
  Instruction* dus = nullptr;
  // GSPMD's form of a reduce-scatter: the stored row is
  // dynamic-slice(all-reduce(x), device offsets...).
  Instruction* slice = nullptr;
};

// Whether `x` is a constant zero scalar, or a broadcast of one.
bool IsZero(const Instruction* x) {
  if (x->opcode() == Opcode::kBroadcast && x->operand_count() == 1) {
    x = x->operand(0);
  }
  if (x->opcode() != Opcode::kConstant || !x->shape().IsScalar() ||
      x->literal() == nullptr || x->literal()->elided()) {
    return false;
  }
  for (uint8_t b : x->literal()->data()) {
    if (b != 0) return false;
  }
  return true;
}

// The stacked form (see Candidate) of an accumulation whose added value is
// `y` = get-tuple-element of an inner while loop.
std::optional<Candidate> FindStacked(Candidate c, Instruction* y) {
  Instruction* inner = y->operand(0);
  if (inner->called_computations().size() != 2) return std::nullopt;
  Computation* ib = inner->while_body();
  const Instruction* ir = ib->root();
  const int64_t r = y->tuple_index();
  if (ib->num_parameters() != 1 || ir == nullptr ||
      ir->opcode() != Opcode::kTuple || r >= ir->operand_count()) {
    return std::nullopt;
  }
  Instruction* dus = ir->operand(r);
  if (dus->opcode() != Opcode::kDynamicUpdateSlice ||
      dus->operand_count() < 3) {
    return std::nullopt;
  }
  Instruction* row = dus->operand(1);
  if (row->opcode() != Opcode::kReshape || row->operand_count() != 1) {
    return std::nullopt;
  }
  Instruction* x = row->operand(0);
  if (x->opcode() == Opcode::kDynamicSlice && x->operand_count() >= 1 &&
      x->operand(0)->opcode() == Opcode::kAllReduce) {
    c.slice = x;  // GSPMD's reduce-scatter: all-reduce, keep my part
    x = x->operand(0);
  }
  if (!IsReduction(x)) return std::nullopt;
  c.collective = x;
  c.inner = inner;
  c.inner_index = r;
  c.row = row;
  c.dus = dus;
  return c;
}

// The accumulation at element `index` of `body`'s root, if it adds a value
// derived from an all-reduce or reduce-scatter to the element itself.
std::optional<Candidate> FindAccumulation(Computation* body, int64_t index) {
  Instruction* param = body->parameter(0);
  Instruction* add = body->root()->operand(index);
  if (add->opcode() != Opcode::kAdd || add->operand_count() != 2) {
    return std::nullopt;
  }
  Candidate c;
  c.index = index;
  c.add = add;
  const bool first = IsGteOf(add->operand(0), param, index);
  const bool second = IsGteOf(add->operand(1), param, index);
  if (first == second) return std::nullopt;
  c.acc = add->operand(first ? 0 : 1);
  Instruction* x = add->operand(first ? 1 : 0);
  if (x->opcode() == Opcode::kGetTupleElement && x->operand_count() == 1 &&
      x->operand(0)->opcode() == Opcode::kWhile &&
      x->operand(0)->parent() == body) {
    return FindStacked(std::move(c), x);
  }
  std::vector<Instruction*> chain;
  for (int step = 0; step < kMaxChain && !IsReduction(x); ++step) {
    chain.push_back(x);
    if (IsLinearLayoutOp(x->opcode()) && x->operand_count() == 1) {
      x = x->operand(0);
    } else if (x->opcode() == Opcode::kMultiply && x->operand_count() == 2) {
      const bool scale0 = IsConstantScale(x->operand(0));
      const bool scale1 = IsConstantScale(x->operand(1));
      if (scale0 != scale1) {
        x = x->operand(scale0 ? 1 : 0);
      } else {
        // Diagnose a product with a value that is not a constant.
        Instruction* r = IsReduction(x->operand(0))   ? x->operand(0)
                         : IsReduction(x->operand(1)) ? x->operand(1)
                                                      : nullptr;
        if (r == nullptr) return std::nullopt;
        if (c.unsupported.empty()) {
          c.unsupported = absl::StrCat(
              "is multiplied by ",
              x->operand(r == x->operand(0) ? 1 : 0)->name(),
              ", which is not a constant, before it is accumulated");
        }
        x = r;
      }
    } else if (x->opcode() == Opcode::kConvert && x->operand_count() == 1) {
      if (c.unsupported.empty()) {
        c.unsupported = absl::StrCat(
            "is converted (", x->name(),
            ") before it is accumulated: deferring would accumulate at "
            "another precision");
      }
      x = x->operand(0);
    } else {
      return std::nullopt;
    }
  }
  if (!IsReduction(x)) return std::nullopt;
  c.collective = x;
  std::reverse(chain.begin(), chain.end());
  c.chain = std::move(chain);
  return c;
}

// Why the loop's state cannot be extended; empty when it can.
std::string LoopStateProblem(const Instruction* w, const CallGraph& callers) {
  const Computation* body = w->while_body();
  const Computation* cond = w->while_condition();
  if (w->operand_count() != 1 || !w->shape().IsTuple()) {
    return "the loop state is not a tuple";
  }
  if (w->parent()->root() == w) {
    return absl::StrCat(w->name(), " is the result of ", w->parent()->name());
  }
  for (const Instruction* u : w->users()) {
    if (u->opcode() != Opcode::kGetTupleElement) {
      return absl::StrCat("the loop's result is used whole by ", u->name());
    }
  }
  for (const Computation* comp : {body, cond}) {
    if (callers.CallSites(comp).size() != 1) {
      return absl::StrCat(comp->name(), " is called from more than one place");
    }
    if (comp->num_parameters() != 1 || comp->root() == nullptr) {
      return absl::StrCat(comp->name(), " does not have one parameter");
    }
    for (const Instruction* u : comp->parameter(0)->users()) {
      if (u->opcode() != Opcode::kGetTupleElement) {
        return absl::StrCat(comp->name(), "'s parameter is used whole by ",
                            u->name());
      }
    }
  }
  const Instruction* root = body->root();
  if (root->opcode() != Opcode::kTuple ||
      root->operand_count() != w->shape().tuple_size()) {
    return absl::StrCat(body->name(), "'s root is not a tuple");
  }
  return "";
}

// The name and sentence of a refusal; empty name: the candidate is legal.
struct Why {
  std::string name;
  std::string text;
};

// Whether `index` (a store's row) is the same on every device: computed
// from constants and the inner loop's counter (state element `iv`, which
// starts at a constant and moves by one) by instructions that read no
// device id or collective.
bool SameOnEveryDevice(const Instruction* index, const Instruction* param,
                       std::optional<int64_t> iv, int depth = 0) {
  if (depth > 16) return false;
  if (index->opcode() == Opcode::kConstant) return true;
  if (index->opcode() == Opcode::kGetTupleElement &&
      index->operand(0) == param) {
    return iv.has_value() && index->tuple_index() == *iv;
  }
  switch (index->opcode()) {
    case Opcode::kAdd:
    case Opcode::kSubtract:
    case Opcode::kMultiply:
    case Opcode::kNegate:
    case Opcode::kCompare:
    case Opcode::kSelect:
    case Opcode::kConvert:
    case Opcode::kClamp:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
      break;
    default:
      return false;
  }
  for (const Instruction* op : index->operands()) {
    if (!SameOnEveryDevice(op, param, iv, depth + 1)) return false;
  }
  return true;
}

// Whether `offset` (a dynamic-slice index of GSPMD's reduce-scatter) is
// computed from the device's id and constants only, so that it can be
// computed again after the loop.
bool IsDeviceOffset(const Instruction* offset, int depth = 0) {
  if (depth > 8 || !offset->shape().IsScalar() || HasControlDeps(offset)) {
    return false;
  }
  switch (offset->opcode()) {
    case Opcode::kConstant:
    case Opcode::kPartitionId:
    case Opcode::kReplicaId:
      return true;
    case Opcode::kConvert:
    case Opcode::kMultiply:
    case Opcode::kAdd:
    case Opcode::kSubtract:
      break;
    default:
      return false;
  }
  for (const Instruction* op : offset->operands()) {
    if (!IsDeviceOffset(op, depth + 1)) return false;
  }
  return true;
}

// The checks of the stacked form's inner loop (see Candidate).
Why CheckStacked(const Candidate& c, const CallGraph& callers) {
  const std::string kind = KindName(*c.collective);
  const Instruction* inner = c.inner;
  const Computation* ib = inner->while_body();
  const Instruction* param = ib->parameter(0);
  const int64_t r = c.inner_index;
  if (std::string why = LoopStateProblem(inner, callers); !why.empty()) {
    return {"OpaqueLoopState", absl::StrCat(inner->name(), ": ", why)};
  }
  const Instruction* dus = c.dus;
  const Instruction* buffer = dus->operand(0);
  int64_t in_root = 0;
  for (const Instruction* op : ib->root()->operands()) in_root += op == dus;
  if (dus->user_count() != 1 || in_root != 1 || HasControlDeps(dus)) {
    return {"ReducedValueUsedInLoop",
            absl::StrCat("the rows ", dus->name(), " stores are also read by ",
                         inner->name(), "'s iteration")};
  }
  if (!IsGteOf(buffer, param, r)) {
    return {"UnsupportedAccumulation",
            absl::StrCat(inner->name(), " stores the ", kind,
                         "'s rows into a value other than its own output")};
  }
  for (const Instruction* u : param->users()) {
    if (u->tuple_index() == r &&
        (u->user_count() != 1 || u->users()[0] != dus)) {
      return {"ReducedValueUsedInLoop",
              absl::StrCat("the stacked ", kind, " results are also read by ",
                           inner->name(), "'s iteration")};
    }
  }
  for (const Instruction* u : inner->while_condition()->parameter(0)->users()) {
    if (u->tuple_index() == r && u->user_count() > 0) {
      return {"ReducedValueUsedInLoop",
              absl::StrCat(inner->name(), "'s condition reads the stacked ",
                           kind, " results")};
    }
  }
  for (const Instruction* u : inner->users()) {
    if (u->tuple_index() == r &&
        (u->user_count() != 1 || u->users()[0] != c.add)) {
      return {"ReducedValueUsedInLoop",
              absl::StrCat("the stacked ", kind, " results of ", inner->name(),
                           " are also used other than by the accumulation")};
    }
  }
  const Instruction* init = inner->operand(0);
  if (init->opcode() != Opcode::kTuple || init->user_count() != 1 ||
      !IsZero(init->operand(r))) {
    return {"UnsupportedAccumulation",
            absl::StrCat("the rows ", inner->name(),
                         " does not write would keep an initial value that is "
                         "not a zero constant")};
  }
  const WhileLoopInfo info = AnalyzeWhileLoop(*inner);
  const std::optional<int64_t> iv =
      info.start.has_value() && info.step.has_value() ? info.iv_index
                                                      : std::nullopt;
  for (int64_t k = 2; k < dus->operand_count(); ++k) {
    if (!SameOnEveryDevice(dus->operand(k), param, iv)) {
      return {"UnsupportedAccumulation",
              absl::StrCat("the row ", dus->name(),
                           " stores into may differ between devices")};
    }
  }
  // row = reshape adding a leading 1 to C's result.
  const Shape& rs = (c.slice != nullptr ? c.slice : c.collective)->shape();
  if (c.slice != nullptr) {
    bool offsets = c.slice->operand_count() == rs.rank() + 1 &&
                   c.slice->shape().rank() == c.collective->shape().rank();
    for (int64_t k = 1; offsets && k < c.slice->operand_count(); ++k) {
      offsets = IsDeviceOffset(c.slice->operand(k));
    }
    if (!offsets) {
      return {"UnsupportedAccumulation",
              absl::StrCat("the part ", c.slice->name(),
                           " keeps of the all-reduce is not chosen by the "
                           "device's id alone")};
    }
  }
  const Shape& row = c.row->shape();
  bool leading = row.rank() == rs.rank() + 1 && row.dimensions(0) == 1 &&
                 buffer->shape().rank() == row.rank();
  for (int64_t k = 0; leading && k < rs.rank(); ++k) {
    leading = row.dimensions(k + 1) == rs.dimensions(k) &&
              buffer->shape().dimensions(k + 1) == rs.dimensions(k);
  }
  if (!leading || rs.is_dynamic()) {
    return {"UnsupportedAccumulation",
            absl::StrCat(c.row->name(),
                         " does more than add the leading "
                         "dimension of the stored row")};
  }
  return {};
}

Why CheckCandidate(const Candidate& c, const Instruction* w,
                   const CallGraph& callers) {
  const Instruction& coll = *c.collective;
  const std::string kind = KindName(coll);
  if (!c.unsupported.empty()) {
    return {"UnsupportedAccumulation",
            absl::StrCat("the ", kind, "'s result ", c.unsupported)};
  }
  if (coll.operand_count() != 1 || !coll.shape().IsArray() ||
      !coll.operand(0)->shape().IsArray()) {
    return {"CombinedCollective",
            absl::StrCat("the ", kind, " reduces several values at once")};
  }
  if (!IsSumComputation(coll.to_apply())) {
    return {"NotSumReduction",
            absl::StrCat("the ", kind,
                         " does not reduce with an add: its sum could not be "
                         "taken once for all iterations")};
  }
  if (coll.opcode() == Opcode::kReduceScatter &&
      coll.dimensions().size() != 1) {
    return {"UnsupportedAccumulation",
            absl::StrCat("the ", kind, " has no single scatter dimension")};
  }
  // From the collective to the value the accumulation adds.
  std::vector<const Instruction*> path = {&coll};
  if (c.inner != nullptr) {
    if (c.slice != nullptr) path.push_back(c.slice);
    path.push_back(c.row);
  } else {
    path.insert(path.end(), c.chain.begin(), c.chain.end());
  }
  for (const Instruction* i : path) {
    if (HasControlDeps(i)) {
      return {"ControlDependencies",
              absl::StrCat(i->name(), " has control dependencies")};
    }
  }
  path.push_back(c.inner != nullptr ? c.dus : c.add);
  for (size_t k = 0; k + 1 < path.size(); ++k) {
    if (path[k]->user_count() != 1) {
      return {"ReducedValueUsedInLoop",
              absl::StrCat("the ", kind,
                           "'s result is also used inside the iteration (by ",
                           path[k]->users()[0] == path[k + 1]
                               ? path[k]->users()[1]->name()
                               : path[k]->users()[0]->name(),
                           "), not only accumulated")};
    }
  }
  if (HasControlDeps(c.add)) {
    return {"ControlDependencies",
            absl::StrCat(c.add->name(), " has control dependencies")};
  }
  if (c.inner != nullptr) {
    if (Why why = CheckStacked(c, callers); !why.name.empty()) return why;
  }
  const Computation* body = w->while_body();
  const Instruction* root = body->root();
  int64_t in_root = 0;
  for (const Instruction* op : root->operands()) in_root += op == c.add;
  if (c.add->user_count() != 1 || in_root != 1) {
    return {"AccumulatorUsedInLoop",
            absl::StrCat("the accumulated value ", c.add->name(),
                         " is also read inside the iteration")};
  }
  for (const Instruction* u : body->parameter(0)->users()) {
    if (u->tuple_index() != c.index) continue;
    for (const Instruction* reader : u->users()) {
      if (reader != c.add) {
        return {"AccumulatorUsedInLoop",
                absl::StrCat("the accumulator is also read by ", reader->name(),
                             " inside the iteration: it would see only the "
                             "initial value")};
      }
    }
  }
  for (const Instruction* u : w->while_condition()->parameter(0)->users()) {
    if (u->tuple_index() == c.index && u->user_count() > 0) {
      return {"AccumulatorUsedInLoop",
              "the loop condition reads the accumulator"};
    }
  }
  return {};
}

// The shape of the local accumulator: the collective's operand, or for the
// stacked form the inner loop's stack with full-size rows.
Shape FullShape(const Candidate& c) {
  if (c.inner == nullptr) return c.collective->operand(0)->shape();
  Shape full = c.dus->operand(0)->shape();
  const Shape& x = c.collective->operand(0)->shape();
  for (int64_t k = 0; k < x.rank() && k + 1 < full.rank(); ++k) {
    full.set_dimension(k + 1, x.dimensions(k));
  }
  return full;
}

// The predicted effect of deferring `c` out of a loop of `trips` iterations
// (the stacked form: each runs `inner_trips` collectives, one per row):
// (trips - 1) x inner_trips collectives fewer, at best (the one after the
// loop moves the rows of all of them); the accumulating add works on the
// full size (for a reduce-scatter, `factor` times the accumulator) and one
// add more runs after the loop. The accumulator is FullShape; the stacked
// form's inner loop also stores full-size rows.
CandidateEstimate Estimate(const Candidate& c, int64_t trips,
                           int64_t inner_trips, const CostOracle* oracle) {
  CandidateEstimate e;
  const Instruction& coll = *c.collective;
  const Shape full = FullShape(c);
  const Shape& acc = c.acc->shape();
  e.extra_live_bytes = ExtraLiveBytes(full);
  if (c.inner != nullptr) {
    e.extra_live_bytes +=
        std::max<int64_t>(0, ExtraLiveBytes(full) - ExtraLiveBytes(acc));
  }
  if (oracle == nullptr) return e;
  e.predicted = true;
  const double factor =
      static_cast<double>(full.ByteSize()) /
      static_cast<double>(std::max<int64_t>(1, acc.ByteSize()));
  const double t = static_cast<double>(trips);
  e.hidden_us =
      (t - 1) * static_cast<double>(inner_trips) * oracle->CollectiveUs(coll);
  e.added_compute_us =
      oracle->ComputeUs(*c.add) * (t * std::max(0.0, factor - 1) + 1);
  return e;
}

// broadcast(constant(0)) of `shape` (a scalar: the constant), added to `comp`
// before `before` and recorded in `txn`.
Instruction* AddZeros(LoopRewrite& txn, Computation& comp, const Shape& shape,
                      const std::string& name, const Instruction* before) {
  Module& m = txn.module();
  Instruction* z = txn.Add(
      comp,
      NewConstant(m, "zero", Literal(Shape::Scalar(shape.element_type()))),
      before);
  if (shape.IsScalar()) return z;
  return txn.Add(comp, NewScalarBroadcast(m, name, z, shape), before);
}

// Old instruction -> its copy, for the instructions of the loops a deferral
// copied (and the loops themselves).
using Moved = absl::flat_hash_map<const Instruction*, Instruction*>;

// The copy of `i` (null when it was not copied).
Instruction* CopyOf(const Moved& moved, const Instruction* i) {
  auto it = moved.find(i);
  return it == moved.end() ? nullptr : it->second;
}

// The stacked form's inner loop (its copy `in`) stores the collective's
// operand instead of its result: its state element `inner_index` becomes
// `full` (zero rows to start with, full-size rows stored). The copies of
// the collective, its slice and the old row are left unused (Rewrite
// removes them).
absl::Status RewriteInner(LoopRewrite& txn, const Candidate& c,
                          const AppendedState& in, const Moved& moved,
                          const Shape& full) {
  Instruction* coll = CopyOf(moved, c.collective);
  Instruction* dus = CopyOf(moved, c.dus);
  if (coll == nullptr || dus == nullptr) {
    return absl::InternalError(absl::StrCat(c.collective->name(), " is not in ",
                                            c.inner->while_body()->name()));
  }
  Instruction* inner = in.loop;
  Computation* ib = in.body;
  Computation* ic = in.condition;
  const int64_t r = c.inner_index;
  Instruction* init = inner->operand(0);
  for (Instruction* i :
       {inner, ib->parameter(0), ic->parameter(0), ib->root(), init}) {
    i->mutable_shape().mutable_tuple_shapes()[r] = full;
  }
  for (Instruction* p : {ib->parameter(0), ic->parameter(0), inner}) {
    for (Instruction* u : p->users()) {
      if (u->tuple_index() == r) u->set_shape(full);
    }
  }
  init->ReplaceOperandWith(r,
                           AddZeros(txn, *inner->parent(), full,
                                    c.collective->name() + ".rows.init", init));
  Instruction* x = coll->operand(0);
  Shape row = c.row->shape();
  for (int64_t k = 0; k < x->shape().rank(); ++k) {
    row.set_dimension(k + 1, x->shape().dimensions(k));
  }
  auto nr = CloneInstruction(
      *c.row, txn.module().UniqueInstructionName(c.collective->name() + ".row"),
      {x});
  nr->set_shape(row);
  dus->ReplaceOperandWith(1, ib->AddInstruction(std::move(nr), dus));
  dus->set_shape(full);
  return absl::OkStatus();
}

// `c` with its instructions in the copies (those not copied stay).
void Remap(Candidate& c, const Moved& moved) {
  for (Instruction** i :
       {&c.acc, &c.add, &c.collective, &c.inner, &c.row, &c.dus, &c.slice}) {
    if (Instruction* copy = CopyOf(moved, *i)) *i = copy;
  }
  for (Instruction*& link : c.chain) {
    if (Instruction* copy = CopyOf(moved, link)) link = copy;
  }
}

// What a deferral built.
struct Deferred {
  Instruction* reduced = nullptr;  // the collective after the loop
  Moved moved;
};

// Step 4 of BuildDeferral, after the loop `w` (replaced by `nw`, whose
// state element `n` is the local accumulator of shape `full`): one
// collective (returned in `reduced`), the chain and the add of the initial
// value, whose result is returned.
Instruction* ReduceAfterLoop(LoopRewrite& txn, Instruction* w, Instruction* nw,
                             const Candidate& c, int64_t n, const Shape& full,
                             Instruction** reduced) {
  Computation* parent = w->parent();
  Module& m = txn.module();
  const std::string base = c.collective->name();
  const Instruction* after = NextInOrder(w);
  auto add_after = [&](std::unique_ptr<Instruction> i) {
    return txn.Add(*parent, std::move(i), after);
  };
  Instruction* acc0 =
      add_after(NewGetTupleElement(m, base + ".acc0", nw, c.index));
  Instruction* local =
      add_after(NewGetTupleElement(m, base + ".acc.final", nw, n));
  auto coll = CloneInstruction(
      *c.collective, m.UniqueInstructionName(base + ".deferred"), {local});
  if (c.inner != nullptr) {
    // One collective for all rows: the stack's dimension 0 leads.
    coll->set_shape(c.slice != nullptr ? full : c.acc->shape());
    if (coll->opcode() == Opcode::kReduceScatter) {
      coll->mutable_attrs().dimensions[0] += 1;
    }
  }
  if (coll->attrs().channel_id.has_value()) {
    coll->mutable_attrs().channel_id = m.NextChannelId();
  }
  *reduced = add_after(std::move(coll));
  Instruction* cur = *reduced;
  if (c.slice != nullptr) {
    // Each device keeps its part of every row: the same offsets, computed
    // again here, after a 0 for the stack's dimension.
    absl::flat_hash_map<const Instruction*, Instruction*> copies;
    std::function<Instruction*(Instruction*)> copy =
        [&](Instruction* x) -> Instruction* {
      if (auto it = copies.find(x); it != copies.end()) return it->second;
      std::vector<Instruction*> ops;
      for (Instruction* op : x->operands()) ops.push_back(copy(op));
      Instruction* y = add_after(CloneInstruction(
          *x, m.UniqueInstructionName(x->name() + ".deferred"), ops));
      copies[x] = y;
      return y;
    };
    std::vector<Instruction*> ops = {cur};
    ops.push_back(
        AddZeros(txn, *parent,
                 Shape::Scalar(c.slice->operand(1)->shape().element_type()),
                 base + ".row0", after));
    for (int64_t k = 1; k < c.slice->operand_count(); ++k) {
      ops.push_back(copy(c.slice->operand(k)));
    }
    auto part = CloneInstruction(
        *c.slice, m.UniqueInstructionName(c.slice->name() + ".deferred"), ops);
    part->set_shape(c.acc->shape());
    DimensionVector sizes = {c.acc->shape().dimensions(0)};
    for (int64_t s : c.slice->attrs().dynamic_slice_sizes) sizes.push_back(s);
    part->mutable_attrs().dynamic_slice_sizes = sizes;
    cur = add_after(std::move(part));
  }
  for (const Instruction* link : c.chain) {
    std::vector<Instruction*> ops;
    for (Instruction* op : link->operands()) {
      if (link->opcode() != Opcode::kMultiply || !IsConstantScale(op)) {
        ops.push_back(cur);
        continue;
      }
      Instruction* scale = op;
      if (op->opcode() == Opcode::kBroadcast) {
        Instruction* k = add_after(CloneInstruction(
            *op->operand(0),
            m.UniqueInstructionName(op->operand(0)->name() + ".deferred"), {}));
        scale = add_after(CloneInstruction(
            *op, m.UniqueInstructionName(op->name() + ".deferred"), {k}));
      } else {
        scale = add_after(CloneInstruction(
            *op, m.UniqueInstructionName(op->name() + ".deferred"), {}));
      }
      ops.push_back(scale);
    }
    cur = add_after(CloneInstruction(
        *link, m.UniqueInstructionName(link->name() + ".deferred"), ops));
  }
  const bool acc_first = c.add->operand(0) == c.acc;
  Instruction* result = add_after(CloneInstruction(
      *c.add, m.UniqueInstructionName(c.add->name() + ".deferred"),
      acc_first ? std::vector<Instruction*>{acc0, cur}
                : std::vector<Instruction*>{cur, acc0}));
  return result;
}

// Builds the deferral of `c` out of `w` in `txn` (the driver commits it,
// passes/loop_pass_driver.h): new copies of `w`'s condition and body (and
// of the stacked form's inner loop) carry the local accumulator; after the
// loop one collective, the chain and the add; the reads of the accumulator
// go to that add at commit. Every check has passed, so only the
// verification at commit (or `before_commit`, a test hook) fails; then the
// module is left as it was.
absl::Status BuildDeferral(LoopRewrite& txn, Instruction* w, const Candidate& c,
                           const LoopRewriteHook& before_commit, Deferred& d) {
  Computation* parent = w->parent();
  const Shape full = FullShape(c);
  const int64_t n = w->shape().tuple_size();
  const std::string base = c.collective->name();

  // 1. The loop state grows by the local accumulator, which starts at zero;
  // the body reads it right before the accumulating add.
  Instruction* zb = AddZeros(txn, *parent, full, base + ".acc.init", w);
  AppendLoopStateOptions grow;
  grow.init_name = w->operand(0)->name() + ".deferred";
  grow.read_names = {base + ".acc"};
  grow.reads_before = c.add;
  absl::StatusOr<AppendedState> o = txn.AppendLoopState(w, {zb}, grow);
  if (!o.ok()) return o.status();
  d.moved = o->map;
  d.moved[w] = o->loop;
  if (c.inner != nullptr) {
    Instruction* inner = CopyOf(d.moved, c.inner);
    if (inner == nullptr) {
      return absl::InternalError(absl::StrCat(c.inner->name(), " is not in ",
                                              w->while_body()->name()));
    }
    absl::StatusOr<AppendedState> in = txn.CopyLoop(inner);
    if (!in.ok()) return in.status();
    for (const auto& [old, copy] : in->map) d.moved[old] = copy;
    d.moved[c.inner] = in->loop;
    if (absl::Status s = RewriteInner(txn, c, *in, d.moved, full); !s.ok()) {
      return s;
    }
    if (absl::Status s = txn.Checkpoint("widening the inner loop's rows");
        !s.ok()) {
      return s;
    }
  }
  Instruction* nw = o->loop;
  Computation* body = o->body;
  Instruction* root = body->root();
  Instruction* add = CopyOf(d.moved, c.add);
  Instruction* acc = CopyOf(d.moved, c.acc);
  // What the iteration adds locally: the collective's operand, or the
  // stacked form's inner loop result (full-size rows after RewriteInner).
  Instruction* g =
      CopyOf(d.moved, c.inner != nullptr
                          ? c.add->operand(c.add->operand(0) == c.acc ? 1 : 0)
                          : c.collective->operand(0));
  if (add == nullptr || acc == nullptr || g == nullptr) {
    return absl::InternalError(
        absl::StrCat(c.add->name(), " is not in ", w->while_body()->name()));
  }

  // 2. The body adds the unreduced value to the accumulator and passes the
  // old one on unchanged (the collective and its chain are removed at the
  // end).
  Module& m = txn.module();
  auto sum = std::make_unique<Instruction>(
      Opcode::kAdd, m.UniqueInstructionName(base + ".acc.next"), full);
  sum->CopyAttributesFrom(*add);
  sum->AppendOperand(o->reads[0]);
  sum->AppendOperand(g);
  Instruction* next = body->AddInstruction(std::move(sum), add);
  root->ReplaceOperandWith(c.index, acc);
  root->ReplaceOperandWith(n, next);
  if (absl::Status s = txn.Checkpoint("accumulating locally"); !s.ok()) {
    return s;
  }

  // 3. After the loop: reduce once, apply the chain, add the initial value.
  Instruction* result = ReduceAfterLoop(txn, w, nw, c, n, full, &d.reduced);
  // The loop's reads of the accumulator read the result instead.
  for (Instruction* u : w->users()) {
    if (!IsGteOf(u, w, c.index)) continue;
    if (absl::Status s = txn.ReplaceAtCommit(u, result); !s.ok()) return s;
  }
  // The copies of the old accumulation (read above to build the one after
  // the loop) are unused now.
  std::vector<const Instruction*> dead = {c.add};
  dead.insert(dead.end(), c.chain.rbegin(), c.chain.rend());
  for (const Instruction* i : {c.row, c.slice, c.collective}) {
    if (i != nullptr) dead.push_back(i);
  }
  for (const Instruction* i : dead) {
    Instruction* copy = CopyOf(d.moved, i);
    if (copy == nullptr) {
      return absl::InternalError(absl::StrCat(i->name(), " was not copied"));
    }
    if (absl::Status s = copy->parent()->RemoveInstruction(copy); !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = txn.Checkpoint("removing the old accumulation");
      !s.ok()) {
    return s;
  }
  if (before_commit) return before_commit(*body);
  return absl::OkStatus();
}

// What deferring a candidate saves and costs, for its remark.
struct Saving {
  CandidateEstimate e;
  std::string saves;  // the communication saved, in words
  std::string costs;  // the memory it costs, in words
};

// Why a candidate is left alone: its remark's name, reason and suggestion.
struct Refusal {
  std::string name;
  std::string why;
  std::string suggestion;
};

// The legality checks of candidate `c` of loop `w` (`info`, and the
// problem of its state, LoopStateProblem) that need the trip counts, and
// what deferring it would save and cost (in `out`); the trip count goes to
// `r`'s metrics once known.
std::optional<Refusal> SizeUp(const Candidate& c, Instruction* w,
                              const WhileLoopInfo& info,
                              const std::string& state_problem,
                              const CallGraph& callers,
                              const CostOracle* oracle, Remark& r,
                              Saving& out) {
  const std::string kind = KindName(*c.collective);
  if (!info.trip_count.has_value()) {
    return Refusal{
        "UnknownTripCount",
        absl::StrCat(
            "the loop's trip count is unknown (",
            info.missing.empty() ? "no induction variable" : info.missing, ")"),
        "write the loop as a fori_loop/scan with static bounds"};
  }
  const int64_t trips = *info.trip_count;
  r.Metric("trip_count", trips);
  if (trips < 2) {
    return Refusal{
        trips == 0 ? "LoopNeverRuns" : "SingleIteration",
        absl::StrCat("the loop runs ", trips, " time(s): there is no second ",
                     kind, " to save"),
        ""};
  }
  if (!state_problem.empty()) {
    return Refusal{"OpaqueLoopState", state_problem, ""};
  }
  if (Why why = CheckCandidate(c, w, callers); !why.name.empty()) {
    return Refusal{why.name, why.text, ""};
  }
  int64_t inner_trips = 1;
  if (c.inner != nullptr) {
    const WhileLoopInfo inner_info = AnalyzeWhileLoop(*c.inner);
    if (!inner_info.trip_count.has_value()) {
      return Refusal{
          "UnknownTripCount",
          absl::StrCat("the trip count of ", c.inner->name(),
                       ", which stores the ", kind, "'s rows, is unknown"),
          ""};
    }
    inner_trips = std::max<int64_t>(1, *inner_info.trip_count);
  }
  const int64_t runs = trips * inner_trips;
  const std::string counts =
      c.inner == nullptr
          ? absl::StrCat(trips - 1, " of its ", trips, " ", kind, "s")
          : absl::StrCat("its ", runs, " ", kind, "s, one per row of ",
                         c.inner->name(),
                         " and iteration, become one of the whole stack");
  out.e = Estimate(c, trips, inner_trips, oracle);
  const CandidateEstimate& e = out.e;
  const int64_t saved_ns =
      e.predicted ? std::llround(std::clamp(e.hidden_us, 0.0, 1e12) * 1e3) : 0;
  out.saves =
      e.predicted
          ? absl::StrCat(
                RenderRemarkArg({"", RemarkArg::Type::kTimeNs, "", saved_ns}),
                " of communication per run of the loop (", counts, ")")
          : counts;
  out.costs = absl::StrCat(
      c.inner == nullptr ? "a full-size accumulator of "
                         : "a full-size accumulator and full-size stored "
                           "rows of ",
      RenderRemarkArg({"", RemarkArg::Type::kBytes, "", e.extra_live_bytes}),
      " per device, live for the whole loop");
  return std::nullopt;
}

}  // namespace

absl::StatusOr<bool> ReductionDeferralPass::Run(Module& module,
                                                PassContext& context) {
  LoopPassDriver driver(kPassName, module, context);
  for (const LoopNode* node : driver.nest().InnermostFirst()) {
    Instruction* w = node->while_instr;
    if (w->called_computations().size() != 2) continue;
    Computation* body = w->while_body();
    if (body->num_parameters() != 1 || body->root() == nullptr ||
        body->root()->opcode() != Opcode::kTuple || !w->shape().IsTuple() ||
        body->root()->operand_count() != w->shape().tuple_size()) {
      continue;
    }
    std::vector<Candidate> cands;
    for (int64_t i = 0; i < body->root()->operand_count(); ++i) {
      if (std::optional<Candidate> c = FindAccumulation(body, i)) {
        cands.push_back(std::move(*c));
      }
    }
    if (cands.empty()) continue;
    const WhileLoopInfo info = AnalyzeWhileLoop(*w);
    EmitTripCountWarning(info, kPassName, node->path, context.remarks);
    const LoopPolicy policy =
        ResolveLoopPolicy(*node, context.options.loop_rules);
    const bool enabled =
        policy.defer_reduce.value_or(context.options.defer_reduction);
    const std::string state_problem = LoopStateProblem(w, driver.callers());
    for (size_t ci = 0; ci < cands.size(); ++ci) {
      const Candidate& c = cands[ci];
      const Instruction& coll = *c.collective;
      const std::string kind = KindName(coll);
      Remark r;
      r.pass = std::string(kPassName);
      r.direction = "defer";
      DescribeInstruction(coll, module, r);
      const LoopNode* home =
          c.inner != nullptr ? driver.nest().Find(c.inner) : nullptr;
      r.loop = home != nullptr ? home->path : node->path;
      r.Metric("bytes_moved", CollectiveBytesMoved(coll));
      auto missed = [&](std::string name, std::string why,
                        std::string suggestion = "") {
        r.kind = RemarkKind::kMissed;
        r.name = std::move(name);
        r.message = absl::StrCat(kind, " not deferred out of the loop: ", why);
        r.suggestion = std::move(suggestion);
        context.remarks.Emit(r);
      };
      Saving saving;
      if (std::optional<Refusal> no =
              SizeUp(c, w, info, state_problem, driver.callers(),
                     context.cost_oracle, r, saving);
          no.has_value()) {
        missed(no->name, no->why, no->suggestion);
        continue;
      }
      const CandidateEstimate& e = saving.e;
      const std::string& saves = saving.saves;
      const std::string& costs = saving.costs;
      if (e.predicted && e.net_us() <= 0) {
        AddEstimateMetrics(e, r.metrics);
        missed(
            std::string(kNotProfitable),
            absl::StrCat("the predicted net saving is not positive: it would "
                         "save ",
                         saves, " but add ", std::llround(e.added_compute_us),
                         " us of adds on the full-size accumulator"));
        continue;
      }
      if (!enabled) {
        AddEstimateMetrics(e, r.metrics);
        missed("ReductionDeferralNotEnabled",
               absl::StrCat("it can be accumulated locally and reduced once "
                            "after the loop, saving ",
                            saves, "; it costs ", costs,
                            ", and the summation order changes (floating-"
                            "point results may differ in the last bits)",
                            context.memory.Allows(e.extra_live_bytes)
                                ? ""
                                : absl::StrCat("; it does not fit ",
                                               context.memory.Describe())),
               absl::StrCat("enable it with --loop=", w->name(),
                            ":defer-reduce=on (or for every loop with "
                            "--passes=...,defer-reduction{enable=true},...)"));
        continue;
      }
      if (!context.memory.Allows(e.extra_live_bytes)) {
        AddEstimateMetrics(e, r.metrics);
        missed(std::string(kOverMemoryBudget),
               absl::StrCat("the local accumulator needs ", e.extra_live_bytes,
                            " bytes (a full-size gradient per device), over ",
                            context.memory.Describe()),
               "raise --memory-budget, or leave the reduction in the loop");
        continue;
      }
      LoopRewriteRequest request;
      request.at = w;
      request.candidate = &coll;
      request.loop = r.loop;
      request.what = absl::StrCat("deferring ", kind, " ", coll.name(),
                                  " out of ", w->name());
      request.added_instructions =
          12 + 3 * static_cast<int64_t>(c.chain.size());
      request.avoid =
          absl::StrCat("leave the reduction in the loop (--loop=", w->name(),
                       ":defer-reduce=off)");
      request.extra_live_bytes = e.extra_live_bytes;
      request.verify_what = "the deferred loop does not verify: ";
      request.failure_prefix =
          absl::StrCat(AsAbsl(kPassName), ": deferring ", coll.name(),
                       " out of ", node->path, ": ");
      Deferred deferred;
      absl::StatusOr<bool> done =
          driver.Rewrite(request, [&](LoopRewrite& txn) {
            return BuildDeferral(txn, w, c, before_commit_, deferred);
          });
      if (!done.ok()) return done.status();
      if (!*done) continue;
      // The old loops are gone: what pointed into them points to the copies.
      const std::string reduced = deferred.reduced->name();
      for (size_t k = ci + 1; k < cands.size(); ++k) {
        Remap(cands[k], deferred.moved);
      }
      w = node->while_instr;
      AddEstimateMetrics(e, r.metrics);
      r.kind = RemarkKind::kPassed;
      r.name = "DeferredReduction";
      r.format = absl::StrCat(
          "deferred ", kind,
          " out of the loop: each device accumulates its unreduced values and "
          "one ",
          kind, " ({deferred}) runs after the loop, saving ", saves,
          "; it costs ", costs,
          "; the summation order changes (floating-point results may "
          "differ in the last bits)");
      r.Text("deferred", reduced);
      context.remarks.Emit(r);
    }
  }
  return driver.changed();
}

// Registration (passes/pass_registry.h).
void RegisterReductionDeferralPass(PassRegistry& registry) {
  registry.Add<ReductionDeferralPass>(
      "accumulate gradients locally and all-reduce/reduce-scatter once after "
      "the accumulation loop (opt-in: costs a full-size accumulator per "
      "device and reorders floating-point sums)",
      {PassOptionInfo::Bool("enable", &PassOptions::defer_reduction,
                            "defer in every loop where it is legal, fits "
                            "--memory-budget and is predicted to help (else "
                            "only loops with --loop=SELECTOR:defer-reduce=on)")
           .SetSourceKey("defer_reduction")});
}

}  // namespace hloverlap
