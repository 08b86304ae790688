// Generated modules of any size for the simulator's scaling benchmark
// (bench/sim_scaling_bench.cc) and tests; tests/tools/Inputs/sim_scaling.py
// writes the same modules for the lit tests.
//
// GenerateChain(n): a straight-line entry of n instructions: a chain of
// elementwise kernels that all read one shared value (fan-out n) and write
// over their dying operand (one buffer for the whole chain), with an
// all-gather of the shared value issued every 64 instructions and waited
// for 16 later:
//   %v0 = f32[256,256] exponential(%p)
//   %v1 = f32[256,256] add(%v0, %v0)
//   %ag64 = (f32[256,256], f32[512,256]) all-gather-start(%v0), ...
//
// GenerateNest(depth, trips): `depth` nested while loops of trip count
// `trips` (trips^depth innermost iterations); loop level k's body (%b<k>,
// k = 1 outermost) issues an all-gather, runs an exponential and its inner
// loop, then waits for the all-gather:
//   %ags = all-gather-start(%x); %y = exponential(%x)
//   %w = while(tuple(0, %y)), condition=%c<k+1>, body=%b<k+1>
//   %agd = all-gather-done(%ags); ROOT tuple(%i + 1, %z + slice(%agd))
#ifndef HLOVERLAP_SIM_GENERATED_MODULES_H_
#define HLOVERLAP_SIM_GENERATED_MODULES_H_

#include <string>

namespace hloverlap {

std::string GenerateChain(int n);
std::string GenerateNest(int depth, int trips);

}  // namespace hloverlap

#endif  // HLOVERLAP_SIM_GENERATED_MODULES_H_
