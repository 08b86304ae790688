#include "hlo/small_float.h"

#include <cmath>
#include <limits>

namespace hloverlap {
namespace {

uint64_t RoundHalfEven(double x) {
  double fl = std::floor(x);
  double d = x - fl;
  if (d > 0.5 || (d == 0.5 && std::fmod(fl, 2.0) != 0)) fl += 1;
  return static_cast<uint64_t>(fl);
}

}  // namespace

std::optional<SmallFloatFormat> SmallFloatFormatOf(PrimitiveType type) {
  using K = SmallFloatKind;
  switch (type) {
    case PrimitiveType::kF16:
      return SmallFloatFormat{5, 10, 15, K::kIeee, 5};
    case PrimitiveType::kBF16:
      return SmallFloatFormat{8, 7, 127, K::kIeee, 4};
    case PrimitiveType::kF8E5M2:
      return SmallFloatFormat{5, 2, 15, K::kIeee, 2};
    case PrimitiveType::kF8E4M3:
      return SmallFloatFormat{4, 3, 7, K::kIeee, 3};
    case PrimitiveType::kF8E3M4:
      return SmallFloatFormat{3, 4, 3, K::kIeee, 3};
    case PrimitiveType::kF8E4M3FN:
      return SmallFloatFormat{4, 3, 7, K::kFn, 3};
    case PrimitiveType::kF8E4M3B11FNUZ:
      return SmallFloatFormat{4, 3, 11, K::kFnuz, 3};
    case PrimitiveType::kF8E5M2FNUZ:
      return SmallFloatFormat{5, 2, 16, K::kFnuz, 2};
    case PrimitiveType::kF8E4M3FNUZ:
      return SmallFloatFormat{4, 3, 8, K::kFnuz, 3};
    case PrimitiveType::kF8E8M0FNU:
      return SmallFloatFormat{8, 0, 127, K::kE8M0, 2};
    case PrimitiveType::kF6E3M2FN:
      return SmallFloatFormat{3, 2, 3, K::kFinite, 2};
    case PrimitiveType::kF6E2M3FN:
      return SmallFloatFormat{2, 3, 1, K::kFinite, 3};
    case PrimitiveType::kF4E2M1FN:
      return SmallFloatFormat{2, 1, 1, K::kFinite, 2};
    default:
      return std::nullopt;
  }
}

double DecodeSmallFloat(const SmallFloatFormat& f, uint32_t bits) {
  const int e = f.exponent_bits;
  const int m = f.mantissa_bits;
  constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
  if (f.kind == SmallFloatKind::kE8M0) {
    bits &= 0xff;
    if (bits == 0xff) return kNan;
    return std::ldexp(1.0, static_cast<int>(bits) - f.bias);
  }
  const uint32_t sign = (bits >> (e + m)) & 1;
  const uint32_t exp = (bits >> m) & ((1u << e) - 1);
  const uint32_t man = bits & ((1u << m) - 1);
  const uint32_t max_exp = (1u << e) - 1;
  if (f.kind == SmallFloatKind::kFnuz && sign == 1 && exp == 0 && man == 0) {
    return kNan;
  }
  if (f.kind == SmallFloatKind::kIeee && exp == max_exp) {
    if (man != 0) return kNan;
    return sign ? -std::numeric_limits<double>::infinity()
                : std::numeric_limits<double>::infinity();
  }
  if (f.kind == SmallFloatKind::kFn && exp == max_exp && man == (1u << m) - 1) {
    return kNan;
  }
  const double v = exp == 0
                       ? std::ldexp(static_cast<double>(man), 1 - f.bias - m)
                       : std::ldexp(static_cast<double>(man | (1u << m)),
                                    static_cast<int>(exp) - f.bias - m);
  return sign ? -v : v;
}

bool EncodeSmallFloat(const SmallFloatFormat& f, const FloatValue& v,
                      uint32_t* bits, std::string* error) {
  const int e = f.exponent_bits, m = f.mantissa_bits;
  const uint32_t sign_bit = 1u << (e + m);
  const uint32_t exp_ones = (1u << e) - 1;
  if (v.is_nan) {
    const uint32_t sign = v.negative ? sign_bit : 0;
    switch (f.kind) {
      case SmallFloatKind::kIeee: {
        uint64_t man = v.payload != 0 ? v.payload : (uint64_t{1} << (m - 1));
        if (man >= (uint64_t{1} << m)) {
          *error = "NaN payload does not fit the type";
          return false;
        }
        *bits = sign | (exp_ones << m) | static_cast<uint32_t>(man);
        return true;
      }
      case SmallFloatKind::kFn:
        if (v.payload != 0) {
          *error = "type has no NaN payloads";
          return false;
        }
        *bits = sign | (sign_bit - 1);
        return true;
      case SmallFloatKind::kFnuz:
        if (v.payload != 0) {
          *error = "type has no NaN payloads";
          return false;
        }
        *bits = sign_bit;
        return true;
      case SmallFloatKind::kE8M0:
        *bits = 0xff;
        return true;
      case SmallFloatKind::kFinite:
        *error = "NaN is not representable in this type";
        return false;
    }
  }
  const double x = v.value;
  const bool neg = std::signbit(x);
  const double a = std::fabs(x);
  if (f.kind == SmallFloatKind::kE8M0) {
    if (!(a > 0) || neg || std::isinf(a)) {
      *error = "value is not representable in f8e8m0fnu";
      return false;
    }
    int ex;
    double fr = std::frexp(a, &ex);  // a = fr * 2^ex, fr in [0.5, 1)
    int k = fr >= 0.75 ? ex : ex - 1;
    if (k < -127 || k > 127) {
      *error = "value out of range for f8e8m0fnu";
      return false;
    }
    *bits = static_cast<uint32_t>(k + 127);
    return true;
  }
  const uint32_t sign = neg ? sign_bit : 0;
  if (std::isinf(a)) {
    if (f.kind != SmallFloatKind::kIeee) {
      *error = "infinity is not representable in this type";
      return false;
    }
    *bits = sign | (exp_ones << m);
    return true;
  }
  if (a == 0) {
    *bits = f.kind == SmallFloatKind::kFnuz ? 0 : sign;
    return true;
  }
  int ex;
  std::frexp(a, &ex);
  const int exponent = ex - 1;  // a = 1.f * 2^exponent
  int64_t biased = exponent + f.bias;
  uint64_t man;
  if (biased >= 1) {
    uint64_t q = RoundHalfEven(std::ldexp(a, m - exponent));
    if (q >= (uint64_t{1} << (m + 1))) {
      q >>= 1;
      ++biased;
    }
    man = q - (uint64_t{1} << m);
  } else {
    uint64_t q = RoundHalfEven(std::ldexp(a, m - 1 + f.bias));
    if (q >= (uint64_t{1} << m)) {
      biased = 1;
      man = q - (uint64_t{1} << m);
    } else {
      biased = 0;
      man = q;
    }
  }
  int64_t max_biased;
  uint64_t max_man = (uint64_t{1} << m) - 1;
  switch (f.kind) {
    case SmallFloatKind::kIeee:
      max_biased = exp_ones - 1;
      break;
    case SmallFloatKind::kFn:
      max_biased = exp_ones;
      max_man = (uint64_t{1} << m) - 2;
      break;
    default:
      max_biased = exp_ones;
      break;
  }
  if (biased > max_biased || (biased == max_biased && man > max_man)) {
    *error = "value out of range for the type";
    return false;
  }
  uint32_t b =
      sign | (static_cast<uint32_t>(biased) << m) | static_cast<uint32_t>(man);
  if (f.kind == SmallFloatKind::kFnuz && b == sign_bit) b = 0;  // no -0
  *bits = b;
  return true;
}

}  // namespace hloverlap
