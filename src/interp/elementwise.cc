// Hot kernels: optimized even in unoptimized (debug) GCC builds.
#if defined(__GNUC__) && !defined(__clang__) && !defined(__OPTIMIZE__)
#pragma GCC optimize("O2")
#endif

#include "interp/elementwise.h"

#include <bit>
#include <cmath>
#include <limits>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "interp/errors.h"

namespace hloverlap::interp {
namespace {

std::string OpName(Opcode op) { return std::string(OpcodeName(op)); }

// --- Scalar semantics
// ---------------------------------------------------------

template <typename C>
using WideUnsigned =
    std::conditional_t<(sizeof(C) < 4), uint32_t, std::make_unsigned_t<C>>;

template <typename C>
inline C FloatMax(C a, C b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  return (a < b) ? b : a;
}
template <typename C>
inline C FloatMin(C a, C b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  return (b < a) ? b : a;
}

template <typename C>
inline C IntPow(C base, C exp) {
  if constexpr (std::is_signed_v<C>) {
    if (exp < 0) {
      if (base == 1) return 1;
      if (base == -1) return (exp & 1) ? C(-1) : C(1);
      return 0;
    }
  }
  using U = WideUnsigned<C>;
  U result = 1, b = static_cast<U>(base);
  auto e = static_cast<std::make_unsigned_t<C>>(exp);
  while (e != 0) {
    if (e & 1) result = static_cast<U>(result * b);
    b = static_cast<U>(b * b);
    e >>= 1;
  }
  return static_cast<C>(result);
}

template <Opcode kOp, typename C>
inline C BinOp(C a, C b) {
  if constexpr (std::is_same_v<C, bool>) {
    if constexpr (kOp == Opcode::kAdd || kOp == Opcode::kOr ||
                  kOp == Opcode::kMaximum) {
      return a || b;
    } else if constexpr (kOp == Opcode::kMultiply || kOp == Opcode::kAnd ||
                         kOp == Opcode::kMinimum) {
      return a && b;
    } else if constexpr (kOp == Opcode::kSubtract || kOp == Opcode::kXor) {
      return a != b;
    } else {
      return a;
    }
  } else if constexpr (std::is_floating_point_v<C>) {
    if constexpr (kOp == Opcode::kAdd) {
      return a + b;
    } else if constexpr (kOp == Opcode::kSubtract) {
      return a - b;
    } else if constexpr (kOp == Opcode::kMultiply) {
      return a * b;
    } else if constexpr (kOp == Opcode::kDivide) {
      return a / b;
    } else if constexpr (kOp == Opcode::kMaximum) {
      return FloatMax(a, b);
    } else if constexpr (kOp == Opcode::kMinimum) {
      return FloatMin(a, b);
    } else if constexpr (kOp == Opcode::kPower) {
      return std::pow(a, b);
    } else if constexpr (kOp == Opcode::kAtan2) {
      return std::atan2(a, b);
    } else if constexpr (kOp == Opcode::kRemainder) {
      return std::fmod(a, b);
    } else {
      return a;
    }
  } else {
    using U = WideUnsigned<C>;
    constexpr int kBits = sizeof(C) * 8;
    if constexpr (kOp == Opcode::kAdd) {
      return static_cast<C>(static_cast<U>(a) + static_cast<U>(b));
    } else if constexpr (kOp == Opcode::kSubtract) {
      return static_cast<C>(static_cast<U>(a) - static_cast<U>(b));
    } else if constexpr (kOp == Opcode::kMultiply) {
      return static_cast<C>(static_cast<U>(a) * static_cast<U>(b));
    } else if constexpr (kOp == Opcode::kDivide) {
      if (b == 0) return static_cast<C>(-1);
      if constexpr (std::is_signed_v<C>) {
        if (a == std::numeric_limits<C>::min() && b == -1) return a;
      }
      return static_cast<C>(a / b);
    } else if constexpr (kOp == Opcode::kRemainder) {
      if (b == 0) return a;
      if constexpr (std::is_signed_v<C>) {
        if (a == std::numeric_limits<C>::min() && b == -1) return 0;
      }
      return static_cast<C>(a % b);
    } else if constexpr (kOp == Opcode::kMaximum) {
      return a < b ? b : a;
    } else if constexpr (kOp == Opcode::kMinimum) {
      return b < a ? b : a;
    } else if constexpr (kOp == Opcode::kAnd) {
      return static_cast<C>(a & b);
    } else if constexpr (kOp == Opcode::kOr) {
      return static_cast<C>(a | b);
    } else if constexpr (kOp == Opcode::kXor) {
      return static_cast<C>(a ^ b);
    } else if constexpr (kOp == Opcode::kShiftLeft) {
      auto s = static_cast<std::make_unsigned_t<C>>(b);
      if (s >= kBits) return 0;
      return static_cast<C>(static_cast<U>(a) << s);
    } else if constexpr (kOp == Opcode::kShiftRightLogical) {
      auto s = static_cast<std::make_unsigned_t<C>>(b);
      if (s >= kBits) return 0;
      using UC = std::make_unsigned_t<C>;
      return static_cast<C>(static_cast<UC>(a) >> s);
    } else if constexpr (kOp == Opcode::kShiftRightArithmetic) {
      auto s = static_cast<std::make_unsigned_t<C>>(b);
      using SC = std::make_signed_t<C>;
      SC sa = static_cast<SC>(a);
      if (s >= kBits) return static_cast<C>(sa < 0 ? SC(-1) : SC(0));
      return static_cast<C>(static_cast<SC>(sa >> s));
    } else if constexpr (kOp == Opcode::kPower) {
      return IntPow(a, b);
    } else {
      return a;
    }
  }
}

template <Opcode kOp, typename C>
inline C UnOp(C x) {
  if constexpr (std::is_same_v<C, bool>) {
    if constexpr (kOp == Opcode::kNot) return !x;
    return x;
  } else if constexpr (std::is_floating_point_v<C>) {
    if constexpr (kOp == Opcode::kAbs) return std::fabs(x);
    if constexpr (kOp == Opcode::kNegate) return -x;
    if constexpr (kOp == Opcode::kExponential) return std::exp(x);
    if constexpr (kOp == Opcode::kExponentialMinusOne) return std::expm1(x);
    if constexpr (kOp == Opcode::kLog) return std::log(x);
    if constexpr (kOp == Opcode::kLogPlusOne) return std::log1p(x);
    if constexpr (kOp == Opcode::kSqrt) return std::sqrt(x);
    if constexpr (kOp == Opcode::kRsqrt) return C(1) / std::sqrt(x);
    if constexpr (kOp == Opcode::kCbrt) return std::cbrt(x);
    if constexpr (kOp == Opcode::kTanh) return std::tanh(x);
    if constexpr (kOp == Opcode::kSine) return std::sin(x);
    if constexpr (kOp == Opcode::kCosine) return std::cos(x);
    if constexpr (kOp == Opcode::kTan) return std::tan(x);
    if constexpr (kOp == Opcode::kSinh) return std::sinh(x);
    if constexpr (kOp == Opcode::kCosh) return std::cosh(x);
    if constexpr (kOp == Opcode::kAsin) return std::asin(x);
    if constexpr (kOp == Opcode::kAcos) return std::acos(x);
    if constexpr (kOp == Opcode::kAsinh) return std::asinh(x);
    if constexpr (kOp == Opcode::kAcosh) return std::acosh(x);
    if constexpr (kOp == Opcode::kAtanh) return std::atanh(x);
    if constexpr (kOp == Opcode::kErf) return std::erf(x);
    if constexpr (kOp == Opcode::kLogistic) return C(1) / (C(1) + std::exp(-x));
    if constexpr (kOp == Opcode::kFloor) return std::floor(x);
    if constexpr (kOp == Opcode::kCeil) return std::ceil(x);
    if constexpr (kOp == Opcode::kRoundNearestAfz) return std::round(x);
    if constexpr (kOp == Opcode::kRoundNearestEven) return std::nearbyint(x);
    if constexpr (kOp == Opcode::kSign) {
      if (std::isnan(x) || x == C(0)) return x;
      return x > 0 ? C(1) : C(-1);
    }
    return x;
  } else {
    using U = WideUnsigned<C>;
    using UC = std::make_unsigned_t<C>;
    if constexpr (kOp == Opcode::kAbs) {
      if constexpr (std::is_signed_v<C>) {
        return x < 0 ? static_cast<C>(U(0) - static_cast<U>(x)) : x;
      }
      return x;
    }
    if constexpr (kOp == Opcode::kNegate) {
      return static_cast<C>(U(0) - static_cast<U>(x));
    }
    if constexpr (kOp == Opcode::kSign) {
      if constexpr (std::is_signed_v<C>)
        return x > 0 ? C(1) : x < 0 ? C(-1) : C(0);
      return x > 0 ? C(1) : C(0);
    }
    if constexpr (kOp == Opcode::kNot) return static_cast<C>(~x);
    if constexpr (kOp == Opcode::kPopcnt) {
      return static_cast<C>(std::popcount(static_cast<UC>(x)));
    }
    if constexpr (kOp == Opcode::kCountLeadingZeros) {
      return static_cast<C>(std::countl_zero(static_cast<UC>(x)));
    }
    return x;
  }
}

enum class TypeClass { kPred, kInt, kFloat };
TypeClass ClassOf(PrimitiveType t) {
  if (t == PrimitiveType::kPred) return TypeClass::kPred;
  if (IsFloatingPointType(t)) return TypeClass::kFloat;
  return TypeClass::kInt;
}

bool UnaryValid(Opcode op, PrimitiveType t) {
  TypeClass c = ClassOf(t);
  switch (op) {
    case Opcode::kCopy:
      return true;
    case Opcode::kAbs:
    case Opcode::kNegate:
    case Opcode::kSign:
      return c != TypeClass::kPred;
    case Opcode::kNot:
      return c != TypeClass::kFloat;
    case Opcode::kPopcnt:
    case Opcode::kCountLeadingZeros:
      return c == TypeClass::kInt;
    case Opcode::kExponential:
    case Opcode::kExponentialMinusOne:
    case Opcode::kLog:
    case Opcode::kLogPlusOne:
    case Opcode::kSqrt:
    case Opcode::kRsqrt:
    case Opcode::kCbrt:
    case Opcode::kTanh:
    case Opcode::kSine:
    case Opcode::kCosine:
    case Opcode::kTan:
    case Opcode::kSinh:
    case Opcode::kCosh:
    case Opcode::kAsin:
    case Opcode::kAcos:
    case Opcode::kAsinh:
    case Opcode::kAcosh:
    case Opcode::kAtanh:
    case Opcode::kErf:
    case Opcode::kLogistic:
    case Opcode::kFloor:
    case Opcode::kCeil:
    case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven:
    case Opcode::kIsFinite:
      return c == TypeClass::kFloat;
    default:
      return false;
  }
}

bool BinaryValid(Opcode op, PrimitiveType t) {
  TypeClass c = ClassOf(t);
  switch (op) {
    case Opcode::kAdd:
    case Opcode::kSubtract:
    case Opcode::kMultiply:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
      return true;
    case Opcode::kDivide:
    case Opcode::kRemainder:
    case Opcode::kPower:
      return c != TypeClass::kPred;
    case Opcode::kAnd:
    case Opcode::kOr:
    case Opcode::kXor:
      return c != TypeClass::kFloat;
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightArithmetic:
    case Opcode::kShiftRightLogical:
      return c == TypeClass::kInt;
    case Opcode::kAtan2:
      return c == TypeClass::kFloat;
    default:
      return false;
  }
}

// --- Loops ------------------------------------------------------------------

template <typename T, Opcode kOp>
void UnaryLoop(const T* x, T* out, int64_t n) {
  using Tr = ElemTraits<T>;
  for (int64_t i = 0; i < n; ++i) {
    out[i] = Tr::Store(UnOp<kOp>(Tr::Load(x[i])));
  }
}

template <typename T, Opcode kOp>
void BinaryLoop(const T* a, int64_t sa, const T* b, int64_t sb, T* out,
                int64_t n) {
  using Tr = ElemTraits<T>;
  if (sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) {
      out[i] = Tr::Store(BinOp<kOp>(Tr::Load(a[i]), Tr::Load(b[i])));
    }
  } else if (sa == 1) {
    const auto bv = Tr::Load(b[0]);
    for (int64_t i = 0; i < n; ++i) {
      out[i] = Tr::Store(BinOp<kOp>(Tr::Load(a[i]), bv));
    }
  } else {
    const auto av = Tr::Load(a[0]);
    for (int64_t i = 0; i < n; ++i) {
      out[i] = Tr::Store(BinOp<kOp>(av, Tr::Load(b[i * sb])));
    }
  }
}

template <typename T, Opcode kOp>
void CombineLoop(T* acc, const T* x, int64_t n) {
  using Tr = ElemTraits<T>;
  for (int64_t i = 0; i < n; ++i) {
    acc[i] = Tr::Store(BinOp<kOp>(Tr::Load(acc[i]), Tr::Load(x[i])));
  }
}

template <typename T, Opcode kOp>
void SequentialLoop(T* acc, const T* x, int64_t n) {
  using Tr = ElemTraits<T>;
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                kIsIntStorage<T>) {
    T a = acc[0];
    for (int64_t i = 0; i < n; ++i) a = BinOp<kOp>(a, x[i]);
    acc[0] = a;
  } else {
    // 16-bit floats and pred round after every step.
    T a = acc[0];
    for (int64_t i = 0; i < n; ++i) {
      a = Tr::Store(BinOp<kOp>(Tr::Load(a), Tr::Load(x[i])));
    }
    acc[0] = a;
  }
}

// The op tables (X-macros) the dispatchers below expand, laid out by hand.
// clang-format off
#define HLOVERLAP_UNARY_OPS(X)                                             \
  X(kAbs) X(kNegate) X(kSign) X(kNot) X(kPopcnt) X(kCountLeadingZeros)     \
  X(kExponential) X(kExponentialMinusOne) X(kLog) X(kLogPlusOne) X(kSqrt)  \
  X(kRsqrt) X(kCbrt) X(kTanh) X(kSine) X(kCosine) X(kTan) X(kSinh)         \
  X(kCosh) X(kAsin) X(kAcos) X(kAsinh) X(kAcosh) X(kAtanh) X(kErf)         \
  X(kLogistic) X(kFloor) X(kCeil) X(kRoundNearestAfz) X(kRoundNearestEven)

#define HLOVERLAP_BINARY_OPS(X)                                        \
  X(kAdd) X(kSubtract) X(kMultiply) X(kDivide) X(kMaximum) X(kMinimum) \
  X(kPower) X(kRemainder) X(kAnd) X(kOr) X(kXor) X(kShiftLeft)         \
  X(kShiftRightArithmetic) X(kShiftRightLogical) X(kAtan2)

#define HLOVERLAP_COMBINER_OPS(X)                                     \
  X(kAdd) X(kMultiply) X(kMaximum) X(kMinimum) X(kAnd) X(kOr) X(kXor)

#define HLOVERLAP_FLOAT_UNARY_OPS(X)                                   \
  X(kAbs) X(kNegate) X(kSign) X(kExponential) X(kExponentialMinusOne)  \
  X(kLog) X(kLogPlusOne) X(kSqrt) X(kRsqrt) X(kCbrt) X(kTanh) X(kSine) \
  X(kCosine) X(kTan) X(kSinh) X(kCosh) X(kAsin) X(kAcos) X(kAsinh)     \
  X(kAcosh) X(kAtanh) X(kErf) X(kLogistic) X(kFloor) X(kCeil)          \
  X(kRoundNearestAfz) X(kRoundNearestEven)
#define HLOVERLAP_INT_UNARY_OPS(X)                                     \
  X(kAbs) X(kNegate) X(kSign) X(kNot) X(kPopcnt) X(kCountLeadingZeros)
// clang-format on

// Only the (type, op) pairs UnaryValid accepts are instantiated.
template <typename T>
void DispatchUnary(Opcode op, const T* x, T* out, int64_t n) {
#define X(name)                            \
  case Opcode::name:                       \
    UnaryLoop<T, Opcode::name>(x, out, n); \
    return;
  if constexpr (kIsFloatStorage<T>) {
    switch (op) {
      HLOVERLAP_FLOAT_UNARY_OPS(X)
      default:
        return;
    }
  } else if constexpr (std::is_same_v<T, pred_t>) {
    switch (op) {
      X(kNot)
      default:
        return;
    }
  } else {
    switch (op) {
      HLOVERLAP_INT_UNARY_OPS(X)
      default:
        return;
    }
  }
#undef X
}

// clang-format off
#define HLOVERLAP_FLOAT_BINARY_OPS(X)                                  \
  X(kAdd) X(kSubtract) X(kMultiply) X(kDivide) X(kMaximum) X(kMinimum) \
  X(kPower) X(kRemainder) X(kAtan2)
#define HLOVERLAP_INT_BINARY_OPS(X)                                    \
  X(kAdd) X(kSubtract) X(kMultiply) X(kDivide) X(kMaximum) X(kMinimum) \
  X(kPower) X(kRemainder) X(kAnd) X(kOr) X(kXor) X(kShiftLeft)         \
  X(kShiftRightArithmetic) X(kShiftRightLogical)
#define HLOVERLAP_PRED_BINARY_OPS(X)                                       \
  X(kAdd) X(kSubtract) X(kMultiply) X(kMaximum) X(kMinimum) X(kAnd) X(kOr) \
  X(kXor)
// clang-format on

// Only the (type, op) pairs BinaryValid accepts are instantiated.
template <typename T>
void DispatchBinary(Opcode op, const T* a, int64_t sa, const T* b, int64_t sb,
                    T* out, int64_t n) {
#define X(name)                                        \
  case Opcode::name:                                   \
    BinaryLoop<T, Opcode::name>(a, sa, b, sb, out, n); \
    return;
  if constexpr (kIsFloatStorage<T>) {
    switch (op) {
      HLOVERLAP_FLOAT_BINARY_OPS(X)
      default:
        return;
    }
  } else if constexpr (std::is_same_v<T, pred_t>) {
    switch (op) {
      HLOVERLAP_PRED_BINARY_OPS(X)
      default:
        return;
    }
  } else {
    switch (op) {
      HLOVERLAP_INT_BINARY_OPS(X)
      default:
        return;
    }
  }
#undef X
}

// Result dims of a binary/ternary op where rank-0 operands broadcast.
absl::StatusOr<Dims> BroadcastDims(std::string_view what,
                                   std::initializer_list<const Value*> values) {
  const Value* shaped = nullptr;
  for (const Value* v : values) {
    if (!v->is_array()) {
      return Invalid(absl::StrCat(std::string(what), ": operand ",
                                  v->ShapeString(), " is not an array"));
    }
    if (v->rank() == 0) continue;
    if (shaped == nullptr) {
      shaped = v;
    } else if (v->dims() != shaped->dims()) {
      return Invalid(absl::StrCat(std::string(what), ": operand shapes ",
                                  shaped->ShapeString(), " and ",
                                  v->ShapeString(), " differ"));
    }
  }
  return shaped ? shaped->dims() : Dims{};
}

template <typename C>
inline bool CompareValues(ComparisonDirection d, C a, C b) {
  switch (d) {
    case ComparisonDirection::kEq:
      return a == b;
    case ComparisonDirection::kNe:
      return a != b;
    case ComparisonDirection::kLt:
      return a < b;
    case ComparisonDirection::kLe:
      return a <= b;
    case ComparisonDirection::kGt:
      return a > b;
    case ComparisonDirection::kGe:
      return a >= b;
  }
  return false;
}

inline int64_t TotalOrderKey(double v) {
  int64_t k;
  std::memcpy(&k, &v, 8);
  return k < 0 ? (k ^ std::numeric_limits<int64_t>::max()) : k;
}
inline int32_t TotalOrderKey(float v) {
  int32_t k;
  std::memcpy(&k, &v, 4);
  return k < 0 ? (k ^ std::numeric_limits<int32_t>::max()) : k;
}

template <typename T, ComparisonDirection kDir>
void CompareLoop(bool total, const T* a, int64_t sa, const T* b, int64_t sb,
                 pred_t* out, int64_t n) {
  using Tr = ElemTraits<T>;
  for (int64_t i = 0; i < n; ++i) {
    auto x = Tr::Load(a[i * sa]);
    auto y = Tr::Load(b[i * sb]);
    bool r;
    if constexpr (std::is_floating_point_v<decltype(x)>) {
      r = total ? CompareValues(kDir, TotalOrderKey(x), TotalOrderKey(y))
                : CompareValues(kDir, x, y);
    } else {
      r = CompareValues(kDir, x, y);
    }
    out[i] = pred_t{static_cast<uint8_t>(r)};
  }
}

template <typename From, typename To>
inline To ConvertOne(From x) {
  using FT = ElemTraits<From>;
  using TT = ElemTraits<To>;
  using CT = typename TT::Compute;
  auto c = FT::Load(x);
  using CF = decltype(c);
  if constexpr (std::is_same_v<CT, bool>) {
    return TT::Store(c != CF(0));
  } else if constexpr (std::is_same_v<CF, bool>) {
    return TT::Store(static_cast<CT>(c ? 1 : 0));
  } else if constexpr (std::is_floating_point_v<CT>) {
    if constexpr (std::is_same_v<To, f16_t> && std::is_same_v<CF, double>) {
      return f16_t{F64ToF16(c)};
    } else {
      return TT::Store(static_cast<CT>(c));
    }
  } else if constexpr (std::is_floating_point_v<CF>) {
    if (std::isnan(c)) return To(0);
    constexpr double lo = static_cast<double>(std::numeric_limits<To>::min());
    constexpr double hi = static_cast<double>(std::numeric_limits<To>::max());
    if (static_cast<double>(c) <= lo) return std::numeric_limits<To>::min();
    if (static_cast<double>(c) >= hi) return std::numeric_limits<To>::max();
    return static_cast<To>(c);
  } else {
    return static_cast<To>(c);
  }
}

}  // namespace

bool IsSupportedUnaryOpcode(Opcode op) {
  switch (op) {
#define X(name) case Opcode::name:
    HLOVERLAP_UNARY_OPS(X)
#undef X
    case Opcode::kCopy:
    case Opcode::kIsFinite:
      return true;
    default:
      return false;
  }
}

bool IsSupportedBinaryOpcode(Opcode op) {
  switch (op) {
#define X(name) case Opcode::name:
    HLOVERLAP_BINARY_OPS(X)
#undef X
    return true;
    default:
      return false;
  }
}

bool IsCombinerOpcode(Opcode op) {
  switch (op) {
#define X(name) case Opcode::name:
    HLOVERLAP_COMBINER_OPS(X)
#undef X
    return true;
    default:
      return false;
  }
}

absl::StatusOr<Value> Unary(Opcode op, const Value& x) {
  if (!x.is_array()) {
    return Invalid(absl::StrCat(OpName(op), ": operand ", x.ShapeString(),
                                " is not an array"));
  }
  if (!IsSupportedUnaryOpcode(op)) {
    return Invalid(absl::StrCat("not a unary elementwise op: ", OpName(op)));
  }
  if (!IsSupportedElementType(x.type())) {
    return UnsupportedTypeError(x.type(), OpName(op));
  }
  if (!UnaryValid(op, x.type())) {
    return Invalid(absl::StrCat(OpName(op), " is not defined for element type ",
                                std::string(PrimitiveTypeName(x.type()))));
  }
  if (op == Opcode::kCopy) return x;
  if (op == Opcode::kIsFinite) {
    absl::StatusOr<Value> out =
        Value::Uninitialized(PrimitiveType::kPred, x.dims());
    if (!out.ok()) return out;
    pred_t* o = out->mutable_data<pred_t>();
    VisitElementType(x.type(), [&]<typename T>() {
      if constexpr (kIsFloatStorage<T>) {
        const T* p = x.data<T>();
        for (int64_t i = 0; i < x.element_count(); ++i) {
          o[i] = pred_t{
              static_cast<uint8_t>(std::isfinite(ElemTraits<T>::Load(p[i])))};
        }
      }
    });
    return out;
  }
  absl::StatusOr<Value> out = Value::Uninitialized(x.type(), x.dims());
  if (!out.ok()) return out;
  Value& o = *out;
  VisitElementType(x.type(), [&]<typename T>() {
    DispatchUnary<T>(op, x.data<T>(), o.mutable_data<T>(), x.element_count());
  });
  return out;
}

absl::StatusOr<Value> Binary(Opcode op, const Value& a, const Value& b) {
  if (!IsSupportedBinaryOpcode(op)) {
    return Invalid(absl::StrCat("not a binary elementwise op: ", OpName(op)));
  }
  absl::StatusOr<Dims> dims = BroadcastDims(OpName(op), {&a, &b});
  if (!dims.ok()) return dims.status();
  if (a.type() != b.type()) {
    return Invalid(absl::StrCat(OpName(op), ": operand types ", a.ShapeString(),
                                " and ", b.ShapeString(), " differ"));
  }
  if (!IsSupportedElementType(a.type())) {
    return UnsupportedTypeError(a.type(), OpName(op));
  }
  if (!BinaryValid(op, a.type())) {
    return Invalid(absl::StrCat(OpName(op), " is not defined for element type ",
                                std::string(PrimitiveTypeName(a.type()))));
  }
  absl::StatusOr<Value> out = Value::Uninitialized(a.type(), *dims);
  if (!out.ok()) return out;
  Value& o = *out;
  const int64_t n = o.element_count();
  const int64_t sa = a.rank() == 0 ? 0 : 1;
  const int64_t sb = b.rank() == 0 ? 0 : 1;
  VisitElementType(a.type(), [&]<typename T>() {
    if (sa == 0 && sb == 0) {
      DispatchBinary<T>(op, a.data<T>(), 1, b.data<T>(), 1, o.mutable_data<T>(),
                        n);
    } else {
      DispatchBinary<T>(op, a.data<T>(), sa, b.data<T>(), sb,
                        o.mutable_data<T>(), n);
    }
  });
  return out;
}

absl::StatusOr<Value> Compare(ComparisonDirection direction,
                              std::string_view comparison_type, const Value& a,
                              const Value& b) {
  absl::StatusOr<Dims> dims = BroadcastDims("compare", {&a, &b});
  if (!dims.ok()) return dims.status();
  if (a.type() != b.type()) {
    return Invalid(absl::StrCat("compare: operand types ", a.ShapeString(),
                                " and ", b.ShapeString(), " differ"));
  }
  if (!IsSupportedElementType(a.type())) {
    return UnsupportedTypeError(a.type(), "compare");
  }
  const bool total = comparison_type == "TOTALORDER";
  absl::StatusOr<Value> out = Value::Uninitialized(PrimitiveType::kPred, *dims);
  if (!out.ok()) return out;
  pred_t* o = out->mutable_data<pred_t>();
  const int64_t n = out->element_count();
  const int64_t sa = a.rank() == 0 ? 0 : 1;
  const int64_t sb = b.rank() == 0 ? 0 : 1;
  VisitElementType(a.type(), [&]<typename T>() {
    switch (direction) {
#define X(dir)                                                       \
  case ComparisonDirection::dir:                                     \
    CompareLoop<T, ComparisonDirection::dir>(total, a.data<T>(), sa, \
                                             b.data<T>(), sb, o, n); \
    break;
      X(kEq) X(kNe) X(kLt) X(kLe) X(kGt) X(kGe)
#undef X
    }
  });
  return out;
}

absl::StatusOr<Value> Select(const Value& pred, const Value& on_true,
                             const Value& on_false) {
  if (on_true.is_tuple() || on_false.is_tuple()) {
    // Tuple select (old HLO): scalar predicate picks a whole operand.
    if (!pred.is_array() || pred.element_count() != 1) {
      return Invalid("select of tuples needs a scalar predicate");
    }
    return pred.data<pred_t>()[0].v ? on_true : on_false;
  }
  absl::StatusOr<Dims> dims =
      BroadcastDims("select", {&pred, &on_true, &on_false});
  if (!dims.ok()) return dims.status();
  if (pred.type() != PrimitiveType::kPred) {
    return Invalid(
        absl::StrCat("select: predicate ", pred.ShapeString(), " is not pred"));
  }
  if (on_true.type() != on_false.type()) {
    return Invalid(absl::StrCat("select: operand types ", on_true.ShapeString(),
                                " and ", on_false.ShapeString(), " differ"));
  }
  if (pred.rank() == 0 && on_true.dims() == *dims && on_false.dims() == *dims) {
    return pred.data<pred_t>()[0].v ? on_true : on_false;
  }
  absl::StatusOr<Value> out = Value::Uninitialized(on_true.type(), *dims);
  if (!out.ok()) return out;
  const int64_t n = out->element_count();
  const int64_t es = on_true.element_size();
  const int64_t sp = pred.rank() == 0 ? 0 : 1;
  const int64_t st = on_true.rank() == 0 ? 0 : es;
  const int64_t sf = on_false.rank() == 0 ? 0 : es;
  const pred_t* p = pred.data<pred_t>();
  uint8_t* o = out->mutable_raw();
  const uint8_t* t = on_true.raw();
  const uint8_t* f = on_false.raw();
  auto run = [&]<typename U>() {
    for (int64_t i = 0; i < n; ++i) {
      U v;
      std::memcpy(&v, p[i * sp].v ? t + i * st : f + i * sf, sizeof(U));
      std::memcpy(o + i * sizeof(U), &v, sizeof(U));
    }
  };
  switch (es) {
    case 1:
      run.template operator()<uint8_t>();
      break;
    case 2:
      run.template operator()<uint16_t>();
      break;
    case 4:
      run.template operator()<uint32_t>();
      break;
    case 8:
      run.template operator()<uint64_t>();
      break;
    default:
      return UnsupportedTypeError(on_true.type(), "select");
  }
  return out;
}

absl::StatusOr<Value> Clamp(const Value& lo, const Value& x, const Value& hi) {
  absl::StatusOr<Value> t = Binary(Opcode::kMaximum, x, lo);
  if (!t.ok()) return t;
  return Binary(Opcode::kMinimum, *t, hi);
}

absl::StatusOr<Value> Convert(const Value& x, PrimitiveType to) {
  if (!x.is_array()) {
    return Invalid(
        absl::StrCat("convert: operand ", x.ShapeString(), " is not an array"));
  }
  if (!IsSupportedElementType(x.type())) {
    return UnsupportedTypeError(x.type(), "convert");
  }
  if (!IsSupportedElementType(to)) return UnsupportedTypeError(to, "convert");
  if (x.type() == to) return x;
  absl::StatusOr<Value> out = Value::Uninitialized(to, x.dims());
  if (!out.ok()) return out;
  Value& o = *out;
  const int64_t n = x.element_count();
  VisitElementType(x.type(), [&]<typename From>() {
    VisitElementType(to, [&]<typename To>() {
      const From* src = x.data<From>();
      To* dst = o.mutable_data<To>();
      for (int64_t i = 0; i < n; ++i) dst[i] = ConvertOne<From, To>(src[i]);
    });
  });
  return out;
}

absl::StatusOr<Value> BitcastConvert(const Value& x, PrimitiveType to,
                                     const Dims& out_dims) {
  if (!x.is_array()) {
    return Invalid("bitcast-convert: operand is not an array");
  }
  if (!IsSupportedElementType(to)) {
    return UnsupportedTypeError(to, "bitcast-convert");
  }
  if (ElementCountOf(out_dims) * PrimitiveTypeByteSize(to) != x.byte_size()) {
    return Invalid(absl::StrCat("bitcast-convert: ", x.ShapeString(), " to ",
                                ArrayShapeString(to, out_dims),
                                " changes the byte size"));
  }
  Value v = x.Reinterpret(to, out_dims);
  if (to == PrimitiveType::kPred) {
    // Keep pred storage canonical (0/1).
    absl::StatusOr<Value> copy = Value::Uninitialized(to, out_dims);
    if (!copy.ok()) return copy;
    for (int64_t i = 0; i < v.element_count(); ++i) {
      copy->mutable_raw()[i] = v.raw()[i] != 0;
    }
    return copy;
  }
  return v;
}

namespace {

// acc[i] = acc[i] OP x[i], by CombineLoop or (kSequential) SequentialLoop.
template <bool kSequential>
absl::Status Combine(Opcode op, PrimitiveType type, uint8_t* acc,
                     const uint8_t* x, int64_t n) {
  if (!IsCombinerOpcode(op) || !BinaryValid(op, type)) {
    return Invalid(absl::StrCat("cannot combine with ", OpName(op), " on ",
                                std::string(PrimitiveTypeName(type))));
  }
  bool ok = VisitElementType(type, [&]<typename T>() {
    T* a = reinterpret_cast<T*>(acc);
    const T* b = reinterpret_cast<const T*>(x);
#define X(name)                                 \
  case Opcode::name:                            \
    if constexpr (kSequential) {                \
      SequentialLoop<T, Opcode::name>(a, b, n); \
    } else {                                    \
      CombineLoop<T, Opcode::name>(a, b, n);    \
    }                                           \
    break;
    if constexpr (kIsFloatStorage<T>) {
      switch (op) {
        X(kAdd) X(kMultiply) X(kMaximum) X(kMinimum) default : break;
      }
    } else {
      switch (op) {
        HLOVERLAP_COMBINER_OPS(X)
        default:
          break;
      }
    }
#undef X
  });
  if (!ok) return UnsupportedTypeError(type, "a reduction");
  return absl::OkStatus();
}

}  // namespace

absl::Status CombineElementwise(Opcode op, PrimitiveType type, uint8_t* acc,
                                const uint8_t* x, int64_t n) {
  return Combine</*kSequential=*/false>(op, type, acc, x, n);
}

absl::Status CombineSequential(Opcode op, PrimitiveType type, uint8_t* acc,
                               const uint8_t* x, int64_t n) {
  return Combine</*kSequential=*/true>(op, type, acc, x, n);
}

}  // namespace hloverlap::interp
