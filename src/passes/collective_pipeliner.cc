#include "passes/collective_pipeliner.h"

#include <algorithm>
#include <functional>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "analysis/buffer_analysis.h"
#include "analysis/call_graph.h"
#include "analysis/collective_ops.h"
#include "analysis/while_loop_analysis.h"
#include "hlo/absl_compat.h"
#include "hlo/clone.h"
#include "hlo/ir_util.h"
#include "hlo/verifier.h"
#include "passes/collective_pipeliner_rewrite.h"
#include "passes/dce.h"
#include "passes/loop_pass_driver.h"
#include "passes/loop_rewrite.h"
#include "passes/pass_registry.h"
#include "passes/planning.h"

namespace hloverlap {
namespace {

constexpr std::string_view kPassName = "collective-pipeliner";
constexpr int kMaxFormattingOps = 16;

using pipeliner::Ancestors;
using pipeliner::BarrierAlias;
using pipeliner::ForwardCandidate;
using pipeliner::InstrMap;
using pipeliner::LoopState;
using pipeliner::RewriteBackward;
using pipeliner::RewriteForward;
using pipeliner::RewriteSink;

// Why a loop or a candidate is left alone: the remark's stable name
// (docs/REMARKS.md) and the sentence.
struct Why {
  std::string name;
  std::string text;
};

bool PrepareLoop(Instruction* w, LoopState& ls, Why* why) {
  ls.while_instr = w;
  ls.parent = w->parent();
  ls.module = ls.parent->parent();
  ls.info = AnalyzeWhileLoop(*w);
  if (!ls.info.has_induction_variable()) {
    // `missing` names the fact (induction variable, start, step or bound).
    *why = {"UnknownTripCount",
            absl::StrCat("the loop's trip count cannot be established: ",
                         ls.info.missing)};
    return false;
  }
  if (!ls.info.trip_count_proven()) {
    *why = {
        "UnknownTripCount",
        absl::StrCat("the loop's trip count is unknown: ", ls.info.missing)};
    return false;
  }
  ls.cond = w->while_condition();
  ls.body = w->while_body();
  ls.body_param = ls.body->parameter(0);
  ls.init = w->operand(0);
  ls.n = ls.info.tuple_size;
  for (Instruction* user : ls.body_param->users()) {
    if (user->opcode() != Opcode::kGetTupleElement) {
      *why = {"OpaqueLoopState",
              absl::StrCat("the loop parameter is used by ", user->name(),
                           " other than through get-tuple-element")};
      return false;
    }
  }
  for (Instruction* user : ls.cond->parameter(0)->users()) {
    if (user->opcode() != Opcode::kGetTupleElement) {
      *why = {"OpaqueLoopState",
              "the loop condition uses its parameter other than through "
              "get-tuple-element"};
      return false;
    }
  }
  return true;
}

int64_t CountOccurrences(const Instruction* root, const Instruction* value) {
  int64_t n = 0;
  for (const Instruction* op : root->operands()) n += op == value;
  return n;
}

// ---------------------------------------------------------------------------
// Candidate analysis.

// Data movement and scalar arithmetic: a prefetch chain may duplicate it.
bool IsCheapToDuplicate(const Instruction& x) {
  if (x.shape().IsScalar()) return true;
  switch (x.opcode()) {
    case Opcode::kGetTupleElement:
    case Opcode::kConstant:
    case Opcode::kIota:
    case Opcode::kPartitionId:
    case Opcode::kReplicaId:
    case Opcode::kDynamicSlice:
    case Opcode::kSlice:
    case Opcode::kReshape:
    case Opcode::kBitcast:
    case Opcode::kConvert:
    case Opcode::kCopy:
    case Opcode::kTranspose:
    case Opcode::kBroadcast:
    case Opcode::kPad:
    case Opcode::kConcatenate:
    case Opcode::kTuple:
      return true;
    default:
      return false;
  }
}

// Backward: the operand chain of `ag` depends only on the induction
// variable, invariant state elements and constants. `independent` caches
// the answer per instruction; `candidates` are the collectives being
// prefetched together (a chain may contain one of them).
bool ChainIsIndependent(const Instruction* ag, const LoopState& ls,
                        const absl::flat_hash_set<const Instruction*>& cands,
                        Why* why) {
  std::vector<const Instruction*> stack = {ag->operand(0)};
  absl::flat_hash_set<const Instruction*> seen;
  while (!stack.empty()) {
    const Instruction* x = stack.back();
    stack.pop_back();
    if (!seen.insert(x).second) continue;
    if (x == ls.body_param) {
      *why = {"LoopCarriedOperand",
              "its operand chain uses the whole loop state"};
      return false;
    }
    if (x->opcode() == Opcode::kGetTupleElement &&
        x->operand(0) == ls.body_param) {
      int64_t idx = x->tuple_index();
      if (idx == *ls.info.iv_index) continue;
      if (idx >= 0 && idx < ls.n && ls.info.invariant_index[idx]) continue;
      *why = {"LoopCarriedOperand",
              absl::StrCat("what it gathers depends on ", x->name(),
                           " (loop state element ", idx,
                           "), which changes every iteration, so the next "
                           "iteration's value is not known yet")};
      return false;
    }
    if (HasSideEffect(*x) || x->opcode() == Opcode::kRng ||
        x->opcode() == Opcode::kRngBitGenerator ||
        x->opcode() == Opcode::kCustomCall) {
      if (x->opcode() != Opcode::kCustomCall ||
          x->FindRawAttribute("custom_call_has_side_effect") != nullptr) {
        *why = {"SideEffectingOperand",
                absl::StrCat("its operand chain contains ", x->name(),
                             ", which has side effects")};
        return false;
      }
    }
    if (IsCollective(x->opcode()) || IsAsyncStart(x->opcode()) ||
        IsAsyncDone(x->opcode())) {
      if (!cands.contains(x)) {
        *why = {"DependsOnCollective",
                absl::StrCat("its operand chain contains the collective ",
                             x->name(), ", which is not prefetched with it")};
        return false;
      }
    }
    if (const Instruction* alias = BarrierAlias(x)) {
      stack.push_back(alias);
      continue;
    }
    for (const Instruction* op : x->operands()) stack.push_back(op);
  }
  // Prefetching clones the chain; an expensive instruction that the rest of
  // the iteration also uses would be computed twice (XLA has the same rule).
  for (const Instruction* x : seen) {
    if (IsCheapToDuplicate(*x) || cands.contains(x)) continue;
    for (const Instruction* user : x->users()) {
      if (user == ag || seen.contains(user) || BarrierAlias(user) != nullptr) {
        continue;
      }
      *why = {"WouldDuplicateCompute",
              absl::StrCat("its operand chain computes ", x->name(), " (",
                           AsAbsl(OpcodeName(x->opcode())),
                           "), which the rest of the iteration also uses: "
                           "prefetching would compute it twice")};
      return false;
    }
  }
  return true;
}

bool IsFormattingOp(Opcode op) {
  switch (op) {
    case Opcode::kReshape:
    case Opcode::kBitcast:
    case Opcode::kConvert:
    case Opcode::kTranspose:
    case Opcode::kCopy:
    case Opcode::kNegate:
    case Opcode::kAdd:
    case Opcode::kSubtract:
    case Opcode::kMultiply:
    case Opcode::kDivide:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kBroadcast:
    case Opcode::kSlice:
    case Opcode::kDynamicSlice:  // indices must be invariant (checked)
    case Opcode::kPad:
      return true;
    default:
      return false;
  }
}

// How an elementwise operation combines a result with another value, for a
// reason in the user's terms ("added to", "multiplied by").
std::string_view CombinedVerb(Opcode op) {
  switch (op) {
    case Opcode::kAdd:
      return "added to";
    case Opcode::kSubtract:
      return "subtracted from (or by)";
    case Opcode::kMultiply:
      return "multiplied by";
    case Opcode::kDivide:
      return "divided by (or into)";
    case Opcode::kMaximum:
    case Opcode::kMinimum:
      return "compared with";
    default:
      break;
  }
  return "combined with";
}

// Whether `dus`, the store of a forward candidate into `buffer` (a read of
// the body's parameter), writes an output the loop carries to the next
// iteration and nothing else of the iteration or the condition reads;
// else `why` says what is wrong.
bool StoreIsLoopOutput(const LoopState& ls, const Instruction* dus,
                       const Instruction* buffer, Why* why) {
  const int64_t b = buffer->tuple_index();
  const Instruction* root = ls.body->root();
  if (b == *ls.info.iv_index || b < 0 || b >= ls.n) {
    *why = {"StoreNotLoopOutput",
            "its result is written into the loop counter"};
    return false;
  }
  if (dus->user_count() != 1 || dus->users()[0] != root) {
    *why = {"StoredBufferRead",
            absl::StrCat("the iteration reads the output it stores into (",
                         dus->name(),
                         "), so it needs this iteration's result now")};
    return false;
  }
  if (CountOccurrences(root, dus) != 1 || root->operand(b) != dus) {
    *why = {"StoreNotLoopOutput",
            absl::StrCat("the stored buffer ", dus->name(),
                         CountOccurrences(root, dus) != 1
                             ? " appears more than once in the loop output"
                             : " is written to a different loop state element "
                               "than it reads")};
    return false;
  }
  for (Instruction* user : ls.body_param->users()) {
    if (user->tuple_index() == b &&
        (user != buffer || user->user_count() != 1)) {
      *why = {"StoredBufferRead",
              absl::StrCat("loop state element ", b,
                           " is read inside the iteration besides the store")};
      return false;
    }
  }
  for (Instruction* user : ls.cond->parameter(0)->users()) {
    if (user->tuple_index() == b) {
      *why = {"StoredBufferRead",
              absl::StrCat("the loop condition reads the stored buffer (state "
                           "element ",
                           b, ")")};
      return false;
    }
  }
  return true;
}

bool AnalyzeForward(Instruction* coll, const LoopState& ls,
                    const absl::flat_hash_set<const Instruction*>& invariant,
                    ForwardCandidate* out, Why* why, std::string* suggestion) {
  if (coll->operand_count() != 1) {
    *why = {"CombinedCollective",
            "it has several operands (a combined collective)"};
    return false;
  }
  if (HasControlDeps(coll)) {
    *why = {"ControlDependencies", "it has control dependencies"};
    return false;
  }
  Instruction* cur = coll;
  std::vector<Instruction*> formatting;
  const Instruction* root = ls.body->root();
  for (int steps = 0;; ++steps) {
    if (steps > kMaxFormattingOps) {
      *why = {"StoreTooFar",
              "too many operations between the collective and its store"};
      return false;
    }
    if (cur->user_count() != 1) {
      *why = {"ResultHasSeveralUsers",
              cur == coll ? absl::StrCat("its result has ", cur->user_count(),
                                         " users, not a single store")
                          : absl::StrCat(cur->name(),
                                         " between the collective and its "
                                         "store has several users")};
      return false;
    }
    Instruction* user = cur->users()[0];
    if (user == root) {
      std::string elems;
      for (int64_t i = 0; i < root->operand_count(); ++i) {
        if (root->operand(i) != cur) continue;
        absl::StrAppend(&elems, elems.empty() ? "" : ", ", i);
      }
      *why = {"ResultLoopCarried",
              absl::StrCat("its result is carried into the next iteration "
                           "(loop state element ",
                           elems, "), not stored by dynamic-update-slice")};
      *suggestion =
          "only values stored into a loop output by dynamic-update-slice at "
          "the iteration's index can be reduced one iteration later";
      return false;
    }
    if (user->opcode() == Opcode::kDynamicUpdateSlice) {
      if (user->operand_count() < 2 || user->operand(1) != cur) {
        *why = {"UnsupportedStore",
                absl::StrCat("it flows into the buffer operand of ",
                             user->name(), ", not its update")};
        return false;
      }
      out->dus = user;
      break;
    }
    if (user->opcode() == Opcode::kCall) {
      *why = {"CallBeforeStore",
              absl::StrCat("a call (", user->name(),
                           ") sits between the collective and its store")};
      *suggestion =
          "run the inliner first: --passes=inline,collective-pipeliner";
      return false;
    }
    if (HasControlDeps(user)) {
      *why = {"ControlDependencies",
              absl::StrCat("its result goes through ", user->name(),
                           ", which has control dependencies")};
      return false;
    }
    if (!IsFormattingOp(user->opcode())) {
      *why = {"NonFormattingUser",
              absl::StrCat("its result is used by ", user->name(), " (",
                           AsAbsl(OpcodeName(user->opcode())),
                           ") before it is stored, not only reshaped, "
                           "converted or scaled")};
      *suggestion =
          "delaying a reduction needs its result stored as it is (or "
          "reshaped, converted, scaled by a constant) into a loop output; "
          "compute on it after the loop";
      return false;
    }
    for (Instruction* op : user->operands()) {
      if (op != cur && !invariant.contains(op)) {
        *why = {
            "CombinedWithLoopVariant",
            absl::StrCat("this ", AsAbsl(OpcodeName(coll->opcode())),
                         "'s result is ", AsAbsl(CombinedVerb(user->opcode())),
                         " a value that changes every iteration (", op->name(),
                         ", by ", user->name(),
                         ") before it is stored: an accumulation")};
        *suggestion =
            "only a result stored as it is (or reshaped, converted) into a "
            "loop output can be reduced one iteration later; an "
            "accumulation across iterations needs its sum in the same "
            "iteration";
        return false;
      }
    }
    formatting.push_back(user);
    cur = user;
  }
  Instruction* dus = out->dus;
  if (HasControlDeps(dus)) {
    *why = {"ControlDependencies", absl::StrCat("its store ", dus->name(),
                                                " has control dependencies")};
    return false;
  }
  Instruction* buffer = dus->operand(0);
  if (buffer->opcode() != Opcode::kGetTupleElement ||
      buffer->operand(0) != ls.body_param) {
    // Name what computes the buffer in the user's terms: an inner loop's
    // output (the epilogue of a loop already pipelined), else the value.
    const Instruction* from = buffer;
    for (int hops = 0; hops < 8 && from->opcode() != Opcode::kWhile; ++hops) {
      if (from->opcode() != Opcode::kGetTupleElement) break;
      const Instruction* t = from->operand(0);
      from = t->opcode() == Opcode::kTuple &&
                     from->tuple_index() < t->operand_count()
                 ? t->operand(from->tuple_index())
                 : t;
    }
    if (from->opcode() != Opcode::kWhile) from = nullptr;
    // One text for every such store (the summary counts them together);
    // the suggestion says when it is an inner loop's output.
    *why = {"StoreNotLoopOutput",
            absl::StrCat("its result is written into a buffer this iteration "
                         "computes (",
                         from != nullptr ? from->name() : buffer->name(),
                         "), not into an output this loop carries from one "
                         "iteration to the next")};
    *suggestion =
        from != nullptr
            ? "the buffer is the inner loop's output: this is its last "
              "iteration, left after it when its other iterations were "
              "delayed; only a result written into an output this loop "
              "carries (a scan's stacked outputs) can be reduced one "
              "iteration later"
            : "only a result written into an output the loop carries (a "
              "scan's stacked outputs) can be reduced one iteration later";
    return false;
  }
  const int64_t b = buffer->tuple_index();
  if (!StoreIsLoopOutput(ls, dus, buffer, why)) return false;
  out->collective = coll;
  out->formatting = std::move(formatting);
  out->buffer_index = b;
  return true;
}

// ---------------------------------------------------------------------------
// Forward-sink: the per-iteration operands are stored into an [N, ...]
// buffer and one batched collective runs after the loop.

bool IsSinkFormattingOp(Opcode op) {
  switch (op) {
    case Opcode::kReshape:
    case Opcode::kConvert:
    case Opcode::kCopy:
    case Opcode::kNegate:
    case Opcode::kTranspose:
      return true;
    default:
      return false;
  }
}

// Checks what forward-sink needs beyond AnalyzeForward: the formatting ops
// can be batched, and the store writes one whole row of dimension 0 of an
// [N, ...] buffer per iteration, every row exactly once.
bool AnalyzeSink(const ForwardCandidate& fc, const LoopState& ls, Why* why,
                 std::string* suggestion) {
  const int64_t trips = *ls.info.trip_count;
  const Instruction* coll = fc.collective;
  if (coll->opcode() == Opcode::kReduceScatter &&
      coll->attrs().dimensions.size() != 1) {
    *why = {"SinkUnsupportedShape",
            "its scatter dimension is not a single dimension"};
    return false;
  }
  if (!coll->operand(0)->shape().IsArray() || !coll->shape().IsArray()) {
    *why = {"SinkUnsupportedShape", "it does not produce a single array"};
    return false;
  }
  for (const Instruction* f : fc.formatting) {
    if (!IsSinkFormattingOp(f->opcode()) || f->operand_count() != 1) {
      *why = {"SinkUnbatchableFormatting",
              absl::StrCat("its result goes through ", f->name(), " (",
                           AsAbsl(OpcodeName(f->opcode())),
                           "), which cannot be batched (sink batches reshape, "
                           "convert, copy, "
                           "negate and transpose)")};
      *suggestion = "use pipeline=on to delay it by one iteration instead";
      return false;
    }
  }
  const Instruction* dus = fc.dus;
  const Shape& update = dus->operand(1)->shape();
  const Shape& buffer = dus->operand(0)->shape();
  if (update.rank() < 1 || update.rank() != buffer.rank() ||
      update.dimensions(0) != 1 || buffer.dimensions(0) != trips) {
    *why = {"SinkUnsupportedStore",
            absl::StrCat("its store ", dus->name(),
                         " does not write one row of dimension 0 of "
                         "a buffer with one row per iteration (",
                         trips, ")")};
    *suggestion = "use pipeline=on to delay it by one iteration instead";
    return false;
  }
  for (int64_t d = 1; d < update.rank(); ++d) {
    if (update.dimensions(d) != buffer.dimensions(d)) {
      *why = {"SinkUnsupportedStore",
              absl::StrCat("its store ", dus->name(),
                           " writes only part of a row of its buffer")};
      return false;
    }
  }
  if (dus->operand_count() != 2 + buffer.rank()) {
    *why = {"SinkUnsupportedStore",
            absl::StrCat("its store ", dus->name(), " has no scalar indices")};
    return false;
  }
  for (int64_t r = 3; r < dus->operand_count(); ++r) {
    std::optional<IntValue> v = EvaluateConstantScalar(*dus->operand(r));
    if (!v.has_value() || !v->IsZero()) {
      *why = {"SinkUnsupportedStore",
              absl::StrCat("its store ", dus->name(),
                           " has a non-zero index past dimension 0")};
      return false;
    }
  }
  constexpr int64_t kMaxCheckedTrips = int64_t{1} << 20;
  if (trips > kMaxCheckedTrips) {
    *why = {"SinkUnsupportedStore",
            absl::StrCat("the loop runs ", trips,
                         " times, too many to check which rows it writes")};
    return false;
  }
  std::vector<bool> written(trips, false);
  for (int64_t t = 0; t < trips; ++t) {
    // The index as the store reads it, at its own type's width.
    std::optional<IntValue> index =
        EvaluateInIteration(*dus->operand(2), ls.info, t);
    if (!index.has_value()) {
      *why = {"SinkUnsupportedStore",
              absl::StrCat("the row its store ", dus->name(),
                           " writes is not a function of the loop counter")};
      return false;
    }
    const __int128 row = index->value();
    if (row < 0 || row >= trips || written[static_cast<int64_t>(row)]) {
      *why = {"SinkUnsupportedStore",
              absl::StrCat("its store ", dus->name(),
                           " does not write every row exactly once (iteration ",
                           t, " writes row ", index->ToString(), ")")};
      return false;
    }
    written[static_cast<int64_t>(row)] = true;
  }
  return true;
}

// ---------------------------------------------------------------------------
// Driver.

// A mode's plan, a value from its Plan step to its Apply step: the
// candidates it takes (in order), the prediction for each (its passed
// remark's metrics) and the extra live bytes they hold together.
template <typename Candidate>
struct PipelinePlan {
  std::vector<Candidate> chosen;
  absl::flat_hash_map<const Instruction*, CandidateEstimate> estimates;
  int64_t extra = 0;

  // Takes `candidate` (collective `coll`) with its prediction `e`.
  void Take(Candidate candidate, const Instruction* coll,
            const CandidateEstimate& e) {
    extra += e.extra_live_bytes;
    estimates[coll] = e;
    chosen.push_back(std::move(candidate));
  }
  // The prediction for `coll`, a collective the plan took.
  CandidateEstimate EstimateOf(const Instruction* coll) const {
    auto it = estimates.find(coll);
    return it == estimates.end() ? CandidateEstimate{} : it->second;
  }
};
// The all-gathers to prefetch.
using BackwardPlan = PipelinePlan<Instruction*>;
// The reduce-scatters / all-reduces to sink or delay, and the stores
// (dynamic-update-slices) they take: one collective per store.
struct ForwardPlan : PipelinePlan<ForwardCandidate> {
  // Sink (policy `sink`): the collectives leave the loop, one batched
  // collective after it. Otherwise each is delayed to the next iteration.
  bool sink = false;
  absl::flat_hash_set<const Instruction*> stores;

  bool StoreTaken(const ForwardCandidate& candidate) const {
    return stores.contains(candidate.dus);
  }
  void Take(ForwardCandidate candidate, const Instruction* coll,
            const CandidateEstimate& e) {
    stores.insert(candidate.dus);
    PipelinePlan::Take(std::move(candidate), coll, e);
  }
};

// Whether --pipeline-reduce-scatter / --pipeline-all-reduce leave `op` on.
bool ForwardKindEnabled(Opcode op, const PassOptions& opts) {
  return op == Opcode::kReduceScatter ? opts.pipeline_reduce_scatter
                                      : opts.pipeline_all_reduce;
}

class LoopPipeliner {
 public:
  LoopPipeliner(Module& module, PassContext& context)
      : module_(module),
        context_(context),
        driver_(kPassName, module, context) {}

  absl::StatusOr<bool> Run();

 private:
  Remark MakeRemark(RemarkKind kind, std::string name, const Instruction& coll,
                    const std::string& loop, std::string direction,
                    std::string message) {
    Remark r = InstructionRemark(kPassName, kind, std::move(name), coll,
                                 module_, loop, std::move(message));
    r.direction = std::move(direction);
    return r;
  }
  // The missed remark of one sink or forward candidate: "<op> not <verb>:
  // <why>", with the bytes it moves.
  void MissCandidate(const Instruction& coll, const std::string& path,
                     std::string direction, std::string_view verb,
                     const Why& why, std::string suggestion) {
    Remark r = MakeRemark(RemarkKind::kMissed, why.name, coll, path,
                          std::move(direction),
                          absl::StrCat(AsAbsl(OpcodeName(coll.opcode())),
                                       " not ", AsAbsl(verb), ": ", why.text));
    r.suggestion = std::move(suggestion);
    r.Metric("bytes_moved", CollectiveBytesMoved(coll));
    context_.remarks.Emit(std::move(r));
  }
  // The passed remark of collective `coll`, made before the rewrite deletes
  // it: the collective as first arg; metrics the bytes `runs` runs of it
  // move, the extra live bytes of its estimate `e`, the prefetch `depth`
  // (when given), the loop's trip count and the prediction. The caller adds
  // its text.
  Remark PassedRemark(std::string name, const Instruction& coll,
                      const LoopState& ls, const std::string& path,
                      std::string direction, const CandidateEstimate& e,
                      int64_t runs, std::optional<int64_t> depth) {
    Remark r = MakeRemark(RemarkKind::kPassed, std::move(name), coll, path,
                          std::move(direction), "");
    r.Instr("collective", coll.name());
    r.Metric("bytes_moved", runs * CollectiveBytesMoved(coll))
        .Metric("extra_live_bytes", e.extra_live_bytes);
    if (depth.has_value()) r.Metric("depth", *depth);
    r.Metric("trip_count", *ls.info.trip_count);
    AddPredictedMetrics(e, r.metrics);
    return r;
  }
  // The passed remarks of `plan`'s collectives, delayed to the next
  // iteration or sunk out of the loop.
  std::vector<Remark> ForwardRemarks(const ForwardPlan& plan,
                                     const LoopState& ls,
                                     const std::string& path) {
    const bool sink = plan.sink;
    const int64_t trips = *ls.info.trip_count;
    std::vector<Remark> remarks;
    for (const ForwardCandidate& fc : plan.chosen) {
      const Instruction& c = *fc.collective;
      const bool rs = c.opcode() == Opcode::kReduceScatter;
      // The names of remark_names.inc, spelled out so that a search finds
      // where each is emitted.
      const char* name =
          sink ? (rs ? "SunkReduceScatter" : "SunkAllReduce")
               : (rs ? "DelayedReduceScatter" : "DelayedAllReduce");
      Remark r =
          PassedRemark(name, c, ls, path, sink ? "sink" : "forward",
                       plan.EstimateOf(&c), sink ? trips : 1, std::nullopt);
      const auto op = AsAbsl(OpcodeName(c.opcode()));
      if (sink) {
        r.format = absl::StrCat("sank ", op,
                                " out of the loop: one batched collective of "
                                "{trips} iterations after the loop");
        r.Int("trips", trips);
      } else {
        r.format = absl::StrCat(
            "delayed ", op, " to the next iteration (overlaps its compute)");
      }
      remarks.push_back(std::move(r));
    }
    return remarks;
  }
  static std::string DirectionOf(Opcode op) {
    return op == Opcode::kAllGather ? "backward" : "forward";
  }

  // Collectives of the kinds we pipeline that sit directly in `body`.
  std::vector<Instruction*> Collectives(const Computation& body) {
    std::vector<Instruction*> out;
    for (Instruction* inst : body.MakeInstructionPostOrder()) {
      if (inst->opcode() == Opcode::kAllGather ||
          inst->opcode() == Opcode::kReduceScatter ||
          inst->opcode() == Opcode::kAllReduce) {
        out.push_back(inst);
      }
    }
    return out;
  }

  void MissAll(const std::vector<Instruction*>& colls, const std::string& loop,
               const Why& why, const std::string& suggestion) {
    for (Instruction* c : colls) {
      Remark r = MakeRemark(RemarkKind::kMissed, why.name, *c, loop,
                            DirectionOf(c->opcode()),
                            absl::StrCat("not pipelined: ", why.text));
      r.suggestion = suggestion;
      r.Metric("bytes_moved", CollectiveBytesMoved(*c));
      context_.remarks.Emit(std::move(r));
    }
  }

  // One loop: policy and loop facts, then forward-sink (policy `sink`),
  // backward, forward, each analyze -> plan -> apply.
  absl::StatusOr<bool> ProcessLoop(const LoopNode& node);
  // Backward: the all-gathers whose chains are legal to prefetch
  // (fixpoint: a chain may contain only candidates), or a reason each.
  std::vector<Instruction*> AnalyzeBackward(
      const std::vector<Instruction*>& ags, const LoopState& ls,
      const std::string& path);
  // Plan: drops candidates the ledger cannot hold or whose predicted gain
  // is not positive (a chain the rest of the iteration also needs would be
  // computed again every iteration), each with a missed remark.
  BackwardPlan PlanBackward(std::vector<Instruction*> legal,
                            const LoopState& ls, int depth,
                            const std::string& path);
  // Apply: remarks, module-size guard, the rewrite; `ls` then describes
  // the new loop.
  absl::StatusOr<bool> ApplyBackward(LoopState& ls, const BackwardPlan& plan,
                                     int depth, const std::string& path);
  // Forward: the reduce-scatters / all-reduces stored by a
  // dynamic-update-slice whose delay is legal, gains and fits the ledger
  // (the others get a missed remark each).
  ForwardPlan PlanForward(const LoopState& ls,
                          const std::vector<Instruction*>& colls,
                          const std::string& path);
  // Apply a sink or forward plan: remarks, module-size guard, the rewrite.
  // After a sink `ls` describes the new loop.
  absl::StatusOr<bool> ApplyForwardPlan(LoopState& ls, const ForwardPlan& plan,
                                        const std::string& path);
  // The predicted effect of prefetching `ag` `depth` iterations ahead
  // with the candidates `chosen` (ag included): the communication hidden and
  // the compute of `dup`, the non-trivial part of its chain that the rest
  // of the iteration also needs (computed again every iteration).
  CandidateEstimate EstimatePrefetch(
      const Instruction& ag, const LoopState& ls, int depth,
      const std::vector<const Instruction*>& dup);
  // The predicted effect of delaying reduce-scatter/all-reduce `c` to the
  // next iteration: it overlaps an iteration's compute in every iteration
  // but the last (whose collective the epilogue runs); the peeled first
  // iteration and the epilogue split one iteration's work, so nothing is
  // added.
  CandidateEstimate EstimateDelay(const Instruction& c, const LoopState& ls);
  // The predicted effect of sinking `c`: its `trips` runs leave the loop
  // (hidden), one batched collective of trips x its bytes runs after the
  // loop with nothing to overlap (added communication).
  CandidateEstimate EstimateSink(const Instruction& c, const LoopState& ls);
  // The compute of one iteration (collectives left out): what a
  // collective moved across iterations can overlap.
  double IterationComputeUs(const LoopState& ls) const;
  // A missed remark for a candidate the ledger cannot hold.
  void MissOverBudget(const Instruction& c, const std::string& path,
                      std::string direction, std::string what,
                      const CandidateEstimate& e, int64_t pending,
                      std::string suggestion);
  // The driver's request for a rewrite of `ls` (loop `path`) whose module-
  // size guard (pass.h) counts the body cloned `body_copies` times (nested
  // loops included) and `chain_copies` times the chains of `chains` (their
  // ancestors in the body), plus a new condition and `small` bookkeeping
  // instructions (state reads, tuples, constants); `extra` bytes go on the
  // ledger once it commits. A failure names `candidate`.
  LoopRewriteRequest Request(const LoopState& ls, const std::string& path,
                             std::string_view what,
                             const Instruction* candidate, int64_t extra,
                             int64_t body_copies,
                             const std::vector<Instruction*>& chains,
                             int64_t chain_copies, int64_t small) const;
  // The tail every mode shares: `rewrite` built and committed through the
  // driver (size guard, commit, failure policy, ledger), then, once it
  // committed, its passed remarks. Null: the rewrite failed and was
  // discarded (the driver reported it); an error stops the pass.
  absl::StatusOr<Instruction*> Apply(
      const LoopState& ls, const LoopRewriteRequest& request,
      const std::function<absl::StatusOr<Instruction*>(LoopRewrite&)>& rewrite,
      std::vector<Remark>& remarks) {
    Instruction* old = ls.while_instr;
    Instruction* result = nullptr;
    absl::StatusOr<bool> done =
        driver_.Rewrite(request, [&](LoopRewrite& txn) -> absl::Status {
          absl::StatusOr<Instruction*> w = rewrite(txn);
          if (!w.ok()) return w.status();
          result = *w;
          return absl::OkStatus();
        });
    if (!done.ok()) return done.status();
    if (!*done) return nullptr;
    for (Remark& r : remarks) context_.remarks.Emit(std::move(r));
    removed_whiles_.push_back(old);
    return result;
  }
  // Forward-sink of the loop's reduce-scatters / all-reduces: those legal
  // to sink that fit the ledger (the others get a missed remark each).
  ForwardPlan PlanSink(const LoopState& ls,
                       const std::vector<Instruction*>& colls,
                       const std::string& path);

  Module& module_;
  PassContext& context_;
  LoopPassDriver driver_;
  // While instructions that rewrites replaced (Run skips loop-nest nodes
  // that name them).
  std::vector<const Instruction*> removed_whiles_;
};

// The PassOptions field that enables pipelining a reduce-scatter or
// all-reduce (for PassOptions::SourceOf).
std::string_view ForwardKindOption(Opcode op) {
  return op == Opcode::kReduceScatter ? "pipeline_reduce_scatter"
                                      : "pipeline_all_reduce";
}

LoopRewriteRequest LoopPipeliner::Request(
    const LoopState& ls, const std::string& path, std::string_view what,
    const Instruction* candidate, int64_t extra, int64_t body_copies,
    const std::vector<Instruction*>& chains, int64_t chain_copies,
    int64_t small) const {
  auto times = [](int64_t a, int64_t b) {
    return b != 0 && a > kCloneCostSaturated / b ? kCloneCostSaturated : a * b;
  };
  const int64_t body = CloneCost(ls.body->MakeInstructionPostOrder());
  const int64_t chain = chains.empty()
                            ? 0
                            : CloneCost(Ancestors(chains, {}, ls.body_param,
                                                  /*follow_aliases=*/true));
  const int64_t cond = CloneCost(ls.cond->MakeInstructionPostOrder());
  const int64_t count = std::min(
      kCloneCostSaturated, times(body_copies, body) +
                               times(chain_copies, chain) + cond + small + 16);
  LoopRewriteRequest request;
  request.at = ls.while_instr;
  request.candidate = candidate;
  request.loop = path;
  request.what =
      absl::StrCat(AsAbsl(what), " while loop ", ls.while_instr->name(),
                   " (computation ", ls.parent->name(), ")");
  request.added_instructions = count;
  request.avoid =
      "keep pipelining off this loop (--loop=SELECTOR:pipeline=off)";
  request.extra_live_bytes = extra;
  request.verify_what = "rewritten loop does not verify: ";
  return request;
}

ForwardPlan LoopPipeliner::PlanSink(const LoopState& ls,
                                    const std::vector<Instruction*>& colls,
                                    const std::string& path) {
  const PassOptions& opts = context_.options;
  absl::flat_hash_set<const Instruction*> invariant =
      FindLoopInvariantInstructions(*ls.body, ls.info.invariant_index);
  ForwardPlan plan;
  plan.sink = true;
  for (Instruction* c : colls) {
    if (c->opcode() == Opcode::kAllGather) continue;
    const bool enabled = ForwardKindEnabled(c->opcode(), opts);
    Why reason;
    std::string suggestion;
    ForwardCandidate fc;
    if (!enabled) {
      reason = {"DisabledByFlag",
                absl::StrCat(
                    "pipelining of this collective kind is disabled by a flag",
                    opts.SourceOf(ForwardKindOption(c->opcode())))};
    } else if (!AnalyzeForward(c, ls, invariant, &fc, &reason, &suggestion)) {
      // reason set
    } else if (plan.StoreTaken(fc)) {
      reason = {"SharedStore", "its store is shared with another collective"};
    } else if (!AnalyzeSink(fc, ls, &reason, &suggestion)) {
      // reason set
    } else {
      // The policy asked for the sink: the prediction is reported, not a
      // condition (a batched collective after the loop may take longer
      // than the loop's runs of it when nothing else overlapped them).
      CandidateEstimate e = EstimateSink(*c, ls);
      if (context_.memory.Allows(e.extra_live_bytes, plan.extra)) {
        plan.Take(std::move(fc), c, e);
        continue;
      }
      MissOverBudget(*c, path, "sink",
                     absl::StrCat(AsAbsl(OpcodeName(c->opcode())), " not sunk"),
                     e, plan.extra, "raise --memory-budget");
      continue;
    }
    MissCandidate(*c, path, "sink", "sunk", reason, std::move(suggestion));
  }
  return plan;
}

void LoopPipeliner::MissOverBudget(const Instruction& c,
                                   const std::string& path,
                                   std::string direction, std::string what,
                                   const CandidateEstimate& e, int64_t pending,
                                   std::string suggestion) {
  Remark r =
      MakeRemark(RemarkKind::kMissed, std::string(kOverMemoryBudget), c, path,
                 std::move(direction),
                 absl::StrCat(what, ": ", context_.memory.Describe(pending),
                              " leaves no room for ", e.extra_live_bytes,
                              " extra live bytes"));
  r.suggestion = std::move(suggestion);
  r.Metric("bytes_moved", CollectiveBytesMoved(c));
  AddEstimateMetrics(e, r.metrics);
  context_.remarks.Emit(std::move(r));
}

absl::StatusOr<bool> LoopPipeliner::ProcessLoop(const LoopNode& node) {
  const PassOptions& opts = context_.options;
  Instruction* w = node.while_instr;
  const std::string& path = node.path;
  std::string policy_warning;
  LoopPolicy policy = ResolveLoopPolicy(node, opts.loop_rules, &policy_warning);
  if (!policy_warning.empty()) {
    context_.remarks.Emit(MakeRemark(RemarkKind::kWarning,
                                     "IgnoredLoopAttribute", *w, path, "",
                                     policy_warning));
  }
  std::vector<Instruction*> colls = Collectives(*w->while_body());
  if (colls.empty()) return false;
  if (policy.pipeline.has_value() && !*policy.pipeline) {
    MissAll(colls, path,
            {"PipeliningOff", absl::StrCat("pipelining is off for this loop (",
                                           policy.source, ")")},
            "");
    return false;
  }
  const int depth = policy.pipeline_depth.value_or(opts.pipeline_depth);

  LoopState ls;
  Why why;
  const bool prepared = PrepareLoop(w, ls, &why);
  EmitTripCountWarning(ls.info, "collective-pipeliner", path, context_.remarks);
  if (!prepared) {
    // The trip count is known when the loop state's use was the problem.
    const bool counted = ls.info.trip_count_proven();
    MissAll(colls, path, why,
            counted ? "run tuple simplification first "
                      "(--passes=tuple-simplify,dce,collective-pipeliner)"
                    : "write the loop as a fori_loop/scan with static bounds, "
                      "or add known_trip_count");
    return false;
  }
  const int64_t trips = *ls.info.trip_count;
  if (trips < 2) {
    MissAll(colls, path,
            trips == 0
                ? Why{"LoopNeverRuns", "the loop never runs (trip count 0)"}
                : Why{"SingleIteration",
                      "trip count 1: there is no next iteration to "
                      "overlap with"},
            "");
    return false;
  }
  bool changed = false;

  // --- Forward-sink (policy `sink`), before prefetching: the loop must
  // still write every row of its outputs. ----------------------------------
  const bool sink = policy.sink.value_or(false);
  if (sink) {
    absl::StatusOr<bool> r =
        ApplyForwardPlan(ls, PlanSink(ls, colls, path), path);
    if (!r.ok()) return r.status();
    if (*r) {
      changed = true;
      colls = Collectives(*ls.while_instr->while_body());
    }
  }

  // --- Backward: all-gathers with independent operand chains. -----------
  std::vector<Instruction*> ags;
  for (Instruction* c : colls) {
    if (c->opcode() == Opcode::kAllGather) ags.push_back(c);
  }
  if (!ags.empty() && !opts.pipeline_all_gather) {
    MissAll(ags, path,
            {"DisabledByFlag",
             absl::StrCat("all-gather pipelining is disabled by a flag",
                          opts.SourceOf("pipeline_all_gather"))},
            "");
    ags.clear();
  }
  if (!ags.empty() && !ls.info.no_wrap) {
    // The rebuilt condition compares against a bound the counter reaches
    // without wrapping.
    MissAll(ags, path, {"CounterWraps", ls.info.WrapReason()},
            "count with a wider integer type, or with a bound the counter "
            "reaches without wrapping");
    ags.clear();
  }
  const int d = static_cast<int>(std::min<int64_t>(depth, trips - 1));
  if (d < depth && !ags.empty()) {
    // Say so: the user asked for more than the loop has.
    Remark r = MakeRemark(
        RemarkKind::kWarning, "PrefetchDepthClamped", *ls.while_instr, path, "",
        absl::StrCat(
            "prefetch depth ", depth, " (",
            policy.pipeline_depth.has_value()
                ? policy.source
                : opts.SourceOr(
                      "pipeline_depth",
                      absl::StrCat("--pipeline-depth=", opts.pipeline_depth)),
            ") clamped to ", d, ": the loop runs ", trips,
            " iterations, so at most ", d, " can be prefetched ahead"));
    r.Metric("requested_depth", depth).Metric("depth", d);
    context_.remarks.Emit(std::move(r));
  }
  if (!ags.empty()) {
    absl::StatusOr<bool> r = ApplyBackward(
        ls, PlanBackward(AnalyzeBackward(ags, ls, path), ls, d, path), d, path);
    if (!r.ok()) return r.status();
    if (*r) {
      changed = true;
      if (!ls.analyzable) return changed;
      colls = Collectives(*ls.while_instr->while_body());
    }
  }

  // --- Forward: reduce-scatters / all-reduces stored by DUS. -------------
  if (!sink) {
    absl::StatusOr<bool> r =
        ApplyForwardPlan(ls, PlanForward(ls, colls, path), path);
    if (!r.ok()) return r.status();
    changed |= *r;
  }
  return changed;
}

std::vector<Instruction*> LoopPipeliner::AnalyzeBackward(
    const std::vector<Instruction*>& ags, const LoopState& ls,
    const std::string& path) {
  // Fixpoint: drop candidates whose chain needs a dropped candidate.
  absl::flat_hash_set<const Instruction*> cand_set(ags.begin(), ags.end());
  absl::flat_hash_map<const Instruction*, Why> rejected;
  bool again = true;
  while (again) {
    again = false;
    for (Instruction* ag : ags) {
      if (!cand_set.contains(ag)) continue;
      Why reason;
      if (HasControlDeps(ag)) {
        reason = {"ControlDependencies", "it has control dependencies"};
      } else if (ag->operand_count() != 1) {
        reason = {"CombinedCollective",
                  "it has several operands (a combined collective)"};
      } else if (!ChainIsIndependent(ag, ls, cand_set, &reason)) {
        // reason set
      } else {
        continue;
      }
      cand_set.erase(ag);
      rejected[ag] = reason;
      again = true;
    }
  }
  std::vector<Instruction*> legal;
  for (Instruction* ag : ags) {
    if (cand_set.contains(ag)) {
      legal.push_back(ag);
      continue;
    }
    const Why& why = rejected[ag];
    Remark r =
        MakeRemark(RemarkKind::kMissed, why.name, *ag, path, "backward",
                   absl::StrCat("all-gather not prefetched: ", why.text));
    r.suggestion =
        "only all-gathers of loop-invariant data indexed by the loop "
        "counter can be gathered an iteration ahead";
    r.Metric("bytes_moved", CollectiveBytesMoved(*ag));
    context_.remarks.Emit(std::move(r));
  }
  return legal;
}

CandidateEstimate LoopPipeliner::EstimatePrefetch(
    const Instruction& ag, const LoopState& ls, int depth,
    const std::vector<const Instruction*>& dup) {
  CandidateEstimate e;
  e.extra_live_bytes = ExtraLiveBytes(ag.shape(), depth);
  const CostOracle* oracle = context_.cost_oracle;
  if (oracle == nullptr) return e;
  e.predicted = true;
  const double trips = static_cast<double>(*ls.info.trip_count);
  // The collective overlaps the rest of an iteration (what the scheduler
  // can hide it behind), in every iteration but the peeled ones.
  e.hidden_us = std::max(0.0, trips - depth) *
                std::min(oracle->CollectiveUs(ag), IterationComputeUs(ls));
  double dup_us = 0;
  for (const Instruction* x : dup) dup_us += oracle->ComputeUs(*x);
  e.added_compute_us = trips * dup_us;
  return e;
}

double LoopPipeliner::IterationComputeUs(const LoopState& ls) const {
  const CostOracle* oracle = context_.cost_oracle;
  if (oracle == nullptr) return 0;
  double iteration_us = 0;
  for (const Instruction* x : ls.body->MakeInstructionPostOrder()) {
    if (!IsCollective(x->opcode())) iteration_us += oracle->ComputeUs(*x);
  }
  return iteration_us;
}

CandidateEstimate LoopPipeliner::EstimateDelay(const Instruction& c,
                                               const LoopState& ls) {
  CandidateEstimate e;
  e.extra_live_bytes = ExtraLiveBytes(c.operand(0)->shape());
  const CostOracle* oracle = context_.cost_oracle;
  if (oracle == nullptr) return e;
  e.predicted = true;
  const double trips = static_cast<double>(*ls.info.trip_count);
  e.hidden_us = std::max(0.0, trips - 1) *
                std::min(oracle->CollectiveUs(c), IterationComputeUs(ls));
  return e;
}

CandidateEstimate LoopPipeliner::EstimateSink(const Instruction& c,
                                              const LoopState& ls) {
  const int64_t trips = *ls.info.trip_count;
  CandidateEstimate e;
  e.extra_live_bytes = ExtraLiveBytes(c.operand(0)->shape(), trips);
  const CostOracle* oracle = context_.cost_oracle;
  if (oracle == nullptr) return e;
  e.predicted = true;
  e.hidden_us = static_cast<double>(trips) * oracle->CollectiveUs(c);
  e.added_communication_us = oracle->BatchedCollectiveUs(c, trips);
  return e;
}

BackwardPlan LoopPipeliner::PlanBackward(std::vector<Instruction*> legal,
                                         const LoopState& ls, int depth,
                                         const std::string& path) {
  // What the rest of the new body still needs once the candidates are
  // carried: ancestors of the root that stop at carried candidates. A chain
  // instruction in there is computed twice per iteration (for this
  // iteration and for the prefetch).
  auto still_needed = [&](const std::vector<Instruction*>& carried) {
    InstrMap stop;
    for (Instruction* c : carried) stop[c] = c;
    std::vector<Instruction*> live =
        Ancestors({ls.body->root()}, stop, ls.body_param);
    return absl::flat_hash_set<const Instruction*>(live.begin(), live.end());
  };
  BackwardPlan plan;
  for (bool dropped = true; dropped;) {
    dropped = false;
    plan = BackwardPlan();
    absl::flat_hash_set<const Instruction*> needed = still_needed(legal);
    absl::flat_hash_set<const Instruction*> carried(legal.begin(), legal.end());
    for (Instruction* ag : legal) {
      std::vector<const Instruction*> dup;
      for (const Instruction* x :
           Ancestors({ag->operand(0)}, {}, ls.body_param, true)) {
        if (!carried.contains(x) && needed.contains(x)) dup.push_back(x);
      }
      CandidateEstimate e = EstimatePrefetch(*ag, ls, depth, dup);
      // The costliest non-trivial instruction computed again (by the
      // oracle; without one, a loop before anything else).
      const Instruction* costly = nullptr;
      double costly_us = -1;
      for (const Instruction* x : dup) {
        if (IsCheapToDuplicate(*x)) continue;
        double us = context_.cost_oracle != nullptr
                        ? context_.cost_oracle->ComputeUs(*x)
                        : (x->opcode() == Opcode::kWhile ? 1 : 0);
        if (us > costly_us) {
          costly = x;
          costly_us = us;
        }
      }
      std::string reason;
      if (costly != nullptr) {
        reason = absl::StrCat(
            "its operand chain computes ", costly->name(), " (",
            AsAbsl(OpcodeName(costly->opcode())),
            "), which the rest of the iteration also uses: prefetching would "
            "compute it again every iteration");
      } else if (e.predicted && e.net_us() <= 0) {
        reason = absl::StrCat(
            "the predicted net saving is not positive (",
            std::llround(e.hidden_us), " us of communication hidden, ",
            std::llround(e.added_compute_us),
            " us of compute added by copying its operand chain)");
      }
      if (!reason.empty()) {
        Remark r = MakeRemark(
            RemarkKind::kMissed, std::string(kNotProfitable), *ag, path,
            "backward", absl::StrCat("all-gather not prefetched: ", reason));
        r.suggestion =
            "gather it where its operand is computed, or let the layer loop "
            "prefetch it (it already does when its chain is loop-invariant)";
        r.Metric("bytes_moved", CollectiveBytesMoved(*ag));
        AddEstimateMetrics(e, r.metrics);
        context_.remarks.Emit(std::move(r));
        legal.erase(std::find(legal.begin(), legal.end(), ag));
        dropped = true;
        break;
      }
      if (!context_.memory.Allows(e.extra_live_bytes, plan.extra)) {
        MissOverBudget(*ag, path, "backward", "all-gather not prefetched", e,
                       plan.extra,
                       "raise --memory-budget or lower the prefetch depth");
        legal.erase(std::find(legal.begin(), legal.end(), ag));
        dropped = true;
        break;
      }
      plan.Take(ag, ag, e);
    }
    if (dropped) continue;
    // A chosen all-gather whose chain contains a dropped one cannot go.
    absl::flat_hash_set<const Instruction*> chosen_set(plan.chosen.begin(),
                                                       plan.chosen.end());
    for (Instruction* ag : plan.chosen) {
      Why reason;
      if (!ChainIsIndependent(ag, ls, chosen_set, &reason)) {
        Remark r = MakeRemark(
            RemarkKind::kMissed, reason.name, *ag, path, "backward",
            absl::StrCat("all-gather not prefetched: ", reason.text));
        context_.remarks.Emit(std::move(r));
        legal.erase(std::find(legal.begin(), legal.end(), ag));
        dropped = true;
        break;
      }
    }
  }
  return plan;
}

absl::StatusOr<bool> LoopPipeliner::ApplyBackward(LoopState& ls,
                                                  const BackwardPlan& plan,
                                                  int d,
                                                  const std::string& path) {
  const std::vector<Instruction*>& chosen = plan.chosen;
  if (chosen.empty()) return false;
  // Remarks describe the collectives before the rewrite deletes them.
  std::vector<Remark> remarks;
  for (Instruction* ag : chosen) {
    Remark r = PassedRemark("PrefetchedAllGather", *ag, ls, path, "backward",
                            plan.EstimateOf(ag), 1, d);
    r.format = absl::StrCat("prefetched all-gather {depth} ",
                            d > 1 ? "iterations" : "iteration", " ahead");
    r.Int("depth", d);
    remarks.push_back(std::move(r));
  }
  // The body once and once per peeled iteration, the chains once per
  // prologue iteration and once for the next prefetch, state reads
  // per peeled iteration and per prefetched value.
  const int64_t m = chosen.size();
  absl::StatusOr<Instruction*> result = Apply(
      ls,
      Request(ls, path,
              absl::StrCat("prefetching all-gathers ", d, " ahead in"),
              chosen[0], plan.extra, 1 + d, chosen, 1 + d,
              (d + 2) * ls.n + (2 * d + 2) * m),
      [&](LoopRewrite& txn) { return RewriteBackward(ls, chosen, d, txn); },
      remarks);
  if (!result.ok()) return result.status();
  if (*result == nullptr) return false;
  Why why;
  ls.analyzable = PrepareLoop(*result, ls, &why);  // cannot fail
  return true;
}

ForwardPlan LoopPipeliner::PlanForward(const LoopState& ls,
                                       const std::vector<Instruction*>& colls,
                                       const std::string& path) {
  const PassOptions& opts = context_.options;
  if (*ls.info.trip_count < 2) {
    // Prefetching left a loop of one trip: nothing to delay into.
    std::vector<Instruction*> rest;
    for (Instruction* c : colls) {
      if (c->opcode() != Opcode::kAllGather) rest.push_back(c);
    }
    MissAll(rest, path,
            {"SingleIteration",
             absl::StrCat("after prefetching the all-gathers the loop runs ",
                          *ls.info.trip_count,
                          " time(s): there is no next iteration to delay "
                          "into")},
            "forward pipelining needs 3 or more iterations when the loop "
            "also prefetches all-gathers");
    return {};
  }
  // Analyze and plan: legal stores, the predicted gain, then the ledger.
  // Delaying adds no compute (the peeled first iteration and the epilogue
  // split one iteration's work): a legal candidate gains unless the
  // iteration has no compute to overlap (EstimateDelay).
  absl::flat_hash_set<const Instruction*> invariant =
      FindLoopInvariantInstructions(*ls.body, ls.info.invariant_index);
  ForwardPlan plan;
  for (Instruction* c : colls) {
    if (c->opcode() == Opcode::kAllGather) continue;
    const bool enabled = ForwardKindEnabled(c->opcode(), opts);
    if (!enabled) {
      MissAll({c}, path,
              {"DisabledByFlag",
               absl::StrCat(AsAbsl(OpcodeName(c->opcode())),
                            " pipelining is disabled by a flag",
                            opts.SourceOf(ForwardKindOption(c->opcode())))},
              "");
      continue;
    }
    ForwardCandidate fc;
    Why reason;
    std::string suggestion;
    if (!AnalyzeForward(c, ls, invariant, &fc, &reason, &suggestion) ||
        plan.StoreTaken(fc)) {
      if (reason.text.empty()) {
        reason = {"SharedStore", "its store is shared with another collective"};
      }
      MissCandidate(*c, path, "forward", "pipelined", reason,
                    std::move(suggestion));
      continue;
    }
    CandidateEstimate e = EstimateDelay(*c, ls);
    if (e.predicted && e.net_us() <= 0) {
      Remark r = MakeRemark(
          RemarkKind::kMissed, std::string(kNotProfitable), *c, path, "forward",
          absl::StrCat(AsAbsl(OpcodeName(c->opcode())),
                       " not pipelined: the iteration has no compute for it "
                       "to overlap (",
                       DescribeEstimate(e), ")"));
      r.Metric("bytes_moved", CollectiveBytesMoved(*c));
      AddEstimateMetrics(e, r.metrics);
      context_.remarks.Emit(std::move(r));
      continue;
    }
    if (!context_.memory.Allows(e.extra_live_bytes, plan.extra)) {
      MissOverBudget(
          *c, path, "forward",
          absl::StrCat(AsAbsl(OpcodeName(c->opcode())), " not pipelined"), e,
          plan.extra, "raise --memory-budget");
      continue;
    }
    plan.Take(std::move(fc), c, e);
  }
  return plan;
}

absl::StatusOr<bool> LoopPipeliner::ApplyForwardPlan(LoopState& ls,
                                                     const ForwardPlan& plan,
                                                     const std::string& path) {
  const std::vector<ForwardCandidate>& chosen = plan.chosen;
  if (chosen.empty()) return false;
  // Remarks name the collectives before the rewrite deletes them.
  std::vector<Remark> remarks = ForwardRemarks(plan, ls, path);
  // Sink: the body once, a zero buffer and a batched collective per sink.
  // Forward: the body three times at most (the new body, the peeled first
  // iteration's operands and the epilogue's stores).
  int64_t small = 4 * ls.n;
  for (const ForwardCandidate& fc : chosen) {
    small += plan.sink ? 8 : 8 + 2 * fc.dus->operand_count();
  }
  absl::StatusOr<Instruction*> result = Apply(
      ls,
      Request(ls, path,
              plan.sink ? "sinking collectives out of"
                        : "delaying reduce-scatters/all-reduces in",
              chosen[0].collective, plan.extra, plan.sink ? 1 : 3, {}, 0,
              small),
      [&](LoopRewrite& txn) {
        return plan.sink ? RewriteSink(ls, chosen, txn)
                         : RewriteForward(ls, chosen, txn);
      },
      remarks);
  if (!result.ok()) return result.status();
  if (*result == nullptr) return false;
  // Forward is the last mode (ProcessLoop reads nothing of the new loop);
  // backward runs after a sink, on the new loop.
  if (plan.sink) {
    Why why;
    if (!PrepareLoop(*result, ls, &why)) {
      return absl::InternalError(
          absl::StrCat("the sunk loop cannot be analyzed: ", why.text));
    }
  }
  return true;
}

absl::StatusOr<bool> LoopPipeliner::Run() {
  bool changed = false;
  // Snapshot the nodes: rewriting replaces while instructions, but a node is
  // only ever processed once and before its parent.
  LoopNest& nest = driver_.nest();
  std::vector<const LoopNode*> order(nest.InnermostFirst().begin(),
                                     nest.InnermostFirst().end());
  // While instructions removed by rewrites so far. A node naming one is a
  // second path to a loop already rewritten (a body shared by two loops);
  // nothing else is freed before the end, so other nodes stay valid.
  absl::flat_hash_set<const Instruction*> removed;
  for (const LoopNode* node : order) {
    for (const Instruction* w : removed_whiles_) removed.insert(w);
    removed_whiles_.clear();
    if (removed.contains(node->while_instr)) continue;
    absl::StatusOr<bool> r = ProcessLoop(*node);
    if (!r.ok() && IsModuleSizeLimit(r.status())) return r.status();
    if (!r.ok()) {
      Remark rm;
      rm.pass = std::string(kPassName);
      rm.kind = RemarkKind::kFailure;
      rm.name = "PassFailed";
      rm.loop = node->path;
      rm.message = std::string(r.status().message());
      context_.remarks.Emit(std::move(rm));
      continue;
    }
    changed |= *r;
  }
  // Bodies and conditions of rewritten loops (and loops nested in them).
  // Cloned callees (fused computations of a body, the peeled iterations'
  // copies) are appended to the module: put them before their callers.
  if (changed) {
    RemoveUnreachableComputations(module_);
    module_.SortComputationsCalleesFirst();
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> CollectivePipelinerPass::Run(Module& module,
                                                  PassContext& context) {
  LoopPipeliner pipeliner(module, context);
  return pipeliner.Run();
}

// Registration (passes/pass_registry.h).
void RegisterCollectivePipelinerPass(PassRegistry& registry) {
  registry.Add<CollectivePipelinerPass>(
      "pipeline all-gathers (prefetch) and reduce-scatters/all-reduces "
      "(delay) across loop iterations",
      {PassOptionInfo::Int("depth", &PassOptions::pipeline_depth, 1, 64,
                           "all-gather prefetch depth (iterations ahead; at "
                           "most a loop's trip count - 1, clamped with a "
                           "warning); also the range of --loop's "
                           "pipeline=depth=N")
           .SetFlag("--pipeline-depth")
           .SetSourceKey("pipeline_depth"),
       PassOptionInfo::Bool("all-gather", &PassOptions::pipeline_all_gather,
                            "prefetch all-gathers")
           .SetSourceKey("pipeline_all_gather"),
       PassOptionInfo::Bool("reduce-scatter",
                            &PassOptions::pipeline_reduce_scatter,
                            "delay reduce-scatters")
           .SetSourceKey("pipeline_reduce_scatter"),
       PassOptionInfo::Bool("all-reduce", &PassOptions::pipeline_all_reduce,
                            "delay all-reduces")
           .SetSourceKey("pipeline_all_reduce")});
}

}  // namespace hloverlap
