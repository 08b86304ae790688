// Shape rules of HLO instructions, reusable by the verifier and by passes.
//
// Each Infer* function takes operand shapes and attributes and returns the
// result shape an instruction with those operands and attributes must have,
// or InvalidArgument with a precise message saying what is wrong and what was
// found, e.g.
//
//   slice dimension 1: limit 9 is out of range for operand f32[4,8]
//   dot: lhs contracting dimension 1 (size 4) does not match rhs contracting
//       dimension 0 (size 5) (lhs f32[8,4], rhs f32[5,16])
//
// Messages never name an instruction; callers prefix them with context.
//
// Inferred shapes carry no layout, except where the result is a copy of an
// operand or callee shape (tuple, get-tuple-element, while, call,
// conditional, async-done), where the layout of that shape is kept.
//
// Opcodes whose result dimensions are not a function of the operands
// (broadcast, reshape, iota) take the result dimensions as an argument and
// check them against the operands.
//
// The functions never crash: any combination of shapes and attribute values
// (negative dimensions, out-of-range indices, overflowing sizes) gives either
// a shape or an error.
#ifndef HLOVERLAP_HLO_SHAPE_INFERENCE_H_
#define HLOVERLAP_HLO_SHAPE_INFERENCE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/attributes.h"
#include "hlo/opcode.h"
#include "hlo/shape.h"

namespace hloverlap {

class Computation;
class Instruction;

// Signature of a computation: parameter shapes (by number) and root shape.
struct ProgramShape {
  std::vector<Shape> parameters;
  Shape result;
  // "(f32[], f32[]) -> f32[]" (no layouts).
  std::string ToString() const;
};

// The program shape of `computation`; an error if a parameter number is
// missing or the computation has no root.
absl::StatusOr<ProgramShape> GetProgramShape(const Computation& computation);

// --- Elementwise ----------------------------------------------------------

// Unary elementwise ops (IsElementwiseUnary) other than convert and
// bitcast-convert: same dimensions; the element type is kept except for
// real/imag/abs of complex values (component type) and is-finite (pred).
absl::StatusOr<Shape> InferUnaryElementwiseShape(Opcode opcode,
                                                 const Shape& operand);
// Binary elementwise ops (IsElementwiseBinary): both operands have the same
// dimensions and element type; compare gives pred, complex gives the complex
// type of its float operands. For stochastic-convert (whose result type is
// chosen by the instruction) only the dimensions are meaningful.
absl::StatusOr<Shape> InferBinaryElementwiseShape(Opcode opcode,
                                                  const Shape& lhs,
                                                  const Shape& rhs);
// compare: same dimensions and types, result pred.
absl::StatusOr<Shape> InferCompareShape(const Shape& lhs, const Shape& rhs);
// select(pred, on_true, on_false): pred has the dimensions of on_true (or is
// a scalar), on_true and on_false have the same shape.
absl::StatusOr<Shape> InferSelectShape(const Shape& pred, const Shape& on_true,
                                       const Shape& on_false);
// clamp(min, operand, max): min and max are scalars or have the operand's
// shape, all of the same element type.
absl::StatusOr<Shape> InferClampShape(const Shape& min, const Shape& operand,
                                      const Shape& max);
// convert: changes the element type only.
absl::StatusOr<Shape> InferConvertShape(const Shape& operand,
                                        PrimitiveType new_type);
// bitcast-convert: same dimensions for equal bit widths; a wider input gets
// a trailing dimension of size in_bits / out_bits; a narrower input loses its
// trailing dimension, which must be out_bits / in_bits.
absl::StatusOr<Shape> InferBitcastConvertShape(const Shape& operand,
                                               PrimitiveType new_type);

// --- Data movement ----------------------------------------------------------

// broadcast: `dimensions[i]` is the result dimension operand dimension i maps
// to; the sizes must agree. Returns operand's element type with result_dims.
absl::StatusOr<Shape> InferBroadcastShape(const Shape& operand,
                                          absl::Span<const int64_t> result_dims,
                                          absl::Span<const int64_t> dimensions);
// reshape: element counts must be equal.
absl::StatusOr<Shape> InferReshapeShape(const Shape& operand,
                                        absl::Span<const int64_t> result_dims);
// transpose: result dimension i is operand dimension permutation[i].
absl::StatusOr<Shape> InferTransposeShape(
    const Shape& operand, absl::Span<const int64_t> permutation);
// reverse: dimensions in range and distinct; result = operand.
absl::StatusOr<Shape> InferReverseShape(const Shape& operand,
                                        absl::Span<const int64_t> dimensions);
// slice: 0 <= start <= limit <= dim, stride >= 1, result dimension
// ceil((limit - start) / stride).
absl::StatusOr<Shape> InferSliceShape(const Shape& operand,
                                      absl::Span<const SliceRange> ranges);
// dynamic-slice: one scalar integer index per dimension or one rank-1
// integer index vector; 0 <= size <= operand dimension.
absl::StatusOr<Shape> InferDynamicSliceShape(
    const Shape& operand, absl::Span<const Shape* const> index_shapes,
    absl::Span<const int64_t> slice_sizes);
// dynamic-update-slice: the update has the operand's rank and element type
// and fits in it; indices as for dynamic-slice; result = operand.
absl::StatusOr<Shape> InferDynamicUpdateSliceShape(
    const Shape& operand, const Shape& update,
    absl::Span<const Shape* const> index_shapes);
// concatenate along `dimension`: same rank, element type and other
// dimensions.
absl::StatusOr<Shape> InferConcatenateShape(
    absl::Span<const Shape* const> operands, int64_t dimension);
// pad: result dimension low + high + dim + max(dim - 1, 0) * interior
// (low/high may be negative, interior >= 0, result >= 0); the padding value
// is a scalar of the operand's element type.
absl::StatusOr<Shape> InferPadShape(const Shape& operand,
                                    const Shape& padding_value,
                                    absl::Span<const PaddingDim> padding);
// iota: an array of rank > iota_dimension >= 0.
absl::StatusOr<Shape> InferIotaShape(const Shape& shape,
                                     int64_t iota_dimension);

// --- Contractions and reductions --------------------------------------------

// dot: batch and contracting dimension lists of equal length, in range,
// distinct per side, with matching sizes; result = batch dims (lhs order),
// then lhs free dims, then rhs free dims. The element type is
// `result_type` when given (dots may widen), else the lhs element type.
absl::StatusOr<Shape> InferDotShape(
    const Shape& lhs, const Shape& rhs, const DotDimensionNumbers& dnums,
    std::optional<PrimitiveType> result_type = std::nullopt);
// Checks that `reducer` maps 2k scalars (k accumulators, then k inputs) to
// its k accumulator types (a scalar for k == 1, a tuple of k scalars
// otherwise), that accumulator i has the type of init value i and input
// parameter i the element type of input i. As in XLA, floating-point types
// may differ in precision there (bf16 input, f32 reducer).
absl::Status CheckReducerShape(const ProgramShape& reducer,
                               absl::Span<const PrimitiveType> input_types,
                               absl::Span<const PrimitiveType> init_types);
// reduce(inputs..., inits...): 2k operands; inputs arrays of equal
// dimensions, inits scalars; `dimensions` in range and distinct; to_apply as
// CheckReducerShape. Result: the inputs' dimensions without `dimensions`, of
// the reducer's accumulator type(s); a tuple for k > 1.
absl::StatusOr<Shape> InferReduceShape(absl::Span<const Shape* const> operands,
                                       absl::Span<const int64_t> dimensions,
                                       const ProgramShape& to_apply);

// --- Tuples and control flow ------------------------------------------------

absl::StatusOr<Shape> InferTupleShape(absl::Span<const Shape* const> operands);
absl::StatusOr<Shape> InferGetTupleElementShape(const Shape& operand,
                                                int64_t index);
// while: condition (state) -> pred[], body (state) -> state; result = init.
absl::StatusOr<Shape> InferWhileShape(const Shape& init,
                                      const ProgramShape& condition,
                                      const ProgramShape& body);
// call: arguments match the callee's parameters; result = callee root.
absl::StatusOr<Shape> InferCallShape(absl::Span<const Shape* const> arguments,
                                     const ProgramShape& callee);
// conditional: pred[] selector with 2 branches (true, false) or s32[] with
// any number >= 1; branch i takes exactly branch_operands[i]; all branches
// return the same shape, which is the result.
absl::StatusOr<Shape> InferConditionalShape(
    const Shape& selector, absl::Span<const Shape* const> branch_operands,
    absl::Span<const ProgramShape> branches);

// --- Collectives
// --------------------------------------------------------------

// all-gather: `dimension` multiplied by group_size; a tuple for several
// operands.
absl::StatusOr<Shape> InferAllGatherShape(
    absl::Span<const Shape* const> operands, int64_t dimension,
    int64_t group_size);
// reduce-scatter: `dimension` divided by group_size (must divide it).
absl::StatusOr<Shape> InferReduceScatterShape(
    absl::Span<const Shape* const> operands, int64_t dimension,
    int64_t group_size);
// all-reduce: the operand shape; a tuple for several operands.
absl::StatusOr<Shape> InferAllReduceShape(
    absl::Span<const Shape* const> operands);
// all-to-all: array form (one operand, split_dimension given): the operand
// shape, split dimension divisible by group_size when known; tuple form: a
// tuple of the operand shapes.
absl::StatusOr<Shape> InferAllToAllShape(
    absl::Span<const Shape* const> operands,
    std::optional<int64_t> split_dimension, std::optional<int64_t> group_size);
// collective-permute: the operand shape (a tuple for several operands); the
// in-place form (input, output, input offsets, output offsets) gives the
// output's shape.
absl::StatusOr<Shape> InferCollectivePermuteShape(
    absl::Span<const Shape* const> operands, bool in_place = false);

// --- Asynchronous pairs
// -------------------------------------------------------

// The forms XLA prints for the start of a native collective pair. The
// operand part holds a lone operand bare (older dumps) or in a 1-tuple (an
// executable's module since 2025, `compiled.as_text()`); all-reduce-start
// had no operand part before 2025:
//   all-gather-start          (operand, result) | ((operand), result) |
//                             ((operands...), (results...))
//   collective-permute-start  the same, then optional context scalars
//   all-reduce-start          result | (results...) |
//                             ((operand), result) |
//                             ((operands...), (results...))
// The Infer*StartShape functions return one form (the lone operand bare for
// all-gather and collective-permute, with the operand part for all-reduce);
// NativeStartShapeMatches accepts every form of it.

// all-gather-start: (operand, result), or ((operands...), (results...)).
absl::StatusOr<Shape> InferAllGatherStartShape(
    absl::Span<const Shape* const> operands, int64_t dimension,
    int64_t group_size);
// all-reduce-start with its operand part: ((operands...), result), result
// being InferAllReduceShape's (a tuple for several operands).
absl::StatusOr<Shape> InferAllReduceStartShape(
    absl::Span<const Shape* const> operands);
// Whether `start`, an all-reduce-start's shape, has the operand part
// (element 0 a tuple: the older form is the all-reduce's shape, whose
// elements are arrays).
bool AllReduceStartHasOperandPart(const Shape& start);
// Whether `actual` is the start shape `expected` (an Infer*StartShape
// result: (operand part, result part)) in any form XLA prints: a lone
// operand bare or in a 1-tuple, then, when `context` allows, array
// elements after the result part.
bool NativeStartShapeMatches(const Shape& expected, const Shape& actual,
                             bool context, bool check_layouts = false);
// The part of a native start's shape (all-gather-start, all-reduce-start,
// collective-permute-start, copy-start) that its done returns; nullptr when
// the shape has no such part.
const Shape* NativeStartResultPart(Opcode start_opcode, const Shape& start);
// collective-permute-start: (operand, result) without the trailing context
// elements (u32[]/s32[] scalars) an actual start shape may carry; several
// operands: ((operands...), (results...)); in-place form: (input, output).
absl::StatusOr<Shape> InferCollectivePermuteStartShape(
    absl::Span<const Shape* const> operands, bool in_place = false);
// copy-start: (operand, operand, u32[]).
absl::StatusOr<Shape> InferCopyStartShape(const Shape& operand);
// async-start wrapping `wrapped`: ((operands...), wrapped root), without the
// trailing context elements an actual start shape may carry. The operands
// must match the wrapped computation's parameters.
absl::StatusOr<Shape> InferAsyncStartShape(
    absl::Span<const Shape* const> operands, const ProgramShape& wrapped);
// async-update: the start (or previous update) shape, which must be a tuple
// of >= 2 elements whose element 0 is a tuple.
absl::StatusOr<Shape> InferAsyncUpdateShape(const Shape& start);
// async-done: element 1 of the start (or update) shape.
absl::StatusOr<Shape> InferAsyncDoneShape(const Shape& start);
// Done halves of the native pairs: all-gather-done (element 1 of the start),
// all-reduce-done (element 1 of a start with an operand part, otherwise the
// start shape), collective-permute-done (element 1), copy-done (element 0).
absl::StatusOr<Shape> InferNativeDoneShape(Opcode done_opcode,
                                           const Shape& start);

// --- Instructions written without a shape
// -------------------------------------------------

// Whether XLA's parser infers the result shape of `opcode` when the text
// leaves it out (`sum = add(a, b)`, `t = tuple(x, y)`, `w = while(t), ...`).
// Collectives, async halves, slices, bitcasts, converts, constants,
// parameters, iotas, fusions and custom calls must be written with one.
bool ParserInfersShape(Opcode opcode);
// The result shape of `inst` (its operands, attributes and called
// computations set; its own shape not used), as XLA's parser infers it for
// the opcodes of ParserInfersShape: elementwise ops, compare, select,
// clamp, tuple, get-tuple-element, while, call, conditional, after-all
// (token[]), add-dependency / opt-barrier / domain (the operand's shape),
// partition-id / replica-id (u32[]), get-dimension-size (s32[]),
// set-dimension-size (operand 0), broadcast (`dimensions` are the sizes
// prepended to the operand's: XLA's sizes form), transpose, reverse,
// concatenate, pad, dot, reduce, sort (the operand, or a tuple of them),
// map (the callee's element type with the operands' dimensions) and topk
// ((values, indices) with the last dimension k), and the windowed,
// gathering and linear-algebra opcodes of hlo/shape_inference_nn.h
// (convolution, fft, gather, scatter, reduce-window, select-and-scatter,
// batch-norm-*, cholesky, triangular-solve, ragged-dot). An error says why
// the shape cannot be inferred. XLA also infers scaled-dot and scan, which
// hloverlap still requires written.
absl::StatusOr<Shape> InferInstructionShape(const Instruction& inst);

// --- Helpers
// ------------------------------------------------------------------

// Shape text as used in messages: "f32[8,4]", "(s32[], f32[2])" (no
// /*index=N*/ comments; layouts only when print_layout).
std::string ShapeString(const Shape& shape, bool print_layout = false);
// "{1,0,2}".
std::string DimsString(absl::Span<const int64_t> dims);
// OK when a per-dimension list of `op` (`what`: "dimensions={1,0}", "the
// padding") has one entry per dimension of `operand`, else "transpose:
// dimensions={0} has 1 entries, expected one per dimension of operand
// f32[2,3]".
absl::Status ExpectOnePerDimension(std::string_view op, std::string_view what,
                                   size_t entries, const Shape& operand);
// The same for an attribute's integer list, quoted in the message
// ("dimensions={0}") only when it does not fit.
absl::Status ExpectOnePerDimension(std::string_view op,
                                   std::string_view attribute,
                                   absl::Span<const int64_t> values,
                                   const Shape& operand);
// The shape with every layout removed (recursively).
Shape StripLayouts(Shape shape);
// Compatible() and, when check_layouts, equal layouts wherever `expected`
// has one (recursively).
bool ShapesMatch(const Shape& expected, const Shape& actual,
                 bool check_layouts = false);

}  // namespace hloverlap

#endif  // HLOVERLAP_HLO_SHAPE_INFERENCE_H_
