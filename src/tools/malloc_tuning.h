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
#ifndef HLOVERLAP_TOOLS_MALLOC_TUNING_H_
#define HLOVERLAP_TOOLS_MALLOC_TUNING_H_

#if defined(__GLIBC__)
#include <malloc.h>
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
#endif
}

}  // namespace hloverlap

#endif  // HLOVERLAP_TOOLS_MALLOC_TUNING_H_
