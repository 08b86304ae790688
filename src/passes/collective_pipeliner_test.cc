// The collective pipeliner's transactions: a sink, a forward delay or a
// backward prefetch that fails at any step before or at its commit leaves
// the module byte-identical and is reported as a failure remark naming the
// pass, the loop and the collective (LoopRewrite's fault injection injects
// the failures).
#include "passes/collective_pipeliner.h"

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/parser.h"
#include "passes/loop_rewrite_test_util.h"

namespace hloverlap {
namespace {

// tests/passes/<name>.hlo.
std::unique_ptr<Module> Load(const std::string& name) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseHloFile(
      std::string(HLOVERLAP_SOURCE_DIR) + "/tests/passes/" + name + ".hlo");
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : nullptr;
}

// The pipeliner on `m` (all-gathers prefetched when `all_gather`); the
// message of its discarded rewrite, which names `collective`, in `failure`.
absl::StatusOr<bool> Pipeline(Module& m, const std::string& collective,
                              bool all_gather, std::string* failure) {
  CollectivePipelinerPass pass;
  PassContext context;
  context.options.pipeline_all_gather = all_gather;
  absl::StatusOr<bool> changed = pass.Run(m, context);
  *failure =
      DiscardedRewrite(context.remarks, "collective-pipeliner", collective);
  return changed;
}

// Runs the pipeliner on tests/passes/<name>.hlo with a failure injected at
// each step of its one rewrite in turn; returns the steps.
std::vector<std::string> FailEveryStep(const std::string& name,
                                       const std::string& collective,
                                       bool all_gather = true) {
  return ExpectEveryStepRollsBack([&] { return Load(name); },
                                  [&](Module& m, std::string* failure) {
                                    return Pipeline(m, collective, all_gather,
                                                    failure);
                                  });
}

TEST(CollectivePipeliner, SinkFailingAtEveryStepLeavesTheModuleUnchanged) {
  // The all-gather left alone: the sink is the module's one rewrite.
  std::vector<std::string> steps =
      FailEveryStep("pipeliner_sink", "rs", /*all_gather=*/false);
  EXPECT_EQ(steps.size(), 2u);
}

TEST(CollectivePipeliner, ForwardFailingAtEveryStepLeavesTheModuleUnchanged) {
  std::vector<std::string> steps =
      FailEveryStep("pipeliner_forward_basic", "rs");
  EXPECT_EQ(steps.size(), 2u);
}

TEST(CollectivePipeliner, BackwardFailingAtEveryStepLeavesTheModuleUnchanged) {
  std::vector<std::string> steps =
      FailEveryStep("pipeliner_backward_basic", "ag");
  EXPECT_EQ(steps.size(), 2u);
}

}  // namespace
}  // namespace hloverlap
