// Zero-copy lexer for HLO text (hlo_text_format.md §2).
//
// The lexer works over the caller's buffer: tokens are string_views into it
// and lexing allocates nothing. Whitespace, `/* ... */` and `// ...`
// comments are skipped between tokens. Token kinds:
//
//   punctuation  = , : * ? # + ~ [ ] { } ( ) ... -> <=
//   kIdent       foo, all-reduce-start, get-tuple-element.12, f32, ENTRY
//   kName        %foo            (text without the '%')
//   kAttrName    foo=            (identifier glued to '='; text without '=')
//   kInt         -?[0-9]+
//   kDecimal     1.5, -0., 1e-05, -inf, -nan   (inf and nan alone are idents)
//   kString      "..." or '...'  (text includes the quotes, still escaped)
//   kWord        other words that start like a number: 3x3, 0_0x1_2,
//                0bf_0io->0bf, 0x7f, and b01f_01io->b01f
//
// Attribute values whose syntax the parser does not interpret are captured
// raw with ScanRawValue / ScanBraceBlob, which re-scan characters from a
// given offset (balanced brackets, quoted strings), so their text is kept
// exactly.
//
// Errors (unexpected characters, NUL bytes, invalid UTF-8, unterminated
// strings or comments) produce a kError token whose offset is the exact
// position of the problem; error() holds the message. Nothing here recurses.
#ifndef HLOVERLAP_HLO_LEXER_H_
#define HLOVERLAP_HLO_LEXER_H_

#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace hloverlap {

// For scanning text 16 bytes at a time: bit i of the result is set when
// byte i of the block is inside a double-quoted string, given `quotes` (bit
// i: byte i is '"') and whether the block starts inside a string. The
// parity of the quotes up to each byte (a prefix XOR), so only for blocks
// without backslashes, which callers check first. Shared by the lexer's
// brace-blob scan and the printer's blob test.
inline unsigned InsideStringMask16(unsigned quotes, bool in_string) {
  unsigned inside = quotes;
  inside ^= inside << 1;
  inside ^= inside << 2;
  inside ^= inside << 4;
  inside ^= inside << 8;
  if (in_string) inside = ~inside;
  return inside & 0xffff;
}

enum class TokenKind : uint8_t {
  kEof,
  kError,
  kEqual,     // =
  kComma,     // ,
  kColon,     // :
  kStar,      // *
  kQuestion,  // ?
  kHash,      // #
  kPlus,      // +
  kTilde,     // ~
  kLsquare,   // [
  kRsquare,   // ]
  kLbrace,    // {
  kRbrace,    // }
  kLparen,    // (
  kRparen,    // )
  kDots,      // ...
  kArrow,     // ->
  kLeq,       // <=
  kIdent,
  kName,
  kAttrName,
  kInt,
  kDecimal,
  kString,
  kWord,
};

// Human-readable name of a token kind ("identifier", "'{'", ...).
std::string_view TokenKindName(TokenKind kind);

namespace text_internal {
// Single-character punctuation tokens by byte (kEof = not one).
constexpr std::array<TokenKind, 256> MakePunctTable() {
  std::array<TokenKind, 256> t{};
  t['='] = TokenKind::kEqual;
  t[','] = TokenKind::kComma;
  t[':'] = TokenKind::kColon;
  t['*'] = TokenKind::kStar;
  t['?'] = TokenKind::kQuestion;
  t['#'] = TokenKind::kHash;
  t['+'] = TokenKind::kPlus;
  t['~'] = TokenKind::kTilde;
  t['['] = TokenKind::kLsquare;
  t[']'] = TokenKind::kRsquare;
  t['{'] = TokenKind::kLbrace;
  t['}'] = TokenKind::kRbrace;
  t['('] = TokenKind::kLparen;
  t[')'] = TokenKind::kRparen;
  return t;
}
inline constexpr std::array<TokenKind, 256> kPunctTable = MakePunctTable();

// Stops at a byte that is not an identifier character [A-Za-z0-9_.-].
[[gnu::always_inline]] inline size_t SkipIdChars(const char* d, size_t p,
                                                 size_t n) {
#if defined(__SSE2__)
  const __m128i k20 = _mm_set1_epi8(0x20);
  const __m128i ka = _mm_set1_epi8('a' - 1), kz = _mm_set1_epi8('z' + 1);
  const __m128i k0 = _mm_set1_epi8('0' - 1), k9 = _mm_set1_epi8('9' + 1);
  const __m128i kus = _mm_set1_epi8('_'), kdot = _mm_set1_epi8('.');
  const __m128i kdash = _mm_set1_epi8('-');
  while (p + 16 <= n) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + p));
    const __m128i lower = _mm_or_si128(v, k20);
    __m128i ok =
        _mm_and_si128(_mm_cmpgt_epi8(lower, ka), _mm_cmplt_epi8(lower, kz));
    ok = _mm_or_si128(
        ok, _mm_and_si128(_mm_cmpgt_epi8(v, k0), _mm_cmplt_epi8(v, k9)));
    ok = _mm_or_si128(ok, _mm_cmpeq_epi8(v, kus));
    ok = _mm_or_si128(ok, _mm_cmpeq_epi8(v, kdot));
    ok = _mm_or_si128(ok, _mm_cmpeq_epi8(v, kdash));
    const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(ok));
    if (mask != 0xffff) return p + __builtin_ctz(~mask);
    p += 16;
  }
#endif
  while (p < n) {
    const unsigned char c = static_cast<unsigned char>(d[p]);
    if (!((c | 0x20) - 'a' < 26u || c - '0' < 10u || c == '_' || c == '.' ||
          c == '-')) {
      break;
    }
    ++p;
  }
  return p;
}

}  // namespace text_internal

struct Token {
  TokenKind kind = TokenKind::kEof;
  // kString: the text contains a backslash escape.
  bool has_escape = false;
  // Byte offset of the token (of the problem, for kError).
  size_t offset = 0;
  std::string_view text;
};

class Lexer {
 public:
  explicit Lexer(std::string_view input) : input_(input) {}

  // Lexes the token starting at (or after whitespace/comments from) pos()
  // into *out. Punctuation is handled inline; everything else by NextSlow().
  // Writing in place (rather than returning a Token) avoids a store-to-load
  // forwarding stall per token in the parser's hot loop.
  [[gnu::always_inline]] void Next(Token* out) {
    const size_t n = input_.size();
    size_t p = pos_;
    while (p < n && (input_[p] == ' ' || input_[p] == '\n')) ++p;
    if (p < n) {
      const TokenKind k =
          text_internal::kPunctTable[static_cast<unsigned char>(input_[p])];
      if (k != TokenKind::kEof) {
        pos_ = p + 1;
        out->kind = k;
        out->has_escape = false;
        out->offset = p;
        out->text = std::string_view(input_.data() + p, 1);
        return;
      }
    }
    pos_ = p;
    NextSlow(out);
  }
  Token Next() {
    Token t;
    Next(&t);
    return t;
  }
  // The token Next() would return, without consuming it.
  Token Peek() {
    size_t saved = pos_;
    Token t = Next();
    pos_ = saved;
    return t;
  }

  size_t pos() const { return pos_; }
  void set_pos(size_t pos) { pos_ = pos; }
  std::string_view input() const { return input_; }
  // Message of the most recent kError token (or failed scan).
  const std::string& error() const { return error_; }
  size_t error_offset() const { return error_offset_; }

  // Captures an attribute value starting at `start` (whitespace first is
  // skipped): everything up to a ',' or line break or unmatched closing
  // bracket at nesting depth 0, with (), [], {} balanced and "..." / '...'
  // strings skipped. Trailing whitespace is not included. On success sets
  // *out and *end (offset just after the value) and returns true; on error
  // (unterminated string, nesting deeper than max_depth, mismatched
  // brackets, NUL or invalid UTF-8) sets error() and returns false.
  bool ScanRawValue(size_t start, int max_depth, std::string_view* out,
                    size_t* end);
  // Captures a raw brace blob (JSON-dict mode, §2.4) starting at the '{'
  // at `start`: counts only '{' '}' and skips "..." strings. *out includes
  // the braces.
  bool ScanBraceBlob(size_t start, int max_depth, std::string_view* out,
                     size_t* end);

  // 1-based line and column (in bytes) of an offset.
  void LineCol(size_t offset, int64_t* line, int64_t* col) const;

 private:
  void NextSlow(Token* out);
  Token MakeError(size_t offset, std::string message);
  void SetError(Token* out, size_t offset, std::string message) {
    *out = MakeError(offset, std::move(message));
  }
  // Lex the token at `start` into *out, field by field (see NextSlow).
  void LexNumberOrWord(size_t start, Token* out);
  void LexString(size_t start, Token* out);
  // Skips whitespace and comments. Returns false (with error set) on an
  // unterminated or malformed comment.
  bool SkipSpace(size_t* error_at);
  // Extends a word token over [A-Za-z0-9_.] and '-' (when followed by a
  // digit or '>') and '>' (after '-').
  size_t ScanWordTail(size_t p) const;
  // Validates the UTF-8 sequence at p; returns its length or 0 if invalid.
  size_t Utf8SequenceLength(size_t p) const;
  bool CheckBytes(size_t begin, size_t end);

  std::string_view input_;
  size_t pos_ = 0;
  std::string error_;
  size_t error_offset_ = 0;
};

// Decodes the C escapes of a quoted string token (quotes included in
// `quoted`) into *out. Returns false with *error set on a malformed escape.
bool UnescapeString(std::string_view quoted, std::string* out,
                    std::string* error);

// String concatenation over std::string_view (this absl's StrCat takes
// absl::string_view, which is not std::string_view here).
namespace text_internal {
inline void AppendPiece(std::string& out, std::string_view s) { out.append(s); }
template <typename T, typename = std::enable_if_t<std::is_integral_v<T>>>
void AppendPiece(std::string& out, T v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(buf, r.ptr);
}
}  // namespace text_internal
template <typename... Args>
std::string StrCatSv(const Args&... args) {
  std::string out;
  (text_internal::AppendPiece(out, args), ...);
  return out;
}

// Unicode-safe short description of a token's text for diagnostics:
// "'foo'" (truncated), or "end of input".
std::string DescribeToken(const Token& token);

}  // namespace hloverlap

#endif  // HLOVERLAP_HLO_LEXER_H_
