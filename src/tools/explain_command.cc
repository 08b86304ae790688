// `hloverlap explain` (see explain_command.h).
#include "tools/explain_command.h"

#include <algorithm>
#include <memory>

#include "CLI/CLI.hpp"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "hlo/absl_compat.h"
#include "hlo/verifier.h"
#include "nlohmann/json.hpp"
#include "passes/loop_policy.h"
#include "passes/pass.h"
#include "passes/remark_summary.h"
#include "support/byte_size.h"
#include "tools/common_options.h"
#include "tools/opt_command.h"
#include "tools/xla_flags.h"

namespace hloverlap {
namespace {

std::string TripText(const std::optional<int64_t>& trip) {
  return trip ? absl::StrCat(*trip) : std::string("unknown");
}

std::string_view TripSourceName(LoopSummary::TripCountSource source) {
  switch (source) {
    case LoopSummary::TripCountSource::kBackendConfig:
      return "known_trip_count";
    case LoopSummary::TripCountSource::kInferred:
      return "inferred";
    case LoopSummary::TripCountSource::kUnknown:
      break;
  }
  return "unknown";
}

// "8 (known_trip_count)", "4 (inferred from induction variable #0: start 0,
// step 1, bound 4)", "unknown (reason)".
std::string LoopTripText(const LoopSummary& l) {
  switch (l.trip_count_source) {
    case LoopSummary::TripCountSource::kBackendConfig:
      return absl::StrCat(TripText(l.trip_count), " (known_trip_count)");
    case LoopSummary::TripCountSource::kInferred:
      if (l.iv_index && l.iv_start && l.iv_step && l.iv_bound) {
        return absl::StrCat(
            TripText(l.trip_count), " (inferred from induction variable #",
            *l.iv_index, ": start ", l.iv_start->ToString(), ", step ",
            l.iv_step->ToString(), ", bound ", l.iv_bound->ToString(), ")");
      }
      return absl::StrCat(TripText(l.trip_count), " (inferred)");
    case LoopSummary::TripCountSource::kUnknown:
      break;
  }
  if (l.unknown_reason.empty()) return "unknown";
  return absl::StrCat("unknown (", l.unknown_reason, ")");
}

// A counter value as a JSON number (u64 values above 2^63 stay positive).
nlohmann::json IntJson(const std::optional<IntValue>& v) {
  if (!v.has_value()) return nullptr;
  if (std::optional<int64_t> i = v->ToInt64()) return *i;
  return v->bits();
}

// "while.3 > while.1": the nesting path of a loop.
std::string LoopPath(const ModuleSummary& s, int loop) {
  std::vector<const std::string*> names;
  for (int l = loop; l >= 0; l = s.loops[l].parent) {
    names.push_back(&s.loops[l].name);
  }
  std::string out;
  for (auto it = names.rbegin(); it != names.rend(); ++it) {
    if (!out.empty()) out += " > ";
    out += **it;
  }
  return out;
}

void AppendLoopTree(const ModuleSummary& s, int loop, std::string& out) {
  const LoopSummary& l = s.loops[loop];
  out.append(2 + 2 * static_cast<size_t>(std::min(l.depth, 64)), ' ');
  absl::StrAppend(&out, l.name, " in ", l.computation, ": trip count ",
                  LoopTripText(l), ", body ", l.body, ", condition ",
                  l.condition);
  if (l.body_executions && l.depth > 0) {
    absl::StrAppend(&out, ", body runs ", *l.body_executions,
                    " times per execution");
  }
  if (!l.op_name.empty()) absl::StrAppend(&out, " [", l.op_name, "]");
  out.push_back('\n');
  if (!l.trip_count_warning.empty()) {
    out.append(4 + 2 * static_cast<size_t>(std::min(l.depth, 64)), ' ');
    absl::StrAppend(&out, "warning: KnownTripCountContradicted: ",
                    l.trip_count_warning, "\n");
  }
  for (int c : l.children) AppendLoopTree(s, c, out);
}

void AppendGroupLine(const CollectiveGroup& g, std::string& out) {
  absl::StrAppend(&out, "    ", absl::StrFormat("%-20s", g.kind), " count ",
                  g.count);
  if (g.async_count > 0) absl::StrAppend(&out, " (", g.async_count, " async)");
  absl::StrAppend(&out, ", bytes ", ExactAndHumanBytes(g.bytes));
  if (!g.groups.empty()) absl::StrAppend(&out, ", ", g.groups);
  out.push_back('\n');
}

}  // namespace

std::string FormatSummaryText(const ModuleSummary& s, bool all_computations) {
  std::string out;
  absl::StrAppend(&out, "module ", s.module_name, ": ", s.computations.size(),
                  " computations, ", s.instruction_count,
                  " instructions, entry ", s.entry,
                  ", replica_count=", s.replica_count,
                  ", num_partitions=", s.num_partitions,
                  s.is_scheduled ? ", scheduled" : "", "\n");

  // Computations.
  out += "\ncomputations:\n";
  size_t width = 0;
  for (const ComputationSummary& c : s.computations) {
    width = std::max(width, std::min<size_t>(c.name.size(), 60));
  }
  int64_t fused_count = 0, fused_instructions = 0;
  for (const ComputationSummary& c : s.computations) {
    if (!all_computations && c.role == "fused") {
      ++fused_count;
      fused_instructions += c.instruction_count;
      continue;
    }
    absl::StrAppend(
        &out, "  ", c.name,
        std::string(width > c.name.size() ? width - c.name.size() : 0, ' '),
        "  ", absl::StrFormat("%6d", c.instruction_count), " instructions  ",
        c.role, c.reachable || c.role == "entry" ? "" : " (unreachable)", "\n");
  }
  if (fused_count > 0) {
    absl::StrAppend(&out, "  (", fused_count, " fused computations, ",
                    fused_instructions,
                    " instructions; --all-computations lists them)\n");
  }

  // Loops.
  absl::StrAppend(&out, "\nwhile loops: ", s.loops.size(), ", max depth ",
                  s.max_loop_depth, "\n");
  for (size_t i = 0; i < s.loops.size(); ++i) {
    if (s.loops[i].parent < 0) AppendLoopTree(s, static_cast<int>(i), out);
  }

  // Collectives per place: first outside loops (by computation), then per
  // loop in tree order.
  absl::StrAppend(&out, "\ncollectives: ", s.collective_count, "\n");
  std::vector<std::string> places;
  for (const CollectiveGroup& g : s.groups) {
    if (g.loop >= 0) continue;
    if (std::find(places.begin(), places.end(), g.computation) ==
        places.end()) {
      places.push_back(g.computation);
    }
  }
  for (const std::string& comp : places) {
    absl::StrAppend(&out, "  outside loops, in ", comp, ":\n");
    for (const CollectiveGroup& g : s.groups) {
      if (g.loop < 0 && g.computation == comp) AppendGroupLine(g, out);
    }
  }
  // Tree order of loops.
  std::vector<int> order;
  std::vector<int> stack;
  for (int i = static_cast<int>(s.loops.size()) - 1; i >= 0; --i) {
    if (s.loops[i].parent < 0) stack.push_back(i);
  }
  while (!stack.empty()) {
    int l = stack.back();
    stack.pop_back();
    order.push_back(l);
    const auto& ch = s.loops[l].children;
    for (auto it = ch.rbegin(); it != ch.rend(); ++it) stack.push_back(*it);
  }
  for (int l : order) {
    bool any = false;
    for (const CollectiveGroup& g : s.groups) {
      if (g.loop != l) continue;
      if (!any) {
        absl::StrAppend(&out, "  in loop ", LoopPath(s, l), " (trip count ",
                        TripText(s.loops[l].trip_count), ", body ",
                        s.loops[l].body, "):\n");
        any = true;
      }
      AppendGroupLine(g, out);
    }
  }

  // Totals.
  out += "\ntotals:\n";
  for (const CollectiveKindTotal& t : s.kind_totals) {
    absl::StrAppend(&out, "  ", absl::StrFormat("%-20s", t.kind), " count ",
                    t.count, ", bytes ", ExactAndHumanBytes(t.bytes));
    if (t.bytes_per_execution) {
      absl::StrAppend(&out, ", per execution ",
                      ExactAndHumanBytes(*t.bytes_per_execution));
    }
    out.push_back('\n');
  }
  absl::StrAppend(&out, "  all collectives: ", s.collective_count, ", bytes ",
                  ExactAndHumanBytes(s.collective_bytes), ", per execution ",
                  s.collective_bytes_per_execution
                      ? ExactAndHumanBytes(*s.collective_bytes_per_execution)
                      : std::string("unknown (a loop trip count is unknown)"),
                  "\n");
  absl::StrAppend(&out, "  instructions: ", s.instruction_count, " (",
                  s.reachable_instruction_count, " reachable from the entry)",
                  "\n");
  if (s.truncated) {
    absl::StrAppend(&out, "  (loop tree truncated at ", kMaxLoopNodes,
                    " loops)\n");
  }
  return out;
}

std::string FormatSummaryJson(const ModuleSummary& s) {
  using nlohmann::json;
  auto opt = [](const std::optional<int64_t>& v) -> json {
    return v ? json(*v) : json(nullptr);
  };
  json j;
  j["module"] = s.module_name;
  j["entry"] = s.entry;
  j["replica_count"] = s.replica_count;
  j["num_partitions"] = s.num_partitions;
  j["is_scheduled"] = s.is_scheduled;
  j["instruction_count"] = s.instruction_count;
  j["reachable_instruction_count"] = s.reachable_instruction_count;
  j["computations"] = json::array();
  for (const ComputationSummary& c : s.computations) {
    j["computations"].push_back({{"name", c.name},
                                 {"instructions", c.instruction_count},
                                 {"role", c.role},
                                 {"reachable", c.reachable}});
  }
  j["loops"] = json::array();
  for (const LoopSummary& l : s.loops) {
    j["loops"].push_back({{"name", l.name},
                          {"computation", l.computation},
                          {"body", l.body},
                          {"condition", l.condition},
                          {"op_name", l.op_name},
                          {"trip_count", opt(l.trip_count)},
                          {"trip_count_source",
                           std::string(TripSourceName(l.trip_count_source))},
                          {"unknown_reason", l.unknown_reason},
                          {"iv_index", opt(l.iv_index)},
                          {"iv_start", IntJson(l.iv_start)},
                          {"iv_step", IntJson(l.iv_step)},
                          {"iv_bound", IntJson(l.iv_bound)},
                          {"parent", l.parent},
                          {"depth", l.depth},
                          {"children", l.children},
                          {"body_executions", opt(l.body_executions)}});
    if (!l.trip_count_warning.empty()) {
      j["loops"].back()["trip_count_warning"] = l.trip_count_warning;
    }
  }
  j["collectives"] = json::array();
  for (const CollectiveSummary& c : s.collectives) {
    j["collectives"].push_back({{"name", c.name},
                                {"kind", c.kind},
                                {"async", c.async},
                                {"computation", c.computation},
                                {"loop", c.loop},
                                {"bytes", c.bytes},
                                {"groups", c.groups},
                                {"executions", opt(c.executions)}});
  }
  j["groups"] = json::array();
  for (const CollectiveGroup& g : s.groups) {
    j["groups"].push_back(
        {{"loop", g.loop},
         {"computation", g.computation},
         {"kind", g.kind},
         {"groups", g.groups},
         {"count", g.count},
         {"async_count", g.async_count},
         {"bytes", g.bytes},
         {"bytes_per_execution", opt(g.bytes_per_execution)}});
  }
  j["totals"] = json::array();
  for (const CollectiveKindTotal& t : s.kind_totals) {
    j["totals"].push_back(
        {{"kind", t.kind},
         {"count", t.count},
         {"bytes", t.bytes},
         {"bytes_per_execution", opt(t.bytes_per_execution)}});
  }
  j["collective_count"] = s.collective_count;
  j["collective_bytes"] = s.collective_bytes;
  j["collective_bytes_per_execution"] = opt(s.collective_bytes_per_execution);
  j["max_loop_depth"] = s.max_loop_depth;
  j["truncated"] = s.truncated;
  // Replace invalid UTF-8 (names come from user text) instead of throwing.
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string FormatDecisionCounts(const std::vector<Remark>& remarks) {
  // Per pass in order of appearance, per kind, per name.
  struct KindCount {
    RemarkKind kind;
    int64_t count = 0;
    std::vector<std::pair<std::string, int64_t>> names;
  };
  std::vector<std::pair<std::string, std::vector<KindCount>>> passes;
  for (const Remark& r : remarks) {
    auto p = std::find_if(passes.begin(), passes.end(),
                          [&](const auto& x) { return x.first == r.pass; });
    if (p == passes.end()) {
      passes.push_back({r.pass, {}});
      p = passes.end() - 1;
    }
    auto k = std::find_if(p->second.begin(), p->second.end(),
                          [&](const KindCount& x) { return x.kind == r.kind; });
    if (k == p->second.end()) {
      p->second.push_back({r.kind, 0, {}});
      k = p->second.end() - 1;
    }
    ++k->count;
    const std::string name = r.name.empty() ? "(unnamed)" : r.name;
    auto n = std::find_if(k->names.begin(), k->names.end(),
                          [&](const auto& x) { return x.first == name; });
    if (n == k->names.end()) {
      k->names.push_back({name, 0});
      n = k->names.end() - 1;
    }
    ++n->second;
  }
  std::string out = "decisions per pass:\n";
  if (passes.empty()) out += "  none\n";
  for (const auto& [pass, kinds] : passes) {
    absl::StrAppend(&out, "  ", pass, ":");
    for (size_t i = 0; i < kinds.size(); ++i) {
      const KindCount& k = kinds[i];
      absl::StrAppend(&out, i ? ";" : "", " ", k.count, " ",
                      AsAbsl(RemarkKindName(k.kind)), " (");
      for (size_t j = 0; j < k.names.size(); ++j) {
        absl::StrAppend(&out, j ? ", " : "", k.names[j].first, " ",
                        k.names[j].second);
      }
      out += ")";
    }
    out += "\n";
  }
  return out;
}

namespace {

// A planned decision's prediction, from its metrics (planning.h's
// AddEstimateMetrics: the one place a remark carries its estimate).
struct PlanRow {
  const Remark* remark;
  double net_ms = 0, hidden_ms = 0, added_compute_ms = 0,
         added_communication_ms = 0;
  int64_t extra_live_bytes = 0;
};

std::vector<PlanRow> PlanRows(const std::vector<Remark>& remarks) {
  std::vector<PlanRow> rows;
  for (const Remark& r : remarks) {
    auto metric = [&](std::string_view key) -> std::optional<int64_t> {
      for (const auto& [k, v] : r.metrics) {
        if (k == key) return v;
      }
      return std::nullopt;
    };
    std::optional<int64_t> net_us = metric("net_us");
    if (!net_us.has_value()) continue;
    auto ms = [&](std::string_view key) {
      return static_cast<double>(metric(key).value_or(0)) / 1e3;
    };
    PlanRow row{&r};
    row.net_ms = static_cast<double>(*net_us) / 1e3;
    row.hidden_ms = ms("hidden_us");
    row.added_compute_ms = ms("added_compute_us");
    row.added_communication_ms = ms("added_communication_us");
    row.extra_live_bytes = metric("extra_live_bytes").value_or(0);
    rows.push_back(row);
  }
  return rows;
}

constexpr size_t kMaxPlanLines = 64;

// "predicted effect of each planned decision" lines. A decision about a
// copy a rewrite made of another loop's instruction (a peeled iteration of
// an inner loop, now in the outer loop's body) says so.
std::string FormatPlanRows(const std::vector<PlanRow>& rows,
                           const std::vector<SummaryLoop>& loops) {
  absl::flat_hash_map<std::string, const SummaryLoop*> home;
  for (const SummaryLoop& l : loops) {
    for (const std::string& name : l.instructions) home[name] = &l;
  }
  if (rows.empty()) return "";
  std::string out =
      "each planned decision's own estimate (cost model, per step; "
      "communication moved off the critical path, not a step change: the "
      "pipeline's step change is simulated below):\n";
  for (size_t i = 0; i < rows.size() && i < kMaxPlanLines; ++i) {
    const PlanRow& p = rows[i];
    const Remark& r = *p.remark;
    absl::StrAppend(&out, "  ", r.loop.empty() ? "(outside loops)" : r.loop,
                    ": ", r.pass, " ", AsAbsl(RemarkKindName(r.kind)), " ",
                    r.name.empty() ? "(unnamed)" : r.name);
    if (!r.instruction.empty() && r.opcode != "while") {
      absl::StrAppend(&out, " ", r.instruction);
      auto h = home.find(r.instruction);
      if (h != home.end() && h->second->path != r.loop) {
        absl::StrAppend(&out, " (a copy of ", h->second->name,
                        "'s, made when that loop was rewritten)");
      }
    }
    absl::StrAppend(
        &out, absl::StrFormat(": off the critical path %.3f ms (hidden %.3f "
                              "ms, added compute %.3f ms",
                              p.net_ms, p.hidden_ms, p.added_compute_ms));
    if (p.added_communication_ms != 0) {
      absl::StrAppend(&out, absl::StrFormat(", added communication %.3f ms",
                                            p.added_communication_ms));
    }
    absl::StrAppend(&out, "), memory +", ExactAndHumanBytes(p.extra_live_bytes),
                    "\n");
  }
  if (rows.size() > kMaxPlanLines) {
    absl::StrAppend(&out, "  ... and ", rows.size() - kMaxPlanLines,
                    " more (--json lists every one, \"plan\")\n");
  }
  return out;
}

nlohmann::json PlanJson(const std::vector<PlanRow>& rows) {
  nlohmann::json list = nlohmann::json::array();
  for (const PlanRow& p : rows) {
    const Remark& r = *p.remark;
    list.push_back({{"pass", r.pass},
                    {"kind", std::string(RemarkKindName(r.kind))},
                    {"name", r.name},
                    {"instruction", r.instruction},
                    {"loop", r.loop},
                    {"off_critical_path_ms", p.net_ms},
                    {"hidden_ms", p.hidden_ms},
                    {"added_compute_ms", p.added_compute_ms},
                    {"added_communication_ms", p.added_communication_ms},
                    {"extra_live_bytes", p.extra_live_bytes}});
  }
  return list;
}

// The simulator's prediction of the input and the output ("predicted_step"):
// the only figures explain calls a step change.
nlohmann::json StepChangeJson(const StepPrediction& input,
                              const StepPrediction& output) {
  auto side = [](const StepPrediction& p) {
    return nlohmann::json{
        {"step_ms", p.step_us / 1e3},
        {"exposed_communication_ms", p.exposed_communication_us / 1e3},
        {"peak_memory_bytes", p.peak_memory_bytes}};
  };
  return {{"input", side(input)},
          {"output", side(output)},
          {"step_change_ms", (output.step_us - input.step_us) / 1e3}};
}

// The remarks of `sink` as a JSON array of the objects of ToJsonLines.
nlohmann::json RemarksJson(const RemarkSink& sink) {
  nlohmann::json list = nlohmann::json::array();
  const std::string lines = sink.ToJsonLines();
  size_t start = 0;
  while (start < lines.size()) {
    size_t end = lines.find('\n', start);
    if (end == std::string::npos) end = lines.size();
    nlohmann::json r =
        nlohmann::json::parse(lines.substr(start, end - start), nullptr, false);
    if (!r.is_discarded()) list.push_back(std::move(r));
    start = end + 1;
  }
  return list;
}

// The pipeline's run: what it was, its remarks (input names).
struct PipelineRun {
  std::string how;  // "--preset=pipeline", "--passes=a,b"
  std::string spec;
  RemarkSink remarks;
  // The simulator's prediction of the input and of the pipeline's output.
  std::optional<StepPrediction> input_step;
  std::optional<StepPrediction> output_step;
  std::optional<int64_t> memory_budget;
};

// Runs on `module` (explain's own copy, never printed) the pipeline `opt`
// would run with the same flags (`checked`: with the XLA flags, applied
// before the module was read), built by the same function. Returns an exit
// code.
int RunOptPipeline(Module& module, const ExplainCommandOptions& options,
                   const CheckedOptFlags& checked, PipelineRun& run) {
  OptCommandOptions opt = options.opt;
  const XlaFlagsResult& flags = checked.xla_flags;
  // Without --passes/--preset the XLA flags choose, as for opt; with no
  // flags either, explain shows the pipeliner's preset.
  if (opt.passes.empty() && opt.preset.empty() &&
      PipelineFromXlaFlags(flags).empty()) {
    opt.preset = "pipeline";
  }
  absl::StatusOr<OptPipeline> built =
      BuildOptPipeline(opt, checked.flag_options, flags);
  if (!built.ok()) return ReportStatus(built.status());
  run.spec = built->spec;
  run.how = opt.preset.empty() ? absl::StrCat("--passes=", opt.passes)
                               : absl::StrCat("--preset=", opt.preset);
  if (opt.preset.empty() && opt.passes.empty()) run.how = "(XLA flags)";
  built->predict_steps = true;
  absl::StatusOr<bool> changed = RunPipelineOnInput(*built, module);
  run.remarks = std::move(built->context.remarks);
  run.input_step = built->input_step;
  run.output_step = built->output_step;
  run.memory_budget = built->context.options.memory_budget_bytes;
  if (!changed.ok()) return ReportStatus(changed.status());
  return kExitOk;
}

}  // namespace

int RunExplainCommand(const ExplainCommandOptions& options) {
  // Every flag value, output path and XLA flag before any work, as opt
  // does, with or without a pipeline to run (without one, nothing of the
  // XLA flags is printed).
  absl::StatusOr<CheckedOptFlags> checked =
      CheckOptFlags(options.opt, options.pipeline ? XlaFlagsPrint::kWarnings
                                                  : XlaFlagsPrint::kNothing);
  if (!checked.ok()) return ReportStatus(checked.status());
  if (absl::Status s = CheckOutputPath(options.remarks, "--remarks"); !s.ok()) {
    return ReportStatus(s);
  }
  LoadOptions load;
  load.verify = options.verify;
  absl::StatusOr<LoadedModule> loaded = LoadModule(options.input, load);
  if (!loaded.ok()) return ReportStatus(loaded.status());
  ModuleSummary summary = SummarizeModule(*loaded->module);
  const std::vector<SummaryLoop> input_loops = SummaryLoops(*loaded->module);
  PipelineRun run;
  bool pipeline = options.pipeline;
  if (pipeline && !options.verify && !VerifyModule(*loaded->module).ok()) {
    // Passes only run on valid modules.
    PrintError("note: the module does not verify; no pass pipeline run");
    pipeline = false;
  }
  if (pipeline) {
    if (int code = RunOptPipeline(*loaded->module, options, *checked, run);
        code != kExitOk) {
      return code;
    }
  }
  std::string list;
  if (pipeline && !options.remarks.empty()) {
    absl::StatusOr<std::string> written =
        WriteRemarks(run.remarks, options.remarks, options.remarks_format);
    if (!written.ok()) return ReportStatus(written.status());
    // --remarks=-: after the text report; the JSON report has them
    // ("remarks").
    if (options.remarks == "-" && !options.json) {
      list = absl::StrCat("\nall remarks:\n", *written);
    }
  }
  std::string text;
  if (options.json) {
    nlohmann::json j =
        nlohmann::json::parse(FormatSummaryJson(summary), nullptr, false);
    if (pipeline && !j.is_discarded()) {
      j["pipeline"] = run.spec;
      nlohmann::json all = RemarksJson(run.remarks);
      nlohmann::json pipelining = nlohmann::json::array();
      for (const nlohmann::json& r : all) {
        if (r.value("pass", "") == "collective-pipeliner") {
          pipelining.push_back(r);
        }
      }
      j["pipelining"] = std::move(pipelining);
      j["remarks"] = std::move(all);
      j["plan"] = PlanJson(PlanRows(run.remarks.remarks()));
      if (run.input_step.has_value() && run.output_step.has_value()) {
        j["predicted_step"] = StepChangeJson(*run.input_step, *run.output_step);
      }
    }
    text =
        j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  } else {
    text = FormatSummaryText(summary, options.all_computations);
    if (pipeline) {
      // The decisions first, after the module's first line.
      const std::string remarks_file =
          options.remarks.empty() || options.remarks == "-" ? ""
                                                            : options.remarks;
      std::string decisions = absl::StrCat(
          "\ndecisions of `hloverlap opt ", run.how, "` (",
          run.spec.empty() ? "no passes" : run.spec,
          "), run on a copy of the module:\n",
          RemarksSummary(run.remarks.remarks(), input_loops, remarks_file),
          FormatDecisionCounts(run.remarks.remarks()));
      if (options.remarks.empty()) {
        decisions +=
            "(every remark, with its reason and suggestion: --remarks=FILE, "
            "or --remarks=- here)\n";
      }
      const size_t first_line = text.find('\n');
      text.insert(
          first_line == std::string::npos ? text.size() : first_line + 1,
          decisions);
      // The predictions, one line per planned decision, after the module.
      const std::string plan =
          FormatPlanRows(PlanRows(run.remarks.remarks()), input_loops);
      if (!plan.empty()) absl::StrAppend(&text, "\n", plan);
      if (run.input_step.has_value() && run.output_step.has_value()) {
        absl::StrAppend(&text, "\nthe pipeline's step change, ",
                        StepComparisonText(*run.input_step, *run.output_step,
                                           run.memory_budget));
      }
    }
  }
  return ReportStatus(WriteOutputFile("-", text + list));
}

void RegisterExplainCommand(CLI::App& app, CommandContext& ctx) {
  using Options = ExplainCommandOptions;
  auto [cmd, options] = AddModuleCommand(
      app, ctx, "explain",
      "Summarize a module: computations, the while-loop nesting tree with "
      "trip counts, the collectives of every loop (kind, count, bytes, "
      "replica groups), and what `opt` would do with each (the same "
      "pipeline run on a copy, per loop and per pass, with the reasons).",
      RunExplainCommand);
  AddBoolFlags(*cmd, *options,
               {{"--json", &Options::json, "Print the summary as JSON"},
                {"--all-computations", &Options::all_computations,
                 "List fused computations too"},
                {"!--no-pipeline", &Options::pipeline,
                 "Leave out the pass pipeline's run and its decisions"}});
  AddRemarksOption(*cmd, options->remarks,
                   "Write every remark to FILE ('-': after the report)");
  AddRemarksFormatOption(*cmd, options->remarks_format);
  OptCommandOptions& opt = options->opt;
  cmd->add_option("--preset", opt.preset,
                  absl::StrCat("The pipeline to explain, as for opt (default: "
                               "pipeline); one of ",
                               absl::StrJoin(KnownPresets(), ", ")));
  cmd->add_option("--passes", opt.passes,
                  "The pipeline to explain as pass names, as for opt");
  cmd->add_option(
         "--loop", opt.loop_rules,
         absl::StrCat("Per-loop rule, as for opt:\n", AsAbsl(LoopRuleHelp())))
      // One value per occurrence, as for opt: `--loop X IN.hlo` keeps IN.hlo.
      ->allow_extra_args(false);
  ctx.AddRegistrationError(AddPassOptionFlags(*cmd, opt));
}

}  // namespace hloverlap
