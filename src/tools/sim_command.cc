// `hloverlap sim` (see sim_command.h).
#include "tools/sim_command.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/gpu_cost_model.h"
#include "sim/simulator.h"
#include "tools/common_options.h"

namespace hloverlap {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string SiblingReport(const std::string& input) {
  if (input == "-") return "";
  size_t slash = input.rfind('/');
  std::string dir = slash == std::string::npos ? "." : input.substr(0, slash);
  std::string path = dir + "/memory_usage_report.txt";
  std::ifstream probe(path);
  return probe ? path : "";
}

}  // namespace

int RunSimCommand(const SimCommandOptions& o) {
  using Clock = std::chrono::steady_clock;
  SimOptions sim;
  std::optional<GpuSpec> spec = GpuSpecByName(o.gpu);
  if (!spec.has_value()) {
    PrintError(absl::StrCat("unknown --gpu '", o.gpu, "'"));
    return kExitUserError;
  }
  sim.spec = *spec;
  // Output paths before any work.
  if (absl::Status s = CheckOutputPath(o.trace, "--trace"); !s.ok()) {
    return ReportStatus(s);
  }
  if (!o.gpu_spec.empty()) {
    absl::StatusOr<std::string> text = ReadFile(o.gpu_spec);
    if (!text.ok()) return ReportStatus(text.status());
    // The GPU constants and the simulator's factors (the preset's keys).
    absl::Status s = ApplySimOverrides(sim, *text);
    if (!s.ok()) {
      return ReportStatus(absl::InvalidArgumentError(
          absl::StrCat(o.gpu_spec, ": ", s.message())));
    }
  }
  std::optional<CollectiveTable> table;
  if (!o.collective_table.empty()) {
    absl::StatusOr<std::string> text = ReadFile(o.collective_table);
    if (!text.ok()) return ReportStatus(text.status());
    absl::StatusOr<CollectiveTable> t = ParseCollectiveTable(*text);
    if (!t.ok()) {
      return ReportStatus(absl::InvalidArgumentError(
          absl::StrCat(o.collective_table, ": ", t.status().message())));
    }
    table = *std::move(t);
    sim.table = &*table;
  }
  sim.devices = o.devices;
  sim.record_trace = !o.trace.empty();

  Clock::time_point t0 = Clock::now();
  LoadOptions load;
  load.verify = o.verify;
  absl::StatusOr<LoadedModule> loaded = LoadModule(o.input, load);
  if (!loaded.ok()) return ReportStatus(loaded.status());
  Clock::time_point t1 = Clock::now();
  absl::StatusOr<SimResult> result = Simulate(*loaded->module, sim);
  if (!result.ok()) {
    return ReportStatus(absl::InvalidArgumentError(
        absl::StrCat(loaded->filename, ": ", result.status().message())));
  }
  Clock::time_point t2 = Clock::now();
  if (o.timing) {
    std::fprintf(stderr, "parse+verify: %.1f ms, simulation: %.1f ms\n",
                 std::chrono::duration<double, std::milli>(t1 - t0).count(),
                 std::chrono::duration<double, std::milli>(t2 - t1).count());
  }
  if (!loaded->module->is_scheduled()) {
    std::fprintf(stderr,
                 "warning: %s is not marked is_scheduled=true; simulating "
                 "the instruction order as written\n",
                 loaded->filename.c_str());
  }

  // XLA's memory report, when there is one.
  std::string report_path =
      o.memory_report.empty() ? SiblingReport(o.input) : o.memory_report;
  int64_t xla_total = -1;
  if (!report_path.empty()) {
    absl::StatusOr<std::string> text = ReadFile(report_path);
    if (!text.ok()) return ReportStatus(text.status());
    xla_total = ParseMemoryReportTotalBytes(*text);
  }

  if (!o.trace.empty()) {
    absl::Status st = WriteOutputFile(o.trace, ChromeTraceJson(*result));
    if (!st.ok()) return ReportStatus(st);
  }
  result->xla_memory_report_bytes = xla_total;
  std::string out = o.format == "json" ? FormatSimJson(*result)
                                       : FormatSimText(*result, o.top);
  return ReportStatus(WriteOutputFile("-", out));
}

void RegisterSimCommand(CLI::App& app, CommandContext& ctx) {
  auto [cmd, options] = AddModuleCommand(
      app, ctx, "sim",
      "Simulate a scheduled module on a model GPU: step time, compute, "
      "communication and exposed communication, collectives by exposed "
      "time, peak memory; optionally a Chrome trace.",
      RunSimCommand);
  cmd->add_option("--gpu", options->gpu,
                  absl::StrCat("Device preset: ", GpuPresetList(options->gpu)))
      ->check(CLI::IsMember(KnownGpuNames()));
  cmd->add_option("--gpu-spec", options->gpu_spec,
                  "File of 'key value' lines overriding the preset "
                  "(matmul_flops, vector_flops, hbm_bytes_per_second, "
                  "kernel_launch_us, memory_bytes)");
  cmd->add_option("--collective-table", options->collective_table,
                  "Collective time table file ('kind group_size bytes "
                  "time_us' lines) replacing the compiled-in one");
  cmd->add_option("--devices", options->devices,
                  "Devices in collectives over all devices (default: the "
                  "module's num_partitions x replica_count)")
      ->check(IntRange(1, int64_t{1} << 20));
  cmd->add_option("--trace", options->trace,
                  "Write a Chrome-trace JSON (Perfetto, chrome://tracing)");
  cmd->add_option("--format", options->format, "Report: text (default), json")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("--memory-report", options->memory_report,
                  "XLA memory_usage_report.txt to compare the peak with "
                  "(default: the one next to the input, if any)");
  cmd->add_option("--top", options->top,
                  "Collectives listed in the text report (0 = all)")
      ->check(IntRange(0, 1 << 20));
  cmd->add_flag("--timing", options->timing,
                "Print parse and simulation times to stderr");
}

}  // namespace hloverlap
