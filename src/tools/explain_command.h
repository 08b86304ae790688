// `hloverlap explain IN.hlo`: what is in a module, for someone about to
// pipeline its collectives.
//
// Prints (text, or JSON with --json) the module's computations with their
// instruction counts and roles, the while-loop nesting tree with trip counts
// (from backend_config known_trip_count, else "unknown"), the collectives of
// each loop / computation by kind with count, result bytes and replica
// groups, and totals. The data comes from analysis/module_summary.h.
#ifndef HLOVERLAP_TOOLS_EXPLAIN_COMMAND_H_
#define HLOVERLAP_TOOLS_EXPLAIN_COMMAND_H_

#include <string>

#include "analysis/module_summary.h"
#include "tools/cli_util.h"

namespace hloverlap {

struct ExplainCommandOptions {
  std::string input;
  bool verify = true;             // --no-verify
  bool json = false;              // --json
  bool all_computations = false;  // --all-computations: list fused ones too
};

void RegisterExplainCommand(CLI::App& app, CommandContext& ctx);

// Runs `explain` and returns the exit code.
int RunExplainCommand(const ExplainCommandOptions& options);

// The report as text / as JSON (exposed for tests).
std::string FormatSummaryText(const ModuleSummary& summary,
                              bool all_computations);
std::string FormatSummaryJson(const ModuleSummary& summary);

}  // namespace hloverlap

#endif  // HLOVERLAP_TOOLS_EXPLAIN_COMMAND_H_
