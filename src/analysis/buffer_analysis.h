// Buffers, aliases and liveness: the one answer to "which values share
// storage, how big is it, and how much is live at once" for the
// latency-hiding scheduler's memory tracking, the simulator's peak memory
// and every pass's extra-live-bytes estimate.
//
// BufferAnalysis (no schedule needed) gives every array leaf an
// instruction defines a buffer, and every leaf of every value the buffer
// it holds, from hlo/buffer_semantics.h (tuple, get-tuple-element,
// bitcast, reshape, while, in-place dynamic-update-slice, async start/done
// pairs and in-place fusions alias; parameters come from outside; GEMM
// workspaces are scratch):
//
//   %p = (f32[1M], f32[1M]) parameter(0)   buffers P0, P1 (outside)
//   %a = f32[1M] get-tuple-element(%p), index=0        holds P0
//   %b = f32[1M] exponential(%a)                       defines B
//   %t = (f32[1M], f32[1M]) tuple(%b, %a)              holds B, P0
//
// PeakOverSequence then walks one computation in a given order: a buffer
// is live from its definition to the last use of any value holding it; a
// root's buffers live to the end; an elementwise op or fusion writes over
// an operand buffer of its size that dies there (XLA's buffer sharing);
// a scratch buffer lives only at its definition; called computations add
// their own peak (without their parameters) at the call point, a while
// body's outputs taking over the loop state's buffers. ModulePeakMemory
// does this from the entry with each computation's instruction order as
// its schedule; entry parameters are live throughout:
//
//   %a = f32[1M] parameter(0)          live: a                    4 MB
//   %b = f32[1M] exponential(%a)       live: a, b                 8 MB
//   %c = f32[1M] negate(%b)            c takes b's buffer         8 MB
//   peak 8 MB at b
#ifndef HLOVERLAP_ANALYSIS_BUFFER_ANALYSIS_H_
#define HLOVERLAP_ANALYSIS_BUFFER_ANALYSIS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "hlo/buffer_semantics.h"
#include "hlo/computation.h"
#include "hlo/module.h"

namespace hloverlap {

struct Buffer {
  const Instruction* defining = nullptr;
  int64_t leaf = 0;  // leaf of the defining instruction's result
  int64_t bytes = 0;
  LeafKind kind = LeafKind::kDefines;  // kDefines, kScratch or kOutside
};

class BufferAnalysis {
 public:
  // Buffers of `computation`'s instructions (called computations are not
  // entered: their values are theirs).
  explicit BufferAnalysis(const Computation& computation);

  const std::vector<Buffer>& buffers() const { return buffers_; }
  // The buffer each leaf of `instr`'s value holds (-1: a non-array leaf,
  // or `instr` is not in the computation).
  absl::Span<const int32_t> LeafBuffers(const Instruction* instr) const;
  // The distinct buffers `instr`'s value holds, ascending.
  std::vector<int32_t> BuffersHeld(const Instruction* instr) const;
  // Bytes of the buffers `instr` defines, of the given kind.
  int64_t DefinedBytes(const Instruction* instr,
                       LeafKind kind = LeafKind::kDefines) const;

 private:
  std::vector<Buffer> buffers_;
  absl::flat_hash_map<const Instruction*, std::vector<int32_t>> leaves_;
};

struct MemoryPeak {
  int64_t bytes = 0;
  std::string at;  // "instruction (computation)" where the peak is reached
  int64_t parameter_bytes = 0;  // entry parameters (included in bytes)
};

// Peak memory of `module` from its entry (see the header comment).
MemoryPeak ModulePeakMemory(const Module& module);

// Peak of `computation` run in the order `sequence` (its instructions),
// with called computations in their instruction order. `is_entry`: its
// parameters are live throughout and counted; otherwise they are the
// caller's. `is_loop_body`: its outputs take over the loop state's
// buffers (counted by the caller).
MemoryPeak PeakOverSequence(const Computation& computation,
                            absl::Span<const Instruction* const> sequence,
                            bool is_entry, bool is_loop_body);

}  // namespace hloverlap

#endif  // HLOVERLAP_ANALYSIS_BUFFER_ANALYSIS_H_
