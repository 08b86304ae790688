// Unit tests of the GPU cost model: hand-computed FLOPs, bytes and times.
#include "analysis/gpu_cost_model.h"

#include <memory>
#include <string>

#include "analysis/latency_estimator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/parser.h"

namespace hloverlap {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<Module> Parse(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : nullptr;
}

const Instruction* Find(const Module& m, std::string_view name) {
  for (const auto& c : m.computations()) {
    for (const auto& i : c->instructions()) {
      if (i->name() == name) return i.get();
    }
  }
  return nullptr;
}

TEST(GpuCostModelTest, Presets) {
  EXPECT_EQ(H200Spec().matmul_flops, 790e12);
  EXPECT_EQ(H200Spec().hbm_bytes_per_second, 4.3e12);
  EXPECT_EQ(H100Spec().hbm_bytes_per_second, 3.0e12);
  EXPECT_TRUE(GpuSpecByName("H200").has_value());
  EXPECT_FALSE(GpuSpecByName("a100").has_value());
}

TEST(GpuCostModelTest, DotRoofline) {
  auto m = Parse(R"(
HloModule m
ENTRY %e (a: bf16[1024,2048], b: bf16[2048,4096]) -> bf16[1024,4096] {
  %a = bf16[1024,2048]{1,0} parameter(0)
  %b = bf16[2048,4096]{1,0} parameter(1)
  ROOT %d = bf16[1024,4096]{1,0} dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  ASSERT_NE(m, nullptr);
  GpuCostModel model(H200Spec());
  OpCost c = model.Cost(*Find(*m, "d"));
  // 2 * 1024 * 4096 * 2048.
  EXPECT_DOUBLE_EQ(c.flops, 17179869184.0);
  // (1024*2048 + 2048*4096 + 1024*4096) * 2 bytes.
  EXPECT_DOUBLE_EQ(c.bytes, 29360128.0);
  EXPECT_NEAR(c.compute_us, 21.7467, 1e-3);  // flops / 790e12
  EXPECT_NEAR(c.memory_us, 6.8280, 1e-3);    // bytes / 4.3e12
  EXPECT_EQ(c.kernels, 1);
  EXPECT_NEAR(c.time_us, 2.0 + 21.7467, 1e-3);
  // f32 dots run at the TF32 rate (half).
  EXPECT_EQ(model.MatmulRate(PrimitiveType::kF32), 395e12);
}

TEST(GpuCostModelTest, ElementwiseIsMemoryBound) {
  auto m = Parse(R"(
HloModule m
ENTRY %e (a: f32[1024,1024], b: f32[1024,1024]) -> f32[1024,1024] {
  %a = f32[1024,1024]{1,0} parameter(0)
  %b = f32[1024,1024]{1,0} parameter(1)
  %r = f32[1024,1024]{1,0} reshape(%a)
  ROOT %s = f32[1024,1024]{1,0} add(%r, %b)
}
)");
  ASSERT_NE(m, nullptr);
  GpuCostModel model(H200Spec());
  OpCost c = model.Cost(*Find(*m, "s"));
  EXPECT_DOUBLE_EQ(c.flops, 1048576.0);
  EXPECT_DOUBLE_EQ(c.bytes, 3 * 4194304.0);
  EXPECT_NEAR(c.time_us, 2.0 + 12582912.0 / 4.3e12 * 1e6, 1e-9);
  // reshape, parameters: no kernel.
  EXPECT_EQ(model.TimeUs(*Find(*m, "r")), 0);
  EXPECT_EQ(model.TimeUs(*Find(*m, "a")), 0);
  // H100 is slower on memory.
  GpuCostModel h100(H100Spec());
  EXPECT_NEAR(h100.TimeUs(*Find(*m, "s")), 2.0 + 12582912.0 / 3e12 * 1e6, 1e-9);
}

TEST(GpuCostModelTest, CublasGemmCustomCall) {
  auto m = Parse(R"(
HloModule m
ENTRY %e (a: bf16[128,256], b: bf16[256,1024]) -> (bf16[128,1024], s8[33554432]) {
  %a = bf16[128,256]{1,0} parameter(0)
  %b = bf16[256,1024]{1,0} parameter(1)
  ROOT %g = (bf16[128,1024]{1,0}, s8[33554432]{0}) custom-call(%a, %b), custom_call_target="__cublas$lt$matmul", backend_config={"gemm_backend_config":{"alpha_real":1,"dot_dimension_numbers":{"lhs_batch_dimensions":[],"lhs_contracting_dimensions":["1"],"rhs_batch_dimensions":[],"rhs_contracting_dimensions":["0"]}}}
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* g = Find(*m, "g");
  EXPECT_TRUE(IsGemmCustomCall(*g));
  ASSERT_TRUE(DotFlops(*g).has_value());
  EXPECT_DOUBLE_EQ(*DotFlops(*g), 2.0 * 128 * 1024 * 256);
  GpuCostModel model(H200Spec());
  // Operands and the first result; not the workspace.
  EXPECT_DOUBLE_EQ(model.Cost(*g).bytes, 65536.0 + 524288.0 + 262144.0);
}

// XLA's dynamic-slice (address computation) fusion around a cuBLAS GEMM
// threads the GEMM's workspace out as element 1 of its result: scratch, no
// HBM traffic. The fusion costs what the same GEMM costs outside (its
// operands and result), plus nothing for the 32 MiB workspace.
TEST(GpuCostModelTest, GemmWorkspaceInDynamicSliceFusionIsNoTraffic) {
  auto m = Parse(R"(
HloModule m
%dynamic-slice-fusion.1 (p0: bf16[4,128,256], p1: bf16[256,1024], p2: s32[]) -> (bf16[128,1024], s8[33554432]) {
  %p0 = bf16[4,128,256]{2,1,0} parameter(0)
  %p1 = bf16[256,1024]{1,0} parameter(1)
  %p2 = s32[] parameter(2)
  %z = s32[] constant(0)
  %ds = bf16[1,128,256]{2,1,0} dynamic-slice(%p0, %p2, %z, %z), dynamic_slice_sizes={1,128,256}
  %bc = bf16[128,256]{1,0} bitcast(%ds)
  %g = (bf16[128,1024]{1,0}, s8[33554432]{0}) custom-call(%bc, %p1), custom_call_target="__cublas$lt$matmul", backend_config={"gemm_backend_config":{"dot_dimension_numbers":{"lhs_batch_dimensions":[],"lhs_contracting_dimensions":["1"],"rhs_batch_dimensions":[],"rhs_contracting_dimensions":["0"]}}}
  ROOT %t = (bf16[128,1024]{1,0}, s8[33554432]{0}) tuple(%g#0, %g#1)
}
ENTRY %e (w: bf16[4,128,256], b: bf16[256,1024], i: s32[]) -> (bf16[128,1024], s8[33554432]) {
  %w = bf16[4,128,256]{2,1,0} parameter(0)
  %b = bf16[256,1024]{1,0} parameter(1)
  %i = s32[] parameter(2)
  ROOT %dsf = (bf16[128,1024]{1,0}, s8[33554432]{0}) fusion(%w, %b, %i), kind=kCustom, calls=%dynamic-slice-fusion.1, backend_config={"fusion_backend_config":{"custom_fusion_config":{"kernel_index":0,"name":"dynamic_slice_fusion"},"kind":"__custom_fusion"}}
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* f = Find(*m, "dsf");
  EXPECT_TRUE(IsGemmKernel(*f));
  EXPECT_TRUE(IsKernelScratch(*f, 1));
  EXPECT_FALSE(IsKernelScratch(*f, 0));
  EXPECT_TRUE(IsScratchValue(*Find(*m, "g")->users()[1]) ||
              IsScratchValue(*Find(*m, "g")->users()[0]));
  GpuCostModel model(H200Spec());
  OpCost c = model.Cost(*f);
  // The slice read (64 KiB), b (512 KiB), the index, the result (256 KiB).
  EXPECT_DOUBLE_EQ(c.bytes, 65536.0 + 524288.0 + 4 + 262144.0);
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * 128 * 1024 * 256);
}

TEST(GpuCostModelTest, FusionReadsSlicesAndUpdatesInPlace) {
  auto m = Parse(R"(
HloModule m
%slice_convert (p0: bf16[8,1024,1024], p1: s32[]) -> f32[1,1024,1024] {
  %p0 = bf16[8,1024,1024]{2,1,0} parameter(0)
  %p1 = s32[] parameter(1)
  %z = s32[] constant(0)
  %ds = bf16[1,1024,1024]{2,1,0} dynamic-slice(%p0, %p1, %z, %z), dynamic_slice_sizes={1,1024,1024}
  ROOT %cv = f32[1,1024,1024]{2,1,0} convert(%ds)
}
%update (q0: f32[8,1024], q1: f32[1,1024], q2: s32[]) -> f32[8,1024] {
  %q0 = f32[8,1024]{1,0} parameter(0)
  %q1 = f32[1,1024]{1,0} parameter(1)
  %q2 = s32[] parameter(2)
  %z2 = s32[] constant(0)
  ROOT %dus = f32[8,1024]{1,0} dynamic-update-slice(%q0, %q1, %q2, %z2)
}
ENTRY %e (w: bf16[8,1024,1024], i: s32[], acc: f32[8,1024], u: f32[1,1024]) -> (f32[1,1024,1024], f32[8,1024]) {
  %w = bf16[8,1024,1024]{2,1,0} parameter(0)
  %i = s32[] parameter(1)
  %acc = f32[8,1024]{1,0} parameter(2)
  %u = f32[1,1024]{1,0} parameter(3)
  %f = f32[1,1024,1024]{2,1,0} fusion(%w, %i), kind=kLoop, calls=%slice_convert
  %g = f32[8,1024]{1,0} fusion(%acc, %u, %i), kind=kLoop, calls=%update
  ROOT %t = (f32[1,1024,1024]{2,1,0}, f32[8,1024]{1,0}) tuple(%f, %g)
}
)");
  ASSERT_NE(m, nullptr);
  GpuCostModel model(H200Spec());
  // One layer read (2 MiB), the index (4 B), the f32 result (4 MiB).
  OpCost f = model.Cost(*Find(*m, "f"));
  EXPECT_DOUBLE_EQ(f.bytes, 2097152.0 + 4 + 4194304.0);
  EXPECT_DOUBLE_EQ(f.flops, 1048576.0);  // the convert
  // In place: the update is read and written, the buffer is not.
  OpCost g = model.Cost(*Find(*m, "g"));
  EXPECT_DOUBLE_EQ(g.bytes, 4096.0 + 4 + 4096.0);
}

TEST(GpuCostModelTest, WhileCostsTripCountTimesBody) {
  auto m = Parse(R"(
HloModule m
%cond (p: (s32[], f32[1024])) -> pred[] {
  %p = (s32[], f32[1024]{0}) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %n = s32[] constant(5)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}
%body (q: (s32[], f32[1024])) -> (s32[], f32[1024]) {
  %q = (s32[], f32[1024]{0}) parameter(0)
  %j = s32[] get-tuple-element(%q), index=0
  %x = f32[1024]{0} get-tuple-element(%q), index=1
  %one = s32[] constant(1)
  %k = s32[] add(%j, %one)
  %y = f32[1024]{0} exponential(%x)
  ROOT %t = (s32[], f32[1024]{0}) tuple(%k, %y)
}
ENTRY %e (a: f32[1024]) -> (s32[], f32[1024]) {
  %a = f32[1024]{0} parameter(0)
  %z = s32[] constant(0)
  %init = (s32[], f32[1024]{0}) tuple(%z, %a)
  ROOT %w = (s32[], f32[1024]{0}) while(%init), condition=%cond, body=%body
}
)");
  ASSERT_NE(m, nullptr);
  GpuCostModel model(H200Spec());
  double body = model.ComputationTimeUs(*m->FindComputation("body"));
  double cond = model.ComputationTimeUs(*m->FindComputation("cond"));
  // Body: add (s32 scalar) + exponential, 2 kernels; condition: compare.
  EXPECT_NEAR(body, 2 * 2.0 + (8 + 8192) / 4.3e12 * 1e6, 1e-6);
  EXPECT_NEAR(cond, 2.0 + 9 / 4.3e12 * 1e6, 1e-6);
  // Trip count 5 (inferred): 5 x (body + cond) + the final condition.
  EXPECT_NEAR(model.TimeUs(*Find(*m, "w")), 5 * (body + cond) + cond, 1e-6);
}

TEST(CollectiveTableTest, DefaultTableParses) {
  const CollectiveTable& t = CollectiveTable::Default();
  // 18 sizes x 3 kinds at 8 devices, 11 sizes x 3 kinds measured at 2.
  EXPECT_EQ(t.rows().size(), 87u);
  absl::StatusOr<CollectiveTable> again = ParseCollectiveTable(t.ToText());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->rows().size(), t.rows().size());
}

TEST(CollectiveTableTest, InterpolatesThroughputInLogSize) {
  const CollectiveTable& t = CollectiveTable::Default();
  // Exact rows (xla_lhs.md §5.3).
  EXPECT_DOUBLE_EQ(*t.TimeUs(CollectiveTableKind::kAllGather, 1 << 20, 8),
                   24.6);
  EXPECT_DOUBLE_EQ(
      *t.TimeUs(CollectiveTableKind::kAllReduce, int64_t{1} << 30, 8), 4836.0);
  // 1.5 MiB all-gather: throughputs 1048576/24.6 and 2097152/33.5 B/us,
  // weight log2(1.5) = 0.585 -> 54310 B/us -> 28.96 us.
  EXPECT_NEAR(*t.TimeUs(CollectiveTableKind::kAllGather, 3 << 19, 8), 28.96,
              0.01);
  // Below the table: the smallest row's time.
  EXPECT_DOUBLE_EQ(*t.TimeUs(CollectiveTableKind::kAllGather, 512, 8), 31.0);
  // Above: the largest row's throughput (4 GiB all-reduce = 2 x 2 GiB).
  EXPECT_NEAR(*t.TimeUs(CollectiveTableKind::kAllReduce, int64_t{4} << 30, 8),
              2 * 9568.9, 1e-6);
  // Group of 1: free.
  EXPECT_EQ(*t.TimeUs(CollectiveTableKind::kAllGather, 1 << 20, 1), 0);
}

TEST(CollectiveTableTest, ScalesOtherGroupSizesByRingTraffic) {
  const CollectiveTable& t = CollectiveTable::Default();
  // 16 devices from the nearest group, the 8-device rows: floor (fastest
  // all-gather row, 19.1) + (24.6 - 19.1) * (15/16) / (7/8).
  EXPECT_NEAR(*t.TimeUs(CollectiveTableKind::kAllGather, 1 << 20, 16),
              19.1 + 5.5 * 0.9375 / 0.875, 1e-9);
  // All-reduce: 2(n-1)/n, the same ratio.
  EXPECT_NEAR(*t.TimeUs(CollectiveTableKind::kAllReduce, int64_t{1} << 30, 16),
              27.6 + (4836.0 - 27.6) * 1.875 / 1.75, 1e-6);
}

TEST(CollectiveTableTest, MeasuredTwoDeviceRowsAreUsedAsIs) {
  // Rows measured on 2 x H200 (bench/calibration/h200_x2.json), less the
  // calibration loop's glue kernel (bench/collective_table.py).
  const CollectiveTable& t = CollectiveTable::Default();
  EXPECT_DOUBLE_EQ(
      *t.TimeUs(CollectiveTableKind::kAllReduce, int64_t{1} << 30, 2), 3310.9);
  EXPECT_DOUBLE_EQ(
      *t.TimeUs(CollectiveTableKind::kAllGather, int64_t{1} << 30, 2), 2025.2);
}

TEST(CollectiveTableTest, ParseErrorsNameTheLine) {
  absl::StatusOr<CollectiveTable> t = ParseCollectiveTable(
      "# header\nall-gather 2 1024 10\nall-gather 2 x 1\n");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(), HasSubstr("line 3"));
  EXPECT_FALSE(ParseCollectiveTable("broadcast 2 1024 10").ok());
  EXPECT_FALSE(ParseCollectiveTable("all-gather 2 1024 -1").ok());
  absl::StatusOr<CollectiveTable> custom =
      ParseCollectiveTable("all-gather 2 1000 10\nall-gather 2 4000 20\n");
  ASSERT_TRUE(custom.ok());
  // Exact group, midpoint in log-size: throughputs 100 and 200 B/us, at
  // 2000 B (w = 0.5) 150 B/us -> 13.33 us.
  EXPECT_NEAR(*custom->TimeUs(CollectiveTableKind::kAllGather, 2000, 2),
              2000.0 / 150.0, 1e-9);
  // No reduce-scatter rows.
  EXPECT_FALSE(
      custom->TimeUs(CollectiveTableKind::kReduceScatter, 2000, 2).has_value());
}

TEST(GpuCostModelTest, CollectivesAndAsyncLatency) {
  auto m = Parse(R"(
HloModule m, num_partitions=2
%sum (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}
%wrapped (w0: f32[262144]) -> f32[131072] {
  %w0 = f32[262144]{0} parameter(0)
  ROOT %rs = f32[131072]{0} reduce-scatter(%w0), channel_id=3, replica_groups={{0,1}}, dimensions={0}, to_apply=%sum
}
ENTRY %e (a: f32[131072], b: f32[262144]) -> (f32[262144], f32[131072], f32[131072]) {
  %a = f32[131072]{0} parameter(0)
  %b = f32[262144]{0} parameter(1)
  %ags = (f32[131072]{0}, f32[262144]{0}) all-gather-start(%a), channel_id=1, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true
  %agd = f32[262144]{0} all-gather-done(%ags)
  %rss = ((f32[262144]{0}), f32[131072]{0}) async-start(%b), calls=%wrapped
  %rsd = f32[131072]{0} async-done(%rss)
  %cp = f32[131072]{0} collective-permute(%a), channel_id=2, source_target_pairs={{0,1},{1,0}}
  ROOT %t = (f32[262144]{0}, f32[131072]{0}, f32[131072]{0}) tuple(%agd, %rsd, %cp)
}
)");
  ASSERT_NE(m, nullptr);
  GpuCostModel model(H200Spec());
  const CollectiveTable& t = model.table();
  // all-gather-start: output bytes (1 MiB), group 2.
  std::optional<CollectiveInfo> ag =
      GpuCostModel::GetCollectiveInfo(*Find(*m, "ags"));
  ASSERT_TRUE(ag.has_value());
  EXPECT_EQ(ag->opcode, Opcode::kAllGather);
  EXPECT_EQ(ag->bytes, 1 << 20);
  EXPECT_EQ(ag->group_size, 2);
  EXPECT_DOUBLE_EQ(model.AsyncLatencyUs(*Find(*m, "ags")),
                   *t.TimeUs(CollectiveTableKind::kAllGather, 1 << 20, 2));
  EXPECT_EQ(model.TimeUs(*Find(*m, "ags")), 0);
  EXPECT_EQ(model.TimeUs(*Find(*m, "agd")), 0);
  // Wrapped reduce-scatter: input bytes.
  std::optional<CollectiveInfo> rs =
      GpuCostModel::GetCollectiveInfo(*Find(*m, "rss"));
  ASSERT_TRUE(rs.has_value());
  EXPECT_EQ(rs->opcode, Opcode::kReduceScatter);
  EXPECT_EQ(rs->bytes, 1 << 20);
  EXPECT_DOUBLE_EQ(model.AsyncLatencyUs(*Find(*m, "rss")),
                   *t.TimeUs(CollectiveTableKind::kReduceScatter, 1 << 20, 2));
  // Synchronous collective-permute: all-gather of twice the bytes, 2 devices.
  EXPECT_DOUBLE_EQ(model.TimeUs(*Find(*m, "cp")),
                   *t.TimeUs(CollectiveTableKind::kAllGather, 1 << 20, 2));

  AnalyticalLatencyEstimator est(H200Spec());
  EXPECT_EQ(est.NodeCostUs(*Find(*m, "cp")), model.TimeUs(*Find(*m, "cp")));
  EXPECT_EQ(MakeLatencyEstimator("analytical", "h100")->name(), "analytical");
  EXPECT_EQ(MakeLatencyEstimator("bogus", "h100"), nullptr);
  EXPECT_EQ(MakeLatencyEstimator("analytical", "tpu"), nullptr);
}

}  // namespace
}  // namespace hloverlap
