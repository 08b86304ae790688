#include "hlo/opcode.h"

#include <array>

#include "absl/container/flat_hash_map.h"
#include "hlo/opcode_traits.h"

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
  return Traits(op).category == OpcodeCategory::kElementwise &&
         Traits(op).arity == 1;
}

bool IsElementwiseBinary(Opcode op) {
  return Traits(op).category == OpcodeCategory::kElementwise &&
         Traits(op).arity == 2;
}

bool IsElementwise(Opcode op) {
  return Traits(op).category == OpcodeCategory::kElementwise;
}

bool IsCollective(Opcode op) {
  return Traits(op).category == OpcodeCategory::kCollective;
}

bool IsAsyncStart(Opcode op) {
  return Traits(op).category == OpcodeCategory::kAsyncStart;
}

bool IsAsyncDone(Opcode op) {
  return Traits(op).category == OpcodeCategory::kAsyncDone;
}

}  // namespace hloverlap
