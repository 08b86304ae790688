// The parser's byte-level fast paths: each reads the common spelling of
// one construct straight from the input bytes, bypassing the lexer, where
// the token path (parser.cc) would make a token at a time.
//
// The contract, for every scanner here:
//  - It accepts a strict subset of what the token path accepts:
//    ScanShapeFast, an array shape `type[d0,...]` with optional dense
//    layout `{m0,...}` written without spaces (not token/opaque, rank at
//    most FastShape::kMaxRank, dims of at most 18 digits, no dynamic dims,
//    no layout tail `{...:...}`, nothing that ArrayShapeSizeError or
//    IsMinorToMajorPermutation rejects); SkipSignatureParamsFast, a
//    computation signature `(name: shape, ...)` of such shapes separated by
//    ", "; ScanOperandsFast, `(%a, %b)` of names already defined (the
//    printer's `/*index=N*/` comments included); ScanMetadataFast,
//    `{key="plain ascii" key=123 ...}` with the keys MetadataField knows.
//  - On anything else it returns false having consumed nothing (the lexer
//    position, the current token, operands_ and *md are as they were), and
//    the token path decides: it accepts or reports the error.
//  - What it accepts, it reads to exactly the result the token path would
//    give (same Shape, operands, metadata, and the same next token). The
//    rules they share are called, not copied: ArrayShapeSizeError,
//    IsMinorToMajorPermutation (shape.h), text_internal::SkipIdChars
//    (lexer.h), LookupElementType and MetadataField (the parser's).
// Parser::DisableFastPaths turns them all off: parser_test.cc's
// FastPaths.AgreeWithTheTokenPath parses every test and corpus module both
// ways and compares the printed modules; the other FastPaths tests hold
// each scanner to the token path's answer at the edges of its subset.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "absl/types/span.h"
#include "hlo/lexer.h"
#include "hlo/parser_internal.h"
#include "hlo/shape.h"

namespace hloverlap {
namespace parser_internal {
namespace {

// The first position at or after p (at most n) whose byte is not printable
// ASCII (0x20..0x7e) or is '"' or '\\': the end of a plain string's
// contents. SSE2 where available (bytes >= 0x80 compare below 0x20 signed).
[[gnu::always_inline]] inline size_t SkipPlainAscii(const char* d, size_t p,
                                                    size_t n) {
#if defined(__SSE2__)
  const __m128i k1f = _mm_set1_epi8(0x1f), k7f = _mm_set1_epi8(0x7f);
  const __m128i kdq = _mm_set1_epi8('"'), kbs = _mm_set1_epi8('\\');
  while (p + 16 <= n) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + p));
    const __m128i bad = _mm_or_si128(
        _mm_or_si128(_mm_cmpeq_epi8(v, k7f), _mm_cmpeq_epi8(v, kdq)),
        _mm_cmpeq_epi8(v, kbs));
    const unsigned ok = static_cast<unsigned>(
        _mm_movemask_epi8(_mm_andnot_si128(bad, _mm_cmpgt_epi8(v, k1f))));
    if (ok != 0xffff) return p + __builtin_ctz(~ok);
    p += 16;
  }
#endif
  while (p < n) {
    const unsigned char c = static_cast<unsigned char>(d[p]);
    if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') break;
    ++p;
  }
  return p;
}

}  // namespace

bool Parser::ScanShapeFast(PrimitiveType type, FastShape* fs) const {
  if (!fast_paths_) return false;
  if (type == PrimitiveType::kToken || type == PrimitiveType::kOpaque) {
    return false;
  }
  const std::string_view in = lex_.input();
  const char* const d = in.data();
  const size_t n = in.size();
  size_t p = tok_.offset + tok_.text.size();
  // Reads up to 18 digits (no overflow possible); false on anything else.
  auto number = [&](int64_t* v) {
    const size_t start = p;
    int64_t x = 0;
    while (p < n && static_cast<unsigned>(d[p] - '0') < 10) {
      if (p - start == 18) return false;  // the token path reports it
      x = x * 10 + (d[p] - '0');
      ++p;
    }
    if (p == start) return false;
    *v = x;
    return true;
  };
  if (p >= n || d[p] != '[') return false;
  ++p;
  fs->type = type;
  fs->rank = 0;
  fs->has_layout = false;
  if (p < n && d[p] == ']') {
    ++p;
  } else {
    while (true) {
      if (fs->rank == FastShape::kMaxRank) return false;
      if (!number(&fs->dims[fs->rank])) return false;
      ++fs->rank;
      if (p < n && d[p] == ',') {
        ++p;
        continue;
      }
      if (p < n && d[p] == ']') {
        ++p;
        break;
      }
      return false;
    }
  }
  if (!ArrayShapeSizeError(type, absl::MakeConstSpan(fs->dims, fs->rank))
           .empty()) {
    return false;
  }
  if (p < n && d[p] == '{') {
    // `{:...}` (layout tail) and spaced layouts take the token path.
    if (p + 1 >= n || static_cast<unsigned>(d[p + 1] - '0') >= 10) {
      return false;
    }
    ++p;
    int count_m2m = 0;
    while (true) {
      if (count_m2m == fs->rank || !number(&fs->minor_to_major[count_m2m++])) {
        return false;
      }
      if (p < n && d[p] == ',') {
        ++p;
        continue;
      }
      if (p < n && d[p] == '}') {
        ++p;
        break;
      }
      return false;
    }
    if (!IsMinorToMajorPermutation(
            absl::MakeConstSpan(fs->minor_to_major, count_m2m), fs->rank)) {
      return false;
    }
    fs->has_layout = true;
  } else {
    // A layout separated by whitespace or comments is unusual: let the
    // token path decide.
    auto skip_space = [&](size_t q) {
      while (q < n &&
             (d[q] == ' ' || d[q] == '\t' || d[q] == '\n' || d[q] == '\r')) {
        ++q;
      }
      return q;
    };
    const size_t q = skip_space(p);
    if (q < n && d[q] == '{' && q + 1 < n &&
        (d[q + 1] == ' ' || d[q + 1] == '\n')) {
      // `{` then space: a layout when the token after it is an integer or
      // ':' (ParseArrayShape's test); a name or identifier (a computation
      // body after its result shape) is not one.
      const size_t r = skip_space(q + 1);
      if (!(r < n && (d[r] == '%' || d[r] == '_' ||
                      static_cast<unsigned>((d[r] | 0x20) - 'a') < 26))) {
        return false;
      }
    } else if (q < n &&
               (d[q] == '/' || (d[q] == '{' && q + 1 < n &&
                                (static_cast<unsigned>(d[q + 1] - '0') < 10 ||
                                 d[q + 1] == ':' || d[q + 1] == '/')))) {
      return false;
    }
  }
  fs->end = p;
  return true;
}

void Parser::ApplyFastShape(const FastShape& fs, Shape* out) {
  out->set_element_type(fs.type);
  out->mutable_dimensions().assign(fs.dims, fs.dims + fs.rank);
  if (fs.has_layout) {
    out->mutable_layout().emplace().minor_to_major.assign(
        fs.minor_to_major, fs.minor_to_major + fs.rank);
  }
  lex_.set_pos(fs.end);
  Advance();
}

bool Parser::SkipSignatureParamsFast() {
  if (!fast_paths_) return false;
  const std::string_view in = lex_.input();
  const char* const d = in.data();
  const size_t n = in.size();
  const Token open = tok_;
  size_t p = open.offset + 1;
  auto ident_start = [&](size_t q) {
    return q < n &&
           (d[q] == '_' || static_cast<unsigned>((d[q] | 0x20) - 'a') < 26);
  };
  bool ok = false;
  if (p < n && d[p] == ')') {
    ok = true;
  } else {
    while (true) {
      // The parameter name (an identifier token) and ": ".
      if (!ident_start(p)) break;
      const size_t name_end = text_internal::SkipIdChars(d, p + 1, n);
      if (name_end + 2 >= n || d[name_end] != ':' || d[name_end + 1] != ' ') {
        break;
      }
      // The shape, as SkipShape reads an element type token.
      const size_t type_begin = name_end + 2;
      if (!ident_start(type_begin)) break;
      const size_t type_end = text_internal::SkipIdChars(d, type_begin + 1, n);
      std::optional<PrimitiveType> type =
          LookupElementType(in.substr(type_begin, type_end - type_begin));
      if (!type) break;
      tok_.kind = TK::kIdent;
      tok_.has_escape = false;
      tok_.offset = type_begin;
      tok_.text = in.substr(type_begin, type_end - type_begin);
      FastShape fs;
      if (!ScanShapeFast(*type, &fs)) break;
      p = fs.end;
      if (p + 1 < n && d[p] == ',' && d[p + 1] == ' ') {
        p += 2;
        continue;
      }
      ok = p < n && d[p] == ')';
      break;
    }
  }
  tok_ = open;
  if (!ok) return false;
  lex_.set_pos(p + 1);
  Advance();
  return true;
}

bool Parser::ScanOperandsFast() {
  if (!fast_paths_) return false;
  const std::string_view in = lex_.input();
  const char* const d = in.data();
  const size_t n = in.size();
  size_t p = tok_.offset + 1;  // after the '('
  if (p < n && d[p] == ')') {
    lex_.set_pos(p + 1);
    Advance();
    return true;
  }
  const size_t old_size = operands_.size();
  while (true) {
    // `%name` as the lexer reads it: '%', a letter, digit or '_', then
    // identifier characters.
    if (p + 1 >= n || d[p] != '%') break;
    const unsigned char c = static_cast<unsigned char>(d[p + 1]);
    if (!((c | 0x20) - 'a' < 26u || c - '0' < 10u || c == '_')) break;
    const size_t end = text_internal::SkipIdChars(d, p + 2, n);
    auto it = names_.find(in.substr(p + 1, end - p - 1));
    if (it == names_.end() || it->second == nullptr) break;
    if (end + 2 < n && d[end] == ',' && d[end + 1] == ' ') {
      operands_.push_back(it->second);
      p = end + 2;
      // The printer's `/*index=N*/` before every fifth operand: a comment,
      // which the lexer skips as it skips spaces.
      if (At(d + p, n - p, "/*index=")) {
        size_t q = p + 8;
        while (q < n && static_cast<unsigned>(d[q] - '0') < 10) ++q;
        if (q == p + 8 || !At(d + q, n - q, "*/")) break;
        p = q + 2;
      }
      continue;
    }
    if (end < n && d[end] == ')') {
      operands_.push_back(it->second);
      lex_.set_pos(end + 1);
      Advance();
      return true;
    }
    break;
  }
  operands_.resize(old_size);
  return false;
}

bool Parser::ScanMetadataFast(OpMetadata* md) {
  if (!fast_paths_) return false;
  const std::string_view in = lex_.input();
  const char* d = in.data();
  const size_t n = in.size();
  // Written into *md in place (it is empty): no temporary to build, move
  // and destroy per instruction. A text this scan does not take leaves *md
  // as it was (default) for ParseMetadata's general path.
  OpMetadata& m = *md;
  auto give_up = [md] {
    *md = OpMetadata();
    return false;
  };
  size_t p = tok_.offset + 1;  // after the '{'
  auto separator = [&](size_t q) {
    return q < n && (d[q] == ' ' || d[q] == ',' || d[q] == '}');
  };
  while (true) {
    while (p < n && (d[p] == ' ' || d[p] == ',')) ++p;
    if (p >= n) return give_up();
    if (d[p] == '}') break;
    std::string* str = nullptr;
    SharedString* shared = nullptr;
    int64_t* num = nullptr;
    // The keys of current dumps by their text (with the '=' that ends the
    // key, so the key is the one the loop below would read); others
    // through MetadataField.
    if (At(d + p, n - p, "op_name=")) {
      shared = &m.op_name;
      p += 8;
    } else if (At(d + p, n - p, "scheduling_name=")) {
      str = &m.scheduling_name;
      p += 16;
    } else if (At(d + p, n - p, "stack_frame_id=")) {
      num = &m.stack_frame_id;
      p += 15;
    } else {
      const size_t key_start = p;
      while (p < n && ((d[p] >= 'a' && d[p] <= 'z') || d[p] == '_')) ++p;
      if (p == key_start || p >= n || d[p] != '=') return give_up();
      MetadataField(std::string_view(d + key_start, p - key_start), &m, &str,
                    &shared, &num);
      ++p;
    }
    if (str != nullptr || shared != nullptr) {
      if (p >= n || d[p] != '"') return give_up();
      const size_t begin = ++p;
      p = SkipPlainAscii(d, p, n);
      if (p >= n || d[p] != '"') return give_up();
      if (shared != nullptr) {
        *shared = Interned(std::string_view(d + begin, p - begin));
      } else {
        str->assign(d + begin, p - begin);
      }
      ++p;
    } else if (num != nullptr) {
      // Up to 18 digits: no overflow, the value ParseInt gives.
      const size_t begin = p;
      int64_t v = 0;
      while (p < n && p - begin < 18 && d[p] >= '0' && d[p] <= '9') {
        v = v * 10 + (d[p] - '0');
        ++p;
      }
      if (p == begin) return give_up();
      *num = v;
    } else {
      return give_up();
    }
    if (!separator(p)) return give_up();
  }
  // The next token; when it is the next line's `%name`, the name token the
  // lexer would make, set directly.
  size_t q = p + 1;
  if (q < n && d[q] == '\n') {
    ++q;
    while (q < n && d[q] == ' ') ++q;
    if (q + 1 < n && d[q] == '%') {
      const unsigned char c = static_cast<unsigned char>(d[q + 1]);
      if ((c | 0x20) - 'a' < 26u || c - '0' < 10u || c == '_') {
        const size_t e = text_internal::SkipIdChars(d, q + 2, n);
        tok_.kind = TK::kName;
        tok_.has_escape = false;
        tok_.offset = q;
        tok_.text = in.substr(q + 1, e - q - 1);
        lex_.set_pos(e);
        return true;
      }
    }
  }
  lex_.set_pos(p + 1);
  Advance();
  return true;
}

}  // namespace parser_internal
}  // namespace hloverlap
