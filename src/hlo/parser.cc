// HLO text parser; see parser.h and hlo_text_format.md.
//
// One pass over the token stream of a zero-copy Lexer. Instruction names
// are resolved per computation through a flat_hash_map keyed by views into
// the input; nothing is looked up by copying names. Attributes that passes
// interpret are parsed into InstructionAttributes; every other attribute is
// captured as raw text. Errors are reported once, as
// "FILE:LINE:COL: message", and parsing stops at the first one.
//
// Nothing recurses deeper than ParseOptions::max_nesting_depth: tuple
// shapes, literals and bracketed values are depth-checked, raw values are
// scanned iteratively.
//
// The Parser class is declared in parser_internal.h; its byte-level fast
// paths for the common spellings of shapes, signatures, operand lists and
// metadata are in parser_fast_scan.cc (their contract is stated there).
#include "hlo/parser.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "hlo/lexer.h"
#include "hlo/opcode_traits.h"
#include "hlo/parser_internal.h"
#include "hlo/raw_attribute_check.h"
#include "hlo/shape_inference.h"
#include "hlo/small_float.h"
#include "hlo/text_hash.h"

namespace hloverlap {
namespace parser_internal {
namespace {

// A fixed set of keywords (opcodes, attribute names) looked up without
// hashing the whole text: a direct-mapped table over the length and the
// first, middle and last bytes, one compare to confirm. Slots two keywords
// share defer to the full map, so every lookup answers as the map does.
template <typename V, int kBits>
class KeywordTable {
 public:
  explicit KeywordTable(const SvMap<V>& map) : map_(map) {
    for (const auto& [key, value] : map) {
      Slot& slot = slots_[Index(key)];
      slot.state = slot.state == kEmpty ? kOne : kShared;
      slot.key = key;
      slot.value = value;
    }
  }
  const V* Find(std::string_view s) const {
    const Slot& slot = slots_[Index(s)];
    if (slot.state == kOne) return SvEq()(slot.key, s) ? &slot.value : nullptr;
    if (slot.state == kEmpty) return nullptr;
    auto it = map_.find(s);
    return it == map_.end() ? nullptr : &it->second;
  }

 private:
  enum State : uint8_t { kEmpty, kOne, kShared };
  struct Slot {
    State state = kEmpty;
    std::string_view key;
    V value{};
  };
  static size_t Index(std::string_view s) {
    if (s.empty()) return 0;
    const uint32_t v =
        static_cast<uint32_t>(s.size()) |
        static_cast<uint32_t>(static_cast<uint8_t>(s[0])) << 8 |
        static_cast<uint32_t>(static_cast<uint8_t>(s[s.size() / 2])) << 16 |
        static_cast<uint32_t>(static_cast<uint8_t>(s.back())) << 24;
    return (v * 0x9e3779b1u) >> (32 - kBits);
  }
  const SvMap<V>& map_;
  Slot slots_[size_t{1} << kBits];
};

const SvMap<Opcode>& Opcodes() {
  static const auto* map = [] {
    auto* m = new SvMap<Opcode>();
    for (int i = 0; i < kNumOpcodes; ++i) {
      m->emplace(OpcodeName(static_cast<Opcode>(i)), static_cast<Opcode>(i));
    }
    return m;
  }();
  return *map;
}

std::optional<Opcode> LookupOpcode(std::string_view s) {
  static const auto* table = new KeywordTable<Opcode, 10>(Opcodes());
  const Opcode* op = table->Find(s);
  if (op == nullptr) return std::nullopt;
  return *op;
}

// ---------------------------------------------------------------------------
// Element types and numbers.

}  // namespace

// Element type names, the ones ParsePrimitiveType reads, looked up as
// keywords.
std::optional<PrimitiveType> LookupElementType(std::string_view s) {
  static const auto* names = [] {
    auto* m = new SvMap<PrimitiveType>();
    for (int i = 0; i <= 255; ++i) {
      const auto t = static_cast<PrimitiveType>(i);
      if (ParsePrimitiveType(PrimitiveTypeName(t)) == t) {
        m->emplace(PrimitiveTypeName(t), t);
      }
    }
    return m;
  }();
  static const auto* table = new KeywordTable<PrimitiveType, 8>(*names);
  const PrimitiveType* t = table->Find(s);
  if (t == nullptr) return std::nullopt;
  return *t;
}

namespace {

bool ParseInt64Text(std::string_view s, int64_t* v) {
  const char* b = s.data();
  const char* e = b + s.size();
  auto r = std::from_chars(b, e, *v);
  return r.ec == std::errc() && r.ptr == e;
}

bool ParseUint64Text(std::string_view s, uint64_t* v) {
  const char* b = s.data();
  const char* e = b + s.size();
  auto r = std::from_chars(b, e, *v);
  return r.ec == std::errc() && r.ptr == e;
}

// ---------------------------------------------------------------------------
// Attribute names the parser interprets.

const SvMap<AttrId>& AttrIds() {
  static const auto* map = [] {
    auto* m = new SvMap<AttrId>{
        {"dimensions", kAttrDimensions},
        {"index", kAttrIndex},
        {"iota_dimension", kAttrIotaDimension},
        {"slice", kAttrSlice},
        {"dynamic_slice_sizes", kAttrDynamicSliceSizes},
        {"padding", kAttrPadding},
        {"lhs_batch_dims", kAttrLhsBatchDims},
        {"lhs_contracting_dims", kAttrLhsContractingDims},
        {"rhs_batch_dims", kAttrRhsBatchDims},
        {"rhs_contracting_dims", kAttrRhsContractingDims},
        {"direction", kAttrDirection},
        {"type", kAttrType},
        {"channel_id", kAttrChannelId},
        {"replica_groups", kAttrReplicaGroups},
        {"use_global_device_ids", kAttrUseGlobalDeviceIds},
        {"constrain_layout", kAttrConstrainLayout},
        {"source_target_pairs", kAttrSourceTargetPairs},
        {"kind", kAttrKind},
        {"custom_call_target", kAttrCustomCallTarget},
        {"metadata", kAttrMetadata},
        {"frontend_attributes", kAttrFrontendAttributes},
        {"backend_config", kAttrBackendConfig},
        {"sharding", kAttrSharding},
        {"is_composite", kAttrIsComposite},
        {"to_apply", kAttrToApply},
        {"calls", kAttrCalls},
        {"condition", kAttrCondition},
        {"body", kAttrBody},
        {"true_computation", kAttrTrueComputation},
        {"false_computation", kAttrFalseComputation},
        {"branch_computations", kAttrBranchComputations},
        {"select", kAttrSelect},
        {"scatter", kAttrScatter},
        {"called_computations", kAttrCalledComputations},
        {"control-predecessors", kAttrControlPredecessors},
    };
    return m;
  }();
  return *map;
}

// Opcodes whose `-start/-update/-done` spellings are real opcodes (or, for
// send/recv, whose async forms are spelled differently): never sugar.
bool HasNativeAsyncForm(Opcode op) {
  switch (op) {
    case Opcode::kAllGather:
    case Opcode::kAllReduce:
    case Opcode::kCollectivePermute:
    case Opcode::kCopy:
    case Opcode::kSend:
    case Opcode::kRecv:
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
      return true;
    default:
      return false;
  }
}

// Opcodes that take `to_apply=` (required).
bool TakesToApply(Opcode op) {
  return Traits(op).callees == CalleeForm::kToApply;
}

constexpr size_t kMaxParameterNumber = size_t{1} << 20;

}  // namespace

// ---------------------------------------------------------------------------

SourcePosition Parser::PositionOf(size_t offset) {
  const std::string_view text = lex_.input();
  if (offset > text.size()) offset = text.size();
  if (offset < position_offset_) {
    position_offset_ = position_line_start_ = 0;
    position_line_ = 1;
  }
  const char* base = text.data();
  const char* p = base + position_offset_;
  const char* const end = base + offset;
  while (p < end) {
    // The few bytes before a name on its line (indentation, ROOT) are
    // looked at directly, not through a memchr call.
    if (end - p <= 16) {
      while (p < end && *p != '\n') ++p;
      if (p == end) break;
      if (position_line_ != UINT32_MAX) ++position_line_;
      ++p;
      position_line_start_ = p - base;
      continue;
    }
    const void* nl = std::memchr(p, '\n', end - p);
    if (nl == nullptr) break;
    if (position_line_ != UINT32_MAX) ++position_line_;
    p = static_cast<const char*>(nl) + 1;
    position_line_start_ = p - base;
  }
  position_offset_ = offset;
  const size_t column = offset - position_line_start_ + 1;
  return {position_line_,
          static_cast<uint32_t>(std::min<size_t>(column, UINT32_MAX))};
}

bool Parser::Error(size_t offset, std::string_view message) {
  if (status_.ok()) {
    int64_t line, col;
    lex_.LineCol(offset, &line, &col);
    status_ = absl::InvalidArgumentError(
        StrCatSv(opts_.filename, ":", line, ":", col, ": ", message));
  }
  return false;
}

bool Parser::NestingError(std::string_view what, size_t offset) {
  return Error(offset, StrCatSv(what, " nesting deeper than ",
                                opts_.max_nesting_depth, " levels"));
}

bool Parser::Unexpected(std::string_view expected) {
  if (tok_.kind == TK::kError) return Error(tok_.offset, lex_.error());
  return Error(tok_.offset,
               StrCatSv("expected ", expected, ", got ", DescribeToken(tok_)));
}

bool Parser::ParseInt(int64_t* v, std::string_view what) {
  if (tok_.kind != TK::kInt) return Unexpected(what);
  if (!ParseInt64Text(tok_.text, v)) {
    return Error(tok_.offset,
                 StrCatSv("integer ", DescribeToken(tok_), " out of range"));
  }
  Advance();
  return true;
}

bool Parser::ParseBool(bool* v) {
  if (tok_.kind == TK::kIdent) {
    if (tok_.text == "true") {
      *v = true;
      Advance();
      return true;
    }
    if (tok_.text == "false") {
      *v = false;
      Advance();
      return true;
    }
  }
  return Unexpected("'true' or 'false'");
}

bool Parser::ParseString(std::string* out) {
  if (tok_.kind != TK::kString) return Unexpected("string");
  if (!tok_.has_escape) {
    out->assign(tok_.text.data() + 1, tok_.text.size() - 2);
  } else {
    std::string err;
    if (!UnescapeString(tok_.text, out, &err)) {
      return Error(tok_.offset, StrCatSv("malformed string: ", err));
    }
  }
  Advance();
  return true;
}

template <typename List>
bool Parser::ParseIntList(List* out) {
  out->clear();
  if (!Expect(TK::kLbrace, "'{'")) return false;
  if (tok_.kind == TK::kRbrace) {
    Advance();
    return true;
  }
  while (true) {
    int64_t v;
    if (!ParseInt(&v, "integer")) return false;
    out->push_back(v);
    if (tok_.kind == TK::kComma) {
      Advance();
      continue;
    }
    return Expect(TK::kRbrace, "',' or '}'");
  }
}

bool Parser::CaptureRawValue(std::string_view* out) {
  size_t end;
  if (!lex_.ScanRawValue(tok_.offset, opts_.max_nesting_depth, out, &end)) {
    return Error(lex_.error_offset(), lex_.error());
  }
  if (out->empty()) return Unexpected("attribute value");
  lex_.set_pos(end);
  Advance();
  return true;
}

bool Parser::CaptureBraceBlob(std::string_view* out) {
  if (tok_.kind != TK::kLbrace) return Unexpected("'{'");
  size_t end;
  if (!lex_.ScanBraceBlob(tok_.offset, opts_.max_nesting_depth, out, &end)) {
    return Error(lex_.error_offset(), lex_.error());
  }
  lex_.set_pos(end);
  Advance();
  return true;
}

bool Parser::SkipParenGroup(size_t* end) {
  if (tok_.kind != TK::kLparen) return Unexpected("'('");
  int depth = 0;
  while (true) {
    if (tok_.kind == TK::kLparen) {
      if (++depth > opts_.max_nesting_depth) {
        return Error(tok_.offset, StrCatSv("nesting deeper than ",
                                           opts_.max_nesting_depth, " levels"));
      }
    } else if (tok_.kind == TK::kRparen) {
      if (--depth == 0) {
        *end = tok_.offset + 1;
        Advance();
        return true;
      }
    } else if (tok_.kind == TK::kEof || tok_.kind == TK::kError) {
      return Unexpected("')'");
    }
    Advance();
  }
}

// ---------------------------------------------------------------------------
// Shapes.

bool Parser::ParseShape(Shape* out, int depth) {
  if (tok_.kind != TK::kLparen) return ParseArrayShape(out);
  // Tuples are parsed with an explicit stack (no recursion).
  struct Frame {
    std::vector<Shape> elements;
    std::string_view key;  // cache key (top level only)
    size_t close;          // offset of the matching ')' or npos
  };
  std::vector<Frame> stack;
  while (true) {
    // At the start of a shape.
    if (tok_.kind == TK::kLparen) {
      if (depth + static_cast<int64_t>(stack.size()) >=
          opts_.max_nesting_depth) {
        return NestingError("shape", tok_.offset);
      }
      // Dumps repeat the same (often long) tuple shapes: loop state in the
      // parameter, tuple, while and get-tuple-element lines. Top-level
      // tuple shapes are cached by their exact text.
      const size_t open = tok_.offset;
      size_t close;
      const size_t count = ScanTupleExtent(open, &close);
      std::string_view key;
      if (stack.empty() && depth == 0 && close != std::string_view::npos) {
        key = lex_.input().substr(open, close + 1 - open);
        if (const SharedShape* cached = TakeCachedShape(key, close + 1)) {
          *out = cached->get();
          return true;
        }
      }
      stack.push_back(Frame{{}, key, close});
      stack.back().elements.reserve(count);
      Advance();
      if (tok_.kind != TK::kRparen) continue;
    } else {
      if (!ParseArrayShape(&stack.back().elements.emplace_back())) {
        return false;
      }
    }
    // After a shape inside a tuple (or at an empty tuple's ')').
    while (true) {
      if (tok_.kind == TK::kComma && !stack.back().elements.empty()) {
        Advance();
        break;  // next element
      }
      if (tok_.kind != TK::kRparen) {
        return Unexpected("',' or ')' in tuple shape");
      }
      const size_t closed_at = tok_.offset;
      Advance();
      Frame frame = std::move(stack.back());
      stack.pop_back();
      Shape tuple = Shape::Tuple(std::move(frame.elements));
      if (stack.empty()) {
        if (!frame.key.empty() && closed_at == frame.close) {
          // The instructions with this shape share the cached one.
          shapes_.emplace(frame.key, SharedShape(tuple));
        }
        *out = std::move(tuple);
        return true;
      }
      stack.back().elements.push_back(std::move(tuple));
    }
  }
}

const SharedShape* Parser::TakeCachedShape(std::string_view key, size_t end) {
  auto it = shapes_.find(key);
  if (it == shapes_.end()) return nullptr;
  lex_.set_pos(end);
  Advance();
  return &it->second;
}

bool Parser::TakeCachedLineShape(size_t after_name, SharedShape* out,
                                 size_t* shape_offset) {
  const std::string_view in = lex_.input();
  const char* const d = in.data();
  const size_t n = in.size();
  const size_t begin = after_name + 3;
  if (begin >= n || d[after_name] != ' ' || d[after_name + 1] != '=' ||
      d[after_name + 2] != ' ' ||
      static_cast<unsigned>((d[begin] | 0x20) - 'a') >= 26) {
    return false;
  }
  // The shape's end: the first space (or any byte <= ' ' or >= 0x80).
  size_t end = begin + 1;
#if defined(__SSE2__)
  const __m128i k21 = _mm_set1_epi8(0x21);
  while (end + 16 <= n) {
    const __m128i v =
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + end));
    const unsigned stop =
        static_cast<unsigned>(_mm_movemask_epi8(_mm_cmplt_epi8(v, k21)));
    if (stop != 0) {
      end += __builtin_ctz(stop);
      break;
    }
    end += 16;
  }
#endif
  while (end<n&& static_cast<signed char>(d[end])> ' ') ++end;
  if (end + 1 >= n || d[end] != ' ' ||
      static_cast<unsigned>(d[end + 1] - 'a') >= 26) {
    return false;
  }
  auto it = shapes_.find(in.substr(begin, end - begin));
  if (it == shapes_.end()) return false;
  *out = it->second;
  *shape_offset = begin;
  // The opcode: when an identifier followed by '(', the identifier token
  // the lexer would make (no '=' or '->' after it), set directly.
  const size_t op_begin = end + 1;
  const size_t op_end = text_internal::SkipIdChars(d, op_begin + 1, n);
  if (op_end < n && d[op_end] == '(') {
    tok_.kind = TK::kIdent;
    tok_.has_escape = false;
    tok_.offset = op_begin;
    tok_.text = in.substr(op_begin, op_end - op_begin);
    lex_.set_pos(op_end);
  } else {
    lex_.set_pos(end);
    Advance();
  }
  return true;
}

bool Parser::ParseInstructionShape(SharedShape* out, bool* absent) {
  const size_t open = tok_.offset;
  if (tok_.kind == TK::kIdent) {
    std::optional<PrimitiveType> type = LookupElementType(tok_.text);
    if (!type && absent != nullptr) {
      const std::string_view in = lex_.input();
      const size_t after = tok_.offset + tok_.text.size();
      if (after < in.size() && in[after] == '(') {
        *absent = true;
        return true;
      }
    }
    FastShape fs;
    if (type && ScanShapeFast(*type, &fs)) {
      const std::string_view key = lex_.input().substr(open, fs.end - open);
      auto [it, fresh] = shapes_.try_emplace(key);
      if (fresh) {
        Shape shape;
        ApplyFastShape(fs, &shape);  // moves past the shape
        it->second = SharedShape(std::move(shape));
      } else {
        lex_.set_pos(fs.end);
        Advance();
      }
      *out = it->second;
      return true;
    }
  }
  // A tuple: ParseShape caches it by its text when it can.
  std::string_view key;
  if (tok_.kind == TK::kLparen) {
    size_t close;
    ScanTupleExtent(open, &close);
    if (close != std::string_view::npos) {
      key = lex_.input().substr(open, close + 1 - open);
      if (const SharedShape* cached = TakeCachedShape(key, close + 1)) {
        *out = *cached;
        return true;
      }
    }
  }
  Shape shape;
  if (!ParseShape(&shape, 0)) return false;
  auto it = key.empty() ? shapes_.end() : shapes_.find(key);
  *out = it != shapes_.end() ? it->second : SharedShape(std::move(shape));
  return true;
}

bool Parser::ParseArrayShape(Shape* out) {
  if (tok_.kind != TK::kIdent) return Unexpected("shape");
  std::optional<PrimitiveType> type = LookupElementType(tok_.text);
  if (!type) {
    return Error(tok_.offset,
                 StrCatSv("expected shape, got ", DescribeToken(tok_),
                          " (not an element type)"));
  }
  {
    FastShape fs;
    if (ScanShapeFast(*type, &fs)) {
      ApplyFastShape(fs, out);
      return true;
    }
  }
  const size_t shape_offset = tok_.offset;
  Advance();
  if (tok_.kind != TK::kLsquare) return Unexpected("'[' after element type");
  Advance();
  absl::InlinedVector<int64_t, 6> dims;
  absl::InlinedVector<DimKind, 6> kinds;
  bool dynamic = false;
  if (tok_.kind != TK::kRsquare) {
    while (true) {
      DimKind kind = DimKind::kStatic;
      int64_t size;
      if (tok_.kind == TK::kQuestion) {
        kind = DimKind::kUnbounded;
        size = -1;
        Advance();
      } else {
        if (tok_.kind == TK::kLeq) {
          kind = DimKind::kBounded;
          Advance();
        }
        if (tok_.kind != TK::kInt) return Unexpected("dimension size");
        if (!ParseInt64Text(tok_.text, &size)) {
          return Error(tok_.offset,
                       StrCatSv("dimension size ", DescribeToken(tok_),
                                " is too large"));
        }
        if (size < 0) {
          return Error(tok_.offset, StrCatSv("negative dimension size ", size));
        }
        Advance();
      }
      dynamic |= kind != DimKind::kStatic;
      dims.push_back(size);
      kinds.push_back(kind);
      if (tok_.kind == TK::kComma) {
        Advance();
        continue;
      }
      if (tok_.kind == TK::kRsquare) break;
      return Unexpected("',' or ']' in dimensions");
    }
  }
  Advance();
  if (*type == PrimitiveType::kToken || *type == PrimitiveType::kOpaque) {
    if (!dims.empty()) {
      return Error(shape_offset, "token and opaque shapes have no dimensions");
    }
    *out = *type == PrimitiveType::kToken ? Shape::Token()
                                          : Shape(PrimitiveType::kOpaque, {});
    return true;
  }
  if (std::string_view e = ArrayShapeSizeError(*type, dims); !e.empty()) {
    return Error(shape_offset, e);
  }
  Shape s(*type, std::move(dims));
  if (dynamic) s.mutable_dim_kinds() = std::move(kinds);
  if (tok_.kind == TK::kLbrace) {
    Token next = lex_.Peek();
    if (next.kind == TK::kInt || next.kind == TK::kColon) {
      Layout layout;
      if (!ParseLayout(s.rank(), &layout)) return false;
      s.set_layout(std::move(layout));
    }
  }
  *out = std::move(s);
  return true;
}

size_t Parser::ScanTupleExtent(size_t open, size_t* close) const {
  // Counts commas at depth 1 up to the matching ')' (comments are not
  // special: a wrong extent only disables the cache for this shape, a wrong
  // count only costs a reallocation).
  const std::string_view in = lex_.input();
  const size_t limit = std::min(in.size(), open + (size_t{1} << 20));
  size_t count = 1;
  int depth = 0;
  *close = std::string_view::npos;
  size_t p = open;
#if defined(__SSE2__)
  // 16 bytes at a time, visiting only the brackets and commas: shape text
  // is mostly digits and letters.
  const char* const d = in.data();
  while (p + 16 <= limit) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + p));
    auto eq = [&](char c) { return _mm_cmpeq_epi8(v, _mm_set1_epi8(c)); };
    const unsigned opens = static_cast<unsigned>(_mm_movemask_epi8(
        _mm_or_si128(_mm_or_si128(eq('('), eq('[')), eq('{'))));
    const unsigned closes = static_cast<unsigned>(_mm_movemask_epi8(
        _mm_or_si128(_mm_or_si128(eq(')'), eq(']')), eq('}'))));
    const unsigned commas = static_cast<unsigned>(_mm_movemask_epi8(eq(',')));
    unsigned events = opens | closes | commas;
    while (events != 0) {
      const int i = __builtin_ctz(events);
      events &= events - 1;
      if ((opens >> i) & 1) {
        ++depth;
      } else if ((closes >> i) & 1) {
        if (--depth == 0) {
          *close = d[p + i] == ')' ? p + i : std::string_view::npos;
          return std::min<size_t>(count, 1 << 16);
        }
      } else if (depth == 1) {
        ++count;
      }
    }
    p += 16;
  }
#endif
  for (; p < limit; ++p) {
    switch (in[p]) {
      case '(':
      case '[':
      case '{':
        ++depth;
        break;
      case ')':
      case ']':
      case '}':
        if (--depth == 0) {
          *close = in[p] == ')' ? p : std::string_view::npos;
          return std::min<size_t>(count, 1 << 16);
        }
        break;
      case ',':
        if (depth == 1) ++count;
        break;
      default:
        break;
    }
  }
  return 8;
}

bool Parser::SkipShape(int depth) {
  int open = 0;  // unclosed '(' of tuples being skipped
  while (true) {
    if (tok_.kind == TK::kLparen) {
      if (depth + open >= opts_.max_nesting_depth) {
        return NestingError("shape", tok_.offset);
      }
      ++open;
      Advance();
      if (tok_.kind != TK::kRparen) continue;
    } else {
      std::optional<PrimitiveType> type;
      FastShape fs;
      if (tok_.kind == TK::kIdent && (type = LookupElementType(tok_.text)) &&
          ScanShapeFast(*type, &fs)) {
        lex_.set_pos(fs.end);
        Advance();
      } else {
        Shape scratch;
        if (!ParseArrayShape(&scratch)) return false;
      }
      if (open == 0) return true;
    }
    // After a shape inside a tuple (or at an empty tuple's ')').
    while (true) {
      if (tok_.kind == TK::kComma) {
        Advance();
        break;
      }
      if (tok_.kind != TK::kRparen) {
        return Unexpected("',' or ')' in tuple shape");
      }
      Advance();
      if (--open == 0) return true;
    }
  }
}

bool Parser::ParseLayout(int64_t rank, Layout* layout) {
  const size_t layout_offset = tok_.offset;
  Advance();  // '{'
  while (tok_.kind == TK::kInt) {
    int64_t v;
    if (!ParseInt(&v, "dimension number")) return false;
    layout->minor_to_major.push_back(v);
    if (tok_.kind != TK::kComma) break;
    Advance();
  }
  if (tok_.kind == TK::kColon) {
    Advance();
    while (tok_.kind != TK::kRbrace) {
      const size_t item_offset = tok_.offset;
      if (tok_.kind == TK::kIdent && tok_.text == "T") {
        Advance();
        if (tok_.kind != TK::kLparen) return Unexpected("'(' after 'T'");
        while (tok_.kind == TK::kLparen) {
          Advance();
          Tile tile;
          while (true) {
            if (tok_.kind == TK::kStar) {
              tile.dims.push_back(Tile::kCombineDim);
              Advance();
            } else {
              const size_t dim_offset = tok_.offset;
              int64_t v;
              if (!ParseInt(&v, "tile dimension")) return false;
              if (v < 0) return Error(dim_offset, "negative tile dimension");
              tile.dims.push_back(v);
            }
            if (tok_.kind == TK::kComma) {
              Advance();
              continue;
            }
            if (tok_.kind == TK::kRparen) break;
            return Unexpected("',' or ')' in tile");
          }
          Advance();
          layout->tiles.push_back(std::move(tile));
        }
      } else if (tok_.kind == TK::kIdent &&
                 (tok_.text == "E" || tok_.text == "S")) {
        const bool is_e = tok_.text == "E";
        Advance();
        if (!Expect(TK::kLparen, "'('")) return false;
        int64_t v;
        if (!ParseInt(&v, "integer")) return false;
        if (v < 0) return Error(item_offset, "negative layout value");
        if (!Expect(TK::kRparen, "')'")) return false;
        (is_e ? layout->element_size_bits : layout->memory_space) = v;
      } else if ((tok_.kind == TK::kIdent &&
                  (tok_.text == "D" || tok_.text == "L" || tok_.text == "SC" ||
                   tok_.text == "P" || tok_.text == "M")) ||
                 tok_.kind == TK::kHash || tok_.kind == TK::kStar) {
        Advance();
        size_t end = 0;
        if (!SkipParenGroup(&end)) return false;
        while (tok_.kind == TK::kLparen) {
          if (!SkipParenGroup(&end)) return false;
        }
        layout->other_tail.append(
            lex_.input().substr(item_offset, end - item_offset));
      } else {
        return Unexpected("layout attribute or '}'");
      }
    }
  }
  if (!Expect(TK::kRbrace, "'}' to end layout")) return false;
  const auto& m2m = layout->minor_to_major;
  if (static_cast<int64_t>(m2m.size()) != rank) {
    return Error(layout_offset,
                 StrCatSv("layout has ", m2m.size(),
                          " dimensions but the shape has rank ", rank));
  }
  if (!IsMinorToMajorPermutation(m2m, rank)) {
    return Error(layout_offset,
                 "layout is not a permutation of the dimensions");
  }
  return true;
}

// ---------------------------------------------------------------------------
// Module structure.

absl::StatusOr<std::unique_ptr<Module>> Parser::ParseModule() {
  // One entry per instruction line (a dump's lines are ~300 bytes; hand-
  // written ones ~40): reserved once rather than grown by doubling, whose
  // copies touch about twice the final size of fresh pages. Untouched
  // reserved pages cost only address space.
  parsed_names_.reserve(
      std::min<size_t>(lex_.input().size() / 32 + 16, size_t{1} << 20));
  Advance();
  if (tok_.kind == TK::kEof) {
    Error(tok_.offset, "empty input: expected 'HloModule' or a computation");
    return status_;
  }
  module_ = std::make_unique<Module>("");
  if (tok_.kind == TK::kIdent && tok_.text == "HloModule") {
    has_header_ = true;
    if (!ParseHeader()) return status_;
  }
  if (!ParseStackFrameTables()) return status_;
  while (tok_.kind != TK::kEof) {
    if (!ParseComputation()) return status_;
  }
  if (computations_.empty()) {
    Error(tok_.offset, "expected at least one computation");
    return status_;
  }
  if (!Finalize()) return status_;
  return std::move(module_);
}

bool Parser::ParseHeader() {
  Advance();  // HloModule
  if (tok_.kind != TK::kIdent && tok_.kind != TK::kName) {
    return Unexpected("module name");
  }
  module_->set_name(std::string(tok_.text));
  Advance();
  // `HloModule name:`, the older header spelling XLA's parser still reads.
  if (tok_.kind == TK::kColon) Advance();
  SvSet seen;
  while (tok_.kind == TK::kComma) {
    std::string_view name;
    size_t offset;
    if (!ParseAttributeName("module attribute", &name, &offset)) return false;
    if (!seen.insert(name).second) {
      return Error(offset, StrCatSv("duplicate module attribute '", name, "'"));
    }
    if (name == "is_scheduled") {
      bool v;
      if (!ParseBool(&v)) return false;
      module_->set_is_scheduled(v);
    } else if (name == "replica_count" || name == "num_partitions") {
      const size_t value_offset = tok_.offset;
      int64_t v;
      if (!ParseInt(&v, "integer")) return false;
      if (v < 1) {
        return Error(value_offset,
                     StrCatSv(name, " must be positive, got ", v));
      }
      if (name == "replica_count") {
        module_->set_replica_count(v);
      } else {
        module_->set_num_partitions(v);
      }
    } else if (name == "entry_computation_layout") {
      if (tok_.kind != TK::kLbrace) return Unexpected("'{'");
      std::string_view raw;
      const size_t layout_offset = tok_.offset;
      if (!CaptureRawValue(&raw)) return false;
      module_->set_entry_computation_layout(std::string(raw));
      // Parsed again on its own: a form we do not model stays raw text.
      ProgramShape layout;
      Parser sub(raw, opts_);
      if (sub.ParseStandaloneProgramShape(&layout)) {
        entry_layout_offset_ = layout_offset;
        entry_layout_ = std::move(layout);
      }
    } else if (name == "frontend_attributes") {
      if (!ParseFrontendAttributes(&module_->frontend_attributes())) {
        return false;
      }
    } else {
      std::string_view raw;
      if (!CaptureRawValue(&raw)) return false;
      // Kept verbatim, but refused here where XLA's parser refuses them.
      std::optional<RawAttributeError> bad;
      const size_t raw_offset =
          static_cast<size_t>(raw.data() - lex_.input().data());
      if (name == "input_output_alias") {
        bad = CheckInputOutputAlias(raw, &alias_entries_);
        alias_offset_ = raw_offset;
      }
      if (name == "buffer_donor") {
        bad = CheckBufferDonor(raw, &donor_entries_);
        donor_offset_ = raw_offset;
      }
      if (bad.has_value()) {
        return Error(
            static_cast<size_t>(raw.data() - lex_.input().data()) + bad->offset,
            StrCatSv(name, ": ", bad->message));
      }
      module_->raw_header_attributes().push_back(
          RawAttribute{std::string(name), std::string(raw)});
    }
  }
  return true;
}

bool Parser::ParseStackFrameTables() {
  StackFrameIndex& sf = module_->stack_frames();
  bool seen[4] = {false, false, false, false};
  while (tok_.kind == TK::kIdent) {
    int which = -1;
    if (tok_.text == "FileNames") which = 0;
    if (tok_.text == "FunctionNames") which = 1;
    if (tok_.text == "FileLocations") which = 2;
    if (tok_.text == "StackFrames") which = 3;
    if (which < 0) break;
    // A computation may be named like a table: its name is followed by its
    // signature or its body. A table is followed by its first id, by the next
    // table or by the first computation (an empty table).
    const TK next = lex_.Peek().kind;
    if (next == TK::kLparen || next == TK::kLbrace) break;
    if (seen[which]) {
      return Error(tok_.offset, StrCatSv("duplicate ", tok_.text, " table"));
    }
    seen[which] = true;
    const std::string_view table = tok_.text;
    Advance();
    int64_t expected = 1;
    while (tok_.kind == TK::kInt) {
      int64_t id;
      const size_t id_offset = tok_.offset;
      if (!ParseInt(&id, "id")) return false;
      if (id != expected) {
        return Error(id_offset, StrCatSv("expected id ", expected, " in ",
                                         table, " table, got ", id));
      }
      ++expected;
      if (which <= 1) {
        std::string s;
        if (!ParseString(&s)) return false;
        (which == 0 ? sf.file_names : sf.function_names)
            .push_back(std::move(s));
        continue;
      }
      if (!Expect(TK::kLbrace, "'{'")) return false;
      StackFrameIndex::FileLocation loc;
      StackFrameIndex::Frame frame;
      while (tok_.kind != TK::kRbrace) {
        if (tok_.kind == TK::kComma) {
          Advance();
          continue;
        }
        if (tok_.kind != TK::kAttrName) return Unexpected("key=value or '}'");
        const std::string_view key = tok_.text;
        const size_t key_offset = tok_.offset;
        Advance();
        int64_t v;
        const size_t value_offset = tok_.offset;
        if (!ParseInt(&v, "integer")) return false;
        if (v < 0) return Error(value_offset, "negative id");
        int64_t limit = -1;  // upper bound of an id, -1 = unchecked
        if (which == 2) {
          if (key == "file_name_id") {
            loc.file_name_id = v;
            if (seen[0]) limit = sf.file_names.size();
          } else if (key == "function_name_id") {
            loc.function_name_id = v;
            if (seen[1]) limit = sf.function_names.size();
          } else if (key == "line") {
            loc.line = v;
          } else if (key == "end_line") {
            loc.end_line = v;
          } else if (key == "column") {
            loc.column = v;
          } else if (key == "end_column") {
            loc.end_column = v;
          } else {
            return Error(key_offset,
                         StrCatSv("unknown key '", key, "' in FileLocations"));
          }
        } else {
          if (key == "file_location_id") {
            frame.file_location_id = v;
            if (seen[2]) limit = sf.file_locations.size();
          } else if (key == "parent_frame_id") {
            // Text ids are stored value + 1 (0 = no parent).
            frame.parent_frame_id = v > 0 ? v - 1 : 0;
          } else {
            return Error(key_offset,
                         StrCatSv("unknown key '", key, "' in StackFrames"));
          }
        }
        if (limit >= 0 && v > limit) {
          return Error(value_offset,
                       StrCatSv(key, " ", v, " refers to no entry"));
        }
      }
      Advance();
      if (which == 2) {
        sf.file_locations.push_back(loc);
      } else {
        sf.frames.push_back(frame);
      }
    }
  }
  return true;
}

bool Parser::ParseComputation() {
  bool is_entry = false;
  const size_t start_offset = tok_.offset;
  if (tok_.kind == TK::kIdent && tok_.text == "ENTRY") {
    is_entry = true;
    Advance();
  }
  if (tok_.kind != TK::kName && tok_.kind != TK::kIdent) {
    return Unexpected(is_entry ? "computation name after ENTRY"
                               : "computation name");
  }
  const std::string_view name = tok_.text;
  const size_t name_offset = tok_.offset;
  if (computations_.contains(name)) {
    return Error(name_offset,
                 StrCatSv("duplicate computation name '", name, "'"));
  }
  Advance();
  // Optional program-shape signature: (p: shape, ...) -> shape.
  // Read as an instruction's shape is: one spelled like an earlier one
  // shares it (a loop body's result is the long loop-state tuple).
  SharedShape signature_result;
  bool has_signature = false;
  size_t signature_offset = 0;
  if (tok_.kind == TK::kLparen && SkipSignatureParamsFast()) {
    if (!Expect(TK::kArrow, "'->' after parameter list")) return false;
    signature_offset = tok_.offset;
    if (!ParseInstructionShape(&signature_result)) return false;
    has_signature = true;
  } else if (tok_.kind == TK::kLparen) {
    Advance();
    if (tok_.kind != TK::kRparen) {
      while (true) {
        if (tok_.kind != TK::kIdent && tok_.kind != TK::kName) {
          return Unexpected("parameter name");
        }
        Advance();
        if (!Expect(TK::kColon, "':' after parameter name")) return false;
        if (!SkipShape(0))
          return false;  // parameter(N) lines are authoritative
        if (tok_.kind == TK::kComma) {
          Advance();
          continue;
        }
        if (tok_.kind == TK::kRparen) break;
        return Unexpected("',' or ')' in computation signature");
      }
    }
    Advance();
    if (!Expect(TK::kArrow, "'->' after parameter list")) return false;
    signature_offset = tok_.offset;
    if (!ParseInstructionShape(&signature_result)) return false;
    has_signature = true;
  }
  if (!Expect(TK::kLbrace, "'{' to start the computation body")) return false;

  // The computation joins the module when its body is complete, after the
  // wrapped computations its async sugar synthesizes (callees first).
  comp_owned_ = std::make_unique<Computation>(std::string(name));
  comp_ = comp_owned_.get();
  names_.clear();
  gte_cache_.clear();
  param_numbers_.clear();
  max_param_number_ = -1;
  root_ = nullptr;
  comp_pending_preds_.clear();

  while (tok_.kind != TK::kRbrace) {
    if (!ParseInstruction()) return false;
  }
  const size_t close_offset = tok_.offset;
  Advance();
  if (comp_->instruction_count() == 0) {
    return Error(close_offset,
                 StrCatSv("computation '", name, "' has no instructions"));
  }
  Instruction* root =
      root_ != nullptr ? root_ : comp_->instructions().back().get();
  comp_->set_root(root);
  if (!param_numbers_.empty() &&
      static_cast<int64_t>(param_numbers_.size()) != max_param_number_ + 1) {
    int64_t missing = 0;
    while (param_numbers_.contains(missing)) ++missing;
    return Error(close_offset, StrCatSv("computation '", name,
                                        "' has parameter(", max_param_number_,
                                        ") but no parameter(", missing, ")"));
  }
  if (has_signature && !signature_result.get().Compatible(root->shape())) {
    return Error(signature_offset,
                 StrCatSv("computation result shape ",
                          signature_result.get().ToString(false),
                          " does not match the root shape ",
                          root->shape().ToString(false)));
  }
  for (const auto& [offset, pred] : comp_pending_preds_) {
    if (names_.contains(pred)) {
      return Error(offset, StrCatSv("control predecessor '", pred,
                                    "' is used before its definition"));
    }
    pending_preds_.emplace_back(offset, pred);
  }
  if (tok_.kind == TK::kComma) {
    Advance();
    if (tok_.kind != TK::kAttrName || tok_.text != "execution_thread") {
      return Unexpected("'execution_thread=' after computation");
    }
    Advance();
    std::string thread;
    if (!ParseString(&thread)) return false;
    comp_->set_execution_thread(std::move(thread));
  }
  if (is_entry) {
    if (entry_ != nullptr) {
      return Error(start_offset, "more than one ENTRY computation");
    }
    entry_ = comp_;
  }
  for (std::unique_ptr<Computation>& wrapped : pending_wrapped_) {
    module_->AddComputation(std::move(wrapped));
  }
  pending_wrapped_.clear();
  module_->AddComputation(std::move(comp_owned_));
  computations_.emplace(name, comp_);
  comp_ = nullptr;
  return true;
}

bool Parser::ParseInstruction() {
  bool is_root = false;
  const size_t line_offset = tok_.offset;
  if (tok_.kind == TK::kIdent && tok_.text == "ROOT") {
    is_root = true;
    Advance();
  }
  std::string_view name;
  const size_t name_offset = tok_.offset;
  line_position_ = PositionOf(name_offset);
  SharedShape shape;
  size_t shape_offset = 0;
  bool have_shape = false;
  if (tok_.kind == TK::kName || tok_.kind == TK::kIdent) {
    name = tok_.text;
    have_shape = TakeCachedLineShape(
        name.data() + name.size() - lex_.input().data(), &shape, &shape_offset);
    if (!have_shape) {
      Advance();
      if (!Expect(TK::kEqual, "'=' after instruction name")) return false;
    }
  } else if (tok_.kind == TK::kAttrName) {
    name = tok_.text;
    Advance();
  } else {
    return Unexpected(is_root ? "instruction name after ROOT"
                              : "instruction name or '}'");
  }
  // Reserve the name now (value set once the instruction exists); a null
  // value means "being defined" and reads as undefined. (A shape taken from
  // the cache above cannot fail, so a duplicate is still the first error.)
  auto [name_slot, fresh_name] = names_.try_emplace(name, nullptr);
  if (!fresh_name) {
    return Error(name_offset,
                 StrCatSv("duplicate instruction name '", name,
                          "' in computation '", comp_->name(), "'"));
  }
  // No shape written (`sum = add(a, b)`): inferred below, as XLA's parser
  // does, for the opcodes it infers (ParserInfersShape).
  bool shapeless = false;
  if (!have_shape) {
    shape_offset = tok_.offset;
    if (!ParseInstructionShape(&shape, &shapeless)) return false;
  }

  if (tok_.kind != TK::kIdent) return Unexpected("opcode");
  const std::string_view opcode_text = tok_.text;
  const size_t opcode_offset = tok_.offset;
  Sugar sugar = Sugar::kNone;
  Opcode op;
  if (!LookupLineOpcode(opcode_text, opcode_offset, &op, &sugar)) return false;
  if (shapeless && (sugar != Sugar::kNone || !ParserInfersShape(op))) {
    return Error(opcode_offset,
                 StrCatSv("'", opcode_text,
                          "' needs a result shape before the opcode (XLA "
                          "infers none for it)"));
  }
  Advance();
  if (tok_.kind != TK::kLparen) return Unexpected("'(' after opcode");

  // The instruction the line describes. For `X-start` sugar it is the
  // wrapped X (result: element 1 of the start shape); the async-start is
  // built around it below.
  Opcode line_op = op;
  Shape start_shape;
  std::string wrapped_name;
  if (sugar == Sugar::kStart) {
    if (!SplitSugarStart(opcode_text, shape_offset, op, name, &shape,
                         &start_shape, &wrapped_name)) {
      return false;
    }
  } else if (sugar == Sugar::kUpdate) {
    line_op = Opcode::kAsyncUpdate;
  } else if (sugar == Sugar::kDone) {
    line_op = Opcode::kAsyncDone;
  }
  auto inst = std::make_unique<Instruction>(
      line_op,
      sugar == Sugar::kStart ? std::move(wrapped_name) : std::string(name),
      std::move(shape));
  inst->set_source_position(line_position_);
  operands_.clear();
  if (!ParseLineOperands(line_op, inst.get())) return false;

  AttrState st;
  if (!ParseAttributes(inst.get(), op, &st)) return false;
  if (!FinishCalledComputations(
          inst.get(),
          line_op == Opcode::kAsyncUpdate || line_op == Opcode::kAsyncDone
              ? line_op
              : op,
          &st, opcode_offset)) {
    return false;
  }
  if (!CheckRequiredAttributes(inst.get(), line_op, st, opcode_offset)) {
    return false;
  }
  if (!inst->attrs().raw.empty() &&
      !CheckVerbatimAttributes(*inst, opcode_offset)) {
    return false;
  }
  if (inst->opcode() == Opcode::kFusion && inst->to_apply() != nullptr) {
    inst->to_apply()->set_is_fusion_computation(true);
  }

  Instruction* added;
  if (sugar == Sugar::kStart) {
    added = BuildSugarStart(std::move(inst), std::move(start_shape), name,
                            opcode_offset);
    if (added == nullptr) return false;
  } else {
    if (sugar != Sugar::kNone) {
      std::optional<Opcode> wrapped =
          operands_.size() == 1 ? WrappedOpcode(operands_[0]) : std::nullopt;
      if (!wrapped || *wrapped != op) {
        return Error(
            opcode_offset,
            StrCatSv("'", opcode_text, "' needs one operand: the matching '",
                     OpcodeName(op), "-start'"));
      }
    }
    added = comp_->AddInstruction(std::move(inst));
    for (Instruction* operand : operands_) added->AppendOperand(operand);
    if (shapeless) {
      absl::StatusOr<Shape> inferred = InferInstructionShape(*added);
      if (!inferred.ok()) {
        return Error(opcode_offset,
                     StrCatSv("cannot infer the shape of '", opcode_text,
                              "': ", std::string(inferred.status().message())));
      }
      added->set_shape(*std::move(inferred));
    }
  }
  for (Instruction* pred : st.control_preds) {
    added->AddControlPredecessor(pred);
  }
  name_slot->second = added;
  NoteParsedName(name, added);
  if (is_root) {
    if (root_ != nullptr) {
      return Error(line_offset, StrCatSv("computation '", comp_->name(),
                                         "' has more than one ROOT"));
    }
    root_ = added;
    root_offset_ = line_offset;
  }
  return true;
}

// `X-start` sugar: the line's shape is the start's ((operands...),
// result, ...), kept in *start_shape; *shape becomes the wrapped X's result
// and *wrapped_name its name (`X-start.1` wraps `X.1`).
bool Parser::SplitSugarStart(std::string_view opcode_text, size_t shape_offset,
                             Opcode op, std::string_view name,
                             SharedShape* shape, Shape* start_shape,
                             std::string* wrapped_name) {
  const Shape& s = shape->get();
  if (!s.IsTuple() || s.tuple_size() < 2 || !s.tuple_shapes(0).IsTuple()) {
    return Error(shape_offset,
                 StrCatSv("'", opcode_text,
                          "' must have a tuple shape ((operands...), "
                          "result, ...)"));
  }
  *start_shape = s;
  *shape = SharedShape(start_shape->tuple_shapes(1));
  std::string_view start_suffix = "-start";
  std::string_view base = OpcodeName(op);
  if (name.substr(0, base.size() + start_suffix.size()) ==
      StrCatSv(base, start_suffix)) {
    *wrapped_name =
        StrCatSv(base, name.substr(base.size() + start_suffix.size()));
  } else {
    *wrapped_name = StrCatSv(name, ".wrapped");
  }
  return true;
}

// The opcode of an instruction line: a plain opcode, or `X-start`,
// `X-update`, `X-done` of an opcode X without native async forms (sugar for
// the async-start/-update/-done wrapping X).
bool Parser::LookupLineOpcode(std::string_view opcode_text,
                              size_t opcode_offset, Opcode* op, Sugar* sugar) {
  if (std::optional<Opcode> parsed = LookupOpcode(opcode_text)) {
    *op = *parsed;
    return true;
  }
  std::optional<Opcode> wrapped;
  for (auto [suffix, kind] :
       {std::pair<std::string_view, Sugar>{"-start", Sugar::kStart},
        {"-update", Sugar::kUpdate},
        {"-done", Sugar::kDone}}) {
    if (opcode_text.size() > suffix.size() &&
        opcode_text.substr(opcode_text.size() - suffix.size()) == suffix) {
      wrapped = LookupOpcode(
          opcode_text.substr(0, opcode_text.size() - suffix.size()));
      if (wrapped && HasNativeAsyncForm(*wrapped)) wrapped.reset();
      if (wrapped) *sugar = kind;
      break;
    }
  }
  if (!wrapped) {
    return Error(opcode_offset, StrCatSv("unknown opcode '", opcode_text, "'"));
  }
  *op = *wrapped;
  return true;
}

// The parenthesized part of an instruction line: a parameter's number, a
// constant's literal, or the operands (into operands_).
bool Parser::ParseLineOperands(Opcode line_op, Instruction* inst) {
  if (line_op == Opcode::kParameter) {
    // `(N)` with up to 7 digits straight from the characters (the integer
    // token ParseInt would read); anything else through the tokens.
    const std::string_view in = lex_.input();
    size_t number_offset = tok_.offset + 1;
    size_t q = number_offset;
    int64_t number = 0;
    while (q < in.size() && q - number_offset < 8 &&
           static_cast<unsigned>(in[q] - '0') < 10) {
      number = number * 10 + (in[q] - '0');
      ++q;
    }
    const bool fast = q > number_offset && q - number_offset <= 7 &&
                      q < in.size() && in[q] == ')';
    if (fast) {
      lex_.set_pos(q);
      Advance();  // ')'
    } else {
      Advance();  // '('
      number_offset = tok_.offset;
      if (!ParseInt(&number, "parameter number")) return false;
    }
    if (number < 0 || number >= static_cast<int64_t>(kMaxParameterNumber)) {
      return Error(number_offset,
                   StrCatSv("parameter number ", number, " out of range"));
    }
    if (!param_numbers_.insert(number).second) {
      return Error(number_offset,
                   StrCatSv("duplicate parameter number ", number));
    }
    max_param_number_ = std::max(max_param_number_, number);
    inst->mutable_attrs().parameter_number = number;
    if (!Expect(TK::kRparen, "')'")) return false;
  } else if (line_op == Opcode::kConstant) {
    Advance();  // '('
    auto literal = std::make_unique<Literal>();
    if (!ParseConstantLiteral(inst->shape(), literal.get(), 0)) return false;
    inst->mutable_attrs().literal = std::move(literal);
    if (!Expect(TK::kRparen, "')' after constant literal")) return false;
  } else if (!ScanOperandsFast()) {
    Advance();  // '('
    if (!ParseOperands()) return false;
  }
  return true;
}

uint32_t Parser::NameSignature(std::string_view n) {
  // The first and last 8 bytes (overlapping, or zero-padded when shorter)
  // and the length, mixed: names that differ anywhere but deep inside a
  // long middle part get different signatures (a weaker one made most
  // names of a module look repeated).
  if (n.empty()) return 0;
  uint64_t head = 0;
  uint64_t tail = 0;
  if (n.size() >= 8) {
    std::memcpy(&head, n.data(), 8);
    std::memcpy(&tail, n.data() + n.size() - 8, 8);
  } else {
    std::memcpy(&head, n.data(), n.size());
  }
  uint64_t h = head * 0x9e3779b97f4a7c15ull ^ tail * 0xc2b2ae3d27d4eb4full ^
               n.size() * 0x165667b19e3779f9ull;
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ull;
  return static_cast<uint32_t>(h >> 48);
}

void Parser::NoteParsedName(std::string_view name, Instruction* inst) {
  ParsedName p;
  p.name = name;
  p.inst = inst;
  p.sig = static_cast<uint16_t>(NameSignature(name));
  // "<base>.<digits>": a rename of a synthesized "<base>" could hit it.
  size_t dot = name.size();
  while (dot > 0 && name[dot - 1] >= '0' && name[dot - 1] <= '9') --dot;
  p.prefix_len = 0;
  if (dot > 1 && dot < name.size() && name[dot - 1] == '.') {
    p.prefix_len = static_cast<uint32_t>(dot - 1);
    p.prefix_sig =
        static_cast<uint16_t>(NameSignature(name.substr(0, dot - 1)));
  }
  parsed_names_.push_back(p);
}

void Parser::NoteSynthesized(Instruction* inst) {
  synth_instructions_.push_back(inst);
  if (++synth_counts_[inst->name()] > 1) synth_self_collision_ = true;
  const uint32_t sig = NameSignature(inst->name());
  synth_bitmap_[sig >> 6] |= uint64_t{1} << (sig & 63);
}

// Hand-written HLO often reuses names across computations (`%x`, `%p0` in
// every computation); XLA accepts that and makes names unique module-wide.
// We do the same: the first instruction keeps the name, later ones become
// "<name>.<k>". Dumps never repeat names, so the common path is one pass
// over 16-bit signatures (seen once / seen twice bitmaps) that finds no
// repeated signature and touches no strings.
void Parser::RenameRepeatedParsedNames() {
  std::vector<uint64_t> seen(1024, 0), twice(1024, 0);
  bool any = false;
  for (const ParsedName& p : parsed_names_) {
    const uint64_t bit = uint64_t{1} << (p.sig & 63);
    uint64_t& s = seen[p.sig >> 6];
    if (s & bit) {
      twice[p.sig >> 6] |= bit;
      any = true;
    }
    s |= bit;
  }
  if (!any) return;
  // The names whose signature repeats (~a quarter of a 09 dump's, by
  // chance), then which of them repeat: a set sized for them at once.
  std::vector<const ParsedName*> candidates;
  for (const ParsedName& p : parsed_names_) {
    if ((twice[p.sig >> 6] >> (p.sig & 63)) & 1) candidates.push_back(&p);
  }
  SvSet taken;
  taken.reserve(candidates.size());
  std::vector<const ParsedName*> repeated;
  for (const ParsedName* p : candidates) {
    if (!taken.insert(p->name).second) repeated.push_back(p);
  }
  if (repeated.empty()) return;  // only signature collisions
  // Every name in the module, so a rename hits nothing ("x.1" may exist).
  // Views into the input text, which outlives this; never views of a name
  // that is about to be replaced.
  SvSet used;
  for (const ParsedName& p : parsed_names_) used.insert(p.name);
  for (Instruction* inst : synth_instructions_) used.insert(inst->name());
  // Probing resumes per base name where it stopped, so n repeats of one
  // name (every generated loop body has its own "i", "p", ...) cost O(n),
  // not O(n^2).
  SvMap<int64_t> next_suffix;
  for (const ParsedName* p : repeated) {
    Instruction* inst = p->inst;
    int64_t& k = next_suffix[p->name];  // a view into the input: stable
    for (++k;; ++k) {
      std::string candidate = StrCatSv(p->name, ".", k);
      if (!used.contains(candidate)) {
        inst->set_name(std::move(candidate));
        break;
      }
    }
    used.insert(inst->name());  // its final name: the view stays valid
  }
}

bool Parser::RenameSynthesizedInstructions() {
  // Only parsed names equal to a synthesized name, or to one followed by
  // ".<digits>", can matter. Their signatures, computed while parsing, are
  // checked against a bitmap of the synthesized names' signatures, so this
  // scan touches neither the instructions nor the input text except for
  // the rare candidates.
  auto maybe = [&](uint32_t sig) {
    return (synth_bitmap_[sig >> 6] >> (sig & 63)) & 1;
  };
  bool collision = synth_self_collision_;
  SvSet used;  // parsed names that a synthesized name or rename could hit
  for (const ParsedName& p : parsed_names_) {
    if (maybe(p.sig) && synth_counts_.contains(p.name)) {
      collision = true;
      used.insert(p.name);
      continue;
    }
    if (p.prefix_len > 0 && maybe(p.prefix_sig) &&
        synth_counts_.contains(p.name.substr(0, p.prefix_len))) {
      used.insert(p.name);
    }
  }
  if (!collision) return true;
  for (Instruction* inst : synth_instructions_) {
    if (used.contains(inst->name())) {
      const std::string base = inst->name();
      for (int64_t k = 1;; ++k) {
        std::string candidate = StrCatSv(base, ".", k);
        if (!used.contains(candidate)) {
          inst->set_name(std::move(candidate));
          break;
        }
      }
    }
    used.insert(inst->name());
  }
  return true;
}

bool Parser::CheckEntryLayout(const Computation& entry) {
  const std::vector<Shape>& params = entry_layout_->parameters;
  const Shape& result = entry_layout_->result;
  const int64_t n = entry.num_parameters();
  if (static_cast<int64_t>(params.size()) != n) {
    return Error(
        entry_layout_offset_,
        StrCatSv("entry_computation_layout has ", params.size(),
                 " parameters, but ENTRY %", entry.name(), " has ", n));
  }
  for (int64_t k = 0; k < n; ++k) {
    const Instruction* p = entry.parameter(k);
    if (p == nullptr) continue;  // a missing number: the verifier says so
    if (!params[k].Compatible(p->shape())) {
      return Error(entry_layout_offset_,
                   StrCatSv("entry_computation_layout parameter ", k, " is ",
                            params[k].ToString(false), ", but parameter ", k,
                            " of ENTRY %", entry.name(), " (%", p->name(),
                            ") is ", p->shape().ToString(false)));
    }
  }
  if (entry.root() != nullptr && !result.Compatible(entry.root()->shape())) {
    return Error(entry_layout_offset_,
                 StrCatSv("entry_computation_layout result is ",
                          result.ToString(false), ", but ENTRY %", entry.name(),
                          " returns ", entry.root()->shape().ToString(false)));
  }
  return true;
}

namespace {
// The subshape of `shape` at `index`, or nullptr when it has none.
const Shape* SubshapeAt(const Shape& shape, const std::vector<int64_t>& index) {
  const Shape* s = &shape;
  for (int64_t i : index) {
    if (!s->IsTuple() || i < 0 || i >= s->tuple_size()) return nullptr;
    s = &s->tuple_shapes(i);
  }
  return s;
}

std::string IndexText(const std::vector<int64_t>& index) {
  std::string out = "{";
  for (size_t k = 0; k < index.size(); ++k) {
    out += StrCatSv(k > 0 ? ", " : "", index[k]);
  }
  return out + "}";
}
}  // namespace

bool Parser::CheckAliasEntries(const Computation& entry) {
  const auto& params = entry.parameters();
  auto check_parameter = [&](const AliasEntry& e, size_t base,
                             std::string_view what) {
    if (e.parameter >= static_cast<int64_t>(params.size()) ||
        params[e.parameter] == nullptr) {
      return Error(base + e.offset,
                   StrCatSv(what, ": parameter ", e.parameter,
                            " does not exist (the entry computation has ",
                            params.size(), " parameters)"));
    }
    if (SubshapeAt(params[e.parameter]->shape(), e.parameter_index) ==
        nullptr) {
      return Error(
          base + e.offset,
          StrCatSv(what, ": parameter ", e.parameter, " (",
                   params[e.parameter]->shape().ToString(false),
                   ") has no element at ", IndexText(e.parameter_index)));
    }
    return true;
  };
  std::set<std::vector<int64_t>> outputs;
  for (const AliasEntry& e : alias_entries_) {
    if (!check_parameter(e, alias_offset_, "input_output_alias")) return false;
    const Shape& result =
        entry.root() != nullptr ? entry.root()->shape() : Shape();
    if (SubshapeAt(result, e.output_index) == nullptr) {
      return Error(alias_offset_ + e.offset,
                   StrCatSv("input_output_alias: the entry result (",
                            result.ToString(false), ") has no element at ",
                            IndexText(e.output_index)));
    }
    if (!outputs.insert(e.output_index).second) {
      return Error(
          alias_offset_ + e.offset,
          StrCatSv("input_output_alias: output ", IndexText(e.output_index),
                   " is aliased more than once"));
    }
  }
  for (const AliasEntry& e : donor_entries_) {
    if (!check_parameter(e, donor_offset_, "buffer_donor")) return false;
  }
  return true;
}

bool Parser::Finalize() {
  Computation* entry = entry_;
  if (entry == nullptr) {
    // The last computation of the file (synthesized ones precede callers).
    entry = module_->computations().back().get();
  }
  module_->set_entry(entry);
  if (!has_header_) module_->set_name(StrCatSv("module_", entry->name()));
  if (entry_layout_.has_value() && !CheckEntryLayout(*entry)) return false;
  if ((!alias_entries_.empty() || !donor_entries_.empty()) &&
      !CheckAliasEntries(*entry)) {
    return false;
  }

  if (!pending_preds_.empty()) {
    if (!uses_compact_gte_) {
      const auto& [offset, name] = pending_preds_.front();
      return Error(offset,
                   StrCatSv("undefined control predecessor '", name, "'"));
    }
    module_->set_dropped_control_predecessors(
        static_cast<int64_t>(pending_preds_.size()));
  }

  // Names must be unique per module: rename synthesized instructions and
  // computations that collide with anything else ("x_1" -> "x_1.1").
  if (!synth_instructions_.empty() && !RenameSynthesizedInstructions()) {
    return false;
  }
  RenameRepeatedParsedNames();
  if (!synth_computations_.empty()) {
    absl::flat_hash_set<const Computation*> synth(synth_computations_.begin(),
                                                  synth_computations_.end());
    SvSet used;
    for (const auto& comp : module_->computations()) {
      if (!synth.contains(comp.get())) used.insert(comp->name());
    }
    for (Computation* comp : synth_computations_) {
      if (used.contains(comp->name())) {
        std::string base = comp->name();
        for (int64_t k = 1;; ++k) {
          std::string candidate = StrCatSv(base, ".", k);
          if (!used.contains(candidate)) {
            comp->set_name(std::move(candidate));
            break;
          }
        }
      }
      used.insert(comp->name());
    }
  }
  module_->InvalidateNameCache();
  return true;
}

// ---------------------------------------------------------------------------
// Operands.

bool Parser::ParseOperands() {
  if (tok_.kind == TK::kRparen) {
    Advance();
    return true;
  }
  while (true) {
    // Older dumps declare the operand's shape before its name.
    std::optional<Shape> declared;
    const size_t declared_offset = tok_.offset;
    if (tok_.kind == TK::kLparen ||
        (tok_.kind == TK::kIdent && LookupElementType(tok_.text))) {
      declared.emplace();
      if (!ParseShape(&*declared, 0)) return false;
    }
    if (tok_.kind != TK::kName && tok_.kind != TK::kIdent) {
      return Unexpected("operand name");
    }
    const std::string_view name = tok_.text;
    const size_t name_offset = tok_.offset;
    auto it = names_.find(name);
    if (it == names_.end() || it->second == nullptr) {
      return UndefinedInstruction(name, name_offset, "operand");
    }
    Instruction* operand = it->second;
    Advance();
    while (tok_.kind == TK::kHash) {
      Advance();
      const size_t index_offset = tok_.offset;
      int64_t index;
      if (!ParseInt(&index, "tuple index after '#'")) return false;
      operand = GetOrCreateGte(operand, index, index_offset);
      if (operand == nullptr) return false;
    }
    if (declared && !declared->Compatible(operand->shape())) {
      return Error(
          declared_offset,
          StrCatSv("operand '", operand->name(), "' is declared with shape ",
                   declared->ToString(false), " but has shape ",
                   operand->shape().ToString(false)));
    }
    operands_.push_back(operand);
    if (tok_.kind == TK::kComma) {
      Advance();
      continue;
    }
    if (tok_.kind == TK::kRparen) {
      Advance();
      return true;
    }
    return Unexpected("',' or ')' after operand");
  }
}

Instruction* Parser::GetOrCreateGte(Instruction* base, int64_t index,
                                    size_t offset) {
  const Shape& shape = base->shape();
  if (!shape.IsTuple()) {
    Error(offset,
          StrCatSv("'", base->name(), "#' needs a tuple, but the shape is ",
                   shape.ToString(false)));
    return nullptr;
  }
  if (index < 0 || index >= shape.tuple_size()) {
    Error(offset,
          StrCatSv("tuple index ", index, " out of range for '", base->name(),
                   "' with ", shape.tuple_size(), " elements"));
    return nullptr;
  }
  auto [it, inserted] = gte_cache_.try_emplace({base, index}, nullptr);
  if (!inserted) return it->second;
  auto gte = std::make_unique<Instruction>(Opcode::kGetTupleElement,
                                           StrCatSv(base->name(), "_", index),
                                           shape.tuple_shapes(index));
  gte->mutable_attrs().tuple_index = index;
  gte->set_source_position(line_position_);
  Instruction* added = comp_->AddInstruction(std::move(gte));
  added->AppendOperand(base);
  it->second = added;
  NoteSynthesized(added);
  uses_compact_gte_ = true;
  return added;
}

bool Parser::DefinedLater(std::string_view name, size_t from) const {
  const std::string_view in = lex_.input();
  const size_t end_of_computation = in.find("\n}", from);
  size_t p = from;
  while (true) {
    size_t q = in.find(name, p);
    if (q == std::string_view::npos || q > end_of_computation) return false;
    p = q + 1;
    char before = q > 0 ? in[q - 1] : '\n';
    if (before != '%' && before != ' ' && before != '\n' && before != '\t') {
      continue;
    }
    size_t r = q + name.size();
    while (r < in.size() && (in[r] == ' ' || in[r] == '\t')) ++r;
    if (r < in.size() && in[r] == '=') return true;
  }
}

bool Parser::UndefinedInstruction(std::string_view name, size_t offset,
                                  std::string_view what) {
  if (DefinedLater(name, lex_.pos())) {
    return Error(offset,
                 StrCatSv(what, " '", name, "' is used before its definition"));
  }
  return Error(offset, StrCatSv("undefined ", what, " '", name,
                                "' in computation '", comp_->name(), "'"));
}

// ---------------------------------------------------------------------------
// Literals.

bool Parser::ParseConstantLiteral(const Shape& shape, Literal* out, int depth) {
  // Recursive only through tuple literals (depth-limited); the frames of
  // this chain stay small, the heavy work is in non-inlined helpers.
  if (depth > opts_.max_nesting_depth) {
    return NestingError("literal", tok_.offset);
  }
  // `{...}`: values elided by the printer.
  if (tok_.kind == TK::kLbrace && lex_.Peek().kind == TK::kDots) {
    Advance();
    Advance();
    if (!Expect(TK::kRbrace, "'}' after '...'")) return false;
    *out = Literal::Elided(shape);
    return true;
  }
  if (!shape.IsTuple()) return ParseArrayConstant(shape, out);
  if (depth == 0 && !CheckTupleLiteralSize(shape)) return false;
  if (!Expect(TK::kLparen, "'(' to start a tuple literal")) return false;
  std::vector<Literal> elements(shape.tuple_size());
  for (int64_t i = 0; i < shape.tuple_size(); ++i) {
    if (i > 0 && !Expect(TK::kComma, "',' in tuple literal")) return false;
    if (!ParseConstantLiteral(shape.tuple_shapes(i), &elements[i], depth + 1)) {
      return false;
    }
  }
  if (!Expect(TK::kRparen, "')' to end a tuple literal")) return false;
  MakeTupleLiteral(shape, std::move(elements), out);
  return true;
}

bool Parser::CheckTupleLiteralSize(const Shape& shape) {
  // Literal(shape) allocates every leaf: bound the total first.
  int64_t leaves = 0;
  std::vector<const Shape*> stack = {&shape};
  while (!stack.empty()) {
    const Shape* s = stack.back();
    stack.pop_back();
    if (s->IsTuple()) {
      for (const Shape& e : s->tuple_shapes()) stack.push_back(&e);
    } else if (s->IsArray() &&
               __builtin_add_overflow(leaves, s->ElementCount(), &leaves)) {
      leaves = std::numeric_limits<int64_t>::max();
    }
  }
  if (leaves > static_cast<int64_t>(lex_.input().size() - tok_.offset) ||
      leaves > opts_.max_elements) {
    return Error(tok_.offset, StrCatSv("tuple constant of shape ",
                                       shape.ToString(false), " has ", leaves,
                                       " elements, more than the input holds"));
  }
  return true;
}

void Parser::MakeTupleLiteral(const Shape& shape, std::vector<Literal> elements,
                              Literal* out) {
  Literal tuple(shape);
  tuple.mutable_elements() = std::move(elements);
  *out = std::move(tuple);
}

bool Parser::ParseArrayConstant(const Shape& shape, Literal* out) {
  const size_t offset = tok_.offset;
  if (!shape.IsArray()) {
    return Error(offset, StrCatSv("cannot parse a literal of shape ",
                                  shape.ToString(false)));
  }
  const int64_t count = shape.ElementCount();
  if (count > opts_.max_elements) {
    return Error(offset, StrCatSv("constant has ", count,
                                  " elements, more than the limit of ",
                                  opts_.max_elements));
  }
  // Each element takes at least one character of input: reject impossible
  // sizes before allocating.
  if (count > static_cast<int64_t>(lex_.input().size() - offset)) {
    return Error(offset,
                 StrCatSv("constant of shape ", shape.ToString(false), " has ",
                          count, " elements, more than the input holds"));
  }
  if (shape.rank() > opts_.max_nesting_depth) {
    return NestingError("literal", offset);
  }
  Literal lit(shape);
  if (shape.rank() == 0) {
    if (!ParseElement(shape.element_type(), &lit, 0)) return false;
  } else {
    if (!ParseArrayLiteral(shape, &lit)) return false;
  }
  *out = std::move(lit);
  return true;
}

bool Parser::ParseArrayLiteral(const Shape& shape, Literal* lit) {
  // Nested braces, one level per dimension, walked with a per-level count
  // (no recursion). Exact element counts are enforced per dimension.
  const int64_t rank = shape.rank();
  const auto& dims = shape.dimensions();
  absl::InlinedVector<int64_t, 8> count(rank, 0);
  int64_t level = 0;
  int64_t index = 0;
  if (!Expect(TK::kLbrace, "'{' in literal")) return false;
  bool need_element = false;  // after a ',' an element must follow
  while (true) {
    if (tok_.kind == TK::kRbrace && !need_element) {
      if (count[level] != dims[level]) {
        return Error(tok_.offset, StrCatSv("expected ", dims[level],
                                           " elements in dimension ", level,
                                           " of literal, got ", count[level]));
      }
      Advance();
      if (level == 0) return true;
      --level;
      ++count[level];
    } else {
      if (count[level] >= dims[level]) {
        return Error(tok_.offset,
                     StrCatSv("too many elements in dimension ", level,
                              " of literal: expected ", dims[level]));
      }
      if (level + 1 == rank) {
        if (!ParseElement(shape.element_type(), lit, index++)) return false;
        ++count[level];
      } else {
        if (!Expect(TK::kLbrace, "'{' in literal")) return false;
        ++level;
        count[level] = 0;
        need_element = false;
        continue;
      }
    }
    // After an element or a closed sub-array.
    if (tok_.kind == TK::kComma) {
      Advance();
      need_element = true;
    } else if (tok_.kind == TK::kRbrace) {
      need_element = false;
    } else {
      return Unexpected("',' or '}' in literal");
    }
  }
}

bool Parser::ParseFloatValue(FloatValue* v) {
  const Token t = tok_;
  std::string_view text = t.text;
  bool nan = false;
  if (t.kind == TK::kIdent) {
    if (text == "inf") {
      v->value = std::numeric_limits<double>::infinity();
    } else if (text == "nan") {
      nan = true;
    } else {
      return Unexpected("number");
    }
  } else if (t.kind == TK::kDecimal || t.kind == TK::kInt) {
    if (text == "-inf") {
      v->value = -std::numeric_limits<double>::infinity();
    } else if (text == "-nan") {
      nan = true;
      v->negative = true;
    } else {
      const char* b = text.data();
      const char* e = b + text.size();
      auto r = std::from_chars(b, e, v->value);
      if (r.ec != std::errc() || r.ptr != e) {
        return Error(t.offset,
                     StrCatSv("number ", DescribeToken(t), " is out of range"));
      }
    }
  } else {
    return Unexpected("number");
  }
  Advance();
  if (nan) {
    v->is_nan = true;
    if (tok_.kind == TK::kLparen) {
      Advance();
      const size_t payload_offset = tok_.offset;
      std::string_view p = tok_.text;
      if (tok_.kind != TK::kWord || p.size() < 3 || p[0] != '0' ||
          (p[1] != 'x' && p[1] != 'X')) {
        return Unexpected("hexadecimal NaN payload");
      }
      uint64_t payload;
      const char* b = p.data() + 2;
      const char* e = p.data() + p.size();
      auto r = std::from_chars(b, e, payload, 16);
      if (r.ec != std::errc() || r.ptr != e || payload == 0) {
        return Error(payload_offset, "invalid NaN payload");
      }
      v->payload = payload;
      Advance();
      if (!Expect(TK::kRparen, "')' after NaN payload")) return false;
    }
  }
  return true;
}

bool Parser::StoreFloat(PrimitiveType type, const FloatValue& v, Literal* lit,
                        int64_t index, size_t offset) {
  switch (type) {
    case PrimitiveType::kF32: {
      float f;
      if (v.is_nan) {
        uint64_t man = v.payload != 0 ? v.payload : 0x400000;
        if (man >= (uint64_t{1} << 23)) {
          return Error(offset, "NaN payload does not fit f32");
        }
        uint32_t bits = (v.negative ? 0x80000000u : 0) | 0x7f800000u |
                        static_cast<uint32_t>(man);
        std::memcpy(&f, &bits, sizeof(f));
      } else {
        f = static_cast<float>(v.value);
        if (std::isinf(f) && !std::isinf(v.value)) {
          return Error(offset, "value out of range for f32");
        }
      }
      lit->Set<float>(index, f);
      return true;
    }
    case PrimitiveType::kF64: {
      double d = v.value;
      if (v.is_nan) {
        uint64_t man = v.payload != 0 ? v.payload : (uint64_t{1} << 51);
        if (man >= (uint64_t{1} << 52)) {
          return Error(offset, "NaN payload does not fit f64");
        }
        uint64_t bits = (v.negative ? (uint64_t{1} << 63) : 0) |
                        (uint64_t{0x7ff} << 52) | man;
        std::memcpy(&d, &bits, sizeof(d));
      }
      lit->Set<double>(index, d);
      return true;
    }
    default:
      break;
  }
  std::optional<SmallFloatFormat> format = SmallFloatFormatOf(type);
  if (!format) return Error(offset, "not a floating-point type");
  uint32_t bits;
  std::string err;
  if (!EncodeSmallFloat(*format, v, &bits, &err)) {
    return Error(offset, StrCatSv(err, " (", PrimitiveTypeName(type), ")"));
  }
  if (PrimitiveTypeByteSize(type) == 2) {
    lit->Set<uint16_t>(index, static_cast<uint16_t>(bits));
  } else {
    lit->Set<uint8_t>(index, static_cast<uint8_t>(bits));
  }
  return true;
}

bool Parser::ParseElement(PrimitiveType type, Literal* lit, int64_t index) {
  const size_t offset = tok_.offset;
  if (type == PrimitiveType::kPred) {
    uint8_t v;
    if (tok_.kind == TK::kIdent && tok_.text == "true") {
      v = 1;
    } else if (tok_.kind == TK::kIdent && tok_.text == "false") {
      v = 0;
    } else if (tok_.kind == TK::kInt &&
               (tok_.text == "0" || tok_.text == "1")) {
      v = tok_.text[0] - '0';
    } else {
      return Unexpected("'true', 'false', 0 or 1");
    }
    Advance();
    lit->Set<uint8_t>(index, v);
    return true;
  }
  if (IsIntegralType(type)) {
    if (tok_.kind != TK::kInt) return Unexpected("integer");
    const int bits = PrimitiveTypeBitWidth(type);
    const bool is_signed = IsSignedIntegralType(type);
    uint64_t u = 0;
    int64_t s = 0;
    bool negative = tok_.text[0] == '-';
    bool ok;
    if (negative) {
      ok = ParseInt64Text(tok_.text, &s);
      if (ok && !is_signed) {
        return Error(offset,
                     StrCatSv("negative value ", tok_.text,
                              " for unsigned type ", PrimitiveTypeName(type)));
      }
      if (ok && bits < 64 && s < -(int64_t{1} << (bits - 1))) ok = false;
    } else {
      ok = ParseUint64Text(tok_.text, &u);
      if (ok) {
        const uint64_t max =
            is_signed ? (uint64_t{1} << (bits - 1)) - 1
                      : (bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1);
        if (u > max) ok = false;
      }
      s = static_cast<int64_t>(u);
    }
    if (!ok) {
      return Error(offset, StrCatSv("value ", tok_.text, " out of range for ",
                                    PrimitiveTypeName(type)));
    }
    Advance();
    switch (PrimitiveTypeByteSize(type)) {
      case 1:
        lit->Set<uint8_t>(index, static_cast<uint8_t>(s));
        break;
      case 2:
        lit->Set<uint16_t>(index, static_cast<uint16_t>(s));
        break;
      case 4:
        lit->Set<uint32_t>(index, static_cast<uint32_t>(s));
        break;
      default:
        lit->Set<uint64_t>(index, static_cast<uint64_t>(s));
        break;
    }
    return true;
  }
  if (IsComplexType(type)) {
    if (!Expect(TK::kLparen, "'(' to start a complex value")) return false;
    FloatValue re, im;
    const size_t re_offset = tok_.offset;
    if (!ParseFloatValue(&re)) return false;
    if (!Expect(TK::kComma, "',' in complex value")) return false;
    const size_t im_offset = tok_.offset;
    if (!ParseFloatValue(&im)) return false;
    if (!Expect(TK::kRparen, "')' to end a complex value")) return false;
    const PrimitiveType part =
        type == PrimitiveType::kC64 ? PrimitiveType::kF32 : PrimitiveType::kF64;
    return StoreFloat(part, re, lit, 2 * index, re_offset) &&
           StoreFloat(part, im, lit, 2 * index + 1, im_offset);
  }
  if (IsFloatingPointType(type)) {
    FloatValue v;
    if (!ParseFloatValue(&v)) return false;
    return StoreFloat(type, v, lit, index, offset);
  }
  return Error(offset, StrCatSv("cannot parse a literal of type ",
                                PrimitiveTypeName(type)));
}

// ---------------------------------------------------------------------------
// Attributes.

bool Parser::ParseAttributeName(std::string_view what, std::string_view* name,
                                size_t* offset) {
  Advance();  // ','
  *name = tok_.text;
  *offset = tok_.offset;
  if (tok_.kind == TK::kAttrName) {
    Advance();
    return true;
  }
  if (tok_.kind != TK::kIdent) return Unexpected(what);
  Advance();
  return Expect(TK::kEqual, "'=' after attribute name");
}

bool Parser::ParseAttributes(Instruction* inst, Opcode op, AttrState* st) {
  const std::string_view in = lex_.input();
  const char* const d = in.data();
  const size_t n = in.size();
  while (tok_.kind == TK::kComma) {
    // `, name=`: the attribute name token the lexer would make (a letter
    // or '_', identifier characters, then '=') read from the characters,
    // and the token after it.
    const size_t q = tok_.offset + 2;
    if (q < n && d[q - 1] == ' ' &&
        (static_cast<unsigned>((d[q] | 0x20) - 'a') < 26 || d[q] == '_')) {
      const size_t e = text_internal::SkipIdChars(d, q + 1, n);
      if (e == q + 8 && At(d + q, n - q, "metadata={")) {
        // Every instruction's: ParseAttribute's bookkeeping for it inline.
        lex_.set_pos(e + 1);
        Advance();
        const uint64_t bit = uint64_t{1} << kAttrMetadata;
        if (st->seen & bit) {
          return Error(q, "duplicate attribute 'metadata'");
        }
        st->seen |= bit;
        if (!ParseMetadata(&inst->mutable_attrs().metadata)) return false;
        continue;
      }
      if (e < n && d[e] == '=') {
        lex_.set_pos(e + 1);
        Advance();
        if (!ParseAttribute(inst, op, in.substr(q, e - q), q, st)) {
          return false;
        }
        continue;
      }
    }
    std::string_view name;
    size_t offset;
    if (!ParseAttributeName("attribute name", &name, &offset) ||
        !ParseAttribute(inst, op, name, offset, st)) {
      return false;
    }
  }
  return true;
}

bool Parser::ParseAttribute(Instruction* inst, Opcode op, std::string_view name,
                            size_t offset, AttrState* st) {
  static const auto* ids = new KeywordTable<AttrId, 8>(AttrIds());
  const AttrId* found = ids->Find(name);
  AttrId id = found == nullptr ? kAttrRaw : *found;
  // Attributes typed only for particular opcodes.
  if ((id == kAttrPadding && op != Opcode::kPad) ||
      ((id == kAttrDirection || id == kAttrType) && op != Opcode::kCompare) ||
      (id == kAttrKind && op != Opcode::kFusion)) {
    id = kAttrRaw;
  }
  InstructionAttributes& a = inst->mutable_attrs();
  if (id != kAttrRaw) {
    const uint64_t bit = uint64_t{1} << id;
    if (st->seen & bit) {
      return Error(offset, StrCatSv("duplicate attribute '", name, "'"));
    }
    st->seen |= bit;
    if (id >= kAttrToApply && id <= kAttrCalledComputations) {
      st->offset(id) = offset;
    }
  }
  switch (id) {
    case kAttrDimensions:
      a.has_dimensions = true;
      return ParseIntList(&a.dimensions);
    case kAttrIndex:
      return ParseInt(&a.tuple_index, "tuple index");
    case kAttrIotaDimension:
      return ParseInt(&a.iota_dimension, "iota dimension");
    case kAttrSlice:
      return ParseSlice(&a.slice.mutable_value());
    case kAttrDynamicSliceSizes:
      return ParseIntList(&a.dynamic_slice_sizes.mutable_value());
    case kAttrPadding:
      return ParsePadding(&a.padding.mutable_value());
    case kAttrLhsBatchDims:
      return ParseIntList(&a.dot->lhs_batch_dims);
    case kAttrLhsContractingDims:
      return ParseIntList(&a.dot->lhs_contracting_dims);
    case kAttrRhsBatchDims:
      return ParseIntList(&a.dot->rhs_batch_dims);
    case kAttrRhsContractingDims:
      return ParseIntList(&a.dot->rhs_contracting_dims);
    case kAttrDirection: {
      static constexpr std::pair<std::string_view, ComparisonDirection>
          kDirections[] = {{"EQ", ComparisonDirection::kEq},
                           {"NE", ComparisonDirection::kNe},
                           {"LT", ComparisonDirection::kLt},
                           {"LE", ComparisonDirection::kLe},
                           {"GT", ComparisonDirection::kGt},
                           {"GE", ComparisonDirection::kGe}};
      if (tok_.kind == TK::kIdent) {
        for (const auto& [text, dir] : kDirections) {
          if (tok_.text == text) {
            a.comparison_direction = dir;
            Advance();
            return true;
          }
        }
      }
      return Unexpected("comparison direction (EQ, NE, LT, LE, GT, GE)");
    }
    case kAttrType:
      if (tok_.kind != TK::kIdent ||
          !(tok_.text == "FLOAT" || tok_.text == "TOTALORDER" ||
            tok_.text == "SIGNED" || tok_.text == "UNSIGNED")) {
        return Unexpected(
            "comparison type (FLOAT, TOTALORDER, SIGNED, UNSIGNED)");
      }
      a.comparison_type = std::string(tok_.text);
      Advance();
      return true;
    case kAttrChannelId: {
      int64_t v;
      if (!ParseInt(&v, "channel id")) return false;
      a.channel_id = v;
      return true;
    }
    case kAttrReplicaGroups:
      return ParseReplicaGroups(&a.replica_groups.mutable_value());
    case kAttrUseGlobalDeviceIds:
      return ParseBool(&a.use_global_device_ids);
    case kAttrConstrainLayout:
      return ParseBool(&a.constrain_layout);
    case kAttrSourceTargetPairs:
      return ParseSourceTargetPairs(&a.source_target_pairs.mutable_value());
    case kAttrKind:
      if (tok_.kind != TK::kIdent) return Unexpected("fusion kind");
      a.fusion_kind = std::string(tok_.text);
      Advance();
      return true;
    case kAttrCustomCallTarget:
      return ParseString(&a.custom_call_target.mutable_value());
    case kAttrMetadata:
      return ParseMetadata(&a.metadata);
    case kAttrFrontendAttributes:
      return ParseFrontendAttributes(&a.frontend_attributes.mutable_value());
    case kAttrBackendConfig:
      return ParseBackendConfig(op, &a);
    case kAttrSharding: {
      if (tok_.kind != TK::kLbrace) return Unexpected("'{' for sharding");
      std::string_view raw;
      if (!CaptureRawValue(&raw)) return false;
      a.sharding = raw;
      return true;
    }
    case kAttrIsComposite:
      return ParseBool(&a.is_composite);
    case kAttrToApply:
    case kAttrCalls:
    case kAttrCondition:
    case kAttrBody:
    case kAttrTrueComputation:
    case kAttrFalseComputation:
    case kAttrSelect:
    case kAttrScatter:
      return ParseComputationRef(&st->single(id));
    case kAttrBranchComputations:
      return ParseComputationList(&st->branches);
    case kAttrCalledComputations:
      return ParseComputationList(&st->called_list);
    case kAttrControlPredecessors:
      return ParseControlPredecessors(st);
    case kAttrRaw:
      break;
  }
  if (!st->raw_names.insert(name).second) {
    return Error(offset, StrCatSv("duplicate attribute '", name, "'"));
  }
  std::string_view raw;
  if (!CaptureRawValue(&raw)) return false;
  a.raw.push_back(RawAttribute{std::string(name), std::string(raw)});
  return true;
}

// backend_config={...} (a brace blob; a while's is decoded) or "...".
bool Parser::ParseBackendConfig(Opcode op, InstructionAttributes* a) {
  if (tok_.kind == TK::kLbrace) {
    std::string_view blob;
    if (!CaptureBraceBlob(&blob)) return false;
    a->backend_config_is_raw = true;
    if (op == Opcode::kWhile) {
      // Decoded once here (while_backend_config.h); a text that is not
      // a JSON object stays raw.
      if (std::optional<WhileBackendConfig> config =
              WhileBackendConfig::Decode(blob)) {
        a->while_config = *std::move(config);
        a->backend_config.clear();
        return true;
      }
    }
    a->backend_config.SetCheckedBlob(blob);
    return true;
  }
  if (tok_.kind == TK::kString) {
    a->backend_config_is_raw = false;
    std::string text;
    if (!ParseString(&text)) return false;
    a->backend_config = std::move(text);
    return true;
  }
  return Unexpected("'{' or string for backend_config");
}

bool Parser::ParseMetadata(OpMetadata* md) {
  // *md is empty here (ScanMetadataFast's precondition): the instruction
  // is new and ParseAttribute rejects a second metadata= before this.
  if (tok_.kind == TK::kLbrace && ScanMetadataFast(md)) {
    return true;
  }
  if (!Expect(TK::kLbrace, "'{' to start metadata")) return false;
  while (tok_.kind != TK::kRbrace) {
    if (tok_.kind == TK::kComma) {
      Advance();
      continue;
    }
    if (tok_.kind != TK::kAttrName) return Unexpected("metadata key or '}'");
    const std::string_view key = tok_.text;
    Advance();
    std::string* str = nullptr;
    SharedString* shared = nullptr;
    int64_t* num = nullptr;
    MetadataField(key, md, &str, &shared, &num);
    if (str != nullptr) {
      if (!ParseString(str)) return false;
    } else if (shared != nullptr) {
      std::string text;
      if (!ParseString(&text)) return false;
      *shared = Interned(text);
    } else if (num != nullptr) {
      if (!ParseInt(num, "integer")) return false;
    } else if (key == "profile_type") {
      std::string_view blob;
      if (!CaptureBraceBlob(&blob)) return false;
      md->profile_type = blob;
    } else {
      // Unknown key from a newer XLA: skip its value.
      if (tok_.kind == TK::kLbrace) {
        std::string_view blob;
        if (!CaptureBraceBlob(&blob)) return false;
      } else if (tok_.kind == TK::kString || tok_.kind == TK::kInt ||
                 tok_.kind == TK::kDecimal || tok_.kind == TK::kIdent) {
        Advance();
      } else {
        return Unexpected("metadata value");
      }
    }
  }
  Advance();
  return true;
}

// key == name, as a compare of constant size (inlined, no memcmp call).
template <size_t N>
bool Key(std::string_view key, const char (&name)[N]) {
  return key.size() == N - 1 && std::memcmp(key.data(), name, N - 1) == 0;
}

void Parser::MetadataField(std::string_view key, OpMetadata* md,
                           std::string** str, SharedString** shared,
                           int64_t** num) {
  switch (key.size()) {
    case 7:
      if (Key(key, "op_name")) *shared = &md->op_name;
      if (Key(key, "op_type")) *shared = &md->op_type;
      break;
    case 11:
      if (Key(key, "source_file")) *shared = &md->source_file;
      if (Key(key, "source_line")) *num = &md->source_line;
      break;
    case 14:
      if (Key(key, "stack_frame_id")) *num = &md->stack_frame_id;
      break;
    case 15:
      if (Key(key, "scheduling_name")) *str = &md->scheduling_name;
      if (Key(key, "source_end_line")) *num = &md->source_end_line;
      break;
    case 17:
      if (Key(key, "deduplicated_name"))
        *str = &md->deduplicated_name.mutable_value();
      if (Key(key, "source_end_column")) *num = &md->source_end_column;
      break;
    case 13:
      if (Key(key, "source_column")) *num = &md->source_column;
      break;
    case 16:
      if (Key(key, "metadata_payload"))
        *str = &md->metadata_payload.mutable_value();
      break;
    default:
      break;
  }
}

const SharedString& Parser::Interned(std::string_view text) {
  InternSlot* slot = nullptr;
  if (text.size() >= 8) {
    uint64_t tail;
    std::memcpy(&tail, text.data() + text.size() - 8, 8);
    const uint64_t h = (tail ^ text.size()) * 0x9e3779b97f4a7c15ull;
    slot = &intern_cache_[h >> 56];
    if (SvEq()(slot->text, text)) return slot->value;
  }
  const SharedString& value = InternedSlow(text);
  if (slot != nullptr) {
    slot->value = value;
    slot->text = slot->value.value();
  }
  return value;
}

const SharedString& Parser::InternedSlow(std::string_view text) {
  auto it = interned_.find(text);
  if (it != interned_.end()) return it->second;
  SharedString value{std::string(text)};
  const std::string_view key = value.value();
  return interned_.emplace(key, std::move(value)).first->second;
}

bool Parser::ParseFrontendAttributes(FrontendAttributes* out) {
  if (!Expect(TK::kLbrace, "'{' to start frontend attributes")) return false;
  if (tok_.kind == TK::kRbrace) {
    Advance();
    return true;
  }
  while (true) {
    FrontendAttribute attr;
    if (tok_.kind == TK::kAttrName) {
      attr.key = std::string(tok_.text);
      Advance();
    } else if (tok_.kind == TK::kIdent || tok_.kind == TK::kString) {
      if (tok_.kind == TK::kString) {
        if (!ParseString(&attr.key)) return false;
      } else {
        attr.key = std::string(tok_.text);
        Advance();
      }
      if (!Expect(TK::kEqual, "'='")) return false;
    } else {
      return Unexpected("frontend attribute name");
    }
    if (tok_.kind == TK::kString) {
      if (!ParseString(&attr.value)) return false;
    } else if (tok_.kind == TK::kLbrace) {
      std::string_view blob;
      if (!CaptureBraceBlob(&blob)) return false;
      attr.value.assign(blob.data(), blob.size());
      attr.is_raw = true;
    } else {
      return Unexpected("string or '{' for a frontend attribute value");
    }
    out->push_back(std::move(attr));
    if (tok_.kind == TK::kComma) {
      Advance();
      continue;
    }
    return Expect(TK::kRbrace, "',' or '}' in frontend attributes");
  }
}

bool Parser::ParseReplicaGroups(ReplicaGroups* rg) {
  const size_t offset = tok_.offset;
  if (tok_.kind == TK::kLbrace) {
    Advance();
    rg->format = ReplicaGroups::Format::kExplicit;
    rg->explicit_groups.clear();
    if (tok_.kind == TK::kRbrace) {
      Advance();
      return true;
    }
    while (true) {
      rg->explicit_groups.emplace_back();
      if (!ParseIntList(&rg->explicit_groups.back())) return false;
      if (tok_.kind == TK::kComma) {
        Advance();
        continue;
      }
      return Expect(TK::kRbrace, "',' or '}' in replica groups");
    }
  }
  if (tok_.kind == TK::kLsquare) {
    Advance();
    rg->format = ReplicaGroups::Format::kIota;
    if (!ParseInt(&rg->iota_num_groups, "number of groups")) return false;
    if (!Expect(TK::kComma, "','")) return false;
    if (!ParseInt(&rg->iota_group_size, "group size")) return false;
    if (!Expect(TK::kRsquare, "']' (iota replica groups have 2 dimensions)")) {
      return false;
    }
    if (!Expect(TK::kLeq, "'<='")) return false;
    if (!Expect(TK::kLsquare, "'['")) return false;
    while (true) {
      int64_t d;
      if (!ParseInt(&d, "dimension")) return false;
      rg->iota_reshape_dims.push_back(d);
      if (tok_.kind == TK::kComma) {
        Advance();
        continue;
      }
      if (!Expect(TK::kRsquare, "',' or ']'")) return false;
      break;
    }
    if (tok_.kind == TK::kIdent && tok_.text == "T") {
      Advance();
      if (!Expect(TK::kLparen, "'(' after 'T'")) return false;
      while (true) {
        int64_t p;
        if (!ParseInt(&p, "permutation index")) return false;
        rg->iota_transpose_perm.push_back(p);
        if (tok_.kind == TK::kComma) {
          Advance();
          continue;
        }
        if (!Expect(TK::kRparen, "',' or ')'")) return false;
        break;
      }
    }
    // Validate: num_groups * group_size == product(reshape dims), perm is a
    // permutation of the reshape dims.
    int64_t total = 1;
    bool bad = rg->iota_num_groups < 0 || rg->iota_group_size < 0;
    for (int64_t d : rg->iota_reshape_dims) {
      if (d < 0 || __builtin_mul_overflow(total, d, &total)) bad = true;
    }
    int64_t groups_total;
    if (__builtin_mul_overflow(rg->iota_num_groups, rg->iota_group_size,
                               &groups_total) ||
        groups_total != total) {
      bad = true;
    }
    if (!rg->iota_transpose_perm.empty()) {
      const size_t n = rg->iota_reshape_dims.size();
      if (rg->iota_transpose_perm.size() != n) bad = true;
      std::vector<bool> used(n, false);
      for (int64_t p : rg->iota_transpose_perm) {
        if (p < 0 || p >= static_cast<int64_t>(n) || used[p]) {
          bad = true;
          break;
        }
        used[p] = true;
      }
    }
    if (bad) return Error(offset, "malformed iota replica groups");
    return true;
  }
  if (tok_.kind == TK::kIdent && tok_.text == "mesh") {
    std::string_view raw;
    if (!CaptureRawValue(&raw)) return false;
    rg->format = ReplicaGroups::Format::kMesh;
    rg->mesh_text.assign(raw.data(), raw.size());
    return true;
  }
  return Unexpected("replica groups ('{', '[' or 'mesh')");
}

bool Parser::ParseSlice(std::vector<SliceRange>* out) {
  if (!Expect(TK::kLbrace, "'{' to start slice ranges")) return false;
  if (tok_.kind == TK::kRbrace) {
    Advance();
    return true;
  }
  while (true) {
    if (!Expect(TK::kLsquare, "'[' to start a slice range")) return false;
    SliceRange r;
    if (!ParseInt(&r.start, "slice start")) return false;
    if (!Expect(TK::kColon, "':' in slice range")) return false;
    if (!ParseInt(&r.limit, "slice limit")) return false;
    if (tok_.kind == TK::kColon) {
      Advance();
      if (!ParseInt(&r.stride, "slice stride")) return false;
    }
    if (!Expect(TK::kRsquare, "']' to end a slice range")) return false;
    out->push_back(r);
    if (tok_.kind == TK::kComma) {
      Advance();
      continue;
    }
    return Expect(TK::kRbrace, "',' or '}' in slice ranges");
  }
}

bool Parser::ParsePadding(std::vector<PaddingDim>* out) {
  // low_high[_interior] per dimension, joined by 'x'. A single dimension
  // lexes as a word ("0_0") or, degenerate, an integer.
  if (tok_.kind != TK::kWord && tok_.kind != TK::kInt) {
    return Unexpected("padding (low_high[_interior]x...)");
  }
  const std::string_view text = tok_.text;
  const size_t offset = tok_.offset;
  size_t p = 0;
  while (p <= text.size()) {
    size_t x = text.find('x', p);
    if (x == std::string_view::npos) x = text.size();
    std::string_view dim = text.substr(p, x - p);
    int64_t parts[3] = {0, 0, 0};
    int n = 0;
    size_t q = 0;
    while (q <= dim.size()) {
      size_t u = dim.find('_', q);
      if (u == std::string_view::npos) u = dim.size();
      if (n >= 3 || !ParseInt64Text(dim.substr(q, u - q), &parts[n])) {
        return Error(offset, StrCatSv("malformed padding '", text, "'"));
      }
      ++n;
      q = u + 1;
    }
    if (n < 2 || parts[2] < 0) {
      return Error(offset, StrCatSv("malformed padding '", text, "'"));
    }
    out->push_back(PaddingDim{parts[0], parts[1], parts[2]});
    p = x + 1;
  }
  Advance();
  return true;
}

bool Parser::ParseSourceTargetPairs(
    std::vector<std::pair<int64_t, int64_t>>* out) {
  if (!Expect(TK::kLbrace, "'{' to start source_target_pairs")) return false;
  if (tok_.kind == TK::kRbrace) {
    Advance();
    return true;
  }
  while (true) {
    if (!Expect(TK::kLbrace, "'{' to start a source/target pair")) {
      return false;
    }
    int64_t s, t;
    if (!ParseInt(&s, "source")) return false;
    if (!Expect(TK::kComma, "','")) return false;
    if (!ParseInt(&t, "target")) return false;
    if (!Expect(TK::kRbrace, "'}' to end a source/target pair")) return false;
    out->emplace_back(s, t);
    if (tok_.kind == TK::kComma) {
      Advance();
      continue;
    }
    return Expect(TK::kRbrace, "',' or '}' in source_target_pairs");
  }
}

bool Parser::ParseComputationRef(Computation** out) {
  if (tok_.kind != TK::kName && tok_.kind != TK::kIdent) {
    if (tok_.kind == TK::kLbrace) {
      return Error(tok_.offset, "inline computations are not supported");
    }
    return Unexpected("computation name");
  }
  auto it = computations_.find(tok_.text);
  if (it == computations_.end()) {
    const std::string_view name = tok_.text;
    // Was it defined later in the file?
    const std::string_view in = lex_.input();
    bool later = false;
    for (size_t p = lex_.pos(); !later;) {
      size_t q = in.find(name, p);
      if (q == std::string_view::npos) break;
      p = q + 1;
      char before = q > 0 ? in[q - 1] : '\n';
      size_t r = q + name.size();
      while (r < in.size() && in[r] == ' ') ++r;
      if ((before == '\n' || before == '%' || before == ' ') && r < in.size() &&
          (in[r] == '(' || in[r] == '{') &&
          (before != ' ' || (q >= 6 && in.substr(q - 6, 6) == "ENTRY "))) {
        later = true;
      }
    }
    if (later) {
      return Error(tok_.offset,
                   StrCatSv("computation '", name,
                            "' is used before its definition (callees "
                            "must be defined before callers)"));
    }
    return Error(tok_.offset, StrCatSv("undefined computation '", name, "'"));
  }
  *out = it->second;
  Advance();
  return true;
}

bool Parser::ParseComputationList(std::vector<Computation*>* out) {
  if (!Expect(TK::kLbrace, "'{' to start a computation list")) return false;
  if (tok_.kind == TK::kRbrace) {
    Advance();
    return true;
  }
  while (true) {
    Computation* c;
    if (!ParseComputationRef(&c)) return false;
    out->push_back(c);
    if (tok_.kind == TK::kComma) {
      Advance();
      continue;
    }
    return Expect(TK::kRbrace, "',' or '}' in computation list");
  }
}

bool Parser::ParseControlPredecessors(AttrState* st) {
  if (!Expect(TK::kLbrace, "'{' to start control-predecessors")) return false;
  if (tok_.kind == TK::kRbrace) {
    Advance();
    return true;
  }
  while (true) {
    if (tok_.kind != TK::kName && tok_.kind != TK::kIdent) {
      return Unexpected("instruction name");
    }
    auto it = names_.find(tok_.text);
    if (it == names_.end() || it->second == nullptr) {
      comp_pending_preds_.emplace_back(tok_.offset, tok_.text);
    } else {
      st->control_preds.push_back(it->second);
    }
    Advance();
    if (tok_.kind == TK::kComma) {
      Advance();
      continue;
    }
    return Expect(TK::kRbrace, "',' or '}' in control-predecessors");
  }
}

bool Parser::FinishCalledComputations(Instruction* inst, Opcode op,
                                      AttrState* st, size_t opcode_offset) {
  // Which called-computation attributes the opcode takes; `required` ones
  // must be present.
  uint64_t allowed = 0, required = 0;
  auto bit = [](AttrId id) { return uint64_t{1} << id; };
  switch (op) {
    case Opcode::kWhile:
      allowed = required = bit(kAttrCondition) | bit(kAttrBody);
      break;
    case Opcode::kConditional:
      allowed = bit(kAttrTrueComputation) | bit(kAttrFalseComputation) |
                bit(kAttrBranchComputations);
      break;
    case Opcode::kSelectAndScatter:
      allowed = required = bit(kAttrSelect) | bit(kAttrScatter);
      break;
    case Opcode::kCustomCall:
      allowed = bit(kAttrToApply) | bit(kAttrCalledComputations);
      break;
    case Opcode::kFusion:
    case Opcode::kAsyncStart:
      allowed = required = bit(kAttrCalls);
      break;
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
      allowed = bit(kAttrCalls);
      break;
    default:
      if (TakesToApply(op)) allowed = required = bit(kAttrToApply);
      break;
  }
  const uint64_t comp_attrs =
      bit(kAttrToApply) | bit(kAttrCalls) | bit(kAttrCondition) |
      bit(kAttrBody) | bit(kAttrTrueComputation) | bit(kAttrFalseComputation) |
      bit(kAttrBranchComputations) | bit(kAttrSelect) | bit(kAttrScatter) |
      bit(kAttrCalledComputations);
  const uint64_t present = st->seen & comp_attrs;
  if (uint64_t bad = present & ~allowed) {
    const AttrId id = static_cast<AttrId>(__builtin_ctzll(bad));
    std::string_view attr_name;
    for (const auto& [n, i] : AttrIds()) {
      if (i == id) attr_name = n;
    }
    return Error(st->offset(id),
                 StrCatSv("attribute '", attr_name, "' is not allowed on '",
                          OpcodeName(op), "'"));
  }
  if (uint64_t missing = required & ~present) {
    const AttrId id = static_cast<AttrId>(__builtin_ctzll(missing));
    std::string_view attr_name;
    for (const auto& [n, i] : AttrIds()) {
      if (i == id) attr_name = n;
    }
    return Error(opcode_offset,
                 StrCatSv("'", OpcodeName(op), "' requires attribute '",
                          attr_name, "'"));
  }
  std::vector<Computation*>& called = inst->mutable_called_computations();
  switch (op) {
    case Opcode::kWhile:
      called = {st->single(kAttrCondition), st->single(kAttrBody)};
      break;
    case Opcode::kConditional: {
      const bool has_tf =
          present & (bit(kAttrTrueComputation) | bit(kAttrFalseComputation));
      const bool has_branches = present & bit(kAttrBranchComputations);
      if (has_tf && has_branches) {
        return Error(st->offset(kAttrBranchComputations),
                     "conditional takes either branch_computations or "
                     "true_computation/false_computation, not both");
      }
      if (has_branches) {
        called = st->branches;
        inst->mutable_attrs().branch_computations_form = true;
      } else {
        if (st->single(kAttrTrueComputation) == nullptr ||
            st->single(kAttrFalseComputation) == nullptr) {
          return Error(opcode_offset,
                       "'conditional' requires true_computation and "
                       "false_computation, or branch_computations");
        }
        called = {st->single(kAttrTrueComputation),
                  st->single(kAttrFalseComputation)};
      }
      break;
    }
    case Opcode::kSelectAndScatter:
      called = {st->single(kAttrSelect), st->single(kAttrScatter)};
      break;
    case Opcode::kCustomCall:
      if ((present & bit(kAttrToApply)) &&
          (present & bit(kAttrCalledComputations))) {
        return Error(st->offset(kAttrToApply),
                     "custom-call takes to_apply or called_computations, not "
                     "both");
      }
      if (present & bit(kAttrToApply)) {
        called = {st->single(kAttrToApply)};
      } else {
        called = st->called_list;
      }
      break;
    case Opcode::kFusion:
    case Opcode::kAsyncStart:
      called = {st->single(kAttrCalls)};
      break;
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
      // Older printers repeat calls= here; it must name the start's
      // computation and is not stored.
      if (present & bit(kAttrCalls)) {
        const Instruction* start =
            operands_.size() == 1 ? operands_[0] : nullptr;
        while (start != nullptr && start->opcode() == Opcode::kAsyncUpdate) {
          start = start->operand_count() == 1 ? start->operand(0) : nullptr;
        }
        if (start == nullptr || start->opcode() != Opcode::kAsyncStart ||
            start->to_apply() != st->single(kAttrCalls)) {
          return Error(st->offset(kAttrCalls),
                       "calls= does not match the async-start's computation");
        }
      }
      break;
    default:
      if (TakesToApply(op)) called = {st->single(kAttrToApply)};
      break;
  }
  return true;
}

bool Parser::CheckRequiredAttributes(Instruction* inst, Opcode op,
                                     const AttrState& st,
                                     size_t opcode_offset) {
  AttrId required = kAttrRaw;
  switch (op) {
    case Opcode::kGetTupleElement:
      required = kAttrIndex;
      break;
    case Opcode::kCompare:
      required = kAttrDirection;
      break;
    case Opcode::kCustomCall:
      required = kAttrCustomCallTarget;
      break;
    case Opcode::kFusion:
      required = kAttrKind;
      break;
    case Opcode::kIota:
      required = kAttrIotaDimension;
      break;
    case Opcode::kSlice:
      required = kAttrSlice;
      break;
    case Opcode::kDynamicSlice:
      required = kAttrDynamicSliceSizes;
      break;
    case Opcode::kPad:
      required = kAttrPadding;
      break;
    case Opcode::kTranspose:
    case Opcode::kReduce:
    case Opcode::kConcatenate:
    case Opcode::kReverse:
    case Opcode::kSort:
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kReduceScatter:
      required = kAttrDimensions;
      break;
    case Opcode::kBroadcast:
      if (!(operands_.size() == 1 && operands_[0]->shape().IsScalar())) {
        required = kAttrDimensions;
      }
      break;
    default:
      break;
  }
  if (required != kAttrRaw && !(st.seen & (uint64_t{1} << required))) {
    std::string_view attr_name;
    for (const auto& [n, i] : AttrIds()) {
      if (i == required) attr_name = n;
    }
    return Error(opcode_offset,
                 StrCatSv("'", OpcodeName(op), "' requires attribute '",
                          attr_name, "'"));
  }
  (void)inst;
  return true;
}

// ---------------------------------------------------------------------------
// Async syntax sugar.

std::optional<Opcode> Parser::WrappedOpcode(const Instruction* async_op) {
  const Instruction* start = async_op;
  while (start != nullptr && start->opcode() == Opcode::kAsyncUpdate) {
    start = start->operand_count() == 1 ? start->operand(0) : nullptr;
  }
  if (start == nullptr || start->opcode() != Opcode::kAsyncStart ||
      start->to_apply() == nullptr || start->to_apply()->root() == nullptr) {
    return std::nullopt;
  }
  return start->to_apply()->root()->opcode();
}

Instruction* Parser::BuildSugarStart(std::unique_ptr<Instruction> wrapped,
                                     Shape start_shape, std::string_view name,
                                     size_t offset) {
  const Shape& operand_shapes = start_shape.tuple_shapes(0);
  if (static_cast<int64_t>(operands_.size()) != operand_shapes.tuple_size()) {
    Error(offset, StrCatSv("'", OpcodeName(wrapped->opcode()), "-start' has ",
                           operands_.size(), " operands but its shape lists ",
                           operand_shapes.tuple_size()));
    return nullptr;
  }
  for (size_t k = 0; k < operands_.size(); ++k) {
    if (!operands_[k]->shape().Compatible(operand_shapes.tuple_shapes(k))) {
      Error(
          offset,
          StrCatSv("operand ", k, " of '", OpcodeName(wrapped->opcode()),
                   "-start' has shape ", operands_[k]->shape().ToString(false),
                   " but the start shape lists ",
                   operand_shapes.tuple_shapes(k).ToString(false)));
      return nullptr;
    }
  }
  std::string comp_name = StrCatSv("wrapped_", OpcodeName(wrapped->opcode()));
  for (char& c : comp_name) {
    if (c == '-') c = '_';
  }
  pending_wrapped_.push_back(
      std::make_unique<Computation>(std::move(comp_name)));
  Computation* wc = pending_wrapped_.back().get();
  synth_computations_.push_back(wc);
  absl::InlinedVector<Instruction*, 8> params;
  for (size_t k = 0; k < operands_.size(); ++k) {
    auto p =
        std::make_unique<Instruction>(Opcode::kParameter, StrCatSv("param_", k),
                                      operand_shapes.tuple_shapes(k));
    p->mutable_attrs().parameter_number = static_cast<int64_t>(k);
    p->set_source_position(line_position_);
    Instruction* added = wc->AddInstruction(std::move(p));
    NoteSynthesized(added);
    params.push_back(added);
  }
  auto start = std::make_unique<Instruction>(
      Opcode::kAsyncStart, std::string(name), std::move(start_shape));
  start->set_source_position(line_position_);
  InstructionAttributes& sa = start->mutable_attrs();
  const InstructionAttributes& wa = wrapped->attrs();
  sa.metadata = wa.metadata;
  sa.frontend_attributes = wa.frontend_attributes;
  sa.backend_config = wa.backend_config;
  sa.backend_config_is_raw = wa.backend_config_is_raw;
  Instruction* root = wc->AddInstruction(std::move(wrapped));
  for (Instruction* p : params) root->AppendOperand(p);
  wc->set_root(root);
  NoteSynthesized(root);
  start->mutable_called_computations().push_back(wc);
  Instruction* added = comp_->AddInstruction(std::move(start));
  for (Instruction* operand : operands_) added->AppendOperand(operand);
  return added;
}

bool Parser::ParseStandaloneShapeList(std::vector<Shape>* shapes) {
  Advance();
  if (tok_.kind != TK::kLbrace) return false;
  Advance();
  while (tok_.kind != TK::kRbrace) {
    Shape shape;
    if (!ParseShape(&shape, 0)) return false;
    shapes->push_back(std::move(shape));
    if (tok_.kind == TK::kComma) {
      Advance();
    } else if (tok_.kind != TK::kRbrace) {
      return false;
    }
  }
  Advance();
  return tok_.kind == TK::kEof;
}

bool Parser::CheckVerbatimAttributes(const Instruction& inst,
                                     size_t opcode_offset) {
  const std::string_view in = lex_.input();
  for (const RawAttribute& a : inst.attrs().raw) {
    // Where `name=` is written on this line (the value follows).
    auto value_offset = [&]() -> size_t {
      const size_t at = in.find(StrCatSv(a.name, "="), opcode_offset);
      return at == std::string_view::npos ? opcode_offset
                                          : at + a.name.size() + 1;
    };
    std::optional<RawAttributeError> bad;
    if (a.name == "result_accuracy") {
      bad = CheckResultAccuracy(a.value);
    } else if (inst.opcode() == Opcode::kCustomCall &&
               a.name == "api_version") {
      bad = CheckCustomCallApiVersion(a.value);
    } else if (inst.opcode() == Opcode::kCustomCall &&
               a.name == "operand_layout_constraints") {
      std::vector<Shape> shapes;
      Parser sub(a.value, opts_);
      if (!sub.ParseStandaloneShapeList(&shapes)) {
        bad = RawAttributeError{0, "expected a list of shapes {s, ...}"};
      } else if (shapes.size() != operands_.size()) {
        bad = RawAttributeError{
            0, StrCatSv(shapes.size(), " operand layout constraints for ",
                        operands_.size(), " operands")};
      } else if (!inst.shape().IsTuple() && !inst.shape().has_layout()) {
        bad = RawAttributeError{
            0, "a layout-constrained custom-call needs a result layout"};
      } else {
        for (size_t k = 0; k < shapes.size() && !bad; ++k) {
          if (shapes[k].IsArray() && !shapes[k].has_layout()) {
            bad = RawAttributeError{
                0, StrCatSv("operand layout constraint ", k, " (",
                            shapes[k].ToString(), ") has no layout")};
          } else if (!shapes[k].Compatible(operands_[k]->shape())) {
            bad = RawAttributeError{
                0, StrCatSv("operand layout constraint ", k, " (",
                            shapes[k].ToString(), ") does not match operand ",
                            k, " (", operands_[k]->shape().ToString(), ")")};
          }
        }
      }
    }
    if (bad.has_value()) {
      return Error(value_offset() + bad->offset,
                   StrCatSv(a.name, ": ", bad->message));
    }
  }
  return true;
}

bool Parser::ParseStandaloneProgramShape(ProgramShape* program) {
  Advance();
  if (tok_.kind != TK::kLbrace) return false;
  Advance();
  if (tok_.kind != TK::kLparen) return false;
  Advance();
  while (tok_.kind != TK::kRparen) {
    Shape p;
    if (!ParseShape(&p, 0)) return false;
    program->parameters.push_back(std::move(p));
    if (tok_.kind == TK::kComma) {
      Advance();
    } else if (tok_.kind != TK::kRparen) {
      return false;
    }
  }
  Advance();
  if (tok_.kind != TK::kArrow) return false;
  Advance();
  if (!ParseShape(&program->result, 0)) return false;
  if (tok_.kind != TK::kRbrace) return false;
  Advance();
  return tok_.kind == TK::kEof;
}

absl::StatusOr<Shape> Parser::ParseStandaloneShape() {
  Advance();
  Shape shape;
  if (!ParseShape(&shape, 0)) return status_;
  if (tok_.kind != TK::kEof) {
    Unexpected("end of shape");
    return status_;
  }
  return shape;
}

}  // namespace parser_internal

absl::StatusOr<std::unique_ptr<Module>> ParseHloModule(
    std::string_view text, const ParseOptions& options) {
  parser_internal::Parser parser(text, options);
  return parser.ParseModule();
}

namespace parser_internal {

absl::StatusOr<std::unique_ptr<Module>> ParseHloModuleTokenPathOnly(
    std::string_view text, const ParseOptions& options) {
  Parser parser(text, options);
  parser.DisableFastPaths();
  return parser.ParseModule();
}

}  // namespace parser_internal

absl::StatusOr<Shape> ParseShape(std::string_view text) {
  ParseOptions options;
  options.filename = "<shape>";
  parser_internal::Parser parser(text, options);
  return parser.ParseStandaloneShape();
}

absl::StatusOr<std::unique_ptr<Module>> ParseHloFile(const std::string& path,
                                                     ParseOptions options) {
  absl::StatusOr<std::string> data = ReadInputFile(path);
  if (!data.ok()) return data.status();
  options.filename = path == "-" ? "<stdin>" : path;
  return ParseHloModule(*data, options);
}

}  // namespace hloverlap
