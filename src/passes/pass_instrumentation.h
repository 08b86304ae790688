// The instrumentations `hloverlap opt` hooks around every pass run
// (PassInstrumentation, pass.h):
//
//   --verify-each     VerifyEachInstrumentation: the verifier after each pass;
//                     a module that does not verify stops the pipeline with an
//                     internal error naming the pass.
//   --dump-after=P    DumpAfterInstrumentation: the module after each run of
//                     P to the dump path; when the pipeline runs P more than
//                     once every run keeps its dump, numbered from 1 before
//                     the extension (`--dump-after=dce` in `--preset=pipeline`
//                     writes dce.1.hlo and dce.2.hlo).
//   --time-passes     TimingInstrumentation: wall time of each pass run (the
//                     pass alone, not the other instrumentations), reported
//                     by Report().
#ifndef HLOVERLAP_PASSES_PASS_INSTRUMENTATION_H_
#define HLOVERLAP_PASSES_PASS_INSTRUMENTATION_H_

#include <chrono>
#include <string>
#include <vector>

#include "passes/pass.h"

namespace hloverlap {

class VerifyEachInstrumentation : public PassInstrumentation {
 public:
  absl::Status RunAfterPass(const PassRun& run, const Module& module,
                            PassContext& context) override;
};

class DumpAfterInstrumentation : public PassInstrumentation {
 public:
  DumpAfterInstrumentation(std::string pass, std::string path)
      : pass_(std::move(pass)), path_(std::move(path)) {}
  absl::Status RunAfterPass(const PassRun& run, const Module& module,
                            PassContext& context) override;
  // The file of `occurrence` of `occurrences` runs: `path` itself for a
  // single run, else `path` with ".N" before its extension.
  static std::string NumberedPath(std::string_view path, int occurrence,
                                  int occurrences);

 private:
  std::string pass_;
  std::string path_;
};

class TimingInstrumentation : public PassInstrumentation {
 public:
  struct Timing {
    std::string pass;
    double seconds = 0;
  };
  void RunBeforePass(const PassRun& run, const Module& module,
                     PassContext& context) override;
  absl::Status RunAfterPass(const PassRun& run, const Module& module,
                            PassContext& context) override;
  void RunAfterPassFailed(const PassRun& run, const Module& module,
                          PassContext& context) override;
  const std::vector<Timing>& timings() const { return timings_; }
  // "pass timing (wall):" then one line per run (ms, share, pass) and the
  // total; no trailing newline.
  std::string Report() const;

 private:
  void Stop(const PassRun& run);
  std::chrono::steady_clock::time_point start_;
  std::vector<Timing> timings_;
};

}  // namespace hloverlap

#endif  // HLOVERLAP_PASSES_PASS_INSTRUMENTATION_H_
