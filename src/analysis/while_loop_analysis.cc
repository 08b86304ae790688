#include "analysis/while_loop_analysis.h"

#include <charconv>
#include <limits>

#include "absl/strings/str_cat.h"

namespace hloverlap {
namespace {

constexpr int kMaxExprDepth = 16;

std::optional<int64_t> EvalScalar(const Instruction& instr, int depth) {
  if (depth > kMaxExprDepth) return std::nullopt;
  const Shape& shape = instr.shape();
  if (!shape.IsArray() || shape.ElementCount() != 1) return std::nullopt;
  if (!IsIntegralType(shape.element_type())) return std::nullopt;
  auto operand = [&](int64_t i) -> std::optional<int64_t> {
    if (i >= instr.operand_count()) return std::nullopt;
    return EvalScalar(*instr.operand(i), depth + 1);
  };
  switch (instr.opcode()) {
    case Opcode::kConstant: {
      const Literal* lit = instr.literal();
      if (lit == nullptr || lit->elided() || lit->data().empty()) {
        return std::nullopt;
      }
      return lit->GetAsInt64(0);
    }
    case Opcode::kConvert:
    case Opcode::kReshape:
    case Opcode::kBitcast:
    case Opcode::kCopy:
      if (!IsIntegralType(instr.operand(0)->shape().element_type())) {
        return std::nullopt;
      }
      return operand(0);
    case Opcode::kNegate: {
      auto a = operand(0);
      if (!a || *a == std::numeric_limits<int64_t>::min()) return std::nullopt;
      return -*a;
    }
    case Opcode::kAdd:
    case Opcode::kSubtract:
    case Opcode::kMultiply: {
      auto a = operand(0);
      auto b = operand(1);
      if (!a || !b) return std::nullopt;
      int64_t r;
      bool overflow = instr.opcode() == Opcode::kAdd
                          ? __builtin_add_overflow(*a, *b, &r)
                      : instr.opcode() == Opcode::kSubtract
                          ? __builtin_sub_overflow(*a, *b, &r)
                          : __builtin_mul_overflow(*a, *b, &r);
      if (overflow) return std::nullopt;
      return r;
    }
    default:
      return std::nullopt;
  }
}

bool IsGteOf(const Instruction* instr, const Instruction* tuple,
             int64_t* index) {
  if (instr->opcode() != Opcode::kGetTupleElement) return false;
  if (instr->operand_count() != 1 || instr->operand(0) != tuple) return false;
  *index = instr->tuple_index();
  return true;
}

// Value of a condition/body operand that is either a constant scalar or a
// get-tuple-element of an invariant index whose initial value is constant.
std::optional<int64_t> ResolveScalar(const Instruction& instr,
                                     const Instruction* param,
                                     const WhileLoopInfo& info,
                                     const Instruction* init) {
  if (auto v = EvaluateConstantScalar(instr)) return v;
  int64_t index;
  const Instruction* cur = &instr;
  // Look through one convert.
  if (cur->opcode() == Opcode::kConvert && cur->operand_count() == 1) {
    cur = cur->operand(0);
  }
  if (!IsGteOf(cur, param, &index)) return std::nullopt;
  if (index < 0 || index >= info.tuple_size || !info.invariant_index[index]) {
    return std::nullopt;
  }
  if (init->opcode() != Opcode::kTuple || index >= init->operand_count()) {
    return std::nullopt;
  }
  return EvaluateConstantScalar(*init->operand(index));
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

// Iterations of `for (iv = start; iv DIR bound; iv += step)`, or nullopt
// when infinite or not representable.
std::optional<int64_t> CountIterations(int64_t start, int64_t step,
                                       int64_t bound, ComparisonDirection dir,
                                       std::string* why) {
  __int128 s = start, st = step, b = bound;
  auto holds = [&](__int128 v) {
    switch (dir) {
      case ComparisonDirection::kLt:
        return v < b;
      case ComparisonDirection::kLe:
        return v <= b;
      case ComparisonDirection::kGt:
        return v > b;
      case ComparisonDirection::kGe:
        return v >= b;
      case ComparisonDirection::kNe:
        return v != b;
      case ComparisonDirection::kEq:
        return v == b;
    }
    return false;
  };
  if (!holds(s)) return 0;
  if (step == 0) {
    *why = "the induction variable has step 0 (the loop never ends)";
    return std::nullopt;
  }
  __int128 n;
  switch (dir) {
    case ComparisonDirection::kLt:
    case ComparisonDirection::kLe: {
      if (step < 0) {
        *why = "the induction variable moves away from the bound";
        return std::nullopt;
      }
      __int128 limit = dir == ComparisonDirection::kLt ? b - 1 : b;
      n = (limit - s) / st + 1;
      break;
    }
    case ComparisonDirection::kGt:
    case ComparisonDirection::kGe: {
      if (step > 0) {
        *why = "the induction variable moves away from the bound";
        return std::nullopt;
      }
      __int128 limit = dir == ComparisonDirection::kGt ? b + 1 : b;
      n = (s - limit) / (-st) + 1;
      break;
    }
    case ComparisonDirection::kNe: {
      __int128 diff = b - s;
      if (diff % st != 0 || diff / st < 0) {
        *why = "the induction variable never equals the NE bound";
        return std::nullopt;
      }
      n = diff / st;
      break;
    }
    case ComparisonDirection::kEq:
      n = 1;  // iv == bound holds once, then iv moves on (step != 0)
      break;
  }
  if (n < 0 || n > std::numeric_limits<int32_t>::max()) {
    *why = "the trip count is out of range";
    return std::nullopt;
  }
  return static_cast<int64_t>(n);
}

}  // namespace

std::optional<int64_t> EvaluateConstantScalar(const Instruction& instr) {
  return EvalScalar(instr, 0);
}

std::optional<int64_t> KnownTripCountFromBackendConfig(
    const Instruction& while_instr) {
  const std::string& bc = while_instr.attrs().backend_config;
  size_t key = bc.find("\"known_trip_count\"");
  if (key == std::string::npos) return std::nullopt;
  size_t n = bc.find("\"n\"", key);
  if (n == std::string::npos) return std::nullopt;
  size_t colon = bc.find(':', n);
  if (colon == std::string::npos) return std::nullopt;
  size_t pos = colon + 1;
  while (pos < bc.size() && (bc[pos] == ' ' || bc[pos] == '"')) ++pos;
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(bc.data() + pos, bc.data() + bc.size(), v);
  if (ec != std::errc() || v < 0) return std::nullopt;
  return v;
}

WhileLoopInfo AnalyzeWhileLoop(const Instruction& while_instr) {
  WhileLoopInfo info;
  info.while_instr = &while_instr;
  auto fail = [&](std::string why) {
    info.missing = std::move(why);
    info.iv_index.reset();
    info.start.reset();
    info.step.reset();
    info.bound.reset();
    info.iv_update = nullptr;
    if (auto n = KnownTripCountFromBackendConfig(while_instr)) {
      info.trip_count = n;
      info.trip_count_from_backend_config = true;
    }
    return info;
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
    int64_t idx;
    info.invariant_index[i] =
        IsGteOf(root->operand(i), body_param, &idx) && idx == i;
  }
  const Instruction* init = while_instr.operand(0);

  // Condition: compare(gte(param, k), bound) in either order.
  const Instruction* cmp = cond->root();
  if (cmp == nullptr || cmp->opcode() != Opcode::kCompare ||
      cmp->operand_count() != 2) {
    return fail("the condition root is not a compare");
  }
  ComparisonDirection dir = cmp->attrs().comparison_direction;
  int64_t k = -1;
  const Instruction* bound_instr = nullptr;
  for (int side = 0; side < 2; ++side) {
    const Instruction* a = cmp->operand(side);
    int64_t idx;
    if (IsGteOf(a, cond_param, &idx) && idx >= 0 && idx < info.tuple_size &&
        !info.invariant_index[idx]) {
      k = idx;
      bound_instr = cmp->operand(1 - side);
      if (side == 1) dir = Flip(dir);
      break;
    }
  }
  if (k < 0) {
    return fail(
        "the condition does not compare a loop-carried tuple element with a "
        "bound");
  }
  const Shape& iv_shape = state.tuple_shapes(k);
  if (!iv_shape.IsScalar() || !IsIntegralType(iv_shape.element_type())) {
    return fail(absl::StrCat("the induction variable (tuple index ", k,
                             ") is not an integer scalar"));
  }
  // Body update: add(gte(p,k), step), add(step, gte(p,k)), sub(gte(p,k), s).
  const Instruction* update = root->operand(k);
  int64_t step_sign = 1;
  const Instruction* step_instr = nullptr;
  if ((update->opcode() == Opcode::kAdd ||
       update->opcode() == Opcode::kSubtract) &&
      update->operand_count() == 2) {
    int64_t idx;
    if (IsGteOf(update->operand(0), body_param, &idx) && idx == k) {
      step_instr = update->operand(1);
      step_sign = update->opcode() == Opcode::kSubtract ? -1 : 1;
    } else if (update->opcode() == Opcode::kAdd &&
               IsGteOf(update->operand(1), body_param, &idx) && idx == k) {
      step_instr = update->operand(0);
    }
  }
  if (step_instr == nullptr) {
    return fail(absl::StrCat(
        "tuple element ", k,
        " is compared in the condition but the body does not update it by "
        "adding or subtracting a step"));
  }
  auto step = ResolveScalar(*step_instr, body_param, info, init);
  if (!step) {
    return fail(absl::StrCat("the step of the induction variable (",
                             step_instr->name(), ") is not a constant"));
  }
  auto bound = ResolveScalar(*bound_instr, cond_param, info, init);
  if (!bound) {
    return fail(absl::StrCat("the loop bound (", bound_instr->name(),
                             ") is not a constant: data-dependent trip count"));
  }
  if (init->opcode() != Opcode::kTuple || k >= init->operand_count()) {
    return fail(
        "the initial loop state is not a tuple instruction, so the start "
        "value is unknown");
  }
  auto start = EvaluateConstantScalar(*init->operand(k));
  if (!start) {
    return fail(absl::StrCat("the start value of the induction variable (",
                             init->operand(k)->name(), ") is not a constant"));
  }
  info.iv_index = k;
  info.start = *start;
  info.step = step_sign * *step;
  info.bound = *bound;
  info.direction = dir;
  info.iv_type = iv_shape.element_type();
  info.iv_update = update;
  std::string why;
  info.trip_count = CountIterations(*start, *info.step, *bound, dir, &why);
  if (!info.trip_count) {
    info.missing = why;
    if (auto n = KnownTripCountFromBackendConfig(while_instr)) {
      info.trip_count = n;
      info.trip_count_from_backend_config = true;
    }
  }
  return info;
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
