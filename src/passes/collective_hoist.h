// Collective hoisting: an all-gather of a slice of a stacked value that does
// not change across an enclosing loop is gathered once, before that loop.
//
// FSDP with gradient accumulation: the accumulation loop (outer) runs the
// layer loop (inner) once per microbatch, and the inner body gathers layer
// i's weights, the i-th slice of stacked weights that the outer loop passes
// through unchanged:
//
//   outer body { ... inner(..., W, ...) ... }              // W invariant
//   inner body(i) { g = all-gather(reshape(dynamic-slice(W, i, 0, 0))) }
// becomes
//   G = all-gather(W), dimensions={d+1}                    // before outer
//   outer body { ... inner(..., W, ..., G) ... }           // G carried
//   inner body(i) { g = reshape(dynamic-slice(G, i, 0, 0)) }
//
// The same bytes move once per step instead of once per microbatch (all
// slices of G are exactly the all-gathers of the slices of W: all-gather is
// a tiled concatenation in replica-group order, so values are bit-identical).
// The cost is G's size in live memory for the whole outer loop; with
// --memory-budget it is counted against the budget (per pass run), and a
// loop whose policy says pipeline=off (e.g. --loop=outermost:pipeline=off)
// is not hoisted out of. One remark per candidate.
//
// Stacked copies: when the inner body also stores each gathered slice into
// a loop output at its iteration's row (JAX saves the gathered weights of
// every layer for the backward pass that way) and the loop covers every row
// (induction variable from 0 by 1, trip count = rows), that output equals
// G; its uses after the inner loop read G instead (metric
// stacked_copies_forwarded), and the copies are left dead for XLA to drop.
//
// Requirements (otherwise a `missed` remark): the all-gather's operand is
// dynamic-slice(X) or reshape(dynamic-slice(X)) slicing size 1 on dimension 0
// (the reshape dropping that dimension) and the full extent elsewhere; X is
// a loop-state element of the inner loop that the inner and the outer loop
// pass through unchanged; both loops' bodies and conditions are used by one
// while each, their parameters are used only by get-tuple-element, and the
// loops' results only by get-tuple-element (so neither loop is the root of
// its computation, whose result shape would change).
//
// Each hoist is one LoopRewrite transaction (passes/loop_rewrite.h) run by
// the LoopPassDriver (passes/loop_pass_driver.h): both loops get the
// gathered stack as appended state in new conditions and bodies; the commit
// verifies them and swaps them in. An internal failure rolls back, leaving
// the module as it was, is reported as a RewriteDiscarded failure remark
// naming the pass, the loop and the all-gather, and the pass goes on.
#ifndef HLOVERLAP_PASSES_COLLECTIVE_HOIST_H_
#define HLOVERLAP_PASSES_COLLECTIVE_HOIST_H_

#include <utility>

#include "passes/loop_rewrite.h"
#include "passes/pass.h"

namespace hloverlap {

class CollectiveHoistPass : public Pass {
 public:
  // Test hook (passes/loop_rewrite.h): runs on each hoist's new inner body
  // just before the commit.
  using BeforeCommitHook = LoopRewriteHook;
  CollectiveHoistPass() = default;
  explicit CollectiveHoistPass(BeforeCommitHook before_commit)
      : before_commit_(std::move(before_commit)) {}

  std::string_view name() const override { return "collective-hoist"; }
  absl::StatusOr<bool> Run(Module& module, PassContext& context) override;

 private:
  BeforeCommitHook before_commit_;
};

}  // namespace hloverlap

#endif  // HLOVERLAP_PASSES_COLLECTIVE_HOIST_H_
