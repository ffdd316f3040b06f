// Golden tests for reader error messages: every error is Status::Parse("LINE:COL: ...").
#include <gtest/gtest.h>

#include <string>

#include "mentat/edn.h"

namespace mentat::edn {
namespace {

struct ErrorCase {
  std::string input;
  std::string message;
};

std::string ReadError(const std::string& input) {
  Result<Vec> r = ReadAll(input);
  if (r.ok()) return "(no error)";
  EXPECT_EQ(r.status().code(), Code::kParse) << input;
  return r.status().message();
}

TEST(EdnReaderError, GoldenMessages) {
  const ErrorCase kCases[] = {
      // Delimiters.
      {"]", "1:1: unmatched closing ']'"},
      {"}", "1:1: unmatched closing '}'"},
      {"[1]\n  )", "2:3: unmatched closing ')'"},
      {"(1 2]", "1:5: expected ')' to close the list at 1:1, found ']'"},
      {"[1 2}", "1:5: expected ']' to close the vector at 1:1, found '}'"},
      {"#{1 2)", "1:6: expected '}' to close the set at 1:1, found ')'"},
      {"{:a 1]", "1:6: expected '}' to close the map at 1:1, found ']'"},
      {"[1 2", "1:1: unterminated vector"},
      {"(1", "1:1: unterminated list"},
      {"{:a", "1:1: unterminated map"},
      {"#{1", "1:1: unterminated set"},
      {"[1 2] [3", "1:7: unterminated vector"},
      {"[1\n [2\n  {:a", "3:3: unterminated map"},
      // Strings.
      {"\n\n    \"abc", "3:5: unterminated string"},
      {"\"abc\\", "1:1: unterminated string"},
      {"\"a\nb", "1:1: unterminated string"},
      {"\"\\q\"", "1:2: invalid escape \\q in string"},
      {"\"x\\/\"", "1:3: invalid escape \\/ in string"},
      {"\"\\u12G4\"", "1:2: invalid \\u escape: expected four hex digits"},
      {"\"\\u12\"", "1:2: invalid \\u escape: expected four hex digits"},
      {"\"\\ud800\"", "1:2: unpaired high surrogate \\ud800"},
      {"\"ab\\ud83dx\"", "1:4: unpaired high surrogate \\ud83d"},
      {"\"\\ud83d\\u0041\"", "1:2: unpaired high surrogate \\ud83d"},
      {"\"\\udc00\"", "1:2: unpaired low surrogate \\udc00"},
      // Maps and sets.
      {"[\n  {:a 1 :b}]", "2:3: map literal has an odd number of forms"},
      {"{:a 1 :a 2}", "1:7: duplicate map key :a"},
      {"{[1] 1 (1) 2}", "1:8: duplicate map key (1)"},
      {"{:a 1 :b 2 :b 3 :a 4}", "1:12: duplicate map key :b"},
      {"#{1 2 1}", "1:7: duplicate set element 1"},
      {"#{\"a\" \"b\" \"a\" \"b\"}", "1:11: duplicate set element \"a\""},
      // Tags.
      {"#foo 1", "1:2: unknown tag #foo"},
      {"[#foo/bar 1]", "1:3: unknown tag #foo/bar"},
      {"#:ns{:a 1}", "1:2: unknown tag #:ns"},
      {"#db/fn \"(fn [db] [])\"", "1:1: #db/fn must be followed by a map"},
      {"[#db/fn]", "1:2: #db/fn must be followed by a map"},
      {"#", "1:1: expected a tag after '#'"},
      {"# x", "1:2: expected a tag after '#', found ' '"},
      {"#(inc %)", "1:2: expected a tag after '#', found '('"},
      {"##foo", "1:1: unknown symbolic value ##foo"},
      {"##inf", "1:1: unknown symbolic value ##inf"},
      {"#inst", "1:1: #inst must be followed by a string"},
      {"[#uuid]", "1:2: #uuid must be followed by a string"},
      {"#inst 1", "1:7: #inst must be followed by a string"},
      {"#inst \"2025-13-01\"", "1:7: invalid instant \"2025-13-01\": month out of range"},
      {"#inst \"2025-02-29\"", "1:7: invalid instant \"2025-02-29\": day out of range"},
      {"#inst \"2025-01-01T24:00Z\"",
       "1:7: invalid instant \"2025-01-01T24:00Z\": hour out of range"},
      {"#uuid \"xyz\"", "1:7: invalid uuid \"xyz\": expected 8-4-4-4-12 hex digits"},
      {"#bytes \"abc\"", "1:8: invalid #bytes: odd number of hex digits"},
      {"#bytes \"0z\"", "1:8: invalid #bytes: 'z' is not a hex digit"},
      // Discard.
      {"#_", "1:1: #_ has no form to discard"},
      {"[1 #_]", "1:4: #_ has no form to discard"},
      {"#_ #_ 1", "1:4: #_ has no form to discard"},
      // Keywords and symbols.
      {":", "1:1: keyword ':' has no name"},
      {"[: a]", "1:2: keyword ':' has no name"},
      {"::x", "1:1: auto-resolved keyword ::x is not EDN"},
      {":a/", "1:1: invalid keyword :a/"},
      {":/a", "1:1: invalid keyword :/a"},
      {"a/", "1:1: invalid symbol a/"},
      {"/a", "1:1: invalid symbol /a"},
      {".5", "1:1: invalid symbol .5"},
      {"-.5x/1", "1:1: invalid symbol -.5x/1"},
      {"@x", "1:1: unexpected character '@'"},
      {"^x", "1:1: unexpected character '^'"},
      {"`x", "1:1: unexpected character '`'"},
      {"~x", "1:1: unexpected character '~'"},
      {"a@b", "1:2: unexpected character '@' in symbol"},
      {"ab'", "1:3: unexpected character ''' in symbol"},
      {"\x01", "1:1: unexpected character byte 0x01"},
      {"'x", "1:1: unexpected quote ' (quoting is not EDN)"},
      // Numbers.
      {"007", "1:1: invalid number 007 (leading zeros are not EDN)"},
      {"-01.5", "1:1: invalid number -01.5 (leading zeros are not EDN)"},
      {"0x1F", "1:1: invalid number 0x1F (hexadecimal integers are not EDN)"},
      {"1/2", "1:1: invalid number 1/2 (ratios are not EDN)"},
      {"1a", "1:1: invalid number 1a"},
      {"1.5N", "1:1: invalid number 1.5N"},
      {"1e", "1:1: invalid number 1e"},
      {"1e+", "1:1: invalid number 1e+"},
      {"1.2.3", "1:1: invalid number 1.2.3"},
      {"1MM", "1:1: invalid number 1MM"},
      {"[1 -2x]", "1:4: invalid number -2x"},
      // Characters.
      {"\\", "1:1: expected a character after '\\'"},
      {"[\\ ]", "1:2: expected a character after '\\'"},
      {"\\abc", "1:1: unknown character literal \\abc"},
      {"\\u12", "1:1: unknown character literal \\u12"},
      {"\\uZZZZ", "1:1: unknown character literal \\uZZZZ"},
      {"\\o400", "1:1: octal character \\o400 is above \\o377"},
      {"\\o8", "1:1: unknown character literal \\o8"},
      {"\\\xFF", "1:2: invalid UTF-8 in character literal"},
      // EDN text is UTF-8: strings, symbols, keywords and regex literals with other bytes
      // are errors at the byte (stray, truncated, overlong, surrogate, beyond U+10FFFF).
      {"\"a\xFF\"", "1:3: invalid UTF-8 in string: byte 0xFF"},
      {"[\"ok\"\n \"xy\xC3\"]", "2:5: invalid UTF-8 in string: byte 0xC3"},
      {"\"\xC0\x80\"", "1:2: invalid UTF-8 in string: byte 0xC0"},
      {"\"\xED\xA0\x80\"", "1:2: invalid UTF-8 in string: byte 0xED"},
      {"\"\xF4\x90\x80\x80\"", "1:2: invalid UTF-8 in string: byte 0xF4"},
      {"\"\\n\x80\"", "1:4: invalid UTF-8 in string: byte 0x80"},
      {":ab\xFE", "1:4: invalid UTF-8 in keyword: byte 0xFE"},
      {"[x\xFF]", "1:3: invalid UTF-8 in symbol: byte 0xFF"},
  };
  for (const ErrorCase& c : kCases) {
    EXPECT_EQ(ReadError(c.input), c.message) << "input: " << c.input;
  }
}

TEST(EdnReaderError, ReadWantsExactlyOneForm) {
  Result<Value> empty = Read("");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), Code::kParse);
  EXPECT_EQ(empty.status().message(), "1:1: expected a form, found end of input");
  EXPECT_EQ(Read("  \n  ; only a comment\n").status().message(),
            "3:1: expected a form, found end of input");
  EXPECT_EQ(Read("#_ 1").status().message(), "1:5: expected a form, found end of input");
  EXPECT_EQ(Read("1 2").status().message(), "1:3: expected end of input, found another form");
  EXPECT_EQ(Read("{:a 1}\n\n  [2]").status().message(),
            "3:3: expected end of input, found another form");
  EXPECT_EQ(Read("x )").status().message(), "1:3: unmatched closing ')'");
  EXPECT_TRUE(Read("  1  ; trailing comment").ok());
}

TEST(EdnReaderError, LongTextInMessagesIsTruncatedOnCharacterBoundaries) {
  std::string tag = std::string(39, 'a') + "\xC3\xA9" + std::string(10, 'b');
  EXPECT_EQ(Read("#" + tag + " 1").status().message(),
            "1:2: unknown tag #" + std::string(39, 'a') + "...");
  std::string inst = std::string(63, 'x') + "\xC3\xA9" + "x";
  EXPECT_EQ(ParseInstant(inst).status().message(),
            "invalid instant \"" + std::string(63, 'x') + "...\": expected a year");
}

TEST(EdnReaderError, ToStringHasCodeName) {
  EXPECT_EQ(Read("]").status().ToString(), "parse error: 1:1: unmatched closing ']'");
}

TEST(EdnReaderError, NoPrefixOfValidInputCrashes) {
  // Every prefix of a rich document either reads or fails cleanly.
  const std::string doc =
      "[{:db/id \"a\" :n 1N :d 1.5M :f -1.5e-3 :c \\newline :s \"x\\u00e9\\ud83d\\ude00\\n\"}"
      " #{:k sym/x} (quote #inst \"2025-01-01T10:00:00.123456+02:00\") ##NaN"
      " #uuid \"550e8400-e29b-41d4-a716-446655440000\" #bytes \"00ff\" #_ [1 2] nil true]";
  ASSERT_TRUE(Read(doc).ok());
  for (size_t n = 0; n < doc.size(); ++n) {
    Result<Vec> r = ReadAll(std::string_view(doc).substr(0, n));
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), Code::kParse);
    }
  }
}

}  // namespace
}  // namespace mentat::edn
