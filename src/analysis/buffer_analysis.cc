// Buffers, aliases and liveness (see the header).
#include "analysis/buffer_analysis.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "analysis/collective_ops.h"
#include "hlo/instruction.h"

namespace hloverlap {

BufferAnalysis::BufferAnalysis(const Computation& computation) {
  const auto& instrs = computation.instructions();
  leaves_.reserve(instrs.size());
  // Operands first: the IR has no cycles, but its instruction order need
  // not be a topological one.
  std::vector<int64_t> bytes;
  for (const Instruction* i : computation.MakeInstructionPostOrder()) {
    std::vector<LeafSource> sources = ResultLeafSources(*i);
    bytes.clear();
    AppendLeafBytes(i->shape(), bytes);
    std::vector<int32_t> ids(sources.size(), -1);
    for (size_t k = 0; k < sources.size(); ++k) {
      const LeafSource& s = sources[k];
      if (s.kind == LeafKind::kAliases) {
        auto it = leaves_.find(i->operand(s.operand));
        if (it != leaves_.end() &&
            s.operand_leaf < static_cast<int64_t>(it->second.size())) {
          ids[k] = it->second[s.operand_leaf];
        }
        continue;
      }
      if (k >= bytes.size() || bytes[k] <= 0) continue;
      ids[k] = static_cast<int32_t>(buffers_.size());
      buffers_.push_back(Buffer{i, static_cast<int64_t>(k), bytes[k], s.kind});
    }
    leaves_[i] = std::move(ids);
  }
}

absl::Span<const int32_t> BufferAnalysis::LeafBuffers(
    const Instruction* instr) const {
  auto it = leaves_.find(instr);
  if (it == leaves_.end()) return {};
  return it->second;
}

std::vector<int32_t> BufferAnalysis::BuffersHeld(
    const Instruction* instr) const {
  absl::Span<const int32_t> leaves = LeafBuffers(instr);
  std::vector<int32_t> out;
  for (int32_t id : leaves) {
    if (id >= 0) out.push_back(id);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

int64_t BufferAnalysis::DefinedBytes(const Instruction* instr,
                                     LeafKind kind) const {
  int64_t total = 0;
  for (int32_t id : LeafBuffers(instr)) {
    if (id < 0) continue;
    const Buffer& b = buffers_[id];
    if (b.defining == instr && b.kind == kind) total += b.bytes;
  }
  return total;
}

namespace {

// Nesting depth of called computations followed (the IR has no recursion;
// deep generated nests should not blow the stack).
constexpr int kMaxDepth = 64;

std::vector<const Instruction*> InstructionOrder(const Computation& c) {
  std::vector<const Instruction*> order;
  order.reserve(c.instructions().size());
  for (const auto& i : c.instructions()) order.push_back(i.get());
  return order;
}

class Liveness {
 public:
  MemoryPeak Analyze(const Computation& c,
                     absl::Span<const Instruction* const> sequence,
                     bool is_entry, bool is_body, int depth);

 private:
  // Per buffer of the analysis, over the sequence so far.
  struct Range {
    int64_t def = -1;   // position of the definition; -1 before it
    int64_t last = -1;  // last use
    int64_t size = 0;
    // The latest position of a user of a value holding the buffer so far
    // (INT64_MAX for a user outside the sequence), and whether one of
    // those values is a parameter or the root (it then never dies here).
    int64_t last_holder_use = -1;
    bool pinned = false;
    bool scratch = false;
    int32_t merged_into = -1;  // took a dying operand's buffer
  };

  MemoryPeak SubPeak(const Computation& c, bool is_body, int depth) {
    auto it = memo_.find(&c);
    if (it != memo_.end()) return it->second;
    memo_[&c] = MemoryPeak{};  // no recursion in valid IR; guard anyway
    MemoryPeak r = Analyze(c, InstructionOrder(c), false, is_body, depth);
    memo_[&c] = r;
    return r;
  }

  // The largest peak of the computations `i` runs while it executes (a
  // loop's condition and body, a call's or conditional's callees, an
  // async wrapper's unless it performs a collective); zero bytes if none.
  MemoryPeak CalledPeak(const Instruction& i, int depth) {
    MemoryPeak peak;
    auto consider = [&](const Computation* callee, bool body) {
      if (callee == nullptr) return;
      MemoryPeak r = SubPeak(*callee, body, depth + 1);
      if (r.bytes > peak.bytes) peak = r;
    };
    const Opcode op = i.opcode();
    if (op == Opcode::kWhile && i.called_computations().size() >= 2) {
      consider(i.while_condition(), false);
      consider(i.while_body(), true);
    } else if (op == Opcode::kCall || op == Opcode::kConditional ||
               (op == Opcode::kAsyncStart &&
                !ClassifyCollective(i).has_value())) {
      for (const Computation* callee : i.called_computations()) {
        consider(callee, false);
      }
    }
    return peak;
  }

  absl::flat_hash_map<const Computation*, MemoryPeak> memo_;
  absl::flat_hash_map<const Instruction*, std::string> sub_at_;
};

MemoryPeak Liveness::Analyze(const Computation& c,
                             absl::Span<const Instruction* const> sequence,
                             bool is_entry, bool is_body, int depth) {
  MemoryPeak result;
  if (depth > kMaxDepth) return result;
  const BufferAnalysis analysis(c);
  const std::vector<Buffer>& buffers = analysis.buffers();
  std::vector<Range> ranges(buffers.size());
  const int64_t n = static_cast<int64_t>(sequence.size());
  std::vector<int64_t> extra(n + 1, 0);
  absl::flat_hash_map<const Instruction*, int64_t> position;
  position.reserve(sequence.size());
  for (int64_t p = 0; p < n; ++p) position[sequence[p]] = p;

  // The buffer a leaf holds at this point of the walk: none before its
  // definition (a use ahead of the definition in a non-topological
  // order), the dying operand's where the definer took one over.
  auto resolve = [&](int32_t id) -> int32_t {
    if (id < 0 || ranges[id].def < 0) return -1;
    while (ranges[id].merged_into >= 0) id = ranges[id].merged_into;
    return id;
  };
  auto holds = [&](const Instruction* instr) {
    std::vector<int32_t> ids;
    for (int32_t id : analysis.LeafBuffers(instr)) ids.push_back(resolve(id));
    return ids;
  };

  for (int64_t p = 0; p < n; ++p) {
    const Instruction& i = *sequence[p];
    const Opcode op = i.opcode();
    // Uses.
    for (const Instruction* o : i.operands()) {
      for (int32_t leaf : analysis.LeafBuffers(o)) {
        int32_t id = resolve(leaf);
        if (id >= 0 && !ranges[id].scratch) {
          ranges[id].last = std::max(ranges[id].last, p);
        }
      }
    }
    // Definitions.
    for (int32_t id : analysis.LeafBuffers(&i)) {
      if (id < 0 || buffers[id].defining != &i) continue;
      Range& r = ranges[id];
      r.scratch = buffers[id].kind == LeafKind::kScratch;
      if (buffers[id].kind == LeafKind::kOutside) {
        r.def = 0;
        r.last = 0;
        if (is_entry) {
          r.size = buffers[id].bytes;
          result.parameter_bytes += r.size;
        }
      } else {
        r.def = p;
        r.last = p;
        r.size = buffers[id].bytes;
      }
    }
    std::vector<int32_t> ids = holds(&i);
    // XLA's buffer assignment lets an elementwise op or fusion write its
    // output into an operand buffer of the same size that dies there (no
    // later user, no alias of it such as a tuple, get-tuple-element,
    // bitcast or loop state). The output then takes the operand's buffer.
    if ((op == Opcode::kFusion || IsElementwise(op)) && ids.size() == 1 &&
        ids[0] >= 0 && ranges[ids[0]].def == p && ranges[ids[0]].size > 0 &&
        buffers[ids[0]].defining == &i) {
      for (const Instruction* o : i.operands()) {
        if (o->opcode() == Opcode::kParameter ||
            o->opcode() == Opcode::kConstant) {
          continue;
        }
        std::vector<int32_t> held = holds(o);
        if (held.size() != 1 || held[0] < 0) continue;
        const Range& b = ranges[held[0]];
        if (b.size != ranges[ids[0]].size) continue;
        // Every holder of the buffer (o, what o aliases, what aliases o)
        // must have no user after i (i itself is the only user at p).
        if (b.pinned || b.last_holder_use > p || b.last > p) continue;
        ranges[ids[0]].size = 0;
        ranges[ids[0]].merged_into = held[0];
        ids[0] = held[0];
        break;
      }
    }
    const MemoryPeak sub = CalledPeak(i, depth);
    extra[p] = sub.bytes;
    if (sub.bytes > 0) sub_at_[&i] = sub.at;
    if (!ids.empty()) {
      int64_t last_use = -1;
      for (const Instruction* u : i.users()) {
        auto up = position.find(u);
        last_use =
            up == position.end() ? INT64_MAX : std::max(last_use, up->second);
        if (last_use == INT64_MAX) break;
      }
      bool pinned = op == Opcode::kParameter || &i == c.root();
      for (int32_t id : ids) {
        if (id < 0) continue;
        ranges[id].last_holder_use =
            std::max(ranges[id].last_holder_use, last_use);
        ranges[id].pinned = ranges[id].pinned || pinned;
      }
    }
  }
  // Outputs live to the end; a loop body's outputs take over the loop
  // state's buffers (already counted by the caller).
  if (c.root() != nullptr && position.contains(c.root())) {
    for (int32_t id : holds(c.root())) {
      if (id < 0) continue;
      if (is_body) {
        ranges[id].size = 0;
      } else if (!ranges[id].scratch) {
        ranges[id].last = n;
      }
    }
  }
  for (size_t id = 0; id < buffers.size(); ++id) {
    if (buffers[id].kind == LeafKind::kOutside && ranges[id].def >= 0) {
      ranges[id].last = n;
    }
  }
  std::vector<int64_t> delta(n + 2, 0);
  for (const Range& b : ranges) {
    if (b.size <= 0 || b.def < 0) continue;
    delta[b.def] += b.size;
    delta[std::min<int64_t>(b.last, n) + 1] -= b.size;
  }
  int64_t live = 0;
  for (int64_t p = 0; p < n; ++p) {
    live += delta[p];
    int64_t total = live + extra[p];
    if (total > result.bytes) {
      result.bytes = total;
      const Instruction* at = sequence[p];
      auto s = sub_at_.find(at);
      result.at = extra[p] > 0 && s != sub_at_.end() && !s->second.empty()
                      ? s->second
                      : absl::StrCat(at->name(), " (", c.name(), ")");
    }
  }
  return result;
}

}  // namespace

MemoryPeak PeakOverSequence(const Computation& computation,
                            absl::Span<const Instruction* const> sequence,
                            bool is_entry, bool is_loop_body) {
  return Liveness().Analyze(computation, sequence, is_entry, is_loop_body, 0);
}

MemoryPeak ModulePeakMemory(const Module& module) {
  const Computation* entry = module.entry();
  if (entry == nullptr) return MemoryPeak{};
  return PeakOverSequence(*entry, InstructionOrder(*entry), /*is_entry=*/true,
                          /*is_loop_body=*/false);
}

}  // namespace hloverlap
