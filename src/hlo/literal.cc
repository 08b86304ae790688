#include "hlo/literal.h"

#include <cmath>
#include <limits>
#include <optional>

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
  uint32_t u;
  std::memcpy(&u, &value, sizeof(u));
  const uint32_t sign = (u >> 16) & 0x8000;
  const uint32_t abs = u & 0x7fffffff;
  if (abs > 0x7f800000) return static_cast<uint16_t>(sign | 0x7e00);  // NaN
  if (abs >= 0x477ff000) {
    // >= 65520 rounds to infinity (incl. inf itself).
    return static_cast<uint16_t>(sign | 0x7c00);
  }
  if (abs < 0x38800000) {
    // Subnormal in f16 (or zero): value / 2^-24, rounded to nearest even.
    float f;
    uint32_t a = abs;
    std::memcpy(&f, &a, sizeof(f));
    float scaled = f * 16777216.0f;    // 2^24, exact
    float r = std::nearbyint(scaled);  // default rounding mode: nearest even
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(r));
  }
  // Normal: rebias exponent (127 -> 15) and round 23 -> 10 mantissa bits.
  uint32_t mant_round = abs + 0xfff + ((abs >> 13) & 1);
  uint32_t h = (mant_round - (112u << 23)) >> 13;
  return static_cast<uint16_t>(sign | h);
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

double Literal::GetAsDouble(int64_t i) const {
  switch (shape_.element_type()) {
    case PrimitiveType::kPred:
    case PrimitiveType::kU8:
    case PrimitiveType::kU4:
    case PrimitiveType::kU2:
    case PrimitiveType::kU1:
      return Get<uint8_t>(i);
    case PrimitiveType::kS8:
    case PrimitiveType::kS4:
    case PrimitiveType::kS2:
    case PrimitiveType::kS1:
      return Get<int8_t>(i);
    case PrimitiveType::kS16:
      return Get<int16_t>(i);
    case PrimitiveType::kS32:
      return Get<int32_t>(i);
    case PrimitiveType::kS64:
      return static_cast<double>(Get<int64_t>(i));
    case PrimitiveType::kU16:
      return Get<uint16_t>(i);
    case PrimitiveType::kU32:
      return Get<uint32_t>(i);
    case PrimitiveType::kU64:
      return static_cast<double>(Get<uint64_t>(i));
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
  switch (shape_.element_type()) {
    case PrimitiveType::kPred:
    case PrimitiveType::kU8:
    case PrimitiveType::kU4:
    case PrimitiveType::kU2:
    case PrimitiveType::kU1:
      return Get<uint8_t>(i);
    case PrimitiveType::kS8:
    case PrimitiveType::kS4:
    case PrimitiveType::kS2:
    case PrimitiveType::kS1:
      return Get<int8_t>(i);
    case PrimitiveType::kS16:
      return Get<int16_t>(i);
    case PrimitiveType::kS32:
      return Get<int32_t>(i);
    case PrimitiveType::kS64:
      return Get<int64_t>(i);
    case PrimitiveType::kU16:
      return Get<uint16_t>(i);
    case PrimitiveType::kU32:
      return Get<uint32_t>(i);
    case PrimitiveType::kU64:
      return static_cast<int64_t>(Get<uint64_t>(i));
    default: {
      double d = GetAsDouble(i);
      if (!(d == d)) return 0;
      if (d >= 9.2e18) return std::numeric_limits<int64_t>::max();
      if (d <= -9.2e18) return std::numeric_limits<int64_t>::min();
      return static_cast<int64_t>(d);
    }
  }
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
