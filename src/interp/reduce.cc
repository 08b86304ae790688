// Hot kernels: optimized even in unoptimized (debug) GCC builds.
#if defined(__GNUC__) && !defined(__clang__) && !defined(__OPTIMIZE__)
#pragma GCC optimize("O2")
#endif

#include "interp/reduce.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "interp/elementwise.h"
#include "interp/errors.h"
#include "interp/shape_ops.h"

namespace hloverlap::interp {

absl::StatusOr<Value> ScalarAt(const Value& array, int64_t index) {
  absl::StatusOr<Value> v = Value::Uninitialized(array.type(), {});
  if (!v.ok()) return v;
  std::memcpy(v->mutable_raw(), array.raw() + index * array.element_size(),
              array.element_size());
  return v;
}

namespace {

// The shape of a reduction: the kept dimensions, and the input's
// dimensions of size > 1 in groups of adjacent ones all reduced or all
// kept, with each group's output stride (0 for reduced groups).
struct ReduceLayout {
  Dims out_dims;
  int64_t out_count = 0;
  Dims count;       // elements per group
  Dims reduced;     // 1 for a reduced group
  Dims out_stride;  // per group
};

absl::StatusOr<ReduceLayout> LayoutOf(absl::Span<const Value> inputs,
                                      absl::Span<const Value> inits,
                                      absl::Span<const int64_t> dimensions) {
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
  ReduceLayout l;
  for (int64_t d = 0; d < r; ++d) {
    if (!reduced[d]) l.out_dims.push_back(first.dim(d));
  }
  l.out_count = ElementCountOf(l.out_dims);
  for (int64_t d = 0; d < r; ++d) {
    if (first.dim(d) == 1) continue;
    if (!l.count.empty() &&
        l.reduced.back() == static_cast<int64_t>(reduced[d])) {
      l.count.back() *= first.dim(d);
    } else {
      l.count.push_back(first.dim(d));
      l.reduced.push_back(reduced[d]);
    }
  }
  const int64_t g = static_cast<int64_t>(l.count.size());
  l.out_stride.assign(g, 0);
  int64_t s = 1;
  for (int64_t i = g - 1; i >= 0; --i) {
    if (!l.reduced[i]) {
      l.out_stride[i] = s;
      s *= l.count[i];
    }
  }
  return l;
}

// One input reduced with `op` straight on the bytes, the innermost group a
// run at a time.
absl::StatusOr<std::vector<Value>> FastReduce(const Value& input,
                                              const Value& init, Opcode op,
                                              const ReduceLayout& l) {
  absl::StatusOr<Value> out =
      Broadcast(init, l.out_dims, {});  // filled with the init value
  if (!out.ok()) return out.status();
  if (input.element_count() == 0 || l.out_count == 0) {
    return std::vector<Value>{*std::move(out)};
  }
  const int64_t es = input.element_size();
  uint8_t* acc = out->mutable_raw();
  const uint8_t* in = input.raw();
  const int64_t g = static_cast<int64_t>(l.count.size());
  if (g == 0) {  // every dim has size 1
    absl::Status s = CombineSequential(op, input.type(), acc, in, 1);
    if (!s.ok()) return s;
    return std::vector<Value>{*std::move(out)};
  }
  const int64_t inner = l.count[g - 1];
  const bool inner_reduced = l.reduced[g - 1];
  Dims idx(g, 0);
  int64_t in_off = 0, out_off = 0;
  while (true) {
    absl::Status s =
        inner_reduced ? CombineSequential(op, input.type(), acc + out_off * es,
                                          in + in_off * es, inner)
                      : CombineElementwise(op, input.type(), acc + out_off * es,
                                           in + in_off * es, inner);
    if (!s.ok()) return s;
    in_off += inner;
    int64_t k = g - 2;
    for (; k >= 0; --k) {
      out_off += l.out_stride[k];
      if (++idx[k] < l.count[k]) break;
      out_off -= l.out_stride[k] * l.count[k];
      idx[k] = 0;
    }
    if (k < 0) break;
  }
  return std::vector<Value>{*std::move(out)};
}

// Any number of inputs, the reduction computation applied element by
// element.
absl::StatusOr<std::vector<Value>> GenericReduce(absl::Span<const Value> inputs,
                                                 absl::Span<const Value> inits,
                                                 const Reducer& reducer,
                                                 const ReduceLayout& l) {
  const Value& first = inputs[0];
  const size_t n_in = inputs.size();
  const int64_t g = static_cast<int64_t>(l.count.size());
  std::vector<std::vector<Value>> acc(
      l.out_count, std::vector<Value>(inits.begin(), inits.end()));
  if (first.element_count() > 0 && l.out_count > 0) {
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
        out_off += l.out_stride[k];
        if (++idx[k] < l.count[k]) break;
        out_off -= l.out_stride[k] * l.count[k];
        idx[k] = 0;
      }
    }
  }
  std::vector<Value> results;
  for (size_t j = 0; j < n_in; ++j) {
    absl::StatusOr<Value> out =
        Value::Uninitialized(inits[j].type(), l.out_dims);
    if (!out.ok()) return out.status();
    const int64_t es = out->element_size();
    for (int64_t o = 0; o < l.out_count; ++o) {
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

}  // namespace

absl::StatusOr<std::vector<Value>> Reduce(absl::Span<const Value> inputs,
                                          absl::Span<const Value> inits,
                                          absl::Span<const int64_t> dimensions,
                                          const Reducer& reducer) {
  absl::StatusOr<ReduceLayout> layout = LayoutOf(inputs, inits, dimensions);
  if (!layout.ok()) return layout.status();
  if (reducer.fast_op.has_value() && inputs.size() == 1 &&
      inits[0].type() == inputs[0].type()) {
    return FastReduce(inputs[0], inits[0], *reducer.fast_op, *layout);
  }
  if (!reducer.generic) {
    return Invalid("reduce: no way to apply the reduction computation");
  }
  return GenericReduce(inputs, inits, reducer, *layout);
}

}  // namespace hloverlap::interp
