// Optimization remarks: every decision a pass makes, as data (after LLVM's
// `Remark`: a pass, a stable name, a kind, arguments).
//
// One remark per candidate (collective, loop). Kinds follow LLVM/MLIR:
// passed (transformed), missed (left alone, with the reason and a
// suggestion), failure (an internal error was caught and the rewrite
// discarded), analysis (information), warning (something the user asked for
// did not happen as asked: a --loop selector that matches no loop, a clamped
// depth, a known_trip_count the loop condition contradicts; the tool prints
// warnings on stderr whether or not remarks were requested).
//
// Every remark has a stable CamelCase `name` for tools and tests
// (`PrefetchedAllGather`, `OverMemoryBudget`, `UnknownTripCount`; the table
// is docs/REMARKS.md, checked against kRemarkNames by a test) and typed
// arguments (instructions, loops, integers, bytes, times). Its text is
// rendered from `format`, whose `{key}` placeholders name arguments:
//
//   Remark r;
//   r.name = "PrefetchedAllGather";
//   r.format = "prefetched all-gather {depth} iteration(s) ahead";
//   r.Instr("collective", "all-gather.7").Int("depth", 1);
//   // message: "prefetched all-gather 1 iteration(s) ahead"
//
// Passes name the instructions of the module they see, which may be clones
// (`all-gather.7.next.peel`); MapRemarksToInput (remark_summary.h) maps them
// back to the input's names before remarks reach the user. Rendered as text
//
//   model.py:63: passed: collective-pipeliner: prefetched all-gather 1
//     iteration ahead [all_gather.8 in loop while.198/while.195]
//     (bytes_moved=393216, extra_live_bytes=...) [PrefetchedAllGather]
//
// or as JSON lines (one object per remark, `name` and `args` included).
#ifndef HLOVERLAP_PASSES_REMARKS_H_
#define HLOVERLAP_PASSES_REMARKS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "analysis/while_loop_analysis.h"
#include "hlo/module.h"

namespace hloverlap {

enum class RemarkKind { kPassed, kMissed, kFailure, kAnalysis, kWarning };
std::string_view RemarkKindName(RemarkKind kind);

// A typed argument of a remark.
struct RemarkArg {
  enum class Type { kInstruction, kLoop, kInt, kBytes, kTimeNs, kText };
  std::string key;
  Type type = Type::kText;
  std::string text;   // kInstruction, kLoop (a path), kText
  int64_t value = 0;  // kInt, kBytes, kTimeNs
};
std::string_view RemarkArgTypeName(RemarkArg::Type type);
// The argument as it reads in a message: "all-gather.7", "4",
// "25165824 B (24.0 MiB)", "131.3 us".
std::string RenderRemarkArg(const RemarkArg& arg);

struct Remark {
  std::string pass;
  RemarkKind kind = RemarkKind::kAnalysis;
  std::string name;         // stable CamelCase name (docs/REMARKS.md)
  std::string instruction;  // the candidate (collective or while)
  std::string opcode;
  std::string loop;         // loop path "while.198/while.195"
  SourceLocation location;  // from metadata
  std::string op_name;      // metadata op_name
  std::string direction;    // backward / forward / forward-sink / ...
  std::string message;      // what happened, or why not (rendered)
  // The message with `{key}` placeholders; empty: `message` is the text.
  std::string format;
  std::vector<RemarkArg> args;
  std::string suggestion;  // for missed remarks
  // Numeric facts: bytes_moved, extra_live_bytes, trip_count, depth, ...
  std::vector<std::pair<std::string, int64_t>> metrics;

  Remark& Metric(std::string key, int64_t value) {
    metrics.emplace_back(std::move(key), value);
    return *this;
  }
  Remark& Arg(std::string key, RemarkArg::Type type, std::string text,
              int64_t value = 0);
  Remark& Instr(std::string key, std::string name) {
    return Arg(std::move(key), RemarkArg::Type::kInstruction, std::move(name));
  }
  Remark& Loop(std::string key, std::string path) {
    return Arg(std::move(key), RemarkArg::Type::kLoop, std::move(path));
  }
  Remark& Int(std::string key, int64_t v) {
    return Arg(std::move(key), RemarkArg::Type::kInt, "", v);
  }
  Remark& Bytes(std::string key, int64_t v) {
    return Arg(std::move(key), RemarkArg::Type::kBytes, "", v);
  }
  Remark& TimeNs(std::string key, int64_t v) {
    return Arg(std::move(key), RemarkArg::Type::kTimeNs, "", v);
  }
  Remark& Text(std::string key, std::string text) {
    return Arg(std::move(key), RemarkArg::Type::kText, std::move(text));
  }
  // The argument named `key`, or nullptr.
  const RemarkArg* FindArg(std::string_view key) const;
  // `format` with its placeholders replaced by the arguments (an unknown
  // key stays as "{key}"); `message` when there is no format.
  std::string Render() const;
};

// Every remark name a pass may emit (passes/remark_names.inc), in the
// table's order; docs/REMARKS.md is RemarkNamesMarkdown()
// (RemarkNames.DocsTableIsGenerated checks it; the corpus test checks that
// emitted names are in it).
struct RemarkNameInfo {
  std::string_view name;
  std::string_view kinds;   // "passed", "missed", ...
  std::string_view passes;  // the passes that emit it
  std::string_view meaning;
};
const std::vector<RemarkNameInfo>& KnownRemarkNames();
bool IsKnownRemarkName(std::string_view name);
std::string RemarkNamesMarkdown();

class RemarkSink {
 public:
  // Renders the message from `format` when there is one. A warning already
  // emitted for the same instruction, name and message (by any pass) is not
  // repeated.
  void Emit(Remark remark);
  const std::vector<Remark>& remarks() const { return remarks_; }
  std::vector<Remark>& mutable_remarks() { return remarks_; }
  void Clear() { remarks_.clear(); }
  int64_t Count(RemarkKind kind) const;

  // Readable text, one remark per paragraph.
  std::string ToText() const;
  // The warnings, as "warning: " lines (empty if none).
  std::string WarningsText() const;
  // One JSON object per line.
  std::string ToJsonLines() const;

 private:
  std::vector<Remark> remarks_;
};

// Fills location/op_name/instruction/opcode of a remark from an instruction.
void DescribeInstruction(const Instruction& instr, const Module& module,
                         Remark& remark);

// A remark of `pass` about `instr` (DescribeInstruction) in the loop at
// `loop` (empty: none), with its kind, name and message.
Remark InstructionRemark(std::string_view pass, RemarkKind kind,
                         std::string name, const Instruction& instr,
                         const Module& module, std::string loop,
                         std::string message);

// The KnownTripCountContradicted warning of a loop whose known_trip_count
// its condition contradicts (WhileLoopInfo::contradiction), emitted by
// `pass` for the loop at `loop_path`; nothing when there is none.
void EmitTripCountWarning(const WhileLoopInfo& info, std::string_view pass,
                          std::string loop_path, RemarkSink& sink);

}  // namespace hloverlap

#endif  // HLOVERLAP_PASSES_REMARKS_H_
