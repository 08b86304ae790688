// Dead code elimination.
//
// Removes instructions whose value is unused (no users, not a root, no
// control successors) and that have no side effects, repeatedly, and then
// computations no longer reachable from the entry.
//
//   %a = f32[8]{0} add(%x, %y)        // unused: removed
//   ROOT %r = f32[8]{0} multiply(%x, %y)
//
// Kept even when unused: parameters, side-effecting custom-calls, send/recv,
// infeed/outfeed, rng, after-all, async pairs whose other half is used, and
// the collectives (every device must issue the same collectives; removing
// one on all devices is safe, but a dead collective is rare and usually
// intended, so DCE keeps them unless remove_dead_collectives).
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
