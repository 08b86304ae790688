#include "interp/elementwise.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"
#include "interp/testing.h"

namespace hloverlap::interp {
namespace {

using testing::Bf16;
using testing::Doubles;
using testing::F32;
using testing::Ints;
using testing::Raw;
using testing::S32;
using testing::V;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

Value Conv(const Value& v, PrimitiveType t) {
  absl::StatusOr<Value> r = Convert(v, t);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : Value();
}

TEST(Convert, F32ToBf16RoundsTiesToEven) {
  Value x =
      F32({4}, {1.0f + std::ldexp(1.0f, -8), 1.0f + 3 * std::ldexp(1.0f, -8),
                -(1.0f + std::ldexp(1.0f, -8)), 3.0e38f});
  Value b = Conv(x, PrimitiveType::kBF16);
  std::vector<bf16_t> raw = Raw<bf16_t>(b);
  EXPECT_EQ(raw[0].v, 0x3f80);
  EXPECT_EQ(raw[1].v, 0x3f82);
  EXPECT_EQ(raw[2].v, 0xbf80);
  EXPECT_EQ(raw[3].v, 0x7f62);  // 3e38 is representable-ish, no overflow
}

TEST(Convert, F64ToBf16GoesThroughF32) {
  // 1 + 2^-8 + 2^-30: as f64 it is above the bf16 tie, but rounding to f32
  // first lands exactly on the tie, which rounds to even (1.0), as XLA does.
  double d = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30);
  Value x = V<double>(PrimitiveType::kF64, {1}, {d});
  EXPECT_EQ(Raw<bf16_t>(Conv(x, PrimitiveType::kBF16))[0].v, 0x3f80);
}

TEST(Convert, FloatToIntSaturatesAndMapsNaNToZero) {
  Value x = F32({8}, {kNaN, 3e9f, -3e9f, -1.7f, 2.9f, kInf, -kInf, -0.0f});
  EXPECT_EQ(Ints(Conv(x, PrimitiveType::kS32)),
            (std::vector<int64_t>{0, 2147483647, -2147483648LL, -1, 2,
                                  2147483647, -2147483648LL, 0}));
  EXPECT_EQ(Ints(Conv(x, PrimitiveType::kU8)),
            (std::vector<int64_t>{0, 255, 0, 0, 2, 255, 0, 0}));
  EXPECT_EQ(Ints(Conv(x, PrimitiveType::kS8)),
            (std::vector<int64_t>{0, 127, -128, -1, 2, 127, -128, 0}));
  Value big = F32({2}, {1e19f, -1e19f});
  EXPECT_EQ(Ints(Conv(big, PrimitiveType::kS64)),
            (std::vector<int64_t>{std::numeric_limits<int64_t>::max(),
                                  std::numeric_limits<int64_t>::min()}));
  Value u = Conv(F32({2}, {1e20f, -1e19f}), PrimitiveType::kU64);
  EXPECT_EQ(Raw<uint64_t>(u)[0], std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(Raw<uint64_t>(u)[1], 0u);
  // bf16 source too.
  Value b = Bf16({2}, {300.0f, -300.0f});
  EXPECT_EQ(Ints(Conv(b, PrimitiveType::kS8)),
            (std::vector<int64_t>{127, -128}));
}

TEST(Convert, IntToIntWrapsAndPred) {
  Value x = S32({4}, {300, -1, 0, 7});
  EXPECT_EQ(Ints(Conv(x, PrimitiveType::kS8)),
            (std::vector<int64_t>{44, -1, 0, 7}));
  EXPECT_EQ(Ints(Conv(x, PrimitiveType::kU16)),
            (std::vector<int64_t>{300, 65535, 0, 7}));
  EXPECT_EQ(Ints(Conv(x, PrimitiveType::kPred)),
            (std::vector<int64_t>{1, 1, 0, 1}));
  Value f = F32({4}, {0.0f, -0.0f, kNaN, 0.5f});
  EXPECT_EQ(Ints(Conv(f, PrimitiveType::kPred)),
            (std::vector<int64_t>{0, 0, 1, 1}));
  Value p = Conv(Conv(x, PrimitiveType::kPred), PrimitiveType::kF32);
  EXPECT_EQ(Doubles(p), (std::vector<double>{1, 1, 0, 1}));
  // int -> f32 rounds to nearest even: 2^24 + 1 -> 2^24.
  Value big = S32({1}, {(1 << 24) + 1});
  EXPECT_EQ(Doubles(Conv(big, PrimitiveType::kF32))[0], 16777216.0);
}

Value Bin(Opcode op, const Value& a, const Value& b) {
  absl::StatusOr<Value> r = Binary(op, a, b);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : Value();
}

TEST(Binary, IntegerDivisionAndRemainderEdgeCases) {
  const int32_t kMin = std::numeric_limits<int32_t>::min();
  Value a = S32({5}, {7, -7, 5, kMin, kMin});
  Value b = S32({5}, {-2, 2, 0, -1, 0});
  EXPECT_EQ(Ints(Bin(Opcode::kDivide, a, b)),
            (std::vector<int64_t>{-3, -3, -1, kMin, -1}));
  EXPECT_EQ(Ints(Bin(Opcode::kRemainder, a, b)),
            (std::vector<int64_t>{1, -1, 5, 0, kMin}));
  Value ua = V<uint32_t>(PrimitiveType::kU32, {2}, {7, 9});
  Value ub = V<uint32_t>(PrimitiveType::kU32, {2}, {0, 2});
  EXPECT_EQ(Raw<uint32_t>(Bin(Opcode::kDivide, ua, ub)),
            (std::vector<uint32_t>{0xffffffffu, 4}));
}

TEST(Binary, WrappingArithmeticAndShifts) {
  const int32_t kMax = std::numeric_limits<int32_t>::max();
  EXPECT_EQ(Ints(Bin(Opcode::kAdd, S32({1}, {kMax}), S32({1}, {1}))),
            (std::vector<int64_t>{std::numeric_limits<int32_t>::min()}));
  Value u16 = V<uint16_t>(PrimitiveType::kU16, {1}, {65535});
  EXPECT_EQ(Raw<uint16_t>(Bin(Opcode::kMultiply, u16, u16))[0], 1);
  Value x = S32({6}, {1, 1, -8, -8, -1, 5});
  Value s = S32({6}, {31, 32, 1, 1, 40, -1});
  EXPECT_EQ(Ints(Bin(Opcode::kShiftLeft, x, s)),
            (std::vector<int64_t>{std::numeric_limits<int32_t>::min(), 0, -16,
                                  -16, 0, 0}));
  EXPECT_EQ(Ints(Bin(Opcode::kShiftRightArithmetic, x, s)),
            (std::vector<int64_t>{0, 0, -4, -4, -1, 0}));
  EXPECT_EQ(Ints(Bin(Opcode::kShiftRightLogical, x, s)),
            (std::vector<int64_t>{0, 0, 0x7ffffffc, 0x7ffffffc, 0, 0}));
  EXPECT_EQ(Ints(Bin(Opcode::kPower, S32({4}, {2, -1, 2, 1}),
                     S32({4}, {10, 3, -1, -5}))),
            (std::vector<int64_t>{1024, -1, 0, 1}));
}

TEST(Binary, FloatMaxMinPropagateNaN) {
  Value a = F32({3}, {kNaN, 1.0f, 2.0f});
  Value b = F32({3}, {1.0f, kNaN, -3.0f});
  std::vector<double> mx = Doubles(Bin(Opcode::kMaximum, a, b));
  EXPECT_TRUE(std::isnan(mx[0]));
  EXPECT_TRUE(std::isnan(mx[1]));
  EXPECT_EQ(mx[2], 2.0);
  std::vector<double> mn = Doubles(Bin(Opcode::kMinimum, a, b));
  EXPECT_TRUE(std::isnan(mn[0]) && std::isnan(mn[1]));
  EXPECT_EQ(mn[2], -3.0);
}

TEST(Binary, Bf16ArithmeticRoundsEachResult) {
  // 1 + 2^-8 is a tie in bf16: the sum rounds to 1.0.
  Value a = Bf16({1}, {1.0f});
  Value b = Bf16({1}, {std::ldexp(1.0f, -8)});
  EXPECT_EQ(Raw<bf16_t>(Bin(Opcode::kAdd, a, b))[0].v, 0x3f80);
  Value c = Bf16({1}, {1.0078125f});
  EXPECT_EQ(Raw<bf16_t>(Bin(Opcode::kAdd, c, b))[0].v, 0x3f82);
}

TEST(Binary, ScalarOperandBroadcastsAndErrors) {
  EXPECT_EQ(Doubles(Bin(Opcode::kMultiply, F32({3}, {1, 2, 3}), F32({}, {2}))),
            (std::vector<double>{2, 4, 6}));
  EXPECT_EQ(Doubles(Bin(Opcode::kSubtract, F32({}, {10}), F32({2}, {1, 2}))),
            (std::vector<double>{9, 8}));
  EXPECT_FALSE(
      Binary(Opcode::kAdd, F32({2}, {1, 2}), F32({3}, {1, 2, 3})).ok());
  EXPECT_FALSE(Binary(Opcode::kAnd, F32({1}, {1}), F32({1}, {1})).ok());
  EXPECT_FALSE(Binary(Opcode::kAdd, F32({1}, {1}), S32({1}, {1})).ok());
}

TEST(Binary, PredOps) {
  Value t = V<pred_t>(PrimitiveType::kPred, {4}, {{1}, {1}, {0}, {0}});
  Value u = V<pred_t>(PrimitiveType::kPred, {4}, {{1}, {0}, {1}, {0}});
  EXPECT_EQ(Ints(Bin(Opcode::kAnd, t, u)), (std::vector<int64_t>{1, 0, 0, 0}));
  EXPECT_EQ(Ints(Bin(Opcode::kOr, t, u)), (std::vector<int64_t>{1, 1, 1, 0}));
  EXPECT_EQ(Ints(Bin(Opcode::kXor, t, u)), (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(Ints(Bin(Opcode::kAdd, t, u)), (std::vector<int64_t>{1, 1, 1, 0}));
}

TEST(Unary, TranscendentalsAndSpecials) {
  auto un = [](Opcode op, const Value& v) {
    absl::StatusOr<Value> r = Unary(op, v);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? Doubles(*r) : std::vector<double>{};
  };
  EXPECT_EQ(un(Opcode::kRsqrt, F32({2}, {4.0f, 0.25f})),
            (std::vector<double>{0.5, 2.0}));
  EXPECT_EQ(un(Opcode::kExponential, F32({1}, {0.0f})),
            (std::vector<double>{1.0}));
  EXPECT_EQ(un(Opcode::kTanh, F32({1}, {0.0f})), (std::vector<double>{0.0}));
  EXPECT_EQ(un(Opcode::kSign, F32({3}, {-2.0f, 0.0f, 3.0f})),
            (std::vector<double>{-1, 0, 1}));
  EXPECT_EQ(un(Opcode::kRoundNearestEven, F32({3}, {0.5f, 1.5f, -2.5f})),
            (std::vector<double>{0, 2, -2}));
  EXPECT_EQ(un(Opcode::kRoundNearestAfz, F32({3}, {0.5f, 1.5f, -2.5f})),
            (std::vector<double>{1, 2, -3}));
  EXPECT_EQ(
      un(Opcode::kNegate, S32({1}, {std::numeric_limits<int32_t>::min()})),
      (std::vector<double>{-2147483648.0}));
  EXPECT_EQ(un(Opcode::kAbs, S32({1}, {std::numeric_limits<int32_t>::min()})),
            (std::vector<double>{-2147483648.0}));
  EXPECT_EQ(un(Opcode::kPopcnt, S32({1}, {-1})), (std::vector<double>{32}));
  EXPECT_EQ(un(Opcode::kCountLeadingZeros, S32({2}, {1, 0})),
            (std::vector<double>{31, 32}));
  EXPECT_EQ(un(Opcode::kIsFinite, F32({3}, {1.0f, kInf, kNaN})),
            (std::vector<double>{1, 0, 0}));
  // bf16 exp computes in f32 and rounds.
  absl::StatusOr<Value> e = Unary(Opcode::kExponential, Bf16({1}, {1.0f}));
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(Raw<bf16_t>(*e)[0].v, F32ToBf16(std::exp(1.0f)));
  EXPECT_FALSE(Unary(Opcode::kExponential, S32({1}, {1})).ok());
}

TEST(Compare, DirectionsAndTotalOrder) {
  Value a = F32({4}, {-0.0f, kNaN, 1.0f, 2.0f});
  Value b = F32({4}, {0.0f, kNaN, 1.0f, 1.0f});
  auto cmp = [&](ComparisonDirection d, std::string_view type) {
    absl::StatusOr<Value> r = Compare(d, type, a, b);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? Ints(*r) : std::vector<int64_t>{};
  };
  EXPECT_EQ(cmp(ComparisonDirection::kEq, ""),
            (std::vector<int64_t>{1, 0, 1, 0}));
  EXPECT_EQ(cmp(ComparisonDirection::kNe, ""),
            (std::vector<int64_t>{0, 1, 0, 1}));
  EXPECT_EQ(cmp(ComparisonDirection::kLt, "TOTALORDER"),
            (std::vector<int64_t>{1, 0, 0, 0}));
  EXPECT_EQ(cmp(ComparisonDirection::kEq, "TOTALORDER"),
            (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(cmp(ComparisonDirection::kGe, ""),
            (std::vector<int64_t>{1, 0, 1, 1}));
  absl::StatusOr<Value> u =
      Compare(ComparisonDirection::kLt, "UNSIGNED",
              V<uint32_t>(PrimitiveType::kU32, {1}, {0xffffffffu}),
              V<uint32_t>(PrimitiveType::kU32, {1}, {1}));
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(Ints(*u), (std::vector<int64_t>{0}));
}

TEST(SelectClamp, Basics) {
  Value p = V<pred_t>(PrimitiveType::kPred, {3}, {{1}, {0}, {1}});
  absl::StatusOr<Value> s =
      Select(p, F32({3}, {1, 2, 3}), F32({3}, {-1, -2, -3}));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(Doubles(*s), (std::vector<double>{1, -2, 3}));
  absl::StatusOr<Value> s2 = Select(p, F32({}, {5}), F32({3}, {-1, -2, -3}));
  ASSERT_TRUE(s2.ok());
  EXPECT_EQ(Doubles(*s2), (std::vector<double>{5, -2, 5}));
  absl::StatusOr<Value> c =
      Clamp(F32({}, {0}), F32({4}, {-1, 0.5f, 2, kNaN}), F32({}, {1}));
  ASSERT_TRUE(c.ok());
  std::vector<double> cv = Doubles(*c);
  EXPECT_EQ(cv[0], 0);
  EXPECT_EQ(cv[1], 0.5);
  EXPECT_EQ(cv[2], 1);
  EXPECT_TRUE(std::isnan(cv[3]));
}

TEST(BitcastConvert, ReinterpretsBytes) {
  absl::StatusOr<Value> r =
      BitcastConvert(F32({1}, {1.0f}), PrimitiveType::kU32, {1});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Raw<uint32_t>(*r)[0], 0x3f800000u);
  absl::StatusOr<Value> r2 =
      BitcastConvert(F32({1}, {1.0f}), PrimitiveType::kU16, {1, 2});
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(Raw<uint16_t>(*r2), (std::vector<uint16_t>{0x0000, 0x3f80}));
  EXPECT_FALSE(BitcastConvert(F32({1}, {1.0f}), PrimitiveType::kU16, {1}).ok());
}

TEST(Combine, SequentialOrderIsFixed) {
  // ((0 + 1e8) + 1) + -1e8 = 0 in f32; any other order may differ.
  Value acc = F32({}, {0});
  Value x = F32({3}, {1e8f, 1.0f, -1e8f});
  absl::StatusOr<Value> a = Value::Zeros(PrimitiveType::kF32, {});
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(CombineSequential(Opcode::kAdd, PrimitiveType::kF32,
                                a->mutable_raw(), x.raw(), 3)
                  .ok());
  EXPECT_EQ(a->GetDouble(0), 0.0);
  EXPECT_FALSE(CombineSequential(Opcode::kAnd, PrimitiveType::kF32,
                                 a->mutable_raw(), x.raw(), 3)
                   .ok());
}

}  // namespace
}  // namespace hloverlap::interp
