#include "interp/random_inputs.h"

#include <algorithm>
#include <set>

#include "gtest/gtest.h"
#include "interp/testing.h"

namespace hloverlap::interp {
namespace {

using testing::Doubles;
using testing::Ints;
using testing::Parse;

TEST(RandomInputs, FloatScaleByAPowerOfTwoIsExact) {
  for (PrimitiveType t :
       {PrimitiveType::kF32, PrimitiveType::kBF16, PrimitiveType::kF64}) {
    absl::StatusOr<Value> one = RandomArray(t, {512}, 7);
    absl::StatusOr<Value> small = RandomArray(t, {512}, 7, 1.0 / 64);
    ASSERT_TRUE(one.ok() && small.ok());
    std::vector<double> a = Doubles(*one), b = Doubles(*small);
    for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i] / 64, b[i]) << i;
  }
  // Integers are not scaled.
  absl::StatusOr<Value> i1 = RandomArray(PrimitiveType::kS32, {16}, 3);
  absl::StatusOr<Value> i2 = RandomArray(PrimitiveType::kS32, {16}, 3, 0.5);
  ASSERT_TRUE(i1.ok() && i2.ok());
  EXPECT_EQ(Ints(*i1), Ints(*i2));
}

TEST(RandomInputs, DistributionsPerType) {
  absl::StatusOr<Value> f = RandomArray(PrimitiveType::kF32, {4096}, 1);
  ASSERT_TRUE(f.ok());
  double lo = 1, hi = -1;
  for (double v : Doubles(*f)) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  EXPECT_GE(lo, -1.0);
  EXPECT_LT(hi, 1.0);
  EXPECT_LT(lo, -0.9);
  EXPECT_GT(hi, 0.9);
  absl::StatusOr<Value> b = RandomArray(PrimitiveType::kBF16, {256}, 1);
  ASSERT_TRUE(b.ok());
  for (double v : Doubles(*b)) {
    EXPECT_GE(v, -1.0);
    EXPECT_LE(v, 1.0);  // rounding to bf16 may reach 1.0
  }
  std::set<int64_t> scalars;
  for (uint64_t s = 0; s < 64; ++s) {
    absl::StatusOr<Value> i = RandomArray(PrimitiveType::kS32, {}, s);
    ASSERT_TRUE(i.ok());
    scalars.insert(i->GetInt(0));
  }
  EXPECT_EQ(scalars, (std::set<int64_t>{0, 1, 2, 3}));
  absl::StatusOr<Value> ia = RandomArray(PrimitiveType::kS8, {1000}, 3);
  ASSERT_TRUE(ia.ok());
  std::vector<int64_t> ints = Ints(*ia);
  std::set<int64_t> vals(ints.begin(), ints.end());
  EXPECT_EQ(*vals.begin(), -8);
  EXPECT_EQ(*vals.rbegin(), 7);
  absl::StatusOr<Value> ua = RandomArray(PrimitiveType::kU16, {1000}, 3);
  ASSERT_TRUE(ua.ok());
  std::vector<int64_t> uints = Ints(*ua);
  EXPECT_EQ(*std::min_element(uints.begin(), uints.end()), 0);
  EXPECT_EQ(*std::max_element(uints.begin(), uints.end()), 15);
  absl::StatusOr<Value> p = RandomArray(PrimitiveType::kPred, {1000}, 3);
  ASSERT_TRUE(p.ok());
  int64_t ones = 0;
  for (int64_t v : Ints(*p)) ones += v;
  EXPECT_GT(ones, 400);
  EXPECT_LT(ones, 600);
}

TEST(RandomInputs, DeterministicAndPerDeviceUnlessReplicated) {
  auto m = Parse(R"(HloModule m, num_partitions=2

ENTRY main {
  a = f32[8] parameter(0), sharding={devices=[2]<=[2]}
  b = f32[8] parameter(1), sharding={replicated}
  c = (s32[], f32[2]) parameter(2)
  ROOT t = (f32[8], f32[8], (s32[], f32[2])) tuple(a, b, c)
}
)");
  ASSERT_NE(m, nullptr);
  absl::StatusOr<std::vector<std::vector<Value>>> x =
      MakeRandomInputs(*m, 2, {.seed = 5});
  absl::StatusOr<std::vector<std::vector<Value>>> y =
      MakeRandomInputs(*m, 2, {.seed = 5});
  absl::StatusOr<std::vector<std::vector<Value>>> z =
      MakeRandomInputs(*m, 2, {.seed = 6});
  ASSERT_TRUE(x.ok() && y.ok() && z.ok());
  for (int d = 0; d < 2; ++d) {
    for (int p = 0; p < 3; ++p) {
      EXPECT_EQ(Fnv1a64((*x)[d][p]), Fnv1a64((*y)[d][p]));
      EXPECT_NE(Fnv1a64((*x)[d][p]), Fnv1a64((*z)[d][p]));
    }
  }
  EXPECT_NE(Fnv1a64((*x)[0][0]), Fnv1a64((*x)[1][0]));
  EXPECT_EQ(Fnv1a64((*x)[0][1]), Fnv1a64((*x)[1][1]));
  EXPECT_EQ((*x)[0][2].ShapeString(), "(s32[], f32[2])");
  absl::StatusOr<std::vector<std::vector<Value>>> same =
      MakeRandomInputs(*m, 2, {.seed = 5, .same_on_all_devices = true});
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(Fnv1a64((*same)[0][0]), Fnv1a64((*same)[1][0]));
}

TEST(RandomInputs, ReplicatedShardingDetection) {
  EXPECT_TRUE(IsReplicatedSharding("{replicated}"));
  EXPECT_TRUE(IsReplicatedSharding("{mesh[], replicated}"));
  EXPECT_TRUE(IsReplicatedSharding("{mesh['x'=2], [{}, {}, {}]}"));
  EXPECT_FALSE(IsReplicatedSharding("{mesh['x'=2], [{}, {'x'}, {}]}"));
  EXPECT_FALSE(IsReplicatedSharding("{devices=[2,1]<=[2]}"));
  EXPECT_FALSE(IsReplicatedSharding(""));
}

}  // namespace
}  // namespace hloverlap::interp
