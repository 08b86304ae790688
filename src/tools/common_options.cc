// The options several subcommands declare (see common_options.h).
#include "tools/common_options.h"

#include "CLI/CLI.hpp"

namespace hloverlap {

CLI::Option* AddInputOption(CLI::App& cmd, std::string& input) {
  return cmd.add_option("input", input,
                        "Input HLO text file ('-' for stdin; .gz is read "
                        "transparently)");
}

CLI::Option* AddNoVerifyFlag(CLI::App& cmd, bool& verify,
                             std::string_view help) {
  return cmd.add_flag("!--no-verify", verify, std::string(help));
}

CLI::Option* AddRemarksFormatOption(CLI::App& cmd, std::string& format) {
  return cmd
      .add_option("--remarks-format", format,
                  "Remarks as 'text' (default) or 'json' lines")
      ->check(CLI::IsMember({"text", "json"}));
}

}  // namespace hloverlap
