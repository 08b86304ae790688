// Timeline simulation (see the header).
#include "sim/timeline.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "analysis/gpu_cost_model.h"
#include "hlo/computation.h"
#include "hlo/instruction.h"
#include "sim/collectives.h"
#include "sim/simulator.h"

namespace hloverlap {
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
        std::optional<int64_t> trip = SimTripCount(instr);
        s.trip_count = std::max<int64_t>(0, trip.value_or(1));
        if (!trip.has_value()) {
          result_.unknown_trip_counts.push_back(instr.name());
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

}  // namespace

SimResult SimulateTimeline(const Module& module, const SimOptions& options) {
  return Simulator(module, options).Run();
}

}  // namespace hloverlap
