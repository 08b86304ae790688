// Round-trip tests over every HLO file we have: parse -> print -> parse must
// give a CompareModules-identical module, and printing that again must give
// byte-identical text (the printer's output is a fixpoint).
//
// Files: every `.hlo` under $HLOVERLAP_SOURCE_DIR/../shared/corpus (all
// cases, all stages) and under tests/hlo/ and examples/ (recursively; files
// marked `EXPECT-ERROR` are skipped, files split by `// -----` lines are
// checked chunk by chunk). One test per file.
//
// If the corpus folder is missing, CorpusPresent fails when the CI
// environment variable is set and is skipped otherwise.
//
// PrintThroughput reports the printer's speed (MB of output per second) on
// the corpus 04 and 09 files; set HLOVERLAP_PRINT_MIN_MBPS to turn the
// figure into an assertion.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/compare.h"
#include "hlo/parser.h"
#include "hlo/printer.h"

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

struct HloFile {
  std::string name;  // readable test name
  fs::path path;
};

std::string Sanitize(std::string s) {
  for (char& c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return s;
}

void CollectHloFiles(const fs::path& root, const std::string& prefix,
                     std::vector<HloFile>& out) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return;
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
    out.push_back({Sanitize(prefix + "_" + rel.string()), p});
  }
}

std::vector<HloFile> AllHloFiles() {
  std::vector<HloFile> files;
  CollectHloFiles(CorpusDir(), "corpus", files);
  CollectHloFiles(SourceDir() / "tests" / "hlo", "tests", files);
  CollectHloFiles(SourceDir() / "examples", "examples", files);
  return files;
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Splits text at `// -----` lines (the split-file convention of test files).
std::vector<std::string> SplitChunks(const std::string& text) {
  std::vector<std::string> chunks;
  std::string current;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::string trimmed = line;
    trimmed.erase(0, trimmed.find_first_not_of(" \t"));
    if (trimmed.rfind("// -----", 0) == 0) {
      chunks.push_back(std::move(current));
      current.clear();
      continue;
    }
    current += line;
    current += '\n';
  }
  chunks.push_back(std::move(current));
  return chunks;
}

// Returns the first line where a and b differ, for failure messages.
std::string FirstDifference(const std::string& a, const std::string& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  const size_t line_start = a.rfind('\n', i == 0 ? 0 : i - 1);
  const size_t from = line_start == std::string::npos ? 0 : line_start + 1;
  auto line_of = [&](const std::string& s) {
    size_t end = s.find('\n', from);
    return s.substr(from,
                    end == std::string::npos ? std::string::npos : end - from);
  };
  const int64_t line_no = std::count(a.begin(), a.begin() + from, '\n') + 1;
  return "line " + std::to_string(line_no) + ":\n  first:  " + line_of(a) +
         "\n  second: " + line_of(b);
}

// Keeps gtest from dumping the struct's bytes in failure messages.
void PrintTo(const HloFile& f, std::ostream* os) { *os << f.path.string(); }

class RoundTripTest : public ::testing::TestWithParam<HloFile> {};

TEST_P(RoundTripTest, ParsePrintParseIsIdentityAndPrintIsAFixpoint) {
  const HloFile& file = GetParam();
  const std::string text = ReadFile(file.path);
  if (text.find("EXPECT-ERROR") != std::string::npos) {
    GTEST_SKIP() << "expected-error file";
  }
  const std::vector<std::string> chunks = SplitChunks(text);
  for (size_t c = 0; c < chunks.size(); ++c) {
    if (chunks[c].find_first_not_of(" \t\n") == std::string::npos) continue;
    SCOPED_TRACE(file.path.string() +
                 (chunks.size() > 1 ? " chunk " + std::to_string(c) : ""));
    ParseOptions opts;
    opts.filename = file.path.string();
    auto first = ParseHloModule(chunks[c], opts);
    ASSERT_TRUE(first.ok())
        << "parse of the original failed: " << first.status();
    const std::string printed = PrintModule(**first);
    opts.filename = file.path.string() + " (printed)";
    auto second = ParseHloModule(printed, opts);
    ASSERT_TRUE(second.ok())
        << "parse of the printed text failed: " << second.status();
    absl::Status same = CompareModules(**first, **second);
    EXPECT_TRUE(same.ok()) << "parse(print(parse(file))) differs from "
                              "parse(file): "
                           << same.message();
    const std::string reprinted = PrintModule(**second);
    EXPECT_TRUE(printed == reprinted)
        << "printing is not a fixpoint; first difference at "
        << FirstDifference(printed, reprinted);
  }
}

INSTANTIATE_TEST_SUITE_P(Files, RoundTripTest,
                         ::testing::ValuesIn(AllHloFiles()),
                         [](const ::testing::TestParamInfo<HloFile>& info) {
                           return info.param.name;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(RoundTripTest);

TEST(RoundTripCorpusTest, CorpusPresent) {
  std::error_code ec;
  if (fs::is_directory(CorpusDir(), ec)) {
    std::vector<HloFile> files;
    CollectHloFiles(CorpusDir(), "corpus", files);
    EXPECT_FALSE(files.empty()) << "no .hlo files under " << CorpusDir();
    return;
  }
  if (std::getenv("CI") != nullptr) {
    FAIL() << "corpus folder not found: " << CorpusDir();
  }
  GTEST_SKIP() << "corpus folder not found: " << CorpusDir();
}

TEST(RoundTripCorpusTest, PrintThroughput) {
  std::vector<HloFile> files;
  CollectHloFiles(CorpusDir(), "corpus", files);
  std::vector<std::unique_ptr<Module>> modules;
  for (const HloFile& f : files) {
    const std::string base = f.path.filename().string();
    if (base.rfind("04_", 0) != 0 && base.rfind("09_", 0) != 0) continue;
    auto m = ParseHloFile(f.path.string());
    ASSERT_TRUE(m.ok()) << m.status();
    modules.push_back(std::move(*m));
  }
  if (modules.empty()) GTEST_SKIP() << "no corpus 04/09 files";
  // Warm up once, then print every module repeatedly for ~0.5 s.
  size_t bytes = 0;
  for (const auto& m : modules) bytes += PrintModule(*m).size();
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  size_t total = 0;
  int rounds = 0;
  double seconds = 0;
  do {
    for (const auto& m : modules) {
      std::string out = PrintModule(*m);
      total += out.size();
    }
    ++rounds;
    seconds = std::chrono::duration<double>(Clock::now() - start).count();
  } while (seconds < 0.5);
  const double mbps = total / seconds / 1e6;
  std::printf(
      "[ PRINT    ] %zu modules, %.1f MB per round, %d rounds: "
      "%.0f MB/s\n",
      modules.size(), bytes / 1e6, rounds, mbps);
  RecordProperty("print_mb_per_s", static_cast<int>(mbps));
  if (const char* min = std::getenv("HLOVERLAP_PRINT_MIN_MBPS")) {
    EXPECT_GE(mbps, std::atof(min));
  }
}

}  // namespace
}  // namespace hloverlap
