#include "passes/pass.h"

#include <algorithm>
#include <chrono>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "hlo/absl_compat.h"
#include "hlo/clone.h"
#include "hlo/diagnostic.h"
#include "hlo/printer.h"
#include "hlo/verifier.h"
#include "passes/async_conversion.h"
#include "passes/auto_plan.h"
#include "passes/call_inliner.h"
#include "passes/collective_hoist.h"
#include "passes/collective_pipeliner.h"
#include "passes/dce.h"
#include "passes/double_buffering.h"
#include "passes/latency_hiding_scheduler.h"
#include "passes/tuple_simplifier.h"

namespace hloverlap {

std::string PassOptions::SourceOf(std::string_view option) const {
  auto it = option_sources.find(std::string(option));
  if (it == option_sources.end()) return "";
  return absl::StrCat(" (", it->second, ")");
}

void ModuleSizeGuard::Sync(const Module& module, std::optional<int64_t> limit) {
  explicit_limit_ = limit;
  if (input_ < 0) input_ = module.instruction_count();
}

int64_t ModuleSizeGuard::limit() const {
  if (explicit_limit_.has_value()) return *explicit_limit_;
  const int64_t input = std::max<int64_t>(input_, 0);
  return std::max(kDefaultMinimum, input > kCloneCostSaturated / kDefaultGrowth
                                       ? kCloneCostSaturated
                                       : input * kDefaultGrowth);
}

absl::Status ModuleSizeGuard::Reserve(const Module& module,
                                      const Instruction& at,
                                      std::string_view what, int64_t count,
                                      std::string_view avoid) {
  if (input_ < 0) Sync(module, explicit_limit_);
  count = std::clamp<int64_t>(count, 0, kCloneCostSaturated);
  const int64_t now = module.instruction_count();
  const int64_t after = std::min(kCloneCostSaturated, now + count);
  const int64_t max = limit();
  if (after <= max) return absl::OkStatus();
  const std::string how =
      explicit_limit_.has_value()
          ? std::string("--max-module-instructions")
          : absl::StrCat("--max-module-instructions; default ", kDefaultGrowth,
                         " x the input's ", input_, " instructions, at least ",
                         kDefaultMinimum);
  std::string predicted =
      count >= kCloneCostSaturated ? "more than 2^62" : absl::StrCat(count);
  return AtInstruction(
      absl::ResourceExhaustedError(absl::StrCat(
          AsAbsl(what), " would add ", predicted,
          " instructions: the module would grow from ", now, " to ",
          count >= kCloneCostSaturated ? "more than 2^62" : absl::StrCat(after),
          " instructions, over the limit of ", max, " (", how,
          "); raise it with --max-module-instructions=N",
          avoid.empty() ? "" : ", or ", AsAbsl(avoid))),
      &at);
}

bool IsModuleSizeLimit(const absl::Status& status) {
  return status.code() == absl::StatusCode::kResourceExhausted;
}

absl::StatusOr<bool> PassPipeline::Run(Module& module, PassContext& context) {
  bool changed = false;
  context.memory.Reset(context.options.memory_budget_bytes);
  for (const auto& pass : passes_) {
    context.size_guard.Sync(module, context.options.max_module_instructions);
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<bool> r = pass->Run(module, context);
    context.timings.push_back(
        {std::string(pass->name()),
         std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
             .count()});
    if (!r.ok()) {
      return WithMessage(r.status(), absl::StrCat("pass ", AsAbsl(pass->name()),
                                                  ": ", r.status().message()));
    }
    changed |= *r;
    if (context.options.verify_each) {
      absl::Status s = VerifyModule(module);
      if (!s.ok()) {
        return absl::InternalError(
            absl::StrCat("module does not verify after pass ",
                         AsAbsl(pass->name()), ": ", s.message()));
      }
    }
    if (!context.options.dump_after.empty() &&
        context.options.dump_after == pass->name()) {
      std::ofstream out(context.options.dump_path);
      out << PrintModule(module);
      if (!out) {
        return absl::InvalidArgumentError(absl::StrCat(
            "cannot write --dump-after output to ", context.options.dump_path));
      }
    }
  }
  return changed;
}

namespace {

struct PassEntry {
  std::string_view name;
  std::string_view help;
  std::unique_ptr<Pass> (*make)();
};

const std::vector<PassEntry>& Registry() {
  static const auto* entries = new std::vector<PassEntry>{
      {"inline", "inline call instructions",
       [] { return std::unique_ptr<Pass>(new CallInlinerPass()); }},
      {"dce", "remove dead instructions and unreachable computations",
       [] { return std::unique_ptr<Pass>(new DcePass()); }},
      {"tuple-simplify", "forward tuple elements, drop rebuilt tuples",
       [] { return std::unique_ptr<Pass>(new TupleSimplifierPass()); }},
      {"collective-hoist",
       "gather loop-invariant stacked weights once before the enclosing "
       "loop instead of once per iteration",
       [] { return std::unique_ptr<Pass>(new CollectiveHoistPass()); }},
      {"collective-pipeliner",
       "pipeline all-gathers (prefetch) and reduce-scatters/all-reduces "
       "(delay) across loop iterations",
       [] { return std::unique_ptr<Pass>(new CollectivePipelinerPass()); }},
      {"double-buffer",
       "unroll loops by 2 (odd trip counts peel one iteration); innermost "
       "loops with collectives by default",
       [] { return std::unique_ptr<Pass>(new DoubleBufferPass()); }},
      {"async-collectives",
       "split collectives into start/done pairs (async-start/async-done for "
       "reduce-scatter and all-to-all)",
       [] { return std::unique_ptr<Pass>(new AsyncConversionPass()); }},
      {"auto-plan",
       "run the candidate pipelines (fixed presets, the xla-gpu tail after "
       "each loop rewrite) on clones, then the one with the smallest "
       "predicted step (needs the cost model)",
       [] { return std::unique_ptr<Pass>(new AutoPlanPass()); }},
      {"auto-rewrite-plan",
       "as auto-plan over the loop rewrites only, each predicted after the "
       "xla-gpu tail; outputs the rewrites (the JAX bridge's default)",
       [] { return std::unique_ptr<Pass>(new AutoPlanPass(true)); }},
      {"latency-hiding-scheduler",
       "list-schedule every computation so async collectives overlap compute "
       "(sets is_scheduled=true)",
       [] { return std::unique_ptr<Pass>(new LatencyHidingSchedulerPass()); }},
  };
  return *entries;
}

}  // namespace

std::unique_ptr<Pass> CreatePass(std::string_view name) {
  for (const PassEntry& e : Registry()) {
    if (e.name == name) return e.make();
  }
  return nullptr;
}

std::vector<std::string> KnownPassNames() {
  std::vector<std::string> names;
  for (const PassEntry& e : Registry()) names.emplace_back(e.name);
  return names;
}

absl::StatusOr<PassPipeline> BuildPipeline(std::string_view spec) {
  PassPipeline pipeline;
  for (absl::string_view raw : absl::StrSplit(AsAbsl(spec), ',')) {
    std::string name(raw);
    // Trim spaces.
    while (!name.empty() && name.back() == ' ') name.pop_back();
    while (!name.empty() && name.front() == ' ') name.erase(name.begin());
    if (name.empty()) continue;
    std::unique_ptr<Pass> pass = CreatePass(name);
    if (pass == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown pass '", name,
          "'; known passes: ", absl::StrJoin(KnownPassNames(), ", ")));
    }
    pipeline.Add(std::move(pass));
  }
  return pipeline;
}

std::vector<std::string> KnownPresets() {
  return {"cleanup", "pipeline", "hoist-pipeline",
          "xla-gpu", "auto",     "auto-rewrite"};
}

namespace {

// XLA:GPU's order (reference/xla_lhs.md §3): cleanup, collective pipeliner,
// double buffering, async conversion, latency-hiding scheduler. Passes not
// registered in this build are left out.
std::string XlaGpuPresetSpec() {
  std::vector<std::string> names;
  for (const char* name :
       {"inline", "tuple-simplify", "dce", "collective-pipeliner",
        "tuple-simplify", "dce", "double-buffer", "async-collectives",
        "latency-hiding-scheduler"}) {
    bool known = false;
    for (const PassEntry& e : Registry()) known |= e.name == name;
    if (known) names.emplace_back(name);
  }
  return absl::StrJoin(names, ",");
}

}  // namespace

absl::StatusOr<PassPipeline> BuildPreset(std::string_view preset) {
  if (preset == "cleanup") return BuildPipeline("inline,tuple-simplify,dce");
  if (preset == "pipeline") {
    return BuildPipeline(
        "inline,tuple-simplify,dce,collective-pipeliner,tuple-simplify,dce");
  }
  // The JAX bridge's default: loop-invariant all-gathers leave the
  // accumulation loop first, then the rest is pipelined.
  if (preset == "hoist-pipeline") {
    return BuildPipeline(
        "inline,tuple-simplify,dce,collective-hoist,collective-pipeliner,"
        "tuple-simplify,dce");
  }
  if (preset == "xla-gpu") return BuildPipeline(XlaGpuPresetSpec());
  // Plans: the pipeline with the smallest predicted step (auto_plan.h).
  if (preset == "auto") return BuildPipeline("auto-plan");
  if (preset == "auto-rewrite") return BuildPipeline("auto-rewrite-plan");
  return absl::InvalidArgumentError(
      absl::StrCat("unknown preset '", AsAbsl(preset),
                   "'; known presets: ", absl::StrJoin(KnownPresets(), ", ")));
}

}  // namespace hloverlap
