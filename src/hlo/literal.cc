#include "hlo/literal.h"

#include <cmath>
#include <limits>

namespace hloverlap {
namespace {

// Decodes a small float with `e` exponent bits and `m` mantissa bits.
// Variants: kIeee (inf and NaN at max exponent), kFn (no inf; NaN only at
// all-ones), kFnuz (no inf, no -0; 0x80 pattern is NaN; bias + 1), kE8M0
// (exponent only, unsigned; 0xff is NaN).
enum class MiniKind { kIeee, kFn, kFnuz, kE8M0, kNoNanNoInf };

double DecodeMiniFloat(uint32_t bits, int e, int m, int bias, MiniKind kind) {
  const int total = 1 + e + m;
  if (kind == MiniKind::kE8M0) {
    if (bits == 0xff) return std::numeric_limits<double>::quiet_NaN();
    return std::ldexp(1.0, static_cast<int>(bits) - 127);
  }
  const uint32_t sign = (bits >> (total - 1)) & 1;
  const uint32_t exp = (bits >> m) & ((1u << e) - 1);
  const uint32_t man = bits & ((1u << m) - 1);
  const uint32_t max_exp = (1u << e) - 1;
  if (kind == MiniKind::kFnuz && sign == 1 && exp == 0 && man == 0) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  if (kind == MiniKind::kIeee && exp == max_exp) {
    if (man == 0) {
      return sign ? -std::numeric_limits<double>::infinity()
                  : std::numeric_limits<double>::infinity();
    }
    return std::numeric_limits<double>::quiet_NaN();
  }
  if (kind == MiniKind::kFn && exp == max_exp && man == (1u << m) - 1) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  double v;
  if (exp == 0) {
    v = std::ldexp(static_cast<double>(man), 1 - bias - m);
  } else {
    v = std::ldexp(static_cast<double>(man | (1u << m)),
                   static_cast<int>(exp) - bias - m);
  }
  return sign ? -v : v;
}

}  // namespace

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
  return static_cast<float>(DecodeMiniFloat(bits, 5, 10, 15, MiniKind::kIeee));
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
    case PrimitiveType::kF8E5M2:
      return DecodeMiniFloat(Get<uint8_t>(i), 5, 2, 15, MiniKind::kIeee);
    case PrimitiveType::kF8E4M3:
      return DecodeMiniFloat(Get<uint8_t>(i), 4, 3, 7, MiniKind::kIeee);
    case PrimitiveType::kF8E3M4:
      return DecodeMiniFloat(Get<uint8_t>(i), 3, 4, 3, MiniKind::kIeee);
    case PrimitiveType::kF8E4M3FN:
      return DecodeMiniFloat(Get<uint8_t>(i), 4, 3, 7, MiniKind::kFn);
    case PrimitiveType::kF8E4M3B11FNUZ:
      return DecodeMiniFloat(Get<uint8_t>(i), 4, 3, 11, MiniKind::kFnuz);
    case PrimitiveType::kF8E5M2FNUZ:
      return DecodeMiniFloat(Get<uint8_t>(i), 5, 2, 16, MiniKind::kFnuz);
    case PrimitiveType::kF8E4M3FNUZ:
      return DecodeMiniFloat(Get<uint8_t>(i), 4, 3, 8, MiniKind::kFnuz);
    case PrimitiveType::kF8E8M0FNU:
      return DecodeMiniFloat(Get<uint8_t>(i), 8, 0, 127, MiniKind::kE8M0);
    case PrimitiveType::kF6E3M2FN:
      return DecodeMiniFloat(Get<uint8_t>(i), 3, 2, 3, MiniKind::kNoNanNoInf);
    case PrimitiveType::kF6E2M3FN:
      return DecodeMiniFloat(Get<uint8_t>(i), 2, 3, 1, MiniKind::kNoNanNoInf);
    case PrimitiveType::kF4E2M1FN:
      return DecodeMiniFloat(Get<uint8_t>(i), 2, 1, 1, MiniKind::kNoNanNoInf);
    default:
      return 0;
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
