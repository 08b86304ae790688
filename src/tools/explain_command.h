// `hloverlap explain IN.hlo`: what is in a module, for someone about to
// pipeline its collectives.
//
// Prints (text, or JSON with --json) the module's computations with their
// instruction counts and roles, the while-loop nesting tree with trip counts
// (analysis/while_loop_analysis.h: proven, else backend_config
// known_trip_count, else "unknown"; a contradicted known_trip_count is a
// warning line / "trip_count_warning"), the collectives of
// each loop / computation by kind with count, result bytes and replica
// groups, and totals. The data comes from analysis/module_summary.h.
//
// Then a dry run of the collective pipeliner (after the cleanup passes of
// `--preset=pipeline`, the module itself is not changed or printed): per
// loop, every candidate collective with what the pipeliner would do
// (prefetch / delay) or why it would leave it, the source location, bytes
// moved and extra live bytes, and a count of passed / missed remarks.
#ifndef HLOVERLAP_TOOLS_EXPLAIN_COMMAND_H_
#define HLOVERLAP_TOOLS_EXPLAIN_COMMAND_H_

#include <string>
#include <vector>

#include "analysis/module_summary.h"
#include "passes/remarks.h"
#include "tools/cli_util.h"

namespace hloverlap {

struct ExplainCommandOptions {
  std::string input;
  bool verify = true;             // --no-verify
  bool json = false;              // --json
  bool all_computations = false;  // --all-computations: list fused ones too
  // The pipeliner's dry run (what `opt --preset=pipeline` would do per loop
  // and per collective, with the remarks); --no-pipeline leaves it out.
  bool pipeline = true;
  std::vector<std::string> loop_rules;  // --loop=SELECTOR:POLICY
  std::string memory_budget;            // --memory-budget
  std::string xla_flags;                // --xla-flags (and XLA_FLAGS)
};

void RegisterExplainCommand(CLI::App& app, CommandContext& ctx);

// Runs `explain` and returns the exit code.
int RunExplainCommand(const ExplainCommandOptions& options);

// The report as text / as JSON (exposed for tests).
std::string FormatSummaryText(const ModuleSummary& summary,
                              bool all_computations);
std::string FormatSummaryJson(const ModuleSummary& summary);
// The dry-run section from the pipeliner's remarks.
std::string FormatPipelineRemarksText(const std::vector<Remark>& remarks);

}  // namespace hloverlap

#endif  // HLOVERLAP_TOOLS_EXPLAIN_COMMAND_H_
