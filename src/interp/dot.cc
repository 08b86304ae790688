// Dot and its GEMM kernel (see dot.h for the arithmetic contract).
//
// Optimized even in unoptimized builds (GCC), and never contracted into
// fused multiply-adds, so that the per-element operation sequence is the
// documented one on every build.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("O3", "-ffp-contract=off")
#endif

#include "interp/dot.h"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "interp/elementwise.h"
#include "interp/errors.h"

namespace hloverlap::interp {
namespace {

constexpr int64_t kMr = 6;    // rows per micro-kernel
constexpr int64_t kKc = 256;  // depth of a packed block
constexpr int64_t kNc = 512;  // columns of a packed block

template <typename Acc>
struct Vec {
  typedef Acc type __attribute__((vector_size(16)));
  static constexpr int64_t kLanes = 16 / sizeof(Acc);
};

template <typename Acc, typename T>
inline Acc LoadAs(T x) {
  if constexpr (std::is_same_v<T, bf16_t>) {
    return static_cast<Acc>(Bf16ToF32(x.v));
  } else if constexpr (std::is_same_v<T, f16_t>) {
    return static_cast<Acc>(F16ToF32(x.v));
  } else if constexpr (std::is_same_v<T, pred_t>) {
    return static_cast<Acc>(x.v != 0 ? 1 : 0);
  } else {
    return static_cast<Acc>(x);
  }
}

// A matrix view: element (r, c) is base[rows[r] + cols[c]].
template <typename T>
struct MatView {
  const T* base;
  const int64_t* rows;
  const int64_t* cols;
};

// C (m x n, row-major, ldc = n) = A (m x k) * B (k x n), sequential in k.
template <typename Acc, typename TA, typename TB>
void GemmGeneric(int64_t m, int64_t n, int64_t k, MatView<TA> a, MatView<TB> b,
                 Acc* c) {
  using V = typename Vec<Acc>::type;
  constexpr int64_t kL = Vec<Acc>::kLanes;
  constexpr int64_t kNr = 2 * kL;
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    std::fill(c, c + m * n, Acc(0));
    return;
  }
  std::vector<Acc> bpack(static_cast<size_t>(kKc * kNc + kNr));
  std::vector<V> apack(static_cast<size_t>(kKc * kMr));
  for (int64_t jb = 0; jb < n; jb += kNc) {
    const int64_t nc = std::min(kNc, n - jb);
    const int64_t panels = (nc + kNr - 1) / kNr;
    for (int64_t kb = 0; kb < k; kb += kKc) {
      const int64_t kc = std::min(kKc, k - kb);
      // Pack B[kb:kb+kc, jb:jb+nc] into panels of kNr columns (zero padded).
      for (int64_t p = 0; p < panels; ++p) {
        Acc* dst = bpack.data() + p * kc * kNr;
        const int64_t j0 = jb + p * kNr;
        const int64_t w = std::min(kNr, n - j0);
        for (int64_t kk = 0; kk < kc; ++kk) {
          const TB* row = b.base + b.rows[kb + kk];
          Acc* d = dst + kk * kNr;
          int64_t q = 0;
          for (; q < w; ++q) d[q] = LoadAs<Acc>(row[b.cols[j0 + q]]);
          for (; q < kNr; ++q) d[q] = Acc(0);
        }
      }
      for (int64_t i = 0; i < m; i += kMr) {
        const int64_t mr = std::min(kMr, m - i);
        // Pack A rows i..i+mr, replicated across lanes.
        for (int64_t r = 0; r < kMr; ++r) {
          if (r < mr) {
            const TA* row = a.base + a.rows[i + r];
            for (int64_t kk = 0; kk < kc; ++kk) {
              Acc e = LoadAs<Acc>(row[a.cols[kb + kk]]);
              V s;
              for (int64_t l = 0; l < kL; ++l) s[l] = e;
              apack[kk * kMr + r] = s;
            }
          } else {
            V z = {};
            for (int64_t kk = 0; kk < kc; ++kk) apack[kk * kMr + r] = z;
          }
        }
        for (int64_t p = 0; p < panels; ++p) {
          const Acc* bp = bpack.data() + p * kc * kNr;
          const int64_t j0 = jb + p * kNr;
          const int64_t w = std::min(kNr, n - j0);
          V x[kMr], y[kMr];
          if (kb == 0) {
            for (int64_t r = 0; r < kMr; ++r) x[r] = y[r] = V{};
          } else {
            Acc t[kMr][kNr] = {};
            for (int64_t r = 0; r < mr; ++r) {
              std::memcpy(t[r], c + (i + r) * n + j0, w * sizeof(Acc));
            }
            for (int64_t r = 0; r < kMr; ++r) {
              std::memcpy(&x[r], t[r], 16);
              std::memcpy(&y[r], t[r] + kL, 16);
            }
          }
          const V* ap = apack.data();
          for (int64_t kk = 0; kk < kc; ++kk) {
            V bl, bh;
            std::memcpy(&bl, bp + kk * kNr, 16);
            std::memcpy(&bh, bp + kk * kNr + kL, 16);
            const V* as = ap + kk * kMr;
#pragma GCC unroll 6
            for (int64_t r = 0; r < kMr; ++r) {
              V s = as[r];
              x[r] += s * bl;
              y[r] += s * bh;
            }
          }
          Acc t[kMr][kNr];
          for (int64_t r = 0; r < kMr; ++r) {
            std::memcpy(t[r], &x[r], 16);
            std::memcpy(t[r] + kL, &y[r], 16);
          }
          for (int64_t r = 0; r < mr; ++r) {
            std::memcpy(c + (i + r) * n + j0, t[r], w * sizeof(Acc));
          }
        }
      }
    }
  }
}

// Offsets of the row-major flattening of `dims` (a list of operand
// dimensions) given the operand's strides.
std::vector<int64_t> OffsetTable(absl::Span<const int64_t> dims,
                                 const Dims& operand_dims,
                                 const Dims& strides) {
  std::vector<int64_t> table(1, 0);
  for (int64_t d : dims) {
    std::vector<int64_t> next;
    next.reserve(table.size() * operand_dims[d]);
    for (int64_t base : table) {
      for (int64_t j = 0; j < operand_dims[d]; ++j) {
        next.push_back(base + j * strides[d]);
      }
    }
    table = std::move(next);
  }
  return table;
}

// A dot as `batch` products of an m x k by a k x n matrix: the output's
// dimensions (batch, lhs free, rhs free) and the operands' element offsets
// of each batch index (lb, rb), row (lm), column (rn) and contracted index
// (lk, rk).
struct DotLayout {
  Dims out_dims;
  int64_t batch = 1, m = 1, n = 1, k = 1;
  std::vector<int64_t> lb, rb, lm, lk, rk, rn;
};

// The layout of lhs . rhs, or InvalidArgument for dimension numbers that
// do not fit the operands.
absl::StatusOr<DotLayout> LayoutOf(const Value& lhs, const Value& rhs,
                                   const DotDimensionNumbers& dnums) {
  const auto& lb_dims = dnums.lhs_batch_dims;
  const auto& rb_dims = dnums.rhs_batch_dims;
  const auto& lc_dims = dnums.lhs_contracting_dims;
  const auto& rc_dims = dnums.rhs_contracting_dims;
  auto describe = [&] {
    return absl::StrCat(lhs.ShapeString(), " x ", rhs.ShapeString(),
                        " lhs_batch={", absl::StrJoin(lb_dims, ","),
                        "} lhs_contracting={", absl::StrJoin(lc_dims, ","),
                        "} rhs_batch={", absl::StrJoin(rb_dims, ","),
                        "} rhs_contracting={", absl::StrJoin(rc_dims, ","),
                        "}");
  };
  if (lb_dims.size() != rb_dims.size() || lc_dims.size() != rc_dims.size()) {
    return Invalid("dot: mismatched dimension numbers: " + describe());
  }
  std::vector<int> lrole(lhs.rank(), 0), rrole(rhs.rank(), 0);  // 1 b, 2 c
  auto mark = [&](const DimensionVector& ds, std::vector<int>& role,
                  int64_t rank, int tag) {
    for (int64_t d : ds) {
      if (d < 0 || d >= rank || role[d] != 0) return false;
      role[d] = tag;
    }
    return true;
  };
  if (!mark(lb_dims, lrole, lhs.rank(), 1) ||
      !mark(lc_dims, lrole, lhs.rank(), 2) ||
      !mark(rb_dims, rrole, rhs.rank(), 1) ||
      !mark(rc_dims, rrole, rhs.rank(), 2)) {
    return Invalid("dot: invalid dimension numbers: " + describe());
  }
  for (size_t i = 0; i < lb_dims.size(); ++i) {
    if (lhs.dim(lb_dims[i]) != rhs.dim(rb_dims[i])) {
      return Invalid("dot: batch dimension sizes differ: " + describe());
    }
  }
  for (size_t i = 0; i < lc_dims.size(); ++i) {
    if (lhs.dim(lc_dims[i]) != rhs.dim(rc_dims[i])) {
      return Invalid("dot: contracting dimension sizes differ: " + describe());
    }
  }
  DimensionVector lfree, rfree;
  for (int64_t d = 0; d < lhs.rank(); ++d) {
    if (lrole[d] == 0) lfree.push_back(d);
  }
  for (int64_t d = 0; d < rhs.rank(); ++d) {
    if (rrole[d] == 0) rfree.push_back(d);
  }
  DotLayout l;
  for (int64_t d : lb_dims) {
    l.out_dims.push_back(lhs.dim(d));
    l.batch *= lhs.dim(d);
  }
  for (int64_t d : lfree) {
    l.out_dims.push_back(lhs.dim(d));
    l.m *= lhs.dim(d);
  }
  for (int64_t d : rfree) {
    l.out_dims.push_back(rhs.dim(d));
    l.n *= rhs.dim(d);
  }
  for (int64_t d : lc_dims) l.k *= lhs.dim(d);
  Dims ls = RowMajorStrides(lhs.dims()), rs = RowMajorStrides(rhs.dims());
  l.lb = OffsetTable(lb_dims, lhs.dims(), ls);
  l.rb = OffsetTable(rb_dims, rhs.dims(), rs);
  l.lm = OffsetTable(lfree, lhs.dims(), ls);
  l.lk = OffsetTable(lc_dims, lhs.dims(), ls);
  l.rk = OffsetTable(rc_dims, rhs.dims(), rs);
  l.rn = OffsetTable(rfree, rhs.dims(), rs);
  return l;
}

template <typename Acc, typename T>
void RunFloatDot(const Value& lhs, const Value& rhs, const DotLayout& l,
                 Acc* out) {
  for (int64_t bi = 0; bi < l.batch; ++bi) {
    MatView<T> a{lhs.data<T>() + l.lb[bi], l.lm.data(), l.lk.data()};
    MatView<T> b{rhs.data<T>() + l.rb[bi], l.rk.data(), l.rn.data()};
    GemmGeneric<Acc, T, T>(l.m, l.n, l.k, a, b, out + bi * l.m * l.n);
  }
}

// A floating-point dot of operands already in one type (f64 when `wide`,
// else bf16, f16 or f32), accumulated in f64 (wide) or f32, rounded to
// out's type as convert does.
void FloatDot(const Value& a, const Value& b, bool wide, const DotLayout& l,
              Value& out) {
  const PrimitiveType out_type = out.type();
  const int64_t total = l.batch * l.m * l.n;
  if (wide) {
    std::vector<double> acc;
    double* dst;
    if (out_type == PrimitiveType::kF64) {
      dst = out.mutable_data<double>();
    } else {
      acc.resize(total);
      dst = acc.data();
    }
    RunFloatDot<double, double>(a, b, l, dst);
    if (out_type != PrimitiveType::kF64) {
      // Rounds f64 -> out type as convert does.
      VisitElementType(out_type, [&]<typename T>() {
        T* p = out.mutable_data<T>();
        for (int64_t i = 0; i < total; ++i) {
          if constexpr (std::is_same_v<T, f16_t>) {
            p[i] = f16_t{F64ToF16(acc[i])};
          } else if constexpr (kIsFloatStorage<T>) {
            p[i] = ElemTraits<T>::Store(
                static_cast<typename ElemTraits<T>::Compute>(acc[i]));
          }
        }
      });
    }
    return;
  }
  std::vector<float> acc;
  float* dst;
  if (out_type == PrimitiveType::kF32) {
    dst = out.mutable_data<float>();
  } else {
    acc.resize(total);
    dst = acc.data();
  }
  switch (a.type()) {
    case PrimitiveType::kBF16:
      RunFloatDot<float, bf16_t>(a, b, l, dst);
      break;
    case PrimitiveType::kF16:
      RunFloatDot<float, f16_t>(a, b, l, dst);
      break;
    default:
      RunFloatDot<float, float>(a, b, l, dst);
      break;
  }
  if (out_type == PrimitiveType::kBF16) {
    bf16_t* p = out.mutable_data<bf16_t>();
    for (int64_t i = 0; i < total; ++i) p[i] = bf16_t{F32ToBf16(acc[i])};
  } else if (out_type == PrimitiveType::kF16) {
    f16_t* p = out.mutable_data<f16_t>();
    for (int64_t i = 0; i < total; ++i) p[i] = f16_t{F32ToF16(acc[i])};
  }
}

// An integer dot of operands already in out's type, accumulated in it,
// wrapping.
void IntDot(const Value& a, const Value& b, const DotLayout& l, Value& out) {
  VisitElementType(out.type(), [&]<typename TO>() {
    if constexpr (kIsIntStorage<TO>) {
      using U = std::conditional_t<(sizeof(TO) < 4), uint32_t,
                                   std::make_unsigned_t<TO>>;
      TO* p = out.mutable_data<TO>();
      const TO* A = a.data<TO>();
      const TO* B = b.data<TO>();
      for (int64_t bi = 0; bi < l.batch; ++bi) {
        for (int64_t i = 0; i < l.m; ++i) {
          for (int64_t j = 0; j < l.n; ++j) {
            U acc = 0;
            for (int64_t kk = 0; kk < l.k; ++kk) {
              U x = static_cast<U>(A[l.lb[bi] + l.lm[i] + l.lk[kk]]);
              U y = static_cast<U>(B[l.rb[bi] + l.rk[kk] + l.rn[j]]);
              acc = static_cast<U>(acc + static_cast<U>(x * y));
            }
            p[(bi * l.m + i) * l.n + j] = static_cast<TO>(acc);
          }
        }
      }
    }
  });
}

// Converts *v to `type` unless it has it.
absl::Status ConvertTo(Value* v, PrimitiveType type) {
  if (v->type() == type) return absl::OkStatus();
  absl::StatusOr<Value> c = Convert(*v, type);
  if (!c.ok()) return c.status();
  *v = *std::move(c);
  return absl::OkStatus();
}

}  // namespace

void GemmF32(int64_t m, int64_t n, int64_t k, const float* a, const float* b,
             float* c) {
  std::vector<int64_t> ar(m), ac(k), br(k), bc(n);
  for (int64_t i = 0; i < m; ++i) ar[i] = i * k;
  for (int64_t i = 0; i < k; ++i) ac[i] = i;
  for (int64_t i = 0; i < k; ++i) br[i] = i * n;
  for (int64_t i = 0; i < n; ++i) bc[i] = i;
  GemmGeneric<float, float, float>(m, n, k, {a, ar.data(), ac.data()},
                                   {b, br.data(), bc.data()}, c);
}

absl::StatusOr<Value> Dot(const Value& lhs, const Value& rhs,
                          const DotDimensionNumbers& dnums,
                          PrimitiveType out_type) {
  if (!lhs.is_array() || !rhs.is_array()) {
    return Invalid("dot: operands must be arrays");
  }
  for (PrimitiveType t : {lhs.type(), rhs.type(), out_type}) {
    if (!IsSupportedElementType(t)) return UnsupportedTypeError(t, "dot");
  }
  absl::StatusOr<DotLayout> layout = LayoutOf(lhs, rhs, dnums);
  if (!layout.ok()) return layout.status();
  absl::StatusOr<Value> out = Value::Uninitialized(out_type, layout->out_dims);
  if (!out.ok()) return out;
  if (out->element_count() == 0) return out;

  Value a = lhs, b = rhs;
  if (IsFloatingPointType(out_type)) {
    const bool wide = lhs.type() == PrimitiveType::kF64 ||
                      rhs.type() == PrimitiveType::kF64 ||
                      out_type == PrimitiveType::kF64;
    // Operands are brought to one type before the kernel (exact
    // conversions: 16-bit floats and f32 to f32/f64; integers as `convert`
    // does), so only four kernels are instantiated: bf16, f16, f32 (f32
    // accumulation) and f64.
    PrimitiveType common = wide ? PrimitiveType::kF64 : PrimitiveType::kF32;
    if (!wide && a.type() == b.type() &&
        (a.type() == PrimitiveType::kBF16 || a.type() == PrimitiveType::kF16)) {
      common = a.type();
    }
    for (Value* v : {&a, &b}) {
      if (absl::Status s = ConvertTo(v, common); !s.ok()) return s;
    }
    FloatDot(a, b, wide, *layout, *out);
    return out;
  }
  if (out_type == PrimitiveType::kPred || IsFloatingPointType(lhs.type()) ||
      IsFloatingPointType(rhs.type())) {
    return Invalid(absl::StrCat(
        "dot: unsupported type combination ", lhs.ShapeString(), " x ",
        rhs.ShapeString(), " -> ", std::string(PrimitiveTypeName(out_type))));
  }
  // Integer dot: operands converted (wrapping) to the output type, then
  // accumulated in it, wrapping.
  for (Value* v : {&a, &b}) {
    if (absl::Status s = ConvertTo(v, out_type); !s.ok()) return s;
  }
  IntDot(a, b, *layout, *out);
  return out;
}

}  // namespace hloverlap::interp
