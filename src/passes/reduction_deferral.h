// Reduction deferral: a gradient that a loop reduces across devices every
// iteration and adds into an accumulator is accumulated locally instead and
// reduced once, after the loop.
//
// Gradient accumulation with data parallelism (or FSDP's reduce-scatter)
// reduces every microbatch's gradient and adds it to the accumulator:
//
//   body(p) {
//     acc = get-tuple-element(p), index=1
//     g = ...                                            // this microbatch
//     r = f32[8] all-reduce(g), to_apply=sum
//     acc.next = f32[8] add(acc, r)
//     ROOT t = (s32[], f32[8]) tuple(i.next, acc.next)
//   }
//   w = while(tuple(i0, acc0)), ...       // trip count N
//   out = get-tuple-element(w), index=1
// becomes
//   body(p) {
//     acc = get-tuple-element(p), index=1                // passed through
//     accf = get-tuple-element(p), index=2               // local, full size
//     g = ...
//     accf.next = f32[8] add(accf, g)
//     ROOT t = (s32[], f32[8], f32[8]) tuple(i.next, acc, accf.next)
//   }
//   w = while(tuple(i0, acc0, broadcast(0))), ...
//   r.deferred = f32[8] all-reduce(get-tuple-element(w), index=2), to_apply=sum
//   out = f32[8] add(get-tuple-element(w), index=1, r.deferred)
//
// N collectives become one (sum is linear: acc0 + sum_i C(g_i) =
// acc0 + C(sum_i g_i)). For a reduce-scatter the cost is the point: the
// local accumulator has the unscattered, full size (a whole gradient per
// device instead of a shard); for an all-reduce it has the accumulator's
// size. Integer sums are exact; floating-point sums are reassociated (each
// device adds its own values first), so results may differ in the last
// bits: the pass is opt-in, off in every preset, enabled per loop with
// `--loop=SELECTOR:defer-reduce=on` or for every loop with
// `defer-reduction{enable=true}`.
//
// Stacked form (scanned layers: shard_map FSDP's backward layer loop): the
// collective is in an inner loop that stores its result as one row per
// layer, and the accumulation loop adds the inner loop's stack:
//
//   inner body(i) { ...
//     rs = bf16[128,1024] reduce-scatter(bf16[256,1024] dx), dimensions={0}
//     buf.next = dynamic-update-slice(buf, reshape(rs), layer(i), 0, 0) }
//   outer body { ...
//     stack = bf16[4,128,1024] get-tuple-element(inner(..., zeros)), index=2
//     acc.next = add(acc, stack) }
// becomes
//   inner body(i) { ... buf.next = dynamic-update-slice(buf, reshape(dx),
//                       layer(i), 0, 0) }                 // bf16[4,256,1024]
//   outer body { ... accf.next = add(accf, stack) }       // bf16[4,256,1024]
//   after outer: acc0 + reduce-scatter(accf), dimensions={1}
//
// Layers x microbatches reduce-scatters become one of the whole stack (row
// l of the stacked reduce-scatter is the reduce-scatter of row l). It needs
// the inner loop's stack to start as zeros and its rows to be chosen alike
// on every device; its cost is a full-size stack twice (the accumulator and
// the inner loop's rows). GSPMD's form of a reduce-scatter (all-reduce,
// then a dynamic-slice at an offset computed from the device's id) is
// deferred as one all-reduce of the stack and one dynamic-slice.
//
// Between the collective and the add the value may go through reshape,
// bitcast, copy, transpose and multiplication by a constant (JAX's pmean
// scales the psum by 1/devices); they are applied once after the loop.
// Anything else (a convert would change the precision the sum is
// accumulated in) leaves the candidate alone with a `missed` remark.
//
// Planned like the other loop rewrites (passes/planning.h): the cost oracle
// predicts the communication removed (trip count - 1 collectives) and the
// compute added (the full-size adds of a reduce-scatter's accumulator); the
// accumulator's bytes are counted against --memory-budget. A legal,
// profitable candidate that is not enabled is reported as
// `ReductionDeferralNotEnabled` with what it would save and cost.
//
// Each deferral is one LoopRewrite transaction (passes/loop_rewrite.h):
// AppendLoopState grows the loop's state by the local accumulator (copies
// of its condition and body; the stacked form's inner loop is copied with
// CopyLoop and its rows widened), the reads of the old accumulator go to
// the add after the loop; the commit verifies the copies and swaps them in.
// Nothing is edited outside the transaction.
// An internal failure rolls back, leaving the module as it was, and is
// reported (LoopPassDriver, passes/loop_pass_driver.h) as a RewriteDiscarded
// failure remark naming the pass, the loop and the collective; the pass goes
// on with its other loops.
//
// Requirements (otherwise a `missed` remark on the collective): the loop's
// trip count is known and at least 2; the collective is a one-operand array
// all-reduce or reduce-scatter whose reduction is an add, used only by the
// accumulation; the accumulator is a loop-state element that the iteration
// reads only in that add and the condition does not read; the loop's body
// and condition are used by this loop only, their parameters only by
// get-tuple-element, and the loop's result only by get-tuple-element.
#ifndef HLOVERLAP_PASSES_REDUCTION_DEFERRAL_H_
#define HLOVERLAP_PASSES_REDUCTION_DEFERRAL_H_

#include <utility>

#include "passes/loop_rewrite.h"
#include "passes/pass.h"

namespace hloverlap {

class ReductionDeferralPass : public Pass {
 public:
  // Test hook (passes/loop_rewrite.h): runs on each deferral's new loop body
  // just before the commit.
  using BeforeCommitHook = LoopRewriteHook;
  ReductionDeferralPass() = default;
  explicit ReductionDeferralPass(BeforeCommitHook before_commit)
      : before_commit_(std::move(before_commit)) {}

  std::string_view name() const override { return "defer-reduction"; }
  absl::StatusOr<bool> Run(Module& module, PassContext& context) override;

 private:
  BeforeCommitHook before_commit_;
};

}  // namespace hloverlap

#endif  // HLOVERLAP_PASSES_REDUCTION_DEFERRAL_H_
