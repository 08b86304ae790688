#include "interp/shape_ops.h"

#include "gtest/gtest.h"
#include "interp/testing.h"

namespace hloverlap::interp {
namespace {

using testing::Doubles;
using testing::F32;
using testing::S32;

std::vector<float> Seq(int n) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = static_cast<float>(i);
  return v;
}

std::vector<double> D(const absl::StatusOr<Value>& v) {
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? Doubles(*v) : std::vector<double>{};
}

TEST(ShapeOps, Broadcast) {
  Value x = F32({2}, {1, 2});
  absl::StatusOr<Value> b = Broadcast(x, {2, 3}, {0});
  EXPECT_EQ(D(b), (std::vector<double>{1, 1, 1, 2, 2, 2}));
  EXPECT_EQ(D(Broadcast(x, {3, 2}, {1})),
            (std::vector<double>{1, 2, 1, 2, 1, 2}));
  EXPECT_EQ(D(Broadcast(F32({}, {7}), {2, 2}, {})),
            (std::vector<double>{7, 7, 7, 7}));
  EXPECT_FALSE(Broadcast(x, {3, 3}, {0}).ok());
  EXPECT_FALSE(Broadcast(x, {2, 3}, {}).ok());
}

TEST(ShapeOps, ReshapeSharesTheBuffer) {
  Value x = F32({2, 3}, Seq(6));
  absl::StatusOr<Value> r = Reshape(x, {3, 2});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->raw(), x.raw());
  EXPECT_EQ(r->dims(), (Dims{3, 2}));
  EXPECT_FALSE(Reshape(x, {4}).ok());
}

TEST(ShapeOps, Transpose) {
  Value x = F32({2, 3}, Seq(6));
  EXPECT_EQ(D(Transpose(x, {1, 0})), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  Value y = F32({2, 3, 4}, Seq(24));
  absl::StatusOr<Value> t = Transpose(y, {2, 0, 1});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->dims(), (Dims{4, 2, 3}));
  // out[k][i][j] = y[i][j][k] = 12i + 4j + k
  std::vector<double> got = Doubles(*t);
  for (int k = 0; k < 4; ++k) {
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 3; ++j) {
        EXPECT_EQ(got[k * 6 + i * 3 + j], 12 * i + 4 * j + k);
      }
    }
  }
  EXPECT_FALSE(Transpose(x, {0, 0}).ok());
}

TEST(ShapeOps, SliceWithStrides) {
  Value x = F32({3, 5}, Seq(15));
  std::vector<SliceRange> r = {{0, 3, 2}, {1, 5, 3}};
  absl::StatusOr<Value> s = Slice(x, r);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->dims(), (Dims{2, 2}));
  EXPECT_EQ(Doubles(*s), (std::vector<double>{1, 4, 11, 14}));
  std::vector<SliceRange> bad = {{0, 4, 1}, {0, 5, 1}};
  EXPECT_FALSE(Slice(x, bad).ok());
}

TEST(ShapeOps, DynamicSliceClampsStartIndices) {
  Value x = F32({10}, Seq(10));
  EXPECT_EQ(D(DynamicSlice(x, {8}, {3})), (std::vector<double>{7, 8, 9}));
  EXPECT_EQ(D(DynamicSlice(x, {-2}, {3})), (std::vector<double>{0, 1, 2}));
  EXPECT_EQ(D(DynamicSlice(x, {4}, {3})), (std::vector<double>{4, 5, 6}));
  Value y = F32({3, 4}, Seq(12));
  EXPECT_EQ(D(DynamicSlice(y, {5, 1}, {2, 2})),
            (std::vector<double>{5, 6, 9, 10}));
  EXPECT_FALSE(DynamicSlice(x, {0}, {11}).ok());
}

TEST(ShapeOps, DynamicUpdateSliceClampsAndCopiesWhenShared) {
  Value x = F32({5}, {0, 0, 0, 0, 0});
  Value upd = F32({2}, {1, 2});
  absl::StatusOr<Value> r = DynamicUpdateSlice(x, upd, {4});
  EXPECT_EQ(D(r), (std::vector<double>{0, 0, 0, 1, 2}));
  // x is still referenced here, so it must not have been modified.
  EXPECT_EQ(Doubles(x), (std::vector<double>{0, 0, 0, 0, 0}));
  EXPECT_NE(r->raw(), x.raw());
  // A uniquely owned operand is updated in place.
  absl::StatusOr<Value> y = Value::Zeros(PrimitiveType::kF32, {4});
  ASSERT_TRUE(y.ok());
  const uint8_t* storage = y->raw();
  absl::StatusOr<Value> z = DynamicUpdateSlice(*std::move(y), upd, {-3});
  ASSERT_TRUE(z.ok());
  EXPECT_EQ(z->raw(), storage);
  EXPECT_EQ(Doubles(*z), (std::vector<double>{1, 2, 0, 0}));
  Value m = F32({2, 3}, Seq(6));
  EXPECT_EQ(D(DynamicUpdateSlice(m, F32({1, 2}, {-1, -2}), {1, 2})),
            (std::vector<double>{0, 1, 2, 3, -1, -2}));
}

TEST(ShapeOps, Concatenate) {
  Value a = F32({2, 1}, {1, 2});
  Value b = F32({2, 2}, {3, 4, 5, 6});
  std::vector<const Value*> ops = {&a, &b};
  EXPECT_EQ(D(Concatenate(ops, 1)), (std::vector<double>{1, 3, 4, 2, 5, 6}));
  Value c = F32({1, 1}, {9});
  std::vector<const Value*> ops2 = {&a, &c};
  EXPECT_EQ(D(Concatenate(ops2, 0)), (std::vector<double>{1, 2, 9}));
  EXPECT_FALSE(Concatenate(ops2, 1).ok());
}

TEST(ShapeOps, PadNegativeAndInterior) {
  Value x = F32({3}, {1, 2, 3});
  Value zero = F32({}, {0});
  // Full interior pad [1,0,2,0,3], low -1 crops the 1, high 2 appends.
  std::vector<PaddingDim> p = {{-1, 2, 1}};
  EXPECT_EQ(D(Pad(x, zero, p)), (std::vector<double>{0, 2, 0, 3, 0, 0}));
  std::vector<PaddingDim> p2 = {{2, -2, 0}};
  EXPECT_EQ(D(Pad(x, F32({}, {9}), p2)), (std::vector<double>{9, 9, 1}));
  std::vector<PaddingDim> p3 = {{-3, 1, 0}};
  EXPECT_EQ(D(Pad(x, F32({}, {9}), p3)), (std::vector<double>{9}));
  Value m = F32({2, 2}, {1, 2, 3, 4});
  std::vector<PaddingDim> pm = {{1, 0, 0}, {0, 1, 1}};
  absl::StatusOr<Value> r = Pad(m, zero, pm);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->dims(), (Dims{3, 4}));
  EXPECT_EQ(Doubles(*r),
            (std::vector<double>{0, 0, 0, 0, 1, 0, 2, 0, 3, 0, 4, 0}));
  std::vector<PaddingDim> neg = {{-5, 0, 0}};
  EXPECT_FALSE(Pad(x, zero, neg).ok());
}

TEST(ShapeOps, IotaAndReverse) {
  absl::StatusOr<Value> i = Iota(PrimitiveType::kS32, {2, 3}, 1);
  EXPECT_EQ(D(i), (std::vector<double>{0, 1, 2, 0, 1, 2}));
  absl::StatusOr<Value> j = Iota(PrimitiveType::kBF16, {3, 1}, 0);
  EXPECT_EQ(D(j), (std::vector<double>{0, 1, 2}));
  Value x = F32({2, 3}, Seq(6));
  EXPECT_EQ(D(Reverse(x, {1})), (std::vector<double>{2, 1, 0, 5, 4, 3}));
  EXPECT_EQ(D(Reverse(x, {0, 1})), (std::vector<double>{5, 4, 3, 2, 1, 0}));
}

TEST(ShapeOps, BitcastHonoursLayouts) {
  Value x = F32({2, 3}, Seq(6));
  Shape from(PrimitiveType::kF32, {2, 3});
  from.SetDefaultLayout();
  // f32[3,2]{0,1}: physically row-major [2][3] data read as column-major
  // 3x2, i.e. the transpose.
  Shape to(PrimitiveType::kF32, {3, 2});
  Layout l;
  l.minor_to_major = {0, 1};
  to.set_layout(l);
  EXPECT_EQ(D(Bitcast(x, from, to)), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  Shape plain(PrimitiveType::kF32, {6});
  absl::StatusOr<Value> r = Bitcast(x, from, plain);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->raw(), x.raw());
  Shape wrong(PrimitiveType::kF32, {5});
  EXPECT_FALSE(Bitcast(x, from, wrong).ok());
}

TEST(ShapeOps, StridedCopyMergesAndHandlesZeroStrides) {
  std::vector<int32_t> src = {1, 2, 3, 4};
  std::vector<int32_t> dst(8, 0);
  StridedCopy(reinterpret_cast<uint8_t*>(dst.data()),
              reinterpret_cast<const uint8_t*>(src.data()), 4, {2, 4}, {4, 1},
              {0, 1});
  EXPECT_EQ(dst, (std::vector<int32_t>{1, 2, 3, 4, 1, 2, 3, 4}));
  Value s = S32({0}, {});
  EXPECT_EQ(s.element_count(), 0);
}

}  // namespace
}  // namespace hloverlap::interp
