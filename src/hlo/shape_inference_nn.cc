#include "hlo/shape_inference_nn.h"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "hlo/absl_compat.h"
#include "hlo/computation.h"
#include "hlo/instruction.h"
#include "hlo/shape_inference.h"

namespace hloverlap {
namespace {

using Dims = absl::InlinedVector<int64_t, 6>;

template <typename... Args>
absl::Status Error(const Args&... args) {
  return absl::InvalidArgumentError(absl::StrCat(args...));
}

absl::Status ExpectArray(const Shape& shape, absl::string_view what) {
  if (shape.IsArray()) return absl::OkStatus();
  return Error(what, " must be an array, found ", ShapeString(shape));
}

absl::string_view TypeName(PrimitiveType t) {
  return AsAbsl(PrimitiveTypeName(t));
}

bool Contains(absl::Span<const int64_t> v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

Dims DimsOf(const Shape& s) {
  return Dims(s.dimensions().begin(), s.dimensions().end());
}

// The wider of two element types of one kind (XLA's higher precision
// type); an error for different kinds or equal widths.
absl::StatusOr<PrimitiveType> WiderType(PrimitiveType a, PrimitiveType b) {
  if (a == b) return a;
  auto kind = [](PrimitiveType t) {
    return IsFloatingPointType(t) ? 1 : IsComplexType(t) ? 2 : 3;
  };
  const int wa = PrimitiveTypeBitWidth(a);
  const int wb = PrimitiveTypeBitWidth(b);
  if (kind(a) != kind(b) || wa == wb) {
    return Error("operands of element types ", TypeName(a), " and ",
                 TypeName(b), " have no common type");
  }
  return wa > wb ? a : b;
}

// The operand dimensions a window of `op` slides over, to the output sizes.
absl::StatusOr<Dims> WindowedDims(const Shape& input,
                                  absl::Span<const WindowDimension> window,
                                  std::string_view op) {
  if (!input.IsArray()) {
    return Error(AsAbsl(op), " operand must be an array, found ",
                 ShapeString(input));
  }
  if (absl::Status s =
          ExpectOnePerDimension(op, "the window", window.size(), input);
      !s.ok()) {
    return s;
  }
  Dims out;
  for (int64_t d = 0; d < input.rank(); ++d) {
    absl::StatusOr<int64_t> n =
        WindowOutputSize(input.dimensions(d), window[d]);
    if (!n.ok()) return n.status();
    out.push_back(*n);
  }
  return out;
}

// The shape a window reduction of `inputs` by `reducer` gives (a tuple for
// several inputs); `inits` are the scalars the reducer starts from.
absl::StatusOr<Shape> InferReduceWindowShape(
    absl::Span<const Shape* const> operands,
    absl::Span<const WindowDimension> window, const ProgramShape& reducer) {
  if (operands.empty() || operands.size() % 2 != 0) {
    return Error("reduce-window takes inputs and as many init values, found ",
                 operands.size(), " operands");
  }
  const size_t k = operands.size() / 2;
  std::vector<PrimitiveType> input_types, init_types;
  absl::StatusOr<Dims> dims =
      WindowedDims(*operands[0], window, "reduce-window");
  if (!dims.ok()) return dims.status();
  for (size_t i = 0; i < k; ++i) {
    const Shape& in = *operands[i];
    const Shape& init = *operands[k + i];
    if (!in.IsArray() || DimsOf(in) != DimsOf(*operands[0])) {
      return Error("reduce-window inputs differ: ", ShapeString(*operands[0]),
                   " and ", ShapeString(in));
    }
    if (!init.IsArray() || init.rank() != 0) {
      return Error("reduce-window init value must be a scalar, found ",
                   ShapeString(init));
    }
    input_types.push_back(in.element_type());
    init_types.push_back(init.element_type());
  }
  if (absl::Status s = CheckReducerShape(reducer, input_types, init_types);
      !s.ok()) {
    return s;
  }
  if (k == 1) return Shape(reducer.result.element_type(), *dims);
  std::vector<Shape> results;
  for (size_t i = 0; i < k; ++i) {
    results.push_back(
        Shape(reducer.result.tuple_shapes(i).element_type(), *dims));
  }
  return Shape::Tuple(std::move(results));
}

// select-and-scatter(operand, source, init): the source has the windowed
// operand's dimensions; the result is the operand's shape.
absl::StatusOr<Shape> InferSelectAndScatterShape(
    const Shape& operand, const Shape& source, const Shape& init,
    absl::Span<const WindowDimension> window) {
  absl::StatusOr<Dims> dims =
      WindowedDims(operand, window, "select-and-scatter");
  if (!dims.ok()) return dims.status();
  if (!source.IsArray() || DimsOf(source) != *dims) {
    return Error("select-and-scatter source ", ShapeString(source),
                 " does not have the windowed operand's dimensions ",
                 DimsString(*dims));
  }
  if (!init.IsArray() || init.rank() != 0) {
    return Error("select-and-scatter init value must be a scalar, found ",
                 ShapeString(init));
  }
  return Shape(operand.element_type(), DimsOf(operand));
}

// scatter(operands..., indices, updates...): the operands' shapes.
absl::StatusOr<Shape> InferScatterShape(
    absl::Span<const Shape* const> operands) {
  if (operands.size() < 3 || operands.size() % 2 != 1) {
    return Error("scatter takes operands, indices and as many updates, found ",
                 operands.size(), " operands");
  }
  const size_t n = operands.size() / 2;
  std::vector<Shape> results;
  for (size_t i = 0; i < n; ++i) {
    const Shape& o = *operands[i];
    if (absl::Status s = ExpectArray(o, "scatter operand"); !s.ok()) return s;
    const Shape& u = *operands[n + 1 + i];
    if (!u.IsArray() || u.element_type() != o.element_type()) {
      return Error("scatter update ", ShapeString(u),
                   " does not have the element type of operand ",
                   ShapeString(o));
    }
    results.push_back(Shape(o.element_type(), DimsOf(o)));
  }
  if (n == 1) return results[0];
  return Shape::Tuple(std::move(results));
}

// The feature dimension's size for batch norm, after checking that each of
// `per_feature` is a rank-1 array of it with the operand's element type.
absl::StatusOr<int64_t> BatchNormFeatures(
    const Shape& operand, absl::Span<const Shape* const> per_feature,
    int64_t feature_index) {
  if (absl::Status s = ExpectArray(operand, "batch-norm operand"); !s.ok()) {
    return s;
  }
  if (feature_index < 0 || feature_index >= operand.rank()) {
    return Error("batch-norm feature_index ", feature_index,
                 " is out of range for ", ShapeString(operand));
  }
  const int64_t features = operand.dimensions(feature_index);
  for (const Shape* s : per_feature) {
    if (!s->IsArray() || s->rank() != 1 || s->dimensions(0) != features ||
        s->element_type() != operand.element_type()) {
      return Error("batch-norm: ", ShapeString(*s), " must be ",
                   TypeName(operand.element_type()), "[", features,
                   "] (the operand's features)");
    }
  }
  return features;
}

// cholesky(a) and triangular-solve(a, b): a is a batch of square
// matrices; b matches its batch and, on the side it is solved from, its
// size. The result is the solved shape (a, or b).
absl::StatusOr<Shape> InferLinalgShape(const Shape& a, const Shape* b,
                                       bool left_side) {
  if (absl::Status s = ExpectArray(a, "matrix a"); !s.ok()) return s;
  const int64_t r = a.rank();
  if (r < 2 || a.dimensions(r - 1) != a.dimensions(r - 2)) {
    return Error("a must be a batch of square matrices, found ",
                 ShapeString(a));
  }
  if (b == nullptr) return Shape(a.element_type(), DimsOf(a));
  if (!b->IsArray() || b->rank() != r ||
      b->element_type() != a.element_type() ||
      !std::equal(a.dimensions().begin(), a.dimensions().end() - 2,
                  b->dimensions().begin()) ||
      b->dimensions(left_side ? r - 2 : r - 1) != a.dimensions(r - 1)) {
    return Error("triangular-solve: b ", ShapeString(*b), " does not fit a ",
                 ShapeString(a), " solved from the ",
                 left_side ? "left" : "right");
  }
  return Shape(b->element_type(), DimsOf(*b));
}

// ragged-dot(lhs, rhs, group_sizes): the dot of lhs with rhs without its
// group dimension; a ragged contracting dimension adds the groups in
// front.
absl::StatusOr<Shape> InferRaggedDotShape(const Shape& lhs, const Shape& rhs,
                                          const Shape& group_sizes,
                                          const DotDimensionNumbers& dnums,
                                          absl::Span<const int64_t> ragged,
                                          absl::Span<const int64_t> group) {
  if (absl::Status s = ExpectArray(rhs, "ragged-dot rhs"); !s.ok()) return s;
  if (!lhs.IsArray() || ragged.size() != 1 || ragged[0] < 0 ||
      ragged[0] >= lhs.rank()) {
    return Error("ragged-dot needs one lhs ragged dimension of ",
                 ShapeString(lhs));
  }
  if (!group_sizes.IsArray() || group_sizes.rank() < 1) {
    return Error("ragged-dot group_sizes must be an array, found ",
                 ShapeString(group_sizes));
  }
  const int64_t groups = group_sizes.dimensions(group_sizes.rank() - 1);
  const bool contracting = Contains(dnums.lhs_contracting_dims, ragged[0]);
  const bool non_contracting =
      !contracting && !Contains(dnums.lhs_batch_dims, ragged[0]);
  if (group.size() != (non_contracting ? 1u : 0u)) {
    return Error("ragged-dot needs ", non_contracting ? "one" : "no",
                 " rhs group dimension here");
  }
  Shape kernel = rhs;
  DotDimensionNumbers d = dnums;
  if (non_contracting) {
    const int64_t g = group[0];
    if (g < 0 || g >= rhs.rank() || rhs.dimensions(g) != groups ||
        Contains(dnums.rhs_batch_dims, g) ||
        Contains(dnums.rhs_contracting_dims, g)) {
      return Error("ragged-dot rhs group dimension ", g, " of ",
                   ShapeString(rhs), " must be a free dimension of size ",
                   groups);
    }
    Dims dims = DimsOf(rhs);
    dims.erase(dims.begin() + g);
    kernel = Shape(rhs.element_type(), dims);
    for (auto* list : {&d.rhs_batch_dims, &d.rhs_contracting_dims}) {
      for (int64_t& x : *list) x -= x > g ? 1 : 0;
    }
  }
  absl::StatusOr<PrimitiveType> type =
      WiderType(lhs.element_type(), rhs.element_type());
  if (!type.ok()) return type.status();
  absl::StatusOr<Shape> dot = InferDotShape(lhs, kernel, d, *type);
  if (!dot.ok() || !contracting) return dot;
  Dims dims = DimsOf(*dot);
  dims.insert(dims.begin(), groups);
  return Shape(*type, dims);
}

// Raw attribute readers: `name`'s value read by `read`, or `fallback` when
// the attribute is absent (nullopt: required).
template <typename T, typename Read>
absl::StatusOr<T> Attr(const Instruction& inst, absl::string_view name,
                       Read read, std::optional<T> fallback = std::nullopt) {
  const RawAttribute* a = inst.FindRawAttribute(AsStd(name));
  if (a == nullptr) {
    if (fallback.has_value()) return *fallback;
    return Error("needs ", name, "=");
  }
  absl::StatusOr<T> v = read(a->value);
  if (!v.ok()) return Error(name, ": ", v.status().message());
  return v;
}

absl::StatusOr<std::vector<int64_t>> IntsAttr(const Instruction& inst,
                                              absl::string_view name,
                                              bool required = true) {
  return Attr<std::vector<int64_t>>(
      inst, name, ReadIntList,
      required ? std::nullopt
               : std::optional<std::vector<int64_t>>(std::vector<int64_t>{}));
}

absl::StatusOr<int64_t> IntAttr(
    const Instruction& inst, absl::string_view name,
    std::optional<int64_t> fallback = std::nullopt) {
  return Attr<int64_t>(inst, name, ReadInt, fallback);
}

absl::StatusOr<std::vector<WindowDimension>> WindowAttr(
    const Instruction& inst) {
  return Attr<std::vector<WindowDimension>>(inst, "window", ReadWindow,
                                            std::vector<WindowDimension>{});
}

absl::StatusOr<ProgramShape> Called(const Instruction& inst, size_t k) {
  const std::vector<Computation*>& called = inst.called_computations();
  if (k >= called.size() || called[k] == nullptr) {
    return Error("needs its called computations");
  }
  return GetProgramShape(*called[k]);
}

#define ASSIGN_OR_RETURN_NN(lhs, expr) \
  auto lhs = (expr);                   \
  if (!lhs.ok()) return lhs.status()

absl::StatusOr<Shape> InferConvolutionInstruction(const Instruction& inst) {
  ASSIGN_OR_RETURN_NN(window, WindowAttr(inst));
  ASSIGN_OR_RETURN_NN(dnums,
                      Attr<ConvolutionDimensions>(inst, "dim_labels",
                                                  ReadConvolutionDimensions));
  ASSIGN_OR_RETURN_NN(features, IntAttr(inst, "feature_group_count", 1));
  ASSIGN_OR_RETURN_NN(batches, IntAttr(inst, "batch_group_count", 1));
  return InferConvolutionShape(inst.operand(0)->shape(),
                               inst.operand(1)->shape(), *dnums, *window,
                               *features, *batches);
}

absl::StatusOr<Shape> InferGatherInstruction(const Instruction& inst) {
  GatherDimensions d;
  ASSIGN_OR_RETURN_NN(offset, IntsAttr(inst, "offset_dims"));
  ASSIGN_OR_RETURN_NN(collapsed, IntsAttr(inst, "collapsed_slice_dims"));
  ASSIGN_OR_RETURN_NN(start_map, IntsAttr(inst, "start_index_map"));
  ASSIGN_OR_RETURN_NN(vector_dim, IntAttr(inst, "index_vector_dim"));
  ASSIGN_OR_RETURN_NN(batching, IntsAttr(inst, "operand_batching_dims", false));
  ASSIGN_OR_RETURN_NN(sizes, IntsAttr(inst, "slice_sizes"));
  d.offset_dims = *std::move(offset);
  d.collapsed_slice_dims = *std::move(collapsed);
  d.start_index_map = *std::move(start_map);
  d.index_vector_dim = *vector_dim;
  d.operand_batching_dims = *std::move(batching);
  d.slice_sizes = *std::move(sizes);
  return InferGatherShape(inst.operand(0)->shape(), inst.operand(1)->shape(),
                          d);
}

absl::StatusOr<Shape> InferFftInstruction(const Instruction& inst) {
  ASSIGN_OR_RETURN_NN(
      type, Attr<FftType>(inst, "fft_type",
                          [](absl::string_view v) -> absl::StatusOr<FftType> {
                            if (v == "FFT") return FftType::kFft;
                            if (v == "IFFT") return FftType::kIfft;
                            if (v == "RFFT") return FftType::kRfft;
                            if (v == "IRFFT") return FftType::kIrfft;
                            return Error(
                                "expected FFT, IFFT, RFFT or IRFFT, "
                                "found '",
                                v, "'");
                          }));
  ASSIGN_OR_RETURN_NN(length, IntsAttr(inst, "fft_length"));
  return InferFftShape(inst.operand(0)->shape(), *type, *length);
}

absl::StatusOr<Shape> InferBatchNormInstruction(const Instruction& inst) {
  ASSIGN_OR_RETURN_NN(index, IntAttr(inst, "feature_index"));
  absl::InlinedVector<const Shape*, 4> per_feature;
  for (int64_t k = 1; k < inst.operand_count(); ++k) {
    // batch-norm-grad's last operand is the output gradient.
    if (inst.opcode() == Opcode::kBatchNormGrad && k == 4) continue;
    per_feature.push_back(&inst.operand(k)->shape());
  }
  const Shape& operand = inst.operand(0)->shape();
  ASSIGN_OR_RETURN_NN(features,
                      BatchNormFeatures(operand, per_feature, *index));
  if (inst.opcode() == Opcode::kBatchNormGrad &&
      !ShapesMatch(StripLayouts(operand),
                   StripLayouts(inst.operand(4)->shape()))) {
    return Error("batch-norm-grad: the output gradient ",
                 ShapeString(inst.operand(4)->shape()),
                 " must have the operand's shape ", ShapeString(operand));
  }
  const Shape result(operand.element_type(), DimsOf(operand));
  if (inst.opcode() == Opcode::kBatchNormInference) return result;
  const Shape feature(operand.element_type(), {*features});
  return Shape::Tuple({result, feature, feature});
}

absl::StatusOr<Shape> InferRaggedDotInstruction(const Instruction& inst) {
  ASSIGN_OR_RETURN_NN(ragged, IntsAttr(inst, "lhs_ragged_dims"));
  ASSIGN_OR_RETURN_NN(group, IntsAttr(inst, "rhs_group_dims", false));
  return InferRaggedDotShape(inst.operand(0)->shape(), inst.operand(1)->shape(),
                             inst.operand(2)->shape(), inst.attrs().dot.value(),
                             *ragged, *group);
}

}  // namespace

absl::StatusOr<int64_t> WindowOutputSize(int64_t input,
                                         const WindowDimension& w) {
  if (input < 0 || w.size < 0 || w.stride < 1 || w.base_dilation < 1 ||
      w.window_dilation < 1) {
    return Error("window dimension size ", w.size, " stride ", w.stride,
                 " dilations ", w.base_dilation, "/", w.window_dilation,
                 " over ", input,
                 " elements: sizes must be >= 0, strides and "
                 "dilations >= 1");
  }
  // (n - 1) * d + 1 and the padded sum, refused when they overflow.
  auto dilate = [](int64_t n, int64_t d, int64_t* out) {
    if (n == 0) return *out = 0, true;
    return !__builtin_mul_overflow(n - 1, d, out) &&
           !__builtin_add_overflow(*out, 1, out);
  };
  int64_t base = 0, padded = 0, window = 0;
  if (!dilate(input, w.base_dilation, &base) ||
      __builtin_add_overflow(base, w.padding_low, &padded) ||
      __builtin_add_overflow(padded, w.padding_high, &padded) ||
      !dilate(w.size, w.window_dilation, &window)) {
    return Error("window dimension over ", input, " elements overflows");
  }
  if (padded < 0) {
    return Error("window padding ", w.padding_low, "_", w.padding_high,
                 " leaves a negative size of ", input, " elements");
  }
  if (padded < window || window == 0) return 0;
  return (padded - window) / w.stride + 1;
}

absl::StatusOr<Shape> InferConvolutionShape(
    const Shape& lhs, const Shape& rhs, const ConvolutionDimensions& dnums,
    absl::Span<const WindowDimension> window, int64_t feature_group_count,
    int64_t batch_group_count) {
  if (absl::Status s = ExpectArray(lhs, "convolution input"); !s.ok()) return s;
  if (absl::Status s = ExpectArray(rhs, "convolution kernel"); !s.ok()) {
    return s;
  }
  const size_t spatial = dnums.input_spatial.size();
  if (lhs.rank() != static_cast<int64_t>(spatial) + 2 ||
      rhs.rank() != lhs.rank() || window.size() != spatial) {
    return Error("convolution: input ", ShapeString(lhs), " and kernel ",
                 ShapeString(rhs), " must have rank ", spatial + 2,
                 " (dim_labels) and the window ", spatial, " dimensions");
  }
  const int64_t in_features = lhs.dimensions(dnums.input_feature);
  const int64_t batch = lhs.dimensions(dnums.input_batch);
  const int64_t out_features = rhs.dimensions(dnums.kernel_output_feature);
  if (feature_group_count < 1 || batch_group_count < 1 ||
      in_features % feature_group_count != 0 ||
      in_features / feature_group_count !=
          rhs.dimensions(dnums.kernel_input_feature) ||
      out_features % feature_group_count != 0 ||
      batch % batch_group_count != 0 || out_features % batch_group_count != 0) {
    return Error("convolution: input ", ShapeString(lhs), " and kernel ",
                 ShapeString(rhs),
                 " do not fit feature_group_count=", feature_group_count,
                 " batch_group_count=", batch_group_count);
  }
  absl::StatusOr<PrimitiveType> type =
      WiderType(lhs.element_type(), rhs.element_type());
  if (!type.ok()) return type.status();
  Dims out(lhs.rank(), 0);
  out[dnums.output_batch] = batch / batch_group_count;
  out[dnums.output_feature] = out_features;
  for (size_t k = 0; k < spatial; ++k) {
    if (window[k].size != rhs.dimensions(dnums.kernel_spatial[k])) {
      return Error("convolution: window size ", window[k].size,
                   " of spatial dimension ", k, " is not the kernel's ",
                   rhs.dimensions(dnums.kernel_spatial[k]));
    }
    absl::StatusOr<int64_t> n =
        WindowOutputSize(lhs.dimensions(dnums.input_spatial[k]), window[k]);
    if (!n.ok()) return n.status();
    out[dnums.output_spatial[k]] = *n;
  }
  return Shape(*type, out);
}

absl::StatusOr<Shape> InferGatherShape(const Shape& operand,
                                       const Shape& indices,
                                       const GatherDimensions& d) {
  if (absl::Status s = ExpectArray(operand, "gather operand"); !s.ok()) {
    return s;
  }
  if (absl::Status s = ExpectArray(indices, "gather indices"); !s.ok()) {
    return s;
  }
  if (static_cast<int64_t>(d.slice_sizes.size()) != operand.rank() ||
      d.index_vector_dim < 0 || d.index_vector_dim > indices.rank()) {
    return Error("gather: slice_sizes ", DimsString(d.slice_sizes),
                 " and index_vector_dim ", d.index_vector_dim,
                 " do not fit operand ", ShapeString(operand), " and indices ",
                 ShapeString(indices));
  }
  Dims offsets;
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const int64_t size = d.slice_sizes[i];
    if (size < 0 || size > operand.dimensions(i)) {
      return Error("gather: slice size ", size, " of dimension ", i,
                   " is out of range for ", ShapeString(operand));
    }
    const bool dropped = Contains(d.collapsed_slice_dims, i) ||
                         Contains(d.operand_batching_dims, i);
    if (dropped && size > 1) {
      return Error("gather: collapsed or batching dimension ", i,
                   " has slice size ", size, " (at most 1)");
    }
    if (!dropped) offsets.push_back(size);
  }
  Dims batch;
  for (int64_t i = 0; i < indices.rank(); ++i) {
    if (i != d.index_vector_dim) batch.push_back(indices.dimensions(i));
  }
  const int64_t vector_size = d.index_vector_dim == indices.rank()
                                  ? 1
                                  : indices.dimensions(d.index_vector_dim);
  const int64_t rank = static_cast<int64_t>(batch.size() + offsets.size());
  if (offsets.size() != d.offset_dims.size() ||
      !std::is_sorted(d.offset_dims.begin(), d.offset_dims.end()) ||
      static_cast<int64_t>(d.start_index_map.size()) != vector_size) {
    return Error("gather: offset_dims ", DimsString(d.offset_dims),
                 " and start_index_map ", DimsString(d.start_index_map),
                 " do not fit ", offsets.size(), " offset dimensions and ",
                 vector_size, " indices per slice");
  }
  Dims out;
  size_t next_offset = 0, next_batch = 0;
  for (int64_t r = 0; r < rank; ++r) {
    if (next_offset < d.offset_dims.size() && d.offset_dims[next_offset] == r) {
      out.push_back(offsets[next_offset++]);
    } else if (next_batch < batch.size()) {
      out.push_back(batch[next_batch++]);
    } else {
      return Error("gather: offset_dims ", DimsString(d.offset_dims),
                   " are out of range for a result of rank ", rank);
    }
  }
  if (next_offset != offsets.size()) {
    return Error("gather: offset_dims ", DimsString(d.offset_dims),
                 " are out of range for a result of rank ", rank);
  }
  return Shape(operand.element_type(), out);
}

absl::StatusOr<Shape> InferFftShape(const Shape& operand, FftType type,
                                    absl::Span<const int64_t> fft_length) {
  if (absl::Status s = ExpectArray(operand, "fft operand"); !s.ok()) return s;
  const int64_t n = static_cast<int64_t>(fft_length.size());
  if (n < 1 || n > 3 || operand.rank() < n) {
    return Error("fft: fft_length ", DimsString(fft_length),
                 " needs 1 to 3 trailing dimensions of ", ShapeString(operand));
  }
  const PrimitiveType t = operand.element_type();
  Dims dims = DimsOf(operand);
  const int64_t first = operand.rank() - n;
  auto fail = [&](absl::string_view expected) {
    return Error("fft: ", expected, " with fft_length ", DimsString(fft_length),
                 ", found ", ShapeString(operand));
  };
  switch (type) {
    case FftType::kFft:
    case FftType::kIfft:
      if (!IsComplexType(t)) return fail("FFT/IFFT needs a complex operand");
      return Shape(t, dims);
    case FftType::kRfft: {
      if (t != PrimitiveType::kF32 && t != PrimitiveType::kF64) {
        return fail("RFFT needs an f32 or f64 operand");
      }
      for (int64_t k = 0; k < n; ++k) {
        if (dims[first + k] != fft_length[k]) {
          return fail("RFFT needs trailing dimensions equal to fft_length");
        }
      }
      if (fft_length.back() != 0) dims.back() = fft_length.back() / 2 + 1;
      return Shape(
          t == PrimitiveType::kF32 ? PrimitiveType::kC64 : PrimitiveType::kC128,
          dims);
    }
    case FftType::kIrfft: {
      if (t != PrimitiveType::kC64 && t != PrimitiveType::kC128) {
        return fail("IRFFT needs a c64 or c128 operand");
      }
      for (int64_t k = 0; k + 1 < n; ++k) {
        if (dims[first + k] != fft_length[k]) {
          return fail("IRFFT needs trailing dimensions equal to fft_length");
        }
      }
      const int64_t last = fft_length.back();
      if (dims.back() != (last == 0 ? 0 : last / 2 + 1)) {
        return fail("IRFFT needs a last dimension of fft_length/2+1");
      }
      dims.back() = last;
      return Shape(
          t == PrimitiveType::kC64 ? PrimitiveType::kF32 : PrimitiveType::kF64,
          dims);
    }
  }
  return fail("a known fft_type");
}

absl::StatusOr<Shape> InferNnInstructionShape(const Instruction& inst) {
  absl::InlinedVector<const Shape*, 8> operands;
  for (int64_t k = 0; k < inst.operand_count(); ++k) {
    operands.push_back(&inst.operand(k)->shape());
  }
  switch (inst.opcode()) {
    case Opcode::kConvolution:
      return InferConvolutionInstruction(inst);
    case Opcode::kGather:
      return InferGatherInstruction(inst);
    case Opcode::kScatter:
      return InferScatterShape(operands);
    case Opcode::kFft:
      return InferFftInstruction(inst);
    case Opcode::kReduceWindow: {
      ASSIGN_OR_RETURN_NN(window, WindowAttr(inst));
      ASSIGN_OR_RETURN_NN(reducer, Called(inst, 0));
      return InferReduceWindowShape(operands, *window, *reducer);
    }
    case Opcode::kSelectAndScatter: {
      ASSIGN_OR_RETURN_NN(window, WindowAttr(inst));
      return InferSelectAndScatterShape(*operands[0], *operands[1],
                                        *operands[2], *window);
    }
    case Opcode::kBatchNormTraining:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad:
      return InferBatchNormInstruction(inst);
    case Opcode::kCholesky:
      return InferLinalgShape(*operands[0], nullptr, false);
    case Opcode::kTriangularSolve: {
      ASSIGN_OR_RETURN_NN(left, Attr<bool>(inst, "left_side", ReadBool, false));
      return InferLinalgShape(*operands[0], operands[1], *left);
    }
    case Opcode::kRaggedDot:
      return InferRaggedDotInstruction(inst);
    default:
      return Error("no windowed or linear-algebra shape rule for this opcode");
  }
}

}  // namespace hloverlap
