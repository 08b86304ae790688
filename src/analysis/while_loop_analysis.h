// While-loop analysis: induction variable, exact trip count and loop
// invariants. The one place that says how often a loop runs: every pass,
// the scheduler's and the simulator's cost models and `explain` read it.
//
// Recognised shape (any tuple index k, any of s8..s64 / u8..u64, either
// operand order, steps of either sign, EQ/NE/LT/LE/GT/GE conditions):
//
//   cond { p = (s32[], ...) parameter(0)
//          ROOT c = pred[] compare(gte(p, k), BOUND), direction=LT }
//   body { p = parameter(0)
//          next = s32[] add(gte(p, k), STEP)          // or subtract
//          ROOT t = tuple(..., next, ...) }
//   init = tuple(..., START, ...)
//
// and the same computed through fusions, as in XLA's optimized dumps:
//
//   cond { ROOT f = pred[] fusion(gte(p, 0)), calls=fused_compare }
//   fused_compare { x = s32[] parameter(0); ROOT c = compare(x, 3), LT }
//   body { next = s32[] fusion(gte(p, 0)), calls=fused_add ... }
//
// START, STEP and BOUND are constant-folded: constants; convert (wrapping
// or extending as HLO does), reshape, bitcast, copy, negate, add, subtract,
// multiply (x * 0 = 0 for any x, e.g. partition-id), minimum, maximum of
// such; get-tuple-element of a tuple; fusion and call parameters (the
// caller's operands); parameters of a computation only `call`s call, when
// every call passes the same constant (a layer loop whose start its caller
// passes); and, in the condition and body, loop-invariant tuple elements
// whose initial value folds. The counter may be offset in the
// condition (`compare(add(gte(p, k), 1), BOUND)`).
//
// All arithmetic is exact at the counter's width: the trip count is the
// number of iterations of `x = START; while (x DIR BOUND) x = wrap(x +
// STEP)`, compared in the type's order (unsigned for u*), even when the
// counter wraps before the condition fails:
//
//   s8 counter from 120 by 5 while x < 127: 120, 125, -126 (wrapped), ...
//   runs 155 times; u64 from 2^64-1 while x < 4 (unsigned) runs 0 times.
//
// Infinite loops and counts above 2^63-1 are unknown, with the reason.
// known_trip_count in the while's backend_config (while_backend_config.h)
// is XLA's promise: used when the loop cannot be analysed; when the
// condition proves something else, the proof wins and `contradiction` says
// so (passes turn it into a KnownTripCountContradicted warning remark).
//
// Rewrites that rebuild the condition (the pipeliner's new bound) need the
// counter not to wrap: `no_wrap` says whether START + t*STEP stays inside
// the type for every executed iteration t, and WrapReason() words a refusal.
#ifndef HLOVERLAP_ANALYSIS_WHILE_LOOP_ANALYSIS_H_
#define HLOVERLAP_ANALYSIS_WHILE_LOOP_ANALYSIS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "analysis/int_value.h"
#include "hlo/module.h"

namespace hloverlap {

enum class TripCountSource {
  kUnknown,
  kProven,          // from the condition, start and step
  kKnownTripCount,  // the backend_config's promise (loop not analysable)
};

struct WhileLoopInfo {
  const Instruction* while_instr = nullptr;
  int64_t tuple_size = 0;
  // Per tuple index: body root operand i is get-tuple-element(param, i).
  std::vector<bool> invariant_index;

  // Induction variable (all set together, or none).
  std::optional<int64_t> iv_index;
  PrimitiveType iv_type = PrimitiveType::kInvalid;
  std::optional<IntValue> start;  // value in iteration 0
  // Added per iteration, at the counter's width (subtract c adds -c: a u8
  // counter decremented by 50 has step 206; ToSigned() reads it as -50).
  std::optional<IntValue> step;
  std::optional<IntValue> bound;
  // Condition normalised to `iv + condition_offset DIRECTION bound`
  // (condition_offset is zero in the usual `iv DIRECTION bound`).
  std::optional<IntValue> condition_offset;
  ComparisonDirection direction = ComparisonDirection::kLt;
  // The body instruction computing the next iv value.
  const Instruction* iv_update = nullptr;

  // The number of iterations every consumer uses: proven, else (loop not
  // analysable) the backend_config's known_trip_count, else nullopt.
  std::optional<int64_t> trip_count;
  TripCountSource trip_count_source = TripCountSource::kUnknown;
  // known_trip_count as written in the backend_config.
  std::optional<int64_t> known_trip_count;
  // Set when the condition proves a count (or non-termination) different
  // from known_trip_count: the warning text. Empty otherwise.
  std::string contradiction;
  // With a proven trip count: start + t*step (step read as the signed
  // distance the counter moves, up or down) stays inside the counter's type
  // for every iteration t < trip_count, so the counter runs monotonically.
  bool no_wrap = false;
  bool counts_down = false;  // with no_wrap: the counter decreases

  // Why the induction variable or trip count is unknown; empty when proven.
  std::string missing;
  // With the count from known_trip_count: why the promise could not be
  // checked when it rests on a value only the caller knows ("the start is
  // a parameter": the counter starts at an entry parameter). Empty else.
  std::string unchecked;
  // With unchecked set because the start is the entry parameter
  // `start_parameter` (directly or through calls): a start that keeps the
  // promise, i.e. runs the loop known_trip_count times (inputs for verify
  // and the fuzzer). nullopt when no value does.
  const Instruction* start_parameter = nullptr;
  std::optional<IntValue> promised_start;

  bool has_induction_variable() const { return iv_index.has_value(); }
  bool trip_count_proven() const {
    return trip_count_source == TripCountSource::kProven;
  }
  // The counter's value in iteration t (0-based) as the loop computes it,
  // wrapping: start + t*step mod 2^width. nullopt without an induction
  // variable or for t < 0.
  std::optional<IntValue> IvAt(int64_t t) const;
  // step * k at the counter's type (what adding the step k times adds).
  std::optional<IntValue> StepTimes(int64_t k) const;
  // A constant of the counter's type; nullopt when `value` does not fit.
  std::optional<IntValue> CounterConstant(int64_t value) const;
  // known_init_step of a loop whose counter starts at IvAt(first) and moves
  // by step * step_multiple; nullopt when a value does not fit in int64.
  std::optional<KnownInitStep> KnownInitStepFrom(
      int64_t first, int64_t step_multiple = 1) const;
  // Where a count not proven comes from, for remarks: "from
  // known_trip_count" or "from known_trip_count, not checked: the start is
  // a parameter"; empty for a proven count (or none).
  std::string TripCountOrigin() const;
  // Empty when a proven count runs without wrapping; otherwise why a
  // rewrite that needs a monotonic counter must leave the loop alone
  // ("the s8 induction variable wraps around ...").
  std::string WrapReason() const;
};

WhileLoopInfo AnalyzeWhileLoop(const Instruction& while_instr);

// Entry parameters that known_trip_count promises rest on (the start of a
// loop counter, not checked: WhileLoopInfo::promised_start): the value
// that keeps each promise, for inputs of reference runs (verify, the
// semantic fuzzer), with a note saying so. A parameter two loops want at
// different values is left out.
struct PromisedParameter {
  int64_t parameter_number = 0;
  PrimitiveType type = PrimitiveType::kInvalid;
  int64_t value = 0;
  std::string note;
};
std::vector<PromisedParameter> PromisedEntryParameters(const Module& module);

// The trip count every consumer uses (AnalyzeWhileLoop(w).trip_count);
// nullopt for a non-while.
std::optional<int64_t> WhileTripCount(const Instruction& while_instr);

// Iterations of `x = start; while (x DIRECTION bound) x = wrap(x + step)`
// in the type of `start` (all three of one type), exactly; nullopt with
// the reason in *why when the loop never ends.
std::optional<uint64_t> CountTrips(const IntValue& start, const IntValue& step,
                                   ComparisonDirection direction,
                                   const IntValue& bound, std::string* why);

// Folds a scalar integer expression of the parent computation (see the
// header comment for what folds). nullopt when not constant.
std::optional<IntValue> EvaluateConstantScalar(const Instruction& instr);

// The value of the scalar integer `x`, an instruction of the loop body, in
// iteration t: the counter is IvAt(t); nullopt when x depends on anything
// but the counter, constants and loop-invariant elements whose initial
// value folds.
std::optional<IntValue> EvaluateInIteration(const Instruction& x,
                                            const WhileLoopInfo& info,
                                            int64_t t);

// Instructions of the body whose value is the same in every iteration:
// get-tuple-elements of invariant indices, constants, and side-effect-free
// non-collective instructions all of whose operands are invariant.
absl::flat_hash_set<const Instruction*> FindLoopInvariantInstructions(
    const Computation& body, const std::vector<bool>& invariant_index);

}  // namespace hloverlap

#endif  // HLOVERLAP_ANALYSIS_WHILE_LOOP_ANALYSIS_H_
