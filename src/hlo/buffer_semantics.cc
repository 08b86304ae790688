// Buffer semantics of single instructions (see the header).
#include "hlo/buffer_semantics.h"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

#include "hlo/computation.h"

namespace hloverlap {
namespace {

const Instruction* SkipBitcasts(const Instruction* i) {
  while (i->opcode() == Opcode::kBitcast && i->operand_count() > 0) {
    i = i->operand(0);
  }
  return i;
}

// First leaf of tuple element `index` of `shape`, and its leaf count.
std::optional<std::pair<int64_t, int64_t>> ElementLeaves(const Shape& shape,
                                                         int64_t index) {
  if (!shape.IsTuple() || index < 0 || index >= shape.tuple_size()) {
    return std::nullopt;
  }
  int64_t offset = 0;
  for (int64_t k = 0; k < index; ++k)
    offset += LeafCount(shape.tuple_shapes(k));
  return std::make_pair(offset, LeafCount(shape.tuple_shapes(index)));
}

// Appends `count` leaves aliasing operand `operand` from `first` on.
void AppendAliases(int64_t operand, int64_t first, int64_t count,
                   std::vector<LeafSource>& out, bool in_place = false) {
  for (int64_t k = 0; k < count; ++k) {
    out.push_back({LeafKind::kAliases, operand, first + k, in_place});
  }
}

// Output index -> operand number from `output_to_operand_aliasing=
// {{0}: (2, {})}` (top-level output indices, whole operands).
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

// The fused parameter that fused root `r` (a root or root tuple element)
// updates in place: a dynamic-update-slice or scatter whose target is a
// parameter, through bitcasts.
std::optional<int64_t> InPlaceParameter(const Instruction* r) {
  r = SkipBitcasts(r);
  if ((r->opcode() != Opcode::kDynamicUpdateSlice &&
       r->opcode() != Opcode::kScatter) ||
      r->operand_count() == 0) {
    return std::nullopt;
  }
  const Instruction* target = SkipBitcasts(r->operand(0));
  if (target->opcode() != Opcode::kParameter) return std::nullopt;
  return target->parameter_number();
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
  const Instruction* r = SkipBitcasts(f->to_apply()->root());
  if (r->opcode() != Opcode::kDynamicUpdateSlice) return std::nullopt;
  std::optional<int64_t> j = InPlaceParameter(r);
  if (!j.has_value() || *j < 0 || *j >= f->operand_count()) {
    return std::nullopt;
  }
  const Instruction* q = f->operand(*j);
  if (q->opcode() != Opcode::kParameter || q->parameter_number() < 0 ||
      q->parameter_number() >= start.operand_count()) {
    return std::nullopt;
  }
  return q->parameter_number();
}

// Fusions and custom-calls: defined leaves, then the in-place outputs
// (output_to_operand_aliasing, fused dynamic-update-slice / scatter roots)
// and a GEMM's workspace.
void KernelLeaves(const Instruction& i, std::vector<LeafSource>& out) {
  const Shape& shape = i.shape();
  out.assign(LeafCount(shape), LeafSource{});
  // Top-level output `index` takes operand `operand`'s buffer when both
  // are single leaves.
  auto alias = [&](int64_t index, int64_t operand) {
    if (operand < 0 || operand >= i.operand_count() ||
        LeafCount(i.operand(operand)->shape()) != 1) {
      return;
    }
    int64_t leaf = index;
    if (shape.IsTuple()) {
      std::optional<std::pair<int64_t, int64_t>> e =
          ElementLeaves(shape, index);
      if (!e.has_value() || e->second != 1) return;
      leaf = e->first;
    } else if (index != 0) {
      return;
    }
    out[leaf] = {LeafKind::kAliases, operand, 0, /*in_place=*/true};
  };
  for (auto [index, operand] : OutputOperandAliasing(i)) alias(index, operand);
  if (i.opcode() == Opcode::kFusion && i.to_apply() != nullptr &&
      i.to_apply()->root() != nullptr) {
    const Instruction* root = i.to_apply()->root();
    if (root->opcode() == Opcode::kTuple) {
      if (root->operand_count() == static_cast<int64_t>(out.size())) {
        for (int64_t k = 0; k < root->operand_count(); ++k) {
          std::optional<int64_t> p = InPlaceParameter(root->operand(k));
          if (p.has_value()) alias(k, *p);
        }
      }
    } else if (out.size() == 1) {
      std::optional<int64_t> p = InPlaceParameter(root);
      if (p.has_value()) alias(0, *p);
    }
  }
  // A flat result tuple: element k is leaf k.
  if (shape.IsTuple() &&
      static_cast<int64_t>(out.size()) == shape.tuple_size()) {
    for (int64_t k = 1; k < shape.tuple_size(); ++k) {
      if (out[k].kind == LeafKind::kDefines && IsKernelScratch(i, k)) {
        out[k].kind = LeafKind::kScratch;
      }
    }
  }
}

}  // namespace

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

int64_t ArrayBytes(const Shape& shape) {
  return std::max<int64_t>(0, shape.ByteSize());
}

bool IsCublasGemmTarget(std::string_view target) {
  return target == "__cublas$gemm" || target == "__cublas$lt$matmul" ||
         target == "__cublas$lt$matmul$f8";
}

bool IsGemmCustomCall(const Instruction& instr) {
  return instr.opcode() == Opcode::kCustomCall &&
         IsCublasGemmTarget(instr.attrs().custom_call_target);
}

bool IsGemmKernel(const Instruction& instr) {
  if (IsGemmCustomCall(instr)) return true;
  if (instr.opcode() != Opcode::kFusion || instr.to_apply() == nullptr) {
    return false;
  }
  for (const auto& f : instr.to_apply()->instructions()) {
    if (IsGemmCustomCall(*f)) return true;
  }
  return false;
}

bool IsKernelScratch(const Instruction& kernel, int64_t index) {
  const Shape& shape = kernel.shape();
  if (index < 1 || !shape.IsTuple() || index >= shape.tuple_size()) {
    return false;
  }
  const Shape& ws = shape.tuple_shapes(index);
  if (!ws.IsArray() || ws.rank() != 1 ||
      (ws.element_type() != PrimitiveType::kS8 &&
       ws.element_type() != PrimitiveType::kU8) ||
      !IsGemmKernel(kernel)) {
    return false;
  }
  for (auto [output, operand] : OutputOperandAliasing(kernel)) {
    if (output == index) return false;
  }
  return true;
}

std::vector<LeafSource> ResultLeafSources(const Instruction& i) {
  const Shape& shape = i.shape();
  const int64_t count = LeafCount(shape);
  const Opcode op = i.opcode();
  std::vector<LeafSource> out;
  auto whole_operand = [&](int64_t k, bool in_place = false) {
    if (k < i.operand_count()) {
      AppendAliases(k, 0, LeafCount(i.operand(k)->shape()), out, in_place);
    }
  };
  switch (op) {
    case Opcode::kParameter:
      out.assign(count, LeafSource{LeafKind::kOutside});
      break;
    case Opcode::kGetTupleElement:
      if (i.operand_count() > 0) {
        std::optional<std::pair<int64_t, int64_t>> e =
            ElementLeaves(i.operand(0)->shape(), i.tuple_index());
        if (e.has_value()) AppendAliases(0, e->first, e->second, out);
      }
      break;
    case Opcode::kTuple:
      for (int64_t k = 0; k < i.operand_count(); ++k) whole_operand(k);
      break;
    case Opcode::kBitcast:
    case Opcode::kReshape:
    case Opcode::kOptBarrier:
    case Opcode::kAddDependency:
    case Opcode::kDomain:
    case Opcode::kAsyncUpdate:
      whole_operand(0);
      break;
    case Opcode::kWhile:
    case Opcode::kDynamicUpdateSlice:
      whole_operand(0, /*in_place=*/true);
      break;
    case Opcode::kCopy:
      // A copy of a tuple is shallow (XLA copies only the tuple's index
      // table): its elements are the operand's buffers. An array copy
      // defines its buffer.
      if (shape.IsTuple()) whole_operand(0);
      break;
    case Opcode::kFusion:
    case Opcode::kCustomCall:
      KernelLeaves(i, out);
      break;
    case Opcode::kCopyStart:
      // (copy, source, context): the source stays live until the done.
      if (count == 3 && i.operand_count() == 1 &&
          LeafCount(i.operand(0)->shape()) == 1) {
        out = {LeafSource{}, LeafSource{LeafKind::kAliases, 0, 0},
               LeafSource{}};
      }
      break;
    case Opcode::kCopyDone:
      if (i.operand_count() > 0 && LeafCount(i.operand(0)->shape()) == 3) {
        out = {LeafSource{LeafKind::kAliases, 0, 0}};
      }
      break;
    default:
      if (IsAsyncDone(op)) {
        if (i.operand_count() > 0) {
          const Shape& s = i.operand(0)->shape();
          std::optional<std::pair<int64_t, int64_t>> e =
              s.IsTuple() && s.tuple_size() >= 2 ? ElementLeaves(s, 1)
                                                 : std::nullopt;
          if (e.has_value()) {
            AppendAliases(0, e->first, e->second, out);
          } else {
            whole_operand(0);
          }
        }
      } else if (IsAsyncStart(op) && shape.IsTuple() &&
                 shape.tuple_size() >= 2) {
        // ((operands...), output, context...): element 0 holds the
        // operands until the done.
        for (int64_t k = 0; k < i.operand_count(); ++k) whole_operand(k);
        if (static_cast<int64_t>(out.size()) !=
            LeafCount(shape.tuple_shapes(0))) {
          break;
        }
        out.resize(count, LeafSource{});
        std::optional<int64_t> in_place = AsyncInPlaceOperand(i);
        const int64_t first = LeafCount(shape.tuple_shapes(0));
        if (in_place.has_value() && LeafCount(shape.tuple_shapes(1)) == 1 &&
            LeafCount(i.operand(*in_place)->shape()) == 1) {
          out[first] = {LeafKind::kAliases, *in_place, 0, /*in_place=*/true};
        }
      }
      break;
  }
  // Malformed IR (an alias of a leaf the operand does not have, a leaf
  // count that does not add up): the instruction defines its leaves.
  bool valid = static_cast<int64_t>(out.size()) == count;
  std::vector<int64_t> operand_leaves(i.operand_count(), -1);
  for (size_t k = 0; valid && k < out.size(); ++k) {
    const LeafSource& s = out[k];
    if (s.kind != LeafKind::kAliases) continue;
    valid = s.operand >= 0 && s.operand < i.operand_count();
    if (!valid) break;
    int64_t& n = operand_leaves[s.operand];
    if (n < 0) n = LeafCount(i.operand(s.operand)->shape());
    valid = s.operand_leaf >= 0 && s.operand_leaf < n;
  }
  if (!valid) out.assign(count, LeafSource{});
  return out;
}

int64_t DefinedBytes(const Instruction& instr, bool with_scratch) {
  std::vector<LeafSource> sources = ResultLeafSources(instr);
  std::vector<int64_t> bytes;
  AppendLeafBytes(instr.shape(), bytes);
  int64_t total = 0;
  for (size_t k = 0; k < sources.size() && k < bytes.size(); ++k) {
    if (sources[k].kind == LeafKind::kDefines ||
        (with_scratch && sources[k].kind == LeafKind::kScratch)) {
      total += bytes[k];
    }
  }
  return total;
}

}  // namespace hloverlap
