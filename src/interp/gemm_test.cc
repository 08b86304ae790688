#include "interp/gemm.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "interp/testing.h"

namespace hloverlap::interp {
namespace {

using testing::F32;
using ::testing::HasSubstr;
using testing::Parse;
using testing::Run1;

// One GEMM custom call `gemm` (the root) in a module, with `config` as
// backend_config; `b` is f32[3,N].
std::string Module(const std::string& operands, const std::string& result,
                   const std::string& config, int n = 2) {
  return absl::StrCat(
      R"(
HloModule m

ENTRY main {
  a = f32[2,3] parameter(0)
  b = f32[3,)",
      n, R"(] parameter(1)
  c = f32[2,2] parameter(2)
  bias = f32[2] parameter(3)
  ROOT gemm = )",
      result, " custom-call(", operands,
      R"(), custom_call_target="__cublas$lt$matmul", backend_config=)", config,
      "\n}\n");
}

absl::StatusOr<GemmCall> Decode(const std::string& text) {
  std::unique_ptr<hloverlap::Module> m = Parse(text);
  if (m == nullptr) return absl::InternalError("parse");
  return DecodeGemmCustomCall(*m->entry()->root());
}

constexpr char kDims[] =
    R"("dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],)"
    R"("rhs_contracting_dimensions":["0"]})";

TEST(Gemm, DecodesProtoJsonForms) {
  // Epilogue as its enum number, dimensions as numbers, no batch lists, the
  // config at the top level (older XLA).
  absl::StatusOr<GemmCall> call = Decode(Module(
      "a, b, c, bias", "(f32[2,2], f32[2,2], s8[16])",
      absl::StrCat(R"({"alpha_real":2,"beta":1,"epilogue":7,)",
                   R"("dot_dimension_numbers":{"lhs_contracting_dimensions":)",
                   R"([1],"rhs_contracting_dimensions":[0]}})")));
  ASSERT_TRUE(call.ok()) << call.status();
  EXPECT_EQ(call->epilogue, GemmEpilogue::kBiasGeluAux);
  EXPECT_EQ(call->alpha, 2);
  EXPECT_TRUE(call->has_c);
  EXPECT_TRUE(call->has_bias);
  EXPECT_TRUE(call->has_aux);
  EXPECT_TRUE(call->has_workspace);
  ASSERT_EQ(call->dnums.lhs_contracting_dims.size(), 1);
  EXPECT_EQ(call->dnums.lhs_contracting_dims[0], 1);
}

TEST(Gemm, AlphaIsRequiredBetaAndEpilogueDefault) {
  absl::StatusOr<GemmCall> call =
      Decode(Module("a, b", "f32[2,2]", absl::StrCat("{", kDims, "}")));
  ASSERT_FALSE(call.ok());
  EXPECT_THAT(call.status().message(), HasSubstr("has no alpha_real"));
  call = Decode(Module("a, b", "f32[2,2]",
                       absl::StrCat(R"({"alpha_real":1,)", kDims, "}")));
  ASSERT_TRUE(call.ok()) << call.status();
  EXPECT_EQ(call->beta, 0);
  EXPECT_EQ(call->epilogue, GemmEpilogue::kDefault);
  EXPECT_FALSE(call->tuple_result);
}

TEST(Gemm, BiasMustBeTrailingDimensions) {
  // bias f32[2] against d f32[2,2] is fine; a c-shaped operand as the bias
  // of a bias-only epilogue is fine too (trailing = all dims); a bias that
  // matches the leading dimension only is not.
  std::string text =
      Module("a, b, bias", "f32[2,2]",
             absl::StrCat(R"({"alpha_real":1,"epilogue":"BIAS",)", kDims, "}"));
  EXPECT_TRUE(Decode(text).ok());
  text = Module(
      "a, b, bias", "f32[2,4]",
      absl::StrCat(R"({"alpha_real":1,"epilogue":"BIAS",)", kDims, "}"), 4);
  absl::StatusOr<GemmCall> call = Decode(text);
  ASSERT_FALSE(call.ok());
  EXPECT_THAT(call.status().message(),
              HasSubstr("bias f32[2] is not the trailing dimensions"));
}

TEST(Gemm, RunsAlphaBetaBiasRelu) {
  // d = max(0.5 * a.b + 2 * c + bias, 0) on small exact values.
  constexpr char kText[] = R"(
HloModule m

ENTRY main {
  a = f32[2,3] parameter(0)
  b = f32[3,2] parameter(1)
  c = f32[2,2] parameter(2)
  bias = f32[2] parameter(3)
  gemm = (f32[2,2], s8[8]) custom-call(a, b, c, bias), custom_call_target="__cublas$lt$matmul", backend_config={"gemm_backend_config":{"alpha_real":0.5,"beta":2,"epilogue":"BIAS_RELU","dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"]}}}
  ROOT d = f32[2,2] get-tuple-element(gemm), index=0
}
)";
  // a.b = [[4, 4], [-8, -8]] (b is all ones).
  Value r = Run1(kText, {F32({2, 3}, {1, 1, 2, -2, -2, -4}),
                         F32({3, 2}, {1, 1, 1, 1, 1, 1}),
                         F32({2, 2}, {1, 0, 1, 0}), F32({2}, {0.5, -1})});
  // Row 0: 0.5*4 + 2*{1, 0} + {0.5, -1} = {4.5, 1}.
  // Row 1: -4 + 2*{1, 0} + {0.5, -1} = {-1.5, -5}, relu {0, 0}.
  EXPECT_EQ(testing::Doubles(r), (std::vector<double>{4.5, 1, 0, 0}));
}

}  // namespace
}  // namespace hloverlap::interp
