#include "passes/route_fixups.h"

#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "passes/pass_registry.h"
#include "passes/remarks.h"

namespace hloverlap {
namespace {

// The array-shaped copies of `computation` without control edges.
std::vector<Instruction*> RewritableCopies(const Computation& computation) {
  std::vector<Instruction*> out;
  for (const auto& instr : computation.instructions()) {
    if (instr->opcode() == Opcode::kCopy && instr->shape().IsArray() &&
        instr->control_predecessors().empty() &&
        instr->control_successors().empty()) {
      out.push_back(instr.get());
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<bool> CopyToReshapePass::Run(Module& module,
                                            PassContext& context) {
  bool changed = false;
  for (const auto& computation : module.computations()) {
    for (Instruction* copy : RewritableCopies(*computation)) {
      Remark r;
      r.pass = std::string(name());
      r.kind = RemarkKind::kPassed;
      r.name = "CopyAsReshape";
      DescribeInstruction(*copy, module, r);
      r.message =
          absl::StrCat("copy ", copy->name(), " -> reshape (value identity)");
      auto reshape = std::make_unique<Instruction>(
          Opcode::kReshape, copy->name(), copy->shared_shape());
      reshape->CopyAttributesFrom(*copy);
      reshape->AppendOperand(copy->operand(0));
      Instruction* added =
          computation->AddInstruction(std::move(reshape), copy);
      absl::Status s = copy->ReplaceAllUsesWith(added);
      if (s.ok()) s = computation->RemoveInstruction(copy);
      if (!s.ok()) {
        return absl::InternalError(
            absl::StrCat("copy-to-reshape: computation ", computation->name(),
                         ", instruction ", added->name(), ": ", s.message()));
      }
      context.remarks.Emit(std::move(r));
      changed = true;
    }
  }
  return changed;
}

absl::StatusOr<bool> StripShardingsPass::Run(Module& module,
                                             PassContext& context) {
  bool changed = false;
  for (const auto& computation : module.computations()) {
    for (const auto& instr : computation->instructions()) {
      if (instr->attrs().sharding.empty()) continue;
      instr->mutable_attrs().sharding = std::string();
      changed = true;
    }
  }
  return changed;
}

absl::StatusOr<bool> StripBufferDonorPass::Run(Module& module,
                                               PassContext& context) {
  return std::erase_if(module.raw_header_attributes(),
                       [](const RawAttribute& a) {
                         return a.name == "buffer_donor" ||
                                a.name == "input_output_alias";
                       }) > 0;
}

// Registration (passes/pass_registry.h).
void RegisterRouteFixupPasses(PassRegistry& registry) {
  registry.Add<CopyToReshapePass>(
      "array-shaped copy -> same-dimensions reshape (the StableHLO route "
      "has no copy)");
  registry.Add<StripShardingsPass>(
      "drop every instruction's sharding (a partitioned module compiled with "
      "partitioning off)");
  registry.Add<StripBufferDonorPass>(
      "drop the header's buffer_donor and input_output_alias (a compile "
      "without donation)");
}

}  // namespace hloverlap
