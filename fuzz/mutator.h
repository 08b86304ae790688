// Structure-preserving mutations of small HLO modules, for the semantic
// fuzzer (semantic_fuzzer.cc).
//
// Every mutation edits a parsed module through the IR API and keeps it a
// well-formed program (the fuzzer still verifies the printed result and
// drops the rare mutant that does not verify). Most target while loops of
// the counted form the passes recognise,
//
//   cond { p = parameter(0); i = gte(p), index=k
//          ROOT c = pred[] compare(i, BOUND), direction=LT }
//   body { p = parameter(0); i = gte(p), index=k
//          next = add(i, STEP)  ...  ROOT tuple(..., next, ...) }
//   w = while(tuple(..., START, ...)), condition=cond, body=body
//
// and change exactly the facts a trip-count analysis must get right:
//
//   kBound          BOUND := a new value (near 0, near the type's limits,
//                   or start + n * step for a chosen trip count n), as a
//                   constant or an expression (see kStart)
//   kStep           STEP := a new value (either sign, rarely 0)
//   kStart          START := a new value, written as a constant, add/
//                   subtract of two wrapping constants, a convert of a
//                   constant of another width or signedness, a negate, or
//                   `convert(partition-id) * 0 + v`
//   kCounterType    the counter's integer type := s8 ... u64, changed on
//                   every instruction of its chain (state tuple element,
//                   parameters, get-tuple-elements, the update, the
//                   compare, START/STEP/BOUND); other users of the counter
//                   get a convert back to the old type. Values are kept
//                   (wrapped) or moved near the new type's limits.
//   kDirection      the compare's direction, its operand order (flipped
//                   direction, same meaning), or add <-> subtract of the
//                   negated step
//   kKnownTripCount backend_config known_trip_count removed, set to the
//                   exact count, or set to a contradicting one
//   kShareBody      a second while with the same condition and body runs
//                   after the first, its counter reset to a new start
//   kControlDep     a control edge between two instructions of a
//                   computation (earlier -> later in post order: acyclic)
//   kCollectiveUser a collective gets a second user: added to a state
//                   element of its shape, stored as a state element, or a
//                   dead copy
//   kNest           a loop is wrapped in an outer counted loop (trip count
//                   0..3), its counter reset every outer iteration and the
//                   rest of its state carried
//   kTupleDuplicate an operand of a body root, init or entry root tuple is
//                   replaced by another operand of the same shape, so one
//                   value appears twice
//   kCallStart      a counted loop moves into a new computation that a
//                   `call` calls with the loop's initial state and its
//                   counter's start (the value it had) as a second operand,
//                   so the analysis must read the start through the call
//
// A known_trip_count is a promise of the module's author. Where a mutation
// changes a loop whose count the fuzzer cannot compute exactly (say its
// start is a parameter), a known_trip_count on it is removed so that no
// mutant carries a broken promise the fuzzer did not mean to test; where
// the count can be computed (ExactTripCount), a contradicting value stays:
// that is the case the passes must detect.
#ifndef HLOVERLAP_FUZZ_MUTATOR_H_
#define HLOVERLAP_FUZZ_MUTATOR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hlo/module.h"

namespace hloverlap::fuzz {

// SplitMix64: small, fast, and the same sequence on every platform.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next();
  // Uniform in [0, n) (n > 0).
  uint64_t Below(uint64_t n) { return Next() % n; }
  // Uniform in [lo, hi].
  int64_t Range(int64_t lo, int64_t hi);
  bool Chance(double p) { return (Next() >> 11) * 0x1.0p-53 < p; }
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[Below(v.size())];
  }

 private:
  uint64_t state_;
};

uint64_t MixSeed(uint64_t a, uint64_t b);

enum class MutationKind {
  kBound,
  kStep,
  kStart,
  kCounterType,
  kDirection,
  kKnownTripCount,
  kShareBody,
  kControlDep,
  kCollectiveUser,
  kNest,
  kTupleDuplicate,
  kCallStart,
};
inline constexpr int kNumMutationKinds = 12;

std::string_view MutationKindName(MutationKind kind);
std::optional<MutationKind> ParseMutationKind(std::string_view name);
std::vector<MutationKind> AllMutationKinds();

// One applied mutation: its kind and what it did ("bound of while_a: s32
// 4 -> 2147483647").
struct AppliedMutation {
  MutationKind kind;
  std::string description;
};

// Applies one mutation of `kind` at a random applicable place. Returns
// nullopt (module unchanged) when the module has no place for it.
std::optional<AppliedMutation> ApplyMutation(Module& module, MutationKind kind,
                                             Rng& rng);

// Applies 1..max_mutations mutations of kinds drawn from `kinds`, then
// removes known_trip_count promises the mutations may have broken (see the
// header comment). Returns what was applied (empty: nothing applicable).
std::vector<AppliedMutation> MutateModule(
    Module& module, Rng& rng, const std::vector<MutationKind>& kinds,
    int max_mutations = 3);

// The exact number of iterations of a counted while loop (the form above)
// whose START, STEP and BOUND fold to constants (through convert, negate,
// add, subtract, multiply, `x * 0`, and invariant state elements), with
// every value wrapped to its type's width and the comparison in the type's
// order; nullopt when something does not fold or the loop runs more than
// `cap` iterations. An independent reference for the passes' analysis.
std::optional<int64_t> ExactTripCount(const Instruction& while_instr,
                                      int64_t cap = int64_t{1} << 20);

// The state index of the counter of a counted while loop (the form above),
// or nullopt.
std::optional<int64_t> CounterIndex(const Instruction& while_instr);

// The known_trip_count of a while's backend_config, if present and a
// non-negative number.
std::optional<int64_t> BackendConfigTripCount(const Instruction& while_instr);

}  // namespace hloverlap::fuzz

#endif  // HLOVERLAP_FUZZ_MUTATOR_H_
