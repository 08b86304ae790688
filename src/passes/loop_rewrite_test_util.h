// Test helpers for the loop passes' transactions (unit tests only): fail
// every step of a pass's rewrites in turn (ScopedLoopRewriteFault,
// passes/loop_rewrite.h) and check that the module is left byte-identical.
#ifndef HLOVERLAP_PASSES_LOOP_REWRITE_TEST_UTIL_H_
#define HLOVERLAP_PASSES_LOOP_REWRITE_TEST_UTIL_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "hlo/module.h"
#include "hlo/printer.h"
#include "passes/loop_rewrite.h"
#include "passes/remarks.h"

namespace hloverlap {

// The message of the last failure remark of `remarks`, checked to be a
// RewriteDiscarded of `pass` naming `instruction` (when not empty); "" when
// there is none.
inline std::string DiscardedRewrite(const RemarkSink& remarks,
                                    std::string_view pass,
                                    std::string_view instruction = "") {
  std::string message;
  for (const Remark& r : remarks.remarks()) {
    if (r.kind != RemarkKind::kFailure) continue;
    EXPECT_EQ(r.name, "RewriteDiscarded");
    EXPECT_EQ(r.pass, pass);
    if (!instruction.empty()) {
      EXPECT_EQ(r.instruction, instruction);
    }
    EXPECT_FALSE(r.loop.empty());
    message = r.message;
  }
  return message;
}

// Runs `run` (a pass on the module, returning its result and the message
// of its discarded rewrite, DiscardedRewrite) on a fresh `make()` counting
// the steps of its transactions (it must change the module), then once per
// step with a failure injected there: each such run changes nothing, leaves
// the module byte-identical and names the step in its failure. Returns the
// steps.
using PassUnderTest =
    std::function<absl::StatusOr<bool>(Module& module, std::string* failure)>;
inline std::vector<std::string> ExpectEveryStepRollsBack(
    const std::function<std::unique_ptr<Module>()>& make,
    const PassUnderTest& run) {
  std::vector<std::string> steps;
  {
    std::unique_ptr<Module> m = make();
    if (m == nullptr) return steps;
    ScopedLoopRewriteFault count([&](std::string_view step) {
      steps.emplace_back(step);
      return absl::OkStatus();
    });
    std::string failure;
    absl::StatusOr<bool> changed = run(*m, &failure);
    EXPECT_TRUE(changed.ok()) << changed.status();
    EXPECT_TRUE(changed.ok() && *changed);
    EXPECT_EQ(failure, "");
  }
  for (size_t k = 0; k < steps.size(); ++k) {
    std::unique_ptr<Module> m = make();
    if (m == nullptr) return steps;
    const std::string before = PrintModule(*m);
    size_t seen = 0;
    ScopedLoopRewriteFault fail([&](std::string_view) {
      return seen++ == k ? absl::InternalError("injected") : absl::OkStatus();
    });
    std::string failure;
    absl::StatusOr<bool> changed = run(*m, &failure);
    EXPECT_TRUE(changed.ok()) << changed.status();
    EXPECT_FALSE(changed.ok() && *changed) << steps[k];
    EXPECT_NE(failure.find(steps[k]), std::string::npos) << failure;
    EXPECT_EQ(PrintModule(*m), before) << "failure at " << steps[k];
  }
  return steps;
}

}  // namespace hloverlap

#endif  // HLOVERLAP_PASSES_LOOP_REWRITE_TEST_UTIL_H_
