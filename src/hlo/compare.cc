// Structural comparison of HLO modules (compare.h).

#include "hlo/compare.h"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "hlo/printer.h"

namespace hloverlap {
namespace {

// String concatenation over std::string_view and integers (Debian's
// absl::StrCat does not take std::string_view).
inline void CatOne(std::string& out, std::string_view s) { out.append(s); }
inline void CatOne(std::string& out, const char* s) { out.append(s); }
inline void CatOne(std::string& out, const std::string& s) { out.append(s); }
template <typename T, typename = std::enable_if_t<std::is_integral_v<T>>>
inline void CatOne(std::string& out, T v) {
  out.append(std::to_string(v));
}
template <typename... Args>
std::string StrCat(const Args&... args) {
  std::string out;
  (CatOne(out, args), ...);
  return out;
}
template <typename... Args>
void StrAppend(std::string* out, const Args&... args) {
  (CatOne(*out, args), ...);
}

// Keeps messages readable when values are long (backend configs).
std::string Clip(std::string_view s, size_t max = 160) {
  if (s.size() <= max) return std::string(s);
  return StrCat(s.substr(0, max), "...(", s.size(), " bytes)");
}

std::string Quote(std::string_view s) {
  std::string out;
  AppendQuotedString(s, out);
  return Clip(out);
}

std::string ShapeText(const Shape& s) {
  std::string out;
  AppendShape(s, out, /*print_layout=*/true);
  return out;
}

template <typename C>
std::string ListText(const C& values) {
  std::string out = "{";
  bool first = true;
  for (int64_t v : values) {
    if (!first) out += ",";
    first = false;
    StrAppend(&out, v);
  }
  out += "}";
  return out;
}

std::string NameOf(const Instruction* i) {
  return i == nullptr ? std::string("<null>") : StrCat("%", i->name());
}

std::string NameOf(const Computation* c) {
  return c == nullptr ? std::string("<null>") : StrCat("%", c->name());
}

absl::Status Diff(std::string_view context, std::string_view what,
                  std::string_view a, std::string_view b) {
  return absl::InvalidArgumentError(
      StrCat(context, ": ", what, " ", a, " vs ", b));
}

std::string SliceText(const std::vector<SliceRange>& s) {
  std::string out = "{";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i > 0) out += ", ";
    StrAppend(&out, "[", s[i].start, ":", s[i].limit, ":", s[i].stride, "]");
  }
  return out + "}";
}

std::string PaddingText(const std::vector<PaddingDim>& p) {
  std::string out;
  for (size_t i = 0; i < p.size(); ++i) {
    if (i > 0) out += "x";
    StrAppend(&out, p[i].low, "_", p[i].high, "_", p[i].interior);
  }
  return out.empty() ? std::string("<empty>") : out;
}

std::string PairsText(const std::vector<std::pair<int64_t, int64_t>>& p) {
  std::string out = "{";
  for (size_t i = 0; i < p.size(); ++i) {
    if (i > 0) out += ",";
    StrAppend(&out, "{", p[i].first, ",", p[i].second, "}");
  }
  return out + "}";
}

std::string ReplicaGroupsText(const ReplicaGroups& rg) {
  if (!rg.present()) return "<none>";
  std::string out;
  switch (rg.format) {
    case ReplicaGroups::Format::kExplicit: {
      out = "{";
      for (size_t i = 0; i < rg.explicit_groups.size(); ++i) {
        if (i > 0) out += ",";
        out += ListText(rg.explicit_groups[i]);
      }
      return out + "}";
    }
    case ReplicaGroups::Format::kIota:
      out = StrCat("[", rg.iota_num_groups, ",", rg.iota_group_size,
                   "]<=", ListText(rg.iota_reshape_dims));
      if (!rg.iota_transpose_perm.empty()) {
        StrAppend(&out, "T", ListText(rg.iota_transpose_perm));
      }
      return out;
    case ReplicaGroups::Format::kMesh:
      return rg.mesh_text;
    default:
      return "<none>";
  }
}

// --- Literals ---------------------------------------------------------------

absl::Status CompareLiterals(std::string_view context, const Literal* a,
                             const Literal* b, const std::string& path) {
  const std::string what = path.empty() ? "literal" : "literal " + path;
  if (a == nullptr || b == nullptr) {
    if (a == b) return absl::OkStatus();
    return Diff(context, what, a ? "present" : "absent",
                b ? "present" : "absent");
  }
  if (a->elided() != b->elided()) {
    return Diff(context, what, a->elided() ? "elided" : "with values",
                b->elided() ? "elided" : "with values");
  }
  if (!a->shape().Compatible(b->shape())) {
    return Diff(context, what + " shape", ShapeText(a->shape()),
                ShapeText(b->shape()));
  }
  if (a->elided()) return absl::OkStatus();
  if (a->shape().IsTuple()) {
    const auto& ea = a->elements();
    const auto& eb = b->elements();
    if (ea.size() != eb.size()) {
      return Diff(context, what + " tuple element count", StrCat(ea.size()),
                  StrCat(eb.size()));
    }
    for (size_t i = 0; i < ea.size(); ++i) {
      absl::Status s =
          CompareLiterals(context, &ea[i], &eb[i], StrCat(path, "{", i, "}"));
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }
  const auto& da = a->data();
  const auto& db = b->data();
  if (da.size() != db.size()) {
    return Diff(context, what + " data size", StrCat(da.size()),
                StrCat(db.size()));
  }
  if (da != db) {
    const int64_t elem =
        std::max<int64_t>(1, PrimitiveTypeByteSize(a->shape().element_type()));
    size_t byte = 0;
    while (byte < da.size() && da[byte] == db[byte]) ++byte;
    const int64_t index = static_cast<int64_t>(byte) / elem;
    std::string ta, tb;
    AppendLiteral(*a, ta);
    AppendLiteral(*b, tb);
    return absl::InvalidArgumentError(StrCat(context, ": ", what,
                                             " differs at element ", index,
                                             ": ", Clip(ta), " vs ", Clip(tb)));
  }
  return absl::OkStatus();
}

// --- Metadata, frontend attributes, raw attributes ---------------------------

absl::Status CompareMetadata(std::string_view context, const OpMetadata& a,
                             const OpMetadata& b) {
  auto str = [&](std::string_view key, const std::string& x,
                 const std::string& y) -> absl::Status {
    if (x == y) return absl::OkStatus();
    return Diff(context, StrCat("metadata ", key), Quote(x), Quote(y));
  };
  auto num = [&](std::string_view key, int64_t x, int64_t y) -> absl::Status {
    if (x == y) return absl::OkStatus();
    return Diff(context, StrCat("metadata ", key), StrCat(x), StrCat(y));
  };
  absl::Status s;
  if (!(s = str("op_type", a.op_type, b.op_type)).ok()) return s;
  if (!(s = str("op_name", a.op_name, b.op_name)).ok()) return s;
  if (!(s = str("source_file", a.source_file, b.source_file)).ok()) return s;
  if (!(s = num("source_line", a.source_line, b.source_line)).ok()) return s;
  if (!(s = num("source_end_line", a.source_end_line, b.source_end_line))
           .ok()) {
    return s;
  }
  if (!(s = num("source_column", a.source_column, b.source_column)).ok()) {
    return s;
  }
  if (!(s = num("source_end_column", a.source_end_column, b.source_end_column))
           .ok()) {
    return s;
  }
  if (!(s = str("profile_type", a.profile_type, b.profile_type)).ok()) {
    return s;
  }
  if (!(s = str("deduplicated_name", a.deduplicated_name, b.deduplicated_name))
           .ok()) {
    return s;
  }
  if (!(s = str("scheduling_name", a.scheduling_name, b.scheduling_name))
           .ok()) {
    return s;
  }
  if (!(s = num("stack_frame_id", a.stack_frame_id, b.stack_frame_id)).ok()) {
    return s;
  }
  return str("metadata_payload", a.metadata_payload, b.metadata_payload);
}

absl::Status CompareFrontendAttributes(std::string_view context,
                                       const FrontendAttributes& a,
                                       const FrontendAttributes& b) {
  auto sorted = [](const FrontendAttributes& attrs) {
    std::vector<const FrontendAttribute*> v;
    v.reserve(attrs.size());
    for (const auto& x : attrs) v.push_back(&x);
    std::stable_sort(
        v.begin(), v.end(),
        [](const FrontendAttribute* x, const FrontendAttribute* y) {
          return x->key < y->key;
        });
    return v;
  };
  const auto sa = sorted(a);
  const auto sb = sorted(b);
  const size_t n = std::min(sa.size(), sb.size());
  for (size_t i = 0; i < n; ++i) {
    if (sa[i]->key != sb[i]->key) {
      const bool a_first = sa[i]->key < sb[i]->key;
      const std::string& key = a_first ? sa[i]->key : sb[i]->key;
      return absl::InvalidArgumentError(
          StrCat(context, ": frontend attribute ", key, " only in ",
                 a_first ? "first" : "second", " module"));
    }
    if (sa[i]->value != sb[i]->value) {
      return Diff(context, StrCat("frontend attribute ", sa[i]->key),
                  Quote(sa[i]->value), Quote(sb[i]->value));
    }
    if (sa[i]->is_raw != sb[i]->is_raw) {
      return Diff(context, StrCat("frontend attribute ", sa[i]->key, " form"),
                  sa[i]->is_raw ? "raw" : "quoted",
                  sb[i]->is_raw ? "raw" : "quoted");
    }
  }
  if (sa.size() != sb.size()) {
    const bool a_longer = sa.size() > sb.size();
    const std::string& key = a_longer ? sa[n]->key : sb[n]->key;
    return absl::InvalidArgumentError(
        StrCat(context, ": frontend attribute ", key, " only in ",
               a_longer ? "first" : "second", " module"));
  }
  return absl::OkStatus();
}

absl::Status CompareRawAttributes(std::string_view context,
                                  std::string_view kind,
                                  const std::vector<RawAttribute>& a,
                                  const std::vector<RawAttribute>& b) {
  if (a.empty() && b.empty()) return absl::OkStatus();
  auto sorted = [](const std::vector<RawAttribute>& attrs) {
    std::vector<const RawAttribute*> v;
    v.reserve(attrs.size());
    for (const auto& x : attrs) v.push_back(&x);
    std::stable_sort(v.begin(), v.end(),
                     [](const RawAttribute* x, const RawAttribute* y) {
                       return x->name < y->name;
                     });
    return v;
  };
  const auto sa = sorted(a);
  const auto sb = sorted(b);
  const size_t n = std::min(sa.size(), sb.size());
  for (size_t i = 0; i < n; ++i) {
    if (sa[i]->name != sb[i]->name) {
      const bool a_first = sa[i]->name < sb[i]->name;
      const std::string& name = a_first ? sa[i]->name : sb[i]->name;
      return absl::InvalidArgumentError(
          StrCat(context, ": ", kind, " ", name, " only in ",
                 a_first ? "first" : "second", " module"));
    }
    if (sa[i]->value != sb[i]->value) {
      return Diff(context, StrCat(kind, " ", sa[i]->name), Clip(sa[i]->value),
                  Clip(sb[i]->value));
    }
  }
  if (sa.size() != sb.size()) {
    const bool a_longer = sa.size() > sb.size();
    const std::string& name = a_longer ? sa[n]->name : sb[n]->name;
    return absl::InvalidArgumentError(
        StrCat(context, ": ", kind, " ", name, " only in ",
               a_longer ? "first" : "second", " module"));
  }
  return absl::OkStatus();
}

// --- Instructions ------------------------------------------------------------

// Lists of named things (operands, called computations, control
// predecessors): the length, then the names in order.
template <typename List>
absl::Status CompareNameLists(std::string_view context, std::string_view what,
                              const List& a, const List& b) {
  if (a.size() != b.size()) {
    return Diff(context, StrCat(what, " count"), StrCat(a.size()),
                StrCat(b.size()));
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if ((a[i] == nullptr) != (b[i] == nullptr) ||
        (a[i] != nullptr && a[i]->name() != b[i]->name())) {
      return Diff(context, StrCat(what, " ", i, " is"), NameOf(a[i]),
                  NameOf(b[i]));
    }
  }
  return absl::OkStatus();
}

// The attributes InstructionAttributes types (dimensions, dot numbers,
// collective groups...), except literals, sharding and the text-like ones.
absl::Status CompareTypedAttributes(std::string_view context,
                                    const InstructionAttributes& x,
                                    const InstructionAttributes& y) {
  if (x.has_dimensions != y.has_dimensions || x.dimensions != y.dimensions) {
    return Diff(context, "dimensions",
                x.has_dimensions ? ListText(x.dimensions) : "<absent>",
                y.has_dimensions ? ListText(y.dimensions) : "<absent>");
  }
  if (x.tuple_index != y.tuple_index) {
    return Diff(context, "index", StrCat(x.tuple_index), StrCat(y.tuple_index));
  }
  if (x.parameter_number != y.parameter_number) {
    return Diff(context, "parameter number", StrCat(x.parameter_number),
                StrCat(y.parameter_number));
  }
  if (x.iota_dimension != y.iota_dimension) {
    return Diff(context, "iota_dimension", StrCat(x.iota_dimension),
                StrCat(y.iota_dimension));
  }
  if (x.slice != y.slice) {
    return Diff(context, "slice", SliceText(x.slice), SliceText(y.slice));
  }
  if (x.dynamic_slice_sizes != y.dynamic_slice_sizes) {
    return Diff(context, "dynamic_slice_sizes", ListText(x.dynamic_slice_sizes),
                ListText(y.dynamic_slice_sizes));
  }
  if (x.padding != y.padding) {
    return Diff(context, "padding", PaddingText(x.padding),
                PaddingText(y.padding));
  }
  if (x.dot->lhs_batch_dims != y.dot->lhs_batch_dims) {
    return Diff(context, "lhs_batch_dims", ListText(x.dot->lhs_batch_dims),
                ListText(y.dot->lhs_batch_dims));
  }
  if (x.dot->lhs_contracting_dims != y.dot->lhs_contracting_dims) {
    return Diff(context, "lhs_contracting_dims",
                ListText(x.dot->lhs_contracting_dims),
                ListText(y.dot->lhs_contracting_dims));
  }
  if (x.dot->rhs_batch_dims != y.dot->rhs_batch_dims) {
    return Diff(context, "rhs_batch_dims", ListText(x.dot->rhs_batch_dims),
                ListText(y.dot->rhs_batch_dims));
  }
  if (x.dot->rhs_contracting_dims != y.dot->rhs_contracting_dims) {
    return Diff(context, "rhs_contracting_dims",
                ListText(x.dot->rhs_contracting_dims),
                ListText(y.dot->rhs_contracting_dims));
  }
  if (x.comparison_direction != y.comparison_direction) {
    return Diff(context, "direction",
                ComparisonDirectionName(x.comparison_direction),
                ComparisonDirectionName(y.comparison_direction));
  }
  if (x.comparison_type != y.comparison_type) {
    return Diff(context, "comparison type", Quote(x.comparison_type),
                Quote(y.comparison_type));
  }
  if (x.channel_id != y.channel_id) {
    return Diff(context, "channel_id",
                x.channel_id ? StrCat(*x.channel_id) : "<none>",
                y.channel_id ? StrCat(*y.channel_id) : "<none>");
  }
  if (!(x.replica_groups == y.replica_groups)) {
    return Diff(context, "replica_groups", ReplicaGroupsText(x.replica_groups),
                ReplicaGroupsText(y.replica_groups));
  }
  if (x.use_global_device_ids != y.use_global_device_ids) {
    return Diff(context, "use_global_device_ids",
                x.use_global_device_ids ? "true" : "false",
                y.use_global_device_ids ? "true" : "false");
  }
  if (x.constrain_layout != y.constrain_layout) {
    return Diff(context, "constrain_layout",
                x.constrain_layout ? "true" : "false",
                y.constrain_layout ? "true" : "false");
  }
  if (x.source_target_pairs != y.source_target_pairs) {
    return Diff(context, "source_target_pairs",
                PairsText(x.source_target_pairs),
                PairsText(y.source_target_pairs));
  }
  if (x.fusion_kind != y.fusion_kind) {
    return Diff(context, "kind", Quote(x.fusion_kind), Quote(y.fusion_kind));
  }
  if (x.custom_call_target != y.custom_call_target) {
    return Diff(context, "custom_call_target", Quote(x.custom_call_target),
                Quote(y.custom_call_target));
  }
  if (x.branch_computations_form != y.branch_computations_form) {
    return Diff(context, "conditional form",
                x.branch_computations_form ? "branch_computations"
                                           : "true/false_computation",
                y.branch_computations_form ? "branch_computations"
                                           : "true/false_computation");
  }
  if (x.is_composite != y.is_composite) {
    return Diff(context, "is_composite", x.is_composite ? "true" : "false",
                y.is_composite ? "true" : "false");
  }
  return absl::OkStatus();
}

absl::Status CompareInstructionsIn(std::string_view context,
                                   const Instruction& a, const Instruction& b,
                                   const CompareOptions& options) {
  if (a.opcode() != b.opcode()) {
    return Diff(context, "opcode", OpcodeName(a.opcode()),
                OpcodeName(b.opcode()));
  }
  if (a.shape() != b.shape()) {
    return Diff(context, "shape", ShapeText(a.shape()), ShapeText(b.shape()));
  }
  absl::Status s =
      CompareNameLists(context, "operand", a.operands(), b.operands());
  if (s.ok()) {
    s = CompareNameLists(context, "called computation", a.called_computations(),
                         b.called_computations());
  }
  if (s.ok()) {
    s = CompareNameLists(context, "control predecessor",
                         a.control_predecessors(), b.control_predecessors());
  }
  if (!s.ok()) return s;

  // Typed attributes.
  const InstructionAttributes& x = a.attrs();
  const InstructionAttributes& y = b.attrs();
  s = CompareTypedAttributes(context, x, y);
  if (!s.ok()) return s;
  s = CompareLiterals(context, x.literal.get(), y.literal.get(), "");
  if (!s.ok()) return s;
  if (x.sharding != y.sharding) {
    return Diff(context, "sharding", Clip(x.sharding), Clip(y.sharding));
  }
  s = CompareFrontendAttributes(context, x.frontend_attributes,
                                y.frontend_attributes);
  if (!s.ok()) return s;
  s = CompareRawAttributes(context, "attribute", x.raw, y.raw);
  if (!s.ok()) return s;
  if (options.compare_metadata) {
    s = CompareMetadata(context, x.metadata, y.metadata);
    if (!s.ok()) return s;
  }
  if (options.compare_backend_config) {
    if (std::string xc = x.while_config->Encode(),
        yc = y.while_config->Encode();
        xc != yc) {
      return Diff(context, "backend_config", Quote(xc), Quote(yc));
    }
    if (x.backend_config != y.backend_config) {
      return Diff(context, "backend_config", Quote(x.backend_config),
                  Quote(y.backend_config));
    }
    if (!x.backend_config.empty() &&
        x.backend_config_is_raw != y.backend_config_is_raw) {
      return Diff(context, "backend_config form",
                  x.backend_config_is_raw ? "raw" : "quoted",
                  y.backend_config_is_raw ? "raw" : "quoted");
    }
  }
  return absl::OkStatus();
}

// --- Module header -----------------------------------------------------------

absl::Status CompareStackFrames(const StackFrameIndex& a,
                                const StackFrameIndex& b) {
  constexpr std::string_view kCtx = "module stack frames";
  auto strings = [&](std::string_view table, const std::vector<std::string>& x,
                     const std::vector<std::string>& y) -> absl::Status {
    if (x.size() != y.size()) {
      return Diff(kCtx, StrCat(table, " count"), StrCat(x.size()),
                  StrCat(y.size()));
    }
    for (size_t i = 0; i < x.size(); ++i) {
      if (x[i] != y[i]) {
        return Diff(kCtx, StrCat(table, " ", i + 1), Quote(x[i]), Quote(y[i]));
      }
    }
    return absl::OkStatus();
  };
  absl::Status s = strings("FileNames", a.file_names, b.file_names);
  if (!s.ok()) return s;
  s = strings("FunctionNames", a.function_names, b.function_names);
  if (!s.ok()) return s;
  if (a.file_locations.size() != b.file_locations.size()) {
    return Diff(kCtx, "FileLocations count", StrCat(a.file_locations.size()),
                StrCat(b.file_locations.size()));
  }
  auto loc_text = [](const StackFrameIndex::FileLocation& l) {
    return StrCat("{file_name_id=", l.file_name_id,
                  " function_name_id=", l.function_name_id, " line=", l.line,
                  " end_line=", l.end_line, " column=", l.column,
                  " end_column=", l.end_column, "}");
  };
  for (size_t i = 0; i < a.file_locations.size(); ++i) {
    const std::string ta = loc_text(a.file_locations[i]);
    const std::string tb = loc_text(b.file_locations[i]);
    if (ta != tb) {
      return Diff(kCtx, StrCat("FileLocations ", i + 1), ta, tb);
    }
  }
  if (a.frames.size() != b.frames.size()) {
    return Diff(kCtx, "StackFrames count", StrCat(a.frames.size()),
                StrCat(b.frames.size()));
  }
  for (size_t i = 0; i < a.frames.size(); ++i) {
    const auto& fa = a.frames[i];
    const auto& fb = b.frames[i];
    if (fa.file_location_id != fb.file_location_id ||
        fa.parent_frame_id != fb.parent_frame_id) {
      return Diff(kCtx, StrCat("StackFrames ", i + 1),
                  StrCat("{file_location_id=", fa.file_location_id,
                         " parent_frame_id=", fa.parent_frame_id, "}"),
                  StrCat("{file_location_id=", fb.file_location_id,
                         " parent_frame_id=", fb.parent_frame_id, "}"));
    }
  }
  return absl::OkStatus();
}

absl::Status CompareHeader(const Module& a, const Module& b) {
  constexpr std::string_view kCtx = "module header";
  if (a.name() != b.name()) return Diff(kCtx, "name", a.name(), b.name());
  if (a.is_scheduled() != b.is_scheduled()) {
    return Diff(kCtx, "is_scheduled", a.is_scheduled() ? "true" : "false",
                b.is_scheduled() ? "true" : "false");
  }
  if (a.replica_count() != b.replica_count()) {
    return Diff(kCtx, "replica_count", StrCat(a.replica_count()),
                StrCat(b.replica_count()));
  }
  if (a.num_partitions() != b.num_partitions()) {
    return Diff(kCtx, "num_partitions", StrCat(a.num_partitions()),
                StrCat(b.num_partitions()));
  }
  if (a.entry_computation_layout() != b.entry_computation_layout()) {
    return Diff(kCtx, "entry_computation_layout",
                Clip(a.entry_computation_layout()),
                Clip(b.entry_computation_layout()));
  }
  absl::Status s = CompareFrontendAttributes(kCtx, a.frontend_attributes(),
                                             b.frontend_attributes());
  if (!s.ok()) return s;
  s = CompareRawAttributes(kCtx, "attribute", a.raw_header_attributes(),
                           b.raw_header_attributes());
  if (!s.ok()) return s;
  return CompareStackFrames(a.stack_frames(), b.stack_frames());
}

absl::Status CompareComputations(const Computation& a, const Computation& b,
                                 const CompareOptions& options) {
  const std::string ctx = StrCat("computation ", a.name());
  if (a.is_entry() != b.is_entry()) {
    return Diff(ctx, "is entry", a.is_entry() ? "true" : "false",
                b.is_entry() ? "true" : "false");
  }
  if (a.IsFusionComputation() != b.IsFusionComputation()) {
    return Diff(ctx, "is fusion computation",
                a.IsFusionComputation() ? "true" : "false",
                b.IsFusionComputation() ? "true" : "false");
  }
  if (a.execution_thread() != b.execution_thread()) {
    return Diff(ctx, "execution_thread", Quote(a.execution_thread()),
                Quote(b.execution_thread()));
  }
  if (a.instruction_count() != b.instruction_count()) {
    return Diff(ctx, "instruction count", StrCat(a.instruction_count()),
                StrCat(b.instruction_count()));
  }
  if (a.num_parameters() != b.num_parameters()) {
    return Diff(ctx, "parameter count", StrCat(a.num_parameters()),
                StrCat(b.num_parameters()));
  }
  for (int64_t i = 0; i < a.num_parameters(); ++i) {
    const Instruction* pa = a.parameters()[i];
    const Instruction* pb = b.parameters()[i];
    if ((pa == nullptr) != (pb == nullptr) ||
        (pa != nullptr && pa->name() != pb->name())) {
      return Diff(ctx, StrCat("parameter ", i, " is"), NameOf(pa), NameOf(pb));
    }
  }
  if ((a.root() == nullptr) != (b.root() == nullptr) ||
      (a.root() != nullptr && a.root()->name() != b.root()->name())) {
    return Diff(ctx, "root", NameOf(a.root()), NameOf(b.root()));
  }
  const auto& ia = a.instructions();
  const auto& ib = b.instructions();
  if (options.compare_instruction_order) {
    for (size_t i = 0; i < ia.size(); ++i) {
      if (ia[i]->name() != ib[i]->name()) {
        return Diff(ctx, StrCat("instruction at position ", i, " is"),
                    NameOf(ia[i].get()), NameOf(ib[i].get()));
      }
      absl::Status s =
          CompareInstructionsIn(StrCat(ctx, ", instruction ", ia[i]->name()),
                                *ia[i], *ib[i], options);
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }
  absl::flat_hash_map<std::string_view, const Instruction*> by_name;
  by_name.reserve(ib.size());
  for (const auto& i : ib) by_name.emplace(i->name(), i.get());
  for (const auto& i : ia) {
    auto it = by_name.find(i->name());
    if (it == by_name.end()) {
      return absl::InvalidArgumentError(StrCat(
          ctx, ": instruction ", NameOf(i.get()), " only in first module"));
    }
    absl::Status s = CompareInstructionsIn(
        StrCat(ctx, ", instruction ", i->name()), *i, *it->second, options);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CompareInstructions(const Instruction& a, const Instruction& b,
                                 const CompareOptions& options) {
  if (a.name() != b.name()) {
    return Diff(StrCat("instruction ", a.name()), "name", NameOf(&a),
                NameOf(&b));
  }
  return CompareInstructionsIn(StrCat("instruction ", a.name()), a, b, options);
}

absl::Status CompareModules(const Module& a, const Module& b,
                            const CompareOptions& options) {
  absl::Status s = CompareHeader(a, b);
  if (!s.ok()) return s;
  const auto& ca = a.computations();
  const auto& cb = b.computations();
  const size_t n = std::min(ca.size(), cb.size());
  for (size_t i = 0; i < n; ++i) {
    if (ca[i]->name() != cb[i]->name()) {
      return Diff("module", StrCat("computation ", i, " is"),
                  NameOf(ca[i].get()), NameOf(cb[i].get()));
    }
  }
  if (ca.size() != cb.size()) {
    const bool a_longer = ca.size() > cb.size();
    return absl::InvalidArgumentError(
        StrCat("module: computation count ", ca.size(), " vs ", cb.size(), " (",
               NameOf(a_longer ? ca[n].get() : cb[n].get()), " only in ",
               a_longer ? "first" : "second", " module)"));
  }
  if ((a.entry() == nullptr) != (b.entry() == nullptr) ||
      (a.entry() != nullptr && a.entry()->name() != b.entry()->name())) {
    return Diff("module", "entry computation", NameOf(a.entry()),
                NameOf(b.entry()));
  }
  for (size_t i = 0; i < n; ++i) {
    s = CompareComputations(*ca[i], *cb[i], options);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace hloverlap
