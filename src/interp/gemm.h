// XLA:GPU's GEMM custom calls, interpreted as the dots they are.
//
// XLA's GPU compiler rewrites `dot` (and the elementwise work around it)
// into cuBLAS calls; its final modules (`09_after_optimizations.hlo`) hold
//
//   %gemm = (bf16[256,768]{1,0}, s8[33554432]{0}) custom-call(%a, %b, %c),
//       custom_call_target="__cublas$lt$matmul",
//       output_to_operand_aliasing={{0}: (2, {})},
//       backend_config={"gemm_backend_config":{"alpha_real":1,
//         "alpha_imag":0,"beta":1,"epilogue":"DEFAULT",
//         "dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],
//           "rhs_contracting_dimensions":["0"],"lhs_batch_dimensions":[],
//           "rhs_batch_dimensions":[]}, ...}}
//
// which computes, elementwise over the dot's result (batch, lhs free, rhs
// free dimensions, as `dot`),
//
//   x   = alpha * dot(a, b) + beta * c + bias
//   aux = x                                      (epilogues *_AUX)
//   d   = activation(x)                          (RELU, GELU variants)
//
// Operands, in order: a, b, then c when beta != 0 (same shape as d), then
// the bias when the epilogue has one (BIAS, BIAS_RELU, BIAS_GELU,
// BIAS_GELU_AUX; its dimensions are the trailing dimensions of d, usually
// the last one, broadcast over the others). The result is d alone
// (`__cublas$gemm` of older XLA) or a tuple (d, [aux,] workspace) whose
// last element, an s8/u8 vector, is cuBLAS's scratch space (zeros here).
// GELU is cuBLASLt's tanh approximation
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), the only GELU XLA
// rewrites into an epilogue.
//
// Arithmetic: the dot accumulates in f32 (f64 when an operand or d is f64)
// exactly as interp/dot.h does, the epilogue runs in that type in the order
// above, and d (and aux) are rounded to their element types once at the
// end. A plain GEMM (alpha 1, beta 0, DEFAULT) is therefore bit-identical
// to the `dot` it replaced; with beta != 0, a bias or an activation XLA
// rounds fewer times than the unfused HLO did (see docs/INTERPRETER.md for
// the tolerance that holds against XLA's pre-fusion modules). Integer
// GEMMs (s8 x s8 -> s32) are supported in the plain form only.
//
// Anything else is refused with an InvalidArgument error naming the target
// and the part it cannot interpret: FP8 GEMMs (`__cublas$lt$matmul$f8`,
// damax_output), complex alpha, an unknown epilogue, operand counts or
// shapes that do not match the configuration.
#ifndef HLOVERLAP_INTERP_GEMM_H_
#define HLOVERLAP_INTERP_GEMM_H_

#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/attributes.h"
#include "hlo/instruction.h"
#include "interp/value.h"

namespace hloverlap::interp {

enum class GemmEpilogue {
  kDefault,
  kBias,
  kRelu,
  kBiasRelu,
  kGelu,
  kGeluAux,
  kBiasGelu,
  kBiasGeluAux,
};

// A GEMM custom call, decoded once from its backend config and shapes.
struct GemmCall {
  DotDimensionNumbers dnums;
  double alpha = 1;
  double beta = 0;
  GemmEpilogue epilogue = GemmEpilogue::kDefault;
  bool has_c = false;     // operand 2 (beta != 0)
  bool has_bias = false;  // the operand after c
  bool has_aux = false;   // result element 1
  // Result layout: a bare array, or a tuple (d, [aux,] [workspace]).
  bool tuple_result = false;
  bool has_workspace = false;
  Shape d_shape;
  Shape aux_shape;
  Shape workspace_shape;
};

// The GEMM targets: hlo/buffer_semantics.h's IsCublasGemmTarget (Decode
// refuses `__cublas$lt$matmul$f8`).

// Decodes a GEMM custom call (target, backend config, operand and result
// shapes). Errors say what cannot be interpreted, without the location
// (the caller adds the instruction).
absl::StatusOr<GemmCall> DecodeGemmCustomCall(const Instruction& instr);

// Runs it. `operands` are the custom call's operands; `workspace` a value
// of call.workspace_shape (shared between calls, never written).
absl::StatusOr<Value> EvalGemm(const GemmCall& call,
                               const std::vector<Value>& operands,
                               const Value& workspace);

}  // namespace hloverlap::interp

#endif  // HLOVERLAP_INTERP_GEMM_H_
