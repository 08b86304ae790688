// The reference interpreter's error for what it cannot evaluate (a module,
// value or option outside what the kernels accept): InvalidArgument with the
// message as given, e.g.
//
//   return Invalid(absl::StrCat("dot: contracting dimension ", d,
//                               " is out of range"));
#ifndef HLOVERLAP_INTERP_ERRORS_H_
#define HLOVERLAP_INTERP_ERRORS_H_

#include <string>
#include <utility>

#include "absl/status/status.h"

namespace hloverlap::interp {

inline absl::Status Invalid(std::string msg) {
  return absl::InvalidArgumentError(std::move(msg));
}

}  // namespace hloverlap::interp

#endif  // HLOVERLAP_INTERP_ERRORS_H_
