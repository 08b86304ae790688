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

// Canonical-style text (what the printer emits) must come back byte for
// byte after parse -> print: covers header attributes, stack frames,
// execution threads, literals of many types, layouts, dynamic dims and most
// attribute kinds in XLA's order.
constexpr const char* kCanonicalTexts[] = {
    R"hlo(HloModule features, is_scheduled=true, input_output_alias={ {}: (0, {}, may-alias) }, entry_computation_layout={(f32[8]{0}, s32[])->f32[8]{0}}, replica_count=2, num_partitions=4, frontend_attributes={a="1",b={x = 1 : i32}}

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %sum = f32[] add(%x, %y)
}

%cond (p: (s32[], f32[8])) -> pred[] {
  %p = (s32[], f32[8]{0}) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %n = s32[] constant(4)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body (q: (s32[], f32[8])) -> (s32[], f32[8]) {
  %q = (s32[], f32[8]{0}) parameter(0)
  %j = s32[] get-tuple-element(%q), index=0
  %one = s32[] constant(1)
  %next = s32[] add(%j, %one)
  %v = f32[8]{0} get-tuple-element(%q), index=1
  ROOT %r = (s32[], f32[8]{0}) tuple(%next, %v)
}

%wrapped (w0: f32[8]) -> f32[2] {
  %w0 = f32[8]{0} parameter(0)
  ROOT %rs = f32[2]{0} reduce-scatter(%w0), channel_id=9, replica_groups=[1,4]<=[4], use_global_device_ids=true, dimensions={0}, to_apply=%add
}, execution_thread="comm"

ENTRY %main (a: f32[8], b: s32[]) -> f32[8] {
  %a = f32[8]{0} parameter(0), sharding={devices=[4]<=[4]}
  %b = s32[] parameter(1), sharding={replicated}
  %c0 = f32[4]{0} constant({1, -2.5, inf, -nan})
  %c1 = bf16[2,2]{1,0} constant({ { 1.5, -0 }, { 0.1001, nan(0x1) } })
  %c2 = u64[] constant(18446744073709551615)
  %c3 = pred[3]{0} constant({1, 0, 1})
  %c4 = pred[] constant(true)
  %c5 = f32[] constant(nan(0x7f))
  %c6 = f16[] constant(0.33325)
  %c7 = s4[2]{0} constant({-8, 7})
  %c8 = f32[2,1,1,2]{3,2,1,0} constant({ { /*i0=0*/ { /*i1=0*/ { 1, 2 } } }, { /*i0=1*/ { /*i1=0*/ { 3, 4 } } } })
  %c9 = f32[100]{0} constant({...})
  %c10 = c64[] constant((1, -2))
  %c11 = f32[] constant(1e-05)
  %c12 = f64[] constant(0.33333333333333331)
  %c13 = s64[] constant(-9223372036854775808)
  %c14 = f32[] constant(3.40282347e+38)
  %c15 = f8e4m3fn[2]{0} constant({448, -nan})
  %c16 = s32[2,3]{1,0} constant({ { 1, 2, 3 }, { 4, 5, 6 } })
  %bc = f32[8]{0} broadcast(%c11), dimensions={}
  %ar = f32[8]{0} all-reduce(%a), channel_id=1, replica_groups=[2,4]<=[4,2]T(1,0), use_global_device_ids=true, to_apply=%add
  %ag = f32[16]{0} all-gather(%a), channel_id=2, replica_groups={{0,1},{2,3}}, constrain_layout=true, dimensions={0}
  %cp = f32[8]{0} collective-permute(%a), channel_id=3, source_target_pairs={{0,1},{1,0}}
  %sl = f32[4]{0} slice(%a), slice={[0:8:2]}
  %pad = f32[12]{0} pad(%a, %c11), padding=1_3
  %tile = f32[8]{0:T(128)S(1)} copy(%a)
  %ds = f32[2]{0} dynamic-slice(%a, %b), dynamic_slice_sizes={2}
  %dot = f32[] dot(%a, %a), lhs_contracting_dims={0}, rhs_contracting_dims={0}, operand_precision={highest,default}
  %t = (s32[], f32[8]{0}) tuple(%b, %ar)
  %w = (s32[], f32[8]{0}) while(%t), condition=%cond, body=%body, backend_config={"known_trip_count":{"n":"4"}}
  %gte = f32[8]{0} get-tuple-element(%w), index=1
  %start = ((f32[8]{0}), f32[2]{0}) async-start(%gte), async_execution_thread="comm", calls=%wrapped
  %done = f32[2]{0} async-done(%start)
  %cc = f32[8]{0} custom-call(%gte, %done), custom_call_target="foo", api_version=API_VERSION_TYPED_FFI, frontend_attributes={_xla_stream_annotation="1",k={{0,1}}}, backend_config="raw string\n"
  %cmp = pred[8]{0} compare(%cc, %bc), direction=GT, type=TOTALORDER
  %sel = f32[8]{0} select(%cmp, %cc, %bc), metadata={op_type="Select" op_name="jit(f)/select\303\251 \"q\"" source_file="/a.py" source_line=3 source_end_line=4 source_column=5 source_end_column=6 deduplicated_name="d" scheduling_name="s" stack_frame_id=1}
  ROOT %out = f32[8]{0} add(%sel, %bc), control-predecessors={%ag, %cp}
}

)hlo",
    R"hlo(HloModule features2, entry_computation_layout={(f32[<=8,?]{1,0}, f32[8,128]{1,0:T(8,128)L(2)E(32)S(1)})->f32[]}

FileNames
1 "a.py"
2 "b\303\251.py"

FunctionNames
1 "f"

FileLocations
1 {file_name_id=1 function_name_id=1 line=10 end_line=11 column=2 end_column=9}
2 {file_name_id=2 function_name_id=1 line=1 end_line=1 column=0 end_column=0}

StackFrames
1 {file_location_id=1 parent_frame_id=1}
2 {file_location_id=2 parent_frame_id=2}


%max (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %m = f32[] maximum(%x, %y)
}

%lt (l0: f32[], l1: f32[]) -> pred[] {
  %l0 = f32[] parameter(0)
  %l1 = f32[] parameter(1)
  ROOT %c = pred[] compare(%l0, %l1), direction=LT, type=TOTALORDER
}

%br0 (z0: f32[]) -> f32[] {
  ROOT %z0 = f32[] parameter(0)
}

%br1 (z1: f32[]) -> f32[] {
  %z1 = f32[] parameter(0)
  ROOT %neg = f32[] negate(%z1)
}

ENTRY %main (d: f32[<=8,?], lay: f32[8,128]) -> f32[] {
  %tok = token[] after-all()
  %e = () tuple()
  %k = (s32[], (f32[2]{0}, pred[])) constant(( 7, ( {0.5, 1}, false ) ))
  %d = f32[<=8,?]{1,0} parameter(0)
  %lay = f32[8,128]{1,0:T(8,128)L(2)E(32)S(1)} parameter(1)
  %i = s32[16]{0} iota(), iota_dimension=0
  %f = f32[16]{0} convert(%i)
  %cst = f32[] constant(-inf)
  %r = f32[] reduce(%f, %cst), dimensions={0}, to_apply=%max
  %srt = f32[16]{0} sort(%f), dimensions={0}, is_stable=true, to_apply=%lt
  %rw = f32[8]{0} reduce-window(%f, %cst), window={size=2 stride=2}, to_apply=%max
  %g = f32[4,1]{1,0} gather(%f, %i), offset_dims={1}, collapsed_slice_dims={}, start_index_map={0}, index_vector_dim=1, slice_sizes={1}, indices_are_sorted=true
  %p = pred[] constant(false)
  %s = s32[] constant(1)
  %cond1 = f32[] conditional(%p, %cst, %cst), true_computation=%br0, false_computation=%br1
  %cond2 = f32[] conditional(%s, %cst, %cst), branch_computations={%br0, %br1}
  %conv = f32[1,8,8,1]{3,2,1,0} custom-call(%lay), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, custom_call_target="__cudnn$convForward", custom_call_has_side_effect=true, schedule=SCHEDULE_LATEST
  %ar = f32[] all-reduce(%cond1), replica_groups={}, to_apply=%max
  %rp = f32[] reduce-precision(%ar), exponent_bits=8, mantissa_bits=7
  %ex = f32[] exponential(%rp), statistics={visualizing_index=1,stat-0=0.5}, result_accuracy={mode=highest}, metadata={op_name="e" stack_frame_id=2}
  ROOT %o = f32[] add(%ex, %cond2), frontend_attributes={_scheduling_group_id="1",z="a b"}
}

)hlo",
};

TEST(RoundTripTextTest, CanonicalTextIsReproducedExactly) {
  for (const char* text : kCanonicalTexts) {
    auto m = ParseHloModule(text);
    ASSERT_TRUE(m.ok()) << m.status();
    const std::string printed = PrintModule(**m);
    EXPECT_TRUE(printed == text)
        << "first difference at " << FirstDifference(text, printed);
  }
}

// A pass may append instructions anywhere; the printer must still emit a
// def-before-use order that parses back to the same module.
TEST(RoundTripTextTest, AppendedInstructionsStillParse) {
  auto m = ParseHloModule(kCanonicalTexts[0]);
  ASSERT_TRUE(m.ok()) << m.status();
  Computation* entry = (*m)->entry();
  Instruction* root = entry->root();
  Instruction* a = entry->parameter(0);
  Instruction* neg =
      entry->AddInstruction(Opcode::kNegate, "late.neg", a->shape(), {a});
  Instruction* late_root =
      entry->AddInstruction(Opcode::kAdd, "late.root", root->shape(), {neg});
  // Stored order now has the root before the instruction it will use.
  root->ReplaceOperandWith(1, late_root);
  late_root->AppendOperand(neg);
  const std::string printed = PrintModule(**m);
  auto again = ParseHloModule(printed);
  ASSERT_TRUE(again.ok()) << again.status() << "\n" << printed;
  CompareOptions by_name;
  by_name.compare_instruction_order = false;
  absl::Status same = CompareModules(**m, **again, by_name);
  EXPECT_TRUE(same.ok()) << same;
  EXPECT_EQ(PrintModule(**again), printed);
}

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
