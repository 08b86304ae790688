// Timeline simulator (see the header).
#include "sim/simulator.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/module_summary.h"
#include "analysis/while_loop_analysis.h"
#include "hlo/absl_compat.h"
#include "hlo/computation.h"
#include "hlo/instruction.h"
#include "nlohmann/json.hpp"

namespace hloverlap {

namespace {

constexpr std::string_view kSimPresetText =
#include "sim/sim_preset.inc"
    ;

}  // namespace

std::string_view DefaultSimPresetText() { return kSimPresetText; }

SimOptions::SimOptions() : spec(H200Spec()) {
  // The compiled-in text is tested; were it broken the factors stay at 1.
  absl::Status st = ApplySimOverrides(*this, kSimPresetText);
  (void)st;
}

namespace {

// Nesting depth of control flow followed (the IR has no recursion; deep
// generated nests should not blow the stack).
constexpr int kMaxDepth = 64;
// Trace events kept at most (a huge expanded loop still gives a trace).
constexpr size_t kMaxEvents = 4'000'000;

// What one scheduled instruction does on the timeline.
enum class StepKind {
  kNop,
  kKernel,           // compute stream, `duration`
  kSyncCollective,   // compute stream, waits for the collective stream
  kCollectiveStart,  // collective stream, `duration`
  kAsyncStart,       // async compute stream, `duration`
  kDone,             // waits for `start`
  kWhile,
  kCall,         // callees run in order
  kConditional,  // the most expensive branch
};

struct Step {
  const Instruction* instr = nullptr;
  StepKind kind = StepKind::kNop;
  double duration = 0;
  const Instruction* start = nullptr;   // kDone
  int64_t trip_count = 1;               // kWhile
  const Computation* callee = nullptr;  // kConditional: chosen branch
  int64_t collective = -1;    // index into SimResult::collectives, lazily
  bool memory_bound = false;  // kKernel: bytes, not FLOPs, set the time
  double flops = 0;           // kKernel
  double bytes = 0;           // kKernel
};

struct Pending {
  double end = 0;
  int64_t collective = -1;  // -1: async compute
  int64_t event = -1;       // trace event of the collective / async op
};

// a + b for a count extrapolated in double, saturated (no overflow on
// absurd trip counts).
int64_t SatAdd(int64_t a, double b) {
  double r = static_cast<double>(a) + b;
  if (!(r < 9.2e18)) return INT64_MAX;
  if (r < 0) return 0;
  return static_cast<int64_t>(r);
}

std::string LoopLabel(const Instruction& w, int64_t trips) {
  return absl::StrCat(w.name(), " x", trips);
}

std::string CollectiveKindName(Opcode op) {
  switch (op) {
    case Opcode::kAllGather:
      return "all-gather";
    case Opcode::kAllReduce:
      return "all-reduce";
    case Opcode::kReduceScatter:
      return "reduce-scatter";
    case Opcode::kAllToAll:
      return "all-to-all";
    case Opcode::kRaggedAllToAll:
      return "ragged-all-to-all";
    case Opcode::kCollectivePermute:
      return "collective-permute";
    case Opcode::kCollectiveBroadcast:
      return "collective-broadcast";
    default:
      return "collective";
  }
}

// The collective instruction an async start wraps (itself otherwise).
const Instruction* WrappedCollective(const Instruction& instr) {
  if (instr.opcode() != Opcode::kAsyncStart) return &instr;
  const Computation* wrapped = instr.to_apply();
  if (wrapped == nullptr) return &instr;
  if (wrapped->root() != nullptr && IsCollective(wrapped->root()->opcode())) {
    return wrapped->root();
  }
  for (const auto& i : wrapped->instructions()) {
    if (IsCollective(i->opcode())) return i.get();
  }
  return &instr;
}

class Simulator {
 public:
  Simulator(const Module& module, const SimOptions& options)
      : module_(module),
        options_(options),
        model_(options.spec, options.table) {}

  SimResult Run() {
    result_.gpu = options_.spec.name;
    RunComputation(*module_.entry(), 0);
    double end = std::max({t_, coll_free_, async_free_});
    result_.step_time_us = end;
    return std::move(result_);
  }

 private:
  int64_t DefaultDevices() const {
    if (options_.devices > 0) return options_.devices;
    return std::max<int64_t>(1,
                             module_.num_partitions() *
                                 std::max<int64_t>(1, module_.replica_count()));
  }

  // The collective's info with the --devices override for "all devices"
  // groups.
  std::optional<CollectiveInfo> Info(const Instruction& instr) const {
    std::optional<CollectiveInfo> info = GpuCostModel::GetCollectiveInfo(instr);
    if (!info.has_value()) return info;
    const Instruction* coll = WrappedCollective(instr);
    if (info->opcode != Opcode::kCollectivePermute &&
        !coll->attrs().replica_groups->GroupSize().has_value()) {
      info->group_size = DefaultDevices();
    }
    return info;
  }

  int64_t CollectiveIndex(Step& step) {
    if (step.collective >= 0) return step.collective;
    const Instruction& instr = *step.instr;
    SimCollective c;
    c.name = instr.name();
    c.computation = instr.parent() != nullptr ? instr.parent()->name() : "";
    c.async = step.kind == StepKind::kCollectiveStart;
    std::optional<CollectiveInfo> info = Info(instr);
    if (info.has_value()) {
      c.kind = CollectiveKindName(info->opcode);
      c.bytes = info->bytes;
      c.group_size = info->group_size;
    } else {
      c.kind = instr.opcode() == Opcode::kRecv ? "recv" : "collective";
    }
    for (size_t i = 0; i < loop_stack_.size(); ++i) {
      if (i > 0) c.loop_path += " > ";
      c.loop_path += loop_stack_[i];
    }
    SourceLocation loc = module_.GetSourceLocation(instr.metadata());
    if (loc.known()) {
      c.source = absl::StrCat(loc.file, ":", loc.line);
    } else if (!instr.metadata().op_name.empty()) {
      c.source = instr.metadata().op_name;
    }
    step.collective = static_cast<int64_t>(result_.collectives.size());
    result_.collectives.push_back(std::move(c));
    return step.collective;
  }

  Step MakeStep(const Instruction& instr) {
    Step s;
    s.instr = &instr;
    Opcode op = instr.opcode();
    if (IsAsyncDone(op) || op == Opcode::kSendDone || op == Opcode::kRecvDone) {
      const Instruction* start =
          instr.operand_count() > 0 ? instr.operand(0) : nullptr;
      while (start != nullptr && start->opcode() == Opcode::kAsyncUpdate &&
             start->operand_count() > 0) {
        start = start->operand(0);
      }
      s.kind = StepKind::kDone;
      s.start = start;
      return s;
    }
    if (op == Opcode::kAsyncUpdate) return s;
    if (IsAsyncStart(op) || op == Opcode::kSend || op == Opcode::kRecv) {
      bool collective = op == Opcode::kRecv || Info(instr).has_value();
      if (collective) {
        s.kind = StepKind::kCollectiveStart;
        std::optional<CollectiveInfo> info = Info(instr);
        s.duration = info.has_value() ? model_.CollectiveTimeUs(*info)
                                      : model_.AsyncLatencyUs(instr);
      } else {
        s.kind = StepKind::kAsyncStart;
        s.duration = AsyncComputeTime(instr);
      }
      return s;
    }
    if (IsCollective(op)) {
      s.kind = StepKind::kSyncCollective;
      std::optional<CollectiveInfo> info = Info(instr);
      s.duration = info.has_value() ? model_.CollectiveTimeUs(*info) : 0;
      return s;
    }
    switch (op) {
      case Opcode::kWhile: {
        if (instr.called_computations().size() < 2) return s;
        s.kind = StepKind::kWhile;
        // The trip count of analysis/while_loop_analysis.h, as everywhere.
        const WhileLoopInfo info = AnalyzeWhileLoop(instr);
        s.trip_count = std::max<int64_t>(0, info.trip_count.value_or(1));
        if (!info.trip_count.has_value()) {
          result_.unknown_trip_counts.push_back(instr.name());
        }
        if (!info.contradiction.empty()) {
          result_.warnings.push_back(absl::StrCat(
              instr.name(),
              ": KnownTripCountContradicted: ", info.contradiction));
        }
        return s;
      }
      case Opcode::kCall:
        s.kind = StepKind::kCall;
        return s;
      case Opcode::kConditional: {
        s.kind = StepKind::kConditional;
        double best = -1;
        for (const Computation* c : instr.called_computations()) {
          double t = model_.ComputationTimeUs(*c);
          if (t > best) {
            best = t;
            s.callee = c;
          }
        }
        return s;
      }
      default:
        break;
    }
    OpCost cost = model_.Cost(instr);
    if (cost.kernels > 0 || cost.time_us > 0) {
      s.kind = StepKind::kKernel;
      s.duration = KernelTime(cost);
      s.memory_bound = cost.memory_us >= cost.compute_us;
      s.flops = cost.flops;
      s.bytes = cost.bytes;
    }
    return s;
  }

  // The roofline with the achieved-vs-ideal factors of SimOptions.
  double KernelTime(const OpCost& c) const {
    if (c.kernels <= 0) return c.time_us;  // not a kernel (callee time)
    double compute = c.compute_us / options_.compute_efficiency;
    double memory = c.memory_us / options_.memory_efficiency;
    return static_cast<double>(c.kernels) *
               (options_.spec.kernel_launch_us + options_.kernel_overhead_us) +
           std::max(compute, memory);
  }

  // Async compute: the wrapped computation's kernels; copy-start: a copy.
  double AsyncComputeTime(const Instruction& start) {
    if (start.opcode() != Opcode::kAsyncStart || start.to_apply() == nullptr) {
      return model_.AsyncLatencyUs(start);
    }
    double t = 0;
    for (const auto& i : start.to_apply()->instructions()) {
      t += KernelTime(model_.Cost(*i));
    }
    return t;
  }

  std::vector<Step>& Steps(const Computation& c) {
    auto it = steps_.find(&c);
    if (it != steps_.end()) return *it->second;
    std::vector<Step> steps;
    steps.reserve(c.instructions().size());
    for (const auto& i : c.instructions()) {
      Step s = MakeStep(*i);
      if (s.kind != StepKind::kNop) steps.push_back(s);
    }
    // Boxed: the vector must stay put while nested computations add theirs.
    return *steps_
                .emplace(&c,
                         std::make_unique<std::vector<Step>>(std::move(steps)))
                .first->second;
  }

  int64_t AddEvent(SimEvent::Track track, const std::string& name,
                   const char* category, double start, double duration) {
    if (!options_.record_trace || result_.events.size() >= kMaxEvents) {
      return -1;
    }
    SimEvent e;
    e.track = track;
    e.name = name;
    e.category = category;
    e.start_us = start;
    e.duration_us = duration;
    e.depth = static_cast<int>(loop_stack_.size());
    result_.events.push_back(std::move(e));
    return static_cast<int64_t>(result_.events.size()) - 1;
  }

  void Wait(const Step& step) {
    auto it = pending_.find(step.start);
    if (it == pending_.end()) return;
    Pending p = it->second;
    pending_.erase(it);
    double wait = std::max(0.0, p.end - t_);
    if (wait > 0) {
      if (p.collective >= 0) {
        result_.exposed_communication_us += wait;
        result_.collectives[p.collective].exposed_us += wait;
      } else {
        result_.async_compute_wait_us += wait;
      }
      AddEvent(SimEvent::Track::kCompute,
               absl::StrCat("wait ", step.instr->name()), "wait", t_, wait);
      t_ = p.end;
    }
    if (p.event >= 0) {
      result_.events[p.event].done_us = t_;
      result_.events[p.event].exposed_us = wait;
    }
  }

  void RunComputation(const Computation& c, int depth) {
    if (depth > kMaxDepth) return;
    std::vector<Step>& steps = Steps(c);
    for (size_t k = 0; k < steps.size(); ++k) {
      Step& s = steps[k];
      switch (s.kind) {
        case StepKind::kNop:
          break;
        case StepKind::kKernel:
          AddEvent(SimEvent::Track::kCompute, s.instr->name(), "kernel", t_,
                   s.duration);
          t_ += s.duration;
          result_.compute_us += s.duration;
          ++result_.kernels;
          (s.memory_bound ? result_.memory_bound_us
                          : result_.compute_bound_us) += s.duration;
          result_.flops += s.flops;
          result_.hbm_bytes += s.bytes;
          break;
        case StepKind::kSyncCollective: {
          int64_t ci = CollectiveIndex(s);
          double start = std::max(t_, coll_free_);
          double end = start + s.duration;
          SimCollective& col = result_.collectives[ci];
          ++col.count;
          col.time_us += s.duration;
          col.exposed_us += end - t_;
          result_.communication_us += s.duration;
          result_.exposed_communication_us += end - t_;
          int64_t ev = AddEvent(SimEvent::Track::kCollective, s.instr->name(),
                                "collective", start, s.duration);
          if (ev >= 0) {
            result_.events[ev].collective = ci;
            result_.events[ev].issue_us = t_;
            result_.events[ev].done_us = end;
            result_.events[ev].exposed_us = end - t_;
          }
          AddEvent(SimEvent::Track::kCompute, s.instr->name(),
                   "sync-collective", t_, end - t_);
          t_ = end;
          coll_free_ = end;
          break;
        }
        case StepKind::kCollectiveStart: {
          int64_t ci = CollectiveIndex(s);
          double start = std::max(t_, coll_free_);
          double end = start + s.duration;
          coll_free_ = end;
          SimCollective& col = result_.collectives[ci];
          ++col.count;
          col.time_us += s.duration;
          result_.communication_us += s.duration;
          int64_t ev = AddEvent(SimEvent::Track::kCollective, s.instr->name(),
                                "collective", start, s.duration);
          if (ev >= 0) {
            result_.events[ev].collective = ci;
            result_.events[ev].issue_us = t_;
          }
          pending_[s.instr] = Pending{end, ci, ev};
          break;
        }
        case StepKind::kAsyncStart: {
          double start = std::max(t_, async_free_);
          double end = start + s.duration;
          async_free_ = end;
          result_.async_compute_us += s.duration;
          int64_t ev = AddEvent(SimEvent::Track::kAsyncCompute, s.instr->name(),
                                "async", start, s.duration);
          if (ev >= 0) result_.events[ev].issue_us = t_;
          pending_[s.instr] = Pending{end, -1, ev};
          // What the compute stream loses to it (shared HBM / SMs).
          double lost = options_.async_compute_contention * s.duration;
          if (lost > 0) {
            AddEvent(SimEvent::Track::kCompute,
                     absl::StrCat("contention ", s.instr->name()), "contention",
                     t_, lost);
            t_ += lost;
            result_.compute_us += lost;
          }
          break;
        }
        case StepKind::kDone:
          Wait(s);
          break;
        case StepKind::kWhile:
          RunWhile(s, depth);
          break;
        case StepKind::kCall:
          for (const Computation* callee : s.instr->called_computations()) {
            RunComputation(*callee, depth + 1);
          }
          break;
        case StepKind::kConditional:
          if (s.callee != nullptr) RunComputation(*s.callee, depth + 1);
          break;
      }
    }
  }

  struct Snapshot {
    double t, coll_free, async_free, compute, comm, exposed, async_compute,
        async_wait, memory_bound, compute_bound, flops, bytes;
    int64_t kernels;
    std::vector<SimCollective> collectives;
  };

  Snapshot Take() const {
    return Snapshot{t_,
                    coll_free_,
                    async_free_,
                    result_.compute_us,
                    result_.communication_us,
                    result_.exposed_communication_us,
                    result_.async_compute_us,
                    result_.async_compute_wait_us,
                    result_.memory_bound_us,
                    result_.compute_bound_us,
                    result_.flops,
                    result_.hbm_bytes,
                    result_.kernels,
                    result_.collectives};
  }

  void RunWhile(const Step& s, int depth) {
    const Instruction& w = *s.instr;
    const Computation& cond = *w.while_condition();
    const Computation& body = *w.while_body();
    int64_t n = s.trip_count;
    int64_t simulate = std::min<int64_t>(
        n, std::max<int64_t>(1, options_.max_expanded_iterations));
    double loop_start = t_;
    int64_t loop_event =
        AddEvent(SimEvent::Track::kCompute, LoopLabel(w, n), "loop", t_, 0);
    loop_stack_.push_back(LoopLabel(w, n));
    Snapshot before;
    for (int64_t i = 0; i < simulate; ++i) {
      if (i == simulate - 1 && simulate < n) before = Take();
      double it_start = t_;
      int64_t it_event =
          AddEvent(SimEvent::Track::kCompute, absl::StrCat(w.name(), " #", i),
                   "iteration", t_, 0);
      RunComputation(cond, depth + 1);
      RunComputation(body, depth + 1);
      if (it_event >= 0) result_.events[it_event].duration_us = t_ - it_start;
    }
    if (simulate < n) {
      // Extrapolate the remaining iterations from the last one.
      Snapshot after = Take();
      double k = static_cast<double>(n - simulate);
      t_ += k * (after.t - before.t);
      coll_free_ += k * (after.coll_free - before.coll_free);
      async_free_ += k * (after.async_free - before.async_free);
      result_.compute_us += k * (after.compute - before.compute);
      result_.communication_us += k * (after.comm - before.comm);
      result_.exposed_communication_us += k * (after.exposed - before.exposed);
      result_.async_compute_us +=
          k * (after.async_compute - before.async_compute);
      result_.async_compute_wait_us +=
          k * (after.async_wait - before.async_wait);
      result_.kernels =
          SatAdd(result_.kernels, k * (after.kernels - before.kernels));
      result_.memory_bound_us += k * (after.memory_bound - before.memory_bound);
      result_.compute_bound_us +=
          k * (after.compute_bound - before.compute_bound);
      result_.flops += k * (after.flops - before.flops);
      result_.hbm_bytes += k * (after.bytes - before.bytes);
      for (size_t c = 0; c < result_.collectives.size(); ++c) {
        SimCollective& col = result_.collectives[c];
        const SimCollective* prev =
            c < before.collectives.size() ? &before.collectives[c] : nullptr;
        col.count = SatAdd(
            col.count, k * (col.count - (prev != nullptr ? prev->count : 0)));
        col.time_us +=
            k * (col.time_us - (prev != nullptr ? prev->time_us : 0));
        col.exposed_us +=
            k * (col.exposed_us - (prev != nullptr ? prev->exposed_us : 0));
      }
      result_.extrapolated_iterations = SatAdd(
          result_.extrapolated_iterations, static_cast<double>(n - simulate));
      AddEvent(SimEvent::Track::kCompute,
               absl::StrCat(w.name(), " #", simulate, "..#", n - 1,
                            " (extrapolated)"),
               "iteration", after.t, t_ - after.t);
    }
    RunComputation(cond, depth + 1);  // the exit test
    loop_stack_.pop_back();
    if (loop_event >= 0) {
      result_.events[loop_event].duration_us = t_ - loop_start;
    }
  }

  const Module& module_;
  const SimOptions& options_;
  GpuCostModel model_;
  SimResult result_;
  double t_ = 0;
  double coll_free_ = 0;
  double async_free_ = 0;
  std::vector<std::string> loop_stack_;
  absl::flat_hash_map<const Instruction*, Pending> pending_;
  absl::flat_hash_map<const Computation*, std::unique_ptr<std::vector<Step>>>
      steps_;
};

// --- Liveness ---------------------------------------------------------------

int64_t LeafCount(const Shape& shape) {
  if (!shape.IsTuple()) return 1;
  int64_t n = 0;
  for (const Shape& s : shape.tuple_shapes()) n += LeafCount(s);
  return n;
}

void AppendLeafBytes(const Shape& shape, std::vector<int64_t>& out) {
  if (shape.IsTuple()) {
    for (const Shape& s : shape.tuple_shapes()) AppendLeafBytes(s, out);
    return;
  }
  out.push_back(shape.IsArray() ? std::max<int64_t>(0, shape.ByteSize()) : 0);
}

// Output index -> operand number from `output_to_operand_aliasing=
// {{0}: (2, {})}` (top-level output indices only).
std::vector<std::pair<int64_t, int64_t>> OutputOperandAliasing(
    const Instruction& instr) {
  std::vector<std::pair<int64_t, int64_t>> out;
  const RawAttribute* a = instr.FindRawAttribute("output_to_operand_aliasing");
  if (a == nullptr) return out;
  const std::string& v = a->value;
  size_t pos = 0;
  while ((pos = v.find(':', pos)) != std::string::npos) {
    // Output index: digits inside the braces just before ':' ({} = 0).
    size_t close = v.rfind('}', pos);
    size_t open = close == std::string::npos ? close : v.rfind('{', close);
    int64_t out_index = 0;
    if (open != std::string::npos && close > open + 1) {
      out_index = std::atoll(v.c_str() + open + 1);
    }
    size_t paren = v.find('(', pos);
    if (paren == std::string::npos) break;
    int64_t operand = std::atoll(v.c_str() + paren + 1);
    out.emplace_back(out_index, operand);
    pos = paren;
  }
  return out;
}

// A cuBLAS GEMM custom-call, or a fusion around one (XLA's dynamic-slice
// GEMM fusions).
bool IsGemmKernel(const Instruction& i) {
  if (IsGemmCustomCall(i)) return true;
  if (i.opcode() != Opcode::kFusion || i.to_apply() == nullptr) return false;
  for (const auto& f : i.to_apply()->instructions()) {
    if (IsGemmCustomCall(*f)) return true;
  }
  return false;
}

// The operand an async-start's wrapped fusion updates in place (its fused
// root a dynamic-update-slice of that parameter), e.g. XLA's async
// `loop_dynamic_update_slice_fusion`s; nullopt otherwise.
std::optional<int64_t> AsyncInPlaceOperand(const Instruction& start) {
  if (start.opcode() != Opcode::kAsyncStart || start.to_apply() == nullptr) {
    return std::nullopt;
  }
  const Instruction* f = start.to_apply()->root();
  if (f == nullptr || f->opcode() != Opcode::kFusion ||
      f->to_apply() == nullptr || f->to_apply()->root() == nullptr) {
    return std::nullopt;
  }
  const Instruction* r = f->to_apply()->root();
  while (r->opcode() == Opcode::kBitcast && r->operand_count() > 0) {
    r = r->operand(0);
  }
  if (r->opcode() != Opcode::kDynamicUpdateSlice || r->operand_count() == 0) {
    return std::nullopt;
  }
  const Instruction* target = r->operand(0);
  while (target->opcode() == Opcode::kBitcast && target->operand_count() > 0) {
    target = target->operand(0);
  }
  if (target->opcode() != Opcode::kParameter) return std::nullopt;
  int64_t j = target->parameter_number();
  if (j < 0 || j >= f->operand_count()) return std::nullopt;
  const Instruction* q = f->operand(j);
  if (q->opcode() != Opcode::kParameter || q->parameter_number() < 0 ||
      q->parameter_number() >= start.operand_count()) {
    return std::nullopt;
  }
  return q->parameter_number();
}

class Liveness {
 public:
  explicit Liveness(const Module& module) : module_(module) {}

  PeakMemory Run() {
    PeakMemory p;
    const Computation* entry = module_.entry();
    if (entry == nullptr) return p;
    Result r = Analyze(*entry, /*is_entry=*/true, /*is_body=*/false, 0);
    p.bytes = r.peak;
    p.at = r.at;
    p.parameter_bytes = r.parameter_bytes;
    return p;
  }

 private:
  struct Result {
    int64_t peak = 0;
    std::string at;
    int64_t parameter_bytes = 0;
  };
  struct Buffer {
    int64_t size = 0;
    int64_t def = 0;
    int64_t last = 0;
    // Instructions whose value is (a leaf of) this buffer.
    absl::InlinedVector<const Instruction*, 2> holders;
    // A GEMM's workspace: scratch of that kernel only, even where XLA
    // threads it through a loop state (its contents are never read).
    bool scratch = false;
  };

  Result SubPeak(const Computation& c, bool is_body, int depth) {
    auto it = memo_.find(&c);
    if (it != memo_.end()) return it->second;
    memo_[&c] = Result{};  // no recursion in valid IR; guard anyway
    Result r = Analyze(c, false, is_body, depth);
    memo_[&c] = r;
    return r;
  }

  Result Analyze(const Computation& c, bool is_entry, bool is_body, int depth) {
    Result result;
    if (depth > kMaxDepth) return result;
    const auto& instrs = c.instructions();
    const int64_t n = static_cast<int64_t>(instrs.size());
    std::vector<Buffer> buffers;
    absl::flat_hash_map<const Instruction*, std::vector<int64_t>> leaves;
    leaves.reserve(instrs.size());
    std::vector<int64_t> extra(n + 1, 0);
    std::vector<int64_t> bytes_scratch;
    absl::flat_hash_map<const Instruction*, int64_t> position;
    position.reserve(instrs.size());
    for (int64_t p = 0; p < n; ++p) position[instrs[p].get()] = p;

    auto new_leaves = [&](const Shape& shape, int64_t pos) {
      bytes_scratch.clear();
      AppendLeafBytes(shape, bytes_scratch);
      std::vector<int64_t> ids;
      ids.reserve(bytes_scratch.size());
      for (int64_t b : bytes_scratch) {
        if (b <= 0) {
          ids.push_back(-1);
          continue;
        }
        ids.push_back(static_cast<int64_t>(buffers.size()));
        buffers.push_back(Buffer{b, pos, pos});
      }
      return ids;
    };
    auto operand_leaves = [&](const Instruction* o) -> std::vector<int64_t> {
      auto it = leaves.find(o);
      if (it != leaves.end()) return it->second;
      return std::vector<int64_t>(LeafCount(o->shape()), -1);
    };

    for (int64_t p = 0; p < n; ++p) {
      const Instruction& i = *instrs[p];
      // Uses.
      for (const Instruction* o : i.operands()) {
        auto it = leaves.find(o);
        if (it == leaves.end()) continue;
        for (int64_t id : it->second) {
          if (id >= 0 && !buffers[id].scratch) {
            buffers[id].last = std::max(buffers[id].last, p);
          }
        }
      }
      // Definitions.
      std::vector<int64_t> ids;
      const int64_t count = LeafCount(i.shape());
      Opcode op = i.opcode();
      switch (op) {
        case Opcode::kParameter:
          if (is_entry) {
            ids = new_leaves(i.shape(), 0);
            for (int64_t id : ids) {
              if (id >= 0) result.parameter_bytes += buffers[id].size;
            }
          } else {
            ids.assign(count, -1);
          }
          break;
        case Opcode::kGetTupleElement: {
          std::vector<int64_t> src = operand_leaves(i.operand(0));
          const Shape& os = i.operand(0)->shape();
          int64_t idx = i.tuple_index();
          if (os.IsTuple() && idx >= 0 && idx < os.tuple_size()) {
            int64_t off = 0;
            for (int64_t k = 0; k < idx; ++k) {
              off += LeafCount(os.tuple_shapes(k));
            }
            int64_t len = LeafCount(os.tuple_shapes(idx));
            if (off + len <= static_cast<int64_t>(src.size())) {
              ids.assign(src.begin() + off, src.begin() + off + len);
            }
          }
          break;
        }
        case Opcode::kTuple:
          for (const Instruction* o : i.operands()) {
            std::vector<int64_t> s = operand_leaves(o);
            ids.insert(ids.end(), s.begin(), s.end());
          }
          break;
        case Opcode::kBitcast:
        case Opcode::kReshape:
        case Opcode::kOptBarrier:
        case Opcode::kAddDependency:
        case Opcode::kDomain:
        case Opcode::kWhile:
        case Opcode::kDynamicUpdateSlice:
          if (i.operand_count() > 0) ids = operand_leaves(i.operand(0));
          break;
        default:
          if (IsAsyncDone(op) || op == Opcode::kAsyncUpdate) {
            if (i.operand_count() > 0) {
              std::vector<int64_t> src = operand_leaves(i.operand(0));
              const Shape& ss = i.operand(0)->shape();
              if (op != Opcode::kAsyncUpdate && ss.IsTuple() &&
                  ss.tuple_size() >= 2) {
                int64_t off = LeafCount(ss.tuple_shapes(0));
                int64_t len = LeafCount(ss.tuple_shapes(1));
                if (len == count &&
                    off + len <= static_cast<int64_t>(src.size())) {
                  ids.assign(src.begin() + off, src.begin() + off + len);
                }
              } else {
                ids = src;
              }
            }
          } else if (IsAsyncStart(op) && i.shape().IsTuple() &&
                     i.shape().tuple_size() >= 2) {
            std::vector<int64_t> in;
            for (const Instruction* o : i.operands()) {
              std::vector<int64_t> s = operand_leaves(o);
              in.insert(in.end(), s.begin(), s.end());
            }
            if (static_cast<int64_t>(in.size()) ==
                LeafCount(i.shape().tuple_shapes(0))) {
              ids = in;
              std::optional<int64_t> in_place = AsyncInPlaceOperand(i);
              for (int64_t k = 1; k < i.shape().tuple_size(); ++k) {
                if (k == 1 && in_place.has_value() &&
                    LeafCount(i.shape().tuple_shapes(1)) == 1) {
                  std::vector<int64_t> src =
                      operand_leaves(i.operand(*in_place));
                  if (src.size() == 1 && src[0] >= 0) {
                    ids.push_back(src[0]);
                    continue;
                  }
                }
                std::vector<int64_t> s =
                    new_leaves(i.shape().tuple_shapes(k), p);
                ids.insert(ids.end(), s.begin(), s.end());
              }
            }
          } else if (op == Opcode::kFusion || op == Opcode::kCustomCall) {
            ids = new_leaves(i.shape(), p);
            AliasInPlace(i, operand_leaves, ids, buffers);
          }
          if ((op == Opcode::kFusion || op == Opcode::kCustomCall) &&
              i.shape().IsTuple() && i.shape().tuple_size() >= 2 &&
              static_cast<int64_t>(ids.size()) == i.shape().tuple_size() &&
              IsGemmKernel(i)) {
            for (int64_t k = 1; k < i.shape().tuple_size(); ++k) {
              const Shape& ws = i.shape().tuple_shapes(k);
              if (ids[k] >= 0 && buffers[ids[k]].def == p && ws.IsArray() &&
                  ws.element_type() == PrimitiveType::kS8 && ws.rank() == 1) {
                buffers[ids[k]].scratch = true;
              }
            }
          }
          if (ids.empty() && IsElementwise(op)) ids = new_leaves(i.shape(), p);
          if ((op == Opcode::kFusion || IsElementwise(op)) && ids.size() == 1 &&
              ids[0] >= 0 && buffers[ids[0]].def == p &&
              buffers[ids[0]].size > 0) {
            ShareDyingOperand(i, p, c.root(), position, leaves, ids, buffers);
          }
          break;
      }
      if (static_cast<int64_t>(ids.size()) != count) {
        ids = new_leaves(i.shape(), p);
      }
      // Called computations' own peaks at this point.
      int64_t sub = 0;
      std::string sub_at;
      auto consider = [&](const Computation* callee, bool body) {
        if (callee == nullptr) return;
        Result r = SubPeak(*callee, body, depth + 1);
        if (r.peak > sub) {
          sub = r.peak;
          sub_at = r.at;
        }
      };
      if (op == Opcode::kWhile && i.called_computations().size() >= 2) {
        consider(i.while_condition(), false);
        consider(i.while_body(), true);
      } else if (op == Opcode::kCall || op == Opcode::kConditional ||
                 (op == Opcode::kAsyncStart &&
                  !IsCollective(WrappedCollective(i)->opcode()))) {
        for (const Computation* callee : i.called_computations()) {
          consider(callee, false);
        }
      }
      extra[p] = sub;
      if (sub > 0) sub_at_[&i] = sub_at;
      for (int64_t id : ids) {
        if (id >= 0) buffers[id].holders.push_back(&i);
      }
      leaves[&i] = std::move(ids);
    }
    // Outputs live to the end; a loop body's outputs take over the loop
    // state's buffers (already counted by the caller).
    if (c.root() != nullptr) {
      auto it = leaves.find(c.root());
      if (it != leaves.end()) {
        for (int64_t id : it->second) {
          if (id < 0) continue;
          if (is_body) {
            buffers[id].size = 0;
          } else if (!buffers[id].scratch) {
            buffers[id].last = n;
          }
        }
      }
    }
    if (is_entry) {
      for (const auto& i : instrs) {
        if (i->opcode() != Opcode::kParameter) continue;
        for (int64_t id : leaves[i.get()]) {
          if (id >= 0) buffers[id].last = n;
        }
      }
    }
    std::vector<int64_t> delta(n + 2, 0);
    for (const Buffer& b : buffers) {
      if (b.size <= 0) continue;
      delta[b.def] += b.size;
      delta[std::min<int64_t>(b.last, n) + 1] -= b.size;
    }
    int64_t live = 0;
    for (int64_t p = 0; p < n; ++p) {
      live += delta[p];
      int64_t total = live + extra[p];
      if (total > result.peak) {
        result.peak = total;
        const Instruction* at = instrs[p].get();
        auto s = sub_at_.find(at);
        result.at = extra[p] > 0 && s != sub_at_.end() && !s->second.empty()
                        ? s->second
                        : absl::StrCat(at->name(), " (", c.name(), ")");
      }
    }
    return result;
  }

  // XLA's buffer assignment lets an elementwise op or fusion write its
  // output into an operand buffer of the same size that dies there (no
  // later user, no alias of it such as a tuple, get-tuple-element, bitcast
  // or loop state). The output then takes the operand's buffer.
  static void ShareDyingOperand(
      const Instruction& i, int64_t p, const Instruction* root,
      const absl::flat_hash_map<const Instruction*, int64_t>& position,
      const absl::flat_hash_map<const Instruction*, std::vector<int64_t>>&
          leaves,
      std::vector<int64_t>& ids, std::vector<Buffer>& buffers) {
    for (const Instruction* o : i.operands()) {
      if (o->opcode() == Opcode::kParameter ||
          o->opcode() == Opcode::kConstant) {
        continue;
      }
      auto lv = leaves.find(o);
      if (lv == leaves.end() || lv->second.size() != 1 || lv->second[0] < 0) {
        continue;
      }
      int64_t id = lv->second[0];
      if (buffers[id].size != buffers[ids[0]].size) continue;
      // Every holder of the buffer (o, what o aliases, what aliases o) must
      // have no user after i.
      bool dies = true;
      for (const Instruction* h : buffers[id].holders) {
        if (h->opcode() == Opcode::kParameter || h == root) dies = false;
        for (const Instruction* u : h->users()) {
          if (u == &i) continue;
          auto up = position.find(u);
          if (up == position.end() || up->second >= p) dies = false;
        }
        if (!dies) break;
      }
      if (!dies || buffers[id].last > p) continue;
      buffers[ids[0]].size = 0;
      ids[0] = id;
      return;
    }
  }

  template <typename OperandLeaves>
  static void AliasInPlace(const Instruction& i, OperandLeaves& operand_leaves,
                           std::vector<int64_t>& ids,
                           std::vector<Buffer>& buffers) {
    auto alias = [&](int64_t out_index, int64_t operand) {
      if (operand < 0 || operand >= i.operand_count()) return;
      std::vector<int64_t> src = operand_leaves(i.operand(operand));
      if (src.size() != 1 || out_index < 0 ||
          out_index >= static_cast<int64_t>(ids.size())) {
        return;
      }
      if (ids[out_index] >= 0) buffers[ids[out_index]].size = 0;
      ids[out_index] = src[0];
    };
    for (auto [o, operand] : OutputOperandAliasing(i)) alias(o, operand);
    if (i.opcode() != Opcode::kFusion || i.to_apply() == nullptr) return;
    const Instruction* root = i.to_apply()->root();
    if (root == nullptr) return;
    std::vector<const Instruction*> roots;
    if (root->opcode() == Opcode::kTuple) {
      roots.assign(root->operands().begin(), root->operands().end());
    } else {
      roots.push_back(root);
    }
    if (static_cast<int64_t>(roots.size()) !=
        static_cast<int64_t>(ids.size())) {
      return;
    }
    for (size_t k = 0; k < roots.size(); ++k) {
      const Instruction* r = roots[k];
      while (r->opcode() == Opcode::kBitcast && r->operand_count() > 0) {
        r = r->operand(0);
      }
      if ((r->opcode() == Opcode::kDynamicUpdateSlice ||
           r->opcode() == Opcode::kScatter) &&
          r->operand_count() > 0) {
        const Instruction* target = r->operand(0);
        while (target->opcode() == Opcode::kBitcast &&
               target->operand_count() > 0) {
          target = target->operand(0);
        }
        if (target->opcode() == Opcode::kParameter) {
          alias(static_cast<int64_t>(k), target->parameter_number());
        }
      }
    }
  }

  const Module& module_;
  absl::flat_hash_map<const Computation*, Result> memo_;
  absl::flat_hash_map<const Instruction*, std::string> sub_at_;
};

std::string Ms(double us) { return absl::StrFormat("%.3f ms", us / 1000); }

std::string Bytes(int64_t b) {
  double v = static_cast<double>(b);
  if (v >= 1024.0 * 1024 * 1024) {
    return absl::StrFormat("%.2f GiB", v / (1024.0 * 1024 * 1024));
  }
  if (v >= 1024.0 * 1024)
    return absl::StrFormat("%.2f MiB", v / (1024.0 * 1024));
  if (v >= 1024.0) return absl::StrFormat("%.1f KiB", v / 1024.0);
  return absl::StrFormat("%d B", b);
}

std::vector<size_t> ByExposed(const SimResult& r) {
  std::vector<size_t> order(r.collectives.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (r.collectives[a].exposed_us != r.collectives[b].exposed_us) {
      return r.collectives[a].exposed_us > r.collectives[b].exposed_us;
    }
    return r.collectives[a].time_us > r.collectives[b].time_us;
  });
  return order;
}

}  // namespace

absl::StatusOr<SimResult> Simulate(const Module& module,
                                   const SimOptions& options) {
  if (module.entry() == nullptr) {
    return absl::InvalidArgumentError("module has no entry computation");
  }
  Simulator sim(module, options);
  SimResult r = sim.Run();
  PeakMemory peak = ComputePeakMemory(module);
  r.peak_memory_bytes = peak.bytes;
  r.peak_memory_at = peak.at;
  r.parameter_bytes = peak.parameter_bytes;
  return r;
}

PeakMemory ComputePeakMemory(const Module& module) {
  return Liveness(module).Run();
}

std::string FormatSimText(const SimResult& r, int top) {
  std::string out;
  double step = r.step_time_us;
  auto pct = [&](double v) { return step > 0 ? 100.0 * v / step : 0.0; };
  absl::StrAppendFormat(&out, "GPU model:                %s\n", r.gpu);
  absl::StrAppendFormat(&out, "step time:                %s\n", Ms(step));
  absl::StrAppendFormat(&out,
                        "compute:                  %s (%.1f%%), %d kernels\n",
                        Ms(r.compute_us), pct(r.compute_us), r.kernels);
  absl::StrAppendFormat(
      &out,
      "  compute-bound kernels:  %s (%.1f TFLOP, %.0f TFLOP/s achieved)\n"
      "  memory-bound kernels:   %s (%.1f GB of HBM traffic in all "
      "kernels)\n",
      Ms(r.compute_bound_us), r.flops / 1e12,
      r.compute_bound_us > 0 ? r.flops / r.compute_bound_us / 1e6 : 0.0,
      Ms(r.memory_bound_us), r.hbm_bytes / 1e9);
  absl::StrAppendFormat(&out, "communication:            %s (%.1f%%)\n",
                        Ms(r.communication_us), pct(r.communication_us));
  double hidden = r.communication_us - r.exposed_communication_us;
  absl::StrAppendFormat(
      &out,
      "exposed communication:    %s (%.1f%% of step; %.1f%% of "
      "communication hidden)\n",
      Ms(r.exposed_communication_us), pct(r.exposed_communication_us),
      r.communication_us > 0 ? 100.0 * hidden / r.communication_us : 100.0);
  if (r.async_compute_us > 0) {
    absl::StrAppendFormat(&out, "async compute:            %s (waited %s)\n",
                          Ms(r.async_compute_us), Ms(r.async_compute_wait_us));
  }
  if (!r.unknown_trip_counts.empty()) {
    absl::StrAppendFormat(&out, "unknown trip counts (run once): %s\n",
                          absl::StrJoin(r.unknown_trip_counts, ", "));
  }
  for (const std::string& w : r.warnings) {
    absl::StrAppend(&out, "warning: ", w, "\n");
  }
  if (r.extrapolated_iterations > 0) {
    absl::StrAppendFormat(&out, "extrapolated iterations:  %d\n",
                          r.extrapolated_iterations);
  }
  absl::StrAppendFormat(&out,
                        "peak memory (liveness):   %s (%d bytes; "
                        "parameters %s) at %s\n",
                        Bytes(r.peak_memory_bytes), r.peak_memory_bytes,
                        Bytes(r.parameter_bytes), r.peak_memory_at);
  if (r.xla_memory_report_bytes >= 0) {
    double diff =
        static_cast<double>(r.peak_memory_bytes - r.xla_memory_report_bytes);
    double x = static_cast<double>(r.xla_memory_report_bytes);
    absl::StrAppendFormat(&out,
                          "XLA buffer assignment:    %s; liveness peak - XLA "
                          "= %+.3f GiB (%+.1f%%)\n",
                          Bytes(r.xla_memory_report_bytes),
                          diff / (1024.0 * 1024 * 1024),
                          x > 0 ? 100.0 * diff / x : 0.0);
  }
  if (r.collectives.empty()) {
    out += "\nno collectives\n";
    return out;
  }
  out += "\ncollectives by exposed time:\n";
  absl::StrAppendFormat(&out, "  %-28s %-15s %10s %6s %11s %11s  %s\n", "name",
                        "kind", "bytes", "runs", "time ms", "exposed ms",
                        "loop / source");
  std::vector<size_t> order = ByExposed(r);
  size_t shown = 0;
  for (size_t idx : order) {
    if (top > 0 && shown >= static_cast<size_t>(top)) {
      absl::StrAppendFormat(&out, "  ... %d more\n", order.size() - shown);
      break;
    }
    const SimCollective& c = r.collectives[idx];
    std::string where = c.loop_path.empty() ? "(top level)" : c.loop_path;
    if (!c.source.empty()) where += "  " + c.source;
    absl::StrAppendFormat(&out, "  %-28s %-15s %10s %6d %11.3f %11.3f  %s\n",
                          c.name, c.kind + (c.async ? "" : " (sync)"),
                          Bytes(c.bytes), c.count, c.time_us / 1000,
                          c.exposed_us / 1000, where);
    ++shown;
  }
  return out;
}

std::string FormatSimJson(const SimResult& r) {
  nlohmann::ordered_json j;
  j["gpu"] = r.gpu;
  j["step_time_ms"] = r.step_time_us / 1000;
  j["compute_ms"] = r.compute_us / 1000;
  j["compute_bound_ms"] = r.compute_bound_us / 1000;
  j["memory_bound_ms"] = r.memory_bound_us / 1000;
  j["tflop"] = r.flops / 1e12;
  j["hbm_gb"] = r.hbm_bytes / 1e9;
  j["communication_ms"] = r.communication_us / 1000;
  j["exposed_communication_ms"] = r.exposed_communication_us / 1000;
  j["async_compute_ms"] = r.async_compute_us / 1000;
  j["async_compute_wait_ms"] = r.async_compute_wait_us / 1000;
  j["kernels"] = r.kernels;
  j["extrapolated_iterations"] = r.extrapolated_iterations;
  j["unknown_trip_counts"] = r.unknown_trip_counts;
  if (!r.warnings.empty()) j["warnings"] = r.warnings;
  j["peak_memory_bytes"] = r.peak_memory_bytes;
  j["peak_memory_at"] = r.peak_memory_at;
  j["parameter_bytes"] = r.parameter_bytes;
  if (r.xla_memory_report_bytes >= 0) {
    j["xla_memory_report_bytes"] = r.xla_memory_report_bytes;
    j["peak_memory_diff_bytes"] =
        r.peak_memory_bytes - r.xla_memory_report_bytes;
  }
  nlohmann::ordered_json cs = nlohmann::ordered_json::array();
  for (size_t idx : ByExposed(r)) {
    const SimCollective& c = r.collectives[idx];
    nlohmann::ordered_json e;
    e["name"] = c.name;
    e["kind"] = c.kind;
    e["async"] = c.async;
    e["bytes"] = c.bytes;
    e["group_size"] = c.group_size;
    e["count"] = c.count;
    e["time_ms"] = c.time_us / 1000;
    e["exposed_ms"] = c.exposed_us / 1000;
    e["computation"] = c.computation;
    e["loop_path"] = c.loop_path;
    e["source"] = c.source;
    cs.push_back(std::move(e));
  }
  j["collectives"] = std::move(cs);
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string ChromeTraceJson(const SimResult& r) {
  // Track ids (threads of process 1).
  auto tid = [](SimEvent::Track t) {
    switch (t) {
      case SimEvent::Track::kCompute:
        return 1;
      case SimEvent::Track::kCollective:
        return 2;
      case SimEvent::Track::kAsyncCompute:
        return 3;
    }
    return 1;
  };
  nlohmann::json events = nlohmann::json::array();
  auto meta = [&](int t, const char* name, const char* value, int sort) {
    events.push_back({{"ph", "M"},
                      {"pid", 1},
                      {"tid", t},
                      {"name", name},
                      {"args", {{"name", value}}}});
    events.push_back({{"ph", "M"},
                      {"pid", 1},
                      {"tid", t},
                      {"name", "thread_sort_index"},
                      {"args", {{"sort_index", sort}}}});
  };
  events.push_back({{"ph", "M"},
                    {"pid", 1},
                    {"name", "process_name"},
                    {"args", {{"name", "hloverlap sim (" + r.gpu + ")"}}}});
  meta(1, "thread_name", "compute stream", 0);
  meta(2, "thread_name", "collective stream", 1);
  meta(3, "thread_name", "async compute stream", 2);

  // Compute kernels in start order, to find what overlaps a collective.
  std::vector<const SimEvent*> kernels;
  for (const SimEvent& e : r.events) {
    if (e.track == SimEvent::Track::kCompute && e.category == "kernel") {
      kernels.push_back(&e);
    }
  }
  int64_t flow_id = 0;
  for (const SimEvent& e : r.events) {
    nlohmann::json ev = {{"ph", "X"},
                         {"pid", 1},
                         {"tid", tid(e.track)},
                         {"name", e.name},
                         {"cat", e.category},
                         {"ts", e.start_us},
                         {"dur", std::max(0.0, e.duration_us)}};
    if (e.track != SimEvent::Track::kCollective) {
      events.push_back(std::move(ev));
      continue;
    }
    // Compute overlapping [start, end): count, time and the first names.
    double s = e.start_us;
    double end = e.start_us + e.duration_us;
    auto first = std::lower_bound(kernels.begin(), kernels.end(), s,
                                  [](const SimEvent* k, double v) {
                                    return k->start_us + k->duration_us <= v;
                                  });
    double overlapped = 0;
    int64_t n = 0;
    nlohmann::json names = nlohmann::json::array();
    for (auto it = first; it != kernels.end() && (*it)->start_us < end; ++it) {
      double a = std::max(s, (*it)->start_us);
      double b = std::min(end, (*it)->start_us + (*it)->duration_us);
      if (b <= a) continue;
      overlapped += b - a;
      if (n < 8) names.push_back((*it)->name);
      ++n;
    }
    nlohmann::json args = {{"overlapped_compute_us", overlapped},
                           {"overlapped_kernels", n},
                           {"overlapped", names}};
    if (e.collective >= 0 &&
        e.collective < static_cast<int64_t>(r.collectives.size())) {
      const SimCollective& c = r.collectives[e.collective];
      args["kind"] = c.kind;
      args["bytes"] = c.bytes;
      args["loop_path"] = c.loop_path;
      args["source"] = c.source;
    }
    args["exposed_us"] = e.exposed_us;
    ev["args"] = std::move(args);
    events.push_back(std::move(ev));
    // Flows: issue point (compute) -> collective, collective -> done.
    if (e.issue_us >= 0) {
      int64_t id = ++flow_id;
      events.push_back({{"ph", "s"},
                        {"id", id},
                        {"pid", 1},
                        {"tid", 1},
                        {"name", "issue"},
                        {"cat", "flow"},
                        {"ts", e.issue_us},
                        {"bp", "e"}});
      events.push_back({{"ph", "f"},
                        {"id", id},
                        {"pid", 1},
                        {"tid", 2},
                        {"name", "issue"},
                        {"cat", "flow"},
                        {"ts", s},
                        {"bp", "e"}});
    }
    if (e.done_us >= 0) {
      int64_t id = ++flow_id;
      events.push_back({{"ph", "s"},
                        {"id", id},
                        {"pid", 1},
                        {"tid", 2},
                        {"name", "done"},
                        {"cat", "flow"},
                        {"ts", std::max(s, end - 1e-3)},
                        {"bp", "e"}});
      events.push_back({{"ph", "f"},
                        {"id", id},
                        {"pid", 1},
                        {"tid", 1},
                        {"name", "done"},
                        {"cat", "flow"},
                        {"ts", e.done_us},
                        {"bp", "e"}});
    }
  }
  nlohmann::json j = {
      {"traceEvents", std::move(events)},
      {"displayTimeUnit", "ms"},
      {"otherData",
       {{"step_time_ms", r.step_time_us / 1000},
        {"exposed_communication_ms", r.exposed_communication_us / 1000}}}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

namespace {

absl::Status ApplyOverrides(GpuSpec& spec, SimOptions* sim,
                            std::string_view text) {
  int64_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string line(text.substr(pos, end - pos));
    pos = end + 1;
    ++line_no;
    if (size_t hash = line.find('#'); hash != std::string::npos) {
      line.resize(hash);
    }
    std::vector<std::string> fields;
    for (size_t i = 0; i < line.size();) {
      while (i < line.size() &&
             std::isspace(static_cast<unsigned char>(line[i])))
        ++i;
      size_t j = i;
      while (j < line.size() &&
             !std::isspace(static_cast<unsigned char>(line[j])))
        ++j;
      if (j > i) fields.push_back(line.substr(i, j - i));
      i = j;
    }
    if (fields.empty()) continue;
    auto error = [&](const std::string& what) {
      return absl::InvalidArgumentError(
          absl::StrCat("gpu spec line ", line_no, ": ", what));
    };
    if (fields.size() != 2) return error("expected 'key value'");
    char* endp = nullptr;
    double v = std::strtod(fields[1].c_str(), &endp);
    if (endp == fields[1].c_str() || *endp != '\0' || !std::isfinite(v) ||
        v < 0) {
      return error(absl::StrCat("bad number '", fields[1], "'"));
    }
    const std::string& k = fields[0];
    if (k == "matmul_flops") {
      spec.matmul_flops = v;
    } else if (k == "vector_flops") {
      spec.vector_flops = v;
    } else if (k == "hbm_bytes_per_second") {
      spec.hbm_bytes_per_second = v;
    } else if (k == "kernel_launch_us") {
      spec.kernel_launch_us = v;
    } else if (k == "memory_bytes") {
      if (v > 9e18) return error("memory_bytes too large");
      spec.memory_bytes = static_cast<int64_t>(v);
    } else if (sim != nullptr && k == "kernel_overhead_us") {
      sim->kernel_overhead_us = v;
    } else if (sim != nullptr && k == "memory_efficiency" && v > 0 && v <= 1) {
      sim->memory_efficiency = v;
    } else if (sim != nullptr && k == "compute_efficiency" && v > 0 && v <= 1) {
      sim->compute_efficiency = v;
    } else if (sim != nullptr && k == "async_compute_contention" && v <= 1) {
      sim->async_compute_contention = v;
    } else if (sim != nullptr &&
               (k == "memory_efficiency" || k == "compute_efficiency" ||
                k == "async_compute_contention")) {
      return error(absl::StrCat(k, " must be in (0, 1]"));
    } else {
      return error(absl::StrCat("unknown key '", k, "'"));
    }
    if ((k == "matmul_flops" || k == "vector_flops" ||
         k == "hbm_bytes_per_second") &&
        !(v > 0)) {
      return error(absl::StrCat(k, " must be positive"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<GpuSpec> ApplyGpuSpecOverrides(GpuSpec spec,
                                              std::string_view text) {
  absl::Status st = ApplyOverrides(spec, nullptr, text);
  if (!st.ok()) return st;
  return spec;
}

absl::Status ApplySimOverrides(SimOptions& options, std::string_view text) {
  GpuSpec spec = options.spec;
  SimOptions copy = options;
  absl::Status st = ApplyOverrides(spec, &copy, text);
  if (!st.ok()) return st;
  options = copy;
  options.spec = spec;
  return absl::OkStatus();
}

int64_t ParseMemoryReportTotalBytes(std::string_view report) {
  size_t pos = report.find("Total bytes:");
  if (pos == std::string_view::npos) return -1;
  pos += 12;
  while (pos < report.size() && report[pos] == ' ') ++pos;
  int64_t v = 0;
  bool any = false;
  while (pos < report.size() && report[pos] >= '0' && report[pos] <= '9') {
    if (v > (INT64_MAX - 9) / 10) return -1;
    v = v * 10 + (report[pos] - '0');
    ++pos;
    any = true;
  }
  return any ? v : -1;
}

}  // namespace hloverlap
