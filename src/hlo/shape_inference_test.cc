#include "hlo/shape_inference.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/raw_attribute_values.h"
#include "hlo/shape_inference_nn.h"

namespace hloverlap {
namespace {

using ::testing::HasSubstr;

Shape F32(absl::InlinedVector<int64_t, 6> dims) {
  return Shape(PrimitiveType::kF32, std::move(dims));
}
Shape BF16(absl::InlinedVector<int64_t, 6> dims) {
  return Shape(PrimitiveType::kBF16, std::move(dims));
}
Shape S32(absl::InlinedVector<int64_t, 6> dims) {
  return Shape(PrimitiveType::kS32, std::move(dims));
}
Shape Pred(absl::InlinedVector<int64_t, 6> dims) {
  return Shape(PrimitiveType::kPred, std::move(dims));
}

// Expects `result` to be OK with text `text` (no layouts).
void ExpectShape(const absl::StatusOr<Shape>& result, const std::string& text) {
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(ShapeString(*result), text);
}

void ExpectError(const absl::StatusOr<Shape>& result,
                 const std::string& substring) {
  ASSERT_FALSE(result.ok()) << "got " << ShapeString(*result);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(result.status().message()), HasSubstr(substring));
}

TEST(ShapeInferenceTest, UnaryElementwise) {
  ExpectShape(InferUnaryElementwiseShape(Opcode::kNegate, F32({2, 3})),
              "f32[2,3]");
  ExpectShape(InferUnaryElementwiseShape(Opcode::kIsFinite, F32({4})),
              "pred[4]");
  ExpectShape(InferUnaryElementwiseShape(Opcode::kReal,
                                         Shape(PrimitiveType::kC64, {4})),
              "f32[4]");
  ExpectError(InferUnaryElementwiseShape(Opcode::kPopcnt, F32({4})),
              "popcnt operand must be integral, found f32[4]");
  ExpectError(
      InferUnaryElementwiseShape(Opcode::kNegate, Shape::Tuple({F32({1})})),
      "negate operand must be an array, found (f32[1])");
}

TEST(ShapeInferenceTest, BinaryElementwiseAndCompare) {
  ExpectShape(InferBinaryElementwiseShape(Opcode::kAdd, F32({8}), F32({8})),
              "f32[8]");
  ExpectError(InferBinaryElementwiseShape(Opcode::kAdd, F32({8}), F32({4})),
              "add: operands must have the same dimensions, found lhs f32[8] "
              "and rhs f32[4]");
  ExpectError(
      InferBinaryElementwiseShape(Opcode::kMultiply, F32({8}), BF16({8})),
      "multiply: operands must have the same element type");
  ExpectShape(InferCompareShape(S32({2, 2}), S32({2, 2})), "pred[2,2]");
  ExpectShape(InferBinaryElementwiseShape(Opcode::kComplex, F32({3}), F32({3})),
              "c64[3]");
}

TEST(ShapeInferenceTest, SelectAndClamp) {
  ExpectShape(InferSelectShape(Pred({4}), F32({4}), F32({4})), "f32[4]");
  ExpectShape(InferSelectShape(Pred({}), F32({4}), F32({4})), "f32[4]");
  ExpectError(InferSelectShape(S32({4}), F32({4}), F32({4})),
              "select: predicate must be a pred array, found s32[4]");
  ExpectError(InferSelectShape(Pred({4}), F32({4}), F32({5})),
              "on_true f32[4] and on_false f32[5] must have the same shape");
  ExpectShape(InferClampShape(F32({}), F32({4}), F32({4})), "f32[4]");
  ExpectError(InferClampShape(F32({3}), F32({4}), F32({})),
              "clamp: min f32[3] must be a scalar or have the shape");
}

TEST(ShapeInferenceTest, ConvertAndBitcastConvert) {
  ExpectShape(InferConvertShape(F32({2, 3}), PrimitiveType::kBF16),
              "bf16[2,3]");
  ExpectShape(InferBitcastConvertShape(F32({2}), PrimitiveType::kS32),
              "s32[2]");
  ExpectShape(InferBitcastConvertShape(F32({2}), PrimitiveType::kBF16),
              "bf16[2,2]");
  ExpectShape(InferBitcastConvertShape(BF16({2, 2}), PrimitiveType::kF32),
              "f32[2]");
  ExpectError(InferBitcastConvertShape(BF16({2, 3}), PrimitiveType::kF32),
              "needs a trailing dimension of size 2");
}

TEST(ShapeInferenceTest, Broadcast) {
  ExpectShape(InferBroadcastShape(F32({4}), {2, 4}, {1}), "f32[2,4]");
  ExpectShape(InferBroadcastShape(F32({}), {2, 4}, {}), "f32[2,4]");
  ExpectError(InferBroadcastShape(F32({4}), {2, 5}, {1}),
              "broadcast: operand dimension 0 (size 4) of f32[4] maps to "
              "result dimension 1 of size 5");
  ExpectError(InferBroadcastShape(F32({4}), {2, 4}, {7}),
              "maps to result dimension 7, out of range for result rank 2");
  ExpectError(InferBroadcastShape(F32({4, 4}), {4, 4}, {1, 1}),
              "result dimension 1 appears twice");
  ExpectError(InferBroadcastShape(F32({4}), {4}, {}),
              "has 0 entries, expected one per dimension");
}

TEST(ShapeInferenceTest, Reshape) {
  ExpectShape(InferReshapeShape(F32({2, 6}), {3, 4}), "f32[3,4]");
  ExpectError(InferReshapeShape(F32({2, 6}), {3, 5}),
              "reshape: operand f32[2,6] has 12 elements but f32[3,5] has 15");
  ExpectError(InferReshapeShape(F32({2}), {-2, -1}), "must not be negative");
  // Overflowing products do not crash.
  const int64_t big = std::numeric_limits<int64_t>::max() / 2;
  ExpectError(InferReshapeShape(F32({2}), {big, big}), "elements but");
}

TEST(ShapeInferenceTest, TransposeAndReverse) {
  ExpectShape(InferTransposeShape(F32({2, 3, 4}), {2, 0, 1}), "f32[4,2,3]");
  ExpectError(InferTransposeShape(F32({2, 3}), {0}),
              "transpose: dimensions={0} has 1 entries, expected one per "
              "dimension of operand f32[2,3]");
  ExpectError(InferTransposeShape(F32({2, 3}), {0, 0}),
              "dimension 0 appears twice");
  ExpectError(InferTransposeShape(F32({2, 3}), {0, -1}),
              "dimension -1 is out of range for f32[2,3]");
  ExpectShape(InferReverseShape(F32({2, 3}), {1}), "f32[2,3]");
  ExpectError(InferReverseShape(F32({2, 3}), {2}), "out of range");
}

TEST(ShapeInferenceTest, Slice) {
  ExpectShape(InferSliceShape(F32({10, 8}), {{0, 10, 3}, {2, 6, 1}}),
              "f32[4,4]");
  ExpectShape(InferSliceShape(F32({10}), {{3, 3, 1}}), "f32[0]");
  ExpectError(InferSliceShape(F32({4, 8}), {{0, 4, 1}, {0, 9, 1}}),
              "slice dimension 1: limit 9 is out of range [0, 8] for operand "
              "f32[4,8]");
  ExpectError(InferSliceShape(F32({4}), {{3, 2, 1}}),
              "limit 2 is out of range [3, 4]");
  ExpectError(InferSliceShape(F32({4}), {{0, 4, 0}}),
              "stride 0 must be positive");
  ExpectError(InferSliceShape(F32({4}), {{-1, 4, 1}}), "start -1");
  ExpectError(InferSliceShape(F32({4}), {}),
              "slice: the slice has 0 entries, expected one per dimension of "
              "operand f32[4]");
}

TEST(ShapeInferenceTest, DynamicSlice) {
  const Shape idx = S32({});
  ExpectShape(InferDynamicSliceShape(F32({8, 4}), {&idx, &idx}, {2, 4}),
              "f32[2,4]");
  const Shape vec = S32({2});
  ExpectShape(InferDynamicSliceShape(F32({8, 4}), {&vec}, {2, 4}), "f32[2,4]");
  ExpectError(InferDynamicSliceShape(F32({8, 4}), {&idx, &idx}, {2, 5}),
              "dynamic-slice dimension 1: slice size 5 is out of range [0, "
              "4] for operand f32[8,4]");
  const Shape fidx = F32({});
  ExpectError(InferDynamicSliceShape(F32({8, 4}), {&idx, &fidx}, {2, 4}),
              "dynamic-slice: index 1 must be an integer scalar, found f32[]");
  ExpectError(InferDynamicSliceShape(F32({8, 4}), {&idx}, {2, 4}),
              "expected 2 scalar indices");
  ExpectError(InferDynamicSliceShape(F32({8, 4}), {&idx, &idx}, {2}),
              "dynamic-slice: dynamic_slice_sizes={2} has 1 entries, expected "
              "one per dimension of operand f32[8,4]");
}

TEST(ShapeInferenceTest, DynamicUpdateSlice) {
  const Shape idx = S32({});
  ExpectShape(
      InferDynamicUpdateSliceShape(F32({8, 4}), F32({1, 4}), {&idx, &idx}),
      "f32[8,4]");
  ExpectError(
      InferDynamicUpdateSliceShape(F32({8, 4}), F32({1, 5}), {&idx, &idx}),
      "dynamic-update-slice dimension 1: update f32[1,5] does not fit in "
      "operand f32[8,4]");
  ExpectError(
      InferDynamicUpdateSliceShape(F32({8, 4}), BF16({1, 4}), {&idx, &idx}),
      "must have the element type of operand");
}

TEST(ShapeInferenceTest, Concatenate) {
  const Shape a = F32({2, 3});
  const Shape b = F32({5, 3});
  ExpectShape(InferConcatenateShape({&a, &b}, 0), "f32[7,3]");
  ExpectError(InferConcatenateShape({&a, &b}, 1),
              "concatenate along dimension 1: operand 1 f32[5,3] differs from "
              "operand 0 f32[2,3] in dimension 0");
  ExpectError(InferConcatenateShape({&a}, 2), "dimension 2 is out of range");
  ExpectError(InferConcatenateShape({}, 0), "at least one operand");
  const Shape big = F32({std::numeric_limits<int64_t>::max()});
  ExpectError(InferConcatenateShape({&big, &big}, 0), "overflows");
}

TEST(ShapeInferenceTest, Pad) {
  const Shape zero = F32({});
  ExpectShape(InferPadShape(F32({4, 3}), zero, {{1, 2, 0}, {0, 0, 1}}),
              "f32[7,5]");
  ExpectShape(InferPadShape(F32({4}), zero, {{-1, -1, 0}}), "f32[2]");
  ExpectError(InferPadShape(F32({4}), zero, {{-3, -3, 0}}),
              "pad dimension 0: padding -3_-3_0 of size 4 gives negative "
              "size -2");
  ExpectError(InferPadShape(F32({4}), zero, {{0, 0, -1}}),
              "interior padding -1 must not be negative");
  ExpectError(InferPadShape(F32({4}), S32({}), {{0, 0, 0}}),
              "padding value must be a scalar of type f32, found s32[]");
  ExpectError(InferPadShape(F32({4}), zero, {{0, 0, 0}, {0, 0, 0}}),
              "pad: the padding has 2 entries, expected one per dimension of "
              "operand f32[4]");
  ExpectError(InferPadShape(F32({4}), zero,
                            {{std::numeric_limits<int64_t>::max(), 1, 0}}),
              "overflows");
}

TEST(ShapeInferenceTest, Iota) {
  ExpectShape(InferIotaShape(S32({4, 8}), 1), "s32[4,8]");
  ExpectError(InferIotaShape(S32({4, 8}), 2),
              "iota: iota_dimension=2 is out of range for s32[4,8]");
  ExpectError(InferIotaShape(S32({}), 0), "out of range");
}

TEST(ShapeInferenceTest, Dot) {
  DotDimensionNumbers d;
  d.lhs_contracting_dims = {1};
  d.rhs_contracting_dims = {0};
  ExpectShape(InferDotShape(F32({8, 4}), F32({4, 16}), d), "f32[8,16]");
  ExpectShape(
      InferDotShape(BF16({8, 4}), BF16({4, 16}), d, PrimitiveType::kF32),
      "f32[8,16]");
  ExpectError(InferDotShape(F32({8, 4}), F32({5, 16}), d),
              "dot: lhs contracting dimension 1 (size 4) does not match rhs "
              "contracting dimension 0 (size 5) (lhs f32[8,4], rhs "
              "f32[5,16])");
  DotDimensionNumbers b;
  b.lhs_batch_dims = {0};
  b.rhs_batch_dims = {0};
  b.lhs_contracting_dims = {2};
  b.rhs_contracting_dims = {1};
  ExpectShape(InferDotShape(F32({2, 8, 4}), F32({2, 4, 16}), b), "f32[2,8,16]");
  ExpectError(InferDotShape(F32({3, 8, 4}), F32({2, 4, 16}), b),
              "lhs batch dimension 0 (size 3) does not match rhs batch "
              "dimension 0 (size 2)");
  DotDimensionNumbers bad;
  bad.lhs_contracting_dims = {5};
  bad.rhs_contracting_dims = {0};
  ExpectError(InferDotShape(F32({8, 4}), F32({4, 16}), bad),
              "dimension 5 is out of range for f32[8,4]");
  DotDimensionNumbers uneven;
  uneven.lhs_contracting_dims = {1};
  ExpectError(InferDotShape(F32({8, 4}), F32({4, 16}), uneven),
              "must have the same length");
  DotDimensionNumbers twice;
  twice.lhs_batch_dims = {0};
  twice.rhs_batch_dims = {0};
  twice.lhs_contracting_dims = {0};
  twice.rhs_contracting_dims = {1};
  ExpectError(InferDotShape(F32({4, 4}), F32({4, 4}), twice),
              "dimension 0 appears twice");
}

ProgramShape Reducer(PrimitiveType t) {
  return ProgramShape{{Shape::Scalar(t), Shape::Scalar(t)}, Shape::Scalar(t)};
}

TEST(ShapeInferenceTest, Reduce) {
  const Shape in = F32({4, 8, 2});
  const Shape init = F32({});
  ExpectShape(InferReduceShape({&in, &init}, {1}, Reducer(PrimitiveType::kF32)),
              "f32[4,2]");
  ExpectError(InferReduceShape({&in, &init}, {3}, Reducer(PrimitiveType::kF32)),
              "reduce dimensions {3}: dimension 3 is out of range");
  ExpectError(InferReduceShape({&in, &init}, {0}, Reducer(PrimitiveType::kS32)),
              "reducer (s32[], s32[]) -> s32[]: accumulator 0 s32[] does not "
              "match init value type f32");
  // Floating-point precisions may differ, as in XLA: bf16 input, f32
  // reducer; the result has the accumulator type.
  const Shape bf16_in = BF16({4, 8});
  ExpectShape(
      InferReduceShape({&bf16_in, &init}, {0}, Reducer(PrimitiveType::kF32)),
      "f32[8]");
  const Shape s32_in = S32({4, 8});
  ExpectError(
      InferReduceShape({&s32_in, &init}, {0}, Reducer(PrimitiveType::kF32)),
      "parameter 1 must be s32[] (the element type of input 0)");
  ExpectError(InferReduceShape({&in}, {0}, Reducer(PrimitiveType::kF32)),
              "even number");
  const Shape vec_init = F32({2});
  ExpectError(
      InferReduceShape({&in, &vec_init}, {0}, Reducer(PrimitiveType::kF32)),
      "init value 0 must be a scalar, found f32[2]");
  // Variadic: (f32, s32) arg-max style.
  const Shape idx = S32({4, 8, 2});
  const Shape sinit = S32({});
  ProgramShape argmax{
      {Shape::Scalar(PrimitiveType::kF32), Shape::Scalar(PrimitiveType::kS32),
       Shape::Scalar(PrimitiveType::kF32), Shape::Scalar(PrimitiveType::kS32)},
      Shape::Tuple({Shape::Scalar(PrimitiveType::kF32),
                    Shape::Scalar(PrimitiveType::kS32)})};
  ExpectShape(InferReduceShape({&in, &idx, &init, &sinit}, {2}, argmax),
              "(f32[4,8], s32[4,8])");
  argmax.result = Shape::Scalar(PrimitiveType::kF32);
  ExpectError(InferReduceShape({&in, &idx, &init, &sinit}, {2}, argmax),
              "must return (f32[], s32[])");
}

TEST(ShapeInferenceTest, TupleAndGetTupleElement) {
  const Shape a = F32({2});
  const Shape b = S32({});
  ExpectShape(InferTupleShape({&a, &b}), "(f32[2], s32[])");
  const Shape t = Shape::Tuple({a, b});
  ExpectShape(InferGetTupleElementShape(t, 1), "s32[]");
  ExpectError(InferGetTupleElementShape(t, 2),
              "get-tuple-element: index=2 is out of range for operand "
              "(f32[2], s32[]) with 2 elements");
  ExpectError(InferGetTupleElementShape(t, -1), "index=-1 is out of range");
  ExpectError(InferGetTupleElementShape(a, 0),
              "operand must be a tuple, found f32[2]");
}

TEST(ShapeInferenceTest, While) {
  const Shape state = Shape::Tuple({S32({}), F32({4})});
  ProgramShape cond{{state}, Pred({})};
  ProgramShape body{{state}, state};
  ExpectShape(InferWhileShape(state, cond, body), "(s32[], f32[4])");
  ProgramShape bad_body{{state}, Shape::Tuple({S32({}), F32({5})})};
  ExpectError(InferWhileShape(state, cond, bad_body),
              "while: body returns (s32[], f32[5]), expected the loop state "
              "(s32[], f32[4])");
  ProgramShape bad_cond{{state}, S32({})};
  ExpectError(InferWhileShape(state, bad_cond, body),
              "condition must return pred[], found s32[]");
  ProgramShape two_params{{state, state}, Pred({})};
  ExpectError(InferWhileShape(state, two_params, body),
              "must take exactly one parameter");
}

TEST(ShapeInferenceTest, CallAndConditional) {
  const Shape a = F32({2});
  ProgramShape callee{{a}, S32({})};
  ExpectShape(InferCallShape({&a}, callee), "s32[]");
  const Shape b = F32({3});
  ExpectError(InferCallShape({&b}, callee),
              "call: argument 0 f32[3] does not match callee parameter 0 "
              "f32[2]");
  ExpectError(InferCallShape({}, callee), "0 arguments for callee");

  const Shape pred = Pred({});
  ProgramShape branch{{a}, S32({})};
  ExpectShape(InferConditionalShape(pred, {&a, &a}, {branch, branch}), "s32[]");
  ExpectError(InferConditionalShape(pred, {&a}, {branch}),
              "pred[] selector needs 2 branches");
  const Shape sel = S32({});
  ExpectShape(
      InferConditionalShape(sel, {&a, &a, &a}, {branch, branch, branch}),
      "s32[]");
  ProgramShape other{{a}, F32({})};
  ExpectError(InferConditionalShape(sel, {&a, &a}, {branch, other}),
              "branch 1 returns f32[] but branch 0 returns s32[]");
  ExpectError(InferConditionalShape(F32({}), {&a}, {branch}),
              "selector must be pred[] or s32[]");
}

TEST(ShapeInferenceTest, Collectives) {
  const Shape a = F32({4, 8});
  ExpectShape(InferAllGatherShape({&a}, 0, 2), "f32[8,8]");
  ExpectError(InferAllGatherShape({&a}, 2, 2),
              "all-gather: dimension 2 is out of range");
  ExpectError(InferAllGatherShape({&a}, 0, 0), "group size 0");
  ExpectShape(InferReduceScatterShape({&a}, 1, 4), "f32[4,2]");
  ExpectError(InferReduceScatterShape({&a}, 0, 3),
              "reduce-scatter: dimension 0 (size 4) of operand f32[4,8] is "
              "not divisible by the group size 3");
  const Shape b = S32({2});
  ExpectShape(InferAllReduceShape({&a}), "f32[4,8]");
  ExpectShape(InferAllReduceShape({&a, &b}), "(f32[4,8], s32[2])");
  ExpectShape(InferAllToAllShape({&a}, 1, 4), "f32[4,8]");
  ExpectError(InferAllToAllShape({&a}, 1, 3),
              "all-to-all: split dimension 1 (size 8) of operand f32[4,8] is "
              "not divisible by the group size 3");
  ExpectShape(InferAllToAllShape({&a, &a}, std::nullopt, std::nullopt),
              "(f32[4,8], f32[4,8])");
  ExpectShape(InferCollectivePermuteShape({&a}), "f32[4,8]");
  const Shape idx = S32({2});
  const Shape out = F32({8, 8});
  ExpectShape(InferCollectivePermuteShape({&a, &out, &idx, &idx}, true),
              "f32[8,8]");
}

TEST(ShapeInferenceTest, AsyncPairs) {
  const Shape a = F32({4});
  ExpectShape(InferAllGatherStartShape({&a}, 0, 2), "(f32[4], f32[8])");
  const Shape b = BF16({2});
  ExpectShape(InferAllGatherStartShape({&a, &b}, 0, 2),
              "((f32[4], bf16[2]), (f32[8], bf16[4]))");
  ExpectShape(InferCollectivePermuteStartShape({&a}), "(f32[4], f32[4])");
  ExpectShape(InferCopyStartShape(a), "(f32[4], f32[4], u32[])");
  ProgramShape wrapped{{a}, F32({2})};
  ExpectShape(InferAsyncStartShape({&a}, wrapped), "((f32[4]), f32[2])");
  ExpectError(InferAsyncStartShape({&b}, wrapped),
              "async-start: operand 0 bf16[2] does not match wrapped "
              "computation parameter 0 f32[4]");
  const Shape start = Shape::Tuple(
      {Shape::Tuple({a}), F32({2}), Shape::Scalar(PrimitiveType::kU32)});
  ExpectShape(InferAsyncDoneShape(start), "f32[2]");
  ExpectShape(InferAsyncUpdateShape(start), "((f32[4]), f32[2], u32[])");
  ExpectError(InferAsyncDoneShape(a), "must be an async-start/update value");
  ExpectShape(
      InferNativeDoneShape(Opcode::kAllGatherDone, Shape::Tuple({a, F32({8})})),
      "f32[8]");
  ExpectShape(
      InferNativeDoneShape(Opcode::kCopyDone, InferCopyStartShape(a).value()),
      "f32[4]");
  ExpectShape(InferNativeDoneShape(Opcode::kAllReduceDone, a), "f32[4]");
  ExpectError(InferNativeDoneShape(Opcode::kCollectivePermuteDone, a),
              "must be a start tuple");
}

// Every form XLA prints for a native start (shape_inference.h lists them).
TEST(ShapeInferenceTest, NativeStartForms) {
  const Shape a = F32({4});
  const Shape b = BF16({2});
  const Shape u32 = Shape::Scalar(PrimitiveType::kU32);
  const Shape ag = InferAllGatherStartShape({&a}, 0, 2).value();
  // A lone operand bare or in a 1-tuple; nothing after the result.
  EXPECT_TRUE(NativeStartShapeMatches(ag, Shape::Tuple({a, F32({8})}),
                                      /*context=*/false));
  EXPECT_TRUE(NativeStartShapeMatches(
      ag, Shape::Tuple({Shape::Tuple({a}), F32({8})}), /*context=*/false));
  EXPECT_FALSE(NativeStartShapeMatches(
      ag, Shape::Tuple({Shape::Tuple({a, a}), F32({8})}), false));
  EXPECT_FALSE(NativeStartShapeMatches(
      ag, Shape::Tuple({Shape::Tuple({a}), F32({4})}), false));
  EXPECT_FALSE(NativeStartShapeMatches(
      ag, Shape::Tuple({Shape::Tuple({a}), F32({8}), u32}), false));
  EXPECT_FALSE(NativeStartShapeMatches(ag, F32({8}), false));
  // Several operands: the operand part is a tuple in both forms.
  const Shape ag2 = InferAllGatherStartShape({&a, &b}, 0, 2).value();
  EXPECT_TRUE(NativeStartShapeMatches(
      ag2,
      Shape::Tuple({Shape::Tuple({a, b}), Shape::Tuple({F32({8}), BF16({4})})}),
      false));
  // collective-permute-start: context scalars may follow.
  const Shape cp = InferCollectivePermuteStartShape({&a}).value();
  EXPECT_TRUE(NativeStartShapeMatches(
      cp, Shape::Tuple({Shape::Tuple({a}), a, u32, u32}), /*context=*/true));
  EXPECT_FALSE(NativeStartShapeMatches(
      cp, Shape::Tuple({Shape::Tuple({a}), a, Shape::Tuple({u32})}), true));
  // all-reduce-start with an operand part (the lone operand always in a
  // 1-tuple: a bare one would read as the older two-result form).
  ExpectShape(InferAllReduceStartShape({&a}), "((f32[4]), f32[4])");
  ExpectShape(InferAllReduceStartShape({&a, &b}),
              "((f32[4], bf16[2]), (f32[4], bf16[2]))");
  ExpectError(InferAllReduceStartShape({}), "at least one operand");
  const Shape ar = Shape::Tuple({Shape::Tuple({a}), a});
  EXPECT_TRUE(AllReduceStartHasOperandPart(ar));
  EXPECT_FALSE(AllReduceStartHasOperandPart(a));
  EXPECT_FALSE(AllReduceStartHasOperandPart(Shape::Tuple({a, a})));
  ExpectShape(InferNativeDoneShape(Opcode::kAllReduceDone, ar), "f32[4]");
  ExpectShape(
      InferNativeDoneShape(Opcode::kAllReduceDone, Shape::Tuple({a, b})),
      "(f32[4], bf16[2])");
  // The part each done returns.
  EXPECT_EQ(NativeStartResultPart(Opcode::kAllReduceStart, ar),
            &ar.tuple_shapes(1));
  EXPECT_EQ(NativeStartResultPart(Opcode::kAllReduceStart, a), &a);
  EXPECT_EQ(NativeStartResultPart(Opcode::kAllGatherStart, ag),
            &ag.tuple_shapes(1));
  EXPECT_EQ(NativeStartResultPart(Opcode::kAllGatherStart, a), nullptr);
  const Shape copy = InferCopyStartShape(a).value();
  EXPECT_EQ(NativeStartResultPart(Opcode::kCopyStart, copy),
            &copy.tuple_shapes(0));
  EXPECT_EQ(NativeStartResultPart(Opcode::kAdd, a), nullptr);
}

TEST(ShapeInferenceTest, HelpersAndLayouts) {
  Shape with_layout = F32({2, 3});
  with_layout.SetDefaultLayout();
  Shape other = F32({2, 3});
  Layout l;
  l.minor_to_major = {0, 1};
  other.set_layout(l);
  EXPECT_TRUE(ShapesMatch(with_layout, other));
  EXPECT_FALSE(ShapesMatch(with_layout, other, /*check_layouts=*/true));
  EXPECT_TRUE(ShapesMatch(F32({2, 3}), other, /*check_layouts=*/true));
  EXPECT_FALSE(StripLayouts(with_layout).has_layout());
  EXPECT_EQ(DimsString({1, 0, 2}), "{1,0,2}");
  ProgramShape p{{F32({}), F32({})}, F32({})};
  EXPECT_EQ(p.ToString(), "(f32[], f32[]) -> f32[]");
}

TEST(ShapeInferenceTest, WindowsAndTheirText) {
  absl::StatusOr<std::vector<WindowDimension>> w = ReadWindow(
      "{size=3x2 stride=2x1 pad=1_-1x0_0 lhs_dilate=1x2 "
      "rhs_dilate=2x1 rhs_reversal=0x1}");
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_EQ(w->size(), 2u);
  EXPECT_EQ((*w)[0].padding_high, -1);
  EXPECT_EQ((*w)[1].base_dilation, 2);
  EXPECT_TRUE((*w)[1].reversal);
  EXPECT_TRUE(ReadWindow("{}").ok());
  EXPECT_FALSE(ReadWindow("{stride=2}").ok());           // no size
  EXPECT_FALSE(ReadWindow("{size=3 stride=1x1}").ok());  // ranks differ
  EXPECT_FALSE(ReadWindow("{size=3 pad=1}").ok());
  EXPECT_FALSE(ReadWindow("size=3").ok());
  // 8 elements, window 3 dilated by 2 (5 wide), padded 1 and 1, stride 2:
  // (10 - 5) / 2 + 1.
  WindowDimension d{3, 2, 1, 1, 1, 2, false};
  EXPECT_EQ(*WindowOutputSize(8, d), 3);
  d.size = 20;  // does not fit once
  EXPECT_EQ(*WindowOutputSize(8, d), 0);
  d.stride = 0;
  EXPECT_FALSE(WindowOutputSize(8, d).ok());
  d = WindowDimension{2, 1,    std::numeric_limits<int64_t>::max(), 1, 1,
                      1, false};
  EXPECT_FALSE(WindowOutputSize(8, d).ok());  // overflows
  d = WindowDimension{1, 1, -9, 0, 1, 1, false};
  EXPECT_FALSE(WindowOutputSize(8, d).ok());  // negative size
}

TEST(ShapeInferenceTest, ConvolutionShape) {
  absl::StatusOr<ConvolutionDimensions> d =
      ReadConvolutionDimensions("b01f_01io->bf01");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->input_spatial, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(d->kernel_output_feature, 3);
  EXPECT_EQ(d->output_spatial, (std::vector<int64_t>{2, 3}));
  EXPECT_FALSE(ReadConvolutionDimensions("b0f_0io").ok());
  EXPECT_FALSE(ReadConvolutionDimensions("bb0_0io->b0f").ok());
  EXPECT_FALSE(ReadConvolutionDimensions("b01f_0io->b0f").ok());
  const std::vector<WindowDimension> w = {{3, 1, 1, 1, 1, 1, false},
                                          {3, 2, 0, 0, 1, 1, false}};
  ExpectShape(InferConvolutionShape(F32({4, 16, 16, 8}), F32({3, 3, 8, 32}), *d,
                                    w, 1, 1),
              "f32[4,32,16,7]");
  // Two feature groups: the kernel takes half the input features.
  ExpectShape(InferConvolutionShape(F32({4, 16, 16, 8}), F32({3, 3, 4, 32}), *d,
                                    w, 2, 1),
              "f32[4,32,16,7]");
  ExpectShape(InferConvolutionShape(F32({4, 16, 16, 8}), BF16({3, 3, 8, 32}),
                                    *d, w, 1, 1),
              "f32[4,32,16,7]");
  ExpectError(InferConvolutionShape(F32({4, 16, 16, 8}), F32({3, 3, 4, 32}), *d,
                                    w, 1, 1),
              "feature_group_count=1");
  ExpectError(InferConvolutionShape(F32({4, 16, 16, 8}), S32({3, 3, 8, 32}), *d,
                                    w, 1, 1),
              "no common type");
  ExpectError(
      InferConvolutionShape(F32({4, 16, 8}), F32({3, 3, 8, 32}), *d, w, 1, 1),
      "must have rank 4");
}

TEST(ShapeInferenceTest, GatherShape) {
  GatherDimensions d;
  d.offset_dims = {1};
  d.collapsed_slice_dims = {0};
  d.start_index_map = {0};
  d.index_vector_dim = 1;
  d.slice_sizes = {1, 64};
  ExpectShape(InferGatherShape(F32({1000, 64}), S32({10, 1}), d), "f32[10,64]");
  // The index vector dimension past the last: one index per position.
  d.index_vector_dim = 1;
  ExpectShape(InferGatherShape(F32({1000, 64}), S32({10}), d), "f32[10,64]");
  // Offsets placed first.
  d.offset_dims = {0};
  ExpectShape(InferGatherShape(F32({1000, 64}), S32({10}), d), "f32[64,10]");
  d.slice_sizes = {2, 64};
  ExpectError(InferGatherShape(F32({1000, 64}), S32({10}), d),
              "has slice size 2");
  d.slice_sizes = {1, 65};
  ExpectError(InferGatherShape(F32({1000, 64}), S32({10}), d), "out of range");
  d.slice_sizes = {1, 64};
  d.offset_dims = {5};
  ExpectError(InferGatherShape(F32({1000, 64}), S32({10}), d),
              "out of range for a result of rank 2");
  d.offset_dims = {0};
  d.start_index_map = {0, 1};
  ExpectError(InferGatherShape(F32({1000, 64}), S32({10}), d),
              "1 indices per slice");
}

TEST(ShapeInferenceTest, FftShape) {
  const Shape c64(PrimitiveType::kC64, {4, 8});
  ExpectShape(InferFftShape(c64, FftType::kFft, {8}), "c64[4,8]");
  ExpectShape(InferFftShape(F32({4, 8}), FftType::kRfft, {8}), "c64[4,5]");
  ExpectShape(
      InferFftShape(Shape(PrimitiveType::kC64, {4, 5}), FftType::kIrfft, {8}),
      "f32[4,8]");
  ExpectShape(InferFftShape(F32({4, 8}), FftType::kRfft, {4, 8}), "c64[4,5]");
  ExpectError(InferFftShape(F32({4, 8}), FftType::kFft, {8}), "complex");
  ExpectError(InferFftShape(F32({4, 8}), FftType::kRfft, {6}),
              "equal to fft_length");
  ExpectError(InferFftShape(c64, FftType::kIrfft, {8}), "fft_length/2+1");
  ExpectError(InferFftShape(c64, FftType::kFft, {}), "1 to 3");
}

}  // namespace
}  // namespace hloverlap
