// Test helper (header only; not part of the library): where the corpus is
// and which of its cases are small enough to run in the interpreter.
//
// The corpus is $HLOVERLAP_SOURCE_DIR/../shared/corpus (the compile
// definition HLOVERLAP_SOURCE_DIR when the variable is unset). Small cases
// are the folders not named big_*; in sanitizer builds only the cheapest one.
#ifndef HLOVERLAP_INTERP_CORPUS_CASES_H_
#define HLOVERLAP_INTERP_CORPUS_CASES_H_

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define HLOVERLAP_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HLOVERLAP_SANITIZED 1
#endif
#endif

namespace hloverlap::interp::testing {

inline std::filesystem::path CorpusDir() {
  const char* env = std::getenv("HLOVERLAP_SOURCE_DIR");
  std::filesystem::path src = env != nullptr && *env != '\0'
                                  ? std::filesystem::path(env)
                                  : std::filesystem::path(HLOVERLAP_SOURCE_DIR);
  return src / ".." / "shared" / "corpus";
}

inline std::vector<std::string> SmallCorpusCases() {
  std::vector<std::string> cases;
  std::error_code ec;
  if (!std::filesystem::is_directory(CorpusDir(), ec)) return cases;
  for (const auto& e : std::filesystem::directory_iterator(CorpusDir(), ec)) {
    if (!e.is_directory()) continue;
    std::string name = e.path().filename().string();
    if (name.rfind("big_", 0) == 0) continue;
    cases.push_back(name);
  }
  std::sort(cases.begin(), cases.end());
#ifdef HLOVERLAP_SANITIZED
  // One case, the cheapest to interpret (no accumulation loop: about 4x
  // less work than the others); the Release stage runs them all.
  auto cheapest =
      std::find(cases.begin(), cases.end(), "seed_gspmd_fsdp_noaccum");
  if (cheapest != cases.end()) std::iter_swap(cases.begin(), cheapest);
  if (cases.size() > 1) cases.resize(1);
#endif
  return cases;
}

}  // namespace hloverlap::interp::testing

#endif  // HLOVERLAP_INTERP_CORPUS_CASES_H_
