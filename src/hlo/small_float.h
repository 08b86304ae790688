// The small floating-point encodings (f16, bf16, the f8, f6 and f4
// variants): one table of formats, and the one decoder and encoder of their
// bit patterns that the parser (literal text to bits), literals (bits to
// values) and the printer (bits to text) share.
//
//   f8e4m3fn: 4 exponent bits, 3 mantissa bits, bias 7, no infinity, NaN
//   only at S.1111.111:
//     0x38 -> 1.0    0x7e -> 448 (the largest)    0x7f -> NaN
//   EncodeSmallFloat(f8e4m3fn, 1.0625) -> 0x38 (ties to even)
#ifndef HLOVERLAP_HLO_SMALL_FLOAT_H_
#define HLOVERLAP_HLO_SMALL_FLOAT_H_

#include <cstdint>
#include <optional>
#include <string>

#include "hlo/shape.h"

namespace hloverlap {

enum class SmallFloatKind : uint8_t {
  kIeee,    // inf and NaNs with payload (f16, bf16, f8e5m2, f8e4m3, f8e3m4)
  kFn,      // no inf; all-ones exponent and mantissa is the NaN (f8e4m3fn)
  kFnuz,    // no inf, no -0; the "negative zero" pattern is the only NaN
  kE8M0,    // unsigned, exponent only; 0xff is NaN (f8e8m0fnu)
  kFinite,  // no inf, no NaN (f6, f4)
};

struct SmallFloatFormat {
  int exponent_bits;
  int mantissa_bits;
  int bias;
  SmallFloatKind kind;
  int max_digits10;  // digits that print every value distinctly
};

// The format of `type`; nullopt for types that are not small floats.
std::optional<SmallFloatFormat> SmallFloatFormatOf(PrimitiveType type);

// The value of the low bits of `bits` (a quiet NaN for NaN patterns).
double DecodeSmallFloat(const SmallFloatFormat& f, uint32_t bits);

// A floating-point literal element as written: a value, or a NaN with its
// sign and explicit payload (mantissa bits; 0 = none).
struct FloatValue {
  double value = 0;
  bool is_nan = false;
  bool negative = false;  // sign of a NaN
  uint64_t payload = 0;
};

// Encodes `v`, rounding to nearest even. Returns false with *error set when
// the value is not representable (out of range, NaN or infinity the format
// lacks, a NaN payload that does not fit).
bool EncodeSmallFloat(const SmallFloatFormat& f, const FloatValue& v,
                      uint32_t* bits, std::string* error);

}  // namespace hloverlap

#endif  // HLOVERLAP_HLO_SMALL_FLOAT_H_
