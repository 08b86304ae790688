// The flags opt and explain take from the passes' declared options
// (AddDeclaredOptionFlag): each one resolves, each flag a pass declares is
// a flag of both commands, and one that does not resolve is an internal
// error of the command's registration, reported before any parsing.
#include "tools/opt_command.h"

#include <memory>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "passes/pass_registry.h"
#include "tools/cli_util.h"
#include "tools/explain_command.h"

namespace hloverlap {
namespace {

using ::testing::HasSubstr;

TEST(PassOptionFlags, EveryFlagOptAndExplainAskForResolves) {
  for (auto reg : {RegisterOptCommand, RegisterExplainCommand}) {
    std::unique_ptr<CLI::App> app = MakeApp();
    CommandContext ctx;
    reg(*app, ctx);
    EXPECT_TRUE(ctx.registration_error().ok())
        << ctx.registration_error().message();
  }
}

TEST(PassOptionFlags, EveryFlagAPassDeclaresIsAFlagOfOptAndExplain) {
  std::unique_ptr<CLI::App> app = MakeApp();
  CommandContext ctx;
  RegisterOptCommand(*app, ctx);
  RegisterExplainCommand(*app, ctx);
  int declared = 0;
  for (const PassInfo& pass : GlobalPassRegistry().passes()) {
    for (const PassOptionInfo& option : pass.options) {
      if (option.flag.empty()) continue;
      ++declared;
      for (const char* command : {"opt", "explain"}) {
        EXPECT_NE(
            app->get_subcommand(command)->get_option_no_throw(option.flag),
            nullptr)
            << command << " has no " << option.flag << " (option "
            << option.name << " of pass " << pass.name << ")";
      }
    }
  }
  EXPECT_GE(declared, 3);  // --pipeline-depth, --in-flight-limit, --gpu
}

TEST(PassOptionFlags, AnOptionThePassDoesNotDeclareIsAnInternalError) {
  CLI::App cmd("", "opt");
  const size_t before = cmd.get_options().size();
  std::string value;
  absl::Status s = AddDeclaredOptionFlag(cmd, "collective-pipeliner",
                                         "prefetch-depth", value, "help");
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("opt: no flag for option 'prefetch-depth' of pass "
                        "'collective-pipeliner': the pass declares no such "
                        "option"));
  EXPECT_EQ(cmd.get_options().size(), before);
  // A pass that does not exist; an option without a flag.
  EXPECT_EQ(
      AddDeclaredOptionFlag(cmd, "no-such-pass", "depth", value, "h").code(),
      absl::StatusCode::kInternal);
}

TEST(PassOptionFlags, ARegistrationErrorStopsTheCommandBeforeParsing) {
  std::unique_ptr<CLI::App> app = MakeApp();
  CommandContext ctx;
  bool ran = false;
  AddCommand(*app, ctx, "opt", "", [&ran] {
    ran = true;
    return kExitOk;
  });
  ctx.AddRegistrationError(absl::OkStatus());
  ctx.AddRegistrationError(absl::InternalError("opt: no flag for option x"));
  ctx.AddRegistrationError(absl::InternalError("a later one"));
  std::vector<std::string> args = {"hloverlap", "opt"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  testing::internal::CaptureStderr();
  const int code =
      RunApp(*app, ctx, static_cast<int>(argv.size()), argv.data());
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, kExitInternalError);
  EXPECT_FALSE(ran);
  EXPECT_EQ(err, "hloverlap: internal error: opt: no flag for option x\n");
}

}  // namespace
}  // namespace hloverlap
