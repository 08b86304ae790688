// Quick parse-throughput harness for the HLO text parser.
//
//   parse_speed_main [--reps=N] FILE...
//
// Parses each file N times (default 20) from memory and prints the best and
// median throughput in MB/s plus the instruction count, or the parse error.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "hlo/parser.h"

int main(int argc, char** argv) {
  int reps = 20;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--reps=", 0) == 0) {
      reps = std::max(1, std::atoi(a.c_str() + 7));
    } else {
      files.push_back(a);
    }
  }
  int failures = 0;
  double total_bytes = 0, total_best_s = 0, total_cpu_s = 0;
  for (const std::string& f : files) {
    auto data = hloverlap::ReadInputFile(f);
    if (!data.ok()) {
      std::printf("FAIL %s: %s\n", f.c_str(),
                  std::string(data.status().message()).c_str());
      ++failures;
      continue;
    }
    std::vector<double> secs, cpu;
    int64_t instructions = 0;
    bool ok = true;
    for (int r = 0; r < reps && ok; ++r) {
      hloverlap::ParseOptions opts;
      opts.filename = f;
      timespec c0, c1;
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
      auto t0 = std::chrono::steady_clock::now();
      auto m = hloverlap::ParseHloModule(*data, opts);
      auto t1 = std::chrono::steady_clock::now();
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
      cpu.push_back((c1.tv_sec - c0.tv_sec) + (c1.tv_nsec - c0.tv_nsec) * 1e-9);
      if (!m.ok()) {
        std::printf("FAIL %s: %s\n", f.c_str(),
                    std::string(m.status().message()).c_str());
        ok = false;
        ++failures;
        break;
      }
      instructions = (*m)->instruction_count();
      secs.push_back(std::chrono::duration<double>(t1 - t0).count());
    }
    if (!ok) continue;
    std::sort(secs.begin(), secs.end());
    std::sort(cpu.begin(), cpu.end());
    double mb = data->size() / 1e6;
    total_bytes += data->size();
    total_best_s += secs.front();
    total_cpu_s += cpu.front();
    std::printf(
        "ok   %-60s %6.3f MB %6lld instrs  wall best %6.1f median %6.1f MB/s"
        "  cpu best %6.1f MB/s\n",
        f.c_str(), mb, static_cast<long long>(instructions), mb / secs.front(),
        mb / secs[secs.size() / 2], mb / cpu.front());
  }
  if (total_best_s > 0) {
    std::printf("aggregate: wall %.1f MB/s, cpu %.1f MB/s over %.2f MB\n",
                total_bytes / 1e6 / total_best_s,
                total_bytes / 1e6 / total_cpu_s, total_bytes / 1e6);
  }
  return failures == 0 ? 0 : 1;
}
