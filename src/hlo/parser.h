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
// "FILE:LINE:COL: message" (1-based line and column).
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
  int max_nesting_depth = 256;       // nested braces/parens/tuple shapes
  int64_t max_elements = int64_t{1} << 32;  // constant literal elements
};

absl::StatusOr<std::unique_ptr<Module>> ParseHloModule(
    std::string_view text, const ParseOptions& options = {});

// Reads a file (or "-" for stdin; `.gz` decompressed transparently) and
// parses it. I/O errors name the file.
absl::StatusOr<std::unique_ptr<Module>> ParseHloFile(const std::string& path,
                                                     ParseOptions options = {});

// Reads a whole file or stdin ("-"), gunzipping `.gz` files or gzip magic.
absl::StatusOr<std::string> ReadInputFile(const std::string& path);

// Parses a shape in text form ("bf16[2,4]{1,0}", "(f32[], s32[2])").
absl::StatusOr<Shape> ParseShape(std::string_view text);

}  // namespace hloverlap

#endif  // HLOVERLAP_HLO_PARSER_H_
