#include "hlo/raw_attribute_check.h"

#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <utility>

namespace hloverlap {
namespace {

// A character scanner over one attribute value.
class Scan {
 public:
  explicit Scan(std::string_view s) : s_(s) {}

  void SkipSpace() {
    while (pos_ < s_.size() &&
           std::isspace(static_cast<unsigned char>(s_[pos_])) != 0) {
      ++pos_;
    }
  }
  bool Eat(char c) {
    SkipSpace();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool Peek(char c) {
    SkipSpace();
    return pos_ < s_.size() && s_[pos_] == c;
  }
  // A decimal integer (optionally negative).
  bool Int(int64_t* v) {
    SkipSpace();
    const char* b = s_.data() + pos_;
    const char* e = s_.data() + s_.size();
    auto [p, ec] = std::from_chars(b, e, *v);
    if (ec != std::errc() || p == b) return false;
    pos_ += static_cast<size_t>(p - b);
    return true;
  }
  // Letters, digits, '_', '-', '.', '+' (names and numbers).
  std::string_view Word() {
    SkipSpace();
    const size_t b = pos_;
    while (pos_ < s_.size() &&
           (std::isalnum(static_cast<unsigned char>(s_[pos_])) != 0 ||
            s_[pos_] == '_' || s_[pos_] == '-' || s_[pos_] == '.' ||
            s_[pos_] == '+')) {
      ++pos_;
    }
    return s_.substr(b, pos_ - b);
  }
  bool AtEnd() {
    SkipSpace();
    return pos_ == s_.size();
  }
  size_t pos() {
    SkipSpace();
    return pos_;
  }
  std::optional<RawAttributeError> Fail(std::string message) {
    return RawAttributeError{pos(), std::move(message)};
  }

 private:
  std::string_view s_;
  size_t pos_ = 0;
};

// `{}` or `{i, j, ...}` with i, j >= 0.
bool ShapeIndex(Scan& s, std::vector<int64_t>* out) {
  if (!s.Eat('{')) return false;
  if (s.Eat('}')) return true;
  do {
    int64_t v = 0;
    if (!s.Int(&v) || v < 0) return false;
    out->push_back(v);
  } while (s.Eat(','));
  return s.Eat('}');
}

// `(<parameter>, <index>` (the caller eats the rest).
std::optional<RawAttributeError> ParameterAndIndex(Scan& s, const char* what,
                                                   AliasEntry* entry) {
  if (!s.Eat('(')) {
    return s.Fail(std::string("expected '(' before the ") + what);
  }
  const size_t at = s.pos();
  if (!s.Int(&entry->parameter) || entry->parameter < 0) {
    return RawAttributeError{at, "expected a parameter number"};
  }
  if (!s.Eat(',')) return s.Fail("expected ',' after the parameter number");
  if (!ShapeIndex(s, &entry->parameter_index)) {
    return s.Fail("expected a parameter shape index '{...}'");
  }
  return std::nullopt;
}

// `{ entry, entry, ... }`, each entry parsed by `entry`.
template <typename Entry>
std::optional<RawAttributeError> BracedList(std::string_view value,
                                            const char* what,
                                            const Entry& entry) {
  Scan s(value);
  if (!s.Eat('{'))
    return s.Fail(std::string("expected '{' to open the ") + what);
  while (!s.Peek('}')) {
    if (std::optional<RawAttributeError> e = entry(s)) return e;
    if (!s.Eat(',')) break;
  }
  if (!s.Eat('}')) {
    return s.Fail(std::string("expected ',' or '}' in the ") + what);
  }
  if (!s.AtEnd())
    return s.Fail(std::string("unexpected text after the ") + what);
  return std::nullopt;
}

// A BracedList of AliasEntry: `read` takes an entry up to its closing ')',
// which this eats; the entries go to *entries when it is not null.
//   {{0}: (1, {}, may-alias)}  ->  read sees `{0}: (1, {}, may-alias`
template <typename Read>
std::optional<RawAttributeError> AliasEntryList(
    std::string_view value, const char* list_name, const char* entry_name,
    std::vector<AliasEntry>* entries, const Read& read) {
  return BracedList(
      value, list_name, [&](Scan& s) -> std::optional<RawAttributeError> {
        AliasEntry entry;
        entry.offset = s.pos();
        if (std::optional<RawAttributeError> e = read(s, &entry)) return e;
        if (!s.Eat(')')) {
          return s.Fail(std::string("expected ')' to close the ") + entry_name +
                        " entry");
        }
        if (entries != nullptr) entries->push_back(std::move(entry));
        return std::nullopt;
      });
}

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::optional<RawAttributeError> CheckInputOutputAlias(
    std::string_view value, std::vector<AliasEntry>* entries) {
  return AliasEntryList(
      value, "alias list", "alias", entries,
      [](Scan& s, AliasEntry* entry) -> std::optional<RawAttributeError> {
        if (!ShapeIndex(s, &entry->output_index)) {
          return s.Fail(
              "expected an output shape index '{...}' (entries are "
              "<output index>: (<parameter>, <parameter index>[, kind]))");
        }
        if (!s.Eat(':')) return s.Fail("expected ':' after the output index");
        if (auto e = ParameterAndIndex(s, "aliased parameter", entry)) {
          return e;
        }
        if (s.Eat(',')) {
          const size_t at = s.pos();
          const std::string_view kind = s.Word();
          if (kind != "may-alias" && kind != "must-alias") {
            return RawAttributeError{at, "unknown alias kind '" +
                                             std::string(kind) +
                                             "' (may-alias or must-alias)"};
          }
        }
        return std::nullopt;
      });
}

std::optional<RawAttributeError> CheckBufferDonor(
    std::string_view value, std::vector<AliasEntry>* entries) {
  return AliasEntryList(value, "buffer donor list", "donor", entries,
                        [](Scan& s, AliasEntry* entry) {
                          return ParameterAndIndex(s, "donor parameter", entry);
                        });
}

std::optional<RawAttributeError> CheckCustomCallApiVersion(
    std::string_view value) {
  // XLA's parser knows API_VERSION_UNSPECIFIED as a name but refuses it
  // on a custom call.
  if (EqualsIgnoringCase(value, "API_VERSION_UNSPECIFIED")) {
    return RawAttributeError{
        0, "invalid custom-call API version '" + std::string(value) +
               "' (XLA refuses an unspecified version; write one)"};
  }
  for (std::string_view known :
       {"API_VERSION_ORIGINAL", "API_VERSION_STATUS_RETURNING",
        "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI"}) {
    if (EqualsIgnoringCase(value, known)) return std::nullopt;
  }
  return RawAttributeError{
      0, "unknown custom-call API version '" + std::string(value) +
             "' (API_VERSION_ORIGINAL, API_VERSION_STATUS_RETURNING, "
             "API_VERSION_STATUS_RETURNING_UNIFIED or API_VERSION_TYPED_FFI)"};
}

std::optional<RawAttributeError> CheckResultAccuracy(std::string_view value) {
  Scan s(value);
  if (!s.Eat('{')) return s.Fail("expected '{' to open the result accuracy");
  const size_t key_at = s.pos();
  const std::string_view key = s.Word();
  if (!s.Eat('='))
    return s.Fail("expected '=' after '" + std::string(key) + "'");
  if (key == "mode") {
    const size_t at = s.pos();
    const std::string_view mode = s.Word();
    if (!EqualsIgnoringCase(mode, "default") &&
        !EqualsIgnoringCase(mode, "highest")) {
      return RawAttributeError{at, "unknown result accuracy mode '" +
                                       std::string(mode) +
                                       "' (default or highest)"};
    }
  } else if (key == "tolerance") {
    if (!s.Eat('{')) return s.Fail("expected '{' to open the tolerance");
    while (!s.Peek('}')) {
      const size_t at = s.pos();
      const std::string_view field = s.Word();
      if (field != "atol" && field != "rtol" && field != "ulps") {
        return RawAttributeError{at, "unknown tolerance field '" +
                                         std::string(field) +
                                         "' (atol, rtol or ulps)"};
      }
      if (!s.Eat('=')) return s.Fail("expected '=' after the tolerance field");
      const size_t num_at = s.pos();
      const std::string number(s.Word());
      char* end = nullptr;
      const double v = number.empty() ? -1 : std::strtod(number.c_str(), &end);
      if (number.empty() || end != number.c_str() + number.size()) {
        return RawAttributeError{num_at,
                                 "expected a number for " + std::string(field)};
      }
      if (!(v >= 0)) {
        return RawAttributeError{num_at,
                                 std::string(field) + " must not be negative"};
      }
      if (!s.Eat(',')) break;
    }
    if (!s.Eat('}')) return s.Fail("expected '}' to close the tolerance");
  } else {
    return RawAttributeError{key_at, "unknown result accuracy key '" +
                                         std::string(key) +
                                         "' (mode or tolerance)"};
  }
  if (!s.Eat('}')) return s.Fail("expected '}' to close the result accuracy");
  if (!s.AtEnd()) return s.Fail("unexpected text after the result accuracy");
  return std::nullopt;
}

}  // namespace hloverlap
