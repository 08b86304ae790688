// Reduction deferral's transaction: a deferral that fails at any step
// before or at its commit leaves the module byte-identical, is reported as
// a failure remark naming pass, loop and collective, and the pass goes on
// (the before-commit test hook and LoopRewrite's fault injection inject the
// failures), for the plain form and for the stacked form (whose inner loop
// is copied too).
#include "passes/reduction_deferral.h"

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/parser.h"
#include "hlo/printer.h"
#include "hlo/verifier.h"
#include "passes/loop_rewrite_test_util.h"

namespace hloverlap {
namespace {

// tests/passes/defer_reduction_<name>.hlo.
std::unique_ptr<Module> Case(const std::string& name) {
  absl::StatusOr<std::unique_ptr<Module>> m =
      ParseHloFile(std::string(HLOVERLAP_SOURCE_DIR) +
                   "/tests/passes/defer_reduction_" + name + ".hlo");
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : nullptr;
}

// Runs the pass; the message of its failure remark (RewriteDiscarded) in
// `failure`.
absl::StatusOr<bool> Defer(Module& m,
                           ReductionDeferralPass::BeforeCommitHook hook,
                           std::string* failure = nullptr) {
  ReductionDeferralPass pass(std::move(hook));
  PassContext context;
  context.options.defer_reduction = true;
  absl::StatusOr<bool> changed = pass.Run(m, context);
  std::string discarded = DiscardedRewrite(context.remarks, "defer-reduction");
  if (failure != nullptr) *failure = discarded;
  return changed;
}

absl::Status Injected(Computation&) {
  return absl::InternalError("injected failure");
}

TEST(ReductionDeferral, HookSeesTheNewBodyOfADeferralThatCommits) {
  std::unique_ptr<Module> m = Case("all_reduce");
  ASSERT_NE(m, nullptr);
  int calls = 0;
  absl::StatusOr<bool> changed = Defer(*m, [&](Computation& body) {
    ++calls;
    EXPECT_EQ(body.name(), "body");
    EXPECT_EQ(body.root()->operand_count(), 3);
    return absl::OkStatus();
  });
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(VerifyModule(*m).ok()) << VerifyModule(*m);
  EXPECT_NE(PrintModule(*m).find("%ar.deferred = s32[8]{0} all-reduce("),
            std::string::npos);
}

// Runs the pass on case `name` with `hook`: its rewrite is discarded with a
// failure remark that starts with `message`, the pass goes on, and the
// module is byte-identical.
void ExpectRolledBack(const std::string& name,
                      ReductionDeferralPass::BeforeCommitHook hook,
                      const std::string& message) {
  std::unique_ptr<Module> m = Case(name);
  ASSERT_NE(m, nullptr);
  const std::string before = PrintModule(*m);
  std::string failure;
  absl::StatusOr<bool> changed = Defer(*m, std::move(hook), &failure);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
  EXPECT_EQ(failure.rfind(message, 0), 0u) << failure;
  EXPECT_EQ(PrintModule(*m), before);
  EXPECT_TRUE(VerifyModule(*m).ok());
}

// A failure injected at each step of the deferral's transaction in turn
// (AppendLoopState, its checkpoints, ReplaceAtCommit, the commit) leaves
// the module byte-identical; with none injected, it commits. The loop
// state grows through AppendLoopState first.
void ExpectEveryStepOfCaseRollsBack(const std::string& name) {
  std::vector<std::string> steps =
      ExpectEveryStepRollsBack([&] { return Case(name); },
                               [](Module& m, std::string* failure) {
                                 return Defer(m, nullptr, failure);
                               });
  EXPECT_GE(steps.size(), 5u);
  ASSERT_FALSE(steps.empty());
  EXPECT_EQ(steps.front(), "appending loop state");
  EXPECT_EQ(steps.back(), "commit");
}

TEST(ReductionDeferral, FailureAtEveryStepLeavesTheModuleUnchanged) {
  ExpectEveryStepOfCaseRollsBack("all_reduce");
}

TEST(ReductionDeferral, StackedFailureAtEveryStepLeavesTheModuleUnchanged) {
  ExpectEveryStepOfCaseRollsBack("stacked_gspmd");
}

TEST(ReductionDeferral, FailureBeforeCommitLeavesTheModuleUnchanged) {
  ExpectRolledBack(
      "all_reduce", Injected,
      "defer-reduction: deferring ar out of acc_loop: injected failure");
}

// The inner loop that stores the rows is copied and edited too.
TEST(ReductionDeferral, StackedFailureBeforeCommitLeavesTheModuleUnchanged) {
  ExpectRolledBack(
      "stacked_gspmd", Injected,
      "defer-reduction: deferring ar out of outer: injected failure");
}

TEST(ReductionDeferral, RewriteThatDoesNotVerifyLeavesTheModuleUnchanged) {
  // The new body's root no longer matches its parameter.
  ExpectRolledBack(
      "reduce_scatter",
      [](Computation& body) {
        body.root()->mutable_shape().mutable_tuple_shapes().pop_back();
        return absl::OkStatus();
      },
      "defer-reduction: deferring rs out of acc_loop: the deferred loop does "
      "not verify: ");
}

}  // namespace
}  // namespace hloverlap
