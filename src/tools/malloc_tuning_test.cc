// TuneMallocForCompilerWorkload: a fresh heap faults in 2 MiB pages.
#include "tools/malloc_tuning.h"

#include <sys/resource.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace hloverlap {
namespace {

[[maybe_unused]] int64_t MinorFaults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// "[madvise]" or "[always]" in the kernel's THP setting.
[[maybe_unused]] bool KernelGrantsHugePages() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::stringstream text;
  text << in.rdbuf();
  const std::string mode = text.str();
  return mode.find("[madvise]") != std::string::npos ||
         mode.find("[always]") != std::string::npos;
}

// What a parse does to a fresh heap: tens of thousands of small blocks,
// each written. In 4 KiB pages, 6 MiB is 1536 faults; before the heap was
// moved to a huge page boundary, the stretch below the first boundary (up
// to 2 MiB, where the break happened to be) and any stretch malloc wrote a
// header into before the advice still faulted page by page (~300-800).
TEST(MallocTuning, FreshHeapFaultsInHugePages) {
#if defined(HLOVERLAP_UNDER_ASAN) || !defined(__GLIBC__)
  GTEST_SKIP() << "the sanitizers' allocator replaces glibc's malloc";
#else
  if (!KernelGrantsHugePages()) {
    GTEST_SKIP() << "this kernel does not grant transparent huge pages";
  }
  TuneMallocForCompilerWorkload();
  EXPECT_GT(HeapBytesSkippedForHugePages(), 0u);
  std::vector<char*> blocks;
  blocks.reserve(24576);
  const int64_t before = MinorFaults();
  for (int k = 0; k < 24576; ++k) {
    char* block = static_cast<char*>(std::malloc(256));
    for (int b = 0; b < 256; b += 64) block[b] = static_cast<char>(k);
    blocks.push_back(block);
  }
  const int64_t faults = MinorFaults() - before;
  for (char* block : blocks) std::free(block);
  // A few 2 MiB faults, the page below the boundary, and whatever the
  // kernel could not back with a huge page at once: far below 1536.
  EXPECT_LT(faults, 96) << "6 MiB of fresh heap took " << faults
                        << " minor faults";
#endif
}

}  // namespace
}  // namespace hloverlap
