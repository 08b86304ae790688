// Standalone driver used for the device measurement in docs/BENCHMARKS.md
// (not built by CMake; see bench/parse_print_bench.cc for the Google Benchmark).
// Parse/print throughput and peak heap per corpus file (device-run driver).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <new>
#include <sstream>
#include <atomic>
#include "hlo/parser.h"
#include "hlo/printer.h"
static std::atomic<long long> cur{0}, peak{0};
void* operator new(size_t n) { void* p = std::malloc(n + 16); if (!p) throw std::bad_alloc(); *(size_t*)p = n; long long c = cur += n; long long pk = peak; while (c > pk && !peak.compare_exchange_weak(pk, c)) {} return (char*)p + 16; }
void operator delete(void* p) noexcept { if (!p) return; char* q = (char*)p - 16; cur -= *(size_t*)q; std::free(q); }
void operator delete(void* p, size_t) noexcept { operator delete(p); }
using namespace hloverlap;
int main(int argc, char** argv) {
  for (int a = 1; a < argc; ++a) {
    std::ifstream in(argv[a]); std::stringstream ss; ss << in.rdbuf(); std::string text = ss.str();
    double best_parse = 1e9, best_print = 1e9; long long peak_bytes = 0; size_t out_size = 0;
    for (int it = 0; it < 20; ++it) {
      long long base = cur; peak = base;
      auto t0 = std::chrono::steady_clock::now();
      auto m = ParseHloModule(text);
      auto t1 = std::chrono::steady_clock::now();
      if (!m.ok()) { std::printf("%s FAIL\n", argv[a]); break; }
      peak_bytes = std::max(peak_bytes, (long long)peak - base);
      std::string out = PrintModule(**m);
      auto t2 = std::chrono::steady_clock::now();
      out_size = out.size();
      best_parse = std::min(best_parse, std::chrono::duration<double>(t1 - t0).count());
      best_print = std::min(best_print, std::chrono::duration<double>(t2 - t1).count());
    }
    std::printf("%-70s %8zu B  parse %7.1f MB/s (%5.1fx XLA 15MB/s)  print %7.1f MB/s  peak heap %.2fx file\n", argv[a], text.size(), text.size() / best_parse / 1e6, text.size() / best_parse / 1e6 / 15.0, out_size / best_print / 1e6, (double)peak_bytes / text.size());
  }
}
