// What an instruction's result is made of: for each array leaf of its
// result shape, whether the instruction writes a new buffer there, hands
// on a buffer one of its operands holds (an alias: no new memory, no
// copy), uses kernel scratch, or receives the buffer from outside the
// computation (a parameter). These are facts of HLO alone, before any
// schedule: the rules of XLA's dataflow analysis under GPU buffer
// assignment with the default layouts. analysis/buffer_analysis.h builds
// buffers, live ranges and peaks over a sequence on them; the interpreter
// reads them for its memory estimate.
//
// Leaves are numbered depth-first over the result shape (a non-tuple shape
// is one leaf, a tuple's leaves are its elements' leaves in order):
//
//   %t = (f32[8], (s32[], f32[4])) tuple(%a, %u)
//        leaf 0 aliases %a leaf 0; leaves 1, 2 alias %u leaves 0, 1
//   %g = (s32[], f32[4]) get-tuple-element(%t), index=1
//        leaves 0, 1 alias %t leaves 1, 2
//   %s = ((f32[8]), f32[16]) all-gather-start(%x)
//        leaf 0 aliases %x (kept live until the done), leaf 1 defined
//   %d = f32[16] all-gather-done(%s)        leaf 0 aliases %s leaf 1
//   %w = (s32[], f32[8]) while(%init)       every leaf aliases %init's
//   %u = f32[8,4] dynamic-update-slice(%b, %v, %i, %j)   aliases %b (in place)
//   %p = f32[8] parameter(0)                outside (the caller's buffer)
//   %m = (bf16[64,64], s8[4096]) custom-call(%x, %y),
//        custom_call_target="__cublas$lt$matmul"
//        leaf 0 defined, leaf 1 scratch (the GEMM's workspace)
//
// Aliases:
//   get-tuple-element, tuple, bitcast, reshape (a bitcast under the
//   default layouts), copy of a tuple (shallow), opt-barrier, add-dependency,
//   domain, while (loop state updated in place), dynamic-update-slice (its
//   operand 0, in place), async-update and -done halves (the start's output
//   element), element 0 of an async start (its operands, live until the done;
//   for copy-start leaf 1 is the source and leaf 0 the copy, as in XLA), an
//   async-start whose wrapped fusion updates a parameter in place (its
//   output element aliases that operand), a fusion whose root (or root
//   tuple element) is a dynamic-update-slice or scatter into a parameter,
//   and output_to_operand_aliasing on fusions and custom-calls.
// Scratch: a GEMM kernel's workspace (a cuBLAS custom-call, or a fusion
//   around one: result element >= 1, rank-1 s8 or u8): live only while the
//   kernel runs, never read, no HBM traffic beyond the kernel.
// Outside: parameters.
// Everything else defines its leaves, constants included (XLA's alias
// analysis gives them buffers). Tokens and other non-array leaves have
// size 0. An alias that names an operand leaf the operand does not have
// (only in malformed IR) defines the leaf instead.
#ifndef HLOVERLAP_HLO_BUFFER_SEMANTICS_H_
#define HLOVERLAP_HLO_BUFFER_SEMANTICS_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "hlo/instruction.h"
#include "hlo/shape.h"

namespace hloverlap {

// Array leaves of `shape`, depth-first (a non-tuple shape is one leaf).
int64_t LeafCount(const Shape& shape);
// Bytes of each leaf (0 for tokens and other non-array leaves), appended.
void AppendLeafBytes(const Shape& shape, std::vector<int64_t>& out);
// Bytes of all array leaves of `shape` (Shape::ByteSize, saturating).
int64_t ArrayBytes(const Shape& shape);

enum class LeafKind : uint8_t {
  kDefines,  // a new buffer, written by this instruction
  kAliases,  // the buffer operand `operand` holds at leaf `operand_leaf`
  kScratch,  // a new buffer used only while this instruction runs
  kOutside,  // a parameter: the caller's buffer (entry: a program input)
};

struct LeafSource {
  LeafKind kind = LeafKind::kDefines;
  int64_t operand = -1;       // kAliases only
  int64_t operand_leaf = -1;  // kAliases only
  // kAliases: the instruction writes into the operand's buffer (while,
  // dynamic-update-slice, in-place fusions, async and custom-call outputs)
  // rather than handing it on unchanged; the operand's value must die here
  // (XLA's copy insertion copies it first otherwise).
  bool in_place = false;
};

// One entry per leaf of instr.shape() (see the header comment).
std::vector<LeafSource> ResultLeafSources(const Instruction& instr);

// Bytes of the leaves `instr` defines (kDefines), plus its scratch leaves
// when `with_scratch`.
int64_t DefinedBytes(const Instruction& instr, bool with_scratch = false);

// GEMMs and their workspace: the one rule every layer reads (buffers,
// cost model, simulator, interpreter).
//
// The cuBLAS GEMM custom-call targets XLA:GPU emits, exactly:
// `__cublas$gemm`, `__cublas$lt$matmul` and `__cublas$lt$matmul$f8` (the
// interpreter refuses the last: no f8 types). Any other target, other
// `__cublas$...` variants included, is an opaque custom call everywhere,
// so nothing runs or prices an unknown variant as a plain GEMM.
bool IsCublasGemmTarget(std::string_view target);
// A custom-call to one of those targets.
bool IsGemmCustomCall(const Instruction& instr);
// A GEMM custom-call, or a fusion around one (XLA's dynamic-slice /
// address-computation GEMM fusions, `kind=kCustom`).
bool IsGemmKernel(const Instruction& instr);
// Element `index` of a GEMM kernel's result tuple is its cuBLAS workspace:
// an index >= 1, a rank-1 s8 or u8 array, not aliased to an operand by
// output_to_operand_aliasing. Scratch of that kernel only, even where XLA
// threads it through fusion roots and loop states (nothing reads it).
//
//   %g = (bf16[4096,8192], s8[33554432]) custom-call(...),
//        custom_call_target="__cublas$lt$matmul"      // element 1: scratch
bool IsKernelScratch(const Instruction& kernel, int64_t index);

}  // namespace hloverlap

#endif  // HLOVERLAP_HLO_BUFFER_SEMANTICS_H_
