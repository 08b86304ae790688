#include "hlo/diagnostic.h"

#include "absl/strings/cord.h"
#include "gtest/gtest.h"

namespace hloverlap {
namespace {

TEST(Diagnostic, PositionTravelsWithTheStatusInnermostWins) {
  Instruction inner(Opcode::kAdd, "inner", Shape());
  inner.set_source_position({12, 3});
  Instruction outer(Opcode::kCall, "outer", Shape());
  outer.set_source_position({40, 5});
  absl::Status st = AtInstruction(absl::InvalidArgumentError("bad"), &inner);
  st = AtInstruction(st, &outer);
  ASSERT_TRUE(StatusSourcePosition(st).has_value());
  EXPECT_EQ(StatusSourcePosition(st)->line, 12u);
  st = WithMessage(st, "worse");
  EXPECT_EQ(st.message(), "worse");
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(LocateInFile(st, "m.hlo").message(), "m.hlo:12:3: worse");
}

TEST(Diagnostic, UnknownPositionsAndOkStatusesAreLeftAlone) {
  Instruction built(Opcode::kAdd, "built", Shape());  // no position
  absl::Status st = AtInstruction(absl::InternalError("x"), &built);
  EXPECT_FALSE(StatusSourcePosition(st).has_value());
  EXPECT_EQ(LocateInFile(st, "m.hlo").message(), "m.hlo: x");
  EXPECT_TRUE(AtInstruction(absl::OkStatus(), &built).ok());
  EXPECT_TRUE(LocateInFile(absl::OkStatus(), "m.hlo").ok());
  // Already located in the file: unchanged.
  EXPECT_EQ(LocateInFile(absl::InvalidArgumentError("m.hlo:1:1: y"), "m.hlo")
                .message(),
            "m.hlo:1:1: y");
  // A malformed payload reads as no position.
  absl::Status odd = absl::InvalidArgumentError("z");
  odd.SetPayload("hloverlap/source-position", absl::Cord("12"));
  EXPECT_FALSE(StatusSourcePosition(odd).has_value());
}

TEST(Diagnostic, ColumnsSaturate) {
  Instruction wide(Opcode::kAdd, "wide", Shape());
  wide.set_source_position({7, 1u << 30});
  EXPECT_EQ(wide.source_position().line, 7u);
  EXPECT_EQ(wide.source_position().column, (1u << 24) - 1);
}

}  // namespace
}  // namespace hloverlap
