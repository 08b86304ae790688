#include "interp/input_file.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "hlo/computation.h"
#include "nlohmann/json.hpp"

namespace hloverlap::interp {
namespace {

using json = nlohmann::json;

absl::Status Invalid(const std::string& where, const std::string& msg) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", msg));
}

void Flatten(const json& j, std::vector<const json*>& out) {
  if (j.is_array()) {
    for (const json& e : j) Flatten(e, out);
  } else {
    out.push_back(&j);
  }
}

absl::Status SetElement(Value& v, int64_t i, const json& j,
                        const std::string& where) {
  double d = 0;
  bool is_int = false;
  int64_t iv = 0;
  uint64_t uv = 0;
  bool is_uint = false;
  if (j.is_boolean()) {
    is_int = true;
    iv = j.get<bool>() ? 1 : 0;
    d = static_cast<double>(iv);
  } else if (j.is_number_unsigned()) {
    is_uint = true;
    uv = j.get<uint64_t>();
    d = static_cast<double>(uv);
    if (uv <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      is_int = true;
      iv = static_cast<int64_t>(uv);
    }
  } else if (j.is_number_integer()) {
    is_int = true;
    iv = j.get<int64_t>();
    d = static_cast<double>(iv);
  } else if (j.is_number_float()) {
    d = j.get<double>();
  } else if (j.is_string()) {
    const std::string s = j.get<std::string>();
    if (s == "nan") {
      d = std::numeric_limits<double>::quiet_NaN();
    } else if (s == "inf") {
      d = std::numeric_limits<double>::infinity();
    } else if (s == "-inf") {
      d = -std::numeric_limits<double>::infinity();
    } else {
      return Invalid(where, absl::StrCat("bad number '", s, "'"));
    }
  } else {
    return Invalid(where, absl::StrCat("expected a number, got ",
                                       std::string(j.type_name())));
  }
  VisitElementType(v.type(), [&]<typename T>() {
    T* p = v.mutable_data<T>();
    if constexpr (std::is_same_v<T, pred_t>) {
      p[i] = pred_t{static_cast<uint8_t>(d != 0)};
    } else if constexpr (std::is_same_v<T, bf16_t>) {
      p[i] = bf16_t{F32ToBf16(static_cast<float>(d))};
    } else if constexpr (std::is_same_v<T, f16_t>) {
      p[i] = f16_t{F64ToF16(d)};
    } else if constexpr (std::is_floating_point_v<T>) {
      p[i] = static_cast<T>(d);
    } else if constexpr (std::is_unsigned_v<T>) {
      if (is_uint) {
        p[i] = static_cast<T>(uv);
      } else if (is_int) {
        p[i] = static_cast<T>(iv);
      } else {
        p[i] = std::isnan(d) || d <= 0 ? T(0)
               : d >= static_cast<double>(std::numeric_limits<T>::max())
                   ? std::numeric_limits<T>::max()
                   : static_cast<T>(d);
      }
    } else {
      if (is_int) {
        p[i] = static_cast<T>(iv);
      } else if (std::isnan(d)) {
        p[i] = 0;
      } else if (d <= static_cast<double>(std::numeric_limits<T>::min())) {
        p[i] = std::numeric_limits<T>::min();
      } else if (d >= static_cast<double>(std::numeric_limits<T>::max())) {
        p[i] = std::numeric_limits<T>::max();
      } else {
        p[i] = static_cast<T>(d);
      }
    }
  });
  return absl::OkStatus();
}

absl::StatusOr<Value> ArrayFromJson(const json& j, const Shape& shape,
                                    const std::string& base_dir,
                                    const std::string& where) {
  if (!shape.IsArray() || !IsSupportedElementType(shape.element_type())) {
    return Invalid(where, absl::StrCat("cannot read a value of shape ",
                                       shape.ToString(false)));
  }
  absl::StatusOr<Value> v =
      Value::Uninitialized(shape.element_type(), ToDims(shape.dimensions()));
  if (!v.ok()) return v;
  const int64_t n = v->element_count();
  if (j.is_object() && j.contains("raw_file")) {
    if (!j["raw_file"].is_string()) {
      return Invalid(where, "raw_file must be a string");
    }
    std::filesystem::path p(j["raw_file"].get<std::string>());
    if (p.is_relative()) p = std::filesystem::path(base_dir) / p;
    std::ifstream in(p, std::ios::binary);
    if (!in) return Invalid(where, absl::StrCat("cannot open ", p.string()));
    std::string bytes((std::istreambuf_iterator<char>(in)),
                      std::istreambuf_iterator<char>());
    if (static_cast<int64_t>(bytes.size()) != v->byte_size()) {
      return Invalid(where, absl::StrCat(p.string(), " has ", bytes.size(),
                                         " bytes, ", shape.ToString(false),
                                         " needs ", v->byte_size()));
    }
    if (!bytes.empty())
      std::memcpy(v->mutable_raw(), bytes.data(), bytes.size());
    if (shape.element_type() == PrimitiveType::kPred) {
      for (int64_t i = 0; i < n; ++i) v->mutable_raw()[i] = v->raw()[i] != 0;
    }
    return v;
  }
  std::vector<const json*> elems;
  Flatten(j, elems);
  if (elems.size() == 1 && !j.is_array()) {
    for (int64_t i = 0; i < n; ++i) {
      if (absl::Status s = SetElement(*v, i, *elems[0], where); !s.ok()) {
        return s;
      }
    }
    return v;
  }
  if (static_cast<int64_t>(elems.size()) != n) {
    return Invalid(
        where, absl::StrCat(elems.size(), " values for ", shape.ToString(false),
                            " (", n, " elements)"));
  }
  for (int64_t i = 0; i < n; ++i) {
    if (absl::Status s = SetElement(*v, i, *elems[i], where); !s.ok()) {
      return s;
    }
  }
  return v;
}

bool IsRandom(const json& j) {
  return j.is_null() ||
         (j.is_object() && j.contains("random") && j["random"] == true);
}

// Per-device values of one parameter (or tuple element).
absl::Status ParamFromJson(const json& j, const Shape& shape,
                           const std::vector<Value>& random,
                           const std::string& base_dir,
                           const std::string& where, std::vector<Value>& out) {
  const size_t devices = random.size();
  out.assign(devices, Value());
  if (IsRandom(j)) {
    out = random;
    return absl::OkStatus();
  }
  if (j.is_object() && j.contains("tuple")) {
    if (!shape.IsTuple() || !j["tuple"].is_array() ||
        static_cast<int64_t>(j["tuple"].size()) != shape.tuple_size()) {
      return Invalid(where, absl::StrCat("tuple entry does not match ",
                                         shape.ToString(false)));
    }
    std::vector<std::vector<Value>> elems(devices);
    for (int64_t e = 0; e < shape.tuple_size(); ++e) {
      std::vector<Value> sub_random;
      for (const Value& r : random) sub_random.push_back(r.element(e));
      std::vector<Value> sub;
      if (absl::Status s =
              ParamFromJson(j["tuple"][e], shape.tuple_shapes(e), sub_random,
                            base_dir, absl::StrCat(where, " element ", e), sub);
          !s.ok()) {
        return s;
      }
      for (size_t d = 0; d < devices; ++d) elems[d].push_back(sub[d]);
    }
    for (size_t d = 0; d < devices; ++d) out[d] = Value::Tuple(elems[d]);
    return absl::OkStatus();
  }
  if (shape.IsTuple()) {
    return Invalid(where,
                   absl::StrCat("parameter is a tuple ", shape.ToString(false),
                                "; use {\"tuple\": [...]}"));
  }
  if (j.is_object() && j.contains("per_device")) {
    const json& pd = j["per_device"];
    if (!pd.is_array() || pd.size() != devices) {
      return Invalid(where, absl::StrCat("per_device needs ", devices,
                                         " entries, one per device"));
    }
    for (size_t d = 0; d < devices; ++d) {
      if (IsRandom(pd[d])) {
        out[d] = random[d];
        continue;
      }
      absl::StatusOr<Value> v = ArrayFromJson(
          pd[d], shape, base_dir, absl::StrCat(where, " device ", d));
      if (!v.ok()) return v.status();
      out[d] = *std::move(v);
    }
    return absl::OkStatus();
  }
  absl::StatusOr<Value> v = ArrayFromJson(j, shape, base_dir, where);
  if (!v.ok()) return v.status();
  for (size_t d = 0; d < devices; ++d) out[d] = *v;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<std::vector<Value>>> ParseInputs(
    std::string_view json_text, const Module& module, int64_t num_devices,
    const std::vector<std::vector<Value>>& random,
    const std::string& base_dir) {
  json root = json::parse(json_text.begin(), json_text.end(), nullptr,
                          /*allow_exceptions=*/false);
  if (root.is_discarded()) {
    return absl::InvalidArgumentError("inputs: not valid JSON");
  }
  if (!root.is_object() || !root.contains("parameters") ||
      !root["parameters"].is_array()) {
    return absl::InvalidArgumentError(
        "inputs: expected an object {\"parameters\": [...]}");
  }
  const json& params = root["parameters"];
  const Computation* entry = module.entry();
  if (entry == nullptr) {
    return absl::InvalidArgumentError("module has no entry computation");
  }
  if (static_cast<int64_t>(params.size()) > entry->num_parameters()) {
    return absl::InvalidArgumentError(
        absl::StrCat("inputs: ", params.size(),
                     " parameters given, the entry computation "
                     "has ",
                     entry->num_parameters()));
  }
  if (static_cast<int64_t>(random.size()) != num_devices) {
    return absl::InternalError("random inputs for the wrong device count");
  }
  std::vector<std::vector<Value>> out = random;
  for (size_t p = 0; p < params.size(); ++p) {
    std::vector<Value> rand_p;
    for (int64_t d = 0; d < num_devices; ++d) rand_p.push_back(random[d][p]);
    std::vector<Value> vals;
    absl::Status s =
        ParamFromJson(params[p], entry->parameter(p)->shape(), rand_p, base_dir,
                      absl::StrCat("inputs: parameter ", p, " (",
                                   entry->parameter(p)->name(), ")"),
                      vals);
    if (!s.ok()) return s;
    for (int64_t d = 0; d < num_devices; ++d) out[d][p] = vals[d];
  }
  return out;
}

absl::StatusOr<std::vector<std::vector<Value>>> ReadInputFile(
    const std::string& path, const Module& module, int64_t num_devices,
    const std::vector<std::vector<Value>>& random) {
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(absl::StrCat(path, ": cannot open inputs file"));
  }
  std::stringstream ss;
  ss << in.rdbuf();
  std::string base = std::filesystem::path(path).parent_path().string();
  if (base.empty()) base = ".";
  absl::StatusOr<std::vector<std::vector<Value>>> r =
      ParseInputs(ss.str(), module, num_devices, random, base);
  if (!r.ok()) {
    return absl::Status(r.status().code(),
                        absl::StrCat(path, ": ", r.status().message()));
  }
  return r;
}

}  // namespace hloverlap::interp
