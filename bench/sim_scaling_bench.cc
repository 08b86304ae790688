// Scaling of the timeline simulator (issue 13 item 4): `Simulate` alone
// (timeline + liveness; no parsing) on generated modules.
//
//   BM_SimChain/N        GenerateChain(N) (sim/generated_modules.h): N
//                        straight-line instructions reading one shared
//                        value, an all-gather every 64. Target: near-linear,
//                        200k instructions in seconds at most.
//   BM_SimNest/D/T       GenerateNest(D, T): D nested loops of trip count T
//                        (T^D innermost iterations), an all-gather in flight
//                        across each inner loop. Target: independent of D
//                        (depth 50 well under a second).
//   BM_SimBigSeed        ../shared/corpus/big_seed_gspmd_fsdp_accum/
//                        09_after_optimizations.hlo (XLA's final schedule
//                        of the big seed model); target <= 100 ms.
// Counters: instructions (module size), us_per_inst (time per instruction:
// flat across sizes = linear), step_ms (the simulated step, a sanity check
// that the work was done).
//
//   build/bench/sim_scaling_bench
//   build/bench/sim_scaling_bench --benchmark_filter='SimNest/50'
#include <filesystem>
#include <memory>
#include <string>

#include "benchmark/benchmark.h"
#include "hlo/parser.h"
#include "sim/generated_modules.h"
#include "sim/simulator.h"

namespace hloverlap {
namespace {

// Times Simulate on the parsed module (`m` an error: skipped).
void RunSim(benchmark::State& state,
            const absl::StatusOr<std::unique_ptr<Module>>& m) {
  if (!m.ok()) {
    state.SkipWithError(std::string(m.status().message()).c_str());
    return;
  }
  SimOptions options;
  double step_ms = 0;
  for (auto _ : state) {
    absl::StatusOr<SimResult> r = Simulate(**m, options);
    if (!r.ok()) {
      state.SkipWithError(std::string(r.status().message()).c_str());
      return;
    }
    step_ms = r->step_time_us / 1000;
    benchmark::DoNotOptimize(r);
  }
  int64_t n = (*m)->instruction_count();
  state.counters["instructions"] = static_cast<double>(n);
  state.counters["step_ms"] = step_ms;
  state.counters["us_per_inst"] =
      benchmark::Counter(static_cast<double>(n) / 1e6,
                         benchmark::Counter::kIsIterationInvariantRate |
                             benchmark::Counter::kInvert);
}

void BM_SimChain(benchmark::State& state) {
  RunSim(state,
         ParseHloModule(GenerateChain(static_cast<int>(state.range(0)))));
}
BENCHMARK(BM_SimChain)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(50000)
    ->Arg(100000)
    ->Arg(200000)
    ->Unit(benchmark::kMillisecond);

void BM_SimNest(benchmark::State& state) {
  RunSim(state, ParseHloModule(GenerateNest(static_cast<int>(state.range(0)),
                                            static_cast<int>(state.range(1)))));
}
BENCHMARK(BM_SimNest)
    ->ArgsProduct({{1, 5, 10, 20, 50}, {2, 64}})
    ->Unit(benchmark::kMillisecond);

void BM_SimBigSeed(benchmark::State& state) {
  std::filesystem::path file =
      std::filesystem::path(HLOVERLAP_SOURCE_DIR) / ".." / "shared" / "corpus" /
      "big_seed_gspmd_fsdp_accum" / "09_after_optimizations.hlo";
  RunSim(state, ParseHloFile(file.string()));
}
BENCHMARK(BM_SimBigSeed)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace hloverlap

BENCHMARK_MAIN();
