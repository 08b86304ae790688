// Shape rules of the windowed, gathering and linear-algebra instructions:
// convolution, reduce-window, select-and-scatter, gather, scatter, fft,
// batch-norm-training/-inference/-grad, cholesky, triangular-solve and
// ragged-dot. Used for instructions written without a shape, whose shape
// XLA's parser infers:
//
//   %c = convolution(%x, %k), window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f
//     with x f32[8,32,4], k f32[3,4,16]   ->   f32[8,32,16]
//   %g = gather(%t, %i), offset_dims={1}, collapsed_slice_dims={0},
//        start_index_map={0}, index_vector_dim=1, slice_sizes={1,64}
//     with t f32[1000,64], i s32[10,1]    ->   f32[10,64]
//
// As in hlo/shape_inference.h: results carry no layout, messages name no
// instruction, and any input gives a shape or an error, never a crash.
#ifndef HLOVERLAP_HLO_SHAPE_INFERENCE_NN_H_
#define HLOVERLAP_HLO_SHAPE_INFERENCE_NN_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/raw_attribute_values.h"
#include "hlo/shape.h"

namespace hloverlap {

class Instruction;
struct ProgramShape;

// Output size of one window dimension over an input of `input` elements:
// the base dilated and padded, then the number of strided positions of the
// dilated window (0 when it does not fit once).
absl::StatusOr<int64_t> WindowOutputSize(int64_t input,
                                         const WindowDimension& w);

// convolution: feature and batch groups divide the features; the window
// spans the kernel's spatial dimensions; the element type is the wider of
// the two operands' (same kind of type).
absl::StatusOr<Shape> InferConvolutionShape(
    const Shape& lhs, const Shape& rhs, const ConvolutionDimensions& dnums,
    absl::Span<const WindowDimension> window, int64_t feature_group_count,
    int64_t batch_group_count);

// gather: the batch dimensions of the indices (all but index_vector_dim)
// and the slice sizes left after collapsed and operand batching
// dimensions, these at `offset_dims`.
struct GatherDimensions {
  std::vector<int64_t> offset_dims;
  std::vector<int64_t> collapsed_slice_dims;
  std::vector<int64_t> start_index_map;
  int64_t index_vector_dim = 0;
  std::vector<int64_t> operand_batching_dims;
  std::vector<int64_t> slice_sizes;
};
absl::StatusOr<Shape> InferGatherShape(const Shape& operand,
                                       const Shape& indices,
                                       const GatherDimensions& dnums);

// fft: FFT/IFFT keep the complex operand; RFFT turns the last
// len(fft_length) real dimensions into complex ones, the last of size
// fft_length.back()/2+1; IRFFT goes back.
enum class FftType { kFft, kIfft, kRfft, kIrfft };
absl::StatusOr<Shape> InferFftShape(const Shape& operand, FftType type,
                                    absl::Span<const int64_t> fft_length);

// The result shape of `inst`, one of the opcodes above, read from its
// operands, raw attributes and called computations.
absl::StatusOr<Shape> InferNnInstructionShape(const Instruction& inst);

}  // namespace hloverlap

#endif  // HLOVERLAP_HLO_SHAPE_INFERENCE_NN_H_
