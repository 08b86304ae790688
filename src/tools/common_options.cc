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

CLI::App* AddModuleCommand(CLI::App& app, CommandContext& ctx, std::string name,
                           std::string description, std::function<int()> action,
                           std::string& input, bool& verify) {
  CLI::App* cmd = AddCommand(app, ctx, std::move(name), std::move(description),
                             std::move(action));
  AddInputOption(*cmd, input)->required();
  AddNoVerifyFlag(*cmd, verify);
  return cmd;
}

CLI::Option* AddBoolFlag(CLI::App& cmd, const char* name, bool& value,
                         const char* help) {
  return cmd.add_flag(name, value, help);
}

CLI::Option* AddRemarksOption(CLI::App& cmd, std::string& file,
                              std::string_view help) {
  return cmd.add_option("--remarks", file, std::string(help));
}

CLI::Option* AddRemarksFormatOption(CLI::App& cmd, std::string& format) {
  return cmd
      .add_option("--remarks-format", format,
                  "Remarks as 'text' (default) or 'json' lines")
      ->check(CLI::IsMember({"text", "json"}));
}

}  // namespace hloverlap
