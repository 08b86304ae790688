#include "analysis/fusion_estimate.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "hlo/parser.h"

namespace hloverlap {
namespace {

using Kind = FusedKernelRole::Kind;

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

// The header's example: a transformer MLP as JAX lowers it.
constexpr char kMlp[] = R"(
HloModule mlp

ENTRY %main (h: f32[1024,2048], w: bf16[2048,8192], w2: bf16[8192,2048], res: bf16[1024,2048]) -> bf16[1024,2048] {
  %h = f32[1024,2048]{1,0} parameter(0)
  %w = bf16[2048,8192]{1,0} parameter(1)
  %w2 = bf16[8192,2048]{1,0} parameter(2)
  %res = bf16[1024,2048]{1,0} parameter(3)
  %x = bf16[1024,2048]{1,0} convert(%h)
  %d = bf16[1024,8192]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %c = bf16[] constant(0.5)
  %b = bf16[1024,8192]{1,0} broadcast(%c), dimensions={}
  %m = bf16[1024,8192]{1,0} multiply(%d, %b)
  %t = bf16[1024,8192]{1,0} tanh(%m)
  %g = bf16[1024,8192]{1,0} multiply(%d, %t)
  %e = bf16[1024,2048]{1,0} dot(%g, %w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %r = bf16[1024,2048]{1,0} add(%e, %res)
}
)";

TEST(FusionEstimateTest, MlpIsFourKernels) {
  std::unique_ptr<Module> m = Parse(kMlp);
  ASSERT_NE(m, nullptr);
  GpuCostModel model(H200Spec());
  FusionEstimate est(model);
  int kernels = 0;
  for (const auto& i : m->entry()->instructions()) {
    if (est.Role(*i).kind == Kind::kKernel) ++kernels;
  }
  EXPECT_EQ(kernels, 4);
  // The convert: a loop fusion of its own (a GEMM does not fuse producers).
  const FusedKernelRole& x = est.Role(*Find(*m, "x"));
  ASSERT_EQ(x.kind, Kind::kKernel);
  EXPECT_FALSE(x.gemm);
  EXPECT_DOUBLE_EQ(x.cost.bytes, 1024.0 * 2048 * (4 + 2));
  // The first GEMM writes %d once.
  const FusedKernelRole& d = est.Role(*Find(*m, "d"));
  ASSERT_EQ(d.kind, Kind::kKernel);
  EXPECT_TRUE(d.gemm);
  // The GELU-like chain: one kernel at %g reading %d once, writing %g.
  EXPECT_EQ(est.Role(*Find(*m, "b")).kind, Kind::kAbsorbed);
  EXPECT_EQ(est.Role(*Find(*m, "m")).kind, Kind::kAbsorbed);
  EXPECT_EQ(est.Role(*Find(*m, "t")).kind, Kind::kAbsorbed);
  const FusedKernelRole& g = est.Role(*Find(*m, "g"));
  ASSERT_EQ(g.kind, Kind::kKernel);
  EXPECT_FALSE(g.gemm);
  EXPECT_EQ(g.ops, 4);
  EXPECT_DOUBLE_EQ(g.cost.bytes, 2 * 1024.0 * 8192 * 2 + 2);
  // The second GEMM with the residual add as beta: rooted at %r, reads %res.
  EXPECT_EQ(est.Role(*Find(*m, "e")).kind, Kind::kAbsorbed);
  const FusedKernelRole& r = est.Role(*Find(*m, "r"));
  ASSERT_EQ(r.kind, Kind::kKernel);
  EXPECT_TRUE(r.gemm);
  EXPECT_DOUBLE_EQ(r.cost.bytes,
                   2.0 * (1024 * 8192 + 8192 * 2048 + 2 * 1024 * 2048));
  // Per op, the same computation costs more than fused.
  double per_op = 0;
  for (const auto& i : m->entry()->instructions()) per_op += model.TimeUs(*i);
  EXPECT_LT(est.ComputationTimeUs(*m->entry()), per_op);
}

// A reduction fuses its elementwise producer (an input fusion), and a value
// written into a buffer by dynamic-update-slice is computed in the update's
// fusion (in place: the buffer is not read).
TEST(FusionEstimateTest, ReductionAndInPlaceUpdate) {
  std::unique_ptr<Module> m = Parse(R"(
HloModule r

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main (x: f32[1024,2048], buf: f32[8,1024,2048], i: s32[]) -> (f32[1024], f32[8,1024,2048]) {
  %x = f32[1024,2048]{1,0} parameter(0)
  %buf = f32[8,1024,2048]{2,1,0} parameter(1)
  %i = s32[] parameter(2)
  %sq = f32[1024,2048]{1,0} multiply(%x, %x)
  %z = f32[] constant(0)
  %sum = f32[1024]{0} reduce(%sq, %z), dimensions={1}, to_apply=%add
  %e = f32[1024,2048]{1,0} exponential(%x)
  %e3 = f32[1,1024,2048]{2,1,0} reshape(%e)
  %u = f32[8,1024,2048]{2,1,0} dynamic-update-slice(%buf, %e3, %i, %i, %i)
  ROOT %t = (f32[1024], f32[8,1024,2048]{2,1,0}) tuple(%sum, %u)
}
)");
  ASSERT_NE(m, nullptr);
  GpuCostModel model(H200Spec());
  FusionEstimate est(model);
  EXPECT_EQ(est.Role(*Find(*m, "sq")).kind, Kind::kAbsorbed);
  const FusedKernelRole& sum = est.Role(*Find(*m, "sum"));
  ASSERT_EQ(sum.kind, Kind::kKernel);
  EXPECT_DOUBLE_EQ(sum.cost.bytes, 1024.0 * 2048 * 4 + 4 + 1024 * 4);
  EXPECT_EQ(est.Role(*Find(*m, "e")).kind, Kind::kAbsorbed);
  const FusedKernelRole& u = est.Role(*Find(*m, "u"));
  ASSERT_EQ(u.kind, Kind::kKernel);
  // Reads %x and the index, writes the update; the buffer stays in place.
  EXPECT_DOUBLE_EQ(u.cost.bytes, 2 * 1024.0 * 2048 * 4 + 4);
}

// A GEMM whose result is stored into a buffer and used elsewhere runs twice
// in XLA's final modules (the GEMM and a dynamic-slice fusion writing the
// slice); a layout-only transpose is a bitcast.
TEST(FusionEstimateTest, StoredGemmRunsTwiceLayoutTransposeIsFree) {
  std::unique_ptr<Module> m = Parse(R"(
HloModule g

ENTRY %main (a: bf16[1024,2048], w: bf16[2048,8192], buf: bf16[8,1024,8192], i: s32[]) -> (bf16[8,1024,8192], bf16[8192,1024]) {
  %a = bf16[1024,2048]{1,0} parameter(0)
  %w = bf16[2048,8192]{1,0} parameter(1)
  %buf = bf16[8,1024,8192]{2,1,0} parameter(2)
  %i = s32[] parameter(3)
  %d = bf16[1024,8192]{1,0} dot(%a, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %d3 = bf16[1,1024,8192]{2,1,0} reshape(%d)
  %u = bf16[8,1024,8192]{2,1,0} dynamic-update-slice(%buf, %d3, %i, %i, %i)
  %tr = bf16[8192,1024]{0,1} transpose(%d), dimensions={1,0}
  %n = bf16[8192,1024]{0,1} negate(%tr)
  ROOT %t = (bf16[8,1024,8192]{2,1,0}, bf16[8192,1024]{0,1}) tuple(%u, %n)
}
)");
  ASSERT_NE(m, nullptr);
  GpuCostModel model(H200Spec());
  FusionEstimate est(model);
  const FusedKernelRole& d = est.Role(*Find(*m, "d"));
  const FusedKernelRole& u = est.Role(*Find(*m, "u"));
  ASSERT_EQ(d.kind, Kind::kKernel);
  ASSERT_EQ(u.kind, Kind::kKernel);
  EXPECT_TRUE(u.gemm);
  EXPECT_DOUBLE_EQ(u.cost.flops, d.cost.flops);
  EXPECT_EQ(est.Role(*Find(*m, "tr")).kind, Kind::kAbsorbed);
  const FusedKernelRole& n = est.Role(*Find(*m, "n"));
  ASSERT_EQ(n.kind, Kind::kKernel);
  EXPECT_DOUBLE_EQ(n.cost.bytes, 2 * 1024.0 * 8192 * 2);
}

}  // namespace
}  // namespace hloverlap
