#include "sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>

#include "analysis/while_loop_analysis.h"
#include "gtest/gtest.h"
#include "hlo/computation.h"
#include "hlo/parser.h"
#include "nlohmann/json.hpp"
#include "sim/test_util.h"

namespace hloverlap {
namespace {

// The plain roofline (no achieved-vs-ideal factors, the cost model's launch
// cost on the GPU, no host), so that expected times are the cost model's.
SimOptions Neutral() {
  SimOptions o;
  o.kernel_overhead_us = H200Spec().kernel_launch_us;
  o.gemm_overhead_us = 0;
  o.memory_efficiency = 1;
  o.compute_efficiency = 1;
  o.async_compute_contention = 0;
  o.collective_sm_share = 0;
  o.collective_hbm_share = 0;
  o.host_launch_us = 0;
  o.gemm_host_launch_us = 0;
  o.host_step_us = 0;
  o.host_max_lead_us = 0;
  // The tests' modules are small unfused ones whose kernels they count one
  // per op; the fused estimate has tests of its own (below and
  // analysis/fusion_estimate_test.cc).
  o.unfused_compute = UnfusedCompute::kPerOp;
  return o;
}

SimResult Sim(const Module& m, SimOptions o = Neutral()) {
  return SimulateOrFail(m, o);
}

const Instruction* Find(const Module& m, const std::string& name) {
  for (const auto& c : m.computations()) {
    for (const auto& i : c->instructions()) {
      if (i->name() == name) return i.get();
    }
  }
  return nullptr;
}

double Cost(const Module& m, const std::string& name) {
  GpuCostModel model(H200Spec());
  const Instruction* i = Find(m, name);
  EXPECT_NE(i, nullptr) << name;
  return i == nullptr ? 0 : model.TimeUs(*i);
}

double AgTime(const Module& m, const std::string& start) {
  GpuCostModel model(H200Spec());
  const Instruction* i = Find(m, start);
  EXPECT_NE(i, nullptr) << start;
  return i == nullptr ? 0 : model.AsyncLatencyUs(*i);
}

// An all-gather of 32 MiB (about 90 us on 2 GPUs) and a 4096^3 bf16 dot
// (about 175 us). `order` is the body of the entry between the parameters
// and the root.
std::string OverlapModule(const std::string& order) {
  return R"(
HloModule overlap, is_scheduled=true, num_partitions=2

ENTRY %main (x: bf16[4096,4096], w: bf16[2048,4096]) -> bf16[4096,4096] {
  %x = bf16[4096,4096]{1,0} parameter(0)
  %w = bf16[2048,4096]{1,0} parameter(1)
)" + order +
         R"(
  ROOT %use = bf16[4096,4096]{1,0} dot(%d0, %agd), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";
}

constexpr char kStart[] =
    "  %ags = (bf16[2048,4096]{1,0}, bf16[4096,4096]{1,0}) "
    "all-gather-start(%w), channel_id=1, replica_groups={{0,1}}, "
    "dimensions={0}, use_global_device_ids=true\n";
constexpr char kDone[] =
    "  %agd = bf16[4096,4096]{1,0} all-gather-done(%ags)\n";
constexpr char kDot[] =
    "  %d0 = bf16[4096,4096]{1,0} dot(%x, %x), lhs_contracting_dims={1}, "
    "rhs_contracting_dims={0}\n";

TEST(SimulatorTest, OverlappedCollectiveIsHidden) {
  auto m = Parse(OverlapModule(std::string(kStart) + kDot + kDone));
  ASSERT_NE(m, nullptr);
  SimResult r = Sim(*m);
  double dot = Cost(*m, "d0");
  double ag = AgTime(*m, "ags");
  ASSERT_GT(ag, 10);
  ASSERT_GT(dot, ag);  // the dot is long enough to hide the all-gather
  EXPECT_NEAR(r.communication_us, ag, 1e-9);
  EXPECT_NEAR(r.exposed_communication_us, 0, 1e-9);
  EXPECT_NEAR(r.step_time_us, 2 * dot, 1e-6);
  EXPECT_NEAR(r.compute_us, 2 * dot, 1e-6);
  ASSERT_EQ(r.collectives.size(), 1u);
  EXPECT_EQ(r.collectives[0].kind, "all-gather");
  EXPECT_EQ(r.collectives[0].group_size, 2);
  EXPECT_EQ(r.collectives[0].bytes, 4096 * 4096 * 2);
  EXPECT_EQ(r.collectives[0].count, 1);
  EXPECT_TRUE(r.collectives[0].loop_path.empty());
}

TEST(SimulatorTest, CollectiveWaitedForRightAwayIsExposed) {
  auto m = Parse(OverlapModule(std::string(kStart) + kDone + kDot));
  ASSERT_NE(m, nullptr);
  SimResult r = Sim(*m);
  double dot = Cost(*m, "d0");
  double ag = AgTime(*m, "ags");
  EXPECT_NEAR(r.exposed_communication_us, ag, 1e-9);
  EXPECT_NEAR(r.collectives[0].exposed_us, ag, 1e-9);
  EXPECT_NEAR(r.step_time_us, ag + 2 * dot, 1e-6);
}

TEST(SimulatorTest, PartialOverlapExposesTheRest) {
  // A small kernel (exp of 1 Mi elements) hides only part of the
  // all-gather.
  std::string order = std::string(kStart) +
                      "  %e = bf16[1024,1024]{1,0} exponential(%x.s)\n" +
                      kDone + kDot;
  std::string text = OverlapModule(order);
  text.replace(text.find("  %ags"), 0,
               "  %x.s = bf16[1024,1024]{1,0} slice(%x), "
               "slice={[0:1024], [0:1024]}\n");
  auto m = Parse(text);
  ASSERT_NE(m, nullptr);
  SimResult r = Sim(*m);
  double ag = AgTime(*m, "ags");
  double e = Cost(*m, "e");
  ASSERT_LT(e, ag);
  EXPECT_NEAR(r.exposed_communication_us, ag - e, 1e-6);
}

TEST(SimulatorTest, CollectivesShareOneStream) {
  // Two all-gathers issued back to back: the second starts when the first
  // ends, so waiting for both after a short kernel exposes 2 x ag - kernel.
  std::string text = R"(
HloModule two, is_scheduled=true, num_partitions=2

ENTRY %main (x: bf16[1024,1024], w: bf16[2048,4096], v: bf16[2048,4096]) -> (bf16[4096,4096], bf16[4096,4096], bf16[1024,1024]) {
  %x = bf16[1024,1024]{1,0} parameter(0)
  %w = bf16[2048,4096]{1,0} parameter(1)
  %v = bf16[2048,4096]{1,0} parameter(2)
  %ags.a = (bf16[2048,4096]{1,0}, bf16[4096,4096]{1,0}) all-gather-start(%w), channel_id=1, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true
  %ags.b = (bf16[2048,4096]{1,0}, bf16[4096,4096]{1,0}) all-gather-start(%v), channel_id=2, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true
  %e = bf16[1024,1024]{1,0} exponential(%x)
  %agd.a = bf16[4096,4096]{1,0} all-gather-done(%ags.a)
  %agd.b = bf16[4096,4096]{1,0} all-gather-done(%ags.b)
  ROOT %t = (bf16[4096,4096]{1,0}, bf16[4096,4096]{1,0}, bf16[1024,1024]{1,0}) tuple(%agd.a, %agd.b, %e)
}
)";
  auto m = Parse(text);
  ASSERT_NE(m, nullptr);
  SimResult r = Sim(*m);
  double ag = AgTime(*m, "ags.a");
  double e = Cost(*m, "e");
  EXPECT_NEAR(r.step_time_us, 2 * ag, 1e-6);
  EXPECT_NEAR(r.exposed_communication_us, 2 * ag - e, 1e-6);
  EXPECT_NEAR(r.communication_us, 2 * ag, 1e-6);
}

std::string LoopModule(bool known_trip_count, int trips) {
  std::string config =
      known_trip_count
          ? absl::StrCat(", backend_config={\"known_trip_count\":{\"n\":\"",
                         trips, "\"}}")
          : "";
  return absl::StrCat(R"(
HloModule loop, is_scheduled=true, num_partitions=2

%cond (p: (s32[], bf16[4096,4096], bf16[2048,4096])) -> pred[] {
  %p = (s32[], bf16[4096,4096]{1,0}, bf16[2048,4096]{1,0}) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %n = s32[] constant()",
                      trips, R"()
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body (p.1: (s32[], bf16[4096,4096], bf16[2048,4096])) -> (s32[], bf16[4096,4096], bf16[2048,4096]) {
  %p.1 = (s32[], bf16[4096,4096]{1,0}, bf16[2048,4096]{1,0}) parameter(0)
  %i.1 = s32[] get-tuple-element(%p.1), index=0
  %x = bf16[4096,4096]{1,0} get-tuple-element(%p.1), index=1
  %w = bf16[2048,4096]{1,0} get-tuple-element(%p.1), index=2
  %ags = (bf16[2048,4096]{1,0}, bf16[4096,4096]{1,0}) all-gather-start(%w), channel_id=1, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true, metadata={op_name="jit(f)/all_gather" source_file="model.py" source_line=42}
  %d0 = bf16[4096,4096]{1,0} dot(%x, %x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %agd = bf16[4096,4096]{1,0} all-gather-done(%ags)
  %use = bf16[4096,4096]{1,0} dot(%d0, %agd), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %one = s32[] constant(1)
  %next = s32[] add(%i.1, %one)
  ROOT %t = (s32[], bf16[4096,4096]{1,0}, bf16[2048,4096]{1,0}) tuple(%next, %use, %w)
}

ENTRY %main (x.0: bf16[4096,4096], w.0: bf16[2048,4096]) -> bf16[4096,4096] {
  %x.0 = bf16[4096,4096]{1,0} parameter(0)
  %w.0 = bf16[2048,4096]{1,0} parameter(1)
  %zero = s32[] constant(0)
  %init = (s32[], bf16[4096,4096]{1,0}, bf16[2048,4096]{1,0}) tuple(%zero, %x.0, %w.0)
  %loop = (s32[], bf16[4096,4096]{1,0}, bf16[2048,4096]{1,0}) while(%init), condition=%cond, body=%body)",
                      config, R"(
  ROOT %out = bf16[4096,4096]{1,0} get-tuple-element(%loop), index=1
}
)");
}

TEST(SimulatorTest, WhileLoopExpandedByKnownTripCount) {
  auto m = Parse(LoopModule(true, 4));
  ASSERT_NE(m, nullptr);
  SimResult r = Sim(*m);
  double dot = Cost(*m, "d0");
  double ag = AgTime(*m, "ags");
  // Body (2 dots and the counter add) 4 times; XLA runs a loop with
  // known_trip_count without its condition.
  EXPECT_NEAR(r.compute_us, 4 * (2 * dot + Cost(*m, "next")), 1e-6);
  EXPECT_NEAR(r.communication_us, 4 * ag, 1e-6);
  EXPECT_NEAR(r.exposed_communication_us, 0, 1e-9);
  ASSERT_EQ(r.collectives.size(), 1u);
  EXPECT_EQ(r.collectives[0].count, 4);
  EXPECT_EQ(r.collectives[0].loop_path, "loop x4");
  EXPECT_EQ(r.collectives[0].source, "model.py:42");
  EXPECT_NEAR(r.step_time_us, r.compute_us, 1e-6);
}

TEST(SimulatorTest, TripCountFromLoopAnalysis) {
  auto known = Parse(LoopModule(true, 6));
  auto inferred = Parse(LoopModule(false, 6));
  ASSERT_NE(known, nullptr);
  ASSERT_NE(inferred, nullptr);
  SimResult a = Sim(*known);
  SimResult b = Sim(*inferred);
  EXPECT_EQ(b.collectives.at(0).count, 6);
  // The same but for the condition, which only the loop without
  // known_trip_count runs (7 times).
  EXPECT_NEAR(b.step_time_us - a.step_time_us, 7 * Cost(*inferred, "lt"), 1e-6);
}

TEST(SimulatorTest, TripCountThroughFusions) {
  // XLA's final dumps: the test in a compare fusion of the counter, the
  // increment in an add fusion of a copy; no known_trip_count.
  std::string text = R"(
HloModule fused_counter, is_scheduled=true

%fused_compare (p0: s32[]) -> pred[] {
  %p0 = s32[] parameter(0)
  %c3 = s32[] constant(7)
  ROOT %lt = pred[] compare(%p0, %c3), direction=LT
}

%fused_add (p1: s32[]) -> s32[] {
  %p1 = s32[] parameter(0)
  %c2 = s32[] constant(2)
  ROOT %a = s32[] add(%p1, %c2)
}

%cond (p: (s32[], f32[64])) -> pred[] {
  %p = (s32[], f32[64]{0}) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  ROOT %f = pred[] fusion(%i), kind=kLoop, calls=%fused_compare
}

%body (q: (s32[], f32[64])) -> (s32[], f32[64]) {
  %q = (s32[], f32[64]{0}) parameter(0)
  %j = s32[] get-tuple-element(%q), index=0
  %v = f32[64]{0} get-tuple-element(%q), index=1
  %cp = s32[] copy(%j)
  %e = f32[64]{0} exponential(%v)
  %n = s32[] fusion(%cp), kind=kLoop, calls=%fused_add
  ROOT %t = (s32[], f32[64]{0}) tuple(%n, %e)
}

ENTRY %main (x: f32[64]) -> f32[64] {
  %x = f32[64]{0} parameter(0)
  %z = s32[] constant(1)
  %zc = s32[] copy(%z)
  %init = (s32[], f32[64]{0}) tuple(%zc, %x)
  %w = (s32[], f32[64]{0}) while(%init), condition=%cond, body=%body, backend_config={"known_induction_variable":{"tuple_index":"0"}}
  ROOT %r = f32[64]{0} get-tuple-element(%w), index=1
}
)";
  auto m = Parse(text);
  ASSERT_NE(m, nullptr);
  const Instruction* w = Find(*m, "w");
  ASSERT_NE(w, nullptr);
  // i = 1, 3, 5 pass i < 7.
  EXPECT_EQ(WhileTripCount(*w), 3);
  SimResult r = Sim(*m);
  EXPECT_TRUE(r.unknown_trip_counts.empty());
  EXPECT_NEAR(r.compute_us,
              3 * (Cost(*m, "e") + Cost(*m, "cp") + Cost(*m, "n")) +
                  4 * Cost(*m, "f") + Cost(*m, "zc"),
              1e-6);
}

// Iteration 1 starts from the state iteration 0 started from, so the other
// 39 repeat it exactly (summarized, not estimated), whatever
// max_expanded_iterations (sim/timeline_test.cc: loops that never settle
// are extrapolated past it).
TEST(SimulatorTest, LongLoopsAreSummarizedFromTheSteadyState) {
  auto m = Parse(LoopModule(true, 40));
  ASSERT_NE(m, nullptr);
  SimResult full = Sim(*m);
  SimOptions o = Neutral();
  o.max_expanded_iterations = 3;
  SimResult ex = Sim(*m, o);
  EXPECT_EQ(full.extrapolated_iterations, 0);
  EXPECT_EQ(ex.extrapolated_iterations, 0);
  EXPECT_EQ(ex.summarized_iterations, 39);
  EXPECT_NEAR(ex.step_time_us, full.step_time_us, 1e-6 * full.step_time_us);
  EXPECT_NEAR(ex.compute_us, full.compute_us, 1e-6 * full.compute_us);
  EXPECT_EQ(ex.collectives.at(0).count, 40);
  EXPECT_EQ(ex.kernels, full.kernels);
}

TEST(SimulatorTest, NestedLoopsMultiplyAndNameThePath) {
  // The loop module's while inside an outer loop of 3.
  std::string text = LoopModule(true, 4);
  std::string outer = R"(
%ocond (q: (s32[], bf16[4096,4096], bf16[2048,4096])) -> pred[] {
  %q = (s32[], bf16[4096,4096]{1,0}, bf16[2048,4096]{1,0}) parameter(0)
  %j = s32[] get-tuple-element(%q), index=0
  %m = s32[] constant(3)
  ROOT %olt = pred[] compare(%j, %m), direction=LT
}

%obody (q.1: (s32[], bf16[4096,4096], bf16[2048,4096])) -> (s32[], bf16[4096,4096], bf16[2048,4096]) {
  %q.1 = (s32[], bf16[4096,4096]{1,0}, bf16[2048,4096]{1,0}) parameter(0)
  %j.1 = s32[] get-tuple-element(%q.1), index=0
  %xx = bf16[4096,4096]{1,0} get-tuple-element(%q.1), index=1
  %ww = bf16[2048,4096]{1,0} get-tuple-element(%q.1), index=2
  %z = s32[] constant(0)
  %in = (s32[], bf16[4096,4096]{1,0}, bf16[2048,4096]{1,0}) tuple(%z, %xx, %ww)
  %inner = (s32[], bf16[4096,4096]{1,0}, bf16[2048,4096]{1,0}) while(%in), condition=%cond, body=%body, backend_config={"known_trip_count":{"n":"4"}}
  %r = bf16[4096,4096]{1,0} get-tuple-element(%inner), index=1
  %o1 = s32[] constant(1)
  %jn = s32[] add(%j.1, %o1)
  ROOT %ot = (s32[], bf16[4096,4096]{1,0}, bf16[2048,4096]{1,0}) tuple(%jn, %r, %ww)
}
)";
  text.insert(text.find("ENTRY"), outer);
  text.replace(text.find("condition=%cond, body=%body, backend_config="
                         "{\"known_trip_count\":{\"n\":\"4\"}}\n  ROOT %out"),
               std::string("condition=%cond, body=%body, backend_config="
                           "{\"known_trip_count\":{\"n\":\"4\"}}")
                   .size(),
               "condition=%ocond, body=%obody, backend_config="
               "{\"known_trip_count\":{\"n\":\"3\"}}");
  auto m = Parse(text);
  ASSERT_NE(m, nullptr);
  SimResult r = Sim(*m);
  ASSERT_EQ(r.collectives.size(), 1u);
  EXPECT_EQ(r.collectives[0].count, 12);
  EXPECT_EQ(r.collectives[0].loop_path, "loop x3 > inner x4");
  EXPECT_NEAR(r.communication_us, 12 * AgTime(*m, "ags"), 1e-6);
}

TEST(SimulatorTest, AsyncStartWrappingACollective) {
  std::string text = R"(
HloModule wrapped, is_scheduled=true, num_partitions=2

%add (l: f32[], r: f32[]) -> f32[] {
  %l = f32[] parameter(0)
  %r = f32[] parameter(1)
  ROOT %s = f32[] add(%l, %r)
}

%ag_comp (a: bf16[2048,4096]) -> bf16[4096,4096] {
  %a = bf16[2048,4096]{1,0} parameter(0)
  ROOT %ag = bf16[4096,4096]{1,0} all-gather(%a), channel_id=1, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true
}

%rs_comp (b: f32[4096,4096]) -> f32[2048,4096] {
  %b = f32[4096,4096]{1,0} parameter(0)
  ROOT %rs = f32[2048,4096]{1,0} reduce-scatter(%b), channel_id=2, replica_groups={{0,1}}, dimensions={0}, to_apply=%add
}

ENTRY %main (x: bf16[4096,4096], w: bf16[2048,4096], g: f32[4096,4096]) -> (bf16[4096,4096], f32[2048,4096]) {
  %x = bf16[4096,4096]{1,0} parameter(0)
  %w = bf16[2048,4096]{1,0} parameter(1)
  %g = f32[4096,4096]{1,0} parameter(2)
  %s1 = ((bf16[2048,4096]{1,0}), bf16[4096,4096]{1,0}) async-start(%w), calls=%ag_comp
  %d0 = bf16[4096,4096]{1,0} dot(%x, %x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %d1 = bf16[4096,4096]{1,0} async-done(%s1)
  %s2 = ((f32[4096,4096]{1,0}), f32[2048,4096]{1,0}) async-start(%g), calls=%rs_comp
  %d2 = f32[2048,4096]{1,0} async-done(%s2)
  %use = bf16[4096,4096]{1,0} dot(%d0, %d1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %t = (bf16[4096,4096]{1,0}, f32[2048,4096]{1,0}) tuple(%use, %d2)
}
)";
  auto m = Parse(text);
  ASSERT_NE(m, nullptr);
  SimResult r = Sim(*m);
  ASSERT_EQ(r.collectives.size(), 2u);
  std::map<std::string, SimCollective> by_kind;
  for (const SimCollective& c : r.collectives) by_kind[c.kind] = c;
  ASSERT_TRUE(by_kind.count("all-gather"));
  ASSERT_TRUE(by_kind.count("reduce-scatter"));
  EXPECT_NEAR(by_kind["all-gather"].exposed_us, 0, 1e-9);
  double rs = AgTime(*m, "s2");
  EXPECT_GT(rs, 0);
  EXPECT_NEAR(by_kind["reduce-scatter"].exposed_us, rs, 1e-6);
  EXPECT_EQ(by_kind["reduce-scatter"].bytes, 4096 * 4096 * 4);
  EXPECT_NEAR(r.exposed_communication_us, rs, 1e-6);
}

TEST(SimulatorTest, SyncCollectiveIsFullyExposed) {
  std::string text = R"(
HloModule sync, is_scheduled=true, num_partitions=2

%add (l: f32[], r: f32[]) -> f32[] {
  %l = f32[] parameter(0)
  %r = f32[] parameter(1)
  ROOT %s = f32[] add(%l, %r)
}

ENTRY %main (g: f32[1024,1024]) -> f32[1024,1024] {
  %g = f32[1024,1024]{1,0} parameter(0)
  ROOT %ar = f32[1024,1024]{1,0} all-reduce(%g), channel_id=1, replica_groups={{0,1}}, to_apply=%add
}
)";
  auto m = Parse(text);
  ASSERT_NE(m, nullptr);
  SimResult r = Sim(*m);
  ASSERT_EQ(r.collectives.size(), 1u);
  EXPECT_FALSE(r.collectives[0].async);
  EXPECT_GT(r.communication_us, 0);
  EXPECT_NEAR(r.exposed_communication_us, r.communication_us, 1e-9);
  EXPECT_NEAR(r.step_time_us, r.communication_us, 1e-9);
}

TEST(SimulatorTest, DevicesOverrideGroupsOfAllDevices) {
  std::string text = R"(
HloModule all, is_scheduled=true, num_partitions=2

ENTRY %main (w: bf16[2048,4096]) -> bf16[4096,4096] {
  %w = bf16[2048,4096]{1,0} parameter(0)
  ROOT %ag = bf16[4096,4096]{1,0} all-gather(%w), channel_id=1, replica_groups={}, dimensions={0}
}
)";
  auto m = Parse(text);
  ASSERT_NE(m, nullptr);
  SimResult two = Sim(*m);
  SimOptions o = Neutral();
  o.devices = 8;
  SimResult eight = Sim(*m, o);
  EXPECT_EQ(two.collectives.at(0).group_size, 2);
  EXPECT_EQ(eight.collectives.at(0).group_size, 8);
  EXPECT_GT(eight.communication_us, two.communication_us);
}

TEST(SimulatorTest, PeakMemoryFromLiveness) {
  // p (4 MiB) -> a -> b -> c -> d: each exponential writes into its
  // operand's buffer, which dies there (XLA's buffer sharing), so p and one
  // temporary are live; the parameter is not overwritten.
  std::string text = R"(
HloModule mem, is_scheduled=true

ENTRY %main (p: f32[1024,1024]) -> f32[1024,1024] {
  %p = f32[1024,1024]{1,0} parameter(0)
  %a = f32[1024,1024]{1,0} exponential(%p)
  %b = f32[1024,1024]{1,0} exponential(%a)
  %c = f32[1024,1024]{1,0} exponential(%b)
  %d = f32[1024,1024]{1,0} exponential(%c)
  ROOT %e = f32[1024,1024]{1,0} bitcast(%d)
}
)";
  auto m = Parse(text);
  ASSERT_NE(m, nullptr);
  PeakMemory peak = ComputePeakMemory(*m);
  EXPECT_EQ(peak.parameter_bytes, 4 << 20);
  EXPECT_EQ(peak.bytes, 2 * (4 << 20));
  SimResult r = Sim(*m);
  EXPECT_EQ(r.peak_memory_bytes, peak.bytes);
  // A second user after the exponential keeps `a` alive: no sharing.
  std::string kept = text;
  kept.replace(kept.find("ROOT %e = f32[1024,1024]{1,0} bitcast(%d)"),
               std::string("ROOT %e = f32[1024,1024]{1,0} bitcast(%d)").size(),
               "ROOT %e = f32[1024,1024]{1,0} add(%d, %a)");
  auto m2 = Parse(kept);
  ASSERT_NE(m2, nullptr);
  EXPECT_EQ(ComputePeakMemory(*m2).bytes, 3 * (4 << 20));
}

TEST(SimulatorTest, PeakMemoryIncludesLoopBodyTemporaries) {
  auto m = Parse(LoopModule(true, 4));
  ASSERT_NE(m, nullptr);
  PeakMemory peak = ComputePeakMemory(*m);
  const int64_t x = 4096 * 4096 * 2;
  const int64_t w = 2048 * 4096 * 2;
  // Entry: x, w (parameters); body: the all-gather result and d0 (the
  // new state value `use` takes over x's slot).
  EXPECT_EQ(peak.parameter_bytes, x + w);
  EXPECT_EQ(peak.bytes, x + w + 2 * x + 4 /*the s32 counter*/);
}

TEST(SimulatorTest, PeakMemoryAsyncInPlaceUpdateAndGemmWorkspace) {
  // An async dynamic-update-slice fusion writes into its operand (no second
  // 64 MiB buffer); a GEMM's s8 workspace is scratch of that kernel even
  // when it is kept in the result tuple.
  std::string text = R"(
HloModule inplace, is_scheduled=true

%fused_dus (a: f32[4096,4096], u: f32[1,4096], i: s32[]) -> f32[4096,4096] {
  %a = f32[4096,4096]{1,0} parameter(0)
  %u = f32[1,4096]{1,0} parameter(1)
  %i = s32[] parameter(2)
  %z = s32[] constant(0)
  ROOT %d = f32[4096,4096]{1,0} dynamic-update-slice(%a, %u, %i, %z)
}

%async_dus (b: f32[4096,4096], v: f32[1,4096], j: s32[]) -> f32[4096,4096] {
  %b = f32[4096,4096]{1,0} parameter(0)
  %v = f32[1,4096]{1,0} parameter(1)
  %j = s32[] parameter(2)
  ROOT %f = f32[4096,4096]{1,0} fusion(%b, %v, %j), kind=kLoop, calls=%fused_dus
}

ENTRY %main (x: f32[4096,4096], y: f32[1,4096], k: s32[], g: bf16[1024,1024]) -> (f32[4096,4096], bf16[1024,1024], s8[33554432]) {
  %x = f32[4096,4096]{1,0} parameter(0)
  %y = f32[1,4096]{1,0} parameter(1)
  %k = s32[] parameter(2)
  %g = bf16[1024,1024]{1,0} parameter(3)
  %e = f32[4096,4096]{1,0} exponential(%x)
  %s = ((f32[4096,4096]{1,0}, f32[1,4096]{1,0}, s32[]), f32[4096,4096]{1,0}, u32[]) async-start(%e, %y, %k), calls=%async_dus
  %gemm = (bf16[1024,1024]{1,0}, s8[33554432]{0}) custom-call(%g, %g), custom_call_target="__cublas$lt$matmul", backend_config={"gemm_backend_config":{"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"],"lhs_batch_dimensions":[],"rhs_batch_dimensions":[]}}}
  %out = bf16[1024,1024]{1,0} get-tuple-element(%gemm), index=0
  %ws = s8[33554432]{0} get-tuple-element(%gemm), index=1
  %d = f32[4096,4096]{1,0} async-done(%s)
  ROOT %t = (f32[4096,4096]{1,0}, bf16[1024,1024]{1,0}, s8[33554432]{0}) tuple(%d, %out, %ws)
}
)";
  auto m = Parse(text);
  ASSERT_NE(m, nullptr);
  PeakMemory peak = ComputePeakMemory(*m);
  const int64_t big = 4096 * 4096 * 4;
  const int64_t params = big + 4096 * 4 + 4 + 1024 * 1024 * 2;
  EXPECT_EQ(peak.parameter_bytes, params);
  // x, e (updated in place), the async context (u32), the GEMM output and
  // its workspace at the GEMM.
  EXPECT_EQ(peak.bytes, params + big + 4 + 1024 * 1024 * 2 + 33554432);
}

TEST(SimulatorTest, ChromeTraceStructure) {
  auto m = Parse(LoopModule(true, 3));
  ASSERT_NE(m, nullptr);
  SimOptions o = Neutral();
  o.record_trace = true;
  SimResult r = Sim(*m, o);
  nlohmann::json j = nlohmann::json::parse(ChromeTraceJson(r));
  ASSERT_TRUE(j.contains("traceEvents"));
  ASSERT_TRUE(j["traceEvents"].is_array());
  std::map<int, std::string> threads;
  std::map<int64_t, int> flow_starts, flow_ends;
  int loops = 0, iterations = 0, kernels = 0, collectives = 0;
  double loop_begin = -1, loop_end = -1;
  std::vector<std::pair<double, double>> iters;
  for (const nlohmann::json& e : j["traceEvents"]) {
    ASSERT_TRUE(e.contains("ph"));
    std::string ph = e["ph"];
    if (ph == "M") {
      if (e["name"] == "thread_name") {
        threads[e["tid"].get<int>()] = e["args"]["name"];
      }
      continue;
    }
    ASSERT_TRUE(e.contains("ts"));
    ASSERT_TRUE(e["ts"].is_number());
    ASSERT_EQ(e["pid"], 1);
    if (ph == "X") {
      ASSERT_TRUE(e["dur"].is_number());
      ASSERT_GE(e["dur"].get<double>(), 0);
      std::string cat = e["cat"];
      double ts = e["ts"], dur = e["dur"];
      if (cat == "loop") {
        ++loops;
        loop_begin = ts;
        loop_end = ts + dur;
        EXPECT_EQ(e["tid"], 1);
      } else if (cat == "iteration") {
        ++iterations;
        iters.emplace_back(ts, ts + dur);
      } else if (cat == "kernel") {
        ++kernels;
        EXPECT_EQ(e["tid"], 1);
      } else if (cat == "collective") {
        ++collectives;
        EXPECT_EQ(e["tid"], 2);
        ASSERT_TRUE(e.contains("args"));
        EXPECT_GT(e["args"]["overlapped_kernels"].get<int>(), 0);
        EXPECT_EQ(e["args"]["kind"], "all-gather");
        EXPECT_EQ(e["args"]["loop_path"], "loop x3");
      }
    } else if (ph == "s") {
      ++flow_starts[e["id"].get<int64_t>()];
    } else if (ph == "f") {
      ++flow_ends[e["id"].get<int64_t>()];
      EXPECT_EQ(e["bp"], "e");
    }
  }
  EXPECT_EQ(threads[1], "compute stream");
  EXPECT_EQ(threads[2], "collective stream");
  EXPECT_EQ(loops, 1);
  EXPECT_EQ(iterations, 3);
  EXPECT_EQ(collectives, 3);
  EXPECT_EQ(kernels, static_cast<int>(r.kernels));
  // Iterations nest in the loop slice, one after another.
  for (size_t k = 0; k < iters.size(); ++k) {
    EXPECT_GE(iters[k].first, loop_begin - 1e-9);
    EXPECT_LE(iters[k].second, loop_end + 1e-9);
    if (k > 0) {
      EXPECT_GE(iters[k].first, iters[k - 1].second - 1e-9);
    }
  }
  // Every flow has one start and one end: issue and done per collective.
  EXPECT_EQ(flow_starts.size(), 6u);
  EXPECT_EQ(flow_starts, flow_ends);
  EXPECT_NEAR(j["otherData"]["step_time_ms"].get<double>(),
              r.step_time_us / 1000, 1e-9);
}

TEST(SimulatorTest, ReportsTextAndJson) {
  auto m = Parse(LoopModule(true, 2));
  ASSERT_NE(m, nullptr);
  SimResult r = Sim(*m);
  r.xla_memory_report_bytes = 1000;
  std::string text = FormatSimText(r);
  EXPECT_NE(text.find("step time:"), std::string::npos);
  EXPECT_NE(text.find("exposed communication:"), std::string::npos);
  EXPECT_NE(text.find("model.py:42"), std::string::npos);
  EXPECT_NE(text.find("loop x2"), std::string::npos);
  EXPECT_NE(text.find("XLA buffer assignment:"), std::string::npos);
  nlohmann::json j = nlohmann::json::parse(FormatSimJson(r));
  EXPECT_NEAR(j["step_time_ms"].get<double>(), r.step_time_us / 1000, 1e-12);
  EXPECT_EQ(j["collectives"].size(), 1u);
  EXPECT_EQ(j["peak_memory_diff_bytes"].get<int64_t>(),
            r.peak_memory_bytes - 1000);
}

// `n` exponentials of f32[64] (GPU time: the overhead) after `dots`
// 4096^3 bf16 dots.
std::string ChainModule(int dots, int n) {
  std::string text = R"(
HloModule chain, is_scheduled=true
ENTRY %main (x: bf16[4096,4096], v: f32[64]) -> (bf16[4096,4096], f32[64]) {
  %x = bf16[4096,4096]{1,0} parameter(0)
  %e0 = f32[64]{0} parameter(1)
  %d0 = bf16[4096,4096]{1,0} copy(%x)
)";
  for (int i = 1; i <= dots; ++i) {
    absl::StrAppend(
        &text, "  %d", i, " = bf16[4096,4096]{1,0} dot(%d", i - 1,
        ", %x), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n");
  }
  for (int i = 1; i <= n; ++i) {
    absl::StrAppend(&text, "  %e", i, " = f32[64]{0} exponential(%e", i - 1,
                    ")\n");
  }
  absl::StrAppend(&text,
                  "  ROOT %t = (bf16[4096,4096]{1,0}, f32[64]{0}) tuple(%d",
                  dots, ", %e", n, ")\n}\n");
  return text;
}

// Kernels shorter than their launch wait for the host: the step is the
// host's launches.
TEST(SimulatorTest, ShortKernelsAreLaunchBound) {
  auto m = Parse(ChainModule(0, 10));
  ASSERT_NE(m, nullptr);
  SimOptions o = Neutral();
  o.kernel_overhead_us = 1;
  o.host_launch_us = 5;
  o.host_max_lead_us = 20;
  SimResult r = Sim(*m, o);
  // Steps back to back take the host's 11 launches of 5 us: the GPU's
  // copy of x (~17 us) and 10 exponentials (1 us each) are shorter.
  EXPECT_LT(r.compute_us, 11 * 5);
  EXPECT_NEAR(r.step_time_us, 11 * 5, 1e-6);
  EXPECT_NEAR(r.launch_bound_us, r.step_time_us - r.compute_us, 1e-6);
  EXPECT_NE(FormatSimText(r).find("launch-bound idle:"), std::string::npos);
}

// Long kernels let the host run ahead, at most host_max_lead_us: the short
// kernels after them use the lead, then wait again.
TEST(SimulatorTest, LaunchesRunAheadOfLongKernelsUpToTheLead) {
  auto m = Parse(ChainModule(2, 20));
  ASSERT_NE(m, nullptr);
  SimOptions o = Neutral();
  o.kernel_overhead_us = 1;
  o.host_launch_us = 5;
  SimResult unbounded = Sim(*m, [&] {
    SimOptions u = o;
    u.host_max_lead_us = 1e9;
    return u;
  }());
  // 23 launches (115 us) are far shorter than the two dots: with the host
  // as far ahead as it likes, nothing waits and the step is the GPU's.
  EXPECT_NEAR(unbounded.launch_bound_us, 0, 1e-9);
  EXPECT_NEAR(unbounded.step_time_us, unbounded.compute_us, 1e-6);
  o.host_max_lead_us = 40;
  SimResult bounded = Sim(*m, o);
  // 40 us of lead covers about 40 / (5 - 1) = 10 exponentials (a little
  // over 1 us each); the other 10 wait about 4 us each. The step ends with
  // the host 1 us ahead (the last exponential), so the next step's first
  // launch (the copy) waits 5 - 1.
  EXPECT_NEAR(bounded.launch_bound_us, 4 + 10 * 4, 1.5);
  EXPECT_NEAR(bounded.step_time_us,
              bounded.compute_us + bounded.launch_bound_us, 1e-6);
  // A step begins with host_step_us on the host.
  o.host_step_us = 100;
  SimResult stepped = Sim(*m, o);
  EXPECT_NEAR(stepped.step_time_us, bounded.step_time_us + 100, 1e-6);
}

// By default an unfused module is priced as XLA will fuse it: the chain of
// exponentials is one loop fusion, the dots cuBLAS GEMMs (with the GEMM
// overhead and host launch); per op, each is its own kernel.
TEST(SimulatorTest, UnfusedModuleIsPricedAsXlaFusesIt) {
  auto m = Parse(ChainModule(2, 10));
  ASSERT_NE(m, nullptr);
  SimOptions fused;
  ASSERT_TRUE(ApplySimOverrides(fused, DefaultSimPresetText()).ok());
  SimOptions per_op = fused;
  per_op.unfused_compute = UnfusedCompute::kPerOp;
  SimResult f = Sim(*m, fused);
  SimResult p = Sim(*m, per_op);
  EXPECT_TRUE(f.unfused);
  EXPECT_TRUE(f.xla_fused_estimate);
  EXPECT_FALSE(p.xla_fused_estimate);
  EXPECT_EQ(p.kernels, 13);  // copy, 2 dots, 10 exponentials
  EXPECT_EQ(f.kernels, 4);   // copy, 2 GEMMs, 1 loop fusion
  EXPECT_LT(f.step_time_us, p.step_time_us);
  EXPECT_NE(FormatSimText(f).find("estimated as XLA:GPU will fuse it"),
            std::string::npos);
  EXPECT_NE(FormatSimJson(f).find("\"xla-fused estimate\""), std::string::npos);
}

TEST(SimulatorTest, PresetFactorsScaleTheRoofline) {
  // Default options carry the compiled-in preset; a kernel then takes
  // overhead + max(compute / ce, memory / me) on the GPU.
  SimOptions preset;
  EXPECT_TRUE(ApplySimOverrides(preset, DefaultSimPresetText()).ok());
  EXPECT_GT(preset.collective_sm_share, 0);
  EXPECT_GT(preset.collective_hbm_share, 0);
  // The dots here run beside an all-gather; contention has its own tests.
  preset.collective_sm_share = 0;
  preset.collective_hbm_share = 0;
  preset.unfused_compute = UnfusedCompute::kPerOp;  // one kernel per op
  EXPECT_GT(preset.kernel_overhead_us, 0);
  EXPECT_LT(preset.memory_efficiency, 1);
  auto m = Parse(OverlapModule(std::string(kStart) + kDot + kDone));
  ASSERT_NE(m, nullptr);
  GpuCostModel model(H200Spec());
  OpCost dot = model.Cost(*Find(*m, "d0"));
  double expected = preset.kernel_overhead_us +
                    std::max(dot.compute_us / preset.compute_efficiency,
                             dot.memory_us / preset.memory_efficiency);
  SimResult r = Sim(*m, preset);
  EXPECT_NEAR(r.compute_us, 2 * expected, 1e-6);
  EXPECT_GT(preset.host_launch_us, 0);
  EXPECT_GT(preset.host_max_lead_us, 0);
  SimOptions o = Neutral();
  ASSERT_TRUE(ApplySimOverrides(o, "compute_efficiency 0.5\n").ok());
  EXPECT_DOUBLE_EQ(o.compute_efficiency, 0.5);
  EXPECT_FALSE(ApplySimOverrides(o, "memory_efficiency 2\n").ok());
  EXPECT_DOUBLE_EQ(o.compute_efficiency, 0.5);
}

// Issue 25: a kernel beside a collective in flight runs at (1 - share) of
// its rate while the collective stream is busy.
TEST(SimulatorTest, ComputeBesideACollectiveIsSlowed) {
  auto m = Parse(OverlapModule(std::string(kStart) + kDot + kDone));
  ASSERT_NE(m, nullptr);
  double dot = Cost(*m, "d0");
  double ag = AgTime(*m, "ags");
  ASSERT_GT(dot, ag / 0.8);  // d0 outlasts the all-gather even when slowed
  SimOptions o = Neutral();
  o.collective_sm_share = 0.2;  // the dots are compute-bound
  SimResult r = Sim(*m, o);
  // d0 does ag * 0.8 of its work beside the all-gather, the rest alone:
  // it takes 0.2 * ag longer; the final dot runs alone.
  EXPECT_NEAR(r.contention_us, 0.2 * ag, 1e-6);
  EXPECT_NEAR(r.compute_us, 2 * dot + 0.2 * ag, 1e-6);
  EXPECT_NEAR(r.step_time_us, 2 * dot + 0.2 * ag, 1e-6);
  EXPECT_NEAR(r.exposed_communication_us, 0, 1e-9);
  // The HBM share applies to memory-bound kernels only.
  o.collective_sm_share = 0;
  o.collective_hbm_share = 0.5;
  EXPECT_NEAR(Sim(*m, o).contention_us, 0, 1e-9);
}

TEST(SimulatorTest, KernelWhollyBesideACollectiveRunsAtTheLowerRate) {
  // The exponential (memory-bound) ends before the all-gather: all of it
  // runs at (1 - hbm share); nothing runs beside the collective after the
  // wait, and without a collective in flight nothing is slowed.
  std::string order = std::string(kStart) +
                      "  %e = bf16[1024,1024]{1,0} exponential(%x.s)\n" +
                      kDone + kDot;
  std::string text = OverlapModule(order);
  text.replace(text.find("  %ags"), 0,
               "  %x.s = bf16[1024,1024]{1,0} slice(%x), "
               "slice={[0:1024], [0:1024]}\n");
  auto m = Parse(text);
  ASSERT_NE(m, nullptr);
  SimOptions o = Neutral();
  o.collective_hbm_share = 0.25;
  o.collective_sm_share = 0.5;
  SimResult r = Sim(*m, o);
  double e = Cost(*m, "e");
  double ag = AgTime(*m, "ags");
  ASSERT_LT(e / 0.75, ag);
  // The slice runs before the all-gather is issued: not slowed.
  EXPECT_NEAR(r.contention_us, e / 0.75 - e, 1e-6);
  EXPECT_NEAR(r.exposed_communication_us, ag - e / 0.75, 1e-6);
  SimResult alone = Sim(*m, Neutral());
  EXPECT_NEAR(r.step_time_us, alone.step_time_us, 1e-6);  // still ag-bound
}

TEST(SimulatorTest, ContentionSharesAreValidated) {
  SimOptions o = Neutral();
  ASSERT_TRUE(ApplySimOverrides(o,
                                "collective_sm_share 0.3\n"
                                "collective_hbm_share 0\n")
                  .ok());
  EXPECT_DOUBLE_EQ(o.collective_sm_share, 0.3);
  EXPECT_DOUBLE_EQ(o.collective_hbm_share, 0);
  EXPECT_FALSE(ApplySimOverrides(o, "collective_sm_share 1\n").ok());
  EXPECT_FALSE(ApplySimOverrides(o, "collective_hbm_share 2\n").ok());
  EXPECT_DOUBLE_EQ(o.collective_sm_share, 0.3);
}

TEST(SimulatorTest, GpuSpecOverrides) {
  absl::StatusOr<GpuSpec> s = ApplyGpuSpecOverrides(
      H200Spec(), "# calibrated\nmatmul_flops 700e12\nkernel_launch_us 3\n");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_DOUBLE_EQ(s->matmul_flops, 700e12);
  EXPECT_DOUBLE_EQ(s->kernel_launch_us, 3);
  EXPECT_FALSE(ApplyGpuSpecOverrides(H200Spec(), "bogus 1\n").ok());
  EXPECT_FALSE(ApplyGpuSpecOverrides(H200Spec(), "matmul_flops x\n").ok());
  EXPECT_FALSE(ApplyGpuSpecOverrides(H200Spec(), "matmul_flops 0\n").ok());
  EXPECT_EQ(ParseMemoryReportTotalBytes("x\nTotal bytes: 1234 (1KiB)\n"), 1234);
  EXPECT_EQ(ParseMemoryReportTotalBytes("nothing"), -1);
}

// Never crash on XLA's own final schedules; sane figures for each.
TEST(SimulatorCorpusTest, EveryOptimizedModuleSimulates) {
  std::filesystem::path corpus =
      std::filesystem::path(HLOVERLAP_SOURCE_DIR) / ".." / "shared" / "corpus";
  if (!std::filesystem::exists(corpus)) GTEST_SKIP() << "no corpus";
  int cases = 0;
  for (const auto& dir : std::filesystem::directory_iterator(corpus)) {
    std::filesystem::path file = dir.path() / "09_after_optimizations.hlo";
    if (!std::filesystem::exists(file)) continue;
    SCOPED_TRACE(file.string());
    absl::StatusOr<std::unique_ptr<Module>> m = ParseHloFile(file.string());
    ASSERT_TRUE(m.ok()) << m.status();
    SimOptions o;  // the preset
    o.record_trace = dir.path().filename().string().rfind("big_", 0) != 0;
    absl::StatusOr<SimResult> r = Simulate(**m, o);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(std::isfinite(r->step_time_us));
    EXPECT_GT(r->step_time_us, 0);
    EXPECT_GE(r->step_time_us, r->compute_us - 1e-6);
    EXPECT_LE(r->exposed_communication_us, r->communication_us + 1e-6);
    EXPECT_GT(r->collectives.size(), 0u);
    EXPECT_GT(r->peak_memory_bytes, r->parameter_bytes);
    // The liveness peak tracks XLA's buffer assignment (docs/SIMULATOR.md:
    // within +8% on every case).
    std::ifstream report(dir.path() / "memory_usage_report.txt");
    if (report) {
      std::stringstream ss;
      ss << report.rdbuf();
      int64_t xla = ParseMemoryReportTotalBytes(ss.str());
      ASSERT_GT(xla, 0);
      double ratio = static_cast<double>(r->peak_memory_bytes) / xla;
      EXPECT_GT(ratio, 0.9);
      EXPECT_LT(ratio, 1.15);
    }
    if (o.record_trace) {
      nlohmann::json j = nlohmann::json::parse(ChromeTraceJson(*r));
      EXPECT_GT(j["traceEvents"].size(), 10u);
    }
    ++cases;
  }
  EXPECT_GT(cases, 0);
}

}  // namespace
}  // namespace hloverlap
