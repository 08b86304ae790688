// Standalone driver used for the device measurement in docs/BENCHMARKS.md
// (not built by CMake; see bench/parse_print_bench.cc for the Google Benchmark).
// Parse/print throughput and peak heap per corpus file (device-run driver).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <new>
#include <sstream>
#include <malloc.h>
#include <algorithm>
#include "hlo/parser.h"
#include "hlo/printer.h"
#include "tools/malloc_tuning.h"
// Heap accounting through malloc_usable_size: no header word and no atomics
// (the driver is single-threaded), so counting barely perturbs the timing.
static long long cur = 0, peak = 0;
void* operator new(size_t n) {
  void* p = std::malloc(n ? n : 1);
  if (!p) throw std::bad_alloc();
  cur += malloc_usable_size(p);
  if (cur > peak) peak = cur;
  return p;
}
void operator delete(void* p) noexcept {
  if (!p) return;
  cur -= malloc_usable_size(p);
  std::free(p);
}
void operator delete(void* p, size_t) noexcept { operator delete(p); }
using namespace hloverlap;
// Best of many runs: the shared device hosts are noisy (neighbours, clock).
constexpr int kIterations = 100;
// Usage: tput [--default-malloc] FILE...
// By default malloc is tuned as the hloverlap binary tunes it
// (tools/malloc_tuning.h); --default-malloc keeps glibc's defaults.
int main(int argc, char** argv) {
  int first = 1;
  if (argc > 1 && std::string(argv[1]) == "--default-malloc") {
    first = 2;
  } else {
    TuneMallocForCompilerWorkload();
  }
  for (int a = first; a < argc; ++a) {
    std::ifstream in(argv[a]); std::stringstream ss; ss << in.rdbuf(); std::string text = ss.str();
    double first_parse = 0, best_parse = 1e9, best_print = 1e9; long long peak_bytes = 0, kept_bytes = 0; size_t out_size = 0;
    for (int it = 0; it < kIterations; ++it) {
      long long base = cur; peak = base;
      auto t0 = std::chrono::steady_clock::now();
      auto m = ParseHloModule(text);
      auto t1 = std::chrono::steady_clock::now();
      if (!m.ok()) { std::printf("%s FAIL\n", argv[a]); break; }
      peak_bytes = std::max(peak_bytes, (long long)peak - base);
      kept_bytes = cur - base;
      std::string out = PrintModule(**m);
      auto t2 = std::chrono::steady_clock::now();
      out_size = out.size();
      if (it == 0) first_parse = std::chrono::duration<double>(t1 - t0).count();
      best_parse = std::min(best_parse, std::chrono::duration<double>(t1 - t0).count());
      best_print = std::min(best_print, std::chrono::duration<double>(t2 - t1).count());
    }
    std::printf("%-70s %8zu B  parse %7.1f MB/s (%5.1fx XLA 15MB/s)  print %7.1f MB/s  peak heap %.2fx file (module %.2fx)  (first parse %.1f MB/s)\n", argv[a], text.size(), text.size() / best_parse / 1e6, text.size() / best_parse / 1e6 / 15.0, out_size / best_print / 1e6, (double)peak_bytes / text.size(), (double)kept_bytes / text.size(), text.size() / first_parse / 1e6);
  }
}
