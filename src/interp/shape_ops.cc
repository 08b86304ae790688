// Hot kernels: optimized even in unoptimized (debug) GCC builds.
#if defined(__GNUC__) && !defined(__clang__) && !defined(__OPTIMIZE__)
#pragma GCC optimize("O2")
#endif

#include "interp/shape_ops.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "interp/errors.h"

namespace hloverlap::interp {
namespace {

template <typename U>
void CopyRun(uint8_t* dst, const uint8_t* src, int64_t n, int64_t dst_step,
             int64_t src_step) {
  for (int64_t i = 0; i < n; ++i) {
    U v;
    std::memcpy(&v, src, sizeof(U));
    std::memcpy(dst, &v, sizeof(U));
    dst += dst_step;
    src += src_step;
  }
}

void InnerRun(uint8_t* dst, const uint8_t* src, int64_t es, int64_t n,
              int64_t dst_step, int64_t src_step) {
  if (dst_step == es && src_step == es) {
    std::memcpy(dst, src, static_cast<size_t>(n * es));
    return;
  }
  if (src_step == 0 && dst_step == es) {
    FillElements(dst, src, es, n);
    return;
  }
  switch (es) {
    case 1:
      CopyRun<uint8_t>(dst, src, n, dst_step, src_step);
      return;
    case 2:
      CopyRun<uint16_t>(dst, src, n, dst_step, src_step);
      return;
    case 4:
      CopyRun<uint32_t>(dst, src, n, dst_step, src_step);
      return;
    case 8:
      CopyRun<uint64_t>(dst, src, n, dst_step, src_step);
      return;
    default:
      for (int64_t i = 0; i < n; ++i) {
        std::memcpy(dst + i * dst_step, src + i * src_step,
                    static_cast<size_t>(es));
      }
  }
}

std::string DimsString(absl::Span<const int64_t> d) {
  return absl::StrCat("{", absl::StrJoin(d, ","), "}");
}

absl::Status CheckArray(const Value& v, std::string_view what) {
  if (!v.is_array()) {
    return Invalid(absl::StrCat(std::string(what), ": expected an array, got ",
                                v.ShapeString()));
  }
  return absl::OkStatus();
}

bool IsDescendingLayout(const Shape& s) {
  if (!s.has_layout()) return true;
  const auto& m2m = s.layout()->minor_to_major;
  if (m2m.empty()) return true;
  if (static_cast<int64_t>(m2m.size()) != s.rank()) return false;
  for (int64_t i = 0; i < s.rank(); ++i) {
    if (m2m[i] != s.rank() - 1 - i) return false;
  }
  return true;
}

// Major-to-minor order of the dims of `s` (identity without layout).
absl::StatusOr<Dims> MajorToMinor(const Shape& s) {
  Dims order(s.rank());
  std::iota(order.begin(), order.end(), 0);
  if (!s.has_layout() || s.layout()->minor_to_major.empty()) return order;
  const auto& m2m = s.layout()->minor_to_major;
  if (static_cast<int64_t>(m2m.size()) != s.rank()) {
    return Invalid(
        absl::StrCat("layout of ", s.ToString(), " does not match its rank"));
  }
  std::vector<bool> seen(s.rank(), false);
  for (int64_t i = 0; i < s.rank(); ++i) {
    int64_t d = m2m[s.rank() - 1 - i];
    if (d < 0 || d >= s.rank() || seen[d]) {
      return Invalid(absl::StrCat("invalid layout in ", s.ToString()));
    }
    seen[d] = true;
    order[i] = d;
  }
  return order;
}

}  // namespace

void FillElements(uint8_t* dst, const uint8_t* value, int64_t es, int64_t n) {
  if (n <= 0) return;
  bool all_same = true;
  for (int64_t b = 1; b < es; ++b) all_same &= value[b] == value[0];
  if (all_same) {
    std::memset(dst, value[0], static_cast<size_t>(n * es));
    return;
  }
  switch (es) {
    case 2:
      CopyRun<uint16_t>(dst, value, n, 2, 0);
      return;
    case 4:
      CopyRun<uint32_t>(dst, value, n, 4, 0);
      return;
    case 8:
      CopyRun<uint64_t>(dst, value, n, 8, 0);
      return;
    default:
      for (int64_t i = 0; i < n; ++i) {
        std::memcpy(dst + i * es, value, static_cast<size_t>(es));
      }
  }
}

void StridedCopy(uint8_t* dst, const uint8_t* src, int64_t es,
                 const Dims& counts, const Dims& dst_strides,
                 const Dims& src_strides) {
  // Drop unit dims; an empty dim means nothing to copy.
  Dims c, d, s;
  for (size_t k = 0; k < counts.size(); ++k) {
    if (counts[k] <= 0) return;
    if (counts[k] == 1) continue;
    c.push_back(counts[k]);
    d.push_back(dst_strides[k]);
    s.push_back(src_strides[k]);
  }
  // Merge dims that are contiguous in both source and destination.
  Dims mc, md, ms;  // built innermost first
  for (int64_t k = static_cast<int64_t>(c.size()) - 1; k >= 0; --k) {
    if (!mc.empty() && d[k] == md.back() * mc.back() &&
        s[k] == ms.back() * mc.back()) {
      mc.back() *= c[k];
    } else {
      mc.push_back(c[k]);
      md.push_back(d[k]);
      ms.push_back(s[k]);
    }
  }
  if (mc.empty()) {
    std::memcpy(dst, src, static_cast<size_t>(es));
    return;
  }
  std::reverse(mc.begin(), mc.end());
  std::reverse(md.begin(), md.end());
  std::reverse(ms.begin(), ms.end());
  const int64_t r = static_cast<int64_t>(mc.size());
  const int64_t n = mc[r - 1];
  const int64_t dstep = md[r - 1] * es, sstep = ms[r - 1] * es;
  if (r == 1) {
    InnerRun(dst, src, es, n, dstep, sstep);
    return;
  }
  Dims idx(r - 1, 0);
  int64_t doff = 0, soff = 0;
  while (true) {
    InnerRun(dst + doff, src + soff, es, n, dstep, sstep);
    int64_t k = r - 2;
    for (; k >= 0; --k) {
      doff += md[k] * es;
      soff += ms[k] * es;
      if (++idx[k] < mc[k]) break;
      doff -= md[k] * es * mc[k];
      soff -= ms[k] * es * mc[k];
      idx[k] = 0;
    }
    if (k < 0) break;
  }
}

absl::StatusOr<Value> DeepCopy(const Value& operand) {
  if (operand.is_tuple()) {
    std::vector<Value> elems;
    for (const Value& e : operand.elements()) {
      absl::StatusOr<Value> c = DeepCopy(e);
      if (!c.ok()) return c;
      elems.push_back(*std::move(c));
    }
    return Value::Tuple(std::move(elems));
  }
  if (!operand.is_array()) return operand;
  absl::StatusOr<Value> out =
      Value::Uninitialized(operand.type(), operand.dims());
  if (!out.ok()) return out;
  if (operand.byte_size() > 0) {
    std::memcpy(out->mutable_raw(), operand.raw(), operand.byte_size());
  }
  return out;
}

absl::StatusOr<Value> Broadcast(const Value& operand, const Dims& out_dims,
                                absl::Span<const int64_t> dimensions) {
  if (absl::Status s = CheckArray(operand, "broadcast"); !s.ok()) return s;
  if (static_cast<int64_t>(dimensions.size()) != operand.rank()) {
    return Invalid(
        absl::StrCat("broadcast: dimensions=", DimsString(dimensions), " has ",
                     dimensions.size(), " entries, operand ",
                     operand.ShapeString(), " has rank ", operand.rank()));
  }
  Dims src_strides(out_dims.size(), 0);
  Dims op_strides = RowMajorStrides(operand.dims());
  for (int64_t i = 0; i < operand.rank(); ++i) {
    int64_t d = dimensions[i];
    if (d < 0 || d >= static_cast<int64_t>(out_dims.size()) ||
        out_dims[d] != operand.dim(i)) {
      return Invalid(
          absl::StrCat("broadcast: operand ", operand.ShapeString(),
                       " dimension ", i, " does not match output dimension ", d,
                       " of ", ArrayShapeString(operand.type(), out_dims)));
    }
    src_strides[d] = op_strides[i];
  }
  absl::StatusOr<Value> out = Value::Uninitialized(operand.type(), out_dims);
  if (!out.ok()) return out;
  if (out->element_count() == 0) return out;
  if (operand.element_count() == 1) {
    FillElements(out->mutable_raw(), operand.raw(), operand.element_size(),
                 out->element_count());
    return out;
  }
  StridedCopy(out->mutable_raw(), operand.raw(), operand.element_size(),
              out_dims, RowMajorStrides(out_dims), src_strides);
  return out;
}

absl::StatusOr<Value> Reshape(const Value& operand, const Dims& out_dims) {
  if (absl::Status s = CheckArray(operand, "reshape"); !s.ok()) return s;
  if (ElementCountOf(out_dims) != operand.element_count()) {
    return Invalid(absl::StrCat("reshape: ", operand.ShapeString(), " to ",
                                ArrayShapeString(operand.type(), out_dims),
                                " changes the element count"));
  }
  return operand.WithDims(out_dims);
}

absl::StatusOr<Value> Transpose(const Value& operand,
                                absl::Span<const int64_t> perm) {
  if (absl::Status s = CheckArray(operand, "transpose"); !s.ok()) return s;
  const int64_t r = operand.rank();
  if (static_cast<int64_t>(perm.size()) != r) {
    return Invalid(absl::StrCat("transpose: dimensions=", DimsString(perm),
                                " is not a permutation of rank ", r));
  }
  std::vector<bool> seen(r, false);
  Dims out_dims(r), src_strides(r);
  Dims op_strides = RowMajorStrides(operand.dims());
  for (int64_t i = 0; i < r; ++i) {
    int64_t p = perm[i];
    if (p < 0 || p >= r || seen[p]) {
      return Invalid(absl::StrCat("transpose: dimensions=", DimsString(perm),
                                  " is not a permutation of rank ", r));
    }
    seen[p] = true;
    out_dims[i] = operand.dim(p);
    src_strides[i] = op_strides[p];
  }
  bool identity = true;
  for (int64_t i = 0; i < r; ++i) identity &= perm[i] == i;
  if (identity) return operand;
  absl::StatusOr<Value> out = Value::Uninitialized(operand.type(), out_dims);
  if (!out.ok()) return out;
  StridedCopy(out->mutable_raw(), operand.raw(), operand.element_size(),
              out_dims, RowMajorStrides(out_dims), src_strides);
  return out;
}

absl::StatusOr<Value> Slice(const Value& operand,
                            absl::Span<const SliceRange> ranges) {
  if (absl::Status s = CheckArray(operand, "slice"); !s.ok()) return s;
  const int64_t r = operand.rank();
  if (static_cast<int64_t>(ranges.size()) != r) {
    return Invalid(absl::StrCat("slice: ", ranges.size(),
                                " ranges for operand ", operand.ShapeString()));
  }
  Dims out_dims(r), src_strides(r);
  Dims op_strides = RowMajorStrides(operand.dims());
  int64_t offset = 0;
  for (int64_t i = 0; i < r; ++i) {
    const SliceRange& sr = ranges[i];
    if (sr.start < 0 || sr.limit > operand.dim(i) || sr.start > sr.limit ||
        sr.stride <= 0) {
      return Invalid(absl::StrCat("slice: range [", sr.start, ":", sr.limit,
                                  ":", sr.stride, "] invalid for dimension ", i,
                                  " of ", operand.ShapeString()));
    }
    out_dims[i] = (sr.limit - sr.start + sr.stride - 1) / sr.stride;
    src_strides[i] = op_strides[i] * sr.stride;
    offset += sr.start * op_strides[i];
  }
  absl::StatusOr<Value> out = Value::Uninitialized(operand.type(), out_dims);
  if (!out.ok()) return out;
  if (out->element_count() == 0) return out;
  StridedCopy(
      out->mutable_raw(), operand.raw() + offset * operand.element_size(),
      operand.element_size(), out_dims, RowMajorStrides(out_dims), src_strides);
  return out;
}

absl::StatusOr<Value> DynamicSlice(const Value& operand,
                                   absl::Span<const int64_t> starts,
                                   absl::Span<const int64_t> sizes) {
  if (absl::Status s = CheckArray(operand, "dynamic-slice"); !s.ok()) return s;
  const int64_t r = operand.rank();
  if (static_cast<int64_t>(starts.size()) != r ||
      static_cast<int64_t>(sizes.size()) != r) {
    return Invalid(absl::StrCat("dynamic-slice: ", starts.size(),
                                " start indices and ", sizes.size(),
                                " sizes for operand ", operand.ShapeString()));
  }
  Dims out_dims(sizes.begin(), sizes.end());
  Dims op_strides = RowMajorStrides(operand.dims());
  int64_t offset = 0;
  for (int64_t i = 0; i < r; ++i) {
    if (sizes[i] < 0 || sizes[i] > operand.dim(i)) {
      return Invalid(absl::StrCat("dynamic-slice: size ", sizes[i],
                                  " exceeds dimension ", i, " of ",
                                  operand.ShapeString()));
    }
    int64_t st = std::clamp<int64_t>(starts[i], 0, operand.dim(i) - sizes[i]);
    offset += st * op_strides[i];
  }
  absl::StatusOr<Value> out = Value::Uninitialized(operand.type(), out_dims);
  if (!out.ok()) return out;
  if (out->element_count() == 0) return out;
  StridedCopy(
      out->mutable_raw(), operand.raw() + offset * operand.element_size(),
      operand.element_size(), out_dims, RowMajorStrides(out_dims), op_strides);
  return out;
}

absl::StatusOr<Value> DynamicUpdateSlice(Value operand, const Value& update,
                                         absl::Span<const int64_t> starts) {
  if (absl::Status s = CheckArray(operand, "dynamic-update-slice"); !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckArray(update, "dynamic-update-slice update");
      !s.ok()) {
    return s;
  }
  const int64_t r = operand.rank();
  if (update.rank() != r || update.type() != operand.type() ||
      static_cast<int64_t>(starts.size()) != r) {
    return Invalid(absl::StrCat("dynamic-update-slice: update ",
                                update.ShapeString(), " or start index count ",
                                starts.size(), " does not fit operand ",
                                operand.ShapeString()));
  }
  Dims op_strides = RowMajorStrides(operand.dims());
  int64_t offset = 0;
  for (int64_t i = 0; i < r; ++i) {
    if (update.dim(i) > operand.dim(i)) {
      return Invalid(absl::StrCat("dynamic-update-slice: update ",
                                  update.ShapeString(), " larger than operand ",
                                  operand.ShapeString()));
    }
    int64_t st =
        std::clamp<int64_t>(starts[i], 0, operand.dim(i) - update.dim(i));
    offset += st * op_strides[i];
  }
  Value out;
  if (operand.unique_buffer()) {
    out = std::move(operand);
  } else {
    absl::StatusOr<Value> copy = DeepCopy(operand);
    if (!copy.ok()) return copy;
    out = *std::move(copy);
  }
  if (update.element_count() > 0) {
    StridedCopy(out.mutable_raw() + offset * out.element_size(), update.raw(),
                out.element_size(), update.dims(), op_strides,
                RowMajorStrides(update.dims()));
  }
  return out;
}

absl::StatusOr<Value> Concatenate(absl::Span<const Value* const> operands,
                                  int64_t dimension) {
  if (operands.empty()) return Invalid("concatenate: no operands");
  const Value& first = *operands[0];
  if (absl::Status s = CheckArray(first, "concatenate"); !s.ok()) return s;
  const int64_t r = first.rank();
  if (dimension < 0 || dimension >= r) {
    return Invalid(absl::StrCat("concatenate: dimension ", dimension,
                                " out of range for ", first.ShapeString()));
  }
  Dims out_dims = first.dims();
  out_dims[dimension] = 0;
  for (const Value* v : operands) {
    if (!v->is_array() || v->type() != first.type() || v->rank() != r) {
      return Invalid(absl::StrCat("concatenate: operand ", v->ShapeString(),
                                  " does not match ", first.ShapeString()));
    }
    for (int64_t i = 0; i < r; ++i) {
      if (i != dimension && v->dim(i) != first.dim(i)) {
        return Invalid(absl::StrCat("concatenate: operand ", v->ShapeString(),
                                    " does not match ", first.ShapeString()));
      }
    }
    out_dims[dimension] += v->dim(dimension);
  }
  absl::StatusOr<Value> out = Value::Uninitialized(first.type(), out_dims);
  if (!out.ok()) return out;
  Dims out_strides = RowMajorStrides(out_dims);
  int64_t pos = 0;
  for (const Value* v : operands) {
    if (v->element_count() > 0) {
      StridedCopy(out->mutable_raw() +
                      pos * out_strides[dimension] * first.element_size(),
                  v->raw(), first.element_size(), v->dims(), out_strides,
                  RowMajorStrides(v->dims()));
    }
    pos += v->dim(dimension);
  }
  return out;
}

absl::StatusOr<Value> Pad(const Value& operand, const Value& padding_value,
                          absl::Span<const PaddingDim> padding) {
  if (absl::Status s = CheckArray(operand, "pad"); !s.ok()) return s;
  const int64_t r = operand.rank();
  if (!padding_value.is_array() || padding_value.element_count() != 1 ||
      padding_value.type() != operand.type()) {
    return Invalid(absl::StrCat("pad: padding value ",
                                padding_value.ShapeString(),
                                " is not a scalar of the operand's type"));
  }
  if (static_cast<int64_t>(padding.size()) != r) {
    return Invalid(absl::StrCat("pad: ", padding.size(),
                                " padding entries for ",
                                operand.ShapeString()));
  }
  Dims out_dims(r);
  for (int64_t i = 0; i < r; ++i) {
    const PaddingDim& p = padding[i];
    if (p.interior < 0) {
      return Invalid("pad: negative interior padding");
    }
    int64_t n = operand.dim(i);
    int64_t size = p.low + p.high + n + (n > 0 ? (n - 1) * p.interior : 0);
    if (size < 0) {
      return Invalid(absl::StrCat("pad: negative output size in dimension ", i,
                                  " of ", operand.ShapeString()));
    }
    out_dims[i] = size;
  }
  absl::StatusOr<Value> out = Value::Uninitialized(operand.type(), out_dims);
  if (!out.ok()) return out;
  const int64_t es = operand.element_size();
  FillElements(out->mutable_raw(), padding_value.raw(), es,
               out->element_count());
  Dims out_strides = RowMajorStrides(out_dims);
  Dims op_strides = RowMajorStrides(operand.dims());
  Dims counts(r), dst_strides(r), src_strides(r);
  int64_t doff = 0, soff = 0;
  for (int64_t i = 0; i < r; ++i) {
    const PaddingDim& p = padding[i];
    int64_t step = p.interior + 1;
    // Operand index j lands at low + j*step; keep 0 <= that < out_dims[i].
    int64_t j0 = 0;
    if (p.low < 0) j0 = (-p.low + step - 1) / step;
    int64_t j1 = operand.dim(i);  // exclusive
    if (out_dims[i] - p.low <= 0) {
      j1 = 0;
    } else {
      j1 = std::min<int64_t>(j1, (out_dims[i] - 1 - p.low) / step + 1);
    }
    if (j1 <= j0) return out;  // nothing of the operand survives
    counts[i] = j1 - j0;
    dst_strides[i] = out_strides[i] * step;
    src_strides[i] = op_strides[i];
    doff += (p.low + j0 * step) * out_strides[i];
    soff += j0 * op_strides[i];
  }
  if (operand.element_count() == 0) return out;
  StridedCopy(out->mutable_raw() + doff * es, operand.raw() + soff * es, es,
              counts, dst_strides, src_strides);
  return out;
}

absl::StatusOr<Value> Iota(PrimitiveType type, const Dims& dims,
                           int64_t iota_dimension) {
  if (iota_dimension < 0 ||
      iota_dimension >= static_cast<int64_t>(dims.size())) {
    return Invalid(absl::StrCat("iota: iota_dimension ", iota_dimension,
                                " out of range for ",
                                ArrayShapeString(type, dims)));
  }
  absl::StatusOr<Value> out = Value::Uninitialized(type, dims);
  if (!out.ok()) return out;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < iota_dimension; ++i) outer *= dims[i];
  for (size_t i = iota_dimension + 1; i < dims.size(); ++i) inner *= dims[i];
  const int64_t n = dims[iota_dimension];
  Value& o = *out;
  VisitElementType(type, [&]<typename T>() {
    using C = typename ElemTraits<T>::Compute;
    T* p = o.mutable_data<T>();
    for (int64_t a = 0; a < outer; ++a) {
      for (int64_t j = 0; j < n; ++j) {
        T v;
        if constexpr (std::is_same_v<C, bool>) {
          v = ElemTraits<T>::Store(j != 0);
        } else {
          v = ElemTraits<T>::Store(static_cast<C>(j));
        }
        T* row = p + (a * n + j) * inner;
        for (int64_t b = 0; b < inner; ++b) row[b] = v;
      }
    }
  });
  return out;
}

absl::StatusOr<Value> Reverse(const Value& operand,
                              absl::Span<const int64_t> dimensions) {
  if (absl::Status s = CheckArray(operand, "reverse"); !s.ok()) return s;
  Dims src_strides = RowMajorStrides(operand.dims());
  int64_t offset = 0;
  for (int64_t d : dimensions) {
    if (d < 0 || d >= operand.rank()) {
      return Invalid(absl::StrCat("reverse: dimension ", d,
                                  " out of range for ", operand.ShapeString()));
    }
    if (src_strides[d] < 0) continue;  // listed twice
    offset += (operand.dim(d) - 1) * src_strides[d];
    src_strides[d] = -src_strides[d];
  }
  absl::StatusOr<Value> out =
      Value::Uninitialized(operand.type(), operand.dims());
  if (!out.ok()) return out;
  if (out->element_count() == 0) return out;
  StridedCopy(out->mutable_raw(),
              operand.raw() + offset * operand.element_size(),
              operand.element_size(), operand.dims(),
              RowMajorStrides(operand.dims()), src_strides);
  return out;
}

absl::StatusOr<Value> Bitcast(const Value& operand, const Shape& from,
                              const Shape& to) {
  if (absl::Status s = CheckArray(operand, "bitcast"); !s.ok()) return s;
  if (!to.IsArray() || !IsSupportedElementType(to.element_type())) {
    return Invalid(
        absl::StrCat("bitcast to unsupported shape ", to.ToString()));
  }
  Dims to_dims = ToDims(to.dimensions());
  int64_t to_bytes =
      ElementCountOf(to_dims) * PrimitiveTypeByteSize(to.element_type());
  if (to_bytes != operand.byte_size()) {
    return Invalid(absl::StrCat("bitcast from ", operand.ShapeString(), " to ",
                                to.ToString(false), " changes the byte size"));
  }
  if (IsDescendingLayout(from) && IsDescendingLayout(to)) {
    return operand.Reinterpret(to.element_type(), to_dims);
  }
  // Physical order of the operand: transpose into major-to-minor order.
  absl::StatusOr<Dims> from_order = MajorToMinor(from);
  if (!from_order.ok()) return from_order.status();
  absl::StatusOr<Dims> to_order = MajorToMinor(to);
  if (!to_order.ok()) return to_order.status();
  absl::StatusOr<Value> physical = Transpose(operand, *from_order);
  if (!physical.ok()) return physical;
  Dims to_physical_dims(to_dims.size());
  for (size_t i = 0; i < to_dims.size(); ++i) {
    to_physical_dims[i] = to_dims[(*to_order)[i]];
  }
  Value as_to = physical->Reinterpret(to.element_type(), to_physical_dims);
  // Logical dim j of the result is physical position p with order[p] == j.
  Dims inverse(to_dims.size());
  for (size_t p = 0; p < to_dims.size(); ++p) inverse[(*to_order)[p]] = p;
  return Transpose(as_to, inverse);
}

}  // namespace hloverlap::interp
