// Analytical GPU cost model: per-op FLOPs and bytes, a roofline against
// device presets, and a collective time table interpolated in log-size.
//
// Used by the latency-hiding scheduler (through LatencyEstimator,
// analysis/latency_estimator.h) and by the simulator. Times are
// microseconds (double).
//
// Compute ops (one kernel each):
//
//   time = launch_overhead + max(flops / rate(dtype), bytes / hbm_bandwidth)
//
// * dot: 2 * |result| * prod(lhs contracting dims) FLOPs at the matmul rate
//   of the operand type (bf16/f16: matmul_flops; f8: 2x; f32: TF32 = 0.5x,
//   as XLA's default precision on GPU; f64 and integers: vector rate).
// * convolution: 2 * |result| * |kernel| / kernel_output_features.
// * cuBLAS / cuBLASLt GEMM custom-calls (`__cublas$gemm`,
//   `__cublas$lt$matmul*`): the dot dimension numbers of their
//   backend_config (`gemm_backend_config.dot_dimension_numbers`); the
//   workspace element of the result tuple is not counted.
// * fusion: FLOPs of its fused computation; bytes are the fusion's operands
//   and results, except that an operand read only through slice /
//   dynamic-slice / gather counts the bytes sliced, and a
//   dynamic-update-slice into a parameter (in place) counts only the update.
//   The same rules apply to unfused slices and updates.
// * elementwise ops: one FLOP per element (transcendentals too); reduce:
//   one per input element; everything else: bytes only.
// * no kernel, cost 0: parameter, constant, get-tuple-element, tuple,
//   bitcast, reshape (a bitcast under the default layouts), after-all,
//   add-dependency, opt-barrier, partition-id, replica-id, domain,
//   get-dimension-size, async -done halves.
// * while: trip count (while_loop_analysis.h: proven, else known_trip_count;
//   1 if unknown) times (condition + body); call: callee; conditional: the
//   most expensive branch. A computation costs the sum of its instructions
//   (serial compute stream, collectives synchronous, async collectives not
//   counted).
//
// Collectives: CollectiveTable, keyed by kind (all-reduce, all-gather,
// reduce-scatter), group size and buffer bytes ("full buffer": the
// all-reduce buffer, the all-gather output, the reduce-scatter input).
// Throughput (bytes / time) is interpolated linearly in log2(bytes) between
// rows, as XLA's CollectiveInterpolator does; below the smallest row the
// time is the smallest row's time (the latency floor), above the largest
// the largest row's throughput. A group size missing from the table is
// derived from the nearest one by the ring traffic factor ((n-1)/n for
// all-gather / reduce-scatter, 2(n-1)/n for all-reduce) applied to the time
// above the floor (the fastest row of that kind and group size). all-to-all and
// collective-broadcast use the all-gather rows; collective-permute (and send)
// uses all-gather with group size 2 and twice the bytes (each device receives
// the buffer once).
//
// The compiled-in table (gpu_collective_table.inc) is XLA's measured 8 x
// H100 NVLink table (reference/xla_lhs.md §5.3), used for H200 too, as XLA
// does. Its text format is one row per line, `kind group_size bytes
// time_us`, '#' comments; a calibration run can write a file in that
// format and load it with ParseCollectiveTable.
#ifndef HLOVERLAP_ANALYSIS_GPU_COST_MODEL_H_
#define HLOVERLAP_ANALYSIS_GPU_COST_MODEL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "hlo/buffer_semantics.h"
#include "hlo/module.h"

namespace hloverlap {

// Device constants (rates are achieved, not datasheet, where measured).
struct GpuSpec {
  std::string name;                 // "h200"
  double matmul_flops = 0;          // dense bf16 tensor-core FLOP/s
  double vector_flops = 0;          // CUDA-core f32 FLOP/s
  double hbm_bytes_per_second = 0;  // achieved copy bandwidth
  double kernel_launch_us = 0;      // fixed cost per kernel
  int64_t memory_bytes = 0;         // device memory
};

// H200 SXM: 790 TFLOP/s bf16 and 4.3 TB/s HBM measured on this project's
// machine (ANCHORS.md, DESIGN.md); 141 GB.
GpuSpec H200Spec();
// H100 SXM: same SMs and clocks as H200 (790 TFLOP/s achieved); HBM3
// 3.35 TB/s peak scaled by the H200's measured/peak ratio (~0.9) = 3.0 TB/s;
// 80 GB.
GpuSpec H100Spec();
// "h100" / "h200" (case-insensitive); nullopt otherwise.
std::optional<GpuSpec> GpuSpecByName(std::string_view name);
std::vector<std::string> KnownGpuNames();

enum class CollectiveTableKind { kAllReduce, kAllGather, kReduceScatter };
std::string_view CollectiveTableKindName(CollectiveTableKind kind);

class CollectiveTable {
 public:
  struct Row {
    CollectiveTableKind kind;
    int64_t group_size = 0;
    int64_t bytes = 0;
    double time_us = 0;
  };

  // The compiled-in table (gpu_collective_table.inc).
  static const CollectiveTable& Default();

  explicit CollectiveTable(std::vector<Row> rows);
  const std::vector<Row>& rows() const { return rows_; }

  // Time of one collective of `bytes` (full buffer) over `group_size`
  // devices. Group size <= 1: a local copy is free (0). nullopt only when
  // the table has no row for the kind.
  std::optional<double> TimeUs(CollectiveTableKind kind, int64_t bytes,
                               int64_t group_size) const;

  // The text form (ParseCollectiveTable reads it back).
  std::string ToText() const;

 private:
  std::vector<Row> rows_;  // sorted by kind, group size, bytes
};

// Parses `kind group_size bytes time_us` lines ('#' comments, blank lines).
// Errors name the line.
absl::StatusOr<CollectiveTable> ParseCollectiveTable(std::string_view text);

// FLOPs and bytes of one instruction and its time on the compute stream.
struct OpCost {
  double flops = 0;
  double bytes = 0;       // HBM bytes read + written
  double compute_us = 0;  // flops at their rates
  double memory_us = 0;   // bytes / hbm
  int64_t kernels = 0;    // kernel launches
  double time_us = 0;     // launch + max(compute, memory), or callee time
};

// A collective's kind, size and group, as the table needs them.
struct CollectiveInfo {
  Opcode opcode = Opcode::kAllGather;  // the synchronous collective opcode
  int64_t bytes = 0;                   // full buffer (see above)
  int64_t group_size = 1;
};

class GpuCostModel {
 public:
  explicit GpuCostModel(GpuSpec spec,
                        const CollectiveTable* table = nullptr /*default*/);

  const GpuSpec& spec() const { return spec_; }
  const CollectiveTable& table() const { return *table_; }

  // Cost of a compute instruction. Collectives (sync) cost their collective
  // time here too; async starts and dones cost 0 (see AsyncLatencyUs).
  OpCost Cost(const Instruction& instr) const;
  double TimeUs(const Instruction& instr) const { return Cost(instr).time_us; }

  // Sum of the instruction times of a computation (memoized).
  double ComputationTimeUs(const Computation& computation) const;

  // The collective an instruction performs: a sync collective, a native
  // -start (all-gather-start, all-reduce-start, collective-permute-start),
  // an async-start wrapping a collective, send; nullopt otherwise.
  static std::optional<CollectiveInfo> GetCollectiveInfo(
      const Instruction& instr);
  double CollectiveTimeUs(const CollectiveInfo& info) const;

  // Time between an async start and its done: the collective time, the
  // wrapped computation's time for async compute (async-start of a fusion
  // etc.), a copy for copy-start; 0 for anything else.
  double AsyncLatencyUs(const Instruction& start) const;

  // Matmul FLOP/s for an operand element type.
  double MatmulRate(PrimitiveType type) const;

 private:
  OpCost RawCost(const Instruction& instr) const;
  void AddFusedComputationFlops(const Computation& fused, OpCost& cost,
                                int depth) const;
  double Roofline(OpCost& cost) const;

  GpuSpec spec_;
  const CollectiveTable* table_;
  mutable absl::flat_hash_map<const Computation*, double> computation_time_;
};

// Dot FLOPs from an instruction's dimension numbers (dot) or a GEMM
// custom-call's backend_config; nullopt if not a dot or unreadable.
std::optional<double> DotFlops(const Instruction& instr);
// GEMM kernels and their workspace (IsGemmCustomCall, IsGemmKernel,
// IsKernelScratch): hlo/buffer_semantics.h.
// `value` reads a kernel's scratch: a get-tuple-element of it.
bool IsScratchValue(const Instruction& value);

}  // namespace hloverlap

#endif  // HLOVERLAP_ANALYSIS_GPU_COST_MODEL_H_
