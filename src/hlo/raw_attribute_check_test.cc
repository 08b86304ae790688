#include "hlo/raw_attribute_check.h"

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"

namespace hloverlap {
namespace {

TEST(RawAttributeCheckTest, AliasEntriesKeepTheirPartsAndOffsets) {
  constexpr std::string_view kValue =
      "{ {0}: (0, {}, may-alias), {1}: (1, {1}) }";
  std::vector<AliasEntry> entries;
  EXPECT_EQ(CheckInputOutputAlias(kValue, &entries), std::nullopt);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].offset, kValue.find("{0}"));
  EXPECT_EQ(entries[0].output_index, std::vector<int64_t>{0});
  EXPECT_EQ(entries[0].parameter, 0);
  EXPECT_TRUE(entries[0].parameter_index.empty());
  EXPECT_EQ(entries[1].offset, kValue.find("{1}:"));
  EXPECT_EQ(entries[1].parameter, 1);
  EXPECT_EQ(entries[1].parameter_index, std::vector<int64_t>{1});
}

TEST(RawAttributeCheckTest, DonorEntriesKeepTheirPartsAndOffsets) {
  constexpr std::string_view kValue = "{ (0, {}), (1, {1,0}) }";
  std::vector<AliasEntry> entries;
  EXPECT_EQ(CheckBufferDonor(kValue, &entries), std::nullopt);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].offset, kValue.find("(0"));
  EXPECT_TRUE(entries[0].output_index.empty());
  EXPECT_EQ(entries[1].offset, kValue.find("(1"));
  EXPECT_EQ(entries[1].parameter, 1);
  EXPECT_EQ((entries[1].parameter_index), (std::vector<int64_t>{1, 0}));
}

TEST(RawAttributeCheckTest, UnclosedEntryNamesItsListAndPlace) {
  constexpr std::string_view kAlias = "{ {0}: (0, {} may-alias) }";
  std::optional<RawAttributeError> e = CheckInputOutputAlias(kAlias);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->offset, kAlias.find("may"));
  EXPECT_EQ(e->message, "expected ')' to close the alias entry");

  constexpr std::string_view kDonor = "{ (0, {} 1) }";
  e = CheckBufferDonor(kDonor);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->offset, kDonor.find("1)"));
  EXPECT_EQ(e->message, "expected ')' to close the donor entry");
}

TEST(RawAttributeCheckTest, NoEntriesKeptOnRequestOrForAnEmptyList) {
  EXPECT_EQ(CheckBufferDonor("{ (0, {}) }"), std::nullopt);  // no vector
  std::vector<AliasEntry> entries;
  EXPECT_EQ(CheckInputOutputAlias("{}", &entries), std::nullopt);
  EXPECT_TRUE(entries.empty());
}

}  // namespace
}  // namespace hloverlap
