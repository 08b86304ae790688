// The one GEMM rule (targets, kernels, workspace) and the scratch leaves
// ResultLeafSources derives from it.
#include "hlo/buffer_semantics.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "hlo/parser.h"

namespace hloverlap {
namespace {

TEST(GemmRule, TargetsAreExactlyTheCublasGemms) {
  EXPECT_TRUE(IsCublasGemmTarget("__cublas$gemm"));
  EXPECT_TRUE(IsCublasGemmTarget("__cublas$lt$matmul"));
  EXPECT_TRUE(IsCublasGemmTarget("__cublas$lt$matmul$f8"));
  // Unknown variants are opaque custom calls, not GEMMs.
  EXPECT_FALSE(IsCublasGemmTarget("__cublas$lt$matmul$mx"));
  EXPECT_FALSE(IsCublasGemmTarget("__cublas$lt$matmulx"));
  EXPECT_FALSE(IsCublasGemmTarget("__cublas$gemm$f8"));
  EXPECT_FALSE(IsCublasGemmTarget("__cudnn$convForward"));
  EXPECT_FALSE(IsCublasGemmTarget("Sharding"));
  EXPECT_FALSE(IsCublasGemmTarget(""));
}

constexpr char kKernels[] = R"(
HloModule m

gemm_fusion {
  a = bf16[8,8] parameter(0)
  ROOT g = (bf16[8,8], s8[1024]) custom-call(a, a), custom_call_target="__cublas$gemm"
}

ENTRY main {
  x = bf16[8,8] parameter(0)
  lt = (bf16[8,8], s8[1024]) custom-call(x, x), custom_call_target="__cublas$lt$matmul"
  f8 = (bf16[8,8], u8[64]) custom-call(x, x), custom_call_target="__cublas$lt$matmul$f8"
  other = (bf16[8,8], s8[1024]) custom-call(x, x), custom_call_target="__cublas$lt$matmul$mx"
  wide = (bf16[8,8], s32[256]) custom-call(x, x), custom_call_target="__cublas$lt$matmul"
  aliased = (bf16[8,8], s8[1024]) custom-call(x, x), custom_call_target="__cublas$lt$matmul", output_to_operand_aliasing={{1}: (1, {})}
  fused = (bf16[8,8], s8[1024]) fusion(x), kind=kCustom, calls=gemm_fusion
  ROOT t = (bf16[8,8], s8[1024]) tuple(x, x)
}
)";

TEST(GemmRule, KernelsAndTheirWorkspace) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseHloModule(kKernels);
  ASSERT_TRUE(m.ok()) << m.status();
  auto find = [&](std::string_view name) -> const Instruction& {
    for (const auto& i : (*m)->entry()->instructions()) {
      if (i->name() == name) return *i;
    }
    return *(*m)->entry()->root();
  };
  struct Case {
    const char* name;
    bool gemm_call;
    bool kernel;
    bool scratch;  // element 1
  };
  for (const Case& c :
       {Case{"lt", true, true, true}, Case{"f8", true, true, true},
        Case{"other", false, false, false}, Case{"wide", true, true, false},
        Case{"aliased", true, true, false}, Case{"fused", false, true, true}}) {
    const Instruction& i = find(c.name);
    ASSERT_EQ(i.name(), c.name);
    EXPECT_EQ(IsGemmCustomCall(i), c.gemm_call) << c.name;
    EXPECT_EQ(IsGemmKernel(i), c.kernel) << c.name;
    EXPECT_EQ(IsKernelScratch(i, 1), c.scratch) << c.name;
    EXPECT_FALSE(IsKernelScratch(i, 0)) << c.name;
    EXPECT_FALSE(IsKernelScratch(i, 2)) << c.name;
    // The buffer rules read the same predicate.
    std::vector<LeafSource> leaves = ResultLeafSources(i);
    ASSERT_EQ(leaves.size(), 2u);
    EXPECT_EQ(leaves[1].kind == LeafKind::kScratch, c.scratch) << c.name;
  }
}

}  // namespace
}  // namespace hloverlap
