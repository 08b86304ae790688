// The `hloverlap` command line: one subcommand per src/tools/*_command.h.
//
// To add a command, write Register<Name>Command(CLI::App&, CommandContext&)
// in its own *_command.{h,cc} and add one Register line below. cli_util.h
// describes the exit codes (0 ok, 1 different/failed check, 2 user error,
// 3 internal error).
#include <cstring>
#include <memory>

#include "CLI/CLI.hpp"
#include "tools/cli_util.h"
#include "tools/explain_command.h"
#include "tools/malloc_tuning.h"
#include "tools/opt_command.h"
#include "tools/phase_report.h"
#include "tools/run_command.h"
#include "tools/sim_command.h"

namespace {

using RegisterFn = void (*)(CLI::App&, hloverlap::CommandContext&);

// The functions that register the subcommands, with the names each defines.
struct CommandEntry {
  const char* names[2];  // the second may be null
  RegisterFn register_command;
};
constexpr CommandEntry kCommands[] = {
    {{"opt"}, hloverlap::RegisterOptCommand},
    {{"explain"}, hloverlap::RegisterExplainCommand},
    {{"run", "verify"}, hloverlap::RegisterRunCommand},
    {{"sim"}, hloverlap::RegisterSimCommand},
};

// Registers the subcommand argv[1] names, or every subcommand when it names
// none (help, --version, a typo: those list or check them all). Building one
// command's options instead of all of them is a tenth of a millisecond of
// every cold command (docs/BENCHMARKS.md, "Cold opt").
void RegisterCommands(CLI::App& app, hloverlap::CommandContext& ctx, int argc,
                      char** argv) {
  if (argc > 1 && argv[1] != nullptr) {
    for (const CommandEntry& c : kCommands) {
      for (const char* name : c.names) {
        if (name != nullptr && std::strcmp(argv[1], name) == 0) {
          c.register_command(app, ctx);
          return;
        }
      }
    }
  }
  for (const CommandEntry& c : kCommands) c.register_command(app, ctx);
}

}  // namespace

int main(int argc, char** argv) {
  hloverlap::StartPhaseReport();
  hloverlap::TuneMallocForCompilerWorkload();
  std::unique_ptr<CLI::App> app = hloverlap::MakeApp();
  hloverlap::CommandContext ctx;
  RegisterCommands(*app, ctx, argc, argv);
  const int code = hloverlap::RunApp(*app, ctx, argc, argv);
  hloverlap::FinishPhaseReport();
  return code;
}
