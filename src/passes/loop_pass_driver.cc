#include "passes/loop_pass_driver.h"

#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "hlo/absl_compat.h"
#include "passes/remarks.h"

namespace hloverlap {

LoopPassDriver::LoopPassDriver(std::string_view pass, Module& module,
                               PassContext& context)
    : pass_(pass), module_(&module), context_(&context), nest_(module) {
  context.memory.StartIfNeeded(context.options.memory_budget_bytes);
}

const CallGraph& LoopPassDriver::callers() {
  if (callers_ == nullptr) callers_ = std::make_unique<CallGraph>(*module_);
  return *callers_;
}

bool LoopPassDriver::Alive(const Instruction* loop) {
  if (!alive_valid_) {
    alive_.clear();
    for (const auto& c : module_->computations()) {
      for (const auto& inst : c->instructions()) {
        if (inst->opcode() == Opcode::kWhile) alive_.insert(inst.get());
      }
    }
    alive_valid_ = true;
  }
  return alive_.contains(loop);
}

absl::StatusOr<bool> LoopPassDriver::Rewrite(const LoopRewriteRequest& request,
                                             const Builder& build) {
  if (absl::Status s = context_->size_guard.Reserve(
          *module_, *request.at, request.what, request.added_instructions,
          request.avoid);
      !s.ok()) {
    return s;
  }
  LoopRewrite txn(*module_);
  absl::Status s = build(txn);
  if (s.ok()) s = txn.Commit(request.verify_what);
  if (!s.ok()) {
    txn.Rollback();
    Remark r;
    r.pass = pass_;
    r.kind = RemarkKind::kFailure;
    r.name = "RewriteDiscarded";
    DescribeInstruction(
        request.candidate != nullptr ? *request.candidate : *request.at,
        *module_, r);
    r.loop = request.loop;
    r.message = absl::StrCat(request.failure_prefix.empty()
                                 ? absl::StrCat(pass_, ": ", request.what, ": ")
                                 : request.failure_prefix,
                             s.message());
    context_->remarks.Emit(std::move(r));
    return false;
  }
  moved_ = txn.moved();
  nest_.Remap(moved_);
  callers_.reset();
  alive_valid_ = false;
  context_->memory.Spend(request.extra_live_bytes);
  changed_ = true;
  return true;
}

Instruction* LoopPassDriver::Moved(Instruction* inst) const {
  auto it = moved_.find(inst);
  return it == moved_.end() ? inst : it->second;
}

}  // namespace hloverlap
