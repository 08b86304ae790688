// Unit tests of the semantic fuzzer's oracle: it accepts a correct rewrite
// and reports a wrong one.
#include "fuzz/oracle.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "hlo/parser.h"
#include "hlo/printer.h"

namespace hloverlap::fuzz {
namespace {

// A loop the pipeliner and double buffering both rewrite.
constexpr char kLoop[] = R"(
HloModule loop, num_partitions=2

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}

%cond (p: (s32[], f32[4])) -> pred[] {
  %p = (s32[], f32[4]) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %n = s32[] constant(5)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body (q: (s32[], f32[4])) -> (s32[], f32[4]) {
  %q = (s32[], f32[4]) parameter(0)
  %i = s32[] get-tuple-element(%q), index=0
  %a = f32[4] get-tuple-element(%q), index=1
  %ar = f32[4] all-reduce(%a), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=%add
  %half = f32[] constant(0.5)
  %halves = f32[4] broadcast(%half), dimensions={}
  %h = f32[4] multiply(%ar, %halves)
  %one.f = f32[] constant(1)
  %ones = f32[4] broadcast(%one.f), dimensions={}
  %next.a = f32[4] add(%h, %ones)
  %one = s32[] constant(1)
  %next = s32[] add(%i, %one)
  ROOT %t = (s32[], f32[4]) tuple(%next, %next.a)
}

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4] parameter(0)
  %zero = s32[] constant(0)
  %init = (s32[], f32[4]) tuple(%zero, %x)
  %w = (s32[], f32[4]) while(%init), condition=%cond, body=%body
  ROOT %r = f32[4] get-tuple-element(%w), index=1
}
)";

std::string Text() {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseAndVerify(kLoop, "t.hlo");
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? PrintModule(**m) : "";
}

Execution Reference(const std::string& text, uint64_t input_seed) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseAndVerify(text, "t.hlo");
  EXPECT_TRUE(m.ok()) << m.status();
  OracleOptions o;
  o.input_seed = input_seed;
  return Execute(**m, o);
}

TEST(Oracle, EveryDefaultVariantKeepsTheValues) {
  const std::string text = Text();
  const Execution ref = Reference(text, 0);
  ASSERT_EQ(ref.kind, Execution::Kind::kOk) << ref.error;
  int compared = 0;
  for (const Variant& v : DefaultVariants()) {
    std::vector<std::string> stages;
    Outcome o =
        CheckVariant(text, v, ref, OracleOptions{},
                     [&](std::string_view s) { stages.emplace_back(s); });
    EXPECT_NE(o.kind, Outcome::Kind::kFinding)
        << v.CommandLine() << ": " << o.finding_class << ": " << o.message;
    EXPECT_FALSE(stages.empty());
    compared += o.kind == Outcome::Kind::kIdentical;
  }
  EXPECT_GE(compared, 6);  // rewritten, run and compared
}

// A reference computed on other inputs stands in for a wrong rewrite.
TEST(Oracle, ReportsDifferentValuesAsAMiscompile) {
  const std::string text = Text();
  const Execution other = Reference(text, 1);
  ASSERT_EQ(other.kind, Execution::Kind::kOk) << other.error;
  absl::StatusOr<Variant> v = ParseVariant("--preset=xla-gpu");
  ASSERT_TRUE(v.ok()) << v.status();
  Outcome o =
      CheckVariant(text, *v, other, OracleOptions{}, [](std::string_view) {});
  EXPECT_EQ(o.kind, Outcome::Kind::kFinding);
  EXPECT_EQ(o.finding_class, "miscompile") << o.message;
}

TEST(Oracle, ANonTerminatingRunIsCountedNotCompared) {
  std::string text = Text();
  const size_t at = text.find("constant(1)\n  %next =");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 11, "constant(0)");  // step 0
  Execution e = Reference(text, 0);
  EXPECT_EQ(e.kind, Execution::Kind::kIterationLimit) << e.error;
}

TEST(Oracle, ParsesVariants) {
  absl::StatusOr<Variant> v =
      ParseVariant("--preset=xla-gpu --loop=all:pipeline=depth=2");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->CommandLine(), "--preset=xla-gpu --loop=all:pipeline=depth=2");
  EXPECT_FALSE(ParseVariant("--preset=a --passes=b").ok());
  EXPECT_FALSE(ParseVariant("--loop=all:pipeline=off").ok());
  EXPECT_FALSE(ParseVariant("--preset=a extra").ok());
  // An unknown preset is the fuzzer's error, reported as such.
  Outcome o = CheckVariant(Text(), Variant{"no-such-preset", "", {}},
                           Reference(Text(), 0), OracleOptions{},
                           [](std::string_view) {});
  EXPECT_EQ(o.finding_class, "bad-variant");
}

}  // namespace
}  // namespace hloverlap::fuzz
