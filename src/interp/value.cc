#include "interp/value.h"

#include <limits>
#include <new>

#include "absl/strings/str_cat.h"

namespace hloverlap::interp {

float F16ToF32(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {
      // Subnormal: mant * 2^-24, exactly representable in f32.
      float f = std::ldexp(static_cast<float>(mant), -24);
      std::memcpy(&bits, &f, 4);
      bits |= sign;
    }
  } else {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t F32ToF16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) {  // NaN: quiet, keep the top payload bits
    return static_cast<uint16_t>(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
  }
  if (ax >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);
  if (ax < 0x38800000u) {  // below the smallest normal half: subnormal
    float a;
    std::memcpy(&a, &ax, 4);
    float m = std::nearbyint(a * 16777216.0f);  // exact scaling by 2^24
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(m));
  }
  uint32_t odd = (ax >> 13) & 1u;
  ax += 0xc8000fffu + odd;
  return static_cast<uint16_t>(sign | (ax >> 13));
}

uint16_t F64ToF16(double d) {
  uint16_t sign = std::signbit(d) ? 0x8000u : 0;
  if (std::isnan(d)) return static_cast<uint16_t>(sign | 0x7e00u);
  double a = std::fabs(d);
  if (a >= 65520.0) return static_cast<uint16_t>(sign | 0x7c00u);
  if (a < std::ldexp(1.0, -14)) {
    double m = std::nearbyint(std::ldexp(a, 24));
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(m));
  }
  int ex = 0;
  double fr = std::frexp(a, &ex);  // a = fr * 2^ex, fr in [0.5, 1)
  double q = std::nearbyint(std::ldexp(fr, 11));  // in [1024, 2048]
  if (q >= 2048.0) {
    q = 1024.0;
    ++ex;
  }
  int exp_field = ex - 1 + 15;
  if (exp_field >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  return static_cast<uint16_t>(sign | (exp_field << 10) |
                               (static_cast<uint32_t>(q) - 1024u));
}

bool IsSupportedElementType(PrimitiveType type) {
  return VisitElementType(type, []<typename T>() {});
}

absl::Status UnsupportedTypeError(PrimitiveType type, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(
      "unsupported element type '", std::string(PrimitiveTypeName(type)),
      "' in ", std::string(what),
      " (the interpreter supports pred, s8-s64, u8-u64, f16, bf16, f32, "
      "f64)"));
}

std::shared_ptr<Buffer> Buffer::Allocate(int64_t bytes) {
  if (bytes < 0) return nullptr;
  size_t n = static_cast<size_t>(bytes == 0 ? 64 : ((bytes + 63) / 64) * 64);
  void* p = ::operator new (n, std::align_val_t{64}, std::nothrow);
  if (p == nullptr) return nullptr;
  std::shared_ptr<Buffer> b(new (std::nothrow) Buffer());
  if (!b) {
    ::operator delete (p, std::align_val_t{64});
    return nullptr;
  }
  b->data_ = static_cast<uint8_t*>(p);
  b->size_ = bytes;
  return b;
}

Buffer::~Buffer() {
  if (data_ != nullptr) ::operator delete (data_, std::align_val_t{64});
}

int64_t ElementCountOf(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d <= 0) return 0;
    if (n > std::numeric_limits<int64_t>::max() / d) {
      return std::numeric_limits<int64_t>::max();
    }
    n *= d;
  }
  return n;
}

Dims RowMajorStrides(const Dims& dims) {
  Dims s(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i) {
    s[i] = s[i + 1] * dims[i + 1];
  }
  return s;
}

std::string ArrayShapeString(PrimitiveType type, const Dims& dims) {
  std::string s(PrimitiveTypeName(type));
  s += '[';
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ',';
    absl::StrAppend(&s, dims[i]);
  }
  s += ']';
  return s;
}

absl::StatusOr<Value> Value::Uninitialized(PrimitiveType type, Dims dims) {
  if (!IsSupportedElementType(type)) {
    return UnsupportedTypeError(type, "a value");
  }
  for (int64_t d : dims) {
    if (d < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dynamic or negative dimension in ", ArrayShapeString(type, dims)));
    }
  }
  Value v;
  v.kind_ = Kind::kArray;
  v.type_ = type;
  v.count_ = ElementCountOf(dims);
  v.dims_ = std::move(dims);
  int64_t esize = PrimitiveTypeByteSize(type);
  if (v.count_ > std::numeric_limits<int64_t>::max() / 8) {
    return absl::ResourceExhaustedError(
        absl::StrCat("array too large: ", ArrayShapeString(type, v.dims_)));
  }
  v.buffer_ = Buffer::Allocate(v.count_ * esize);
  if (!v.buffer_) {
    return absl::ResourceExhaustedError(
        absl::StrCat("out of memory allocating ", v.count_ * esize,
                     " bytes for ", ArrayShapeString(type, v.dims_)));
  }
  return v;
}

absl::StatusOr<Value> Value::Zeros(PrimitiveType type, Dims dims) {
  absl::StatusOr<Value> v = Uninitialized(type, std::move(dims));
  if (v.ok() && v->byte_size() > 0) {
    std::memset(v->mutable_raw(), 0, v->byte_size());
  }
  return v;
}

Value Value::Tuple(std::vector<Value> elements) {
  Value v;
  v.kind_ = Kind::kTuple;
  v.type_ = PrimitiveType::kTuple;
  v.tuple_ = std::make_shared<const std::vector<Value>>(std::move(elements));
  return v;
}

Value Value::Token() {
  Value v;
  v.kind_ = Kind::kToken;
  v.type_ = PrimitiveType::kToken;
  return v;
}

absl::StatusOr<Value> Value::ZerosOfShape(const Shape& shape) {
  if (shape.IsTuple()) {
    std::vector<Value> elems;
    elems.reserve(shape.tuple_size());
    for (const Shape& s : shape.tuple_shapes()) {
      absl::StatusOr<Value> e = ZerosOfShape(s);
      if (!e.ok()) return e.status();
      elems.push_back(*std::move(e));
    }
    return Tuple(std::move(elems));
  }
  if (shape.IsToken()) return Token();
  if (!shape.IsArray()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot create a value of shape ", shape.ToString()));
  }
  return Zeros(shape.element_type(), ToDims(shape.dimensions()));
}

absl::StatusOr<Value> Value::FromLiteral(const Literal& literal) {
  const Shape& shape = literal.shape();
  if (literal.elided()) {
    return absl::InvalidArgumentError("elided literal {...} has no data");
  }
  if (shape.IsTuple()) {
    std::vector<Value> elems;
    for (const Literal& l : literal.elements()) {
      absl::StatusOr<Value> e = FromLiteral(l);
      if (!e.ok()) return e.status();
      elems.push_back(*std::move(e));
    }
    return Tuple(std::move(elems));
  }
  if (shape.IsToken()) return Token();
  absl::StatusOr<Value> v =
      Uninitialized(shape.element_type(), ToDims(shape.dimensions()));
  if (!v.ok()) return v;
  if (static_cast<int64_t>(literal.data().size()) != v->byte_size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "literal of shape ", shape.ToString(), " holds ", literal.data().size(),
        " bytes, expected ", v->byte_size()));
  }
  if (v->byte_size() > 0) {
    std::memcpy(v->mutable_raw(), literal.data().data(), v->byte_size());
  }
  if (shape.element_type() == PrimitiveType::kPred) {
    uint8_t* p = v->mutable_raw();
    for (int64_t i = 0; i < v->element_count(); ++i) p[i] = p[i] != 0;
  }
  return v;
}

namespace {

// Builds a rank-0 Value of `type` whose one element is `convert<T>()`, T being
// the C++ element type; the conversion rule is the caller's.
template <typename Convert>
absl::StatusOr<Value> MakeScalar(PrimitiveType type, Convert convert) {
  absl::StatusOr<Value> v = Value::Uninitialized(type, {});
  if (!v.ok()) return v;
  Value& out = *v;
  VisitElementType(type, [&]<typename T>() {
    out.mutable_data<T>()[0] = convert.template operator()<T>();
  });
  return v;
}

}  // namespace

absl::StatusOr<Value> Value::ScalarFromDouble(PrimitiveType type, double d) {
  return MakeScalar(type, [d]<typename T>() -> T {
    if constexpr (std::is_same_v<T, pred_t>) {
      return pred_t{static_cast<uint8_t>(d != 0)};
    } else if constexpr (std::is_same_v<T, bf16_t>) {
      return bf16_t{F32ToBf16(static_cast<float>(d))};
    } else if constexpr (std::is_same_v<T, f16_t>) {
      return f16_t{F64ToF16(d)};
    } else if constexpr (std::is_floating_point_v<T>) {
      return static_cast<T>(d);
    } else {
      // Saturating, NaN -> 0, like convert.
      if (std::isnan(d)) return T{0};
      if (d <= static_cast<double>(std::numeric_limits<T>::min())) {
        return std::numeric_limits<T>::min();
      }
      if (d >= static_cast<double>(std::numeric_limits<T>::max())) {
        return std::numeric_limits<T>::max();
      }
      return static_cast<T>(d);
    }
  });
}

absl::StatusOr<Value> Value::ScalarFromInt(PrimitiveType type, int64_t i) {
  return MakeScalar(type, [i]<typename T>() -> T {
    if constexpr (std::is_same_v<T, pred_t>) {
      return pred_t{static_cast<uint8_t>(i != 0)};
    } else if constexpr (std::is_same_v<T, bf16_t>) {
      return bf16_t{F32ToBf16(static_cast<float>(i))};
    } else if constexpr (std::is_same_v<T, f16_t>) {
      return f16_t{F32ToF16(static_cast<float>(i))};
    } else {
      return static_cast<T>(i);
    }
  });
}

Value Value::WithDims(Dims dims) const {
  Value v = *this;
  v.dims_ = std::move(dims);
  return v;
}

Value Value::Reinterpret(PrimitiveType type, Dims dims) const {
  Value v = *this;
  v.type_ = type;
  v.count_ = ElementCountOf(dims);
  v.dims_ = std::move(dims);
  return v;
}

const std::vector<Value>& Value::elements() const {
  static const std::vector<Value>* const kEmpty = new std::vector<Value>();
  return tuple_ ? *tuple_ : *kEmpty;
}

Shape Value::shape() const {
  switch (kind_) {
    case Kind::kArray:
      return Shape(type_,
                   absl::InlinedVector<int64_t, 6>(dims_.begin(), dims_.end()));
    case Kind::kTuple: {
      std::vector<Shape> shapes;
      for (const Value& e : elements()) shapes.push_back(e.shape());
      return Shape::Tuple(std::move(shapes));
    }
    case Kind::kToken:
      return Shape::Token();
    case Kind::kInvalid:
      break;
  }
  return Shape();
}

std::string Value::ShapeString() const {
  switch (kind_) {
    case Kind::kArray:
      return ArrayShapeString(type_, dims_);
    case Kind::kTuple: {
      std::string s = "(";
      for (size_t i = 0; i < elements().size(); ++i) {
        if (i) s += ", ";
        s += elements()[i].ShapeString();
      }
      return s + ")";
    }
    case Kind::kToken:
      return "token[]";
    case Kind::kInvalid:
      break;
  }
  return "<invalid>";
}

int64_t Value::TotalBytes() const {
  if (is_array()) return byte_size();
  int64_t total = 0;
  for (const Value& e : elements()) total += e.TotalBytes();
  return total;
}

double Value::GetDouble(int64_t i) const {
  double d = 0;
  VisitElementType(type_, [&]<typename T>() {
    d = static_cast<double>(ElemTraits<T>::Load(data<T>()[i]));
  });
  return d;
}

int64_t Value::GetInt(int64_t i) const {
  int64_t r = 0;
  VisitElementType(type_, [&]<typename T>() {
    auto c = ElemTraits<T>::Load(data<T>()[i]);
    if constexpr (std::is_floating_point_v<decltype(c)>) {
      if (std::isnan(c)) {
        r = 0;
      } else if (c >= 9.2e18) {
        r = std::numeric_limits<int64_t>::max();
      } else if (c <= -9.2e18) {
        r = std::numeric_limits<int64_t>::min();
      } else {
        r = static_cast<int64_t>(c);
      }
    } else {
      r = static_cast<int64_t>(c);
    }
  });
  return r;
}

absl::StatusOr<Literal> Value::ToLiteral() const {
  if (is_tuple()) {
    Literal lit(shape());
    for (int64_t i = 0; i < tuple_size(); ++i) {
      absl::StatusOr<Literal> e = element(i).ToLiteral();
      if (!e.ok()) return e.status();
      lit.mutable_elements()[i] = *std::move(e);
    }
    return lit;
  }
  if (is_token()) return Literal(Shape::Token());
  if (!is_array()) return absl::InternalError("ToLiteral of invalid value");
  Literal lit(shape());
  if (byte_size() > 0) {
    std::memcpy(lit.mutable_data().data(), raw(), byte_size());
  }
  return lit;
}

void AppendElement(const Value& value, int64_t i, std::string& out) {
  VisitElementType(value.type(), [&]<typename T>() {
    auto c = ElemTraits<T>::Load(value.data<T>()[i]);
    if constexpr (std::is_same_v<T, pred_t>) {
      out += c ? "true" : "false";
    } else if constexpr (kIsFloatStorage<T>) {
      AppendFloatLiteral(value.type(), static_cast<double>(c), out);
    } else {
      absl::StrAppend(&out, c);
    }
  });
}

namespace {
void FnvBytes(uint64_t& h, const uint8_t* p, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
}
void FnvValue(uint64_t& h, const Value& v) {
  if (v.is_array()) {
    FnvBytes(h, v.raw(), v.byte_size());
  } else {
    for (const Value& e : v.elements()) FnvValue(h, e);
  }
}
}  // namespace

uint64_t Fnv1a64(const Value& value) {
  uint64_t h = 0xcbf29ce484222325ull;
  FnvValue(h, value);
  return h;
}

}  // namespace hloverlap::interp
