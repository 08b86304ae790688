// What the Python bridge's StableHLO route needs of a module, as passes (the
// bridge compiles hloverlap's output with jaxlib's hlo_module_from_text ->
// hlo_to_stablehlo -> XLA; python/hloverlap/jax.py). None changes a value.
//
// copy-to-reshape: StableHLO has no layouts on values, so the importer has
// no `copy`; an array-shaped copy becomes a reshape to the same dimensions
// (also a value identity, which XLA's algebraic simplifier removes). The
// instruction keeps its name, shape, attributes and place:
//
//   %copy.3 = f32[4,8]{0,1} copy(%p)
//     ->
//   %copy.3 = f32[4,8]{0,1} reshape(%p)
//
// Each rewrite is a `passed` remark CopyAsReshape (the bridge lists them as
// its fixes). A tuple-shaped copy, or one with control edges, stays as it
// is.
//
// strip-shardings: the GSPMD route compiles XLA's partitioned module with
// the partitioning passes off; its shardings are then annotations nothing
// needs, and every instruction's `sharding={...}` is dropped:
//
//   %a = f32[2]{0} add(%x, %y), sharding={devices=[2]<=[2]}
//     ->
//   %a = f32[2]{0} add(%x, %y)
//
// strip-buffer-donor: a compile without donation (the bridge's
// donate=False) drops the header's `buffer_donor` and `input_output_alias`:
//
//   HloModule m, input_output_alias={ {0}: (0, {}, may-alias) },
//       buffer_donor={ (1, {}) }, entry_computation_layout={...}
//     ->
//   HloModule m, entry_computation_layout={...}
//
// donors-to-aliases: what XLA does with the donors of a per-device module
// before buffer assignment, done here because the StableHLO import keeps
// input/output aliases but not donors. Each whole-parameter donor becomes a
// may-alias of the first output, in order, of the same shape and layout (in
// entry_computation_layout) that no alias uses yet; a donor no output
// matches stays a donor:
//
//   HloModule m, buffer_donor={ (0, {}), (1, {}) },
//       entry_computation_layout={(f32[8]{0}, s32[]{:T(128)})->(f32[8]{0})}
//     ->
//   HloModule m, buffer_donor={ (1, {}) },
//       entry_computation_layout={...},
//       input_output_alias={ {0}: (0, {}, may-alias) }
//
// Before partitioning (the shard_map route, match=shardy), shapes are
// global: an output and a parameter must also have the same Shardy
// sharding, the parameter's `xla.sdy.sharding` frontend attribute against
// the output's entry in the `xla.sdy.out_shardings` of the
// xla.sdy.LocalToGlobalShape custom-call it comes from; an output from
// anything else is never aliased. Each alias is a `passed` remark
// DonorAliased whose metrics give the output (-1: the whole, non-tuple
// result) and the parameter.
#ifndef HLOVERLAP_PASSES_ROUTE_FIXUPS_H_
#define HLOVERLAP_PASSES_ROUTE_FIXUPS_H_

#include "passes/pass.h"

namespace hloverlap {

class CopyToReshapePass : public Pass {
 public:
  std::string_view name() const override { return "copy-to-reshape"; }
  absl::StatusOr<bool> Run(Module& module, PassContext& context) override;
};

class StripShardingsPass : public Pass {
 public:
  std::string_view name() const override { return "strip-shardings"; }
  absl::StatusOr<bool> Run(Module& module, PassContext& context) override;
};

class StripBufferDonorPass : public Pass {
 public:
  std::string_view name() const override { return "strip-buffer-donor"; }
  absl::StatusOr<bool> Run(Module& module, PassContext& context) override;
};

class DonorsToAliasesPass : public Pass {
 public:
  std::string_view name() const override { return "donors-to-aliases"; }
  absl::StatusOr<bool> Run(Module& module, PassContext& context) override;
};

}  // namespace hloverlap

#endif  // HLOVERLAP_PASSES_ROUTE_FIXUPS_H_
