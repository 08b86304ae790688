// libFuzzer target for the HLO text parser, verifier and printer.
//
// Any input: ParseHloModule must return a module or an error (never crash,
// hang or trip a sanitizer). When it parses, VerifyModule must return, and
// the printed module must parse again (the printer's output is always valid
// text); a re-parse failure aborts, which libFuzzer reports as a crash. So
// does a module the verifier's quick pass accepts but its full checks
// reject (sanitized builds check both: HLOVERLAP_VERIFIER_CROSSCHECK).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "hlo/parser.h"
#include "hlo/printer.h"
#include "hlo/verifier.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  hloverlap::ParseOptions options;
  options.filename = "fuzz.hlo";
  // Keep literals small so that a short input cannot ask for gigabytes.
  options.max_elements = int64_t{1} << 24;
  auto module = hloverlap::ParseHloModule(text, options);
  if (!module.ok()) return 0;
  const absl::Status verified = hloverlap::VerifyModule(**module);
  if (!verified.ok() &&
      verified.message().find("verifier's quick pass accepted") !=
          std::string_view::npos) {
    std::fprintf(stderr, "%s\n", std::string(verified.message()).c_str());
    std::abort();  // a fuzzer finding, not library code
  }
  std::string printed = hloverlap::PrintModule(**module);
  options.filename = "fuzz.printed.hlo";
  auto reparsed = hloverlap::ParseHloModule(printed, options);
  if (!reparsed.ok()) {
    std::fprintf(
        stderr, "printed module does not parse: %s\n--- printed:\n%s\n",
        std::string(reparsed.status().message()).c_str(), printed.c_str());
    std::abort();  // a fuzzer finding, not library code
  }
  return 0;
}
