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
// Forward-sink (mode `sink`): the per-iteration operands are stored into an
// [N, ...] buffer and one batched collective runs after the loop.
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
  // With dry_run, only remarks are produced and the module is not changed
  // (used by `hloverlap explain`).
  explicit CollectivePipelinerPass(bool dry_run = false) : dry_run_(dry_run) {}
  std::string_view name() const override { return "collective-pipeliner"; }
  absl::StatusOr<bool> Run(Module& module, PassContext& context) override;

 private:
  bool dry_run_;
};

}  // namespace hloverlap

#endif  // HLOVERLAP_PASSES_COLLECTIVE_PIPELINER_H_
