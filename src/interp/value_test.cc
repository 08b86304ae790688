#include "interp/value.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"
#include "interp/testing.h"

namespace hloverlap::interp {
namespace {

using testing::F32;

float Bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

TEST(Bf16, RoundsToNearestEvenOnTies) {
  // 1 + 2^-8 lies exactly between 1.0 (0x3f80) and 1.0078125 (0x3f81).
  EXPECT_EQ(F32ToBf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  // 1 + 3*2^-8 lies between 0x3f81 and 0x3f82: even is 0x3f82.
  EXPECT_EQ(F32ToBf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  // Just above the tie rounds up.
  EXPECT_EQ(F32ToBf16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)),
            0x3f81);
  EXPECT_EQ(F32ToBf16(-1.0f - std::ldexp(1.0f, -8)), 0xbf80);
  // f32 max overflows to inf.
  EXPECT_EQ(F32ToBf16(std::numeric_limits<float>::max()), 0x7f80);
  // NaN stays NaN (quiet), sign kept.
  uint16_t nan = F32ToBf16(Bits(0xff800001u));
  EXPECT_TRUE(std::isnan(Bf16ToF32(nan)));
  EXPECT_EQ(nan & 0x8000, 0x8000);
  EXPECT_EQ(Bf16ToF32(0x3f81), 1.0078125f);
}

TEST(F16, RoundTripAndRounding) {
  EXPECT_EQ(F32ToF16(1.0f), 0x3c00);
  EXPECT_EQ(F16ToF32(0x3c00), 1.0f);
  EXPECT_EQ(F32ToF16(65504.0f), 0x7bff);
  EXPECT_EQ(F32ToF16(65520.0f), 0x7c00);  // rounds to inf
  EXPECT_EQ(F32ToF16(65519.0f), 0x7bff);
  // Tie between 1.0 and 1 + 2^-10: even (1.0).
  EXPECT_EQ(F32ToF16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  EXPECT_EQ(F32ToF16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  // Subnormals.
  EXPECT_EQ(F32ToF16(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(F16ToF32(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(F32ToF16(std::ldexp(1.0f, -25)), 0x0000);  // tie to even (0)
  EXPECT_EQ(F32ToF16(std::ldexp(3.0f, -25)), 0x0002);  // tie to even (2)
  EXPECT_EQ(F64ToF16(1.0 + std::ldexp(1.0, -11)), 0x3c00);
  EXPECT_EQ(F64ToF16(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)),
            0x3c01);
  EXPECT_EQ(F64ToF16(-2.0), 0xc000);
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    ASSERT_EQ(F32ToF16(F16ToF32(static_cast<uint16_t>(h))), h) << h;
    ASSERT_EQ(F64ToF16(F16ToF32(static_cast<uint16_t>(h))), h) << h;
  }
}

TEST(Value, LiteralRoundTrip) {
  Value v = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  absl::StatusOr<Literal> lit = v.ToLiteral();
  ASSERT_TRUE(lit.ok());
  EXPECT_EQ(lit->shape().ToString(false), "f32[2,3]");
  absl::StatusOr<Value> back = Value::FromLiteral(*lit);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(Fnv1a64(*back), Fnv1a64(v));
  EXPECT_EQ(back->ShapeString(), "f32[2,3]");
  Value t = Value::Tuple({v, F32({}, {7})});
  EXPECT_EQ(t.ShapeString(), "(f32[2,3], f32[])");
  EXPECT_EQ(t.TotalBytes(), 28);
}

TEST(Value, ElidedLiteralIsAnError) {
  Literal lit = Literal::Elided(Shape(PrimitiveType::kF32, {4}));
  EXPECT_FALSE(Value::FromLiteral(lit).ok());
}

TEST(Value, Fnv1aOfKnownBytes) {
  // FNV-1a 64 of the empty string and of one zero byte.
  absl::StatusOr<Value> empty = Value::Zeros(PrimitiveType::kU8, {0});
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(Fnv1a64(*empty), 0xcbf29ce484222325ull);
  absl::StatusOr<Value> zero = Value::Zeros(PrimitiveType::kU8, {1});
  ASSERT_TRUE(zero.ok());
  EXPECT_EQ(Fnv1a64(*zero), 0xaf63bd4c8601b7dfull);
}

TEST(Value, AppendElementFormats) {
  std::string s;
  AppendElement(F32({2}, {1.5f, -0.25f}), 1, s);
  EXPECT_EQ(s, "-0.25");
  s.clear();
  AppendElement(testing::S32({1}, {-7}), 0, s);
  EXPECT_EQ(s, "-7");
}

TEST(Value, UnsupportedTypesAreErrors) {
  EXPECT_FALSE(Value::Zeros(PrimitiveType::kC64, {2}).ok());
  EXPECT_FALSE(Value::Zeros(PrimitiveType::kF8E4M3FN, {2}).ok());
  EXPECT_FALSE(Value::Zeros(PrimitiveType::kF32, {-1}).ok());
}

}  // namespace
}  // namespace hloverlap::interp
