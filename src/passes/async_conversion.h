// Async conversion: splits every synchronous collective into a start/done
// pair so that a scheduler can move independent work between the two
// halves. This is XLA's GPU AsyncCollectiveCreator default: all-gather,
// all-reduce and collective-permute become their native pairs; reduce-scatter
// and all-to-all become generic async-start/async-done around a wrapped
// computation holding the collective.
//
//   %ag = f32[8,4]{1,0} all-gather(%x), channel_id=1, replica_groups={{0,1}},
//       dimensions={0}, use_global_device_ids=true
//   %rs = f32[2,4]{1,0} reduce-scatter(%y), channel_id=2, ..., to_apply=%add
// becomes
//   %all-gather-start = (f32[4,4]{1,0}, f32[8,4]{1,0}) all-gather-start(%x),
//       channel_id=1, replica_groups={{0,1}}, dimensions={0},
//       use_global_device_ids=true
//   %all-gather-done = f32[8,4]{1,0} all-gather-done(%all-gather-start)
//   %reduce-scatter-start = ((f32[4,4]{1,0}), f32[2,4]{1,0}) async-start(%y),
//       calls=%async_computation
//   %reduce-scatter-done = f32[2,4]{1,0} async-done(%reduce-scatter-start)
// with
//   %async_computation (param: f32[4,4]) -> f32[2,4] {
//     %param = f32[4,4]{1,0} parameter(0)
//     ROOT %rs = f32[2,4]{1,0} reduce-scatter(%param), channel_id=2, ...
//   }
//
// Start shapes follow XLA: all-reduce-start has the result shape;
// all-gather-start is (operands, results); collective-permute-start is
// (operand, result, u32[], u32[]); async-start is ((operands...), result).
// The start takes the collective's attributes, metadata, frontend
// attributes, backend config and control predecessors; the done takes its
// metadata, users and control successors. Both are placed where the
// collective was (start, then done), so a scheduled module stays a valid
// schedule; the scheduler moves them apart. Every computation is converted
// (loop bodies, branches, called computations) except fusion computations
// and computations already wrapped by an async-start. In-place
// collective-permutes (slice_sizes=) and the kinds listed in
// PassOptions::synchronous_collectives (XLA's
// --xla_gpu_disable_async_collectives=alltoall,...) are left alone with a
// `missed` remark naming the reason.
#ifndef HLOVERLAP_PASSES_ASYNC_CONVERSION_H_
#define HLOVERLAP_PASSES_ASYNC_CONVERSION_H_

#include "passes/pass.h"

namespace hloverlap {

class AsyncConversionPass : public Pass {
 public:
  std::string_view name() const override { return "async-collectives"; }
  absl::StatusOr<bool> Run(Module& module, PassContext& context) override;
};

}  // namespace hloverlap

#endif  // HLOVERLAP_PASSES_ASYNC_CONVERSION_H_
