// Test helpers for the interpreter's unit tests (header only; not part of
// the library): build values from literals in a line, parse and run HLO
// text on N devices, read results back.
#ifndef HLOVERLAP_INTERP_TESTING_H_
#define HLOVERLAP_INTERP_TESTING_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "hlo/parser.h"
#include "interp/evaluator.h"
#include "interp/value.h"

namespace hloverlap::interp::testing {

template <typename T>
Value V(PrimitiveType type, Dims dims, const std::vector<T>& data) {
  absl::StatusOr<Value> v = Value::FromVector(type, std::move(dims), data);
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *std::move(v) : Value();
}
inline Value F32(Dims dims, const std::vector<float>& data) {
  return V<float>(PrimitiveType::kF32, std::move(dims), data);
}
inline Value S32(Dims dims, const std::vector<int32_t>& data) {
  return V<int32_t>(PrimitiveType::kS32, std::move(dims), data);
}
inline Value Bf16(Dims dims, const std::vector<float>& data) {
  std::vector<bf16_t> b;
  for (float f : data) b.push_back(bf16_t{F32ToBf16(f)});
  return V<bf16_t>(PrimitiveType::kBF16, std::move(dims), b);
}

// Elements as doubles / ints (any array type).
inline std::vector<double> Doubles(const Value& v) {
  std::vector<double> out;
  for (int64_t i = 0; i < v.element_count(); ++i) out.push_back(v.GetDouble(i));
  return out;
}
inline std::vector<int64_t> Ints(const Value& v) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < v.element_count(); ++i) out.push_back(v.GetInt(i));
  return out;
}
template <typename T>
std::vector<T> Raw(const Value& v) {
  return std::vector<T>(v.data<T>(), v.data<T>() + v.element_count());
}

inline std::unique_ptr<Module> Parse(std::string_view text) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : nullptr;
}

// Parses `text` and runs it; `args` is one vector per device or a single
// vector for all devices.
inline absl::StatusOr<std::vector<Value>> RunText(
    std::string_view text, const std::vector<std::vector<Value>>& args,
    InterpreterOptions options = {}) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseHloModule(text);
  if (!m.ok()) return m.status();
  return RunModule(**m, args, options);
}

// Runs on one device and returns its result.
inline Value Run1(std::string_view text, const std::vector<Value>& args) {
  absl::StatusOr<std::vector<Value>> r = RunText(text, {args});
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok() || r->empty()) return Value();
  return (*r)[0];
}

}  // namespace hloverlap::interp::testing

#endif  // HLOVERLAP_INTERP_TESTING_H_
