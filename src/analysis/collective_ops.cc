// The collective classifier (see the header).
#include "analysis/collective_ops.h"

#include <algorithm>
#include <vector>

#include "hlo/computation.h"

namespace hloverlap {
namespace {

// Fusions / calls nested this deep inside a wrapper are not searched (XLA
// nests one or two).
constexpr int kMaxNesting = 8;

// The synchronous opcode of a collective or a native start; nullopt for
// anything else.
std::optional<Opcode> SyncKind(Opcode op) {
  switch (op) {
    case Opcode::kAllGatherStart:
      return Opcode::kAllGather;
    case Opcode::kAllReduceStart:
      return Opcode::kAllReduce;
    case Opcode::kCollectivePermuteStart:
    case Opcode::kSend:
      return Opcode::kCollectivePermute;
    default:
      break;
  }
  if (IsCollective(op)) return op;
  return std::nullopt;
}

bool IsNativeStart(Opcode op) {
  return op == Opcode::kAllGatherStart || op == Opcode::kAllReduceStart ||
         op == Opcode::kCollectivePermuteStart || op == Opcode::kSend;
}

// The collective in `c` (its root first, then in order), looking through
// fusions and calls; nullptr if none.
const Instruction* FindCollective(const Computation* c, int depth) {
  if (c == nullptr || depth > kMaxNesting) return nullptr;
  const Instruction* root = c->root();
  if (root != nullptr && SyncKind(root->opcode()).has_value()) return root;
  for (const auto& i : c->instructions()) {
    if (SyncKind(i->opcode()).has_value()) return i.get();
  }
  for (const auto& i : c->instructions()) {
    if (i->opcode() != Opcode::kFusion && i->opcode() != Opcode::kCall) {
      continue;
    }
    for (const Computation* callee : i->called_computations()) {
      if (const Instruction* found = FindCollective(callee, depth + 1)) {
        return found;
      }
    }
  }
  return nullptr;
}

// The collective a -done user of `instr` completes, if any.
std::optional<Opcode> DoneKind(const Instruction& instr) {
  for (const Instruction* u : instr.users()) {
    switch (u->opcode()) {
      case Opcode::kAllReduceDone:
        return Opcode::kAllReduce;
      case Opcode::kAllGatherDone:
        return Opcode::kAllGather;
      case Opcode::kCollectivePermuteDone:
        return Opcode::kCollectivePermute;
      default:
        break;
    }
  }
  return std::nullopt;
}

}  // namespace

bool IsTritonCollectiveFusion(const Instruction& instr) {
  return instr.opcode() == Opcode::kFusion &&
         instr.attrs().backend_config.find(
             "\"kind\":\"__triton_collective\"") != std::string::npos;
}

std::optional<CollectiveOp> ClassifyCollective(const Instruction& instr) {
  Opcode op = instr.opcode();
  CollectiveOp c;
  if (std::optional<Opcode> kind = SyncKind(op)) {
    c.collective = &instr;
    c.kind = *kind;
    c.async = IsNativeStart(op);
    return c;
  }
  if (op != Opcode::kAsyncStart && op != Opcode::kFusion) return std::nullopt;
  const Instruction* inner = nullptr;
  for (const Computation* callee : instr.called_computations()) {
    inner = FindCollective(callee, 0);
    if (inner != nullptr) break;
  }
  if (inner == nullptr) {
    // A Triton collective fusion whose collective XLA folded into the
    // kernel: the fusion is the collective (an all-reduce unless a -done
    // says otherwise).
    if (!IsTritonCollectiveFusion(instr)) return std::nullopt;
    std::optional<Opcode> done = DoneKind(instr);
    c.collective = &instr;
    c.kind = done.value_or(Opcode::kAllReduce);
    c.async = done.has_value();
    c.fused = true;
    return c;
  }
  c.collective = inner;
  c.kind = *SyncKind(inner->opcode());
  // An async wrapper runs it beside the compute stream; a fusion does when
  // it holds a start (its -done is the fusion's user).
  c.async = op == Opcode::kAsyncStart || IsNativeStart(inner->opcode());
  c.fused = op == Opcode::kFusion;
  return c;
}

std::string_view CollectiveKindName(Opcode kind) {
  if (IsCollective(kind)) return OpcodeName(kind);
  return "collective";
}

int64_t CollectiveBytesMoved(const Instruction& coll) {
  std::vector<Shape> operands;
  operands.reserve(coll.operand_count());
  for (const Instruction* op : coll.operands()) operands.push_back(op->shape());
  return std::max(coll.shape().ByteSize(),
                  Shape::Tuple(std::move(operands)).ByteSize());
}

}  // namespace hloverlap
