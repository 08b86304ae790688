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

// AddressSanitizer replaces malloc: nothing below applies (GCC defines
// __SANITIZE_ADDRESS__, clang answers __has_feature).
#if defined(__SANITIZE_ADDRESS__)
#define HLOVERLAP_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HLOVERLAP_UNDER_ASAN 1
#endif
#endif

// First, so that __GLIBC__ is defined (by the C library's own headers)
// when tested below.
#include <cstddef>
#include <cstdint>

#if defined(__GLIBC__)
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#endif

namespace hloverlap {

namespace malloc_tuning_internal {
// The block that moves the heap to a 2 MiB boundary (below), and its size.
inline void* skipped = nullptr;
inline size_t skipped_bytes = 0;
}  // namespace malloc_tuning_internal

// Bytes of the heap set aside, untouched, by TuneMallocForCompilerWorkload
// to start the rest on a huge page boundary (0 when it did not). Address
// space, not memory; the phase report leaves it out of the heap figures.
inline size_t HeapBytesSkippedForHugePages() {
  return malloc_tuning_internal::skipped_bytes;
}

// Call once, first thing in main; later calls only repeat the mallopt
// settings.
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
#if !defined(HLOVERLAP_UNDER_ASAN) && defined(MADV_HUGEPAGE)
  // Huge pages cover only whole 2 MiB aligned stretches, and only those
  // not touched before the advice: one 4 KiB page written in a stretch (a
  // chunk header malloc writes when it splits the heap's top) and the whole
  // stretch faults in 4 KiB pages, 512 faults. The heap also starts where
  // the kernel put the break (randomized), up to 2 MiB before a boundary.
  // So: one block from the top of the heap to just below the next boundary
  // B, kept for the life of the process and never touched (address space,
  // not memory); allocating it grows the heap by M_TOP_PAD, and malloc
  // writes the new top's header in the page just below B. Then the advice
  // on [B, end of heap), before anything is written there. A refusal (no
  // THP in this kernel) or any surprise (the block not where the probe was)
  // leaves the heap as glibc made it: slower, not wrong.
  namespace state = malloc_tuning_internal;
  if (state::skipped != nullptr) return;
  constexpr uintptr_t kHugePage = uintptr_t{2} << 20;
  constexpr uintptr_t kChunkHeader = 16;  // glibc, 64-bit
  // A probe big enough to come from the top of the heap, not a free list;
  // freed, it merges back into the top. Splitting the top for it wrote a
  // header just past it, so the boundary is taken beyond that.
  constexpr uintptr_t kProbe = 128 << 10;
  void* volatile probe = malloc(kProbe);
  const uintptr_t at = reinterpret_cast<uintptr_t>(probe);
  free(probe);
  if (probe == nullptr) return;
  const uintptr_t boundary =
      (at + kProbe + (64 << 10) + kHugePage - 1) & ~(kHugePage - 1);
  // The block's chunk is [at - header, boundary - 64): the top's header
  // lands at boundary - 64. Chunk size for a request n is n + 16 rounded
  // to 16 here, since the span is a multiple of 16.
  const uintptr_t span = (boundary - 64) - (at - kChunkHeader);
  // Kept reachable (state::skipped): not a leak to LeakSanitizer.
  state::skipped = malloc(span - kChunkHeader);
  if (state::skipped == nullptr) return;
  state::skipped_bytes = span - kChunkHeader;
  const uintptr_t top = reinterpret_cast<uintptr_t>(sbrk(0));
  if (reinterpret_cast<uintptr_t>(state::skipped) != at ||
      top == static_cast<uintptr_t>(-1)) {
    return;
  }
  const uintptr_t end = top & ~(kHugePage - 1);
  if (end > boundary) {
    madvise(reinterpret_cast<void*>(boundary), end - boundary, MADV_HUGEPAGE);
  }
#endif
#endif
}

}  // namespace hloverlap

#endif  // HLOVERLAP_TOOLS_MALLOC_TUNING_H_
