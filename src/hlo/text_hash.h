// One hash for names and other short texts read from HLO, shared by the
// parser's name tables and the verifier's name set: every byte, eight at a
// time (std::hash's byte loop cost a tenth of the verifier's time).
#ifndef HLOVERLAP_HLO_TEXT_HASH_H_
#define HLOVERLAP_HLO_TEXT_HASH_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace hloverlap {

inline size_t HashText(std::string_view s) {
  const char* p = s.data();
  const size_t len = s.size();
  uint64_t h = 0x9e3779b97f4a7c15ull ^ (len * 0xff51afd7ed558ccdull);
  uint64_t v;
  if (len >= 8) {
    size_t n = len;
    while (n > 8) {
      std::memcpy(&v, p, 8);
      h = (h ^ v) * 0xbf58476d1ce4e5b9ull;
      h ^= h >> 29;
      p += 8;
      n -= 8;
    }
    std::memcpy(&v, s.data() + len - 8, 8);  // last 8 bytes (overlap)
  } else if (len >= 4) {
    uint32_t a, b;
    std::memcpy(&a, p, 4);
    std::memcpy(&b, p + len - 4, 4);
    v = a | (static_cast<uint64_t>(b) << 32);
  } else if (len > 0) {
    v = static_cast<uint8_t>(p[0]) |
        (static_cast<uint64_t>(static_cast<uint8_t>(p[len / 2])) << 8) |
        (static_cast<uint64_t>(static_cast<uint8_t>(p[len - 1])) << 16);
  } else {
    v = 0;
  }
  h = (h ^ v) * 0xbf58476d1ce4e5b9ull;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return static_cast<size_t>(h);
}

}  // namespace hloverlap

#endif  // HLOVERLAP_HLO_TEXT_HASH_H_
