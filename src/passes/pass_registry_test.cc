// The pass registry, declared options, pipeline text, presets and the
// pipeline's instrumentations.
#include "passes/pass_registry.h"

#include <fstream>
#include <set>
#include <sstream>

#include "gtest/gtest.h"
#include "hlo/absl_compat.h"
#include "hlo/parser.h"
#include "passes/pass_instrumentation.h"

namespace hloverlap {
namespace {

TEST(PassRegistry, EveryPassRegistersUnderItsOwnName) {
  std::set<std::string> names;
  for (const PassInfo& p : GlobalPassRegistry().passes()) {
    ASSERT_NE(p.make, nullptr) << p.name;
    EXPECT_EQ(p.make()->name(), p.name);
    EXPECT_FALSE(p.help.empty()) << p.name;
    EXPECT_TRUE(names.insert(p.name).second) << "twice: " << p.name;
    for (const PassOptionInfo& o : p.options) {
      // The declared default is a valid value.
      EXPECT_TRUE(o.Check(o.Get(PassOptions())).ok())
          << p.name << " " << o.name;
    }
  }
  // 9 passes, the 2 planners (auto_plan.h), the 4 route fixups
  // (route_fixups.h).
  EXPECT_EQ(names.size(), 15u);
}

TEST(PassRegistry, EveryPresetIsValidPipelineText) {
  for (const PresetInfo& p : Presets()) {
    absl::StatusOr<std::vector<PassSpec>> specs = ParsePipelineText(p.pipeline);
    ASSERT_TRUE(specs.ok()) << p.name << ": " << specs.status();
    EXPECT_EQ(PipelineText(*specs), p.pipeline);
  }
  EXPECT_EQ(KnownPresets(),
            (std::vector<std::string>{"cleanup", "pipeline", "hoist-pipeline",
                                      "xla-gpu", "auto", "auto-rewrite"}));
}

TEST(PipelineText, OptionsInBraces) {
  absl::StatusOr<std::vector<PassSpec>> specs = ParsePipelineText(
      " inline, collective-pipeliner{depth=2, all-gather=false},dce,");
  ASSERT_TRUE(specs.ok()) << specs.status();
  ASSERT_EQ(specs->size(), 3u);
  EXPECT_EQ((*specs)[1].Text(),
            "collective-pipeliner{depth=2,all-gather=false}");
  PassOptions options;
  for (const auto& [option, value] : (*specs)[1].options) {
    option->Set(options, value, (*specs)[1].Text());
  }
  EXPECT_EQ(options.pipeline_depth, 2);
  EXPECT_FALSE(options.pipeline_all_gather);
  EXPECT_EQ(options.SourceOf("pipeline_all_gather"),
            " (collective-pipeliner{depth=2,all-gather=false})");
}

std::string ErrorOf(std::string_view text) {
  absl::StatusOr<std::vector<PassSpec>> specs = ParsePipelineText(text);
  EXPECT_FALSE(specs.ok()) << text;
  EXPECT_EQ(specs.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(specs.status().message());
}

TEST(PipelineText, ErrorsNameThePassTheOptionAndWhatIsAllowed) {
  EXPECT_EQ(ErrorOf("collective-pipeliner{depth=0}"),
            "pass 'collective-pipeliner': option 'depth=0': expected an "
            "integer from 1 to 64");
  EXPECT_EQ(ErrorOf("collective-pipeliner{depth=2x}"),
            "pass 'collective-pipeliner': option 'depth=2x': expected an "
            "integer from 1 to 64");
  EXPECT_EQ(ErrorOf("collective-pipeliner{mode=forward}"),
            "pass 'collective-pipeliner' has no option 'mode'; its options: "
            "depth, all-gather, reduce-scatter, all-reduce");
  EXPECT_EQ(ErrorOf("dce{x=1}"), "pass 'dce' has no options (got 'x=1')");
  EXPECT_EQ(ErrorOf("latency-hiding-scheduler{gpu=a100}"),
            "pass 'latency-hiding-scheduler': option 'gpu=a100': expected "
            "one of h100, h200");
  EXPECT_EQ(ErrorOf("double-buffer{default=yes}"),
            "pass 'double-buffer': option 'default=yes': expected true or "
            "false");
  EXPECT_EQ(ErrorOf("collective-pipeliner{depth}"),
            "pass 'collective-pipeliner': option 'depth' needs a value "
            "(depth=int 1..64)");
  EXPECT_EQ(ErrorOf("collective-pipeliner{depth=2,depth=3}"),
            "pass 'collective-pipeliner': option 'depth' given twice");
  EXPECT_EQ(ErrorOf("collective-pipeliner{depth=2"),
            "missing '}' in 'collective-pipeliner{depth=2'");
  EXPECT_EQ(ErrorOf("dce}"), "'}' without '{' in 'dce}'");
  EXPECT_EQ(ErrorOf("dce{}x"), "pass 'dce': unexpected 'x' after '}'");
  EXPECT_EQ(ErrorOf("dce{{}}"), "nested '{' in 'dce{{'");
  EXPECT_EQ(ErrorOf("bogus").substr(0, 38),
            "unknown pass 'bogus'; known passes: in");
}

TEST(PipelineText, LoopRuleDepthHasThePipelinersRange) {
  EXPECT_TRUE(ParseLoopRule("all:pipeline=depth=64").ok());
  absl::StatusOr<LoopRule> r = ParseLoopRule("all:pipeline=depth=65");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("from 1 to 64"), std::string::npos)
      << r.status();
  EXPECT_NE(LoopRuleHelp().find("(1-64;"), std::string_view::npos);
}

// Records the options each run sees.
class ProbePass : public Pass {
 public:
  explicit ProbePass(std::vector<int>* depths) : depths_(depths) {}
  std::string_view name() const override { return "probe"; }
  absl::StatusOr<bool> Run(Module& module, PassContext& context) override {
    depths_->push_back(context.options.pipeline_depth);
    return false;
  }

 private:
  std::vector<int>* depths_;
};

constexpr char kTiny[] = R"(
HloModule m

ENTRY e {
  ROOT p = f32[2] parameter(0)
}
)";

TEST(PassPipeline, PipelineTextOptionsHoldForTheirRunOnly) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseHloModule(kTiny);
  ASSERT_TRUE(m.ok()) << m.status();
  std::vector<int> depths;
  PassPipeline pipeline;
  const PassOptionInfo* depth = FindPassOption("collective-pipeliner", "depth");
  ASSERT_NE(depth, nullptr);
  pipeline.Add(std::make_unique<ProbePass>(&depths));
  pipeline.Add(std::make_unique<ProbePass>(&depths), {{depth, "5"}});
  pipeline.Add(std::make_unique<ProbePass>(&depths));
  PassContext context;
  context.options.pipeline_depth = 3;  // as --pipeline-depth=3
  ASSERT_TRUE(pipeline.Run(**m, context).ok());
  EXPECT_EQ(depths, (std::vector<int>{3, 5, 3}));
  EXPECT_EQ(context.options.pipeline_depth, 3);
}

TEST(PassInstrumentation, DumpAfterNumbersRepeatedRuns) {
  EXPECT_EQ(DumpAfterInstrumentation::NumberedPath("dce.hlo", 1, 1), "dce.hlo");
  EXPECT_EQ(DumpAfterInstrumentation::NumberedPath("dce.hlo", 2, 2),
            "dce.2.hlo");
  EXPECT_EQ(DumpAfterInstrumentation::NumberedPath("a.b/out", 1, 3),
            "a.b/out.1");
  EXPECT_EQ(DumpAfterInstrumentation::NumberedPath(".hlo", 1, 2), ".hlo.1");
}

// Runs the hooks saw, in order.
class RecordingInstrumentation : public PassInstrumentation {
 public:
  explicit RecordingInstrumentation(std::vector<std::string>* log)
      : log_(log) {}
  void RunBeforePass(const PassRun& run, const Module& module,
                     PassContext& context) override {
    log_->push_back(absl::StrCat("before ", AsAbsl(run.pass.name()), " ",
                                 run.index, " ", run.occurrence, "/",
                                 run.occurrences));
  }
  absl::Status RunAfterPass(const PassRun& run, const Module& module,
                            PassContext& context) override {
    log_->push_back(absl::StrCat("after ", AsAbsl(run.pass.name())));
    return absl::OkStatus();
  }

 private:
  std::vector<std::string>* log_;
};

TEST(PassInstrumentation, HooksAroundEveryRunWithOccurrences) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseHloModule(kTiny);
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<PassPipeline> pipeline = BuildPipeline("dce,inline,dce");
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  std::vector<std::string> log;
  pipeline->AddInstrumentation(
      std::make_unique<RecordingInstrumentation>(&log));
  auto timing = std::make_unique<TimingInstrumentation>();
  TimingInstrumentation* t = timing.get();
  pipeline->AddInstrumentation(std::move(timing));
  PassContext context;
  ASSERT_TRUE(pipeline->Run(**m, context).ok());
  EXPECT_EQ(log, (std::vector<std::string>{
                     "before dce 0 1/2", "after dce", "before inline 1 1/1",
                     "after inline", "before dce 2 2/2", "after dce"}));
  ASSERT_EQ(t->timings().size(), 3u);
  EXPECT_EQ(t->timings()[2].pass, "dce");
  EXPECT_NE(t->Report().find("total"), std::string::npos);
}

}  // namespace
}  // namespace hloverlap
