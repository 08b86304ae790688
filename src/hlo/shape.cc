#include "hlo/shape.h"

#include <array>
#include <charconv>
#include <limits>

#include "absl/container/flat_hash_map.h"

namespace hloverlap {
namespace {

struct TypeInfo {
  PrimitiveType type;
  std::string_view name;
  int bits;
};

constexpr std::array<TypeInfo, 37> kTypes = {{
    {PrimitiveType::kInvalid, "invalid", 0},
    {PrimitiveType::kPred, "pred", 8},
    {PrimitiveType::kS1, "s1", 1},
    {PrimitiveType::kS2, "s2", 2},
    {PrimitiveType::kS4, "s4", 4},
    {PrimitiveType::kS8, "s8", 8},
    {PrimitiveType::kS16, "s16", 16},
    {PrimitiveType::kS32, "s32", 32},
    {PrimitiveType::kS64, "s64", 64},
    {PrimitiveType::kU1, "u1", 1},
    {PrimitiveType::kU2, "u2", 2},
    {PrimitiveType::kU4, "u4", 4},
    {PrimitiveType::kU8, "u8", 8},
    {PrimitiveType::kU16, "u16", 16},
    {PrimitiveType::kU32, "u32", 32},
    {PrimitiveType::kU64, "u64", 64},
    {PrimitiveType::kF16, "f16", 16},
    {PrimitiveType::kBF16, "bf16", 16},
    {PrimitiveType::kF32, "f32", 32},
    {PrimitiveType::kF64, "f64", 64},
    {PrimitiveType::kF8E5M2, "f8e5m2", 8},
    {PrimitiveType::kF8E4M3, "f8e4m3", 8},
    {PrimitiveType::kF8E4M3FN, "f8e4m3fn", 8},
    {PrimitiveType::kF8E4M3B11FNUZ, "f8e4m3b11fnuz", 8},
    {PrimitiveType::kF8E3M4, "f8e3m4", 8},
    {PrimitiveType::kF8E5M2FNUZ, "f8e5m2fnuz", 8},
    {PrimitiveType::kF8E4M3FNUZ, "f8e4m3fnuz", 8},
    {PrimitiveType::kF8E8M0FNU, "f8e8m0fnu", 8},
    {PrimitiveType::kF6E3M2FN, "f6e3m2fn", 6},
    {PrimitiveType::kF6E2M3FN, "f6e2m3fn", 6},
    {PrimitiveType::kF4E2M1FN, "f4e2m1fn", 4},
    {PrimitiveType::kC64, "c64", 64},
    {PrimitiveType::kC128, "c128", 128},
    {PrimitiveType::kToken, "token", 0},
    {PrimitiveType::kOpaque, "opaque", 0},
    {PrimitiveType::kTuple, "tuple", 0},
    {PrimitiveType::kInvalid, "invalid", 0},
}};

const TypeInfo& Info(PrimitiveType t) {
  return kTypes[static_cast<int>(t) < 36 ? static_cast<int>(t) : 0];
}

int64_t SaturatingMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    return std::numeric_limits<int64_t>::max();
  return r;
}

int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    return std::numeric_limits<int64_t>::max();
  return r;
}

void AppendInt(int64_t v, std::string& out) {
  char buf[24];
  auto res = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(buf, res.ptr);
}

}  // namespace

std::string_view PrimitiveTypeName(PrimitiveType type) {
  return Info(type).name;
}

std::optional<PrimitiveType> ParsePrimitiveType(std::string_view name) {
  static const auto* map = [] {
    auto* m = new absl::flat_hash_map<std::string_view, PrimitiveType>();
    for (int i = 1; i < 35; ++i) m->emplace(kTypes[i].name, kTypes[i].type);
    return m;
  }();
  auto it = map->find(name);
  if (it == map->end()) return std::nullopt;
  return it->second;
}

int PrimitiveTypeBitWidth(PrimitiveType type) { return Info(type).bits; }

int64_t PrimitiveTypeByteSize(PrimitiveType type) {
  int bits = Info(type).bits;
  if (bits == 0) return 0;
  return bits < 8 ? 1 : bits / 8;
}

bool IsMinorToMajorPermutation(absl::Span<const int64_t> minor_to_major,
                               int64_t rank) {
  if (static_cast<int64_t>(minor_to_major.size()) != rank) return false;
  absl::InlinedVector<bool, 12> seen(minor_to_major.size(), false);
  for (int64_t d : minor_to_major) {
    if (d < 0 || d >= rank || seen[d]) return false;
    seen[d] = true;
  }
  return true;
}

std::string_view ArrayShapeSizeError(PrimitiveType type,
                                     absl::Span<const int64_t> dims) {
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d > 0 && __builtin_mul_overflow(count, d, &count)) {
      return "shape has too many elements";
    }
  }
  int64_t bytes;
  if (__builtin_mul_overflow(count, PrimitiveTypeByteSize(type) * 2, &bytes)) {
    return "shape is too large";
  }
  return "";
}

bool IsFloatingPointType(PrimitiveType t) {
  return t >= PrimitiveType::kF16 && t <= PrimitiveType::kF4E2M1FN;
}
bool IsSignedIntegralType(PrimitiveType t) {
  return t >= PrimitiveType::kS1 && t <= PrimitiveType::kS64;
}
bool IsUnsignedIntegralType(PrimitiveType t) {
  return t >= PrimitiveType::kU1 && t <= PrimitiveType::kU64;
}
bool IsIntegralType(PrimitiveType t) {
  return IsSignedIntegralType(t) || IsUnsignedIntegralType(t);
}
bool IsComplexType(PrimitiveType t) {
  return t == PrimitiveType::kC64 || t == PrimitiveType::kC128;
}
bool IsArrayType(PrimitiveType t) {
  return t != PrimitiveType::kInvalid && t != PrimitiveType::kToken &&
         t != PrimitiveType::kOpaque && t != PrimitiveType::kTuple;
}

Shape::Shape(PrimitiveType type, absl::InlinedVector<int64_t, 6> dims)
    : element_type_(type), dims_(std::move(dims)) {}

Shape Shape::Tuple(std::vector<Shape> elements) {
  Shape s;
  s.element_type_ = PrimitiveType::kTuple;
  s.tuple_ = std::move(elements);
  return s;
}

SharedShape::SharedShape(Shape shape) : node_(new Node(std::move(shape))) {}

SharedShape::SharedShape(const SharedShape& other) noexcept
    : node_(other.node_) {
  if (node_ != nullptr) node_->refs.fetch_add(1, std::memory_order_relaxed);
}

SharedShape& SharedShape::operator=(const SharedShape& other) noexcept {
  if (node_ != other.node_) {
    if (other.node_ != nullptr) {
      other.node_->refs.fetch_add(1, std::memory_order_relaxed);
    }
    Release();
    node_ = other.node_;
  }
  return *this;
}

SharedShape& SharedShape::operator=(SharedShape&& other) noexcept {
  if (this != &other) {
    Release();
    node_ = std::exchange(other.node_, nullptr);
  }
  return *this;
}

const Shape& SharedShape::Empty() {
  static const Shape* const kEmpty = new Shape();
  return *kEmpty;
}

void SharedShape::Release() {
  if (node_ != nullptr &&
      node_->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    delete node_;
  }
  node_ = nullptr;
}

Shape& SharedShape::Mutable() {
  if (node_ == nullptr) {
    node_ = new Node(Shape());
  } else if (node_->refs.load(std::memory_order_acquire) != 1) {
    Node* copy = new Node(node_->shape);
    Release();
    node_ = copy;
  }
  return node_->shape;
}

void SharedShape::Set(Shape shape) {
  if (node_ != nullptr && node_->refs.load(std::memory_order_acquire) == 1) {
    node_->shape = std::move(shape);
  } else {
    Release();
    node_ = new Node(std::move(shape));
  }
}

Shape Shape::Token() {
  Shape s;
  s.element_type_ = PrimitiveType::kToken;
  return s;
}

bool Shape::is_dynamic() const {
  for (DimKind k : kinds_) {
    if (k != DimKind::kStatic) return true;
  }
  return false;
}

void Shape::SetDefaultLayout() {
  if (IsTuple()) {
    for (Shape& s : tuple_) s.SetDefaultLayout();
    return;
  }
  if (!IsArray()) return;
  Layout l;
  for (int64_t i = rank() - 1; i >= 0; --i) l.minor_to_major.push_back(i);
  layout_ = std::move(l);
}

int64_t Shape::ElementCount() const {
  int64_t n = 1;
  for (int64_t d : dims_) n = SaturatingMul(n, d < 0 ? 0 : d);
  return n;
}

int64_t Shape::ByteSize() const {
  if (IsTuple()) {
    int64_t total = 0;
    for (const Shape& s : tuple_) total = SaturatingAdd(total, s.ByteSize());
    return total;
  }
  if (!IsArray()) return 0;
  return SaturatingMul(ElementCount(), PrimitiveTypeByteSize(element_type_));
}

bool Shape::Compatible(const Shape& other) const {
  if (element_type_ != other.element_type_) return false;
  if (IsTuple()) {
    if (tuple_.size() != other.tuple_.size()) return false;
    for (size_t i = 0; i < tuple_.size(); ++i) {
      if (!tuple_[i].Compatible(other.tuple_[i])) return false;
    }
    return true;
  }
  if (dims_ != other.dims_) return false;
  for (int64_t i = 0; i < rank(); ++i) {
    if (dim_kind(i) != other.dim_kind(i)) return false;
  }
  return true;
}

bool Shape::operator==(const Shape& other) const {
  if (!Compatible(other)) return false;
  if (IsTuple()) {
    for (size_t i = 0; i < tuple_.size(); ++i) {
      if (tuple_[i] != other.tuple_[i]) return false;
    }
    return true;
  }
  return layout_ == other.layout_;
}

void AppendLayout(const Layout& layout, int64_t rank, std::string& out) {
  out.push_back('{');
  for (size_t i = 0; i < layout.minor_to_major.size(); ++i) {
    if (i > 0) out.push_back(',');
    AppendInt(layout.minor_to_major[i], out);
  }
  bool has_tail = !layout.tiles.empty() || layout.element_size_bits != 0 ||
                  layout.memory_space != 0 || !layout.other_tail.empty();
  if (has_tail) {
    out.push_back(':');
    // XLA's order: D(...) T(...) L(...) #(...) *(...) E(...) S(...) SC P M.
    // other_tail keeps the items we do not type, in input order; the items
    // before T (only D) are rare enough that we print them after T.
    if (!layout.tiles.empty()) {
      out.push_back('T');
      for (const Tile& t : layout.tiles) {
        out.push_back('(');
        for (size_t i = 0; i < t.dims.size(); ++i) {
          if (i > 0) out.push_back(',');
          if (t.dims[i] == Tile::kCombineDim) {
            out.push_back('*');
          } else {
            AppendInt(t.dims[i], out);
          }
        }
        out.push_back(')');
      }
    }
    if (layout.element_size_bits != 0) {
      out.append("E(");
      AppendInt(layout.element_size_bits, out);
      out.push_back(')');
    }
    if (layout.memory_space != 0) {
      out.append("S(");
      AppendInt(layout.memory_space, out);
      out.push_back(')');
    }
    out.append(layout.other_tail);
  }
  out.push_back('}');
}

void Shape::AppendTo(std::string& out, bool print_layout) const {
  if (IsTuple()) {
    out.push_back('(');
    for (size_t i = 0; i < tuple_.size(); ++i) {
      if (i > 0) out.append(", ");
      if (i > 0 && i % 5 == 0) {
        out.append("/*index=");
        AppendInt(static_cast<int64_t>(i), out);
        out.append("*/");
      }
      tuple_[i].AppendTo(out, print_layout);
    }
    out.push_back(')');
    return;
  }
  out.append(PrimitiveTypeName(element_type_));
  if (element_type_ == PrimitiveType::kToken ||
      element_type_ == PrimitiveType::kOpaque) {
    out.append("[]");
    return;
  }
  out.push_back('[');
  for (int64_t i = 0; i < rank(); ++i) {
    if (i > 0) out.push_back(',');
    switch (dim_kind(i)) {
      case DimKind::kStatic:
        AppendInt(dims_[i], out);
        break;
      case DimKind::kBounded:
        out.append("<=");
        AppendInt(dims_[i], out);
        break;
      case DimKind::kUnbounded:
        out.push_back('?');
        break;
    }
  }
  out.push_back(']');
  if (print_layout && layout_.has_value()) {
    // Scalars print no layout unless it carries a tail.
    const Layout& l = *layout_;
    bool scalar_default = rank() == 0 && l.tiles.empty() &&
                          l.element_size_bits == 0 && l.memory_space == 0 &&
                          l.other_tail.empty();
    if (!scalar_default) AppendLayout(l, rank(), out);
  }
}

std::string Shape::ToString(bool print_layout) const {
  std::string out;
  AppendTo(out, print_layout);
  return out;
}

const Shape* GetSubshape(const Shape& shape, const ShapeIndex& index) {
  const Shape* s = &shape;
  for (int64_t i : index) {
    if (!s->IsTuple() || i < 0 || i >= s->tuple_size()) return nullptr;
    s = &s->tuple_shapes(i);
  }
  return s;
}

}  // namespace hloverlap
