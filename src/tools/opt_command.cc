// `hloverlap opt` (see opt_command.h).
#include "tools/opt_command.h"

#include <algorithm>
#include <charconv>
#include <memory>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "hlo/absl_compat.h"
#include "hlo/diagnostic.h"
#include "hlo/printer.h"
#include "hlo/verifier.h"
#include "passes/loop_policy.h"
#include "passes/pass.h"
#include "passes/pass_instrumentation.h"
#include "passes/pass_registry.h"
#include "passes/remark_summary.h"
#include "sim/sim_cost_oracle.h"
#include "support/byte_size.h"
#include "tools/common_options.h"
#include "tools/phase_report.h"
#include "tools/xla_flags.h"

namespace hloverlap {
namespace {

// A byte-size flag (support/byte_size.h), its name in the error.
absl::StatusOr<int64_t> ParseByteFlag(const std::string& text,
                                      std::string_view flag) {
  absl::StatusOr<int64_t> bytes = ParseByteSize(text);
  if (!bytes.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(AsAbsl(flag), ": ", bytes.status().message()));
  }
  return bytes;
}

// The passes of `--passes` / `--preset` after the XLA flags, or of the
// flags alone (empty: nothing to run). Prints what the flags changed.
absl::StatusOr<std::vector<PassSpec>> PipelinePasses(
    const OptCommandOptions& options, const XlaFlagsResult& flags) {
  if (!options.passes.empty() && !options.preset.empty()) {
    return absl::InvalidArgumentError(
        "--passes and --preset cannot be used together");
  }
  if (options.passes.empty() && options.preset.empty()) {
    const std::string spec = PipelineFromXlaFlags(flags);
    if (spec.empty()) return std::vector<PassSpec>();
    PrintError(absl::StrCat(
        "note: no --passes/--preset: the XLA flags choose the passes: ", spec));
    return ParsePipelineText(spec);
  }
  absl::StatusOr<std::vector<PassSpec>> specs =
      options.preset.empty() ? ParsePipelineText(options.passes)
                             : PresetPasses(options.preset);
  if (!specs.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(options.preset.empty() ? "--passes: " : "--preset: ",
                     specs.status().message()));
  }
  std::vector<std::string> names;
  for (const PassSpec& s : *specs) names.push_back(s.info->name);
  for (const std::string& note : ApplyXlaFlagsToPipeline(
           flags,
           options.preset.empty() ? "--passes"
                                  : absl::StrCat("--preset=", options.preset),
           names)) {
    PrintError(note);
  }
  // The flags only leave passes out.
  std::erase_if(*specs, [&](const PassSpec& s) {
    return std::find(names.begin(), names.end(), s.info->name) == names.end();
  });
  return specs;
}

// Sets a pass's declared option from the command-line flag that sets it for
// every run (already checked by DeclaredOptionCheck).
void SetFromFlag(PassOptions& options, std::string_view pass,
                 std::string_view option, const std::string& value) {
  if (const PassOptionInfo* o = FindPassOption(pass, option)) {
    o->Set(options, value, absl::StrCat(o->flag, "=", value));
  }
}

}  // namespace

CLI::Validator DeclaredOptionCheck(std::string_view pass,
                                   std::string_view option) {
  const PassOptionInfo* o = FindPassOption(pass, option);
  return CLI::Validator(
      [o, pass = std::string(pass)](std::string& value) -> std::string {
        if (o == nullptr) return "";
        absl::Status s = o->Check(value);
        if (s.ok()) return "";
        return absl::StrCat("'", value, "' (option ", o->name, " of pass ",
                            pass, "): ", s.message());
      },
      o == nullptr ? "" : o->TypeText());
}

absl::Status CheckOptFlagValues(const OptCommandOptions& options) {
  if (!options.passes.empty() && !options.preset.empty()) {
    return absl::InvalidArgumentError(
        "--passes and --preset cannot be used together");
  }
  if (!options.preset.empty()) {
    if (absl::StatusOr<std::vector<PassSpec>> p = PresetPasses(options.preset);
        !p.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--preset: ", p.status().message()));
    }
  }
  if (!options.passes.empty()) {
    if (absl::StatusOr<std::vector<PassSpec>> p =
            ParsePipelineText(options.passes);
        !p.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--passes: ", p.status().message()));
    }
  }
  for (const auto& [text, flag] :
       {std::pair{&options.memory_budget, "--memory-budget"},
        std::pair{&options.scheduler_memory_limit,
                  "--scheduler-memory-limit"}}) {
    if (text->empty()) continue;
    if (absl::StatusOr<int64_t> b = ParseByteFlag(*text, flag); !b.ok()) {
      return b.status();
    }
  }
  PassOptions probe;
  if (absl::Status s = AddLoopRules(options.loop_rules, probe); !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckOutputPath(options.output, "-o"); !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckOutputPath(options.remarks, "--remarks"); !s.ok()) {
    return s;
  }
  if (!options.dump_after.empty()) {
    return CheckOutputPath(options.dump_path.empty()
                               ? options.dump_after + ".hlo"
                               : options.dump_path,
                           "--dump-path");
  }
  if (!options.dump_path.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--dump-path=", options.dump_path,
                     " goes with --dump-after=PASS (which pass to dump)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<CheckedOptFlags> CheckOptFlags(const OptCommandOptions& options,
                                              XlaFlagsPrint print) {
  if (absl::Status s = CheckOptFlagValues(options); !s.ok()) return s;
  CheckedOptFlags checked;
  if (absl::Status s = ApplyXlaFlagsFromEnvAndCommandLine(
          options.xla_flags, options.use_xla_flags_env, checked.flag_options,
          checked.xla_flags, print);
      !s.ok()) {
    return s;
  }
  return checked;
}

namespace {

// The context options of `options` (after the XLA flags' `flag_options`).
absl::Status ConfigurePassContext(const OptCommandOptions& options,
                                  const PassOptions& flag_options,
                                  PassContext& context) {
  context.options = flag_options;
  // Flags that set a pass's declared option for every run; an option in
  // the pipeline text wins for its run.
  if (!options.pipeline_depth.empty()) {
    SetFromFlag(context.options, "collective-pipeliner", "depth",
                options.pipeline_depth);
  }
  if (!options.memory_budget.empty()) {
    absl::StatusOr<int64_t> budget =
        ParseByteFlag(options.memory_budget, "--memory-budget");
    if (!budget.ok()) return budget.status();
    context.options.memory_budget_bytes = *budget;
  }
  if (options.max_module_instructions > 0) {
    context.options.max_module_instructions = options.max_module_instructions;
  }
  // hloverlap's own options win over the XLA flags.
  if (!options.in_flight_limit.empty()) {
    SetFromFlag(context.options, "latency-hiding-scheduler", "in-flight",
                options.in_flight_limit);
  }
  if (!options.gpu.empty()) {
    SetFromFlag(context.options, "latency-hiding-scheduler", "gpu",
                options.gpu);
  }
  if (!options.scheduler_memory_limit.empty()) {
    absl::StatusOr<int64_t> limit = ParseByteFlag(
        options.scheduler_memory_limit, "--scheduler-memory-limit");
    if (!limit.ok()) return limit.status();
    context.options.scheduler_memory_limit_bytes = *limit;
  }
  if (absl::Status s = AddLoopRules(options.loop_rules, context.options);
      !s.ok()) {
    return s;
  }
  return absl::OkStatus();
}

// Plans ask the simulator `hloverlap sim` runs, for the scheduler's GPU.
std::unique_ptr<CostOracle> MakeCostOracle(const PassOptions& options) {
  SimOptions sim_options;
  if (std::optional<GpuSpec> spec = GpuSpecByName(options.gpu)) {
    sim_options.spec = *spec;
  }
  return std::make_unique<SimCostOracle>(sim_options);
}

}  // namespace

namespace {

// BuildOptPipeline of the passes `specs`.
absl::StatusOr<OptPipeline> BuildOptPipelineOf(
    const std::vector<PassSpec>& specs, const OptCommandOptions& options,
    const PassOptions& flag_options) {
  OptPipeline out;
  out.spec = PipelineText(specs);
  if (!specs.empty()) out.pipeline = BuildPipeline(specs);
  if (absl::Status s = ConfigurePassContext(options, flag_options, out.context);
      !s.ok()) {
    return s;
  }
  out.oracle = MakeCostOracle(out.context.options);
  out.context.cost_oracle = out.oracle.get();
  return out;
}

}  // namespace

absl::StatusOr<OptPipeline> BuildOptPipeline(const OptCommandOptions& options,
                                             const PassOptions& flag_options,
                                             const XlaFlagsResult& flags) {
  absl::StatusOr<std::vector<PassSpec>> specs = PipelinePasses(options, flags);
  if (!specs.ok()) return specs.status();
  return BuildOptPipelineOf(*specs, options, flag_options);
}

std::string RemarksFileText(const RemarkSink& remarks,
                            std::string_view format) {
  if (format == "json") return remarks.ToJsonLines();
  std::string text = remarks.ToText();
  if (remarks.remarks().empty()) return text;
  // One summary line after the remarks.
  absl::StrAppend(
      &text, "remarks: ", remarks.Count(RemarkKind::kPassed), " passed, ",
      remarks.Count(RemarkKind::kMissed), " missed, ",
      remarks.Count(RemarkKind::kFailure), " failures",
      remarks.Count(RemarkKind::kWarning) > 0
          ? absl::StrCat(", ", remarks.Count(RemarkKind::kWarning), " warnings")
          : std::string(),
      "\n");
  return text;
}

absl::StatusOr<std::string> WriteRemarks(const RemarkSink& remarks,
                                         const std::string& path,
                                         std::string_view format) {
  std::string text = RemarksFileText(remarks, format);
  if (path == "-") return text;
  if (absl::Status s = WriteOutputFile(path, text); !s.ok()) return s;
  return std::string();
}

absl::StatusOr<bool> RunPipelineOnInput(OptPipeline& built, Module& module) {
  PassContext& context = built.context;
  const InputNames input_names(module);
  // Selectors are checked, and the summary groups remarks, by the loops
  // the user sees: the input's.
  CheckLoopRulesMatch(module, context.options.loop_rules, context.remarks);
  // What the JAX code's frontend attributes decide, whatever the passes do.
  ReportLoopAttributes(module, context.options.loop_rules, context.remarks);
  auto predict = [&]() -> std::optional<StepPrediction> {
    if (!built.predict_steps || built.oracle == nullptr) return std::nullopt;
    absl::StatusOr<StepPrediction> p = built.oracle->PredictStep(module);
    if (!p.ok()) return std::nullopt;
    return *p;
  };
  built.input_step = predict();
  absl::StatusOr<bool> changed = built.pipeline.Run(module, context);
  if (changed.ok()) built.output_step = predict();
  MapRemarksToInput(input_names, context.remarks);
  // What did not happen as asked is on stderr whatever --remarks says.
  PrintRemarkWarnings(context.remarks);
  return changed;
}

namespace {

// Builds and runs the pipeline of `--passes` / `--preset` (or of the XLA
// flags) on the module. Returns the exit code (remarks are written even
// when a pass fails).
int ApplyPassPipeline(LoadedModule& loaded, const OptCommandOptions& options,
                      const PassOptions& flag_options,
                      const XlaFlagsResult& flags) {
  Module& module = *loaded.module;
  const std::string& filename = loaded.filename;
  absl::StatusOr<std::vector<PassSpec>> specs = PipelinePasses(options, flags);
  if (!specs.ok()) return ReportStatus(specs.status());
  if (specs->empty() && options.passes.empty() && options.preset.empty()) {
    if (!options.loop_rules.empty()) {
      PrintError("warning: --loop given without --passes or --preset");
    }
    return kExitOk;
  }
  if (!options.dump_after.empty() &&
      std::none_of(specs->begin(), specs->end(), [&](const PassSpec& s) {
        return s.info->name == options.dump_after;
      })) {
    return ReportStatus(absl::InvalidArgumentError(
        absl::StrCat("--dump-after=", options.dump_after,
                     ": the pipeline does not run that pass (it runs: ",
                     PipelineText(*specs), ")")));
  }

  // Passes rely on a module that verifies (they index tuples by
  // get-tuple-element indices, operands by shapes, ...): --no-verify skips
  // the check only for a plain round trip, so an invalid input is the
  // user's error, located, and never reaches a pass.
  if (!options.verify) {
    if (absl::Status st =
            VerifyWithLocations(module, loaded.text.view(), loaded.filename);
        !st.ok()) {
      return ReportStatus(absl::InvalidArgumentError(absl::StrCat(
          st.message(), "\n", filename,
          ": the module does not verify; passes need a module that "
          "verifies (--no-verify skips the check only when no pass runs)")));
    }
  }

  absl::StatusOr<OptPipeline> built =
      BuildOptPipelineOf(*specs, options, flag_options);
  if (!built.ok()) return ReportStatus(built.status());
  PassPipeline& pipeline = built->pipeline;
  TimingInstrumentation* timing = nullptr;
  if (options.time_passes) {
    auto t = std::make_unique<TimingInstrumentation>();
    timing = t.get();
    pipeline.AddInstrumentation(std::move(t));
  }
  if (options.verify_each) {
    pipeline.AddInstrumentation(std::make_unique<VerifyEachInstrumentation>());
  }
  if (!options.dump_after.empty()) {
    pipeline.AddInstrumentation(std::make_unique<DumpAfterInstrumentation>(
        options.dump_after, options.dump_path.empty()
                                ? options.dump_after + ".hlo"
                                : options.dump_path));
  }
  PassContext& context = built->context;
  // The summary groups remarks by the loops the user sees: the input's.
  const bool summary = !options.no_remarks_summary &&
                       (options.remarks_summary ||
                        (!options.remarks.empty() && options.remarks != "-"));
  std::vector<SummaryLoop> input_loops;
  if (summary) input_loops = SummaryLoops(module);
  built->predict_steps = summary;
  absl::StatusOr<bool> changed = RunPipelineOnInput(*built, module);
  if (summary) {
    std::string text =
        RemarksSummary(context.remarks.remarks(), input_loops,
                       options.remarks == "-" ? "" : options.remarks);
    if (built->input_step.has_value() && built->output_step.has_value()) {
      text += StepComparisonText(*built->input_step, *built->output_step,
                                 context.options.memory_budget_bytes);
    }
    text.pop_back();  // PrintError ends the line
    PrintError(text);
  }
  if (timing != nullptr) PrintError(timing->Report());

  if (!options.remarks.empty()) {
    absl::StatusOr<std::string> text =
        WriteRemarks(context.remarks, options.remarks, options.remarks_format);
    if (!text.ok()) return ReportStatus(text.status());
    if (options.remarks == "-") PrintError(*text);
  }
  if (!changed.ok())
    return ReportStatus(LocateInFile(changed.status(), filename));
  // A pass that leaves an invalid module is a bug, not a user error.
  if (absl::Status st = VerifyModule(module); !st.ok()) {
    return ReportStatus(absl::InternalError(absl::StrCat(
        "the module does not verify after the pipeline: ", st.message())));
  }
  return kExitOk;
}

}  // namespace

int RunOptCommand(const OptCommandOptions& options) {
  if (options.list_passes || options.list_presets || options.list_xla_flags) {
    std::string text;
    if (options.list_json) {
      text = (options.list_passes    ? ListPassesJson()
              : options.list_presets ? ListPresetsJson()
                                     : ListXlaFlagsJson())
                 .dump(2) +
             "\n";
    } else {
      text = options.list_passes    ? ListPassesText()
             : options.list_presets ? ListPresetsText()
                                    : ListXlaFlagsText();
    }
    return ReportStatus(WriteOutputFile("-", text));
  }
  if (options.list_json) {
    return ReportStatus(absl::InvalidArgumentError(
        "--json goes with --list-passes, --list-presets or --list-xla-flags"));
  }
  if (options.input.empty()) {
    return ReportStatus(absl::InvalidArgumentError(
        "opt: no input file (IN.hlo, or - for stdin); see hloverlap opt "
        "--help"));
  }
  // A malformed flag value is a user error before any work.
  absl::StatusOr<CheckedOptFlags> checked =
      CheckOptFlags(options, XlaFlagsPrint::kAll);
  if (!checked.ok()) return ReportStatus(checked.status());

  LoadOptions load;
  load.verify = options.verify;
  absl::StatusOr<LoadedModule> loaded = LoadModule(options.input, load);
  if (!loaded.ok()) return ReportStatus(loaded.status());
  Module& module = *loaded->module;

  if (int code = ApplyPassPipeline(*loaded, options, checked->flag_options,
                                   checked->xla_flags);
      code != kExitOk) {
    return code;
  }
  MarkPhase("passes");

  PrintOptions print;
  print.print_metadata = options.print_metadata;
  print.print_backend_config = options.print_backend_config;
  print.elide_constants_above = options.elide_constants_above;
  // Streamed: the text of a large module is never held whole.
  absl::StatusOr<std::unique_ptr<OutputFile>> out =
      OutputFile::Open(options.output);
  if (!out.ok()) return ReportStatus(out.status());
  PrintModuleTo(
      module, [&](std::string_view piece) { return (*out)->Write(piece); },
      print);
  absl::Status written = (*out)->Close();
  MarkPhase("print");
  KeepUntilExit(*std::move(loaded));
  return ReportStatus(written);
}

absl::Status AddDeclaredOptionFlag(CLI::App& cmd, std::string_view pass,
                                   std::string_view option, std::string& value,
                                   std::string_view help) {
  const PassOptionInfo* o = FindPassOption(pass, option);
  if (o == nullptr || o->flag.empty()) {
    return absl::InternalError(
        absl::StrCat(cmd.get_name(), ": no flag for option '", AsAbsl(option),
                     "' of pass '", AsAbsl(pass), "': the pass declares ",
                     o == nullptr ? "no such option" : "no flag for it",
                     " (passes/pass_registry.h, PassOptionInfo::SetFlag)"));
  }
  cmd.add_option(o->flag, value, std::string(help))
      ->check(DeclaredOptionCheck(pass, option));
  return absl::OkStatus();
}

namespace {

// A byte-size flag (support/byte_size.h); the help ends with `examples`
// and the units.
void AddByteSizeFlag(CLI::App& cmd, std::string_view flag, std::string& value,
                     std::string_view help, std::string_view examples) {
  cmd.add_option(std::string(flag), value,
                 absl::StrCat(AsAbsl(help), " (e.g. ", AsAbsl(examples), "; ",
                              AsAbsl(kByteSizeUnits), ")"));
}

}  // namespace

absl::Status AddPassOptionFlags(CLI::App& cmd, OptCommandOptions& options) {
  absl::Status status = AddDeclaredOptionFlag(
      cmd, "collective-pipeliner", "depth", options.pipeline_depth,
      "Default prefetch depth for all-gathers (iterations ahead; at most a "
      "loop's trip count - 1, clamped with a warning); sets "
      "collective-pipeliner{depth=N}");
  AddByteSizeFlag(cmd, "--memory-budget", options.memory_budget,
                  "Extra live bytes the pipeliner may add per loop nest",
                  "512M, 2GiB");
  status.Update(AddDeclaredOptionFlag(
      cmd, "latency-hiding-scheduler", "in-flight", options.in_flight_limit,
      "Scheduler: async collectives in flight at once (1 as XLA:GPU; 2 lets "
      "two overlap)"));
  AddByteSizeFlag(cmd, "--scheduler-memory-limit",
                  options.scheduler_memory_limit,
                  "Scheduler: live-bytes limit per computation", "40G");
  status.Update(
      AddDeclaredOptionFlag(cmd, "latency-hiding-scheduler", "gpu", options.gpu,
                            absl::StrCat("Cost model device preset: ",
                                         GpuPresetList(PassOptions().gpu))));
  cmd.add_option("--xla-flags", options.xla_flags,
                 "XLA flags as given to JAX (e.g. \"--xla_gpu_enable_"
                 "pipelined_all_gather=true ...\"): flags of the pipeliner, "
                 "double buffering, async conversion and the scheduler map "
                 "to those passes (and, without --passes/--preset, choose "
                 "them); each flag's effect is printed; applied after the "
                 "XLA_FLAGS environment variable");
  cmd.add_flag("!--no-xla-flags-env", options.use_xla_flags_env,
               "Ignore the XLA_FLAGS environment variable");
  return status;
}

void RegisterOptCommand(CLI::App& app, CommandContext& ctx) {
  using O = OptCommandOptions;
  auto options = std::make_shared<OptCommandOptions>();
  CLI::App* cmd = AddCommand(
      app, ctx, "opt",
      "Parse and verify an HLO module, run a pass pipeline on it, print it "
      "(current default XLA text style).",
      [options]() { return RunOptCommand(*options); });
  AddInputOption(*cmd, options->input);
  cmd->add_option("-o,--output", options->output,
                  "Output file ('-' for stdout, the default)");
  AddNoVerifyFlag(*cmd, options->verify,
                  "Do not verify the input module (print it as it is; a pass "
                  "pipeline still checks it first: passes need a module that "
                  "verifies)");
  cmd->add_option(
      "--passes", options->passes,
      absl::StrCat("Pass pipeline: comma-separated passes, each with "
                   "optional options, e.g. 'inline,dce,collective-pipeliner"
                   "{depth=2}' (--list-passes lists the options); passes: ",
                   absl::StrJoin(KnownPassNames(), ", ")));
  cmd->add_option("--preset", options->preset,
                  absl::StrCat("Named pass pipeline (--list-presets prints "
                               "them): ",
                               absl::StrJoin(KnownPresets(), ", ")));
  // Instead of reading a module: what opt knows.
  AddBoolFlags(
      *cmd, *options,
      {{"--list-passes", &O::list_passes,
        "Print the passes with their options (type, range, default, flag) "
        "and exit"},
       {"--list-presets", &O::list_presets,
        "Print the presets as pipeline text and exit"},
       {"--list-xla-flags", &O::list_xla_flags,
        "Print the XLA flags --xla-flags and XLA_FLAGS act on (the pass each "
        "concerns, its values) and those ignored, and exit"},
       {"--json", &O::list_json,
        "With --list-passes / --list-presets / --list-xla-flags: print JSON "
        "(each preset's passes with the options they run with)"}});
  cmd->add_option("--loop", options->loop_rules,
                  absl::StrCat("Per-loop rule SELECTOR:POLICY:\n",
                               AsAbsl(LoopRuleHelp())))
      // One value per occurrence, so `--loop X IN.hlo` keeps IN.hlo.
      ->allow_extra_args(false);
  AddRemarksOption(*cmd, options->remarks,
                   "Write optimization remarks to FILE ('-' = stderr)");
  AddBoolFlags(
      *cmd, *options,
      {{"--remarks-summary", &O::remarks_summary,
        "Print a per-loop summary of the remarks on stderr (what was "
        "pipelined, double-buffered, hidden, refused and why); on by default "
        "when --remarks names a file"},
       {"--no-remarks-summary", &O::no_remarks_summary,
        "No summary on stderr"}});
  AddRemarksFormatOption(*cmd, options->remarks_format);
  // Instrumentation of the pass pipeline.
  AddBoolFlags(
      *cmd, *options,
      {{"--verify-each", &O::verify_each, "Verify the module after every pass"},
       {"--time-passes", &O::time_passes,
        "Print each pass's wall time to stderr"}});
  ctx.AddRegistrationError(AddPassOptionFlags(*cmd, *options));
  cmd->add_option(
         "--max-module-instructions", options->max_module_instructions,
         absl::StrCat(
             "Stop with an error before a rewrite would grow the module past "
             "N instructions (default: ",
             ModuleSizeGuard::kDefaultGrowth, " x the input's, at least ",
             ModuleSizeGuard::kDefaultMinimum, ")"))
      ->check(NonNegative());
  cmd->add_option("--dump-after", options->dump_after,
                  "Write the module after the named pass");
  cmd->add_option("--dump-path", options->dump_path,
                  "File for --dump-after (default PASS.hlo)");
  // What the printed module leaves out.
  AddBoolFlags(*cmd, *options,
               {{"!--no-metadata", &O::print_metadata,
                 "Leave metadata={...} out of the output"},
                {"!--no-backend-config", &O::print_backend_config,
                 "Leave backend_config out of the output"}});
  cmd->add_option("--elide-constants", options->elide_constants_above,
                  "Print constants with more than N elements as {...}");
}

}  // namespace hloverlap
