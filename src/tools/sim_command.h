// `hloverlap sim IN.hlo`: simulates a scheduled module on a model GPU
// (sim/simulator.h) and prints the predicted step time, compute /
// communication / exposed-communication totals, the collectives by exposed
// time (with source locations and loop path) and the liveness peak memory.
//
//   --gpu=h100|h200          device preset (default h200; the list is
//                            KnownGpuNames, analysis/gpu_cost_model.h)
//   --gpu-spec=FILE          `key value` lines overriding the preset
//                            (matmul_flops, vector_flops,
//                            hbm_bytes_per_second, kernel_launch_us,
//                            memory_bytes)
//   --collective-table=FILE  collective time table (`kind group bytes us`)
//   --devices=N              devices of "all devices" collectives
//   --trace=FILE             Chrome-trace JSON (Perfetto, chrome://tracing)
//   --format=text|json       report format (json: `step_time_ms`, ...)
//   --memory-report=FILE     XLA's memory_usage_report.txt to compare the
//                            peak with (default: the one next to IN.hlo)
//   --top=N                  collectives listed in text (default 20, 0 all)
//   --timing                 parse and simulation times on stderr
#ifndef HLOVERLAP_TOOLS_SIM_COMMAND_H_
#define HLOVERLAP_TOOLS_SIM_COMMAND_H_

#include <cstdint>
#include <string>

#include "tools/cli_util.h"

namespace hloverlap {

struct SimCommandOptions {
  std::string input;
  bool verify = true;
  std::string gpu = "h200";
  std::string gpu_spec;
  std::string collective_table;
  int64_t devices = 0;
  std::string trace;
  std::string format = "text";
  std::string memory_report;
  int top = 20;
  bool timing = false;
};

void RegisterSimCommand(CLI::App& app, CommandContext& ctx);

// Runs `sim` and returns the exit code.
int RunSimCommand(const SimCommandOptions& options);

}  // namespace hloverlap

#endif  // HLOVERLAP_TOOLS_SIM_COMMAND_H_
