// `hloverlap opt` (see opt_command.h).
#include "tools/opt_command.h"

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
#include "passes/remark_summary.h"
#include "tools/xla_flags.h"

namespace hloverlap {
namespace {

// "1000", "64K", "1.5G" style sizes (K/M/G/T are powers of 1024, optional
// trailing "iB"/"B").
absl::StatusOr<int64_t> ParseByteSize(
    const std::string& text, std::string_view flag = "--memory-budget") {
  std::string t = text;
  for (std::string_view suffix : {"iB", "B"}) {
    if (t.size() > suffix.size() &&
        t.compare(t.size() - suffix.size(), suffix.size(), suffix) == 0) {
      t.resize(t.size() - suffix.size());
      break;
    }
  }
  double scale = 1;
  if (!t.empty()) {
    switch (t.back()) {
      case 'k':
      case 'K':
        scale = 1024.0;
        break;
      case 'm':
      case 'M':
        scale = 1024.0 * 1024;
        break;
      case 'g':
      case 'G':
        scale = 1024.0 * 1024 * 1024;
        break;
      case 't':
      case 'T':
        scale = 1024.0 * 1024 * 1024 * 1024;
        break;
      default:
        break;
    }
    if (scale != 1) t.pop_back();
  }
  double v = 0;
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  double bytes = v * scale;
  if (t.empty() || ec != std::errc() || ptr != t.data() + t.size() ||
      !(bytes >= 0) || bytes > 9.2e18) {
    return absl::InvalidArgumentError(
        absl::StrCat(AsAbsl(flag), ": invalid size '", text,
                     "' (examples: 1000000, 512M, 2GiB)"));
  }
  return static_cast<int64_t>(bytes);
}

// The pass names of `--passes` / `--preset` after the XLA flags, or of the
// flags alone (empty: nothing to run). Prints what the flags changed.
absl::StatusOr<std::vector<std::string>> PipelinePasses(
    const OptCommandOptions& options, const XlaFlagsResult& flags) {
  if (!options.passes.empty() && !options.preset.empty()) {
    return absl::InvalidArgumentError(
        "--passes and --preset cannot be used together");
  }
  std::vector<std::string> names;
  if (options.passes.empty() && options.preset.empty()) {
    const std::string spec = PipelineFromXlaFlags(flags);
    if (spec.empty()) return names;
    PrintError(absl::StrCat(
        "note: no --passes/--preset: the XLA flags choose the passes: ", spec));
    for (absl::string_view n : absl::StrSplit(spec, ',')) {
      names.emplace_back(n);
    }
    return names;
  }
  absl::StatusOr<PassPipeline> pipeline = options.preset.empty()
                                              ? BuildPipeline(options.passes)
                                              : BuildPreset(options.preset);
  if (!pipeline.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(options.preset.empty() ? "--passes: " : "--preset: ",
                     pipeline.status().message()));
  }
  for (const auto& pass : pipeline->passes()) names.emplace_back(pass->name());
  for (const std::string& note : ApplyXlaFlagsToPipeline(
           flags,
           options.preset.empty() ? "--passes"
                                  : absl::StrCat("--preset=", options.preset),
           names)) {
    PrintError(note);
  }
  return names;
}

}  // namespace

absl::StatusOr<OptPipeline> BuildOptPipeline(const OptCommandOptions& options,
                                             const PassOptions& flag_options,
                                             const XlaFlagsResult& flags) {
  absl::StatusOr<std::vector<std::string>> names =
      PipelinePasses(options, flags);
  if (!names.ok()) return names.status();
  OptPipeline out;
  out.spec = absl::StrJoin(*names, ",");
  if (!out.spec.empty()) {
    absl::StatusOr<PassPipeline> pipeline = BuildPipeline(out.spec);
    if (!pipeline.ok()) return pipeline.status();
    out.pipeline = std::move(*pipeline);
  }

  PassContext& context = out.context;
  context.options = flag_options;
  context.options.verify_each = options.verify_each;
  context.options.pipeline_depth = options.pipeline_depth;
  context.options.dump_after = options.dump_after;
  context.options.dump_path = options.dump_path;
  if (!options.dump_after.empty() && options.dump_path.empty()) {
    context.options.dump_path = options.dump_after + ".hlo";
  }
  if (!options.memory_budget.empty()) {
    absl::StatusOr<int64_t> budget = ParseByteSize(options.memory_budget);
    if (!budget.ok()) return budget.status();
    context.options.memory_budget_bytes = *budget;
  }
  if (options.max_module_instructions > 0) {
    context.options.max_module_instructions = options.max_module_instructions;
  }
  // hloverlap's own options win over the XLA flags.
  if (options.in_flight_limit > 0) {
    context.options.collective_in_flight_limit = options.in_flight_limit;
  }
  context.options.gpu = options.gpu;
  if (!options.scheduler_memory_limit.empty()) {
    absl::StatusOr<int64_t> limit = ParseByteSize(
        options.scheduler_memory_limit, "--scheduler-memory-limit");
    if (!limit.ok()) return limit.status();
    context.options.scheduler_memory_limit_bytes = *limit;
  }
  if (absl::Status s = AddLoopRules(options.loop_rules, context.options);
      !s.ok()) {
    return s;
  }
  return out;
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
  absl::StatusOr<OptPipeline> built =
      BuildOptPipeline(options, flag_options, flags);
  if (!built.ok()) return ReportStatus(built.status());
  if (built->spec.empty() && options.passes.empty() && options.preset.empty()) {
    if (!options.loop_rules.empty()) {
      PrintError("warning: --loop given without --passes or --preset");
    }
    return kExitOk;
  }
  PassPipeline* pipeline = &built->pipeline;
  PassContext& context = built->context;

  // Passes rely on a module that verifies (they index tuples by
  // get-tuple-element indices, operands by shapes, ...): --no-verify skips
  // the check only for a plain round trip, so an invalid input is the
  // user's error, located, and never reaches a pass.
  if (!options.verify) {
    if (absl::Status st =
            VerifyWithLocations(module, loaded.text, loaded.filename);
        !st.ok()) {
      return ReportStatus(absl::InvalidArgumentError(absl::StrCat(
          st.message(), "\n", filename,
          ": the module does not verify; passes need a module that "
          "verifies (--no-verify skips the check only when no pass runs)")));
    }
  }

  // Selectors are checked, and the summary groups remarks, by the loops
  // the user sees: the input's.
  CheckLoopRulesMatch(module, context.options.loop_rules, context.remarks);
  const bool summary = !options.no_remarks_summary &&
                       (options.remarks_summary ||
                        (!options.remarks.empty() && options.remarks != "-"));
  std::vector<SummaryLoop> input_loops;
  if (summary) input_loops = SummaryLoops(module);
  const InputNames input_names(module);
  absl::StatusOr<bool> changed = pipeline->Run(module, context);
  MapRemarksToInput(input_names, context.remarks);
  // What did not happen as asked is on stderr whatever --remarks says.
  PrintRemarkWarnings(context.remarks);
  if (summary) {
    std::string text =
        RemarksSummary(context.remarks.remarks(), input_loops,
                       options.remarks == "-" ? "" : options.remarks);
    text.pop_back();  // PrintError ends the line
    PrintError(text);
  }
  if (options.time_passes) {
    double total = 0;
    for (const PassTiming& t : context.timings) total += t.seconds;
    std::string report = "pass timing (wall):\n";
    for (const PassTiming& t : context.timings) {
      absl::StrAppend(
          &report, absl::StrFormat("  %9.3f ms  %5.1f%%  %s\n", t.seconds * 1e3,
                                   total > 0 ? 100 * t.seconds / total : 0,
                                   AsAbsl(t.pass)));
    }
    absl::StrAppend(&report, absl::StrFormat("  %9.3f ms  total", total * 1e3));
    PrintError(report);
  }

  if (!options.remarks.empty()) {
    std::string text = options.remarks_format == "json"
                           ? context.remarks.ToJsonLines()
                           : context.remarks.ToText();
    if (options.remarks_format != "json" &&
        !context.remarks.remarks().empty()) {
      // One summary line after the remarks.
      absl::StrAppend(
          &text, "remarks: ", context.remarks.Count(RemarkKind::kPassed),
          " passed, ", context.remarks.Count(RemarkKind::kMissed), " missed, ",
          context.remarks.Count(RemarkKind::kFailure), " failures",
          context.remarks.Count(RemarkKind::kWarning) > 0
              ? absl::StrCat(", ", context.remarks.Count(RemarkKind::kWarning),
                             " warnings")
              : std::string(),
          "\n");
    }
    if (options.remarks == "-") {
      PrintError(text);
    } else if (absl::Status st = WriteOutputFile(options.remarks, text);
               !st.ok()) {
      return ReportStatus(st);
    }
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
  // XLA flags first: malformed flag text is a user error before any work.
  PassOptions flag_options;
  XlaFlagsResult flags;
  if (absl::Status s = ApplyXlaFlagsFromEnvAndCommandLine(
          options.xla_flags, options.use_xla_flags_env, flag_options, flags,
          XlaFlagsPrint::kAll);
      !s.ok()) {
    return ReportStatus(s);
  }

  LoadOptions load;
  load.verify = options.verify;
  absl::StatusOr<LoadedModule> loaded = LoadModule(options.input, load);
  if (!loaded.ok()) return ReportStatus(loaded.status());
  Module& module = *loaded->module;

  if (int code = ApplyPassPipeline(*loaded, options, flag_options, flags);
      code != kExitOk) {
    return code;
  }

  PrintOptions print;
  print.print_metadata = options.print_metadata;
  print.print_backend_config = options.print_backend_config;
  print.elide_constants_above = options.elide_constants_above;
  std::string text = PrintModule(module, print);
  return ReportStatus(WriteOutputFile(options.output, text));
}

void RegisterOptCommand(CLI::App& app, CommandContext& ctx) {
  auto options = std::make_shared<OptCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "opt",
      "Parse and verify an HLO module, run a pass pipeline on it, print it "
      "(current default XLA text style).");
  cmd->add_option("input", options->input,
                  "Input HLO text file ('-' for stdin; .gz is read "
                  "transparently)")
      ->required();
  cmd->add_option("-o,--output", options->output,
                  "Output file ('-' for stdout, the default)");
  cmd->add_flag("!--no-verify", options->verify,
                "Do not verify the input module (print it as it is; a pass "
                "pipeline still checks it first: passes need a module that "
                "verifies)");
  cmd->add_option("--passes", options->passes,
                  absl::StrCat("Comma-separated pass pipeline; passes: ",
                               absl::StrJoin(KnownPassNames(), ", ")));
  cmd->add_option("--preset", options->preset,
                  absl::StrCat("Named pass pipeline: ",
                               absl::StrJoin(KnownPresets(), ", ")));
  cmd->add_option("--loop", options->loop_rules,
                  absl::StrCat("Per-loop rule SELECTOR:POLICY:\n",
                               AsAbsl(LoopRuleHelp())))
      // One value per occurrence, so `--loop X IN.hlo` keeps IN.hlo.
      ->allow_extra_args(false);
  cmd->add_option("--remarks", options->remarks,
                  "Write optimization remarks to FILE ('-' = stderr)");
  cmd->add_flag("--remarks-summary", options->remarks_summary,
                "Print a per-loop summary of the remarks on stderr (what was "
                "pipelined, double-buffered, hidden, refused and why); on by "
                "default when --remarks names a file");
  cmd->add_flag("--no-remarks-summary", options->no_remarks_summary,
                "No summary on stderr");
  cmd->add_option("--remarks-format", options->remarks_format,
                  "Remarks as 'text' (default) or 'json' lines")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->add_flag("--verify-each", options->verify_each,
                "Verify the module after every pass");
  cmd->add_flag("--time-passes", options->time_passes,
                "Print each pass's wall time to stderr");
  cmd->add_option("--pipeline-depth", options->pipeline_depth,
                  "Default prefetch depth for all-gathers (iterations "
                  "ahead; at most a loop's trip count - 1, clamped with a "
                  "warning)")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--memory-budget", options->memory_budget,
                  "Extra live bytes the pipeliner may add per loop nest "
                  "(e.g. 512M, 2GiB)");
  cmd->add_option("--in-flight-limit", options->in_flight_limit,
                  "Scheduler: async collectives in flight at once (1 as "
                  "XLA:GPU; 2 lets two overlap)")
      ->check(CLI::Range(1, 8));
  cmd->add_option("--scheduler-memory-limit", options->scheduler_memory_limit,
                  "Scheduler: live-bytes limit per computation (e.g. 40G)");
  cmd->add_option("--gpu", options->gpu,
                  "Cost model device preset: h100, h200 (default)")
      ->check(CLI::IsMember({"h100", "h200"}));
  cmd->add_option(
         "--max-module-instructions", options->max_module_instructions,
         absl::StrCat(
             "Stop with an error before a rewrite would grow the module past "
             "N instructions (default: ",
             ModuleSizeGuard::kDefaultGrowth, " x the input's, at least ",
             ModuleSizeGuard::kDefaultMinimum, ")"))
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--dump-after", options->dump_after,
                  "Write the module after the named pass");
  cmd->add_option("--dump-path", options->dump_path,
                  "File for --dump-after (default PASS.hlo)");
  cmd->add_option("--xla-flags", options->xla_flags,
                  "XLA flags as given to JAX (e.g. \"--xla_gpu_enable_"
                  "pipelined_all_gather=true ...\"): flags of the pipeliner, "
                  "double buffering, async conversion and the scheduler map "
                  "to those passes (and, without --passes/--preset, choose "
                  "them); each flag's effect is printed; applied after the "
                  "XLA_FLAGS environment variable");
  cmd->add_flag("!--no-xla-flags-env", options->use_xla_flags_env,
                "Ignore the XLA_FLAGS environment variable");
  cmd->add_flag("!--no-metadata", options->print_metadata,
                "Leave metadata={...} out of the output");
  cmd->add_flag("!--no-backend-config", options->print_backend_config,
                "Leave backend_config out of the output");
  cmd->add_option("--elide-constants", options->elide_constants_above,
                  "Print constants with more than N elements as {...}");
  cmd->callback([&ctx, options]() {
    ctx.SetAction([options]() { return RunOptCommand(*options); });
  });
}

}  // namespace hloverlap
