// What every layer needs to know about an opcode, in one constexpr table
// indexed by the opcode (after XLA's hlo_opcode.h, which keeps arity in its
// opcode list). Parser, verifier, passes, interpreter and simulator read
// these facts here instead of each re-listing opcodes in its own switch.
//
//   all-gather-start(p)      category kAsyncStart, arity kAtLeastOne,
//                            collective kAllGather, async role kStart,
//                            pair (all-gather-start, all-gather-done),
//                            result: a new buffer
//   all-gather-done(start)   category kAsyncDone, arity 1, role kDone,
//                            result: aliases the start's output buffer
//   get-tuple-element(t)     category kTuple, arity 1, aliases its operand
//
// Facts kept here: the category, the fixed operand count, the collective a
// synchronous op or a native async half performs, the async pair an op
// belongs to (send/recv included: send, send-done), how the op names its
// called computations, whether its result is a buffer of its own or an
// alias (of an operand or of a called computation's result), and whether it
// has a side effect. What depends on attributes as well as on the opcode
// (a custom-call's custom_call_has_side_effect, the collective an
// async-start wraps) is the caller's to add.
#ifndef HLOVERLAP_HLO_OPCODE_TRAITS_H_
#define HLOVERLAP_HLO_OPCODE_TRAITS_H_

#include <array>
#include <cstdint>
#include <optional>

#include "hlo/opcode.h"

namespace hloverlap {

enum class OpcodeCategory : uint8_t {
  kElementwise,   // unary, binary, select, clamp; convert and copy included
  kCollective,    // synchronous collectives (all-gather, all-reduce, ...)
  kAsyncStart,    // native starts, copy-start, async-start
  kAsyncUpdate,   // async-update
  kAsyncDone,     // native dones, copy-done, async-done
  kPointToPoint,  // send, send-done, recv, recv-done
  kControlFlow,   // while, conditional, call
  kTuple,         // tuple, get-tuple-element
  kDataMovement,  // reshape, bitcast, slice, transpose, gather, ...
  kSource,        // parameter, constant, iota, ids, rng, infeed
  kCompute,       // dot, convolution, reduce, sort, fusion, custom-call, ...
  kOther,         // add-dependency, after-all, domain, opt-barrier, ...
};

// The synchronous collective an op performs (a native async half performs
// the collective of its synchronous form).
enum class CollectiveFamily : uint8_t {
  kNone,
  kAllGather,
  kAllReduce,
  kReduceScatter,
  kAllToAll,
  kRaggedAllToAll,
  kCollectivePermute,
  kCollectiveBroadcast,
};

// The op's place in an async pair: send and recv start one, send-done and
// recv-done end it, like the native -start/-done opcodes.
enum class AsyncRole : uint8_t { kNone, kStart, kUpdate, kDone };

// How the op names its called computations.
enum class CalleeForm : uint8_t {
  kNone,
  kToApply,        // to_apply=, required (call, map, reduce, all-reduce, ...)
  kCalls,          // calls=, required (fusion, async-start)
  kConditionBody,  // while: condition=, body=
  kBranches,       // conditional: true/false_computation or branches
  kSelectScatter,  // select-and-scatter: select=, scatter=
  kOptional,       // custom-call, async-update, async-done: may name some
};

// Whether the op's result is a buffer of its own or an alias: of an operand
// (tuple, get-tuple-element, bitcast, a -done of its start's output,
// opt-barrier, add-dependency, domain), of a called computation's result
// (while, conditional, call) or of the caller's argument (parameter).
enum class ResultBuffer : uint8_t { kDefines, kAliases };

// Operand counts that are not fixed.
inline constexpr int8_t kVariadic = -1;
inline constexpr int8_t kAtLeastOne = -2;

struct OpcodeTraits {
  Opcode opcode;
  OpcodeCategory category;
  int8_t arity;  // fixed operand count, kVariadic or kAtLeastOne
  CollectiveFamily collective;
  AsyncRole async_role;
  // The start and done of the async pair the op belongs to; for a
  // synchronous op with native async halves (all-gather, all-reduce,
  // collective-permute, copy) those halves.
  std::optional<Opcode> async_start;
  std::optional<Opcode> async_done;
  CalleeForm callees;
  ResultBuffer result;
  bool side_effect;  // send/recv, infeed/outfeed, stateful rng
};

namespace opcode_traits_internal {
using C = OpcodeCategory;
using K = CollectiveFamily;
using R = AsyncRole;
using F = CalleeForm;
using B = ResultBuffer;

// One row per opcode, in the order of opcode_list.inc.
// clang-format off
inline constexpr std::array<OpcodeTraits, kNumOpcodes> kTable = {{
    {Opcode::kAbs, C::kElementwise, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // abs
    {Opcode::kAcos, C::kElementwise, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // acos
    {Opcode::kAcosh, C::kElementwise, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // acosh
    {Opcode::kAdd, C::kElementwise, 2, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // add
    {Opcode::kAddDependency, C::kOther, 2, K::kNone, R::kNone, {}, {}, F::kNone, B::kAliases, false},  // add-dependency
    {Opcode::kAfterAll, C::kOther, kVariadic, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // after-all
    {Opcode::kAllGather, C::kCollective, kAtLeastOne, K::kAllGather, R::kNone, Opcode::kAllGatherStart, Opcode::kAllGatherDone, F::kNone, B::kDefines, false},  // all-gather
    {Opcode::kAllGatherDone, C::kAsyncDone, 1, K::kAllGather, R::kDone, Opcode::kAllGatherStart, Opcode::kAllGatherDone, F::kNone, B::kAliases, false},  // all-gather-done
    {Opcode::kAllGatherStart, C::kAsyncStart, kAtLeastOne, K::kAllGather, R::kStart, Opcode::kAllGatherStart, Opcode::kAllGatherDone, F::kNone, B::kDefines, false},  // all-gather-start
    {Opcode::kAllReduce, C::kCollective, kAtLeastOne, K::kAllReduce, R::kNone, Opcode::kAllReduceStart, Opcode::kAllReduceDone, F::kToApply, B::kDefines, false},  // all-reduce
    {Opcode::kAllReduceDone, C::kAsyncDone, 1, K::kAllReduce, R::kDone, Opcode::kAllReduceStart, Opcode::kAllReduceDone, F::kNone, B::kAliases, false},  // all-reduce-done
    {Opcode::kAllReduceStart, C::kAsyncStart, kAtLeastOne, K::kAllReduce, R::kStart, Opcode::kAllReduceStart, Opcode::kAllReduceDone, F::kToApply, B::kDefines, false},  // all-reduce-start
    {Opcode::kAllToAll, C::kCollective, kAtLeastOne, K::kAllToAll, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // all-to-all
    {Opcode::kAnd, C::kElementwise, 2, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // and
    {Opcode::kAsin, C::kElementwise, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // asin
    {Opcode::kAsinh, C::kElementwise, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // asinh
    {Opcode::kAsyncDone, C::kAsyncDone, 1, K::kNone, R::kDone, Opcode::kAsyncStart, Opcode::kAsyncDone, F::kOptional, B::kAliases, false},  // async-done
    {Opcode::kAsyncStart, C::kAsyncStart, kVariadic, K::kNone, R::kStart, Opcode::kAsyncStart, Opcode::kAsyncDone, F::kCalls, B::kDefines, false},  // async-start
    {Opcode::kAsyncUpdate, C::kAsyncUpdate, 1, K::kNone, R::kUpdate, Opcode::kAsyncStart, Opcode::kAsyncDone, F::kOptional, B::kAliases, false},  // async-update
    {Opcode::kAtan2, C::kElementwise, 2, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // atan2
    {Opcode::kAtanh, C::kElementwise, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // atanh
    {Opcode::kBatchNormGrad, C::kCompute, 5, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // batch-norm-grad
    {Opcode::kBatchNormInference, C::kCompute, 5, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // batch-norm-inference
    {Opcode::kBatchNormTraining, C::kCompute, 3, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // batch-norm-training
    {Opcode::kBitcast, C::kDataMovement, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kAliases, false},  // bitcast
    {Opcode::kBitcastConvert, C::kElementwise, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // bitcast-convert
    {Opcode::kBroadcast, C::kDataMovement, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // broadcast
    {Opcode::kCall, C::kControlFlow, kVariadic, K::kNone, R::kNone, {}, {}, F::kToApply, B::kAliases, false},  // call
    {Opcode::kCbrt, C::kElementwise, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // cbrt
    {Opcode::kCeil, C::kElementwise, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // ceil
    {Opcode::kCholesky, C::kCompute, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // cholesky
    {Opcode::kClamp, C::kElementwise, 3, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // clamp
    {Opcode::kCollectiveBroadcast, C::kCollective, kAtLeastOne, K::kCollectiveBroadcast, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // collective-broadcast
    {Opcode::kCollectivePermute, C::kCollective, kAtLeastOne, K::kCollectivePermute, R::kNone, Opcode::kCollectivePermuteStart, Opcode::kCollectivePermuteDone, F::kNone, B::kDefines, false},  // collective-permute
    {Opcode::kCollectivePermuteDone, C::kAsyncDone, 1, K::kCollectivePermute, R::kDone, Opcode::kCollectivePermuteStart, Opcode::kCollectivePermuteDone, F::kNone, B::kAliases, false},  // collective-permute-done
    {Opcode::kCollectivePermuteStart, C::kAsyncStart, kAtLeastOne, K::kCollectivePermute, R::kStart, Opcode::kCollectivePermuteStart, Opcode::kCollectivePermuteDone, F::kNone, B::kDefines, false},  // collective-permute-start
    {Opcode::kCompare, C::kElementwise, 2, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // compare
    {Opcode::kComplex, C::kElementwise, 2, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // complex
    {Opcode::kConcatenate, C::kDataMovement, kAtLeastOne, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // concatenate
    {Opcode::kConditional, C::kControlFlow, kVariadic, K::kNone, R::kNone, {}, {}, F::kBranches, B::kAliases, false},  // conditional
    {Opcode::kConstant, C::kSource, 0, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // constant
    {Opcode::kConvert, C::kElementwise, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // convert
    {Opcode::kConvolution, C::kCompute, 2, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // convolution
    {Opcode::kCopy, C::kElementwise, 1, K::kNone, R::kNone, Opcode::kCopyStart, Opcode::kCopyDone, F::kNone, B::kDefines, false},  // copy
    {Opcode::kCopyDone, C::kAsyncDone, 1, K::kNone, R::kDone, Opcode::kCopyStart, Opcode::kCopyDone, F::kNone, B::kAliases, false},  // copy-done
    {Opcode::kCopyStart, C::kAsyncStart, 1, K::kNone, R::kStart, Opcode::kCopyStart, Opcode::kCopyDone, F::kNone, B::kDefines, false},  // copy-start
    {Opcode::kCosh, C::kElementwise, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // cosh
    {Opcode::kCosine, C::kElementwise, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // cosine
    {Opcode::kCountLeadingZeros, C::kElementwise, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // count-leading-zeros
    {Opcode::kCustomCall, C::kCompute, kVariadic, K::kNone, R::kNone, {}, {}, F::kOptional, B::kDefines, false},  // custom-call
    {Opcode::kDivide, C::kElementwise, 2, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // divide
    {Opcode::kDomain, C::kOther, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kAliases, false},  // domain
    {Opcode::kDot, C::kCompute, 2, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // dot
    {Opcode::kDynamicReshape, C::kDataMovement, kAtLeastOne, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // dynamic-reshape
    {Opcode::kDynamicSlice, C::kDataMovement, kVariadic, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // dynamic-slice
    {Opcode::kDynamicUpdateSlice, C::kDataMovement, kVariadic, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // dynamic-update-slice
    {Opcode::kErf, C::kElementwise, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // erf
    {Opcode::kExponential, C::kElementwise, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // exponential
    {Opcode::kExponentialMinusOne, C::kElementwise, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // exponential-minus-one
    {Opcode::kFft, C::kCompute, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // fft
    {Opcode::kFloor, C::kElementwise, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // floor
    {Opcode::kFusion, C::kCompute, kVariadic, K::kNone, R::kNone, {}, {}, F::kCalls, B::kDefines, false},  // fusion
    {Opcode::kGather, C::kDataMovement, 2, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // gather
    {Opcode::kGetDimensionSize, C::kOther, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // get-dimension-size
    {Opcode::kGetTupleElement, C::kTuple, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kAliases, false},  // get-tuple-element
    {Opcode::kImag, C::kElementwise, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // imag
    {Opcode::kInfeed, C::kSource, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, true},  // infeed
    {Opcode::kIota, C::kSource, 0, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // iota
    {Opcode::kIsFinite, C::kElementwise, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // is-finite
    {Opcode::kLog, C::kElementwise, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // log
    {Opcode::kLogPlusOne, C::kElementwise, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // log-plus-one
    {Opcode::kLogistic, C::kElementwise, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // logistic
    {Opcode::kMap, C::kCompute, kAtLeastOne, K::kNone, R::kNone, {}, {}, F::kToApply, B::kDefines, false},  // map
    {Opcode::kMaximum, C::kElementwise, 2, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // maximum
    {Opcode::kMinimum, C::kElementwise, 2, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // minimum
    {Opcode::kMulhi, C::kElementwise, 2, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // mulhi
    {Opcode::kMultiply, C::kElementwise, 2, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // multiply
    {Opcode::kNegate, C::kElementwise, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // negate
    {Opcode::kNot, C::kElementwise, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // not
    {Opcode::kOptBarrier, C::kOther, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kAliases, false},  // opt-barrier
    {Opcode::kOr, C::kElementwise, 2, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // or
    {Opcode::kOutfeed, C::kOther, 2, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, true},  // outfeed
    {Opcode::kPad, C::kDataMovement, 2, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // pad
    {Opcode::kParameter, C::kSource, 0, K::kNone, R::kNone, {}, {}, F::kNone, B::kAliases, false},  // parameter
    {Opcode::kPartitionId, C::kSource, 0, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // partition-id
    {Opcode::kPopcnt, C::kElementwise, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // popcnt
    {Opcode::kPower, C::kElementwise, 2, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // power
    {Opcode::kRaggedAllToAll, C::kCollective, 6, K::kRaggedAllToAll, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // ragged-all-to-all
    {Opcode::kRaggedDot, C::kCompute, 3, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // ragged-dot
    {Opcode::kReal, C::kElementwise, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // real
    {Opcode::kRecv, C::kPointToPoint, 1, K::kNone, R::kStart, Opcode::kRecv, Opcode::kRecvDone, F::kNone, B::kDefines, true},  // recv
    {Opcode::kRecvDone, C::kPointToPoint, 1, K::kNone, R::kDone, Opcode::kRecv, Opcode::kRecvDone, F::kNone, B::kAliases, true},  // recv-done
    {Opcode::kReduce, C::kCompute, kVariadic, K::kNone, R::kNone, {}, {}, F::kToApply, B::kDefines, false},  // reduce
    {Opcode::kReducePrecision, C::kElementwise, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // reduce-precision
    {Opcode::kReduceScatter, C::kCollective, kAtLeastOne, K::kReduceScatter, R::kNone, {}, {}, F::kToApply, B::kDefines, false},  // reduce-scatter
    {Opcode::kReduceWindow, C::kCompute, kVariadic, K::kNone, R::kNone, {}, {}, F::kToApply, B::kDefines, false},  // reduce-window
    {Opcode::kRemainder, C::kElementwise, 2, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // remainder
    {Opcode::kReplicaId, C::kSource, 0, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // replica-id
    {Opcode::kReshape, C::kDataMovement, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // reshape
    {Opcode::kReverse, C::kDataMovement, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // reverse
    {Opcode::kRng, C::kSource, kVariadic, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, true},  // rng
    {Opcode::kRngBitGenerator, C::kSource, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // rng-bit-generator
    {Opcode::kRngGetAndUpdateState, C::kSource, 0, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, true},  // rng-get-and-update-state
    {Opcode::kRoundNearestAfz, C::kElementwise, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // round-nearest-afz
    {Opcode::kRoundNearestEven, C::kElementwise, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // round-nearest-even
    {Opcode::kRsqrt, C::kElementwise, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // rsqrt
    {Opcode::kScaledDot, C::kCompute, 4, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // scaled-dot
    {Opcode::kScan, C::kCompute, kAtLeastOne, K::kNone, R::kNone, {}, {}, F::kToApply, B::kDefines, false},  // scan
    {Opcode::kScatter, C::kDataMovement, kVariadic, K::kNone, R::kNone, {}, {}, F::kToApply, B::kDefines, false},  // scatter
    {Opcode::kSelect, C::kElementwise, 3, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // select
    {Opcode::kSelectAndScatter, C::kCompute, 3, K::kNone, R::kNone, {}, {}, F::kSelectScatter, B::kDefines, false},  // select-and-scatter
    {Opcode::kSend, C::kPointToPoint, 2, K::kNone, R::kStart, Opcode::kSend, Opcode::kSendDone, F::kNone, B::kDefines, true},  // send
    {Opcode::kSendDone, C::kPointToPoint, 1, K::kNone, R::kDone, Opcode::kSend, Opcode::kSendDone, F::kNone, B::kAliases, true},  // send-done
    {Opcode::kSetDimensionSize, C::kOther, 2, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // set-dimension-size
    {Opcode::kShiftLeft, C::kElementwise, 2, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // shift-left
    {Opcode::kShiftRightArithmetic, C::kElementwise, 2, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // shift-right-arithmetic
    {Opcode::kShiftRightLogical, C::kElementwise, 2, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // shift-right-logical
    {Opcode::kSign, C::kElementwise, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // sign
    {Opcode::kSine, C::kElementwise, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // sine
    {Opcode::kSinh, C::kElementwise, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // sinh
    {Opcode::kSlice, C::kDataMovement, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // slice
    {Opcode::kSort, C::kCompute, kAtLeastOne, K::kNone, R::kNone, {}, {}, F::kToApply, B::kDefines, false},  // sort
    {Opcode::kSqrt, C::kElementwise, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // sqrt
    {Opcode::kStochasticConvert, C::kElementwise, 2, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // stochastic-convert
    {Opcode::kSubtract, C::kElementwise, 2, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // subtract
    {Opcode::kTan, C::kElementwise, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // tan
    {Opcode::kTanh, C::kElementwise, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // tanh
    {Opcode::kTopk, C::kCompute, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // topk
    {Opcode::kTranspose, C::kDataMovement, 1, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // transpose
    {Opcode::kTriangularSolve, C::kCompute, 2, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // triangular-solve
    {Opcode::kTuple, C::kTuple, kVariadic, K::kNone, R::kNone, {}, {}, F::kNone, B::kAliases, false},  // tuple
    {Opcode::kWhile, C::kControlFlow, 1, K::kNone, R::kNone, {}, {}, F::kConditionBody, B::kAliases, false},  // while
    {Opcode::kXor, C::kElementwise, 2, K::kNone, R::kNone, {}, {}, F::kNone, B::kDefines, false},  // xor
}};
// clang-format on

constexpr bool RowsInOpcodeOrder() {
  for (int i = 0; i < kNumOpcodes; ++i) {
    if (static_cast<int>(kTable[i].opcode) != i) return false;
  }
  return true;
}
static_assert(RowsInOpcodeOrder(), "opcode_traits.h rows out of order");
}  // namespace opcode_traits_internal

constexpr const OpcodeTraits& Traits(Opcode opcode) {
  return opcode_traits_internal::kTable[static_cast<uint8_t>(opcode)];
}

// The synchronous collective `opcode` performs: itself for a collective,
// all-gather for all-gather-start/-done, ...; nullopt for other ops.
constexpr std::optional<Opcode> SyncCollectiveOf(Opcode opcode) {
  switch (Traits(opcode).collective) {
    case CollectiveFamily::kNone:
      return std::nullopt;
    case CollectiveFamily::kAllGather:
      return Opcode::kAllGather;
    case CollectiveFamily::kAllReduce:
      return Opcode::kAllReduce;
    case CollectiveFamily::kReduceScatter:
      return Opcode::kReduceScatter;
    case CollectiveFamily::kAllToAll:
      return Opcode::kAllToAll;
    case CollectiveFamily::kRaggedAllToAll:
      return Opcode::kRaggedAllToAll;
    case CollectiveFamily::kCollectivePermute:
      return Opcode::kCollectivePermute;
    case CollectiveFamily::kCollectiveBroadcast:
      return Opcode::kCollectiveBroadcast;
  }
  return std::nullopt;
}

// Starts and dones of any async pair, send/recv included.
constexpr bool IsStartLike(Opcode opcode) {
  return Traits(opcode).async_role == AsyncRole::kStart;
}
constexpr bool IsDoneLike(Opcode opcode) {
  return Traits(opcode).async_role == AsyncRole::kDone;
}
// A native async half of a collective (all-gather-start, all-reduce-done,
// ...; not copy-start, async-start or send).
constexpr bool IsNativeCollectiveHalf(Opcode opcode) {
  const OpcodeTraits& t = Traits(opcode);
  return t.collective != CollectiveFamily::kNone &&
         (t.category == OpcodeCategory::kAsyncStart ||
          t.category == OpcodeCategory::kAsyncDone);
}

}  // namespace hloverlap

#endif  // HLOVERLAP_HLO_OPCODE_TRAITS_H_
