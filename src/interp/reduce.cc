// Hot kernels: optimized even in unoptimized (debug) GCC builds.
#if defined(__GNUC__) && !defined(__clang__) && !defined(__OPTIMIZE__)
#pragma GCC optimize("O2")
#endif

#include "interp/reduce.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "interp/elementwise.h"
#include "interp/shape_ops.h"

namespace hloverlap::interp {
namespace {

absl::Status Invalid(std::string msg) {
  return absl::InvalidArgumentError(std::move(msg));
}

}  // namespace

absl::StatusOr<Value> ScalarAt(const Value& array, int64_t index) {
  absl::StatusOr<Value> v = Value::Uninitialized(array.type(), {});
  if (!v.ok()) return v;
  std::memcpy(v->mutable_raw(), array.raw() + index * array.element_size(),
              array.element_size());
  return v;
}

absl::StatusOr<std::vector<Value>> Reduce(absl::Span<const Value> inputs,
                                          absl::Span<const Value> inits,
                                          absl::Span<const int64_t> dimensions,
                                          const Reducer& reducer) {
  if (inputs.empty() || inputs.size() != inits.size()) {
    return Invalid(absl::StrCat("reduce: ", inputs.size(), " inputs and ",
                                inits.size(), " init values"));
  }
  const Value& first = inputs[0];
  for (const Value& in : inputs) {
    if (!in.is_array() || in.dims() != first.dims()) {
      return Invalid(absl::StrCat("reduce: inputs ", first.ShapeString(),
                                  " and ", in.ShapeString(),
                                  " have different dimensions"));
    }
  }
  for (size_t i = 0; i < inits.size(); ++i) {
    if (!inits[i].is_array() || inits[i].rank() != 0) {
      return Invalid(absl::StrCat("reduce: init value ", inits[i].ShapeString(),
                                  " is not a scalar"));
    }
  }
  const int64_t r = first.rank();
  std::vector<bool> reduced(r, false);
  for (int64_t d : dimensions) {
    if (d < 0 || d >= r || reduced[d]) {
      return Invalid(absl::StrCat("reduce: invalid dimension ", d, " for ",
                                  first.ShapeString()));
    }
    reduced[d] = true;
  }
  Dims out_dims;
  for (int64_t d = 0; d < r; ++d) {
    if (!reduced[d]) out_dims.push_back(first.dim(d));
  }
  const int64_t out_count = ElementCountOf(out_dims);

  // Groups of adjacent dims that are all reduced or all kept.
  Dims gcount, greduced;
  for (int64_t d = 0; d < r; ++d) {
    if (first.dim(d) == 1) continue;
    if (!gcount.empty() &&
        greduced.back() == static_cast<int64_t>(reduced[d])) {
      gcount.back() *= first.dim(d);
    } else {
      gcount.push_back(first.dim(d));
      greduced.push_back(reduced[d]);
    }
  }
  const int64_t g = static_cast<int64_t>(gcount.size());
  // Output stride of each group (0 for reduced groups).
  Dims gout(g, 0);
  {
    int64_t s = 1;
    for (int64_t i = g - 1; i >= 0; --i) {
      if (!greduced[i]) {
        gout[i] = s;
        s *= gcount[i];
      }
    }
  }

  if (reducer.fast_op.has_value() && inputs.size() == 1 &&
      inits[0].type() == first.type()) {
    const Opcode op = *reducer.fast_op;
    absl::StatusOr<Value> out =
        Broadcast(inits[0], out_dims, {});  // filled with the init value
    if (!out.ok()) return out.status();
    if (first.element_count() == 0 || out_count == 0) {
      return std::vector<Value>{*std::move(out)};
    }
    const int64_t es = first.element_size();
    uint8_t* acc = out->mutable_raw();
    const uint8_t* in = first.raw();
    if (g == 0) {  // every dim has size 1
      absl::Status s = CombineSequential(op, first.type(), acc, in, 1);
      if (!s.ok()) return s;
      return std::vector<Value>{*std::move(out)};
    }
    const int64_t inner = gcount[g - 1];
    const bool inner_reduced = greduced[g - 1];
    Dims idx(g, 0);
    int64_t in_off = 0, out_off = 0;
    while (true) {
      absl::Status s =
          inner_reduced
              ? CombineSequential(op, first.type(), acc + out_off * es,
                                  in + in_off * es, inner)
              : CombineElementwise(op, first.type(), acc + out_off * es,
                                   in + in_off * es, inner);
      if (!s.ok()) return s;
      in_off += inner;
      int64_t k = g - 2;
      for (; k >= 0; --k) {
        out_off += gout[k];
        if (++idx[k] < gcount[k]) break;
        out_off -= gout[k] * gcount[k];
        idx[k] = 0;
      }
      if (k < 0) break;
    }
    return std::vector<Value>{*std::move(out)};
  }

  if (!reducer.generic) {
    return Invalid("reduce: no way to apply the reduction computation");
  }
  const size_t n_in = inputs.size();
  std::vector<std::vector<Value>> acc(
      out_count, std::vector<Value>(inits.begin(), inits.end()));
  if (first.element_count() > 0 && out_count > 0) {
    Dims idx(g, 0);
    int64_t out_off = 0;
    std::vector<Value> xs(n_in);
    for (int64_t i = 0; i < first.element_count(); ++i) {
      for (size_t j = 0; j < n_in; ++j) {
        absl::StatusOr<Value> x = ScalarAt(inputs[j], i);
        if (!x.ok()) return x.status();
        xs[j] = *std::move(x);
      }
      absl::StatusOr<std::vector<Value>> next =
          reducer.generic(acc[out_off], xs);
      if (!next.ok()) return next.status();
      if (next->size() != n_in) {
        return Invalid("reduce: computation returned the wrong arity");
      }
      acc[out_off] = *std::move(next);
      for (int64_t k = g - 1; k >= 0; --k) {
        out_off += gout[k];
        if (++idx[k] < gcount[k]) break;
        out_off -= gout[k] * gcount[k];
        idx[k] = 0;
      }
    }
  }
  std::vector<Value> results;
  for (size_t j = 0; j < n_in; ++j) {
    absl::StatusOr<Value> out = Value::Uninitialized(inits[j].type(), out_dims);
    if (!out.ok()) return out.status();
    const int64_t es = out->element_size();
    for (int64_t o = 0; o < out_count; ++o) {
      const Value& a = acc[o][j];
      if (!a.is_array() || a.type() != inits[j].type() ||
          a.element_count() != 1) {
        return Invalid(absl::StrCat(
            "reduce: computation returned ", a.ShapeString(), ", expected a ",
            std::string(PrimitiveTypeName(inits[j].type())), " scalar"));
      }
      std::memcpy(out->mutable_raw() + o * es, a.raw(), es);
    }
    results.push_back(*std::move(out));
  }
  return results;
}

}  // namespace hloverlap::interp
