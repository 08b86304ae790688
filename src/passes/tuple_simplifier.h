// Tuple simplification.
//
//   %t = (f32[8], s32[]) tuple(%a, %b)
//   %g = f32[8]{0} get-tuple-element(%t), index=0     // -> %a
//
//   %x = (f32[8], s32[]) ...
//   %t = (f32[8], s32[]) tuple(gte(%x, 0), gte(%x, 1)) // -> %x
//
// Uses of the simplified instruction are redirected; the dead instructions
// are left to DCE. Roots are redirected too (the computation's root moves).
#ifndef HLOVERLAP_PASSES_TUPLE_SIMPLIFIER_H_
#define HLOVERLAP_PASSES_TUPLE_SIMPLIFIER_H_

#include "passes/pass.h"

namespace hloverlap {

class TupleSimplifierPass : public Pass {
 public:
  std::string_view name() const override { return "tuple-simplify"; }
  absl::StatusOr<bool> Run(Module& module, PassContext& context) override;
};

}  // namespace hloverlap

#endif  // HLOVERLAP_PASSES_TUPLE_SIMPLIFIER_H_
