// Double buffering's transaction: an unrolling that fails at any step (its
// own checkpoints, the loop's replacement, the commit) leaves the module
// byte-identical, is reported as a RewriteDiscarded failure naming pass,
// loop and while, and the pass goes on.
#include "passes/double_buffering.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/parser.h"
#include "hlo/printer.h"
#include "hlo/verifier.h"
#include "passes/loop_rewrite_test_util.h"

namespace hloverlap {
namespace {

// One innermost loop with an all-gather, trip count 5 (odd: the first
// iteration is peeled before the loop), a counter from 3 by 1.
constexpr std::string_view kOddLoop = R"(
HloModule odd, num_partitions=2

cond {
  p = (s32[], f32[8,4], f32[4,4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(8)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p.1 = (s32[], f32[8,4], f32[4,4]) parameter(0)
  i.1 = s32[] get-tuple-element(p.1), index=0
  w = f32[8,4] get-tuple-element(p.1), index=1
  acc = f32[4,4] get-tuple-element(p.1), index=2
  zero = s32[] constant(0)
  ds = f32[2,4] dynamic-slice(w, i.1, zero), dynamic_slice_sizes={2,4}
  ag = f32[4,4] all-gather(ds), channel_id=1, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true
  sum = f32[4,4] add(acc, ag)
  one = s32[] constant(1)
  next = s32[] add(i.1, one)
  ROOT t = (s32[], f32[8,4], f32[4,4]) tuple(next, w, sum)
}

ENTRY main {
  w.0 = f32[8,4] parameter(0)
  x = f32[4,4] parameter(1)
  c3 = s32[] constant(3)
  init = (s32[], f32[8,4], f32[4,4]) tuple(c3, w.0, x)
  loop = (s32[], f32[8,4], f32[4,4]) while(init), condition=cond, body=body
  ROOT out = f32[4,4] get-tuple-element(loop), index=2
}
)";

std::unique_ptr<Module> OddLoop() {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseHloModule(kOddLoop);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : nullptr;
}

absl::StatusOr<bool> DoubleBuffer(Module& m, std::string* failure) {
  DoubleBufferPass pass;
  PassContext context;
  absl::StatusOr<bool> changed = pass.Run(m, context);
  *failure = DiscardedRewrite(context.remarks, "double-buffer", "loop");
  EXPECT_EQ(failure->rfind("double buffering discarded: ", 0),
            failure->empty() ? std::string::npos : 0u)
      << *failure;
  return changed;
}

// Copy, second copy, counter, peel, replacement, commit.
TEST(DoubleBuffering, FailureAtEveryStepLeavesTheModuleUnchanged) {
  std::vector<std::string> steps =
      ExpectEveryStepRollsBack(OddLoop, DoubleBuffer);
  EXPECT_EQ(steps.size(), 6u);
}

}  // namespace
}  // namespace hloverlap
