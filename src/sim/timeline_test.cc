// Loop summarization of the timeline (sim/timeline.h): summarized figures
// equal replayed ones (SimOptions::summarize = false), deep nests and
// loops that never settle take bounded work.
#include "sim/timeline.h"

#include <cmath>
#include <filesystem>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "hlo/parser.h"
#include "nlohmann/json.hpp"
#include "sim/generated_modules.h"
#include "sim/simulator.h"
#include "sim/test_util.h"

namespace hloverlap {
namespace {

// Within the documented tolerance (docs/SIMULATOR.md): 1e-9 relative.
void ExpectClose(double a, double b, const std::string& what) {
  EXPECT_LE(std::abs(a - b), 1e-9 * std::max({std::abs(a), std::abs(b), 1.0}))
      << what << ": " << a << " vs " << b;
}

// Every figure of the report the same (counts exactly, times within the
// tolerance), and the trace with the same events.
void ExpectSameFigures(const SimResult& a, const SimResult& b) {
  ExpectClose(a.step_time_us, b.step_time_us, "step");
  ExpectClose(a.compute_us, b.compute_us, "compute");
  ExpectClose(a.compute_bound_us, b.compute_bound_us, "compute-bound");
  ExpectClose(a.memory_bound_us, b.memory_bound_us, "memory-bound");
  ExpectClose(a.flops, b.flops, "flops");
  ExpectClose(a.hbm_bytes, b.hbm_bytes, "bytes");
  ExpectClose(a.communication_us, b.communication_us, "communication");
  ExpectClose(a.exposed_communication_us, b.exposed_communication_us,
              "exposed");
  ExpectClose(a.async_compute_us, b.async_compute_us, "async");
  ExpectClose(a.async_compute_wait_us, b.async_compute_wait_us, "async wait");
  EXPECT_EQ(a.kernels, b.kernels);
  EXPECT_EQ(a.peak_memory_bytes, b.peak_memory_bytes);
  ASSERT_EQ(a.collectives.size(), b.collectives.size());
  for (size_t i = 0; i < a.collectives.size(); ++i) {
    const SimCollective& x = a.collectives[i];
    const SimCollective& y = b.collectives[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.loop_path, y.loop_path);
    EXPECT_EQ(x.count, y.count) << x.name;
    ExpectClose(x.time_us, y.time_us, x.name + " time");
    ExpectClose(x.exposed_us, y.exposed_us, x.name + " exposed");
  }
  ASSERT_EQ(a.events.size(), b.events.size());
  for (size_t i = 0; i < a.events.size(); ++i) {
    const SimEvent& x = a.events[i];
    const SimEvent& y = b.events[i];
    EXPECT_EQ(x.name, y.name) << i;
    EXPECT_EQ(x.category, y.category) << i;
    EXPECT_EQ(x.depth, y.depth) << i;
    ExpectClose(x.start_us, y.start_us, x.name + " start");
    ExpectClose(x.duration_us, y.duration_us, x.name + " duration");
    ExpectClose(x.done_us, y.done_us, x.name + " done");
    ExpectClose(x.exposed_us, y.exposed_us, x.name + " exposed");
  }
}

SimOptions Replay() {
  SimOptions o;
  o.summarize = false;
  return o;
}

// `o` without the host model (the compute stream never waits for
// launches): states are the streams' alone.
SimOptions NoHost(SimOptions o) {
  o.host_launch_us = 0;
  o.gemm_host_launch_us = 0;
  o.host_step_us = 0;
  return o;
}

// Loop nests (an all-gather in flight across each inner loop, so inner
// loops start from states that differ from one outer iteration to the
// next) and the chain: summarized as replayed, and the trace too where it
// is within the copy budget (a million events; the replay keeps up to 4M).
TEST(TimelineTest, SummarizedEqualsReplayedOnGeneratedModules) {
  for (auto [depth, trips] :
       {std::pair{1, 5}, {2, 3}, {3, 4}, {6, 2}, {3, 64}, {4, 9}}) {
    SCOPED_TRACE(absl::StrCat("nest ", depth, " x ", trips));
    auto m = Parse(GenerateNest(depth, trips));
    ASSERT_NE(m, nullptr);
    SimOptions o;
    o.record_trace = std::pow(trips, depth) < 1e4;
    SimOptions replay = Replay();
    replay.record_trace = o.record_trace;
    SimResult a = SimulateOrFail(*m, o);
    SimResult b = SimulateOrFail(*m, replay);
    ExpectSameFigures(a, b);
    EXPECT_EQ(b.summarized_iterations, 0);
    EXPECT_EQ(a.extrapolated_iterations, 0);
    // Without the host's lead in the state, every nest has iterations and
    // loop runs to summarize.
    SimResult c = SimulateOrFail(*m, NoHost(o));
    ExpectSameFigures(c, SimulateOrFail(*m, NoHost(replay)));
    EXPECT_GT(c.summarized_iterations, 0);
    EXPECT_EQ(c.extrapolated_iterations, 0);
  }
  auto m = Parse(GenerateChain(3000));
  ASSERT_NE(m, nullptr);
  ExpectSameFigures(SimulateOrFail(*m, SimOptions()),
                    SimulateOrFail(*m, Replay()));
}

// XLA's own schedules and every earlier stage of each corpus case.
TEST(TimelineTest, SummarizedEqualsReplayedOnTheCorpus) {
  std::filesystem::path corpus =
      std::filesystem::path(HLOVERLAP_SOURCE_DIR) / ".." / "shared" / "corpus";
  if (!std::filesystem::exists(corpus)) GTEST_SKIP() << "no corpus";
  int files = 0;
  for (const auto& dir : std::filesystem::directory_iterator(corpus)) {
    if (!dir.is_directory()) continue;
    for (const auto& f : std::filesystem::directory_iterator(dir.path())) {
      if (f.path().extension() != ".hlo") continue;
      SCOPED_TRACE(f.path().string());
      absl::StatusOr<std::unique_ptr<Module>> m =
          ParseHloFile(f.path().string());
      ASSERT_TRUE(m.ok()) << m.status();
      SimOptions o;
      o.record_trace = true;
      SimOptions replay = Replay();
      replay.record_trace = true;
      ExpectSameFigures(SimulateOrFail(**m, o), SimulateOrFail(**m, replay));
      ++files;
    }
  }
  EXPECT_GT(files, 0);
}

// 2^30 innermost iterations (replaying them took hours): each level's
// all-gather runs 2^k times, and nothing is estimated.
TEST(TimelineTest, DeepNestIsSummarizedExactly) {
  auto m = Parse(GenerateNest(30, 2));
  ASSERT_NE(m, nullptr);
  SimResult r = SimulateOrFail(*m, SimOptions());
  ASSERT_EQ(r.collectives.size(), 30u);
  for (const SimCollective& c : r.collectives) {
    // Level k's body is %b<k>; its all-gather runs 2^k times.
    int k = std::stoi(c.computation.substr(1));
    EXPECT_EQ(c.count, int64_t{1} << k) << c.name;
  }
  EXPECT_EQ(r.extrapolated_iterations, 0);
  // 2 + 4 + ... + 2^30 iterations, all but 2 per loop run summarized.
  EXPECT_GT(r.summarized_iterations, int64_t{1} << 30);
}

// A body whose collective outlives it (started, never waited for): the
// collective stream falls further behind every iteration, so no iteration
// starts from the state of the one before. Simulated up to
// max_expanded_iterations, the rest extrapolated from the last one (exact
// here: the stream falls behind by the same amount each iteration).
std::string BacklogModule(int trips) {
  return absl::StrCat(R"(
HloModule backlog, is_scheduled=true, num_partitions=2

%cond (p: (s32[], bf16[2048,4096])) -> pred[] {
  %p = (s32[], bf16[2048,4096]{1,0}) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %n = s32[] constant()",
                      trips, R"()
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body (p: (s32[], bf16[2048,4096])) -> (s32[], bf16[2048,4096]) {
  %p = (s32[], bf16[2048,4096]{1,0}) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %w = bf16[2048,4096]{1,0} get-tuple-element(%p), index=1
  %ags = (bf16[2048,4096]{1,0}, bf16[4096,4096]{1,0}) all-gather-start(%w), channel_id=1, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true
  %e = bf16[2048,4096]{1,0} exponential(%w)
  %one = s32[] constant(1)
  %next = s32[] add(%i, %one)
  ROOT %t = (s32[], bf16[2048,4096]{1,0}) tuple(%next, %e)
}

ENTRY %main (w: bf16[2048,4096]) -> bf16[2048,4096] {
  %w = bf16[2048,4096]{1,0} parameter(0)
  %zero = s32[] constant(0)
  %init = (s32[], bf16[2048,4096]{1,0}) tuple(%zero, %w)
  %loop = (s32[], bf16[2048,4096]{1,0}) while(%init), condition=%cond, body=%body, backend_config={"known_trip_count":{"n":")",
                      trips, R"("}}
  ROOT %out = bf16[2048,4096]{1,0} get-tuple-element(%loop), index=1
}
)");
}

TEST(TimelineTest, LoopThatNeverSettlesIsExtrapolated) {
  auto m = Parse(BacklogModule(40));
  ASSERT_NE(m, nullptr);
  // Without the host model: the host's lead settles over the first
  // iterations (host_max_lead_us), so an extrapolation from the third
  // would not be exact; here the collective stream alone never settles.
  SimResult full =
      SimulateOrFail(*m, NoHost(SimOptions()));  // 40 <= 64: all simulated
  SimOptions o = NoHost(SimOptions());
  o.max_expanded_iterations = 3;
  SimResult ex = SimulateOrFail(*m, o);
  EXPECT_EQ(full.extrapolated_iterations, 0);
  EXPECT_EQ(full.summarized_iterations, 0);
  EXPECT_EQ(ex.extrapolated_iterations, 37);
  EXPECT_GT(full.step_time_us, full.compute_us * 2);  // collective-bound
  ExpectClose(ex.step_time_us, full.step_time_us, "step");
  ExpectClose(ex.compute_us, full.compute_us, "compute");
  EXPECT_EQ(ex.collectives.at(0).count, 40);
  EXPECT_EQ(ex.kernels, full.kernels);
}

// Past max_simulated_steps, a loop that has not settled is extrapolated
// after one iteration: a nest of such loops takes work linear in its size.
TEST(TimelineTest, StepBudgetBoundsLoopsThatNeverSettle) {
  std::string text = BacklogModule(64);
  auto m = Parse(text);
  ASSERT_NE(m, nullptr);
  SimOptions o;
  o.max_simulated_steps = 20;
  SimResult r = SimulateOrFail(*m, o);
  EXPECT_GT(r.extrapolated_iterations, 50);
  EXPECT_EQ(SimulateOrFail(*m, SimOptions()).extrapolated_iterations, 0);
  EXPECT_EQ(r.collectives.at(0).count, 64);
  EXPECT_GT(r.step_time_us, 0);
}

// A GPU-bound loop lets the host's lead grow by the same amount every
// iteration until host_max_lead_us: those iterations differ in the lead
// alone, the GPU repeats them exactly, and they are summarized (not
// extrapolated) as a replay of all 1000 finds them.
TEST(TimelineTest, HostLeadDriftIsSummarizedExactly) {
  auto m = Parse(GenerateNest(1, 1000));
  ASSERT_NE(m, nullptr);
  SimOptions o;  // max_expanded_iterations 64: the lead takes ~150 to cap
  ASSERT_GT(o.host_launch_us, 0);
  SimResult a = SimulateOrFail(*m, o);
  SimOptions replay = Replay();
  replay.max_expanded_iterations = 2000;
  SimResult b = SimulateOrFail(*m, replay);
  ExpectSameFigures(a, b);
  EXPECT_EQ(a.extrapolated_iterations, 0);
  EXPECT_GT(a.summarized_iterations, 900);
  EXPECT_EQ(b.summarized_iterations, 0);
}

// Summarized iterations appear in the trace as copies of the steady one up
// to max_expanded_iterations, then as one slice saying so.
TEST(TimelineTest, TraceShowsSummarizedIterations) {
  auto m = Parse(GenerateNest(1, 100));
  ASSERT_NE(m, nullptr);
  SimOptions o = NoHost(SimOptions());
  o.record_trace = true;
  SimResult r = SimulateOrFail(*m, o);
  int iterations = 0, kernels = 0;
  std::string last;
  for (const SimEvent& e : r.events) {
    if (e.category == "iteration") {
      ++iterations;
      last = e.name;
    }
    if (e.category == "kernel") ++kernels;
  }
  EXPECT_EQ(iterations, 65);
  EXPECT_EQ(last, "w #64..#99 (summarized)");
  EXPECT_EQ(r.summarized_iterations, 99);
  // The kernels of 64 iterations (no condition: known_trip_count).
  ASSERT_EQ(r.kernels % 100, 0);
  EXPECT_EQ(kernels, 64 * r.kernels / 100);
  nlohmann::json j = nlohmann::json::parse(ChromeTraceJson(r));
  EXPECT_GT(j["traceEvents"].size(), r.events.size());
}

// A trace of 2^20 iterations holds at most about a million copied events;
// the iterations past that are one summarized slice.
TEST(TimelineTest, TraceCopiesAreBounded) {
  auto m = Parse(GenerateNest(20, 2));
  ASSERT_NE(m, nullptr);
  SimOptions o;
  o.record_trace = true;
  SimResult r = SimulateOrFail(*m, o);
  EXPECT_LE(r.events.size(), 1'100'000u);
  EXPECT_GT(r.events.size(), 100'000u);
  bool summarized = false;
  for (const SimEvent& e : r.events) {
    summarized =
        summarized || (e.category == "iteration" &&
                       e.name.find("(summarized)") != std::string::npos);
  }
  EXPECT_TRUE(summarized);
  ASSERT_EQ(r.collectives.size(), 20u);
  EXPECT_EQ(r.collectives.back().computation, "b20");
  EXPECT_EQ(r.collectives.back().count, int64_t{1} << 20);
}

}  // namespace
}  // namespace hloverlap
