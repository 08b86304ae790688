#include "hlo/opcode_traits.h"

#include <string>

#include "gtest/gtest.h"

namespace hloverlap {
namespace {

std::string Name(Opcode op) { return std::string(OpcodeName(op)); }

TEST(OpcodeTraitsTest, AsyncPairsAreConsistent) {
  for (int i = 0; i < kNumOpcodes; ++i) {
    const Opcode op = static_cast<Opcode>(i);
    const OpcodeTraits& t = Traits(op);
    ASSERT_EQ(t.async_start.has_value(), t.async_done.has_value()) << Name(op);
    if (!t.async_start.has_value()) {
      EXPECT_EQ(t.async_role, AsyncRole::kNone) << Name(op);
      continue;
    }
    // Both halves name the same pair; the start is a start, the done a done.
    EXPECT_EQ(Traits(*t.async_start).async_done, t.async_done) << Name(op);
    EXPECT_EQ(Traits(*t.async_done).async_start, t.async_start) << Name(op);
    EXPECT_EQ(Traits(*t.async_start).async_role, AsyncRole::kStart);
    EXPECT_EQ(Traits(*t.async_done).async_role, AsyncRole::kDone);
    // The halves perform the collective of the synchronous form.
    EXPECT_EQ(Traits(*t.async_start).collective, t.collective) << Name(op);
    EXPECT_EQ(Traits(*t.async_done).collective, t.collective) << Name(op);
    // A done has one operand: its start (or an async-update).
    EXPECT_EQ(Traits(*t.async_done).arity, 1) << Name(op);
  }
}

TEST(OpcodeTraitsTest, NativeHalvesAndTheirSynchronousForms) {
  EXPECT_EQ(Traits(Opcode::kAllGather).async_start, Opcode::kAllGatherStart);
  EXPECT_EQ(Traits(Opcode::kAllReduce).async_done, Opcode::kAllReduceDone);
  EXPECT_EQ(Traits(Opcode::kCollectivePermute).async_start,
            Opcode::kCollectivePermuteStart);
  EXPECT_EQ(Traits(Opcode::kCopy).async_start, Opcode::kCopyStart);
  // Wrapped in async-start/-done instead: no native halves.
  EXPECT_FALSE(Traits(Opcode::kReduceScatter).async_start.has_value());
  EXPECT_FALSE(Traits(Opcode::kAllToAll).async_start.has_value());

  EXPECT_EQ(SyncCollectiveOf(Opcode::kAllGatherStart), Opcode::kAllGather);
  EXPECT_EQ(SyncCollectiveOf(Opcode::kCollectivePermuteDone),
            Opcode::kCollectivePermute);
  EXPECT_EQ(SyncCollectiveOf(Opcode::kAsyncStart), std::nullopt);
  EXPECT_EQ(SyncCollectiveOf(Opcode::kCopyStart), std::nullopt);
  EXPECT_TRUE(IsNativeCollectiveHalf(Opcode::kAllReduceStart));
  EXPECT_TRUE(IsNativeCollectiveHalf(Opcode::kAllGatherDone));
  EXPECT_FALSE(IsNativeCollectiveHalf(Opcode::kCopyStart));
  EXPECT_FALSE(IsNativeCollectiveHalf(Opcode::kAsyncStart));
  EXPECT_FALSE(IsNativeCollectiveHalf(Opcode::kAllGather));
}

TEST(OpcodeTraitsTest, EveryCollectiveIsItsOwnSynchronousForm) {
  for (int i = 0; i < kNumOpcodes; ++i) {
    const Opcode op = static_cast<Opcode>(i);
    if (!IsCollective(op)) continue;
    EXPECT_EQ(SyncCollectiveOf(op), op) << Name(op);
  }
}

TEST(OpcodeTraitsTest, SendAndRecvAreStartLikeButNotAsyncStarts) {
  EXPECT_TRUE(IsStartLike(Opcode::kSend));
  EXPECT_TRUE(IsStartLike(Opcode::kRecv));
  EXPECT_TRUE(IsDoneLike(Opcode::kSendDone));
  EXPECT_TRUE(IsDoneLike(Opcode::kRecvDone));
  EXPECT_FALSE(IsAsyncStart(Opcode::kSend));
  EXPECT_FALSE(IsAsyncDone(Opcode::kRecvDone));
  EXPECT_TRUE(IsStartLike(Opcode::kCopyStart));
  EXPECT_FALSE(IsStartLike(Opcode::kAsyncUpdate));
  EXPECT_TRUE(Traits(Opcode::kSend).side_effect);
}

TEST(OpcodeTraitsTest, ElementwiseArity) {
  EXPECT_TRUE(IsElementwiseUnary(Opcode::kNegate));
  EXPECT_TRUE(IsElementwiseUnary(Opcode::kConvert));
  EXPECT_TRUE(IsElementwiseUnary(Opcode::kCopy));
  EXPECT_TRUE(IsElementwiseBinary(Opcode::kCompare));
  EXPECT_TRUE(IsElementwise(Opcode::kSelect));
  EXPECT_FALSE(IsElementwiseBinary(Opcode::kSelect));
  EXPECT_EQ(Traits(Opcode::kClamp).arity, 3);
  EXPECT_FALSE(IsElementwise(Opcode::kDot));
  for (int i = 0; i < kNumOpcodes; ++i) {
    const Opcode op = static_cast<Opcode>(i);
    if (IsElementwise(op)) EXPECT_GE(Traits(op).arity, 1) << Name(op);
  }
}

TEST(OpcodeTraitsTest, OperandCountsAndCallees) {
  EXPECT_EQ(Traits(Opcode::kParameter).arity, 0);
  EXPECT_EQ(Traits(Opcode::kGetTupleElement).arity, 1);
  EXPECT_EQ(Traits(Opcode::kRaggedAllToAll).arity, 6);
  EXPECT_EQ(Traits(Opcode::kTuple).arity, kVariadic);
  EXPECT_EQ(Traits(Opcode::kConcatenate).arity, kAtLeastOne);
  EXPECT_EQ(Traits(Opcode::kAllGatherStart).arity, kAtLeastOne);
  EXPECT_EQ(Traits(Opcode::kWhile).callees, CalleeForm::kConditionBody);
  EXPECT_EQ(Traits(Opcode::kAllReduce).callees, CalleeForm::kToApply);
  EXPECT_EQ(Traits(Opcode::kAllReduceStart).callees, CalleeForm::kToApply);
  EXPECT_EQ(Traits(Opcode::kAllGather).callees, CalleeForm::kNone);
  EXPECT_EQ(Traits(Opcode::kFusion).callees, CalleeForm::kCalls);
  EXPECT_EQ(Traits(Opcode::kCustomCall).callees, CalleeForm::kOptional);
}

TEST(OpcodeTraitsTest, WhichResultsAlias) {
  for (Opcode op : {Opcode::kTuple, Opcode::kGetTupleElement, Opcode::kBitcast,
                    Opcode::kParameter, Opcode::kWhile, Opcode::kConditional,
                    Opcode::kCall, Opcode::kAsyncDone, Opcode::kAllGatherDone,
                    Opcode::kCopyDone, Opcode::kOptBarrier}) {
    EXPECT_EQ(Traits(op).result, ResultBuffer::kAliases) << Name(op);
  }
  for (Opcode op : {Opcode::kAdd, Opcode::kAllGatherStart, Opcode::kCopyStart,
                    Opcode::kAllGather, Opcode::kFusion, Opcode::kCopy,
                    Opcode::kReshape, Opcode::kConstant}) {
    EXPECT_EQ(Traits(op).result, ResultBuffer::kDefines) << Name(op);
  }
}

}  // namespace
}  // namespace hloverlap
