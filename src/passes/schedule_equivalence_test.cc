// The scheduling passes preserve values: for every small corpus case
// (folders not named big_*), stages 03 (before XLA's collective pipeliner)
// and 04 (after it) compute bit-identical results on 2 devices before and
// after the pass pipeline below. The rewritten module is printed and parsed
// back before it runs, so the text round trip is part of the proof, and it
// must pass the verifier.
//
// kPreset is the pipeline under test: the full `xla-gpu` preset (cleanup,
// collective pipeliner, double buffering, async conversion, latency-hiding
// scheduler), so the scheduled output runs in schedule order with async
// semantics.
//
// If $HLOVERLAP_SOURCE_DIR/../shared/corpus is missing, the test fails when
// the CI environment variable is set and is skipped otherwise. In sanitizer
// builds only the first case runs.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/parser.h"
#include "hlo/printer.h"
#include "hlo/verifier.h"
#include "interp/compare.h"
#include "interp/corpus_cases.h"
#include "interp/evaluator.h"
#include "interp/random_inputs.h"
#include "passes/pass.h"

namespace hloverlap {
namespace {

namespace fs = std::filesystem;

constexpr char kPreset[] = "xla-gpu";

using interp::testing::CorpusDir;
using interp::testing::SmallCorpusCases;

TEST(ScheduleEquivalence, CorpusPresent) {
  if (!fs::is_directory(CorpusDir())) {
    if (std::getenv("CI") != nullptr) {
      FAIL() << "corpus folder " << CorpusDir() << " is missing";
    }
    GTEST_SKIP() << "corpus folder " << CorpusDir() << " is missing";
  }
  EXPECT_FALSE(SmallCorpusCases().empty());
}

absl::StatusOr<std::vector<interp::Value>> RunOn2(
    const Module& module, const std::vector<std::vector<interp::Value>>& in) {
  interp::InterpreterOptions opts;
  opts.num_devices = 2;
  absl::StatusOr<std::unique_ptr<interp::Interpreter>> it =
      interp::Interpreter::Create(module, opts);
  if (!it.ok()) return it.status();
  return (*it)->Run(in);
}

class ScheduleCase : public ::testing::TestWithParam<std::string> {};

TEST_P(ScheduleCase, BitIdenticalAfterPasses) {
  const std::string name = GetParam();
  for (const char* stage : {"03_before_collective_pipeliner.hlo",
                            "04_after_collective_pipeliner.hlo"}) {
    const fs::path path = CorpusDir() / name / stage;
    if (!fs::exists(path)) continue;
    absl::StatusOr<std::unique_ptr<Module>> before =
        ParseHloFile(path.string());
    ASSERT_TRUE(before.ok()) << before.status();
    absl::StatusOr<std::vector<std::vector<interp::Value>>> inputs =
        interp::MakeRandomInputs(**before, 2, {});
    ASSERT_TRUE(inputs.ok()) << inputs.status();
    absl::StatusOr<std::vector<interp::Value>> expected =
        RunOn2(**before, *inputs);
    ASSERT_TRUE(expected.ok()) << path << ": " << expected.status();

    absl::StatusOr<PassPipeline> pipeline = BuildPreset(kPreset);
    ASSERT_TRUE(pipeline.ok()) << pipeline.status();
    PassContext context;
    absl::StatusOr<bool> changed = pipeline->Run(**before, context);
    ASSERT_TRUE(changed.ok()) << path << ": " << changed.status();
    EXPECT_EQ(context.remarks.Count(RemarkKind::kFailure), 0)
        << context.remarks.ToText();
    absl::Status verified = VerifyModule(**before);
    ASSERT_TRUE(verified.ok()) << path << ": " << verified;
    const std::string text = PrintModule(**before);
    absl::StatusOr<std::unique_ptr<Module>> after = ParseHloModule(text);
    ASSERT_TRUE(after.ok())
        << path << " after " << kPreset << ": " << after.status();
    absl::StatusOr<std::vector<interp::Value>> got = RunOn2(**after, *inputs);
    ASSERT_TRUE(got.ok()) << path << " after " << kPreset << ": "
                          << got.status();
    ASSERT_EQ(got->size(), expected->size());
    for (size_t d = 0; d < got->size(); ++d) {
      interp::ValueComparison c =
          interp::CompareValues((*expected)[d], (*got)[d], {});
      EXPECT_TRUE(c.bit_identical)
          << name << " " << stage << " device " << d << ": "
          << c.first_difference.value_or("?") << " (" << c.differing_elements
          << " elements differ)";
    }
    std::printf(
        "| %-26s | %.2s | %3lld passed, %2lld missed remarks | "
        "bit-identical |\n",
        name.c_str(), stage,
        static_cast<long long>(context.remarks.Count(RemarkKind::kPassed)),
        static_cast<long long>(context.remarks.Count(RemarkKind::kMissed)));
    std::fflush(stdout);
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, ScheduleCase,
                         ::testing::ValuesIn(SmallCorpusCases()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n = info.param;
                           for (char& ch : n) {
                             if (!std::isalnum(static_cast<unsigned char>(ch)))
                               ch = '_';
                           }
                           return n;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ScheduleCase);

}  // namespace
}  // namespace hloverlap
