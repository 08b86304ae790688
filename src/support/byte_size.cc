#include "support/byte_size.h"

#include <charconv>
#include <cmath>
#include <string>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace hloverlap {
namespace {

// 1024^k for the unit `suffix` (any case), or -1.
int UnitPower(std::string_view suffix) {
  const std::string s =
      absl::AsciiStrToLower(absl::string_view(suffix.data(), suffix.size()));
  if (s.empty() || s == "b") return 0;
  static constexpr std::string_view kUnits = "kmgt";
  for (int k = 0; k < static_cast<int>(kUnits.size()); ++k) {
    const std::string u(1, kUnits[k]);
    if (s == u || s == u + "b" || s == u + "ib") return k + 1;
  }
  return -1;
}

absl::Status Invalid(std::string_view text, std::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(
      "invalid size '", absl::string_view(text.data(), text.size()), "'",
      absl::string_view(why.data(), why.size()), " (examples: 4096, 512M, ",
      "1.5GiB; ",
      absl::string_view(kByteSizeUnits.data(), kByteSizeUnits.size()), ")"));
}

}  // namespace

absl::StatusOr<int64_t> ParseByteSize(std::string_view text) {
  // The unit is the trailing run of letters; the number is the rest.
  size_t unit_begin = text.size();
  while (unit_begin > 0 && absl::ascii_isalpha(static_cast<unsigned char>(
                               text[unit_begin - 1]))) {
    --unit_begin;
  }
  const std::string_view number = text.substr(0, unit_begin);
  const int power = UnitPower(text.substr(unit_begin));
  if (power < 0) return Invalid(text, ": unknown unit");
  double value = 0;
  const char* end = number.data() + number.size();
  auto [ptr, ec] = std::from_chars(number.data(), end, value);
  if (number.empty() || ec != std::errc() || ptr != end ||
      !std::isfinite(value) || value < 0) {
    return Invalid(text, "");
  }
  const double bytes = std::ldexp(value, 10 * power);
  // 2^63 is the first double past the int64_t range.
  if (!(bytes < 9223372036854775808.0)) return Invalid(text, ": too large");
  return static_cast<int64_t>(bytes);
}

std::string HumanBytes(int64_t bytes, ByteFormat format) {
  static constexpr const char* kUnits[] = {"B",   "KiB", "MiB", "GiB",
                                           "TiB", "PiB", "EiB"};
  const bool report = format == ByteFormat::kReport;
  const int largest = report ? 3 : 6;
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  // Dividing by 1024 is exact in a double, so the unit reached step by
  // step is the one a single division by 1024^k gives.
  double v = static_cast<double>(bytes);
  int unit = 0;
  while (v >= 1024.0 && unit < largest) {
    v /= 1024.0;
    ++unit;
  }
  const int decimals = report && unit >= 2 ? 2 : 1;
  return absl::StrFormat("%.*f %s", decimals, v, kUnits[unit]);
}

std::string ExactAndHumanBytes(int64_t bytes) {
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  return absl::StrCat(bytes, " B (", HumanBytes(bytes), ")");
}

}  // namespace hloverlap
