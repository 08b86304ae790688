// Scaling of the timeline simulator (issue 13 item 4): `Simulate` alone
// (timeline + liveness; no parsing) on generated modules.
//
//   BM_SimChain/N        a straight-line entry of N instructions: a chain
//                        of elementwise kernels that all read one shared
//                        value (fan-out N) and write over their dying
//                        operand (one buffer for the whole chain), with an
//                        all-gather of the shared value issued every 64
//                        instructions and waited for 16 later. Target:
//                        near-linear, 200k instructions in seconds at most.
//   BM_SimNest/D/T       D nested while loops of trip count T (T^D
//                        innermost iterations); every level issues an
//                        all-gather before its inner loop and waits for it
//                        after (so the collective stream is in flight
//                        across the nest), the innermost body is a kernel
//                        and an all-gather. Target: independent of D (depth
//                        50 well under a second).
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

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "hlo/parser.h"
#include "sim/simulator.h"

namespace hloverlap {
namespace {

std::string GenerateChain(int n) {
  const std::string f = "f32[256,256]{1,0}";
  const std::string g = "f32[512,256]{1,0}";
  std::string out = absl::StrCat(
      "HloModule chain, is_scheduled=true, num_partitions=2\n\n",
      "ENTRY %main (p: f32[256,256]) -> f32[256,256] {\n", "  %p = ", f,
      " parameter(0)\n", "  %v0 = ", f, " exponential(%p)\n");
  int count = 2;
  int v = 0;        // last value of the chain
  int open = -1;    // all-gather in flight (its number), -1: none
  int open_at = 0;  // instruction count when it was issued
  while (count < n - 1) {
    if (open < 0 && count % 64 == 0 && count + 20 < n) {
      open = count;
      open_at = count;
      absl::StrAppend(&out, "  %ag", open, " = (", f, ", ", g,
                      ") all-gather-start(%v0), channel_id=", count,
                      ", replica_groups={{0,1}}, dimensions={0}\n");
      ++count;
      continue;
    }
    if (open >= 0 && count - open_at >= 16) {
      absl::StrAppend(&out, "  %agd", open, " = ", g, " all-gather-done(%ag",
                      open, ")\n  %s", open, " = ", f, " slice(%agd", open,
                      "), slice={[0:256], [0:256]}\n  %v", v + 1, " = ", f,
                      " add(%v", v, ", %s", open, ")\n");
      count += 3;
      ++v;
      open = -1;
      continue;
    }
    absl::StrAppend(&out, "  %v", v + 1, " = ", f, " add(%v", v, ", %v0)\n");
    ++count;
    ++v;
  }
  absl::StrAppend(&out, "  ROOT %r = ", f, " negate(%v", v, ")\n}\n");
  return out;
}

// Level k of `depth` nested loops (1 = outermost), each of `trips`.
std::string GenerateNest(int depth, int trips) {
  const std::string f = "f32[256,256]{1,0}";
  const std::string g = "f32[512,256]{1,0}";
  const std::string state = "(s32[], f32[256,256])";
  const std::string state_l = "(s32[], f32[256,256]{1,0})";
  std::string out = "HloModule nest, is_scheduled=true, num_partitions=2\n\n";
  for (int k = depth; k >= 1; --k) {
    absl::StrAppend(&out, "%c", k, " (p: ", state, ") -> pred[] {\n",
                    "  %p = ", state_l, " parameter(0)\n",
                    "  %i = s32[] get-tuple-element(%p), index=0\n",
                    "  %n = s32[] constant(", trips, ")\n",
                    "  ROOT %lt = pred[] compare(%i, %n), direction=LT\n}\n\n");
    absl::StrAppend(&out, "%b", k, " (p: ", state, ") -> ", state, " {\n",
                    "  %p = ", state_l, " parameter(0)\n",
                    "  %i = s32[] get-tuple-element(%p), index=0\n",
                    "  %x = ", f, " get-tuple-element(%p), index=1\n",
                    "  %ags = (", f, ", ", g,
                    ") all-gather-start(%x), channel_id=", k,
                    ", replica_groups={{0,1}}, dimensions={0}\n", "  %y = ", f,
                    " exponential(%x)\n");
    std::string z = "%y";
    if (k < depth) {
      absl::StrAppend(
          &out, "  %zero = s32[] constant(0)\n", "  %init = ", state_l,
          " tuple(%zero, %y)\n", "  %w = ", state_l,
          " while(%init), condition=%c", k + 1, ", body=%b", k + 1,
          ", backend_config={\"known_trip_count\":{\"n\":\"", trips, "\"}}\n",
          "  %z = ", f, " get-tuple-element(%w), index=1\n");
      z = "%z";
    }
    absl::StrAppend(&out, "  %agd = ", g, " all-gather-done(%ags)\n",
                    "  %s = ", f, " slice(%agd), slice={[0:256], [0:256]}\n",
                    "  %o = ", f, " add(", z, ", %s)\n",
                    "  %one = s32[] constant(1)\n",
                    "  %next = s32[] add(%i, %one)\n", "  ROOT %t = ", state_l,
                    " tuple(%next, %o)\n}\n\n");
  }
  absl::StrAppend(
      &out, "ENTRY %main (x: f32[256,256]) -> f32[256,256] {\n", "  %x = ", f,
      " parameter(0)\n", "  %zero = s32[] constant(0)\n", "  %init = ", state_l,
      " tuple(%zero, %x)\n", "  %w = ", state_l,
      " while(%init), condition=%c1, body=%b1, ",
      "backend_config={\"known_trip_count\":{\"n\":\"", trips, "\"}}\n",
      "  ROOT %out = ", f, " get-tuple-element(%w), index=1\n}\n");
  return out;
}

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
