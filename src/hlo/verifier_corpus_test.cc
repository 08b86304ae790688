// Every corpus module verifies with zero problems.
//
// Files: every `.hlo` under $HLOVERLAP_SOURCE_DIR/../shared/corpus (all
// cases, stages 00-09). One test per file: parse, then VerifyModuleAll must
// return no problems (the first few are printed on failure); from stage 02
// on also with VerifierOptions::check_layouts. The verifier's quick pass
// must accept each one by itself (so parsed dumps take the fast path), and
// the full checks must find nothing either.
//
// If the corpus folder is missing, CorpusPresent fails when the CI
// environment variable is set and is skipped otherwise.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/parser.h"
#include "hlo/verifier.h"

namespace hloverlap {
namespace {

namespace fs = std::filesystem;

fs::path SourceDir() {
  if (const char* env = std::getenv("HLOVERLAP_SOURCE_DIR");
      env != nullptr && *env != '\0') {
    return fs::path(env);
  }
  return fs::path(HLOVERLAP_SOURCE_DIR);
}

fs::path CorpusDir() { return SourceDir() / ".." / "shared" / "corpus"; }

struct CorpusFile {
  std::string name;  // test name: case_stage, sanitized
  fs::path path;
};

std::vector<CorpusFile> CorpusFiles() {
  std::vector<CorpusFile> files;
  std::error_code ec;
  const fs::path root = CorpusDir();
  if (!fs::is_directory(root, ec)) return files;
  std::vector<fs::path> paths;
  for (auto it = fs::recursive_directory_iterator(root, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec) && it->path().extension() == ".hlo") {
      paths.push_back(it->path());
    }
  }
  std::sort(paths.begin(), paths.end());
  for (const fs::path& p : paths) {
    fs::path rel = fs::relative(p, root, ec);
    rel.replace_extension();
    std::string name = rel.string();
    for (char& c : name) {
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    }
    files.push_back({name, p});
  }
  return files;
}

class VerifierCorpusTest : public ::testing::TestWithParam<CorpusFile> {};

std::string FirstProblems(const std::vector<std::string>& problems) {
  std::string shown;
  for (size_t i = 0; i < problems.size() && i < 20; ++i) {
    shown += "  " + problems[i] + "\n";
  }
  return shown;
}

TEST_P(VerifierCorpusTest, VerifiesWithoutProblems) {
  const CorpusFile& file = GetParam();
  auto module = ParseHloFile(file.path.string());
  ASSERT_TRUE(module.ok()) << module.status();
  std::vector<std::string> problems = VerifyModuleAll(**module);
  EXPECT_TRUE(problems.empty())
      << file.path.string() << ": " << problems.size() << " problems:\n"
      << FirstProblems(problems);
  // The quick pass alone proves it (the full checks are only for modules
  // with problems), and the full checks agree.
  EXPECT_TRUE(verifier_internal::QuickPassAccepts(**module))
      << file.path.string();
  EXPECT_TRUE(verifier_internal::FullChecks(**module).empty())
      << file.path.string();
  // From the SPMD partitioner on, layouts are consistent too (before it,
  // JAX's text passes transposed layouts to calls, which XLA accepts until
  // layout assignment).
  const std::string stage = file.path.filename().string();
  if (stage.size() >= 2 && stage[0] == '0' && stage[1] >= '2') {
    VerifierOptions layouts;
    layouts.check_layouts = true;
    problems = VerifyModuleAll(**module, layouts);
    EXPECT_TRUE(problems.empty())
        << file.path.string() << " (check_layouts): " << problems.size()
        << " problems:\n"
        << FirstProblems(problems);
    EXPECT_TRUE(verifier_internal::QuickPassAccepts(**module, layouts))
        << file.path.string() << " (check_layouts)";
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, VerifierCorpusTest,
                         ::testing::ValuesIn(CorpusFiles()),
                         [](const ::testing::TestParamInfo<CorpusFile>& info) {
                           return info.param.name;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(VerifierCorpusTest);

TEST(VerifierCorpusPresenceTest, CorpusPresent) {
  std::error_code ec;
  if (fs::is_directory(CorpusDir(), ec)) {
    EXPECT_FALSE(CorpusFiles().empty())
        << "no .hlo files under " << CorpusDir();
    return;
  }
  if (std::getenv("CI") != nullptr) {
    FAIL() << "corpus folder not found: " << CorpusDir();
  }
  GTEST_SKIP() << "corpus folder not found: " << CorpusDir();
}

}  // namespace
}  // namespace hloverlap
