// `dot` with general dimension numbers.
//
// The result has dimensions (batch..., lhs free..., rhs free...), as in XLA.
// Floating-point dots compute in f32 (f64 when an operand or the result is
// f64); bf16/f16 operands are widened exactly while packing, and the f32
// result is rounded to the output type at the end. Every output element is
//   acc = +0; for k in 0..K-1: acc = acc + lhs[..k..] * rhs[..k..]
// with the product and the sum each rounded (no fused multiply-add), where
// k runs over the contracting dimensions flattened row-major in the order
// they are listed (lhs_contracting_dims[0] major). The order depends only
// on K: not on the other dimensions, the batch size, operand layouts or
// which operand is lhs, so XLA rewrites that transpose, swap, merge or
// batch dots keep the bits. Integer dots accumulate in the output type
// (wrapping).
//
// The f32 kernel (Gemm) packs panels and runs a 6x8 register-blocked
// micro-kernel written with GCC vector extensions; see dot.cc.
#ifndef HLOVERLAP_INTERP_DOT_H_
#define HLOVERLAP_INTERP_DOT_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "hlo/attributes.h"
#include "interp/value.h"

namespace hloverlap::interp {

absl::StatusOr<Value> Dot(const Value& lhs, const Value& rhs,
                          const DotDimensionNumbers& dnums,
                          PrimitiveType out_type);

// C[m][n] = sum_k A[m][k] * B[k][n] (row-major, leading dimensions K, N,
// N), in the fixed order described above. Exposed for benchmarks/tests.
void GemmF32(int64_t m, int64_t n, int64_t k, const float* a, const float* b,
             float* c);

}  // namespace hloverlap::interp

#endif  // HLOVERLAP_INTERP_DOT_H_
