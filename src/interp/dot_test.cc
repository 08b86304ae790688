#include "interp/dot.h"

#include <chrono>
#include <cstdio>
#include <random>

#include "gtest/gtest.h"
#include "interp/shape_ops.h"
#include "interp/testing.h"

namespace hloverlap::interp {
namespace {

using testing::Bf16;
using testing::Doubles;
using testing::F32;
using testing::Raw;
using testing::S32;

DotDimensionNumbers Dn(DimensionVector lb, DimensionVector lc,
                       DimensionVector rb, DimensionVector rc) {
  DotDimensionNumbers d;
  d.lhs_batch_dims = lb;
  d.lhs_contracting_dims = lc;
  d.rhs_batch_dims = rb;
  d.rhs_contracting_dims = rc;
  return d;
}

std::vector<float> RandomFloats(int64_t n, uint32_t seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = u(g);
  return v;
}

TEST(Dot, MatrixTimesMatrix) {
  Value a = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  Value b = F32({3, 2}, {7, 8, 9, 10, 11, 12});
  absl::StatusOr<Value> c =
      Dot(a, b, Dn({}, {1}, {}, {0}), PrimitiveType::kF32);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->dims(), (Dims{2, 2}));
  EXPECT_EQ(Doubles(*c), (std::vector<double>{58, 64, 139, 154}));
}

TEST(Dot, BatchDimsAndOutputOrder) {
  // lhs [k=2, b=2, m=1], rhs [b=2, n=3, k=2]: out [b, m, n].
  Value a = F32({2, 2, 1}, {1, 2, 3, 4});  // a[k][b][0]
  Value b = F32({2, 3, 2}, {1, 0, 0, 1, 1, 1, 2, 0, 0, 2, 2, 2});
  absl::StatusOr<Value> c =
      Dot(a, b, Dn({1}, {0}, {0}, {2}), PrimitiveType::kF32);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->dims(), (Dims{2, 1, 3}));
  // batch 0: lhs k-vector (1,3); rhs rows (1,0),(0,1),(1,1) -> 1,3,4
  // batch 1: lhs (2,4); rhs (2,0),(0,2),(2,2) -> 4,8,12
  EXPECT_EQ(Doubles(*c), (std::vector<double>{1, 3, 4, 4, 8, 12}));
}

TEST(Dot, Bf16InputsAccumulateInF32AndRoundAtTheEnd) {
  // 256 terms of (1 * 2^-9) + 1: in bf16 every partial sum would stay 1.0;
  // in f32 the sum is 1.5, exactly representable in bf16.
  std::vector<float> lhs(257, 1.0f), rhs(257, std::ldexp(1.0f, -9));
  rhs[0] = 1.0f;
  Value a = Bf16({1, 257}, lhs);
  Value b = Bf16({257, 1}, rhs);
  absl::StatusOr<Value> c =
      Dot(a, b, Dn({}, {1}, {}, {0}), PrimitiveType::kBF16);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(Raw<bf16_t>(*c)[0].v, F32ToBf16(1.5f));
  absl::StatusOr<Value> f =
      Dot(a, b, Dn({}, {1}, {}, {0}), PrimitiveType::kF32);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->GetDouble(0), 1.5);
}

// Every element is the sequential f32 sum over k: compare against a naive
// loop bit for bit, for sizes that exercise every edge of the blocking.
TEST(Dot, MatchesSequentialSumBitForBit) {
  for (auto [m, n, k] : std::vector<std::tuple<int, int, int>>{{1, 1, 1},
                                                               {7, 9, 300},
                                                               {13, 17, 513},
                                                               {6, 8, 256},
                                                               {1, 600, 5},
                                                               {25, 3, 1000}}) {
    std::vector<float> av = RandomFloats(m * k, 1), bv = RandomFloats(k * n, 2);
    Value a = F32({m, k}, av), b = F32({k, n}, bv);
    absl::StatusOr<Value> c =
        Dot(a, b, Dn({}, {1}, {}, {0}), PrimitiveType::kF32);
    ASSERT_TRUE(c.ok());
    const float* got = c->data<float>();
    for (int i = 0; i < m; ++i) {
      for (int j = 0; j < n; ++j) {
        float acc = 0.0f;
        for (int kk = 0; kk < k; ++kk) {
          float p = av[i * k + kk] * bv[kk * n + j];
          acc = acc + p;
        }
        ASSERT_EQ(got[i * n + j], acc)
            << m << "x" << n << "x" << k << " at " << i << "," << j;
      }
    }
  }
}

// Swapping the operands (and transposing the result) or changing the
// layout of an operand does not change a single bit.
TEST(Dot, ResultIndependentOfOperandOrderAndLayout) {
  const int m = 19, n = 23, k = 700;
  Value a = F32({m, k}, RandomFloats(m * k, 3));
  Value b = F32({k, n}, RandomFloats(k * n, 4));
  absl::StatusOr<Value> ab =
      Dot(a, b, Dn({}, {1}, {}, {0}), PrimitiveType::kF32);
  absl::StatusOr<Value> ba =
      Dot(b, a, Dn({}, {0}, {}, {1}), PrimitiveType::kF32);
  ASSERT_TRUE(ab.ok() && ba.ok());
  absl::StatusOr<Value> ba_t = Transpose(*ba, {1, 0});
  ASSERT_TRUE(ba_t.ok());
  EXPECT_EQ(Raw<float>(*ab), Raw<float>(*ba_t));
  absl::StatusOr<Value> bt = Transpose(b, {1, 0});  // [n, k]
  ASSERT_TRUE(bt.ok());
  absl::StatusOr<Value> abt =
      Dot(a, *bt, Dn({}, {1}, {}, {1}), PrimitiveType::kF32);
  ASSERT_TRUE(abt.ok());
  EXPECT_EQ(Raw<float>(*ab), Raw<float>(*abt));
  // Splitting M (a batch of two halves) does not change anything either.
  absl::StatusOr<Value> top =
      Slice(a, std::vector<SliceRange>{{0, 9, 1}, {0, k, 1}});
  ASSERT_TRUE(top.ok());
  absl::StatusOr<Value> c_top =
      Dot(*top, b, Dn({}, {1}, {}, {0}), PrimitiveType::kF32);
  ASSERT_TRUE(c_top.ok());
  std::vector<float> full = Raw<float>(*ab);
  std::vector<float> part = Raw<float>(*c_top);
  EXPECT_EQ(part, std::vector<float>(full.begin(), full.begin() + 9 * n));
}

TEST(Dot, MultipleContractingDimsFlattenInListedOrder) {
  // lhs [2,2] contracting {1,0}; rhs [2,2,1] contracting {0,1}:
  // pairs (lhs[j][i], rhs[i][j]) summed in order i major.
  Value a = F32({2, 2}, {1, 2, 3, 4});
  Value b = F32({2, 2, 1}, {10, 20, 30, 40});
  absl::StatusOr<Value> c =
      Dot(a, b, Dn({}, {1, 0}, {}, {0, 1}), PrimitiveType::kF32);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->dims(), (Dims{1}));
  // i=0,j=0: a[0][0]*b[0][0]=10; i=0,j=1: a[1][0]*b[0][1]=3*20;
  // i=1,j=0: a[0][1]*b[1][0]=2*30; i=1,j=1: a[1][1]*b[1][1]=4*40.
  EXPECT_EQ(Doubles(*c), (std::vector<double>{10 + 60 + 60 + 160}));
}

TEST(Dot, IntegerWraps) {
  Value a = S32({1, 2}, {0x40000000, 0x40000000});
  Value b = S32({2, 1}, {2, 2});
  absl::StatusOr<Value> c =
      Dot(a, b, Dn({}, {1}, {}, {0}), PrimitiveType::kS32);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->GetInt(0), 0);
}

TEST(Dot, BadDimensionNumbers) {
  Value a = F32({2, 3}, std::vector<float>(6, 1));
  EXPECT_FALSE(Dot(a, a, Dn({}, {1}, {}, {1, 0}), PrimitiveType::kF32).ok());
  EXPECT_FALSE(Dot(a, a, Dn({}, {1}, {}, {0}), PrimitiveType::kF32).ok());
  EXPECT_FALSE(Dot(a, a, Dn({}, {5}, {}, {1}), PrimitiveType::kF32).ok());
}

// Reports the f32 GEMM speed (single thread). Set HLOVERLAP_DOT_MIN_GFLOPS
// to turn it into an assertion.
TEST(Dot, Throughput) {
  const int m = 256, n = 1024, k = 512;
  std::vector<float> a = RandomFloats(m * k, 5), b = RandomFloats(k * n, 6);
  std::vector<float> c(m * n);
  GemmF32(m, n, k, a.data(), b.data(), c.data());
  int iters = 0;
  auto t0 = std::chrono::steady_clock::now();
  double secs = 0;
  do {
    GemmF32(m, n, k, a.data(), b.data(), c.data());
    ++iters;
    secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
               .count();
  } while (secs < 0.5);
  double gflops = 2.0 * m * n * k * iters / secs / 1e9;
  std::printf("f32 GEMM %dx%dx%d: %.1f GFLOP/s\n", m, n, k, gflops);
  if (const char* min = std::getenv("HLOVERLAP_DOT_MIN_GFLOPS")) {
    EXPECT_GE(gflops, std::atof(min));
  }
}

}  // namespace
}  // namespace hloverlap::interp
