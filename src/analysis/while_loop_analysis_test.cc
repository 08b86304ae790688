#include "analysis/while_loop_analysis.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "hlo/computation.h"
#include "hlo/parser.h"

namespace hloverlap {
namespace {

std::unique_ptr<Module> Parse(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status() << "\n" << text;
  return m.ok() ? *std::move(m) : nullptr;
}

struct Loop {
  std::string type = "s32";
  std::string start_lines = "  start = s32[] constant(0)\n";  // defines start
  std::string step = "1";
  std::string update = "add";
  std::string direction = "LT";
  std::string bound = "4";
  std::string config;  // ", backend_config=..."
};

// cond: compare(i, bound); body: next = update(i, step).
std::string LoopText(const Loop& l) {
  const std::string& t = l.type;
  return "HloModule m\n\ncond {\n  p = (" + t + "[], f32[]) parameter(0)\n" +
         "  i = " + t + "[] get-tuple-element(p), index=0\n" + "  n = " + t +
         "[] constant(" + l.bound + ")\n" +
         "  ROOT c = pred[] compare(i, n), direction=" + l.direction +
         "\n}\n\nbody {\n  p = (" + t + "[], f32[]) parameter(0)\n" +
         "  i = " + t + "[] get-tuple-element(p), index=0\n" +
         "  x = f32[] get-tuple-element(p), index=1\n" + "  s = " + t +
         "[] constant(" + l.step + ")\n" + "  next = " + t + "[] " + l.update +
         "(i, s)\n" + "  y = f32[] negate(x)\n" + "  ROOT t = (" + t +
         "[], f32[]) tuple(next, y)\n}\n\nENTRY main {\n" + l.start_lines +
         "  x0 = f32[] parameter(0)\n" + "  init = (" + t +
         "[], f32[]) tuple(start, x0)\n" + "  ROOT w = (" + t +
         "[], f32[]) while(init), condition=cond, body=body" + l.config +
         "\n}\n";
}

WhileLoopInfo Analyze(const Module& m) {
  return AnalyzeWhileLoop(*m.entry()->root());
}

TEST(WhileLoopAnalysisTest, CountsTheUsualLoop) {
  std::unique_ptr<Module> m = Parse(LoopText(Loop{}));
  ASSERT_NE(m, nullptr);
  WhileLoopInfo info = Analyze(*m);
  EXPECT_EQ(info.trip_count, 4);
  EXPECT_TRUE(info.trip_count_proven());
  EXPECT_TRUE(info.no_wrap);
  EXPECT_FALSE(info.counts_down);
  EXPECT_EQ(info.iv_index, 0);
  EXPECT_EQ(info.IvAt(3), IntValue::FromInt64(PrimitiveType::kS32, 3));
  EXPECT_EQ(info.StepTimes(2), IntValue::FromInt64(PrimitiveType::kS32, 2));
  EXPECT_EQ(info.WrapReason(), "");
  EXPECT_EQ(WhileTripCount(*m->entry()->root()), 4);
}

// Issue 13 item 1: the start folds to 2 in s32 (not -4294967294).
TEST(WhileLoopAnalysisTest, StartWrapsInItsOwnType) {
  Loop l;
  l.start_lines =
      "  a = s32[] constant(-2147483647)\n  start = s32[] add(a, a)\n";
  l.step = "3";
  std::unique_ptr<Module> m = Parse(LoopText(l));
  ASSERT_NE(m, nullptr);
  WhileLoopInfo info = Analyze(*m);
  EXPECT_EQ(info.start->ToString(), "2");
  EXPECT_EQ(info.trip_count, 1);

  l.start_lines =
      "  a = s64[] constant(-8589934590)\n  start = s32[] convert(a)\n";
  m = Parse(LoopText(l));
  ASSERT_NE(m, nullptr);
  info = Analyze(*m);
  EXPECT_EQ(info.start->ToString(), "2");
  EXPECT_EQ(info.trip_count, 1);
}

// s8 from 120 by 5 while < 127: 120, 125, then wraps to -126 and counts up
// again: 155 iterations, and the counter wraps.
TEST(WhileLoopAnalysisTest, WrappingCounterIsCountedExactly) {
  Loop l;
  l.type = "s8";
  l.start_lines = "  start = s8[] constant(120)\n";
  l.step = "5";
  l.bound = "127";
  std::unique_ptr<Module> m = Parse(LoopText(l));
  ASSERT_NE(m, nullptr);
  WhileLoopInfo info = Analyze(*m);
  EXPECT_EQ(info.trip_count, 155);
  EXPECT_TRUE(info.trip_count_proven());
  EXPECT_FALSE(info.no_wrap);
  EXPECT_NE(info.WrapReason().find("s8 induction variable wraps around"),
            std::string::npos)
      << info.WrapReason();
  EXPECT_EQ(info.IvAt(2)->ToString(), "-126");
  EXPECT_EQ(info.IvAt(154)->ToString(), "122");  // the last iteration
  EXPECT_EQ(info.IvAt(155)->ToString(), "127");  // ends the loop
}

// Issue 13 item 2: 2^64-1 < 4 is false in u64.
TEST(WhileLoopAnalysisTest, UnsignedValuesAboveTwoToThe63AreLarge) {
  Loop l;
  l.type = "u64";
  l.start_lines = "  start = u64[] constant(18446744073709551615)\n";
  std::unique_ptr<Module> m = Parse(LoopText(l));
  ASSERT_NE(m, nullptr);
  WhileLoopInfo info = Analyze(*m);
  EXPECT_EQ(info.trip_count, 0);
  EXPECT_TRUE(info.trip_count_proven());

  // Counting down from 2^63 + 2 while > 2^63 - 1 (unsigned): 3 trips.
  l.start_lines = "  start = u64[] constant(9223372036854775810)\n";
  l.update = "subtract";
  l.direction = "GT";
  l.bound = "9223372036854775807";
  m = Parse(LoopText(l));
  ASSERT_NE(m, nullptr);
  info = Analyze(*m);
  EXPECT_EQ(info.trip_count, 3);
  EXPECT_TRUE(info.no_wrap);
  EXPECT_TRUE(info.counts_down);
  // Not representable in int64: no known_init_step for it.
  EXPECT_EQ(info.KnownInitStepFrom(0), std::nullopt);
}

TEST(WhileLoopAnalysisTest, EveryWidthAndDirection) {
  struct Case {
    const char* type;
    const char* start;
    const char* update;
    const char* step;
    const char* direction;
    const char* bound;
    std::optional<int64_t> trips;
  };
  const Case cases[] = {
      {"s8", "-128", "add", "1", "LT", "127", 255},
      {"s8", "0", "add", "1", "LE", "127", std::nullopt},  // always true
      {"u8", "1", "add", "1", "NE", "0", 255},  // 1..255, then wraps to 0
      {"u8", "250", "add", "3", "GE", "5", 2},  // 250, 253, then 0
      {"s16", "10", "subtract", "4", "GE", "-3", 4},
      {"u16", "1", "add", "2", "NE", "0", std::nullopt},  // odd forever
      {"s32", "0", "add", "-1", "LT", "10", int64_t{2147483649}},
      {"u32", "5", "subtract", "1", "LE", "5", 6},  // 5..0, then 2^32-1
      {"s64", "0", "add", "1", "EQ", "0", 1},
      {"s64", "3", "add", "0", "LT", "4", std::nullopt},  // step 0
      {"u64", "0", "add", "1", "LT", "0", 0},
  };
  for (const Case& c : cases) {
    Loop l;
    l.type = c.type;
    l.start_lines =
        std::string("  start = ") + c.type + "[] constant(" + c.start + ")\n";
    l.update = c.update;
    l.step = c.step;
    l.direction = c.direction;
    l.bound = c.bound;
    std::unique_ptr<Module> m = Parse(LoopText(l));
    ASSERT_NE(m, nullptr);
    WhileLoopInfo info = Analyze(*m);
    EXPECT_EQ(info.trip_count, c.trips)
        << c.type << " " << c.start << " " << c.update << " " << c.step << " "
        << c.direction << " " << c.bound << ": " << info.missing;
    if (!c.trips.has_value()) EXPECT_FALSE(info.missing.empty());
  }
}

// Issue 13 item 3: what the condition proves wins over known_trip_count.
TEST(WhileLoopAnalysisTest, ContradictedKnownTripCount) {
  Loop l;
  l.start_lines =
      "  pid = u32[] partition-id()\n  pid_s = s32[] convert(pid)\n"
      "  zero = s32[] constant(0)\n  start = s32[] multiply(pid_s, zero)\n";
  l.config = R"(, backend_config={"known_trip_count":{"n":"5"}})";
  std::unique_ptr<Module> m = Parse(LoopText(l));
  ASSERT_NE(m, nullptr);
  WhileLoopInfo info = Analyze(*m);
  EXPECT_EQ(info.trip_count, 4);
  EXPECT_TRUE(info.trip_count_proven());
  EXPECT_EQ(info.known_trip_count, 5);
  EXPECT_NE(info.contradiction.find("known_trip_count 5 contradicts the loop "
                                    "condition, which proves 4 iterations"),
            std::string::npos)
      << info.contradiction;

  // Agreeing: no warning.
  l.config = R"(, backend_config={"known_trip_count":{"n":"4"}})";
  m = Parse(LoopText(l));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(Analyze(*m).contradiction, "");

  // A loop that never ends contradicts any count: unknown, with a warning.
  l.step = "0";
  m = Parse(LoopText(l));
  ASSERT_NE(m, nullptr);
  info = Analyze(*m);
  EXPECT_EQ(info.trip_count, std::nullopt);
  EXPECT_NE(info.contradiction.find("never ends"), std::string::npos);
}

// A loop in a called computation whose counter starts at the computation's
// parameter 1; `entry_lines` are the entry's call lines (operand 1 is the
// start each passes).
std::string CalledLoopText(const std::string& entry_lines) {
  return R"(HloModule m

cond {
  p = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(7)
  ROOT c = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[] get-tuple-element(p), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  y = f32[] negate(x)
  ROOT t = (s32[], f32[]) tuple(next, y)
}

layer {
  x = f32[] parameter(0)
  start = s32[] parameter(1)
  init = (s32[], f32[]) tuple(start, x)
  w = (s32[], f32[]) while(init), condition=cond, body=body, backend_config={"known_trip_count":{"n":"8"}}
  ROOT out = f32[] get-tuple-element(w), index=1
}

ENTRY main {
  x0 = f32[] parameter(0)
  s0 = s32[] parameter(1)
  zero = s32[] constant(0)
  two = s32[] constant(2)
)" + entry_lines +
         "}\n";
}

WhileLoopInfo AnalyzeCalledLoop(const Module& m) {
  const Computation* layer = m.FindComputation("layer");
  const Instruction* w = nullptr;
  for (const auto& i : layer->instructions()) {
    if (i->opcode() == Opcode::kWhile) w = i.get();
  }
  return AnalyzeWhileLoop(*w);
}

// The start is read through the calls of the loop's computation: one call,
// or several that pass the same constant, fold it; calls that pass
// different constants, or an entry parameter, do not.
TEST(WhileLoopAnalysisTest, StartFoldsThroughCallOperands) {
  std::unique_ptr<Module> m =
      Parse(CalledLoopText("  ROOT c = f32[] call(x0, two), to_apply=layer\n"));
  ASSERT_NE(m, nullptr);
  WhileLoopInfo info = AnalyzeCalledLoop(*m);
  EXPECT_TRUE(info.trip_count_proven());
  EXPECT_EQ(info.trip_count, 5);
  EXPECT_EQ(info.IvAt(0), IntValue::FromInt64(PrimitiveType::kS32, 2));
  EXPECT_NE(info.contradiction.find("known_trip_count 8 contradicts"),
            std::string::npos)
      << info.contradiction;

  // Two calls agreeing on the start.
  m = Parse(
      CalledLoopText("  c0 = f32[] call(x0, zero), to_apply=layer\n"
                     "  ROOT c = f32[] call(c0, zero), to_apply=layer\n"));
  ASSERT_NE(m, nullptr);
  info = AnalyzeCalledLoop(*m);
  EXPECT_TRUE(info.trip_count_proven());
  EXPECT_EQ(info.trip_count, 7);

  // Two calls with different starts: the loop runs 7 and 5 times; no one
  // count is proven, and the promise is kept as XLA keeps it.
  m =
      Parse(CalledLoopText("  c0 = f32[] call(x0, zero), to_apply=layer\n"
                           "  ROOT c = f32[] call(c0, two), to_apply=layer\n"));
  ASSERT_NE(m, nullptr);
  info = AnalyzeCalledLoop(*m);
  EXPECT_FALSE(info.trip_count_proven());
  EXPECT_EQ(info.trip_count_source, TripCountSource::kKnownTripCount);
  EXPECT_EQ(info.trip_count, 8);
  EXPECT_EQ(info.contradiction, "");
  EXPECT_EQ(info.start_parameter, nullptr);

  // The start is an entry parameter passed through the call: the count
  // rests on the promise, not checked, with a start that keeps it.
  m = Parse(CalledLoopText("  ROOT c = f32[] call(x0, s0), to_apply=layer\n"));
  ASSERT_NE(m, nullptr);
  info = AnalyzeCalledLoop(*m);
  EXPECT_FALSE(info.trip_count_proven());
  EXPECT_EQ(info.trip_count, 8);
  EXPECT_EQ(info.unchecked, "the start is a parameter");
  ASSERT_NE(info.start_parameter, nullptr);
  EXPECT_EQ(info.start_parameter->name(), "s0");
  EXPECT_EQ(info.promised_start, IntValue::FromInt64(PrimitiveType::kS32, -1));
}

// Not analysable: known_trip_count is the promise.
TEST(WhileLoopAnalysisTest, UnanalysableLoopUsesKnownTripCount) {
  Loop l;
  l.start_lines =
      "  pid = u32[] partition-id()\n  start = s32[] convert(pid)\n";
  l.config = R"(, backend_config={"known_trip_count":{"n":"3"}})";
  std::unique_ptr<Module> m = Parse(LoopText(l));
  ASSERT_NE(m, nullptr);
  WhileLoopInfo info = Analyze(*m);
  EXPECT_EQ(info.trip_count, 3);
  EXPECT_EQ(info.trip_count_source, TripCountSource::kKnownTripCount);
  EXPECT_FALSE(info.has_induction_variable());
  EXPECT_EQ(info.contradiction, "");
  EXPECT_NE(info.missing.find("start value"), std::string::npos);
}

// XLA's optimized dumps: fused compare and fused add, the start folded in
// a fusion without operands, the bound in a loop-invariant element.
TEST(WhileLoopAnalysisTest, FusedConditionAndUpdate) {
  const char* text = R"(
HloModule fused

fused_compare {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}

fused_add {
  x = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT add = s32[] add(x, one)
}

fused_start {
  z = s32[] constant(0)
  one = s32[] constant(1)
  ROOT s = s32[] add(z, one)
}

cond {
  p = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=1
  ROOT f = pred[] fusion(i, n), kind=kLoop, calls=fused_compare
}

body {
  p = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=1
  c = s32[] copy(i)
  f1 = s32[] fusion(c), kind=kLoop, calls=fused_add
  f2 = s32[] fusion(f1), kind=kLoop, calls=fused_add
  ROOT t = (s32[], s32[]) tuple(f2, n)
}

ENTRY main {
  start = s32[] fusion(), kind=kLoop, calls=fused_start
  seven = s32[] constant(7)
  tup = (s32[], s32[]) tuple(start, seven)
  i0 = s32[] get-tuple-element(tup), index=0
  init = (s32[], s32[]) tuple(i0, seven)
  ROOT w = (s32[], s32[]) while(init), condition=cond, body=body
}
)";
  std::unique_ptr<Module> m = Parse(text);
  ASSERT_NE(m, nullptr);
  WhileLoopInfo info = Analyze(*m);
  EXPECT_EQ(info.trip_count, 3) << info.missing;  // 1, 3, 5
  EXPECT_EQ(info.step->ToString(), "2");
  EXPECT_EQ(info.bound->ToString(), "7");
}

TEST(WhileLoopAnalysisTest, ValuesInAnIteration) {
  Loop l;
  l.start_lines = "  start = s32[] constant(10)\n";
  l.step = "-3";
  l.direction = "GT";
  l.bound = "0";
  std::unique_ptr<Module> m = Parse(LoopText(l));
  ASSERT_NE(m, nullptr);
  WhileLoopInfo info = Analyze(*m);
  ASSERT_EQ(info.trip_count, 4);  // 10, 7, 4, 1
  EXPECT_TRUE(info.counts_down);
  const Computation* body = m->entry()->root()->while_body();
  const Instruction* next = nullptr;
  for (const auto& inst : body->instructions()) {
    if (inst->name() == "next") next = inst.get();
  }
  ASSERT_NE(next, nullptr);
  EXPECT_EQ(EvaluateInIteration(*next, info, 3)->ToString(), "-2");
  EXPECT_EQ(info.KnownInitStepFrom(1, 2), (KnownInitStep{7, -6}));
}

}  // namespace
}  // namespace hloverlap
