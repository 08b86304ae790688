// Literal values: the payload of `constant(...)` and interpreter buffers.
//
// Array data is stored densely in row-major (logical) order, one element per
// PrimitiveTypeByteSize(type) bytes, in host byte order: bf16/f16 as their raw
// 16-bit patterns, pred as one byte 0/1, sub-byte ints (s4, u4, ...) as one
// byte each. Layouts do not affect storage.
//
// Dumps elide large constants as `constant({...})`; such a literal has
// elided() == true, carries its shape and no data. Printing it gives `{...}`
// again.
#ifndef HLOVERLAP_HLO_LITERAL_H_
#define HLOVERLAP_HLO_LITERAL_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "hlo/shape.h"

namespace hloverlap {

class Literal {
 public:
  Literal() = default;
  // Zero-filled literal of the given shape (tuples: zero-filled leaves).
  explicit Literal(const Shape& shape);
  static Literal Elided(const Shape& shape);

  const Shape& shape() const { return shape_; }
  bool elided() const { return elided_; }

  // Raw element storage (empty for tuples and elided literals).
  const std::vector<uint8_t>& data() const { return data_; }
  std::vector<uint8_t>& mutable_data() { return data_; }
  // Tuple elements.
  const std::vector<Literal>& elements() const { return elements_; }
  std::vector<Literal>& mutable_elements() { return elements_; }

  int64_t element_count() const { return shape_.ElementCount(); }

  // Typed access to element i (linear row-major index). T must match the
  // storage width of the element type (e.g. uint16_t for bf16).
  template <typename T>
  T Get(int64_t i) const {
    T v;
    std::memcpy(&v, data_.data() + i * sizeof(T), sizeof(T));
    return v;
  }
  template <typename T>
  void Set(int64_t i, T v) {
    std::memcpy(data_.data() + i * sizeof(T), &v, sizeof(T));
  }

  // Element i converted to double (integers, floats incl. bf16/f16/f8, pred).
  double GetAsDouble(int64_t i) const;
  // Element i of an integral/pred type as int64 (unsigned 64 bit wraps).
  int64_t GetAsInt64(int64_t i) const;

  // Bitwise equality of shape (ignoring layout) and data.
  bool BitwiseEqual(const Literal& other) const;

 private:
  Shape shape_;
  bool elided_ = false;
  std::vector<uint8_t> data_;
  std::vector<Literal> elements_;
};

// Bit-level conversions for 16-bit floats (round to nearest even).
float BF16ToFloat(uint16_t bits);
uint16_t FloatToBF16(float value);
float F16ToFloat(uint16_t bits);
uint16_t FloatToF16(float value);

// Formats one floating-point value the way XLA prints literals: shortest of
// %.6g/%.9g (f32), %.15g/%.17g (f64), max_digits10 for 16-bit types; inf,
// -inf, nan, -nan, nan(0x..) for non-default NaN payloads.
void AppendFloatLiteral(PrimitiveType type, double value, std::string& out);

// Appends the literal text as it appears inside `constant(...)`: "1.5",
// "{1, 2, 3}", "{ { 1, 2 }, { 3, 4 } }", "{...}" when elided, "(1, 2)" for
// tuples.
void AppendLiteral(const Literal& literal, std::string& out);

}  // namespace hloverlap

#endif  // HLOVERLAP_HLO_LITERAL_H_
