// The backend config of a while instruction, typed.
//
// XLA writes what it knows about a loop into the while's backend_config as
// the JSON form of its WhileLoopBackendConfig proto:
//
//   %w = (s32[], f32[8]) while(%init), condition=%cond, body=%body,
//       backend_config={"dynamic_variables":[],
//                       "known_induction_variable":{"tuple_index":"0"},
//                       "known_init_step":{"init":"0","step":"1"},
//                       "known_trip_count":{"n":"8"}}
//
// The parser decodes the text of every while once into a WhileBackendConfig
// (InstructionAttributes::while_config); the printer encodes it. A config
// nobody changed prints exactly as it was read (byte for byte, whitespace
// included). A changed one prints its members in their original order,
// each untouched member's value verbatim (keys hloverlap does not know stay
// as they are), the changed ones in XLA's form (`{"n":"8"}`), new ones
// appended. A text that is not a JSON object stays in
// InstructionAttributes::backend_config, unread.
//
// Every pass that rewrites a loop records the new loop's counts with
// SetWhileTripCount, the one writer, which keeps every other key.
#ifndef HLOVERLAP_HLO_WHILE_BACKEND_CONFIG_H_
#define HLOVERLAP_HLO_WHILE_BACKEND_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hloverlap {

class Instruction;

struct KnownInitStep {
  int64_t init = 0;
  int64_t step = 0;
  bool operator==(const KnownInitStep&) const = default;
};

class WhileBackendConfig {
 public:
  WhileBackendConfig() = default;

  // Decodes a backend_config text; nullopt when it is not a JSON object.
  // Members whose values are malformed (`{"n":"oops"}`, a negative n) are
  // kept verbatim and read as absent.
  static std::optional<WhileBackendConfig> Decode(std::string_view text);

  // Whether the instruction has a config at all (decoded or set).
  bool present() const { return present_; }

  // known_trip_count.n: a non-negative 64-bit integer (quoted or not).
  std::optional<int64_t> known_trip_count() const { return trip_count_; }
  // known_induction_variable.tuple_index.
  std::optional<int64_t> known_induction_variable() const {
    return induction_variable_;
  }
  // known_init_step.{init,step}.
  std::optional<KnownInitStep> known_init_step() const { return init_step_; }
  // dynamic_variables: tuple indices (quoted or not); nullopt when absent
  // or malformed.
  const std::optional<std::vector<int64_t>>& dynamic_variables() const {
    return dynamic_variables_;
  }

  // Whether the object has a member `key` (well-formed or not).
  bool has_key(std::string_view key) const;

  // Setters (nullopt removes the member).
  void set_known_trip_count(std::optional<int64_t> n);
  void set_known_induction_variable(std::optional<int64_t> tuple_index);
  void set_known_init_step(std::optional<KnownInitStep> init_step);

  // The JSON text (see the header comment); "" when !present().
  std::string Encode() const;

  // Same encoded text.
  bool operator==(const WhileBackendConfig& other) const {
    return Encode() == other.Encode();
  }

 private:
  struct Member {
    std::string key;      // unescaped
    std::string raw_key;  // the key's JSON text, quotes included
    std::string value;    // the value's JSON text
  };
  void SetMember(std::string_view key, std::optional<std::string> value);

  bool present_ = false;
  std::vector<Member> members_;
  // The text as read, until a setter changes something.
  std::optional<std::string> verbatim_;
  std::optional<int64_t> trip_count_;
  std::optional<int64_t> induction_variable_;
  std::optional<KnownInitStep> init_step_;
  std::optional<std::vector<int64_t>> dynamic_variables_;
};

// The one writer of a rewritten loop's counts: sets known_trip_count to `n`
// and, where the config already has known_init_step, replaces it with
// `init_step` (or removes it when that is nullopt, so no stale promise
// survives); every other key stays. A while whose backend_config is a text
// that is not a JSON object is left as it is (there is no object to add a
// key to; the rewritten loop is still analysable).
void SetWhileTripCount(Instruction& while_instr, int64_t n,
                       std::optional<KnownInitStep> init_step = std::nullopt);

}  // namespace hloverlap

#endif  // HLOVERLAP_HLO_WHILE_BACKEND_CONFIG_H_
