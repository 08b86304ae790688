#include "passes/async_conversion.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "analysis/call_graph.h"
#include "analysis/collective_ops.h"
#include "hlo/absl_compat.h"
#include "hlo/opcode_traits.h"
#include "passes/pass_registry.h"

namespace hloverlap {
namespace {

constexpr std::string_view kPassName = "async-collectives";

bool IsConvertible(Opcode op) {
  switch (op) {
    case Opcode::kAllGather:
    case Opcode::kAllReduce:
    case Opcode::kCollectivePermute:
    case Opcode::kReduceScatter:
    case Opcode::kAllToAll:
      return true;
    default:
      return false;
  }
}

// The shape of the operands as one value: the operand itself, or a tuple of
// them when there are several.
Shape OperandsShape(const Instruction& instr) {
  if (instr.operand_count() == 1) return instr.operand(0)->shape();
  std::vector<Shape> shapes;
  shapes.reserve(instr.operand_count());
  for (const Instruction* op : instr.operands()) shapes.push_back(op->shape());
  return Shape::Tuple(std::move(shapes));
}

std::string StartName(Opcode op) {
  return absl::StrCat(AsAbsl(OpcodeName(op)), "-start");
}
std::string DoneName(Opcode op) {
  return absl::StrCat(AsAbsl(OpcodeName(op)), "-done");
}

class Converter {
 public:
  Converter(Module& module, PassContext& context)
      : module_(module), context_(context) {}

  absl::StatusOr<bool> Run();

 private:
  absl::Status Convert(Instruction* coll);
  // Start and done replacing `coll` (both inserted before it).
  Instruction* MakeNativeStart(Instruction* coll, Opcode start_op);
  absl::StatusOr<Instruction*> MakeAsyncStart(Instruction* coll);
  // The remark on `coll`: in its loop, with the bytes it moves.
  Remark Describe(RemarkKind kind, std::string name, const Instruction& coll,
                  std::string message) const {
    auto it = loop_of_.find(coll.parent());
    Remark r = InstructionRemark(
        kPassName, kind, std::move(name), coll, module_,
        it != loop_of_.end() ? it->second : std::string(), std::move(message));
    r.Metric("bytes_moved", CollectiveBytesMoved(coll));
    return r;
  }
  void Emit(RemarkKind kind, std::string name, const Instruction& coll,
            std::string message) {
    context_.remarks.Emit(
        Describe(kind, std::move(name), coll, std::move(message)));
  }

  // The flag that keeps collectives of `op` synchronous, if any.
  const std::string* SynchronousBy(Opcode op) const {
    for (const auto& [sync_op, flag] :
         context_.options.synchronous_collectives) {
      if (sync_op == op) return &flag;
    }
    return nullptr;
  }

  Module& module_;
  PassContext& context_;
  // Loop body -> loop path, for remarks.
  absl::flat_hash_map<const Computation*, std::string> loop_of_;
};

Instruction* Converter::MakeNativeStart(Instruction* coll, Opcode start_op) {
  Shape shape;
  switch (start_op) {
    case Opcode::kAllReduceStart:
      shape = coll->shape();
      break;
    case Opcode::kAllGatherStart:
      shape = Shape::Tuple({OperandsShape(*coll), coll->shape()});
      break;
    default:  // collective-permute-start: (operand, result, u32[], u32[])
      shape = Shape::Tuple({OperandsShape(*coll), coll->shape(),
                            Shape::Scalar(PrimitiveType::kU32),
                            Shape::Scalar(PrimitiveType::kU32)});
      break;
  }
  auto start = std::make_unique<Instruction>(
      start_op, module_.UniqueInstructionName(StartName(coll->opcode())),
      std::move(shape));
  start->CopyAttributesFrom(*coll);
  for (Instruction* op : coll->operands()) start->AppendOperand(op);
  return coll->parent()->AddInstruction(std::move(start), coll);
}

absl::StatusOr<Instruction*> Converter::MakeAsyncStart(Instruction* coll) {
  auto wrapped = std::make_unique<Computation>(
      module_.UniqueComputationName("async_computation"));
  wrapped->set_execution_thread(coll->parent()->execution_thread());
  // Before the caller, so callees stay before callers.
  Computation* comp =
      module_.AddComputation(std::move(wrapped), coll->parent());
  std::vector<Instruction*> params;
  for (int64_t i = 0; i < coll->operand_count(); ++i) {
    auto p = std::make_unique<Instruction>(
        Opcode::kParameter,
        module_.UniqueInstructionName(absl::StrCat("param_", i)),
        coll->operand(i)->shape());
    p->mutable_attrs().parameter_number = i;
    params.push_back(comp->AddInstruction(std::move(p)));
  }
  auto inner = std::make_unique<Instruction>(
      coll->opcode(), module_.UniqueInstructionName(coll->name()),
      coll->shape());
  inner->CopyAttributesFrom(*coll);
  for (Instruction* p : params) inner->AppendOperand(p);
  comp->set_root(comp->AddInstruction(std::move(inner)));

  std::vector<Shape> op_shapes;
  for (const Instruction* op : coll->operands()) {
    op_shapes.push_back(op->shape());
  }
  auto start = std::make_unique<Instruction>(
      Opcode::kAsyncStart,
      module_.UniqueInstructionName(StartName(coll->opcode())),
      Shape::Tuple({Shape::Tuple(std::move(op_shapes)), coll->shape()}));
  InstructionAttributes& a = start->mutable_attrs();
  a.metadata = coll->attrs().metadata;
  a.frontend_attributes = coll->attrs().frontend_attributes;
  a.backend_config = coll->attrs().backend_config;
  a.backend_config_is_raw = coll->attrs().backend_config_is_raw;
  start->mutable_called_computations() = {comp};
  for (Instruction* op : coll->operands()) start->AppendOperand(op);
  return coll->parent()->AddInstruction(std::move(start), coll);
}

absl::Status Converter::Convert(Instruction* coll) {
  const Opcode op = coll->opcode();
  Instruction* start = nullptr;
  Opcode done_op = Opcode::kAsyncDone;
  if (const OpcodeTraits& t = Traits(op);
      t.async_start.has_value() && t.async_done.has_value()) {
    // all-gather, all-reduce, collective-permute: their native halves.
    start = MakeNativeStart(coll, *t.async_start);
    done_op = *t.async_done;
  } else {
    absl::StatusOr<Instruction*> s = MakeAsyncStart(coll);
    if (!s.ok()) return s.status();
    start = *s;
  }
  auto done = std::make_unique<Instruction>(
      done_op, module_.UniqueInstructionName(DoneName(op)), coll->shape());
  done->mutable_attrs().metadata = coll->attrs().metadata;
  done->AppendOperand(start);
  Instruction* d = coll->parent()->AddInstruction(std::move(done), coll);
  for (Instruction* pred : coll->control_predecessors()) {
    start->AddControlPredecessor(pred);
  }
  std::vector<Instruction*> succs = coll->control_successors();
  for (Instruction* succ : succs) succ->AddControlPredecessor(d);
  coll->DropAllControlDependencies();
  if (absl::Status s = coll->ReplaceAllUsesWith(d); !s.ok()) return s;
  return coll->parent()->RemoveInstruction(coll);
}

absl::StatusOr<bool> Converter::Run() {
  LoopNest nest(module_);
  for (const LoopNode* node : nest.InnermostFirst()) {
    if (node->while_instr->called_computations().size() == 2) {
      loop_of_.emplace(node->while_instr->while_body(), node->path);
    }
  }
  // Computations wrapped by an async-start already run asynchronously.
  absl::flat_hash_set<const Computation*> skip;
  for (const auto& c : module_.computations()) {
    for (const auto& inst : c->instructions()) {
      if (Traits(inst->opcode()).callees == CalleeForm::kCalls) {
        for (const Computation* callee : inst->called_computations()) {
          skip.insert(callee);
        }
      }
    }
  }
  std::vector<Computation*> comps;
  for (const auto& c : module_.computations()) {
    if (!c->IsFusionComputation() && !skip.contains(c.get())) {
      comps.push_back(c.get());
    }
  }
  bool changed = false;
  for (Computation* c : comps) {
    std::vector<Instruction*> colls;
    for (const auto& inst : c->instructions()) {
      if (IsConvertible(inst->opcode())) colls.push_back(inst.get());
    }
    for (Instruction* coll : colls) {
      if (coll->opcode() == Opcode::kCollectivePermute &&
          coll->FindRawAttribute("slice_sizes") != nullptr) {
        Emit(RemarkKind::kMissed, "InPlaceCollectivePermute", *coll,
             "in-place collective-permute (slice_sizes=) left synchronous");
        continue;
      }
      if (const std::string* flag = SynchronousBy(coll->opcode())) {
        Emit(RemarkKind::kMissed, "DisabledByFlag", *coll,
             absl::StrCat(AsAbsl(OpcodeName(coll->opcode())),
                          " left synchronous (", *flag, ")"));
        continue;
      }
      const Opcode op = coll->opcode();
      const bool generic =
          op == Opcode::kReduceScatter || op == Opcode::kAllToAll;
      // The remark describes the collective before it is replaced.
      Remark r = Describe(
          RemarkKind::kPassed, "ConvertedToAsync", *coll,
          absl::StrCat("converted ", AsAbsl(OpcodeName(op)), " to ",
                       generic
                           ? "async-start/async-done"
                           : absl::StrCat(StartName(op), "/", DoneName(op))));
      // Module-size guard: start and done, and for async-start a wrapped
      // computation (a parameter per operand and the collective).
      if (absl::Status s = context_.size_guard.Reserve(
              module_, *coll,
              absl::StrCat("converting ", coll->name(), " to async"),
              3 + coll->operand_count(), "");
          !s.ok()) {
        return s;
      }
      if (absl::Status s = Convert(coll); !s.ok()) {
        return absl::InternalError(absl::StrCat("converting ", r.instruction,
                                                " in ", c->name(), ": ",
                                                s.message()));
      }
      context_.remarks.Emit(std::move(r));
      changed = true;
    }
  }
  if (changed) module_.SortComputationsCalleesFirst();
  return changed;
}

}  // namespace

absl::StatusOr<bool> AsyncConversionPass::Run(Module& module,
                                              PassContext& context) {
  Converter converter(module, context);
  return converter.Run();
}

// Registration (passes/pass_registry.h).
void RegisterAsyncConversionPass(PassRegistry& registry) {
  registry.Add<AsyncConversionPass>(
      "split collectives into start/done pairs (async-start/async-done for "
      "reduce-scatter and all-to-all)");
}

}  // namespace hloverlap
