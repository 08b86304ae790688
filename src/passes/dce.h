// Dead code elimination.
//
// Removes instructions whose value is unused (no users, not a root, no
// control successors that stay) and that have no side effects, repeatedly,
// and then computations no longer reachable from the entry. An instruction
// whose only control successors are dead goes with them in the same run.
//
//   %a = f32[8]{0} add(%x, %y)        // unused: removed
//   ROOT %r = f32[8]{0} multiply(%x, %y)
//
// Kept even when unused: parameters, side-effecting custom-calls, send/recv,
// infeed/outfeed, rng, after-all, and async pairs whose other half is used.
// Dead collectives are removed (every device removes the same one, so they
// stay matched); RunOnComputation(..., remove_dead_collectives=false) and
// DcePass(false) keep them.
#ifndef HLOVERLAP_PASSES_DCE_H_
#define HLOVERLAP_PASSES_DCE_H_

#include "passes/pass.h"

namespace hloverlap {

class DcePass : public Pass {
 public:
  explicit DcePass(bool remove_dead_collectives = true)
      : remove_dead_collectives_(remove_dead_collectives) {}
  std::string_view name() const override { return "dce"; }
  absl::StatusOr<bool> Run(Module& module, PassContext& context) override;

  // Dead-instruction removal in one computation; returns whether it changed.
  static absl::StatusOr<bool> RunOnComputation(Computation& computation,
                                               bool remove_dead_collectives);

 private:
  bool remove_dead_collectives_;
};

// Removes computations not reachable from the entry; true if any.
bool RemoveUnreachableComputations(Module& module);

// True if removing an unused `instr` could change observable behaviour.
bool HasSideEffect(const Instruction& instr);

}  // namespace hloverlap

#endif  // HLOVERLAP_PASSES_DCE_H_
