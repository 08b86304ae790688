// The options that several `hloverlap` subcommands declare, each declared
// here once (its flag, help text and value check), so that the commands
// spell a shared option the same way:
//   input          the module to read (opt, explain, sim)
//   --no-verify    skip the input's verification (opt, explain, sim, run,
//                  verify)
//   --remarks-format=text|json   (opt, explain)
// A subcommand's own options stay in its <name>_command.cc.
#ifndef HLOVERLAP_TOOLS_COMMON_OPTIONS_H_
#define HLOVERLAP_TOOLS_COMMON_OPTIONS_H_

#include <string>
#include <string_view>

namespace CLI {
class App;
class Option;
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

// `--remarks-format=text|json`: how --remarks writes the remarks
// (RemarksFileText).
CLI::Option* AddRemarksFormatOption(CLI::App& cmd, std::string& format);

}  // namespace hloverlap

#endif  // HLOVERLAP_TOOLS_COMMON_OPTIONS_H_
