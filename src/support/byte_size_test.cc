#include "support/byte_size.h"

#include <cstdint>
#include <limits>
#include <string>

#include "gtest/gtest.h"

namespace hloverlap {
namespace {

int64_t Bytes(std::string_view text) {
  absl::StatusOr<int64_t> b = ParseByteSize(text);
  EXPECT_TRUE(b.ok()) << text << ": " << b.status();
  return b.value_or(-1);
}

TEST(ByteSizeTest, PlainBytes) {
  EXPECT_EQ(Bytes("0"), 0);
  EXPECT_EQ(Bytes("4096"), 4096);
  EXPECT_EQ(Bytes("4096B"), 4096);
  EXPECT_EQ(Bytes("1e6"), 1000000);
}

TEST(ByteSizeTest, EverySpellingOfAUnitIsAPowerOf1024) {
  for (std::string unit : {"K", "k", "KB", "kB", "kb", "KiB", "kib"}) {
    EXPECT_EQ(Bytes("1" + unit), 1024) << unit;
  }
  for (std::string unit : {"M", "MB", "MiB", "mb"}) {
    EXPECT_EQ(Bytes("3" + unit), 3 << 20) << unit;
  }
  for (std::string unit : {"G", "GB", "GiB"}) {
    EXPECT_EQ(Bytes("2" + unit), int64_t{2} << 30) << unit;
  }
  EXPECT_EQ(Bytes("2T"), int64_t{2} << 40);
  EXPECT_EQ(Bytes("2TiB"), int64_t{2} << 40);
}

// The case of issue 15: explain and opt read 0.5KB as the same 512 bytes.
TEST(ByteSizeTest, FractionsRoundDown) {
  EXPECT_EQ(Bytes("0.5KB"), 512);
  EXPECT_EQ(Bytes("0.5KiB"), 512);
  EXPECT_EQ(Bytes("1.5GiB"), 1610612736);
  EXPECT_EQ(Bytes("0.001K"), 1);  // 1.024
  EXPECT_EQ(Bytes("1.9"), 1);
}

TEST(ByteSizeTest, Rejected) {
  for (std::string_view text :
       {"", "lots", "K", "1.2.3", "-1", "+1", "1 K", " 1", "1Mi", "1PB", "inf",
        "nan", "1e", "0x10", "1KBB"}) {
    absl::StatusOr<int64_t> b = ParseByteSize(text);
    EXPECT_FALSE(b.ok()) << "'" << text << "' gave " << b.value_or(0);
    if (!b.ok()) {
      EXPECT_NE(std::string(b.status().message()).find("invalid size"),
                std::string::npos);
    }
  }
}

TEST(ByteSizeTest, TooLarge) {
  EXPECT_EQ(Bytes("8388607T"),
            std::numeric_limits<int64_t>::max() - (int64_t{1} << 40) + 1);
  EXPECT_FALSE(ParseByteSize("8388608T").ok());  // 2^63
  EXPECT_FALSE(ParseByteSize("1e30").ok());
  EXPECT_FALSE(ParseByteSize("9223372036854775808").ok());
}

TEST(HumanBytesTest, Short) {
  EXPECT_EQ(HumanBytes(0), "0 B");
  EXPECT_EQ(HumanBytes(-5), "-5 B");
  EXPECT_EQ(HumanBytes(1023), "1023 B");
  EXPECT_EQ(HumanBytes(1536), "1.5 KiB");
  EXPECT_EQ(HumanBytes(int64_t{24} << 20), "24.0 MiB");
  EXPECT_EQ(HumanBytes(int64_t{3} << 40), "3.0 TiB");
  EXPECT_EQ(HumanBytes(std::numeric_limits<int64_t>::max()), "8.0 EiB");
}

TEST(HumanBytesTest, Report) {
  EXPECT_EQ(HumanBytes(1023, ByteFormat::kReport), "1023 B");
  EXPECT_EQ(HumanBytes(1536, ByteFormat::kReport), "1.5 KiB");
  EXPECT_EQ(HumanBytes(int64_t{24} << 20, ByteFormat::kReport), "24.00 MiB");
  EXPECT_EQ(HumanBytes(int64_t{3} << 30, ByteFormat::kReport), "3.00 GiB");
  // GiB is the report's largest unit.
  EXPECT_EQ(HumanBytes(int64_t{2} << 40, ByteFormat::kReport), "2048.00 GiB");
}

TEST(HumanBytesTest, ExactAndHuman) {
  EXPECT_EQ(ExactAndHumanBytes(512), "512 B");
  EXPECT_EQ(ExactAndHumanBytes(25165824), "25165824 B (24.0 MiB)");
}

}  // namespace
}  // namespace hloverlap
