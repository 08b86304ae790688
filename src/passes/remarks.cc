#include "passes/remarks.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "hlo/absl_compat.h"
#include "nlohmann/json.hpp"
#include "support/byte_size.h"

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

std::string_view RemarkArgTypeName(RemarkArg::Type type) {
  switch (type) {
    case RemarkArg::Type::kInstruction:
      return "instruction";
    case RemarkArg::Type::kLoop:
      return "loop";
    case RemarkArg::Type::kInt:
      return "int";
    case RemarkArg::Type::kBytes:
      return "bytes";
    case RemarkArg::Type::kTimeNs:
      return "time_ns";
    case RemarkArg::Type::kText:
      break;
  }
  return "text";
}

std::string RenderRemarkArg(const RemarkArg& arg) {
  switch (arg.type) {
    case RemarkArg::Type::kInt:
      return absl::StrCat(arg.value);
    case RemarkArg::Type::kBytes:
      return ExactAndHumanBytes(arg.value);
    case RemarkArg::Type::kTimeNs:
      return absl::StrFormat("%.1f us", arg.value / 1000.0);
    case RemarkArg::Type::kInstruction:
    case RemarkArg::Type::kLoop:
    case RemarkArg::Type::kText:
      break;
  }
  return arg.text;
}

Remark& Remark::Arg(std::string key, RemarkArg::Type type, std::string text,
                    int64_t value) {
  args.push_back({std::move(key), type, std::move(text), value});
  return *this;
}

const RemarkArg* Remark::FindArg(std::string_view key) const {
  for (const RemarkArg& a : args) {
    if (a.key == key) return &a;
  }
  return nullptr;
}

std::string Remark::Render() const {
  if (format.empty()) return message;
  std::string out;
  size_t i = 0;
  while (i < format.size()) {
    const size_t open = format.find('{', i);
    const size_t close =
        open == std::string::npos ? open : format.find('}', open);
    if (close == std::string::npos) {
      out.append(format, i, std::string::npos);
      break;
    }
    out.append(format, i, open - i);
    const RemarkArg* arg =
        FindArg(std::string_view(format).substr(open + 1, close - open - 1));
    if (arg != nullptr) {
      out += RenderRemarkArg(*arg);
    } else {
      out.append(format, open, close + 1 - open);
    }
    i = close + 1;
  }
  return out;
}

const std::vector<RemarkNameInfo>& KnownRemarkNames() {
#define HLOVERLAP_REMARK(name, kinds, passes, meaning) \
  {#name, kinds, passes, meaning},
  static const auto* names = new std::vector<RemarkNameInfo>{
#include "passes/remark_names.inc"
  };
#undef HLOVERLAP_REMARK
  return *names;
}

bool IsKnownRemarkName(std::string_view name) {
  const std::vector<RemarkNameInfo>& names = KnownRemarkNames();
  return std::any_of(names.begin(), names.end(),
                     [&](const RemarkNameInfo& n) { return n.name == name; });
}

std::string RemarkNamesMarkdown() {
  std::string out =
      "# Remark names\n\n"
      "Every decision a pass reports is a remark with a stable name (LLVM "
      "style, `Remark::name`, the\n`name` field of `--remarks-format=json` "
      "and of `explain --json`). Tools and tests match\nthese names, never "
      "the message text, which may be reworded. Names are never renamed; new "
      "ones\nare added to `src/passes/remark_names.inc`, from which this "
      "file is generated\n(`HLOVERLAP_UPDATE_DOCS=1 ./build/unit_tests "
      "--gtest_filter=RemarkNames.*`; "
      "the test fails when the two differ).\n\n"
      "A remark's `args` are typed values (`instruction`, `loop`, `int`, "
      "`bytes`, `time_ns`, `text`)\nthat its message is rendered from; "
      "instruction and loop names are the input module's, never\nthose of "
      "clones a pass made (`all-gather.7.next.peel` is reported as "
      "`all-gather.7`).\n\n"
      "| name | kind | passes | meaning |\n|---|---|---|---|\n";
  for (const RemarkNameInfo& n : KnownRemarkNames()) {
    absl::StrAppend(&out, "| `", AsAbsl(n.name), "` | ", AsAbsl(n.kinds), " | ",
                    AsAbsl(n.passes), " | ", AsAbsl(n.meaning), " |\n");
  }
  return out;
}

void RemarkSink::Emit(Remark remark) {
  if (!remark.format.empty()) remark.message = remark.Render();
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
  // The name last, as LLVM's [-Rpass=NAME]: the part tools match.
  if (!r.name.empty()) absl::StrAppend(&out, " [", r.name, "]");
  out.push_back('\n');
  if (!r.suggestion.empty()) {
    absl::StrAppend(&out, "  suggestion: ", r.suggestion, "\n");
  }
}

}  // namespace

std::string RemarkSink::WarningsText() const {
  std::string out;
  for (const Remark& r : remarks_) {
    if (r.kind == RemarkKind::kWarning) AppendRemarkText(r, "warning", out);
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
    // Before warnings had their own kind, "warning": true marked them.
    if (r.kind == RemarkKind::kWarning) j["warning"] = true;
    if (!r.args.empty()) {
      nlohmann::json args = nlohmann::json::array();
      for (const RemarkArg& a : r.args) {
        nlohmann::json arg = {{"key", a.key},
                              {"type", std::string(RemarkArgTypeName(a.type))}};
        const bool text = a.type == RemarkArg::Type::kInstruction ||
                          a.type == RemarkArg::Type::kLoop ||
                          a.type == RemarkArg::Type::kText;
        if (text) {
          arg["value"] = a.text;
        } else {
          arg["value"] = a.value;
        }
        args.push_back(std::move(arg));
      }
      j["args"] = std::move(args);
    }
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

Remark InstructionRemark(std::string_view pass, RemarkKind kind,
                         std::string name, const Instruction& instr,
                         const Module& module, std::string loop,
                         std::string message) {
  Remark r;
  r.pass = std::string(pass);
  r.kind = kind;
  r.name = std::move(name);
  DescribeInstruction(instr, module, r);
  r.loop = std::move(loop);
  r.message = std::move(message);
  return r;
}

void EmitTripCountWarning(const WhileLoopInfo& info, std::string_view pass,
                          std::string loop_path, RemarkSink& sink) {
  const Instruction* w = info.while_instr;
  if (info.contradiction.empty() || w == nullptr || w->parent() == nullptr ||
      w->parent()->parent() == nullptr) {
    return;
  }
  Remark r = InstructionRemark(
      pass, RemarkKind::kWarning, "KnownTripCountContradicted", *w,
      *w->parent()->parent(), std::move(loop_path), info.contradiction);
  if (info.known_trip_count.has_value()) {
    r.Metric("known_trip_count", *info.known_trip_count);
  }
  if (info.trip_count.has_value()) r.Metric("trip_count", *info.trip_count);
  sink.Emit(std::move(r));
}

}  // namespace hloverlap
