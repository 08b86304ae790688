#include "passes/pass.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "analysis/buffer_analysis.h"
#include "hlo/absl_compat.h"
#include "hlo/clone.h"
#include "hlo/diagnostic.h"
#include "passes/pass_registry.h"

namespace hloverlap {

std::string PassOptions::SourceOf(std::string_view option) const {
  auto it = option_sources.find(std::string(option));
  if (it == option_sources.end()) return "";
  return absl::StrCat(" (", it->second, ")");
}

std::string PassOptions::SourceOr(std::string_view option,
                                  std::string fallback) const {
  auto it = option_sources.find(std::string(option));
  return it == option_sources.end() ? std::move(fallback) : it->second;
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

void PassPipeline::Add(std::unique_ptr<Pass> pass, PassOptionValues options) {
  passes_.push_back(std::move(pass));
  options_.push_back(std::move(options));
}

void PassPipeline::AddInstrumentation(
    std::unique_ptr<PassInstrumentation> instrumentation) {
  instrumentations_.push_back(std::move(instrumentation));
}

absl::StatusOr<bool> PassPipeline::Run(Module& module, PassContext& context) {
  std::map<std::string_view, int> occurrences;
  for (const auto& pass : passes_) ++occurrences[pass->name()];
  std::map<std::string_view, int> seen;
  bool changed = false;
  context.memory.Reset(context.options.memory_budget_bytes);
  if (context.memory.budget().has_value()) {
    context.memory.SetInputPeak(ModulePeakMemory(module).bytes);
  }
  for (size_t i = 0; i < passes_.size(); ++i) {
    Pass& pass = *passes_[i];
    const PassInstrumentation::PassRun run{pass, static_cast<int>(i),
                                           ++seen[pass.name()],
                                           occurrences[pass.name()]};
    context.size_guard.Sync(module, context.options.max_module_instructions);
    std::optional<PassOptions> pipeline_options;
    if (!options_[i].empty()) {
      pipeline_options = context.options;
      const std::string source = PassRunText(pass.name(), options_[i]);
      for (const auto& [option, value] : options_[i]) {
        option->Set(context.options, value, source);
      }
    }
    for (const auto& inst : instrumentations_) {
      inst->RunBeforePass(run, module, context);
    }
    absl::StatusOr<bool> r = pass.Run(module, context);
    if (pipeline_options.has_value()) {
      context.options = *std::move(pipeline_options);
    }
    if (!r.ok()) {
      for (const auto& inst : instrumentations_) {
        inst->RunAfterPassFailed(run, module, context);
      }
      return WithMessage(r.status(), absl::StrCat("pass ", AsAbsl(pass.name()),
                                                  ": ", r.status().message()));
    }
    changed |= *r;
    for (const auto& inst : instrumentations_) {
      if (absl::Status s = inst->RunAfterPass(run, module, context); !s.ok()) {
        return s;
      }
    }
  }
  return changed;
}

}  // namespace hloverlap
