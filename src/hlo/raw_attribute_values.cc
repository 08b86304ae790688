#include "hlo/raw_attribute_values.h"

#include <algorithm>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "hlo/absl_compat.h"

namespace hloverlap {
namespace {

absl::Status Invalid(absl::string_view what, absl::string_view text) {
  return absl::InvalidArgumentError(
      absl::StrCat("expected ", what, ", found '", text, "'"));
}

// The text between a leading '{' and a trailing '}' (spaces around kept
// out); nullopt without them.
bool Unbrace(absl::string_view text, absl::string_view* inner) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  if (text.size() < 2 || text.front() != '{' || text.back() != '}') {
    return false;
  }
  *inner = text.substr(1, text.size() - 2);
  return true;
}

// `AxBxC`, each part read by `read`.
template <typename Read>
absl::Status ReadXList(absl::string_view field, absl::string_view value,
                       std::vector<WindowDimension>& dims, Read read) {
  std::vector<absl::string_view> parts = absl::StrSplit(value, 'x');
  if (dims.empty()) dims.resize(parts.size());
  if (parts.size() != dims.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("window ", field, " has ", parts.size(),
                     " dimensions, size has ", dims.size()));
  }
  for (size_t i = 0; i < parts.size(); ++i) {
    if (!read(absl::string_view(parts[i].data(), parts[i].size()), dims[i])) {
      return Invalid(absl::StrCat("window ", field, " values"), value);
    }
  }
  return absl::OkStatus();
}

bool ReadInto(absl::string_view text, int64_t* out) {
  return !text.empty() && absl::SimpleAtoi(text, out);
}

// One part of dim_labels: `batch`/`feature` are the two letters (b/f or
// i/o); the digits name the spatial dimensions.
absl::Status ReadLabels(absl::string_view part, char batch, char feature,
                        int64_t* batch_dim, int64_t* feature_dim,
                        std::vector<int64_t>* spatial) {
  *batch_dim = -1;
  *feature_dim = -1;
  spatial->assign(part.size() >= 2 ? part.size() - 2 : 0, -1);
  for (size_t d = 0; d < part.size(); ++d) {
    const char c = part[d];
    int64_t* slot = nullptr;
    if (c == batch) {
      slot = batch_dim;
    } else if (c == feature) {
      slot = feature_dim;
    } else if (c >= '0' && c <= '9' &&
               static_cast<size_t>(c - '0') < spatial->size()) {
      slot = &(*spatial)[c - '0'];
    }
    if (slot == nullptr || *slot != -1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dim_labels part '", part, "' must name ", std::string(1, batch),
          ", ", std::string(1, feature), " and the spatial dimensions 0..",
          static_cast<int64_t>(part.size()) - 3, " once each"));
    }
    *slot = static_cast<int64_t>(d);
  }
  if (*batch_dim < 0 || *feature_dim < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("dim_labels part '", part, "' lacks ",
                     std::string(1, batch), " or ", std::string(1, feature)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<WindowDimension>> ReadWindow(
    std::string_view text_in) {
  const absl::string_view text = AsAbsl(text_in);
  absl::string_view inner;
  if (!Unbrace(text, &inner)) return Invalid("a window '{...}'", text);
  std::vector<WindowDimension> dims;
  std::vector<std::pair<absl::string_view, absl::string_view>> fields;
  for (absl::string_view f : absl::StrSplit(inner, ' ', absl::SkipEmpty())) {
    const size_t eq = f.find('=');
    if (eq == absl::string_view::npos) return Invalid("window fields", text);
    fields.emplace_back(f.substr(0, eq), f.substr(eq + 1));
  }
  // size first: it sets the number of dimensions.
  auto size = std::find_if(fields.begin(), fields.end(),
                           [](const auto& f) { return f.first == "size"; });
  if (size == fields.end()) {
    if (fields.empty()) return dims;
    return absl::InvalidArgumentError("window needs a size field");
  }
  auto int_field = [](int64_t WindowDimension::*member) {
    return [member](absl::string_view v, WindowDimension& d) {
      return ReadInto(v, &(d.*member));
    };
  };
  absl::Status s =
      ReadXList("size", size->second, dims, int_field(&WindowDimension::size));
  for (const auto& [name, value] : fields) {
    if (!s.ok()) return s;
    if (name == "size") continue;
    if (name == "stride") {
      s = ReadXList(name, value, dims, int_field(&WindowDimension::stride));
    } else if (name == "lhs_dilate") {
      s = ReadXList(name, value, dims,
                    int_field(&WindowDimension::base_dilation));
    } else if (name == "rhs_dilate") {
      s = ReadXList(name, value, dims,
                    int_field(&WindowDimension::window_dilation));
    } else if (name == "pad") {
      s = ReadXList(name, value, dims,
                    [](absl::string_view v, WindowDimension& d) {
                      const size_t u = v.find('_');
                      return u != absl::string_view::npos &&
                             ReadInto(v.substr(0, u), &d.padding_low) &&
                             ReadInto(v.substr(u + 1), &d.padding_high);
                    });
    } else if (name == "rhs_reversal") {
      s = ReadXList(name, value, dims,
                    [](absl::string_view v, WindowDimension& d) {
                      d.reversal = v == "1";
                      return v == "0" || v == "1";
                    });
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown window field '", name, "'"));
    }
  }
  if (!s.ok()) return s;
  return dims;
}

absl::StatusOr<ConvolutionDimensions> ReadConvolutionDimensions(
    std::string_view text_in) {
  const absl::string_view text = AsAbsl(text_in);
  const size_t underscore = text.find('_');
  const size_t arrow = text.find("->");
  if (underscore == absl::string_view::npos ||
      arrow == absl::string_view::npos || arrow < underscore) {
    return Invalid("dim_labels like b01f_01io->b01f", text);
  }
  const absl::string_view lhs = text.substr(0, underscore);
  const absl::string_view rhs =
      text.substr(underscore + 1, arrow - underscore - 1);
  const absl::string_view out = text.substr(arrow + 2);
  ConvolutionDimensions d;
  absl::Status s = ReadLabels(lhs, 'b', 'f', &d.input_batch, &d.input_feature,
                              &d.input_spatial);
  if (s.ok()) {
    s = ReadLabels(rhs, 'i', 'o', &d.kernel_input_feature,
                   &d.kernel_output_feature, &d.kernel_spatial);
  }
  if (s.ok()) {
    s = ReadLabels(out, 'b', 'f', &d.output_batch, &d.output_feature,
                   &d.output_spatial);
  }
  if (!s.ok()) return s;
  if (d.kernel_spatial.size() != d.input_spatial.size() ||
      d.output_spatial.size() != d.input_spatial.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "dim_labels ", text, ": the parts have different spatial ranks"));
  }
  return d;
}

absl::StatusOr<std::vector<int64_t>> ReadIntList(std::string_view text_in) {
  const absl::string_view text = AsAbsl(text_in);
  absl::string_view inner;
  if (!Unbrace(text, &inner)) return Invalid("an integer list '{...}'", text);
  std::vector<int64_t> out;
  if (inner.find_first_not_of(' ') == absl::string_view::npos) return out;
  for (absl::string_view part : absl::StrSplit(inner, ',')) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(part, &v)) {
      return Invalid("an integer list '{...}'", text);
    }
    out.push_back(v);
  }
  return out;
}

absl::StatusOr<int64_t> ReadInt(std::string_view text_in) {
  const absl::string_view text = AsAbsl(text_in);
  int64_t v = 0;
  if (!ReadInto(text, &v)) return Invalid("an integer", text);
  return v;
}

absl::StatusOr<bool> ReadBool(std::string_view text_in) {
  const absl::string_view text = AsAbsl(text_in);
  if (text == "true") return true;
  if (text == "false") return false;
  return Invalid("true or false", text);
}

}  // namespace hloverlap
