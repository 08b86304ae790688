// Literal text formatting: AppendLiteral and AppendFloatLiteral (literal.h).
//
// Values print as XLA's one-line literal printer does (hlo_text_format.md
// §7): rank 1 `{1, 2, 3}`, rank >= 2 `{ { 1, 2 }, { 3, 4 } }` with
// `/*iN=M*/` markers for rank > 3, pred arrays as 1/0 and pred scalars as
// true/false, tuples `( a, b )`, elided values `{...}`.
//
// Floating-point numbers follow XLA's RoundTripFpToString: f32 "%.6g" unless
// that does not read back to the same value, then "%.9g"; f64 "%.15g" /
// "%.17g"; 16-bit and narrower floats "%.<max_digits10>g" of the value widened
// to double. inf/-inf/nan/-nan, and `nan(0x..)` for a NaN whose payload is
// not the default quiet NaN (types with NaN payloads only).
//
// Formatting works on the raw element bits, so NaN payloads and -0 survive.
// std::to_chars/from_chars keep it fast and locale independent.

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>

#include "hlo/literal.h"
#include "hlo/shape.h"
#include "hlo/small_float.h"

namespace hloverlap {
namespace {

// The decimal (or `base`) digits of an integer.
template <typename T>
void AppendInteger(T v, std::string& out, int base = 10) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), v, base);
  out.append(buf, r.ptr - buf);
}

void AppendInt(int64_t v, std::string& out) { AppendInteger(v, out); }

// The element of type T stored (unaligned) at `p`.
template <typename T>
T Load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// "%.{precision}g" of a finite value.
template <typename T>
void AppendG(T v, int precision, std::string& out) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::general,
                         precision);
  out.append(buf, r.ptr - buf);
}

// Appends "nan"/"-nan" plus "(0x<payload>)" when payload differs from the
// default quiet NaN payload.
void AppendNan(bool negative, uint64_t payload, uint64_t quiet_payload,
               std::string& out) {
  out.append(negative ? "-nan" : "nan");
  if (payload != quiet_payload) {
    out.append("(0x");
    AppendInteger(payload, out, 16);
    out.push_back(')');
  }
}

// A NaN held in a double (its 52 mantissa bits `dmant`), printed as a type
// with `mantissa_bits` keeps it: the payload's top bits.
void AppendNarrowedNan(bool negative, uint64_t dmant, int mantissa_bits,
                       std::string& out) {
  AppendNan(negative, dmant >> (52 - mantissa_bits),
            uint64_t{1} << (mantissa_bits - 1), out);
}

// The bit pattern type of f32 (uint32_t) and f64 (uint64_t).
template <typename Float>
using IeeeBits = std::conditional_t<sizeof(Float) == 4, uint32_t, uint64_t>;

// f32 or f64 given its bits: RoundTripFpToString's short precision (6 or 15
// digits) unless that does not read back, then the long one (9 or 17).
template <typename Float>
void AppendIeeeBits(IeeeBits<Float> bits, std::string& out) {
  using Bits = IeeeBits<Float>;
  using Limits = std::numeric_limits<Float>;
  constexpr int kMantissaBits = Limits::digits - 1;
  Float v;
  std::memcpy(&v, &bits, sizeof(v));
  const bool neg = (bits >> (sizeof(Bits) * 8 - 1)) != 0;
  if (std::isnan(v)) {
    AppendNan(neg, bits & ((Bits{1} << kMantissaBits) - 1),
              Bits{1} << (kMantissaBits - 1), out);
    return;
  }
  if (std::isinf(v)) {
    out.append(neg ? "-inf" : "inf");
    return;
  }
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::general,
                         Limits::digits10);
  Float back = 0;
  auto p = std::from_chars(buf, r.ptr, back);
  if (p.ec != std::errc() || back != v) {
    r = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::general,
                      Limits::max_digits10);
  }
  out.append(buf, r.ptr - buf);
}

// c64 or c128 at `p`: `(re, im)`.
template <typename Float>
void AppendComplex(const uint8_t* p, std::string& out) {
  using Bits = IeeeBits<Float>;
  out.push_back('(');
  AppendIeeeBits<Float>(Load<Bits>(p), out);
  out.append(", ");
  AppendIeeeBits<Float>(Load<Bits>(p + sizeof(Bits)), out);
  out.push_back(')');
}

// Prints a narrow float given its bit pattern (low bits of `bits`).
void AppendSmallFloatBits(const SmallFloatFormat& f, uint32_t bits,
                          std::string& out) {
  const int eb = f.exponent_bits;
  const int mb = f.mantissa_bits;
  const uint32_t mant_mask = (1u << mb) - 1;
  const uint32_t exp_max = (1u << eb) - 1;
  const double value = DecodeSmallFloat(f, bits);
  if (f.kind == SmallFloatKind::kE8M0 || !std::isnan(value)) {
    if (std::isinf(value)) {
      out.append(value < 0 ? "-inf" : "inf");
    } else if (std::isnan(value)) {
      out.append("nan");
    } else {
      AppendG(value, f.max_digits10, out);
    }
    return;
  }
  // NaNs: the sign, and for IEEE-like formats the payload.
  const bool neg = ((bits >> (eb + mb)) & 1) != 0;
  const uint32_t m = bits & mant_mask;
  if (f.kind == SmallFloatKind::kIeee && ((bits >> mb) & exp_max) == exp_max) {
    AppendNan(neg, m, mb > 0 ? (1u << (mb - 1)) : 0, out);
  } else {
    out.append(neg ? "-nan" : "nan");
  }
}

int64_t SignExtend(uint64_t v, int bits) {
  if (bits >= 64) return static_cast<int64_t>(v);
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  v &= mask;
  const uint64_t sign = uint64_t{1} << (bits - 1);
  return static_cast<int64_t>((v ^ sign) - sign);
}

// Appends element `i` of an array literal with element type `type`. `p`
// points at the element's storage.
void AppendElement(PrimitiveType type, const uint8_t* p, bool pred_as_word,
                   std::string& out) {
  switch (type) {
    case PrimitiveType::kPred:
      if (pred_as_word) {
        out.append(*p ? "true" : "false");
      } else {
        out.push_back(*p ? '1' : '0');
      }
      return;
    case PrimitiveType::kS1:
      AppendInt(SignExtend(*p, 1), out);
      return;
    case PrimitiveType::kS2:
      AppendInt(SignExtend(*p, 2), out);
      return;
    case PrimitiveType::kS4:
      AppendInt(SignExtend(*p, 4), out);
      return;
    case PrimitiveType::kS8:
      AppendInt(static_cast<int8_t>(*p), out);
      return;
    case PrimitiveType::kS16:
      AppendInt(Load<int16_t>(p), out);
      return;
    case PrimitiveType::kS32:
      AppendInt(Load<int32_t>(p), out);
      return;
    case PrimitiveType::kS64:
      AppendInt(Load<int64_t>(p), out);
      return;
    case PrimitiveType::kU1:
      AppendInteger(*p & 0x1, out);
      return;
    case PrimitiveType::kU2:
      AppendInteger(*p & 0x3, out);
      return;
    case PrimitiveType::kU4:
      AppendInteger(*p & 0xf, out);
      return;
    case PrimitiveType::kU8:
      AppendInteger(*p, out);
      return;
    case PrimitiveType::kU16:
      AppendInteger(Load<uint16_t>(p), out);
      return;
    case PrimitiveType::kU32:
      AppendInteger(Load<uint32_t>(p), out);
      return;
    case PrimitiveType::kU64:
      AppendInteger(Load<uint64_t>(p), out);
      return;
    case PrimitiveType::kF32:
      AppendIeeeBits<float>(Load<uint32_t>(p), out);
      return;
    case PrimitiveType::kF64:
      AppendIeeeBits<double>(Load<uint64_t>(p), out);
      return;
    case PrimitiveType::kC64:
      AppendComplex<float>(p, out);
      return;
    case PrimitiveType::kC128:
      AppendComplex<double>(p, out);
      return;
    default: {
      if (std::optional<SmallFloatFormat> f = SmallFloatFormatOf(type)) {
        const uint32_t bits =
            PrimitiveTypeByteSize(type) >= 2 ? Load<uint16_t>(p) : *p;
        AppendSmallFloatBits(*f, bits, out);
        return;
      }
      out.push_back('0');
      return;
    }
  }
}

struct ArrayPrinter {
  PrimitiveType type;
  const uint8_t* data;
  int64_t elem_size;
  const absl::InlinedVector<int64_t, 6>* dims;
  int64_t rank;
  absl::InlinedVector<int64_t, 6> index;
  int64_t linear = 0;
  std::string* out;

  // One level of XLA's one-line DenseArrayPrintHelper; `level` is the
  // number of indices fixed so far.
  void Print(int64_t level) {
    std::string& o = *out;
    const int64_t n = (*dims)[level];
    const bool innermost = level == rank - 1;
    // Opening brace.
    o.push_back('{');
    if (rank > 1) {
      if (innermost) {
        if (n > 1) o.push_back(' ');
      } else if (rank > 3 && level > 0) {
        o.append(" /*i");
        AppendInt(level - 1, o);
        o.push_back('=');
        AppendInt(index[level - 1], o);
        o.append("*/");
        if (n > 0) o.push_back(' ');
      } else {
        o.push_back(' ');
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      index[level] = i;
      if (innermost) {
        AppendElement(type, data + linear * elem_size, false, o);
        ++linear;
      } else {
        Print(level + 1);
      }
      if (i + 1 < n) o.append(", ");
    }
    // Closing brace.
    if (rank > 1) {
      if (innermost) {
        if (n > 1) o.push_back(' ');
      } else {
        o.push_back(' ');
      }
    }
    o.push_back('}');
  }
};

}  // namespace

void AppendFloatLiteral(PrimitiveType type, double value, std::string& out) {
  uint64_t dbits;
  std::memcpy(&dbits, &value, sizeof(dbits));
  const bool neg = (dbits >> 63) != 0;
  const uint64_t dmant = dbits & 0xfffffffffffffull;
  switch (type) {
    case PrimitiveType::kF64:
    case PrimitiveType::kC128:
      AppendIeeeBits<double>(dbits, out);
      return;
    case PrimitiveType::kF32:
    case PrimitiveType::kC64: {
      if (std::isnan(value)) {
        AppendNarrowedNan(neg, dmant, std::numeric_limits<float>::digits - 1,
                          out);
        return;
      }
      const float f = static_cast<float>(value);
      AppendIeeeBits<float>(std::bit_cast<uint32_t>(f), out);
      return;
    }
    default:
      break;
  }
  const std::optional<SmallFloatFormat> format = SmallFloatFormatOf(type);
  if (!format.has_value()) {
    // Not a float type: print the value as a double would.
    AppendIeeeBits<double>(dbits, out);
    return;
  }
  if (std::isnan(value)) {
    if (format->kind == SmallFloatKind::kIeee) {
      AppendNarrowedNan(neg, dmant, format->mantissa_bits, out);
    } else {
      out.append(neg ? "-nan" : "nan");
    }
    return;
  }
  if (std::isinf(value)) {
    out.append(neg ? "-inf" : "inf");
    return;
  }
  AppendG(value, format->max_digits10, out);
}

void AppendLiteral(const Literal& literal, std::string& out) {
  const Shape& shape = literal.shape();
  if (literal.elided()) {
    out.append("{...}");
    return;
  }
  if (shape.IsTuple()) {
    const auto& elements = literal.elements();
    out.append("( ");
    for (size_t i = 0; i < elements.size(); ++i) {
      if (i > 0) out.append(", ");
      AppendLiteral(elements[i], out);
    }
    out.append(" )");
    return;
  }
  if (shape.IsToken()) {
    out.append("token");
    return;
  }
  if (!shape.IsArray()) {
    out.append("{...}");
    return;
  }
  const PrimitiveType type = shape.element_type();
  const int64_t elem_size = PrimitiveTypeByteSize(type);
  const int64_t count = shape.ElementCount();
  const auto& data = literal.data();
  // Guard against inconsistent storage: never read past the buffer.
  if (elem_size <= 0 || count < 0 ||
      (count > 0 && static_cast<uint64_t>(count) >
                        data.size() / static_cast<uint64_t>(elem_size))) {
    out.append("{...}");
    return;
  }
  if (shape.rank() == 0) {
    AppendElement(type, data.data(), /*pred_as_word=*/true, out);
    return;
  }
  ArrayPrinter printer;
  printer.type = type;
  printer.data = data.data();
  printer.elem_size = elem_size;
  printer.dims = &shape.dimensions();
  printer.rank = shape.rank();
  printer.index.resize(printer.rank);
  printer.out = &out;
  printer.Print(0);
}

}  // namespace hloverlap
