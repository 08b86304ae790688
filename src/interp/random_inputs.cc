#include "interp/random_inputs.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "hlo/computation.h"
#include "hlo/diagnostic.h"

namespace hloverlap::interp {

uint64_t Mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t MixKey(uint64_t a, uint64_t b) {
  return Mix64(a ^ Mix64(b + 0x632be59bd9b4e019ull));
}

uint64_t HashString(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return Mix64(h);
}

absl::StatusOr<Value> RandomArray(PrimitiveType type, const Dims& dims,
                                  uint64_t stream, double float_scale) {
  absl::StatusOr<Value> out = Value::Uninitialized(type, dims);
  if (!out.ok()) return out;
  Value& o = *out;
  const int64_t n = o.element_count();
  const bool scalar = dims.empty();
  const uint64_t base = Mix64(stream);
  VisitElementType(type, [&]<typename T>() {
    T* p = o.mutable_data<T>();
    for (int64_t i = 0; i < n; ++i) {
      const uint64_t r =
          Mix64(base + static_cast<uint64_t>(i) * 0xd1b54a32d192ed03ull);
      if constexpr (std::is_same_v<T, pred_t>) {
        p[i] = pred_t{static_cast<uint8_t>(r >> 63)};
      } else if constexpr (std::is_same_v<T, double>) {
        p[i] =
            (std::ldexp(static_cast<double>(r >> 11), -52) - 1.0) * float_scale;
      } else if constexpr (kIsFloatStorage<T>) {
        float f = std::ldexp(static_cast<float>(r >> 40), -23) - 1.0f;
        if (float_scale != 1) {
          f = static_cast<float>(static_cast<double>(f) * float_scale);
        }
        p[i] = ElemTraits<T>::Store(f);
      } else if constexpr (std::is_signed_v<T>) {
        p[i] = scalar ? static_cast<T>(r >> 62)
                      : static_cast<T>(static_cast<int>(r >> 60) - 8);
      } else {
        p[i] = scalar ? static_cast<T>(r >> 62) : static_cast<T>(r >> 60);
      }
    }
  });
  return out;
}

absl::StatusOr<Value> RandomValue(const Shape& shape, uint64_t stream,
                                  double float_scale) {
  if (shape.IsTuple()) {
    std::vector<Value> elems;
    for (int64_t j = 0; j < shape.tuple_size(); ++j) {
      absl::StatusOr<Value> e =
          RandomValue(shape.tuple_shapes(j), MixKey(stream, j), float_scale);
      if (!e.ok()) return e;
      elems.push_back(*std::move(e));
    }
    return Value::Tuple(std::move(elems));
  }
  if (shape.IsToken()) return Value::Token();
  if (!shape.IsArray()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot make a random value of shape ", shape.ToString()));
  }
  if (!IsSupportedElementType(shape.element_type())) {
    return UnsupportedTypeError(shape.element_type(), "a parameter");
  }
  return RandomArray(shape.element_type(), ToDims(shape.dimensions()), stream,
                     float_scale);
}

bool IsReplicatedSharding(std::string_view sharding) {
  std::string s;
  for (char c : sharding) {
    if (c != ' ' && c != '\n' && c != '\t') s += c;
  }
  if (s == "{replicated}") return true;
  if (s.rfind("{mesh[", 0) == 0) {
    if (s.size() >= 12 && s.compare(s.size() - 12, 12, ",replicated}") == 0) {
      return true;
    }
    // {mesh[...],[{},{},...]} with nothing sharded.
    size_t open = s.find("],[");
    if (open == std::string::npos) return false;
    std::string_view rest(s);
    rest = rest.substr(open + 2);
    if (rest.size() < 3 || rest.back() != '}') return false;
    rest.remove_suffix(1);
    if (rest.front() != '[' || rest.back() != ']') return false;
    rest = rest.substr(1, rest.size() - 2);
    while (!rest.empty()) {
      if (rest.substr(0, 2) != "{}") return false;
      rest.remove_prefix(2);
      if (!rest.empty()) {
        if (rest.front() != ',') return false;
        rest.remove_prefix(1);
      }
    }
    return true;
  }
  return false;
}

absl::StatusOr<std::vector<std::vector<Value>>> MakeRandomInputs(
    const Module& module, int64_t num_devices,
    const RandomInputOptions& options) {
  const Computation* entry = module.entry();
  if (entry == nullptr) {
    return absl::InvalidArgumentError("module has no entry computation");
  }
  std::vector<std::vector<Value>> args(num_devices);
  for (int64_t p = 0; p < entry->num_parameters(); ++p) {
    const Instruction* param = entry->parameter(p);
    if (param == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "entry computation ", entry->name(), " has no parameter(", p, ")"));
    }
    const bool replicated = options.same_on_all_devices ||
                            IsReplicatedSharding(param->attrs().sharding);
    Value shared;
    for (int64_t d = 0; d < num_devices; ++d) {
      if (replicated && d > 0) {
        args[d].push_back(shared);
        continue;
      }
      uint64_t key =
          MixKey(MixKey(options.seed, static_cast<uint64_t>(p)),
                 replicated ? ~uint64_t{0} : static_cast<uint64_t>(d));
      absl::StatusOr<Value> v =
          RandomValue(param->shape(), key, options.float_scale);
      if (!v.ok()) {
        return AtInstruction(
            absl::Status(v.status().code(),
                         absl::StrCat("parameter ", p, " (", param->name(),
                                      "): ", v.status().message())),
            param);
      }
      if (replicated) shared = *v;
      args[d].push_back(*std::move(v));
    }
  }
  return args;
}

}  // namespace hloverlap::interp
