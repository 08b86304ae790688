#include "passes/remarks.h"

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/parser.h"
#include "nlohmann/json.hpp"
#include "passes/remark_summary.h"

namespace hloverlap {
namespace {

using ::testing::HasSubstr;

TEST(Remark, MessageIsRenderedFromTypedArgs) {
  Remark r;
  r.name = "PrefetchedAllGather";
  r.format = "prefetched {collective} {depth} ahead: {bytes}, {t}, {nope}";
  r.Instr("collective", "all-gather.7")
      .Int("depth", 2)
      .Bytes("bytes", 25165824)
      .TimeNs("t", 131300);
  EXPECT_EQ(r.Render(),
            "prefetched all-gather.7 2 ahead: 25165824 B (24.0 MiB), "
            "131.3 us, {nope}");
  RemarkSink sink;
  sink.Emit(r);
  EXPECT_EQ(sink.remarks()[0].message, r.Render());
}

TEST(Remark, UnterminatedPlaceholderStaysAsText) {
  Remark r;
  r.format = "a {b";
  EXPECT_EQ(r.Render(), "a {b");
}

TEST(Remark, JsonHasNameAndTypedArgs) {
  Remark r;
  r.pass = "collective-pipeliner";
  r.kind = RemarkKind::kPassed;
  r.name = "PrefetchedAllGather";
  r.format = "prefetched {collective}";
  r.Instr("collective", "ag").Bytes("bytes", 8).Metric("depth", 1);
  RemarkSink sink;
  sink.Emit(r);
  nlohmann::json j = nlohmann::json::parse(sink.ToJsonLines());
  EXPECT_EQ(j["name"], "PrefetchedAllGather");
  EXPECT_EQ(j["message"], "prefetched ag");
  ASSERT_EQ(j["args"].size(), 2u);
  EXPECT_EQ(j["args"][0]["type"], "instruction");
  EXPECT_EQ(j["args"][0]["value"], "ag");
  EXPECT_EQ(j["args"][1]["type"], "bytes");
  EXPECT_EQ(j["args"][1]["value"], 8);
  EXPECT_EQ(j["metrics"]["depth"], 1);
  EXPECT_FALSE(j.contains("warning"));
}

TEST(Remark, WarningsAreOneKindPrintedAndCounted) {
  RemarkSink sink;
  Remark w;
  w.pass = "loop-policy";
  w.kind = RemarkKind::kWarning;
  w.name = "LoopSelectorMatchesNothing";
  w.message = "--loop=x:pipeline=off matches no loop";
  sink.Emit(w);
  sink.Emit(w);  // repeated: dropped
  Remark a;
  a.kind = RemarkKind::kAnalysis;
  a.message = "not a warning";
  sink.Emit(a);
  EXPECT_EQ(sink.Count(RemarkKind::kWarning), 1);
  EXPECT_EQ(sink.WarningsText(),
            "warning: loop-policy: --loop=x:pipeline=off matches no loop "
            "[LoopSelectorMatchesNothing]\n");
  // Consumers of the JSON from before warnings had a kind still see it.
  EXPECT_THAT(sink.ToJsonLines(), HasSubstr("\"warning\":true"));
}

TEST(RemarkNames, AreUniqueCamelCaseAndDocumented) {
  std::set<std::string_view> seen;
  for (const RemarkNameInfo& n : KnownRemarkNames()) {
    EXPECT_TRUE(seen.insert(n.name).second) << n.name;
    ASSERT_FALSE(n.name.empty());
    EXPECT_TRUE(std::isupper(static_cast<unsigned char>(n.name[0]))) << n.name;
    for (char c : n.name) {
      EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c))) << n.name;
    }
    EXPECT_FALSE(n.kinds.empty()) << n.name;
    EXPECT_FALSE(n.passes.empty()) << n.name;
    EXPECT_FALSE(n.meaning.empty()) << n.name;
  }
  EXPECT_TRUE(IsKnownRemarkName("PrefetchedAllGather"));
  EXPECT_FALSE(IsKnownRemarkName("prefetched"));
}

// docs/REMARKS.md is generated from remark_names.inc and must not drift.
TEST(RemarkNames, DocsTableIsGenerated) {
  const std::string path =
      std::string(HLOVERLAP_SOURCE_DIR) + "/docs/REMARKS.md";
  const std::string expected = RemarkNamesMarkdown();
  if (const char* update = std::getenv("HLOVERLAP_UPDATE_DOCS");
      update != nullptr && std::string(update) == "1") {
    std::ofstream(path) << expected;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << path;
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), expected)
      << path << " is out of date: HLOVERLAP_UPDATE_DOCS=1 ./remarks_test";
}

constexpr char kModule[] = R"(HloModule m
ENTRY %main (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  %all-gather.7 = f32[4]{0} negate(%p)
  ROOT %while.145 = f32[4]{0} negate(%all-gather.7)
}
)";

TEST(InputNames, ClonesAreNamedAfterTheirOriginals) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseHloModule(kModule);
  ASSERT_TRUE(m.ok()) << m.status();
  InputNames names(**m);
  EXPECT_EQ(names.Map("all-gather.7.next.peel"), "all-gather.7");
  EXPECT_EQ(names.Map("all-gather.7"), "all-gather.7");
  EXPECT_EQ(names.Map("while.145.1.peel0"), "while.145");
  EXPECT_EQ(names.Map("main.pipelined"), "main");
  EXPECT_EQ(names.Map("fresh.1"), "fresh.1");  // no original: stays
  EXPECT_EQ(names.MapPath("while.145.1/while.145.2"), "while.145/while.145");
  EXPECT_EQ(names.MapText("stored into all-gather.7.gte2.1, not p."),
            "stored into all-gather.7, not p.");

  RemarkSink sink;
  Remark r;
  r.instruction = "all-gather.7.next";
  r.loop = "while.145.1";
  r.format = "prefetched {collective}";
  r.Instr("collective", "all-gather.7.next");
  r.suggestion = "look at while.145.1.peel0.";
  sink.Emit(r);
  MapRemarksToInput(names, sink);
  const Remark& out = sink.remarks()[0];
  EXPECT_EQ(out.instruction, "all-gather.7");
  EXPECT_EQ(out.loop, "while.145");
  EXPECT_EQ(out.message, "prefetched all-gather.7");
  EXPECT_EQ(out.suggestion, "look at while.145.");
}

}  // namespace
}  // namespace hloverlap
