// Deterministic pseudo-random inputs for `hloverlap run` / `verify`.
//
// Element i of an input is a pure function of (seed, parameter number,
// device, tuple leaf index, i) (SplitMix64 of the mixed key), so it does not
// depend on thread counts, on the order inputs are generated in, or on the
// module beyond the parameter's shape: two modules with the same parameter
// shapes get the same inputs. Distribution per element type:
//   f16, bf16, f32, f64  uniform in [-1, 1) (24 random bits, 53 for f64),
//                        times float_scale (default 1), rounded to nearest
//                        even to the type
//   integer scalars      uniform in [0, 4) (loop counters and slice indices
//                        stay small and non-negative, but vary)
//   signed int arrays    uniform in [-8, 8)
//   unsigned int arrays  uniform in [0, 16)
//   pred                 0 or 1 with probability 1/2
// Devices get different inputs (each holds its own shard), except for
// parameters whose sharding says they are replicated (`{replicated}`,
// `{mesh[...], replicated}`, or a mesh sharding with no sharded dimension)
// and when same_on_all_devices is set: then the device is left out of the
// key.
#ifndef HLOVERLAP_INTERP_RANDOM_INPUTS_H_
#define HLOVERLAP_INTERP_RANDOM_INPUTS_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/module.h"
#include "interp/value.h"

namespace hloverlap::interp {

// SplitMix64 finalizer.
uint64_t Mix64(uint64_t x);
// Hash-combine of two keys.
uint64_t MixKey(uint64_t a, uint64_t b);
uint64_t HashString(std::string_view s);

// An array filled from `stream` with the distribution above
// (floating-point elements times `float_scale`).
absl::StatusOr<Value> RandomArray(PrimitiveType type, const Dims& dims,
                                  uint64_t stream, double float_scale = 1);
// Any shape (tuples: leaf j uses MixKey(stream, j)).
absl::StatusOr<Value> RandomValue(const Shape& shape, uint64_t stream,
                                  double float_scale = 1);

// Whether a parameter's raw sharding text says it is replicated.
bool IsReplicatedSharding(std::string_view sharding);

struct RandomInputOptions {
  uint64_t seed = 0;
  bool same_on_all_devices = false;
  // Floating-point inputs are uniform in [-float_scale, float_scale): a
  // power of two scales exactly. Real models need small inputs (weights of
  // a d-wide layer ~ 1/sqrt(d)); with [-1, 1) their activations explode and
  // amplify every rounding difference.
  double float_scale = 1;
};

// Inputs [device][parameter] for the entry computation of `module`.
absl::StatusOr<std::vector<std::vector<Value>>> MakeRandomInputs(
    const Module& module, int64_t num_devices,
    const RandomInputOptions& options);

}  // namespace hloverlap::interp

#endif  // HLOVERLAP_INTERP_RANDOM_INPUTS_H_
