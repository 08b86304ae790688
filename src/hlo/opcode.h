// HLO opcodes and their text spellings.
#ifndef HLOVERLAP_HLO_OPCODE_H_
#define HLOVERLAP_HLO_OPCODE_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace hloverlap {

enum class Opcode : uint8_t {
#define HLO_OPCODE(name, text) name,
#include "hlo/opcode_list.inc"
#undef HLO_OPCODE
};

inline constexpr int kNumOpcodes = 0
#define HLO_OPCODE(name, text) +1
#include "hlo/opcode_list.inc"
#undef HLO_OPCODE
    ;

// "all-gather-start".
std::string_view OpcodeName(Opcode opcode);
// The opcode spelled `text`, or nullopt.
std::optional<Opcode> ParseOpcode(std::string_view text);

// Elementwise ops with one operand (abs, negate, exponential, convert, ...).
bool IsElementwiseUnary(Opcode opcode);
// Elementwise ops with two operands (add, multiply, compare, and, ...).
bool IsElementwiseBinary(Opcode opcode);
// Any elementwise op (unary, binary, select, clamp, compare, convert).
bool IsElementwise(Opcode opcode);
// Synchronous collectives: all-gather, all-reduce, reduce-scatter, all-to-all,
// collective-permute, collective-broadcast, ragged-all-to-all.
bool IsCollective(Opcode opcode);
// The -start half of a native async pair (all-gather-start, all-reduce-start,
// collective-permute-start, copy-start) or async-start.
bool IsAsyncStart(Opcode opcode);
// The -done half of an async pair (all-gather-done, ..., async-done).
bool IsAsyncDone(Opcode opcode);

}  // namespace hloverlap

#endif  // HLOVERLAP_HLO_OPCODE_H_
