#include "hlo/while_backend_config.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "hlo/computation.h"
#include "hlo/parser.h"
#include "hlo/printer.h"

namespace hloverlap {
namespace {

constexpr char kXlaConfig[] =
    R"({"dynamic_variables":[],"known_induction_variable":{"tuple_index":"0"},)"
    R"("known_init_step":{"init":"1","step":"2"},"known_trip_count":{"n":"3"}})";

TEST(WhileBackendConfigTest, DecodesXlasConfig) {
  std::optional<WhileBackendConfig> c = WhileBackendConfig::Decode(kXlaConfig);
  ASSERT_TRUE(c.has_value());
  EXPECT_TRUE(c->present());
  EXPECT_EQ(c->known_trip_count(), 3);
  EXPECT_EQ(c->known_induction_variable(), 0);
  EXPECT_EQ(c->known_init_step(), (KnownInitStep{1, 2}));
  ASSERT_TRUE(c->dynamic_variables().has_value());
  EXPECT_TRUE(c->dynamic_variables()->empty());
  EXPECT_EQ(c->Encode(), kXlaConfig);
}

TEST(WhileBackendConfigTest, ReadsStringsAndNumbers) {
  auto n = [](const char* text) {
    std::optional<WhileBackendConfig> c = WhileBackendConfig::Decode(text);
    return c.has_value() ? c->known_trip_count() : std::nullopt;
  };
  EXPECT_EQ(n(R"({"known_trip_count":{"n":"8"}})"), 8);
  EXPECT_EQ(n(R"({"known_trip_count":{"n":12}})"), 12);
  EXPECT_EQ(n(R"({"known_trip_count":{"n":"0"}})"), 0);
  EXPECT_EQ(n(R"( { "known_trip_count" : { "n" : "9" } } )"), 9);
  EXPECT_EQ(n(R"({"known_trip_count":{"n":"9223372036854775807"}})"),
            INT64_MAX);
}

TEST(WhileBackendConfigTest, ToleratesGarbage) {
  // Not a JSON object: no config at all.
  for (const char* text : {"", "{", "}", "null", "[]", "\"x\"", "\xff\xfe{",
                           "{\"a\":\"\x01\"}", "{} {}", "{\"a\":1,}"}) {
    EXPECT_FALSE(WhileBackendConfig::Decode(text).has_value()) << text;
  }
  // An object whose known_trip_count is malformed: kept, read as absent.
  for (const char* text :
       {"{\"known_trip_count\":3}", R"({"known_trip_count":{}})",
        R"({"known_trip_count":{"n":"-1"}})",
        R"({"known_trip_count":{"n":-5}})", R"({"known_trip_count":{"n":1.5}})",
        R"({"known_trip_count":{"n":"8x"}})",
        R"({"known_trip_count":{"n":"+8"}})",
        R"({"known_trip_count":{"n":""}})",
        R"({"known_trip_count":{"n":"99999999999999999999"}})",
        R"({"known_trip_count":{"n":99999999999999999999}})",
        R"({"known_trip_count":{"n":null}})",
        R"({"known_trip_count":{"n":"oops"}})"}) {
    std::optional<WhileBackendConfig> c = WhileBackendConfig::Decode(text);
    ASSERT_TRUE(c.has_value()) << text;
    EXPECT_FALSE(c->known_trip_count().has_value()) << text;
    EXPECT_TRUE(c->has_key("known_trip_count")) << text;
    EXPECT_EQ(c->Encode(), text);
  }
}

TEST(WhileBackendConfigTest, SettersKeepOtherKeysInOrder) {
  std::optional<WhileBackendConfig> c = WhileBackendConfig::Decode(
      R"({"zeta": [1, {"a": "}"}], "known_trip_count": {"n": "4"}, "x":1.50})");
  ASSERT_TRUE(c.has_value());
  c->set_known_trip_count(2);
  EXPECT_EQ(
      c->Encode(),
      R"({"zeta":[1, {"a": "}"}],"known_trip_count":{"n":"2"},"x":1.50})");
  c->set_known_init_step(KnownInitStep{0, -3});
  EXPECT_EQ(c->Encode(),
            R"({"zeta":[1, {"a": "}"}],"known_trip_count":{"n":"2"},"x":1.50,)"
            R"("known_init_step":{"init":"0","step":"-3"}})");
  c->set_known_trip_count(std::nullopt);
  c->set_known_init_step(std::nullopt);
  EXPECT_EQ(c->Encode(), R"({"zeta":[1, {"a": "}"}],"x":1.50})");
  WhileBackendConfig fresh;
  EXPECT_FALSE(fresh.present());
  EXPECT_EQ(fresh.Encode(), "");
  fresh.set_known_trip_count(7);
  EXPECT_EQ(fresh.Encode(), R"({"known_trip_count":{"n":"7"}})");
}

std::unique_ptr<Module> Parse(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : nullptr;
}

std::string LoopText(const std::string& config) {
  return R"(HloModule m

cond {
  p = (s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[]) tuple(next)
}

ENTRY main {
  z = s32[] constant(0)
  init = (s32[]) tuple(z)
  ROOT w = (s32[]) while(init), condition=cond, body=body)" +
         config + "\n}\n";
}

Instruction* Root(Module& m) { return m.entry()->root(); }

TEST(WhileBackendConfigTest, ParserDecodesAndPrinterEncodesVerbatim) {
  for (std::string config :
       {std::string(kXlaConfig),
        std::string(R"({ "known_trip_count" : { "n" : 4 } })"),
        std::string("{}")}) {
    std::unique_ptr<Module> m = Parse(LoopText(", backend_config=" + config));
    ASSERT_NE(m, nullptr);
    const InstructionAttributes& a = Root(*m)->attrs();
    EXPECT_TRUE(a.while_config->present());
    EXPECT_TRUE(a.backend_config.empty());
    std::string printed = PrintModule(*m);
    EXPECT_NE(printed.find("backend_config=" + config + "\n"),
              std::string::npos)
        << printed;
  }
  // A string that is not JSON stays raw and prints as it was.
  std::unique_ptr<Module> m = Parse(LoopText(", backend_config=\"hello\""));
  ASSERT_NE(m, nullptr);
  EXPECT_FALSE(Root(*m)->attrs().while_config->present());
  EXPECT_EQ(Root(*m)->attrs().backend_config, "hello");
  EXPECT_NE(PrintModule(*m).find("backend_config=\"hello\""),
            std::string::npos);
}

TEST(SetWhileTripCountTest, OneWriterKeepsTheRest) {
  std::unique_ptr<Module> m = Parse(LoopText(
      R"(, backend_config={"dynamic_variables":[],"known_induction_variable":{"tuple_index":"0"},"known_init_step":{"init":"1","step":"2"}})"));
  ASSERT_NE(m, nullptr);
  SetWhileTripCount(*Root(*m), 2, KnownInitStep{3, 2});
  EXPECT_EQ(
      Root(*m)->attrs().while_config->Encode(),
      R"({"dynamic_variables":[],"known_induction_variable":{"tuple_index":"0"},)"
      R"("known_init_step":{"init":"3","step":"2"},"known_trip_count":{"n":"2"}})");
  // The new values unknown: the stale annotation goes.
  SetWhileTripCount(*Root(*m), 5);
  EXPECT_EQ(
      Root(*m)->attrs().while_config->Encode(),
      R"({"dynamic_variables":[],"known_induction_variable":{"tuple_index":"0"},)"
      R"("known_trip_count":{"n":"5"}})");
  // No config: a fresh one, without an init_step nobody asked for.
  std::unique_ptr<Module> bare = Parse(LoopText(""));
  ASSERT_NE(bare, nullptr);
  SetWhileTripCount(*Root(*bare), 4, KnownInitStep{0, 1});
  EXPECT_EQ(Root(*bare)->attrs().while_config->Encode(),
            R"({"known_trip_count":{"n":"4"}})");
  EXPECT_NE(PrintModule(*bare).find(
                R"(body=%body, backend_config={"known_trip_count":{"n":"4"}})"),
            std::string::npos);
  // Not JSON: left alone.
  std::unique_ptr<Module> raw = Parse(LoopText(", backend_config=\"hello\""));
  ASSERT_NE(raw, nullptr);
  SetWhileTripCount(*Root(*raw), 4);
  EXPECT_FALSE(Root(*raw)->attrs().while_config->present());
  EXPECT_EQ(Root(*raw)->attrs().backend_config, "hello");
}

}  // namespace
}  // namespace hloverlap
