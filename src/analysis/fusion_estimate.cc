// What XLA:GPU will launch for an unfused computation (see the header).
#include "analysis/fusion_estimate.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "hlo/computation.h"
#include "hlo/instruction.h"
#include "hlo/opcode_traits.h"

namespace hloverlap {
namespace {

enum class Class {
  kView,     // bitcast, reshape: the operand's buffer
  kOwnCost,  // priced by the per-op model (free ops, collectives, ...)
  kGemm,     // dot, convolution: a cuBLAS call
  kHero,     // reduce, dynamic-update-slice, ...: a fusion root
  kFusible,  // elementwise and data movement: fused into consumers
};

absl::InlinedVector<int64_t, 6> MinorToMajor(const Shape& s) {
  if (s.has_layout() &&
      static_cast<int64_t>(s.layout()->minor_to_major.size()) == s.rank()) {
    return s.layout()->minor_to_major;
  }
  absl::InlinedVector<int64_t, 6> m;
  for (int64_t d = s.rank() - 1; d >= 0; --d) m.push_back(d);
  return m;
}

// A transpose whose result layout leaves every element where it is (the
// physical order of the non-degenerate dimensions is the operand's): XLA's
// layout assignment makes it a bitcast.
bool IsLayoutTranspose(const Instruction& t) {
  if (t.operand_count() != 1) return false;
  const Shape& r = t.shape();
  const Shape& o = t.operand(0)->shape();
  const auto& perm = t.attrs().dimensions;
  if (!r.IsArray() || !o.IsArray() || r.rank() != o.rank() ||
      static_cast<int64_t>(perm.size()) != r.rank()) {
    return false;
  }
  absl::InlinedVector<int64_t, 6> a, b;
  for (int64_t d : MinorToMajor(r)) {
    if (d < 0 || d >= r.rank() || perm[d] < 0 || perm[d] >= o.rank()) {
      return false;
    }
    if (r.dimensions(d) != 1) a.push_back(perm[d]);
  }
  for (int64_t d : MinorToMajor(o)) {
    if (d < 0 || d >= o.rank()) return false;
    if (o.dimensions(d) != 1) b.push_back(d);
  }
  return a == b;
}

Class Classify(const Instruction& i) {
  switch (i.opcode()) {
    case Opcode::kBitcast:
    case Opcode::kReshape:
      return Class::kView;
    case Opcode::kTranspose:
      return IsLayoutTranspose(i) ? Class::kView : Class::kFusible;
    case Opcode::kDot:
    case Opcode::kConvolution:
    case Opcode::kScaledDot:
      return Class::kGemm;
    case Opcode::kReduce:
    case Opcode::kReduceWindow:
    case Opcode::kDynamicUpdateSlice:
    case Opcode::kScatter:
      return Class::kHero;
    case Opcode::kBroadcast:
    case Opcode::kIota:
    case Opcode::kSlice:
    case Opcode::kDynamicSlice:
    case Opcode::kConcatenate:
    case Opcode::kPad:
    case Opcode::kReverse:
    case Opcode::kGather:
      return Class::kFusible;
    default:
      break;
  }
  if (IsElementwise(i.opcode()) && i.shape().IsArray()) return Class::kFusible;
  return Class::kOwnCost;
}

double Bytes(const Shape& shape) {
  return static_cast<double>(shape.ByteSize());
}

double Elements(const Shape& shape) {
  if (!shape.IsArray()) return 0;
  double n = 1;
  for (int64_t d : shape.dimensions()) {
    n *= static_cast<double>(std::max<int64_t>(d, 0));
  }
  return n;
}

// The buffer a value reads: through bitcasts and reshapes.
const Instruction* Source(const Instruction* v) {
  for (int k = 0; k < 256 && v->opcode() != Opcode::kGetTupleElement &&
                  Classify(*v) == Class::kView && v->operand_count() == 1;
       ++k) {
    v = v->operand(0);
  }
  return v;
}

bool IsBroadcastLike(const Instruction& i) {
  const Instruction* s = Source(&i);
  return s->opcode() == Opcode::kBroadcast || s->opcode() == Opcode::kIota ||
         (s->opcode() == Opcode::kConstant && Elements(s->shape()) <= 1);
}

// A broadcast of a scalar (or a scalar constant): a GEMM's alpha.
bool IsScalarBroadcast(const Instruction& i) {
  const Instruction* s = Source(&i);
  if (s->opcode() == Opcode::kConstant) return Elements(s->shape()) <= 1;
  return s->opcode() == Opcode::kBroadcast && s->operand_count() == 1 &&
         Elements(s->operand(0)->shape()) <= 1;
}

struct Group {
  const Instruction* root = nullptr;
  bool gemm = false;
  const Instruction* duplicate_of = nullptr;  // a GEMM computed again
  std::vector<const Instruction*> members;
};

class Planner {
 public:
  Planner(const Computation& c, const GpuCostModel& model,
          absl::flat_hash_map<const Instruction*, FusedKernelRole>& roles)
      : c_(c), model_(model), roles_(roles) {}

  void Run() {
    int64_t k = 0;
    for (const auto& i : c_.instructions()) position_[i.get()] = k++;
    for (const auto& i : c_.instructions()) {
      if (Classify(*i) == Class::kGemm) PlanGemm(*i);
    }
    const auto& list = c_.instructions();
    for (auto it = list.rbegin(); it != list.rend(); ++it) {
      const Instruction& i = **it;
      Class cls = Classify(i);
      if (member_of_.contains(&i)) continue;
      if (cls == Class::kHero) {
        NewGroup(i, false);
      } else if (cls == Class::kFusible) {
        PlanFusible(i);
      }
    }
    for (size_t g = 0; g < groups_.size(); ++g) Price(static_cast<int>(g));
    for (const auto& i : c_.instructions()) {
      Class cls = Classify(*i);
      if (cls == Class::kView) {  // a bitcast in XLA's module
        roles_[i.get()].kind = FusedKernelRole::Kind::kAbsorbed;
        continue;
      }
      if (cls != Class::kFusible && cls != Class::kHero &&
          cls != Class::kGemm) {
        roles_[i.get()];  // kOwnCost
        continue;
      }
      FusedKernelRole& r = roles_[i.get()];
      if (r.kind != FusedKernelRole::Kind::kKernel) {
        r.kind = FusedKernelRole::Kind::kAbsorbed;
      }
    }
  }

 private:
  // Users of `v`, through views; `escapes` when a view of it (or it) is the
  // computation's root.
  absl::InlinedVector<const Instruction*, 4> Users(const Instruction& v,
                                                   bool& escapes) const {
    absl::InlinedVector<const Instruction*, 4> out;
    absl::InlinedVector<const Instruction*, 4> work = {&v};
    absl::flat_hash_set<const Instruction*> seen;
    while (!work.empty()) {
      const Instruction* x = work.back();
      work.pop_back();
      if (x == c_.root()) escapes = true;
      for (const Instruction* u : x->users()) {
        if (!seen.insert(u).second) continue;
        if (Classify(*u) == Class::kView) {
          work.push_back(u);
        } else {
          out.push_back(u);
        }
      }
    }
    return out;
  }

  int NewGroup(const Instruction& root, bool gemm) {
    Group g;
    g.root = &root;
    g.gemm = gemm;
    g.members.push_back(&root);
    groups_.push_back(std::move(g));
    int id = static_cast<int>(groups_.size()) - 1;
    member_of_[&root].push_back(id);
    return id;
  }

  void Join(const Instruction& i, int g) {
    groups_[g].members.push_back(&i);
    member_of_[&i].push_back(g);
  }

  bool InGroup(const Instruction* i, int g) const {
    auto it = member_of_.find(i);
    if (it == member_of_.end()) return false;
    return std::find(it->second.begin(), it->second.end(), g) !=
           it->second.end();
  }

  // The GEMM and the epilogue XLA folds into its call.
  void PlanGemm(const Instruction& dot) {
    int g = NewGroup(dot, true);
    const Instruction* cur = &dot;
    bool added = false;
    for (int steps = 0; steps < 16; ++steps) {
      bool escapes = false;
      auto users = Users(*cur, escapes);
      if (escapes || users.size() != 1) break;
      const Instruction& u = *users[0];
      if (member_of_.contains(&u)) break;
      bool take = false;
      bool last = false;
      switch (u.opcode()) {
        case Opcode::kConvert:
          take = true;
          break;
        case Opcode::kMultiply:
          take = u.operand_count() == 2 && (IsScalarBroadcast(*u.operand(0)) ||
                                            IsScalarBroadcast(*u.operand(1)));
          break;
        case Opcode::kAdd:
          take = !added && u.operand_count() == 2;
          added = true;
          break;
        case Opcode::kDynamicUpdateSlice:
          take = u.operand_count() > 1 && Source(u.operand(1)) == cur &&
                 Source(u.operand(0)) != cur;
          last = true;
          break;
        default:
          break;
      }
      if (!take) break;
      Join(u, g);
      groups_[g].root = &u;
      cur = &u;
      if (last) break;
    }
    // Written into a buffer and used elsewhere: XLA computes it twice.
    bool escapes = false;
    auto users = Users(dot, escapes);
    if (users.size() < 2) return;
    for (const Instruction* u : users) {
      if (u->opcode() == Opcode::kDynamicUpdateSlice &&
          u->operand_count() > 1 && Source(u->operand(1)) == &dot &&
          Source(u->operand(0)) != &dot && !member_of_.contains(u)) {
        int d = NewGroup(*u, true);
        groups_[d].duplicate_of = &dot;
      }
    }
  }

  // n * (bytes it reads) <= (n + 1) * (bytes it writes): duplicating it
  // into n fusions moves no more than writing it once and reading it n
  // times.
  bool CheapToDuplicate(const Instruction& i, size_t n) const {
    if (IsBroadcastLike(i)) return true;
    double out = Bytes(i.shape());
    double in = 0;
    switch (i.opcode()) {
      case Opcode::kSlice:
      case Opcode::kDynamicSlice:
      case Opcode::kTranspose:
      case Opcode::kReverse:
        in = out;
        break;
      default:
        for (const Instruction* o : i.operands()) {
          const Instruction* s = Source(o);
          in += s->opcode() == Opcode::kBroadcast && s->operand_count() == 1
                    ? Bytes(s->operand(0)->shape())
                    : Bytes(s->shape());
        }
    }
    double dn = static_cast<double>(n);
    return dn * in <= (dn + 1) * out;
  }

  void PlanFusible(const Instruction& i) {
    bool escapes = false;
    auto users = Users(i, escapes);
    // A dynamic-slice or transpose read by a GEMM: a slice offset or layout
    // of the call (XLA's dynamic-slice fusion), no kernel of its own.
    const bool gemm_operand =
        i.opcode() == Opcode::kDynamicSlice || i.opcode() == Opcode::kTranspose;
    bool must = escapes || users.empty();
    int64_t latest_outside = -1;  // position of the last non-fusing user
    absl::InlinedVector<int, 4> groups;
    auto add_group = [&](int g) {
      if (std::find(groups.begin(), groups.end(), g) == groups.end()) {
        groups.push_back(g);
      }
    };
    for (const Instruction* u : users) {
      auto it = member_of_.find(u);
      bool fuses = it != member_of_.end();
      if (fuses && u->opcode() == Opcode::kDynamicUpdateSlice &&
          u->operand_count() > 0 && Source(u->operand(0)) == &i) {
        fuses = false;  // the buffer updated in place
      }
      if (fuses) {
        for (int g : it->second) {
          if (!groups_[g].gemm) {
            add_group(g);
          } else if (gemm_operand && u == groups_[g].members.front()) {
            add_group(g);
          } else if (u != groups_[g].members.front() && IsBroadcastLike(i)) {
            add_group(g);  // an epilogue's bias or alpha
          } else {
            fuses = false;
          }
        }
      }
      if (!fuses) {
        must = true;
        latest_outside = std::max(latest_outside, position_.at(u));
      }
    }
    if (escapes) latest_outside = INT64_MAX;
    if (!must && groups.size() == 1) {
      Join(i, groups[0]);
    } else if (!must && groups.size() > 1 &&
               CheapToDuplicate(i, groups.size())) {
      for (int g : groups) Join(i, g);
    } else if (must && groups.size() == 1 && !groups_[groups[0]].gemm &&
               latest_outside > position_.at(groups_[groups[0]].root)) {
      Join(i, groups[0]);  // an extra output of that fusion
    } else {
      NewGroup(i, false);
    }
  }

  // Is `m` (a member of `g`) written by the kernel of `g`?
  bool IsOutput(const Instruction* m, int g) const {
    if (m == groups_[g].root) return true;
    bool escapes = false;
    auto users = Users(*m, escapes);
    if (escapes) return true;
    const auto& mine = member_of_.at(m);
    for (const Instruction* u : users) {
      auto it = member_of_.find(u);
      if (it == member_of_.end()) return true;
      bool shared = false;
      for (int h : it->second) {
        shared = shared || std::find(mine.begin(), mine.end(), h) != mine.end();
      }
      // A user in a fusion that does not hold `m` reads it from memory.
      if (!shared) return true;
      if (u->opcode() == Opcode::kDynamicUpdateSlice &&
          u->operand_count() > 0 && Source(u->operand(0)) == m) {
        return true;
      }
    }
    return false;
  }

  void Price(int g) {
    const Group& group = groups_[g];
    FusedKernelRole role;
    role.kind = FusedKernelRole::Kind::kKernel;
    role.gemm = group.gemm;
    role.ops = static_cast<int64_t>(group.members.size());
    OpCost& cost = role.cost;
    cost.kernels = 1;
    absl::flat_hash_map<const Instruction*, double> sliced;
    absl::flat_hash_set<const Instruction*> full;
    auto read = [&](const Instruction* src, const Instruction& by, int64_t k) {
      if (InGroup(src, g)) return;
      Opcode op = by.opcode();
      if (k == 0 && (op == Opcode::kSlice || op == Opcode::kDynamicSlice ||
                     op == Opcode::kGather)) {
        sliced[src] += Bytes(by.shape());
      } else if (!(k == 0 && op == Opcode::kDynamicUpdateSlice)) {
        full.insert(src);
      }
    };
    if (group.duplicate_of != nullptr) {
      const Instruction& dot = *group.duplicate_of;
      OpCost d = model_.Cost(dot);
      cost.flops = d.flops;
      cost.compute_us = d.compute_us;
      for (const Instruction* o : dot.operands()) full.insert(Source(o));
      cost.bytes += group.root->operand_count() > 1
                        ? Bytes(group.root->operand(1)->shape())
                        : 0;
    } else {
      for (const Instruction* m : group.members) {
        for (int64_t k = 0; k < m->operand_count(); ++k) {
          read(Source(m->operand(k)), *m, k);
        }
        if (Classify(*m) == Class::kGemm || IsElementwise(m->opcode()) ||
            m->opcode() == Opcode::kReduce ||
            m->opcode() == Opcode::kReduceWindow) {
          OpCost c = model_.Cost(*m);
          cost.flops += c.flops;
          cost.compute_us += c.compute_us;
        }
        if (IsOutput(m, g)) {
          cost.bytes += m->opcode() == Opcode::kDynamicUpdateSlice &&
                                m->operand_count() > 1
                            ? Bytes(m->operand(1)->shape())
                            : Bytes(m->shape());
        }
      }
    }
    for (const Instruction* s : full) cost.bytes += Bytes(s->shape());
    for (const auto& [s, b] : sliced) {
      if (!full.contains(s)) cost.bytes += std::min(b, Bytes(s->shape()));
    }
    const GpuSpec& spec = model_.spec();
    cost.memory_us = spec.hbm_bytes_per_second > 0
                         ? cost.bytes / spec.hbm_bytes_per_second * 1e6
                         : 0;
    cost.time_us =
        spec.kernel_launch_us + std::max(cost.compute_us, cost.memory_us);
    roles_[group.root] = role;
  }

  const Computation& c_;
  const GpuCostModel& model_;
  absl::flat_hash_map<const Instruction*, FusedKernelRole>& roles_;
  absl::flat_hash_map<const Instruction*, int64_t> position_;
  std::vector<Group> groups_;
  absl::flat_hash_map<const Instruction*, absl::InlinedVector<int, 2>>
      member_of_;
};

}  // namespace

FusionEstimate::FusionEstimate(const GpuCostModel& model) : model_(model) {}
FusionEstimate::~FusionEstimate() = default;

void FusionEstimate::Plan(const Computation& computation) {
  if (!planned_.emplace(&computation, true).second) return;
  Planner(computation, model_, roles_).Run();
}

const FusedKernelRole& FusionEstimate::Role(const Instruction& instr) {
  static const FusedKernelRole kOwn;
  if (instr.parent() == nullptr) return kOwn;
  Plan(*instr.parent());
  auto it = roles_.find(&instr);
  return it == roles_.end() ? kOwn : it->second;
}

double FusionEstimate::ComputationTimeUs(const Computation& computation) {
  double t = 0;
  for (const auto& i : computation.instructions()) {
    const FusedKernelRole& r = Role(*i);
    switch (r.kind) {
      case FusedKernelRole::Kind::kOwnCost:
        t += model_.TimeUs(*i);
        break;
      case FusedKernelRole::Kind::kKernel:
        t += r.cost.time_us;
        break;
      case FusedKernelRole::Kind::kAbsorbed:
        break;
    }
  }
  return t;
}

}  // namespace hloverlap
