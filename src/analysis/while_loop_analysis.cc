#include "analysis/while_loop_analysis.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "hlo/absl_compat.h"
#include "hlo/ir_util.h"

namespace hloverlap {
namespace {

using u128 = unsigned __int128;

// Bounds on the work one expression may cost (a hostile module can build a
// DAG whose paths are exponential in its depth).
constexpr int kMaxExprDepth = 64;
constexpr int kMaxCallNesting = 16;
constexpr int64_t kMaxVisits = 4096;

// The element type of a one-element integer array, when supported.
std::optional<PrimitiveType> ScalarIntType(const Instruction& instr) {
  const Shape& shape = instr.shape();
  if (!shape.IsArray() || shape.ElementCount() != 1) return std::nullopt;
  if (!IntValue::IsSupportedType(shape.element_type())) return std::nullopt;
  return shape.element_type();
}

IntValue Zero(PrimitiveType type) { return *IntValue::FromBits(type, 0); }

// A scalar integer as a function of the loop state: a constant (`var`
// empty), or loop-state element `var` plus `offset`, both of that element's
// type.
struct Affine {
  std::optional<int64_t> var;
  IntValue offset;
};

// Folds scalar integer expressions of one loop computation (the condition
// or the body, whose parameter is `loop_param`) or of the parent
// computation (loop_param null). Fusion and call parameters read the
// caller's operands; loop-invariant elements read the while's initial
// state `init`.
class Evaluator {
 public:
  Evaluator(const Instruction* loop_param, const Instruction* init,
            const std::vector<bool>* invariant)
      : loop_param_(loop_param), init_(init), invariant_(invariant) {}

  // Element `index` of the loop state reads as the constant `value`.
  void BindCounter(int64_t index, IntValue value) {
    counter_ = std::make_pair(index, value);
  }
  // Evaluation starts inside the computation `caller` calls.
  void PushCaller(const Instruction* caller) { callers_.push_back(caller); }

  std::optional<Affine> Eval(const Instruction& instr) {
    return Visit(&instr, 0);
  }
  // Whether a value that did not fold read a parameter of the entry
  // computation (a value only the caller knows).
  bool read_entry_parameter() const { return read_entry_parameter_; }
  std::optional<IntValue> EvalConstant(const Instruction& instr) {
    std::optional<Affine> a = Eval(instr);
    if (!a.has_value() || a->var.has_value()) return std::nullopt;
    return a->offset;
  }

 private:
  static std::optional<Affine> Const(IntValue v) {
    return Affine{std::nullopt, v};
  }

  std::optional<Affine> Visit(const Instruction* instr, int depth);
  // `instr` read in the parent computation (no loop parameter, no bound
  // counter): a call site's operand, the initial value of an invariant.
  std::optional<Affine> VisitOutside(const Instruction* instr, int depth);
  std::optional<Affine> VisitLoopElement(int64_t index, PrimitiveType type,
                                         int depth);
  std::optional<Affine> VisitCallSites(const Instruction& param,
                                       PrimitiveType type, int depth);
  std::optional<Affine> VisitBinary(const Instruction& instr,
                                    PrimitiveType type, int depth);

  const Instruction* loop_param_;
  const Instruction* init_;
  const std::vector<bool>* invariant_;
  std::optional<std::pair<int64_t, IntValue>> counter_;
  std::vector<const Instruction*> callers_;
  int64_t visits_ = 0;
  bool read_entry_parameter_ = false;
};

std::optional<Affine> Evaluator::Visit(const Instruction* instr, int depth) {
  if (instr == nullptr || depth > kMaxExprDepth || ++visits_ > kMaxVisits) {
    return std::nullopt;
  }
  std::optional<PrimitiveType> type = ScalarIntType(*instr);
  if (!type.has_value()) return std::nullopt;
  auto same_type_operand = [&](int64_t i) -> const Instruction* {
    if (i >= instr->operand_count()) return nullptr;
    const Instruction* op = instr->operand(i);
    std::optional<PrimitiveType> t = ScalarIntType(*op);
    return t == type ? op : nullptr;
  };
  switch (instr->opcode()) {
    case Opcode::kConstant: {
      const Literal* lit = instr->literal();
      if (lit == nullptr) return std::nullopt;
      std::optional<IntValue> v = IntValue::FromLiteral(*lit);
      if (!v.has_value() || v->type() != *type) return std::nullopt;
      return Const(*v);
    }
    case Opcode::kConvert: {
      if (instr->operand_count() != 1) return std::nullopt;
      const Instruction* op = instr->operand(0);
      std::optional<PrimitiveType> from = ScalarIntType(*op);
      if (!from.has_value()) return std::nullopt;
      std::optional<Affine> a = Visit(op, depth + 1);
      if (!a.has_value()) return std::nullopt;
      if (a->var.has_value()) {
        // A converted counter is affine only when nothing changes.
        if (*from != *type) return std::nullopt;
        return a;
      }
      return Const(a->offset.ConvertTo(*type));
    }
    case Opcode::kReshape:
    case Opcode::kBitcast:
    case Opcode::kCopy:
      return Visit(same_type_operand(0), depth + 1);
    case Opcode::kNegate: {
      std::optional<Affine> a = Visit(same_type_operand(0), depth + 1);
      if (!a.has_value() || a->var.has_value()) return std::nullopt;
      return Const(a->offset.Negate());
    }
    case Opcode::kAdd:
    case Opcode::kSubtract:
    case Opcode::kMultiply:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
      return VisitBinary(*instr, *type, depth);
    case Opcode::kGetTupleElement: {
      if (instr->operand_count() != 1) return std::nullopt;
      const Instruction* tuple = instr->operand(0);
      const int64_t index = instr->tuple_index();
      if (tuple == loop_param_ && loop_param_ != nullptr && callers_.empty()) {
        return VisitLoopElement(index, *type, depth);
      }
      if (tuple->opcode() == Opcode::kTuple && index >= 0 &&
          index < tuple->operand_count()) {
        const Instruction* element = tuple->operand(index);
        if (ScalarIntType(*element) != type) return std::nullopt;
        return Visit(element, depth + 1);
      }
      return std::nullopt;
    }
    case Opcode::kParameter: {
      // Inside a fusion or call: the caller's operand.
      if (callers_.empty()) return VisitCallSites(*instr, *type, depth);
      const Instruction* caller = callers_.back();
      const int64_t n = instr->parameter_number();
      if (n < 0 || n >= caller->operand_count() ||
          ScalarIntType(*caller->operand(n)) != type) {
        return std::nullopt;
      }
      callers_.pop_back();
      std::optional<Affine> a = Visit(caller->operand(n), depth + 1);
      callers_.push_back(caller);
      return a;
    }
    case Opcode::kFusion:
    case Opcode::kCall: {
      const Computation* callee = instr->to_apply();
      if (callee == nullptr || callee->root() == nullptr ||
          callers_.size() >= kMaxCallNesting) {
        return std::nullopt;
      }
      callers_.push_back(instr);
      std::optional<Affine> a = Visit(callee->root(), depth + 1);
      callers_.pop_back();
      return a;
    }
    default:
      return std::nullopt;
  }
}

// A parameter of a computation reached without its caller (the start of a
// loop in a called computation): the constant every `call` of the
// computation passes, when all agree and nothing else calls it.
std::optional<Affine> Evaluator::VisitCallSites(const Instruction& param,
                                                PrimitiveType type, int depth) {
  const Computation* comp = param.parent();
  const Module* module = comp != nullptr ? comp->parent() : nullptr;
  if (module == nullptr) return std::nullopt;
  if (comp == module->entry()) {
    read_entry_parameter_ = true;
    return std::nullopt;
  }
  const int64_t n = param.parameter_number();
  std::optional<IntValue> value;
  bool called = false;
  for (const auto& c : module->computations()) {
    for (const auto& caller : c->instructions()) {
      const std::vector<Computation*>& callees = caller->called_computations();
      if (std::find(callees.begin(), callees.end(), comp) == callees.end()) {
        continue;
      }
      // Only plain calls pass their operands as the parameters.
      if (caller->opcode() != Opcode::kCall || callees.size() != 1 || n < 0 ||
          n >= caller->operand_count() ||
          ScalarIntType(*caller->operand(n)) != type) {
        return std::nullopt;
      }
      called = true;
      // The operand, read in the caller's computation.
      std::optional<Affine> a = VisitOutside(caller->operand(n), depth);
      if (!a.has_value() || a->var.has_value() || a->offset.type() != type ||
          (value.has_value() && *value != a->offset)) {
        return std::nullopt;
      }
      value = a->offset;
    }
  }
  if (!called || !value.has_value()) return std::nullopt;
  return Const(*value);
}

std::optional<Affine> Evaluator::VisitOutside(const Instruction* instr,
                                              int depth) {
  const Instruction* saved_param = loop_param_;
  auto saved_counter = counter_;
  loop_param_ = nullptr;
  counter_.reset();
  std::optional<Affine> a = Visit(instr, depth + 1);
  loop_param_ = saved_param;
  counter_ = saved_counter;
  return a;
}

std::optional<Affine> Evaluator::VisitLoopElement(int64_t index,
                                                  PrimitiveType type,
                                                  int depth) {
  if (counter_.has_value() && counter_->first == index) {
    if (counter_->second.type() != type) return std::nullopt;
    return Const(counter_->second);
  }
  const bool invariant = invariant_ != nullptr && index >= 0 &&
                         index < static_cast<int64_t>(invariant_->size()) &&
                         (*invariant_)[index];
  if (!invariant) return Affine{index, Zero(type)};
  // The same value in every iteration: the initial one, read in the parent
  // computation.
  if (init_ == nullptr || init_->opcode() != Opcode::kTuple ||
      index >= init_->operand_count()) {
    return std::nullopt;
  }
  std::optional<Affine> a = VisitOutside(init_->operand(index), depth);
  if (!a.has_value() || a->var.has_value() || a->offset.type() != type) {
    return std::nullopt;
  }
  return a;
}

std::optional<Affine> Evaluator::VisitBinary(const Instruction& instr,
                                             PrimitiveType type, int depth) {
  if (instr.operand_count() != 2) return std::nullopt;
  for (const Instruction* op : instr.operands()) {
    if (ScalarIntType(*op) != type) return std::nullopt;
  }
  const Opcode opcode = instr.opcode();
  std::optional<Affine> a = Visit(instr.operand(0), depth + 1);
  auto is_zero = [](const std::optional<Affine>& x) {
    return x.has_value() && !x->var.has_value() && x->offset.IsZero();
  };
  // x * 0 = 0 whatever x is (partition-id, a parameter, ...).
  if (opcode == Opcode::kMultiply && is_zero(a)) return Const(Zero(type));
  std::optional<Affine> b = Visit(instr.operand(1), depth + 1);
  if (opcode == Opcode::kMultiply && is_zero(b)) return Const(Zero(type));
  if (!a.has_value() || !b.has_value()) return std::nullopt;
  if (a->var.has_value() && b->var.has_value()) return std::nullopt;
  const bool has_var = a->var.has_value() || b->var.has_value();
  const std::optional<int64_t> var = a->var.has_value() ? a->var : b->var;
  switch (opcode) {
    case Opcode::kAdd:
      return Affine{var, a->offset.Add(b->offset)};
    case Opcode::kSubtract:
      if (b->var.has_value()) return std::nullopt;  // c - x
      return Affine{var, a->offset.Subtract(b->offset)};
    case Opcode::kMultiply: {
      if (!has_var) return Const(a->offset.Multiply(b->offset));
      // x * 1 only: other factors scale the counter.
      const Affine& c = a->var.has_value() ? *b : *a;
      const Affine& x = a->var.has_value() ? *a : *b;
      if (c.offset != *IntValue::FromBits(type, 1) || !x.offset.IsZero()) {
        return std::nullopt;
      }
      return x;
    }
    case Opcode::kMaximum:
    case Opcode::kMinimum: {
      if (has_var) return std::nullopt;
      const bool a_less =
          IntValue::Compare(ComparisonDirection::kLt, a->offset, b->offset);
      const bool take_a = opcode == Opcode::kMaximum ? !a_less : a_less;
      return Const(take_a ? a->offset : b->offset);
    }
    default:
      return std::nullopt;
  }
}

ComparisonDirection Flip(ComparisonDirection d) {
  switch (d) {
    case ComparisonDirection::kLt:
      return ComparisonDirection::kGt;
    case ComparisonDirection::kLe:
      return ComparisonDirection::kGe;
    case ComparisonDirection::kGt:
      return ComparisonDirection::kLt;
    case ComparisonDirection::kGe:
      return ComparisonDirection::kLe;
    default:
      return d;
  }
}

// Whether an integer compare's `type=` attribute (if any) agrees with the
// element type's signedness; HLO's verifier requires it.
bool ComparisonTypeMatches(const Instruction& cmp, PrimitiveType type) {
  const std::string& t = cmp.attrs().comparison_type;
  if (t.empty()) return true;
  return IsSignedIntegralType(type) ? t == "SIGNED" : t == "UNSIGNED";
}

// no_wrap / counts_down of a counter that runs n iterations: whether
// start + t*step stays inside the type for every t < n moving up (step read
// as s) or down (read as s - 2^width); in the type's order the ordinal of
// the start moves by exactly that much.
void SetMonotonicity(int64_t n, WhileLoopInfo& info) {
  const u128 m = static_cast<u128>(1) << info.start->width();
  const u128 origin = info.start->Ordinal();
  const u128 s = info.step->bits();
  const u128 last = n > 0 ? static_cast<u128>(n - 1) : 0;
  if (n <= 1) {
    info.no_wrap = true;
    info.counts_down = s >= m / 2;
  } else if (origin + last * s < m) {
    info.no_wrap = true;
  } else if (last * (m - s) <= origin) {
    info.no_wrap = true;
    info.counts_down = true;
  }
}

// The entry parameter `x` is, directly or through parameters of
// computations that a single `call` calls; null otherwise.
const Instruction* EntryParameterOf(const Instruction* x) {
  for (int hops = 0; x != nullptr && hops < kMaxCallNesting; ++hops) {
    if (x->opcode() != Opcode::kParameter) return nullptr;
    const Computation* comp = x->parent();
    const Module* module = comp != nullptr ? comp->parent() : nullptr;
    if (module == nullptr) return nullptr;
    if (comp == module->entry()) return x;
    const Instruction* site = nullptr;
    for (const auto& c : module->computations()) {
      for (const auto& caller : c->instructions()) {
        const std::vector<Computation*>& callees =
            caller->called_computations();
        if (std::find(callees.begin(), callees.end(), comp) == callees.end()) {
          continue;
        }
        if (site != nullptr || caller->opcode() != Opcode::kCall) {
          return nullptr;
        }
        site = caller.get();
      }
    }
    const int64_t n = x->parameter_number();
    if (site == nullptr || n < 0 || n >= site->operand_count()) return nullptr;
    x = site->operand(n);
  }
  return nullptr;
}

}  // namespace

std::optional<uint64_t> CountTrips(const IntValue& start, const IntValue& step,
                                   ComparisonDirection direction,
                                   const IntValue& bound, std::string* why);

namespace {

// A start from which `x + offset DIR bound; x += step` runs `n` times:
// bound - offset - n * step, or a neighbour (LE / GE / NE end one off).
std::optional<IntValue> PromisedStart(const IntValue& step,
                                      const Affine& offset, const Affine& bound,
                                      ComparisonDirection dir, int64_t n) {
  if (n < 0 || step.type() != offset.offset.type() ||
      step.type() != bound.offset.type()) {
    return std::nullopt;
  }
  const IntValue base = bound.offset.Subtract(offset.offset)
                            .Subtract(step.Times(static_cast<uint64_t>(n)));
  const IntValue one = *IntValue::FromBits(step.type(), 1);
  for (const IntValue& s : {base, base.Add(one), base.Subtract(one),
                            base.Add(step), base.Subtract(step)}) {
    std::string why;
    std::optional<uint64_t> t =
        CountTrips(s.Add(offset.offset), step, dir, bound.offset, &why);
    if (t.has_value() && *t == static_cast<uint64_t>(n)) return s;
  }
  return std::nullopt;
}

std::string TypeName(PrimitiveType type) {
  return std::string(PrimitiveTypeName(type));
}

}  // namespace

std::optional<uint64_t> CountTrips(const IntValue& start, const IntValue& step,
                                   ComparisonDirection direction,
                                   const IntValue& bound, std::string* why) {
  if (start.type() != step.type() || start.type() != bound.type()) {
    *why = "the counter, its step and its bound have different types";
    return std::nullopt;
  }
  if (!IntValue::Compare(direction, start, bound)) return 0;
  const uint64_t b = bound.Ordinal();
  const uint64_t top = IntValue::Max(start.type()).Ordinal();
  // The values that end the loop, as an interval of ordinals (positions in
  // the type's order).
  uint64_t lo = 0, hi = top;
  switch (direction) {
    case ComparisonDirection::kEq:
      // Holds at the start only; any non-zero step leaves it.
      if (step.IsZero()) break;
      return 1;
    case ComparisonDirection::kNe:
      lo = hi = b;
      break;
    case ComparisonDirection::kLt:
      lo = b;
      break;
    case ComparisonDirection::kLe:
      if (b == top) {
        *why = absl::StrCat("x <= ", bound.ToString(), " holds for every ",
                            TypeName(start.type()),
                            " value (the loop never ends)");
        return std::nullopt;
      }
      lo = b + 1;
      break;
    case ComparisonDirection::kGt:
      hi = b;
      break;
    case ComparisonDirection::kGe:
      if (b == 0) {
        *why = absl::StrCat("x >= ", bound.ToString(), " holds for every ",
                            TypeName(start.type()),
                            " value (the loop never ends)");
        return std::nullopt;
      }
      hi = b - 1;
      break;
  }
  if (step.IsZero()) {
    *why = "the induction variable has step 0 (the loop never ends)";
    return std::nullopt;
  }
  std::optional<uint64_t> k =
      FirstInInterval(start.width(), start.Ordinal(), step.bits(), lo, hi);
  if (!k.has_value()) {
    *why = direction == ComparisonDirection::kNe
               ? "the induction variable never equals the NE bound (the loop "
                 "never ends)"
               : absl::StrCat("the induction variable cycles through ",
                              TypeName(start.type()),
                              " values that all satisfy the condition (the "
                              "loop never ends)");
    return std::nullopt;
  }
  return k;
}

std::optional<IntValue> WhileLoopInfo::IvAt(int64_t t) const {
  if (!start.has_value() || !step.has_value() || t < 0) return std::nullopt;
  return start->Add(step->Times(static_cast<uint64_t>(t)));
}

std::optional<IntValue> WhileLoopInfo::StepTimes(int64_t k) const {
  if (!step.has_value()) return std::nullopt;
  // A negative k multiplies by its value modulo 2^64, which is what k
  // wraps to at any width.
  return step->Times(static_cast<uint64_t>(k));
}

std::optional<IntValue> WhileLoopInfo::CounterConstant(int64_t value) const {
  return IntValue::FromInt64(iv_type, value);
}

std::optional<KnownInitStep> WhileLoopInfo::KnownInitStepFrom(
    int64_t first, int64_t step_multiple) const {
  std::optional<IntValue> init = IvAt(first);
  std::optional<IntValue> step_k = StepTimes(step_multiple);
  if (!init.has_value() || !step_k.has_value()) return std::nullopt;
  std::optional<int64_t> i = init->ToInt64();
  std::optional<int64_t> st = step_k->ToInt64();
  if (!i.has_value() || !st.has_value()) return std::nullopt;
  return KnownInitStep{*i, *st};
}

std::string WhileLoopInfo::TripCountOrigin() const {
  if (trip_count_source != TripCountSource::kKnownTripCount) return "";
  if (unchecked.empty()) return "from known_trip_count";
  return absl::StrCat("from known_trip_count, not checked: ", unchecked);
}

std::string WhileLoopInfo::WrapReason() const {
  if (!trip_count_proven()) {
    return missing.empty() ? "the trip count is not proven" : missing;
  }
  if (no_wrap) return "";
  return absl::StrCat(
      "the ", TypeName(iv_type), " induction variable wraps around (from ",
      start.has_value() ? start->ToString() : "?", " by ",
      step.has_value() ? step->ToSigned().ToString() : "?",
      " it leaves the type's range [", IntValue::Min(iv_type).ToString(), ", ",
      IntValue::Max(iv_type).ToString(), "] before its ",
      trip_count.value_or(0), " iterations end)");
}

std::optional<IntValue> EvaluateConstantScalar(const Instruction& instr) {
  Evaluator evaluator(nullptr, nullptr, nullptr);
  return evaluator.EvalConstant(instr);
}

std::optional<IntValue> EvaluateInIteration(const Instruction& x,
                                            const WhileLoopInfo& info,
                                            int64_t t) {
  const Instruction* w = info.while_instr;
  std::optional<IntValue> iv = info.IvAt(t);
  if (w == nullptr || !iv.has_value() || !info.iv_index.has_value() ||
      w->called_computations().size() != 2 || w->operand_count() != 1) {
    return std::nullopt;
  }
  const Computation* body = w->while_body();
  if (body == nullptr || body->num_parameters() != 1) return std::nullopt;
  Evaluator evaluator(body->parameter(0), w->operand(0), &info.invariant_index);
  evaluator.BindCounter(*info.iv_index, *iv);
  return evaluator.EvalConstant(x);
}

namespace {

// Not analysable: known_trip_count, XLA's promise, is all there is.
WhileLoopInfo Unanalysable(WhileLoopInfo& info, std::string why) {
  info.missing = std::move(why);
  info.iv_index.reset();
  info.start.reset();
  info.step.reset();
  info.bound.reset();
  info.condition_offset.reset();
  info.iv_type = PrimitiveType::kInvalid;
  info.iv_update = nullptr;
  if (info.known_trip_count.has_value()) {
    info.trip_count = info.known_trip_count;
    info.trip_count_source = TripCountSource::kKnownTripCount;
  }
  return info;
}

// A condition that does not read the loop state (`lhs` DIR `rhs`, both
// constants): it never changes.
WhileLoopInfo ConstantCondition(WhileLoopInfo& info, ComparisonDirection dir,
                                const IntValue& lhs, const IntValue& rhs) {
  if (lhs.type() != rhs.type()) {
    return Unanalysable(info,
                        "the condition compares values of different types");
  }
  if (!IntValue::Compare(dir, lhs, rhs)) {
    info.trip_count = 0;
    info.trip_count_source = TripCountSource::kProven;
    info.no_wrap = true;
  } else {
    info.missing = "the condition is always true (the loop never ends)";
  }
  if (info.known_trip_count.has_value() &&
      info.trip_count != info.known_trip_count) {
    info.contradiction = absl::StrCat(
        "known_trip_count ", *info.known_trip_count,
        " contradicts the loop condition, which ",
        info.trip_count.has_value() ? "is always false (0 iterations)"
                                    : "is always true (the loop never ends)");
  }
  return info;
}

// Why the body's `update` of element k is not gte(param, k) + a constant.
std::string StepFailure(const Instruction& update,
                        const Instruction* body_param, int64_t k) {
  if ((update.opcode() == Opcode::kAdd ||
       update.opcode() == Opcode::kSubtract) &&
      update.operand_count() == 2) {
    for (int side = 0; side < 2; ++side) {
      if (IsGteOf(update.operand(side), body_param, k) &&
          (side == 0 || update.opcode() == Opcode::kAdd)) {
        return absl::StrCat("the step of the induction variable (",
                            update.operand(1 - side)->name(),
                            ") is not a constant");
      }
    }
  }
  return absl::StrCat(
      "tuple element ", k,
      " is compared in the condition but the body does not update it by "
      "adding or subtracting a step");
}

// The trip count from the induction variable `info` holds (index, type,
// start, step, bound, condition offset, direction), with its
// contradiction of known_trip_count and its monotonicity.
void CountTripsOf(WhileLoopInfo& info) {
  const IntValue& start = *info.start;
  const IntValue& offset = *info.condition_offset;
  const ComparisonDirection dir = info.direction;
  // The condition reads y = x + offset, which moves by the same step.
  std::string why;
  std::optional<uint64_t> trips =
      CountTrips(start.Add(offset), *info.step, dir, *info.bound, &why);
  if (trips.has_value() && *trips > static_cast<uint64_t>(INT64_MAX)) {
    why = absl::StrCat("the loop runs ", *trips,
                       " times, more than a 64-bit count holds");
    trips.reset();
  }
  auto facts = [&] {
    std::string plus =
        offset.IsZero() ? "" : absl::StrCat(" + ", offset.ToString());
    return absl::StrCat(TypeName(info.iv_type), " induction variable #",
                        *info.iv_index, ": start ", start.ToString(), ", step ",
                        info.step->ToSigned().ToString(), ", condition x", plus,
                        " ", AsAbsl(ComparisonDirectionName(dir)), " ",
                        info.bound->ToString());
  };
  if (!trips.has_value()) {
    info.missing = why;
    if (info.known_trip_count.has_value()) {
      info.contradiction = absl::StrCat(
          "known_trip_count ", *info.known_trip_count,
          " contradicts the loop condition (", facts(), "): ", why);
    }
    return;
  }
  const int64_t n = static_cast<int64_t>(*trips);
  info.trip_count = n;
  info.trip_count_source = TripCountSource::kProven;
  if (info.known_trip_count.has_value() && *info.known_trip_count != n) {
    info.contradiction = absl::StrCat(
        "known_trip_count ", *info.known_trip_count,
        " contradicts the loop condition, which proves ", n, " iteration",
        n == 1 ? "" : "s", " (", facts(), "); using ", n);
  }
  SetMonotonicity(n, info);
}

}  // namespace

WhileLoopInfo AnalyzeWhileLoop(const Instruction& while_instr) {
  WhileLoopInfo info;
  info.while_instr = &while_instr;
  if (while_instr.opcode() == Opcode::kWhile) {
    info.known_trip_count =
        while_instr.attrs().while_config->known_trip_count();
  }
  auto fail = [&](std::string why) {
    return Unanalysable(info, std::move(why));
  };
  if (while_instr.opcode() != Opcode::kWhile ||
      while_instr.called_computations().size() != 2 ||
      while_instr.operand_count() != 1) {
    return fail("not a well-formed while instruction");
  }
  const Computation* cond = while_instr.while_condition();
  const Computation* body = while_instr.while_body();
  if (cond == nullptr || body == nullptr) {
    return fail("missing condition or body");
  }
  const Shape& state = while_instr.shape();
  if (!state.IsTuple()) return fail("the loop state is not a tuple");
  info.tuple_size = state.tuple_size();
  info.invariant_index.assign(info.tuple_size, false);
  if (body->num_parameters() != 1 || body->parameter(0) == nullptr ||
      cond->num_parameters() != 1 || cond->parameter(0) == nullptr) {
    return fail("condition or body does not take exactly one parameter");
  }
  const Instruction* body_param = body->parameter(0);
  const Instruction* cond_param = cond->parameter(0);
  const Instruction* root = body->root();
  if (root == nullptr || root->opcode() != Opcode::kTuple ||
      root->operand_count() != info.tuple_size) {
    return fail("the body root is not a tuple of the loop state");
  }
  for (int64_t i = 0; i < info.tuple_size; ++i) {
    info.invariant_index[i] = IsGteOf(root->operand(i), body_param, i);
  }
  const Instruction* init = while_instr.operand(0);

  // Condition: compare(f(gte(param, k)), bound) in either order, possibly
  // inside fusions (XLA's loop_compare_fusion).
  Evaluator cond_eval(cond_param, init, &info.invariant_index);
  const Instruction* cmp = cond->root();
  for (int n = 0;
       cmp != nullptr &&
       (cmp->opcode() == Opcode::kFusion || cmp->opcode() == Opcode::kCall) &&
       cmp->to_apply() != nullptr && n < kMaxCallNesting;
       ++n) {
    cond_eval.PushCaller(cmp);
    cmp = cmp->to_apply()->root();
  }
  if (cmp == nullptr || cmp->opcode() != Opcode::kCompare ||
      cmp->operand_count() != 2) {
    return fail("the condition root is not a compare");
  }
  ComparisonDirection dir = cmp->attrs().comparison_direction;
  std::optional<Affine> lhs = cond_eval.Eval(*cmp->operand(0));
  std::optional<Affine> rhs = cond_eval.Eval(*cmp->operand(1));
  const bool lhs_var = lhs.has_value() && lhs->var.has_value();
  const bool rhs_var = rhs.has_value() && rhs->var.has_value();
  if (lhs.has_value() && rhs.has_value() && !lhs_var && !rhs_var) {
    return ConstantCondition(info, dir, lhs->offset, rhs->offset);
  }
  if (lhs_var && rhs_var) {
    return fail("the condition compares two loop-carried tuple elements");
  }
  if (!lhs_var && !rhs_var) {
    return fail(
        "the condition does not compare a loop-carried tuple element with a "
        "bound");
  }
  if (rhs_var) {
    std::swap(lhs, rhs);
    dir = Flip(dir);
  }
  const Instruction* bound_instr = cmp->operand(lhs_var ? 1 : 0);
  const int64_t k = *lhs->var;
  if (k < 0 || k >= info.tuple_size) {
    return fail("the condition reads a tuple element out of range");
  }
  const Shape& iv_shape = state.tuple_shapes(k);
  if (!iv_shape.IsScalar() ||
      !IntValue::IsSupportedType(iv_shape.element_type())) {
    return fail(absl::StrCat("the induction variable (tuple index ", k,
                             ") is not an integer scalar"));
  }
  const PrimitiveType iv_type = iv_shape.element_type();
  if (!rhs.has_value()) {
    info = fail(absl::StrCat("the loop bound (", bound_instr->name(),
                             ") is not a constant: data-dependent trip count"));
    if (cond_eval.read_entry_parameter() &&
        info.trip_count_source == TripCountSource::kKnownTripCount) {
      info.unchecked = "the bound is a parameter";
    }
    return info;
  }
  if (lhs->offset.type() != iv_type || rhs->offset.type() != iv_type ||
      !ComparisonTypeMatches(*cmp, iv_type)) {
    return fail(absl::StrCat("the condition does not compare the ",
                             TypeName(iv_type),
                             " induction variable in its own type"));
  }

  // Body update: root operand k = gte(param, k) + STEP.
  const Instruction* update = root->operand(k);
  Evaluator body_eval(body_param, init, &info.invariant_index);
  std::optional<Affine> next = body_eval.Eval(*update);
  if (!next.has_value() || next->var != k || next->offset.type() != iv_type) {
    return fail(StepFailure(*update, body_param, k));
  }
  if (init->opcode() != Opcode::kTuple || k >= init->operand_count()) {
    return fail(
        "the initial loop state is not a tuple instruction, so the start "
        "value is unknown");
  }
  Evaluator parent_eval(nullptr, nullptr, nullptr);
  std::optional<IntValue> start = parent_eval.EvalConstant(*init->operand(k));
  if (!start.has_value() || start->type() != iv_type) {
    info = fail(absl::StrCat("the start value of the induction variable (",
                             init->operand(k)->name(), ") is not a constant"));
    // XLA's promise is all there is: the caller chooses the start.
    if (parent_eval.read_entry_parameter() &&
        info.trip_count_source == TripCountSource::kKnownTripCount) {
      info.unchecked = "the start is a parameter";
      info.start_parameter = EntryParameterOf(init->operand(k));
      if (info.start_parameter != nullptr &&
          ScalarIntType(*info.start_parameter) == iv_type) {
        info.promised_start =
            PromisedStart(next->offset, *lhs, *rhs, dir, *info.trip_count);
      }
    }
    return info;
  }

  info.iv_index = k;
  info.iv_type = iv_type;
  info.start = *start;
  info.step = next->offset;
  info.bound = rhs->offset;
  info.condition_offset = lhs->offset;
  info.direction = dir;
  info.iv_update = update;
  CountTripsOf(info);
  return info;
}

std::vector<PromisedParameter> PromisedEntryParameters(const Module& module) {
  std::vector<PromisedParameter> out;
  std::vector<int64_t> conflicting;
  for (const auto& c : module.computations()) {
    for (const auto& instr : c->instructions()) {
      if (instr->opcode() != Opcode::kWhile) continue;
      WhileLoopInfo info = AnalyzeWhileLoop(*instr);
      if (info.start_parameter == nullptr || !info.promised_start.has_value()) {
        continue;
      }
      std::optional<int64_t> v = info.promised_start->ToInt64();
      if (!v.has_value()) continue;
      const int64_t n = info.start_parameter->parameter_number();
      auto it = std::find_if(out.begin(), out.end(), [&](const auto& p) {
        return p.parameter_number == n;
      });
      if (it != out.end()) {
        if (it->value != *v) conflicting.push_back(n);
        continue;
      }
      out.push_back(PromisedParameter{
          n, info.start_parameter->shape().element_type(), *v,
          absl::StrCat("parameter ", n, " is ", *v,
                       " on every device: the loop ", instr->name(),
                       " (computation ", c->name(), ") runs its ",
                       "known_trip_count ", info.trip_count.value_or(0),
                       " from it, and the count is not checked (",
                       info.unchecked, ")")});
    }
  }
  out.erase(std::remove_if(
                out.begin(), out.end(),
                [&](const PromisedParameter& p) {
                  return std::find(conflicting.begin(), conflicting.end(),
                                   p.parameter_number) != conflicting.end();
                }),
            out.end());
  return out;
}

std::optional<int64_t> WhileTripCount(const Instruction& while_instr) {
  if (while_instr.opcode() != Opcode::kWhile) return std::nullopt;
  return AnalyzeWhileLoop(while_instr).trip_count;
}

absl::flat_hash_set<const Instruction*> FindLoopInvariantInstructions(
    const Computation& body, const std::vector<bool>& invariant_index) {
  absl::flat_hash_set<const Instruction*> inv;
  const Instruction* param =
      body.num_parameters() == 1 ? body.parameter(0) : nullptr;
  for (Instruction* inst : body.MakeInstructionPostOrder()) {
    switch (inst->opcode()) {
      case Opcode::kConstant:
      case Opcode::kIota:
      case Opcode::kPartitionId:
      case Opcode::kReplicaId:
        inv.insert(inst);
        continue;
      case Opcode::kGetTupleElement: {
        int64_t idx = inst->tuple_index();
        if (inst->operand(0) == param && idx >= 0 &&
            idx < static_cast<int64_t>(invariant_index.size()) &&
            invariant_index[idx]) {
          inv.insert(inst);
          continue;
        }
        break;
      }
      case Opcode::kParameter:
      case Opcode::kRng:
      case Opcode::kRngBitGenerator:
      case Opcode::kRngGetAndUpdateState:
      case Opcode::kCustomCall:
      case Opcode::kInfeed:
      case Opcode::kOutfeed:
      case Opcode::kSend:
      case Opcode::kRecv:
      case Opcode::kWhile:
        continue;
      default:
        break;
    }
    if (IsCollective(inst->opcode()) || IsAsyncStart(inst->opcode()) ||
        IsAsyncDone(inst->opcode()) || inst->opcode() == Opcode::kAsyncUpdate ||
        inst->operand_count() == 0) {
      continue;
    }
    bool all = true;
    for (Instruction* op : inst->operands()) {
      if (!inv.contains(op)) {
        all = false;
        break;
      }
    }
    if (all) inv.insert(inst);
  }
  return inv;
}

}  // namespace hloverlap
