// The collective hoist's transaction: a hoist that fails at any step before
// or at its commit leaves the module byte-identical, is reported as a
// failure remark naming pass, loop and all-gather, and the pass goes on (the
// before-commit test hook and LoopRewrite's fault injection inject the
// failures).
#include "passes/collective_hoist.h"

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/parser.h"
#include "hlo/printer.h"
#include "hlo/verifier.h"
#include "passes/loop_rewrite_test_util.h"

namespace hloverlap {
namespace {

// tests/passes/collective_hoist_basic.hlo: one all-gather hoisted out of
// %outer.
std::unique_ptr<Module> Basic() {
  absl::StatusOr<std::unique_ptr<Module>> m =
      ParseHloFile(std::string(HLOVERLAP_SOURCE_DIR) +
                   "/tests/passes/collective_hoist_basic.hlo");
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : nullptr;
}

absl::StatusOr<bool> Hoist(Module& m,
                           CollectiveHoistPass::BeforeCommitHook hook,
                           std::string* failure = nullptr) {
  CollectiveHoistPass pass(std::move(hook));
  PassContext context;
  absl::StatusOr<bool> changed = pass.Run(m, context);
  std::string discarded =
      DiscardedRewrite(context.remarks, "collective-hoist", "ag");
  if (failure != nullptr) *failure = discarded;
  return changed;
}

TEST(CollectiveHoist, HookSeesTheNewInnerBodyOfAHoistThatCommits) {
  std::unique_ptr<Module> m = Basic();
  ASSERT_NE(m, nullptr);
  int calls = 0;
  absl::StatusOr<bool> changed = Hoist(*m, [&](Computation& body) {
    ++calls;
    EXPECT_EQ(body.name(), "inner.body");
    return absl::OkStatus();
  });
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(VerifyModule(*m).ok()) << VerifyModule(*m);
  EXPECT_NE(PrintModule(*m).find("%ag.hoisted = bf16[4,8,8]"),
            std::string::npos);
}

TEST(CollectiveHoist, FailureBeforeCommitLeavesTheModuleUnchanged) {
  std::unique_ptr<Module> m = Basic();
  ASSERT_NE(m, nullptr);
  const std::string before = PrintModule(*m);
  std::string failure;
  absl::StatusOr<bool> changed = Hoist(
      *m, [](Computation&) { return absl::InternalError("injected failure"); },
      &failure);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
  EXPECT_EQ(failure,
            "collective-hoist: hoisting all-gather ag out of outer: injected "
            "failure");
  EXPECT_EQ(PrintModule(*m), before);
  EXPECT_TRUE(VerifyModule(*m).ok());
}

TEST(CollectiveHoist, RewriteThatDoesNotVerifyLeavesTheModuleUnchanged) {
  std::unique_ptr<Module> m = Basic();
  ASSERT_NE(m, nullptr);
  const std::string before = PrintModule(*m);
  // The new body's root no longer matches its parameter.
  std::string message;
  absl::StatusOr<bool> changed = Hoist(
      *m,
      [](Computation& body) {
        body.root()->mutable_shape().mutable_tuple_shapes().pop_back();
        return absl::OkStatus();
      },
      &message);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
  EXPECT_EQ(message.rfind("collective-hoist: hoisting all-gather ag out of "
                          "outer: the hoisted loops do not verify: ",
                          0),
            0u)
      << message;
  EXPECT_EQ(PrintModule(*m), before);
  EXPECT_TRUE(VerifyModule(*m).ok());
}

// A failure injected at each step of the hoist's transaction in turn (its
// AppendLoopState calls, its own checkpoints, the commit) leaves the module
// byte-identical; with none injected, it commits.
TEST(CollectiveHoist, FailureAtEveryStepLeavesTheModuleUnchanged) {
  std::vector<std::string> steps =
      ExpectEveryStepRollsBack(Basic, [](Module& m, std::string* failure) {
        return Hoist(m, nullptr, failure);
      });
  EXPECT_EQ(steps.size(), 6u);
}

}  // namespace
}  // namespace hloverlap
