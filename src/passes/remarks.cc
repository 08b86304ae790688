#include "passes/remarks.h"

#include "absl/strings/str_cat.h"
#include "hlo/absl_compat.h"
#include "nlohmann/json.hpp"

namespace hloverlap {

std::string_view RemarkKindName(RemarkKind kind) {
  switch (kind) {
    case RemarkKind::kPassed:
      return "passed";
    case RemarkKind::kMissed:
      return "missed";
    case RemarkKind::kFailure:
      return "failure";
    case RemarkKind::kAnalysis:
      return "analysis";
    case RemarkKind::kWarning:
      return "warning";
  }
  return "analysis";
}

void RemarkSink::Emit(Remark remark) {
  if (remark.kind == RemarkKind::kWarning) {
    for (const Remark& r : remarks_) {
      if (r.kind == RemarkKind::kWarning && r.name == remark.name &&
          r.instruction == remark.instruction && r.message == remark.message) {
        return;
      }
    }
  }
  remarks_.push_back(std::move(remark));
}

int64_t RemarkSink::Count(RemarkKind kind) const {
  int64_t n = 0;
  for (const Remark& r : remarks_) n += r.kind == kind;
  return n;
}

namespace {

// One remark as text; `label` is its kind or "warning".
void AppendRemarkText(const Remark& r, std::string_view label,
                      std::string& out) {
  if (r.location.known()) {
    absl::StrAppend(&out, r.location.file, ":", r.location.line, ": ");
  }
  absl::StrAppend(&out, AsAbsl(label), ": ", r.pass, ": ");
  if (!r.name.empty()) absl::StrAppend(&out, r.name, ": ");
  out.append(r.message);
  if (!r.instruction.empty()) {
    absl::StrAppend(&out, " [", r.instruction);
    if (!r.loop.empty()) absl::StrAppend(&out, " in loop ", r.loop);
    absl::StrAppend(&out, "]");
  }
  if (!r.metrics.empty()) {
    out.append(" (");
    for (size_t i = 0; i < r.metrics.size(); ++i) {
      if (i > 0) out.append(", ");
      absl::StrAppend(&out, r.metrics[i].first, "=", r.metrics[i].second);
    }
    out.append(")");
  }
  out.push_back('\n');
  if (!r.suggestion.empty()) {
    absl::StrAppend(&out, "  suggestion: ", r.suggestion, "\n");
  }
}

}  // namespace

std::string RemarkSink::WarningsText() const {
  std::string out;
  for (const Remark& r : remarks_) {
    if (r.warn) AppendRemarkText(r, "warning", out);
  }
  return out;
}

std::string RemarkSink::ToText() const {
  std::string out;
  for (const Remark& r : remarks_)
    AppendRemarkText(r, RemarkKindName(r.kind), out);
  return out;
}

std::string RemarkSink::ToJsonLines() const {
  std::string out;
  for (const Remark& r : remarks_) {
    nlohmann::json j;
    j["pass"] = r.pass;
    j["kind"] = std::string(RemarkKindName(r.kind));
    if (!r.name.empty()) j["name"] = r.name;
    j["instruction"] = r.instruction;
    j["opcode"] = r.opcode;
    j["loop"] = r.loop;
    if (r.location.known()) {
      j["source_file"] = r.location.file;
      j["source_line"] = r.location.line;
    }
    if (!r.op_name.empty()) j["op_name"] = r.op_name;
    if (!r.direction.empty()) j["direction"] = r.direction;
    j["message"] = r.message;
    if (!r.suggestion.empty()) j["suggestion"] = r.suggestion;
    if (r.warn) j["warning"] = true;
    nlohmann::json metrics = nlohmann::json::object();
    for (const auto& [k, v] : r.metrics) metrics[k] = v;
    j["metrics"] = metrics;
    // Replace invalid UTF-8 (names come from user files) instead of throwing.
    out.append(
        j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    out.push_back('\n');
  }
  return out;
}

void DescribeInstruction(const Instruction& instr, const Module& module,
                         Remark& remark) {
  remark.instruction = instr.name();
  remark.opcode = std::string(OpcodeName(instr.opcode()));
  remark.location = module.GetSourceLocation(instr.metadata());
  remark.op_name = instr.metadata().op_name;
}

void EmitTripCountWarning(const WhileLoopInfo& info, std::string_view pass,
                          std::string loop_path, RemarkSink& sink) {
  const Instruction* w = info.while_instr;
  if (info.contradiction.empty() || w == nullptr || w->parent() == nullptr ||
      w->parent()->parent() == nullptr) {
    return;
  }
  Remark r;
  r.pass = std::string(pass);
  r.kind = RemarkKind::kWarning;
  r.name = "KnownTripCountContradicted";
  DescribeInstruction(*w, *w->parent()->parent(), r);
  r.loop = std::move(loop_path);
  r.message = info.contradiction;
  if (info.known_trip_count.has_value()) {
    r.Metric("known_trip_count", *info.known_trip_count);
  }
  if (info.trip_count.has_value()) r.Metric("trip_count", *info.trip_count);
  sink.Emit(std::move(r));
}

}  // namespace hloverlap
