// Collective pipeliner: moves collectives across while-loop iterations so
// each overlaps a whole iteration of compute. Nested loops are handled
// innermost first; every rewritten loop gets its own condition and body.
//
// Backward (prefetch), for all-gathers whose operand chain depends only on
// the induction variable, loop invariants and constants:
//
//   body(i) { w = dynamic-slice(W, i); g = all-gather(w); use(g) }
// becomes
//   g0 = all-gather(dynamic-slice(W, start))                 // prologue
//   while (i < start + (N-1)*step) {                         // N-1 trips
//     body(i, g) { use(g); g' = all-gather(dynamic-slice(W, i+step)) }
//   }
//   body(last, g)                                            // peeled
//
// With depth D (policy `depth=D`) D iterations are prefetched and peeled.
//
// Forward, for reduce-scatters / all-reduces whose result (through
// reshape/bitcast/convert/transpose/copy and invariant elementwise ops) is
// stored by dynamic-update-slice into a loop output:
//
//   body(i) { r = reduce-scatter(x(i)); buf' = dus(buf, r, idx(i)) }
// becomes
//   peeled iteration 0 computes x(0), idx(0) without the collective
//   while (...) {                                           // N-1 trips
//     body(i, xp, idxp) { buf' = dus(buf, reduce-scatter(xp), idxp)
//                         xp' = x(i); idxp' = idx(i) }
//   }
//   buf = dus(buf, reduce-scatter(xp), idxp)                 // epilogue
//
// Forward-sink (policy `sink`: `--loop=SELECTOR:pipeline=sink` or
// `_hloverlap_pipeline="sink"` on the while): the per-iteration operands are
// stored into an [N, ...] buffer and one batched collective runs after the
// loop. It applies only when requested, never by default: it trades the
// per-iteration overlap for one large collective after the loop (nothing
// left to overlap it with inside the loop nest) and keeps N operands live
// (N x the operand bytes; for a reduce-scatter the operand is the unscattered
// gradient). In a `sink` loop, reduce-scatters / all-reduces are sunk or
// left alone (a `missed` remark says why), never delayed by one iteration;
// all-gathers are still prefetched, after the sink. Requirements: the
// collective's result reaches a dynamic-update-slice into a loop output only
// through reshape/convert/copy/negate/transpose, the store writes a whole
// row of dimension 0 of an [N, ...] buffer (N = trip count), and the rows
// written, as a function of the loop counter, are each row exactly once (so
// the buffer's initial value is dead).
//
//   body(i) { g = dot(...); r = reduce-scatter(g), dimensions={0}
//             buf' = dus(buf, reshape(r), i, 0) }          // buf: [N, 8]
// becomes
//   body(i) { g = dot(...); rows' = dus(rows, reshape(g), i, 0, ...) }
//   rows = while(...)                                      // rows: [N, 16]
//   buf = reshape(reshape(reduce-scatter(rows), dimensions={1}))
//
// Trip counts come from analysis/while_loop_analysis.h and must be proven
// (known_trip_count alone is not enough). Prefetching rebuilds the
// condition as `i < start + (N-D)*step` (`>` counting down) at the
// counter's type, which needs a counter that does not wrap (otherwise a
// `missed` remark naming its width); forward and sink keep the original
// condition and are exact for wrapping counters too. A contradicted
// known_trip_count gets a KnownTripCountContradicted warning; the rewritten
// loop records the proven count (SetWhileTripCount).
//
// A loop or collective that cannot be handled stays unchanged and gets a
// `missed` remark saying which fact is missing; every rewrite is built,
// verified and only then swapped in (a failure is reported as a `failure`
// remark and the loop is left as it was).
#ifndef HLOVERLAP_PASSES_COLLECTIVE_PIPELINER_H_
#define HLOVERLAP_PASSES_COLLECTIVE_PIPELINER_H_

#include "passes/pass.h"

namespace hloverlap {

class CollectivePipelinerPass : public Pass {
 public:
  std::string_view name() const override { return "collective-pipeliner"; }
  absl::StatusOr<bool> Run(Module& module, PassContext& context) override;
};

}  // namespace hloverlap

#endif  // HLOVERLAP_PASSES_COLLECTIVE_PIPELINER_H_
