#include "hlo/opcode.h"

#include <array>

#include "absl/container/flat_hash_map.h"

namespace hloverlap {
namespace {

constexpr std::array<std::string_view, kNumOpcodes> kOpcodeNames = {
#define HLO_OPCODE(name, text) text,
#include "hlo/opcode_list.inc"
#undef HLO_OPCODE
};

const absl::flat_hash_map<std::string_view, Opcode>& OpcodeMap() {
  static const auto* map = [] {
    auto* m = new absl::flat_hash_map<std::string_view, Opcode>();
    for (int i = 0; i < kNumOpcodes; ++i) {
      m->emplace(kOpcodeNames[i], static_cast<Opcode>(i));
    }
    return m;
  }();
  return *map;
}

}  // namespace

std::string_view OpcodeName(Opcode opcode) {
  return kOpcodeNames[static_cast<int>(opcode)];
}

std::optional<Opcode> ParseOpcode(std::string_view text) {
  const auto& map = OpcodeMap();
  auto it = map.find(text);
  if (it == map.end()) return std::nullopt;
  return it->second;
}

bool IsElementwiseUnary(Opcode op) {
  switch (op) {
    case Opcode::kAbs:
    case Opcode::kAcos:
    case Opcode::kAcosh:
    case Opcode::kAsin:
    case Opcode::kAsinh:
    case Opcode::kAtanh:
    case Opcode::kCbrt:
    case Opcode::kCeil:
    case Opcode::kConvert:
    case Opcode::kBitcastConvert:
    case Opcode::kCosh:
    case Opcode::kCosine:
    case Opcode::kCountLeadingZeros:
    case Opcode::kErf:
    case Opcode::kExponential:
    case Opcode::kExponentialMinusOne:
    case Opcode::kFloor:
    case Opcode::kImag:
    case Opcode::kIsFinite:
    case Opcode::kLog:
    case Opcode::kLogPlusOne:
    case Opcode::kLogistic:
    case Opcode::kNegate:
    case Opcode::kNot:
    case Opcode::kPopcnt:
    case Opcode::kReal:
    case Opcode::kReducePrecision:
    case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven:
    case Opcode::kRsqrt:
    case Opcode::kSign:
    case Opcode::kSine:
    case Opcode::kSinh:
    case Opcode::kSqrt:
    case Opcode::kTan:
    case Opcode::kTanh:
    case Opcode::kCopy:
      return true;
    default:
      return false;
  }
}

bool IsElementwiseBinary(Opcode op) {
  switch (op) {
    case Opcode::kAdd:
    case Opcode::kAnd:
    case Opcode::kAtan2:
    case Opcode::kCompare:
    case Opcode::kComplex:
    case Opcode::kDivide:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kMulhi:
    case Opcode::kMultiply:
    case Opcode::kOr:
    case Opcode::kPower:
    case Opcode::kRemainder:
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightArithmetic:
    case Opcode::kShiftRightLogical:
    case Opcode::kSubtract:
    case Opcode::kXor:
    case Opcode::kStochasticConvert:
      return true;
    default:
      return false;
  }
}

bool IsElementwise(Opcode op) {
  return IsElementwiseUnary(op) || IsElementwiseBinary(op) ||
         op == Opcode::kSelect || op == Opcode::kClamp;
}

bool IsCollective(Opcode op) {
  switch (op) {
    case Opcode::kAllGather:
    case Opcode::kAllReduce:
    case Opcode::kReduceScatter:
    case Opcode::kAllToAll:
    case Opcode::kCollectivePermute:
    case Opcode::kCollectiveBroadcast:
    case Opcode::kRaggedAllToAll:
      return true;
    default:
      return false;
  }
}

bool IsAsyncStart(Opcode op) {
  switch (op) {
    case Opcode::kAllGatherStart:
    case Opcode::kAllReduceStart:
    case Opcode::kCollectivePermuteStart:
    case Opcode::kCopyStart:
    case Opcode::kAsyncStart:
      return true;
    default:
      return false;
  }
}

bool IsAsyncDone(Opcode op) {
  switch (op) {
    case Opcode::kAllGatherDone:
    case Opcode::kAllReduceDone:
    case Opcode::kCollectivePermuteDone:
    case Opcode::kCopyDone:
    case Opcode::kAsyncDone:
      return true;
    default:
      return false;
  }
}

}  // namespace hloverlap
