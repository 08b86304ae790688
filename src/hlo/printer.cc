// HLO text printer (printer.h): the current default XLA style.
//
// Everything appends to one std::string; numbers go through std::to_chars,
// strings are escaped in runs. Attribute order follows XLA's printer
// (hlo_text_format.md §4.2, §9, §10.1): the opcode-specific attributes (typed
// and raw ones merged by their XLA position), raw attributes XLA does not
// know in stored order, called computations, is_composite, sharding,
// frontend_attributes, control-predecessors, statistics/result_accuracy/
// origin, metadata, backend_config.
//
// Instructions print in stored order when that is a topological order
// (operands and control predecessors first), else in a stable topological
// order (Kahn's algorithm keyed by stored position).

#include "hlo/printer.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <queue>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"

namespace hloverlap {
namespace {

// ---------------------------------------------------------------------------
// Small appenders.

inline void AppendInt(int64_t v, std::string& out) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(buf, r.ptr - buf);
}

template <typename Container>
void AppendIntList(const Container& values, std::string& out) {
  out.push_back('{');
  bool first = true;
  for (int64_t v : values) {
    if (!first) out.push_back(',');
    first = false;
    AppendInt(v, out);
  }
  out.push_back('}');
}

inline void AppendName(std::string_view name, std::string& out) {
  out.push_back('%');
  out.append(name);
}

// 0: copy as is; 1: two-char escape; 2: octal escape.
constexpr std::array<uint8_t, 256> MakeEscapeTable() {
  std::array<uint8_t, 256> t{};
  for (int c = 0; c < 256; ++c) {
    if (c < 0x20 || c >= 0x7f) {
      t[c] = 2;
    } else {
      t[c] = 0;
    }
  }
  t['\n'] = 1;
  t['\r'] = 1;
  t['\t'] = 1;
  t['"'] = 1;
  t['\''] = 1;
  t['\\'] = 1;
  return t;
}
constexpr std::array<uint8_t, 256> kEscape = MakeEscapeTable();

void AppendEscaped(std::string_view s, std::string& out) {
  const char* p = s.data();
  const char* end = p + s.size();
  while (p < end) {
    const char* run = p;
    while (p < end && kEscape[static_cast<uint8_t>(*p)] == 0) ++p;
    if (p > run) out.append(run, p - run);
    if (p == end) break;
    const uint8_t c = static_cast<uint8_t>(*p++);
    if (kEscape[c] == 1) {
      out.push_back('\\');
      switch (c) {
        case '\n':
          out.push_back('n');
          break;
        case '\r':
          out.push_back('r');
          break;
        case '\t':
          out.push_back('t');
          break;
        default:
          out.push_back(static_cast<char>(c));
          break;
      }
    } else {
      const char oct[4] = {'\\', static_cast<char>('0' + ((c >> 6) & 7)),
                           static_cast<char>('0' + ((c >> 3) & 7)),
                           static_cast<char>('0' + (c & 7))};
      out.append(oct, 4);
    }
  }
}

// True if `s` is one balanced brace blob: starts with '{' and the matching
// '}' is its last character, skipping over double-quoted strings. Such text
// is printed raw (backend_config, frontend attribute values).
bool IsBraceBlob(std::string_view s) {
  if (s.size() < 2 || s.front() != '{' || s.back() != '}') return false;
  int64_t depth = 0;
  const size_t n = s.size();
  for (size_t i = 0; i < n; ++i) {
    const char c = s[i];
    if (c == '"') {
      ++i;
      while (i < n && s[i] != '"') {
        if (s[i] == '\\') ++i;
        ++i;
      }
      if (i >= n) return false;
    } else if (c == '{') {
      ++depth;
    } else if (c == '}') {
      if (--depth == 0) return i + 1 == n;
    }
  }
  return false;
}

// ---------------------------------------------------------------------------
// Shapes.

// Splits Layout::other_tail into items ("L(2)", "SC(0:1)(1:2)") and appends
// those whose XLA print position is `slot`: 0 before tiles (D), 1 between
// tiles and E (L, #, *), 2 after S (SC, P, M and anything unknown).
void AppendTailItems(std::string_view tail, int slot, std::string& out) {
  size_t i = 0;
  const size_t n = tail.size();
  while (i < n) {
    const size_t start = i;
    while (i < n && tail[i] != '(') ++i;
    std::string_view prefix = tail.substr(start, i - start);
    // Balanced parenthesized groups, repeated.
    while (i < n && tail[i] == '(') {
      int depth = 0;
      while (i < n) {
        if (tail[i] == '(') ++depth;
        if (tail[i] == ')' && --depth == 0) {
          ++i;
          break;
        }
        ++i;
      }
    }
    int item_slot = 2;
    if (prefix == "D") {
      item_slot = 0;
    } else if (prefix == "L" || prefix == "#" || prefix == "*") {
      item_slot = 1;
    }
    if (item_slot == slot) out.append(tail.substr(start, i - start));
    if (i == start) break;  // defensive: no progress
  }
}

void AppendLayoutImpl(const Layout& layout, int64_t rank, std::string& out) {
  const bool has_tail = !layout.tiles.empty() ||
                        layout.element_size_bits != 0 ||
                        layout.memory_space != 0 || !layout.other_tail.empty();
  if (rank == 0 && layout.minor_to_major.empty() && !has_tail) return;
  out.push_back('{');
  bool first = true;
  for (int64_t d : layout.minor_to_major) {
    if (!first) out.push_back(',');
    first = false;
    AppendInt(d, out);
  }
  if (has_tail) {
    out.push_back(':');
    if (!layout.other_tail.empty()) AppendTailItems(layout.other_tail, 0, out);
    if (!layout.tiles.empty()) {
      out.push_back('T');
      for (const Tile& tile : layout.tiles) {
        out.push_back('(');
        bool tfirst = true;
        for (int64_t d : tile.dims) {
          if (!tfirst) out.push_back(',');
          tfirst = false;
          if (d == Tile::kCombineDim) {
            out.push_back('*');
          } else {
            AppendInt(d, out);
          }
        }
        out.push_back(')');
      }
    }
    if (!layout.other_tail.empty()) AppendTailItems(layout.other_tail, 1, out);
    if (layout.element_size_bits != 0) {
      out.append("E(");
      AppendInt(layout.element_size_bits, out);
      out.push_back(')');
    }
    if (layout.memory_space != 0) {
      out.append("S(");
      AppendInt(layout.memory_space, out);
      out.push_back(')');
    }
    if (!layout.other_tail.empty()) AppendTailItems(layout.other_tail, 2, out);
  }
  out.push_back('}');
}

void AppendShapeImpl(const Shape& shape, bool print_layout, std::string& out) {
  if (shape.IsTuple()) {
    out.push_back('(');
    const auto& elems = shape.tuple_shapes();
    for (size_t i = 0; i < elems.size(); ++i) {
      if (i > 0) {
        out.append(", ");
        if (i % 5 == 0) {
          out.append("/*index=");
          AppendInt(static_cast<int64_t>(i), out);
          out.append("*/");
        }
      }
      AppendShapeImpl(elems[i], print_layout, out);
    }
    out.push_back(')');
    return;
  }
  out.append(PrimitiveTypeName(shape.element_type()));
  out.push_back('[');
  const auto& dims = shape.dimensions();
  const auto& kinds = shape.dim_kinds();
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) out.push_back(',');
    const DimKind kind = i < kinds.size() ? kinds[i] : DimKind::kStatic;
    if (kind == DimKind::kUnbounded) {
      out.push_back('?');
    } else {
      if (kind == DimKind::kBounded) out.append("<=");
      AppendInt(dims[i], out);
    }
  }
  out.push_back(']');
  if (print_layout && shape.has_layout() && shape.IsArray()) {
    AppendLayoutImpl(*shape.layout(), shape.rank(), out);
  }
}

// ---------------------------------------------------------------------------
// Attribute values.

void AppendReplicaGroups(const ReplicaGroups& rg, std::string& out) {
  switch (rg.format) {
    case ReplicaGroups::Format::kExplicit:
    case ReplicaGroups::Format::kNone: {
      out.push_back('{');
      bool first = true;
      for (const auto& group : rg.explicit_groups) {
        if (!first) out.push_back(',');
        first = false;
        AppendIntList(group, out);
      }
      out.push_back('}');
      return;
    }
    case ReplicaGroups::Format::kIota: {
      out.push_back('[');
      AppendInt(rg.iota_num_groups, out);
      out.push_back(',');
      AppendInt(rg.iota_group_size, out);
      out.append("]<=[");
      bool first = true;
      for (int64_t d : rg.iota_reshape_dims) {
        if (!first) out.push_back(',');
        first = false;
        AppendInt(d, out);
      }
      out.push_back(']');
      if (!rg.iota_transpose_perm.empty()) {
        out.append("T(");
        first = true;
        for (int64_t d : rg.iota_transpose_perm) {
          if (!first) out.push_back(',');
          first = false;
          AppendInt(d, out);
        }
        out.push_back(')');
      }
      return;
    }
    case ReplicaGroups::Format::kMesh:
      out.append(rg.mesh_text);
      return;
  }
}

void AppendMetadata(const OpMetadata& m, std::string& out) {
  out.append("metadata={");
  bool first = true;
  auto sep = [&] {
    if (!first) out.push_back(' ');
    first = false;
  };
  auto str = [&](std::string_view key, const std::string& v) {
    if (v.empty()) return;
    sep();
    out.append(key);
    out.append("=\"");
    AppendEscaped(v, out);
    out.push_back('"');
  };
  auto num = [&](std::string_view key, int64_t v) {
    if (v == 0) return;
    sep();
    out.append(key);
    out.push_back('=');
    AppendInt(v, out);
  };
  str("op_type", m.op_type);
  str("op_name", m.op_name);
  str("source_file", m.source_file);
  num("source_line", m.source_line);
  num("source_end_line", m.source_end_line);
  num("source_column", m.source_column);
  num("source_end_column", m.source_end_column);
  if (!m.profile_type.empty()) {
    sep();
    out.append("profile_type=");
    out.append(m.profile_type);
  }
  str("deduplicated_name", m.deduplicated_name);
  str("scheduling_name", m.scheduling_name);
  num("stack_frame_id", m.stack_frame_id);
  str("metadata_payload", m.metadata_payload);
  out.push_back('}');
}

bool MetadataEmpty(const OpMetadata& m) {
  return m.op_type.empty() && m.op_name.empty() && m.source_file.empty() &&
         m.source_line == 0 && m.source_end_line == 0 && m.source_column == 0 &&
         m.source_end_column == 0 && m.profile_type.empty() &&
         m.deduplicated_name.empty() && m.scheduling_name.empty() &&
         m.stack_frame_id == 0 && m.metadata_payload.empty();
}

void AppendFrontendAttributes(const FrontendAttributes& attrs,
                              std::string& out) {
  out.append("frontend_attributes={");
  // Keys sorted as XLA prints them (a std::map there); stable for
  // duplicate keys. Usually tiny, so sort pointers.
  absl::InlinedVector<const FrontendAttribute*, 8> sorted;
  sorted.reserve(attrs.size());
  for (const auto& a : attrs) sorted.push_back(&a);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const FrontendAttribute* a, const FrontendAttribute* b) {
                     return a->key < b->key;
                   });
  bool first = true;
  for (const FrontendAttribute* a : sorted) {
    if (!first) out.push_back(',');
    first = false;
    out.append(a->key);
    out.push_back('=');
    if (a->is_raw && IsBraceBlob(a->value)) {
      out.append(a->value);
    } else {
      out.push_back('"');
      AppendEscaped(a->value, out);
      out.push_back('"');
    }
  }
  out.push_back('}');
}

// ---------------------------------------------------------------------------
// Attribute order.

// Typed attributes of InstructionAttributes that sit among the
// opcode-specific attributes.
enum TypedAttr : int8_t {
  kRawAttr = -1,
  kDimensions = 0,
  kTupleIndex,
  kIotaDimension,
  kSlice,
  kDynamicSliceSizes,
  kPadding,
  kDotDims,
  kDirection,
  kComparisonType,
  kChannelId,
  kReplicaGroups,
  kConstrainLayout,
  kUseGlobalDeviceIds,
  kSourceTargetPairs,
  kFusionKind,
  kCustomCallTarget,
  kNumTypedAttrs,
};

struct AttrSlot {
  std::string_view name;  // raw attribute name (kRawAttr) or for reference
  TypedAttr typed;
};

constexpr AttrSlot T(TypedAttr t) { return {"", t}; }
constexpr AttrSlot R(std::string_view name) { return {name, kRawAttr}; }

using SlotList = std::vector<AttrSlot>;

// Fallback for typed attributes an opcode's list does not mention.
const SlotList& GenericSlots() {
  static const SlotList* slots = new SlotList{
      T(kChannelId),
      T(kReplicaGroups),
      T(kConstrainLayout),
      T(kDimensions),
      T(kUseGlobalDeviceIds),
      T(kSourceTargetPairs),
      T(kTupleIndex),
      T(kIotaDimension),
      T(kSlice),
      T(kDynamicSliceSizes),
      T(kPadding),
      T(kDotDims),
      T(kDirection),
      T(kComparisonType),
      T(kFusionKind),
      T(kCustomCallTarget),
  };
  return *slots;
}

// The opcode-specific attributes in XLA's print order.
const std::vector<SlotList>& OpcodeSlots() {
  static const std::vector<SlotList>* table = [] {
    auto* t = new std::vector<SlotList>(kNumOpcodes);
    auto set = [&](Opcode op, SlotList list) {
      (*t)[static_cast<int>(op)] = std::move(list);
    };
    const SlotList dims = {T(kDimensions)};
    for (Opcode op : {Opcode::kBroadcast, Opcode::kTranspose, Opcode::kReverse,
                      Opcode::kConcatenate, Opcode::kReduce, Opcode::kMap,
                      Opcode::kGetDimensionSize, Opcode::kSetDimensionSize}) {
      set(op, dims);
    }
    set(Opcode::kParameter, {R("parameter_replication")});
    set(Opcode::kIota, {T(kIotaDimension)});
    set(Opcode::kCompare, {T(kDirection), T(kComparisonType)});
    set(Opcode::kReducePrecision, {R("exponent_bits"), R("mantissa_bits")});
    set(Opcode::kReshape, {R("inferred_dimension")});
    set(Opcode::kSlice, {T(kSlice)});
    set(Opcode::kDynamicSlice, {T(kDynamicSliceSizes)});
    set(Opcode::kPad, {T(kPadding)});
    const SlotList dot = {T(kDotDims), R("lhs_ragged_dims"),
                          R("rhs_group_dims"), R("operand_precision"),
                          R("algorithm")};
    set(Opcode::kDot, dot);
    set(Opcode::kRaggedDot, dot);
    set(Opcode::kScaledDot, dot);
    set(Opcode::kConvolution,
        {R("window"), R("dim_labels"), R("feature_group_count"),
         R("batch_group_count"), R("convolution_kind"), R("operand_precision"),
         R("algorithm"), R("sparsity_config")});
    set(Opcode::kFft, {R("fft_type"), R("fft_length")});
    set(Opcode::kReduceWindow, {R("window")});
    set(Opcode::kSelectAndScatter, {R("window")});
    set(Opcode::kSort, {T(kDimensions), R("is_stable")});
    set(Opcode::kTopk, {R("k"), R("largest"), R("is_stable")});
    set(Opcode::kGather,
        {R("offset_dims"), R("collapsed_slice_dims"), R("start_index_map"),
         R("operand_batching_dims"), R("start_indices_batching_dims"),
         R("index_vector_dim"), R("slice_sizes"), R("indices_are_sorted")});
    set(Opcode::kScatter,
        {R("update_window_dims"), R("inserted_window_dims"),
         R("scatter_dims_to_operand_dims"), R("input_batching_dims"),
         R("scatter_indices_batching_dims"), R("index_vector_dim"),
         R("indices_are_sorted"), R("unique_indices")});
    set(Opcode::kScan, {T(kDimensions), R("num_carries"), R("is_reverse"),
                        R("is_associative")});
    set(Opcode::kGetTupleElement, {T(kTupleIndex)});
    set(Opcode::kFusion, {T(kFusionKind), R("output_to_operand_aliasing")});
    set(Opcode::kCustomCall,
        {R("window"), R("dim_labels"), R("feature_group_count"),
         R("batch_group_count"), R("operand_precision"), R("padding_type"),
         T(kCustomCallTarget), R("operand_layout_constraints"),
         R("custom_call_has_side_effect"), R("literal"),
         R("output_to_operand_aliasing"), R("schedule"), R("api_version")});
    set(Opcode::kRng, {R("distribution")});
    set(Opcode::kRngBitGenerator, {R("algorithm")});
    set(Opcode::kRngGetAndUpdateState, {R("delta")});
    for (Opcode op : {Opcode::kBatchNormTraining, Opcode::kBatchNormInference,
                      Opcode::kBatchNormGrad}) {
      set(op, {R("epsilon"), R("feature_index")});
    }
    set(Opcode::kTriangularSolve,
        {R("left_side"), R("lower"), R("unit_diagonal"), R("transpose_a")});
    set(Opcode::kCholesky, {R("lower")});
    set(Opcode::kDomain, {R("domain")});
    set(Opcode::kInfeed, {R("infeed_config")});
    set(Opcode::kOutfeed, {R("outfeed_shape"), R("outfeed_config")});
    for (Opcode op :
         {Opcode::kSend, Opcode::kRecv, Opcode::kSendDone, Opcode::kRecvDone}) {
      set(op, {T(kChannelId), R("is_host_transfer")});
    }
    set(Opcode::kCopyStart, {R("cross_program_prefetch_index")});
    for (Opcode op : {Opcode::kAllReduce, Opcode::kAllReduceStart}) {
      set(op, {T(kChannelId), T(kReplicaGroups), T(kConstrainLayout),
               T(kUseGlobalDeviceIds)});
    }
    for (Opcode op : {Opcode::kAllGather, Opcode::kAllGatherStart}) {
      set(op, {T(kChannelId), T(kReplicaGroups), T(kConstrainLayout),
               T(kDimensions), T(kUseGlobalDeviceIds)});
    }
    set(Opcode::kReduceScatter,
        {T(kChannelId), T(kReplicaGroups), T(kConstrainLayout),
         T(kUseGlobalDeviceIds), T(kDimensions)});
    set(Opcode::kAllToAll, {T(kChannelId), T(kReplicaGroups),
                            T(kConstrainLayout), T(kDimensions)});
    set(Opcode::kCollectiveBroadcast,
        {T(kChannelId), T(kReplicaGroups), T(kConstrainLayout),
         R("has_dynamic_root")});
    set(Opcode::kRaggedAllToAll,
        {T(kChannelId), T(kReplicaGroups), T(kConstrainLayout)});
    for (Opcode op :
         {Opcode::kCollectivePermute, Opcode::kCollectivePermuteStart}) {
      set(op, {T(kChannelId), T(kSourceTargetPairs), R("slice_sizes")});
    }
    set(Opcode::kAsyncStart,
        {R("async_execution_thread"), R("output_to_operand_aliasing")});
    return t;
  }();
  return *table;
}

// Raw attributes XLA prints after control-predecessors, in this order.
constexpr std::array<std::string_view, 3> kLateRawAttrs = {
    "statistics", "result_accuracy", "origin"};

bool IsLateRawAttr(std::string_view name) {
  for (std::string_view n : kLateRawAttrs) {
    if (n == name) return true;
  }
  return false;
}

bool IsDotLike(Opcode op) {
  return op == Opcode::kDot || op == Opcode::kRaggedDot ||
         op == Opcode::kScaledDot;
}

class InstructionPrinter {
 public:
  InstructionPrinter(const Instruction& instr, const PrintOptions& options,
                     std::string& out)
      : instr_(instr), attrs_(instr.attrs()), options_(options), out_(out) {}

  void Print() {
    AppendName(instr_.name(), out_);
    out_.append(" = ");
    AppendShapeImpl(instr_.shape(), /*print_layout=*/true, out_);
    out_.push_back(' ');
    out_.append(OpcodeName(instr_.opcode()));
    out_.push_back('(');
    PrintOperands();
    out_.push_back(')');
    PrintAttributes();
  }

 private:
  void Sep() { out_.append(", "); }

  void PrintOperands() {
    switch (instr_.opcode()) {
      case Opcode::kParameter:
        AppendInt(attrs_.parameter_number, out_);
        return;
      case Opcode::kConstant: {
        const Literal* lit = attrs_.literal.get();
        if (lit == nullptr) {
          out_.append("{...}");
        } else if (options_.elide_constants_above >= 0 &&
                   lit->shape().IsArray() &&
                   lit->element_count() > options_.elide_constants_above) {
          out_.append("{...}");
        } else {
          AppendLiteral(*lit, out_);
        }
        return;
      }
      default:
        break;
    }
    const auto operands = instr_.operands();
    for (size_t i = 0; i < operands.size(); ++i) {
      if (i > 0) {
        out_.append(", ");
        if (i % 5 == 0) {
          out_.append("/*index=");
          AppendInt(static_cast<int64_t>(i), out_);
          out_.append("*/");
        }
      }
      const Instruction* op = operands[i];
      AppendName(op != nullptr ? std::string_view(op->name())
                               : std::string_view("null"),
                 out_);
    }
  }

  // Emits typed attribute `t` if the instruction carries it.
  void PrintTyped(TypedAttr t) {
    const Opcode op = instr_.opcode();
    switch (t) {
      case kDimensions:
        if (attrs_.has_dimensions) {
          Sep();
          out_.append("dimensions=");
          AppendIntList(attrs_.dimensions, out_);
        }
        return;
      case kTupleIndex:
        if (op == Opcode::kGetTupleElement) {
          Sep();
          out_.append("index=");
          AppendInt(attrs_.tuple_index, out_);
        }
        return;
      case kIotaDimension:
        if (op == Opcode::kIota) {
          Sep();
          out_.append("iota_dimension=");
          AppendInt(attrs_.iota_dimension, out_);
        }
        return;
      case kSlice:
        if (op == Opcode::kSlice || !attrs_.slice.empty()) {
          Sep();
          out_.append("slice={");
          bool strided = false;
          for (const SliceRange& r : attrs_.slice) strided |= r.stride != 1;
          bool first = true;
          for (const SliceRange& r : attrs_.slice) {
            if (!first) out_.append(", ");
            first = false;
            out_.push_back('[');
            AppendInt(r.start, out_);
            out_.push_back(':');
            AppendInt(r.limit, out_);
            if (strided) {
              out_.push_back(':');
              AppendInt(r.stride, out_);
            }
            out_.push_back(']');
          }
          out_.push_back('}');
        }
        return;
      case kDynamicSliceSizes:
        if (op == Opcode::kDynamicSlice ||
            !attrs_.dynamic_slice_sizes.empty()) {
          Sep();
          out_.append("dynamic_slice_sizes=");
          AppendIntList(attrs_.dynamic_slice_sizes, out_);
        }
        return;
      case kPadding:
        if (op == Opcode::kPad || !attrs_.padding.empty()) {
          Sep();
          out_.append("padding=");
          bool interior = false;
          for (const PaddingDim& p : attrs_.padding) {
            interior |= p.interior != 0;
          }
          bool first = true;
          for (const PaddingDim& p : attrs_.padding) {
            if (!first) out_.push_back('x');
            first = false;
            AppendInt(p.low, out_);
            out_.push_back('_');
            AppendInt(p.high, out_);
            if (interior) {
              out_.push_back('_');
              AppendInt(p.interior, out_);
            }
          }
        }
        return;
      case kDotDims: {
        const DotDimensionNumbers& d = attrs_.dot;
        if (!IsDotLike(op) && d.lhs_batch_dims.empty() &&
            d.lhs_contracting_dims.empty() && d.rhs_batch_dims.empty() &&
            d.rhs_contracting_dims.empty()) {
          return;
        }
        if (!d.lhs_batch_dims.empty()) {
          Sep();
          out_.append("lhs_batch_dims=");
          AppendIntList(d.lhs_batch_dims, out_);
        }
        Sep();
        out_.append("lhs_contracting_dims=");
        AppendIntList(d.lhs_contracting_dims, out_);
        if (!d.rhs_batch_dims.empty()) {
          Sep();
          out_.append("rhs_batch_dims=");
          AppendIntList(d.rhs_batch_dims, out_);
        }
        Sep();
        out_.append("rhs_contracting_dims=");
        AppendIntList(d.rhs_contracting_dims, out_);
        return;
      }
      case kDirection:
        if (op == Opcode::kCompare) {
          Sep();
          out_.append("direction=");
          out_.append(ComparisonDirectionName(attrs_.comparison_direction));
        }
        return;
      case kComparisonType:
        if (!attrs_.comparison_type.empty()) {
          Sep();
          out_.append("type=");
          out_.append(attrs_.comparison_type);
        }
        return;
      case kChannelId:
        if (attrs_.channel_id.has_value()) {
          Sep();
          out_.append("channel_id=");
          AppendInt(*attrs_.channel_id, out_);
        }
        return;
      case kReplicaGroups:
        if (attrs_.replica_groups.present()) {
          Sep();
          out_.append("replica_groups=");
          AppendReplicaGroups(attrs_.replica_groups, out_);
        }
        return;
      case kConstrainLayout:
        if (attrs_.constrain_layout) {
          Sep();
          out_.append("constrain_layout=true");
        }
        return;
      case kUseGlobalDeviceIds:
        if (attrs_.use_global_device_ids) {
          Sep();
          out_.append("use_global_device_ids=true");
        }
        return;
      case kSourceTargetPairs:
        if (op == Opcode::kCollectivePermute ||
            op == Opcode::kCollectivePermuteStart ||
            !attrs_.source_target_pairs.empty()) {
          Sep();
          out_.append("source_target_pairs={");
          bool first = true;
          for (const auto& [s, t] : attrs_.source_target_pairs) {
            if (!first) out_.push_back(',');
            first = false;
            out_.push_back('{');
            AppendInt(s, out_);
            out_.push_back(',');
            AppendInt(t, out_);
            out_.push_back('}');
          }
          out_.push_back('}');
        }
        return;
      case kFusionKind:
        if (op == Opcode::kFusion || !attrs_.fusion_kind.empty()) {
          Sep();
          out_.append("kind=");
          out_.append(attrs_.fusion_kind);
        }
        return;
      case kCustomCallTarget:
        if (op == Opcode::kCustomCall || !attrs_.custom_call_target.empty()) {
          Sep();
          out_.append("custom_call_target=\"");
          AppendEscaped(attrs_.custom_call_target, out_);
          out_.push_back('"');
        }
        return;
      default:
        return;
    }
  }

  void PrintRaw(const RawAttribute& raw) {
    Sep();
    out_.append(raw.name);
    out_.push_back('=');
    out_.append(raw.value);
  }

  void PrintCalleeList(std::string_view attr,
                       const std::vector<Computation*>& callees, size_t begin) {
    Sep();
    out_.append(attr);
    out_.append("={");
    for (size_t i = begin; i < callees.size(); ++i) {
      if (i > begin) out_.append(", ");
      AppendCallee(callees[i]);
    }
    out_.push_back('}');
  }

  void AppendCallee(const Computation* c) {
    AppendName(
        c != nullptr ? std::string_view(c->name()) : std::string_view("null"),
        out_);
  }

  void PrintCallee(std::string_view attr, const Computation* c) {
    Sep();
    out_.append(attr);
    out_.push_back('=');
    AppendCallee(c);
  }

  void PrintCalledComputations() {
    const auto& callees = instr_.called_computations();
    if (callees.empty()) return;
    switch (instr_.opcode()) {
      case Opcode::kWhile:
        PrintCallee("condition", callees[0]);
        if (callees.size() > 1) PrintCallee("body", callees[1]);
        return;
      case Opcode::kConditional:
        if (!attrs_.branch_computations_form && callees.size() == 2) {
          PrintCallee("true_computation", callees[0]);
          PrintCallee("false_computation", callees[1]);
        } else {
          PrintCalleeList("branch_computations", callees, 0);
        }
        return;
      case Opcode::kSelectAndScatter:
        PrintCallee("select", callees[0]);
        if (callees.size() > 1) PrintCallee("scatter", callees[1]);
        return;
      case Opcode::kCustomCall:
        PrintCalleeList("called_computations", callees, 0);
        return;
      case Opcode::kFusion:
      case Opcode::kAsyncStart:
        PrintCallee("calls", callees[0]);
        return;
      case Opcode::kAsyncUpdate:
      case Opcode::kAsyncDone:
        // The wrapped computation is implied by the async-start.
        return;
      case Opcode::kCall:
      case Opcode::kMap:
      case Opcode::kReduce:
      case Opcode::kReduceWindow:
      case Opcode::kAllReduce:
      case Opcode::kAllReduceStart:
      case Opcode::kReduceScatter:
      case Opcode::kScatter:
      case Opcode::kSort:
      case Opcode::kScan:
        PrintCallee("to_apply", callees[0]);
        return;
      default:
        if (callees.size() == 1) {
          PrintCallee("calls", callees[0]);
        } else {
          PrintCalleeList("called_computations", callees, 0);
        }
        return;
    }
  }

  void PrintAttributes() {
    const auto& raw = attrs_.raw;
    absl::InlinedVector<bool, 8> raw_done(raw.size(), false);
    uint32_t typed_done = 0;
    auto emit_slot = [&](const AttrSlot& slot) {
      if (slot.typed != kRawAttr) {
        const uint32_t bit = 1u << slot.typed;
        if (typed_done & bit) return;
        typed_done |= bit;
        PrintTyped(slot.typed);
        return;
      }
      for (size_t j = 0; j < raw.size(); ++j) {
        if (!raw_done[j] && raw[j].name == slot.name) {
          raw_done[j] = true;
          PrintRaw(raw[j]);
        }
      }
    };
    const int op_index = static_cast<int>(instr_.opcode());
    const auto& table = OpcodeSlots();
    if (op_index >= 0 && op_index < static_cast<int>(table.size())) {
      for (const AttrSlot& slot : table[op_index]) {
        if (slot.typed == kRawAttr && raw.empty()) continue;
        emit_slot(slot);
      }
    }
    for (const AttrSlot& slot : GenericSlots()) emit_slot(slot);
    // Raw attributes XLA has no fixed place for, in stored order.
    for (size_t j = 0; j < raw.size(); ++j) {
      if (!raw_done[j] && !IsLateRawAttr(raw[j].name)) {
        raw_done[j] = true;
        PrintRaw(raw[j]);
      }
    }
    PrintCalledComputations();
    if (attrs_.is_composite) {
      Sep();
      out_.append("is_composite=true");
    }
    if (!attrs_.sharding.empty()) {
      Sep();
      out_.append("sharding=");
      out_.append(attrs_.sharding);
    }
    if (!attrs_.frontend_attributes.empty()) {
      Sep();
      AppendFrontendAttributes(attrs_.frontend_attributes, out_);
    }
    const auto& preds = instr_.control_predecessors();
    if (!preds.empty()) {
      Sep();
      out_.append("control-predecessors={");
      for (size_t i = 0; i < preds.size(); ++i) {
        if (i > 0) out_.append(", ");
        AppendName(preds[i] != nullptr ? std::string_view(preds[i]->name())
                                       : std::string_view("null"),
                   out_);
      }
      out_.push_back('}');
    }
    if (!raw.empty()) {
      for (std::string_view late : kLateRawAttrs) {
        emit_slot(R(late));
      }
    }
    if (options_.print_metadata && !MetadataEmpty(attrs_.metadata)) {
      Sep();
      AppendMetadata(attrs_.metadata, out_);
    }
    if (options_.print_backend_config && !attrs_.backend_config.empty()) {
      Sep();
      out_.append("backend_config=");
      if (attrs_.backend_config_is_raw && IsBraceBlob(attrs_.backend_config)) {
        out_.append(attrs_.backend_config);
      } else {
        out_.push_back('"');
        AppendEscaped(attrs_.backend_config, out_);
        out_.push_back('"');
      }
    }
  }

  const Instruction& instr_;
  const InstructionAttributes& attrs_;
  const PrintOptions& options_;
  std::string& out_;
};

// ---------------------------------------------------------------------------
// Instruction order.

// Maps instructions of one computation to their stored positions. Uses a
// dense table over unique ids when they are compact, else a hash map.
class PositionMap {
 public:
  explicit PositionMap(const Computation& c) {
    const auto& instrs = c.instructions();
    const int64_t n = static_cast<int64_t>(instrs.size());
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (const auto& i : instrs) {
      lo = std::min(lo, i->unique_id());
      hi = std::max(hi, i->unique_id());
    }
    // Unique ids must be distinct for the dense table to be usable.
    dense_ = n > 0 && lo >= 0 && hi - lo <= 4 * n + 64;
    if (dense_) {
      base_ = lo;
      table_.assign(hi - lo + 1, -1);
      for (int64_t p = 0; p < n; ++p) {
        int32_t& slot = table_[instrs[p]->unique_id() - lo];
        if (slot != -1) {
          dense_ = false;
          break;
        }
        slot = static_cast<int32_t>(p);
      }
    }
    if (!dense_) {
      table_.clear();
      map_.reserve(n);
      for (int64_t p = 0; p < n; ++p) map_[instrs[p].get()] = p;
    }
    instrs_ = &instrs;
  }

  // Stored position of `i` in the computation, or -1.
  int64_t Find(const Instruction* i) const {
    if (i == nullptr) return -1;
    if (dense_) {
      const int64_t k = i->unique_id() - base_;
      if (k < 0 || k >= static_cast<int64_t>(table_.size())) return -1;
      const int32_t p = table_[k];
      // Same id from another computation: confirm identity.
      if (p < 0 || (*instrs_)[p].get() != i) return -1;
      return p;
    }
    auto it = map_.find(i);
    return it == map_.end() ? -1 : it->second;
  }

 private:
  bool dense_ = false;
  int64_t base_ = 0;
  std::vector<int32_t> table_;
  absl::flat_hash_map<const Instruction*, int64_t> map_;
  const std::vector<std::unique_ptr<Instruction>>* instrs_ = nullptr;
};

// Appends the instruction order to `order` (pointers into the computation).
void ComputePrintOrder(const Computation& c,
                       std::vector<const Instruction*>& order) {
  const auto& instrs = c.instructions();
  const int64_t n = static_cast<int64_t>(instrs.size());
  order.clear();
  order.reserve(n);
  PositionMap pos(c);
  bool valid = true;
  for (int64_t p = 0; p < n && valid; ++p) {
    const Instruction* i = instrs[p].get();
    for (const Instruction* op : i->operands()) {
      const int64_t q = pos.Find(op);
      if (q >= p) {
        valid = false;
        break;
      }
    }
    if (!valid) break;
    for (const Instruction* pred : i->control_predecessors()) {
      const int64_t q = pos.Find(pred);
      if (q >= p) {
        valid = false;
        break;
      }
    }
  }
  if (valid) {
    for (const auto& i : instrs) order.push_back(i.get());
    return;
  }
  // Kahn's algorithm, always taking the ready instruction with the smallest
  // stored position. Edges to instructions outside the computation are
  // ignored; instructions on a cycle follow in stored order.
  std::vector<int32_t> indegree(n, 0);
  std::vector<std::vector<int32_t>> succs(n);
  for (int64_t p = 0; p < n; ++p) {
    const Instruction* i = instrs[p].get();
    auto add_edge = [&](const Instruction* from) {
      const int64_t q = pos.Find(from);
      if (q < 0 || q == p) return;
      succs[q].push_back(static_cast<int32_t>(p));
      ++indegree[p];
    };
    for (const Instruction* op : i->operands()) add_edge(op);
    for (const Instruction* pred : i->control_predecessors()) add_edge(pred);
  }
  std::priority_queue<int32_t, std::vector<int32_t>, std::greater<int32_t>>
      ready;
  for (int64_t p = 0; p < n; ++p) {
    if (indegree[p] == 0) ready.push(static_cast<int32_t>(p));
  }
  std::vector<bool> emitted(n, false);
  while (!ready.empty()) {
    const int32_t p = ready.top();
    ready.pop();
    emitted[p] = true;
    order.push_back(instrs[p].get());
    for (int32_t s : succs[p]) {
      if (--indegree[s] == 0) ready.push(s);
    }
  }
  for (int64_t p = 0; p < n; ++p) {
    if (!emitted[p]) order.push_back(instrs[p].get());
  }
}

void AppendComputationImpl(const Computation& computation, std::string& out,
                           const PrintOptions& options,
                           std::vector<const Instruction*>& order) {
  if (computation.is_entry()) out.append("ENTRY ");
  AppendName(computation.name(), out);
  out.append(" (");
  bool first = true;
  for (const Instruction* param : computation.parameters()) {
    if (param == nullptr) continue;
    if (!first) out.append(", ");
    first = false;
    out.append(param->name());
    out.append(": ");
    AppendShapeImpl(param->shape(), /*print_layout=*/false, out);
  }
  out.append(") -> ");
  const Instruction* root = computation.root();
  if (root == nullptr && !computation.instructions().empty()) {
    root = computation.instructions().back().get();
  }
  if (root != nullptr) {
    AppendShapeImpl(root->shape(), /*print_layout=*/false, out);
  } else {
    out.append("()");
  }
  out.append(" {\n");
  ComputePrintOrder(computation, order);
  for (const Instruction* instr : order) {
    out.append(instr == computation.root() ? "  ROOT " : "  ");
    InstructionPrinter(*instr, options, out).Print();
    out.push_back('\n');
  }
  out.push_back('}');
  if (!computation.execution_thread().empty()) {
    out.append(", execution_thread=\"");
    AppendEscaped(computation.execution_thread(), out);
    out.push_back('"');
  }
}

// Header attributes: raw ones are merged into XLA's order by name.
int HeaderRank(std::string_view name) {
  if (name == "input_output_alias") return 1;
  if (name == "buffer_donor") return 2;
  if (name == "alias_passthrough_params") return 3;
  // 4: entry_computation_layout
  if (name == "allow_spmd_sharding_propagation_to_parameters") return 5;
  if (name == "allow_spmd_sharding_propagation_to_output") return 6;
  // 7: replica_count, 8: num_partitions, 9: frontend_attributes
  if (name == "origin_recovery_table") return 11;
  if (name == "debug_attributes") return 12;
  return 10;  // unknown: after frontend_attributes
}

void AppendHeader(const Module& module, std::string& out) {
  out.append("HloModule ");
  out.append(module.name());
  if (module.is_scheduled()) out.append(", is_scheduled=true");
  const auto& raw = module.raw_header_attributes();
  auto emit_raw = [&](int rank) {
    for (const RawAttribute& r : raw) {
      if (HeaderRank(r.name) == rank) {
        out.append(", ");
        out.append(r.name);
        out.push_back('=');
        out.append(r.value);
      }
    }
  };
  for (int rank = 1; rank <= 12; ++rank) {
    switch (rank) {
      case 4:
        if (!module.entry_computation_layout().empty()) {
          out.append(", entry_computation_layout=");
          out.append(module.entry_computation_layout());
        }
        break;
      case 7:
        if (module.replica_count() != 1) {
          out.append(", replica_count=");
          AppendInt(module.replica_count(), out);
        }
        break;
      case 8:
        if (module.num_partitions() != 1) {
          out.append(", num_partitions=");
          AppendInt(module.num_partitions(), out);
        }
        break;
      case 9:
        if (!module.frontend_attributes().empty()) {
          out.append(", ");
          AppendFrontendAttributes(module.frontend_attributes(), out);
        }
        break;
      default:
        if (!raw.empty()) emit_raw(rank);
        break;
    }
  }
  out.append("\n\n");
}

void AppendStackFrames(const StackFrameIndex& sf, std::string& out) {
  auto section_strings = [&](std::string_view title,
                             const std::vector<std::string>& items) {
    out.append(title);
    out.push_back('\n');
    for (size_t i = 0; i < items.size(); ++i) {
      AppendInt(static_cast<int64_t>(i + 1), out);
      out.append(" \"");
      AppendEscaped(items[i], out);
      out.append("\"\n");
    }
    out.push_back('\n');
  };
  section_strings("FileNames", sf.file_names);
  section_strings("FunctionNames", sf.function_names);
  out.append("FileLocations\n");
  for (size_t i = 0; i < sf.file_locations.size(); ++i) {
    const auto& l = sf.file_locations[i];
    AppendInt(static_cast<int64_t>(i + 1), out);
    out.append(" {file_name_id=");
    AppendInt(l.file_name_id, out);
    out.append(" function_name_id=");
    AppendInt(l.function_name_id, out);
    out.append(" line=");
    AppendInt(l.line, out);
    out.append(" end_line=");
    AppendInt(l.end_line, out);
    out.append(" column=");
    AppendInt(l.column, out);
    out.append(" end_column=");
    AppendInt(l.end_column, out);
    out.append("}\n");
  }
  out.push_back('\n');
  out.append("StackFrames\n");
  for (size_t i = 0; i < sf.frames.size(); ++i) {
    const auto& f = sf.frames[i];
    AppendInt(static_cast<int64_t>(i + 1), out);
    out.append(" {file_location_id=");
    AppendInt(f.file_location_id, out);
    out.append(" parent_frame_id=");
    AppendInt(f.parent_frame_id, out);
    out.append("}\n");
  }
  out.append("\n\n");
}

}  // namespace

void AppendShape(const Shape& shape, std::string& out, bool print_layout) {
  AppendShapeImpl(shape, print_layout, out);
}

std::vector<const Instruction*> PrintOrder(const Computation& computation) {
  std::vector<const Instruction*> order;
  ComputePrintOrder(computation, order);
  return order;
}

void AppendQuotedString(std::string_view s, std::string& out) {
  out.push_back('"');
  AppendEscaped(s, out);
  out.push_back('"');
}

void AppendInstruction(const Instruction& instruction, std::string& out,
                       const PrintOptions& options) {
  InstructionPrinter(instruction, options, out).Print();
}

void AppendComputation(const Computation& computation, std::string& out,
                       const PrintOptions& options) {
  std::vector<const Instruction*> order;
  AppendComputationImpl(computation, out, options, order);
}

void AppendModule(const Module& module, std::string& out,
                  const PrintOptions& options) {
  // Rough size estimate to avoid most reallocations: ~300 bytes per
  // instruction (metadata and backend configs dominate).
  int64_t count = 0;
  for (const auto& c : module.computations()) count += c->instruction_count();
  out.reserve(out.size() + 1024 + count * 320);
  AppendHeader(module, out);
  if (options.print_metadata && !module.stack_frames().empty()) {
    AppendStackFrames(module.stack_frames(), out);
  }
  std::vector<const Instruction*> order;
  for (const auto& c : module.computations()) {
    AppendComputationImpl(*c, out, options, order);
    out.append("\n\n");
  }
}

std::string PrintModule(const Module& module, const PrintOptions& options) {
  std::string out;
  AppendModule(module, out, options);
  return out;
}

}  // namespace hloverlap
