// Helpers of the simulator's unit tests: parse a module, simulate it, with
// a test failure (not a crash) on an error.
#ifndef HLOVERLAP_SIM_TEST_UTIL_H_
#define HLOVERLAP_SIM_TEST_UTIL_H_

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "hlo/parser.h"
#include "sim/simulator.h"

namespace hloverlap {

inline std::unique_ptr<Module> Parse(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : nullptr;
}

inline SimResult SimulateOrFail(const Module& m, const SimOptions& o) {
  absl::StatusOr<SimResult> r = Simulate(m, o);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *std::move(r) : SimResult();
}

}  // namespace hloverlap

#endif  // HLOVERLAP_SIM_TEST_UTIL_H_
