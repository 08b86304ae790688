// Elementwise kernels of the reference interpreter: unary and binary
// arithmetic, transcendental functions, compare, select, clamp, convert and
// bitcast-convert, plus the in-place combiners that reduce, all-reduce and
// reduce-scatter use for their recognized reducers.
//
// Semantics (XLA's):
// - bf16/f16 operate in f32 and round the result to nearest even; f32 in
//   f32, f64 in f64. Transcendentals use the C library of this build.
// - Integers wrap (two's complement). x/0 = -1 (all bits set), INT_MIN/-1 =
//   INT_MIN, x%0 = x, INT_MIN%-1 = 0. Shifts by an amount outside [0, bits)
//   give 0 (shift-right-arithmetic: the sign fill). Integer power by
//   squaring; negative exponents give 0 unless the base is 1 or -1.
// - maximum/minimum propagate NaN.
// - pred: add/maximum/or = or, multiply/minimum/and = and, subtract/xor = xor.
// - convert: float->float rounds to nearest even (f64->bf16 goes through f32,
//   as XLA does); float->int truncates toward zero, NaN -> 0, out-of-range
//   values saturate to the integer type's min/max; int->float rounds to
//   nearest; int->int wraps; x->pred is x != 0.
// - compare with type TOTALORDER orders -NaN < -inf < ... < -0 < +0 < ... <
//   inf < NaN; otherwise IEEE (NaN compares unequal to everything).
//
// A scalar (rank 0) operand of a binary op, select or clamp is broadcast.
#ifndef HLOVERLAP_INTERP_ELEMENTWISE_H_
#define HLOVERLAP_INTERP_ELEMENTWISE_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "hlo/attributes.h"
#include "hlo/opcode.h"
#include "interp/value.h"

namespace hloverlap::interp {

// Opcodes Unary accepts (abs, negate, exponential, ..., copy, is-finite).
bool IsSupportedUnaryOpcode(Opcode op);
// Opcodes Binary accepts (add, ..., atan2, power, remainder, shifts).
bool IsSupportedBinaryOpcode(Opcode op);

absl::StatusOr<Value> Unary(Opcode op, const Value& x);
absl::StatusOr<Value> Binary(Opcode op, const Value& a, const Value& b);
// `comparison_type` is the compare `type=` attribute ("" = default for the
// element type, "TOTALORDER", "FLOAT", "SIGNED", "UNSIGNED").
absl::StatusOr<Value> Compare(ComparisonDirection direction,
                              std::string_view comparison_type, const Value& a,
                              const Value& b);
absl::StatusOr<Value> Select(const Value& pred, const Value& on_true,
                             const Value& on_false);
absl::StatusOr<Value> Clamp(const Value& lo, const Value& x, const Value& hi);
absl::StatusOr<Value> Convert(const Value& x, PrimitiveType to);
// Reinterprets the bytes (same total byte size) as `to` with `out_dims`.
absl::StatusOr<Value> BitcastConvert(const Value& x, PrimitiveType to,
                                     const Dims& out_dims);

// Binary opcodes usable as a fast reducer: add, multiply, maximum, minimum,
// and, or, xor.
bool IsCombinerOpcode(Opcode op);
// acc[i] = op(acc[i], x[i]) for i < n (elements of `type`).
absl::Status CombineElementwise(Opcode op, PrimitiveType type, uint8_t* acc,
                                const uint8_t* x, int64_t n);
// *acc = op(*acc, x[j]) for j = 0, 1, ..., n-1 in order (one accumulator).
absl::Status CombineSequential(Opcode op, PrimitiveType type, uint8_t* acc,
                               const uint8_t* x, int64_t n);

}  // namespace hloverlap::interp

#endif  // HLOVERLAP_INTERP_ELEMENTWISE_H_
