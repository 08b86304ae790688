// `hloverlap run` and `hloverlap verify`: the reference interpreter on the
// command line (docs/INTERPRETER.md).
//
//   hloverlap run M.hlo [--devices=N] [--seed=S] [--inputs=FILE]
//       Runs M on N simulated devices with seeded random inputs (or inputs
//       from a JSON file) and prints, per device and output, the shape, an
//       FNV-1a checksum of the bytes and the first values.
//   hloverlap verify A.hlo B.hlo [--devices=N] [--seed=S] [--tolerance=T]
//       Runs both on the same inputs and reports whether every output is
//       bit-identical, or the first differing output, index and values.
//       Exit 0 identical (or within --tolerance), 1 different, 2 error.
#ifndef HLOVERLAP_TOOLS_RUN_COMMAND_H_
#define HLOVERLAP_TOOLS_RUN_COMMAND_H_

#include <cstdint>
#include <string>

#include "interp/evaluator.h"
#include "tools/cli_util.h"

namespace hloverlap {

struct InterpCommandOptions {
  int64_t devices = 0;       // --devices (0: from the module)
  uint64_t seed = 0;         // --seed
  double input_scale = 1;    // --input-scale: random floats in [-X, X)
  std::string inputs;        // --inputs=FILE (JSON)
  std::string memory_limit;  // --memory-limit (bytes, K/M/G suffix)
  int64_t threads = 0;       // --threads: devices computing at once
  // --max-iterations (while-loop iterations per device, all loops) and
  // --time-limit (seconds per module run); 0: none.
  int64_t max_iterations = interp::InterpreterOptions::kDefaultMaxIterations;
  double time_limit = interp::InterpreterOptions::kDefaultTimeLimitSeconds;
  bool fill_elided_constants = false;
  bool opaque_custom_calls = false;
  bool same_inputs = false;  // --same-inputs: one input for all devices
  bool verify = true;        // --no-verify
  int64_t print_values = 4;  // --values: values printed per output
};

struct RunCommandOptions {
  std::string input;
  InterpCommandOptions interp;
};

struct VerifyCommandOptions {
  std::string a;
  std::string b;
  std::string tolerance;  // --tolerance=ulps:N|relative:X
  InterpCommandOptions interp;
};

// Registers both `run` and `verify`.
void RegisterRunCommand(CLI::App& app, CommandContext& ctx);

int RunRunCommand(const RunCommandOptions& options);
int RunVerifyCommand(const VerifyCommandOptions& options);

// --memory-limit: "8G", "512M", "1048576" (support/byte_size.h) -> bytes,
// more than 0; "unlimited" or "none" -> -1; empty -> 0 (the interpreter's
// default, half the physical memory).
absl::StatusOr<int64_t> ParseMemoryLimit(const std::string& text);

}  // namespace hloverlap

#endif  // HLOVERLAP_TOOLS_RUN_COMMAND_H_
