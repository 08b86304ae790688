// HLO text printer (printer.h): the current default XLA style.
//
// Speed matters (>= 200 MB/s of output on the corpus): everything is written
// through `Out`, a cursor into one std::string that is grown geometrically
// and trimmed at the end, so appends are a bounds check plus memcpy; numbers
// go through std::to_chars; strings are escaped in runs found with a lookup
// table; no temporary strings are built per instruction.
//
// Attribute order follows XLA's printer (hlo_text_format.md §4.2, §9,
// §10.1): the opcode-specific attributes (typed and raw ones merged by their
// XLA position), raw attributes XLA has no fixed place for (stored order),
// called computations, is_composite, sharding, frontend_attributes,
// control-predecessors, statistics/result_accuracy/origin, metadata,
// backend_config.
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
#include "absl/functional/function_ref.h"
#include "hlo/lexer.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace hloverlap {
namespace {

// ---------------------------------------------------------------------------
// Output cursor.

// Writes into a std::string through a raw pointer. The string is grown
// (zero-filled, geometrically) ahead of the cursor and trimmed to the written
// size by Finish() / the destructor. Given a sink, the string is a buffer of
// fixed size instead: when it is full its contents go to the sink and the
// cursor starts over (a write larger than the buffer grows it once).
class Out {
 public:
  using Sink = absl::FunctionRef<bool(std::string_view)>;
  explicit Out(std::string& s) : s_(s) { Attach(s_.size(), 256); }
  Out(std::string& buffer, const Sink* sink) : s_(buffer), sink_(sink) {
    s_.clear();
    Attach(0, kStreamBuffer);
  }
  ~Out() { Finish(); }
  Out(const Out&) = delete;
  Out& operator=(const Out&) = delete;

  // Ensures room for `n` more bytes.
  void Reserve(size_t n) {
    if (static_cast<size_t>(end_ - p_) < n) Grow(n);
  }
  void Put(char c) {
    Reserve(1);
    *p_++ = c;
  }
  void Put(std::string_view v) {
    Reserve(v.size());
    std::memcpy(p_, v.data(), v.size());
    p_ += v.size();
  }
  template <size_t N>
  void Lit(const char (&s)[N]) {
    Reserve(N - 1);
    std::memcpy(p_, s, N - 1);
    p_ += N - 1;
  }
  void Int(int64_t v) {
    Reserve(24);
    p_ = std::to_chars(p_, p_ + 24, v).ptr;
  }
  // Unchecked writes after Reserve().
  void RawPut(char c) { *p_++ = c; }
  void RawPut(const char* s, size_t n) {
    std::memcpy(p_, s, n);
    p_ += n;
  }

  // Trims the string to the written size. The Out is still usable: the next
  // write grows the string again.
  void Finish() {
    if (p_ == nullptr) return;
    if (sink_ != nullptr) {
      Flush();
      return;
    }
    s_.resize(p_ - s_.data());
    p_ = end_ = nullptr;
  }
  // False once the sink failed (later output is dropped).
  bool ok() const { return sink_ok_; }
  // The write position and how often the buffer was handed to the sink or
  // moved: [a, cursor()) is what was written since cursor() gave `a` while
  // moves() stays the same.
  const char* cursor() const { return p_; }
  uint64_t moves() const { return moves_; }

 private:
  void Attach(size_t used, size_t extra) {
    s_.resize(std::max(s_.capacity(), used + extra));
    p_ = s_.data() + used;
    end_ = s_.data() + s_.size();
  }
  static constexpr size_t kStreamBuffer = 256 << 10;

  void Flush() {
    ++moves_;
    if (sink_ok_ && p_ != s_.data()) {
      sink_ok_ = (*sink_)(std::string_view(s_.data(), p_ - s_.data()));
    }
    p_ = s_.data();
  }
  void Grow(size_t n) {
    if (p_ == nullptr) {
      Attach(s_.size(), n + 256);
      return;
    }
    if (sink_ != nullptr) {
      Flush();
      if (n > s_.size()) Attach(0, n);
      return;
    }
    const size_t used = p_ - s_.data();
    ++moves_;
    s_.resize(std::max(used + n, 2 * s_.size()));
    p_ = s_.data() + used;
    end_ = s_.data() + s_.size();
  }

  std::string& s_;
  const Sink* sink_ = nullptr;
  bool sink_ok_ = true;
  char* p_ = nullptr;
  char* end_ = nullptr;
  uint64_t moves_ = 0;
};

template <typename Container>
void IntList(const Container& values, Out& out) {
  out.Put('{');
  bool first = true;
  for (int64_t v : values) {
    if (!first) out.Put(',');
    first = false;
    out.Int(v);
  }
  out.Put('}');
}

inline void Name(std::string_view name, Out& out) {
  out.Reserve(name.size() + 1);
  out.RawPut('%');
  out.RawPut(name.data(), name.size());
}

// 0: copy as is; 1: two-char escape; 2: octal escape.
constexpr std::array<uint8_t, 256> MakeEscapeTable() {
  std::array<uint8_t, 256> t{};
  for (int c = 0; c < 256; ++c) t[c] = (c < 0x20 || c >= 0x7f) ? 2 : 0;
  t['\n'] = 1;
  t['\r'] = 1;
  t['\t'] = 1;
  t['"'] = 1;
  t['\''] = 1;
  t['\\'] = 1;
  return t;
}
constexpr std::array<uint8_t, 256> kEscape = MakeEscapeTable();

// Word-at-a-time byte tests (exact for "does any byte match").
inline uint64_t Load8(const unsigned char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
constexpr uint64_t kOnes = 0x0101010101010101ull;
constexpr uint64_t kHighBits = 0x8080808080808080ull;
inline uint64_t AnyByteLess(uint64_t v, uint8_t n) {  // n <= 128
  return (v - kOnes * n) & ~v & kHighBits;
}
inline uint64_t AnyByteEq(uint64_t v, uint8_t c) {
  return AnyByteLess(v ^ (kOnes * c), 1);
}
// True if one of the 8 bytes needs escaping (see kEscape).
inline bool NeedsEscape8(uint64_t v) {
  return (AnyByteLess(v, 0x20) | (v & kHighBits) | AnyByteEq(v, 0x7f) |
          AnyByteEq(v, '"') | AnyByteEq(v, '\'') | AnyByteEq(v, '\\')) != 0;
}

// Advances p to the first byte of [p, end) with table[byte] set, or end.
template <typename Table, typename WordTest>
inline const unsigned char* SkipPlain(const unsigned char* p,
                                      const unsigned char* end,
                                      const Table& table, WordTest word_test) {
  for (;;) {
    while (end - p >= 8 && !word_test(Load8(p))) p += 8;
    const unsigned char* lim = end - p >= 8 ? p + 8 : end;
    while (p < lim && !table[*p]) ++p;
    if (p < lim || p == end) return p;
  }
}

// The first byte of [p, end) that needs escaping (kEscape), or end. SSE2:
// 16 bytes a time (a signed compare below 0x20 also catches bytes >= 0x80).
inline const unsigned char* SkipUnescaped(const unsigned char* p,
                                          const unsigned char* end) {
#if defined(__SSE2__)
  const __m128i k20 = _mm_set1_epi8(0x20), k7f = _mm_set1_epi8(0x7f);
  const __m128i kdq = _mm_set1_epi8('"'), ksq = _mm_set1_epi8('\'');
  const __m128i kbs = _mm_set1_epi8('\\');
  while (end - p >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i hit = _mm_or_si128(
        _mm_or_si128(_mm_cmplt_epi8(v, k20), _mm_cmpeq_epi8(v, k7f)),
        _mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi8(v, kdq), _mm_cmpeq_epi8(v, ksq)),
            _mm_cmpeq_epi8(v, kbs)));
    const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(hit));
    if (mask != 0) return p + __builtin_ctz(mask);
    p += 16;
  }
#endif
  return SkipPlain(p, end, kEscape, NeedsEscape8);
}

void Escaped(std::string_view s, Out& out) {
  const unsigned char* p = reinterpret_cast<const unsigned char*>(s.data());
  const unsigned char* end = p + s.size();
  while (p < end) {
    const unsigned char* run = p;
    p = SkipUnescaped(p, end);
    if (p > run) {
      out.Put(std::string_view(reinterpret_cast<const char*>(run), p - run));
    }
    if (p == end) break;
    const uint8_t c = *p++;
    out.Reserve(4);
    out.RawPut('\\');
    if (kEscape[c] == 1) {
      switch (c) {
        case '\n':
          out.RawPut('n');
          break;
        case '\r':
          out.RawPut('r');
          break;
        case '\t':
          out.RawPut('t');
          break;
        default:
          out.RawPut(static_cast<char>(c));
          break;
      }
    } else {
      out.RawPut(static_cast<char>('0' + ((c >> 6) & 7)));
      out.RawPut(static_cast<char>('0' + ((c >> 3) & 7)));
      out.RawPut(static_cast<char>('0' + (c & 7)));
    }
  }
}

void Quoted(std::string_view s, Out& out) {
  out.Put('"');
  Escaped(s, out);
  out.Put('"');
}

// Characters IsBraceBlob must look at.
constexpr std::array<bool, 256> MakeBlobTable() {
  std::array<bool, 256> t{};
  t['"'] = t['{'] = t['}'] = t['\\'] = true;
  return t;
}
constexpr std::array<bool, 256> kBlobSpecial = MakeBlobTable();

// True if `s` is one balanced brace blob: starts with '{' and the matching
// '}' is its last character, skipping over double-quoted strings. Such text
// is printed raw (backend_config, frontend attribute values); anything else
// is printed as a quoted string so the output always parses.
// Set bits of a 16-bit mask (SWAR: the builtin is a library call without
// -mpopcnt).
inline int Popcount16(unsigned x) {
  x = x - ((x >> 1) & 0x5555u);
  x = (x & 0x3333u) + ((x >> 2) & 0x3333u);
  x = (x + (x >> 4)) & 0x0f0fu;
  return static_cast<int>((x + (x >> 8)) & 0x1fu);
}

bool IsBraceBlob(std::string_view s) {
  if (s.size() < 2 || s.front() != '{' || s.back() != '}') return false;
  const unsigned char* d = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  int64_t depth = 0;
  bool in_string = false;
  size_t p = 0;
  while (p < n) {
    size_t stop = n;
#if defined(__SSE2__)
    if (n - p >= 16) {
      // A block without backslashes whose braces cannot close the blob:
      // strings from a prefix XOR of the quote bits, the braces outside
      // them counted. Any other block goes through the loop below.
      const __m128i v =
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + p));
      auto bits = [&v](char c) {
        return static_cast<unsigned>(
            _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(c))));
      };
      if (bits('\\') == 0) {
        const unsigned inside = InsideStringMask16(bits('"'), in_string);
        const int opens = Popcount16(bits('{') & ~inside);
        const int closes = Popcount16(bits('}') & ~inside);
        if (depth > closes) {
          depth += opens - closes;
          in_string = (inside >> 15) != 0;
          p += 16;
          continue;
        }
      }
      stop = p + 16;
    }
#endif
    while (p < stop) {
      const unsigned char c = d[p++];
      if (!kBlobSpecial[c]) continue;
      if (in_string) {
        if (c == '\\') {
          if (p < n) ++p;  // skip the escaped character
        } else if (c == '"') {
          in_string = false;
        }
        continue;
      }
      if (c == '"') {
        in_string = true;
      } else if (c == '{') {
        ++depth;
      } else if (c == '}') {
        if (--depth == 0) return p == n;
      }
    }
  }
  return false;
}

// ---------------------------------------------------------------------------
// Shapes.

// Splits Layout::other_tail into items ("L(2)", "SC(0:1)(1:2)") and writes
// those whose XLA print position is `slot`: 0 before tiles (D), 1 between
// tiles and E (L, #, *), 2 after S (SC, P, M and anything unknown).
void TailItems(std::string_view tail, int slot, Out& out) {
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
    if (item_slot == slot) out.Put(tail.substr(start, i - start));
  }
}

void LayoutText(const Layout& layout, int64_t rank, Out& out) {
  const bool has_tail = !layout.tiles.empty() ||
                        layout.element_size_bits != 0 ||
                        layout.memory_space != 0 || !layout.other_tail.empty();
  if (rank == 0 && layout.minor_to_major.empty() && !has_tail) return;
  out.Put('{');
  bool first = true;
  for (int64_t d : layout.minor_to_major) {
    if (!first) out.Put(',');
    first = false;
    out.Int(d);
  }
  if (has_tail) {
    out.Put(':');
    if (!layout.other_tail.empty()) TailItems(layout.other_tail, 0, out);
    if (!layout.tiles.empty()) {
      out.Put('T');
      for (const Tile& tile : layout.tiles) {
        out.Put('(');
        bool tfirst = true;
        for (int64_t d : tile.dims) {
          if (!tfirst) out.Put(',');
          tfirst = false;
          if (d == Tile::kCombineDim) {
            out.Put('*');
          } else {
            out.Int(d);
          }
        }
        out.Put(')');
      }
    }
    if (!layout.other_tail.empty()) TailItems(layout.other_tail, 1, out);
    if (layout.element_size_bits != 0) {
      out.Lit("E(");
      out.Int(layout.element_size_bits);
      out.Put(')');
    }
    if (layout.memory_space != 0) {
      out.Lit("S(");
      out.Int(layout.memory_space);
      out.Put(')');
    }
    if (!layout.other_tail.empty()) TailItems(layout.other_tail, 2, out);
  }
  out.Put('}');
}

void ShapeText(const Shape& shape, bool print_layout, Out& out) {
  if (shape.IsTuple()) {
    out.Put('(');
    const auto& elems = shape.tuple_shapes();
    for (size_t i = 0; i < elems.size(); ++i) {
      if (i > 0) {
        out.Lit(", ");
        if (i % 5 == 0) {
          out.Lit("/*index=");
          out.Int(static_cast<int64_t>(i));
          out.Lit("*/");
        }
      }
      ShapeText(elems[i], print_layout, out);
    }
    out.Put(')');
    return;
  }
  const auto& dims = shape.dimensions();
  const auto& kinds = shape.dim_kinds();
  const std::string_view type = PrimitiveTypeName(shape.element_type());
  // Type, brackets and up to 20 digits plus "<=" and ',' per dimension.
  out.Reserve(type.size() + 2 + dims.size() * 23);
  out.RawPut(type.data(), type.size());
  out.RawPut('[');
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) out.RawPut(',');
    const DimKind kind = i < kinds.size() ? kinds[i] : DimKind::kStatic;
    if (kind == DimKind::kUnbounded) {
      out.RawPut('?');
    } else {
      if (kind == DimKind::kBounded) out.RawPut("<=", 2);
      out.Int(dims[i]);
    }
  }
  out.Put(']');
  if (print_layout && shape.has_layout() && shape.IsArray()) {
    LayoutText(*shape.layout(), shape.rank(), out);
  }
}

// The text of instruction shapes (layouts included) by the Shape's address,
// for one print: instructions spelled alike share one Shape (SharedShape),
// so a module's few hundred distinct shapes are formatted once each and
// copied after that. Nothing is freed while a module prints, so an address
// names one shape throughout.
class ShapeTextCache {
 public:
  void Print(const Shape& shape, Out& out) {
    auto it = spans_.find(&shape);
    if (it != spans_.end()) {
      out.Put(
          std::string_view(text_.data() + it->second.first, it->second.second));
      return;
    }
    const char* start = out.cursor();
    const uint64_t moves = out.moves();
    ShapeText(shape, /*print_layout=*/true, out);
    if (out.moves() != moves || start == nullptr || text_.size() > kMaxText) {
      return;  // not kept: the text is no longer in one piece (or too much)
    }
    const size_t size = out.cursor() - start;
    spans_.emplace(&shape, std::make_pair(static_cast<uint32_t>(text_.size()),
                                          static_cast<uint32_t>(size)));
    text_.append(start, size);
  }

 private:
  static constexpr size_t kMaxText = size_t{16} << 20;
  absl::flat_hash_map<const Shape*, std::pair<uint32_t, uint32_t>> spans_;
  std::string text_;
};

// ---------------------------------------------------------------------------
// Attribute values.

void ReplicaGroupsText(const ReplicaGroups& rg, Out& out) {
  switch (rg.format) {
    case ReplicaGroups::Format::kExplicit:
    case ReplicaGroups::Format::kNone: {
      out.Put('{');
      bool first = true;
      for (const auto& group : rg.explicit_groups) {
        if (!first) out.Put(',');
        first = false;
        IntList(group, out);
      }
      out.Put('}');
      return;
    }
    case ReplicaGroups::Format::kIota: {
      out.Put('[');
      out.Int(rg.iota_num_groups);
      out.Put(',');
      out.Int(rg.iota_group_size);
      out.Lit("]<=[");
      bool first = true;
      for (int64_t d : rg.iota_reshape_dims) {
        if (!first) out.Put(',');
        first = false;
        out.Int(d);
      }
      out.Put(']');
      if (!rg.iota_transpose_perm.empty()) {
        out.Lit("T(");
        first = true;
        for (int64_t d : rg.iota_transpose_perm) {
          if (!first) out.Put(',');
          first = false;
          out.Int(d);
        }
        out.Put(')');
      }
      return;
    }
    case ReplicaGroups::Format::kMesh:
      out.Put(rg.mesh_text);
      return;
  }
}

bool MetadataEmpty(const OpMetadata& m) {
  return m.op_type.empty() && m.op_name.empty() && m.source_file.empty() &&
         m.source_line == 0 && m.source_end_line == 0 && m.source_column == 0 &&
         m.source_end_column == 0 && m.profile_type.empty() &&
         m.deduplicated_name.empty() && m.scheduling_name.empty() &&
         m.stack_frame_id == 0 && m.metadata_payload.empty();
}

class MetadataPrinter {
 public:
  explicit MetadataPrinter(Out& out) : out_(out) {}
  template <size_t N>
  void Str(const char (&key)[N], const std::string& v) {
    if (v.empty()) return;
    Sep();
    out_.Lit(key);
    out_.Lit("=\"");
    Escaped(v, out_);
    out_.Put('"');
  }
  template <size_t N>
  void Num(const char (&key)[N], int64_t v) {
    if (v == 0) return;
    Sep();
    out_.Lit(key);
    out_.Put('=');
    out_.Int(v);
  }
  template <size_t N>
  void Raw(const char (&key)[N], const std::string& v) {
    if (v.empty()) return;
    Sep();
    out_.Lit(key);
    out_.Put('=');
    out_.Put(v);
  }

 private:
  void Sep() {
    if (!first_) out_.Put(' ');
    first_ = false;
  }
  Out& out_;
  bool first_ = true;
};

void MetadataText(const OpMetadata& m, Out& out) {
  out.Lit("metadata={");
  MetadataPrinter p(out);
  p.Str("op_type", m.op_type);
  p.Str("op_name", m.op_name);
  p.Str("source_file", m.source_file);
  p.Num("source_line", m.source_line);
  p.Num("source_end_line", m.source_end_line);
  p.Num("source_column", m.source_column);
  p.Num("source_end_column", m.source_end_column);
  p.Raw("profile_type", m.profile_type);
  p.Str("deduplicated_name", m.deduplicated_name);
  // XLA prints scheduling_name unescaped; escaping only differs for names
  // that would otherwise not parse back.
  p.Str("scheduling_name", m.scheduling_name);
  p.Num("stack_frame_id", m.stack_frame_id);
  p.Str("metadata_payload", m.metadata_payload);
  out.Put('}');
}

void FrontendAttributesText(const FrontendAttributes& attrs, Out& out) {
  out.Lit("frontend_attributes={");
  // Keys sorted as XLA prints them; stable for duplicate keys.
  absl::InlinedVector<const FrontendAttribute*, 8> sorted;
  sorted.reserve(attrs.size());
  bool in_order = true;
  for (const auto& a : attrs) {
    if (!sorted.empty() && a.key < sorted.back()->key) in_order = false;
    sorted.push_back(&a);
  }
  if (!in_order) {
    std::stable_sort(
        sorted.begin(), sorted.end(),
        [](const FrontendAttribute* a, const FrontendAttribute* b) {
          return a->key < b->key;
        });
  }
  bool first = true;
  for (const FrontendAttribute* a : sorted) {
    if (!first) out.Put(',');
    first = false;
    out.Put(a->key);
    out.Put('=');
    if (a->is_raw && IsBraceBlob(a->value)) {
      out.Put(a->value);
    } else {
      Quoted(a->value, out);
    }
  }
  out.Put('}');
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

// A raw attribute XLA prints right after the called computations: a
// reducing collective's output_to_operand_aliasing (all-reduce-start's
// result aliases its operand: `to_apply=%add, output_to_operand_aliasing=`).
bool IsAfterCalleesRawAttr(Opcode op, std::string_view name) {
  return (op == Opcode::kAllReduceStart || op == Opcode::kAllReduce) &&
         name == "output_to_operand_aliasing";
}

bool IsLateRawAttr(std::string_view name) {
  for (std::string_view n : kLateRawAttrs) {
    if (n == name) return true;
  }
  return false;
}

// Per opcode: its slots followed by the generic typed slots it does not
// mention, so one walk visits every attribute in print order.
const std::vector<SlotList>& FullSlots() {
  static const std::vector<SlotList>* table = [] {
    auto* t = new std::vector<SlotList>(OpcodeSlots());
    for (SlotList& list : *t) {
      uint32_t seen = 0;
      for (const AttrSlot& s : list) {
        if (s.typed != kRawAttr) seen |= 1u << s.typed;
      }
      for (const AttrSlot& s : GenericSlots()) {
        if (!(seen & (1u << s.typed))) list.push_back(s);
      }
    }
    return t;
  }();
  return *table;
}

constexpr uint32_t Bit(TypedAttr t) { return 1u << t; }

// The typed attributes `instr` prints.
uint32_t PresentTypedAttrs(const Instruction& instr) {
  const InstructionAttributes& a = instr.attrs();
  uint32_t m = 0;
  switch (instr.opcode()) {
    case Opcode::kGetTupleElement:
      m |= Bit(kTupleIndex);
      break;
    case Opcode::kIota:
      m |= Bit(kIotaDimension);
      break;
    case Opcode::kSlice:
      m |= Bit(kSlice);
      break;
    case Opcode::kDynamicSlice:
      m |= Bit(kDynamicSliceSizes);
      break;
    case Opcode::kPad:
      m |= Bit(kPadding);
      break;
    case Opcode::kDot:
    case Opcode::kRaggedDot:
    case Opcode::kScaledDot:
      m |= Bit(kDotDims);
      break;
    case Opcode::kCompare:
      m |= Bit(kDirection);
      break;
    case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart:
      m |= Bit(kSourceTargetPairs);
      break;
    case Opcode::kFusion:
      m |= Bit(kFusionKind);
      break;
    case Opcode::kCustomCall:
      m |= Bit(kCustomCallTarget);
      break;
    default:
      break;
  }
  if (a.has_dimensions) m |= Bit(kDimensions);
  if (!a.slice.empty()) m |= Bit(kSlice);
  if (!a.dynamic_slice_sizes.empty()) m |= Bit(kDynamicSliceSizes);
  if (!a.padding.empty()) m |= Bit(kPadding);
  if (!a.dot->lhs_batch_dims.empty() || !a.dot->lhs_contracting_dims.empty() ||
      !a.dot->rhs_batch_dims.empty() || !a.dot->rhs_contracting_dims.empty()) {
    m |= Bit(kDotDims);
  }
  if (!a.comparison_type.empty()) m |= Bit(kComparisonType);
  if (a.channel_id.has_value()) m |= Bit(kChannelId);
  if (a.replica_groups->present()) m |= Bit(kReplicaGroups);
  if (a.constrain_layout) m |= Bit(kConstrainLayout);
  if (a.use_global_device_ids) m |= Bit(kUseGlobalDeviceIds);
  if (!a.source_target_pairs.empty()) m |= Bit(kSourceTargetPairs);
  if (!a.fusion_kind.empty()) m |= Bit(kFusionKind);
  if (!a.custom_call_target.empty()) m |= Bit(kCustomCallTarget);
  return m;
}

class InstructionPrinter {
 public:
  InstructionPrinter(const Instruction& instr, const PrintOptions& options,
                     Out& out, ShapeTextCache* shapes = nullptr)
      : instr_(instr),
        attrs_(instr.attrs()),
        options_(options),
        out_(out),
        shapes_(shapes) {}

  void Print() {
    Name(instr_.name(), out_);
    out_.Lit(" = ");
    if (shapes_ != nullptr) {
      shapes_->Print(instr_.shape(), out_);
    } else {
      ShapeText(instr_.shape(), /*print_layout=*/true, out_);
    }
    out_.Put(' ');
    out_.Put(OpcodeName(instr_.opcode()));
    out_.Put('(');
    PrintOperands();
    out_.Put(')');
    PrintAttributes();
  }

 private:
  void Sep() { out_.Lit(", "); }

  void PrintOperands() {
    switch (instr_.opcode()) {
      case Opcode::kParameter:
        out_.Int(attrs_.parameter_number);
        return;
      case Opcode::kConstant: {
        const Literal* lit = attrs_.literal.get();
        if (lit == nullptr ||
            (options_.elide_constants_above >= 0 && lit->shape().IsArray() &&
             lit->element_count() > options_.elide_constants_above)) {
          out_.Lit("{...}");
        } else {
          // Literals print through literal.h into a reused scratch string
          // (handing the output string itself over would cost a zero-fill
          // of its spare capacity per constant).
          thread_local std::string scratch;
          scratch.clear();
          AppendLiteral(*lit, scratch);
          out_.Put(scratch);
          if (scratch.capacity() > (size_t{1} << 20))
            std::string().swap(scratch);
        }
        return;
      }
      default:
        break;
    }
    const auto operands = instr_.operands();
    for (size_t i = 0; i < operands.size(); ++i) {
      if (i > 0) {
        out_.Lit(", ");
        if (i % 5 == 0) {
          out_.Lit("/*index=");
          out_.Int(static_cast<int64_t>(i));
          out_.Lit("*/");
        }
      }
      const Instruction* op = operands[i];
      Name(op != nullptr ? std::string_view(op->name())
                         : std::string_view("null"),
           out_);
    }
  }

  // Emits typed attribute `t` (known to be present).
  void PrintTyped(TypedAttr t) {
    Sep();
    switch (t) {
      case kDimensions:
        out_.Lit("dimensions=");
        IntList(attrs_.dimensions, out_);
        return;
      case kTupleIndex:
        out_.Lit("index=");
        out_.Int(attrs_.tuple_index);
        return;
      case kIotaDimension:
        out_.Lit("iota_dimension=");
        out_.Int(attrs_.iota_dimension);
        return;
      case kSlice: {
        out_.Lit("slice={");
        bool strided = false;
        for (const SliceRange& r : attrs_.slice) strided |= r.stride != 1;
        bool first = true;
        for (const SliceRange& r : attrs_.slice) {
          if (!first) out_.Lit(", ");
          first = false;
          out_.Put('[');
          out_.Int(r.start);
          out_.Put(':');
          out_.Int(r.limit);
          if (strided) {
            out_.Put(':');
            out_.Int(r.stride);
          }
          out_.Put(']');
        }
        out_.Put('}');
        return;
      }
      case kDynamicSliceSizes:
        out_.Lit("dynamic_slice_sizes=");
        IntList(attrs_.dynamic_slice_sizes, out_);
        return;
      case kPadding: {
        out_.Lit("padding=");
        bool interior = false;
        for (const PaddingDim& p : attrs_.padding) interior |= p.interior != 0;
        bool first = true;
        for (const PaddingDim& p : attrs_.padding) {
          if (!first) out_.Put('x');
          first = false;
          out_.Int(p.low);
          out_.Put('_');
          out_.Int(p.high);
          if (interior) {
            out_.Put('_');
            out_.Int(p.interior);
          }
        }
        return;
      }
      case kDotDims: {
        const DotDimensionNumbers& d = attrs_.dot;
        if (!d.lhs_batch_dims.empty()) {
          out_.Lit("lhs_batch_dims=");
          IntList(d.lhs_batch_dims, out_);
          Sep();
        }
        out_.Lit("lhs_contracting_dims=");
        IntList(d.lhs_contracting_dims, out_);
        if (!d.rhs_batch_dims.empty()) {
          Sep();
          out_.Lit("rhs_batch_dims=");
          IntList(d.rhs_batch_dims, out_);
        }
        Sep();
        out_.Lit("rhs_contracting_dims=");
        IntList(d.rhs_contracting_dims, out_);
        return;
      }
      case kDirection:
        out_.Lit("direction=");
        out_.Put(ComparisonDirectionName(attrs_.comparison_direction));
        return;
      case kComparisonType:
        out_.Lit("type=");
        out_.Put(attrs_.comparison_type);
        return;
      case kChannelId:
        out_.Lit("channel_id=");
        out_.Int(attrs_.channel_id.value_or(0));
        return;
      case kReplicaGroups:
        out_.Lit("replica_groups=");
        ReplicaGroupsText(attrs_.replica_groups, out_);
        return;
      case kConstrainLayout:
        out_.Lit("constrain_layout=true");
        return;
      case kUseGlobalDeviceIds:
        out_.Lit("use_global_device_ids=true");
        return;
      case kSourceTargetPairs: {
        out_.Lit("source_target_pairs={");
        bool first = true;
        for (const auto& [s, t] : attrs_.source_target_pairs) {
          if (!first) out_.Put(',');
          first = false;
          out_.Put('{');
          out_.Int(s);
          out_.Put(',');
          out_.Int(t);
          out_.Put('}');
        }
        out_.Put('}');
        return;
      }
      case kFusionKind:
        out_.Lit("kind=");
        out_.Put(attrs_.fusion_kind);
        return;
      case kCustomCallTarget:
        out_.Lit("custom_call_target=");
        Quoted(attrs_.custom_call_target, out_);
        return;
      default:
        return;
    }
  }

  void PrintRaw(const RawAttribute& raw) {
    Sep();
    out_.Put(raw.name);
    out_.Put('=');
    out_.Put(raw.value);
  }

  void Callee(const Computation* c) {
    Name(c != nullptr ? std::string_view(c->name()) : std::string_view("null"),
         out_);
  }

  template <size_t N>
  void CalleeAttr(const char (&attr)[N], const Computation* c) {
    Sep();
    out_.Lit(attr);
    out_.Put('=');
    Callee(c);
  }

  template <size_t N>
  void CalleeList(const char (&attr)[N],
                  const std::vector<Computation*>& callees) {
    Sep();
    out_.Lit(attr);
    out_.Lit("={");
    for (size_t i = 0; i < callees.size(); ++i) {
      if (i > 0) out_.Lit(", ");
      Callee(callees[i]);
    }
    out_.Put('}');
  }

  void PrintCalledComputations() {
    const auto& callees = instr_.called_computations();
    if (callees.empty()) return;
    switch (instr_.opcode()) {
      case Opcode::kWhile:
        CalleeAttr("condition", callees[0]);
        if (callees.size() > 1) CalleeAttr("body", callees[1]);
        return;
      case Opcode::kConditional:
        if (!attrs_.branch_computations_form && callees.size() == 2) {
          CalleeAttr("true_computation", callees[0]);
          CalleeAttr("false_computation", callees[1]);
        } else {
          CalleeList("branch_computations", callees);
        }
        return;
      case Opcode::kSelectAndScatter:
        CalleeAttr("select", callees[0]);
        if (callees.size() > 1) CalleeAttr("scatter", callees[1]);
        return;
      case Opcode::kCustomCall:
        CalleeList("called_computations", callees);
        return;
      case Opcode::kFusion:
      case Opcode::kAsyncStart:
        CalleeAttr("calls", callees[0]);
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
        CalleeAttr("to_apply", callees[0]);
        return;
      default:
        if (callees.size() == 1) {
          CalleeAttr("calls", callees[0]);
        } else {
          CalleeList("called_computations", callees);
        }
        return;
    }
  }

  // Raw attributes named `name` not printed yet.
  void PrintRawNamed(std::string_view name, uint64_t& raw_left) {
    const auto& raw = attrs_.raw;
    for (size_t j = 0; j < raw.size() && j < 64; ++j) {
      if ((raw_left >> j & 1) && raw[j].name == name) {
        raw_left &= ~(uint64_t{1} << j);
        PrintRaw(raw[j]);
      }
    }
  }

  void PrintAttributes() {
    const auto& raw = attrs_.raw;
    // Bit j: raw[j] not printed yet (beyond 64 entries, the rest print in
    // stored order with the unplaced ones).
    uint64_t raw_left =
        raw.empty() ? 0
                    : (raw.size() >= 64 ? ~uint64_t{0}
                                        : (uint64_t{1} << raw.size()) - 1);
    uint32_t typed_left = PresentTypedAttrs(instr_);
    if (typed_left != 0 || raw_left != 0) {
      const int op_index = static_cast<int>(instr_.opcode());
      const auto& table = FullSlots();
      if (op_index >= 0 && op_index < static_cast<int>(table.size())) {
        for (const AttrSlot& slot : table[op_index]) {
          if (slot.typed != kRawAttr) {
            const uint32_t bit = Bit(slot.typed);
            if (typed_left & bit) {
              typed_left &= ~bit;
              PrintTyped(slot.typed);
            }
          } else if (raw_left != 0) {
            PrintRawNamed(slot.name, raw_left);
          }
          if (typed_left == 0 && raw_left == 0) break;
        }
      }
      // Raw attributes XLA has no fixed place for, in stored order.
      for (size_t j = 0; j < raw.size(); ++j) {
        const bool left = j >= 64 || (raw_left >> j & 1);
        if (left && !IsLateRawAttr(raw[j].name) &&
            !IsAfterCalleesRawAttr(instr_.opcode(), raw[j].name)) {
          if (j < 64) raw_left &= ~(uint64_t{1} << j);
          PrintRaw(raw[j]);
        }
      }
    }
    PrintCalledComputations();
    for (size_t j = 0; j < raw.size(); ++j) {
      const bool left = j >= 64 || (raw_left >> j & 1);
      if (left && IsAfterCalleesRawAttr(instr_.opcode(), raw[j].name)) {
        if (j < 64) raw_left &= ~(uint64_t{1} << j);
        PrintRaw(raw[j]);
      }
    }
    if (attrs_.is_composite) out_.Lit(", is_composite=true");
    if (!attrs_.sharding.empty()) {
      out_.Lit(", sharding=");
      out_.Put(attrs_.sharding);
    }
    if (!attrs_.frontend_attributes.empty()) {
      Sep();
      FrontendAttributesText(attrs_.frontend_attributes, out_);
    }
    const auto& preds = instr_.control_predecessors();
    if (!preds.empty()) {
      out_.Lit(", control-predecessors={");
      for (size_t i = 0; i < preds.size(); ++i) {
        if (i > 0) out_.Lit(", ");
        Name(preds[i] != nullptr ? std::string_view(preds[i]->name())
                                 : std::string_view("null"),
             out_);
      }
      out_.Put('}');
    }
    if (raw_left != 0) {
      for (std::string_view late : kLateRawAttrs) PrintRawNamed(late, raw_left);
    }
    for (size_t j = 64; j < raw.size(); ++j) {
      if (IsLateRawAttr(raw[j].name)) PrintRaw(raw[j]);
    }
    if (options_.print_metadata && !MetadataEmpty(attrs_.metadata)) {
      Sep();
      MetadataText(attrs_.metadata, out_);
    }
    if (options_.print_backend_config && attrs_.while_config->present()) {
      // A while's decoded config (while_backend_config.h), re-encoded:
      // verbatim when unchanged.
      out_.Lit(", backend_config=");
      out_.Put(attrs_.while_config->Encode());
    } else if (options_.print_backend_config &&
               !attrs_.backend_config.empty()) {
      out_.Lit(", backend_config=");
      if (attrs_.backend_config_is_raw &&
          (attrs_.backend_config.checked_blob() ||
           IsBraceBlob(attrs_.backend_config))) {
        out_.Put(attrs_.backend_config);
      } else {
        Quoted(attrs_.backend_config, out_);
      }
    }
  }

  const Instruction& instr_;
  const InstructionAttributes& attrs_;
  const PrintOptions& options_;
  Out& out_;
  ShapeTextCache* shapes_;
};

// ---------------------------------------------------------------------------
// Instruction order.

// Scratch space reused across the computations of one module.
struct OrderScratch {
  std::vector<int32_t> table;  // unique id - base -> stored position, or -1
  absl::flat_hash_map<const Instruction*, int32_t> map;
  std::vector<const Instruction*> order;
  ShapeTextCache shapes;
};

// Maps instructions of one computation to their stored positions: a dense
// table over unique ids when they are compact, else a hash map.
class PositionMap {
 public:
  PositionMap(const Computation& c, OrderScratch& scratch)
      : instrs_(c.instructions()), scratch_(scratch) {
    const int64_t n = static_cast<int64_t>(instrs_.size());
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (const auto& i : instrs_) {
      lo = std::min(lo, i->unique_id());
      hi = std::max(hi, i->unique_id());
    }
    dense_ = n > 0 && lo >= 0 && hi - lo <= 4 * n + 64;
    if (dense_) {
      base_ = lo;
      scratch_.table.assign(hi - lo + 1, -1);
      for (int64_t p = 0; p < n; ++p) {
        int32_t& slot = scratch_.table[instrs_[p]->unique_id() - lo];
        if (slot != -1) {  // duplicate ids: fall back to the hash map
          dense_ = false;
          break;
        }
        slot = static_cast<int32_t>(p);
      }
    }
    if (!dense_) {
      scratch_.map.clear();
      scratch_.map.reserve(n);
      for (int64_t p = 0; p < n; ++p) {
        scratch_.map[instrs_[p].get()] = static_cast<int32_t>(p);
      }
    }
  }

  // Stored position of `i` in the computation, or -1.
  int64_t Find(const Instruction* i) const {
    if (i == nullptr) return -1;
    if (dense_) {
      const int64_t k = i->unique_id() - base_;
      if (k < 0 || k >= static_cast<int64_t>(scratch_.table.size())) return -1;
      const int32_t p = scratch_.table[k];
      // An instruction of another computation may share the id range.
      if (p < 0 || instrs_[p].get() != i) return -1;
      return p;
    }
    auto it = scratch_.map.find(i);
    return it == scratch_.map.end() ? -1 : it->second;
  }

 private:
  const std::vector<std::unique_ptr<Instruction>>& instrs_;
  OrderScratch& scratch_;
  bool dense_ = false;
  int64_t base_ = 0;
};

// True when every operand and control predecessor of every instruction
// comes earlier in stored order (references outside the computation are
// not checked here).
bool StoredOrderIsTopological(const Computation& c, const PositionMap& pos) {
  const auto& instrs = c.instructions();
  const int64_t n = static_cast<int64_t>(instrs.size());
  for (int64_t p = 0; p < n; ++p) {
    const Instruction* i = instrs[p].get();
    for (const Instruction* op : i->operands()) {
      if (pos.Find(op) >= p) return false;
    }
    for (const Instruction* pred : i->control_predecessors()) {
      if (pos.Find(pred) >= p) return false;
    }
  }
  return true;
}

// Fills scratch.order with the print order of `c`.
void ComputePrintOrder(const Computation& c, OrderScratch& scratch) {
  const auto& instrs = c.instructions();
  const int64_t n = static_cast<int64_t>(instrs.size());
  std::vector<const Instruction*>& order = scratch.order;
  order.clear();
  order.reserve(n);
  PositionMap pos(c, scratch);
  if (StoredOrderIsTopological(c, pos)) {
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

void PrefetchObject(const Instruction* i) {
  const char* p = reinterpret_cast<const char*>(i);
  for (size_t off = 0; off < sizeof(Instruction); off += 64) {
    __builtin_prefetch(p + off);
  }
}

void PrefetchStrings(const Instruction& i) {
  const InstructionAttributes& a = i.attrs();
  __builtin_prefetch(i.name().data());
  __builtin_prefetch(a.metadata.op_name.data());
  __builtin_prefetch(a.metadata.op_name.data() + 64);
  __builtin_prefetch(a.metadata.scheduling_name.data());
  __builtin_prefetch(a.backend_config.data());
  __builtin_prefetch(a.backend_config.data() + 64);
  if (!i.operands().empty()) __builtin_prefetch(i.operands()[0]);
}

void ComputationText(const Computation& computation,
                     const PrintOptions& options, OrderScratch& scratch,
                     Out& out) {
  if (computation.is_entry()) out.Lit("ENTRY ");
  Name(computation.name(), out);
  out.Lit(" (");
  bool first = true;
  for (const Instruction* param : computation.parameters()) {
    if (param == nullptr) continue;
    if (!first) out.Lit(", ");
    first = false;
    out.Put(param->name());
    out.Lit(": ");
    ShapeText(param->shape(), /*print_layout=*/false, out);
  }
  out.Lit(") -> ");
  const Instruction* root = computation.root();
  if (root == nullptr && !computation.instructions().empty()) {
    root = computation.instructions().back().get();
  }
  if (root != nullptr) {
    ShapeText(root->shape(), /*print_layout=*/false, out);
  } else {
    out.Lit("()");
  }
  out.Lit(" {\n");
  ComputePrintOrder(computation, scratch);
  const auto& order = scratch.order;
  const size_t n = order.size();
  for (size_t k = 0; k < n; ++k) {
    const Instruction* instr = order[k];
    // Printing is bound by memory latency on large modules: an Instruction
    // spans ~23 cache lines and its strings live elsewhere. Fetch the
    // instruction two ahead and the strings of the next one early.
    if (k + 2 < n) PrefetchObject(order[k + 2]);
    if (k + 1 < n) PrefetchStrings(*order[k + 1]);
    if (instr == computation.root()) {
      out.Lit("  ROOT ");
    } else {
      out.Lit("  ");
    }
    InstructionPrinter(*instr, options, out, &scratch.shapes).Print();
    out.Put('\n');
  }
  out.Put('}');
  if (!computation.execution_thread().empty()) {
    out.Lit(", execution_thread=");
    Quoted(computation.execution_thread(), out);
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

void HeaderText(const Module& module, Out& out) {
  out.Lit("HloModule ");
  out.Put(module.name());
  if (module.is_scheduled()) out.Lit(", is_scheduled=true");
  const auto& raw = module.raw_header_attributes();
  for (int rank = 1; rank <= 12; ++rank) {
    switch (rank) {
      case 4:
        if (!module.entry_computation_layout().empty()) {
          out.Lit(", entry_computation_layout=");
          out.Put(module.entry_computation_layout());
        }
        break;
      case 7:
        if (module.replica_count() != 1) {
          out.Lit(", replica_count=");
          out.Int(module.replica_count());
        }
        break;
      case 8:
        if (module.num_partitions() != 1) {
          out.Lit(", num_partitions=");
          out.Int(module.num_partitions());
        }
        break;
      case 9:
        if (!module.frontend_attributes().empty()) {
          out.Lit(", ");
          FrontendAttributesText(module.frontend_attributes(), out);
        }
        break;
      default:
        for (const RawAttribute& r : raw) {
          if (HeaderRank(r.name) == rank) {
            out.Lit(", ");
            out.Put(r.name);
            out.Put('=');
            out.Put(r.value);
          }
        }
        break;
    }
  }
  out.Lit("\n\n");
}

void StackFramesText(const StackFrameIndex& sf, Out& out) {
  // An empty table is left out, so that no reader has to tell an empty table
  // from a computation named like one.
  auto strings = [&](std::string_view table,
                     const std::vector<std::string>& items) {
    if (items.empty()) return;
    out.Put(table);
    for (size_t i = 0; i < items.size(); ++i) {
      out.Int(static_cast<int64_t>(i + 1));
      out.Put(' ');
      Quoted(items[i], out);
      out.Put('\n');
    }
    out.Put('\n');
  };
  strings("FileNames\n", sf.file_names);
  strings("FunctionNames\n", sf.function_names);
  if (!sf.file_locations.empty()) out.Lit("FileLocations\n");
  for (size_t i = 0; i < sf.file_locations.size(); ++i) {
    const auto& l = sf.file_locations[i];
    out.Int(static_cast<int64_t>(i + 1));
    out.Lit(" {file_name_id=");
    out.Int(l.file_name_id);
    out.Lit(" function_name_id=");
    out.Int(l.function_name_id);
    out.Lit(" line=");
    out.Int(l.line);
    out.Lit(" end_line=");
    out.Int(l.end_line);
    out.Lit(" column=");
    out.Int(l.column);
    out.Lit(" end_column=");
    out.Int(l.end_column);
    out.Lit("}\n");
  }
  if (!sf.file_locations.empty()) out.Put('\n');
  if (!sf.frames.empty()) out.Lit("StackFrames\n");
  for (size_t i = 0; i < sf.frames.size(); ++i) {
    const auto& f = sf.frames[i];
    out.Int(static_cast<int64_t>(i + 1));
    out.Lit(" {file_location_id=");
    out.Int(f.file_location_id);
    // XLA prints the stored parent id plus one (stored 0 = no parent prints
    // as 1); the parser subtracts it again.
    out.Lit(" parent_frame_id=");
    out.Int(f.parent_frame_id + 1);
    out.Lit("}\n");
  }
  out.Lit("\n\n");
}

void ModuleText(const Module& module, const PrintOptions& options, Out& out) {
  HeaderText(module, out);
  if (options.print_metadata && !module.stack_frames().empty()) {
    StackFramesText(module.stack_frames(), out);
  }
  OrderScratch scratch;
  for (const auto& c : module.computations()) {
    ComputationText(*c, options, scratch, out);
    out.Lit("\n\n");
  }
}

}  // namespace

void AppendShape(const Shape& shape, std::string& out, bool print_layout) {
  Out o(out);
  ShapeText(shape, print_layout, o);
}

std::vector<const Instruction*> PrintOrder(const Computation& computation) {
  OrderScratch scratch;
  ComputePrintOrder(computation, scratch);
  return std::move(scratch.order);
}

void AppendQuotedString(std::string_view s, std::string& out) {
  Out o(out);
  Quoted(s, o);
}

void AppendInstruction(const Instruction& instruction, std::string& out,
                       const PrintOptions& options) {
  Out o(out);
  InstructionPrinter(instruction, options, o).Print();
}

void AppendComputation(const Computation& computation, std::string& out,
                       const PrintOptions& options) {
  Out o(out);
  OrderScratch scratch;
  ComputationText(computation, options, scratch, o);
}

void AppendModule(const Module& module, std::string& out,
                  const PrintOptions& options) {
  // Rough size estimate to avoid most regrowth: ~220 bytes per instruction
  // (metadata and backend configs dominate).
  int64_t count = 0;
  for (const auto& c : module.computations()) count += c->instruction_count();
  out.reserve(out.size() + 4096 + count * 224);
  Out o(out);
  ModuleText(module, options, o);
}

bool PrintModuleTo(const Module& module,
                   absl::FunctionRef<bool(std::string_view)> sink,
                   const PrintOptions& options) {
  std::string buffer;
  const Out::Sink sink_ref = sink;
  Out o(buffer, &sink_ref);
  ModuleText(module, options, o);
  o.Finish();
  return o.ok();
}

std::string PrintModule(const Module& module, const PrintOptions& options) {
  std::string out;
  AppendModule(module, out, options);
  return out;
}

}  // namespace hloverlap
