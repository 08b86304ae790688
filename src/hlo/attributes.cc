#include "hlo/attributes.h"

#include <algorithm>
#include <numeric>

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
      return std::nullopt;
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
