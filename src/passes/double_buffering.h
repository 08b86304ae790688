// Double buffering: unrolls a while loop by 2 so that two iterations sit in
// one body and the scheduler can overlap iteration i+1's collectives with
// iteration i's compute (and loop-carried buffers alternate between the two
// copies). XLA's DoubleBufferLoopUnrolling, with per-loop control.
//
//   body(p) { i = gte(p, 0); x = gte(p, 1)
//             w = dynamic-slice(W, i); y = f(all-gather(w), x)
//             ROOT (add(i, 1), y) }                        // 5 trips
// becomes
//   // peeled iteration 0 (odd trip count), in the parent
//   p1 = (add(0, 1), f(all-gather(dynamic-slice(W, 0)), x0))
//   while (p1) {                                           // 2 trips
//     body.double_buffer(p) {
//       i = gte(p, 0); x = gte(p, 1)
//       i1 = add(i, 1); y = f(all-gather(dynamic-slice(W, i)), x)
//       y2 = f(all-gather(dynamic-slice(W, i1)), y)        // i1 = i + step
//       ROOT (add(i, 2), y2)
//     }, known_trip_count={"n":"2"}
//   }
//
// The second copy reads the first copy's outputs directly (its uses of the
// induction variable read `i + step`, so its dynamic indices address the
// next iteration), and the induction variable advances by 2*step in one
// instruction, so the rewritten loop is still recognised by
// analysis/while_loop_analysis.h with trip count floor(N/2). The condition
// is unchanged. An odd trip count peels the first iteration in front of the
// loop. Every collective copy gets a fresh channel id; nested loops and
// async computations in the body get their own copies.
//
// Which loops (loop_policy.h): `_hloverlap_double_buffer="on|off"`,
// `_xla_loop_unroll_strategy="double-buffer"` and `--loop=SEL:double-buffer=
// on|off`; without a setting, innermost loops whose body contains a
// collective (PassOptions::double_buffer_default). An outer loop (e.g. the
// gradient-accumulation loop) is unrolled only when asked: it doubles the
// code of everything nested in it (reference/peers.md, MaxText #4316).
//
// Planned (`double-buffer{plan=true}`, what --preset=auto's candidates run;
// planning.h): analyze (the policy, the trip count), plan, apply. The cost
// oracle predicts what unrolling hides: per unrolled pair, each collective
// overlaps the other copy's compute that neither produces its operand nor
// reads its result, at most one copy's compute; the peeled iteration hides
// nothing and unrolling adds no compute. A loop is unrolled only when that
// gain is positive and --memory-budget (one ledger per pipeline run) holds
// the second copy's collective results; otherwise a missed NotProfitable or
// OverMemoryBudget remark carries the predicted numbers. A loop whose only
// collective is on its loop-carried chain is refused:
//
//   body(p) { x = gte(p, 1); ar = all-reduce(dot(x, w)); ROOT (i+1, tanh(ar)) }
//   missed: double-buffer: not double-buffered: unrolling would hide no
//     communication: ar reads what the previous iteration computes and the
//     next iteration's compute needs its result (predicted 0.000 ms of
//     communication off the critical path ...)
//     [NotProfitable]
//
// A --loop rule or attribute that turns it on forces it ("forced, predicted
// gain ..." in the remark); the budget still applies. Unplanned (plan=false,
// the default: the xla-gpu preset and XLA's flag, as XLA) every selected
// loop is unrolled; the remark's arguments still carry the prediction.
//
// The rewrite is transactional: the new loop is built beside the old one,
// verified, and only then swapped in; otherwise it is discarded with a
// `failure` remark. The trip count comes from analysis/while_loop_analysis.h:
// proven from the induction variable (exact at its width, also when the
// counter wraps: the unrolled loop tests the unchanged condition before
// every second iteration, and the exact count says which of those pass),
// else (as XLA) from the while's known_trip_count, and then the second
// copy's own induction update stays chained. Loops with neither, and trip
// counts below 2, get a `missed` remark and stay unchanged; a contradicted
// known_trip_count gets a KnownTripCountContradicted warning and the proven
// count is used.
#ifndef HLOVERLAP_PASSES_DOUBLE_BUFFERING_H_
#define HLOVERLAP_PASSES_DOUBLE_BUFFERING_H_

#include "passes/pass.h"

namespace hloverlap {

class DoubleBufferPass : public Pass {
 public:
  std::string_view name() const override { return "double-buffer"; }
  absl::StatusOr<bool> Run(Module& module, PassContext& context) override;
};

}  // namespace hloverlap

#endif  // HLOVERLAP_PASSES_DOUBLE_BUFFERING_H_
