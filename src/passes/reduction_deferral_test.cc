// Reduction deferral's transaction: a deferral that fails before or at its
// commit leaves the module byte-identical and names pass, loop and
// collective (the before-commit test hook injects the failure), for the
// plain form and for the stacked form (whose inner loop is copied too).
#include "passes/reduction_deferral.h"

#include <memory>
#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "hlo/parser.h"
#include "hlo/printer.h"
#include "hlo/verifier.h"

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

absl::StatusOr<bool> Defer(Module& m,
                           ReductionDeferralPass::BeforeCommitHook hook) {
  ReductionDeferralPass pass(std::move(hook));
  PassContext context;
  context.options.defer_reduction = true;
  return pass.Run(m, context);
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

// Runs the pass on case `name` with `hook`: it fails with an error that
// starts with `message`, and the module is byte-identical.
void ExpectRolledBack(const std::string& name,
                      ReductionDeferralPass::BeforeCommitHook hook,
                      const std::string& message) {
  std::unique_ptr<Module> m = Case(name);
  ASSERT_NE(m, nullptr);
  const std::string before = PrintModule(*m);
  absl::StatusOr<bool> changed = Defer(*m, std::move(hook));
  ASSERT_FALSE(changed.ok());
  const std::string error(changed.status().message());
  EXPECT_EQ(error.rfind(message, 0), 0u) << error;
  EXPECT_EQ(PrintModule(*m), before);
  EXPECT_TRUE(VerifyModule(*m).ok());
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
