// Liveness peak memory (see the header).
#include "sim/liveness.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "analysis/collective_ops.h"
#include "analysis/gpu_cost_model.h"
#include "hlo/computation.h"
#include "hlo/instruction.h"

namespace hloverlap {
namespace {

// Nesting depth of called computations followed (the IR has no recursion;
// deep generated nests should not blow the stack).
constexpr int kMaxDepth = 64;

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
    // Over the instructions whose value is (a leaf of) this buffer so far:
    // the latest schedule position of one of their users (INT64_MAX for a
    // user outside the schedule), and whether one is a parameter or the
    // root (the buffer then never dies inside the computation).
    int64_t last_holder_use = -1;
    bool pinned = false;
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
        Buffer buffer;
        buffer.size = b;
        buffer.def = pos;
        buffer.last = pos;
        buffers.push_back(buffer);
      }
      return ids;
    };
    // By reference: a get-tuple-element of a wide loop state must not copy
    // all of its leaves. An operand outside the schedule (not in valid IR)
    // holds no buffer; `unknown` keeps those vectors at stable addresses.
    std::deque<std::vector<int64_t>> unknown;
    auto operand_leaves =
        [&](const Instruction* o) -> const std::vector<int64_t>& {
      auto it = leaves.find(o);
      if (it != leaves.end()) return it->second;
      return unknown.emplace_back(LeafCount(o->shape()), -1);
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
          const std::vector<int64_t>& src = operand_leaves(i.operand(0));
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
            const std::vector<int64_t>& s = operand_leaves(o);
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
              const std::vector<int64_t>& src = operand_leaves(i.operand(0));
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
              const std::vector<int64_t>& s = operand_leaves(o);
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
              i.shape().IsTuple() &&
              static_cast<int64_t>(ids.size()) == i.shape().tuple_size()) {
            for (int64_t k = 1; k < i.shape().tuple_size(); ++k) {
              if (ids[k] >= 0 && buffers[ids[k]].def == p &&
                  IsKernelScratch(i, k)) {
                buffers[ids[k]].scratch = true;
              }
            }
          }
          if (ids.empty() && IsElementwise(op)) ids = new_leaves(i.shape(), p);
          if ((op == Opcode::kFusion || IsElementwise(op)) && ids.size() == 1 &&
              ids[0] >= 0 && buffers[ids[0]].def == p &&
              buffers[ids[0]].size > 0) {
            ShareDyingOperand(i, p, leaves, ids, buffers);
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
                  !ClassifyCollective(i).has_value())) {
        for (const Computation* callee : i.called_computations()) {
          consider(callee, false);
        }
      }
      extra[p] = sub;
      if (sub > 0) sub_at_[&i] = sub_at;
      if (!ids.empty()) {
        int64_t last_use = -1;
        for (const Instruction* u : i.users()) {
          auto up = position.find(u);
          last_use =
              up == position.end() ? INT64_MAX : std::max(last_use, up->second);
          if (last_use == INT64_MAX) break;
        }
        bool pinned = op == Opcode::kParameter || &i == c.root();
        for (int64_t id : ids) {
          if (id < 0) continue;
          buffers[id].last_holder_use =
              std::max(buffers[id].last_holder_use, last_use);
          buffers[id].pinned = buffers[id].pinned || pinned;
        }
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
      const Instruction& i, int64_t p,
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
      // have no user after i (i itself is the only user at p).
      const Buffer& b = buffers[id];
      if (b.pinned || b.last_holder_use > p || b.last > p) continue;
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
      const std::vector<int64_t>& src = operand_leaves(i.operand(operand));
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

}  // namespace

PeakMemory ComputePeakMemory(const Module& module) {
  return Liveness(module).Run();
}

}  // namespace hloverlap
