// The reference interpreter: runs a per-device (SPMD-partitioned) module on
// N simulated devices, one thread per device, with collectives implemented
// over replica groups (collectives.h). Results are bit-identical across
// runs, thread counts and machines of the same build: every kernel has a
// fixed operation order and devices only interact through collectives.
//
//   absl::StatusOr<std::unique_ptr<Interpreter>> interp =
//       Interpreter::Create(module, options);
//   std::vector<std::vector<Value>> args = ...;   // [device][parameter]
//   absl::StatusOr<std::vector<Value>> out = (*interp)->Run(args);
//
// Create() checks everything it can before running: every instruction of
// every computation reachable from the entry has a supported opcode and
// element types ("unsupported opcode 'fft' in instruction fft.1
// (computation main)"), constants are not elided `{...}` (unless
// fill_elided_constants), and the estimated memory fits the limit.
//
// Instructions run in the computation's post order (stored order, operands
// and control predecessors first). In a scheduled module (is_scheduled=true)
// the stored order of every non-fusion computation is the schedule and runs
// as is, with async semantics checked by Create(): an operand or control
// predecessor after its user, a -done before its -start, or a use of a
// -start's value (other than by its update/done) before the done is an
// InvalidArgument error ("invalid schedule of computation body: ...").
// Collectives exchange data when their -start runs. Values are freed after
// their last use;
// dynamic-update-slice writes in place when its operand dies there. See
// docs/INTERPRETER.md for the op semantics.
#ifndef HLOVERLAP_INTERP_EVALUATOR_H_
#define HLOVERLAP_INTERP_EVALUATOR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hlo/module.h"
#include "interp/collectives.h"
#include "interp/gemm.h"
#include "interp/value.h"

namespace hloverlap::interp {

struct InterpreterOptions {
  // 0: replica_count x num_partitions of the module. Otherwise see
  // ResolveTopology.
  int64_t num_devices = 0;
  // How many devices compute at the same time (0: all).
  int64_t max_parallel_devices = 0;
  // Fill elided constants `{...}` with deterministic values instead of
  // failing: element i of a constant is a function of (fill_seed, shape,
  // i) only, uniform in [-1, 1) for floats, [0, 4) for integers.
  bool fill_elided_constants = false;
  uint64_t fill_seed = 0;
  // Refuse to run when the estimated peak memory of all devices exceeds
  // this many bytes. 0: half the physical memory; negative: no limit.
  int64_t memory_limit_bytes = 0;
  // Work limits of one Run. max_iterations: while-loop iterations a device
  // may execute, all loops together (nested loops count every inner
  // iteration), so the work of a run is bounded by the module's size times
  // the limit. time_limit_seconds: wall time of the whole run. <= 0: no
  // limit. Reaching either stops every device (the others stop at their
  // next instruction or collective) and fails the run with
  // ResourceExhausted naming the loop (or instruction) that was running,
  // located at it (hlo/diagnostic.h).
  // Run custom calls the interpreter does not know (not a GEMM nor a
  // sharding annotation) as an uninterpreted function: their results are
  // drawn from the target's name and the bits of their operands (notes()
  // says so, once per target). Otherwise Create() refuses them.
  bool opaque_custom_calls = false;
  int64_t max_iterations = kDefaultMaxIterations;
  double time_limit_seconds = kDefaultTimeLimitSeconds;
  // An iteration of the smallest loop (a counter and one f32[4] op) costs
  // about 2.5 us of one core, so the default stops a runaway trip count
  // (2^31 - 1) after about 25 s per device; the corpus' loops run at most a
  // few thousand iterations. A reference run of more than 10 minutes is
  // almost always a mistake too.
  static constexpr int64_t kDefaultMaxIterations = 10'000'000;
  static constexpr double kDefaultTimeLimitSeconds = 600;
};

// Devices of a module: replica_count x num_partitions from its header; with
// num_devices > 0 and a different product, the partition count is scaled
// when num_devices is a multiple of replica_count (so `--devices=4` on a
// num_partitions=2 module runs 4 partitions), else the replica count when
// it is a multiple of num_partitions; otherwise an error.
absl::StatusOr<DeviceTopology> ResolveTopology(const Module& module,
                                               int64_t num_devices);

// Per-run statistics.
struct RunStats {
  int64_t instructions_executed = 0;  // all devices
  int64_t collectives_executed = 0;   // per device (device 0)
  int64_t while_iterations = 0;       // all devices
};

struct ComputationPlan;

class Interpreter {
 public:
  static absl::StatusOr<std::unique_ptr<Interpreter>> Create(
      const Module& module, const InterpreterOptions& options = {});
  ~Interpreter();
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  const Module& module() const { return module_; }
  const DeviceTopology& topology() const { return topology_; }
  int64_t num_devices() const { return topology_.num_devices(); }
  // What the user should know about this run, one line each: opaque
  // custom calls, a device count read from the module's collectives.
  const std::vector<std::string>& notes() const { return notes_; }
  // Shapes of the entry computation's parameters, by parameter number.
  std::vector<Shape> ParameterShapes() const;

  // Peak bytes of one device: its parameters plus the largest set of live
  // values while it runs (a walk over the post orders with values freed
  // after their last use; a call/while/conditional/reduce adds its callee's
  // peak). What a step allocates: the leaves hlo/buffer_semantics.h says it
  // defines (tuple, get-tuple-element, bitcast, reshape, -done halves and
  // an async start's operands share storage), plus the interpreter's own
  // rules (copies share storage; a while, an in-place fusion and a
  // dynamic-update-slice whose operand lives on are new storage).
  // Constants are counted once, not per device.
  int64_t EstimatePerDeviceBytes() const;
  int64_t EstimateConstantBytes() const;
  // All devices: num_devices x per-device + constants.
  int64_t EstimateTotalBytes() const;

  // Runs every device on args[device] (one Value per entry parameter) and
  // returns each device's result (the entry root value).
  absl::StatusOr<std::vector<Value>> Run(
      const std::vector<std::vector<Value>>& args,
      RunStats* stats = nullptr) const;

 private:
  friend class DeviceRunner;
  Interpreter(const Module& module, InterpreterOptions options);
  absl::Status Prepare();
  // Decodes a GEMM custom call into gemms_ (workspaces: one shared zero
  // value per workspace size).
  absl::Status PrepareGemm(const Instruction& instr,
                           absl::flat_hash_map<int64_t, Value>& workspaces);

  const Module& module_;
  InterpreterOptions options_;
  DeviceTopology topology_;
  absl::flat_hash_map<const Computation*, std::unique_ptr<ComputationPlan>>
      plans_;
  absl::flat_hash_map<const Instruction*, Value> constants_;
  // GEMM custom calls, decoded once; the workspace value is shared.
  struct PreparedGemm {
    GemmCall call;
    Value workspace;
  };
  absl::flat_hash_map<const Instruction*, PreparedGemm> gemms_;
  const ComputationPlan* entry_plan_ = nullptr;
  // Opaque custom calls: the hash of the target.
  absl::flat_hash_map<const Instruction*, uint64_t> opaque_;
  // send / recv / recv-done: channel and (for send, recv) pairs.
  struct PreparedP2P {
    int64_t channel = 0;
    std::vector<std::pair<int64_t, int64_t>> pairs;
  };
  absl::Status PrepareP2P(const Instruction& instr);
  absl::flat_hash_map<const Instruction*, PreparedP2P> p2p_;
  std::vector<std::string> notes_;
};

// The physical memory of this machine in bytes (0 if unknown).
int64_t PhysicalMemoryBytes();

// Convenience for tests: parses nothing, runs `module` on its devices with
// `args` (one vector per device, or a single vector used for every device).
absl::StatusOr<std::vector<Value>> RunModule(
    const Module& module, const std::vector<std::vector<Value>>& args,
    const InterpreterOptions& options = {});

}  // namespace hloverlap::interp

#endif  // HLOVERLAP_INTERP_EVALUATOR_H_
