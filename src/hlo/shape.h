// Shapes and layouts of HLO values.
//
// A Shape is either an array (element type, dimensions, optional layout), a
// tuple of shapes, a token, or an opaque value. Dimensions may be static
// (`f32[8]`), bounded-dynamic (`f32[<=8]`) or unbounded-dynamic (`f32[?]`).
//
//   bf16[4,128,1024]{2,1,0}          array with a dense layout
//   f32[8,128]{1,0:T(8,128)S(1)}     layout with tiles and memory space 1
//   (s32[], bf16[8]{0})              tuple
//
// Layouts are optional: before-optimization HLO often prints none. A shape
// parsed without a layout prints without one, so text round-trips.
#ifndef HLOVERLAP_HLO_SHAPE_H_
#define HLOVERLAP_HLO_SHAPE_H_

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"

namespace hloverlap {

// Element types, spelled in text exactly as the lowercase names below.
enum class PrimitiveType : uint8_t {
  kInvalid = 0,
  kPred,
  kS1,
  kS2,
  kS4,
  kS8,
  kS16,
  kS32,
  kS64,
  kU1,
  kU2,
  kU4,
  kU8,
  kU16,
  kU32,
  kU64,
  kF16,
  kBF16,
  kF32,
  kF64,
  kF8E5M2,
  kF8E4M3,
  kF8E4M3FN,
  kF8E4M3B11FNUZ,
  kF8E3M4,
  kF8E5M2FNUZ,
  kF8E4M3FNUZ,
  kF8E8M0FNU,
  kF6E3M2FN,
  kF6E2M3FN,
  kF4E2M1FN,
  kC64,
  kC128,
  kToken,
  kOpaque,
  kTuple,
};

// Lowercase text spelling ("bf16"); "tuple" for kTuple.
std::string_view PrimitiveTypeName(PrimitiveType type);
// Parses the text spelling; nullopt if `name` is not an element type name.
std::optional<PrimitiveType> ParsePrimitiveType(std::string_view name);
// Storage size of one element in bits (pred: 8, s4: 4, f8: 8, c64: 64 ...);
// 0 for token/opaque/tuple.
int PrimitiveTypeBitWidth(PrimitiveType type);
// Bytes of one element as stored by the interpreter (sub-byte types: 1).
int64_t PrimitiveTypeByteSize(PrimitiveType type);
bool IsFloatingPointType(PrimitiveType type);
bool IsSignedIntegralType(PrimitiveType type);
bool IsUnsignedIntegralType(PrimitiveType type);
bool IsIntegralType(PrimitiveType type);  // signed or unsigned, not pred
bool IsComplexType(PrimitiveType type);
bool IsArrayType(PrimitiveType type);  // not token/opaque/tuple

// One tile of a tiled layout: `T(8,128)`. kCombineDim stands for `*`.
struct Tile {
  static constexpr int64_t kCombineDim = -1;
  absl::InlinedVector<int64_t, 2> dims;
  bool operator==(const Tile&) const = default;
};

struct Layout {
  // `{2,1,0}`: minor_to_major order of dimensions.
  absl::InlinedVector<int64_t, 6> minor_to_major;
  std::vector<Tile> tiles;        // T(...)(...)
  int64_t element_size_bits = 0;  // E(n), 0 = default
  int64_t memory_space = 0;       // S(n), 0 = default device memory
  // Any other layout tail items (D(...), L(..), #(..), *(..), SC(..), P(..),
  // M(..)) kept verbatim, in text order, without separators: e.g. "L(2)#(u16)".
  std::string other_tail;
  bool operator==(const Layout&) const = default;
};

// Whether `minor_to_major` names each of the dimensions 0..rank-1 once: the
// one rule for a layout's dimension list, which the parser's character scan
// and its token path both apply.
//   {1,0} of rank 2: yes    {0,0} or {2,0} or {0} of rank 2: no
bool IsMinorToMajorPermutation(absl::Span<const int64_t> minor_to_major,
                               int64_t rank);

// Why an array of `type` with `dims` is too big to read, or "" when it is
// not: its element count, and twice its byte size (headroom for a value
// and its copy), must fit in int64. Negative (dynamic) sizes count as 0.
//   f32[1024,1024]: ""    f32[4611686018427387904]: "shape is too large"
std::string_view ArrayShapeSizeError(PrimitiveType type,
                                     absl::Span<const int64_t> dims);

// How a dimension's size is known.
enum class DimKind : uint8_t {
  kStatic,
  kBounded /* <=N */,
  kUnbounded /* ? */
};

class Shape {
 public:
  Shape() = default;
  // Array shape without layout.
  Shape(PrimitiveType type, absl::InlinedVector<int64_t, 6> dims);
  static Shape Tuple(std::vector<Shape> elements);
  static Shape Token();
  static Shape Scalar(PrimitiveType type) { return Shape(type, {}); }

  PrimitiveType element_type() const { return element_type_; }
  void set_element_type(PrimitiveType t) { element_type_ = t; }
  bool IsTuple() const { return element_type_ == PrimitiveType::kTuple; }
  bool IsToken() const { return element_type_ == PrimitiveType::kToken; }
  bool IsOpaque() const { return element_type_ == PrimitiveType::kOpaque; }
  bool IsArray() const { return IsArrayType(element_type_); }
  bool IsScalar() const { return IsArray() && dims_.empty(); }

  // Array accessors. For bounded-dynamic dims the stored size is the bound;
  // for unbounded ones it is -1.
  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  const absl::InlinedVector<int64_t, 6>& dimensions() const { return dims_; }
  absl::InlinedVector<int64_t, 6>& mutable_dimensions() { return dims_; }
  int64_t dimensions(int64_t i) const { return dims_[i]; }
  void set_dimension(int64_t i, int64_t v) { dims_[i] = v; }
  // Empty when all dims are static (the common case).
  const absl::InlinedVector<DimKind, 6>& dim_kinds() const { return kinds_; }
  absl::InlinedVector<DimKind, 6>& mutable_dim_kinds() { return kinds_; }
  DimKind dim_kind(int64_t i) const {
    return kinds_.empty() ? DimKind::kStatic : kinds_[i];
  }
  bool is_dynamic() const;

  bool has_layout() const { return layout_.has_value(); }
  const std::optional<Layout>& layout() const { return layout_; }
  std::optional<Layout>& mutable_layout() { return layout_; }
  void set_layout(Layout l) { layout_ = std::move(l); }
  void clear_layout() { layout_.reset(); }
  // Sets the default descending layout {rank-1,...,0} (recursively on tuples).
  void SetDefaultLayout();

  // Tuple accessors.
  const std::vector<Shape>& tuple_shapes() const { return tuple_; }
  std::vector<Shape>& mutable_tuple_shapes() { return tuple_; }
  const Shape& tuple_shapes(int64_t i) const { return tuple_[i]; }
  int64_t tuple_size() const { return static_cast<int64_t>(tuple_.size()); }

  // Number of elements of an array shape (1 for scalars). Saturates at
  // INT64_MAX instead of overflowing.
  int64_t ElementCount() const;
  // Bytes of an array (sub-byte types rounded up per element) or the sum over
  // a tuple's leaves. Saturating.
  int64_t ByteSize() const;

  // Structural equality ignoring layouts (element type, dims, dim kinds,
  // tuple structure).
  bool Compatible(const Shape& other) const;
  // Full equality, layouts included.
  bool operator==(const Shape& other) const;
  bool operator!=(const Shape& other) const { return !(*this == other); }

  // Text form: "bf16[4,128]{1,0}" or "(s32[], f32[2]{0})". With
  // print_layout=false, layouts are left out (computation signatures).
  // Tuples get `/*index=N*/` comments every 5 elements as XLA prints them.
  std::string ToString(bool print_layout = true) const;
  void AppendTo(std::string& out, bool print_layout = true) const;

 private:
  PrimitiveType element_type_ = PrimitiveType::kInvalid;
  absl::InlinedVector<int64_t, 6> dims_;
  absl::InlinedVector<DimKind, 6> kinds_;
  std::optional<Layout> layout_;
  std::vector<Shape> tuple_;
};

// A Shape held by reference count, shared by the instructions that have it.
// The parser hands every instruction whose shape is spelled the same one
// copy (a dump has a few hundred distinct shapes for tens of thousands of
// instructions, and a loop-state tuple of a hundred elements is ~25 KB).
// Copies share; writes copy first when shared (Mutable, Set), so sharing is
// invisible through Instruction's API. Default: the default Shape, no
// allocation.
class SharedShape {
 public:
  SharedShape() = default;
  explicit SharedShape(Shape shape);
  SharedShape(const SharedShape& other) noexcept;
  SharedShape(SharedShape&& other) noexcept
      : node_(std::exchange(other.node_, nullptr)) {}
  SharedShape& operator=(const SharedShape& other) noexcept;
  SharedShape& operator=(SharedShape&& other) noexcept;
  ~SharedShape() { Release(); }

  const Shape& get() const { return node_ != nullptr ? node_->shape : Empty(); }
  // The shape to modify in place, copied first if another holder shares it.
  Shape& Mutable();
  // Replaces the value (in place when not shared).
  void Set(Shape shape);
  bool SharesWith(const SharedShape& other) const {
    return node_ != nullptr && node_ == other.node_;
  }

 private:
  struct Node {
    explicit Node(Shape s) : shape(std::move(s)) {}
    std::atomic<int64_t> refs{1};
    Shape shape;
  };
  static const Shape& Empty();
  void Release();
  Node* node_ = nullptr;
};

// Appends the layout text "{1,0:T(8,128)}" (with braces) to out.
void AppendLayout(const Layout& layout, int64_t rank, std::string& out);

// Shape index into nested tuples: {} is the whole value, {1,0} element 0 of
// element 1.
using ShapeIndex = absl::InlinedVector<int64_t, 2>;
// The subshape at index, or nullptr if the index does not exist.
const Shape* GetSubshape(const Shape& shape, const ShapeIndex& index);

}  // namespace hloverlap

#endif  // HLOVERLAP_HLO_SHAPE_H_
