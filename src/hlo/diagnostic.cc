// Errors located in the parsed text (see diagnostic.h).
#include "hlo/diagnostic.h"

#include <charconv>
#include <cstdint>

#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "hlo/absl_compat.h"

namespace hloverlap {
namespace {

// Payload: "LINE:COL" in decimal.
constexpr absl::string_view kPositionUrl = "hloverlap/source-position";

}  // namespace

absl::Status AtPosition(absl::Status status, SourcePosition position) {
  if (status.ok() || !position.known() ||
      status.GetPayload(kPositionUrl).has_value()) {
    return status;
  }
  status.SetPayload(kPositionUrl, absl::Cord(absl::StrCat(position.line, ":",
                                                          position.column)));
  return status;
}

absl::Status AtInstruction(absl::Status status,
                           const Instruction* instruction) {
  if (instruction == nullptr) return status;
  return AtPosition(std::move(status), instruction->source_position());
}

std::optional<SourcePosition> StatusSourcePosition(const absl::Status& status) {
  absl::optional<absl::Cord> payload = status.GetPayload(kPositionUrl);
  if (!payload.has_value()) return std::nullopt;
  const std::string text(*payload);
  const char* const end = text.data() + text.size();
  SourcePosition pos;
  auto [p, ec] = std::from_chars(text.data(), end, pos.line);
  if (ec != std::errc() || p == end || *p != ':') return std::nullopt;
  auto [q, ec2] = std::from_chars(p + 1, end, pos.column);
  if (ec2 != std::errc() || q != end || !pos.known()) return std::nullopt;
  return pos;
}

absl::Status WithMessage(const absl::Status& status, std::string_view message) {
  if (status.ok()) return status;
  absl::Status out(status.code(), AsAbsl(message));
  status.ForEachPayload(
      [&out](absl::string_view url, const absl::Cord& payload) {
        out.SetPayload(url, payload);
      });
  return out;
}

absl::Status LocateInFile(const absl::Status& status,
                          std::string_view filename) {
  if (status.ok()) return status;
  if (absl::StartsWith(status.message(), absl::StrCat(AsAbsl(filename), ":"))) {
    return status;
  }
  std::string prefix(filename);
  if (std::optional<SourcePosition> pos = StatusSourcePosition(status)) {
    absl::StrAppend(&prefix, ":", pos->line, ":", pos->column);
  }
  return WithMessage(status, absl::StrCat(prefix, ": ", status.message()));
}

}  // namespace hloverlap
