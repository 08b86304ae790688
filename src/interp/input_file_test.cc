#include "interp/input_file.h"

#include "gtest/gtest.h"
#include "interp/testing.h"

namespace hloverlap::interp {
namespace {

using testing::Doubles;
using testing::Ints;
using testing::Parse;

constexpr char kModule[] = R"(HloModule m, num_partitions=2

ENTRY main {
  a = f32[2,2] parameter(0)
  b = s32[3] parameter(1)
  c = bf16[2] parameter(2)
  d = (pred[2], u8[1]) parameter(3)
  e = f32[4] parameter(4)
  ROOT t = (f32[2,2], s32[3], bf16[2], (pred[2], u8[1]), f32[4]) tuple(a, b, c, d, e)
}
)";

TEST(InputFile, ParsesEveryForm) {
  auto m = Parse(kModule);
  ASSERT_NE(m, nullptr);
  absl::StatusOr<std::vector<std::vector<Value>>> random =
      MakeRandomInputs(*m, 2, {});
  ASSERT_TRUE(random.ok());
  absl::StatusOr<std::vector<std::vector<Value>>> in = ParseInputs(
      R"({"parameters": [
            [[1, 2], [3, "inf"]],
            {"per_device": [[1, -2, 3], null]},
            0.1,
            {"tuple": [[true, 0], {"random": true}]}
          ]})",
      *m, 2, *random);
  ASSERT_TRUE(in.ok()) << in.status();
  const auto& d0 = (*in)[0];
  const auto& d1 = (*in)[1];
  EXPECT_EQ(Doubles(d0[0]), (std::vector<double>{1, 2, 3, INFINITY}));
  EXPECT_EQ(Ints(d0[1]), (std::vector<int64_t>{1, -2, 3}));
  EXPECT_EQ(Fnv1a64(d1[1]), Fnv1a64((*random)[1][1]));  // null -> random
  EXPECT_EQ(d0[2].data<bf16_t>()[0].v, F32ToBf16(0.1f));
  EXPECT_EQ(Ints(d0[3].element(0)), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(Fnv1a64(d0[3].element(1)), Fnv1a64((*random)[0][3].element(1)));
  EXPECT_EQ(Fnv1a64(d0[4]), Fnv1a64((*random)[0][4]));  // left out: random
}

TEST(InputFile, Errors) {
  auto m = Parse(kModule);
  ASSERT_NE(m, nullptr);
  absl::StatusOr<std::vector<std::vector<Value>>> random =
      MakeRandomInputs(*m, 2, {});
  ASSERT_TRUE(random.ok());
  auto err = [&](const char* text) {
    absl::StatusOr<std::vector<std::vector<Value>>> in =
        ParseInputs(text, *m, 2, *random);
    EXPECT_FALSE(in.ok()) << text;
    return in.ok() ? std::string() : std::string(in.status().message());
  };
  EXPECT_EQ(err("not json"), "inputs: not valid JSON");
  EXPECT_EQ(err(R"({"params": []})"),
            "inputs: expected an object {\"parameters\": [...]}");
  EXPECT_EQ(err(R"({"parameters": [[1, 2, 3]]})"),
            "inputs: parameter 0 (a): 3 values for f32[2,2] (4 elements)");
  EXPECT_EQ(err(R"({"parameters": [null, {"per_device": [[1,2,3]]}]})"),
            "inputs: parameter 1 (b): per_device needs 2 entries, one per "
            "device");
  EXPECT_EQ(err(R"({"parameters": [["x", 1, 2, 3]]})"),
            "inputs: parameter 0 (a): bad number 'x'");
  EXPECT_EQ(err(R"({"parameters": [null, null, null, [1, 2]]})"),
            "inputs: parameter 3 (d): parameter is a tuple (pred[2], u8[1]); "
            "use {\"tuple\": [...]}");
  EXPECT_EQ(err(R"({"parameters": [{"raw_file": "/nonexistent.bin"}]})"),
            "inputs: parameter 0 (a): cannot open /nonexistent.bin");
  EXPECT_EQ(err(R"({"parameters": [1,2,3,4,5,6]})"),
            "inputs: 6 parameters given, the entry computation has 5");
}

}  // namespace
}  // namespace hloverlap::interp
