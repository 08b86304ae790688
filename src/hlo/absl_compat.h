// Debian's abseil (20220623) is built with its own absl::string_view, which
// is not std::string_view, and its own absl::optional. Our interfaces use
// std::string_view; convert at the boundary with AsAbsl().
#ifndef HLOVERLAP_HLO_ABSL_COMPAT_H_
#define HLOVERLAP_HLO_ABSL_COMPAT_H_

#include <string_view>

#include "absl/strings/string_view.h"

namespace hloverlap {

inline absl::string_view AsAbsl(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}
inline std::string_view AsStd(absl::string_view s) {
  return std::string_view(s.data(), s.size());
}

}  // namespace hloverlap

#endif  // HLOVERLAP_HLO_ABSL_COMPAT_H_
