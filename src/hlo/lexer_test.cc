// Tests of the zero-copy HLO lexer: token kinds, comments, context-free
// number/word forms, strings and escapes, raw value scanning, errors with
// exact offsets, and line/column computation.
#include "hlo/lexer.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace hloverlap {
namespace {

struct Tok {
  TokenKind kind;
  std::string text;
  bool operator==(const Tok&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Tok& t) {
  return os << TokenKindName(t.kind) << " '" << t.text << "'";
}

std::vector<Tok> LexAll(std::string_view input) {
  Lexer lex(input);
  std::vector<Tok> out;
  while (true) {
    Token t = lex.Next();
    if (t.kind == TokenKind::kEof) break;
    out.push_back({t.kind, std::string(t.text)});
    if (t.kind == TokenKind::kError) break;
  }
  return out;
}

using K = TokenKind;

TEST(Lexer, InstructionLine) {
  EXPECT_EQ(
      LexAll("ROOT %add.1 = f32[8]{0} add(%a, b), metadata={op_name=\"x\"}"),
      (std::vector<Tok>{{K::kIdent, "ROOT"},   {K::kName, "add.1"},
                        {K::kEqual, "="},      {K::kIdent, "f32"},
                        {K::kLsquare, "["},    {K::kInt, "8"},
                        {K::kRsquare, "]"},    {K::kLbrace, "{"},
                        {K::kInt, "0"},        {K::kRbrace, "}"},
                        {K::kIdent, "add"},    {K::kLparen, "("},
                        {K::kName, "a"},       {K::kComma, ","},
                        {K::kIdent, "b"},      {K::kRparen, ")"},
                        {K::kComma, ","},      {K::kAttrName, "metadata"},
                        {K::kLbrace, "{"},     {K::kAttrName, "op_name"},
                        {K::kString, "\"x\""}, {K::kRbrace, "}"}}));
}

TEST(Lexer, IdentifiersWithDashesAndDots) {
  EXPECT_EQ(
      LexAll("all-reduce-start get-tuple-element.12 control-predecessors="),
      (std::vector<Tok>{{K::kIdent, "all-reduce-start"},
                        {K::kIdent, "get-tuple-element.12"},
                        {K::kAttrName, "control-predecessors"}}));
  // An identifier followed by ':' stays an identifier (parameter names).
  EXPECT_EQ(LexAll("Arg_0.1: f32[]"), (std::vector<Tok>{{K::kIdent, "Arg_0.1"},
                                                        {K::kColon, ":"},
                                                        {K::kIdent, "f32"},
                                                        {K::kLsquare, "["},
                                                        {K::kRsquare, "]"}}));
  // Compact GTE operands.
  EXPECT_EQ(LexAll("%param.11#24#0"), (std::vector<Tok>{{K::kName, "param.11"},
                                                        {K::kHash, "#"},
                                                        {K::kInt, "24"},
                                                        {K::kHash, "#"},
                                                        {K::kInt, "0"}}));
}

TEST(Lexer, NumbersAndWords) {
  EXPECT_EQ(LexAll("1 -2 1.5 -0. 1e-05 3.40282347e+38 .5 -inf -nan inf nan"),
            (std::vector<Tok>{{K::kInt, "1"},
                              {K::kInt, "-2"},
                              {K::kDecimal, "1.5"},
                              {K::kDecimal, "-0."},
                              {K::kDecimal, "1e-05"},
                              {K::kDecimal, "3.40282347e+38"},
                              {K::kDecimal, ".5"},
                              {K::kDecimal, "-inf"},
                              {K::kDecimal, "-nan"},
                              {K::kIdent, "inf"},
                              {K::kIdent, "nan"}}));
  EXPECT_EQ(LexAll("3x3 0_0x1_2 1_2x-1_0_1 0bf_0io->0bf b01f_01io->b01f 0x7f"),
            (std::vector<Tok>{{K::kWord, "3x3"},
                              {K::kWord, "0_0x1_2"},
                              {K::kWord, "1_2x-1_0_1"},
                              {K::kWord, "0bf_0io->0bf"},
                              {K::kWord, "b01f_01io->b01f"},
                              {K::kWord, "0x7f"}}));
  EXPECT_EQ(LexAll("18446744073709551615"),
            (std::vector<Tok>{{K::kInt, "18446744073709551615"}}));
}

TEST(Lexer, Punctuation) {
  EXPECT_EQ(LexAll("= , : * ? # + ~ [ ] { } ( ) ... -> <="),
            (std::vector<Tok>{{K::kEqual, "="},
                              {K::kComma, ","},
                              {K::kColon, ":"},
                              {K::kStar, "*"},
                              {K::kQuestion, "?"},
                              {K::kHash, "#"},
                              {K::kPlus, "+"},
                              {K::kTilde, "~"},
                              {K::kLsquare, "["},
                              {K::kRsquare, "]"},
                              {K::kLbrace, "{"},
                              {K::kRbrace, "}"},
                              {K::kLparen, "("},
                              {K::kRparen, ")"},
                              {K::kDots, "..."},
                              {K::kArrow, "->"},
                              {K::kLeq, "<="}}));
}

TEST(Lexer, CommentsAreSkipped) {
  EXPECT_EQ(LexAll("a /* x */ b // rest of line\n /*index=5*/c } // body\n"),
            (std::vector<Tok>{{K::kIdent, "a"},
                              {K::kIdent, "b"},
                              {K::kIdent, "c"},
                              {K::kRbrace, "}"}}));
}

TEST(Lexer, Strings) {
  std::vector<Tok> t = LexAll(R"("a\"b" 'x y' "\n\t\\\101\x41\u00e9")");
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0], (Tok{K::kString, R"("a\"b")"}));
  EXPECT_EQ(t[1], (Tok{K::kString, "'x y'"}));
  std::string out, err;
  ASSERT_TRUE(UnescapeString(t[0].text, &out, &err)) << err;
  EXPECT_EQ(out, "a\"b");
  ASSERT_TRUE(UnescapeString(t[2].text, &out, &err)) << err;
  EXPECT_EQ(out, "\n\t\\AA\xc3\xa9");
  EXPECT_FALSE(UnescapeString(R"("\q")", &out, &err));
  EXPECT_NE(err.find("unknown escape"), std::string::npos);
  EXPECT_FALSE(UnescapeString(R"("\777")", &out, &err));
  // Long strings (the SSE2 path) with a quote near the end.
  std::string long_string = "\"" + std::string(100, 'x') + "\\\"y\"";
  t = LexAll(long_string);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].kind, K::kString);
  EXPECT_EQ(t[0].text.size(), long_string.size());
}

TEST(Lexer, Errors) {
  struct Case {
    std::string input;
    size_t offset;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"a $", 2, "unexpected character '$'"},
      {"a \"open", 2, "unterminated string"},
      {"a /* open", 2, "unterminated '/*' comment"},
      {std::string("ab\0c", 4), 2, "unexpected NUL byte"},
      {std::string("\"a\0\"", 4), 2, "unexpected NUL byte in string"},
      {"x \xff", 2, "invalid UTF-8 byte sequence"},
      {"\"ok \xc3\x28\"", 4, "invalid UTF-8 byte sequence"},
      {"\xed\xa0\x80", 0, "invalid UTF-8"},  // surrogate
      {"\xc0\xaf", 0, "invalid UTF-8"},      // overlong
      {"\xc3\xa9", 0, "unexpected character '\xc3\xa9'"},
      {"a - b", 2, "unexpected character '-'"},
      {"a < b", 2, "unexpected character '<'"},
      {"% x", 0, "expected a name after '%'"},
      {"/* \xff */", 3, "invalid UTF-8"},
  };
  for (const Case& c : cases) {
    Lexer lex(c.input);
    Token t;
    do {
      t = lex.Next();
    } while (t.kind != K::kError && t.kind != K::kEof);
    ASSERT_EQ(t.kind, K::kError) << c.message;
    EXPECT_EQ(t.offset, c.offset) << c.message;
    EXPECT_NE(lex.error().find(c.message), std::string::npos)
        << lex.error() << " vs " << c.message;
    // After an error the lexer stays at the end.
    EXPECT_EQ(lex.Next().kind, K::kEof);
  }
}

TEST(Lexer, ScanRawValue) {
  const std::string in =
      "x=literal=s32[2]{0} {1, 2}, b={a, (b, [c]), 'q,}', \"r,)\"} , "
      "d=b01f_01io->b01f\n e=foo /* c */";
  Lexer lex(in);
  std::string_view v;
  size_t end;
  size_t start = in.find("s32");
  ASSERT_TRUE(lex.ScanRawValue(start, 256, &v, &end));
  EXPECT_EQ(v, "s32[2]{0} {1, 2}");
  EXPECT_EQ(in[end], ',');
  start = in.find("{a,");
  ASSERT_TRUE(lex.ScanRawValue(start, 256, &v, &end));
  EXPECT_EQ(v, "{a, (b, [c]), 'q,}', \"r,)\"}");
  start = in.find("b01f");
  ASSERT_TRUE(lex.ScanRawValue(start, 256, &v, &end));
  EXPECT_EQ(v, "b01f_01io->b01f");
  start = in.find("foo");
  ASSERT_TRUE(lex.ScanRawValue(start, 256, &v, &end));
  EXPECT_EQ(v, "foo");
  // Errors: mismatched, unterminated, too deep.
  Lexer bad("{(]}");
  EXPECT_FALSE(bad.ScanRawValue(0, 256, &v, &end));
  EXPECT_EQ(bad.error_offset(), 2u);
  EXPECT_NE(bad.error().find("mismatched ']'"), std::string::npos);
  Lexer open("{a, [b");
  EXPECT_FALSE(open.ScanRawValue(0, 256, &v, &end));
  EXPECT_EQ(open.error_offset(), 0u);
  const std::string deep(300, '(');
  Lexer too_deep(deep);
  EXPECT_FALSE(too_deep.ScanRawValue(0, 256, &v, &end));
  EXPECT_EQ(too_deep.error_offset(), 256u);
}

TEST(Lexer, ScanBraceBlob) {
  const std::string in =
      R"({"a":{"b":"}\"{"},"c":[1,2]} trailing {mesh = #sdy.mesh<["x"=2]>})";
  Lexer lex(in);
  std::string_view v;
  size_t end;
  ASSERT_TRUE(lex.ScanBraceBlob(0, 256, &v, &end));
  EXPECT_EQ(v, R"({"a":{"b":"}\"{"},"c":[1,2]})");
  ASSERT_TRUE(lex.ScanBraceBlob(in.find("{mesh"), 256, &v, &end));
  EXPECT_EQ(v, R"({mesh = #sdy.mesh<["x"=2]>})");
  EXPECT_EQ(end, in.size());
  // Long blobs (the SSE2 path).
  std::string long_blob = "{\"k\":\"" + std::string(200, 'v') + "\",\"n\":{}}";
  Lexer long_lex(long_blob);
  ASSERT_TRUE(long_lex.ScanBraceBlob(0, 256, &v, &end));
  EXPECT_EQ(v.size(), long_blob.size());
  Lexer open("{\"a\":1");
  EXPECT_FALSE(open.ScanBraceBlob(0, 256, &v, &end));
  EXPECT_NE(open.error().find("unterminated '{'"), std::string::npos);
  const std::string deep(1000, '{');
  Lexer too_deep(deep);
  EXPECT_FALSE(too_deep.ScanBraceBlob(0, 8, &v, &end));
  EXPECT_EQ(too_deep.error_offset(), 8u);
}

TEST(Lexer, LineCol) {
  Lexer lex("ab\ncd\n\nef");
  int64_t line, col;
  lex.LineCol(0, &line, &col);
  EXPECT_EQ(line, 1);
  EXPECT_EQ(col, 1);
  lex.LineCol(4, &line, &col);
  EXPECT_EQ(line, 2);
  EXPECT_EQ(col, 2);
  lex.LineCol(7, &line, &col);
  EXPECT_EQ(line, 4);
  EXPECT_EQ(col, 1);
  lex.LineCol(100, &line, &col);  // clamped to the end
  EXPECT_EQ(line, 4);
  EXPECT_EQ(col, 3);
}

TEST(Lexer, PeekDoesNotConsume) {
  Lexer lex("a b");
  EXPECT_EQ(lex.Peek().text, "a");
  EXPECT_EQ(lex.Next().text, "a");
  EXPECT_EQ(lex.Peek().text, "b");
  EXPECT_EQ(lex.Next().text, "b");
  EXPECT_EQ(lex.Next().kind, K::kEof);
}

TEST(Lexer, DescribeToken) {
  const std::string input = "%name attr= " + std::string(60, 'z');
  Lexer lex(input);  // zero-copy: the input must outlive the lexer
  EXPECT_EQ(DescribeToken(lex.Next()), "'%name'");
  EXPECT_EQ(DescribeToken(lex.Next()), "'attr='");
  EXPECT_EQ(DescribeToken(lex.Next()), "'" + std::string(40, 'z') + "...'");
  EXPECT_EQ(DescribeToken(lex.Next()), "end of input");
}

}  // namespace
}  // namespace hloverlap
