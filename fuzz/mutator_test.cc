// Unit tests of the semantic fuzzer's mutations and its exact trip count.
#include "fuzz/mutator.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "hlo/parser.h"
#include "hlo/printer.h"
#include "hlo/verifier.h"
#include "interp/evaluator.h"
#include "interp/random_inputs.h"

namespace hloverlap::fuzz {
namespace {

// A counted loop with a collective, an invariant bound element and a
// counter read by a dynamic-slice.
constexpr char kSeed[] = R"(
HloModule seed, num_partitions=2

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}

%cond (p: (s32[], f32[4,4], s32[])) -> pred[] {
  %p = (s32[], f32[4,4], s32[]) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %n = s32[] get-tuple-element(%p), index=2
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body (q: (s32[], f32[4,4], s32[])) -> (s32[], f32[4,4], s32[]) {
  %q = (s32[], f32[4,4], s32[]) parameter(0)
  %i.1 = s32[] get-tuple-element(%q), index=0
  %a = f32[4,4] get-tuple-element(%q), index=1
  %n.1 = s32[] get-tuple-element(%q), index=2
  %ar = f32[4,4] all-reduce(%a), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=%add
  %zero = s32[] constant(0)
  %row = f32[1,4] dynamic-slice(%ar, %i.1, %zero), dynamic_slice_sizes={1,4}
  %row.1 = f32[4] reshape(%row)
  %rows = f32[4,4] broadcast(%row.1), dimensions={1}
  %sum = f32[4,4] add(%ar, %rows)
  %one = s32[] constant(1)
  %next = s32[] add(%i.1, %one)
  ROOT %t = (s32[], f32[4,4], s32[]) tuple(%next, %sum, %n.1)
}

ENTRY %main (x: f32[4,4]) -> (s32[], f32[4,4]) {
  %x = f32[4,4] parameter(0)
  %c0 = s32[] constant(0)
  %c3 = s32[] constant(3)
  %init = (s32[], f32[4,4], s32[]) tuple(%c0, %x, %c3)
  %w = (s32[], f32[4,4], s32[]) while(%init), condition=%cond, body=%body, backend_config={"known_trip_count":{"n":"3"}}
  %i.2 = s32[] get-tuple-element(%w), index=0
  %r = f32[4,4] get-tuple-element(%w), index=1
  ROOT %out = (s32[], f32[4,4]) tuple(%i.2, %r)
}
)";

std::unique_ptr<Module> Parse(std::string_view text) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : nullptr;
}

Instruction* FindWhile(Module& m) {
  for (const auto& c : m.computations()) {
    for (const auto& i : c->instructions()) {
      if (i->opcode() == Opcode::kWhile) return i.get();
    }
  }
  return nullptr;
}

// A module with one loop `for (i = START; i DIR BOUND; i += STEP)` over a
// counter of type T.
std::string CountedLoop(std::string_view t, std::string_view start,
                        std::string_view step, std::string_view bound,
                        std::string_view dir = "LT") {
  std::string s = R"(
HloModule m
%c (p: (T[])) -> pred[] {
  %p = (T[]) parameter(0)
  %i = T[] get-tuple-element(%p), index=0
  %b = T[] constant(BOUND)
  ROOT %lt = pred[] compare(%i, %b), direction=DIR
}
%b (q: (T[])) -> (T[]) {
  %q = (T[]) parameter(0)
  %i = T[] get-tuple-element(%q), index=0
  %s = T[] constant(STEP)
  %n = T[] add(%i, %s)
  ROOT %t = (T[]) tuple(%n)
}
ENTRY %e () -> (T[]) {
  START_DEF
  %init = (T[]) tuple(%start)
  ROOT %w = (T[]) while(%init), condition=%c, body=%b
}
)";
  auto replace = [&](std::string_view from, std::string_view to) {
    for (size_t p; (p = s.find(from)) != std::string::npos;) {
      s.replace(p, from.size(), to);
    }
  };
  replace("START_DEF", start);
  replace("BOUND", bound);
  replace("STEP", step);
  replace("DIR", dir);
  replace("T[", std::string(t) + "[");
  return s;
}

TEST(ExactTripCount, WrapsAtTheCounterWidth) {
  // s32 start add(-2147483647, -2147483647) = 2, step 3, LT 4: 1 iteration.
  auto m = Parse(CountedLoop("s32",
                             "%a = s32[] constant(-2147483647)\n"
                             "  %start = s32[] add(%a, %a)",
                             "3", "4"));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(ExactTripCount(*FindWhile(*m)), 1);
  // The same start from a convert of an s64 constant.
  m = Parse(CountedLoop("s32",
                        "%a = s64[] constant(4294967298)\n"
                        "  %start = s32[] convert(%a)",
                        "3", "4"));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(ExactTripCount(*FindWhile(*m)), 1);
  // s8 from 120 by 5 while LT 127: wraps, 155 iterations.
  m = Parse(CountedLoop("s8", "%start = s8[] constant(120)", "5", "127"));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(ExactTripCount(*FindWhile(*m)), 155);
  // u64 from 2^64-1 while LT 4 (unsigned): 0 iterations.
  m = Parse(CountedLoop("u64", "%start = u64[] constant(18446744073709551615)",
                        "1", "4"));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(ExactTripCount(*FindWhile(*m)), 0);
  // partition-id * 0 + 1, LE 4: 4 iterations.
  m = Parse(CountedLoop("s32",
                        "%pid = u32[] partition-id()\n"
                        "  %cv = s32[] convert(%pid)\n"
                        "  %z = s32[] constant(0)\n"
                        "  %m0 = s32[] multiply(%cv, %z)\n"
                        "  %o = s32[] constant(1)\n"
                        "  %start = s32[] add(%m0, %o)",
                        "1", "4", "LE"));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(ExactTripCount(*FindWhile(*m)), 4);
  // Step 0 never ends: no count.
  m = Parse(CountedLoop("s32", "%start = s32[] constant(0)", "0", "4"));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(ExactTripCount(*FindWhile(*m)), std::nullopt);
}

TEST(ExactTripCount, ResolvesAnInvariantBound) {
  auto m = Parse(kSeed);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(ExactTripCount(*FindWhile(*m)), 3);
}

TEST(Mutator, SameSeedSameMutant) {
  for (uint64_t seed = 0; seed < 20; ++seed) {
    std::string text[2];
    for (std::string& t : text) {
      auto m = Parse(kSeed);
      ASSERT_NE(m, nullptr);
      Rng rng(seed);
      MutateModule(*m, rng, AllMutationKinds());
      t = PrintModule(*m);
    }
    EXPECT_EQ(text[0], text[1]) << "seed " << seed;
  }
}

// Every kind applies to the seed and leaves a module that verifies.
TEST(Mutator, EveryKindAppliesAndVerifies) {
  for (MutationKind kind : AllMutationKinds()) {
    int applied = 0;
    for (uint64_t seed = 0; seed < 50; ++seed) {
      auto m = Parse(kSeed);
      ASSERT_NE(m, nullptr);
      Rng rng(seed);
      std::optional<AppliedMutation> a = ApplyMutation(*m, kind, rng);
      if (!a) continue;
      ++applied;
      absl::Status s = VerifyModule(*m);
      EXPECT_TRUE(s.ok()) << MutationKindName(kind) << " seed " << seed << ": "
                          << a->description << ": " << s << "\n"
                          << PrintModule(*m);
      // And the printed text parses again.
      EXPECT_TRUE(ParseHloModule(PrintModule(*m)).ok())
          << MutationKindName(kind) << " seed " << seed;
    }
    EXPECT_GT(applied, 25) << MutationKindName(kind);
  }
}

// An inner loop starting from its outer loop's state, with a (true)
// known_trip_count nothing can prove: when a mutation changes the outer
// loop's state, the promise may no longer hold and is removed.
constexpr char kNested[] = R"(
HloModule nested

%ic (p: (s32[], f32[2])) -> pred[] {
  %p = (s32[], f32[2]) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %n = s32[] constant(3)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%ib (q: (s32[], f32[2])) -> (s32[], f32[2]) {
  %q = (s32[], f32[2]) parameter(0)
  %i = s32[] get-tuple-element(%q), index=0
  %v = f32[2] get-tuple-element(%q), index=1
  %one = s32[] constant(1)
  %next = s32[] add(%i, %one)
  %w = f32[2] add(%v, %v)
  ROOT %t = (s32[], f32[2]) tuple(%next, %w)
}

%oc (p: (s32[], s32[], s32[], f32[2])) -> pred[] {
  %p = (s32[], s32[], s32[], f32[2]) parameter(0)
  %j = s32[] get-tuple-element(%p), index=0
  %m = s32[] constant(2)
  ROOT %lt = pred[] compare(%j, %m), direction=LT
}

%ob (q: (s32[], s32[], s32[], f32[2])) -> (s32[], s32[], s32[], f32[2]) {
  %q = (s32[], s32[], s32[], f32[2]) parameter(0)
  %j = s32[] get-tuple-element(%q), index=0
  %s = s32[] get-tuple-element(%q), index=1
  %e = s32[] get-tuple-element(%q), index=2
  %v = f32[2] get-tuple-element(%q), index=3
  %init = (s32[], f32[2]) tuple(%s, %v)
  %inner = (s32[], f32[2]) while(%init), condition=%ic, body=%ib, backend_config={"known_trip_count":{"n":"3"}}
  %r = f32[2] get-tuple-element(%inner), index=1
  %one = s32[] constant(1)
  %next = s32[] add(%j, %one)
  ROOT %t = (s32[], s32[], s32[], f32[2]) tuple(%next, %s, %e, %r)
}

ENTRY %main (x: f32[2]) -> f32[2] {
  %x = f32[2] parameter(0)
  %zero = s32[] constant(0)
  %five = s32[] constant(5)
  %init = (s32[], s32[], s32[], f32[2]) tuple(%zero, %zero, %five, %x)
  %outer = (s32[], s32[], s32[], f32[2]) while(%init), condition=%oc, body=%ob
  ROOT %r = f32[2] get-tuple-element(%outer), index=3
}
)";

// The while of kNested's outer body.
const Instruction* InnerLoop(const Module& m) {
  const Instruction* inner = nullptr;
  for (const auto& i : m.FindComputation("ob")->instructions()) {
    if (i->opcode() == Opcode::kWhile) inner = i.get();
  }
  return inner;
}

TEST(Mutator, RemovesPromisesOfLoopsNestedInAChangedLoop) {
  int outer_root_changes = 0;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    auto m = Parse(kNested);
    ASSERT_NE(m, nullptr);
    Rng rng(seed);
    std::optional<AppliedMutation> a =
        ApplyMutation(*m, MutationKind::kTupleDuplicate, rng);
    const std::string change =
        absl::StrCat("body root ", m->FindComputation("ob")->root()->name(),
                     ": element 1 := element 2");
    if (!a || a->description.rfind(change, 0) != 0) continue;
    // The inner loop now starts from 5 in the second outer iteration.
    ++outer_root_changes;
    const Instruction* inner = InnerLoop(*m);
    ASSERT_NE(inner, nullptr);
    EXPECT_EQ(BackendConfigTripCount(*inner), std::nullopt) << a->description;
    // Removed from the while's decoded config, so the mutant as printed (and
    // parsed again by the oracle) carries no promise either.
    EXPECT_EQ(PrintModule(*m).find("known_trip_count"), std::string::npos)
        << a->description;
  }
  EXPECT_GT(outer_root_changes, 0);
}

// The known-trip-count mutation edits the while's decoded backend config:
// what it describes is what the printed mutant says.
TEST(Mutator, KnownTripCountEditsArePrinted) {
  int set = 0, removed = 0;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    auto m = Parse(kNested);
    ASSERT_NE(m, nullptr);
    Rng rng(seed);
    std::optional<AppliedMutation> a =
        ApplyMutation(*m, MutationKind::kKnownTripCount, rng);
    if (!a) continue;
    const Instruction* inner = InnerLoop(*m);
    ASSERT_NE(inner, nullptr);
    auto again = ParseHloModule(PrintModule(*m));
    ASSERT_TRUE(again.ok()) << a->description;
    const Instruction* reparsed = InnerLoop(**again);
    ASSERT_NE(reparsed, nullptr);
    EXPECT_EQ(BackendConfigTripCount(*reparsed), BackendConfigTripCount(*inner))
        << a->description;
    if (a->description.find(inner->name()) == std::string::npos) continue;
    if (BackendConfigTripCount(*inner)) {
      ++set;
    } else {
      ++removed;
    }
  }
  EXPECT_GT(set + removed, 0);
}

// The fuzzer's exact count agrees with the reference interpreter on mutated
// loops (two independent implementations of HLO integer semantics).
TEST(Mutator, ExactTripCountMatchesTheInterpreter) {
  int compared = 0;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    auto m = Parse(CountedLoop("s32", "%start = s32[] constant(0)", "1", "5"));
    ASSERT_NE(m, nullptr);
    Rng rng(seed);
    MutateModule(
        *m, rng,
        {MutationKind::kBound, MutationKind::kStep, MutationKind::kStart,
         MutationKind::kCounterType, MutationKind::kDirection},
        3);
    ASSERT_TRUE(VerifyModule(*m).ok()) << PrintModule(*m);
    std::optional<int64_t> exact = ExactTripCount(*FindWhile(*m), 600);
    interp::InterpreterOptions o;
    o.max_iterations = 600;
    absl::StatusOr<std::unique_ptr<interp::Interpreter>> in =
        interp::Interpreter::Create(*m, o);
    ASSERT_TRUE(in.ok()) << in.status();
    interp::RunStats stats;
    absl::StatusOr<std::vector<interp::Value>> r = (*in)->Run({{}}, &stats);
    if (!exact) {
      EXPECT_FALSE(r.ok()) << "no exact count but the loop ends:\n"
                           << PrintModule(*m);
      continue;
    }
    ASSERT_TRUE(r.ok()) << r.status() << "\n" << PrintModule(*m);
    EXPECT_EQ(stats.while_iterations, *exact) << PrintModule(*m);
    ++compared;
  }
  EXPECT_GT(compared, 100);
}

}  // namespace
}  // namespace hloverlap::fuzz
