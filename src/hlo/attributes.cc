#include "hlo/attributes.h"

#include <algorithm>
#include <numeric>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hloverlap {

std::string_view ComparisonDirectionName(ComparisonDirection d) {
  switch (d) {
    case ComparisonDirection::kEq:
      return "EQ";
    case ComparisonDirection::kNe:
      return "NE";
    case ComparisonDirection::kLt:
      return "LT";
    case ComparisonDirection::kLe:
      return "LE";
    case ComparisonDirection::kGt:
      return "GT";
    case ComparisonDirection::kGe:
      return "GE";
  }
  return "EQ";
}

namespace {

// Expands an iota device list: 0..N-1 reshaped to `reshape`, transposed by
// `perm`, flattened row-major. Returns nullopt on inconsistent input.
std::optional<std::vector<int64_t>> ExpandIota(const DimensionVector& reshape,
                                               const DimensionVector& perm) {
  int64_t n = 1;
  for (int64_t d : reshape) {
    if (d <= 0 || d > (int64_t{1} << 24)) return std::nullopt;
    n *= d;
    if (n > (int64_t{1} << 24)) return std::nullopt;
  }
  const int64_t rank = reshape.size();
  DimensionVector p = perm;
  if (p.empty()) {
    p.resize(rank);
    std::iota(p.begin(), p.end(), 0);
  }
  if (static_cast<int64_t>(p.size()) != rank) return std::nullopt;
  std::vector<bool> seen(rank, false);
  for (int64_t x : p) {
    if (x < 0 || x >= rank || seen[x]) return std::nullopt;
    seen[x] = true;
  }
  // Transposed dims: tdims[i] = reshape[p[i]]. Output element at transposed
  // multi-index t has source index s with s[p[i]] = t[i].
  DimensionVector tdims(rank);
  for (int64_t i = 0; i < rank; ++i) tdims[i] = reshape[p[i]];
  DimensionVector src_strides(rank, 1);
  for (int64_t i = rank - 2; i >= 0; --i) {
    src_strides[i] = src_strides[i + 1] * reshape[i + 1];
  }
  std::vector<int64_t> out(n);
  DimensionVector t(rank, 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t src = 0;
    for (int64_t i = 0; i < rank; ++i) src += t[i] * src_strides[p[i]];
    out[k] = src;
    for (int64_t i = rank - 1; i >= 0; --i) {
      if (++t[i] < tdims[i]) break;
      t[i] = 0;
    }
  }
  return out;
}

// Parses the mesh form `mesh['a'=2,'b'=4] {'b'}` (optionally with
// `, device_ids=(...)` after the axis list) into groups: devices sit in a
// row-major array of the mesh shape; a group is the set of devices whose
// coordinates differ only along the listed axes (ordered by those axes in
// listed order); groups are ordered row-major over the remaining axes.
// Sub-axes (`'x':(1)2`) are not understood: nullopt.
std::optional<std::vector<std::vector<int64_t>>> ExpandMesh(
    std::string_view text) {
  size_t pos = 0;
  auto skip_ws = [&] {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\n' ||
                                 text[pos] == '\t' || text[pos] == '\r')) {
      ++pos;
    }
  };
  auto consume = [&](std::string_view lit) {
    skip_ws();
    if (text.substr(pos, lit.size()) != lit) return false;
    pos += lit.size();
    return true;
  };
  auto parse_name = [&](std::string& out) {
    skip_ws();
    if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"')) {
      return false;
    }
    char q = text[pos++];
    size_t end = text.find(q, pos);
    if (end == std::string_view::npos) return false;
    out = std::string(text.substr(pos, end - pos));
    pos = end + 1;
    return true;
  };
  auto parse_int = [&](int64_t& v) {
    skip_ws();
    size_t start = pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') ++pos;
    if (start == pos || pos - start > 9) return false;
    v = std::stoll(std::string(text.substr(start, pos - start)));
    return true;
  };
  std::vector<std::string> names;
  std::vector<int64_t> sizes;
  if (!consume("mesh") || !consume("[")) return std::nullopt;
  while (true) {
    std::string name;
    int64_t size = 0;
    if (!parse_name(name) || !consume("=") || !parse_int(size) || size <= 0) {
      return std::nullopt;
    }
    names.push_back(name);
    sizes.push_back(size);
    if (consume(",")) continue;
    if (consume("]")) break;
    return std::nullopt;
  }
  int64_t total = 1;
  for (int64_t s : sizes) {
    total *= s;
    if (total > (int64_t{1} << 20)) return std::nullopt;
  }
  std::vector<int64_t> device_ids(total);
  std::iota(device_ids.begin(), device_ids.end(), 0);
  if (consume(",")) {
    if (!consume("device_ids") || !consume("=") || !consume("(")) {
      return std::nullopt;
    }
    for (int64_t i = 0; i < total; ++i) {
      if (i > 0 && !consume(",")) return std::nullopt;
      if (!parse_int(device_ids[i])) return std::nullopt;
    }
    if (!consume(")")) return std::nullopt;
  }
  std::vector<int> group_axes;
  if (!consume("{")) return std::nullopt;
  if (!consume("}")) {
    while (true) {
      std::string name;
      if (!parse_name(name)) return std::nullopt;
      auto it = std::find(names.begin(), names.end(), name);
      if (it == names.end()) return std::nullopt;
      int axis = static_cast<int>(it - names.begin());
      if (std::find(group_axes.begin(), group_axes.end(), axis) !=
          group_axes.end()) {
        return std::nullopt;
      }
      group_axes.push_back(axis);
      if (consume(",")) continue;
      if (consume("}")) break;
      return std::nullopt;
    }
  }
  skip_ws();
  if (pos != text.size()) return std::nullopt;
  const int rank = static_cast<int>(sizes.size());
  std::vector<int> other_axes;
  for (int a = 0; a < rank; ++a) {
    if (std::find(group_axes.begin(), group_axes.end(), a) ==
        group_axes.end()) {
      other_axes.push_back(a);
    }
  }
  std::vector<int64_t> strides(rank, 1);
  for (int a = rank - 2; a >= 0; --a)
    strides[a] = strides[a + 1] * sizes[a + 1];
  auto count = [&](const std::vector<int>& axes) {
    int64_t n = 1;
    for (int a : axes) n *= sizes[a];
    return n;
  };
  // Linear offset of the k-th combination (row-major) over `axes`.
  auto offset = [&](const std::vector<int>& axes, int64_t k) {
    int64_t off = 0;
    for (int i = static_cast<int>(axes.size()) - 1; i >= 0; --i) {
      int64_t c = k % sizes[axes[i]];
      k /= sizes[axes[i]];
      off += c * strides[axes[i]];
    }
    return off;
  };
  std::vector<std::vector<int64_t>> groups;
  const int64_t num_groups = count(other_axes);
  const int64_t group_size = count(group_axes);
  groups.reserve(num_groups);
  for (int64_t g = 0; g < num_groups; ++g) {
    std::vector<int64_t> members;
    members.reserve(group_size);
    int64_t base = offset(other_axes, g);
    for (int64_t m = 0; m < group_size; ++m) {
      members.push_back(device_ids[base + offset(group_axes, m)]);
    }
    groups.push_back(std::move(members));
  }
  return groups;
}

}  // namespace

std::optional<std::vector<std::vector<int64_t>>> ReplicaGroups::Groups() const {
  switch (format) {
    case Format::kNone:
      return std::vector<std::vector<int64_t>>{};
    case Format::kExplicit:
      return explicit_groups;
    case Format::kIota: {
      auto flat = ExpandIota(iota_reshape_dims, iota_transpose_perm);
      if (!flat.has_value()) return std::nullopt;
      if (iota_num_groups <= 0 || iota_group_size <= 0 ||
          iota_num_groups * iota_group_size !=
              static_cast<int64_t>(flat->size())) {
        return std::nullopt;
      }
      std::vector<std::vector<int64_t>> groups(iota_num_groups);
      for (int64_t g = 0; g < iota_num_groups; ++g) {
        groups[g].assign(flat->begin() + g * iota_group_size,
                         flat->begin() + (g + 1) * iota_group_size);
      }
      return groups;
    }
    case Format::kMesh:
      return ExpandMesh(mesh_text);
  }
  return std::nullopt;
}

std::optional<int64_t> ReplicaGroups::GroupSize() const {
  if (format == Format::kIota) {
    if (iota_group_size <= 0) return std::nullopt;
    return iota_group_size;
  }
  if (format == Format::kExplicit && !explicit_groups.empty()) {
    return static_cast<int64_t>(explicit_groups[0].size());
  }
  if (format == Format::kMesh) {
    auto groups = ExpandMesh(mesh_text);
    if (groups.has_value() && !groups->empty()) {
      return static_cast<int64_t>((*groups)[0].size());
    }
  }
  return std::nullopt;
}

std::string ReplicaGroups::ToString() const {
  switch (format) {
    case Format::kNone:
      return "{}";
    case Format::kExplicit: {
      std::string out = "{";
      for (size_t g = 0; g < explicit_groups.size(); ++g) {
        if (g > 0) out.push_back(',');
        absl::StrAppend(&out, "{", absl::StrJoin(explicit_groups[g], ","), "}");
      }
      out.push_back('}');
      return out;
    }
    case Format::kIota: {
      std::string out =
          absl::StrCat("[", iota_num_groups, ",", iota_group_size, "]<=[",
                       absl::StrJoin(iota_reshape_dims, ","), "]");
      if (!iota_transpose_perm.empty()) {
        absl::StrAppend(&out, "T(", absl::StrJoin(iota_transpose_perm, ","),
                        ")");
      }
      return out;
    }
    case Format::kMesh:
      return mesh_text;
  }
  return "{}";
}

bool OpMetadata::empty() const {
  return op_type.empty() && op_name.empty() && source_file.empty() &&
         source_line == 0 && source_end_line == 0 && source_column == 0 &&
         source_end_column == 0 && profile_type.empty() &&
         deduplicated_name.empty() && scheduling_name.empty() &&
         stack_frame_id == 0 && metadata_payload.empty();
}

const FrontendAttribute* FindFrontendAttribute(const FrontendAttributes& attrs,
                                               std::string_view key) {
  for (const FrontendAttribute& a : attrs) {
    if (a.key == key) return &a;
  }
  return nullptr;
}

void SetFrontendAttribute(FrontendAttributes& attrs, std::string_view key,
                          std::string value, bool is_raw) {
  for (FrontendAttribute& a : attrs) {
    if (a.key == key) {
      a.value = std::move(value);
      a.is_raw = is_raw;
      return;
    }
  }
  attrs.push_back(
      FrontendAttribute{std::string(key), std::move(value), is_raw});
}

}  // namespace hloverlap
