// Reader tests: every kind of form, positions, discards, comments, Reader::Next.
#include "mentat/edn.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace mentat::edn {
namespace {

Value MustRead(std::string_view text, const ReadOptions& options = {}) {
  Result<Value> r = Read(text, options);
  EXPECT_TRUE(r.ok()) << "reading " << text << ": " << r.status().ToString();
  return r.ok() ? *r : Value();
}

Uuid MakeU(std::initializer_list<uint8_t> bytes) {
  Uuid u{};
  size_t i = 0;
  for (uint8_t b : bytes) u[i++] = b;
  return u;
}

TEST(EdnReader, NilAndBooleans) {
  EXPECT_EQ(MustRead("nil").kind(), Kind::kNil);
  Value t = MustRead("true");
  ASSERT_EQ(t.kind(), Kind::kBool);
  EXPECT_TRUE(t.as_bool());
  Value f = MustRead("false");
  ASSERT_EQ(f.kind(), Kind::kBool);
  EXPECT_FALSE(f.as_bool());
  // Symbols that merely start like the literals.
  EXPECT_EQ(MustRead("nil?"), Value::Symbol("nil?"));
  EXPECT_EQ(MustRead("truex"), Value::Symbol("truex"));
  EXPECT_EQ(MustRead("false/x"), Value::Symbol("false/x"));
}

TEST(EdnReader, Integers) {
  EXPECT_EQ(MustRead("0"), Value::Int(0));
  EXPECT_EQ(MustRead("42"), Value::Int(42));
  EXPECT_EQ(MustRead("+42"), Value::Int(42));
  EXPECT_EQ(MustRead("-42"), Value::Int(-42));
  EXPECT_EQ(MustRead("-0"), Value::Int(0));
  EXPECT_EQ(MustRead("9223372036854775807"), Value::Int(INT64_MAX));
  EXPECT_EQ(MustRead("-9223372036854775808"), Value::Int(INT64_MIN));
}

TEST(EdnReader, BigIntegers) {
  Value n = MustRead("1N");
  ASSERT_EQ(n.kind(), Kind::kBigInt);
  EXPECT_EQ(n.str(), "1");
  EXPECT_EQ(MustRead("-12N").str(), "-12");
  EXPECT_EQ(MustRead("+12N").str(), "12");
  EXPECT_EQ(MustRead("-0N").str(), "0");
  Value big = MustRead("9223372036854775808");
  ASSERT_EQ(big.kind(), Kind::kBigInt);
  EXPECT_EQ(big.str(), "9223372036854775808");
  Value small = MustRead("-9223372036854775809");
  ASSERT_EQ(small.kind(), Kind::kBigInt);
  EXPECT_EQ(small.str(), "-9223372036854775809");
  Value huge = MustRead("123456789012345678901234567890N");
  EXPECT_EQ(huge.str(), "123456789012345678901234567890");
  EXPECT_NE(MustRead("1N"), Value::Int(1));
}

TEST(EdnReader, Floats) {
  auto f = [](std::string_view text) {
    Value v = MustRead(text);
    EXPECT_EQ(v.kind(), Kind::kFloat) << text;
    return v.is_float() ? v.as_double() : -12345.0;
  };
  EXPECT_EQ(f("1.5"), 1.5);
  EXPECT_EQ(f("-1.5"), -1.5);
  EXPECT_EQ(f("+1.5"), 1.5);
  EXPECT_EQ(f("0.1"), 0.1);
  EXPECT_EQ(f("1."), 1.0);
  EXPECT_EQ(f("1e3"), 1000.0);
  EXPECT_EQ(f("1E3"), 1000.0);
  EXPECT_EQ(f("1e+3"), 1000.0);
  EXPECT_EQ(f("2.5e-3"), 0.0025);
  EXPECT_EQ(f("1.7976931348623157e308"), std::numeric_limits<double>::max());
  EXPECT_EQ(f("1e-310"), 1e-310);
  EXPECT_EQ(f("4.9e-324"), std::numeric_limits<double>::denorm_min());
  double neg_zero = f("-0.0");
  EXPECT_EQ(neg_zero, 0.0);
  EXPECT_TRUE(std::signbit(neg_zero));
  // Out of range literals saturate like Clojure's reader.
  EXPECT_EQ(f("1e400"), std::numeric_limits<double>::infinity());
  EXPECT_EQ(f("-1e400"), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(f("1e-400"), 0.0);
  EXPECT_TRUE(std::signbit(f("-1e-400")));
  EXPECT_EQ(f("##Inf"), std::numeric_limits<double>::infinity());
  EXPECT_EQ(f("##-Inf"), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(f("##NaN")));
}

TEST(EdnReader, BigDecimals) {
  Value d = MustRead("1.50M");
  ASSERT_EQ(d.kind(), Kind::kBigDec);
  EXPECT_EQ(d.str(), "1.50");
  EXPECT_EQ(MustRead("1M").str(), "1");
  EXPECT_EQ(MustRead("-2.5e10M").str(), "-2.5e10");
  EXPECT_EQ(MustRead("+3.0M").str(), "3.0");
}

TEST(EdnReader, StringsAndEscapes) {
  EXPECT_EQ(MustRead(R"("")"), Value::String(""));
  EXPECT_EQ(MustRead(R"("hello world")"), Value::String("hello world"));
  EXPECT_EQ(MustRead(R"("\t\r\n\\\"\b\f")"), Value::String("\t\r\n\\\"\b\f"));
  EXPECT_EQ(MustRead(R"("\u0041\u00e9\u20AC")"), Value::String("A\xC3\xA9\xE2\x82\xAC"));
  EXPECT_EQ(MustRead(R"("\u0000")"), Value::String(std::string(1, '\0')));
  // A surrogate pair becomes one 4-byte UTF-8 sequence (U+1F600).
  EXPECT_EQ(MustRead(R"("\ud83d\ude00")"), Value::String("\xF0\x9F\x98\x80"));
  EXPECT_EQ(MustRead(R"("x\uD834\uDD1Ey")"), Value::String("x\xF0\x9D\x84\x9Ey"));
  // Raw UTF-8 and raw newlines pass through.
  EXPECT_EQ(MustRead("\"h\xC3\xA9llo\""), Value::String("h\xC3\xA9llo"));
  EXPECT_EQ(MustRead("\"a\nb\""), Value::String("a\nb"));
  EXPECT_EQ(MustRead("\"; not a comment, ok\""), Value::String("; not a comment, ok"));
}

TEST(EdnReader, Characters) {
  EXPECT_EQ(MustRead("\\a"), Value::Char('a'));
  EXPECT_EQ(MustRead("\\Z"), Value::Char('Z'));
  EXPECT_EQ(MustRead("\\newline"), Value::Char('\n'));
  EXPECT_EQ(MustRead("\\space"), Value::Char(' '));
  EXPECT_EQ(MustRead("\\tab"), Value::Char('\t'));
  EXPECT_EQ(MustRead("\\return"), Value::Char('\r'));
  EXPECT_EQ(MustRead("\\backspace"), Value::Char('\b'));
  EXPECT_EQ(MustRead("\\formfeed"), Value::Char('\f'));
  EXPECT_EQ(MustRead("\\u00e9"), Value::Char(0xE9));
  EXPECT_EQ(MustRead("\\u20AC"), Value::Char(0x20AC));
  EXPECT_EQ(MustRead("\\o101"), Value::Char('A'));
  EXPECT_EQ(MustRead("\\o0"), Value::Char(0));
  EXPECT_EQ(MustRead("\\u"), Value::Char('u'));
  EXPECT_EQ(MustRead("\\o"), Value::Char('o'));
  EXPECT_EQ(MustRead("\\\xC3\xA9"), Value::Char(0xE9));
  EXPECT_EQ(MustRead("\\\xF0\x9F\x98\x80"), Value::Char(0x1F600));
  EXPECT_EQ(MustRead("\\\\"), Value::Char('\\'));
  EXPECT_EQ(MustRead("\\\""), Value::Char('"'));
  EXPECT_EQ(MustRead("\\("), Value::Char('('));
  EXPECT_EQ(MustRead("\\,"), Value::Char(','));
  // A character ends at a delimiter.
  EXPECT_EQ(MustRead("[\\a\\b \\c]"),
            Value::Vector({Value::Char('a'), Value::Char('b'), Value::Char('c')}));
  EXPECT_EQ(MustRead("(\\))"), Value::List({Value::Char(')')}));
}

TEST(EdnReader, Keywords) {
  Value k = MustRead(":db/ident");
  ASSERT_EQ(k.kind(), Kind::kKeyword);
  EXPECT_EQ(k.str(), "db/ident");
  EXPECT_EQ(k.ns(), "db");
  EXPECT_EQ(k.name(), "ident");
  EXPECT_TRUE(k.is_keyword("db/ident"));
  Value plain = MustRead(":foo");
  EXPECT_EQ(plain.ns(), "");
  EXPECT_EQ(plain.name(), "foo");
  EXPECT_EQ(MustRead(":db.type/string").str(), "db.type/string");
  EXPECT_EQ(MustRead(":a.b.c/d-e_f?").str(), "a.b.c/d-e_f?");
  EXPECT_EQ(MustRead(":person/_friends").str(), "person/_friends");
  EXPECT_EQ(MustRead(":a:b").str(), "a:b");
  EXPECT_EQ(MustRead(":1").str(), "1");
}

TEST(EdnReader, Symbols) {
  for (const char* s : {"foo", "?x",       "?e-1", "$",
                        "%",   "...",      "_",    ">=",
                        "!=",  "<",        ">",    "=",
                        "&",   "*",        "+",    "-",
                        ".",   "/",        "a/b",  "clojure.core//",
                        "-x",  "+x",       "a#",   "a:b",
                        "x1",  "ns.a/b.c", "<=>",  "\xC3\xA9t\xC3\xA9"}) {
    Value v = MustRead(s);
    EXPECT_EQ(v.kind(), Kind::kSymbol) << s;
    if (v.is_symbol()) {
      EXPECT_EQ(v.str(), s);
    }
  }
  Value slash = MustRead("/");
  EXPECT_EQ(slash.ns(), "");
  EXPECT_EQ(slash.name(), "/");
  Value q = MustRead("?x");
  EXPECT_TRUE(q.is_symbol("?x"));
  Value nsd = MustRead("my.ns/fn");
  EXPECT_EQ(nsd.ns(), "my.ns");
  EXPECT_EQ(nsd.name(), "fn");
  Value div = MustRead("clojure.core//");
  EXPECT_EQ(div.ns(), "clojure.core");
  EXPECT_EQ(div.name(), "/");
}

TEST(EdnReader, Collections) {
  EXPECT_EQ(MustRead("()").kind(), Kind::kList);
  EXPECT_EQ(MustRead("[]").kind(), Kind::kVector);
  EXPECT_EQ(MustRead("{}").kind(), Kind::kMap);
  EXPECT_EQ(MustRead("#{}").kind(), Kind::kSet);
  EXPECT_EQ(MustRead("(1 2 3)").size(), 3u);
  Value v = MustRead("[1 \"two\" :three [4]]");
  ASSERT_EQ(v.kind(), Kind::kVector);
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v.items()[0], Value::Int(1));
  EXPECT_EQ(v.items()[1], Value::String("two"));
  EXPECT_EQ(v.items()[2], Value::Keyword("three"));
  EXPECT_EQ(v.items()[3], Value::Vector({Value::Int(4)}));
  Value m = MustRead("{:b 2 :a 1 \"c\" [3]}");
  ASSERT_EQ(m.kind(), Kind::kMap);
  ASSERT_EQ(m.size(), 3u);
  // Entries are sorted by key; strings rank before keywords.
  EXPECT_EQ(m.entries()[0].first, Value::String("c"));
  EXPECT_EQ(m.entries()[1].first, Value::Keyword("a"));
  EXPECT_EQ(m.entries()[2].first, Value::Keyword("b"));
  ASSERT_NE(m.get_keyword("a"), nullptr);
  EXPECT_EQ(*m.get_keyword("a"), Value::Int(1));
  ASSERT_NE(m.get(Value::String("c")), nullptr);
  EXPECT_EQ(*m.get(Value::String("c")), Value::Vector({Value::Int(3)}));
  EXPECT_EQ(m.get_keyword("zz"), nullptr);
  Value s = MustRead("#{3 1 2}");
  ASSERT_EQ(s.kind(), Kind::kSet);
  EXPECT_EQ(s.items(), (Vec{Value::Int(1), Value::Int(2), Value::Int(3)}));
  // Sets and maps compare equal whatever the literal order.
  EXPECT_EQ(MustRead("#{:a :b :c}"), MustRead("#{:c :a :b}"));
  EXPECT_EQ(MustRead("{:a 1 :b {:c [1 2]}}"), MustRead("{:b {:c [1 2]}, :a 1}"));
  EXPECT_EQ(MustRead("#{1 1.0}").size(), 2u);  // 1 and 1.0 are distinct values
  // A list equals a vector with the same elements.
  EXPECT_EQ(MustRead("(1 2)"), MustRead("[1 2]"));
}

TEST(EdnReader, NestedStructure) {
  Value v = MustRead(R"([:find ?e ?name :where [?e :person/name ?name] (not [?e :x _])])");
  ASSERT_EQ(v.size(), 6u);
  EXPECT_TRUE(v.items()[1].is_symbol("?e"));
  EXPECT_TRUE(v.items()[5].is_list());
  EXPECT_TRUE(v.items()[5].items()[0].is_symbol("not"));
  EXPECT_TRUE(v.items()[5].items()[1].items()[1].is_keyword("x"));
}

TEST(EdnReader, TaggedValues) {
  Value i = MustRead("#inst \"2025-01-01T10:00:00Z\"");
  ASSERT_EQ(i.kind(), Kind::kInst);
  EXPECT_EQ(i.as_inst_micros(), 1735725600000000);
  EXPECT_EQ(MustRead("#inst\"1970-01-01\"").as_inst_micros(), 0);
  EXPECT_EQ(MustRead("#inst \"2025-01-01T12:00+02:00\"").as_inst_micros(), 1735725600000000);
  Value u = MustRead("#uuid \"550e8400-e29b-41d4-a716-446655440000\"");
  ASSERT_EQ(u.kind(), Kind::kUuid);
  EXPECT_EQ(u.as_uuid(), MakeU({0x55, 0x0e, 0x84, 0x00, 0xe2, 0x9b, 0x41, 0xd4, 0xa7, 0x16, 0x44,
                                0x66, 0x55, 0x44, 0x00, 0x00}));
  EXPECT_EQ(MustRead("#uuid \"550E8400-E29B-41D4-A716-446655440000\""), u);
  Value b = MustRead("#bytes \"00ff10Ab\"");
  ASSERT_EQ(b.kind(), Kind::kBytes);
  EXPECT_EQ(b.str(), std::string("\x00\xff\x10\xab", 4));
  EXPECT_EQ(MustRead("#bytes \"\"").str(), "");
  // Datomic's #db/fn literal reads as its map.
  Value fn = MustRead("#db/fn {:lang \"clojure\" :params [db e] :code \"[]\"}");
  EXPECT_TRUE(fn.is_map());
  EXPECT_EQ(Print(fn), "{:code \"[]\", :lang \"clojure\", :params [db e]}");
  Value uri = MustRead("#uri \"https://example.org/a?b=c#d\"");
  ASSERT_EQ(uri.kind(), Kind::kUri);
  EXPECT_EQ(uri.str(), "https://example.org/a?b=c#d");
  EXPECT_EQ(Print(uri), "#uri \"https://example.org/a?b=c#d\"");
  EXPECT_EQ(MustRead("#uri \"../rel/path\"").str(), "../rel/path");
  for (const char* bad :
       {"#uri \"\"", "#uri \"a b\"", "#uri \"1x:y\"", "#uri \"x%zz\"", "#uri \"a<b\"", "#uri 12"}) {
    auto r = Read(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_NE(r.status().message().find("1:"), std::string::npos) << r.status().message();
    }
  }
  EXPECT_LT(Compare(MustRead("#uri \"a:b\""), MustRead("#uri \"a:c\"")), 0);
  EXPECT_GT(Compare(MustRead("#uri \"a:b\""), MustRead("#bytes \"00\"")), 0);
  // Whitespace, comments and discards may separate a tag from its string.
  EXPECT_EQ(MustRead("#inst ; c\n #_ 1 \"1970-01-01\"").as_inst_micros(), 0);
}

TEST(EdnReader, Discard) {
  EXPECT_EQ(MustRead("#_ 1 2"), Value::Int(2));
  EXPECT_EQ(MustRead("#_1 2"), Value::Int(2));
  EXPECT_EQ(MustRead("#_ #_ a b c"), Value::Symbol("c"));
  EXPECT_EQ(MustRead("[1 #_ 2 3]"), MustRead("[1 3]"));
  EXPECT_EQ(MustRead("[1 #_ 2]"), MustRead("[1]"));
  EXPECT_EQ(MustRead("[#_ [nested #_ x] y]"), MustRead("[y]"));
  EXPECT_EQ(MustRead("{:a 1 #_ :b #_ 2}"), MustRead("{:a 1}"));
  EXPECT_EQ(MustRead("{:a #_ #_ 1 2 3}"), MustRead("{:a 3}"));
  EXPECT_EQ(MustRead("1 #_ 2"), Value::Int(1));
  EXPECT_EQ(MustRead("#{1 #_ 1}"), MustRead("#{1}"));
  Result<Vec> all = ReadAll("#_ x");
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(all->empty());
  // A discarded form must still be valid EDN.
  EXPECT_FALSE(Read("[#_ {:a} 1]").ok());
}

TEST(EdnReader, CommentsAndCommas) {
  EXPECT_EQ(MustRead("; leading\n 1 ; trailing"), Value::Int(1));
  EXPECT_EQ(MustRead("[1 ; one\n 2 ;two\n]"), MustRead("[1 2]"));
  EXPECT_EQ(MustRead(",,[,1,,2,],,"), MustRead("[1 2]"));
  EXPECT_EQ(MustRead("{:a 1, :b 2,}"), MustRead("{:a 1 :b 2}"));
  EXPECT_EQ(MustRead("\t\r\n\f 1"), Value::Int(1));
  EXPECT_EQ(MustRead("1;no newline at end"), Value::Int(1));
  EXPECT_EQ(MustRead("[a;comment\nb]"), MustRead("[a b]"));
}

TEST(EdnReader, Positions) {
  Value v = MustRead("\n  [1\n   :k \"s\"\n\t{:a #{x}}]");
  EXPECT_EQ(v.pos().line, 2u);
  EXPECT_EQ(v.pos().col, 3u);
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v.items()[0].pos().line, 2u);
  EXPECT_EQ(v.items()[0].pos().col, 4u);
  EXPECT_EQ(v.items()[1].pos().line, 3u);
  EXPECT_EQ(v.items()[1].pos().col, 4u);
  EXPECT_EQ(v.items()[2].pos().line, 3u);
  EXPECT_EQ(v.items()[2].pos().col, 7u);
  const Value& m = v.items()[3];
  EXPECT_EQ(m.pos().line, 4u);
  EXPECT_EQ(m.pos().col, 2u);
  EXPECT_EQ(m.entries()[0].first.pos().col, 3u);
  const Value& set = m.entries()[0].second;
  EXPECT_EQ(set.pos().col, 6u);
  EXPECT_EQ(set.items()[0].pos().col, 8u);
  // Positions after a multi-line string count lines inside it.
  Value w = MustRead("[\"a\nbc\" x]");
  EXPECT_EQ(w.items()[1].pos().line, 2u);
  EXPECT_EQ(w.items()[1].pos().col, 5u);
  // Tagged values, characters, discards.
  Value t = MustRead("[#_ 1 #inst \"2025-01-01\" \\a ##NaN]");
  EXPECT_EQ(t.items()[0].pos().col, 7u);
  EXPECT_EQ(t.items()[1].pos().col, 26u);
  EXPECT_EQ(t.items()[2].pos().col, 29u);
  EXPECT_TRUE(t.items()[0].pos().known());
  EXPECT_FALSE(Value::Int(1).pos().known());
  // Columns are bytes: a 2-byte character advances the column by 2.
  Value u = MustRead("[\"\xC3\xA9\" x]");
  EXPECT_EQ(u.items()[1].pos().col, 7u);
}

TEST(EdnReader, Quote) {
  ReadOptions options;
  options.allow_quote = true;
  Value q = MustRead("'x", options);
  EXPECT_EQ(q, Value::List({Value::Symbol("quote"), Value::Symbol("x")}));
  EXPECT_EQ(q.kind(), Kind::kList);
  EXPECT_EQ(MustRead("'(1 2)", options),
            Value::List({Value::Symbol("quote"), Value::List({Value::Int(1), Value::Int(2)})}));
  EXPECT_EQ(MustRead("[' a]", options),
            Value::Vector({Value::List({Value::Symbol("quote"), Value::Symbol("a")})}));
  EXPECT_EQ(MustRead("''a", options), MustRead("(quote (quote a))"));
  Result<Value> r = Read("'x");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kParse);
  EXPECT_EQ(r.status().message(), "1:1: unexpected quote ' (quoting is not EDN)");
}

TEST(EdnReader, ReadAllAndNext) {
  Result<Vec> all = ReadAll("1 [2] ; c\n :three \"four\"");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(*all, (Vec{Value::Int(1), Value::Vector({Value::Int(2)}), Value::Keyword("three"),
                       Value::String("four")}));
  Result<Vec> none = ReadAll("  ; only a comment\n");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());

  std::string text = "{:a 1}\n[:b]\n  #_ skipped c\n";
  Reader reader(text);
  Result<std::optional<Value>> a = reader.Next();
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(a->has_value());
  EXPECT_EQ(**a, MustRead("{:a 1}"));
  EXPECT_EQ(reader.offset(), 6u);
  Result<std::optional<Value>> b = reader.Next();
  ASSERT_TRUE(b.ok() && b->has_value());
  EXPECT_EQ(**b, MustRead("[:b]"));
  EXPECT_EQ((*b)->pos().line, 2u);
  Result<std::optional<Value>> c = reader.Next();
  ASSERT_TRUE(c.ok() && c->has_value());
  EXPECT_EQ(**c, Value::Symbol("c"));
  EXPECT_EQ((*c)->pos().line, 3u);
  EXPECT_EQ((*c)->pos().col, 14u);
  Result<std::optional<Value>> end = reader.Next();
  ASSERT_TRUE(end.ok());
  EXPECT_FALSE(end->has_value());
  EXPECT_EQ(reader.offset(), text.size());
  Result<std::optional<Value>> again = reader.Next();
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->has_value());
}

TEST(EdnReader, NextStopsAtErrorAndRepeatsIt) {
  Reader reader("1 (2 ] 3");
  Result<std::optional<Value>> one = reader.Next();
  ASSERT_TRUE(one.ok() && one->has_value());
  EXPECT_EQ(**one, Value::Int(1));
  Result<std::optional<Value>> bad = reader.Next();
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "1:6: expected ')' to close the list at 1:3, found ']'");
  Result<std::optional<Value>> bad2 = reader.Next();
  ASSERT_FALSE(bad2.ok());
  EXPECT_EQ(bad2.status().message(), bad.status().message());
}

TEST(EdnReader, ByteOrderMarkIsSkipped) {
  Value v = MustRead("\xEF\xBB\xBF[1]");
  EXPECT_EQ(v, MustRead("[1]"));
  EXPECT_EQ(v.pos().col, 1u);
}

// A byte order mark inside the input cannot be part of a symbol or keyword: printed at
// the start of a text, it would be skipped, and the value would not read back as itself
// (found by edn_fuzz, fuzz/regressions/edn_fuzz/bom-symbol).
TEST(EdnReader, ByteOrderMarkInsideASymbolOrKeywordIsRefused) {
  auto sym = ReadAll(
      "b \xEF\xBB\xBF"
      "b");
  ASSERT_FALSE(sym.ok());
  EXPECT_EQ(sym.status().message(), "1:3: unexpected character U+FEFF (byte order mark) in symbol");
  auto mid = Read(
      "a\xEF\xBB\xBF"
      "b");
  ASSERT_FALSE(mid.ok());
  EXPECT_EQ(mid.status().message(), "1:2: unexpected character U+FEFF (byte order mark) in symbol");
  auto kw = Read(
      "[:x/\xEF\xBB\xBF"
      "y]");
  ASSERT_FALSE(kw.ok());
  EXPECT_EQ(kw.status().message(), "1:5: unexpected character U+FEFF (byte order mark) in keyword");
  // In strings it is an ordinary character, and a leading one is still skipped.
  Value str = MustRead(
      "\xEF\xBB\xBF\"\xEF\xBB\xBF"
      "b\"");
  EXPECT_EQ(str, Value::String("\xEF\xBB\xBF"
                               "b"));
  EXPECT_EQ(MustRead(Print(str)), str);
}

TEST(EdnReader, DepthLimit) {
  std::string ok(512, '[');
  ok += std::string(512, ']');
  EXPECT_TRUE(Read(ok).ok());
  ReadOptions small;
  small.max_depth = 3;
  EXPECT_TRUE(Read("[[[1]]]", small).ok());
  Result<Value> deep = Read("[[[[1]]]]", small);
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.status().message(), "1:1: nesting deeper than 3");
  // Every nesting construct counts.
  EXPECT_FALSE(Read("({#{[1]}})", small).ok());
  EXPECT_TRUE(Read("({#{1} 2})", small).ok());
  ReadOptions quote;
  quote.allow_quote = true;
  quote.max_depth = 2;
  EXPECT_TRUE(Read("''x", quote).ok());
  EXPECT_FALSE(Read("'''x", quote).ok());
}

TEST(EdnReader, HugeNestingIsAnErrorNotACrash) {
  for (char open : {'[', '(', '{'}) {
    std::string text(100000, open);
    Result<Value> r = Read(text);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), Code::kParse);
    EXPECT_EQ(r.status().message(), "1:1: nesting deeper than 512");
  }
  std::string sets;
  for (int i = 0; i < 50000; ++i) sets += "#{";
  EXPECT_EQ(Read(sets).status().message(), "1:1: nesting deeper than 512");
  // The position is that of the top-level form being read.
  std::string later = "[1]\n  " + std::string(100000, '[');
  Result<Vec> all = ReadAll(later);
  ASSERT_FALSE(all.ok());
  EXPECT_EQ(all.status().message(), "2:3: nesting deeper than 512");
  ReadOptions quote;
  quote.allow_quote = true;
  EXPECT_EQ(Read(std::string(100000, '\'') + "x", quote).status().message(),
            "1:1: nesting deeper than 512");
  // Long chains of discards and tags do not recurse.
  std::string discards;
  for (int i = 0; i < 100000; ++i) discards += "#_ ";
  discards += "1";
  // The innermost pending #_ is reported.
  EXPECT_EQ(Read(discards).status().message(), "1:299998: #_ has no form to discard");
  std::string tags;
  for (int i = 0; i < 100000; ++i) tags += "#inst ";
  EXPECT_EQ(Read(tags).status().message(), "1:7: #inst must be followed by a string");
}

TEST(EdnReader, LargeInput) {
  std::string text = "[";
  for (int i = 0; i < 20000; ++i) {
    text += "{:db/id \"e" + std::to_string(i) + "\" :person/name \"Name " + std::to_string(i) +
            "\" :person/age " + std::to_string(i % 100) + " :person/score 1.5}\n";
  }
  text += "]";
  Value v = MustRead(text);
  ASSERT_EQ(v.size(), 20000u);
  EXPECT_EQ(*v.items()[19999].get_keyword("person/name"), Value::String("Name 19999"));
  EXPECT_EQ(v.items()[19999].pos().line, 20000u);
}

}  // namespace
}  // namespace mentat::edn
