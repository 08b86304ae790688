// The `hloverlap` command line: one subcommand per src/tools/*_command.h.
//
// To add a command, write Register<Name>Command(CLI::App&, CommandContext&)
// in its own *_command.{h,cc} and add one Register line below. cli_util.h
// describes the exit codes (0 ok, 1 different/failed check, 2 user error,
// 3 internal error).
#include <memory>

#include "CLI/CLI.hpp"
#include "tools/cli_util.h"
#include "tools/explain_command.h"
#include "tools/malloc_tuning.h"
#include "tools/opt_command.h"
#include "tools/phase_report.h"
#include "tools/run_command.h"
#include "tools/sim_command.h"

int main(int argc, char** argv) {
  hloverlap::StartPhaseReport();
  hloverlap::TuneMallocForCompilerWorkload();
  std::unique_ptr<CLI::App> app = hloverlap::MakeApp();
  hloverlap::CommandContext ctx;
  hloverlap::RegisterOptCommand(*app, ctx);
  hloverlap::RegisterExplainCommand(*app, ctx);
  hloverlap::RegisterRunCommand(*app, ctx);  // run, verify
  hloverlap::RegisterSimCommand(*app, ctx);
  const int code = hloverlap::RunApp(*app, ctx, argc, argv);
  hloverlap::FinishPhaseReport();
  return code;
}
