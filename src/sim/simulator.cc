// Timeline simulator (see the header): trip counts and Simulate.
#include "sim/simulator.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "analysis/module_summary.h"
#include "analysis/while_loop_analysis.h"
#include "hlo/computation.h"
#include "hlo/instruction.h"
#include "nlohmann/json.hpp"
#include "sim/liveness.h"
#include "sim/timeline.h"

namespace hloverlap {

namespace {

// --- Trip counts through fusions ---------------------------------------------
//
// XLA's final dumps compute the loop condition and the counter update in
// fusions (`loop_compare_fusion(%param#0)`, `loop_add_fusion(%copy)`), which
// the while-loop analysis does not look into. Values here are `iv + c` or a
// constant `c`, followed through copies, bitcasts, converts, add/subtract
// and fusions (a fused parameter is the fusion's operand).
struct Affine {
  bool has_iv = false;
  int64_t c = 0;
};

class TripCounter {
 public:
  TripCounter(const Instruction& w, int64_t iv_index)
      : while_(w), iv_index_(iv_index) {}

  std::optional<int64_t> Count() {
    const Instruction* init =
        while_.operand_count() > 0 ? while_.operand(0) : nullptr;
    if (init == nullptr || init->opcode() != Opcode::kTuple ||
        iv_index_ >= init->operand_count()) {
      return std::nullopt;
    }
    std::vector<const Instruction*> stack;
    loop_param_ = nullptr;
    std::optional<Affine> start = Eval(init->operand(iv_index_), stack, 0);
    if (!start || start->has_iv) return std::nullopt;
    // Condition: compare(iv + a, b) (or swapped), possibly fused.
    const Computation* cond = while_.while_condition();
    loop_param_ = cond->num_parameters() > 0 ? cond->parameter(0) : nullptr;
    const Instruction* cmp = cond->root();
    stack.clear();
    while (cmp != nullptr && cmp->opcode() == Opcode::kFusion &&
           cmp->to_apply() != nullptr && stack.size() < 8) {
      stack.push_back(cmp);
      cmp = cmp->to_apply()->root();
    }
    if (cmp == nullptr || cmp->opcode() != Opcode::kCompare ||
        cmp->operand_count() != 2) {
      return std::nullopt;
    }
    std::optional<Affine> lhs = Eval(cmp->operand(0), stack, 0);
    std::optional<Affine> rhs = Eval(cmp->operand(1), stack, 0);
    if (!lhs || !rhs || lhs->has_iv == rhs->has_iv) return std::nullopt;
    ComparisonDirection dir = cmp->attrs().comparison_direction;
    if (rhs->has_iv) {
      std::swap(lhs, rhs);
      switch (dir) {
        case ComparisonDirection::kLt:
          dir = ComparisonDirection::kGt;
          break;
        case ComparisonDirection::kLe:
          dir = ComparisonDirection::kGe;
          break;
        case ComparisonDirection::kGt:
          dir = ComparisonDirection::kLt;
          break;
        case ComparisonDirection::kGe:
          dir = ComparisonDirection::kLe;
          break;
        default:
          break;
      }
    }
    // iv (dir) limit.
    int64_t limit = 0;
    if (__builtin_sub_overflow(rhs->c, lhs->c, &limit)) return std::nullopt;
    // Body: root element iv_index = iv + step.
    const Computation* body = while_.while_body();
    loop_param_ = body->num_parameters() > 0 ? body->parameter(0) : nullptr;
    const Instruction* root = body->root();
    if (root == nullptr || root->opcode() != Opcode::kTuple ||
        iv_index_ >= root->operand_count()) {
      return std::nullopt;
    }
    stack.clear();
    std::optional<Affine> next = Eval(root->operand(iv_index_), stack, 0);
    if (!next || !next->has_iv || next->c == 0) return std::nullopt;
    int64_t step = next->c;
    int64_t x = start->c;
    // Differences below must not overflow (any input is allowed).
    int64_t span = 0;
    if (step == INT64_MIN || __builtin_sub_overflow(limit, x, &span) ||
        span == INT64_MIN) {
      return std::nullopt;
    }
    auto ceil_div = [](int64_t a, int64_t b) {  // b > 0
      return a / b + (a % b > 0 ? 1 : 0);
    };
    int64_t trips = 0;
    switch (dir) {
      case ComparisonDirection::kLt:
        if (step <= 0) return x < limit ? std::nullopt : std::optional(0);
        trips = ceil_div(span, step);
        break;
      case ComparisonDirection::kLe:
        if (step <= 0) return x <= limit ? std::nullopt : std::optional(0);
        trips = span < 0 ? 0 : span / step + 1;
        break;
      case ComparisonDirection::kGt:
        if (step >= 0) return x > limit ? std::nullopt : std::optional(0);
        trips = ceil_div(-span, -step);
        break;
      case ComparisonDirection::kGe:
        if (step >= 0) return x >= limit ? std::nullopt : std::optional(0);
        trips = span > 0 ? 0 : (-span) / (-step) + 1;
        break;
      case ComparisonDirection::kNe:
        if (span % step != 0 || span / step < 0) {
          return std::nullopt;
        }
        trips = span / step;
        break;
      default:
        return std::nullopt;
    }
    return std::max<int64_t>(0, trips);
  }

 private:
  std::optional<Affine> Eval(const Instruction* i,
                             std::vector<const Instruction*>& stack,
                             int depth) {
    if (i == nullptr || depth > 32) return std::nullopt;
    switch (i->opcode()) {
      case Opcode::kConstant: {
        const Literal* lit = i->literal();
        if (lit == nullptr || lit->element_count() != 1 ||
            !i->shape().IsArray()) {
          return std::nullopt;
        }
        PrimitiveType t = i->shape().element_type();
        if (t != PrimitiveType::kS32 && t != PrimitiveType::kS64 &&
            t != PrimitiveType::kU32 && t != PrimitiveType::kS16 &&
            t != PrimitiveType::kS8 && t != PrimitiveType::kU8 &&
            t != PrimitiveType::kU16 && t != PrimitiveType::kU64) {
          return std::nullopt;
        }
        return Affine{false, lit->GetAsInt64(0)};
      }
      case Opcode::kCopy:
      case Opcode::kBitcast:
      case Opcode::kReshape:
      case Opcode::kConvert:
        return i->operand_count() > 0 ? Eval(i->operand(0), stack, depth + 1)
                                      : std::nullopt;
      case Opcode::kAdd:
      case Opcode::kSubtract: {
        if (i->operand_count() != 2) return std::nullopt;
        std::optional<Affine> a = Eval(i->operand(0), stack, depth + 1);
        std::optional<Affine> b = Eval(i->operand(1), stack, depth + 1);
        if (!a || !b) return std::nullopt;
        if (i->opcode() == Opcode::kAdd) {
          if (a->has_iv && b->has_iv) return std::nullopt;
          int64_t sum = 0;
          if (__builtin_add_overflow(a->c, b->c, &sum)) return std::nullopt;
          return Affine{a->has_iv || b->has_iv, sum};
        }
        if (b->has_iv) return std::nullopt;
        int64_t diff = 0;
        if (__builtin_sub_overflow(a->c, b->c, &diff)) return std::nullopt;
        return Affine{a->has_iv, diff};
      }
      case Opcode::kFusion: {
        if (i->to_apply() == nullptr || stack.size() > 8) return std::nullopt;
        stack.push_back(i);
        std::optional<Affine> r = Eval(i->to_apply()->root(), stack, depth + 1);
        stack.pop_back();
        return r;
      }
      case Opcode::kParameter: {
        if (stack.empty()) return std::nullopt;  // the loop tuple itself
        const Instruction* fusion = stack.back();
        int64_t n = i->parameter_number();
        if (n < 0 || n >= fusion->operand_count()) return std::nullopt;
        stack.pop_back();
        std::optional<Affine> r = Eval(fusion->operand(n), stack, depth + 1);
        stack.push_back(fusion);
        return r;
      }
      case Opcode::kGetTupleElement:
        if (stack.empty() && loop_param_ != nullptr && i->operand_count() > 0 &&
            i->operand(0) == loop_param_ && i->tuple_index() == iv_index_) {
          return Affine{true, 0};
        }
        if (i->operand_count() > 0 &&
            i->operand(0)->opcode() == Opcode::kTuple &&
            i->tuple_index() < i->operand(0)->operand_count()) {
          return Eval(i->operand(0)->operand(i->tuple_index()), stack,
                      depth + 1);
        }
        return std::nullopt;
      default:
        return std::nullopt;
    }
  }

  const Instruction& while_;
  int64_t iv_index_;
  const Instruction* loop_param_ = nullptr;
};

// known_induction_variable.tuple_index of the while's backend_config, else 0.
int64_t InductionVariableIndex(const Instruction& w) {
  const std::string& config = w.attrs().backend_config;
  if (config.find("known_induction_variable") == std::string::npos) return 0;
  nlohmann::json j = nlohmann::json::parse(config, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return 0;
  auto kiv = j.find("known_induction_variable");
  if (kiv == j.end() || !kiv->is_object()) return 0;
  auto idx = kiv->find("tuple_index");
  if (idx == kiv->end()) return 0;
  if (idx->is_number_integer())
    return std::max<int64_t>(0, idx->get<int64_t>());
  if (idx->is_string()) {
    return std::max<int64_t>(0, std::atoll(idx->get<std::string>().c_str()));
  }
  return 0;
}

}  // namespace

std::optional<int64_t> SimTripCount(const Instruction& w) {
  if (w.opcode() != Opcode::kWhile || w.called_computations().size() < 2) {
    return std::nullopt;
  }
  std::optional<int64_t> trip = KnownTripCount(w);
  if (trip.has_value()) return trip;
  trip = AnalyzeWhileLoop(w).trip_count;
  if (trip.has_value()) return trip;
  return TripCounter(w, InductionVariableIndex(w)).Count();
}

int64_t SimLoopTripCount(const Instruction& w, SimResult& result) {
  std::optional<int64_t> trip = SimTripCount(w);
  if (!trip.has_value()) {
    result.unknown_trip_counts.push_back(w.name());
  }
  return std::max<int64_t>(0, trip.value_or(1));
}

absl::StatusOr<SimResult> Simulate(const Module& module,
                                   const SimOptions& options) {
  if (module.entry() == nullptr) {
    return absl::InvalidArgumentError("module has no entry computation");
  }
  SimResult r = SimulateTimeline(module, options);
  PeakMemory peak = ComputePeakMemory(module);
  r.peak_memory_bytes = peak.bytes;
  r.peak_memory_at = peak.at;
  r.parameter_bytes = peak.parameter_bytes;
  return r;
}

}  // namespace hloverlap
