// Comparing interpreter results: bit identity, or a stated tolerance.
//
// Two values agree bit for bit when their shapes match and every array leaf
// has identical bytes. With a tolerance, floating-point elements may differ
// by at most N units in the last place (`ulps:N`, distance in the ordered
// bit patterns of the element type, so 1 ulp of bf16 is 2^-7 relative) or
// by a relative error |a-b| <= X * max(|a|,|b|) (`relative:X`); either may
// add an absolute floor, `relative:X,absolute:Y`, under which any difference
// |a-b| <= Y passes too (values near zero, where a relative error means
// nothing: w - lr*g that cancels). NaN matches NaN, +0 matches -0 only
// within a tolerance, integers and pred must be equal, shapes must match.
#ifndef HLOVERLAP_INTERP_COMPARE_H_
#define HLOVERLAP_INTERP_COMPARE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "interp/value.h"

namespace hloverlap::interp {

struct Tolerance {
  enum class Kind { kExact, kUlps, kRelative };
  Kind kind = Kind::kExact;
  double value = 0;
  double absolute = 0;  // differences up to this pass too (0: none)
  // "exact", "ulps:2", "relative:0.001", "relative:0.01,absolute:1e-06"
  std::string ToString() const;
};
// Parses "exact", "ulps:N", "relative:X" (also "ulps=N", "relative=X"),
// optionally followed by ",absolute:Y".
absl::StatusOr<Tolerance> ParseTolerance(std::string_view text);

struct ValueComparison {
  bool bit_identical = true;
  bool within_tolerance = true;    // == bit_identical for kExact
  int64_t differing_elements = 0;  // elements whose bits differ
  double max_ulps = 0;             // over differing float elements
  double max_relative = 0;
  // First element whose bits differ (or shape mismatch), described:
  std::optional<std::string> first_difference;
  // First element outside the tolerance (if any).
  std::optional<std::string> first_violation;
};

// `path` names the value in messages ("{1}" for output 1).
ValueComparison CompareValues(const Value& a, const Value& b,
                              const Tolerance& tolerance,
                              const std::string& path = "");

// Distance in units in the last place between two floats of `type` (0 for
// equal bits or both NaN; infinity when exactly one is NaN).
double UlpDistance(PrimitiveType type, double a, double b);

}  // namespace hloverlap::interp

#endif  // HLOVERLAP_INTERP_COMPARE_H_
