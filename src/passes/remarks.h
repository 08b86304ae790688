// Optimization remarks: every decision a pass makes, explained.
//
// One remark per candidate (collective, loop). Kinds follow LLVM/MLIR:
// passed (transformed), missed (left alone, with the reason and a
// suggestion), failure (an internal error was caught and the rewrite
// discarded), analysis (information), warning (the input says something
// the pass found untrue, e.g. a known_trip_count the loop condition
// contradicts; the pass goes by what it proved). A remark may carry a stable
// CamelCase name for tools (`KnownTripCountContradicted`). Rendered as
// readable text
//
//   model.py:63: passed: collective-pipeliner: prefetched all-gather
//     all_gather.8 (bf16[256,768], 393216 bytes) one iteration ahead in loop
//     while.198/while.195 [extra live bytes: 196608]
//
// or as JSON lines (one object per remark) for tools.
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

struct Remark {
  std::string pass;
  RemarkKind kind = RemarkKind::kAnalysis;
  std::string name;         // stable CamelCase name, may be empty
  std::string instruction;  // the candidate (collective or while)
  std::string opcode;
  std::string loop;         // loop path "while.198/while.195"
  SourceLocation location;  // from metadata
  std::string op_name;      // metadata op_name
  std::string direction;    // backward / forward / forward-sink / ...
  std::string message;      // what happened, or why not
  std::string suggestion;   // for missed remarks
  // Numeric facts: bytes_moved, extra_live_bytes, trip_count, depth, ...
  std::vector<std::pair<std::string, int64_t>> metrics;
  // Something the user asked for did not happen as asked (a --loop
  // selector that matches no loop, a clamped depth): the tool also prints
  // it on stderr as a warning, whether or not remarks were requested.
  bool warn = false;

  Remark& Metric(std::string key, int64_t value) {
    metrics.emplace_back(std::move(key), value);
    return *this;
  }
};

class RemarkSink {
 public:
  // A warning already emitted for the same instruction, name and message
  // (by any pass) is not repeated.
  void Emit(Remark remark);
  const std::vector<Remark>& remarks() const { return remarks_; }
  void Clear() { remarks_.clear(); }
  int64_t Count(RemarkKind kind) const;

  // Readable text, one remark per paragraph.
  std::string ToText() const;
  // The remarks marked `warn`, as "warning: " lines (empty if none).
  std::string WarningsText() const;
  // One JSON object per line.
  std::string ToJsonLines() const;

 private:
  std::vector<Remark> remarks_;
};

// Fills location/op_name/instruction/opcode of a remark from an instruction.
void DescribeInstruction(const Instruction& instr, const Module& module,
                         Remark& remark);

// The KnownTripCountContradicted warning of a loop whose known_trip_count
// its condition contradicts (WhileLoopInfo::contradiction), emitted by
// `pass` for the loop at `loop_path`; nothing when there is none.
void EmitTripCountWarning(const WhileLoopInfo& info, std::string_view pass,
                          std::string loop_path, RemarkSink& sink);

}  // namespace hloverlap

#endif  // HLOVERLAP_PASSES_REMARKS_H_
