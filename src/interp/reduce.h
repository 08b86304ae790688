// `reduce` with a fixed reduction order.
//
// For every output element the accumulator starts at the init value and
// the reduced input elements are folded in one at a time in increasing
// row-major order of the input: acc = f(acc, x). Recognized reducers (a
// to_apply computing add/multiply/maximum/minimum/and/or/xor of its two
// parameters) run as tight loops with exactly the semantics of the
// elementwise op; anything else (variadic reduce, custom computations)
// calls back into the evaluator once per input element.
#ifndef HLOVERLAP_INTERP_REDUCE_H_
#define HLOVERLAP_INTERP_REDUCE_H_

#include <functional>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/opcode.h"
#include "interp/value.h"

namespace hloverlap::interp {

// Applies the reduction computation to N scalar accumulators and N scalar
// inputs, returning the N new accumulators.
using ScalarReducer = std::function<absl::StatusOr<std::vector<Value>>(
    const std::vector<Value>& accumulators, const std::vector<Value>& inputs)>;

struct Reducer {
  // Set when the computation is a recognized binary op (single input only).
  std::optional<Opcode> fast_op;
  // Used otherwise.
  ScalarReducer generic;
};

// Reduces `inputs` (same dimensions) over `dimensions`, one result per
// input (dimensions: the kept ones, in order; element types: the inits').
absl::StatusOr<std::vector<Value>> Reduce(absl::Span<const Value> inputs,
                                          absl::Span<const Value> inits,
                                          absl::Span<const int64_t> dimensions,
                                          const Reducer& reducer);

// One scalar element of an array as a rank-0 value.
absl::StatusOr<Value> ScalarAt(const Value& array, int64_t index);

}  // namespace hloverlap::interp

#endif  // HLOVERLAP_INTERP_REDUCE_H_
