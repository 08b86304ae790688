// Errors located in the parsed text.
//
// Library code (passes, the interpreter) knows which instruction an error is
// about but not the file the module came from; the command line knows the
// file. An error status carries the instruction's source position as a
// payload, and the tool turns it into the `file:line:col: message` every
// user error is printed as:
//
//   // In a pass or the interpreter:
//   return AtInstruction(absl::InvalidArgumentError("while loop w.3 ..."), w);
//   // In the tool:
//   return ReportStatus(LocateInFile(status, "m.hlo"));
//   //   m.hlo:12:3: while loop w.3 ...
//
// The innermost position wins: AtInstruction leaves a status that already
// carries one unchanged, so an error raised deep inside a called computation
// points at the instruction that failed, not at its caller.
#ifndef HLOVERLAP_HLO_DIAGNOSTIC_H_
#define HLOVERLAP_HLO_DIAGNOSTIC_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "hlo/instruction.h"

namespace hloverlap {

// `status` with the source position of `instruction` attached, when the
// status is an error, the instruction's position is known and the status
// carries no position yet; otherwise `status` unchanged.
absl::Status AtInstruction(absl::Status status, const Instruction* instruction);
// `status` with `position` attached (same rules as AtInstruction).
absl::Status AtPosition(absl::Status status, SourcePosition position);

// The position attached to `status`, if any.
std::optional<SourcePosition> StatusSourcePosition(const absl::Status& status);

// `status` with its message replaced by `message`, keeping the code and
// every payload (the source position among them).
absl::Status WithMessage(const absl::Status& status, std::string_view message);

// For the tool that read `filename`: the message prefixed with
// "FILE:LINE:COL: " (attached position) or "FILE: " (none); a message that
// already starts with "FILE:" is left as it is. OK stays OK.
absl::Status LocateInFile(const absl::Status& status,
                          std::string_view filename);

}  // namespace hloverlap

#endif  // HLOVERLAP_HLO_DIAGNOSTIC_H_
