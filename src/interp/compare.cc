#include "interp/compare.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace hloverlap::interp {
namespace {

// Sign-magnitude bits -> ordered integer (+0 and -0 both 0).
int64_t OrderedKey(uint64_t bits, int width) {
  const uint64_t sign = uint64_t{1} << (width - 1);
  const int64_t mag = static_cast<int64_t>(bits & (sign - 1));
  return (bits & sign) ? -mag : mag;
}

uint64_t ElementBits(const Value& v, int64_t i) {
  uint64_t bits = 0;
  std::memcpy(&bits, v.raw() + i * v.element_size(), v.element_size());
  return bits;
}

bool IsNaNBits(PrimitiveType t, uint64_t bits) {
  switch (t) {
    case PrimitiveType::kF16:
      return (bits & 0x7fff) > 0x7c00;
    case PrimitiveType::kBF16:
      return (bits & 0x7fff) > 0x7f80;
    case PrimitiveType::kF32:
      return (bits & 0x7fffffffu) > 0x7f800000u;
    case PrimitiveType::kF64:
      return (bits & 0x7fffffffffffffffull) > 0x7ff0000000000000ull;
    default:
      return false;
  }
}

std::string MultiIndex(const Dims& dims, int64_t linear) {
  if (dims.empty()) return "[]";
  Dims idx(dims.size());
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    idx[d] = dims[d] > 0 ? linear % dims[d] : 0;
    linear = dims[d] > 0 ? linear / dims[d] : 0;
  }
  std::string s = "[";
  for (size_t i = 0; i < idx.size(); ++i) {
    if (i) s += ",";
    absl::StrAppend(&s, idx[i]);
  }
  return s + "]";
}

std::string Describe(const Value& a, const Value& b, int64_t i,
                     const std::string& path) {
  std::string va, vb;
  AppendElement(a, i, va);
  AppendElement(b, i, vb);
  const int hex = static_cast<int>(a.element_size() * 2);
  return absl::StrCat(
      path.empty() ? "" : absl::StrCat("output ", path, " "), "(",
      a.ShapeString(), ") index ", i, " ", MultiIndex(a.dims(), i), ": ", va,
      " (bits 0x", absl::StrFormat("%0*x", hex, ElementBits(a, i)), ") vs ", vb,
      " (bits 0x", absl::StrFormat("%0*x", hex, ElementBits(b, i)), ")");
}

void CompareInto(const Value& a, const Value& b, const Tolerance& tol,
                 const std::string& path, ValueComparison& out) {
  auto mismatch = [&](std::string what) {
    out.bit_identical = false;
    out.within_tolerance = false;
    ++out.differing_elements;
    if (!out.first_difference) out.first_difference = what;
    if (!out.first_violation) out.first_violation = what;
  };
  if (a.is_tuple() || b.is_tuple()) {
    if (!a.is_tuple() || !b.is_tuple() || a.tuple_size() != b.tuple_size()) {
      mismatch(absl::StrCat("output ", path.empty() ? "{}" : path,
                            ": shapes differ: ", a.ShapeString(), " vs ",
                            b.ShapeString()));
      return;
    }
    for (int64_t i = 0; i < a.tuple_size(); ++i) {
      std::string sub =
          path.empty()
              ? absl::StrCat("{", i, "}")
              : absl::StrCat(path.substr(0, path.size() - 1), ",", i, "}");
      CompareInto(a.element(i), b.element(i), tol, sub, out);
    }
    return;
  }
  if (a.is_token() || b.is_token()) {
    if (a.is_token() != b.is_token()) mismatch("token vs non-token");
    return;
  }
  if (!a.is_array() || !b.is_array() || a.type() != b.type() ||
      a.dims() != b.dims()) {
    mismatch(absl::StrCat("output ", path.empty() ? "{}" : path,
                          ": shapes differ: ", a.ShapeString(), " vs ",
                          b.ShapeString()));
    return;
  }
  const int64_t n = a.element_count();
  const int64_t es = a.element_size();
  if (n == 0 || std::memcmp(a.raw(), b.raw(), n * es) == 0) return;
  const bool is_float = IsFloatingPointType(a.type());
  const int width = static_cast<int>(es * 8);
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t x = ElementBits(a, i), y = ElementBits(b, i);
    if (x == y) continue;
    out.bit_identical = false;
    ++out.differing_elements;
    if (!out.first_difference) out.first_difference = Describe(a, b, i, path);
    bool ok = false;
    if (is_float) {
      const bool nx = IsNaNBits(a.type(), x), ny = IsNaNBits(a.type(), y);
      double ulps, rel;
      if (nx && ny) {
        ulps = rel = 0;
      } else if (nx || ny) {
        ulps = rel = std::numeric_limits<double>::infinity();
      } else {
        ulps = std::fabs(static_cast<double>(OrderedKey(x, width)) -
                         static_cast<double>(OrderedKey(y, width)));
        const double da = a.GetDouble(i), db = b.GetDouble(i);
        const double scale = std::max(std::fabs(da), std::fabs(db));
        rel = scale == 0 ? 0 : std::fabs(da - db) / scale;
        if (std::isnan(rel)) rel = std::numeric_limits<double>::infinity();
      }
      out.max_ulps = std::max(out.max_ulps, ulps);
      out.max_relative = std::max(out.max_relative, rel);
      const double diff = std::fabs(a.GetDouble(i) - b.GetDouble(i));
      switch (tol.kind) {
        case Tolerance::Kind::kExact:
          ok = false;
          break;
        case Tolerance::Kind::kUlps:
          ok = ulps <= tol.value;
          break;
        case Tolerance::Kind::kRelative:
          ok = rel <= tol.value;
          break;
      }
      ok |= tol.kind != Tolerance::Kind::kExact && diff <= tol.absolute;
    }
    if (!ok) {
      out.within_tolerance = false;
      if (!out.first_violation) out.first_violation = Describe(a, b, i, path);
    }
  }
}

}  // namespace

std::string Tolerance::ToString() const {
  const std::string floor =
      absolute > 0 ? absl::StrCat(",absolute:", absolute) : "";
  switch (kind) {
    case Kind::kExact:
      return "exact";
    case Kind::kUlps:
      return absl::StrCat("ulps:", value, floor);
    case Kind::kRelative:
      return absl::StrCat("relative:", value, floor);
  }
  return "?";
}

absl::StatusOr<Tolerance> ParseTolerance(std::string_view text) {
  Tolerance t;
  if (text.empty() || text == "exact") return t;
  if (size_t comma = text.find(','); comma != std::string_view::npos) {
    std::string_view floor = text.substr(comma + 1);
    double v = 0;
    const size_t sep = floor.find_first_of(":=");
    if (sep == std::string_view::npos ||
        (floor.substr(0, sep) != "absolute" && floor.substr(0, sep) != "abs") ||
        !absl::SimpleAtod(std::string(floor.substr(sep + 1)), &v) || v < 0 ||
        std::isnan(v)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--tolerance: expected ...,absolute:Y after the comma, got '",
          std::string(text), "'"));
    }
    absl::StatusOr<Tolerance> main = ParseTolerance(text.substr(0, comma));
    if (!main.ok()) return main;
    if (main->kind == Tolerance::Kind::kExact) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--tolerance: absolute:Y needs ulps:N or relative:X before it, got '",
          std::string(text), "'"));
    }
    main->absolute = v;
    return main;
  }
  size_t sep = text.find_first_of(":=");
  std::string kind(text.substr(0, sep));
  double v = 0;
  if (sep == std::string_view::npos ||
      !absl::SimpleAtod(std::string(text.substr(sep + 1)), &v) || v < 0 ||
      std::isnan(v)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--tolerance: expected exact, ulps:N or relative:X, got '",
                     std::string(text), "'"));
  }
  if (kind == "ulps" || kind == "ulp") {
    t.kind = Tolerance::Kind::kUlps;
  } else if (kind == "relative" || kind == "rel") {
    t.kind = Tolerance::Kind::kRelative;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "--tolerance: unknown kind '", kind, "' (use ulps:N or relative:X)"));
  }
  t.value = v;
  return t;
}

ValueComparison CompareValues(const Value& a, const Value& b,
                              const Tolerance& tolerance,
                              const std::string& path) {
  ValueComparison out;
  CompareInto(a, b, tolerance, path, out);
  if (tolerance.kind == Tolerance::Kind::kExact) {
    out.within_tolerance = out.bit_identical;
  }
  return out;
}

double UlpDistance(PrimitiveType type, double a, double b) {
  if (std::isnan(a) && std::isnan(b)) return 0;
  if (std::isnan(a) || std::isnan(b)) {
    return std::numeric_limits<double>::infinity();
  }
  auto bits = [&](double d) -> uint64_t {
    switch (type) {
      case PrimitiveType::kBF16:
        return F32ToBf16(static_cast<float>(d));
      case PrimitiveType::kF16:
        return F64ToF16(d);
      case PrimitiveType::kF32: {
        float f = static_cast<float>(d);
        uint32_t u;
        std::memcpy(&u, &f, 4);
        return u;
      }
      default: {
        uint64_t u;
        std::memcpy(&u, &d, 8);
        return u;
      }
    }
  };
  const int width = static_cast<int>(PrimitiveTypeByteSize(type) * 8);
  return std::fabs(static_cast<double>(OrderedKey(bits(a), width)) -
                   static_cast<double>(OrderedKey(bits(b), width)));
}

}  // namespace hloverlap::interp
