// Module summary: call graph walk, loop tree, collectives (see the header).
#include "analysis/module_summary.h"

#include <charconv>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/collective_ops.h"
#include "analysis/while_loop_analysis.h"
#include "hlo/opcode_traits.h"
#include "hlo/shape_inference.h"
#include "nlohmann/json.hpp"

namespace hloverlap {
namespace {

std::optional<int64_t> CheckedMul(std::optional<int64_t> a,
                                  std::optional<int64_t> b) {
  if (!a || !b) return std::nullopt;
  int64_t r = 0;
  if (__builtin_mul_overflow(*a, *b, &r)) return std::nullopt;
  return r;
}

std::optional<int64_t> CheckedAdd(std::optional<int64_t> a,
                                  std::optional<int64_t> b) {
  if (!a || !b) return std::nullopt;
  int64_t r = 0;
  if (__builtin_add_overflow(*a, *b, &r)) return std::nullopt;
  return r;
}

int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return INT64_MAX;
  return r;
}

std::string RoleFor(Opcode opcode, size_t index) {
  switch (opcode) {
    case Opcode::kWhile:
      return index == 0 ? "while condition" : "while body";
    case Opcode::kFusion:
      return "fused";
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
      return "async wrapped";
    case Opcode::kConditional:
      return "branch";
    case Opcode::kCall:
      return "call";
    case Opcode::kCustomCall:
      return "custom-call callee";
    default:
      return "applied";
  }
}

}  // namespace

std::string_view CollectiveKind(const Instruction& instruction) {
  switch (instruction.opcode()) {
    case Opcode::kAllGatherStart:
    case Opcode::kAllReduceStart:
    case Opcode::kCollectivePermuteStart:
      return CollectiveKindName(ClassifyCollective(instruction)->kind);
    default:
      break;
  }
  if (IsCollective(instruction.opcode())) {
    return OpcodeName(instruction.opcode());
  }
  return {};
}

int64_t CollectiveResultBytes(const Instruction& instruction) {
  const Shape& shape = instruction.shape();
  switch (instruction.opcode()) {
    case Opcode::kAllGatherStart:
    case Opcode::kAllReduceStart:
    case Opcode::kCollectivePermuteStart: {
      const Shape* result = NativeStartResultPart(instruction.opcode(), shape);
      return result != nullptr ? result->ByteSize() : shape.ByteSize();
    }
    default:
      return shape.ByteSize();
  }
}

std::string CollectiveGroupsText(const Instruction& instruction) {
  const InstructionAttributes& attrs = instruction.attrs();
  if (attrs.replica_groups->present()) {
    return absl::StrCat("replica_groups=", attrs.replica_groups->ToString());
  }
  if (!attrs.source_target_pairs.empty()) {
    std::string out = "source_target_pairs={";
    bool first = true;
    for (const auto& [s, t] : attrs.source_target_pairs) {
      if (!first) out.push_back(',');
      first = false;
      absl::StrAppend(&out, "{", s, ",", t, "}");
    }
    out.push_back('}');
    return out;
  }
  return "";
}

namespace {

// Roles from every call site in the module (first one wins).
absl::flat_hash_map<const Computation*, std::string> CallSiteRoles(
    const Module& module) {
  absl::flat_hash_map<const Computation*, std::string> roles;
  for (const auto& comp : module.computations()) {
    if (comp == nullptr) continue;
    for (const auto& inst : comp->instructions()) {
      if (inst == nullptr) continue;
      const auto& called = inst->called_computations();
      for (size_t i = 0; i < called.size(); ++i) {
        if (called[i] == nullptr) continue;
        roles.try_emplace(called[i], RoleFor(inst->opcode(), i));
      }
    }
  }
  return roles;
}

// A work item of the walk from the entry: a computation in a loop context,
// reached through an async wrapper or not, and whether its collectives are
// counted: not inside a fusion or async wrapper that ClassifyCollective
// (analysis/collective_ops.h) already counted, as the simulator counts
// them.
struct WalkItem {
  const Computation* computation;
  int loop;
  bool via_async;
  bool counted = false;
};

// The collective op itself (inside the fusion or wrapper that performs it):
// its name, computation, bytes and groups.
CollectiveSummary SummarizeCollective(const CollectiveOp& op,
                                      const WalkItem& item,
                                      const ModuleSummary& s) {
  const Instruction& coll = *op.collective;
  CollectiveSummary c;
  c.instruction = &coll;
  c.name = coll.name();
  c.kind = std::string(CollectiveKindName(op.kind));
  c.async = item.via_async || op.async;
  c.computation = coll.parent() != nullptr ? coll.parent()->name()
                                           : item.computation->name();
  c.loop = item.loop;
  c.bytes = CollectiveResultBytes(coll);
  c.groups = CollectiveGroupsText(coll);
  c.executions = item.loop < 0 ? std::optional<int64_t>(1)
                               : s.loops[item.loop].body_executions;
  return c;
}

// The loop of `inst` (a while with a condition and a body) met in `item`.
LoopSummary SummarizeLoop(const Instruction& inst, const WalkItem& item,
                          const ModuleSummary& s) {
  const auto& called = inst.called_computations();
  LoopSummary loop;
  loop.instruction = &inst;
  loop.name = inst.name();
  loop.computation = item.computation->name();
  loop.condition = called[0]->name();
  loop.body = called[1]->name();
  loop.op_name = inst.metadata().op_name;
  WhileLoopInfo info = AnalyzeWhileLoop(inst);
  if (info.has_induction_variable()) {
    loop.iv_index = info.iv_index;
    loop.iv_start = info.start;
    loop.iv_step = info.step->ToSigned();  // -1, not 4294967295
    loop.iv_bound = info.bound;
  }
  loop.trip_count = info.trip_count;
  loop.trip_count_warning = info.contradiction;
  if (info.trip_count_source == TripCountSource::kKnownTripCount ||
      (info.trip_count_proven() && info.known_trip_count == info.trip_count)) {
    loop.trip_count_source = LoopSummary::TripCountSource::kBackendConfig;
  } else if (info.trip_count_proven()) {
    loop.trip_count_source = LoopSummary::TripCountSource::kInferred;
  } else {
    loop.unknown_reason = info.missing.empty()
                              ? std::string("no known_trip_count")
                              : info.missing;
  }
  loop.parent = item.loop;
  loop.depth = item.loop < 0 ? 0 : s.loops[item.loop].depth + 1;
  std::optional<int64_t> outer = item.loop < 0
                                     ? std::optional<int64_t>(1)
                                     : s.loops[item.loop].body_executions;
  loop.body_executions = CheckedMul(outer, loop.trip_count);
  return loop;
}

// Walks from the entry, filling s.loops, s.collectives, s.max_loop_depth
// and s.truncated; returns the computations reached.
absl::flat_hash_set<const Computation*> WalkFromEntry(const Module& module,
                                                      ModuleSummary& s) {
  absl::flat_hash_set<std::tuple<const Computation*, int, bool, bool>> visited;
  absl::flat_hash_set<const Computation*> reachable;
  std::vector<WalkItem> stack;
  if (module.entry() != nullptr) stack.push_back({module.entry(), -1, false});

  auto loop_is_ancestor = [&](int loop, const Instruction* while_inst) {
    for (int l = loop; l >= 0; l = s.loops[l].parent) {
      if (s.loops[l].instruction == while_inst) return true;
    }
    return false;
  };

  while (!stack.empty()) {
    WalkItem item = stack.back();
    stack.pop_back();
    if (!visited
             .insert(
                 {item.computation, item.loop, item.via_async, item.counted})
             .second) {
      continue;
    }
    reachable.insert(item.computation);
    std::vector<WalkItem> next;  // pushed in reverse to keep text order
    for (const auto& inst_ptr : item.computation->instructions()) {
      const Instruction* inst = inst_ptr.get();
      if (inst == nullptr) continue;
      std::optional<CollectiveOp> op =
          item.counted ? std::nullopt : ClassifyCollective(*inst);
      if (op.has_value()) {
        s.collectives.push_back(SummarizeCollective(*op, item, s));
      }
      const auto& called = inst->called_computations();
      if (inst->opcode() == Opcode::kWhile && called.size() >= 2 &&
          called[0] != nullptr && called[1] != nullptr) {
        if (loop_is_ancestor(item.loop, inst)) continue;  // recursive
        if (static_cast<int>(s.loops.size()) >= kMaxLoopNodes) {
          s.truncated = true;
          continue;
        }
        LoopSummary loop = SummarizeLoop(*inst, item, s);
        int index = static_cast<int>(s.loops.size());
        if (item.loop >= 0) s.loops[item.loop].children.push_back(index);
        s.max_loop_depth = std::max(s.max_loop_depth, loop.depth + 1);
        s.loops.push_back(std::move(loop));
        next.push_back({called[0], index, item.via_async, item.counted});
        next.push_back({called[1], index, item.via_async, item.counted});
        for (size_t i = 2; i < called.size(); ++i) {
          if (called[i] != nullptr) {
            next.push_back(
                {called[i], item.loop, item.via_async, item.counted});
          }
        }
        continue;
      }
      bool async = item.via_async || inst->opcode() == Opcode::kAsyncStart;
      bool counted = item.counted || op.has_value();
      for (const Computation* callee : called) {
        if (callee != nullptr) {
          next.push_back({callee, item.loop, async, counted});
        }
      }
    }
    for (auto it = next.rbegin(); it != next.rend(); ++it) stack.push_back(*it);
  }
  return reachable;
}

// s.computations, s.instruction_count and s.reachable_instruction_count.
void SummarizeComputations(
    const Module& module,
    const absl::flat_hash_set<const Computation*>& reachable,
    ModuleSummary& s) {
  const absl::flat_hash_map<const Computation*, std::string> roles =
      CallSiteRoles(module);
  for (const auto& comp : module.computations()) {
    if (comp == nullptr) continue;
    ComputationSummary c;
    c.computation = comp.get();
    c.name = comp->name();
    c.instruction_count = comp->instruction_count();
    c.reachable = reachable.contains(comp.get());
    if (comp.get() == module.entry()) {
      c.role = "entry";
    } else if (auto it = roles.find(comp.get()); it != roles.end()) {
      c.role = it->second;
    } else {
      c.role = "unused";
    }
    s.instruction_count =
        SaturatingAdd(s.instruction_count, c.instruction_count);
    if (c.reachable) {
      s.reachable_instruction_count =
          SaturatingAdd(s.reachable_instruction_count, c.instruction_count);
    }
    s.computations.push_back(std::move(c));
  }
}

// s.groups, s.kind_totals and the module's collective totals, from
// s.collectives.
void AggregateCollectives(ModuleSummary& s) {
  absl::flat_hash_map<std::string, int> group_index;
  absl::flat_hash_map<std::string, int> kind_index;
  std::optional<int64_t> all_weighted = 0;
  for (const CollectiveSummary& c : s.collectives) {
    std::optional<int64_t> weighted =
        CheckedMul(std::optional<int64_t>(c.bytes), c.executions);
    std::string key =
        absl::StrCat(c.loop, "\x1f", c.loop < 0 ? c.computation : "", "\x1f",
                     c.kind, "\x1f", c.groups);
    auto [git, inserted] =
        group_index.try_emplace(key, static_cast<int>(s.groups.size()));
    if (inserted) {
      CollectiveGroup g;
      g.loop = c.loop;
      g.computation = c.loop < 0 ? c.computation : s.loops[c.loop].body;
      g.kind = c.kind;
      g.groups = c.groups;
      g.bytes_per_execution = 0;
      s.groups.push_back(std::move(g));
    }
    CollectiveGroup& g = s.groups[git->second];
    ++g.count;
    if (c.async) ++g.async_count;
    g.bytes = SaturatingAdd(g.bytes, c.bytes);
    g.bytes_per_execution = CheckedAdd(g.bytes_per_execution, weighted);

    auto [kit, kinserted] =
        kind_index.try_emplace(c.kind, static_cast<int>(s.kind_totals.size()));
    if (kinserted) {
      CollectiveKindTotal t;
      t.kind = c.kind;
      t.bytes_per_execution = 0;
      s.kind_totals.push_back(std::move(t));
    }
    CollectiveKindTotal& t = s.kind_totals[kit->second];
    ++t.count;
    t.bytes = SaturatingAdd(t.bytes, c.bytes);
    t.bytes_per_execution = CheckedAdd(t.bytes_per_execution, weighted);

    ++s.collective_count;
    s.collective_bytes = SaturatingAdd(s.collective_bytes, c.bytes);
    all_weighted = CheckedAdd(all_weighted, weighted);
  }
  s.collective_bytes_per_execution = all_weighted;
}

}  // namespace

ModuleSummary SummarizeModule(const Module& module) {
  ModuleSummary s;
  s.module_name = module.name();
  s.replica_count = module.replica_count();
  s.num_partitions = module.num_partitions();
  s.is_scheduled = module.is_scheduled();
  if (module.entry() != nullptr) s.entry = module.entry()->name();
  const absl::flat_hash_set<const Computation*> reachable =
      WalkFromEntry(module, s);
  SummarizeComputations(module, reachable, s);
  AggregateCollectives(s);
  return s;
}

}  // namespace hloverlap
