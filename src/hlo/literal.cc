#include "hlo/literal.h"

#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "hlo/small_float.h"

namespace hloverlap {

float BF16ToFloat(uint16_t bits) {
  uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

uint16_t FloatToBF16(float value) {
  uint32_t u;
  std::memcpy(&u, &value, sizeof(u));
  if (std::isnan(value)) {
    // Keep sign, force a quiet NaN.
    return static_cast<uint16_t>((u >> 16) | 0x40);
  }
  // Round to nearest even.
  uint32_t lsb = (u >> 16) & 1;
  uint32_t rounding_bias = 0x7fff + lsb;
  u += rounding_bias;
  return static_cast<uint16_t>(u >> 16);
}

float F16ToFloat(uint16_t bits) {
  return static_cast<float>(
      DecodeSmallFloat(*SmallFloatFormatOf(PrimitiveType::kF16), bits));
}

uint16_t FloatToF16(float value) {
  FloatValue v;
  v.value = value;
  v.is_nan = std::isnan(value);
  v.negative = std::signbit(value);
  uint32_t bits;
  std::string error;
  if (!EncodeSmallFloat(*SmallFloatFormatOf(PrimitiveType::kF16), v, &bits,
                        &error)) {
    // Only magnitudes that round past 65504 fail: they become infinity.
    bits = v.negative ? 0xfc00 : 0x7c00;
  }
  return static_cast<uint16_t>(bits);
}

Literal::Literal(const Shape& shape) : shape_(shape) {
  if (shape.IsTuple()) {
    elements_.reserve(shape.tuple_size());
    for (const Shape& s : shape.tuple_shapes()) elements_.emplace_back(s);
    return;
  }
  if (!shape.IsArray()) return;
  data_.assign(static_cast<size_t>(shape.ElementCount()) *
                   PrimitiveTypeByteSize(shape.element_type()),
               0);
}

Literal Literal::Elided(const Shape& shape) {
  Literal l;
  l.shape_ = shape;
  l.elided_ = true;
  return l;
}

namespace {

// Element i of an integral or pred literal as R; nullopt for other types.
template <typename R>
std::optional<R> IntegralElement(const Literal& literal, int64_t i) {
  switch (literal.shape().element_type()) {
    case PrimitiveType::kPred:
    case PrimitiveType::kU8:
    case PrimitiveType::kU4:
    case PrimitiveType::kU2:
    case PrimitiveType::kU1:
      return static_cast<R>(literal.Get<uint8_t>(i));
    case PrimitiveType::kS8:
    case PrimitiveType::kS4:
    case PrimitiveType::kS2:
    case PrimitiveType::kS1:
      return static_cast<R>(literal.Get<int8_t>(i));
    case PrimitiveType::kS16:
      return static_cast<R>(literal.Get<int16_t>(i));
    case PrimitiveType::kS32:
      return static_cast<R>(literal.Get<int32_t>(i));
    case PrimitiveType::kS64:
      return static_cast<R>(literal.Get<int64_t>(i));
    case PrimitiveType::kU16:
      return static_cast<R>(literal.Get<uint16_t>(i));
    case PrimitiveType::kU32:
      return static_cast<R>(literal.Get<uint32_t>(i));
    case PrimitiveType::kU64:
      return static_cast<R>(literal.Get<uint64_t>(i));
    default:
      return std::nullopt;
  }
}

}  // namespace

double Literal::GetAsDouble(int64_t i) const {
  if (std::optional<double> v = IntegralElement<double>(*this, i)) return *v;
  switch (shape_.element_type()) {
    case PrimitiveType::kF16:
      return F16ToFloat(Get<uint16_t>(i));
    case PrimitiveType::kBF16:
      return BF16ToFloat(Get<uint16_t>(i));
    case PrimitiveType::kF32:
      return Get<float>(i);
    case PrimitiveType::kF64:
      return Get<double>(i);
    default: {
      // The f8, f6 and f4 types, one byte each.
      std::optional<SmallFloatFormat> f =
          SmallFloatFormatOf(shape_.element_type());
      return f.has_value() ? DecodeSmallFloat(*f, Get<uint8_t>(i)) : 0;
    }
  }
}

int64_t Literal::GetAsInt64(int64_t i) const {
  if (std::optional<int64_t> v = IntegralElement<int64_t>(*this, i)) {
    return *v;
  }
  double d = GetAsDouble(i);
  if (!(d == d)) return 0;
  if (d >= 9.2e18) return std::numeric_limits<int64_t>::max();
  if (d <= -9.2e18) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(d);
}

bool Literal::BitwiseEqual(const Literal& other) const {
  if (!shape_.Compatible(other.shape_)) return false;
  if (elided_ != other.elided_) return false;
  if (data_ != other.data_) return false;
  if (elements_.size() != other.elements_.size()) return false;
  for (size_t i = 0; i < elements_.size(); ++i) {
    if (!elements_[i].BitwiseEqual(other.elements_[i])) return false;
  }
  return true;
}

}  // namespace hloverlap
