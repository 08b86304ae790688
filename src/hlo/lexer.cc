// Zero-copy HLO text lexer; see lexer.h.
#include "hlo/lexer.h"

#include <array>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace hloverlap {
namespace {

using text_internal::SkipIdChars;

enum CharClass : uint8_t {
  kSpace = 1,       // ' ' \t \n \r \f \v
  kIdStart = 2,     // A-Z a-z _
  kIdChar = 4,      // A-Z a-z 0-9 _ . -
  kDigit = 8,       // 0-9
  kWordChar = 16,   // A-Z a-z 0-9 _ .   (number-led words)
  kRawSpecial = 32  // characters ScanRawValue must look at
};

constexpr std::array<uint8_t, 256> MakeClasses() {
  std::array<uint8_t, 256> t{};
  for (int c : {' ', '\t', '\n', '\r', '\f', '\v'}) t[c] |= kSpace;
  for (int c = 'a'; c <= 'z'; ++c) t[c] |= kIdStart | kIdChar | kWordChar;
  for (int c = 'A'; c <= 'Z'; ++c) t[c] |= kIdStart | kIdChar | kWordChar;
  t['_'] |= kIdStart | kIdChar | kWordChar;
  for (int c = '0'; c <= '9'; ++c) t[c] |= kIdChar | kDigit | kWordChar;
  t['.'] |= kIdChar | kWordChar;
  t['-'] |= kIdChar;
  for (int c :
       {'"', '\'', '(', ')', '[', ']', '{', '}', ',', '\n', '\r', '/', '\0'}) {
    t[c] |= kRawSpecial;
  }
  for (int c = 0x80; c < 256; ++c) t[c] |= kRawSpecial;
  return t;
}
constexpr std::array<uint8_t, 256> kClass = MakeClasses();

// Characters a string or brace-blob scan must stop at.
constexpr std::array<uint8_t, 256> MakeStringSpecial() {
  std::array<uint8_t, 256> t{};
  t['"'] = 1;
  t['\''] = 1;
  t['\\'] = 1;
  t[0] = 1;
  t['{'] = 2;
  t['}'] = 2;
  for (int c = 0x80; c < 256; ++c) t[c] = 1;
  return t;
}
constexpr std::array<uint8_t, 256> kStringSpecial = MakeStringSpecial();

inline bool Is(char c, uint8_t cls) {
  return (kClass[static_cast<uint8_t>(c)] & cls) != 0;
}

// --- Scanning loops (SSE2 where available, 16 bytes at a time). Each
// returns the first position >= p (and <= n) whose byte stops the scan.

// Stops at '"', '\'', '\\', NUL or a byte >= 0x80 (string contents).
inline size_t SkipStringChars(const char* d, size_t p, size_t n) {
#if defined(__SSE2__)
  const __m128i kdq = _mm_set1_epi8('"'), ksq = _mm_set1_epi8('\'');
  const __m128i kbs = _mm_set1_epi8('\\'), kzero = _mm_setzero_si128();
  while (p + 16 <= n) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + p));
    const __m128i hit = _mm_or_si128(
        _mm_or_si128(_mm_cmpeq_epi8(v, kdq), _mm_cmpeq_epi8(v, ksq)),
        _mm_or_si128(_mm_cmpeq_epi8(v, kbs), _mm_cmpeq_epi8(v, kzero)));
    const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(hit)) |
                          static_cast<unsigned>(_mm_movemask_epi8(v));
    if (mask != 0) return p + __builtin_ctz(mask);
    p += 16;
  }
#endif
  while (p < n && !(kStringSpecial[static_cast<uint8_t>(d[p])] & 1)) ++p;
  return p;
}

std::string DescribeByte(unsigned char c) {
  if (c >= 0x21 && c < 0x7f) return StrCatSv("'", std::string(1, c), "'");
  return absl::StrFormat("byte 0x%02x", c);
}

}  // namespace

std::string_view TokenKindName(TokenKind kind) {
  switch (kind) {
    case TokenKind::kEof:
      return "end of input";
    case TokenKind::kError:
      return "invalid token";
    case TokenKind::kEqual:
      return "'='";
    case TokenKind::kComma:
      return "','";
    case TokenKind::kColon:
      return "':'";
    case TokenKind::kStar:
      return "'*'";
    case TokenKind::kQuestion:
      return "'?'";
    case TokenKind::kHash:
      return "'#'";
    case TokenKind::kPlus:
      return "'+'";
    case TokenKind::kTilde:
      return "'~'";
    case TokenKind::kLsquare:
      return "'['";
    case TokenKind::kRsquare:
      return "']'";
    case TokenKind::kLbrace:
      return "'{'";
    case TokenKind::kRbrace:
      return "'}'";
    case TokenKind::kLparen:
      return "'('";
    case TokenKind::kRparen:
      return "')'";
    case TokenKind::kDots:
      return "'...'";
    case TokenKind::kArrow:
      return "'->'";
    case TokenKind::kLeq:
      return "'<='";
    case TokenKind::kIdent:
      return "identifier";
    case TokenKind::kName:
      return "name";
    case TokenKind::kAttrName:
      return "attribute name";
    case TokenKind::kInt:
      return "integer";
    case TokenKind::kDecimal:
      return "number";
    case TokenKind::kString:
      return "string";
    case TokenKind::kWord:
      return "word";
  }
  return "token";
}

Token Lexer::MakeError(size_t offset, std::string message) {
  error_ = std::move(message);
  error_offset_ = offset;
  Token t;
  t.kind = TokenKind::kError;
  t.offset = offset;
  t.text = input_.substr(offset < input_.size() ? offset : input_.size(), 1);
  // Do not loop on the same error: stop lexing here.
  pos_ = input_.size();
  return t;
}

size_t Lexer::Utf8SequenceLength(size_t p) const {
  const size_t n = input_.size();
  const auto b = [&](size_t i) -> unsigned {
    return static_cast<unsigned char>(input_[i]);
  };
  unsigned c = b(p);
  if (c < 0x80) return c == 0 ? 0 : 1;
  size_t len;
  unsigned lo = 0x80, hi = 0xbf;  // range of the second byte
  if (c >= 0xc2 && c <= 0xdf) {
    len = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    len = 3;
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f;  // no surrogates
  } else if (c >= 0xf0 && c <= 0xf4) {
    len = 4;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;
  } else {
    return 0;
  }
  if (p + len > n) return 0;
  if (b(p + 1) < lo || b(p + 1) > hi) return 0;
  for (size_t i = 2; i < len; ++i) {
    if (b(p + i) < 0x80 || b(p + i) > 0xbf) return 0;
  }
  return len;
}

bool Lexer::CheckBytes(size_t begin, size_t end) {
  for (size_t p = begin; p < end;) {
    unsigned char c = static_cast<unsigned char>(input_[p]);
    if (c == 0) {
      MakeError(p, "unexpected NUL byte");
      return false;
    }
    if (c < 0x80) {
      ++p;
      continue;
    }
    size_t len = Utf8SequenceLength(p);
    if (len == 0) {
      MakeError(p, "invalid UTF-8 byte sequence");
      return false;
    }
    p += len;
  }
  return true;
}

bool Lexer::SkipSpace(size_t* error_at) {
  const size_t n = input_.size();
  while (pos_ < n) {
    char c = input_[pos_];
    if (Is(c, kSpace)) {
      ++pos_;
      continue;
    }
    if (c == '/' && pos_ + 1 < n) {
      if (input_[pos_ + 1] == '*') {
        size_t e = input_.find("*/", pos_ + 2);
        if (e == std::string_view::npos) {
          *error_at = pos_;
          MakeError(pos_, "unterminated '/*' comment");
          return false;
        }
        if (!CheckBytes(pos_ + 2, e)) return false;
        pos_ = e + 2;
        continue;
      }
      if (input_[pos_ + 1] == '/') {
        size_t e = input_.find('\n', pos_ + 2);
        if (e == std::string_view::npos) e = n;
        if (!CheckBytes(pos_ + 2, e)) return false;
        pos_ = e;
        continue;
      }
    }
    break;
  }
  return true;
}

size_t Lexer::ScanWordTail(size_t p) const {
  const size_t n = input_.size();
  while (p < n) {
    char c = input_[p];
    if (Is(c, kWordChar)) {
      ++p;
    } else if (c == '-' && p + 1 < n &&
               (Is(input_[p + 1], kDigit) || input_[p + 1] == '>')) {
      ++p;
    } else if (c == '>' && p > 0 && input_[p - 1] == '-') {
      ++p;
    } else {
      break;
    }
  }
  return p;
}

void Lexer::LexString(size_t start, Token* out) {
  const size_t n = input_.size();
  const char quote = input_[start];
  size_t p = start + 1;
  bool has_escape = false;
  while (true) {
    p = SkipStringChars(input_.data(), p, n);
    if (p >= n) {
      *out = MakeError(start, "unterminated string");
      return;
    }
    unsigned char c = static_cast<unsigned char>(input_[p]);
    if (c == static_cast<unsigned char>(quote)) break;
    if (c == '\\') {
      has_escape = true;
      p += 2;
      continue;
    }
    if (c == 0) {
      *out = MakeError(p, "unexpected NUL byte in string");
      return;
    }
    if (c >= 0x80) {
      size_t len = Utf8SequenceLength(p);
      if (len == 0) {
        *out = MakeError(p, "invalid UTF-8 byte sequence");
        return;
      }
      p += len;
      continue;
    }
    ++p;
  }
  out->kind = TokenKind::kString;
  out->has_escape = has_escape;
  out->offset = start;
  out->text = std::string_view(input_.data() + start, p + 1 - start);
  pos_ = p + 1;
}

void Lexer::LexNumberOrWord(size_t start, Token* out) {
  const size_t n = input_.size();
  size_t p = start;
  Token& t = *out;
  t.has_escape = false;
  t.offset = start;
  if (input_[p] == '-') {
    for (std::string_view special : {"inf", "nan"}) {
      if (input_.substr(p + 1, 3) == special &&
          (p + 4 >= n || !Is(input_[p + 4], kIdChar))) {
        t.kind = TokenKind::kDecimal;
        t.text = input_.substr(start, 4);
        pos_ = p + 4;
        return;
      }
    }
    ++p;
    if (p >= n || !(Is(input_[p], kDigit) || (input_[p] == '.' && p + 1 < n &&
                                              Is(input_[p + 1], kDigit)))) {
      t = MakeError(start, "unexpected character '-'");
      return;
    }
  }
  while (p < n && Is(input_[p], kDigit)) ++p;
  bool is_decimal = false;
  if (p < n && input_[p] == '.' && !(p + 1 < n && input_[p + 1] == '.')) {
    ++p;
    while (p < n && Is(input_[p], kDigit)) ++p;
    is_decimal = true;
  }
  if (p < n && (input_[p] == 'e' || input_[p] == 'E')) {
    size_t q = p + 1;
    if (q < n && (input_[q] == '+' || input_[q] == '-')) ++q;
    if (q < n && Is(input_[q], kDigit)) {
      p = q;
      while (p < n && Is(input_[p], kDigit)) ++p;
      is_decimal = true;
    }
  }
  t.kind = is_decimal ? TokenKind::kDecimal : TokenKind::kInt;
  if (p < n && (Is(input_[p], kIdStart) || input_[p] == '.' ||
                (input_[p] == '-' && p + 1 < n &&
                 (Is(input_[p + 1], kDigit) || input_[p + 1] == '>')))) {
    p = ScanWordTail(p);
    t.kind = TokenKind::kWord;
  }
  t.text = input_.substr(start, p - start);
  pos_ = p;
}

void Lexer::NextSlow(Token* out) {
  size_t error_at = 0;
  {
    const size_t n = input_.size();
    size_t p = pos_;
    while (p < n && Is(input_[p], kSpace)) ++p;
    pos_ = p;
  }
  if (pos_ < input_.size() && input_[pos_] == '/' && !SkipSpace(&error_at)) {
    *out = Token();
    out->kind = TokenKind::kError;
    out->offset = error_offset_;
    pos_ = input_.size();
    return;
  }
  const size_t n = input_.size();
  // Fields are stored into *out one by one, never through a Token
  // temporary: copying a Token just built field by field would be a 16-byte
  // load over narrower stores, a store-to-load forwarding stall per token.
  Token& t = *out;
  t.has_escape = false;
  t.offset = pos_;
  if (pos_ >= n) {
    t.kind = TokenKind::kEof;
    t.text = input_.substr(n, 0);
    return;
  }
  const size_t start = pos_;
  const char c = input_[start];
  auto punct = [&](TokenKind kind, size_t len) {
    t.kind = kind;
    t.text = std::string_view(input_.data() + start, len);
    pos_ = start + len;
  };
  if (Is(c, kIdStart)) {
    size_t p = start + 1;
    p = SkipIdChars(input_.data(), p, n);
    if (input_[p - 1] == '-' && p < n && input_[p] == '>') {
      // Dim labels written with a leading letter: b01f_01io->b01f.
      p = ScanWordTail(p);
      t.kind = TokenKind::kWord;
      t.text = std::string_view(input_.data() + start, p - start);
      pos_ = p;
      return;
    }
    t.text = std::string_view(input_.data() + start, p - start);
    if (p < n && input_[p] == '=') {
      t.kind = TokenKind::kAttrName;
      pos_ = p + 1;
    } else {
      t.kind = TokenKind::kIdent;
      pos_ = p;
    }
    return;
  }
  if (Is(c, kDigit)) return LexNumberOrWord(start, out);
  switch (c) {
    case '%': {
      size_t p = start + 1;
      if (p >= n || !(Is(input_[p], kIdStart) || Is(input_[p], kDigit))) {
        return SetError(out, start, "expected a name after '%'");
      }
      p = SkipIdChars(input_.data(), p, n);
      t.kind = TokenKind::kName;
      t.text = std::string_view(input_.data() + start + 1, p - start - 1);
      pos_ = p;
      return;
    }
    case '=':
      return punct(TokenKind::kEqual, 1);
    case ',':
      return punct(TokenKind::kComma, 1);
    case ':':
      return punct(TokenKind::kColon, 1);
    case '*':
      return punct(TokenKind::kStar, 1);
    case '?':
      return punct(TokenKind::kQuestion, 1);
    case '#':
      return punct(TokenKind::kHash, 1);
    case '+':
      return punct(TokenKind::kPlus, 1);
    case '~':
      return punct(TokenKind::kTilde, 1);
    case '[':
      return punct(TokenKind::kLsquare, 1);
    case ']':
      return punct(TokenKind::kRsquare, 1);
    case '{':
      return punct(TokenKind::kLbrace, 1);
    case '}':
      return punct(TokenKind::kRbrace, 1);
    case '(':
      return punct(TokenKind::kLparen, 1);
    case ')':
      return punct(TokenKind::kRparen, 1);
    case '"':
    case '\'':
      return LexString(start, out);
    case '-':
      if (start + 1 < n && input_[start + 1] == '>') {
        return punct(TokenKind::kArrow, 2);
      }
      return LexNumberOrWord(start, out);
    case '.':
      if (input_.substr(start, 3) == "...") return punct(TokenKind::kDots, 3);
      if (start + 1 < n && Is(input_[start + 1], kDigit)) {
        return LexNumberOrWord(start, out);
      }
      return SetError(out, start, "unexpected character '.'");
    case '<':
      if (start + 1 < n && input_[start + 1] == '=') {
        return punct(TokenKind::kLeq, 2);
      }
      return SetError(out, start, "unexpected character '<'");
    case '\0':
      return SetError(out, start, "unexpected NUL byte");
    default:
      break;
  }
  unsigned char uc = static_cast<unsigned char>(c);
  if (uc >= 0x80) {
    size_t len = Utf8SequenceLength(start);
    if (len == 0) return SetError(out, start, "invalid UTF-8 byte sequence");
    return SetError(
        out, start,
        StrCatSv("unexpected character '",
                 std::string_view(input_.data() + start, len), "'"));
  }
  return SetError(out, start,
                  StrCatSv("unexpected character ", DescribeByte(uc)));
}

bool Lexer::ScanRawValue(size_t start, int max_depth, std::string_view* out,
                         size_t* end) {
  const size_t n = input_.size();
  size_t p = start;
  while (p < n && Is(input_[p], kSpace)) ++p;
  const size_t value_start = p;
  std::string closers;  // expected closing brackets, innermost last
  size_t outer_open = 0;
  // Past the UTF-8 sequence at p; false (with the error) when invalid.
  auto skip_utf8 = [&] {
    const size_t len = Utf8SequenceLength(p);
    if (len == 0) {
      MakeError(p, "invalid UTF-8 byte sequence");
      return false;
    }
    p += len;
    return true;
  };
  while (p < n) {
    const char c = input_[p];
    if (!Is(c, kRawSpecial)) {
      ++p;
      continue;
    }
    switch (c) {
      case '"':
      case '\'': {
        const size_t s = p;
        ++p;
        while (true) {
          if (p >= n) {
            MakeError(s, "unterminated string");
            return false;
          }
          const char d = input_[p];
          if (d == c) break;
          if (d == '\\') {
            p += 2;
            continue;
          }
          if (d == '\0') {
            MakeError(p, "unexpected NUL byte in string");
            return false;
          }
          if (static_cast<unsigned char>(d) >= 0x80) {
            if (!skip_utf8()) return false;
            continue;
          }
          ++p;
        }
        ++p;
        continue;
      }
      case '(':
      case '[':
      case '{':
        if (closers.empty()) outer_open = p;
        if (static_cast<int>(closers.size()) >= max_depth) {
          MakeError(p, StrCatSv("nesting deeper than ", max_depth, " levels"));
          return false;
        }
        closers.push_back(c == '(' ? ')' : c == '[' ? ']' : '}');
        ++p;
        continue;
      case ')':
      case ']':
      case '}':
        if (closers.empty()) goto done;
        if (closers.back() != c) {
          MakeError(p,
                    StrCatSv("mismatched '", std::string(1, c), "', expected '",
                             std::string(1, closers.back()), "'"));
          return false;
        }
        closers.pop_back();
        ++p;
        continue;
      case ',':
      case '\n':
      case '\r':
        if (closers.empty()) goto done;
        ++p;
        continue;
      case '/':
        if (closers.empty() && p + 1 < n &&
            (input_[p + 1] == '/' || input_[p + 1] == '*')) {
          goto done;
        }
        ++p;
        continue;
      case '\0':
        MakeError(p, "unexpected NUL byte");
        return false;
      default:
        if (!skip_utf8()) return false;
        continue;
    }
  }
done:
  if (!closers.empty()) {
    MakeError(outer_open, StrCatSv("unterminated '",
                                   std::string(1, input_[outer_open]), "'"));
    return false;
  }
  size_t e = p;
  while (e > value_start && Is(input_[e - 1], kSpace)) --e;
  *out = input_.substr(value_start, e - value_start);
  *end = e;
  return true;
}

bool Lexer::ScanBraceBlob(size_t start, int max_depth, std::string_view* out,
                          size_t* end) {
  const size_t n = input_.size();
  if (start >= n || input_[start] != '{') {
    MakeError(start, "expected '{'");
    return false;
  }
  // One state machine (depth, inside a string or not) over the bytes. A
  // 16-byte block without a backslash, NUL or byte >= 0x80 is taken at
  // once: its quotes' running parity says which braces are outside
  // strings, and only those are visited. Other bytes are taken one by one.
  const char* const d = input_.data();
  int depth = 0;
  bool in_string = false;
  size_t string_start = 0;  // the '"' that opened the current string
  size_t p = start;
  size_t slow_until = 0;
  while (p < n) {
#if defined(__SSE2__)
    if (p >= slow_until && p + 16 <= n) {
      const __m128i v =
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + p));
      const unsigned bad = static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(
                               _mm_cmpeq_epi8(v, _mm_set1_epi8('\\')),
                               _mm_cmpeq_epi8(v, _mm_setzero_si128())))) |
                           static_cast<unsigned>(_mm_movemask_epi8(v));
      if (bad == 0) {
        const unsigned quotes = static_cast<unsigned>(
            _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('"'))));
        const unsigned opens = static_cast<unsigned>(
            _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('{'))));
        const unsigned closes = static_cast<unsigned>(
            _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('}'))));
        // Bit i: inside a string at byte i (parity of the quotes up to i).
        const unsigned inside = InsideStringMask16(quotes, in_string);
        unsigned braces = (opens | closes) & ~inside;
        while (braces != 0) {
          const int i = __builtin_ctz(braces);
          braces &= braces - 1;
          if ((opens >> i) & 1) {
            if (++depth > max_depth) {
              MakeError(p + i,
                        StrCatSv("nesting deeper than ", max_depth, " levels"));
              return false;
            }
          } else if (--depth == 0) {
            *out = input_.substr(start, p + i + 1 - start);
            *end = p + i + 1;
            return true;
          }
        }
        in_string = (inside >> 15) & 1;
        // Still inside after a quote of this block: the last one opened it.
        if (in_string && quotes != 0) {
          string_start = p + 31 - __builtin_clz(quotes);
        }
        p += 16;
        continue;
      }
      // Byte by byte up to and including the first such byte.
      slow_until = p + __builtin_ctz(bad) + 1;
    }
#endif
    const unsigned char c = static_cast<unsigned char>(d[p]);
    if (c >= 0x80) {  // in a string or not
      const size_t len = Utf8SequenceLength(p);
      if (len == 0) {
        MakeError(p, "invalid UTF-8 byte sequence");
        return false;
      }
      p += len;
      continue;
    }
    if (in_string) {
      if (c == '"') {
        in_string = false;
      } else if (c == '\\') {
        p += 2;
        continue;
      } else if (c == 0) {
        MakeError(p, "unexpected NUL byte in string");
        return false;
      }
    } else if (c == '{') {
      if (++depth > max_depth) {
        MakeError(p, StrCatSv("nesting deeper than ", max_depth, " levels"));
        return false;
      }
    } else if (c == '}') {
      if (--depth == 0) {
        *out = input_.substr(start, p + 1 - start);
        *end = p + 1;
        return true;
      }
    } else if (c == '"') {
      in_string = true;
      string_start = p;
    } else if (c == 0) {
      MakeError(p, "unexpected NUL byte");
      return false;
    }
    ++p;
  }
  if (in_string) {
    MakeError(string_start, "unterminated string");
    return false;
  }
  MakeError(start, "unterminated '{'");
  return false;
}

void Lexer::LineCol(size_t offset, int64_t* line, int64_t* col) const {
  if (offset > input_.size()) offset = input_.size();
  int64_t l = 1;
  size_t line_start = 0;
  const char* base = input_.data();
  const char* p = base;
  const char* e = base + offset;
  while (p < e) {
    const void* nl = std::memchr(p, '\n', e - p);
    if (nl == nullptr) break;
    ++l;
    p = static_cast<const char*>(nl) + 1;
    line_start = p - base;
  }
  *line = l;
  *col = static_cast<int64_t>(offset - line_start) + 1;
}

namespace {

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xc0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xe0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else {
    out->push_back(static_cast<char>(0xf0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  }
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

bool UnescapeString(std::string_view quoted, std::string* out,
                    std::string* error) {
  out->clear();
  if (quoted.size() < 2) {
    *error = "malformed string";
    return false;
  }
  std::string_view s = quoted.substr(1, quoted.size() - 2);
  out->reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    char c = s[i];
    if (c != '\\') {
      size_t j = s.find('\\', i);
      if (j == std::string_view::npos) j = s.size();
      out->append(s.data() + i, j - i);
      i = j;
      continue;
    }
    if (i + 1 >= s.size()) {
      *error = "trailing backslash in string";
      return false;
    }
    char e = s[i + 1];
    i += 2;
    switch (e) {
      case 'n':
        out->push_back('\n');
        break;
      case 't':
        out->push_back('\t');
        break;
      case 'r':
        out->push_back('\r');
        break;
      case 'a':
        out->push_back('\a');
        break;
      case 'b':
        out->push_back('\b');
        break;
      case 'f':
        out->push_back('\f');
        break;
      case 'v':
        out->push_back('\v');
        break;
      case '\\':
        out->push_back('\\');
        break;
      case '"':
        out->push_back('"');
        break;
      case '\'':
        out->push_back('\'');
        break;
      case '?':
        out->push_back('?');
        break;
      case '0':
      case '1':
      case '2':
      case '3':
      case '4':
      case '5':
      case '6':
      case '7': {
        int v = e - '0';
        for (int k = 0; k < 2 && i < s.size() && s[i] >= '0' && s[i] <= '7';
             ++k, ++i) {
          v = v * 8 + (s[i] - '0');
        }
        if (v > 255) {
          *error = "octal escape out of range";
          return false;
        }
        out->push_back(static_cast<char>(v));
        break;
      }
      case 'x': {
        int v = 0, digits = 0;
        while (i < s.size() && HexValue(s[i]) >= 0) {
          v = v * 16 + HexValue(s[i]);
          ++i;
          if (++digits > 2) {
            *error = "hex escape out of range";
            return false;
          }
        }
        if (digits == 0) {
          *error = "malformed \\x escape";
          return false;
        }
        out->push_back(static_cast<char>(v));
        break;
      }
      case 'u':
      case 'U': {
        int want = e == 'u' ? 4 : 8;
        uint32_t cp = 0;
        for (int k = 0; k < want; ++k, ++i) {
          if (i >= s.size() || HexValue(s[i]) < 0) {
            *error = "malformed unicode escape";
            return false;
          }
          cp = cp * 16 + HexValue(s[i]);
        }
        if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
          *error = "invalid unicode code point in escape";
          return false;
        }
        AppendUtf8(cp, out);
        break;
      }
      default:
        *error =
            StrCatSv("unknown escape sequence '\\", std::string(1, e), "'");
        return false;
    }
  }
  return true;
}

std::string DescribeToken(const Token& token) {
  if (token.kind == TokenKind::kEof) return "end of input";
  std::string_view text = token.text;
  constexpr size_t kMax = 40;
  std::string shown;
  if (token.kind == TokenKind::kName) shown.push_back('%');
  if (text.size() > kMax) {
    size_t cut = kMax;
    // Do not cut inside a UTF-8 sequence.
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80) {
      --cut;
    }
    shown.append(text.substr(0, cut));
    shown.append("...");
  } else {
    shown.append(text);
  }
  if (token.kind == TokenKind::kAttrName) shown.push_back('=');
  return StrCatSv("'", shown, "'");
}

}  // namespace hloverlap
