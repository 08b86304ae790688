// While-loop analysis: induction variable, start/step/bound, trip count and
// loop invariants.
//
// Recognised shape (any tuple index k, any integer type, either operand
// order, steps of either sign, LT/LE/GT/GE/NE conditions):
//
//   cond { p = (s32[], ...) parameter(0)
//          ROOT c = pred[] compare(gte(p, k), BOUND), direction=LT }
//   body { p = parameter(0)
//          next = s32[] add(gte(p, k), STEP)          // or subtract
//          ROOT t = tuple(..., next, ...) }
//   init = tuple(..., START, ...)
//
// START, STEP and BOUND are "constant scalars": a constant, a convert /
// reshape / negate of one, or (BOUND, STEP) a loop-invariant tuple element
// whose initial value is a constant scalar. When a fact cannot be
// established the info says which one (`missing`), and trip_count is empty;
// a known_trip_count in the while's backend_config is used as a fallback for
// the trip count only.
#ifndef HLOVERLAP_ANALYSIS_WHILE_LOOP_ANALYSIS_H_
#define HLOVERLAP_ANALYSIS_WHILE_LOOP_ANALYSIS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "hlo/module.h"

namespace hloverlap {

struct WhileLoopInfo {
  const Instruction* while_instr = nullptr;
  int64_t tuple_size = 0;
  // Per tuple index: body root operand i is get-tuple-element(param, i).
  std::vector<bool> invariant_index;

  // Induction variable (all set together, or none).
  std::optional<int64_t> iv_index;
  std::optional<int64_t> start;
  std::optional<int64_t> step;
  std::optional<int64_t> bound;
  // Condition normalised to `iv DIRECTION bound`.
  ComparisonDirection direction = ComparisonDirection::kLt;
  PrimitiveType iv_type = PrimitiveType::kInvalid;
  // The body instruction computing the next iv value (the add/subtract).
  const Instruction* iv_update = nullptr;

  // Number of iterations, when known (from the pattern, else from
  // backend_config known_trip_count).
  std::optional<int64_t> trip_count;
  bool trip_count_from_backend_config = false;

  // Why the induction variable or trip count is unknown; empty when known.
  std::string missing;

  bool has_induction_variable() const { return iv_index.has_value(); }
  // Value of the iv in iteration t (0-based): start + t * step.
  int64_t IvAt(int64_t t) const { return *start + t * *step; }
};

WhileLoopInfo AnalyzeWhileLoop(const Instruction& while_instr);

// Evaluates a scalar integer expression built from constants (and convert,
// reshape, bitcast, negate, add, subtract, multiply of such). nullopt when
// not constant.
std::optional<int64_t> EvaluateConstantScalar(const Instruction& instr);

// Instructions of the body whose value is the same in every iteration:
// get-tuple-elements of invariant indices, constants, and side-effect-free
// non-collective instructions all of whose operands are invariant.
absl::flat_hash_set<const Instruction*> FindLoopInvariantInstructions(
    const Computation& body, const std::vector<bool>& invariant_index);

// The trip count written in the while's backend_config
// ({"known_trip_count":{"n":"8"}}), if present and well-formed.
std::optional<int64_t> KnownTripCountFromBackendConfig(
    const Instruction& while_instr);

}  // namespace hloverlap

#endif  // HLOVERLAP_ANALYSIS_WHILE_LOOP_ANALYSIS_H_
