// Unit tests of the latency-hiding scheduler: ordering rules, resources,
// async compute, wrapped collectives, and every corpus file (each stage of
// each case; in sanitizer builds the small cases) scheduled into a
// verifying, re-parsable module.
#include "passes/latency_hiding_scheduler.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/parser.h"
#include "hlo/printer.h"
#include "hlo/verifier.h"

#if defined(__SANITIZE_ADDRESS__)
#define LHS_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LHS_TEST_SANITIZED 1
#endif
#endif
#ifndef LHS_TEST_SANITIZED
#define LHS_TEST_SANITIZED 0
#endif

namespace hloverlap {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::unique_ptr<Module> Parse(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : nullptr;
}

int Pos(const Computation& c, std::string_view name) {
  int k = 0;
  for (const auto& i : c.instructions()) {
    if (i->name() == name) return k;
    ++k;
  }
  return -1;
}

// Every operand and control predecessor comes earlier.
bool IsTopological(const Computation& c) {
  absl::flat_hash_map<const Instruction*, int> pos;
  int k = 0;
  for (const auto& i : c.instructions()) pos[i.get()] = k++;
  for (const auto& i : c.instructions()) {
    for (const Instruction* o : i->operands()) {
      if (pos.contains(o) && pos[o] >= pos[i.get()]) return false;
    }
    for (const Instruction* o : i->control_predecessors()) {
      if (pos.contains(o) && pos[o] >= pos[i.get()]) return false;
    }
  }
  return true;
}

absl::StatusOr<bool> RunScheduler(Module& m, PassContext& ctx) {
  LatencyHidingSchedulerPass pass;
  return pass.Run(m, ctx);
}

constexpr char kAsyncKinds[] = R"(
HloModule kinds, num_partitions=2
%sum (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}
%wrapped_rs (w0: f32[8192]) -> f32[4096] {
  %w0 = f32[8192]{0} parameter(0)
  ROOT %rs = f32[4096]{0} reduce-scatter(%w0), channel_id=3, replica_groups={{0,1}}, use_global_device_ids=true, dimensions={0}, to_apply=%sum
}
%fused (f0: f32[4096]) -> f32[4096] {
  %f0 = f32[4096]{0} parameter(0)
  ROOT %e = f32[4096]{0} exponential(%f0)
}
%wrapped_fusion (v0: f32[4096]) -> f32[4096] {
  %v0 = f32[4096]{0} parameter(0)
  ROOT %fu = f32[4096]{0} fusion(%v0), kind=kLoop, calls=%fused
}
ENTRY %main (a: f32[8192], b: f32[4096], c: f32[4096]) -> (f32[4096], f32[4096], f32[4096]) {
  %a = f32[8192]{0} parameter(0)
  %b = f32[4096]{0} parameter(1)
  %c = f32[4096]{0} parameter(2)
  %rss = ((f32[8192]{0}), f32[4096]{0}) async-start(%a), calls=%wrapped_rs
  %rsd = f32[4096]{0} async-done(%rss)
  %fs = ((f32[4096]{0}), f32[4096]{0}) async-start(%c), calls=%wrapped_fusion
  %fd = f32[4096]{0} async-done(%fs)
  %t0 = f32[4096]{0} tanh(%b)
  %t1 = f32[4096]{0} tanh(%t0)
  %t2 = f32[4096]{0} tanh(%t1)
  %u = f32[4096]{0} add(%t2, %rsd)
  %v = f32[4096]{0} add(%t2, %fd)
  ROOT %r = (f32[4096]{0}, f32[4096]{0}, f32[4096]{0}) tuple(%u, %v, %t2)
}
)";

TEST(LatencyHidingSchedulerTest, WrappedCollectiveAndAsyncCompute) {
  auto m = Parse(kAsyncKinds);
  ASSERT_NE(m, nullptr);
  PassContext ctx;
  ASSERT_TRUE(RunScheduler(*m, ctx).ok());
  EXPECT_TRUE(m->is_scheduled());
  const Computation& e = *m->entry();
  EXPECT_TRUE(IsTopological(e));
  // Both starts above the tanh chain, both dones below it.
  EXPECT_LT(Pos(e, "rss"), Pos(e, "t0"));
  EXPECT_LT(Pos(e, "fs"), Pos(e, "t0"));
  EXPECT_GT(Pos(e, "rsd"), Pos(e, "t2"));
  EXPECT_GT(Pos(e, "fd"), Pos(e, "t2"));
  EXPECT_TRUE(VerifyModule(*m).ok());
  // One collective (the async fusion is not one).
  bool summary = false;
  for (const Remark& r : ctx.remarks.remarks()) {
    if (r.message.find("scheduled module") != std::string::npos) {
      summary = true;
      EXPECT_THAT(r.message, HasSubstr("of 1 async collectives"));
    }
  }
  EXPECT_TRUE(summary);
}

TEST(LatencyHidingSchedulerTest, ControlDependenciesAreKept) {
  auto m = Parse(R"(
HloModule ctl, num_partitions=2
ENTRY %main (a: f32[64], b: f32[64]) -> f32[128] {
  %a = f32[64]{0} parameter(0)
  %b = f32[64]{0} parameter(1)
  %t0 = f32[64]{0} tanh(%b)
  %t1 = f32[64]{0} tanh(%t0)
  %ags = (f32[64]{0}, f32[128]{0}) all-gather-start(%a), channel_id=1, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true, control-predecessors={%t1}
  %agd = f32[128]{0} all-gather-done(%ags)
  %c = f32[128]{0} concatenate(%t1, %t0), dimensions={0}
  ROOT %r = f32[128]{0} add(%agd, %c)
}
)");
  ASSERT_NE(m, nullptr);
  PassContext ctx;
  ASSERT_TRUE(RunScheduler(*m, ctx).ok());
  const Computation& e = *m->entry();
  EXPECT_TRUE(IsTopological(e));
  EXPECT_GT(Pos(e, "ags"), Pos(e, "t1"));
}

TEST(LatencyHidingSchedulerTest, LoopUsingTheStreamBlocksAnOuterCollective) {
  // The loop body keeps a collective in flight; with limit 1 the outer
  // all-gather cannot stay in flight across the loop, with limit 2 it can.
  const std::string text = R"(
HloModule outer, num_partitions=2
%cond (p: (s32[], f32[64])) -> pred[] {
  %p = (s32[], f32[64]{0}) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %n = s32[] constant(3)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}
%body (q: (s32[], f32[64])) -> (s32[], f32[64]) {
  %q = (s32[], f32[64]{0}) parameter(0)
  %j = s32[] get-tuple-element(%q), index=0
  %x = f32[64]{0} get-tuple-element(%q), index=1
  %s = f32[32]{0} slice(%x), slice={[0:32]}
  %ags.in = (f32[32]{0}, f32[64]{0}) all-gather-start(%s), channel_id=1, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true
  %h = f32[64]{0} tanh(%x)
  %agd.in = f32[64]{0} all-gather-done(%ags.in)
  %y = f32[64]{0} add(%h, %agd.in)
  %one = s32[] constant(1)
  %k = s32[] add(%j, %one)
  ROOT %t = (s32[], f32[64]{0}) tuple(%k, %y)
}
ENTRY %main (a: f32[64], w: f32[32]) -> f32[64] {
  %a = f32[64]{0} parameter(0)
  %w = f32[32]{0} parameter(1)
  %ags = (f32[32]{0}, f32[64]{0}) all-gather-start(%w), channel_id=2, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true
  %agd = f32[64]{0} all-gather-done(%ags)
  %z = s32[] constant(0)
  %init = (s32[], f32[64]{0}) tuple(%z, %a)
  %loop = (s32[], f32[64]{0}) while(%init), condition=%cond, body=%body
  %out = f32[64]{0} get-tuple-element(%loop), index=1
  ROOT %r = f32[64]{0} add(%out, %agd)
}
)";
  for (int limit : {1, 2}) {
    auto m = Parse(text);
    ASSERT_NE(m, nullptr);
    PassContext ctx;
    ctx.options.collective_in_flight_limit = limit;
    ASSERT_TRUE(RunScheduler(*m, ctx).ok());
    const Computation& e = *m->entry();
    EXPECT_TRUE(IsTopological(e));
    bool across =
        Pos(e, "ags") < Pos(e, "loop") && Pos(e, "loop") < Pos(e, "agd");
    EXPECT_EQ(across, limit == 2) << "limit " << limit;
  }
}

TEST(LatencyHidingSchedulerTest, RejectsBadOptions) {
  auto m = Parse(kAsyncKinds);
  ASSERT_NE(m, nullptr);
  PassContext ctx;
  ctx.options.gpu = "a100";
  EXPECT_FALSE(RunScheduler(*m, ctx).ok());
  ctx.options.gpu = "h100";
  ctx.options.collective_in_flight_limit = 0;
  EXPECT_FALSE(RunScheduler(*m, ctx).ok());
}

TEST(LatencyHidingSchedulerTest, EstimateSequenceSerializesTheStream) {
  auto m = Parse(R"(
HloModule est, num_partitions=2
ENTRY %main (a: f32[64], b: f32[64]) -> (f32[128], f32[128]) {
  %a = f32[64]{0} parameter(0)
  %b = f32[64]{0} parameter(1)
  %s1 = (f32[64]{0}, f32[128]{0}) all-gather-start(%a), channel_id=1, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true
  %s2 = (f32[64]{0}, f32[128]{0}) all-gather-start(%b), channel_id=2, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true
  %d1 = f32[128]{0} all-gather-done(%s1)
  %d2 = f32[128]{0} all-gather-done(%s2)
  ROOT %r = (f32[128]{0}, f32[128]{0}) tuple(%d1, %d2)
}
)");
  ASSERT_NE(m, nullptr);
  AnalyticalLatencyEstimator est(H200Spec());
  double l = est.AsyncLatencyUs(*m->entry()->instructions()[2]);
  ASSERT_GT(l, 0);
  // One slot: the second collective runs after the first.
  SequenceTiming one = EstimateSequence(*m->entry(), est, 1, {});
  EXPECT_NEAR(one.duration_us, 2 * l, 1e-9);
  EXPECT_EQ(one.peak_in_flight, 2);
  ASSERT_EQ(one.pairs.size(), 2u);
  EXPECT_NEAR(one.pairs[1].exposed_us, l, 1e-9);
  // Two slots: both at once.
  SequenceTiming two = EstimateSequence(*m->entry(), est, 2, {});
  EXPECT_NEAR(two.duration_us, l, 1e-9);
}

fs::path CorpusDir() {
  const char* env = std::getenv("HLOVERLAP_SOURCE_DIR");
  return fs::path(env != nullptr && *env != '\0' ? env : HLOVERLAP_SOURCE_DIR) /
         ".." / "shared" / "corpus";
}

// A layer chain with one all-gather per layer whose starts all depend on
// one parameter (so delayed starts pile up in the ready set).
std::string GeneratedChain(int layers) {
  std::string t =
      "HloModule gen, num_partitions=2\nENTRY %main (x: f32[64], w: f32[32]) "
      "-> f32[64] {\n  %x = f32[64]{0} parameter(0)\n  %w = f32[32]{0} "
      "parameter(1)\n";
  std::string prev = "%x";
  for (int i = 0; i < layers; ++i) {
    std::string k = std::to_string(i);
    t += "  %ags." + k +
         " = (f32[32]{0}, f32[64]{0}) all-gather-start(%w), channel_id=" +
         std::to_string(i + 1) +
         ", replica_groups={{0,1}}, dimensions={0}, "
         "use_global_device_ids=true\n";
    t += "  %agd." + k + " = f32[64]{0} all-gather-done(%ags." + k + ")\n";
    t += "  %a." + k + " = f32[64]{0} tanh(" + prev + ")\n";
    t += "  %b." + k + " = f32[64]{0} exponential(%a." + k + ")\n";
    t += "  %d." + k + " = f32[64]{0} add(%b." + k + ", %agd." + k + ")\n";
    prev = "%d." + k;
  }
  t += "  ROOT %r = f32[64]{0} negate(" + prev + ")\n}\n";
  return t;
}

// The O(log n) selection picks exactly what a scan of the whole ready set
// against the whole priority chain picks.
TEST(LatencyHidingSchedulerTest, FastSelectionMatchesReference) {
  std::vector<std::unique_ptr<Module>> modules;
  modules.push_back(Parse(GeneratedChain(300)));
  modules.push_back(Parse(kAsyncKinds));
  std::error_code ec;
  if (fs::is_directory(CorpusDir(), ec)) {
    for (const char* f :
         {"shardmap_fsdp_accum/03_before_collective_pipeliner.hlo",
          "shardmap_fsdp_accum/09_after_optimizations.hlo",
          "seed_gspmd_fsdp_accum/09_after_optimizations.hlo"}) {
      absl::StatusOr<std::unique_ptr<Module>> m =
          ParseHloFile((CorpusDir() / f).string());
      ASSERT_TRUE(m.ok()) << m.status();
      modules.push_back(*std::move(m));
    }
  }
  AnalyticalLatencyEstimator est(H200Spec());
  for (const auto& m : modules) {
    ASSERT_NE(m, nullptr);
    for (int limit : {1, 2}) {
      for (const auto& c : m->computations()) {
        if (c->IsFusionComputation()) continue;
        SchedulerConfig fast;
        fast.collective_in_flight_limit = limit;
        SchedulerConfig ref = fast;
        ref.reference_selection = true;
        absl::StatusOr<ComputationSchedule> a =
            ScheduleComputation(*c, est, fast, {});
        absl::StatusOr<ComputationSchedule> b =
            ScheduleComputation(*c, est, ref, {});
        ASSERT_TRUE(a.ok() && b.ok());
        EXPECT_TRUE(a->order == b->order)
            << m->name() << " " << c->name() << " limit " << limit;
      }
    }
  }
}

// Every stage of every corpus case: the scheduler succeeds, the result
// verifies, every computation's order is topological, and the printed
// module parses back to the same text.
TEST(LatencyHidingSchedulerTest, CorpusSchedulesVerifyAndRoundTrip) {
  fs::path corpus = CorpusDir();
  std::error_code ec;
  if (!fs::is_directory(corpus, ec)) GTEST_SKIP() << "no corpus";
  std::vector<fs::path> files;
  for (const auto& dir : fs::directory_iterator(corpus, ec)) {
    if (!dir.is_directory()) continue;
    for (const auto& f : fs::directory_iterator(dir.path(), ec)) {
      // Sanitizer builds: the small cases only.
      if (LHS_TEST_SANITIZED &&
          dir.path().filename().string().rfind("big_", 0) == 0) {
        continue;
      }
      if (f.path().extension() == ".hlo") files.push_back(f.path());
    }
  }
  std::sort(files.begin(), files.end());
  ASSERT_FALSE(files.empty());
  for (const fs::path& f : files) {
    SCOPED_TRACE(f.string());
    absl::StatusOr<std::unique_ptr<Module>> m = ParseHloFile(f.string());
    ASSERT_TRUE(m.ok()) << m.status();
    for (int limit : {1, 2}) {
      if (limit == 2 && f.filename() != "09_after_optimizations.hlo") continue;
      PassContext ctx;
      ctx.options.collective_in_flight_limit = limit;
      auto t0 = std::chrono::steady_clock::now();
      absl::StatusOr<bool> r = RunScheduler(**m, ctx);
      double ms = std::chrono::duration<double, std::milli>(
                      std::chrono::steady_clock::now() - t0)
                      .count();
      ASSERT_TRUE(r.ok()) << r.status();
      if (!LHS_TEST_SANITIZED) {
        EXPECT_LT(ms, 2000) << "scheduling took " << ms << " ms";
      }
      EXPECT_EQ(ctx.remarks.Count(RemarkKind::kFailure), 0);
      EXPECT_TRUE((*m)->is_scheduled());
      for (const auto& c : (*m)->computations()) {
        EXPECT_TRUE(IsTopological(*c)) << c->name();
      }
      absl::Status v = VerifyModule(**m);
      EXPECT_TRUE(v.ok()) << v;
      std::string text = PrintModule(**m);
      absl::StatusOr<std::unique_ptr<Module>> again = ParseHloModule(text);
      ASSERT_TRUE(again.ok()) << again.status();
      EXPECT_TRUE((*again)->is_scheduled());
      EXPECT_EQ(PrintModule(**again), text);
    }
  }
}

}  // namespace
}  // namespace hloverlap
