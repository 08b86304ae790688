#include "hlo/while_backend_config.h"

#include <charconv>
#include <utility>

#include "absl/strings/str_cat.h"
#include "hlo/absl_compat.h"
#include "hlo/instruction.h"
#include "nlohmann/json.hpp"

namespace hloverlap {
namespace {

constexpr std::string_view kTripCount = "known_trip_count";
constexpr std::string_view kInductionVariable = "known_induction_variable";
constexpr std::string_view kInitStep = "known_init_step";
constexpr std::string_view kDynamicVariables = "dynamic_variables";

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Splits the members of a JSON object text that nlohmann already accepted:
// each member's key and value text. False when the text is not shaped as
// expected (then nothing is decoded).
class MemberScanner {
 public:
  explicit MemberScanner(std::string_view text) : s_(text) {}

  bool Scan(std::vector<std::pair<std::string_view, std::string_view>>* out) {
    SkipSpace();
    if (!Eat('{')) return false;
    SkipSpace();
    if (Eat('}')) return AtEnd();
    while (true) {
      SkipSpace();
      size_t key_begin = pos_;
      if (!SkipString()) return false;
      std::string_view key = s_.substr(key_begin, pos_ - key_begin);
      SkipSpace();
      if (!Eat(':')) return false;
      SkipSpace();
      size_t value_begin = pos_;
      if (!SkipValue(0)) return false;
      out->emplace_back(key, s_.substr(value_begin, pos_ - value_begin));
      SkipSpace();
      if (Eat(',')) continue;
      if (Eat('}')) return AtEnd();
      return false;
    }
  }

 private:
  static constexpr int kMaxDepth = 256;

  void SkipSpace() {
    while (pos_ < s_.size() && IsSpace(s_[pos_])) ++pos_;
  }
  bool AtEnd() {
    SkipSpace();
    return pos_ == s_.size();
  }
  bool Eat(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool SkipString() {
    if (!Eat('"')) return false;
    while (pos_ < s_.size()) {
      char c = s_[pos_++];
      if (c == '\\') {
        if (pos_ >= s_.size()) return false;
        ++pos_;
      } else if (c == '"') {
        return true;
      }
    }
    return false;
  }
  bool SkipValue(int depth) {
    if (depth > kMaxDepth || pos_ >= s_.size()) return false;
    char c = s_[pos_];
    if (c == '"') return SkipString();
    if (c == '{' || c == '[') {
      const char close = c == '{' ? '}' : ']';
      ++pos_;
      SkipSpace();
      if (Eat(close)) return true;
      while (true) {
        SkipSpace();
        if (c == '{') {
          if (!SkipString()) return false;
          SkipSpace();
          if (!Eat(':')) return false;
          SkipSpace();
        }
        if (!SkipValue(depth + 1)) return false;
        SkipSpace();
        if (Eat(',')) continue;
        return Eat(close);
      }
    }
    // Number, true, false, null.
    size_t begin = pos_;
    while (pos_ < s_.size() && !IsSpace(s_[pos_]) && s_[pos_] != ',' &&
           s_[pos_] != '}' && s_[pos_] != ']') {
      ++pos_;
    }
    return pos_ > begin;
  }

  std::string_view s_;
  size_t pos_ = 0;
};

// An integer written as a JSON number or a quoted decimal (proto JSON
// writes int64 as strings).
std::optional<int64_t> JsonInt(const nlohmann::json& v) {
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<int64_t>(u);
  }
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    int64_t out = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) {
      return std::nullopt;
    }
    return out;
  }
  return std::nullopt;
}

// Field `field` of the object `value` as an integer.
std::optional<int64_t> Field(const nlohmann::json& value,
                             std::string_view field) {
  if (!value.is_object()) return std::nullopt;
  auto it = value.find(std::string(field));
  if (it == value.end()) return std::nullopt;
  return JsonInt(*it);
}

std::optional<int64_t> NonNegative(std::optional<int64_t> v) {
  if (!v.has_value() || *v < 0) return std::nullopt;
  return v;
}

}  // namespace

std::optional<WhileBackendConfig> WhileBackendConfig::Decode(
    std::string_view text) {
  nlohmann::json json = nlohmann::json::parse(text.begin(), text.end(),
                                              /*cb=*/nullptr,
                                              /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) return std::nullopt;
  std::vector<std::pair<std::string_view, std::string_view>> raw;
  if (!MemberScanner(text).Scan(&raw)) return std::nullopt;
  WhileBackendConfig config;
  config.present_ = true;
  config.verbatim_ = std::string(text);
  for (const auto& [raw_key, raw_value] : raw) {
    nlohmann::json key = nlohmann::json::parse(raw_key, nullptr, false);
    if (!key.is_string()) return std::nullopt;
    Member m;
    m.key = key.get<std::string>();
    m.raw_key = std::string(raw_key);
    m.value = std::string(raw_value);
    config.members_.push_back(std::move(m));
  }
  // Typed views, read from the decoded object (for a repeated key, the
  // value nlohmann keeps).
  if (auto it = json.find(std::string(kTripCount)); it != json.end()) {
    config.trip_count_ = NonNegative(Field(*it, "n"));
  }
  if (auto it = json.find(std::string(kInductionVariable)); it != json.end()) {
    config.induction_variable_ = NonNegative(Field(*it, "tuple_index"));
  }
  if (auto it = json.find(std::string(kInitStep)); it != json.end()) {
    std::optional<int64_t> init = Field(*it, "init");
    std::optional<int64_t> step = Field(*it, "step");
    if (init.has_value() && step.has_value()) {
      config.init_step_ = KnownInitStep{*init, *step};
    }
  }
  if (auto it = json.find(std::string(kDynamicVariables));
      it != json.end() && it->is_array()) {
    std::vector<int64_t> indices;
    bool ok = true;
    for (const nlohmann::json& e : *it) {
      std::optional<int64_t> v = NonNegative(JsonInt(e));
      if (!v.has_value()) {
        ok = false;
        break;
      }
      indices.push_back(*v);
    }
    if (ok) config.dynamic_variables_ = std::move(indices);
  }
  return config;
}

void WhileBackendConfig::SetMember(std::string_view key,
                                   std::optional<std::string> value) {
  present_ = true;
  verbatim_.reset();
  bool placed = false;
  std::vector<Member> kept;
  kept.reserve(members_.size() + 1);
  for (Member& m : members_) {
    if (m.key != key) {
      kept.push_back(std::move(m));
      continue;
    }
    if (placed || !value.has_value()) continue;  // repeated or removed
    m.value = *value;
    kept.push_back(std::move(m));
    placed = true;
  }
  if (!placed && value.has_value()) {
    Member m;
    m.key = std::string(key);
    m.raw_key = absl::StrCat("\"", AsAbsl(key), "\"");
    m.value = *std::move(value);
    kept.push_back(std::move(m));
  }
  members_ = std::move(kept);
}

void WhileBackendConfig::set_known_trip_count(std::optional<int64_t> n) {
  trip_count_ = NonNegative(n);
  SetMember(kTripCount,
            trip_count_.has_value()
                ? std::optional(absl::StrCat("{\"n\":\"", *trip_count_, "\"}"))
                : std::nullopt);
}

void WhileBackendConfig::set_known_induction_variable(
    std::optional<int64_t> tuple_index) {
  induction_variable_ = NonNegative(tuple_index);
  SetMember(kInductionVariable,
            induction_variable_.has_value()
                ? std::optional(absl::StrCat("{\"tuple_index\":\"",
                                             *induction_variable_, "\"}"))
                : std::nullopt);
}

void WhileBackendConfig::set_known_init_step(
    std::optional<KnownInitStep> init_step) {
  init_step_ = init_step;
  SetMember(kInitStep, init_step.has_value()
                           ? std::optional(absl::StrCat(
                                 "{\"init\":\"", init_step->init,
                                 "\",\"step\":\"", init_step->step, "\"}"))
                           : std::nullopt);
}

bool WhileBackendConfig::has_key(std::string_view key) const {
  for (const Member& m : members_) {
    if (m.key == key) return true;
  }
  return false;
}

std::string WhileBackendConfig::Encode() const {
  if (!present_) return "";
  if (verbatim_.has_value()) return *verbatim_;
  std::string out = "{";
  for (size_t i = 0; i < members_.size(); ++i) {
    if (i > 0) out.push_back(',');
    absl::StrAppend(&out, members_[i].raw_key, ":", members_[i].value);
  }
  out.push_back('}');
  return out;
}

void SetWhileTripCount(Instruction& while_instr, int64_t n,
                       std::optional<KnownInitStep> init_step) {
  InstructionAttributes& attrs = while_instr.mutable_attrs();
  if (!attrs.while_config->present() && !attrs.backend_config.empty()) {
    return;  // a text that is not a JSON object: nothing to add a key to
  }
  WhileBackendConfig& config = attrs.while_config.mutable_value();
  config.set_known_trip_count(n);
  // Only where XLA's annotation was there already: replaced, or removed
  // when the new values are not known.
  if (config.has_key(kInitStep)) config.set_known_init_step(init_step);
}

}  // namespace hloverlap
