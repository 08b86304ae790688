// Runtime values of the reference interpreter.
//
// A Value is an array (element type, dimensions, and a shared, immutable
// byte buffer in dense row-major order, the storage convention of
// hlo/literal.h), a tuple of Values, or a token. Copying a Value copies
// references only, so passing loop state and tuple elements around is cheap.
// A buffer is written only right after allocation, by the kernel producing
// it (or in place when its Value holds the only reference).
//
// Element storage types: pred_t (one byte 0/1), int8_t..uint64_t, f16_t and
// bf16_t (raw 16-bit patterns), float, double. ElemTraits<T> gives the type
// arithmetic is done in (float for the 16-bit floats, bool for pred) and the
// conversions to and from it (round to nearest even).
#ifndef HLOVERLAP_INTERP_VALUE_H_
#define HLOVERLAP_INTERP_VALUE_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hlo/literal.h"
#include "hlo/shape.h"

namespace hloverlap::interp {

using Dims = absl::InlinedVector<int64_t, 6>;

// Storage types of the element types without a native C++ type.
struct pred_t {
  uint8_t v;
};
struct bf16_t {
  uint16_t v;
};
struct f16_t {
  uint16_t v;
};

// --- 16-bit float conversions (round to nearest even) ----------------------

inline float Bf16ToF32(uint16_t bits) {
  uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint16_t F32ToBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) {
    return static_cast<uint16_t>((u >> 16) | 0x40);  // quiet NaN, sign kept
  }
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}
float F16ToF32(uint16_t bits);
uint16_t F32ToF16(float f);
uint16_t F64ToF16(double d);

// --- Element type traits
// ------------------------------------------------------

template <typename T>
struct ElemTraits {
  using Compute = T;
  static Compute Load(T x) { return x; }
  static T Store(Compute c) { return c; }
};
template <>
struct ElemTraits<pred_t> {
  using Compute = bool;
  static bool Load(pred_t x) { return x.v != 0; }
  static pred_t Store(bool c) { return pred_t{static_cast<uint8_t>(c)}; }
};
template <>
struct ElemTraits<bf16_t> {
  using Compute = float;
  static float Load(bf16_t x) { return Bf16ToF32(x.v); }
  static bf16_t Store(float c) { return bf16_t{F32ToBf16(c)}; }
};
template <>
struct ElemTraits<f16_t> {
  using Compute = float;
  static float Load(f16_t x) { return F16ToF32(x.v); }
  static f16_t Store(float c) { return f16_t{F32ToF16(c)}; }
};

template <typename T>
inline constexpr bool kIsFloatStorage =
    std::is_same_v<T, float> || std::is_same_v<T, double> ||
    std::is_same_v<T, bf16_t> || std::is_same_v<T, f16_t>;
template <typename T>
inline constexpr bool kIsIntStorage =
    std::is_integral_v<T> && !std::is_same_v<T, bool>;

// Whether the interpreter computes with this element type: pred, s8-s64,
// u8-u64, f16, bf16, f32, f64.
bool IsSupportedElementType(PrimitiveType type);

// Calls fn.template operator()<T>() with the storage type T of `type`;
// returns false (without calling) for unsupported types.
template <typename Fn>
bool VisitElementType(PrimitiveType type, Fn&& fn) {
  switch (type) {
    case PrimitiveType::kPred:
      fn.template operator()<pred_t>();
      return true;
    case PrimitiveType::kS8:
      fn.template operator()<int8_t>();
      return true;
    case PrimitiveType::kS16:
      fn.template operator()<int16_t>();
      return true;
    case PrimitiveType::kS32:
      fn.template operator()<int32_t>();
      return true;
    case PrimitiveType::kS64:
      fn.template operator()<int64_t>();
      return true;
    case PrimitiveType::kU8:
      fn.template operator()<uint8_t>();
      return true;
    case PrimitiveType::kU16:
      fn.template operator()<uint16_t>();
      return true;
    case PrimitiveType::kU32:
      fn.template operator()<uint32_t>();
      return true;
    case PrimitiveType::kU64:
      fn.template operator()<uint64_t>();
      return true;
    case PrimitiveType::kF16:
      fn.template operator()<f16_t>();
      return true;
    case PrimitiveType::kBF16:
      fn.template operator()<bf16_t>();
      return true;
    case PrimitiveType::kF32:
      fn.template operator()<float>();
      return true;
    case PrimitiveType::kF64:
      fn.template operator()<double>();
      return true;
    default:
      return false;
  }
}

// InvalidArgument "unsupported element type 'c64' ..." for types the
// interpreter does not compute with.
absl::Status UnsupportedTypeError(PrimitiveType type, std::string_view what);

// --- Buffers and values
// -------------------------------------------------------

// 64-byte aligned raw storage.
class Buffer {
 public:
  // nullptr when the allocation fails.
  static std::shared_ptr<Buffer> Allocate(int64_t bytes);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  uint8_t* data() const { return data_; }
  int64_t size() const { return size_; }

 private:
  Buffer() = default;
  uint8_t* data_ = nullptr;
  int64_t size_ = 0;
};

class Value {
 public:
  Value() = default;  // invalid (holds nothing)

  // An array with uninitialized contents.
  static absl::StatusOr<Value> Uninitialized(PrimitiveType type, Dims dims);
  static absl::StatusOr<Value> Zeros(PrimitiveType type, Dims dims);
  static Value Tuple(std::vector<Value> elements);
  static Value Token();
  // Zero-filled value of any array/tuple/token shape.
  static absl::StatusOr<Value> ZerosOfShape(const Shape& shape);
  // Copies a literal (tuples recursively). Elided literals are an error.
  static absl::StatusOr<Value> FromLiteral(const Literal& literal);
  // Scalar of `type` holding `v` converted as by `convert` from f64.
  static absl::StatusOr<Value> ScalarFromDouble(PrimitiveType type, double v);
  // Scalar of an integral/pred `type` holding v (wrapping).
  static absl::StatusOr<Value> ScalarFromInt(PrimitiveType type, int64_t v);
  // Array from typed host data (T is the storage type of `type`).
  template <typename T>
  static absl::StatusOr<Value> FromVector(PrimitiveType type, Dims dims,
                                          const std::vector<T>& data);

  bool valid() const { return kind_ != Kind::kInvalid; }
  bool is_array() const { return kind_ == Kind::kArray; }
  bool is_tuple() const { return kind_ == Kind::kTuple; }
  bool is_token() const { return kind_ == Kind::kToken; }

  // Array accessors.
  PrimitiveType type() const { return type_; }
  const Dims& dims() const { return dims_; }
  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  int64_t dim(int64_t i) const { return dims_[i]; }
  int64_t element_count() const { return count_; }
  int64_t element_size() const { return PrimitiveTypeByteSize(type_); }
  int64_t byte_size() const { return count_ * element_size(); }
  const uint8_t* raw() const { return buffer_ ? buffer_->data() : nullptr; }
  // Writable bytes: only for values just created (or uniquely owned).
  uint8_t* mutable_raw() { return buffer_ ? buffer_->data() : nullptr; }
  template <typename T>
  const T* data() const {
    return reinterpret_cast<const T*>(raw());
  }
  template <typename T>
  T* mutable_data() {
    return reinterpret_cast<T*>(mutable_raw());
  }
  const std::shared_ptr<Buffer>& buffer() const { return buffer_; }
  // True when this Value holds the only reference to its buffer.
  bool unique_buffer() const { return buffer_ && buffer_.use_count() == 1; }
  // Same buffer, other dimensions (same element count): reshape.
  Value WithDims(Dims dims) const;
  // Same buffer read as another element type of the same byte size (and
  // dimensions with the same element count); used by bitcast.
  Value Reinterpret(PrimitiveType type, Dims dims) const;

  // Tuple accessors.
  const std::vector<Value>& elements() const;
  int64_t tuple_size() const {
    return tuple_ ? static_cast<int64_t>(tuple_->size()) : 0;
  }
  const Value& element(int64_t i) const { return (*tuple_)[i]; }

  // The shape (no layout) of this value.
  Shape shape() const;
  // "bf16[2,3]" / "(f32[], s32[4])" / "token".
  std::string ShapeString() const;
  // Total bytes of all array leaves.
  int64_t TotalBytes() const;

  // Element i as double / int64 (any supported array type).
  double GetDouble(int64_t i) const;
  int64_t GetInt(int64_t i) const;

  // Copies into a Literal (tuples recursively).
  absl::StatusOr<Literal> ToLiteral() const;

 private:
  enum class Kind : uint8_t { kInvalid, kArray, kTuple, kToken };
  Kind kind_ = Kind::kInvalid;
  PrimitiveType type_ = PrimitiveType::kInvalid;
  Dims dims_;
  int64_t count_ = 0;
  std::shared_ptr<Buffer> buffer_;
  std::shared_ptr<const std::vector<Value>> tuple_;
};

template <typename T>
absl::StatusOr<Value> Value::FromVector(PrimitiveType type, Dims dims,
                                        const std::vector<T>& data) {
  absl::StatusOr<Value> v = Uninitialized(type, std::move(dims));
  if (!v.ok()) return v;
  if (static_cast<int64_t>(data.size() * sizeof(T)) != v->byte_size()) {
    return absl::InvalidArgumentError("FromVector: size mismatch");
  }
  if (!data.empty()) std::memcpy(v->mutable_raw(), data.data(), v->byte_size());
  return v;
}

// Number of elements of `dims` (saturating at INT64_MAX, negative dims as 0).
int64_t ElementCountOf(const Dims& dims);

// Row-major strides (in elements) of `dims`.
Dims RowMajorStrides(const Dims& dims);

// "f32[2,3]" for an element type and dims.
std::string ArrayShapeString(PrimitiveType type, const Dims& dims);

// Appends element i of an array value as XLA prints literals ("1.5", "-3",
// "true", "nan").
void AppendElement(const Value& value, int64_t i, std::string& out);

// FNV-1a (64 bit) of the array bytes (row-major, host byte order); for
// tuples, of the leaves' bytes in order.
uint64_t Fnv1a64(const Value& value);

// Converts a Dims-like container.
template <typename C>
Dims ToDims(const C& c) {
  return Dims(c.begin(), c.end());
}

}  // namespace hloverlap::interp

#endif  // HLOVERLAP_INTERP_VALUE_H_
