// Timeline simulation (see the header).
#include "sim/timeline.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "analysis/collective_ops.h"
#include "analysis/fusion_estimate.h"
#include "analysis/gpu_cost_model.h"
#include "analysis/module_summary.h"
#include "hlo/computation.h"
#include "hlo/instruction.h"
#include "hlo/opcode_traits.h"
#include "sim/simulator.h"

namespace hloverlap {
namespace {

// Nesting depth of control flow followed (the IR has no recursion; deep
// generated nests should not blow the stack).
constexpr int kMaxDepth = 64;
// Trace events kept at most (a huge expanded loop still gives a trace).
constexpr size_t kMaxEvents = 4'000'000;
// Trace events copied from a simulated iteration or loop into the spans
// that repeat it, at most; beyond, such a span is one summarized slice.
constexpr size_t kMaxCopiedEvents = 1'000'000;

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
  const Instruction* start = nullptr;  // kDone
  int64_t trip_count = 1;              // kWhile
  bool run_condition = true;  // kWhile: no known_trip_count (XLA evaluates
                              // the condition, on the host)
  const Computation* callee = nullptr;  // kConditional: chosen branch
  int64_t collective = -1;    // index into SimResult::collectives, lazily
  bool memory_bound = false;  // kKernel: bytes, not FLOPs, set the time
  double launch = 0;          // host time to launch it (SimOptions)
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

// The start a -done (send-done, recv-done) waits for.
const Instruction* DoneStart(const Instruction& done) {
  const Instruction* start =
      done.operand_count() > 0 ? done.operand(0) : nullptr;
  while (start != nullptr && start->opcode() == Opcode::kAsyncUpdate &&
         start->operand_count() > 0) {
    start = start->operand(0);
  }
  return start;
}

// The additive figures of the timeline (SimResult's while simulating).
struct Totals {
  double compute = 0;
  double compute_bound = 0;
  double memory_bound = 0;
  double flops = 0;
  double hbm_bytes = 0;
  double communication = 0;
  double exposed = 0;
  double async_compute = 0;
  double async_wait = 0;
  double launch_bound = 0;
  double contention = 0;
  int64_t kernels = 0;
  int64_t extrapolated = 0;
  int64_t iterations = 0;  // loop iterations run (simulated or not)

  // The fields, for the arithmetic on all of them.
  static constexpr double Totals::*kTimes[] = {
      &Totals::compute,      &Totals::compute_bound, &Totals::memory_bound,
      &Totals::flops,        &Totals::hbm_bytes,     &Totals::communication,
      &Totals::exposed,      &Totals::async_compute, &Totals::async_wait,
      &Totals::launch_bound, &Totals::contention};
  static constexpr int64_t Totals::*kCounts[] = {
      &Totals::kernels, &Totals::extrapolated, &Totals::iterations};

  // *this += k * d (counts saturated).
  void Add(const Totals& d, double k) {
    for (double Totals::*f : kTimes) this->*f += k * (d.*f);
    for (int64_t Totals::*f : kCounts) {
      this->*f = SatAdd(this->*f, k * static_cast<double>(d.*f));
    }
  }
  Totals Minus(const Totals& b) const {
    Totals d;
    for (double Totals::*f : kTimes) d.*f = this->*f - b.*f;
    for (int64_t Totals::*f : kCounts) d.*f = this->*f - b.*f;
    return d;
  }
};
// Every field is in one of the tables.
static_assert(sizeof(Totals) ==
              std::size(Totals::kTimes) * sizeof(double) +
                  std::size(Totals::kCounts) * sizeof(int64_t));

// What a run of a computation (everything it may run, transitively) reads
// of the timeline's state besides the compute stream's time.
struct Reads {
  bool collective_stream = false;  // issues collectives
  bool async_stream = false;       // issues async compute
  // A -done whose start is not before it in its computation's schedule
  // (not in valid IR): it may wait for a start of an earlier run, so equal
  // stream states do not make runs equal.
  bool stale_pending = false;

  void Merge(const Reads& o) {
    collective_stream = collective_stream || o.collective_stream;
    async_stream = async_stream || o.async_stream;
    stale_pending = stale_pending || o.stale_pending;
  }
};

// A run (a loop, a call, one iteration) and the state it starts from: the
// free times of the streams it reads relative to the compute stream's time,
// clamped at 0 (a stream free in the past is free now), 0 for a stream it
// does not read. Every step is translation-invariant in time, so two runs
// of one unit from equal states do the same thing shifted in time.
// With the host modelled (SimOptions' host_*), also where the host is
// relative to the compute stream (negative: ahead; at least
// -host_max_lead_us).
struct StateKey {
  const Instruction* unit = nullptr;
  double collective_free = 0;
  double async_free = 0;
  double host = 0;

  bool operator==(const StateKey& o) const {
    return unit == o.unit && collective_free == o.collective_free &&
           async_free == o.async_free && host == o.host;
  }
  template <typename H>
  friend H AbslHashValue(H h, const StateKey& k) {
    return H::combine(std::move(h), k.unit, k.collective_free, k.async_free,
                      k.host);
  }
};

struct CollectiveDelta {
  int64_t index = 0;
  int64_t count = 0;
  double time_us = 0;
  double exposed_us = 0;
};

// What one run did, relative to its start.
struct Effect {
  double dt = 0;  // compute-stream time
  // Stream free times: their change, and at the end relative to the start
  // time of the compute stream.
  double collective_free_delta = 0;
  double async_free_delta = 0;
  double collective_free_end = 0;
  double async_free_end = 0;
  double host_delta = 0;  // the host's time: change, end relative to start
  double host_end = 0;
  Totals totals;
  std::vector<CollectiveDelta> collectives;  // those it ran or waited for
  // Its trace events [event_begin, event_end), starting at event_t0 at
  // loop depth event_depth; event_begin = -1 if some were not kept.
  int64_t event_begin = -1;
  int64_t event_end = -1;
  double event_t0 = 0;
  int event_depth = 0;
};

class Simulator {
 public:
  // `host_start`: the host's time when the compute stream starts the step
  // (negative: it was that far ahead at the end of the step before).
  Simulator(const Module& module, const SimOptions& options, double host_start)
      : module_(module),
        options_(options),
        model_(options.spec, options.table),
        fusion_(options.unfused_compute == UnfusedCompute::kXlaFused &&
                        IsUnfusedModule(module)
                    ? std::make_unique<FusionEstimate>(model_)
                    : nullptr),
        host_modelled_(options.host_launch_us > 0 ||
                       options.gemm_host_launch_us > 0 ||
                       options.host_step_us > 0),
        contention_(options.collective_sm_share > 0 ||
                    options.collective_hbm_share > 0),
        h_(host_start) {}

  // How far the host was ahead of the compute stream when the step ended
  // (after Run).
  double host_lead_at_end() const { return t_ - h_; }

  SimResult Run() {
    result_.gpu = options_.spec.name;
    result_.xla_fused_estimate = fusion_ != nullptr;
    RunComputation(*module_.entry(), 0);
    double end = std::max({t_, coll_free_, async_free_});
    result_.step_time_us = end;
    result_.compute_us = totals_.compute;
    result_.compute_bound_us = totals_.compute_bound;
    result_.memory_bound_us = totals_.memory_bound;
    result_.flops = totals_.flops;
    result_.hbm_bytes = totals_.hbm_bytes;
    result_.communication_us = totals_.communication;
    result_.exposed_communication_us = totals_.exposed;
    result_.async_compute_us = totals_.async_compute;
    result_.async_compute_wait_us = totals_.async_wait;
    result_.launch_bound_us = totals_.launch_bound;
    result_.contention_us = totals_.contention;
    result_.kernels = totals_.kernels;
    result_.extrapolated_iterations = totals_.extrapolated;
    result_.summarized_iterations = std::max<int64_t>(
        0, totals_.iterations - simulated_iterations_ - totals_.extrapolated);
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
    const Instruction* coll = ClassifyCollective(instr)->collective;
    if (info->opcode != Opcode::kCollectivePermute &&
        !coll->attrs().replica_groups->GroupSize().has_value()) {
      info->group_size = DefaultDevices();
    }
    return info;
  }
  // The model's time of collective `instr`; nullopt when its figures are
  // not known.
  std::optional<double> CollectiveUs(const Instruction& instr) const {
    std::optional<CollectiveInfo> info = Info(instr);
    if (!info.has_value()) return std::nullopt;
    return model_.CollectiveTimeUs(*info);
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
      c.kind = std::string(CollectiveKindName(info->opcode));
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
    touched_.push_back(0);
    seen_.push_back(0);
    return step.collective;
  }

  // What `instr` does on the timeline; kKernel: a kernel if it costs
  // anything.
  StepKind Kind(const Instruction& instr) const {
    const Opcode op = instr.opcode();
    const OpcodeTraits& traits = Traits(op);
    // Async halves (send and recv included): hlo/opcode_traits.h.
    switch (traits.async_role) {
      case AsyncRole::kDone:
        return StepKind::kDone;
      case AsyncRole::kUpdate:
        return StepKind::kNop;
      case AsyncRole::kStart:
        return op == Opcode::kRecv || Info(instr).has_value()
                   ? StepKind::kCollectiveStart
                   : StepKind::kAsyncStart;
      case AsyncRole::kNone:
        break;
    }
    if (traits.category == OpcodeCategory::kCollective) {
      return StepKind::kSyncCollective;
    }
    if (op == Opcode::kFusion) {  // a Triton collective fusion, ...
      std::optional<CollectiveOp> c = ClassifyCollective(instr);
      if (c.has_value()) {
        return c->async ? StepKind::kCollectiveStart
                        : StepKind::kSyncCollective;
      }
    }
    if (traits.callees == CalleeForm::kConditionBody) {  // while
      return instr.called_computations().size() < 2 ? StepKind::kNop
                                                    : StepKind::kWhile;
    }
    if (traits.callees == CalleeForm::kBranches) return StepKind::kConditional;
    return op == Opcode::kCall ? StepKind::kCall : StepKind::kKernel;
  }

  Step MakeStep(const Instruction& instr) {
    Step s;
    s.instr = &instr;
    s.kind = Kind(instr);
    s.launch = options_.host_launch_us;
    switch (s.kind) {
      case StepKind::kNop:
      case StepKind::kCall:
        return s;
      case StepKind::kDone:
        s.start = DoneStart(instr);
        return s;
      case StepKind::kCollectiveStart:
        s.duration = CollectiveUs(instr).value_or(model_.AsyncLatencyUs(instr));
        return s;
      case StepKind::kAsyncStart:
        s.duration = AsyncComputeTime(instr);
        return s;
      case StepKind::kSyncCollective:
        s.duration = CollectiveUs(instr).value_or(0);
        return s;
      case StepKind::kWhile:
        s.trip_count = SimLoopTripCount(instr, result_);
        s.run_condition =
            !instr.attrs().while_config->known_trip_count().has_value();
        return s;
      case StepKind::kConditional: {
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
      case StepKind::kKernel:
        break;
    }
    OpCost cost;
    bool gemm = false;
    const FusedKernelRole* fused =
        fusion_ != nullptr ? &fusion_->Role(instr) : nullptr;
    if (fused != nullptr && fused->kind == FusedKernelRole::Kind::kAbsorbed) {
      s.kind = StepKind::kNop;
      return s;
    }
    if (fused != nullptr && fused->kind == FusedKernelRole::Kind::kKernel) {
      cost = fused->cost;
      gemm = fused->gemm;
    } else {
      cost = model_.Cost(instr);
      gemm = cost.kernels > 0 && IsGemmKernel(instr);
    }
    s.kind = StepKind::kNop;
    if (cost.kernels > 0 || cost.time_us > 0) {
      s.kind = StepKind::kKernel;
      s.duration = KernelTime(cost, gemm);
      if (gemm) s.launch += options_.gemm_host_launch_us;
      s.memory_bound = cost.memory_us >= cost.compute_us;
      s.flops = cost.flops;
      s.bytes = cost.bytes;
    }
    return s;
  }

  // The roofline with the achieved-vs-ideal factors of SimOptions (GPU
  // time; the launch is the host's).
  double KernelTime(const OpCost& c, bool gemm) const {
    if (c.kernels <= 0) return c.time_us;  // not a kernel (callee time)
    double compute = c.compute_us / options_.compute_efficiency;
    double memory = c.memory_us / options_.memory_efficiency;
    double overhead =
        options_.kernel_overhead_us + (gemm ? options_.gemm_overhead_us : 0);
    return static_cast<double>(c.kernels) * overhead +
           std::max(compute, memory);
  }

  // Async compute: the wrapped computation's kernels; copy-start: a copy.
  double AsyncComputeTime(const Instruction& start) {
    if (start.opcode() != Opcode::kAsyncStart || start.to_apply() == nullptr) {
      return model_.AsyncLatencyUs(start);
    }
    double t = 0;
    for (const auto& i : start.to_apply()->instructions()) {
      t += KernelTime(model_.Cost(*i), IsGemmKernel(*i));
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

  // What runs of `c` read (static: every branch, every callee), memoized.
  // Past kMaxDepth (or on a cycle, not in valid IR) it assumes every
  // stream is read, which only makes states more specific.
  const Reads& ReadsOf(const Computation& c, int depth) {
    auto it = reads_.find(&c);
    if (it != reads_.end()) return it->second;
    static const Reads kAll{true, true, false};
    if (depth > kMaxDepth) return kAll;
    reads_[&c] = kAll;
    Reads r;
    absl::flat_hash_set<const Instruction*> started;
    for (const auto& i : c.instructions()) {
      switch (Kind(*i)) {
        case StepKind::kKernel:
          // Its time depends on the collective in flight beside it.
          if (contention_) r.collective_stream = true;
          break;
        case StepKind::kSyncCollective:
          r.collective_stream = true;
          break;
        case StepKind::kCollectiveStart:
          r.collective_stream = true;
          started.insert(i.get());
          break;
        case StepKind::kAsyncStart:
          r.async_stream = true;
          started.insert(i.get());
          break;
        case StepKind::kDone: {
          const Instruction* start = DoneStart(*i);
          if (start != nullptr && !started.contains(start)) {
            StepKind k = Kind(*start);
            if (k == StepKind::kCollectiveStart || k == StepKind::kAsyncStart) {
              r.stale_pending = true;
            }
          }
          break;
        }
        case StepKind::kWhile:
        case StepKind::kCall:
        case StepKind::kConditional:
          for (const Computation* callee : i->called_computations()) {
            r.Merge(ReadsOf(*callee, depth + 1));
          }
          break;
        default:
          break;
      }
    }
    return reads_[&c] = r;
  }

  // The state of `unit` now. Free times are differences of absolute times
  // whose rounding depends on how far the timeline is (a few ulps of the
  // time reached), so they are rounded to a power of two well above that
  // noise (1e-9 us, or 9e-13 of the time reached): states equal but for
  // rounding compare equal. Runs from states that differ by d differ by at
  // most d in every time (each step is a max or a sum of times).
  StateKey KeyOf(const Instruction* unit, const Reads& r) const {
    StateKey k;
    k.unit = unit;
    double q = std::exp2(
        std::ceil(std::log2(std::max(0x1p-30, std::abs(t_) * 0x1p-40))));
    auto rel = [&](double free) {
      double d = free - t_;
      return d > 0 ? std::round(d / q) * q : 0.0;
    };
    if (r.collective_stream) k.collective_free = rel(coll_free_);
    if (r.async_stream) k.async_free = rel(async_free_);
    if (host_modelled_) k.host = std::round((h_ - t_) / q) * q;
    return k;
  }

  bool OverBudget() const { return steps_run_ > options_.max_simulated_steps; }

  // --- Recording runs -------------------------------------------------------
  //
  // Begin() marks the state; End() turns what happened since into an
  // Effect. Recordings nest. The per-collective figures a run changed are
  // found through a journal: the first time a collective changes after the
  // latest Begin(), its figures before are appended (so for every open
  // recording, the first entry of a collective in its part of the journal
  // holds the figures at its start).
  struct Mark {
    double t = 0;
    double collective_free = 0;
    double async_free = 0;
    double host = 0;
    Totals totals;
    size_t journal = 0;
    size_t events = 0;
    int64_t dropped = 0;
    int depth = 0;
  };
  struct JournalEntry {
    int64_t index = 0;
    int64_t count = 0;
    double time_us = 0;
    double exposed_us = 0;
  };

  Mark Begin() {
    ++stamp_;
    ++open_;
    return Mark{.t = t_,
                .collective_free = coll_free_,
                .async_free = async_free_,
                .host = h_,
                .totals = totals_,
                .journal = journal_.size(),
                .events = result_.events.size(),
                .dropped = dropped_events_,
                .depth = static_cast<int>(loop_stack_.size())};
  }

  // Ends the latest recording without its effect.
  void Close() {
    if (--open_ == 0) journal_.clear();
  }

  Effect End(const Mark& m) {
    Effect e;
    e.dt = t_ - m.t;
    e.collective_free_delta = coll_free_ - m.collective_free;
    e.async_free_delta = async_free_ - m.async_free;
    e.collective_free_end = coll_free_ - m.t;
    e.async_free_end = async_free_ - m.t;
    e.host_delta = h_ - m.host;
    e.host_end = h_ - m.t;
    e.totals = totals_.Minus(m.totals);
    // The first entry of each collective; the rest are dropped (an
    // enclosing recording needs only the first either), so that nested
    // recordings do not rescan what their inner ones journaled.
    ++seen_stamp_;
    size_t kept = m.journal;
    for (size_t j = m.journal; j < journal_.size(); ++j) {
      const JournalEntry before = journal_[j];
      if (seen_[before.index] == seen_stamp_) continue;
      seen_[before.index] = seen_stamp_;
      journal_[kept++] = before;
      const SimCollective& c = result_.collectives[before.index];
      e.collectives.push_back({before.index, c.count - before.count,
                               c.time_us - before.time_us,
                               c.exposed_us - before.exposed_us});
    }
    journal_.resize(kept);
    if (options_.record_trace && dropped_events_ == m.dropped) {
      e.event_begin = static_cast<int64_t>(m.events);
      e.event_end = static_cast<int64_t>(result_.events.size());
      e.event_t0 = m.t;
      e.event_depth = m.depth;
    }
    Close();
    return e;
  }

  // Collective `ci` is about to change.
  SimCollective& Touch(int64_t ci) {
    if (open_ > 0 && touched_[ci] != stamp_) {
      touched_[ci] = stamp_;
      const SimCollective& c = result_.collectives[ci];
      journal_.push_back({ci, c.count, c.time_us, c.exposed_us});
    }
    return result_.collectives[ci];
  }

  // Does `e` again, `k` times in a row from the current state. `relative`:
  // from a state equal to the one `e` was recorded from (so is the state
  // each repetition ends in: the stream free times `r` reads end where they
  // did relative to the last repetition's start; exact); otherwise the
  // streams advance by `e`'s change per repetition (an estimate).
  void Apply(const Effect& e, double k, bool relative, const Reads& r) {
    double last = t_ + (k - 1) * e.dt;
    t_ += k * e.dt;
    if (relative) {
      if (r.collective_stream) coll_free_ = last + e.collective_free_end;
      if (r.async_stream) async_free_ = last + e.async_free_end;
      h_ = last + e.host_end;
    } else {
      coll_free_ += k * e.collective_free_delta;
      async_free_ += k * e.async_free_delta;
      h_ += k * e.host_delta;
    }
    totals_.Add(e.totals, k);
    for (const CollectiveDelta& d : e.collectives) {
      SimCollective& c = Touch(d.index);
      c.count = SatAdd(c.count, k * static_cast<double>(d.count));
      c.time_us += k * d.time_us;
      c.exposed_us += k * d.exposed_us;
    }
  }

  // Appends a copy of `e`'s trace events moved to start at `t0` (the first
  // renamed to `first_name` unless empty); false (nothing appended) if
  // they were not all kept or the copy budget is spent.
  bool CopyEvents(const Effect& e, double t0, const std::string& first_name) {
    if (e.event_begin < 0) return false;
    size_t n = static_cast<size_t>(e.event_end - e.event_begin);
    if (result_.events.size() + n > kMaxCopiedEvents) return false;
    double shift = t0 - e.event_t0;
    int depth_shift = static_cast<int>(loop_stack_.size()) - e.event_depth;
    result_.events.reserve(result_.events.size() + n);
    for (size_t j = 0; j < n; ++j) {
      SimEvent ev = result_.events[e.event_begin + j];
      ev.start_us += shift;
      if (ev.issue_us >= 0) ev.issue_us += shift;
      if (ev.done_us >= 0) ev.done_us += shift;
      ev.depth += depth_shift;
      if (j == 0 && !first_name.empty()) ev.name = first_name;
      result_.events.push_back(std::move(ev));
    }
    return true;
  }

  int64_t AddEvent(SimEvent::Track track, const std::string& name,
                   const char* category, double start, double duration) {
    if (!options_.record_trace) return -1;
    if (result_.events.size() >= kMaxEvents) {
      ++dropped_events_;
      return -1;
    }
    result_.events.push_back(
        SimEvent{.track = track,
                 .name = name,
                 .category = category,
                 .start_us = start,
                 .duration_us = duration,
                 .depth = static_cast<int>(loop_stack_.size())});
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
        totals_.exposed += wait;
        Touch(p.collective).exposed_us += wait;
      } else {
        totals_.async_wait += wait;
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

  // What kernel `s`, starting now, loses to the collectives in flight
  // beside it (SimOptions::collective_sm_share / collective_hbm_share): the
  // collective stream is busy from now until coll_free_ (collectives start
  // in issue order and none is issued after the compute stream's time), and
  // the kernel runs at (1 - share) of its rate while it is.
  double ContentionUs(const Step& s) const {
    if (!contention_ || coll_free_ <= t_ || !(s.duration > 0)) return 0;
    const double share = s.memory_bound ? options_.collective_hbm_share
                                        : options_.collective_sm_share;
    if (!(share > 0) || !(share < 1)) return 0;
    const double rate = 1 - share;
    const double window = coll_free_ - t_;
    if (window * rate >= s.duration) {
      return s.duration / rate - s.duration;  // wholly beside it
    }
    // The part done in the window at the lower rate, the rest at full rate.
    return window * share;
  }

  // The host launches `s`; the compute stream waits for the launch if it
  // would otherwise start `s` earlier (launch-bound).
  void Launch(const Step& s) {
    if (!host_modelled_) return;
    h_ += s.launch;
    if (h_ > t_) {
      totals_.launch_bound += h_ - t_;
      t_ = h_;
    }
  }
  // The host issues `s` on another stream (a collective or async compute
  // start): when it can start there, as far as the compute stream and the
  // host are concerned.
  double Issue(const Step& s) {
    if (!host_modelled_) return t_;
    h_ += s.launch;
    return std::max(t_, h_);
  }
  // The launch queue is bounded: the host is at most host_max_lead_us
  // ahead of the compute stream.
  void CapLead() {
    if (host_modelled_) h_ = std::max(h_, t_ - options_.host_max_lead_us);
  }
  // The host waits for the compute stream (it reads a loop predicate).
  void HostSync() { h_ = std::max(h_, t_); }

  void RunComputation(const Computation& c, int depth) {
    if (depth > kMaxDepth) return;
    std::vector<Step>& steps = Steps(c);
    steps_run_ += static_cast<int64_t>(steps.size());
    for (size_t k = 0; k < steps.size(); ++k) {
      Step& s = steps[k];
      switch (s.kind) {
        case StepKind::kNop:
          break;
        case StepKind::kKernel: {
          Launch(s);
          const double lost = ContentionUs(s);
          const double duration = s.duration + lost;
          int64_t ev = AddEvent(SimEvent::Track::kCompute, s.instr->name(),
                                "kernel", t_, duration);
          if (ev >= 0) {
            result_.events[ev].flops = s.flops;
            result_.events[ev].bytes = s.bytes;
            result_.events[ev].contention_us = lost;
          }
          t_ += duration;
          totals_.compute += duration;
          totals_.contention += lost;
          totals_.kernels = SatAdd(totals_.kernels, 1);
          (s.memory_bound ? totals_.memory_bound : totals_.compute_bound) +=
              duration;
          totals_.flops += s.flops;
          totals_.hbm_bytes += s.bytes;
          CapLead();
          break;
        }
        case StepKind::kSyncCollective: {
          Launch(s);
          int64_t ci = CollectiveIndex(s);
          double start = std::max(t_, coll_free_);
          double end = start + s.duration;
          SimCollective& col = Touch(ci);
          col.count = SatAdd(col.count, 1);
          col.time_us += s.duration;
          col.exposed_us += end - t_;
          totals_.communication += s.duration;
          totals_.exposed += end - t_;
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
          CapLead();
          break;
        }
        case StepKind::kCollectiveStart: {
          int64_t ci = CollectiveIndex(s);
          double start = std::max(Issue(s), coll_free_);
          double end = start + s.duration;
          coll_free_ = end;
          SimCollective& col = Touch(ci);
          col.count = SatAdd(col.count, 1);
          col.time_us += s.duration;
          totals_.communication += s.duration;
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
          double start = std::max(Issue(s), async_free_);
          double end = start + s.duration;
          async_free_ = end;
          totals_.async_compute += s.duration;
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
            totals_.compute += lost;
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
        case StepKind::kConditional:
          RunCallees(s, depth);
          break;
      }
    }
  }

  // A call (its callees in order) or a conditional (the chosen branch),
  // memoized per state.
  void RunCallees(const Step& s, int depth) {
    std::vector<const Computation*> callees;
    if (s.kind == StepKind::kCall) {
      callees.assign(s.instr->called_computations().begin(),
                     s.instr->called_computations().end());
    } else if (s.callee != nullptr) {
      callees.push_back(s.callee);
    }
    Reads r;
    for (const Computation* c : callees) r.Merge(ReadsOf(*c, depth + 1));
    bool memoize = options_.summarize && (!r.stale_pending || OverBudget());
    StateKey key = KeyOf(s.instr, r);
    if (memoize) {
      auto it = memo_.find(key);
      if (it != memo_.end()) {
        double t0 = t_;
        Apply(it->second, 1, /*relative=*/true, r);
        if (options_.record_trace && !CopyEvents(it->second, t0, "") &&
            t_ > t0) {
          AddEvent(SimEvent::Track::kCompute,
                   absl::StrCat(s.instr->name(), " (summarized)"), "call", t0,
                   t_ - t0);
        }
        return;
      }
    }
    Mark m = Begin();
    for (const Computation* c : callees) RunComputation(*c, depth + 1);
    Effect e = End(m);
    if (memoize) memo_.emplace(key, std::move(e));
  }

  // A while loop: its iterations are simulated until one starts from the
  // state the previous one started from (a steady state: every further
  // iteration repeats it, so they are summarized as that many repetitions),
  // or max_expanded_iterations ran, or the step budget is spent (then the
  // rest is extrapolated from the last iteration). The whole loop is
  // memoized per entry state, so an inner loop reached again from an equal
  // state costs one lookup whatever its nesting.
  void RunWhile(const Step& s, int depth) {
    const Instruction& w = *s.instr;
    const Computation& cond = *w.while_condition();
    const Computation& body = *w.while_body();
    const int64_t n = s.trip_count;
    Reads r = ReadsOf(cond, depth + 1);
    r.Merge(ReadsOf(body, depth + 1));
    const bool exact = options_.summarize && !r.stale_pending;
    const bool memoize = options_.summarize && (exact || OverBudget());
    const StateKey key = KeyOf(&w, r);
    const std::string label = LoopLabel(w, n);
    if (memoize) {
      auto it = memo_.find(key);
      if (it != memo_.end()) {
        ReplayLoop(w, n, label, it->second, r);
        return;
      }
    }
    Mark whole = Begin();
    double loop_start = t_;
    int64_t loop_event =
        AddEvent(SimEvent::Track::kCompute, label, "loop", t_, 0);
    loop_stack_.push_back(label);
    const int64_t cap = std::max<int64_t>(1, options_.max_expanded_iterations);
    std::optional<Mark> last;  // the previous iteration's start
    StateKey last_key;
    int64_t drifted = 0;  // iterations repeated by Drift (not simulated)
    for (int64_t i = 0; i < n; ++i) {
      StateKey k = KeyOf(&w, r);
      if (last.has_value()) {
        bool steady = exact && k == last_key;
        if (steady || i - drifted >= cap || OverBudget()) {
          Effect e = End(*last);
          last.reset();
          Repeat(w, e, i, n, steady, r);
          break;
        }
        if (exact && HostDrifts(last_key, k)) {
          Effect e = End(*last);
          last.reset();
          int64_t skipped = Drift(w, e, last_key, k, i, n, r);
          i += skipped;
          drifted += skipped;
          if (i >= n) break;
          k = KeyOf(&w, r);
        } else {
          Close();
        }
      }
      last = Begin();
      last_key = k;
      totals_.iterations = SatAdd(totals_.iterations, 1);
      ++simulated_iterations_;
      double it_start = t_;
      int64_t it_event =
          AddEvent(SimEvent::Track::kCompute, absl::StrCat(w.name(), " #", i),
                   "iteration", t_, 0);
      RunCondition(s, cond, depth);
      RunComputation(body, depth + 1);
      if (it_event >= 0) result_.events[it_event].duration_us = t_ - it_start;
    }
    if (last.has_value()) Close();
    RunCondition(s, cond, depth);  // the exit test
    loop_stack_.pop_back();
    if (loop_event >= 0) {
      result_.events[loop_event].duration_us = t_ - loop_start;
    }
    Effect e = End(whole);
    if (memoize) memo_.emplace(key, std::move(e));
  }

  // A GPU-bound loop lets the host run further ahead every iteration (by
  // what its launches take less than the GPU) until host_max_lead_us stops
  // it: iterations then differ only in the host's lead, and while it grows
  // none waits for a launch, so the GPU repeats them exactly. True when
  // iteration `prev` did not wait and `now` starts with more lead.
  bool HostDrifts(const StateKey& prev, const StateKey& now) const {
    return host_modelled_ && now.host < prev.host &&
           now.collective_free == prev.collective_free &&
           now.async_free == prev.async_free;
  }

  // Iterations i.. of `w` as repetitions of the one just run (`e`, from
  // `prev` to `now`) while the lead stays below host_max_lead_us: the
  // streams repeat it exactly, the host advances by its own time. Returns
  // how many (0: the lead reaches the cap within the next two, simulate
  // them).
  int64_t Drift(const Instruction& w, const Effect& e, const StateKey& prev,
                const StateKey& now, int64_t i, int64_t n, const Reads& r) {
    if (e.totals.launch_bound > 0) return 0;
    double growth = prev.host - now.host;
    double room = options_.host_max_lead_us + now.host;  // lead left
    double fit = std::floor(room / growth) - 2;
    if (!(fit >= 1)) return 0;
    int64_t k =
        std::min<int64_t>(n - i, static_cast<int64_t>(std::min(fit, 9.0e18)));
    const double t0 = t_;
    const double h = h_;
    Apply(e, static_cast<double>(k), /*relative=*/true, r);
    h_ = h + static_cast<double>(k) * e.host_delta;
    CapLead();
    if (options_.record_trace) {
      int64_t shown = std::max<int64_t>(1, options_.max_expanded_iterations);
      int64_t j = 0;
      for (; j < k && i + j < shown; ++j) {
        double at = t0 + static_cast<double>(j) * e.dt;
        if (!CopyEvents(e, at, absl::StrCat(w.name(), " #", i + j))) break;
      }
      if (j < k) {
        double at = t0 + static_cast<double>(j) * e.dt;
        AddEvent(SimEvent::Track::kCompute,
                 absl::StrCat(w.name(), " #", i + j, "..#", i + k - 1,
                              " (summarized)"),
                 "iteration", at, t0 + static_cast<double>(k) * e.dt - at);
      }
    }
    return k;
  }

  // A loop's condition: XLA runs a loop with known_trip_count without it;
  // otherwise it evaluates it and reads the predicate on the host.
  void RunCondition(const Step& s, const Computation& cond, int depth) {
    if (!s.run_condition) return;
    RunComputation(cond, depth + 1);
    if (host_modelled_) HostSync();
  }

  // Iterations i..n-1 of `w` as repetitions of the last simulated one
  // (`e`): exactly so when `steady`, else extrapolated. In the trace they
  // are copies of it up to max_expanded_iterations (steady only), then one
  // slice.
  void Repeat(const Instruction& w, const Effect& e, int64_t i, int64_t n,
              bool steady, const Reads& r) {
    const double t0 = t_;
    const int64_t k = n - i;
    Apply(e, static_cast<double>(k), /*relative=*/steady, r);
    if (!steady) {  // every iteration in them is an estimate
      totals_.extrapolated = SatAdd(
          totals_.extrapolated,
          static_cast<double>(k) *
              static_cast<double>(e.totals.iterations - e.totals.extrapolated));
    }
    if (!options_.record_trace) return;
    int64_t j = i;
    if (steady) {
      int64_t shown = std::min<int64_t>(
          n, std::max<int64_t>(1, options_.max_expanded_iterations));
      for (; j < shown; ++j) {
        double at = t0 + static_cast<double>(j - i) * e.dt;
        if (!CopyEvents(e, at, absl::StrCat(w.name(), " #", j))) break;
      }
    }
    if (j < n) {
      double at = t0 + static_cast<double>(j - i) * e.dt;
      AddEvent(SimEvent::Track::kCompute,
               absl::StrCat(w.name(), " #", j, "..#", n - 1,
                            steady ? " (summarized)" : " (extrapolated)"),
               "iteration", at, t_ - at);
    }
  }

  // `w` again from a state equal to the one `e` was recorded from.
  void ReplayLoop(const Instruction& w, int64_t n, const std::string& label,
                  const Effect& e, const Reads& r) {
    const double t0 = t_;
    Apply(e, 1, /*relative=*/true, r);
    if (!options_.record_trace || CopyEvents(e, t0, "")) return;
    AddEvent(SimEvent::Track::kCompute, label, "loop", t0, t_ - t0);
    if (n > 0) {
      loop_stack_.push_back(label);
      AddEvent(SimEvent::Track::kCompute,
               absl::StrCat(w.name(), " #0..#", n - 1, " (summarized)"),
               "iteration", t0, t_ - t0);
      loop_stack_.pop_back();
    }
  }

  const Module& module_;
  const SimOptions& options_;
  GpuCostModel model_;
  // Unfused modules: the kernels XLA will make of them (SimOptions::
  // unfused_compute); nullptr: every op its own kernel.
  std::unique_ptr<FusionEstimate> fusion_;
  const bool host_modelled_;
  const bool contention_;  // collectives slow the kernels beside them
  SimResult result_;
  Totals totals_;
  double h_ = 0;  // the host's time (launches)
  double t_ = 0;
  double coll_free_ = 0;
  double async_free_ = 0;
  int64_t steps_run_ = 0;
  int64_t simulated_iterations_ = 0;
  int64_t dropped_events_ = 0;
  std::vector<std::string> loop_stack_;
  absl::flat_hash_map<const Instruction*, Pending> pending_;
  absl::flat_hash_map<const Computation*, std::unique_ptr<std::vector<Step>>>
      steps_;
  absl::flat_hash_map<const Computation*, Reads> reads_;
  absl::flat_hash_map<StateKey, Effect> memo_;
  // Recordings: open ones, the journal, and per collective the stamp of
  // its last journal entry / of the last End() that counted it.
  int open_ = 0;
  uint64_t stamp_ = 0;
  uint64_t seen_stamp_ = 0;
  std::vector<JournalEntry> journal_;
  std::vector<uint64_t> touched_;
  std::vector<uint64_t> seen_;
};

}  // namespace

SimResult SimulateTimeline(const Module& module, const SimOptions& options) {
  // Steps run back to back: the host begins a step with host_step_us,
  // ahead of the compute stream by the lead it ended the step before with.
  // The steady lead L solves lead_at_end(L) = L; starting from the largest
  // (host_max_lead_us), each pass starts from the lead the one before ended
  // with, which only shrinks, until it holds (a GPU-bound step keeps the
  // largest lead: one pass) or kMaxHostPasses ran.
  constexpr int kMaxHostPasses = 4;
  const double cap = std::max(0.0, options.host_max_lead_us);
  double lead = cap;
  SimResult r;
  for (int pass = 0; pass < kMaxHostPasses; ++pass) {
    Simulator sim(module, options, options.host_step_us - lead);
    r = sim.Run();
    double end = std::clamp(sim.host_lead_at_end(), 0.0, cap);
    if (!(end < lead - 1e-6)) break;
    lead = end;
  }
  return r;
}

}  // namespace hloverlap
