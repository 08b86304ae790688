// `hloverlap opt` (see opt_command.h).
#include "tools/opt_command.h"

#include <memory>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "hlo/printer.h"

namespace hloverlap {
namespace {

// The pass pipeline hook: runs `--passes` / `--preset` on the module. No
// passes exist yet, so any requested pipeline is a user error.
absl::Status ApplyPassPipeline(Module& module,
                               const OptCommandOptions& options) {
  if (!options.passes.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--passes: unknown pass pipeline '", options.passes,
                     "' (no passes are available in this build)"));
  }
  if (!options.preset.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--preset: unknown preset '", options.preset, "'"));
  }
  return absl::OkStatus();
}

}  // namespace

int RunOptCommand(const OptCommandOptions& options) {
  LoadOptions load;
  load.verify = options.verify;
  absl::StatusOr<LoadedModule> loaded = LoadModule(options.input, load);
  if (!loaded.ok()) return ReportStatus(loaded.status());
  Module& module = *loaded->module;

  if (absl::Status st = ApplyPassPipeline(module, options); !st.ok()) {
    return ReportStatus(st);
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
                "Do not verify the input module");
  cmd->add_option("--passes", options->passes,
                  "Comma-separated pass pipeline (none available yet)");
  cmd->add_option("--preset", options->preset,
                  "Named pass pipeline (none available yet)");
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
