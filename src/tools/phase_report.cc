// Phase marks of one hloverlap process (see phase_report.h).
#include "tools/phase_report.h"

#include <sys/resource.h>
#include <time.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "tools/malloc_tuning.h"

namespace hloverlap {
namespace {

struct Mark {
  const char* phase;
  int64_t cpu_ns;   // CLOCK_PROCESS_CPUTIME_ID: exact user + system
  int64_t user_us;  // getrusage: the split is sampled at ticks
  int64_t sys_us;
  int64_t minor_faults;
  int64_t heap_bytes;
};

// A fixed table: recording a mark allocates nothing, so the heap figures
// are the program's own.
constexpr int kMaxMarks = 32;
struct Report {
  const char* path = nullptr;
  int count = 0;
  Mark marks[kMaxMarks];
};
Report report;

int64_t Micros(const timeval& t) {
  return static_cast<int64_t>(t.tv_sec) * 1000000 + t.tv_usec;
}

}  // namespace

void StartPhaseReport() {
  report.path = std::getenv("HLOVERLAP_PHASE_REPORT");
  if (report.path != nullptr && report.path[0] == '\0') report.path = nullptr;
  MarkPhase("start");
}

void MarkPhase(const char* phase) {
  if (report.path == nullptr || report.count == kMaxMarks) return;
  timespec cpu{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  Mark& m = report.marks[report.count++];
  m.phase = phase;
  m.cpu_ns = static_cast<int64_t>(cpu.tv_sec) * 1000000000 + cpu.tv_nsec;
  m.user_us = Micros(usage.ru_utime);
  m.sys_us = Micros(usage.ru_stime);
  m.minor_faults = usage.ru_minflt;
  m.heap_bytes = 0;
#if defined(__GLIBC__)
  struct mallinfo2 info = mallinfo2();
  m.heap_bytes = static_cast<int64_t>(info.uordblks + info.hblkhd) -
                 static_cast<int64_t>(HeapBytesSkippedForHugePages());
#endif
}

void FinishPhaseReport() {
  if (report.path == nullptr) return;
  MarkPhase("end");
  std::FILE* f = std::fopen(report.path, "w");
  if (f == nullptr) return;  // A diagnostic aid: never fail the command.
  for (int k = 0; k < report.count; ++k) {
    const Mark& m = report.marks[k];
    std::fprintf(f, "%s %lld %lld %lld %lld %lld\n", m.phase,
                 static_cast<long long>(m.cpu_ns),
                 static_cast<long long>(m.user_us),
                 static_cast<long long>(m.sys_us),
                 static_cast<long long>(m.minor_faults),
                 static_cast<long long>(m.heap_bytes));
  }
  std::fclose(f);
}

}  // namespace hloverlap
