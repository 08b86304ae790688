// The options that several `hloverlap` subcommands declare, each declared
// here once (its flag, help text and value check), so that the commands
// spell a shared option the same way:
//   input          the module to read (opt, explain, sim)
//   --no-verify    skip the input's verification (opt, explain, sim, run,
//                  verify)
//   --remarks=FILE and --remarks-format=text|json   (opt, explain)
//   --gpu          the simulator's device presets (sim; opt's and
//                  explain's cost model)
// and the conventions of declaring them: AddModuleCommand (a command that
// reads one module), AddBoolFlags (a table of plain flags), and the checks
// of numeric values (NonNegative, Positive, IntRange), whose errors are
// one short line ("--max-iterations: must be >= 0, got -3").
// A subcommand's own options stay in its <name>_command.cc.
#ifndef HLOVERLAP_TOOLS_COMMON_OPTIONS_H_
#define HLOVERLAP_TOOLS_COMMON_OPTIONS_H_

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>

#include "tools/cli_util.h"

namespace CLI {
class App;
class Option;
class Validator;
}  // namespace CLI

namespace hloverlap {

// The positional input of the commands that read one module (opt, explain,
// sim): a file, '-' for stdin, .gz read transparently (LoadModule).
CLI::Option* AddInputOption(CLI::App& cmd, std::string& input);

// `--no-verify`: clears `verify`. `help` says what the command still checks
// (opt: a pass pipeline verifies the module first).
CLI::Option* AddNoVerifyFlag(
    CLI::App& cmd, bool& verify,
    std::string_view help = "Do not verify the input module");

// A command that reads one module (explain, sim): AddCommand of `name`,
// whose Options (with `input` and `verify` members) the action `run` and
// the options' bindings share, with the input (required) and --no-verify
// declared. The command declares the rest on `cmd`:
//   auto [cmd, options] = AddModuleCommand(app, ctx, "sim", "Simulate ...",
//                                          RunSimCommand);
//   cmd->add_option("--gpu", options->gpu, ...);
// `options` lives as long as the app (the command's action owns it).
template <typename Options>
struct ModuleCommand {
  CLI::App* cmd;
  Options* options;
};
CLI::App* AddModuleCommand(CLI::App& app, CommandContext& ctx, std::string name,
                           std::string description, std::function<int()> action,
                           std::string& input, bool& verify);
template <typename Options>
ModuleCommand<Options> AddModuleCommand(CLI::App& app, CommandContext& ctx,
                                        std::string name,
                                        std::string description,
                                        int (*run)(const Options&)) {
  auto options = std::make_shared<Options>();
  CLI::App* cmd = AddModuleCommand(
      app, ctx, std::move(name), std::move(description),
      [options, run]() { return run(*options); }, options->input,
      options->verify);
  return {cmd, options.get()};
}

// A plain flag of a command's Options: its name as CLI11 spells it
// ("--time-passes" sets the member, "!--no-metadata" clears it), the
// member, the help.
template <typename Options>
struct BoolFlag {
  const char* name;
  bool Options::*member;
  const char* help;
};
// Declares `flags` on `cmd`, in order (the order of --help).
CLI::Option* AddBoolFlag(CLI::App& cmd, const char* name, bool& value,
                         const char* help);
template <typename Options>
void AddBoolFlags(CLI::App& cmd, Options& options,
                  std::initializer_list<BoolFlag<Options>> flags) {
  for (const BoolFlag<Options>& f : flags) {
    AddBoolFlag(cmd, f.name, options.*f.member, f.help);
  }
}

// `--remarks=FILE`: where the command writes its remarks; '-' and what it
// means for the command are in `help` (opt: stderr; explain: after the
// report). CheckOutputPath(file, "--remarks") checks it before any work.
CLI::Option* AddRemarksOption(CLI::App& cmd, std::string& file,
                              std::string_view help);

// `--remarks-format=text|json`: how --remarks writes the remarks
// (RemarksFileText).
CLI::Option* AddRemarksFormatOption(CLI::App& cmd, std::string& format);

// The simulator's device presets (analysis/gpu_cost_model.h,
// KnownGpuNames), `default_gpu` marked, for the --gpu flags' help: "h100,
// h200 (default)". A new preset appears in every --gpu's help and check.
std::string GpuPresetList(std::string_view default_gpu);

// Checks of a numeric option's value, for every command (not CLI11's
// NonNegativeNumber / PositiveNumber / Range, whose error spells out the
// largest double). The help shows them as CLI11's do ("INT:NONNEGATIVE",
// "INT:INT in [1 - 1048576]"); an error is one line naming the flag:
// "--max-iterations: must be >= 0, got -3". Values are converted as CLI11
// converts them.
CLI::Validator NonNegative();
CLI::Validator Positive();
CLI::Validator IntRange(int64_t min, int64_t max);

}  // namespace hloverlap

#endif  // HLOVERLAP_TOOLS_COMMON_OPTIONS_H_
