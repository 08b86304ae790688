#include "passes/remark_summary.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace hloverlap {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

Remark Make(std::string pass, RemarkKind kind, std::string instruction,
            std::string opcode, std::string loop, std::string message) {
  Remark r;
  r.pass = std::move(pass);
  r.kind = kind;
  r.instruction = std::move(instruction);
  r.opcode = std::move(opcode);
  r.loop = std::move(loop);
  r.message = std::move(message);
  return r;
}

std::vector<SummaryLoop> Loops() {
  return {{"outer", "outer", 0, {}}, {"while.1", "outer/while.1", 1, {}}};
}

TEST(RemarksSummary, RenamedAndCopiedLoopsCountForTheInputLoop) {
  std::vector<Remark> remarks = {
      Make("collective-pipeliner", RemarkKind::kPassed, "ag", "all-gather",
           "outer/while.1", "prefetched all-gather 1 iteration ahead"),
      // The pass rebuilt the loop: while.1 -> while.1.2, and a peeled copy
      // at the top level.
      Make("double-buffer", RemarkKind::kPassed, "while.1.2", "while",
           "outer.1/while.1.2", "double-buffered: unrolled by 2"),
      Make("double-buffer", RemarkKind::kPassed, "while.1.peel0", "while",
           "while.1.peel0", "double-buffered: unrolled by 2"),
  };
  const std::string s = RemarksSummary(remarks, Loops());
  EXPECT_THAT(s, HasSubstr("  outer/while.1\n"
                           "    pipeliner: 1x prefetched all-gather 1 "
                           "iteration ahead [ag]\n"
                           "    double buffering: 1x double-buffered: "
                           "unrolled by 2 (+1 on copies of the loop)\n"));
  // Nothing happened to `outer` itself: no section.
  EXPECT_THAT(s, Not(HasSubstr("  outer\n")));
  EXPECT_THAT(s, HasSubstr("remarks: 3 passed, 0 missed, 0 failures\n"));
}

TEST(RemarksSummary, EqualReasonsAboutDifferentInstructionsCountOnce) {
  std::vector<Remark> remarks = {
      Make("collective-pipeliner", RemarkKind::kMissed, "ar.1", "all-reduce",
           "outer",
           "all-reduce not pipelined: it is stored into gte.2.1, "
           "which is not a loop state element"),
      Make("collective-pipeliner", RemarkKind::kMissed, "ar.2", "all-reduce",
           "outer",
           "all-reduce not pipelined: it is stored into gte.3.1, "
           "which is not a loop state element"),
  };
  const std::string s = RemarksSummary(remarks, Loops(), "r.txt");
  // Counted once, with the names said (issue 26 item 7).
  EXPECT_THAT(s, HasSubstr("    pipeliner refused: 2x all-reduce: it is "
                           "stored into {gte.2.1, gte.3.1}, which is not a "
                           "loop state element [ar.1, ar.2]\n"));
  EXPECT_THAT(s, HasSubstr("; all remarks in r.txt\n"));
}

// Issue 26 item 8: a loop's copies of an inner loop's collectives (a peeled
// iteration) count per input collective and are labelled as copies.
TEST(RemarksSummary, CopiesOfInnerLoopInstructionsAreLabelled) {
  std::vector<SummaryLoop> loops = Loops();
  loops[0].instructions = {"outer.ar"};
  loops[1].instructions = {"ag.4", "ag.5"};
  std::vector<Remark> remarks;
  for (const char* name : {"ag.4", "ag.5", "ag.4", "ag.5", "ag.4"}) {
    remarks.push_back(Make("collective-pipeliner", RemarkKind::kPassed, name,
                           "all-gather", "outer",
                           "prefetched all-gather 1 iteration ahead"));
  }
  remarks.push_back(Make("collective-pipeliner", RemarkKind::kPassed,
                         "outer.ar", "all-reduce", "outer",
                         "delayed all-reduce to the next iteration"));
  const std::string s = RemarksSummary(remarks, loops);
  EXPECT_THAT(s, HasSubstr("    pipeliner: 2x prefetched all-gather 1 "
                           "iteration ahead, on 5 copies of other loops' "
                           "instructions, made when those loops were "
                           "rewritten [of while.1: ag.4, ag.5]\n"));
  EXPECT_THAT(s, HasSubstr("1x delayed all-reduce to the next iteration "
                           "[outer.ar]\n"));
  EXPECT_THAT(s, Not(HasSubstr("5x")));
}

// Issue 26 item 9: what a loop is in the JAX program, from its op_name.
TEST(RemarksSummary, LoopRoleFromJaxOpName) {
  EXPECT_EQ(LoopRole("jit(train_step)/while"), "scan/fori_loop");
  EXPECT_EQ(LoopRole("jit(train_step)/while/body/eval_jaxpr/jvp()/while"),
            "scan/fori_loop, forward (jvp)");
  EXPECT_EQ(
      LoopRole("jit(train_step)/while/body/eval_jaxpr/transpose(jvp())/while"),
      "scan/fori_loop, backward (transpose(jvp))");
  EXPECT_EQ(LoopRole(""), "");
  std::vector<SummaryLoop> loops = Loops();
  loops[1].op_name = "jit(f)/transpose(jvp())/while";
  const std::string s = RemarksSummary(
      {Make("collective-pipeliner", RemarkKind::kPassed, "ag", "all-gather",
            "outer/while.1", "prefetched all-gather 1 iteration ahead")},
      loops);
  EXPECT_THAT(s, HasSubstr("  outer/while.1 (scan/fori_loop, backward "
                           "(transpose(jvp)))\n"));
}

TEST(RemarksSummary, SchedulerPairsAsyncAndOutsideLoops) {
  Remark hidden =
      Make("latency-hiding-scheduler", RemarkKind::kPassed, "ag-start",
           "all-gather-start", "outer.1/while.1.1", "overlapped");
  hidden.Metric("latency_ns", 1000).Metric("exposed_ns", 0);
  Remark exposed = Make("latency-hiding-scheduler", RemarkKind::kMissed,
                        "ar-start", "all-reduce-start", "", "exposed");
  exposed.Metric("latency_ns", 2000).Metric("exposed_ns", 1500);
  exposed.suggestion = "no independent compute; pipeline it";
  Remark per_computation =
      Make("latency-hiding-scheduler", RemarkKind::kAnalysis, "body", "",
           "outer.1/while.1.1", "scheduled body: estimated 1 ms");
  Remark module =
      Make("latency-hiding-scheduler", RemarkKind::kAnalysis, "m", "", "",
           "scheduled module m: 1 of 2 overlapped; estimated step 3 ms");
  module.name = "ScheduledModule";
  module.Metric("async_collectives", 2).Metric("overlapped", 1);
  Remark async = Make("async-collectives", RemarkKind::kPassed, "ag", "", "",
                      "converted all-gather");
  Remark sync = Make("async-collectives", RemarkKind::kMissed, "a2a.7", "", "",
                     "all-to-all left synchronous (flag)");
  const std::string s = RemarksSummary(
      {hidden, exposed, per_computation, module, async, sync}, Loops());
  EXPECT_THAT(s, HasSubstr("  outer/while.1\n"
                           "    scheduler: 1 of 1 async collectives hidden\n"));
  EXPECT_THAT(s, HasSubstr("  outside loops\n"
                           "    scheduler: 0 of 1 async collectives hidden; "
                           "exposed: ar-start 1.5 of 2.0 us (no independent "
                           "compute)\n"));
  EXPECT_THAT(
      s, HasSubstr("async conversion: 1 collectives to start/done "
                   "pairs; 1x all-to-all left synchronous (flag) [a2a.7]\n"));
  // The step is printed once, by StepComparisonText (issue 26 item 3).
  EXPECT_THAT(s, HasSubstr("scheduler: 1 of 2 async collectives overlapped "
                           "(module m)\n"));
  EXPECT_THAT(s, Not(HasSubstr("estimated 1 ms")));
  EXPECT_THAT(s, Not(HasSubstr("estimated step")));
}

// The summary's last lines: step, exposed communication and peak, input
// and output, and whether the peak's growth is within --memory-budget.
TEST(StepComparisonText, BeforeAfterAndBudget) {
  StepPrediction in;
  in.step_us = 285484;
  in.exposed_communication_us = 42071;
  in.peak_memory_bytes = int64_t{8} << 30;
  StepPrediction out = in;
  out.step_us = 286600;
  out.peak_memory_bytes = int64_t{16} << 30;
  EXPECT_EQ(StepComparisonText(in, out, std::nullopt),
            "predicted (simulator, as `hloverlap sim`): input -> output\n"
            "  step                    285.484 ms ->  286.600 ms (+1.116 ms, "
            "+0.4%)\n"
            "  exposed communication    42.071 ms ->   42.071 ms (+0.000 ms)\n"
            "  peak memory                8.0 GiB ->    16.0 GiB (+8.0 GiB)\n");
  EXPECT_THAT(StepComparisonText(in, out, int64_t{512} << 20),
              HasSubstr("(+8.0 GiB; over --memory-budget 512.0 MiB)\n"));
  EXPECT_THAT(StepComparisonText(out, in, int64_t{0}),
              HasSubstr("(-8.0 GiB; within --memory-budget 0 B)\n"));
}

TEST(RemarksSummary, NoLoopDecisions) {
  const std::string s = RemarksSummary({}, {});
  EXPECT_THAT(s, HasSubstr("  no loop decisions\n"));
  EXPECT_THAT(s, HasSubstr("remarks: 0 passed, 0 missed, 0 failures\n"));
}

// Every kind is counted, warnings too (an index by kind once wrote past a
// four-entry array when a fifth kind was added).
TEST(RemarksSummary, CountsEveryKind) {
  std::vector<Remark> remarks = {
      Make("collective-pipeliner", RemarkKind::kWarning, "while.1", "while",
           "outer/while.1", "known_trip_count 4 contradicts the loop"),
      Make("collective-pipeliner", RemarkKind::kPassed, "all-gather.1",
           "all-gather", "outer/while.1", "prefetched"),
      Make("collective-pipeliner", RemarkKind::kAnalysis, "", "", "", "note")};
  const std::string s = RemarksSummary(remarks, Loops());
  EXPECT_THAT(s, HasSubstr("pipeliner warning: 1x known_trip_count 4"));
  EXPECT_THAT(s, HasSubstr("remarks: 1 passed, 0 missed, 0 failures, "
                           "1 warnings\n"));
}

}  // namespace
}  // namespace hloverlap
