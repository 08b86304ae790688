#include "passes/auto_plan.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/module_summary.h"
#include "hlo/absl_compat.h"
#include "hlo/clone.h"
#include "passes/pass_registry.h"
#include "support/byte_size.h"

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

// Two predicted steps closer than this fraction of the best are a tie (the
// bridge planner's TIE_FRACTION, python/hloverlap/plan.py).
constexpr double kTieFraction = 0.005;

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

namespace {

struct Outcome {
  const AutoPlanCandidate* candidate;
  StepPrediction step;
};

// The candidate's pipeline for a trial on a clone: with `rewrites_only`,
// followed by the xla-gpu tail in the same run (one memory ledger: what
// --memory-budget allows covers what the scheduler adds).
absl::StatusOr<PassPipeline> BuildTrial(const AutoPlanCandidate& c,
                                        bool rewrites_only) {
  if (!rewrites_only) return Build(c);
  std::string text = c.spec;
  if (text.empty()) {
    absl::StatusOr<std::vector<PassSpec>> specs = PresetPasses(c.name);
    if (!specs.ok()) return specs.status();
    text = PipelineText(*specs);
  }
  return BuildPipeline(absl::StrCat(text, ",", AsAbsl(kTail)));
}

// The choice among `outcomes` (the first is the baseline, cleanup): with a
// budget, a candidate whose peak exceeds the baseline's by more is out;
// steps within kTieFraction of the best tie, and a tie goes to the smaller
// peak, then to the earlier candidate (fewer rewrites), as the bridge's
// planner (python/hloverlap/plan.py) chooses.
const Outcome* Choose(const std::vector<Outcome>& outcomes,
                      std::optional<int64_t> budget) {
  const int64_t base_peak = outcomes.front().step.peak_memory_bytes;
  std::vector<const Outcome*> live;
  for (const Outcome& o : outcomes) {
    if (!budget.has_value() ||
        o.step.peak_memory_bytes - base_peak <= *budget) {
      live.push_back(&o);
    }
  }
  if (live.empty()) return &outcomes.front();
  double best = live.front()->step.step_us;
  for (const Outcome* o : live) best = std::min(best, o->step.step_us);
  const Outcome* pick = nullptr;
  for (const Outcome* o : live) {
    if (o->step.step_us > best * (1 + kTieFraction)) continue;
    if (pick == nullptr ||
        o->step.peak_memory_bytes < pick->step.peak_memory_bytes) {
      pick = o;
    }
  }
  return pick;
}

// The AutoPlanChoice remark: the choice with its step, exposed
// communication and peak; what it costs in memory against the baseline;
// when a tie was broken by memory or a candidate was over the budget, so.
Remark ChoiceRemark(std::string_view pass, const std::vector<Outcome>& outcomes,
                    const Outcome& best, std::optional<int64_t> budget) {
  const Outcome& base = outcomes.front();
  const Outcome* fastest = &outcomes.front();
  const Outcome* second = nullptr;
  for (const Outcome& o : outcomes) {
    if (o.step.step_us < fastest->step.step_us) fastest = &o;
  }
  for (const Outcome& o : outcomes) {
    if (&o != &best &&
        (second == nullptr || o.step.step_us < second->step.step_us)) {
      second = &o;
    }
  }
  Remark rm;
  rm.pass = std::string(pass);
  rm.kind = RemarkKind::kAnalysis;
  rm.name = "AutoPlanChoice";
  rm.message = absl::StrFormat(
      "chose %s: predicted step %.3f ms (exposed communication %.3f ms, "
      "compute %.3f ms, peak %s)",
      best.candidate->name, best.step.step_us / 1e3,
      best.step.exposed_communication_us / 1e3, best.step.compute_us / 1e3,
      HumanBytes(best.step.peak_memory_bytes));
  if (&best != &base) {
    const double saved = base.step.step_us - best.step.step_us;
    absl::StrAppend(
        &rm.message,
        absl::StrFormat(
            "; against %s: step %+.3f ms (%+.1f%%), peak %s%s",
            base.candidate->name, -saved / 1e3,
            base.step.step_us > 0 ? -100.0 * saved / base.step.step_us : 0.0,
            best.step.peak_memory_bytes >= base.step.peak_memory_bytes ? "+"
                                                                       : "-",
            HumanBytes(std::abs(best.step.peak_memory_bytes -
                                base.step.peak_memory_bytes))));
  }
  if (fastest != &best) {
    const bool over =
        budget.has_value() &&
        fastest->step.peak_memory_bytes - base.step.peak_memory_bytes > *budget;
    absl::StrAppend(
        &rm.message,
        over ? absl::StrFormat(
                   "; %s (%.3f ms) was faster but its peak %s exceeds "
                   "%s's by more than --memory-budget",
                   fastest->candidate->name, fastest->step.step_us / 1e3,
                   HumanBytes(fastest->step.peak_memory_bytes),
                   base.candidate->name)
             : absl::StrFormat(
                   "; a tie with %s (%.3f ms, within %.1f%%) broken by the "
                   "smaller peak (%s against %s)",
                   fastest->candidate->name, fastest->step.step_us / 1e3,
                   100 * kTieFraction, HumanBytes(best.step.peak_memory_bytes),
                   HumanBytes(fastest->step.peak_memory_bytes)));
  } else if (second != nullptr) {
    absl::StrAppend(&rm.message, absl::StrFormat("; runner-up %s %.3f ms",
                                                 second->candidate->name,
                                                 second->step.step_us / 1e3));
  }
  rm.Metric("step_us", Us(best.step.step_us))
      .Metric("exposed_communication_us",
              Us(best.step.exposed_communication_us))
      .Metric("compute_us", Us(best.step.compute_us))
      .Metric("peak_memory_bytes", best.step.peak_memory_bytes);
  for (const Outcome& o : outcomes) {
    rm.Metric(absl::StrCat(o.candidate->name, "_step_us"), Us(o.step.step_us));
  }
  for (const Outcome& o : outcomes) {
    rm.Metric(absl::StrCat(o.candidate->name, "_peak_memory_bytes"),
              o.step.peak_memory_bytes);
  }
  return rm;
}

}  // namespace

absl::StatusOr<bool> AutoPlanPass::Run(Module& module, PassContext& context) {
  if (context.cost_oracle == nullptr) {
    return absl::InvalidArgumentError(
        "the auto preset needs a cost model (hloverlap opt provides the "
        "simulator's); choose a fixed preset");
  }
  std::vector<Outcome> outcomes;
  for (const AutoPlanCandidate& c : AutoPlanCandidates(rewrites_only_)) {
    absl::StatusOr<PassPipeline> pipeline = BuildTrial(c, rewrites_only_);
    if (!pipeline.ok()) return pipeline.status();
    std::unique_ptr<Module> clone = CloneModule(module);
    PassContext trial;
    trial.options = context.options;
    // A fresh pipeline: no instrumentation (verify-each, dumps, timing) of
    // the user's pipeline runs on the trials.
    trial.cost_oracle = context.cost_oracle;
    trial.size_guard = context.size_guard;
    absl::StatusOr<bool> r = pipeline->Run(*clone, trial);
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
  const std::optional<int64_t> budget = context.options.memory_budget_bytes;
  const Outcome* best = Choose(outcomes, budget);
  context.remarks.Emit(ChoiceRemark(name(), outcomes, *best, budget));
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
