// glibc malloc settings for the hloverlap binary.
//
// A compiler tool allocates and frees many mid-sized blocks in waves: a parse
// builds tens of thousands of instructions, a loop rewrite clones and drops
// whole computations. With glibc's defaults, blocks above the (adaptive)
// mmap threshold are mapped and unmapped each time, and freeing the top of
// the heap returns memory to the kernel, so the next wave page-faults it all
// back in. Measured on the H200 host (docs/BENCHMARKS.md), that churn cost a
// third of the parse throughput of `seed_gspmd_fsdp_accum/04` (115 -> 182
// MB/s). We keep freed memory in the process instead: the peak footprint is
// unchanged, it is only not handed back before exit.
//
// The heap is also backed by transparent huge pages where the kernel grants
// them on request (THP mode "madvise", or "always"): a cold `opt` of a 2 MB
// module touches ~10 MB of fresh heap, which costs ~2500 4 KiB page faults,
// a fifth of its CPU time; 2 MiB pages need five.
#ifndef HLOVERLAP_TOOLS_MALLOC_TUNING_H_
#define HLOVERLAP_TOOLS_MALLOC_TUNING_H_

#if defined(__GLIBC__)
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#endif

namespace hloverlap {

inline void TuneMallocForCompilerWorkload() {
#if defined(__GLIBC__)
  // 32 MiB is glibc's largest mmap threshold on 64-bit hosts; only buffers
  // larger than that (interpreter arrays of big modules) are still mapped.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  // Grow the heap 16 MiB at a time instead of 128 KiB: a large module took
  // ~80 brk calls. Only address space: pages are touched (and faulted in)
  // when used.
  mallopt(M_TOP_PAD, 16 << 20);
#if !defined(__SANITIZE_ADDRESS__) && defined(MADV_HUGEPAGE)
  // Grow the heap now (one block beyond the current top, freed at once: it
  // stays in the heap, M_TRIM_THRESHOLD) and ask for huge pages on the 2 MiB
  // aligned part of it. Only address space: a page is zeroed when first
  // touched. A refusal (no THP in this kernel) changes nothing.
  constexpr uintptr_t kHugePage = uintptr_t{2} << 20;
  const uintptr_t before = reinterpret_cast<uintptr_t>(sbrk(0));
  void* volatile grow = malloc(1 << 20);  // volatile: not elided with free
  free(grow);
  const uintptr_t after = reinterpret_cast<uintptr_t>(sbrk(0));
  const uintptr_t begin = (before + kHugePage - 1) & ~(kHugePage - 1);
  const uintptr_t end = after & ~(kHugePage - 1);
  if (before != static_cast<uintptr_t>(-1) && end > begin) {
    madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
  }
#endif
#endif
}

}  // namespace hloverlap

#endif  // HLOVERLAP_TOOLS_MALLOC_TUNING_H_
