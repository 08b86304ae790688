// Byte sizes as text, both ways: as command-line flags spell them, with one
// unit convention for every flag that takes bytes (opt --memory-budget and
// --scheduler-memory-limit, explain --memory-budget, run/verify
// --memory-limit):
//
//   4096      4096 bytes            0.5KB   512 bytes
//   64K       65536                 1.5GiB  1610612736
//   512MB     536870912             2T      2199023255552
//
// Every unit is a power of 1024 whatever its spelling (K, KB and KiB all
// mean 1024; M/MB/MiB 2^20; G/GB/GiB 2^30; T/TB/TiB 2^40; B alone is bytes;
// letters in any case), as memory sizes are counted on a GPU. The number may
// have a fraction or an exponent (1e6); the result is rounded down to whole
// bytes and must lie in [0, 2^63).
//
// And as hloverlap prints them for people, in the largest binary unit they
// reach (HumanBytes):
//
//   1023      "1023 B"             1536      "1.5 KiB"
//   25165824  "24.0 MiB"           kReport:  "24.00 MiB" (the sim report)
#ifndef HLOVERLAP_SUPPORT_BYTE_SIZE_H_
#define HLOVERLAP_SUPPORT_BYTE_SIZE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace hloverlap {

// The convention above in one line, for --help texts and error messages.
inline constexpr std::string_view kByteSizeUnits =
    "K/KB/KiB = 1024, M/MB/MiB = 1024^2, G/GB/GiB = 1024^3, T = 1024^4; "
    "0.5KB = 512";

// Bytes `text` spells, or InvalidArgument "invalid size 'TEXT' (...)".
absl::StatusOr<int64_t> ParseByteSize(std::string_view text);

enum class ByteFormat {
  // One decimal above bytes; B, KiB, MiB, GiB, TiB, PiB, EiB.
  kShort,
  // `sim`'s report: one decimal for KiB, two for MiB and GiB; GiB the
  // largest unit ("2048.00 GiB").
  kReport,
};

// `bytes` for people to read (see the table above); "-5 B" below 1024.
std::string HumanBytes(int64_t bytes, ByteFormat format = ByteFormat::kShort);

// "512 B" below 1024, else exact then readable: "25165824 B (24.0 MiB)"
// (remark arguments, explain's text).
std::string ExactAndHumanBytes(int64_t bytes);

}  // namespace hloverlap

#endif  // HLOVERLAP_SUPPORT_BYTE_SIZE_H_
