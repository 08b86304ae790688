// `hloverlap opt IN.hlo [-o OUT.hlo]`: parse, verify, transform, print.
//
// Today it reads a module (file, `-` for stdin, `.hlo.gz`), verifies it and
// prints it in the current default XLA style. The pass pipeline
// (`--passes=...` / `--preset=...`) plugs into ApplyPassPipeline in
// opt_command.cc.
#ifndef HLOVERLAP_TOOLS_OPT_COMMAND_H_
#define HLOVERLAP_TOOLS_OPT_COMMAND_H_

#include <string>

#include "tools/cli_util.h"

namespace hloverlap {

struct OptCommandOptions {
  std::string input;
  std::string output = "-";
  bool verify = true;                // --no-verify turns off input verification
  std::string passes;                // --passes=a,b,c (empty: none)
  std::string preset;                // --preset=NAME
  bool print_metadata = true;        // --no-metadata
  bool print_backend_config = true;  // --no-backend-config
  int64_t elide_constants_above = -1;  // --elide-constants=N
};

void RegisterOptCommand(CLI::App& app, CommandContext& ctx);

// Runs `opt` and returns the exit code.
int RunOptCommand(const OptCommandOptions& options);

}  // namespace hloverlap

#endif  // HLOVERLAP_TOOLS_OPT_COMMAND_H_
