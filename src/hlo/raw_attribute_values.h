// Typed readings of attributes hloverlap keeps verbatim (RawAttribute: the
// text as written), for the few places that need their values: shape
// inference of instructions written without a shape.
//
//   window={size=3x3 stride=2x2 pad=1_1x0_1 lhs_dilate=1x1 rhs_dilate=2x2}
//     -> two WindowDimensions {3, 2, 1, 1, 1, 2}, {3, 2, 0, 1, 1, 2}
//   dim_labels=b01f_01io->b01f
//     -> lhs batch 0, feature 3, spatial {1, 2}; kernel input 2, output 3,
//        spatial {0, 1}; output batch 0, feature 3, spatial {1, 2}
//   slice_sizes={1,8}  -> {1, 8}
//
// The readers never crash: malformed text gives InvalidArgument saying
// what was expected.
#ifndef HLOVERLAP_HLO_RAW_ATTRIBUTE_VALUES_H_
#define HLOVERLAP_HLO_RAW_ATTRIBUTE_VALUES_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace hloverlap {

// One dimension of a `window=` attribute (XLA's defaults where a field is
// left out).
struct WindowDimension {
  int64_t size = 0;
  int64_t stride = 1;
  int64_t padding_low = 0;
  int64_t padding_high = 0;
  int64_t base_dilation = 1;    // lhs_dilate
  int64_t window_dilation = 1;  // rhs_dilate
  bool reversal = false;        // rhs_reversal
};

// `{size=AxB stride=.. pad=L_HxL_H lhs_dilate=.. rhs_dilate=..
// rhs_reversal=0x1}`; `{}` is a window of no dimensions. As in XLA, size is
// required when any field is written, and every field has its size's
// number of dimensions.
absl::StatusOr<std::vector<WindowDimension>> ReadWindow(std::string_view text);

// A convolution's `dim_labels=`: which dimension of the input (lhs), the
// kernel (rhs) and the output holds the batch, the features and each
// spatial dimension (spatial dimension k in the k-th entry).
struct ConvolutionDimensions {
  int64_t input_batch = 0;
  int64_t input_feature = 0;
  std::vector<int64_t> input_spatial;
  int64_t kernel_input_feature = 0;
  int64_t kernel_output_feature = 0;
  std::vector<int64_t> kernel_spatial;
  int64_t output_batch = 0;
  int64_t output_feature = 0;
  std::vector<int64_t> output_spatial;
};

// `b01f_01io->b01f`: each part names every dimension once (b/f, i/o, b/f
// and the digits 0..n-1 of the n spatial dimensions), the three parts with
// the same number of spatial dimensions.
absl::StatusOr<ConvolutionDimensions> ReadConvolutionDimensions(
    std::string_view text);

// `{1,2,3}` or `{}`.
absl::StatusOr<std::vector<int64_t>> ReadIntList(std::string_view text);
// A decimal integer.
absl::StatusOr<int64_t> ReadInt(std::string_view text);
// `true` or `false`.
absl::StatusOr<bool> ReadBool(std::string_view text);

}  // namespace hloverlap

#endif  // HLOVERLAP_HLO_RAW_ATTRIBUTE_VALUES_H_
