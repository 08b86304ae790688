// Parse and print throughput on the corpus, and peak heap per input byte.
//
// For every ../shared/corpus/<case>/{03,04,09}_*.hlo file:
//   BM_Parse/<case>/<file>  ParseHloModule of the whole text
//   BM_Print/<case>/<file>  PrintModule of the parsed module
// Counters:
//   bytes_per_second  (SetBytesProcessed: input bytes for parse, output bytes
//                      for print)
//   x_xla             throughput / 15 MB/s, XLA's own parser on the same
//                      files (ANCHORS.md §2: 8-15 MB/s; 15 is the anchor)
//   peak_heap_ratio   parse only: peak heap bytes allocated during one parse
//                     / file size (a counting operator new/delete)
//   module_heap_ratio parse only: heap bytes the parsed module keeps / size
//   size_kb           file size
// The corpus folder is $HLOVERLAP_CORPUS, else the source tree's
// ../shared/corpus.
#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "hlo/parser.h"
#include "hlo/printer.h"

// --- Counting allocator -----------------------------------------------------
namespace {
std::atomic<int64_t> g_heap_current{0};
std::atomic<int64_t> g_heap_peak{0};

void* CountedAlloc(std::size_t size, std::size_t align) {
  void* p = nullptr;
  if (align <= alignof(std::max_align_t)) {
    p = std::malloc(size == 0 ? 1 : size);
  } else if (posix_memalign(&p, align, size == 0 ? 1 : size) != 0) {
    p = nullptr;
  }
  if (p == nullptr) throw std::bad_alloc();
  int64_t now =
      g_heap_current.fetch_add(static_cast<int64_t>(malloc_usable_size(p)),
                               std::memory_order_relaxed) +
      static_cast<int64_t>(malloc_usable_size(p));
  int64_t peak = g_heap_peak.load(std::memory_order_relaxed);
  while (now > peak && !g_heap_peak.compare_exchange_weak(
                           peak, now, std::memory_order_relaxed)) {
  }
  return p;
}

void CountedFree(void* p) {
  if (p == nullptr) return;
  g_heap_current.fetch_sub(static_cast<int64_t>(malloc_usable_size(p)),
                           std::memory_order_relaxed);
  std::free(p);
}
}  // namespace

void* operator new(std::size_t n) { return CountedAlloc(n, 0); }
void* operator new[](std::size_t n) { return CountedAlloc(n, 0); }
void* operator new(std::size_t n, std::align_val_t a) {
  return CountedAlloc(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a) {
  return CountedAlloc(n, static_cast<std::size_t>(a));
}
void operator delete(void* p) noexcept { CountedFree(p); }
void operator delete[](void* p) noexcept { CountedFree(p); }
void operator delete(void* p, std::size_t) noexcept { CountedFree(p); }
void operator delete[](void* p, std::size_t) noexcept { CountedFree(p); }
void operator delete(void* p, std::align_val_t) noexcept { CountedFree(p); }
void operator delete[](void* p, std::align_val_t) noexcept { CountedFree(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  CountedFree(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  CountedFree(p);
}

namespace {

constexpr double kXlaParseBytesPerSecond = 15e6;  // ANCHORS.md §2

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct CorpusFile {
  std::string label;  // <case>/<file>
  std::string text;
};

std::vector<CorpusFile> LoadCorpus() {
  std::filesystem::path dir;
  if (const char* env = std::getenv("HLOVERLAP_CORPUS")) {
    dir = env;
  } else {
    dir = std::filesystem::path(HLOVERLAP_SOURCE_DIR) / ".." / "shared" /
          "corpus";
  }
  std::vector<CorpusFile> files;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return files;
  for (const auto& c : std::filesystem::directory_iterator(dir, ec)) {
    if (!c.is_directory()) continue;
    for (const auto& f : std::filesystem::directory_iterator(c.path(), ec)) {
      std::string name = f.path().filename().string();
      if (f.path().extension() != ".hlo") continue;
      if (name.rfind("03_", 0) != 0 && name.rfind("04_", 0) != 0 &&
          name.rfind("09_", 0) != 0) {
        continue;
      }
      files.push_back(
          {c.path().filename().string() + "/" + name, ReadFile(f.path())});
    }
  }
  std::sort(files.begin(), files.end(),
            [](const CorpusFile& a, const CorpusFile& b) {
              return a.label < b.label;
            });
  return files;
}

void SetRateCounters(benchmark::State& state, int64_t bytes) {
  double total =
      static_cast<double>(bytes) * static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(total));
  state.counters["x_xla"] = benchmark::Counter(total / kXlaParseBytesPerSecond,
                                               benchmark::Counter::kIsRate);
  state.counters["size_kb"] = static_cast<double>(bytes) / 1024.0;
}

void BM_Parse(benchmark::State& state, const CorpusFile* file) {
  hloverlap::ParseOptions options;
  options.filename = file->label;
  // One measured parse for memory, outside the timing loop.
  {
    int64_t base = g_heap_current.load();
    g_heap_peak.store(base);
    auto module = hloverlap::ParseHloModule(file->text, options);
    if (!module.ok()) {
      state.SkipWithError(std::string(module.status().message()).c_str());
      return;
    }
    int64_t peak = g_heap_peak.load() - base;
    int64_t kept = g_heap_current.load() - base;
    double size = static_cast<double>(file->text.size());
    state.counters["peak_heap_ratio"] = static_cast<double>(peak) / size;
    state.counters["module_heap_ratio"] = static_cast<double>(kept) / size;
  }
  for (auto _ : state) {
    auto module = hloverlap::ParseHloModule(file->text, options);
    benchmark::DoNotOptimize(module);
  }
  SetRateCounters(state, static_cast<int64_t>(file->text.size()));
}

void BM_Print(benchmark::State& state, const CorpusFile* file) {
  hloverlap::ParseOptions options;
  options.filename = file->label;
  auto module = hloverlap::ParseHloModule(file->text, options);
  if (!module.ok()) {
    state.SkipWithError(std::string(module.status().message()).c_str());
    return;
  }
  int64_t printed_bytes = 0;
  for (auto _ : state) {
    std::string text = hloverlap::PrintModule(**module);
    printed_bytes = static_cast<int64_t>(text.size());
    benchmark::DoNotOptimize(text);
  }
  SetRateCounters(state, printed_bytes);
}

}  // namespace

int main(int argc, char** argv) {
  static std::vector<CorpusFile> files = LoadCorpus();
  if (files.empty()) {
    std::fprintf(stderr,
                 "parse_print_bench: no corpus files (set HLOVERLAP_CORPUS)\n");
  }
  for (const CorpusFile& f : files) {
    benchmark::RegisterBenchmark(("BM_Parse/" + f.label).c_str(), BM_Parse, &f)
        ->Unit(benchmark::kMillisecond);
  }
  for (const CorpusFile& f : files) {
    benchmark::RegisterBenchmark(("BM_Print/" + f.label).c_str(), BM_Print, &f)
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
