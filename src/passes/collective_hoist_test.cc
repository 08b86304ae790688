// The collective hoist's transaction: a hoist that fails before or at its
// commit leaves the module byte-identical and names pass, loop and
// all-gather (the before-commit test hook injects the failure).
#include "passes/collective_hoist.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "hlo/parser.h"
#include "hlo/printer.h"
#include "hlo/verifier.h"

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
                           CollectiveHoistPass::BeforeCommitHook hook) {
  CollectiveHoistPass pass(std::move(hook));
  PassContext context;
  return pass.Run(m, context);
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
  absl::StatusOr<bool> changed = Hoist(
      *m, [](Computation&) { return absl::InternalError("injected failure"); });
  ASSERT_FALSE(changed.ok());
  EXPECT_EQ(std::string(changed.status().message()),
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
  absl::StatusOr<bool> changed = Hoist(*m, [](Computation& body) {
    body.root()->mutable_shape().mutable_tuple_shapes().pop_back();
    return absl::OkStatus();
  });
  ASSERT_FALSE(changed.ok());
  const std::string message(changed.status().message());
  EXPECT_EQ(message.rfind("collective-hoist: hoisting all-gather ag out of "
                          "outer: the hoisted loops do not verify: ",
                          0),
            0u)
      << message;
  EXPECT_EQ(PrintModule(*m), before);
  EXPECT_TRUE(VerifyModule(*m).ok());
}

}  // namespace
}  // namespace hloverlap
