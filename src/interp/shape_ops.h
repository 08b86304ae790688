// Data-movement kernels of the reference interpreter: broadcast, reshape,
// transpose, slice, dynamic-slice, dynamic-update-slice, concatenate, pad,
// iota, reverse, bitcast. They work on Values (no IR needed) and check their
// arguments, returning InvalidArgument for inconsistent ones.
//
// All of them reduce to StridedCopy, a copy over an N-dimensional index
// space with arbitrary source and destination strides.
#ifndef HLOVERLAP_INTERP_SHAPE_OPS_H_
#define HLOVERLAP_INTERP_SHAPE_OPS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/attributes.h"
#include "hlo/shape.h"
#include "interp/value.h"

namespace hloverlap::interp {

// For every index vector i < counts: dst[Σ i_k*dst_strides_k] =
// src[Σ i_k*src_strides_k] (strides in elements, may be 0 or negative;
// pointers point at index 0).
void StridedCopy(uint8_t* dst, const uint8_t* src, int64_t elem_size,
                 const Dims& counts, const Dims& dst_strides,
                 const Dims& src_strides);

// Fills n elements of size elem_size at dst with the element at `value`.
void FillElements(uint8_t* dst, const uint8_t* value, int64_t elem_size,
                  int64_t n);

// `dimensions[i]` is the output dimension operand dimension i maps to.
absl::StatusOr<Value> Broadcast(const Value& operand, const Dims& out_dims,
                                absl::Span<const int64_t> dimensions);
// Same buffer, new dimensions (element counts must match).
absl::StatusOr<Value> Reshape(const Value& operand, const Dims& out_dims);
// Output dimension i is operand dimension perm[i].
absl::StatusOr<Value> Transpose(const Value& operand,
                                absl::Span<const int64_t> perm);
absl::StatusOr<Value> Slice(const Value& operand,
                            absl::Span<const SliceRange> ranges);
// Start indices are clamped to [0, dim - size] as XLA does.
absl::StatusOr<Value> DynamicSlice(const Value& operand,
                                   absl::Span<const int64_t> starts,
                                   absl::Span<const int64_t> sizes);
// Start indices are clamped to [0, dim - update_dim]. Updates the operand's
// buffer in place when `operand` holds the only reference to it.
absl::StatusOr<Value> DynamicUpdateSlice(Value operand, const Value& update,
                                         absl::Span<const int64_t> starts);
absl::StatusOr<Value> Concatenate(absl::Span<const Value* const> operands,
                                  int64_t dimension);
// Negative low/high crop; interior inserts padding between elements.
absl::StatusOr<Value> Pad(const Value& operand, const Value& padding_value,
                          absl::Span<const PaddingDim> padding);
absl::StatusOr<Value> Iota(PrimitiveType type, const Dims& dims,
                           int64_t iota_dimension);
absl::StatusOr<Value> Reverse(const Value& operand,
                              absl::Span<const int64_t> dimensions);
// `bitcast` from `from` to `to` (both array shapes, layouts honoured: the
// physical bytes are reinterpreted). Without layouts (or with descending
// ones) and the same element type it is a reshape.
absl::StatusOr<Value> Bitcast(const Value& operand, const Shape& from,
                              const Shape& to);

// A copy of `operand` in a fresh buffer.
absl::StatusOr<Value> DeepCopy(const Value& operand);

}  // namespace hloverlap::interp

#endif  // HLOVERLAP_INTERP_SHAPE_OPS_H_
