#include "passes/auto_plan.h"

#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "hlo/absl_compat.h"
#include "hlo/clone.h"
#include "passes/pass_registry.h"

namespace hloverlap {
namespace {

constexpr std::string_view kTail = kXlaGpuTail;
constexpr std::string_view kHoist = "collective-hoist";
constexpr std::string_view kPipeline = "collective-pipeliner";
constexpr std::string_view kHoistPipeline =
    "collective-hoist,collective-pipeliner";
// Only the loops whose unrolling the cost model predicts to hide
// communication (double_buffering.h).
constexpr std::string_view kPlannedDoubleBuffer = "double-buffer{plan=true}";

int64_t Us(double v) {
  if (!std::isfinite(v)) return 0;
  return static_cast<int64_t>(std::llround(std::clamp(v, -1e15, 1e15)));
}

}  // namespace

absl::StatusOr<PassPipeline> Build(const AutoPlanCandidate& candidate) {
  return candidate.spec.empty() ? BuildPreset(candidate.name)
                                : BuildPipeline(candidate.spec);
}

const std::vector<AutoPlanCandidate>& AutoPlanCandidates(bool rewrites_only) {
  static const auto* rewrites = new std::vector<AutoPlanCandidate>{
      {"cleanup", ""},
      {"hoist", JoinPipeline({kCleanupPipeline, kHoist, kRewriteCleanup})},
      {"pipeline", ""},
      {"hoist-pipeline", ""},
  };
  if (rewrites_only) return *rewrites;
  static const auto* candidates = new std::vector<AutoPlanCandidate>{
      {"cleanup", ""},
      {"pipeline", ""},
      {"hoist-pipeline", ""},
      {"async", JoinPipeline({kCleanupPipeline, kTail})},
      {"hoist-async",
       JoinPipeline({kCleanupPipeline, kHoist, kRewriteCleanup, kTail})},
      {"pipeline-async",
       JoinPipeline({kCleanupPipeline, kPipeline, kRewriteCleanup, kTail})},
      {"hoist-pipeline-async", JoinPipeline({kCleanupPipeline, kHoistPipeline,
                                             kRewriteCleanup, kTail})},
      {"pipeline-double-buffer-async",
       JoinPipeline({kCleanupPipeline, kPipeline, kRewriteCleanup,
                     kPlannedDoubleBuffer, kTail})},
      {"xla-gpu", ""},
      {"hoist-xla-gpu",
       JoinPipeline({kCleanupPipeline, kHoistPipeline, kRewriteCleanup,
                     kPlannedDoubleBuffer, kTail})},
  };
  return *candidates;
}

absl::StatusOr<bool> AutoPlanPass::Run(Module& module, PassContext& context) {
  if (context.cost_oracle == nullptr) {
    return absl::InvalidArgumentError(
        "the auto preset needs a cost model (hloverlap opt provides the "
        "simulator's); choose a fixed preset");
  }
  struct Outcome {
    const AutoPlanCandidate* candidate;
    StepPrediction step;
  };
  std::vector<Outcome> outcomes;
  absl::StatusOr<PassPipeline> tail = BuildPipeline(kTail);
  if (!tail.ok()) return tail.status();
  for (const AutoPlanCandidate& c : AutoPlanCandidates(rewrites_only_)) {
    absl::StatusOr<PassPipeline> pipeline = Build(c);
    if (!pipeline.ok()) return pipeline.status();
    std::unique_ptr<Module> clone = CloneModule(module);
    PassContext trial;
    trial.options = context.options;
    // A fresh pipeline: no instrumentation (verify-each, dumps, timing) of
    // the user's pipeline runs on the trials.
    trial.cost_oracle = context.cost_oracle;
    trial.size_guard = context.size_guard;
    absl::StatusOr<bool> r = pipeline->Run(*clone, trial);
    // What XLA does with the rewritten module: convert and schedule.
    if (r.ok() && rewrites_only_) r = tail->Run(*clone, trial);
    std::optional<StepPrediction> step;
    std::string why;
    if (r.ok()) {
      absl::StatusOr<StepPrediction> p =
          context.cost_oracle->PredictStep(*clone);
      if (p.ok()) {
        step = *p;
      } else {
        why = std::string(p.status().message());
      }
    } else {
      why = std::string(r.status().message());
    }
    if (!step.has_value()) {
      Remark rm;
      rm.pass = std::string(name());
      rm.kind = RemarkKind::kAnalysis;
      rm.name = "AutoPlanCandidateFailed";
      rm.message = absl::StrCat("candidate ", c.name, " left out: ", why);
      context.remarks.Emit(std::move(rm));
      continue;
    }
    outcomes.push_back({&c, *step});
  }
  if (outcomes.empty()) {
    return absl::InternalError("no candidate pipeline could be predicted");
  }
  const Outcome* best = &outcomes.front();
  const Outcome* second = nullptr;
  for (const Outcome& o : outcomes) {
    if (o.step.step_us < best->step.step_us) best = &o;
  }
  for (const Outcome& o : outcomes) {
    if (&o != best &&
        (second == nullptr || o.step.step_us < second->step.step_us)) {
      second = &o;
    }
  }
  Remark rm;
  rm.pass = std::string(name());
  rm.kind = RemarkKind::kAnalysis;
  rm.name = "AutoPlanChoice";
  rm.message = absl::StrFormat(
      "chose %s: predicted step %.3f ms (exposed communication %.3f ms, "
      "compute %.3f ms, peak %d bytes)",
      best->candidate->name, best->step.step_us / 1e3,
      best->step.exposed_communication_us / 1e3, best->step.compute_us / 1e3,
      best->step.peak_memory_bytes);
  if (second != nullptr) {
    absl::StrAppend(&rm.message, absl::StrFormat("; runner-up %s %.3f ms",
                                                 second->candidate->name,
                                                 second->step.step_us / 1e3));
  }
  rm.Metric("step_us", Us(best->step.step_us))
      .Metric("exposed_communication_us",
              Us(best->step.exposed_communication_us))
      .Metric("compute_us", Us(best->step.compute_us))
      .Metric("peak_memory_bytes", best->step.peak_memory_bytes);
  for (const Outcome& o : outcomes) {
    rm.Metric(absl::StrCat(o.candidate->name, "_step_us"), Us(o.step.step_us));
  }
  context.remarks.Emit(std::move(rm));
  absl::StatusOr<PassPipeline> chosen = Build(*best->candidate);
  if (!chosen.ok()) return chosen.status();
  return chosen->Run(module, context);
}

// Registration (passes/pass_registry.h).
void RegisterAutoPlanPasses(PassRegistry& registry) {
  registry.Add<AutoPlanPass>(
      "run the candidate pipelines (fixed presets, the xla-gpu tail after "
      "each loop rewrite) on clones, then the one with the smallest "
      "predicted step (needs the cost model)");
  registry.Add<AutoRewritePlanPass>(
      "as auto-plan over the loop rewrites only, each predicted after the "
      "xla-gpu tail; outputs the rewrites");
}

}  // namespace hloverlap
