// Latency-hiding list scheduler (see the header).
#include "passes/latency_hiding_scheduler.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/buffer_analysis.h"
#include "analysis/call_graph.h"
#include "analysis/cost_oracle.h"
#include "analysis/gpu_cost_model.h"
#include "analysis/module_summary.h"
#include "analysis/while_loop_analysis.h"
#include "hlo/absl_compat.h"
#include "hlo/opcode_traits.h"
#include "passes/pass_registry.h"
#include "support/byte_size.h"

namespace hloverlap {
namespace {

constexpr std::string_view kPassName = "latency-hiding-scheduler";

enum Resource : int { kNoResource = -1, kCollectiveStream = 0, kAsyncCompute };
constexpr int kNumResources = 2;

bool IsNopForScheduling(Opcode op) {
  switch (op) {
    case Opcode::kGetTupleElement:
    case Opcode::kBitcast:
    case Opcode::kTuple:
    case Opcode::kConstant:
    case Opcode::kPartitionId:
    case Opcode::kReplicaId:
    case Opcode::kOptBarrier:
    case Opcode::kAfterAll:
      return true;
    default:
      return false;
  }
}

// The start of a done (through async-update), or nullptr.
const Instruction* StartOf(const Instruction& done) {
  if (!IsDoneLike(done.opcode()) || done.operand_count() == 0) return nullptr;
  const Instruction* s = done.operand(0);
  int guard = 0;
  while (s->opcode() == Opcode::kAsyncUpdate && s->operand_count() > 0 &&
         guard++ < 1000) {
    s = s->operand(0);
  }
  return IsStartLike(s->opcode()) ? s : nullptr;
}

Resource ResourceOf(const Instruction& start) {
  if (IsNativeCollectiveHalf(start.opcode())) return kCollectiveStream;
  if (start.opcode() == Opcode::kAsyncStart) {
    return GpuCostModel::GetCollectiveInfo(start).has_value()
               ? kCollectiveStream
               : kAsyncCompute;
  }
  return kNoResource;  // copy-start, send, recv
}

// Per-instruction node of the scheduling graph.
struct Node {
  Instruction* instr = nullptr;
  int position = 0;  // original position
  double cost = 0;
  std::vector<int> preds;  // operands and control predecessors (unique)
  std::vector<int> succs;  // users and control successors (unique)
  int remaining_succs = 0;
  bool is_start = false;
  bool is_done = false;
  int start_of_done = -1;  // for a done: its start
  double latency = 0;      // for a start: latency to its done
  Resource resource = kNoResource;
  int64_t need = 0;  // collective slots a while/call/conditional needs
  double async_depth = 0;
  bool has_done_operand = false;
  bool nop = false;
  // Operands whose last unscheduled user this is (rule 8), kept current.
  int unlocks = 0;
  int cls = -1;  // ReadyClass while ready
  // Memory (analysis/buffer_analysis.h): the buffers this instruction
  // defines, the buffers its value holds (its own and those it aliases)
  // and what is live only while it runs: its kernel scratch, or the peak
  // of the computations it calls (a loop body's, in its scheduled order).
  std::vector<int32_t> defines;
  std::vector<int32_t> holds;
  int64_t scratch_bytes = 0;
  // Scheduling state.
  bool ready = false;
  bool scheduled = false;
  double ready_time = 0;
  double time = 0;
};

// Where a ready node waits. Within plain and matured sets the priority
// chain reduces to static keys (plain nodes never stall; matured starts
// have reached their ready time), so the best is the set's first element
// and one step costs O(log n) instead of a scan of the ready set.
enum ReadyClass : int {
  kNopClass,
  kDoneClass,
  kNeedyClass,  // while/call/conditional needing collective slots
  kPlainClass,
  kMaturedClass,  // async starts whose ready time has come
  kPendingClass,  // async starts that would stall
};

class Scheduler;
struct PlainLess {
  const Scheduler* s;
  bool operator()(int a, int b) const;
};
struct MaturedLess {
  const Scheduler* s;
  bool operator()(int a, int b) const;
};
struct PendingLess {
  const Scheduler* s;
  bool operator()(int a, int b) const;
};

class Scheduler {
 public:
  Scheduler(const Computation& c, const LatencyEstimator& est,
            const SchedulerConfig& config, const CalleeInfoMap& callees)
      : comp_(c), est_(est), config_(config), callees_(callees) {}

  absl::StatusOr<ComputationSchedule> Run();

 private:
  void Build();
  double EdgeLatency(int from, int to) const {
    const Node& t = nodes_[to];
    if (t.is_done && t.start_of_done == from) return nodes_[from].latency;
    return 0;
  }
  bool Fits(const Node& n) const;
  int64_t MemoryDelta(int i);
  void MakeLive(const std::vector<int32_t>& buffers) {
    for (int32_t b : buffers) {
      if (!live_[b]) {
        live_[b] = true;
        live_bytes_ += buffer_bytes_[b];
      }
    }
  }
  bool Better(int a, int b);
  void Schedule(int i);
  void MakeReady(int i);
  void Insert(int i);
  void Erase(int i);
  int Select();
  int SelectByScan();
  std::vector<int> ReadyNodes() const;

  friend struct PlainLess;
  friend struct MaturedLess;
  friend struct PendingLess;

  const Computation& comp_;
  const LatencyEstimator& est_;
  const SchedulerConfig& config_;
  const CalleeInfoMap& callees_;
  std::vector<Node> nodes_;
  absl::flat_hash_map<const Instruction*, int> index_;
  std::vector<int64_t> buffer_bytes_;  // by buffer id; 0: not counted

  int64_t ready_count_ = 0;
  std::set<int, std::greater<int>> nops_;  // by position, later first
  // Dones by resource (index resource + 1): they never stall and all dones
  // of one resource fit or none does, so rules 6-9 order each set.
  std::set<int, PlainLess> dones_[kNumResources + 1] = {
      std::set<int, PlainLess>(PlainLess{this}),
      std::set<int, PlainLess>(PlainLess{this}),
      std::set<int, PlainLess>(PlainLess{this})};
  std::vector<int> needy_;
  std::set<int, PlainLess> plain_{PlainLess{this}};
  std::set<int, MaturedLess> matured_[kNumResources + 1] = {
      std::set<int, MaturedLess>(MaturedLess{this}),
      std::set<int, MaturedLess>(MaturedLess{this}),
      std::set<int, MaturedLess>(MaturedLess{this})};
  std::set<int, PendingLess> pending_{PendingLess{this}};
  std::vector<int> reversed_;
  double now_ = 0;
  int64_t in_flight_[kNumResources] = {0, 0};
  int64_t limit_[kNumResources] = {1, 2};
  int64_t blocked_dones_[kNumResources] = {0, 0};
  std::vector<bool> live_;
  int64_t live_bytes_ = 0;
  // The limit on live_bytes_ (config's less the entry's parameters).
  std::optional<int64_t> memory_limit_;
  bool memory_rules_ = false;
  absl::flat_hash_map<int, int64_t> delta_cache_;
  int64_t overrides_ = 0;
};

void Scheduler::Build() {
  const auto& instrs = comp_.instructions();
  nodes_.resize(instrs.size());
  index_.reserve(instrs.size());
  for (size_t i = 0; i < instrs.size(); ++i) {
    nodes_[i].instr = instrs[i].get();
    nodes_[i].position = static_cast<int>(i);
    index_[instrs[i].get()] = static_cast<int>(i);
  }
  // Parameters are the caller's (live throughout, not this schedule's);
  // the entry's count against the limit, which covers the whole peak
  // (as PeakOverSequence reports it).
  const BufferAnalysis buffers(comp_);
  int64_t outside_bytes = 0;
  for (const Buffer& b : buffers.buffers()) {
    buffer_bytes_.push_back(b.kind == LeafKind::kDefines ? b.bytes : 0);
    if (b.kind == LeafKind::kOutside) outside_bytes += b.bytes;
  }
  if (config_.memory_limit_bytes.has_value()) {
    memory_limit_ = *config_.memory_limit_bytes -
                    (comp_.is_entry() ? outside_bytes : int64_t{0});
  }
  live_.assign(buffer_bytes_.size(), false);
  limit_[kCollectiveStream] = std::max(1, config_.collective_in_flight_limit);
  limit_[kAsyncCompute] = std::max(1, config_.async_compute_limit);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    Node& n = nodes_[i];
    const Instruction& in = *n.instr;
    Opcode op = in.opcode();
    auto add_pred = [&](const Instruction* p) {
      auto it = index_.find(p);
      if (it == index_.end()) return;
      n.preds.push_back(it->second);
    };
    for (const Instruction* o : in.operands()) add_pred(o);
    for (const Instruction* o : in.control_predecessors()) add_pred(o);
    std::sort(n.preds.begin(), n.preds.end());
    n.preds.erase(std::unique(n.preds.begin(), n.preds.end()), n.preds.end());
    n.nop = IsNopForScheduling(op);
    for (int32_t b : buffers.BuffersHeld(&in)) {
      if (buffer_bytes_[b] <= 0) continue;
      n.holds.push_back(b);
      if (buffers.buffers()[b].defining == &in) n.defines.push_back(b);
    }
    n.scratch_bytes = buffers.DefinedBytes(&in, LeafKind::kScratch);
    for (const Computation* c : in.called_computations()) {
      auto it = callees_.find(c);
      if (it != callees_.end()) {
        n.scratch_bytes =
            std::max(n.scratch_bytes, it->second.peak_memory_bytes);
      }
    }
    n.cost = ScheduledNodeCostUs(in, est_, callees_);
    if (IsStartLike(op)) {
      n.is_start = true;
      n.resource = ResourceOf(in);
      n.latency = est_.AsyncLatencyUs(in);
      if (!std::isfinite(n.latency) || n.latency < 0) n.latency = 0;
    }
    if (IsDoneLike(op)) {
      const Instruction* s = StartOf(in);
      auto it = s == nullptr ? index_.end() : index_.find(s);
      if (it != index_.end()) {
        n.is_done = true;
        n.start_of_done = it->second;
        n.resource = ResourceOf(*s);
      }
    }
    for (const Instruction* o : in.operands()) {
      if (IsDoneLike(o->opcode())) n.has_done_operand = true;
    }
    if (op == Opcode::kWhile || op == Opcode::kCall ||
        op == Opcode::kConditional) {
      for (const Computation* c : in.called_computations()) {
        auto it = callees_.find(c);
        if (it != callees_.end()) {
          n.need = std::max(n.need, it->second.collectives_in_flight);
        }
      }
    }
    if (!std::isfinite(n.cost) || n.cost < 0) n.cost = 0;
  }
  for (size_t i = 0; i < nodes_.size(); ++i) {
    for (int p : nodes_[i].preds) {
      nodes_[p].succs.push_back(static_cast<int>(i));
    }
  }
  for (Node& n : nodes_) n.remaining_succs = static_cast<int>(n.succs.size());
  // Async depth: longest path of async latencies from the inputs, in a
  // topological order.
  for (Instruction* instr : comp_.MakeInstructionPostOrder()) {
    auto it = index_.find(instr);
    if (it == index_.end()) continue;
    Node& n = nodes_[it->second];
    for (int p : n.preds) {
      n.async_depth = std::max(
          n.async_depth, nodes_[p].async_depth + EdgeLatency(p, it->second));
    }
  }
}

bool Scheduler::Fits(const Node& n) const {
  if (n.is_done && n.resource != kNoResource) {
    return in_flight_[n.resource] < limit_[n.resource];
  }
  if (n.need > 0) {
    return in_flight_[kCollectiveStream] + n.need <= limit_[kCollectiveStream];
  }
  return true;
}

int64_t Scheduler::MemoryDelta(int i) {
  auto it = delta_cache_.find(i);
  if (it != delta_cache_.end()) return it->second;
  int64_t delta = 0;
  std::vector<int32_t> seen;
  for (int p : nodes_[i].preds) {
    for (int32_t b : nodes_[p].holds) {
      if (live_[b] || std::find(seen.begin(), seen.end(), b) != seen.end()) {
        continue;
      }
      seen.push_back(b);
      delta += buffer_bytes_[b];
    }
  }
  for (int32_t b : nodes_[i].defines) {
    if (live_[b]) delta -= buffer_bytes_[b];
  }
  delta_cache_[i] = delta;
  return delta;
}

// True if `a` should be picked before `b` (bottom-up). See the header.
bool Scheduler::Better(int ai, int bi) {
  const Node& a = nodes_[ai];
  const Node& b = nodes_[bi];
  // 1. Memory pressure.
  if (memory_rules_) {
    int64_t limit = *memory_limit_;
    int64_t da = MemoryDelta(ai);
    int64_t db = MemoryDelta(bi);
    if (live_bytes_ >= limit && da != db) return da < db;
    // What is live only while a candidate runs (scratch, a loop's own
    // peak) counts for whether it fits.
    bool fa = live_bytes_ + da + a.scratch_bytes <= limit;
    bool fb = live_bytes_ + db + b.scratch_bytes <= limit;
    if (fa != fb) return fa;
  }
  // 2. Dones first.
  if (a.is_done != b.is_done) return a.is_done;
  // 3. Less stall.
  double sa = std::max(0.0, a.ready_time - now_);
  double sb = std::max(0.0, b.ready_time - now_);
  if (sa != sb) return sa < sb;
  // 4. A start that frees a backed-up resource.
  auto frees = [&](const Node& n) {
    return n.is_start && n.resource != kNoResource &&
           in_flight_[n.resource] >= limit_[n.resource] &&
           blocked_dones_[n.resource] > 0;
  };
  bool fa = frees(a);
  bool fb = frees(b);
  if (fa != fb) return fa;
  // 5. Delay independent async starts.
  bool da = a.is_start && a.async_depth <= 0;
  bool db = b.is_start && b.async_depth <= 0;
  if (da != db) return !da;
  // 6. Async depth.
  if (a.async_depth != b.async_depth) return a.async_depth > b.async_depth;
  // 7. Unlock a done.
  if (a.has_done_operand != b.has_done_operand) return a.has_done_operand;
  // 8. More operands become ready.
  if (a.unlocks != b.unlocks) return a.unlocks > b.unlocks;
  // 9. Original order.
  return a.position > b.position;
}

void Scheduler::MakeReady(int i) {
  Node& n = nodes_[i];
  double t = now_;
  for (int s : n.succs) {
    t = std::max(t, nodes_[s].time + EdgeLatency(i, s));
  }
  n.ready_time = t;
  n.ready = true;
  n.unlocks = 0;
  for (int p : n.preds) n.unlocks += nodes_[p].remaining_succs == 1 ? 1 : 0;
  Insert(i);
}

// Rules 5-9 for candidates that do not stall and are not dones.
bool PlainLess::operator()(int ai, int bi) const {
  const Node& a = s->nodes_[ai];
  const Node& b = s->nodes_[bi];
  if (a.async_depth != b.async_depth) return a.async_depth > b.async_depth;
  if (a.has_done_operand != b.has_done_operand) return a.has_done_operand;
  if (a.unlocks != b.unlocks) return a.unlocks > b.unlocks;
  return a.position > b.position;
}

bool MaturedLess::operator()(int ai, int bi) const {
  bool da = s->nodes_[ai].async_depth <= 0;
  bool db = s->nodes_[bi].async_depth <= 0;
  if (da != db) return !da;
  return PlainLess{s}(ai, bi);
}

bool PendingLess::operator()(int ai, int bi) const {
  const Node& a = s->nodes_[ai];
  const Node& b = s->nodes_[bi];
  if (a.ready_time != b.ready_time) return a.ready_time < b.ready_time;
  return a.position > b.position;
}

void Scheduler::Insert(int i) {
  Node& n = nodes_[i];
  ++ready_count_;
  if (n.nop) {
    n.cls = kNopClass;
    nops_.insert(n.position);
  } else if (n.is_done) {
    n.cls = kDoneClass;
    dones_[n.resource + 1].insert(i);
  } else if (n.is_start) {
    if (n.ready_time > now_) {
      n.cls = kPendingClass;
      pending_.insert(i);
    } else {
      n.cls = kMaturedClass;
      matured_[n.resource + 1].insert(i);
    }
  } else if (n.need > 0) {
    n.cls = kNeedyClass;
    needy_.push_back(i);
  } else {
    n.cls = kPlainClass;
    plain_.insert(i);
  }
}

void Scheduler::Erase(int i) {
  Node& n = nodes_[i];
  --ready_count_;
  switch (n.cls) {
    case kNopClass:
      nops_.erase(n.position);
      break;
    case kDoneClass:
      dones_[n.resource + 1].erase(i);
      break;
    case kNeedyClass:
      needy_.erase(std::find(needy_.begin(), needy_.end(), i));
      break;
    case kPlainClass:
      plain_.erase(i);
      break;
    case kMaturedClass:
      matured_[n.resource + 1].erase(i);
      break;
    case kPendingClass:
      pending_.erase(i);
      break;
    default:
      break;
  }
  n.cls = -1;
}

std::vector<int> Scheduler::ReadyNodes() const {
  std::vector<int> out;
  for (int pos : nops_) out.push_back(pos);  // positions are indices
  for (const auto& d : dones_) out.insert(out.end(), d.begin(), d.end());
  out.insert(out.end(), needy_.begin(), needy_.end());
  out.insert(out.end(), plain_.begin(), plain_.end());
  for (const auto& m : matured_) out.insert(out.end(), m.begin(), m.end());
  out.insert(out.end(), pending_.begin(), pending_.end());
  return out;
}

// The reference selection: every ready candidate against the whole chain.
int Scheduler::SelectByScan() {
  std::vector<int> ready = ReadyNodes();
  int best_fit = -1;
  int best_any = -1;
  for (int r : ready) {
    if (best_any < 0 || Better(r, best_any)) best_any = r;
    if (Fits(nodes_[r]) && (best_fit < 0 || Better(r, best_fit))) {
      best_fit = r;
    }
  }
  if (best_fit >= 0) return best_fit;
  ++overrides_;
  return best_any;
}

int Scheduler::Select() {
  // 0. Nops first, the latest in the input first.
  if (!nops_.empty()) return *nops_.begin();
  memory_rules_ = memory_limit_.has_value() && live_bytes_ > *memory_limit_ / 2;
  delta_cache_.clear();
  blocked_dones_[0] = blocked_dones_[1] = 0;
  for (int r = 0; r < kNumResources; ++r) {
    if (in_flight_[r] >= limit_[r]) blocked_dones_[r] = dones_[r + 1].size();
  }
  // Starts whose ready time has come no longer stall.
  while (!pending_.empty() && nodes_[*pending_.begin()].ready_time <= now_) {
    int i = *pending_.begin();
    pending_.erase(pending_.begin());
    nodes_[i].cls = kMaturedClass;
    matured_[nodes_[i].resource + 1].insert(i);
  }
  if (memory_rules_ || config_.reference_selection) return SelectByScan();
  // 2. A done that fits beats every other candidate.
  int best = -1;
  for (const auto& d : dones_) {
    if (!d.empty() && Fits(nodes_[*d.begin()]) &&
        (best < 0 || Better(*d.begin(), best))) {
      best = *d.begin();
    }
  }
  if (best >= 0) return best;
  // 3-9 among candidates that do not stall: the best of each set.
  if (!plain_.empty()) best = *plain_.begin();
  for (const auto& m : matured_) {
    if (!m.empty() && (best < 0 || Better(*m.begin(), best))) {
      best = *m.begin();
    }
  }
  for (int d : needy_) {
    if (Fits(nodes_[d]) && (best < 0 || Better(d, best))) best = d;
  }
  if (best >= 0) return best;
  // Only stalling starts (and blocked nodes) remain: the least stall.
  if (!pending_.empty()) {
    double t = nodes_[*pending_.begin()].ready_time;
    for (int i : pending_) {
      if (nodes_[i].ready_time != t) break;
      if (best < 0 || Better(i, best)) best = i;
    }
    return best;
  }
  return SelectByScan();
}

void Scheduler::Schedule(int i) {
  Node& n = nodes_[i];
  double t = std::max(now_, n.ready_time);
  n.time = t;
  now_ = t + n.cost;
  n.scheduled = true;
  reversed_.push_back(i);
  if (n.is_done && n.resource != kNoResource) ++in_flight_[n.resource];
  if (n.is_start && n.resource != kNoResource && in_flight_[n.resource] > 0) {
    --in_flight_[n.resource];
  }
  // Memory: operands' buffers become live; the buffers this instruction
  // defines die (going up, they were live from here to their last use).
  for (int p : n.preds) MakeLive(nodes_[p].holds);
  for (int32_t b : n.defines) {
    if (live_[b]) {
      live_[b] = false;
      live_bytes_ -= buffer_bytes_[b];
    }
  }
  for (int p : n.preds) {
    Node& pred = nodes_[p];
    --pred.remaining_succs;
    if (pred.remaining_succs == 1) {
      // The one unscheduled user now unlocks p (rule 8).
      for (int u : pred.succs) {
        Node& user = nodes_[u];
        if (user.scheduled) continue;
        if (user.ready) {
          bool keyed = user.cls == kPlainClass || user.cls == kMaturedClass ||
                       user.cls == kDoneClass;
          if (keyed) Erase(u);
          ++user.unlocks;
          if (keyed) Insert(u);
        }
        break;
      }
    } else if (pred.remaining_succs == 0 &&
               pred.instr->opcode() != Opcode::kParameter) {
      MakeReady(p);
    }
  }
}

absl::StatusOr<ComputationSchedule> Scheduler::Run() {
  Build();
  ComputationSchedule result;
  const int n = static_cast<int>(nodes_.size());
  // Outputs are live at the bottom.
  if (comp_.root() != nullptr) {
    auto it = index_.find(comp_.root());
    if (it != index_.end()) {
      MakeLive(nodes_[it->second].holds);
    }
  }
  int root = -1;
  if (comp_.root() != nullptr) {
    auto it = index_.find(comp_.root());
    if (it != index_.end() && nodes_[it->second].remaining_succs == 0) {
      root = it->second;
    }
  }
  for (int i = 0; i < n; ++i) {
    if (nodes_[i].remaining_succs == 0 &&
        nodes_[i].instr->opcode() != Opcode::kParameter && i != root) {
      MakeReady(i);
    }
  }
  if (root >= 0) Schedule(root);

  while (ready_count_ > 0) {
    int pick = Select();
    if (pick < 0) break;
    Erase(pick);
    Schedule(pick);
  }

  // Parameters go first (in number order); anything left unscheduled (only
  // possible with a cycle) keeps its original order.
  std::vector<Instruction*> order;
  order.reserve(n);
  std::vector<int> params;
  for (int i = 0; i < n; ++i) {
    if (!nodes_[i].scheduled &&
        nodes_[i].instr->opcode() == Opcode::kParameter) {
      params.push_back(i);
    }
  }
  std::sort(params.begin(), params.end(), [&](int a, int b) {
    return std::make_pair(nodes_[a].instr->parameter_number(), a) <
           std::make_pair(nodes_[b].instr->parameter_number(), b);
  });
  for (int p : params) {
    nodes_[p].scheduled = true;
    order.push_back(nodes_[p].instr);
  }
  for (auto it = reversed_.rbegin(); it != reversed_.rend(); ++it) {
    order.push_back(nodes_[*it].instr);
  }
  if (static_cast<int>(order.size()) != n) {
    return absl::InternalError(
        absl::StrCat("latency-hiding-scheduler: computation ", comp_.name(),
                     ": dependency cycle, scheduled ", order.size(), " of ", n,
                     " instructions"));
  }
  // The peak reported and held against the limit is the one model's
  // (analysis/buffer_analysis.h, what `hloverlap sim` reports), not the
  // list scheduler's running estimate.
  result.peak_memory_bytes =
      PeakOverSequence(
          comp_, std::vector<const Instruction*>(order.begin(), order.end()),
          comp_.is_entry(), config_.is_loop_body)
          .bytes;
  result.memory_limit_exceeded =
      config_.memory_limit_bytes.has_value() &&
      result.peak_memory_bytes > *config_.memory_limit_bytes;
  result.order = std::move(order);
  result.resource_limit_overrides = overrides_;
  return result;
}

Remark ComputationRemark(RemarkKind kind, std::string name,
                         const Computation& comp,
                         const std::string& loop_path) {
  Remark r;
  r.pass = std::string(kPassName);
  r.kind = kind;
  r.name = std::move(name);
  r.instruction = comp.name();
  r.loop = loop_path;
  return r;
}

std::string FormatUs(double us) {
  if (us >= 1000) return absl::StrFormat("%.2f ms", us / 1000);
  return absl::StrFormat("%.1f us", us);
}

int64_t Ns(double us) {
  double ns = us * 1000;
  if (!(ns > 0)) return 0;
  if (ns > 9e18) return INT64_MAX;
  return static_cast<int64_t>(std::llround(ns));
}

// The peak --memory-budget allows: the pipeline's input peak plus the
// budget (planning.h's MemoryLedger); unset without a budget.
std::optional<int64_t> MemoryBudgetBound(const PassContext& context) {
  const MemoryLedger& ledger = context.memory;
  if (!ledger.budget().has_value() || !ledger.input_peak().has_value()) {
    return std::nullopt;
  }
  return *ledger.input_peak() + *ledger.budget();
}

// The limit on each computation's peak: --scheduler-memory-limit, else the
// smaller of XLA's (slop factor) and what --memory-budget allows.
std::optional<int64_t> SchedulerMemoryLimit(const Module& module,
                                            const PassContext& context) {
  const PassOptions& options = context.options;
  if (options.scheduler_memory_limit_bytes.has_value()) {
    return options.scheduler_memory_limit_bytes;
  }
  std::optional<int64_t> limit = MemoryBudgetBound(context);
  if (options.scheduler_memory_slop_percent.has_value()) {
    // XLA:GPU's limit (reference/xla_lhs.md 2.5): 80% of the device memory
    // less the entry's parameters and outputs, times the slop factor.
    std::optional<GpuSpec> spec = GpuSpecByName(options.gpu);
    int64_t io = 0;
    if (const Computation* entry = module.entry(); entry != nullptr) {
      for (int64_t p = 0; p < entry->num_parameters(); ++p) {
        if (entry->parameter(p) != nullptr) {
          io += entry->parameter(p)->shape().ByteSize();
        }
      }
      if (entry->root() != nullptr) io += entry->root()->shape().ByteSize();
    }
    const double base = spec.has_value() ? 0.8 * spec->memory_bytes : 0;
    const int64_t xla = static_cast<int64_t>(
        std::max(0.0, (base - static_cast<double>(io)) *
                          *options.scheduler_memory_slop_percent / 100.0));
    limit = limit.has_value() ? std::min(*limit, xla) : xla;
  }
  return limit;
}

// `comp`'s peak in its stored order (as a callee: parameters the caller's).
int64_t CalleePeak(const Computation& comp, bool is_loop_body) {
  std::vector<const Instruction*> order;
  for (const auto& i : comp.instructions()) order.push_back(i.get());
  return PeakOverSequence(comp, order, /*is_entry=*/false, is_loop_body).bytes;
}

// A schedule over the memory limit gives way to the input order when that
// one fits (the budget binds; the overlap it loses is reported per pair).
// Says so with an InputOrderKept remark.
void KeepInputOrderIfItFits(const Computation& comp,
                            const std::vector<Instruction*>& input,
                            const SchedulerConfig& config,
                            ComputationSchedule& schedule, RemarkSink& sink) {
  if (!schedule.memory_limit_exceeded || schedule.order == input) return;
  const int64_t peak =
      PeakOverSequence(
          comp, std::vector<const Instruction*>(input.begin(), input.end()),
          comp.is_entry(), config.is_loop_body)
          .bytes;
  if (peak > *config.memory_limit_bytes) return;
  Remark r = ComputationRemark(RemarkKind::kMissed, "InputOrderKept", comp, "");
  r.message =
      absl::StrCat("kept the input order of ", comp.name(),
                   ": the order found would exceed the memory limit (",
                   HumanBytes(*config.memory_limit_bytes),
                   "); the input order's peak ", HumanBytes(peak), " fits");
  r.Metric("peak_memory_bytes", peak);
  r.Metric("memory_limit_bytes", *config.memory_limit_bytes);
  sink.Emit(std::move(r));
  schedule.order = input;
  schedule.peak_memory_bytes = peak;
  schedule.memory_limit_exceeded = false;
}

// Whether `comp` is the body of a while (its outputs take over the loop
// state's buffers).
bool IsLoopBody(const Computation* comp, const CallGraph& graph);

// When the module's peak exceeds `bound` (the input's peak plus
// --memory-budget) after scheduling, although it did not before: gives the
// computations whose new order raised their own peak most their input
// order back, one at a time, until the module fits (each an InputOrderKept
// remark), then brings the kept schedules' peaks up to date.
absl::Status FitMemoryBudget(
    Module& module, int64_t bound, const SchedulerConfig& config,
    const absl::flat_hash_map<Computation*, std::vector<Instruction*>>& inputs,
    const CallGraph& graph,
    absl::flat_hash_map<const Computation*, ComputationSchedule>& schedules,
    RemarkSink& sink) {
  int64_t peak = ModulePeakMemory(module).bytes;
  if (peak <= bound) return absl::OkStatus();
  struct Growth {
    Computation* comp;
    int64_t bytes;
  };
  std::vector<Growth> grown;
  for (const auto& [comp, input] : inputs) {
    const bool body = IsLoopBody(comp, graph);
    const int64_t now = CalleePeak(*comp, body);
    const int64_t was =
        PeakOverSequence(
            *comp, std::vector<const Instruction*>(input.begin(), input.end()),
            /*is_entry=*/false, body)
            .bytes;
    if (now > was) grown.push_back({comp, now - was});
  }
  std::sort(grown.begin(), grown.end(), [](const Growth& a, const Growth& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes
                              : a.comp->name() < b.comp->name();
  });
  for (const Growth& g : grown) {
    const int64_t over = peak;
    std::vector<Instruction*> scheduled;
    for (const auto& i : g.comp->instructions()) scheduled.push_back(i.get());
    if (absl::Status st = g.comp->SetInstructionOrder(inputs.at(g.comp));
        !st.ok()) {
      return st;
    }
    peak = ModulePeakMemory(module).bytes;
    if (peak >= over) {
      // Not where the module's peak is: keep the overlap.
      if (absl::Status st = g.comp->SetInstructionOrder(scheduled); !st.ok()) {
        return st;
      }
      peak = over;
      continue;
    }
    if (auto it = schedules.find(g.comp); it != schedules.end()) {
      it->second.order = inputs.at(g.comp);
    }
    Remark r =
        ComputationRemark(RemarkKind::kMissed, "InputOrderKept", *g.comp, "");
    r.message = absl::StrCat("kept the input order of ", g.comp->name(),
                             ": its schedule raised its own peak by ",
                             HumanBytes(g.bytes), " and the module's peak (",
                             HumanBytes(over),
                             ") exceeded the input's plus --memory-budget (",
                             HumanBytes(bound), "); now ", HumanBytes(peak));
    r.Metric("peak_memory_bytes", peak);
    r.Metric("memory_limit_bytes", bound);
    sink.Emit(std::move(r));
    if (peak <= bound) break;
  }
  if (peak > bound && module.entry() != nullptr) {
    // Only together do the orders raise the peak: every computation gets
    // its input order back (the module's peak before scheduling fits).
    const int64_t over = peak;
    for (const auto& [comp, input] : inputs) {
      if (absl::Status st = comp->SetInstructionOrder(input); !st.ok()) {
        return st;
      }
      if (auto it = schedules.find(comp); it != schedules.end()) {
        it->second.order = input;
      }
    }
    peak = ModulePeakMemory(module).bytes;
    Remark r = ComputationRemark(RemarkKind::kMissed, "InputOrderKept",
                                 *module.entry(), "");
    r.message = absl::StrCat(
        "kept the input order of every computation: the scheduled orders "
        "together raised the module's peak to ",
        HumanBytes(over), ", above the input's plus --memory-budget (",
        HumanBytes(bound), "); now ", HumanBytes(peak));
    r.Metric("peak_memory_bytes", peak);
    r.Metric("memory_limit_bytes", bound);
    sink.Emit(std::move(r));
  }
  for (auto& [comp, schedule] : schedules) {
    std::vector<const Instruction*> order;
    for (const auto& i : comp->instructions()) order.push_back(i.get());
    schedule.peak_memory_bytes =
        PeakOverSequence(*comp, order, comp->is_entry(),
                         IsLoopBody(comp, graph))
            .bytes;
    schedule.memory_limit_exceeded =
        config.memory_limit_bytes.has_value() &&
        schedule.peak_memory_bytes > *config.memory_limit_bytes;
  }
  return absl::OkStatus();
}

// The remarks of one scheduled computation: per async collective pair
// (overlapped or exposed), the computation's estimate, and the limits it
// did not meet. `schedule`: nullptr when scheduling failed.
void ReportComputation(const Computation& computation,
                       const SequenceTiming& timing,
                       const ComputationSchedule* schedule,
                       const SchedulerConfig& config, const CallGraph& graph,
                       const LoopNest& loops, const Module& module,
                       RemarkSink& sink, int64_t& total_pairs,
                       int64_t& hidden_pairs) {
  const Computation* comp = &computation;
  std::string loop_path;
  for (Instruction* caller : graph.CallSites(comp)) {
    if (caller->opcode() == Opcode::kWhile) {
      const LoopNode* node = loops.Find(caller);
      if (node != nullptr) loop_path = node->path;
      break;
    }
  }
  int64_t sync_collectives = 0;
  for (const auto& p : comp->instructions()) {
    if (IsCollective(p->opcode())) ++sync_collectives;
  }
  int64_t collective_pairs = 0;
  for (const AsyncPairTiming& pair : timing.pairs) {
    if (!pair.collective || pair.done == nullptr) continue;
    ++collective_pairs;
    ++total_pairs;
    double hidden = pair.latency_us - pair.exposed_us;
    bool passed = pair.latency_us <= 0 || hidden >= 0.5 * pair.latency_us;
    if (passed) ++hidden_pairs;
    Remark r = InstructionRemark(
        kPassName, passed ? RemarkKind::kPassed : RemarkKind::kMissed,
        passed ? "OverlappedCollective" : "ExposedCollective", *pair.start,
        module, loop_path, "");
    std::optional<CollectiveInfo> info =
        GpuCostModel::GetCollectiveInfo(*pair.start);
    std::string what = info.has_value()
                           ? std::string(OpcodeName(info->opcode))
                           : std::string(OpcodeName(pair.start->opcode()));
    r.message = absl::StrCat(passed ? "overlapped " : "exposed ", what, " ",
                             pair.start->name(), ": ", FormatUs(hidden), " of ",
                             FormatUs(pair.latency_us), " hidden behind ",
                             pair.instructions_between, " instructions in ",
                             comp->name());
    if (!passed) {
      r.suggestion =
          pair.instructions_between == 0
              ? "no independent compute between the start and its use; "
                "pipeline the collective across loop iterations "
                "(collective-pipeliner) or double-buffer the loop"
              : "not enough independent compute before the use; "
                "pipelining across iterations or a higher "
                "--in-flight-limit may hide more";
    }
    r.Metric("latency_ns", Ns(pair.latency_us));
    r.Metric("exposed_ns", Ns(pair.exposed_us));
    if (info.has_value()) r.Metric("bytes_moved", info->bytes);
    sink.Emit(std::move(r));
  }
  if (collective_pairs > 0 || sync_collectives > 0 ||
      (schedule != nullptr && (schedule->memory_limit_exceeded ||
                               schedule->resource_limit_overrides > 0))) {
    Remark r = ComputationRemark(RemarkKind::kAnalysis, "ScheduledComputation",
                                 *comp, loop_path);
    r.message =
        absl::StrCat("scheduled ", comp->name(), ": estimated ",
                     FormatUs(timing.duration_us), ", exposed collectives ",
                     FormatUs(timing.exposed_us), ", ", collective_pairs,
                     " async collectives, ", sync_collectives, " synchronous");
    if (sync_collectives > 0) {
      r.suggestion =
          "synchronous collectives cannot overlap; run async-collectives "
          "before the scheduler";
    }
    r.Metric("duration_ns", Ns(timing.duration_us));
    r.Metric("exposed_ns", Ns(timing.exposed_us));
    if (schedule != nullptr) {
      r.Metric("peak_memory_bytes", schedule->peak_memory_bytes);
    }
    sink.Emit(std::move(r));
  }
  if (schedule != nullptr && schedule->memory_limit_exceeded) {
    Remark r = ComputationRemark(RemarkKind::kMissed, "OverMemoryLimit", *comp,
                                 loop_path);
    r.message = absl::StrCat("memory limit ", *config.memory_limit_bytes,
                             " bytes not met in ", comp->name(),
                             ": estimated peak ", schedule->peak_memory_bytes,
                             " bytes; kept the best schedule found");
    r.suggestion = "raise --scheduler-memory-limit or reduce pipelining";
    r.Metric("peak_memory_bytes", schedule->peak_memory_bytes);
    r.Metric("memory_limit_bytes", *config.memory_limit_bytes);
    sink.Emit(std::move(r));
  }
  if (schedule != nullptr && schedule->resource_limit_overrides > 0) {
    Remark r = ComputationRemark(RemarkKind::kMissed, "InFlightLimitExceeded",
                                 *comp, loop_path);
    r.message =
        absl::StrCat("in ", comp->name(), " the in-flight limit (",
                     config.collective_in_flight_limit, ") had to be exceeded ",
                     schedule->resource_limit_overrides,
                     " times: every remaining candidate needed a busy stream");
    sink.Emit(std::move(r));
  }
}

// Whether `comp` is the body of a while (its outputs take over the loop
// state's buffers).
bool IsLoopBody(const Computation* comp, const CallGraph& graph) {
  for (Instruction* caller : graph.CallSites(comp)) {
    if (caller->opcode() == Opcode::kWhile && caller->while_body() == comp) {
      return true;
    }
  }
  return false;
}

// The MemoryBudgetNotMet remark when the module's final peak exceeds what
// --memory-budget allows (`bound`), saying where the bytes came from.
void CheckMemoryBudget(const Module& module, const PassContext& context,
                       int64_t bound, int64_t peak_before, int64_t peak_after,
                       RemarkSink& sink) {
  if (peak_after <= bound) return;
  const MemoryLedger& ledger = context.memory;
  Remark r;
  r.pass = std::string(kPassName);
  r.kind = RemarkKind::kMissed;
  r.name = "MemoryBudgetNotMet";
  r.instruction = module.name();
  r.message = absl::StrCat(
      "--memory-budget not met: the module's peak is ", HumanBytes(peak_after),
      ", above the input's ", HumanBytes(*ledger.input_peak()), " plus ",
      HumanBytes(*ledger.budget()), " (", HumanBytes(bound), "); ",
      peak_before > bound
          ? absl::StrCat("the rewrites and async conversion already reached ",
                         HumanBytes(peak_before),
                         " before scheduling (their planned extra live "
                         "bytes were ",
                         HumanBytes(ledger.spent()),
                         "; the buffers XLA's copies add are not in that "
                         "estimate)")
          : absl::StrCat("the peak was ", HumanBytes(peak_before),
                         " before scheduling; no order the scheduler found "
                         "keeps the collectives' buffers within it"));
  r.suggestion =
      "raise --memory-budget, or turn pipelining or double buffering off "
      "for the largest loop (--loop)";
  r.Metric("peak_memory_bytes", peak_after);
  r.Metric("peak_before_scheduling_bytes", peak_before);
  r.Metric("memory_bound_bytes", bound);
  sink.Emit(std::move(r));
}

}  // namespace

double ScheduledNodeCostUs(const Instruction& instr,
                           const LatencyEstimator& estimator,
                           const CalleeInfoMap& callees) {
  Opcode op = instr.opcode();
  if (op == Opcode::kWhile && instr.called_computations().size() >= 2) {
    auto body = callees.find(instr.while_body());
    auto cond = callees.find(instr.while_condition());
    if (body != callees.end() && cond != callees.end()) {
      std::optional<int64_t> trip = WhileTripCount(instr);
      double k = static_cast<double>(trip.value_or(1));
      return k * (body->second.duration_us + cond->second.duration_us) +
             cond->second.duration_us;
    }
  }
  if (op == Opcode::kCall || op == Opcode::kConditional) {
    double t = 0;
    bool all = !instr.called_computations().empty();
    for (const Computation* c : instr.called_computations()) {
      auto it = callees.find(c);
      if (it == callees.end()) {
        all = false;
        break;
      }
      t = op == Opcode::kCall ? t + it->second.duration_us
                              : std::max(t, it->second.duration_us);
    }
    if (all) return t;
  }
  return estimator.NodeCostUs(instr);
}

SequenceTiming EstimateSequence(const Computation& computation,
                                const LatencyEstimator& estimator,
                                int in_flight_limit,
                                const CalleeInfoMap& callees) {
  SequenceTiming timing;
  std::vector<double> slots(std::max(1, in_flight_limit), 0.0);
  double async_compute_free[2] = {0, 0};
  struct Open {
    double end = 0;
    double issue = 0;
    int64_t position = 0;
    size_t pair = 0;
  };
  absl::flat_hash_map<const Instruction*, Open> open;
  double t = 0;
  int64_t in_flight = 0;
  int64_t position = 0;
  for (const auto& p : computation.instructions()) {
    const Instruction& in = *p;
    ++position;
    Opcode op = in.opcode();
    if (IsStartLike(op)) {
      double latency = estimator.AsyncLatencyUs(in);
      if (!std::isfinite(latency) || latency < 0) latency = 0;
      double issue = t + std::max(0.0, estimator.NodeCostUs(in));
      Resource r = ResourceOf(in);
      double begin = issue;
      if (r == kCollectiveStream) {
        auto slot = std::min_element(slots.begin(), slots.end());
        begin = std::max(issue, *slot);
        *slot = begin + latency;
        ++in_flight;
        timing.peak_in_flight = std::max(timing.peak_in_flight, in_flight);
      } else if (r == kAsyncCompute) {
        double* slot =
            std::min_element(async_compute_free, async_compute_free + 2);
        begin = std::max(issue, *slot);
        *slot = begin + latency;
      }
      AsyncPairTiming pair;
      pair.start = const_cast<Instruction*>(&in);
      pair.collective = r == kCollectiveStream;
      pair.latency_us = latency;
      timing.pairs.push_back(pair);
      open[&in] =
          Open{begin + latency, issue, position, timing.pairs.size() - 1};
      t = issue;
      continue;
    }
    if (IsDoneLike(op)) {
      const Instruction* s = StartOf(in);
      auto it = s == nullptr ? open.end() : open.find(s);
      if (it != open.end()) {
        AsyncPairTiming& pair = timing.pairs[it->second.pair];
        pair.done = const_cast<Instruction*>(&in);
        pair.exposed_us = std::max(0.0, it->second.end - t);
        pair.instructions_between = position - it->second.position - 1;
        timing.exposed_us += pair.collective ? pair.exposed_us : 0;
        if (pair.collective && in_flight > 0) --in_flight;
        t = std::max(t, it->second.end);
        open.erase(it);
      }
      continue;
    }
    double cost = ScheduledNodeCostUs(in, estimator, callees);
    if (std::isfinite(cost) && cost > 0) t += cost;
    if (IsCollective(op)) {
      // A synchronous collective's whole time is exposed.
      timing.exposed_us += cost;
    }
    if (op == Opcode::kWhile || op == Opcode::kCall ||
        op == Opcode::kConditional) {
      for (const Computation* c : in.called_computations()) {
        auto ci = callees.find(c);
        if (ci != callees.end()) {
          timing.peak_in_flight =
              std::max(timing.peak_in_flight,
                       in_flight + ci->second.collectives_in_flight);
        }
      }
    }
  }
  timing.duration_us = t;
  return timing;
}

absl::StatusOr<ComputationSchedule> ScheduleComputation(
    const Computation& computation, const LatencyEstimator& estimator,
    const SchedulerConfig& config, const CalleeInfoMap& callees) {
  Scheduler scheduler(computation, estimator, config, callees);
  return scheduler.Run();
}

absl::StatusOr<bool> LatencyHidingSchedulerPass::Run(Module& module,
                                                     PassContext& context) {
  const PassOptions& options = context.options;
  std::unique_ptr<LatencyEstimator> estimator =
      MakeLatencyEstimator("analytical", options.gpu);
  if (estimator == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown GPU '", options.gpu,
                     "' (known: ", absl::StrJoin(KnownGpuNames(), ", "), ")"));
  }
  if (options.collective_in_flight_limit < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("collective in-flight limit must be >= 1, got ",
                     options.collective_in_flight_limit));
  }
  SchedulerConfig config;
  config.collective_in_flight_limit = options.collective_in_flight_limit;
  config.memory_limit_bytes = SchedulerMemoryLimit(module, context);
  const std::optional<int64_t> budget_bound = MemoryBudgetBound(context);
  const int64_t peak_before = ModulePeakMemory(module).bytes;

  // Callees before callers; unreachable computations after.
  CallGraph graph(module);
  std::vector<Computation*> order = graph.PostOrder();
  {
    absl::flat_hash_set<const Computation*> seen(order.begin(), order.end());
    for (const auto& c : module.computations()) {
      if (!seen.contains(c.get())) order.push_back(c.get());
    }
  }
  LoopNest loops(module);
  CalleeInfoMap callees;
  absl::flat_hash_map<Computation*, std::vector<Instruction*>> inputs;
  absl::flat_hash_map<const Computation*, ComputationSchedule> schedules;
  bool changed = !module.is_scheduled();
  int64_t total_pairs = 0;
  int64_t hidden_pairs = 0;
  for (Computation* comp : order) {
    if (comp->IsFusionComputation()) continue;
    std::vector<Instruction*> before;
    before.reserve(comp->instructions().size());
    for (const auto& p : comp->instructions()) before.push_back(p.get());
    SchedulerConfig comp_config = config;
    comp_config.is_loop_body = IsLoopBody(comp, graph);
    absl::StatusOr<ComputationSchedule> schedule =
        ScheduleComputation(*comp, *estimator, comp_config, callees);
    if (schedule.ok()) {
      KeepInputOrderIfItFits(*comp, before, comp_config, *schedule,
                             context.remarks);
    }
    if (!schedule.ok()) {
      // Keep the stored order (a valid one) and explain.
      Remark r;
      r.pass = std::string(kPassName);
      r.kind = RemarkKind::kFailure;
      r.name = "SchedulingFailed";
      r.instruction = comp->name();
      r.message = absl::StrCat("kept the input order of computation ",
                               comp->name(), ": ", schedule.status().message());
      context.remarks.Emit(std::move(r));
    } else {
      if (schedule->order != before) {
        absl::Status st = comp->SetInstructionOrder(schedule->order);
        if (!st.ok()) return st;
        changed = true;
      }
    }
    SequenceTiming timing = EstimateSequence(
        *comp, *estimator, config.collective_in_flight_limit, callees);
    callees[comp] =
        CalleeInfo{timing.duration_us, timing.peak_in_flight,
                   schedule.ok() ? schedule->peak_memory_bytes
                                 : CalleePeak(*comp, comp_config.is_loop_body)};
    inputs[comp] = std::move(before);
    if (schedule.ok()) schedules[comp] = *std::move(schedule);
  }
  if (budget_bound.has_value() && peak_before <= *budget_bound) {
    if (absl::Status s = FitMemoryBudget(module, *budget_bound, config, inputs,
                                         graph, schedules, context.remarks);
        !s.ok()) {
      return s;
    }
  }
  // Remarks, from the orders kept (callees first, as scheduled).
  callees.clear();
  for (Computation* comp : order) {
    if (comp->IsFusionComputation()) continue;
    SequenceTiming timing = EstimateSequence(
        *comp, *estimator, config.collective_in_flight_limit, callees);
    auto it = schedules.find(comp);
    const ComputationSchedule* schedule =
        it == schedules.end() ? nullptr : &it->second;
    callees[comp] = CalleeInfo{
        timing.duration_us, timing.peak_in_flight,
        schedule != nullptr ? schedule->peak_memory_bytes
                            : CalleePeak(*comp, IsLoopBody(comp, graph))};
    ReportComputation(*comp, timing, schedule, config, graph, loops, module,
                      context.remarks, total_pairs, hidden_pairs);
  }
  module.set_is_scheduled(true);
  if (budget_bound.has_value()) {
    CheckMemoryBudget(module, context, *budget_bound, peak_before,
                      ModulePeakMemory(module).bytes, context.remarks);
  }
  Remark summary;
  summary.pass = std::string(kPassName);
  summary.kind = RemarkKind::kAnalysis;
  summary.name = "ScheduledModule";
  summary.instruction = module.name();
  auto entry =
      module.entry() == nullptr ? callees.end() : callees.find(module.entry());
  // The step: what `hloverlap sim` says of the module written (the cost
  // oracle runs the same simulator; one model, one answer, issue 26), else
  // the scheduler's own estimate of the entry's sequence.
  double step_us = entry == callees.end() ? 0 : entry->second.duration_us;
  std::string step_basis = "scheduler's estimate";
  if (context.cost_oracle != nullptr) {
    absl::StatusOr<StepPrediction> p = context.cost_oracle->PredictStep(module);
    if (p.ok()) {
      step_us = p->step_us;
      step_basis = "simulated";
      summary.Metric("exposed_communication_ns",
                     Ns(p->exposed_communication_us));
      summary.Metric("peak_memory_bytes", p->peak_memory_bytes);
    }
  }
  summary.message = absl::StrCat(
      "scheduled module ", module.name(), " for ", AsAbsl(estimator->name()),
      " ", options.gpu, " (in-flight limit ", config.collective_in_flight_limit,
      config.memory_limit_bytes.has_value()
          ? absl::StrCat(", memory limit ", *config.memory_limit_bytes,
                         " bytes")
          : std::string(),
      "): ", hidden_pairs, " of ", total_pairs,
      " async collectives overlapped; estimated step ", FormatUs(step_us), " (",
      step_basis, ")");
  summary.Metric("async_collectives", total_pairs);
  summary.Metric("overlapped", hidden_pairs);
  if (entry != callees.end()) summary.Metric("duration_ns", Ns(step_us));
  context.remarks.Emit(std::move(summary));
  return changed;
}

// Registration (passes/pass_registry.h).
void RegisterLatencyHidingSchedulerPass(PassRegistry& registry) {
  registry.Add<LatencyHidingSchedulerPass>(
      "list-schedule every computation so async collectives overlap compute "
      "(sets is_scheduled=true)",
      {PassOptionInfo::Int("in-flight",
                           &PassOptions::collective_in_flight_limit, 1, 8,
                           "async collectives in flight at once (1 as "
                           "XLA:GPU; 2 lets two overlap)")
           .SetFlag("--in-flight-limit"),
       PassOptionInfo::Enum("gpu", &PassOptions::gpu, KnownGpuNames(),
                            "device preset of the analytical cost model")
           .SetFlag("--gpu")});
}

}  // namespace hloverlap
