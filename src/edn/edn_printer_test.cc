// Printer output, print->read round trips, instants and UUIDs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "mentat/edn.h"

namespace mentat::edn {
namespace {

Value R(std::string_view text) {
  Result<Value> r = Read(text);
  EXPECT_TRUE(r.ok()) << text << ": " << r.status().ToString();
  return r.ok() ? *r : Value();
}

// Prints `v`, reads it back, and checks the result is equal (and prints identically).
void ExpectRoundTrip(const Value& v) {
  std::string text = Print(v);
  Result<Value> back = Read(text);
  ASSERT_TRUE(back.ok()) << text << ": " << back.status().ToString();
  EXPECT_EQ(*back, v) << text;
  EXPECT_EQ(back->kind(), v.kind()) << text;
  EXPECT_EQ(Print(*back), text);
}

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(EdnPrinter, Scalars) {
  EXPECT_EQ(Print(Value::Nil()), "nil");
  EXPECT_EQ(Print(Value::Bool(true)), "true");
  EXPECT_EQ(Print(Value::Bool(false)), "false");
  EXPECT_EQ(Print(Value::Int(0)), "0");
  EXPECT_EQ(Print(Value::Int(-42)), "-42");
  EXPECT_EQ(Print(Value::Int(INT64_MIN)), "-9223372036854775808");
  EXPECT_EQ(Print(Value::Int(INT64_MAX)), "9223372036854775807");
  EXPECT_EQ(Print(Value::BigInt("123456789012345678901234567890")),
            "123456789012345678901234567890N");
  EXPECT_EQ(Print(Value::BigInt("-5")), "-5N");
  EXPECT_EQ(Print(Value::BigDec("1.50")), "1.50M");
  EXPECT_EQ(Print(Value::BigDec("1")), "1M");
  EXPECT_EQ(Print(Value::Keyword("db/ident")), ":db/ident");
  EXPECT_EQ(Print(Value::Keyword("a")), ":a");
  EXPECT_EQ(Print(Value::Symbol("?x")), "?x");
  EXPECT_EQ(Print(Value::Symbol("/")), "/");
}

TEST(EdnPrinter, Floats) {
  EXPECT_EQ(Print(Value::Float(1.0)), "1.0");
  EXPECT_EQ(Print(Value::Float(-1.0)), "-1.0");
  EXPECT_EQ(Print(Value::Float(0.1)), "0.1");
  EXPECT_EQ(Print(Value::Float(1.5)), "1.5");
  EXPECT_EQ(Print(Value::Float(0.0)), "0.0");
  EXPECT_EQ(Print(Value::Float(-0.0)), "-0.0");
  EXPECT_EQ(Print(Value::Float(100.0)), "100.0");
  EXPECT_EQ(Print(Value::Float(123456789.0)), "123456789.0");
  EXPECT_EQ(Print(Value::Float(1e300)), "1e300");
  EXPECT_EQ(Print(Value::Float(1e-310)), "1e-310");
  EXPECT_EQ(Print(Value::Float(2.5e-7)), "2.5e-7");
  EXPECT_EQ(Print(Value::Float(1e22)), "1e22");
  EXPECT_EQ(Print(Value::Float(kInf)), "##Inf");
  EXPECT_EQ(Print(Value::Float(-kInf)), "##-Inf");
  EXPECT_EQ(Print(Value::Float(std::numeric_limits<double>::quiet_NaN())), "##NaN");
  EXPECT_EQ(Print(Value::Float(std::numeric_limits<double>::max())), "1.7976931348623157e308");
}

TEST(EdnPrinter, Strings) {
  EXPECT_EQ(Print(Value::String("")), "\"\"");
  EXPECT_EQ(Print(Value::String("plain")), "\"plain\"");
  EXPECT_EQ(Print(Value::String("q\"b\\n\nt\tr\r")), R"("q\"b\\n\nt\tr\r")");
  EXPECT_EQ(Print(Value::String("\b\f\x01\x1f\x7f")), R"("\u0008\u000c\u0001\u001f\u007f")");
  EXPECT_EQ(Print(Value::String(std::string("a\0b", 3))), R"("a\u0000b")");
  EXPECT_EQ(Print(Value::String("h\xC3\xA9 \xF0\x9F\x98\x80")), "\"h\xC3\xA9 \xF0\x9F\x98\x80\"");
}

TEST(EdnPrinter, Characters) {
  EXPECT_EQ(Print(Value::Char('a')), "\\a");
  EXPECT_EQ(Print(Value::Char('\\')), "\\\\");
  EXPECT_EQ(Print(Value::Char('"')), "\\\"");
  EXPECT_EQ(Print(Value::Char('(')), "\\(");
  EXPECT_EQ(Print(Value::Char('\n')), "\\newline");
  EXPECT_EQ(Print(Value::Char(' ')), "\\space");
  EXPECT_EQ(Print(Value::Char('\t')), "\\tab");
  EXPECT_EQ(Print(Value::Char('\r')), "\\return");
  EXPECT_EQ(Print(Value::Char('\b')), "\\backspace");
  EXPECT_EQ(Print(Value::Char('\f')), "\\formfeed");
  EXPECT_EQ(Print(Value::Char(0)), "\\u0000");
  EXPECT_EQ(Print(Value::Char(0x7F)), "\\u007f");
  EXPECT_EQ(Print(Value::Char(0x85)), "\\u0085");
  EXPECT_EQ(Print(Value::Char(0xD800)), "\\ud800");
  EXPECT_EQ(Print(Value::Char(0xE9)), "\\\xC3\xA9");
  EXPECT_EQ(Print(Value::Char(0x1F600)), "\\\xF0\x9F\x98\x80");
}

TEST(EdnPrinter, Collections) {
  EXPECT_EQ(Print(R("( 1  2 )")), "(1 2)");
  EXPECT_EQ(Print(R("[]")), "[]");
  EXPECT_EQ(Print(R("[1 [2 (3)] \"x\"]")), "[1 [2 (3)] \"x\"]");
  EXPECT_EQ(Print(R("{}")), "{}");
  EXPECT_EQ(Print(R("{:b 2 :a 1}")), "{:a 1, :b 2}");
  EXPECT_EQ(Print(R("{:a {:c 3, :b [1 2]}}")), "{:a {:b [1 2], :c 3}}");
  EXPECT_EQ(Print(R("#{}")), "#{}");
  EXPECT_EQ(Print(R("#{3 1 2}")), "#{1 2 3}");
  EXPECT_EQ(Print(R("#{:b \"a\" 1 nil}")), "#{nil 1 \"a\" :b}");
}

TEST(EdnPrinter, TaggedValues) {
  EXPECT_EQ(Print(Value::Inst(0)), "#inst \"1970-01-01T00:00:00.000Z\"");
  EXPECT_EQ(Print(Value::Inst(1735689600000000)), "#inst \"2025-01-01T00:00:00.000Z\"");
  EXPECT_EQ(Print(Value::Inst(1)), "#inst \"1970-01-01T00:00:00.000001Z\"");
  Uuid u{};
  for (size_t i = 0; i < u.size(); ++i) u[i] = static_cast<uint8_t>(i * 17);
  EXPECT_EQ(Print(Value::MakeUuid(u)), "#uuid \"00112233-4455-6677-8899-aabbccddeeff\"");
  EXPECT_EQ(Print(Value::Bytes(std::string("\x00\x01\xab\xff", 4))), "#bytes \"0001abff\"");
  EXPECT_EQ(Print(Value::Bytes("")), "#bytes \"\"");
}

TEST(EdnPrinter, PrintToAppends) {
  std::string out = "x=";
  PrintTo(Value::Vector({Value::Int(1), Value::Keyword("k")}), &out);
  EXPECT_EQ(out, "x=[1 :k]");
}

TEST(EdnRoundTrip, EveryKind) {
  Uuid u{};
  for (size_t i = 0; i < u.size(); ++i) u[i] = static_cast<uint8_t>(255 - i);
  const Value kValues[] = {
      Value::Nil(),
      Value::Bool(true),
      Value::Bool(false),
      Value::Int(0),
      Value::Int(-1),
      Value::Int(INT64_MIN),
      Value::Int(INT64_MAX),
      Value::BigInt("9223372036854775808"),
      Value::BigInt("-9223372036854775809"),
      Value::BigInt("1"),
      Value::BigInt("0"),
      Value::BigDec("1.50"),
      Value::BigDec("-3"),
      Value::BigDec("2.5e-10"),
      Value::Float(0.0),
      Value::Float(1.0),
      Value::Float(-2.5),
      Value::Float(0.1),
      Value::Float(1.0 / 3.0),
      Value::Float(1e300),
      Value::Float(1e-310),
      Value::Float(std::numeric_limits<double>::denorm_min()),
      Value::Float(std::numeric_limits<double>::max()),
      Value::Float(std::numeric_limits<double>::lowest()),
      Value::Float(9007199254740993.0),
      Value::Float(123456789012345680000.0),
      Value::Float(kInf),
      Value::Float(-kInf),
      Value::Float(std::numeric_limits<double>::quiet_NaN()),
      Value::Char('a'),
      Value::Char('\\'),
      Value::Char(','),
      Value::Char(';'),
      Value::Char('#'),
      Value::Char(']'),
      Value::Char('\n'),
      Value::Char(0),
      Value::Char(0x7F),
      Value::Char(0xA0),
      Value::Char(0xE9),
      Value::Char(0xDFFF),
      Value::Char(0xFFFF),
      Value::Char(0x1F600),
      Value::Char(0x10FFFF),
      Value::String(""),
      Value::String("all escapes: \" \\ \n \t \r \b \f \x01 \x7f end"),
      Value::String(std::string("nul\0inside", 10)),
      Value::String("unicode: \xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"),
      Value::String("; not a comment #_ [x"),
      Value::Keyword("a"),
      Value::Keyword("db/ident"),
      Value::Keyword("db.type/string"),
      Value::Keyword("a/b/c"),
      Value::Keyword("/"),
      Value::Symbol("x"),
      Value::Symbol("?x"),
      Value::Symbol("..."),
      Value::Symbol("/"),
      Value::Symbol("clojure.core//"),
      Value::Symbol(">="),
      Value::List({}),
      Value::Vector({}),
      Value::Map({}),
      Value::Set({}),
      Value::Inst(0),
      Value::Inst(-1),
      Value::Inst(1735689600123000),
      Value::Inst(1735689600123456),
      Value::Inst(-86400000000LL * 365 * 100 - 7),
      Value::Inst(253402300799999999),  // 9999-12-31T23:59:59.999999Z
      Value::Inst(253402300800000000),  // year 10000
      Value::Inst(-62135596800000001),  // before year 1
      Value::Inst(INT64_MIN),
      Value::Inst(INT64_MAX),
      Value::MakeUuid(u),
      Value::MakeUuid(Uuid{}),
      Value::Bytes(""),
      Value::Bytes(std::string("\x00\xff\x10", 3)),
  };
  for (const Value& v : kValues) {
    SCOPED_TRACE(Print(v));
    ExpectRoundTrip(v);
  }
  // -0.0 keeps its sign.
  Value neg_zero = R(Print(Value::Float(-0.0)));
  EXPECT_TRUE(std::signbit(neg_zero.as_double()));
  // Every kind together, nested.
  Vec all(std::begin(kValues), std::end(kValues));
  Value vec = Value::Vector(all);
  ExpectRoundTrip(vec);
  ExpectRoundTrip(Value::List(all));
  ExpectRoundTrip(Value::Set(all));
  MapEntries entries;
  for (size_t i = 0; i < all.size(); ++i) entries.emplace_back(all[i], all[all.size() - 1 - i]);
  Value map = Value::Map(entries);
  ExpectRoundTrip(map);
  ExpectRoundTrip(Value::Vector({vec, map, Value::Set({vec, map}), Value::List({map})}));
}

TEST(EdnRoundTrip, RandomDoubles) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) {
    uint64_t bits = rng();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    Value v = Value::Float(d);
    std::string text = Print(v);
    Result<Value> back = Read(text);
    ASSERT_TRUE(back.ok()) << text;
    ASSERT_TRUE(back->is_float()) << text;
    if (std::isnan(d)) {
      EXPECT_TRUE(std::isnan(back->as_double()));
    } else {
      ASSERT_EQ(back->as_double(), d) << text;
      ASSERT_EQ(std::signbit(back->as_double()), std::signbit(d)) << text;
    }
  }
}

TEST(EdnRoundTrip, AllCharacters) {
  for (char32_t c = 0; c < 0x3000; ++c) {
    Value v = Value::Char(c);
    Result<Value> back = Read(Print(v));
    ASSERT_TRUE(back.ok()) << Print(v);
    ASSERT_EQ(*back, v) << Print(v);
  }
  for (char32_t c : {0xFFFDu, 0xFFFEu, 0x10000u, 0x1D11Eu, 0x10FFFFu})
    ExpectRoundTrip(Value::Char(c));
}

// Every byte round-trips as #bytes; strings are UTF-8 (every ASCII byte, and code points
// of every length), and one holding other bytes prints but does not read back.
TEST(EdnRoundTrip, AllByteStrings) {
  std::string every, ascii;
  for (int b = 0; b < 256; ++b) every.push_back(static_cast<char>(b));
  for (int b = 0; b < 128; ++b) ascii.push_back(static_cast<char>(b));
  ExpectRoundTrip(Value::Bytes(every));
  ExpectRoundTrip(Value::String(ascii + "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\xF4\x8F\xBF\xBF"));
  auto back = Read(Print(Value::String(every)));
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.status().message().find("invalid UTF-8 in string: byte 0x80"), std::string::npos)
      << back.status().ToString();
}

TEST(EdnRoundTrip, ReadPrintIsCanonical) {
  const char* kCases[][2] = {
      {"[1,2 , 3]", "[1 2 3]"},
      {"{:b 1, :a [#{3 2 1}]}", "{:a [#{1 2 3}], :b 1}"},
      {"#inst \"2025-06-01T12:30:00+02:00\"", "#inst \"2025-06-01T10:30:00.000Z\""},
      {"#uuid \"550E8400-E29B-41D4-A716-446655440000\"",
       "#uuid \"550e8400-e29b-41d4-a716-446655440000\""},
      {"#bytes \"ABCD\"", "#bytes \"abcd\""},
      {"+1", "1"},
      {"1e3", "1000.0"},
      {"1.", "1.0"},
      {"+7N", "7N"},
      {"\"\\u0041\"", "\"A\""},
      {"\\u0041", "\\A"},
      {"\\o101", "\\A"},
      {"(a #_ b c)", "(a c)"},
  };
  for (const auto& c : kCases) EXPECT_EQ(Print(R(c[0])), c[1]) << c[0];
}

TEST(EdnInstant, Format) {
  EXPECT_EQ(FormatInstant(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatInstant(1735689600000000), "2025-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatInstant(1735689600123000), "2025-01-01T00:00:00.123Z");
  EXPECT_EQ(FormatInstant(1735689600123456), "2025-01-01T00:00:00.123456Z");
  EXPECT_EQ(FormatInstant(1735689600000001), "2025-01-01T00:00:00.000001Z");
  EXPECT_EQ(FormatInstant(-1), "1969-12-31T23:59:59.999999Z");
  EXPECT_EQ(FormatInstant(-1000), "1969-12-31T23:59:59.999Z");
  EXPECT_EQ(FormatInstant(-86400000000), "1969-12-31T00:00:00.000Z");
  EXPECT_EQ(FormatInstant(951782400000000), "2000-02-29T00:00:00.000Z");
  EXPECT_EQ(FormatInstant(-2208988800000000), "1900-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatInstant(-62135596800000000), "0001-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatInstant(2147483648000000), "2038-01-19T03:14:08.000Z");
  EXPECT_EQ(FormatInstant(4102444800000000), "2100-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatInstant(253402300799999000), "9999-12-31T23:59:59.999Z");
  EXPECT_EQ(FormatInstant(253402300800000000), "+10000-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatInstant(-62135596800000001), "0000-12-31T23:59:59.999999Z");
  EXPECT_EQ(FormatInstant(-62167219200000001), "-0001-12-31T23:59:59.999999Z");
  EXPECT_EQ(FormatInstant(INT64_MAX), "+294247-01-10T04:00:54.775807Z");
  EXPECT_EQ(FormatInstant(INT64_MIN), "-290308-12-21T19:59:05.224192Z");
}

int64_t MustParseInstant(std::string_view text) {
  Result<int64_t> r = ParseInstant(text);
  EXPECT_TRUE(r.ok()) << text << ": " << r.status().ToString();
  return r.ok() ? *r : -1;
}

TEST(EdnInstant, Parse) {
  constexpr int64_t kNewYear2025 = 1735689600000000;
  EXPECT_EQ(MustParseInstant("2025-01-01"), kNewYear2025);
  EXPECT_EQ(MustParseInstant("2025"), kNewYear2025);
  EXPECT_EQ(MustParseInstant("2025-01"), kNewYear2025);
  EXPECT_EQ(MustParseInstant("2025-01-01T10:00Z"), kNewYear2025 + 36000000000);
  EXPECT_EQ(MustParseInstant("2025-01-01T10:00:00Z"), kNewYear2025 + 36000000000);
  EXPECT_EQ(MustParseInstant("2025-01-01t10:00:00z"), kNewYear2025 + 36000000000);
  EXPECT_EQ(MustParseInstant("2025-01-01T10:00:00"), kNewYear2025 + 36000000000);  // UTC
  EXPECT_EQ(MustParseInstant("2025-01-01T00:00:00.1Z"), kNewYear2025 + 100000);
  EXPECT_EQ(MustParseInstant("2025-01-01T00:00:00.123Z"), kNewYear2025 + 123000);
  EXPECT_EQ(MustParseInstant("2025-01-01T00:00:00.123456Z"), kNewYear2025 + 123456);
  EXPECT_EQ(MustParseInstant("2025-01-01T00:00:00.123456789Z"), kNewYear2025 + 123456);
  EXPECT_EQ(MustParseInstant("2025-01-01T00:00:00.999999999Z"), kNewYear2025 + 999999);
  EXPECT_EQ(MustParseInstant("2025-01-01T12:00:00+02:00"), kNewYear2025 + 36000000000);
  EXPECT_EQ(MustParseInstant("2025-01-01T04:30:00-05:30"), kNewYear2025 + 36000000000);
  EXPECT_EQ(MustParseInstant("2025-01-01T00:00:00+00:00"), kNewYear2025);
  EXPECT_EQ(MustParseInstant("2025-01-01T00:00:00-00:00"), kNewYear2025);
  EXPECT_EQ(MustParseInstant("2024-12-31T23:59:60Z"), kNewYear2025);  // leap second
  EXPECT_EQ(MustParseInstant("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(MustParseInstant("1969-12-31T23:59:59.999999Z"), -1);
  EXPECT_EQ(MustParseInstant("1969-12-31T23:59:59.9999999Z"), -1);
  EXPECT_EQ(MustParseInstant("1969-12-31T19:00:00-05:00"), 0);
  EXPECT_EQ(MustParseInstant("1900-01-01"), -2208988800000000);
  EXPECT_EQ(MustParseInstant("1600-02-29"), -11670998400000000);
  EXPECT_EQ(MustParseInstant("0001-01-01"), -62135596800000000);
  EXPECT_EQ(MustParseInstant("2038-01-19T03:14:08Z"), 2147483648000000);
  EXPECT_EQ(MustParseInstant("2400-02-29"), 13574563200000000);
  EXPECT_EQ(MustParseInstant("+10000-01-01T00:00:00Z"), 253402300800000000);
  EXPECT_EQ(MustParseInstant("-0001-12-31T23:59:59.999999Z"), -62167219200000001);
  EXPECT_EQ(MustParseInstant("+294247-01-10T04:00:54.775807Z"), INT64_MAX);
  EXPECT_EQ(MustParseInstant("-290308-12-21T19:59:05.224192Z"), INT64_MIN);
}

TEST(EdnInstant, RoundTripsAcrossTheRange) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 20000; ++i) {
    int64_t micros = static_cast<int64_t>(rng());
    if (i % 2 == 0) micros %= int64_t{1} << 52;  // mostly plausible dates, both signs
    if (i % 4 == 0) micros -= micros % 1000;
    std::string text = FormatInstant(micros);
    Result<int64_t> back = ParseInstant(text);
    ASSERT_TRUE(back.ok()) << text << ": " << back.status().ToString();
    ASSERT_EQ(*back, micros) << text;
  }
}

TEST(EdnInstant, ParseErrors) {
  struct Case {
    const char* text;
    const char* message;
  };
  const Case kCases[] = {
      {"", "invalid instant \"\": expected a year"},
      {"25-01-01", "invalid instant \"25-01-01\": the year must have 4 digits"},
      {"2025-1-01", "invalid instant \"2025-1-01\": expected a two-digit month"},
      {"2025-00-01", "invalid instant \"2025-00-01\": month out of range"},
      {"2025-13-01", "invalid instant \"2025-13-01\": month out of range"},
      {"2025-01-32", "invalid instant \"2025-01-32\": day out of range"},
      {"2025-02-29", "invalid instant \"2025-02-29\": day out of range"},
      {"1900-02-29", "invalid instant \"1900-02-29\": day out of range"},
      {"2025-04-31", "invalid instant \"2025-04-31\": day out of range"},
      {"2025-01-00", "invalid instant \"2025-01-00\": day out of range"},
      {"2025-01-01T", "invalid instant \"2025-01-01T\": expected a two-digit hour"},
      {"2025-01-01T10", "invalid instant \"2025-01-01T10\": expected ':' and minutes"},
      {"2025-01-01T24:00Z", "invalid instant \"2025-01-01T24:00Z\": hour out of range"},
      {"2025-01-01T10:60Z", "invalid instant \"2025-01-01T10:60Z\": minute out of range"},
      {"2025-01-01T10:00:60Z", "invalid instant \"2025-01-01T10:00:60Z\": second out of range"},
      {"2025-01-01T10:00:00.Z",
       "invalid instant \"2025-01-01T10:00:00.Z\": expected fractional seconds"},
      {"2025-01-01T10:00:00.1234567891Z",
       "invalid instant \"2025-01-01T10:00:00.1234567891Z\": more than 9 fractional digits"},
      {"2025-01-01T10:00:00+0200",
       "invalid instant \"2025-01-01T10:00:00+0200\": expected a UTC offset like +02:00"},
      {"2025-01-01T10:00:00+24:00",
       "invalid instant \"2025-01-01T10:00:00+24:00\": UTC offset out of range"},
      {"2025-01-01T10:00:00ZZ",
       "invalid instant \"2025-01-01T10:00:00ZZ\": unexpected 'Z' at offset 20"},
      {"2025-01-01 10:00", "invalid instant \"2025-01-01 10:00\": unexpected ' ' at offset 10"},
      {"+300000-01-01", "invalid instant \"+300000-01-01\": out of range"},
      {"-300000-01-01", "invalid instant \"-300000-01-01\": out of range"},
      {"+1234567-01-01",
       "invalid instant \"+1234567-01-01\": a signed year must have 4 to 6 digits"},
  };
  for (const Case& c : kCases) {
    Result<int64_t> r = ParseInstant(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << c.text;
    EXPECT_EQ(r.status().message(), c.message) << c.text;
  }
}

TEST(EdnUuid, FormatAndParse) {
  Uuid u = {0x55, 0x0e, 0x84, 0x00, 0xe2, 0x9b, 0x41, 0xd4,
            0xa7, 0x16, 0x44, 0x66, 0x55, 0x44, 0x00, 0x00};
  EXPECT_EQ(FormatUuid(u), "550e8400-e29b-41d4-a716-446655440000");
  Result<Uuid> p = ParseUuid("550e8400-e29b-41d4-a716-446655440000");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(*p, u);
  Result<Uuid> upper = ParseUuid("550E8400-E29B-41D4-A716-446655440000");
  ASSERT_TRUE(upper.ok());
  EXPECT_EQ(*upper, u);
  EXPECT_EQ(FormatUuid(Uuid{}), "00000000-0000-0000-0000-000000000000");
  Uuid ff;
  ff.fill(0xff);
  EXPECT_EQ(FormatUuid(ff), "ffffffff-ffff-ffff-ffff-ffffffffffff");
  EXPECT_EQ(*ParseUuid(FormatUuid(ff)), ff);
  for (const char* bad :
       {"", "550e8400e29b41d4a716446655440000", "550e8400-e29b-41d4-a716-44665544000",
        "550e8400-e29b-41d4-a716-4466554400000", "550e8400-e29b-41d4-a716_446655440000",
        "550e840g-e29b-41d4-a716-446655440000", "550e8400-e29b-41d4a-716-446655440000",
        "{50e8400-e29b-41d4-a716-446655440000}"}) {
    Result<Uuid> r = ParseUuid(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    EXPECT_EQ(r.status().message(),
              "invalid uuid \"" + std::string(bad) + "\": expected 8-4-4-4-12 hex digits");
  }
}

// The printer iterates: a value nested far deeper than any stack allows prints in full
// (vectors, lists, sets and maps, keys that are collections too).
TEST(EdnPrinter, DeeplyNestedValuesPrintWithoutRecursion) {
  constexpr int kDepth = 200000;
  Value v = Value::Int(7);
  for (int i = 0; i < kDepth; ++i) {
    switch (i % 4) {
      case 0:
        v = Value::Vector({v, Value::Nil()});
        break;
      case 1:
        v = Value::Map({{Value::Keyword("k"), v}});
        break;
      case 2:
        v = Value::List({v});
        break;
      default:
        v = Value::Map({{v, Value::Bool(true)}});
        break;
    }
  }
  std::string text = Print(v);
  // Expected text, built the same way from the inside out.
  std::string want = "7";
  for (int i = 0; i < kDepth; ++i) {
    switch (i % 4) {
      case 0:
        want = "[" + want + " nil]";
        break;
      case 1:
        want = "{:k " + want + "}";
        break;
      case 2:
        want = "(" + want + ")";
        break;
      default:
        want = "{" + want + " true}";
        break;
    }
    if (i == 2000) break;  // built the slow way for the innermost levels only
  }
  // Each round of four levels adds "[" " nil]", "{:k " "}", "(" ")" and "{" " true}".
  EXPECT_EQ(text.size(), 1u + 20u * (kDepth / 4));
  EXPECT_EQ(text.rfind("{({:k [{({:k [", 0), 0u) << text.substr(0, 40);
  // The innermost 2,001 levels, where the 7 is.
  size_t seven = text.find('7');
  ASSERT_NE(seven, std::string::npos);
  EXPECT_EQ(text.substr(seven - want.find('7'), want.size()), want);
}

}  // namespace
}  // namespace mentat::edn
