// GEMM custom calls (see gemm.h).
//
// The epilogue's arithmetic is never contracted into fused multiply-adds,
// so its operation sequence is the documented one on every build.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("-ffp-contract=off")
#endif

#include "interp/gemm.h"

#include <cmath>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/absl_compat.h"
#include "hlo/buffer_semantics.h"
#include "interp/dot.h"
#include "interp/elementwise.h"
#include "interp/errors.h"
#include "nlohmann/json.hpp"

namespace hloverlap::interp {
namespace {

using Json = nlohmann::json;

// A proto int64 printed as JSON: a number or a decimal string.
std::optional<int64_t> JsonInt(const Json& j) {
  if (j.is_number_integer()) return j.get<int64_t>();
  if (j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    if (s.empty() || s.size() > 18) return std::nullopt;
    int64_t v = 0;
    size_t i = s[0] == '-' ? 1 : 0;
    if (i == s.size()) return std::nullopt;
    for (; i < s.size(); ++i) {
      if (s[i] < '0' || s[i] > '9') return std::nullopt;
      v = v * 10 + (s[i] - '0');
    }
    return s[0] == '-' ? -v : v;
  }
  return std::nullopt;
}

absl::StatusOr<double> JsonNumber(const Json& config, const char* key,
                                  std::optional<double> absent) {
  auto it = config.find(key);
  if (it == config.end()) {
    if (absent.has_value()) return *absent;
    return Invalid(absl::StrCat("backend_config has no ", key));
  }
  if (!it->is_number()) {
    return Invalid(absl::StrCat("backend_config ", key, " is not a number"));
  }
  return it->get<double>();
}

absl::Status ReadDims(const Json& dnums, const char* key,
                      DimensionVector& out) {
  auto it = dnums.find(key);
  if (it == dnums.end()) return absl::OkStatus();  // proto default: none
  if (!it->is_array()) {
    return Invalid(
        absl::StrCat("dot_dimension_numbers.", key, " is not a list"));
  }
  for (const Json& d : *it) {
    std::optional<int64_t> v = JsonInt(d);
    if (!v.has_value()) {
      return Invalid(absl::StrCat("dot_dimension_numbers.", key,
                                  " has a non-integer entry ", d.dump()));
    }
    out.push_back(*v);
  }
  return absl::OkStatus();
}

struct EpilogueInfo {
  std::string_view name;
  GemmEpilogue epilogue;
  bool bias;
  bool aux;
};

constexpr EpilogueInfo kEpilogues[] = {
    {"DEFAULT", GemmEpilogue::kDefault, false, false},
    {"BIAS", GemmEpilogue::kBias, true, false},
    {"RELU", GemmEpilogue::kRelu, false, false},
    {"BIAS_RELU", GemmEpilogue::kBiasRelu, true, false},
    {"GELU", GemmEpilogue::kGelu, false, false},
    {"GELU_AUX", GemmEpilogue::kGeluAux, false, true},
    {"BIAS_GELU", GemmEpilogue::kBiasGelu, true, false},
    {"BIAS_GELU_AUX", GemmEpilogue::kBiasGeluAux, true, true},
};

absl::StatusOr<const EpilogueInfo*> ReadEpilogue(const Json& config) {
  auto it = config.find("epilogue");
  if (it == config.end()) return &kEpilogues[0];  // proto default
  if (it->is_number_integer()) {
    const int64_t v = it->get<int64_t>();
    if (v >= 0 && v < static_cast<int64_t>(std::size(kEpilogues))) {
      return &kEpilogues[v];
    }
  } else if (it->is_string()) {
    for (const EpilogueInfo& e : kEpilogues) {
      if (e.name == it->get_ref<const std::string&>()) return &e;
    }
  }
  std::vector<std::string> known;
  for (const EpilogueInfo& e : kEpilogues) known.emplace_back(e.name);
  return Invalid(absl::StrCat("unsupported epilogue ", it->dump(),
                              " (the interpreter knows ",
                              absl::StrJoin(known, ", "), ")"));
}

bool IsWorkspaceShape(const Shape& s) {
  return s.IsArray() && s.rank() == 1 &&
         (s.element_type() == PrimitiveType::kS8 ||
          s.element_type() == PrimitiveType::kU8);
}

// Dimensions of dot(lhs, rhs): batch, lhs free, rhs free.
std::optional<std::vector<int64_t>> DotDims(const Shape& lhs, const Shape& rhs,
                                            const DotDimensionNumbers& d) {
  auto in = [](const DimensionVector& v, int64_t x) {
    for (int64_t e : v) {
      if (e == x) return true;
    }
    return false;
  };
  if (!lhs.IsArray() || !rhs.IsArray()) return std::nullopt;
  for (const DimensionVector* v :
       {&d.lhs_batch_dims, &d.lhs_contracting_dims}) {
    for (int64_t x : *v) {
      if (x < 0 || x >= lhs.rank()) return std::nullopt;
    }
  }
  for (const DimensionVector* v :
       {&d.rhs_batch_dims, &d.rhs_contracting_dims}) {
    for (int64_t x : *v) {
      if (x < 0 || x >= rhs.rank()) return std::nullopt;
    }
  }
  std::vector<int64_t> dims;
  for (int64_t x : d.lhs_batch_dims) dims.push_back(lhs.dimensions()[x]);
  for (int64_t x = 0; x < lhs.rank(); ++x) {
    if (!in(d.lhs_batch_dims, x) && !in(d.lhs_contracting_dims, x)) {
      dims.push_back(lhs.dimensions()[x]);
    }
  }
  for (int64_t x = 0; x < rhs.rank(); ++x) {
    if (!in(d.rhs_batch_dims, x) && !in(d.rhs_contracting_dims, x)) {
      dims.push_back(rhs.dimensions()[x]);
    }
  }
  return dims;
}

bool SameDims(const Shape& s, const std::vector<int64_t>& dims) {
  if (!s.IsArray() || s.rank() != static_cast<int64_t>(dims.size())) {
    return false;
  }
  for (int64_t i = 0; i < s.rank(); ++i) {
    if (s.dimensions()[i] != dims[i]) return false;
  }
  return true;
}

// cuBLASLt's GELU (tanh approximation), in the accumulation type, in the
// operation order of JAX's approximate gelu,
//   x * (0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * ((x * x) * x))))),
// the HLO that XLA fuses into the epilogue.
template <typename A>
A Gelu(A x) {
  const A k = static_cast<A>(0.7978845608028654);  // sqrt(2 / pi)
  const A c = static_cast<A>(0.044715);
  const A x3 = (x * x) * x;
  const A inner = k * (x + c * x3);
  return x * (static_cast<A>(0.5) * (static_cast<A>(1) + std::tanh(inner)));
}

// The epilogue over the dot's accumulator `acc` (written in place; `aux`,
// when given, receives the pre-activation values).
template <typename A>
void RunEpilogue(const GemmCall& call, Value& acc, const Value* c,
                 const Value* bias, Value* aux) {
  A* x = acc.mutable_data<A>();
  A* pre = aux != nullptr ? aux->mutable_data<A>() : nullptr;
  const A* cv = c != nullptr ? c->data<A>() : nullptr;
  const A* bv = bias != nullptr ? bias->data<A>() : nullptr;
  const int64_t bias_n = bias != nullptr ? bias->element_count() : 1;
  const A alpha = static_cast<A>(call.alpha);
  const A beta = static_cast<A>(call.beta);
  const bool relu = call.epilogue == GemmEpilogue::kRelu ||
                    call.epilogue == GemmEpilogue::kBiasRelu;
  const bool gelu = call.epilogue == GemmEpilogue::kGelu ||
                    call.epilogue == GemmEpilogue::kGeluAux ||
                    call.epilogue == GemmEpilogue::kBiasGelu ||
                    call.epilogue == GemmEpilogue::kBiasGeluAux;
  const int64_t n = acc.element_count();
  for (int64_t i = 0; i < n; ++i) {
    A v = x[i];
    if (call.alpha != 1) v = alpha * v;
    if (cv != nullptr) v = v + beta * cv[i];
    // The bias covers the trailing dimensions: row-major, it repeats.
    if (bv != nullptr) v = v + bv[i % bias_n];
    if (pre != nullptr) pre[i] = v;
    if (relu) {
      // maximum(x, 0) as HLO defines it (the pattern XLA fused): NaN
      // propagates, -0 stays.
      if (!std::isnan(v) && v < A(0)) v = A(0);
    } else if (gelu) {
      v = Gelu(v);
    }
    x[i] = v;
  }
}

}  // namespace

absl::StatusOr<GemmCall> DecodeGemmCustomCall(const Instruction& instr) {
  const std::string& target = instr.attrs().custom_call_target;
  if (!IsCublasGemmTarget(target)) {
    return Invalid(absl::StrCat("'", target, "' is not a GEMM custom call"));
  }
  if (target == "__cublas$lt$matmul$f8") {
    return Invalid(
        "FP8 GEMMs (scaled f8 operands) are not supported: the interpreter "
        "has no f8 element types");
  }
  const std::string& text = instr.attrs().backend_config;
  Json json = Json::parse(text.begin(), text.end(), nullptr,
                          /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    return Invalid("its backend_config is not a JSON object");
  }
  // XLA nests GemmBackendConfig in GpuBackendConfig since 2023; older
  // dumps have it at the top level.
  auto nested = json.find("gemm_backend_config");
  const Json& config =
      nested != json.end() && nested->is_object() ? *nested : json;

  GemmCall call;
  auto alpha = JsonNumber(config, "alpha_real", std::nullopt);
  if (!alpha.ok()) return alpha.status();
  auto alpha_imag = JsonNumber(config, "alpha_imag", 0.0);
  if (!alpha_imag.ok()) return alpha_imag.status();
  auto beta = JsonNumber(config, "beta", 0.0);
  if (!beta.ok()) return beta.status();
  if (*alpha_imag != 0) {
    return Invalid(absl::StrCat("complex alpha (alpha_imag ", *alpha_imag,
                                ") is not supported"));
  }
  call.alpha = *alpha;
  call.beta = *beta;
  if (auto it = config.find("damax_output");
      it != config.end() && it->is_boolean() && it->get<bool>()) {
    return Invalid("damax_output (an FP8 amax output) is not supported");
  }
  auto dn = config.find("dot_dimension_numbers");
  if (dn == config.end() || !dn->is_object()) {
    return Invalid("backend_config has no dot_dimension_numbers");
  }
  for (auto [key, out] :
       {std::pair{"lhs_batch_dimensions", &call.dnums.lhs_batch_dims},
        std::pair{"lhs_contracting_dimensions",
                  &call.dnums.lhs_contracting_dims},
        std::pair{"rhs_batch_dimensions", &call.dnums.rhs_batch_dims},
        std::pair{"rhs_contracting_dimensions",
                  &call.dnums.rhs_contracting_dims}}) {
    if (absl::Status s = ReadDims(*dn, key, *out); !s.ok()) return s;
  }
  absl::StatusOr<const EpilogueInfo*> epilogue = ReadEpilogue(config);
  if (!epilogue.ok()) return epilogue.status();
  call.epilogue = (*epilogue)->epilogue;
  call.has_bias = (*epilogue)->bias;
  call.has_aux = (*epilogue)->aux;
  call.has_c = call.beta != 0;

  const int64_t want = 2 + (call.has_c ? 1 : 0) + (call.has_bias ? 1 : 0);
  if (instr.operand_count() != want) {
    return Invalid(absl::StrCat("expected ", want, " operands (a, b",
                                call.has_c ? ", c for beta != 0" : "",
                                call.has_bias ? ", the bias" : "",
                                " for epilogue ", AsAbsl((*epilogue)->name),
                                "), has ", instr.operand_count()));
  }
  // Result: d, or (d, [aux,] [workspace]).
  const Shape& shape = instr.shape();
  const Shape& a = instr.operand(0)->shape();
  const Shape& b = instr.operand(1)->shape();
  std::optional<std::vector<int64_t>> dims = DotDims(a, b, call.dnums);
  if (shape.IsTuple()) {
    call.tuple_result = true;
    const int64_t n = shape.tuple_size();
    const int64_t base = call.has_aux ? 2 : 1;
    if (n < base || n > base + 1 ||
        (n == base + 1 && !IsWorkspaceShape(shape.tuple_shapes(n - 1))) ||
        (call.has_aux && dims.has_value() &&
         !SameDims(shape.tuple_shapes(1), *dims))) {
      return Invalid(absl::StrCat("result ", shape.ToString(false),
                                  " is not (d, ", call.has_aux ? "aux, " : "",
                                  "workspace s8[N]) or (d",
                                  call.has_aux ? ", aux" : "", ")"));
    }
    call.d_shape = shape.tuple_shapes(0);
    if (call.has_aux) call.aux_shape = shape.tuple_shapes(1);
    call.has_workspace = n == base + 1;
    if (call.has_workspace) call.workspace_shape = shape.tuple_shapes(n - 1);
  } else {
    if (call.has_aux) {
      return Invalid(absl::StrCat("epilogue ", AsAbsl((*epilogue)->name),
                                  " needs a tuple result (d, aux, ...)"));
    }
    call.d_shape = shape;
  }
  if (!dims.has_value() || !SameDims(call.d_shape, *dims) ||
      (call.has_aux && !SameDims(call.aux_shape, *dims))) {
    return Invalid(absl::StrCat(
        "the dot of ", a.ToString(false), " and ", b.ToString(false),
        " with its dot_dimension_numbers does not give the result ",
        call.d_shape.ToString(false)));
  }
  const PrimitiveType out = call.d_shape.element_type();
  const bool is_float = IsFloatingPointType(out);
  if (!is_float && (call.alpha != 1 || call.has_c || call.has_bias ||
                    call.epilogue != GemmEpilogue::kDefault)) {
    return Invalid(absl::StrCat("an ", AsAbsl(PrimitiveTypeName(out)),
                                " GEMM with alpha, beta or an epilogue is "
                                "not supported"));
  }
  if (call.has_c && !SameDims(instr.operand(2)->shape(), *dims)) {
    return Invalid(absl::StrCat("c ", instr.operand(2)->shape().ToString(false),
                                " does not have the result's dimensions"));
  }
  if (call.has_bias) {
    const Shape& bias = instr.operand(want - 1)->shape();
    bool trailing = bias.IsArray() && bias.rank() >= 1 &&
                    bias.rank() <= static_cast<int64_t>(dims->size());
    for (int64_t i = 0; trailing && i < bias.rank(); ++i) {
      trailing = bias.dimensions()[bias.rank() - 1 - i] ==
                 (*dims)[dims->size() - 1 - i];
    }
    if (!trailing) {
      return Invalid(absl::StrCat("bias ", bias.ToString(false),
                                  " is not the trailing dimensions of the "
                                  "result ",
                                  call.d_shape.ToString(false)));
    }
  }
  return call;
}

absl::StatusOr<Value> EvalGemm(const GemmCall& call,
                               const std::vector<Value>& operands,
                               const Value& workspace) {
  for (const Value& v : operands) {
    if (!v.is_array()) return Invalid("GEMM operands must be arrays");
  }
  if (operands.size() < 2) return Invalid("GEMM needs two operands");
  const PrimitiveType out = call.d_shape.element_type();
  const bool f64 = out == PrimitiveType::kF64 ||
                   operands[0].type() == PrimitiveType::kF64 ||
                   operands[1].type() == PrimitiveType::kF64;
  const bool plain = call.alpha == 1 && !call.has_c && !call.has_bias &&
                     call.epilogue == GemmEpilogue::kDefault;
  const PrimitiveType acc_type =
      !IsFloatingPointType(out) || plain
          ? out
          : (f64 ? PrimitiveType::kF64 : PrimitiveType::kF32);
  absl::StatusOr<Value> d = Dot(operands[0], operands[1], call.dnums, acc_type);
  if (!d.ok()) return d.status();
  std::optional<Value> aux;
  if (!plain) {
    size_t next = 2;
    std::optional<Value> c, bias;
    if (call.has_c) {
      absl::StatusOr<Value> v = Convert(operands[next++], acc_type);
      if (!v.ok()) return v.status();
      c = *std::move(v);
    }
    if (call.has_bias) {
      if (next >= operands.size()) return Invalid("GEMM bias is missing");
      absl::StatusOr<Value> v = Convert(operands[next], acc_type);
      if (!v.ok()) return v.status();
      bias = *std::move(v);
    }
    if (call.has_aux) {
      absl::StatusOr<Value> v = Value::Uninitialized(acc_type, d->dims());
      if (!v.ok()) return v.status();
      aux = *std::move(v);
    }
    if (c.has_value() && c->element_count() != d->element_count()) {
      return Invalid("GEMM c does not have the result's size");
    }
    if (bias.has_value() && (bias->element_count() == 0 ||
                             d->element_count() % bias->element_count() != 0)) {
      return Invalid("GEMM bias does not divide the result");
    }
    const Value* cp = c.has_value() ? &*c : nullptr;
    const Value* bp = bias.has_value() ? &*bias : nullptr;
    Value* ap = aux.has_value() ? &*aux : nullptr;
    if (acc_type == PrimitiveType::kF64) {
      RunEpilogue<double>(call, *d, cp, bp, ap);
    } else {
      RunEpilogue<float>(call, *d, cp, bp, ap);
    }
    absl::StatusOr<Value> rounded = Convert(*d, out);
    if (!rounded.ok()) return rounded.status();
    d = *std::move(rounded);
    if (aux.has_value()) {
      absl::StatusOr<Value> a = Convert(*aux, call.aux_shape.element_type());
      if (!a.ok()) return a.status();
      aux = *std::move(a);
    }
  }
  if (!call.tuple_result) return d;
  std::vector<Value> elems{*std::move(d)};
  if (aux.has_value()) elems.push_back(*std::move(aux));
  if (call.has_workspace) elems.push_back(workspace);
  return Value::Tuple(std::move(elems));
}

}  // namespace hloverlap::interp
