// The planning preset (`--preset=auto`, pass `auto-plan`): the loop passes
// plan every candidate with the cost oracle and the memory ledger
// (planning.h); this pass plans the pipeline around them. It runs each
// pipeline of AutoPlanCandidates() on a clone of the module, asks the cost
// oracle for the resulting step and peak (the simulator `hloverlap sim`
// runs), and then runs the chosen one on the module itself, so remarks,
// --verify-each and --dump-after are those of a real run of that pipeline.
// The choice, as the bridge's planner makes it (python/hloverlap/plan.py):
// with --memory-budget, a candidate whose peak exceeds the first
// candidate's (cleanup) by more than the budget is out; predicted steps
// within 0.5% of the best (kTieFraction) tie, and a tie goes to the smaller
// peak, then to the earlier candidate (fewer rewrites). The remark says
// what the choice costs in memory against cleanup, and when memory decided.
// Every fixed preset is a candidate, so without a budget the predicted step
// of `auto` is within 0.5% of the best fixed preset's. The candidates with
// double buffering other than the fixed xla-gpu plan it
// (double-buffer{plan=true}: a loop is unrolled only when the cost model
// predicts a gain).
//
//   hloverlap opt m.hlo --preset=auto --remarks=-
//   analysis: auto-plan: chose pipeline-async: predicted step 9.840 ms
//     (exposed communication 0.310 ms, compute 9.410 ms, peak 22.2 MiB);
//     against cleanup: step -1.640 ms (-14.3%), peak +4.0 MiB; a tie with
//     pipeline-double-buffer-async (9.831 ms, within 0.5%) broken by the
//     smaller peak (22.2 MiB against 30.2 MiB) [AutoPlanChoice]
//     (step_us=9840, ...)
//
// `--preset=auto-rewrite` (pass `auto-rewrite-plan`, the JAX bridge's
// default) plans the loop rewrites only: candidates are the presets without
// async conversion and scheduling (cleanup, pipeline, hoist-pipeline, the
// hoist alone); each is predicted after the xla-gpu tail on a clone, run in
// the same pipeline (what XLA does with the module after the bridge hands
// it back; one --memory-budget for both), and the output
// is the chosen rewrites without the tail (the bridge's StableHLO route
// takes no async -start/-done).
//
// Needs a cost oracle (PassContext::cost_oracle); without one it is an
// error.
#ifndef HLOVERLAP_PASSES_AUTO_PLAN_H_
#define HLOVERLAP_PASSES_AUTO_PLAN_H_

#include <string>
#include <vector>

#include "passes/pass.h"

namespace hloverlap {

struct AutoPlanCandidate {
  std::string name;  // a fixed preset's name, or a descriptive one
  std::string spec;  // pass pipeline text; empty: the preset `name`
};

// The candidate's pipeline.
absl::StatusOr<PassPipeline> Build(const AutoPlanCandidate& candidate);

// The pipelines the plan compares, fewest rewrites first: the fixed presets
// and the xla-gpu tail (async conversion, latency-hiding scheduler) after
// each combination of hoist, pipeliner and double buffering; with
// `rewrites_only`, the loop rewrites without the tail.
const std::vector<AutoPlanCandidate>& AutoPlanCandidates(
    bool rewrites_only = false);

class AutoPlanPass : public Pass {
 public:
  explicit AutoPlanPass(bool rewrites_only = false)
      : rewrites_only_(rewrites_only) {}
  std::string_view name() const override {
    return rewrites_only_ ? "auto-rewrite-plan" : "auto-plan";
  }
  absl::StatusOr<bool> Run(Module& module, PassContext& context) override;

 private:
  bool rewrites_only_;
};

// The rewrites-only plan as a type of its own, for the pass registry.
class AutoRewritePlanPass : public AutoPlanPass {
 public:
  AutoRewritePlanPass() : AutoPlanPass(true) {}
};

}  // namespace hloverlap

#endif  // HLOVERLAP_PASSES_AUTO_PLAN_H_
