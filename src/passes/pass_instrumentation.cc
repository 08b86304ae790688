#include "passes/pass_instrumentation.h"

#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "hlo/absl_compat.h"
#include "hlo/printer.h"
#include "hlo/verifier.h"

namespace hloverlap {

absl::Status VerifyEachInstrumentation::RunAfterPass(const PassRun& run,
                                                     const Module& module,
                                                     PassContext& context) {
  absl::Status s = VerifyModule(module);
  if (s.ok()) return s;
  return absl::InternalError(absl::StrCat("module does not verify after pass ",
                                          AsAbsl(run.pass.name()), ": ",
                                          s.message()));
}

std::string DumpAfterInstrumentation::NumberedPath(std::string_view path,
                                                   int occurrence,
                                                   int occurrences) {
  if (occurrences <= 1) return std::string(path);
  const size_t slash = path.rfind('/');
  const size_t base = slash == std::string_view::npos ? 0 : slash + 1;
  size_t dot = path.rfind('.');
  if (dot == std::string_view::npos || dot <= base) dot = path.size();
  return absl::StrCat(AsAbsl(path.substr(0, dot)), ".", occurrence,
                      AsAbsl(path.substr(dot)));
}

absl::Status DumpAfterInstrumentation::RunAfterPass(const PassRun& run,
                                                    const Module& module,
                                                    PassContext& context) {
  if (run.pass.name() != pass_) return absl::OkStatus();
  const std::string path = NumberedPath(path_, run.occurrence, run.occurrences);
  std::ofstream out(path);
  out << PrintModule(module);
  if (!out) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot write --dump-after output to ", path));
  }
  return absl::OkStatus();
}

void TimingInstrumentation::RunBeforePass(const PassRun& run,
                                          const Module& module,
                                          PassContext& context) {
  start_ = std::chrono::steady_clock::now();
}

void TimingInstrumentation::Stop(const PassRun& run) {
  timings_.push_back(
      {std::string(run.pass.name()),
       std::chrono::duration<double>(std::chrono::steady_clock::now() - start_)
           .count()});
}

absl::Status TimingInstrumentation::RunAfterPass(const PassRun& run,
                                                 const Module& module,
                                                 PassContext& context) {
  Stop(run);
  return absl::OkStatus();
}

void TimingInstrumentation::RunAfterPassFailed(const PassRun& run,
                                               const Module& module,
                                               PassContext& context) {
  Stop(run);
}

std::string TimingInstrumentation::Report() const {
  double total = 0;
  for (const Timing& t : timings_) total += t.seconds;
  std::string report = "pass timing (wall):\n";
  for (const Timing& t : timings_) {
    absl::StrAppend(
        &report, absl::StrFormat("  %9.3f ms  %5.1f%%  %s\n", t.seconds * 1e3,
                                 total > 0 ? 100 * t.seconds / total : 0,
                                 AsAbsl(t.pass)));
  }
  absl::StrAppend(&report, absl::StrFormat("  %9.3f ms  total", total * 1e3));
  return report;
}

}  // namespace hloverlap
