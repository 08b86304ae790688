// Inlines `call` instructions (JAX wraps every nested jit in one).
//
//   %f (x: f32[8]) -> f32[8] { ... ROOT %n = negate(%x) }
//   ENTRY %main { %c = f32[8]{0} call(%p), to_apply=%f }
// becomes
//   ENTRY %main { %n.1 = f32[8]{0} negate(%p) }
//
// The callee's instructions are cloned into the caller with fresh names
// (channel ids renewed), parameters replaced by the call's operands, and the
// call's uses replaced by the cloned root. Control predecessors of the call
// become control predecessors of every cloned instruction; control
// successors of the call get the cloned instructions without users as
// predecessors. Callees left without callers are removed. Calls are inlined
// innermost first, so nested calls disappear in one run.
//
// Calls that XLA needs to see as calls stay: the bodies of Shardy's
// round-tripped shard_maps (`%xla.sdy.manual_computation_body*`, between the
// `xla.sdy.GlobalToLocalShape` and `xla.sdy.LocalToGlobalShape` custom-calls);
// inlining them makes the module unimportable for XLA (the JAX bridge's
// route). Calls inside such a body are still inlined.
#ifndef HLOVERLAP_PASSES_CALL_INLINER_H_
#define HLOVERLAP_PASSES_CALL_INLINER_H_

#include "passes/pass.h"

namespace hloverlap {

class CallInlinerPass : public Pass {
 public:
  std::string_view name() const override { return "inline"; }
  absl::StatusOr<bool> Run(Module& module, PassContext& context) override;

  // Inlines one call instruction. On success the call is gone.
  static absl::Status InlineCall(Instruction* call);

  // True for calls the pass leaves alone (see the file comment).
  static bool MustStayCall(const Instruction& call);
};

}  // namespace hloverlap

#endif  // HLOVERLAP_PASSES_CALL_INLINER_H_
