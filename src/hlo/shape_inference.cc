#include "hlo/shape_inference.h"

#include <algorithm>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "hlo/absl_compat.h"
#include "hlo/computation.h"
#include "hlo/instruction.h"
#include "hlo/opcode_traits.h"
#include "hlo/shape_inference_nn.h"

namespace hloverlap {
namespace {

template <typename... Args>
absl::Status Error(const Args&... args) {
  return absl::InvalidArgumentError(absl::StrCat(args...));
}

using Dims = absl::InlinedVector<int64_t, 6>;

bool AddOverflows(int64_t a, int64_t b, int64_t* out) {
  return __builtin_add_overflow(a, b, out);
}
bool MulOverflows(int64_t a, int64_t b, int64_t* out) {
  return __builtin_mul_overflow(a, b, out);
}

absl::string_view TypeName(PrimitiveType t) {
  return AsAbsl(PrimitiveTypeName(t));
}

// OK for an array shape, else "WHAT must be an array"; `what` comes in
// pieces, joined only for the message.
template <typename A, typename... More>
absl::Status ExpectArray(const Shape& shape, const A& what,
                         const More&... more) {
  if (!shape.IsArray()) {
    return Error(what, more..., " must be an array, found ",
                 ShapeString(shape));
  }
  return absl::OkStatus();
}

// Same dimensions (and dimension kinds), element type ignored.
bool SameDimensions(const Shape& a, const Shape& b) {
  if (a.rank() != b.rank()) return false;
  for (int64_t i = 0; i < a.rank(); ++i) {
    if (a.dimensions(i) != b.dimensions(i)) return false;
    if (a.dim_kind(i) != b.dim_kind(i)) return false;
  }
  return true;
}

// StripLayouts(shape) without copying the layout first: an array (no tuple
// elements) is rebuilt from its type, dimensions and dimension kinds.
Shape WithoutLayouts(const Shape& shape) {
  if (!shape.IsArray() || !shape.tuple_shapes().empty()) {
    return StripLayouts(shape);
  }
  Shape s(shape.element_type(), shape.dimensions());
  if (!shape.dim_kinds().empty()) s.mutable_dim_kinds() = shape.dim_kinds();
  return s;
}

Shape ArrayLike(PrimitiveType type, const Shape& dims_from) {
  Shape s = WithoutLayouts(dims_from);
  s.set_element_type(type);
  return s;
}

Shape WithDims(PrimitiveType type, absl::Span<const int64_t> dims) {
  return Shape(type, Dims(dims.begin(), dims.end()));
}

// Checks a dimension list against a rank: every entry in [0, rank), no
// duplicates. `what` names the list in messages.
absl::Status CheckDimensionList(absl::Span<const int64_t> dims, int64_t rank,
                                absl::string_view what, const Shape& shape) {
  absl::InlinedVector<bool, 16> seen(
      static_cast<size_t>(std::max<int64_t>(rank, 0)));
  for (int64_t d : dims) {
    if (d < 0 || d >= rank) {
      return Error(what, " ", DimsString(dims), ": dimension ", d,
                   " is out of range for ", ShapeString(shape), " (rank ", rank,
                   ")");
    }
    if (seen[d]) {
      return Error(what, " ", DimsString(dims), ": dimension ", d,
                   " appears twice");
    }
    seen[d] = true;
  }
  return absl::OkStatus();
}

// Equal types, or two floating-point types (XLA lets reductions mix fp
// precisions between inputs, init values and the reducer).
bool SameTypeIgnoringFpPrecision(PrimitiveType a, PrimitiveType b) {
  return a == b || (IsFloatingPointType(a) && IsFloatingPointType(b));
}

PrimitiveType ComplexComponentType(PrimitiveType t) {
  if (t == PrimitiveType::kC64) return PrimitiveType::kF32;
  if (t == PrimitiveType::kC128) return PrimitiveType::kF64;
  return t;
}

// Index operands of dynamic-slice / dynamic-update-slice.
absl::Status CheckIndices(const Shape& operand,
                          absl::Span<const Shape* const> index_shapes,
                          absl::string_view op) {
  const int64_t rank = operand.rank();
  // One rank-1 index vector.
  if (index_shapes.size() == 1 && index_shapes[0]->IsArray() &&
      index_shapes[0]->rank() == 1) {
    const Shape& v = *index_shapes[0];
    if (!IsIntegralType(v.element_type())) {
      return Error(op, ": index vector must have an integer type, found ",
                   ShapeString(v));
    }
    if (v.dimensions(0) != rank) {
      return Error(op, ": index vector ", ShapeString(v), " must have ", rank,
                   " elements, one per dimension of operand ",
                   ShapeString(operand));
    }
    return absl::OkStatus();
  }
  if (static_cast<int64_t>(index_shapes.size()) != rank) {
    return Error(op, ": expected ", rank,
                 " scalar indices (one per dimension of operand ",
                 ShapeString(operand), "), found ", index_shapes.size());
  }
  for (size_t i = 0; i < index_shapes.size(); ++i) {
    const Shape& s = *index_shapes[i];
    if (!s.IsScalar() || !IsIntegralType(s.element_type())) {
      return Error(op, ": index ", i, " must be an integer scalar, found ",
                   ShapeString(s));
    }
  }
  return absl::OkStatus();
}

bool LayoutsMatch(const Shape& expected, const Shape& actual) {
  if (expected.IsTuple()) {
    if (!actual.IsTuple() || expected.tuple_size() != actual.tuple_size()) {
      return false;
    }
    for (int64_t i = 0; i < expected.tuple_size(); ++i) {
      if (!LayoutsMatch(expected.tuple_shapes(i), actual.tuple_shapes(i))) {
        return false;
      }
    }
    return true;
  }
  if (!expected.has_layout()) return true;
  return actual.has_layout() && *expected.layout() == *actual.layout();
}

Shape MaybeTuple(std::vector<Shape> shapes) {
  if (shapes.size() == 1) return std::move(shapes[0]);
  return Shape::Tuple(std::move(shapes));
}

}  // namespace

// --- Helpers
// ------------------------------------------------------------------

std::string ShapeString(const Shape& shape, bool print_layout) {
  if (!shape.IsTuple()) return shape.ToString(print_layout);
  std::string out = "(";
  for (int64_t i = 0; i < shape.tuple_size(); ++i) {
    if (i > 0) out += ", ";
    out += ShapeString(shape.tuple_shapes(i), print_layout);
  }
  out += ")";
  return out;
}

std::string DimsString(absl::Span<const int64_t> dims) {
  return absl::StrCat("{", absl::StrJoin(dims, ","), "}");
}

absl::Status ExpectOnePerDimension(std::string_view op, std::string_view what,
                                   size_t entries, const Shape& operand) {
  if (static_cast<int64_t>(entries) == operand.rank()) return absl::OkStatus();
  return Error(AsAbsl(op), ": ", AsAbsl(what), " has ", entries,
               " entries, expected one per dimension of operand ",
               ShapeString(operand));
}

absl::Status ExpectOnePerDimension(std::string_view op,
                                   std::string_view attribute,
                                   absl::Span<const int64_t> values,
                                   const Shape& operand) {
  if (static_cast<int64_t>(values.size()) == operand.rank()) {
    return absl::OkStatus();
  }
  return ExpectOnePerDimension(
      op, absl::StrCat(AsAbsl(attribute), "=", DimsString(values)),
      values.size(), operand);
}

Shape StripLayouts(Shape shape) {
  shape.clear_layout();
  for (Shape& s : shape.mutable_tuple_shapes()) s = StripLayouts(std::move(s));
  return shape;
}

bool ShapesMatch(const Shape& expected, const Shape& actual,
                 bool check_layouts) {
  if (!expected.Compatible(actual)) return false;
  return !check_layouts || LayoutsMatch(expected, actual);
}

std::string ProgramShape::ToString() const {
  std::string out = "(";
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (i > 0) out += ", ";
    out += ShapeString(parameters[i]);
  }
  absl::StrAppend(&out, ") -> ", ShapeString(result));
  return out;
}

absl::StatusOr<ProgramShape> GetProgramShape(const Computation& computation) {
  ProgramShape program;
  const auto& params = computation.parameters();
  program.parameters.reserve(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i] == nullptr) {
      return Error("computation ", computation.name(), " has no parameter ", i);
    }
    program.parameters.push_back(params[i]->shape());
  }
  if (computation.root() == nullptr) {
    return Error("computation ", computation.name(), " has no root");
  }
  program.result = computation.root()->shape();
  return program;
}

// --- Elementwise ----------------------------------------------------------

absl::StatusOr<Shape> InferUnaryElementwiseShape(Opcode opcode,
                                                 const Shape& operand) {
  const absl::string_view name = AsAbsl(OpcodeName(opcode));
  // A copy of a tuple is XLA's shallow copy: the operand's shape.
  if (opcode == Opcode::kCopy && operand.IsTuple()) {
    return WithoutLayouts(operand);
  }
  if (absl::Status s = ExpectArray(operand, name, " operand"); !s.ok()) {
    return s;
  }
  const PrimitiveType type = operand.element_type();
  switch (opcode) {
    case Opcode::kConvert:
    case Opcode::kBitcastConvert:
      return Error(name, " changes the element type: use InferConvertShape");
    case Opcode::kReal:
    case Opcode::kImag:
    case Opcode::kAbs:
      return ArrayLike(ComplexComponentType(type), operand);
    case Opcode::kIsFinite:
      if (!IsFloatingPointType(type)) {
        return Error("is-finite operand must be floating point, found ",
                     ShapeString(operand));
      }
      return ArrayLike(PrimitiveType::kPred, operand);
    case Opcode::kNot:
      if (type != PrimitiveType::kPred && !IsIntegralType(type)) {
        return Error("not operand must be pred or integral, found ",
                     ShapeString(operand));
      }
      return WithoutLayouts(operand);
    case Opcode::kPopcnt:
    case Opcode::kCountLeadingZeros:
      if (!IsIntegralType(type)) {
        return Error(name, " operand must be integral, found ",
                     ShapeString(operand));
      }
      return WithoutLayouts(operand);
    default:
      return WithoutLayouts(operand);
  }
}

absl::StatusOr<Shape> InferBinaryElementwiseShape(Opcode opcode,
                                                  const Shape& lhs,
                                                  const Shape& rhs) {
  const absl::string_view name = AsAbsl(OpcodeName(opcode));
  if (absl::Status s = ExpectArray(lhs, name, " lhs"); !s.ok()) {
    return s;
  }
  if (absl::Status s = ExpectArray(rhs, name, " rhs"); !s.ok()) {
    return s;
  }
  if (!SameDimensions(lhs, rhs)) {
    return Error(name, ": operands must have the same dimensions, found lhs ",
                 ShapeString(lhs), " and rhs ", ShapeString(rhs));
  }
  if (opcode == Opcode::kStochasticConvert) {
    if (PrimitiveTypeBitWidth(lhs.element_type()) !=
            PrimitiveTypeBitWidth(rhs.element_type()) ||
        !IsUnsignedIntegralType(rhs.element_type())) {
      return Error(
          "stochastic-convert: random bits must be unsigned integers of the "
          "operand's bit width, found operand ",
          ShapeString(lhs), " and random bits ", ShapeString(rhs));
    }
    return WithoutLayouts(lhs);
  }
  if (lhs.element_type() != rhs.element_type()) {
    return Error(name, ": operands must have the same element type, found lhs ",
                 ShapeString(lhs), " and rhs ", ShapeString(rhs));
  }
  if (opcode == Opcode::kCompare) {
    return ArrayLike(PrimitiveType::kPred, lhs);
  }
  if (opcode == Opcode::kComplex) {
    if (lhs.element_type() == PrimitiveType::kF32) {
      return ArrayLike(PrimitiveType::kC64, lhs);
    }
    if (lhs.element_type() == PrimitiveType::kF64) {
      return ArrayLike(PrimitiveType::kC128, lhs);
    }
    return Error("complex: operands must be f32 or f64, found ",
                 ShapeString(lhs));
  }
  return WithoutLayouts(lhs);
}

absl::StatusOr<Shape> InferCompareShape(const Shape& lhs, const Shape& rhs) {
  return InferBinaryElementwiseShape(Opcode::kCompare, lhs, rhs);
}

absl::StatusOr<Shape> InferSelectShape(const Shape& pred, const Shape& on_true,
                                       const Shape& on_false) {
  if (!pred.IsArray() || pred.element_type() != PrimitiveType::kPred) {
    return Error("select: predicate must be a pred array, found ",
                 ShapeString(pred));
  }
  if (!on_true.Compatible(on_false)) {
    return Error("select: on_true ", ShapeString(on_true), " and on_false ",
                 ShapeString(on_false), " must have the same shape");
  }
  if (on_true.IsArray()) {
    if (!pred.IsScalar() && !SameDimensions(pred, on_true)) {
      return Error("select: predicate ", ShapeString(pred),
                   " must be a scalar or have the dimensions of the values ",
                   ShapeString(on_true));
    }
    return WithoutLayouts(on_true);
  }
  // Legacy tuple select: scalar predicate.
  if (!pred.IsScalar()) {
    return Error("select of non-array values ", ShapeString(on_true),
                 " needs a scalar predicate, found ", ShapeString(pred));
  }
  return on_true;
}

absl::StatusOr<Shape> InferClampShape(const Shape& min, const Shape& operand,
                                      const Shape& max) {
  if (absl::Status s = ExpectArray(operand, "clamp operand"); !s.ok()) {
    return s;
  }
  const std::pair<const Shape*, absl::string_view> bounds[] = {{&min, "min"},
                                                               {&max, "max"}};
  for (const auto& [bound, what] : bounds) {
    if (!bound->IsArray() || bound->element_type() != operand.element_type() ||
        (!bound->IsScalar() && !SameDimensions(*bound, operand))) {
      return Error("clamp: ", what, " ", ShapeString(*bound),
                   " must be a scalar or have the shape of the operand ",
                   ShapeString(operand));
    }
  }
  return WithoutLayouts(operand);
}

absl::StatusOr<Shape> InferConvertShape(const Shape& operand,
                                        PrimitiveType new_type) {
  if (absl::Status s = ExpectArray(operand, "convert operand"); !s.ok()) {
    return s;
  }
  if (!IsArrayType(new_type)) {
    return Error("convert: result element type must be an array type, found ",
                 TypeName(new_type));
  }
  return ArrayLike(new_type, operand);
}

absl::StatusOr<Shape> InferBitcastConvertShape(const Shape& operand,
                                               PrimitiveType new_type) {
  if (absl::Status s = ExpectArray(operand, "bitcast-convert operand");
      !s.ok()) {
    return s;
  }
  if (!IsArrayType(new_type)) {
    return Error(
        "bitcast-convert: result element type must be an array type, found ",
        TypeName(new_type));
  }
  const int in_bits = PrimitiveTypeBitWidth(operand.element_type());
  const int out_bits = PrimitiveTypeBitWidth(new_type);
  if (in_bits <= 0 || out_bits <= 0) {
    return Error("bitcast-convert: unknown bit width converting ",
                 ShapeString(operand), " to ", TypeName(new_type));
  }
  if (in_bits == out_bits) return ArrayLike(new_type, operand);
  Shape result = ArrayLike(new_type, operand);
  if (in_bits > out_bits) {
    if (in_bits % out_bits != 0) {
      return Error("bitcast-convert: ", in_bits, "-bit ", ShapeString(operand),
                   " cannot be split into ", out_bits, "-bit elements");
    }
    Dims dims(operand.dimensions().begin(), operand.dimensions().end());
    dims.push_back(in_bits / out_bits);
    return WithDims(new_type, dims);
  }
  if (out_bits % in_bits != 0 || operand.rank() == 0 ||
      operand.dimensions(operand.rank() - 1) != out_bits / in_bits) {
    return Error("bitcast-convert: converting ", ShapeString(operand), " to ",
                 TypeName(new_type), " needs a trailing dimension of size ",
                 out_bits / in_bits);
  }
  Dims dims(operand.dimensions().begin(), operand.dimensions().end() - 1);
  return WithDims(new_type, dims);
}

// --- Data movement ----------------------------------------------------------

absl::StatusOr<Shape> InferBroadcastShape(
    const Shape& operand, absl::Span<const int64_t> result_dims,
    absl::Span<const int64_t> dimensions) {
  if (absl::Status s = ExpectArray(operand, "broadcast operand"); !s.ok()) {
    return s;
  }
  if (absl::Status s =
          ExpectOnePerDimension("broadcast", "dimensions", dimensions, operand);
      !s.ok()) {
    return s;
  }
  for (int64_t d : result_dims) {
    if (d < 0) {
      return Error("broadcast: result dimensions ", DimsString(result_dims),
                   " must not be negative");
    }
  }
  const int64_t result_rank = result_dims.size();
  absl::InlinedVector<bool, 16> seen(result_rank);
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const int64_t d = dimensions[i];
    if (d < 0 || d >= result_rank) {
      return Error("broadcast: dimensions=", DimsString(dimensions),
                   ": operand dimension ", i, " maps to result dimension ", d,
                   ", out of range for result rank ", result_rank);
    }
    if (seen[d]) {
      return Error("broadcast: dimensions=", DimsString(dimensions),
                   ": result dimension ", d, " appears twice");
    }
    seen[d] = true;
    if (result_dims[d] != operand.dimensions(i)) {
      return Error("broadcast: operand dimension ", i, " (size ",
                   operand.dimensions(i), ") of ", ShapeString(operand),
                   " maps to result dimension ", d, " of size ",
                   result_dims[d]);
    }
  }
  return WithDims(operand.element_type(), result_dims);
}

absl::StatusOr<Shape> InferReshapeShape(const Shape& operand,
                                        absl::Span<const int64_t> result_dims) {
  if (absl::Status s = ExpectArray(operand, "reshape operand"); !s.ok()) {
    return s;
  }
  int64_t count = 1;
  for (int64_t d : result_dims) {
    if (d < 0) {
      return Error("reshape: result dimensions ", DimsString(result_dims),
                   " must not be negative");
    }
    if (MulOverflows(count, d, &count)) count = INT64_MAX;
  }
  Shape result = WithDims(operand.element_type(), result_dims);
  if (count != operand.ElementCount()) {
    return Error("reshape: operand ", ShapeString(operand), " has ",
                 operand.ElementCount(), " elements but ", ShapeString(result),
                 " has ", count);
  }
  return result;
}

absl::StatusOr<Shape> InferTransposeShape(
    const Shape& operand, absl::Span<const int64_t> permutation) {
  if (absl::Status s = ExpectArray(operand, "transpose operand"); !s.ok()) {
    return s;
  }
  if (absl::Status s = ExpectOnePerDimension("transpose", "dimensions",
                                             permutation, operand);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckDimensionList(permutation, operand.rank(),
                                          "transpose dimensions", operand);
      !s.ok()) {
    return s;
  }
  Dims dims;
  for (int64_t p : permutation) dims.push_back(operand.dimensions(p));
  return WithDims(operand.element_type(), dims);
}

absl::StatusOr<Shape> InferReverseShape(const Shape& operand,
                                        absl::Span<const int64_t> dimensions) {
  if (absl::Status s = ExpectArray(operand, "reverse operand"); !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckDimensionList(dimensions, operand.rank(),
                                          "reverse dimensions", operand);
      !s.ok()) {
    return s;
  }
  return WithoutLayouts(operand);
}

absl::StatusOr<Shape> InferSliceShape(const Shape& operand,
                                      absl::Span<const SliceRange> ranges) {
  if (absl::Status s = ExpectArray(operand, "slice operand"); !s.ok()) {
    return s;
  }
  if (absl::Status s =
          ExpectOnePerDimension("slice", "the slice", ranges.size(), operand);
      !s.ok()) {
    return s;
  }
  Dims dims;
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const SliceRange& r = ranges[i];
    const int64_t dim = operand.dimensions(i);
    if (r.stride < 1) {
      return Error("slice dimension ", i, ": stride ", r.stride,
                   " must be positive");
    }
    if (r.start < 0 || r.start > dim) {
      return Error("slice dimension ", i, ": start ", r.start,
                   " is out of range [0, ", dim, "] for operand ",
                   ShapeString(operand));
    }
    if (r.limit < r.start || r.limit > dim) {
      return Error("slice dimension ", i, ": limit ", r.limit,
                   " is out of range [", r.start, ", ", dim, "] for operand ",
                   ShapeString(operand));
    }
    const int64_t extent = r.limit - r.start;
    dims.push_back(extent / r.stride + (extent % r.stride != 0 ? 1 : 0));
  }
  return WithDims(operand.element_type(), dims);
}

absl::StatusOr<Shape> InferDynamicSliceShape(
    const Shape& operand, absl::Span<const Shape* const> index_shapes,
    absl::Span<const int64_t> slice_sizes) {
  if (absl::Status s = ExpectArray(operand, "dynamic-slice operand"); !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckIndices(operand, index_shapes, "dynamic-slice");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ExpectOnePerDimension(
          "dynamic-slice", "dynamic_slice_sizes", slice_sizes, operand);
      !s.ok()) {
    return s;
  }
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (slice_sizes[i] < 0 || slice_sizes[i] > operand.dimensions(i)) {
      return Error("dynamic-slice dimension ", i, ": slice size ",
                   slice_sizes[i], " is out of range [0, ",
                   operand.dimensions(i), "] for operand ",
                   ShapeString(operand));
    }
  }
  return WithDims(operand.element_type(), slice_sizes);
}

absl::StatusOr<Shape> InferDynamicUpdateSliceShape(
    const Shape& operand, const Shape& update,
    absl::Span<const Shape* const> index_shapes) {
  if (absl::Status s = ExpectArray(operand, "dynamic-update-slice operand");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ExpectArray(update, "dynamic-update-slice update");
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          CheckIndices(operand, index_shapes, "dynamic-update-slice");
      !s.ok()) {
    return s;
  }
  if (update.rank() != operand.rank()) {
    return Error("dynamic-update-slice: update ", ShapeString(update),
                 " must have the rank of operand ", ShapeString(operand));
  }
  if (update.element_type() != operand.element_type()) {
    return Error("dynamic-update-slice: update ", ShapeString(update),
                 " must have the element type of operand ",
                 ShapeString(operand));
  }
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (update.dimensions(i) < 0 ||
        update.dimensions(i) > operand.dimensions(i)) {
      return Error("dynamic-update-slice dimension ", i, ": update ",
                   ShapeString(update), " does not fit in operand ",
                   ShapeString(operand));
    }
  }
  return WithoutLayouts(operand);
}

absl::StatusOr<Shape> InferConcatenateShape(
    absl::Span<const Shape* const> operands, int64_t dimension) {
  if (operands.empty()) {
    return Error("concatenate needs at least one operand");
  }
  const Shape& first = *operands[0];
  if (absl::Status s = ExpectArray(first, "concatenate operand 0"); !s.ok()) {
    return s;
  }
  if (dimension < 0 || dimension >= first.rank()) {
    return Error("concatenate: dimension ", dimension,
                 " is out of range for operand 0 ", ShapeString(first),
                 " (rank ", first.rank(), ")");
  }
  Dims dims(first.dimensions().begin(), first.dimensions().end());
  for (size_t k = 1; k < operands.size(); ++k) {
    const Shape& s = *operands[k];
    if (absl::Status st = ExpectArray(s, "concatenate operand ", k); !st.ok()) {
      return st;
    }
    if (s.element_type() != first.element_type() || s.rank() != first.rank()) {
      return Error("concatenate: operand ", k, " ", ShapeString(s),
                   " must have the element type and rank of operand 0 ",
                   ShapeString(first));
    }
    for (int64_t i = 0; i < s.rank(); ++i) {
      if (i == dimension) continue;
      if (s.dimensions(i) != first.dimensions(i)) {
        return Error("concatenate along dimension ", dimension, ": operand ", k,
                     " ", ShapeString(s), " differs from operand 0 ",
                     ShapeString(first), " in dimension ", i);
      }
    }
    if (AddOverflows(dims[dimension], s.dimensions(dimension),
                     &dims[dimension])) {
      return Error("concatenate: result dimension ", dimension, " overflows");
    }
  }
  return WithDims(first.element_type(), dims);
}

absl::StatusOr<Shape> InferPadShape(const Shape& operand,
                                    const Shape& padding_value,
                                    absl::Span<const PaddingDim> padding) {
  if (absl::Status s = ExpectArray(operand, "pad operand"); !s.ok()) {
    return s;
  }
  if (!padding_value.IsScalar() ||
      padding_value.element_type() != operand.element_type()) {
    return Error("pad: padding value must be a scalar of type ",
                 TypeName(operand.element_type()), ", found ",
                 ShapeString(padding_value));
  }
  if (absl::Status s =
          ExpectOnePerDimension("pad", "the padding", padding.size(), operand);
      !s.ok()) {
    return s;
  }
  Dims dims;
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const PaddingDim& p = padding[i];
    const int64_t dim = operand.dimensions(i);
    if (p.interior < 0) {
      return Error("pad dimension ", i, ": interior padding ", p.interior,
                   " must not be negative");
    }
    int64_t size = 0;
    int64_t interior_total = 0;
    if (MulOverflows(std::max<int64_t>(dim - 1, 0), p.interior,
                     &interior_total) ||
        AddOverflows(dim, interior_total, &size) ||
        AddOverflows(size, p.low, &size) || AddOverflows(size, p.high, &size)) {
      return Error("pad dimension ", i, ": result size overflows");
    }
    if (size < 0) {
      return Error("pad dimension ", i, ": padding ", p.low, "_", p.high, "_",
                   p.interior, " of size ", dim, " gives negative size ", size);
    }
    dims.push_back(size);
  }
  return WithDims(operand.element_type(), dims);
}

absl::StatusOr<Shape> InferIotaShape(const Shape& shape,
                                     int64_t iota_dimension) {
  if (absl::Status s = ExpectArray(shape, "iota result"); !s.ok()) return s;
  if (iota_dimension < 0 || iota_dimension >= shape.rank()) {
    return Error("iota: iota_dimension=", iota_dimension,
                 " is out of range for ", ShapeString(shape), " (rank ",
                 shape.rank(), ")");
  }
  return WithoutLayouts(shape);
}

// --- Contractions and reductions --------------------------------------------

absl::StatusOr<Shape> InferDotShape(const Shape& lhs, const Shape& rhs,
                                    const DotDimensionNumbers& dnums,
                                    std::optional<PrimitiveType> result_type) {
  if (absl::Status s = ExpectArray(lhs, "dot lhs"); !s.ok()) return s;
  if (absl::Status s = ExpectArray(rhs, "dot rhs"); !s.ok()) return s;
  if (dnums.lhs_batch_dims.size() != dnums.rhs_batch_dims.size()) {
    return Error("dot: lhs_batch_dims=", DimsString(dnums.lhs_batch_dims),
                 " and rhs_batch_dims=", DimsString(dnums.rhs_batch_dims),
                 " must have the same length");
  }
  if (dnums.lhs_contracting_dims.size() != dnums.rhs_contracting_dims.size()) {
    return Error(
        "dot: lhs_contracting_dims=", DimsString(dnums.lhs_contracting_dims),
        " and rhs_contracting_dims=", DimsString(dnums.rhs_contracting_dims),
        " must have the same length");
  }
  // Batch and contracting dimensions of one side, together, must be in range
  // and distinct.
  auto check_side = [](const Shape& s, const DimensionVector& batch,
                       const DimensionVector& contracting,
                       absl::string_view side) -> absl::Status {
    DimensionVector all(batch.begin(), batch.end());
    all.insert(all.end(), contracting.begin(), contracting.end());
    return CheckDimensionList(
        all, s.rank(), absl::StrCat("dot ", side, " batch+contracting dims"),
        s);
  };
  if (absl::Status s = check_side(lhs, dnums.lhs_batch_dims,
                                  dnums.lhs_contracting_dims, "lhs");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = check_side(rhs, dnums.rhs_batch_dims,
                                  dnums.rhs_contracting_dims, "rhs");
      !s.ok()) {
    return s;
  }
  for (size_t i = 0; i < dnums.lhs_batch_dims.size(); ++i) {
    const int64_t l = dnums.lhs_batch_dims[i];
    const int64_t r = dnums.rhs_batch_dims[i];
    if (lhs.dimensions(l) != rhs.dimensions(r)) {
      return Error("dot: lhs batch dimension ", l, " (size ", lhs.dimensions(l),
                   ") does not match rhs batch dimension ", r, " (size ",
                   rhs.dimensions(r), ") (lhs ", ShapeString(lhs), ", rhs ",
                   ShapeString(rhs), ")");
    }
  }
  for (size_t i = 0; i < dnums.lhs_contracting_dims.size(); ++i) {
    const int64_t l = dnums.lhs_contracting_dims[i];
    const int64_t r = dnums.rhs_contracting_dims[i];
    if (lhs.dimensions(l) != rhs.dimensions(r)) {
      return Error("dot: lhs contracting dimension ", l, " (size ",
                   lhs.dimensions(l),
                   ") does not match rhs contracting dimension ", r, " (size ",
                   rhs.dimensions(r), ") (lhs ", ShapeString(lhs), ", rhs ",
                   ShapeString(rhs), ")");
    }
  }
  auto is_in = [](const DimensionVector& v, int64_t d) {
    return std::find(v.begin(), v.end(), d) != v.end();
  };
  Dims dims;
  for (int64_t l : dnums.lhs_batch_dims) dims.push_back(lhs.dimensions(l));
  for (int64_t i = 0; i < lhs.rank(); ++i) {
    if (!is_in(dnums.lhs_batch_dims, i) &&
        !is_in(dnums.lhs_contracting_dims, i)) {
      dims.push_back(lhs.dimensions(i));
    }
  }
  for (int64_t i = 0; i < rhs.rank(); ++i) {
    if (!is_in(dnums.rhs_batch_dims, i) &&
        !is_in(dnums.rhs_contracting_dims, i)) {
      dims.push_back(rhs.dimensions(i));
    }
  }
  return WithDims(result_type.value_or(lhs.element_type()), dims);
}

absl::Status CheckReducerShape(const ProgramShape& reducer,
                               absl::Span<const PrimitiveType> input_types,
                               absl::Span<const PrimitiveType> init_types) {
  const size_t k = init_types.size();
  if (input_types.size() != k || k == 0) {
    return Error("reducer: ", input_types.size(), " inputs and ", k,
                 " init values given");
  }
  if (reducer.parameters.size() != 2 * k) {
    return Error("reducer ", reducer.ToString(), " must take ", 2 * k,
                 " scalar parameters (", k, " accumulators, ", k, " inputs)");
  }
  std::vector<Shape> expected_result;
  for (size_t i = 0; i < k; ++i) {
    const Shape& acc = reducer.parameters[i];
    const Shape& in = reducer.parameters[k + i];
    if (!acc.IsScalar()) {
      return Error("reducer ", reducer.ToString(), ": parameter ", i,
                   " (accumulator) must be a scalar");
    }
    if (!SameTypeIgnoringFpPrecision(acc.element_type(), init_types[i])) {
      return Error("reducer ", reducer.ToString(), ": accumulator ", i, " ",
                   ShapeString(acc), " does not match init value type ",
                   TypeName(init_types[i]));
    }
    if (!in.IsScalar() ||
        !SameTypeIgnoringFpPrecision(in.element_type(), input_types[i])) {
      return Error("reducer ", reducer.ToString(), ": parameter ", k + i,
                   " must be ", TypeName(input_types[i]),
                   "[] (the element type of input ", i, ")");
    }
    expected_result.push_back(Shape::Scalar(acc.element_type()));
  }
  Shape expected = MaybeTuple(std::move(expected_result));
  if (!expected.Compatible(reducer.result)) {
    return Error("reducer ", reducer.ToString(), " must return ",
                 ShapeString(expected), " (its accumulator types)");
  }
  return absl::OkStatus();
}

absl::StatusOr<Shape> InferReduceShape(absl::Span<const Shape* const> operands,
                                       absl::Span<const int64_t> dimensions,
                                       const ProgramShape& to_apply) {
  if (operands.empty() || operands.size() % 2 != 0) {
    return Error("reduce needs an even number (2k > 0) of operands, found ",
                 operands.size());
  }
  const size_t k = operands.size() / 2;
  const Shape& first = *operands[0];
  std::vector<PrimitiveType> input_types;
  std::vector<PrimitiveType> init_types;
  for (size_t i = 0; i < k; ++i) {
    const Shape& in = *operands[i];
    if (absl::Status s = ExpectArray(in, "reduce input ", i); !s.ok()) {
      return s;
    }
    if (!SameDimensions(in, first)) {
      return Error("reduce: input ", i, " ", ShapeString(in),
                   " must have the dimensions of input 0 ", ShapeString(first));
    }
    const Shape& init = *operands[k + i];
    if (!init.IsScalar()) {
      return Error("reduce: init value ", i, " must be a scalar, found ",
                   ShapeString(init));
    }
    input_types.push_back(in.element_type());
    init_types.push_back(init.element_type());
  }
  if (absl::Status s = CheckDimensionList(dimensions, first.rank(),
                                          "reduce dimensions", first);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckReducerShape(to_apply, input_types, init_types);
      !s.ok()) {
    return s;
  }
  Dims kept;
  for (int64_t i = 0; i < first.rank(); ++i) {
    if (std::find(dimensions.begin(), dimensions.end(), i) ==
        dimensions.end()) {
      kept.push_back(first.dimensions(i));
    }
  }
  std::vector<Shape> results;
  for (size_t i = 0; i < k; ++i) {
    results.push_back(WithDims(to_apply.parameters[i].element_type(), kept));
  }
  return MaybeTuple(std::move(results));
}

// --- Tuples and control flow ------------------------------------------------

absl::StatusOr<Shape> InferTupleShape(absl::Span<const Shape* const> operands) {
  std::vector<Shape> elements;
  elements.reserve(operands.size());
  for (const Shape* s : operands) elements.push_back(*s);
  return Shape::Tuple(std::move(elements));
}

absl::StatusOr<Shape> InferGetTupleElementShape(const Shape& operand,
                                                int64_t index) {
  if (!operand.IsTuple()) {
    return Error("get-tuple-element: operand must be a tuple, found ",
                 ShapeString(operand));
  }
  if (index < 0 || index >= operand.tuple_size()) {
    return Error("get-tuple-element: index=", index,
                 " is out of range for operand ", ShapeString(operand),
                 " with ", operand.tuple_size(), " elements");
  }
  return operand.tuple_shapes(index);
}

absl::StatusOr<Shape> InferWhileShape(const Shape& init,
                                      const ProgramShape& condition,
                                      const ProgramShape& body) {
  if (condition.parameters.size() != 1) {
    return Error("while: condition ", condition.ToString(),
                 " must take exactly one parameter (the loop state ",
                 ShapeString(init), ")");
  }
  if (!condition.parameters[0].Compatible(init)) {
    return Error("while: condition parameter ",
                 ShapeString(condition.parameters[0]),
                 " does not match the loop state ", ShapeString(init));
  }
  if (!condition.result.Compatible(Shape::Scalar(PrimitiveType::kPred))) {
    return Error("while: condition must return pred[], found ",
                 ShapeString(condition.result));
  }
  if (body.parameters.size() != 1) {
    return Error("while: body ", body.ToString(),
                 " must take exactly one parameter (the loop state ",
                 ShapeString(init), ")");
  }
  if (!body.parameters[0].Compatible(init)) {
    return Error("while: body parameter ", ShapeString(body.parameters[0]),
                 " does not match the loop state ", ShapeString(init));
  }
  if (!body.result.Compatible(init)) {
    return Error("while: body returns ", ShapeString(body.result),
                 ", expected the loop state ", ShapeString(init));
  }
  return init;
}

absl::StatusOr<Shape> InferCallShape(absl::Span<const Shape* const> arguments,
                                     const ProgramShape& callee) {
  if (arguments.size() != callee.parameters.size()) {
    return Error("call: ", arguments.size(), " arguments for callee ",
                 callee.ToString(), " with ", callee.parameters.size(),
                 " parameters");
  }
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (!arguments[i]->Compatible(callee.parameters[i])) {
      return Error("call: argument ", i, " ", ShapeString(*arguments[i]),
                   " does not match callee parameter ", i, " ",
                   ShapeString(callee.parameters[i]));
    }
  }
  return callee.result;
}

absl::StatusOr<Shape> InferConditionalShape(
    const Shape& selector, absl::Span<const Shape* const> branch_operands,
    absl::Span<const ProgramShape> branches) {
  if (branches.empty()) {
    return Error("conditional needs at least one branch");
  }
  if (selector.Compatible(Shape::Scalar(PrimitiveType::kPred))) {
    if (branches.size() != 2) {
      return Error(
          "conditional with a pred[] selector needs 2 branches, "
          "found ",
          branches.size());
    }
  } else if (!selector.Compatible(Shape::Scalar(PrimitiveType::kS32))) {
    return Error("conditional: selector must be pred[] or s32[], found ",
                 ShapeString(selector));
  }
  if (branch_operands.size() != branches.size()) {
    return Error("conditional: ", branch_operands.size(),
                 " branch operands for ", branches.size(), " branches");
  }
  for (size_t i = 0; i < branches.size(); ++i) {
    const ProgramShape& b = branches[i];
    if (b.parameters.size() != 1) {
      return Error("conditional: branch ", i, " ", b.ToString(),
                   " must take exactly one parameter");
    }
    if (!b.parameters[0].Compatible(*branch_operands[i])) {
      return Error("conditional: branch ", i, " parameter ",
                   ShapeString(b.parameters[0]),
                   " does not match branch operand ",
                   ShapeString(*branch_operands[i]));
    }
    if (!b.result.Compatible(branches[0].result)) {
      return Error("conditional: branch ", i, " returns ",
                   ShapeString(b.result), " but branch 0 returns ",
                   ShapeString(branches[0].result));
    }
  }
  return branches[0].result;
}

// --- Collectives
// --------------------------------------------------------------

namespace {

absl::StatusOr<Shape> ScaleDimension(absl::Span<const Shape* const> operands,
                                     int64_t dimension, int64_t group_size,
                                     bool gather, absl::string_view op) {
  if (operands.empty()) return Error(op, " needs at least one operand");
  if (group_size < 1) {
    return Error(op, ": group size ", group_size, " must be positive");
  }
  std::vector<Shape> results;
  for (size_t k = 0; k < operands.size(); ++k) {
    const Shape& s = *operands[k];
    if (absl::Status st = ExpectArray(s, op, " operand ", k); !st.ok()) {
      return st;
    }
    if (dimension < 0 || dimension >= s.rank()) {
      return Error(op, ": dimension ", dimension, " is out of range for ",
                   "operand ", ShapeString(s), " (rank ", s.rank(), ")");
    }
    Shape r = WithoutLayouts(s);
    const int64_t d = s.dimensions(dimension);
    if (gather) {
      int64_t out = 0;
      if (MulOverflows(d, group_size, &out)) {
        return Error(op, ": result dimension ", dimension, " overflows");
      }
      r.set_dimension(dimension, out);
    } else {
      if (d % group_size != 0) {
        return Error(op, ": dimension ", dimension, " (size ", d,
                     ") of operand ", ShapeString(s),
                     " is not divisible by the group size ", group_size);
      }
      r.set_dimension(dimension, d / group_size);
    }
    results.push_back(std::move(r));
  }
  return MaybeTuple(std::move(results));
}

std::vector<Shape> StrippedOperands(absl::Span<const Shape* const> operands) {
  std::vector<Shape> out;
  out.reserve(operands.size());
  for (const Shape* s : operands) out.push_back(WithoutLayouts(*s));
  return out;
}

}  // namespace

absl::StatusOr<Shape> InferAllGatherShape(
    absl::Span<const Shape* const> operands, int64_t dimension,
    int64_t group_size) {
  return ScaleDimension(operands, dimension, group_size, /*gather=*/true,
                        "all-gather");
}

absl::StatusOr<Shape> InferReduceScatterShape(
    absl::Span<const Shape* const> operands, int64_t dimension,
    int64_t group_size) {
  return ScaleDimension(operands, dimension, group_size, /*gather=*/false,
                        "reduce-scatter");
}

absl::StatusOr<Shape> InferAllReduceShape(
    absl::Span<const Shape* const> operands) {
  if (operands.empty()) return Error("all-reduce needs at least one operand");
  for (size_t k = 0; k < operands.size(); ++k) {
    if (absl::Status s = ExpectArray(*operands[k], "all-reduce operand ", k);
        !s.ok()) {
      return s;
    }
  }
  return MaybeTuple(StrippedOperands(operands));
}

absl::StatusOr<Shape> InferAllToAllShape(
    absl::Span<const Shape* const> operands,
    std::optional<int64_t> split_dimension, std::optional<int64_t> group_size) {
  if (operands.empty()) return Error("all-to-all needs at least one operand");
  for (size_t k = 0; k < operands.size(); ++k) {
    if (absl::Status s = ExpectArray(*operands[k], "all-to-all operand ", k);
        !s.ok()) {
      return s;
    }
  }
  if (split_dimension.has_value()) {
    for (const Shape* s : operands) {
      const int64_t d = *split_dimension;
      if (d < 0 || d >= s->rank()) {
        return Error("all-to-all: split dimension ", d,
                     " is out of range for operand ", ShapeString(*s),
                     " (rank ", s->rank(), ")");
      }
      if (group_size.has_value() && *group_size > 0 &&
          s->dimensions(d) % *group_size != 0) {
        return Error("all-to-all: split dimension ", d, " (size ",
                     s->dimensions(d), ") of operand ", ShapeString(*s),
                     " is not divisible by the group size ", *group_size);
      }
    }
  }
  if (operands.size() == 1 && split_dimension.has_value()) {
    return WithoutLayouts(*operands[0]);
  }
  return Shape::Tuple(StrippedOperands(operands));
}

absl::StatusOr<Shape> InferCollectivePermuteShape(
    absl::Span<const Shape* const> operands, bool in_place) {
  if (operands.empty()) {
    return Error("collective-permute needs at least one operand");
  }
  if (in_place) {
    if (operands.size() != 4) {
      return Error(
          "in-place collective-permute needs 4 operands (input, output, "
          "input offsets, output offsets), found ",
          operands.size());
    }
    return WithoutLayouts(*operands[1]);
  }
  return MaybeTuple(StrippedOperands(operands));
}

// --- Asynchronous pairs
// -------------------------------------------------------

absl::StatusOr<Shape> InferAllGatherStartShape(
    absl::Span<const Shape* const> operands, int64_t dimension,
    int64_t group_size) {
  absl::StatusOr<Shape> result =
      InferAllGatherShape(operands, dimension, group_size);
  if (!result.ok()) return result.status();
  Shape ops = MaybeTuple(StrippedOperands(operands));
  return Shape::Tuple({std::move(ops), *std::move(result)});
}

absl::StatusOr<Shape> InferAllReduceStartShape(
    absl::Span<const Shape* const> operands) {
  absl::StatusOr<Shape> result = InferAllReduceShape(operands);
  if (!result.ok()) return result.status();
  return Shape::Tuple(
      {Shape::Tuple(StrippedOperands(operands)), *std::move(result)});
}

bool AllReduceStartHasOperandPart(const Shape& start) {
  return start.IsTuple() && start.tuple_size() == 2 &&
         start.tuple_shapes(0).IsTuple();
}

bool NativeStartShapeMatches(const Shape& expected, const Shape& actual,
                             bool context, bool check_layouts) {
  if (!expected.IsTuple() || expected.tuple_size() != 2 || !actual.IsTuple() ||
      actual.tuple_size() < 2 || (!context && actual.tuple_size() != 2)) {
    return false;
  }
  const Shape& want_ops = expected.tuple_shapes(0);
  const Shape& ops = actual.tuple_shapes(0);
  // A lone operand, bare in `expected`, may be in a 1-tuple.
  const bool ops_ok =
      ShapesMatch(want_ops, ops, check_layouts) ||
      (!want_ops.IsTuple() && ops.IsTuple() && ops.tuple_size() == 1 &&
       ShapesMatch(want_ops, ops.tuple_shapes(0), check_layouts));
  if (!ops_ok || !ShapesMatch(expected.tuple_shapes(1), actual.tuple_shapes(1),
                              check_layouts)) {
    return false;
  }
  for (int64_t k = 2; k < actual.tuple_size(); ++k) {
    if (!actual.tuple_shapes(k).IsArray()) return false;
  }
  return true;
}

const Shape* NativeStartResultPart(Opcode start_opcode, const Shape& start) {
  switch (start_opcode) {
    case Opcode::kAllReduceStart:
      return AllReduceStartHasOperandPart(start) ? &start.tuple_shapes(1)
                                                 : &start;
    case Opcode::kAllGatherStart:
    case Opcode::kCollectivePermuteStart:
      return start.IsTuple() && start.tuple_size() >= 2 ? &start.tuple_shapes(1)
                                                        : nullptr;
    case Opcode::kCopyStart:
      return start.IsTuple() && start.tuple_size() >= 2 ? &start.tuple_shapes(0)
                                                        : nullptr;
    default:
      return nullptr;
  }
}

absl::StatusOr<Shape> InferCollectivePermuteStartShape(
    absl::Span<const Shape* const> operands, bool in_place) {
  absl::StatusOr<Shape> result =
      InferCollectivePermuteShape(operands, in_place);
  if (!result.ok()) return result.status();
  Shape ops = in_place ? WithoutLayouts(*operands[0])
                       : MaybeTuple(StrippedOperands(operands));
  return Shape::Tuple({std::move(ops), *std::move(result)});
}

absl::StatusOr<Shape> InferCopyStartShape(const Shape& operand) {
  Shape s = WithoutLayouts(operand);
  return Shape::Tuple({s, s, Shape::Scalar(PrimitiveType::kU32)});
}

absl::StatusOr<Shape> InferAsyncStartShape(
    absl::Span<const Shape* const> operands, const ProgramShape& wrapped) {
  if (operands.size() != wrapped.parameters.size()) {
    return Error("async-start: ", operands.size(),
                 " operands for wrapped computation ", wrapped.ToString(),
                 " with ", wrapped.parameters.size(), " parameters");
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    if (!operands[i]->Compatible(wrapped.parameters[i])) {
      return Error("async-start: operand ", i, " ", ShapeString(*operands[i]),
                   " does not match wrapped computation parameter ", i, " ",
                   ShapeString(wrapped.parameters[i]));
    }
  }
  return Shape::Tuple({Shape::Tuple(StrippedOperands(operands)),
                       WithoutLayouts(wrapped.result)});
}

absl::StatusOr<Shape> InferAsyncUpdateShape(const Shape& start) {
  if (!start.IsTuple() || start.tuple_size() < 2 ||
      !start.tuple_shapes(0).IsTuple()) {
    return Error(
        "async operand must be an async-start/update value: a tuple "
        "((operands...), result, ...), found ",
        ShapeString(start));
  }
  return start;
}

absl::StatusOr<Shape> InferAsyncDoneShape(const Shape& start) {
  absl::StatusOr<Shape> s = InferAsyncUpdateShape(start);
  if (!s.ok()) return s.status();
  return start.tuple_shapes(1);
}

absl::StatusOr<Shape> InferNativeDoneShape(Opcode done_opcode,
                                           const Shape& start) {
  const absl::string_view name = AsAbsl(OpcodeName(done_opcode));
  switch (done_opcode) {
    case Opcode::kAllReduceDone:
      return AllReduceStartHasOperandPart(start) ? start.tuple_shapes(1)
                                                 : start;
    case Opcode::kAllGatherDone:
    case Opcode::kCollectivePermuteDone:
      if (!start.IsTuple() || start.tuple_size() < 2) {
        return Error(name,
                     ": operand must be a start tuple (operand, "
                     "result, ...), found ",
                     ShapeString(start));
      }
      return start.tuple_shapes(1);
    case Opcode::kCopyDone:
      if (!start.IsTuple() || start.tuple_size() < 2) {
        return Error(
            "copy-done: operand must be a copy-start tuple (dest, "
            "src, u32[]), found ",
            ShapeString(start));
      }
      return start.tuple_shapes(0);
    default:
      return Error(name, " is not the done half of a native async pair");
  }
}

}  // namespace hloverlap

namespace hloverlap {

bool ParserInfersShape(Opcode opcode) {
  if (IsElementwiseUnary(opcode)) {
    return opcode != Opcode::kConvert && opcode != Opcode::kBitcastConvert &&
           opcode != Opcode::kReducePrecision;
  }
  if (IsElementwiseBinary(opcode)) {
    return opcode != Opcode::kStochasticConvert;
  }
  switch (opcode) {
    case Opcode::kAddDependency:
    case Opcode::kAfterAll:
    case Opcode::kBatchNormGrad:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormTraining:
    case Opcode::kBroadcast:
    case Opcode::kCall:
    case Opcode::kCholesky:
    case Opcode::kClamp:
    case Opcode::kConcatenate:
    case Opcode::kConditional:
    case Opcode::kConvolution:
    case Opcode::kDomain:
    case Opcode::kDot:
    case Opcode::kFft:
    case Opcode::kGather:
    case Opcode::kGetDimensionSize:
    case Opcode::kGetTupleElement:
    case Opcode::kMap:
    case Opcode::kOptBarrier:
    case Opcode::kPad:
    case Opcode::kPartitionId:
    case Opcode::kRaggedDot:
    case Opcode::kReduce:
    case Opcode::kReduceWindow:
    case Opcode::kReplicaId:
    case Opcode::kReverse:
    case Opcode::kScatter:
    case Opcode::kSelect:
    case Opcode::kSelectAndScatter:
    case Opcode::kSetDimensionSize:
    case Opcode::kSort:
    case Opcode::kTopk:
    case Opcode::kTranspose:
    case Opcode::kTriangularSolve:
    case Opcode::kTuple:
    case Opcode::kWhile:
      return true;
    default:
      return false;
  }
}

namespace {

absl::StatusOr<ProgramShape> CalleeProgram(const Instruction& inst,
                                           const Computation* callee) {
  if (callee == nullptr) {
    return Error(AsAbsl(OpcodeName(inst.opcode())),
                 " has no called computation");
  }
  return GetProgramShape(*callee);
}

absl::InlinedVector<const Shape*, 8> OperandShapes(const Instruction& inst,
                                                   int64_t from = 0) {
  absl::InlinedVector<const Shape*, 8> out;
  for (int64_t k = from; k < inst.operand_count(); ++k) {
    out.push_back(&inst.operand(k)->shape());
  }
  return out;
}

// map: the callee's element type with the operands' dimensions.
absl::StatusOr<Shape> InferMapInstruction(const Instruction& inst) {
  auto operand = [&](int64_t k) -> const Shape& {
    return inst.operand(k)->shape();
  };
  absl::StatusOr<ProgramShape> callee = CalleeProgram(inst, inst.to_apply());
  if (!callee.ok()) return callee.status();
  if (!callee->result.IsArray() || callee->result.rank() != 0) {
    return Error("map: to_apply must return a scalar, found ",
                 ShapeString(callee->result));
  }
  for (const Shape* s : OperandShapes(inst)) {
    if (absl::Status st = ExpectArray(*s, "map operand"); !st.ok()) {
      return st;
    }
    if (!SameDimensions(*s, operand(0))) {
      return Error("map operands have different dimensions: ",
                   ShapeString(operand(0)), " and ", ShapeString(*s));
    }
  }
  return ArrayLike(callee->result.element_type(), operand(0));
}

// topk: (values, indices) with the last dimension k.
absl::StatusOr<Shape> InferTopkInstruction(const Instruction& inst) {
  auto operand = [&](int64_t k) -> const Shape& {
    return inst.operand(k)->shape();
  };
  const RawAttribute* k_attr = inst.FindRawAttribute("k");
  int64_t k = -1;
  if (k_attr == nullptr || !absl::SimpleAtoi(k_attr->value, &k) || k < 0) {
    return Error("topk needs k=N (N >= 0)");
  }
  const Shape& o = operand(0);
  if (absl::Status s = ExpectArray(o, "topk operand"); !s.ok()) return s;
  if (o.rank() < 1 || o.dimensions(o.rank() - 1) < k) {
    return Error("topk: k=", k, " exceeds the last dimension of ",
                 ShapeString(o));
  }
  absl::InlinedVector<int64_t, 6> dims(o.dimensions().begin(),
                                       o.dimensions().end());
  dims.back() = k;
  return Shape::Tuple(
      {Shape(o.element_type(), dims), Shape(PrimitiveType::kS32, dims)});
}

}  // namespace

absl::StatusOr<Shape> InferInstructionShape(const Instruction& inst) {
  const Opcode op = inst.opcode();
  const absl::string_view name = AsAbsl(OpcodeName(op));
  if (!ParserInfersShape(op)) {
    return Error("the shape of ", name,
                 " is not inferred (XLA requires it written)");
  }
  const OpcodeTraits& t = Traits(op);
  if (t.arity >= 0 && inst.operand_count() != t.arity) {
    return Error(name, " takes ", static_cast<int>(t.arity),
                 " operands, found ", inst.operand_count());
  }
  if (t.arity == kAtLeastOne && inst.operand_count() == 0) {
    return Error(name, " needs at least one operand");
  }
  auto operand = [&](int64_t k) -> const Shape& {
    return inst.operand(k)->shape();
  };
  if (op == Opcode::kCompare) return InferCompareShape(operand(0), operand(1));
  if (IsElementwiseUnary(op)) return InferUnaryElementwiseShape(op, operand(0));
  if (IsElementwiseBinary(op)) {
    return InferBinaryElementwiseShape(op, operand(0), operand(1));
  }
  switch (op) {
    case Opcode::kSelect:
      return InferSelectShape(operand(0), operand(1), operand(2));
    case Opcode::kClamp:
      return InferClampShape(operand(0), operand(1), operand(2));
    case Opcode::kTuple:
      return InferTupleShape(OperandShapes(inst));
    case Opcode::kGetTupleElement:
      return InferGetTupleElementShape(operand(0), inst.tuple_index());
    case Opcode::kAfterAll:
      return Shape::Scalar(PrimitiveType::kToken);
    case Opcode::kAddDependency:
    case Opcode::kOptBarrier:
    case Opcode::kDomain:
    case Opcode::kSetDimensionSize:
      return WithoutLayouts(operand(0));
    case Opcode::kPartitionId:
    case Opcode::kReplicaId:
      return Shape::Scalar(PrimitiveType::kU32);
    case Opcode::kGetDimensionSize:
      return Shape::Scalar(PrimitiveType::kS32);
    case Opcode::kWhile: {
      absl::StatusOr<ProgramShape> cond =
          CalleeProgram(inst, inst.while_condition());
      if (!cond.ok()) return cond.status();
      absl::StatusOr<ProgramShape> body =
          CalleeProgram(inst, inst.while_body());
      if (!body.ok()) return body.status();
      return InferWhileShape(operand(0), *cond, *body);
    }
    case Opcode::kCall: {
      absl::StatusOr<ProgramShape> callee =
          CalleeProgram(inst, inst.to_apply());
      if (!callee.ok()) return callee.status();
      return InferCallShape(OperandShapes(inst), *callee);
    }
    case Opcode::kConditional: {
      std::vector<ProgramShape> branches;
      for (const Computation* b : inst.called_computations()) {
        absl::StatusOr<ProgramShape> p = CalleeProgram(inst, b);
        if (!p.ok()) return p.status();
        branches.push_back(*std::move(p));
      }
      if (inst.operand_count() < 1) {
        return Error("conditional needs a selector operand");
      }
      return InferConditionalShape(operand(0), OperandShapes(inst, 1),
                                   branches);
    }
    case Opcode::kBroadcast: {
      // Without a result shape, `dimensions` are the sizes of the new
      // major dimensions (XLA's InferBroadcastShape(operand, sizes)).
      if (absl::Status s = ExpectArray(operand(0), "broadcast operand");
          !s.ok()) {
        return s;
      }
      absl::InlinedVector<int64_t, 6> dims(inst.dimensions().begin(),
                                           inst.dimensions().end());
      for (int64_t d : dims) {
        if (d < 0) return Error("broadcast: negative size ", d);
      }
      for (int64_t d : operand(0).dimensions()) dims.push_back(d);
      return Shape(operand(0).element_type(), std::move(dims));
    }
    case Opcode::kTranspose:
      return InferTransposeShape(operand(0), inst.dimensions());
    case Opcode::kReverse:
      return InferReverseShape(operand(0), inst.dimensions());
    case Opcode::kConcatenate:
      if (inst.dimensions().size() != 1) {
        return Error("concatenate needs exactly one dimension");
      }
      return InferConcatenateShape(OperandShapes(inst), inst.dimensions()[0]);
    case Opcode::kPad:
      return InferPadShape(operand(0), operand(1), inst.attrs().padding);
    case Opcode::kDot:
      return InferDotShape(operand(0), operand(1), inst.attrs().dot.value());
    case Opcode::kReduce: {
      absl::StatusOr<ProgramShape> reducer =
          CalleeProgram(inst, inst.to_apply());
      if (!reducer.ok()) return reducer.status();
      return InferReduceShape(OperandShapes(inst), inst.dimensions(), *reducer);
    }
    case Opcode::kSort: {
      std::vector<Shape> shapes;
      for (const Shape* s : OperandShapes(inst)) {
        if (absl::Status st = ExpectArray(*s, "sort operand"); !st.ok()) {
          return st;
        }
        shapes.push_back(WithoutLayouts(*s));
      }
      return MaybeTuple(std::move(shapes));
    }
    case Opcode::kMap:
      return InferMapInstruction(inst);
    case Opcode::kTopk:
      return InferTopkInstruction(inst);
    default:
      return InferNnInstructionShape(inst);
  }
}

}  // namespace hloverlap
