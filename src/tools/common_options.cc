// The options several subcommands declare (see common_options.h).
#include "tools/common_options.h"

#include <cmath>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "analysis/gpu_cost_model.h"

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

std::string GpuPresetList(std::string_view default_gpu) {
  std::string list;
  for (const std::string& name : KnownGpuNames()) {
    absl::StrAppend(&list, list.empty() ? "" : ", ", name,
                    name == default_gpu ? " (default)" : "");
  }
  return list;
}

namespace {

// A number `at_least` or more (`strict`: more than `at_least`), as CLI11
// converts it (so the forms CLI11 accepts stay accepted).
CLI::Validator NumberAtLeast(double at_least, bool strict,
                             std::string description) {
  const std::string bound =
      absl::StrCat(strict ? "> " : ">= ", static_cast<int64_t>(at_least));
  return CLI::Validator(
      [at_least, strict, bound](std::string& input) -> std::string {
        double value = 0;
        if (!CLI::detail::lexical_cast(input, value) || std::isnan(value) ||
            std::isinf(value)) {
          return absl::StrCat("must be a number ", bound, ", got '", input,
                              "'");
        }
        if (value < at_least || (strict && value == at_least)) {
          return absl::StrCat("must be ", bound, ", got ", input);
        }
        return "";
      },
      std::move(description));
}

}  // namespace

CLI::Validator NonNegative() {
  return NumberAtLeast(0, /*strict=*/false, "NONNEGATIVE");
}

CLI::Validator Positive() {
  return NumberAtLeast(0, /*strict=*/true, "POSITIVE");
}

CLI::Validator IntRange(int64_t min, int64_t max) {
  return CLI::Validator(
      [min, max](std::string& input) -> std::string {
        int64_t value = 0;
        if (!CLI::detail::lexical_cast(input, value)) {
          return absl::StrCat("must be an integer from ", min, " to ", max,
                              ", got '", input, "'");
        }
        if (value < min || value > max) {
          return absl::StrCat("must be from ", min, " to ", max, ", got ",
                              input);
        }
        return "";
      },
      absl::StrCat("INT in [", min, " - ", max, "]"));
}

}  // namespace hloverlap
