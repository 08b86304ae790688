// `hloverlap explain IN.hlo`: what is in a module, and what `opt` would do
// with it and why.
//
// Prints (text, or JSON with --json) the module's computations with their
// instruction counts and roles, the while-loop nesting tree with trip counts
// (analysis/while_loop_analysis.h: proven, else backend_config
// known_trip_count, else "unknown"; a contradicted known_trip_count is a
// warning line / "trip_count_warning"), the collectives of
// each loop / computation by kind with count, result bytes and replica
// groups, and totals. The data comes from analysis/module_summary.h.
//
// Then the decisions: the pipeline `opt` would run for the same flags
// (--preset, default `pipeline`; --passes; the XLA flags; --loop,
// --memory-budget, ...), built by the same function (BuildOptPipeline) and
// run on explain's own copy of the module, which is not printed. Every flag,
// the XLA flags included, is checked before the module is read, as opt
// does (with --no-pipeline too). Its counts
// are opt's by construction (tests/tools/explain_counts_match_opt.py checks
// every corpus module). The text shows first, after the module line, the
// per-loop summary of the remarks (remark_summary.h, input names) and the
// counts per pass, kind and remark name; `--remarks=FILE` writes every
// remark (`-`: after the report). JSON adds "pipeline" (the pass names),
// "remarks" (every remark, as opt's --remarks-format=json objects) and keeps
// "pipelining" (the collective pipeliner's remarks, as before). Each planned
// decision's prediction (the cost oracle's gain, communication hidden,
// compute and communication added, extra live bytes; planning.h) ends
// the text ("predicted effect of each planned decision") and
// is "plan" in JSON (predicted_gain_ms, hidden_ms, added_compute_ms,
// added_communication_ms, extra_live_bytes per decision).
#ifndef HLOVERLAP_TOOLS_EXPLAIN_COMMAND_H_
#define HLOVERLAP_TOOLS_EXPLAIN_COMMAND_H_

#include <string>
#include <vector>

#include "analysis/module_summary.h"
#include "passes/remarks.h"
#include "tools/cli_util.h"
#include "tools/opt_command.h"

namespace hloverlap {

struct ExplainCommandOptions {
  std::string input;
  bool verify = true;             // --no-verify
  bool json = false;              // --json
  bool all_computations = false;  // --all-computations: list fused ones too
  // The pipeline's run (--no-pipeline leaves it out).
  bool pipeline = true;
  std::string remarks;                  // --remarks=FILE|-
  std::string remarks_format = "text";  // --remarks-format=text|json
  // The pipeline and its options, as for opt (input, output and printing
  // fields are not used).
  OptCommandOptions opt;
};

void RegisterExplainCommand(CLI::App& app, CommandContext& ctx);

// Runs `explain` and returns the exit code.
int RunExplainCommand(const ExplainCommandOptions& options);

// The report as text / as JSON (exposed for tests).
std::string FormatSummaryText(const ModuleSummary& summary,
                              bool all_computations);
std::string FormatSummaryJson(const ModuleSummary& summary);
// "decisions per pass:" lines: per pass, kind and remark name, the counts.
std::string FormatDecisionCounts(const std::vector<Remark>& remarks);

}  // namespace hloverlap

#endif  // HLOVERLAP_TOOLS_EXPLAIN_COMMAND_H_
