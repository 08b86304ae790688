// Speed of the collective pipeliner pass alone (issue 4 §13): no parsing,
// printing or cleanup in the timed region.
//
//   BM_PipelinerSeed          examples/seed_scenario.hlo (the seed module:
//                             accumulation loop around two 8-layer loops,
//                             after the cleanup passes); target <= 20 ms.
//   BM_PipelinerScanned/N     a generated module with N scanned layer loops
//                             in sequence, each with an all-gather to
//                             prefetch, a reduce-scatter stored by
//                             dynamic-update-slice to delay, and ~190
//                             compute instructions (N = 1000: ~200k
//                             instructions); target near-linear, <= 5 s at
//                             N = 1000.
// Every iteration pipelines a fresh copy (CloneModule, untimed). Counters:
// instructions (module size), loops_pipelined (passed remarks / 2 for the
// synthetic modules), time_per_kinst (time per 1000 instructions: flat =
// linear).
//
//   build/bench/pipeliner_bench --benchmark_filter=Seed
//   build/bench/pipeliner_bench --benchmark_min_time=0.01s  # (or =0.01 on
//                                                           # old versions)
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "hlo/clone.h"
#include "hlo/parser.h"
#include "passes/collective_pipeliner.h"
#include "passes/pass.h"

namespace hloverlap {
namespace {

std::unique_ptr<Module> ParseOrDie(const std::string& text,
                                   benchmark::State& state) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseHloModule(text);
  if (!m.ok()) {
    state.SkipWithError(std::string(m.status().message()).c_str());
    return nullptr;
  }
  return *std::move(m);
}

void RunPipeliner(benchmark::State& state, const Module& base) {
  int64_t passed = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::unique_ptr<Module> m = CloneModule(base);
    PassContext context;
    CollectivePipelinerPass pass;
    state.ResumeTiming();
    absl::StatusOr<bool> r = pass.Run(*m, context);
    state.PauseTiming();
    if (!r.ok()) {
      state.SkipWithError(std::string(r.status().message()).c_str());
      break;
    }
    passed = context.remarks.Count(RemarkKind::kPassed);
    m.reset();
    state.ResumeTiming();
  }
  int64_t n = base.instruction_count();
  state.counters["instructions"] = static_cast<double>(n);
  state.counters["passed_remarks"] = static_cast<double>(passed);
  // Seconds per 1000 instructions (flat across sizes = linear).
  state.counters["time_per_kinst"] =
      benchmark::Counter(static_cast<double>(n) / 1000.0,
                         benchmark::Counter::kIsIterationInvariantRate |
                             benchmark::Counter::kInvert);
}

void BM_PipelinerSeed(benchmark::State& state) {
  std::ifstream in(std::string(HLOVERLAP_SOURCE_DIR) +
                   "/examples/seed_scenario.hlo");
  std::stringstream ss;
  ss << in.rdbuf();
  std::unique_ptr<Module> m = ParseOrDie(ss.str(), state);
  if (m == nullptr) return;
  // What --preset=pipeline runs before the pipeliner (untimed).
  absl::StatusOr<PassPipeline> cleanup = BuildPreset("cleanup");
  PassContext context;
  if (!cleanup.ok() || !cleanup->Run(*m, context).ok()) {
    state.SkipWithError("cleanup failed");
    return;
  }
  RunPipeliner(state, *m);
}
BENCHMARK(BM_PipelinerSeed)->Unit(benchmark::kMillisecond);

// N scanned loops in sequence; `filler` compute instructions per body.
std::string GenerateScannedModule(int loops, int filler) {
  constexpr int kLayers = 8;
  std::string state = absl::StrCat(
      "(s32[], bf16[", kLayers, ",8,16], f32[16,16], f32[", kLayers, ",8,16])");
  std::string state_l = absl::StrCat("(s32[], bf16[", kLayers,
                                     ",8,16]{2,1,0}, f32[16,16]{1,0}, f32[",
                                     kLayers, ",8,16]{2,1,0})");
  std::string out = "HloModule scanned, num_partitions=2\n\n";
  absl::StrAppend(&out,
                  "%add (x: f32[], y: f32[]) -> f32[] {\n"
                  "  %x = f32[] parameter(0)\n  %y = f32[] parameter(1)\n"
                  "  ROOT %s = f32[] add(%x, %y)\n}\n\n");
  for (int l = 0; l < loops; ++l) {
    absl::StrAppend(&out, "%cond.", l, " (p: ", state, ") -> pred[] {\n",
                    "  %p = ", state_l, " parameter(0)\n",
                    "  %i = s32[] get-tuple-element(%p), index=0\n",
                    "  %n = s32[] constant(", kLayers, ")\n",
                    "  ROOT %lt = pred[] compare(%i, %n), direction=LT\n}\n\n");
    absl::StrAppend(
        &out, "%body.", l, " (p: ", state, ") -> ", state, " {\n",
        "  %p = ", state_l, " parameter(0)\n",
        "  %i = s32[] get-tuple-element(%p), index=0\n", "  %w = bf16[",
        kLayers, ",8,16]{2,1,0} get-tuple-element(%p), index=1\n",
        "  %acc = f32[16,16]{1,0} get-tuple-element(%p), index=2\n",
        "  %g = f32[", kLayers,
        ",8,16]{2,1,0} get-tuple-element(%p), index=3\n",
        "  %zero = s32[] constant(0)\n",
        "  %ds = bf16[1,8,16]{2,1,0} dynamic-slice(%w, %i, %zero, %zero), "
        "dynamic_slice_sizes={1,8,16}\n",
        "  %r = bf16[8,16]{1,0} reshape(%ds)\n",
        "  %ag = bf16[16,16]{1,0} all-gather(%r), channel_id=", 2 * l + 1,
        ", replica_groups={{0,1}}, dimensions={0}, "
        "use_global_device_ids=true\n",
        "  %agf = f32[16,16]{1,0} convert(%ag)\n",
        "  %x0 = f32[16,16]{1,0} dot(%acc, %agf), lhs_contracting_dims={1}, "
        "rhs_contracting_dims={0}\n");
    for (int k = 0; k < filler; ++k) {
      absl::StrAppend(&out, "  %x", k + 1, " = f32[16,16]{1,0} ",
                      k % 2 ? "multiply" : "add", "(%x", k, ", %agf)\n");
    }
    absl::StrAppend(
        &out, "  %rs = f32[8,16]{1,0} reduce-scatter(%x", filler,
        "), channel_id=", 2 * l + 2,
        ", replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true, "
        "to_apply=%add\n",
        "  %rsr = f32[1,8,16]{2,1,0} reshape(%rs)\n", "  %gn = f32[", kLayers,
        ",8,16]{2,1,0} dynamic-update-slice(%g, %rsr, "
        "%i, %zero, %zero)\n",
        "  %one = s32[] constant(1)\n", "  %next = s32[] add(%i, %one)\n",
        "  ROOT %t = ", state_l, " tuple(%next, %w, %x", filler,
        ", %gn)\n}\n\n");
  }
  absl::StrAppend(
      &out, "ENTRY %main (w: bf16[", kLayers, ",8,16], a: f32[16,16], g: f32[",
      kLayers, ",8,16]) -> f32[16,16] {\n", "  %w = bf16[", kLayers,
      ",8,16]{2,1,0} parameter(0)\n", "  %a = f32[16,16]{1,0} parameter(1)\n",
      "  %g = f32[", kLayers, ",8,16]{2,1,0} parameter(2)\n",
      "  %c0 = s32[] constant(0)\n");
  std::string acc = "%a";
  for (int l = 0; l < loops; ++l) {
    absl::StrAppend(
        &out, "  %init.", l, " = ", state_l, " tuple(%c0, %w, ", acc, ", %g)\n",
        "  %while.", l, " = ", state_l, " while(%init.", l,
        "), condition=%cond.", l, ", body=%body.", l, "\n", "  %acc.", l,
        " = f32[16,16]{1,0} get-tuple-element(%while.", l, "), index=2\n",
        "  %grad.", l, " = f32[", kLayers,
        ",8,16]{2,1,0} get-tuple-element(%while.", l, "), index=3\n");
    acc = absl::StrCat("%acc.", l);
  }
  absl::StrAppend(&out, "  ROOT %out = f32[16,16]{1,0} add(", acc, ", ", acc,
                  ")\n}\n");
  return out;
}

void BM_PipelinerScanned(benchmark::State& state) {
  std::string text = GenerateScannedModule(static_cast<int>(state.range(0)),
                                           /*filler=*/190);
  std::unique_ptr<Module> m = ParseOrDie(text, state);
  if (m == nullptr) return;
  RunPipeliner(state, *m);
}
BENCHMARK(BM_PipelinerScanned)
    ->RangeMultiplier(10)
    ->Arg(10)
    ->Arg(30)
    ->Arg(100)
    ->Arg(300)
    ->Arg(1000)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace hloverlap

BENCHMARK_MAIN();
