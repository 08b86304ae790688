// HLO text parser: every dump style of hlo_text_format.md §1.
//
// Accepts: full Default style (`%` names, program-shape headers), the
// 2022-2025 short dump style (bare names, `} // name` trailers, `/*index=N*/`
// comments), operand shapes before operand names, ShortParsable text from
// `lower().as_text()`, compact GTE operands (`%x#0#1`, synthesizing
// get-tuple-element instructions) with control predecessors naming the
// omitted GTEs (dropped and counted), async syntax sugar
// (`reduce-scatter-start`, synthesizing the wrapped computation), and `{...}`
// elided constants. Attributes no pass interprets are kept verbatim.
//
// Errors are returned as InvalidArgument with the message
// "FILE:LINE:COL: message" (1-based line and column, in bytes); parsing
// stops at the first error. No input makes it crash or recurse deeper than
// ParseOptions::max_nesting_depth (shapes and array literals are parsed
// without recursion).
//
// Conventions of the result:
//  - Instruction names are unique per computation as written; synthesized
//    instructions (compact-GTE get-tuple-elements named `x_i`, `x_i_j`;
//    async-sugar parameters `param_k` and wrapped ops) and synthesized
//    computations (`wrapped_<opcode>`) are renamed `name.1`, `name.2`, ...
//    when they collide with any other name in the module.
//  - Compact GTE operands reuse one get-tuple-element per distinct `x#i`
//    within a computation, inserted just before its first user.
//  - An undefined control-predecessor name is an error, except in a module
//    that uses compact GTE operands: there the edge is dropped and counted
//    in Module::dropped_control_predecessors().
//  - Async sugar `X-start` becomes async-start (calls= a synthesized
//    computation with one parameter per element of the start shape's
//    element 0 and root X carrying the line's attributes; metadata,
//    frontend attributes and backend_config are also copied to the
//    async-start); `X-update`/`X-done` become async-update/async-done.
//  - Stack frame tables: ids are 1-based in text and the vectors hold entry
//    `id - 1`; file_name_id/function_name_id/file_location_id are stored as
//    written; parent_frame_id is stored as the text value minus one (0 = no
//    parent, otherwise the 1-based id of the parent frame).
//  - The signature of a computation header is checked for syntax and its
//    result shape for compatibility with the root; parameter(N) lines are
//    authoritative. Missing parameter numbers are errors.
//  - Unknown attributes are kept as RawAttribute (exact value text) in input
//    order; unknown metadata keys are skipped.
#ifndef HLOVERLAP_HLO_PARSER_H_
#define HLOVERLAP_HLO_PARSER_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "hlo/module.h"

namespace hloverlap {

struct ParseOptions {
  // Used in diagnostics.
  std::string filename = "<input>";
  // Limits that turn hostile input into errors instead of exhaustion.
  int max_nesting_depth = 256;              // nested braces/parens/tuple shapes
  int64_t max_elements = int64_t{1} << 32;  // constant literal elements
};

absl::StatusOr<std::unique_ptr<Module>> ParseHloModule(
    std::string_view text, const ParseOptions& options = {});

// Reads a file (or "-" for stdin; `.gz` decompressed transparently) and
// parses it. I/O errors name the file.
absl::StatusOr<std::unique_ptr<Module>> ParseHloFile(const std::string& path,
                                                     ParseOptions options = {});

// Reads a whole file or stdin ("-"). Gzip data (recognized by its magic
// bytes) is decompressed, up to 2 GiB of output (larger is an error, so
// gzip bombs fail fast); a `.gz` file without the magic is an error.
// Missing files are NotFound, other I/O and gzip errors InvalidArgument;
// messages name the file ("<stdin>" for "-").
absl::StatusOr<std::string> ReadInputFile(const std::string& path);

// Parses a shape in text form ("bf16[2,4]{1,0}", "(f32[], s32[2])"); the
// whole text must be the shape.
absl::StatusOr<Shape> ParseShape(std::string_view text);

}  // namespace hloverlap

#endif  // HLOVERLAP_HLO_PARSER_H_
