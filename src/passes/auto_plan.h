// The planning preset (`--preset=auto`, pass `auto-plan`): the loop passes
// plan every candidate with the cost oracle and the memory ledger
// (planning.h); this pass plans the pipeline around them. It runs each
// pipeline of AutoPlanCandidates() on a clone of the module, asks the cost
// oracle for the resulting step (the simulator `hloverlap sim` runs), and
// then runs the one with the smallest predicted step on the module itself,
// so remarks, --verify-each and --dump-after are those of a real run of that
// pipeline. Ties go to the earlier candidate (fewer rewrites). Every fixed
// preset is a candidate, so the predicted step of `auto` is never above the
// best fixed preset's.
//
//   hloverlap opt m.hlo --preset=auto --remarks=-
//   analysis: auto-plan: chose hoist-async: predicted step 9.84 ms
//     (exposed communication 0.31 ms, compute 9.41 ms, peak 23.3 MB);
//     runner-up xla-gpu 11.48 ms [AutoPlanChoice] (step_us=9840, ...)
//
// Needs a cost oracle (PassContext::cost_oracle); without one it is an
// error, located at the module.
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
// each combination of hoist, pipeliner and double buffering.
const std::vector<AutoPlanCandidate>& AutoPlanCandidates();

class AutoPlanPass : public Pass {
 public:
  std::string_view name() const override { return "auto-plan"; }
  absl::StatusOr<bool> Run(Module& module, PassContext& context) override;
};

}  // namespace hloverlap

#endif  // HLOVERLAP_PASSES_AUTO_PLAN_H_
