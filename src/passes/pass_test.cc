// The module-size guard and the clone-cost predictions it relies on.
#include "passes/pass.h"

#include "gtest/gtest.h"
#include "hlo/clone.h"
#include "hlo/diagnostic.h"
#include "hlo/parser.h"

namespace hloverlap {
namespace {

// A while nested in a while (and a fusion in the inner body).
constexpr char kNest[] = R"(
HloModule m

fused {
  a = f32[2] parameter(0)
  ROOT n = f32[2] negate(a)
}

inner_cond {
  p = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  c = s32[] constant(2)
  ROOT lt = pred[] compare(i, c), direction=LT
}

inner_body {
  p = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[2] get-tuple-element(p), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  y = f32[2] fusion(x), kind=kLoop, calls=fused
  ROOT t = (s32[], f32[2]) tuple(j, y)
}

outer_cond {
  p = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  c = s32[] constant(3)
  ROOT lt = pred[] compare(i, c), direction=LT
}

outer_body {
  p = (s32[], f32[2]) parameter(0)
  ROOT w = (s32[], f32[2]) while(p), condition=inner_cond, body=inner_body
}

ENTRY main {
  x = f32[2] parameter(0)
  z = s32[] constant(0)
  s = (s32[], f32[2]) tuple(z, x)
  ROOT w = (s32[], f32[2]) while(s), condition=outer_cond, body=outer_body
}
)";

TEST(CloneCost, PredictsExactlyWhatCloningCreates) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseHloModule(kNest);
  ASSERT_TRUE(m.ok()) << m.status();
  Instruction* w = (*m)->entry()->root();
  const int64_t predicted = LoopCloneCost(*w);
  const int64_t before = (*m)->instruction_count();
  std::vector<Computation*> created;
  ASSERT_TRUE(CloneLoopComputations(*w, "copy", &created).ok());
  EXPECT_EQ((*m)->instruction_count() - before, predicted);
  // outer cond 4 + outer body 2 + inner cond 4 + inner body 7 + fused 2.
  EXPECT_EQ(predicted, 19);
  EXPECT_EQ(CloneCost(w->while_body()->MakeInstructionPostOrder()), 15);
  EXPECT_EQ(CloneCost(w->while_body()->MakeInstructionPostOrder(),
                      /*deep_clone_loops=*/false),
            2);
}

TEST(ModuleSizeGuard, DefaultIsRelativeToTheInputWithAFloor) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseHloModule(kNest);
  ASSERT_TRUE(m.ok());
  ModuleSizeGuard guard;
  guard.Sync(**m, std::nullopt);
  EXPECT_EQ(guard.limit(), ModuleSizeGuard::kDefaultMinimum);
  const Instruction& w = *(*m)->entry()->root();
  EXPECT_TRUE(guard.Reserve(**m, w, "x", 1000, "").ok());
  absl::Status refused =
      guard.Reserve(**m, w, "copying w", ModuleSizeGuard::kDefaultMinimum, "");
  EXPECT_TRUE(IsModuleSizeLimit(refused));
  EXPECT_NE(refused.message().find("copying w would add 100000 instructions"),
            std::string::npos)
      << refused;
  ASSERT_TRUE(StatusSourcePosition(refused).has_value());
  EXPECT_EQ(StatusSourcePosition(refused)->line, 42u);
  // Saturated predictions (a nest too deep to count) are refused too.
  EXPECT_FALSE(guard.Reserve(**m, w, "x", kCloneCostSaturated, "").ok());
  // An explicit limit replaces the default; the input size stays the first.
  guard.Sync(**m, 30);
  EXPECT_EQ(guard.limit(), 30);
  EXPECT_TRUE(
      guard.Reserve(**m, w, "x", 30 - (*m)->instruction_count(), "").ok());
  EXPECT_FALSE(
      guard.Reserve(**m, w, "x", 31 - (*m)->instruction_count(), "").ok());
}

}  // namespace
}  // namespace hloverlap
