// Integers as HLO computes them: a value of one integer element type
// (s8, s16, s32, s64, u8, u16, u32, u64), with arithmetic that wraps at the
// type's width and comparisons in the type's order.
//
//   %a = s32[] constant(-2147483647)
//   %s = s32[] add(%a, %a)          // 2 in s32 (not -4294967294)
//   %u = u64[] constant(18446744073709551615)
//   %c = pred[] compare(%u, %four), direction=LT   // false: unsigned order
//
//   IntValue a = *IntValue::FromInt64(PrimitiveType::kS32, -2147483647);
//   (a + a).ToString() == "2"
//
// FirstInInterval answers the question behind every trip count: the first
// k >= 0 at which the sequence x_k = x_0 + k * step (mod 2^width) enters an
// interval, in O(log 2^width) steps (a Euclid-style reduction), however
// many times the sequence wraps before it gets there.
#ifndef HLOVERLAP_ANALYSIS_INT_VALUE_H_
#define HLOVERLAP_ANALYSIS_INT_VALUE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "hlo/attributes.h"
#include "hlo/literal.h"
#include "hlo/shape.h"

namespace hloverlap {

class IntValue {
 public:
  // Whether `type` is one of the eight integer types above.
  static bool IsSupportedType(PrimitiveType type);

  // The value whose two's complement bits are the low `width` bits of
  // `bits`; nullopt for an unsupported type.
  static std::optional<IntValue> FromBits(PrimitiveType type, uint64_t bits);
  // Exactly `value`, or nullopt when the type cannot represent it.
  static std::optional<IntValue> FromInt64(PrimitiveType type, int64_t value);
  static std::optional<IntValue> FromUint64(PrimitiveType type, uint64_t value);
  // Element 0 of a literal of one element and a supported type.
  static std::optional<IntValue> FromLiteral(const Literal& literal);
  // The smallest and largest values of a supported type.
  static IntValue Min(PrimitiveType type);
  static IntValue Max(PrimitiveType type);

  PrimitiveType type() const { return type_; }
  int width() const { return WidthOf(type_); }
  bool is_signed() const {
    return type_ == PrimitiveType::kS8 || type_ == PrimitiveType::kS16 ||
           type_ == PrimitiveType::kS32 || type_ == PrimitiveType::kS64;
  }
  // Two's complement bits, zero above the width.
  uint64_t bits() const { return bits_; }
  // The number denoted: sign-extended for signed types.
  __int128 value() const;
  // The value when it fits in int64 (a u64 >= 2^63 does not).
  std::optional<int64_t> ToInt64() const;
  std::string ToString() const;  // decimal, as HLO text writes it
  Literal ToLiteral() const;     // a scalar of type()
  bool IsZero() const { return bits_ == 0; }

  // Rank in the type's order: 0 for Min(type), 2^width - 1 for Max(type).
  // Adding s to a value adds s to its ordinal (mod 2^width).
  uint64_t Ordinal() const;
  static IntValue FromOrdinal(PrimitiveType type, uint64_t ordinal);

  // Arithmetic at the width of this value's type, as HLO add / subtract /
  // multiply / negate compute it; `other` is read as a value of this type
  // (callers pass operands of one type, as the verifier requires).
  IntValue Add(const IntValue& other) const;
  IntValue Subtract(const IntValue& other) const;
  IntValue Multiply(const IntValue& other) const;
  IntValue Negate() const;
  // `this * k` for a non-negative count k, wrapping.
  IntValue Times(uint64_t k) const;
  // The same bits read as the signed type of the same width (a u8 step of
  // 206 reads as -50): how a step is shown to people.
  IntValue ToSigned() const;
  // HLO convert between integer types: the source's value, sign- or
  // zero-extended by the source's signedness, truncated to `to`'s width.
  IntValue ConvertTo(PrimitiveType to) const;

  // `a DIRECTION b` in the type's order (signed or unsigned).
  static bool Compare(ComparisonDirection direction, const IntValue& a,
                      const IntValue& b);
  // Same type, same value.
  bool operator==(const IntValue& other) const = default;

 private:
  IntValue(PrimitiveType type, uint64_t bits) : type_(type), bits_(bits) {}
  // Inline: trip counting calls these in its inner loops.
  static constexpr int WidthOf(PrimitiveType type) {
    switch (type) {
      case PrimitiveType::kS8:
      case PrimitiveType::kU8:
        return 8;
      case PrimitiveType::kS16:
      case PrimitiveType::kU16:
        return 16;
      case PrimitiveType::kS32:
      case PrimitiveType::kU32:
        return 32;
      default:
        return 64;
    }
  }
  uint64_t Mask() const {
    const int w = width();
    return w >= 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1;
  }

  PrimitiveType type_ = PrimitiveType::kS32;
  uint64_t bits_ = 0;
};

// The smallest k >= 0 with (start + k * step) mod 2^width in [lo, hi]
// (0 <= lo <= hi < 2^width, all values taken modulo 2^width; 1 <= width
// <= 64); nullopt when the sequence never gets there. Exact for every input.
std::optional<uint64_t> FirstInInterval(int width, uint64_t start,
                                        uint64_t step, uint64_t lo,
                                        uint64_t hi);

}  // namespace hloverlap

#endif  // HLOVERLAP_ANALYSIS_INT_VALUE_H_
