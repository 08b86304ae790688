#include "analysis/int_value.h"

#include <algorithm>

namespace hloverlap {
namespace {

using u128 = unsigned __int128;

// The smallest k >= 0 with (a * k) mod m in [lo, hi], for 0 <= lo <= hi < m
// and 0 <= a < m. Euclid-style: when no multiple of a lies in [lo, hi], the
// first solution wraps y >= 1 times, and the smallest such y is the same
// question for (m mod a, a); each level shrinks the modulus as Euclid's
// algorithm does, so the depth is O(log m). U must hold m^2 + 3m.
template <typename U>
std::optional<U> FirstMultipleInRange(U a, U m, U lo, U hi, int depth) {
  if (lo == 0) return U{0};
  if (a == 0 || depth > 256) return std::nullopt;
  // The first multiple of a at or above lo, before any wrap.
  U k = (lo + a - 1) / a;
  if (a * k <= hi) return k;
  // No multiple of a in [lo, hi]: then hi - lo < a - 1, lo % a >= 1 and
  // lo % a <= hi % a. Wrapping y times, k solves lo <= a*k - m*y <= hi,
  // i.e. [lo + m*y, hi + m*y] holds a multiple of a, i.e. (m*y) mod a lies
  // in [a - hi % a, a - lo % a]. A larger y only gives larger k.
  U b = m % a;
  std::optional<U> y =
      FirstMultipleInRange<U>(b, a, a - hi % a, a - lo % a, depth + 1);
  if (!y.has_value()) return std::nullopt;
  // k = ceil((lo + m*y) / a), without overflowing: m*y < m^2 fits U.
  U q = m * *y;
  return q / a + (q % a + lo + a - 1) / a;
}

}  // namespace

bool IntValue::IsSupportedType(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kS8:
    case PrimitiveType::kS16:
    case PrimitiveType::kS32:
    case PrimitiveType::kS64:
    case PrimitiveType::kU8:
    case PrimitiveType::kU16:
    case PrimitiveType::kU32:
    case PrimitiveType::kU64:
      return true;
    default:
      return false;
  }
}

std::optional<IntValue> IntValue::FromBits(PrimitiveType type, uint64_t bits) {
  if (!IsSupportedType(type)) return std::nullopt;
  IntValue v(type, 0);
  v.bits_ = bits & v.Mask();
  return v;
}

std::optional<IntValue> IntValue::FromInt64(PrimitiveType type, int64_t value) {
  if (!IsSupportedType(type)) return std::nullopt;
  IntValue v(type, static_cast<uint64_t>(value));
  v.bits_ &= v.Mask();
  if (v.value() != value) return std::nullopt;
  return v;
}

std::optional<IntValue> IntValue::FromUint64(PrimitiveType type,
                                             uint64_t value) {
  if (!IsSupportedType(type)) return std::nullopt;
  IntValue v(type, value);
  v.bits_ &= v.Mask();
  if (v.value() != static_cast<__int128>(value)) return std::nullopt;
  return v;
}

std::optional<IntValue> IntValue::FromLiteral(const Literal& literal) {
  const Shape& shape = literal.shape();
  if (!shape.IsArray() || literal.elided() || literal.element_count() != 1) {
    return std::nullopt;
  }
  const PrimitiveType type = shape.element_type();
  if (!IsSupportedType(type)) return std::nullopt;
  const int64_t bytes = PrimitiveTypeByteSize(type);
  if (static_cast<int64_t>(literal.data().size()) < bytes) return std::nullopt;
  uint64_t bits = 0;
  switch (bytes) {
    case 1:
      bits = literal.Get<uint8_t>(0);
      break;
    case 2:
      bits = literal.Get<uint16_t>(0);
      break;
    case 4:
      bits = literal.Get<uint32_t>(0);
      break;
    case 8:
      bits = literal.Get<uint64_t>(0);
      break;
    default:
      return std::nullopt;
  }
  return FromBits(type, bits);
}

IntValue IntValue::Min(PrimitiveType type) { return FromOrdinal(type, 0); }

IntValue IntValue::Max(PrimitiveType type) {
  return FromOrdinal(type, ~uint64_t{0});
}

__int128 IntValue::value() const {
  const int w = width();
  if (is_signed() && w > 0 && ((bits_ >> (w - 1)) & 1) != 0) {
    return static_cast<__int128>(bits_) - (static_cast<__int128>(1) << w);
  }
  return static_cast<__int128>(bits_);
}

std::optional<int64_t> IntValue::ToInt64() const {
  __int128 v = value();
  if (v > INT64_MAX || v < INT64_MIN) return std::nullopt;
  return static_cast<int64_t>(v);
}

std::string IntValue::ToString() const {
  __int128 v = value();
  const bool negative = v < 0;
  u128 magnitude =
      negative ? static_cast<u128>(-(v + 1)) + 1 : static_cast<u128>(v);
  std::string digits;
  do {
    digits.push_back(static_cast<char>('0' + static_cast<int>(magnitude % 10)));
    magnitude /= 10;
  } while (magnitude != 0);
  if (negative) digits.push_back('-');
  std::reverse(digits.begin(), digits.end());
  return digits;
}

Literal IntValue::ToLiteral() const {
  Literal lit(Shape::Scalar(type_));
  switch (PrimitiveTypeByteSize(type_)) {
    case 1:
      lit.Set<uint8_t>(0, static_cast<uint8_t>(bits_));
      break;
    case 2:
      lit.Set<uint16_t>(0, static_cast<uint16_t>(bits_));
      break;
    case 4:
      lit.Set<uint32_t>(0, static_cast<uint32_t>(bits_));
      break;
    default:
      lit.Set<uint64_t>(0, bits_);
      break;
  }
  return lit;
}

uint64_t IntValue::Ordinal() const {
  if (!is_signed()) return bits_;
  return (bits_ ^ (uint64_t{1} << (width() - 1))) & Mask();
}

IntValue IntValue::FromOrdinal(PrimitiveType type, uint64_t ordinal) {
  IntValue v(IsSupportedType(type) ? type : PrimitiveType::kS64, 0);
  uint64_t bits = ordinal & v.Mask();
  if (v.is_signed()) bits ^= uint64_t{1} << (v.width() - 1);
  v.bits_ = bits & v.Mask();
  return v;
}

IntValue IntValue::Add(const IntValue& other) const {
  return IntValue(type_, (bits_ + other.bits_) & Mask());
}

IntValue IntValue::Subtract(const IntValue& other) const {
  return IntValue(type_, (bits_ - other.bits_) & Mask());
}

IntValue IntValue::Multiply(const IntValue& other) const {
  return IntValue(type_, (bits_ * other.bits_) & Mask());
}

IntValue IntValue::Negate() const {
  return IntValue(type_, (uint64_t{0} - bits_) & Mask());
}

IntValue IntValue::Times(uint64_t k) const {
  return IntValue(type_, (bits_ * k) & Mask());
}

IntValue IntValue::ToSigned() const {
  PrimitiveType t = type_;
  switch (type_) {
    case PrimitiveType::kU8:
      t = PrimitiveType::kS8;
      break;
    case PrimitiveType::kU16:
      t = PrimitiveType::kS16;
      break;
    case PrimitiveType::kU32:
      t = PrimitiveType::kS32;
      break;
    case PrimitiveType::kU64:
      t = PrimitiveType::kS64;
      break;
    default:
      break;
  }
  return IntValue(t, bits_);
}

IntValue IntValue::ConvertTo(PrimitiveType to) const {
  std::optional<IntValue> v =
      FromBits(to, static_cast<uint64_t>(static_cast<u128>(value())));
  return v.has_value() ? *v : *this;
}

bool IntValue::Compare(ComparisonDirection direction, const IntValue& a,
                       const IntValue& b) {
  const __int128 x = a.value();
  const __int128 y = b.value();
  switch (direction) {
    case ComparisonDirection::kEq:
      return x == y;
    case ComparisonDirection::kNe:
      return x != y;
    case ComparisonDirection::kLt:
      return x < y;
    case ComparisonDirection::kLe:
      return x <= y;
    case ComparisonDirection::kGt:
      return x > y;
    case ComparisonDirection::kGe:
      return x >= y;
  }
  return false;
}

std::optional<uint64_t> FirstInInterval(int width, uint64_t start,
                                        uint64_t step, uint64_t lo,
                                        uint64_t hi) {
  if (width < 1 || width > 64) return std::nullopt;
  const u128 m = static_cast<u128>(1) << width;
  const u128 mask = m - 1;
  const u128 s = start & mask, a = step & mask, l = lo & mask, h = hi & mask;
  if (l > h) return std::nullopt;
  if (s >= l && s <= h) return 0;
  // (s + a*k) mod m in [l, h]  <=>  (a*k) mod m in [l - s, h - s] mod m;
  // the shifted interval does not wrap, since it does not hold 0 (s is
  // outside [l, h]).
  const u128 shifted_lo = (l + m - s) & mask;
  const u128 shifted_hi = (h + m - s) & mask;
  // The narrowest arithmetic that holds m^2 + 3m (narrow divisions are
  // much faster).
  std::optional<u128> k;
  if (width <= 15) {
    std::optional<uint32_t> k32 = FirstMultipleInRange<uint32_t>(
        static_cast<uint32_t>(a), static_cast<uint32_t>(m),
        static_cast<uint32_t>(shifted_lo), static_cast<uint32_t>(shifted_hi),
        0);
    if (k32.has_value()) k = *k32;
  } else if (width <= 31) {
    std::optional<uint64_t> k64 = FirstMultipleInRange<uint64_t>(
        static_cast<uint64_t>(a), static_cast<uint64_t>(m),
        static_cast<uint64_t>(shifted_lo), static_cast<uint64_t>(shifted_hi),
        0);
    if (k64.has_value()) k = *k64;
  } else {
    k = FirstMultipleInRange<u128>(a, m, shifted_lo, shifted_hi, 0);
  }
  if (!k.has_value() || *k >= m) return std::nullopt;
  return static_cast<uint64_t>(*k);
}

}  // namespace hloverlap
