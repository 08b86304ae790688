#include "interp/compare.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"
#include "interp/testing.h"

namespace hloverlap::interp {
namespace {

using testing::Bf16;
using testing::F32;
using testing::S32;

TEST(Compare, BitIdentityAndFirstDifference) {
  Value a = F32({2, 2}, {1, 2, 3, 4});
  ValueComparison same = CompareValues(a, F32({2, 2}, {1, 2, 3, 4}), {});
  EXPECT_TRUE(same.bit_identical && same.within_tolerance);
  ValueComparison diff =
      CompareValues(Value::Tuple({a, a}),
                    Value::Tuple({a, F32({2, 2}, {1, 2, 3.5f, 4})}), {});
  EXPECT_FALSE(diff.bit_identical);
  EXPECT_FALSE(diff.within_tolerance);
  EXPECT_EQ(diff.differing_elements, 1);
  ASSERT_TRUE(diff.first_difference.has_value());
  EXPECT_EQ(*diff.first_difference,
            "output {1} (f32[2,2]) index 2 [1,0]: 3 (bits 0x40400000) vs 3.5 "
            "(bits 0x40600000)");
  ValueComparison shape = CompareValues(a, F32({4}, {1, 2, 3, 4}), {});
  EXPECT_FALSE(shape.bit_identical);
  EXPECT_NE(shape.first_difference->find("shapes differ"), std::string::npos);
}

TEST(Compare, Tolerances) {
  float one_up = std::nextafter(1.0f, 2.0f);
  Value a = F32({3}, {1.0f, 0.0f, std::numeric_limits<float>::quiet_NaN()});
  Value b = F32({3}, {one_up, -0.0f, std::numeric_limits<float>::quiet_NaN()});
  absl::StatusOr<Tolerance> ulps = ParseTolerance("ulps:1");
  ASSERT_TRUE(ulps.ok());
  ValueComparison c = CompareValues(a, b, *ulps);
  EXPECT_FALSE(c.bit_identical);
  EXPECT_TRUE(c.within_tolerance);
  EXPECT_EQ(c.max_ulps, 1);
  EXPECT_EQ(c.differing_elements, 2);  // 1 vs 1+ulp, +0 vs -0
  absl::StatusOr<Tolerance> zero = ParseTolerance("ulps:0");
  ASSERT_TRUE(zero.ok());
  EXPECT_FALSE(CompareValues(a, b, *zero).within_tolerance);
  absl::StatusOr<Tolerance> rel = ParseTolerance("relative=1e-6");
  ASSERT_TRUE(rel.ok());
  EXPECT_TRUE(CompareValues(a, b, *rel).within_tolerance);
  // Integers must match exactly whatever the tolerance.
  EXPECT_FALSE(
      CompareValues(S32({1}, {1}), S32({1}, {2}), *rel).within_tolerance);
  // bf16 ulps count bf16 steps.
  Value x = Bf16({1}, {1.0f}), y = Bf16({1}, {1.0078125f});
  EXPECT_EQ(CompareValues(x, y, *ulps).max_ulps, 1);
  EXPECT_EQ(UlpDistance(PrimitiveType::kF32, 1.0, one_up), 1);
  EXPECT_FALSE(ParseTolerance("ulps").ok());
  EXPECT_FALSE(ParseTolerance("bogus:1").ok());
  EXPECT_FALSE(ParseTolerance("ulps:-1").ok());
  EXPECT_EQ(ParseTolerance("exact")->kind, Tolerance::Kind::kExact);
}

TEST(Compare, AbsoluteFloor) {
  // 1e-9 vs 3e-9 is 67% apart relative, but 2e-9 absolute.
  Value a = F32({2}, {1.0f, 1e-9f}), b = F32({2}, {1.001f, 3e-9f});
  absl::StatusOr<Tolerance> rel = ParseTolerance("relative:0.01");
  ASSERT_TRUE(rel.ok());
  EXPECT_FALSE(CompareValues(a, b, *rel).within_tolerance);
  absl::StatusOr<Tolerance> floor =
      ParseTolerance("relative:0.01,absolute:1e-8");
  ASSERT_TRUE(floor.ok()) << floor.status();
  EXPECT_TRUE(CompareValues(a, b, *floor).within_tolerance);
  EXPECT_EQ(floor->ToString(), "relative:0.01,absolute:1e-08");
  // The floor alone does not accept the large-value difference.
  absl::StatusOr<Tolerance> tight = ParseTolerance("ulps:0,abs=1e-8");
  ASSERT_TRUE(tight.ok());
  EXPECT_FALSE(CompareValues(a, b, *tight).within_tolerance);
  EXPECT_FALSE(ParseTolerance("exact,absolute:1").ok());
  EXPECT_FALSE(ParseTolerance("relative:0.1,bogus:1").ok());
  EXPECT_FALSE(ParseTolerance("relative:0.1,absolute:-1").ok());
}

}  // namespace
}  // namespace hloverlap::interp
