// The cold `hloverlap opt` command, as a user pays for it: a new process
// that reads, parses, verifies and prints one module.
//
//   cold_opt_bench [--reps=21] [--hloverlap=PATH]... [--output=PATH]
//                  [--arg=EXTRA]... [FILE...]
//
// Runs `hloverlap opt FILE -o OUTPUT` --reps times per file (default: the
// 04 and 09 files of ../shared/corpus), each a fresh fork+exec, and reports
// per file the median CPU time of the whole process (user + system, from
// wait4, so exec, the dynamic loader and exit count), the throughput in
// input MB per CPU second, the minor page faults, and the same figures per
// phase from the marks the tool records when HLOVERLAP_PHASE_REPORT is set
// (src/tools/phase_report.h): `start` is everything before main, `exit`
// what follows the last mark. Medians of each column separately, so the
// phases need not add up to the total exactly.
//
// CPU time, not wall time: the build machines are shared, and a loaded
// machine stretches wall time far more than the CPU time a process uses.
// The output file defaults to one in $TMPDIR (a real file, as users write;
// /dev/null would hide the kernel's share of the write). Given several
// --hloverlap binaries, the runs alternate between them (A B A B ...), so a
// before/after comparison sees the same machine load.
//
// Each round also runs two reference processes, this binary re-executed:
// one that exits at once and one that touches 8 MiB of fresh memory (what
// a cold `opt` of a 2 MB module allocates). They price the host: on a VM
// that backs guest memory lazily, a page touched for the first time can
// cost ~20 us, and an empty static process milliseconds; figures from two
// hosts compare only beside these.
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#ifndef HLOVERLAP_SOURCE_DIR
#define HLOVERLAP_SOURCE_DIR "."
#endif

namespace {

struct PhaseSample {
  std::string name;
  double cpu_ms = 0;
  int64_t faults = 0;
  int64_t heap = 0;  // bytes in malloc blocks at the end of the phase
};

struct Run {
  double cpu_ms = 0;
  int64_t faults = 0;
  int64_t max_rss_kb = 0;
  std::vector<PhaseSample> phases;
};

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

bool FileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

int64_t FileSize(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? st.st_size : -1;
}

// Marks as written by phase_report.cc: name cpu_ns user_us sys_us faults
// heap; turned into per-phase deltas, then `exit` from the process total.
std::vector<PhaseSample> ReadPhases(const std::string& path, double total_ms,
                                    int64_t total_faults) {
  std::vector<PhaseSample> out;
  std::ifstream in(path);
  std::string line;
  double prev_ms = 0;
  int64_t prev_faults = 0;
  while (std::getline(in, line)) {
    std::istringstream s(line);
    std::string name;
    long long cpu_ns = 0, user_us = 0, sys_us = 0, faults = 0, heap = 0;
    if (!(s >> name >> cpu_ns >> user_us >> sys_us >> faults >> heap)) {
      continue;
    }
    PhaseSample p;
    p.name = name;
    p.cpu_ms = cpu_ns / 1e6 - prev_ms;
    p.faults = faults - prev_faults;
    p.heap = heap;
    prev_ms = cpu_ns / 1e6;
    prev_faults = faults;
    if (name != "end") out.push_back(p);
  }
  if (!out.empty()) {
    // "end" is main's last line: what follows it and the time between the
    // last phase and "end" (destructors of main's locals) is teardown.
    PhaseSample exit;
    exit.name = "exit";
    double sum = 0;
    int64_t fsum = 0;
    for (const PhaseSample& p : out) {
      sum += p.cpu_ms;
      fsum += p.faults;
    }
    exit.cpu_ms = total_ms - sum;
    exit.faults = total_faults - fsum;
    out.push_back(exit);
  }
  return out;
}

bool RunOnce(const std::string& tool, const std::string& file,
             const std::string& output, const std::vector<std::string>& extra,
             const std::string& phase_file, Run* run) {
  std::vector<std::string> args = {tool, "opt", file, "-o", output};
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  ::unlink(phase_file.c_str());
  const pid_t pid = ::fork();
  if (pid < 0) return false;
  if (pid == 0) {
    ::setenv("HLOVERLAP_PHASE_REPORT", phase_file.c_str(), 1);
    ::execv(tool.c_str(), argv.data());
    std::_Exit(127);
  }
  int status = 0;
  rusage usage{};
  if (::wait4(pid, &status, 0, &usage) != pid) return false;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "%s opt %s: exit status %d\n", tool.c_str(),
                 file.c_str(), WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return false;
  }
  auto ms = [](const timeval& t) { return t.tv_sec * 1e3 + t.tv_usec / 1e3; };
  run->cpu_ms = ms(usage.ru_utime) + ms(usage.ru_stime);
  run->faults = usage.ru_minflt;
  run->max_rss_kb = usage.ru_maxrss;
  run->phases = ReadPhases(phase_file, run->cpu_ms, run->faults);
  return true;
}

// CPU ms of this binary re-executed with `mode` (--reference-empty or
// --reference-touch), or a negative value.
double RunReference(const char* mode) {
  char self[] = "/proc/self/exe";
  char* argv[] = {self, const_cast<char*>(mode), nullptr};
  const pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    ::execv(self, argv);
    std::_Exit(127);
  }
  int status = 0;
  rusage usage{};
  if (::wait4(pid, &status, 0, &usage) != pid || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    return -1;
  }
  auto ms = [](const timeval& t) { return t.tv_sec * 1e3 + t.tv_usec / 1e3; };
  return ms(usage.ru_utime) + ms(usage.ru_stime);
}

// The reference processes' bodies.
int ReferenceMain(const std::string& mode) {
  if (mode == "--reference-touch") {
    constexpr size_t kBytes = 8 << 20;
    volatile char* p = static_cast<volatile char*>(std::malloc(kBytes));
    if (p == nullptr) return 1;
    for (size_t k = 0; k < kBytes; k += 4096) p[k] = 1;
  }
  return 0;
}

std::string Basename2(const std::string& path) {
  // "<case>/<file>" of the corpus layout.
  size_t last = path.rfind('/');
  if (last == std::string::npos || last == 0) return path;
  size_t prev = path.rfind('/', last - 1);
  return path.substr(prev == std::string::npos ? 0 : prev + 1);
}

struct FileResult {
  std::string file;
  int64_t bytes = 0;
  double cpu_ms = 0;
  double faults = 0;
  double rss_kb = 0;
  std::map<std::string, double> phase_ms, phase_faults, phase_heap;
};

// The runs of one binary on one file, reduced to medians.
struct Samples {
  std::vector<double> cpu, faults, rss;
  std::map<std::string, std::vector<double>> ms, flt, heap;
  void Add(const Run& run, std::vector<std::string>& phase_names) {
    cpu.push_back(run.cpu_ms);
    faults.push_back(static_cast<double>(run.faults));
    rss.push_back(static_cast<double>(run.max_rss_kb));
    for (const PhaseSample& p : run.phases) {
      if (std::find(phase_names.begin(), phase_names.end(), p.name) ==
          phase_names.end()) {
        phase_names.push_back(p.name);
      }
      ms[p.name].push_back(p.cpu_ms);
      flt[p.name].push_back(static_cast<double>(p.faults));
      heap[p.name].push_back(static_cast<double>(p.heap));
    }
  }
  FileResult Reduce(const std::string& file) const {
    FileResult r;
    r.file = file;
    r.bytes = FileSize(file);
    r.cpu_ms = Median(cpu);
    r.faults = Median(faults);
    r.rss_kb = Median(rss);
    for (const auto& [name, v] : ms) r.phase_ms[name] = Median(v);
    for (const auto& [name, v] : flt) r.phase_faults[name] = Median(v);
    for (const auto& [name, v] : heap) r.phase_heap[name] = Median(v);
    return r;
  }
};

void PrintTables(const std::string& tool,
                 const std::vector<std::string>& phase_names,
                 const std::vector<FileResult>& results) {
  std::printf("\n%s\n\n| file | KB | CPU ms | MB/s | faults | max RSS MB |",
              tool.c_str());
  for (const std::string& p : phase_names) std::printf(" %s |", p.c_str());
  std::printf("\n|---|---|---|---|---|---|");
  for (size_t k = 0; k < phase_names.size(); ++k) std::printf("---|");
  std::printf("\n");
  double total_bytes = 0, total_ms = 0, worst = 1e30, best = 0;
  for (const FileResult& r : results) {
    const double mbps = r.cpu_ms > 0 ? r.bytes / 1e6 / (r.cpu_ms / 1e3) : 0;
    total_bytes += r.bytes;
    total_ms += r.cpu_ms;
    worst = std::min(worst, mbps);
    best = std::max(best, mbps);
    std::printf("| %s | %.0f | %.2f | %.1f | %.0f | %.1f |",
                Basename2(r.file).c_str(), r.bytes / 1024.0, r.cpu_ms, mbps,
                r.faults, r.rss_kb / 1024.0);
    for (const std::string& p : phase_names) {
      auto it = r.phase_ms.find(p);
      auto ft = r.phase_faults.find(p);
      if (it == r.phase_ms.end()) {
        std::printf(" - |");
      } else {
        std::printf(" %.2f (%.0f) |", it->second, ft->second);
      }
    }
    std::printf("\n");
  }
  if (results.empty()) return;
  std::printf(
      "\nphase cells: CPU ms (minor faults). All files: %.1f MB in %.1f "
      "CPU ms = %.1f MB/s; per file %.1f-%.1f MB/s\n",
      total_bytes / 1e6, total_ms, total_bytes / 1e6 / (total_ms / 1e3), worst,
      best);
  std::printf("\nheap in malloc blocks at the end of each phase (MB):\n");
  std::printf("| file |");
  for (const std::string& p : phase_names) {
    if (p != "exit") std::printf(" %s |", p.c_str());
  }
  std::printf("\n");
  for (const FileResult& r : results) {
    std::printf("| %s |", Basename2(r.file).c_str());
    for (const std::string& p : phase_names) {
      if (p == "exit") continue;
      auto it = r.phase_heap.find(p);
      if (it == r.phase_heap.end()) {
        std::printf(" - |");
      } else {
        std::printf(" %.1f |", it->second / 1e6);
      }
    }
    std::printf("\n");
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && (std::string(argv[1]) == "--reference-empty" ||
                    std::string(argv[1]) == "--reference-touch")) {
    return ReferenceMain(argv[1]);
  }
  int reps = 21;
  std::vector<std::string> tools;
  std::string output;
  std::vector<std::string> extra;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--reps=", 0) == 0) {
      reps = std::max(1, std::atoi(a.c_str() + 7));
    } else if (a.rfind("--hloverlap=", 0) == 0) {
      tools.push_back(a.substr(12));
    } else if (a.rfind("--output=", 0) == 0) {
      output = a.substr(9);
    } else if (a.rfind("--arg=", 0) == 0) {
      extra.push_back(a.substr(6));
    } else if (a == "--help" || a == "-h") {
      std::printf(
          "usage: cold_opt_bench [--reps=N] [--hloverlap=PATH]... "
          "[--output=PATH] [--arg=EXTRA]... [FILE...]\n");
      return 0;
    } else {
      files.push_back(a);
    }
  }
  if (tools.empty()) {
    const char* env = std::getenv("HLOVERLAP_BIN");
    if (env != nullptr && env[0] != '\0') {
      tools.push_back(env);
    } else {
      // build/bench/cold_opt_bench -> build/hloverlap
      std::string self = argv[0];
      size_t slash = self.rfind('/');
      std::string dir =
          slash == std::string::npos ? "." : self.substr(0, slash);
      tools.push_back(dir + "/../hloverlap");
    }
  }
  for (const std::string& tool : tools) {
    if (!FileExists(tool)) {
      std::fprintf(stderr, "cold_opt_bench: no hloverlap binary at %s\n",
                   tool.c_str());
      return 2;
    }
  }
  if (files.empty()) {
    const std::string corpus =
        std::string(HLOVERLAP_SOURCE_DIR) + "/../shared/corpus";
    for (const char* stage :
         {"04_after_collective_pipeliner.hlo", "09_after_optimizations.hlo"}) {
      for (const char* name :
           {"big_seed_gspmd_fsdp_accum", "big_shardmap_fsdp_accum",
            "seed_gspmd_fsdp_accum", "seed_gspmd_fsdp_noaccum",
            "shardmap_dp_accum", "shardmap_fsdp_accum",
            "shardmap_fsdp_accum_remat"}) {
        std::string f = corpus + "/" + name + "/" + stage;
        if (FileExists(f)) files.push_back(f);
      }
    }
    if (files.empty()) {
      std::fprintf(stderr, "cold_opt_bench: no corpus under %s\n",
                   corpus.c_str());
      return 2;
    }
  }
  const char* tmp = std::getenv("TMPDIR");
  const std::string tmpdir = tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp";
  const std::string stem =
      tmpdir + "/cold_opt_bench." + std::to_string(::getpid());
  if (output.empty()) output = stem + ".out.hlo";
  const std::string phase_file = stem + ".phases";

  std::printf("%d runs per file and binary, output %s\n", reps, output.c_str());
  std::printf("medians; ms = CPU ms (user+sys), faults = minor page faults\n");
  std::vector<std::string> phase_names;
  std::vector<std::vector<FileResult>> results(tools.size());
  std::vector<double> empty_ms, touch_ms;
  int failures = 0;
  for (const std::string& file : files) {
    std::vector<Samples> samples(tools.size());
    bool ok = true;
    for (int k = 0; k < reps && ok; ++k) {
      for (size_t t = 0; t < tools.size() && ok; ++t) {
        Run run;
        ok = RunOnce(tools[t], file, output, extra, phase_file, &run);
        if (ok) samples[t].Add(run, phase_names);
      }
      if (const double e = RunReference("--reference-empty"); e >= 0) {
        empty_ms.push_back(e);
      }
      if (const double t = RunReference("--reference-touch"); t >= 0) {
        touch_ms.push_back(t);
      }
    }
    if (!ok) {
      ++failures;
      continue;
    }
    for (size_t t = 0; t < tools.size(); ++t) {
      results[t].push_back(samples[t].Reduce(file));
    }
  }
  ::unlink(phase_file.c_str());
  ::unlink(output.c_str());

  // "exit" goes last whatever order the marks came in.
  auto exit_it = std::find(phase_names.begin(), phase_names.end(), "exit");
  if (exit_it != phase_names.end()) {
    phase_names.erase(exit_it);
    phase_names.push_back("exit");
  }
  std::printf(
      "\nhost, same rounds: an empty process %.2f CPU ms; one touching 8 MiB "
      "of fresh memory %.2f CPU ms (medians of %zu)\n",
      Median(empty_ms), Median(touch_ms), empty_ms.size());
  for (size_t t = 0; t < tools.size(); ++t) {
    PrintTables(tools[t], phase_names, results[t]);
  }
  return failures == 0 ? 0 : 1;
}
