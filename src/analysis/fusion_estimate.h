// What XLA:GPU will launch for an unfused computation: the kernels of its
// fusions and cuBLAS calls, estimated from the unfused HLO (JAX's lowering,
// XLA's module before its GPU fusion passes, or hloverlap's output of
// either). The simulator prices an unfused module with it (sim/timeline.h,
// SimOptions::unfused_compute), so that `hloverlap sim` and the planner of
// `opt --preset=auto` / `auto-rewrite` predict the step XLA will run rather
// than one kernel per op (~2.4x the compute of XLA's final modules).
//
// The model (one pass over a computation, in schedule order):
//   * bitcast / reshape are views (no kernel, no bytes); parameters,
//     constants, tuples and get-tuple-element cost nothing, as before.
//   * dot / convolution: one cuBLAS GEMM at the matmul rate. Its epilogue
//     is folded into the call, as XLA's GEMM rewriter does: a convert of
//     the result, a multiply by a broadcast scalar (alpha), one add of a
//     same-shaped value (beta = 1, the value is read) or of a broadcast
//     vector (bias), and a dynamic-update-slice of the result into a buffer
//     (the GEMM writes in place; XLA's dynamic-slice fusion). An operand
//     that is a dynamic-slice or transpose read only by GEMMs is read by the
//     GEMM itself (slice offsets, operand layouts). A GEMM whose result is
//     both written into a buffer and used elsewhere is computed twice: XLA
//     keeps the GEMM and adds a dynamic-slice-fusion GEMM writing the slice
//     (seen in every corpus `09` module).
//   * reduce, reduce-window, dynamic-update-slice, scatter: the root of a
//     fusion (an input fusion, an in-place update); their elementwise
//     producers fuse into them; their result is written to memory.
//   * elementwise ops, broadcast, iota, transpose, slice, dynamic-slice,
//     concatenate, pad, reverse, gather: fused into their consumers. A
//     producer whose users are all in one fusion joins it; one used by
//     several fusions is duplicated into each when that moves fewer bytes
//     than writing it once and reading it in each (n * its inputs <=
//     (n + 1) * its result; broadcasts and iotas always); else it is the
//     root of a fusion of its own. A producer also read by a non-fusible
//     user (a GEMM, a collective, the loop state) after the one fusion
//     that reads it becomes an extra output of that fusion (multi-output
//     fusion).
//   * anything else (collectives, custom-calls, sort, control flow) keeps
//     the per-op cost of analysis/gpu_cost_model.h.
// A fusion is one kernel: its FLOPs, the bytes of its external inputs read
// once (a slice or dynamic-slice reads its slice; a dynamic-update-slice's
// buffer is not read, its update is written) and of its outputs written
// once; no HBM traffic for the values inside it.
//
// Example (the MLP of a transformer block; per op: 9 kernels, the
// 1024x8192 intermediates written and read 5 times):
//   %x  = bf16[1024,2048] convert(%h)
//   %d  = bf16[1024,8192] dot(%x, %w)
//   %c  = bf16[] constant(0.5)
//   %b  = bf16[1024,8192] broadcast(%c)
//   %m  = bf16[1024,8192] multiply(%d, %b)
//   %t  = bf16[1024,8192] tanh(%m)
//   %g  = bf16[1024,8192] multiply(%d, %t)
//   %e  = bf16[1024,2048] dot(%g, %w2)
//   %r  = bf16[1024,2048] add(%e, %res)
// fused: 4 kernels, as XLA's final module has them:
//   convert (loop fusion: reads %h, writes %x),
//   GEMM %d (reads %x, %w; writes %d),
//   loop fusion {%b, %m, %t, %g} (reads %d once, writes %g),
//   GEMM %e with beta = 1 (reads %g, %w2, %res; writes %r).
//
//   FusionEstimate est(model);
//   const FusedKernelRole& r = est.Role(*instr);   // per instruction
//   r.kind == kKernel: r.cost is the kernel rooted here
//
// The estimate is calibrated against XLA's final modules of the same
// programs (corpus `03` vs `09`, docs/SIMULATOR.md "Unfused modules").
#ifndef HLOVERLAP_ANALYSIS_FUSION_ESTIMATE_H_
#define HLOVERLAP_ANALYSIS_FUSION_ESTIMATE_H_

#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analysis/gpu_cost_model.h"
#include "hlo/module.h"

namespace hloverlap {

struct FusedKernelRole {
  enum class Kind {
    kOwnCost,   // not part of a fusion: the per-op cost model prices it
    kAbsorbed,  // inside a fusion or GEMM rooted elsewhere: no kernel
    kKernel,    // the root (last in schedule order) of a fused kernel
  };
  Kind kind = Kind::kOwnCost;
  OpCost cost;        // kKernel: flops, bytes, compute_us, memory_us,
                      // kernels = 1, time_us (launch + roofline)
  bool gemm = false;  // kKernel: a cuBLAS GEMM (with its epilogue)
  int64_t ops = 0;    // kKernel: unfused ops it stands for
};

class FusionEstimate {
 public:
  // `model` must outlive the estimate.
  explicit FusionEstimate(const GpuCostModel& model);
  ~FusionEstimate();

  // The role of `instr` (planned with the rest of its computation on first
  // use; instructions without a parent are kOwnCost).
  const FusedKernelRole& Role(const Instruction& instr);

  // The sum of the fused kernels' and the own-cost ops' times of one run of
  // `computation` (no control flow followed), for tests and reports.
  double ComputationTimeUs(const Computation& computation);

 private:
  void Plan(const Computation& computation);

  const GpuCostModel& model_;
  absl::flat_hash_map<const Computation*, bool> planned_;
  absl::flat_hash_map<const Instruction*, FusedKernelRole> roles_;
};

}  // namespace hloverlap

#endif  // HLOVERLAP_ANALYSIS_FUSION_ESTIMATE_H_
