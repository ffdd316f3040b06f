// Value semantics: constructors, ordering, equality, hashing, accessors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <unordered_set>

#include "mentat/edn.h"

namespace mentat::edn {
namespace {

Value R(std::string_view text) {
  Result<Value> r = Read(text);
  EXPECT_TRUE(r.ok()) << text << ": " << r.status().ToString();
  return r.ok() ? *r : Value();
}

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(EdnValue, KindNames) {
  EXPECT_STREQ(KindName(Kind::kNil), "nil");
  EXPECT_STREQ(KindName(Kind::kBool), "boolean");
  EXPECT_STREQ(KindName(Kind::kInt), "integer");
  EXPECT_STREQ(KindName(Kind::kBigInt), "bigint");
  EXPECT_STREQ(KindName(Kind::kFloat), "float");
  EXPECT_STREQ(KindName(Kind::kBigDec), "bigdec");
  EXPECT_STREQ(KindName(Kind::kChar), "char");
  EXPECT_STREQ(KindName(Kind::kString), "string");
  EXPECT_STREQ(KindName(Kind::kKeyword), "keyword");
  EXPECT_STREQ(KindName(Kind::kSymbol), "symbol");
  EXPECT_STREQ(KindName(Kind::kList), "list");
  EXPECT_STREQ(KindName(Kind::kVector), "vector");
  EXPECT_STREQ(KindName(Kind::kMap), "map");
  EXPECT_STREQ(KindName(Kind::kSet), "set");
  EXPECT_STREQ(KindName(Kind::kInst), "inst");
  EXPECT_STREQ(KindName(Kind::kUuid), "uuid");
  EXPECT_STREQ(KindName(Kind::kBytes), "bytes");
}

TEST(EdnValue, Constructors) {
  Value nil;
  EXPECT_TRUE(nil.is_nil());
  EXPECT_EQ(nil, Value::Nil());
  EXPECT_EQ(Value::Int(7).as_int(), 7);
  EXPECT_EQ(Value::Float(2.5).as_double(), 2.5);
  EXPECT_EQ(Value::Char(0x1F600).as_char(), 0x1F600u);
  EXPECT_EQ(Value::Inst(-5).as_inst_micros(), -5);
  EXPECT_EQ(Value::Keyword("db", "ident"), Value::Keyword("db/ident"));
  EXPECT_EQ(Value::Keyword("", "ident"), Value::Keyword("ident"));
  EXPECT_EQ(Value::BigInt("+007").str(), "7");
  EXPECT_EQ(Value::BigInt("-0").str(), "0");
  EXPECT_EQ(Value::BigInt("-00012").str(), "-12");
  EXPECT_EQ(Value::BigDec("+1.50").str(), "1.50");
  EXPECT_EQ(Value::Bytes(std::string("\0\1", 2)).str().size(), 2u);
  EXPECT_TRUE(Value::String("x").is_string());
  EXPECT_TRUE(Value::List({}).is_seq());
  EXPECT_TRUE(Value::Vector({}).is_seq());
  EXPECT_TRUE(Value::Set({}).is_seq());
  EXPECT_FALSE(Value::Map({}).is_seq());
  EXPECT_TRUE(Value::Int(1).is_number());
  EXPECT_TRUE(Value::Float(1).is_number());
  EXPECT_FALSE(Value::BigInt("1").is_number());
}

TEST(EdnValue, SetSortsAndDeduplicates) {
  Value s = Value::Set({Value::Int(3), Value::Int(1), Value::Int(3), Value::Int(2), Value::Int(1)});
  EXPECT_EQ(s.items(), (Vec{Value::Int(1), Value::Int(2), Value::Int(3)}));
  Value mixed = Value::Set({Value::Keyword("b"), Value::Int(1), Value::String("a"), Value::Nil()});
  EXPECT_EQ(mixed.items(),
            (Vec{Value::Nil(), Value::Int(1), Value::String("a"), Value::Keyword("b")}));
  // A list and a vector with the same elements are one element.
  Value seqs = Value::Set({Value::List({Value::Int(1)}), Value::Vector({Value::Int(1)})});
  EXPECT_EQ(seqs.size(), 1u);
  EXPECT_EQ(Value::Set({Value::Int(1), Value::Float(1.0)}).size(), 2u);
}

TEST(EdnValue, MapSortsAndLaterDuplicateWins) {
  Value m = Value::Map({{Value::Keyword("b"), Value::Int(1)},
                        {Value::Keyword("a"), Value::Int(2)},
                        {Value::Keyword("b"), Value::Int(3)},
                        {Value::Keyword("c"), Value::Int(4)},
                        {Value::Keyword("b"), Value::Int(5)}});
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m.entries()[0], std::make_pair(Value::Keyword("a"), Value::Int(2)));
  EXPECT_EQ(m.entries()[1], std::make_pair(Value::Keyword("b"), Value::Int(5)));
  EXPECT_EQ(m.entries()[2], std::make_pair(Value::Keyword("c"), Value::Int(4)));
  EXPECT_EQ(*m.get(Value::Keyword("b")), Value::Int(5));
  EXPECT_EQ(*m.get_keyword("c"), Value::Int(4));
  EXPECT_EQ(m.get_keyword("d"), nullptr);
  EXPECT_EQ(m.get(Value::String("b")), nullptr);
  EXPECT_EQ(m.get(Value::Symbol("b")), nullptr);
  // A large map (past the insertion sort's size) sorts and deduplicates the same way.
  MapEntries many;
  for (int i = 0; i < 40; ++i) many.emplace_back(Value::Int((i * 7) % 20), Value::Int(i));
  Value big = Value::Map(many);
  ASSERT_EQ(big.size(), 20u);
  for (int k = 0; k < 20; ++k) {
    EXPECT_EQ(big.entries()[k].first, Value::Int(k));
    // Key k comes at i = 7k mod 20 (i < 20) and at that i + 20: the later one wins.
    EXPECT_EQ(big.entries()[k].second, Value::Int((k * 3) % 20 + 20)) << k;
  }
  // get() on a non-map and accessors on the wrong kind are empty.
  EXPECT_EQ(Value::Int(1).get(Value::Int(1)), nullptr);
  EXPECT_EQ(Value::Int(1).get_keyword("a"), nullptr);
  EXPECT_TRUE(Value::Int(1).items().empty());
  EXPECT_TRUE(Value::Int(1).entries().empty());
  EXPECT_TRUE(m.items().empty());
  EXPECT_EQ(Value::String("abc").size(), 0u);
  // Lookup with mixed key kinds.
  Value mixed = R("{1 :int 1.0 :float \"1\" :string :k :kw k :sym [1] :vec nil :nil}");
  EXPECT_EQ(*mixed.get(Value::Int(1)), Value::Keyword("int"));
  EXPECT_EQ(*mixed.get(Value::Float(1.0)), Value::Keyword("float"));
  EXPECT_EQ(*mixed.get(Value::String("1")), Value::Keyword("string"));
  EXPECT_EQ(*mixed.get_keyword("k"), Value::Keyword("kw"));
  EXPECT_EQ(*mixed.get(Value::Symbol("k")), Value::Keyword("sym"));
  EXPECT_EQ(*mixed.get(Value::List({Value::Int(1)})), Value::Keyword("vec"));
  EXPECT_EQ(*mixed.get(Value::Nil()), Value::Keyword("nil"));
}

TEST(EdnValue, NamespaceAndName) {
  EXPECT_EQ(Value::Keyword("db/ident").ns(), "db");
  EXPECT_EQ(Value::Keyword("db/ident").name(), "ident");
  EXPECT_EQ(Value::Keyword("ident").ns(), "");
  EXPECT_EQ(Value::Keyword("ident").name(), "ident");
  EXPECT_EQ(Value::Symbol("/").ns(), "");
  EXPECT_EQ(Value::Symbol("/").name(), "/");
  EXPECT_EQ(Value::Symbol("a/b/c").ns(), "a");
  EXPECT_EQ(Value::Symbol("a/b/c").name(), "b/c");
  EXPECT_EQ(Value::Symbol("clojure.core//").ns(), "clojure.core");
  EXPECT_EQ(Value::Symbol("clojure.core//").name(), "/");
  EXPECT_EQ(Value::String("a/b").ns(), "");
  EXPECT_EQ(Value::String("a/b").name(), "");
  EXPECT_TRUE(Value::Keyword("a/b").is_keyword("a/b"));
  EXPECT_FALSE(Value::Symbol("a/b").is_keyword("a/b"));
  EXPECT_TRUE(Value::Symbol("a/b").is_symbol("a/b"));
}

TEST(EdnValue, EqualityIsStructural) {
  EXPECT_EQ(R("[1 {:a #{1 2}} \"x\"]"), R("[1 {:a #{2 1}} \"x\"]"));
  EXPECT_NE(Value::Int(1), Value::Float(1.0));
  EXPECT_NE(Value::Int(1), Value::BigInt("1"));
  EXPECT_NE(Value::Float(1.0), Value::BigDec("1.0"));
  EXPECT_NE(Value::BigDec("1.0"), Value::BigDec("1.00"));
  EXPECT_NE(Value::Keyword("a"), Value::Symbol("a"));
  EXPECT_NE(Value::Keyword("a"), Value::String("a"));
  EXPECT_NE(Value::String("a"), Value::Bytes("a"));
  EXPECT_NE(Value::Inst(5), Value::Int(5));
  EXPECT_NE(Value::Char('a'), Value::String("a"));
  EXPECT_EQ(Value::List({Value::Int(1), Value::Int(2)}),
            Value::Vector({Value::Int(1), Value::Int(2)}));
  EXPECT_NE(Value::List({Value::Int(1)}), Value::Set({Value::Int(1)}));
  EXPECT_NE(Value::Vector({Value::Int(1)}), Value::Vector({Value::Int(1), Value::Int(2)}));
  EXPECT_NE(Value::Vector({}), Value::Map({}));
  EXPECT_NE(Value::Vector({}), Value::Nil());
  EXPECT_EQ(Value::Float(0.0), Value::Float(-0.0));
  EXPECT_EQ(Value::Float(kNaN), Value::Float(kNaN));
  EXPECT_NE(Value::Float(kNaN), Value::Float(kInf));
  // Positions do not matter.
  Value a = Value::Int(1);
  Value b = Value::Int(1);
  b.set_pos(Pos{3, 4});
  EXPECT_EQ(a, b);
  EXPECT_EQ(R("\n\n [1 2]"), R("[1 2]"));
}

TEST(EdnValue, CompareRanksKinds) {
  // One value of each rank, in the expected order.
  Vec ordered = {Value::Nil(),
                 Value::Bool(false),
                 Value::Bool(true),
                 Value::Int(-5),
                 Value::Float(0.5),
                 Value::Int(1),
                 Value::Float(kNaN),
                 Value::BigInt("-100000000000000000000"),
                 Value::BigInt("3"),
                 Value::BigDec("-1.5"),
                 Value::BigDec("2"),
                 Value::Char('a'),
                 Value::String(""),
                 Value::String("b"),
                 Value::Keyword("a"),
                 Value::Keyword("a/b"),
                 Value::Symbol("a"),
                 Value::Vector({}),
                 Value::List({Value::Int(1)}),
                 Value::Map({}),
                 Value::Set({}),
                 Value::Inst(-1),
                 Value::Inst(0),
                 Value::MakeUuid(Uuid{}),
                 Value::Bytes("")};
  for (size_t i = 0; i < ordered.size(); ++i) {
    EXPECT_EQ(Compare(ordered[i], ordered[i]), 0) << Print(ordered[i]);
    for (size_t j = i + 1; j < ordered.size(); ++j) {
      EXPECT_LT(Compare(ordered[i], ordered[j]), 0)
          << Print(ordered[i]) << " vs " << Print(ordered[j]);
      EXPECT_GT(Compare(ordered[j], ordered[i]), 0)
          << Print(ordered[j]) << " vs " << Print(ordered[i]);
      EXPECT_TRUE(ordered[i] < ordered[j]);
    }
  }
}

TEST(EdnValue, CompareNumbers) {
  EXPECT_LT(Compare(Value::Int(1), Value::Float(1.5)), 0);
  EXPECT_GT(Compare(Value::Float(1.5), Value::Int(1)), 0);
  EXPECT_LT(Compare(Value::Float(-1.5), Value::Int(-1)), 0);
  EXPECT_GT(Compare(Value::Int(-1), Value::Float(-1.5)), 0);
  // Ties between 1 and 1.0 are broken by kind: integers first.
  EXPECT_LT(Compare(Value::Int(1), Value::Float(1.0)), 0);
  EXPECT_GT(Compare(Value::Float(1.0), Value::Int(1)), 0);
  // Exact comparison where a double cannot represent the integer.
  EXPECT_GT(Compare(Value::Int(INT64_MAX), Value::Float(9223372036854774784.0)), 0);
  EXPECT_LT(Compare(Value::Int(INT64_MAX), Value::Float(9223372036854775808.0)), 0);
  EXPECT_LT(Compare(Value::Int((int64_t{1} << 53) + 1), Value::Float(9007199254740994.0)), 0);
  EXPECT_GT(Compare(Value::Int((int64_t{1} << 53) + 1), Value::Float(9007199254740992.0)), 0);
  EXPECT_LT(Compare(Value::Int(INT64_MIN), Value::Float(-9223372036854775808.0)), 0);  // tie
  EXPECT_GT(Compare(Value::Int(INT64_MIN), Value::Float(-1e300)), 0);
  EXPECT_LT(Compare(Value::Int(INT64_MAX), Value::Float(kInf)), 0);
  EXPECT_GT(Compare(Value::Int(INT64_MIN), Value::Float(-kInf)), 0);
  EXPECT_LT(Compare(Value::Int(INT64_MAX), Value::Float(kNaN)), 0);
  EXPECT_LT(Compare(Value::Float(kInf), Value::Float(kNaN)), 0);
  EXPECT_EQ(Compare(Value::Float(kNaN), Value::Float(kNaN)), 0);
  EXPECT_EQ(Compare(Value::Float(-0.0), Value::Float(0.0)), 0);
  EXPECT_LT(Compare(Value::Float(-kInf), Value::Float(-1e308)), 0);
  EXPECT_LT(Compare(Value::Int(-3), Value::Int(2)), 0);
  // Big numbers compare numerically among themselves.
  EXPECT_LT(Compare(Value::BigInt("-20"), Value::BigInt("-3")), 0);
  EXPECT_LT(Compare(Value::BigInt("9"), Value::BigInt("10")), 0);
  EXPECT_LT(Compare(Value::BigInt("-1"), Value::BigInt("0")), 0);
  EXPECT_EQ(Compare(Value::BigInt("+0010"), Value::BigInt("10")), 0);
  EXPECT_LT(Compare(Value::BigDec("9.99"), Value::BigDec("10")), 0);
  EXPECT_LT(Compare(Value::BigDec("1e2"), Value::BigDec("101")), 0);
  EXPECT_LT(Compare(Value::BigDec("0.001"), Value::BigDec("0.01")), 0);
  EXPECT_LT(Compare(Value::BigDec("-0.5"), Value::BigDec("0")), 0);
  EXPECT_GT(Compare(Value::BigDec("-0.5"), Value::BigDec("-0.6")), 0);
  // Numerically equal decimals with different text are distinct but ordered.
  EXPECT_NE(Compare(Value::BigDec("1.0"), Value::BigDec("1.00")), 0);
  EXPECT_EQ(Compare(Value::BigDec("1.0"), Value::BigDec("1.0")), 0);
}

TEST(EdnValue, CompareTextAndCollections) {
  // Strings compare bytewise (UTF-8 bytes are unsigned).
  EXPECT_LT(Compare(Value::String("Z"), Value::String("a")), 0);
  EXPECT_LT(Compare(Value::String("a"), Value::String("ab")), 0);
  EXPECT_LT(Compare(Value::String("z"), Value::String("\xC3\xA9")), 0);
  // Keywords and symbols as Clojure's compare: no namespace first, then namespace, then name.
  EXPECT_LT(Compare(Value::Keyword("b"), Value::Keyword("a/b")), 0);
  EXPECT_LT(Compare(Value::Keyword("a/b"), Value::Keyword("a-/b")), 0);
  EXPECT_LT(Compare(Value::Keyword("a/z"), Value::Keyword("b/a")), 0);
  EXPECT_LT(Compare(Value::Symbol("x/y"), Value::Symbol("x./a")), 0);
  EXPECT_EQ(Compare(Value::Keyword("a/b"), Value::Keyword("a/b")), 0);
  EXPECT_LT(Compare(Value::Char('a'), Value::Char(0xE9)), 0);
  // Collections compare elementwise, then by size.
  EXPECT_LT(Compare(R("[1 2]"), R("[1 3]")), 0);
  EXPECT_LT(Compare(R("[1 2]"), R("[1 2 0]")), 0);
  EXPECT_GT(Compare(R("[2]"), R("[1 2 3]")), 0);
  EXPECT_EQ(Compare(R("(1 2)"), R("[1 2]")), 0);
  EXPECT_LT(Compare(R("(1 2)"), R("[1 3]")), 0);
  EXPECT_LT(Compare(R("#{1 2}"), R("#{1 3}")), 0);
  EXPECT_LT(Compare(R("{:a 1}"), R("{:a 2}")), 0);
  EXPECT_LT(Compare(R("{:a 9}"), R("{:b 1}")), 0);
  EXPECT_LT(Compare(R("{:a 1}"), R("{:a 1 :b 1}")), 0);
  Uuid lo{}, hi{};
  hi[15] = 1;
  EXPECT_LT(Compare(Value::MakeUuid(lo), Value::MakeUuid(hi)), 0);
  EXPECT_LT(Compare(Value::Bytes("\x01"), Value::Bytes("\xff")), 0);
  EXPECT_LT(Compare(Value::Inst(-100), Value::Inst(100)), 0);
}

TEST(EdnValue, CompareIsATotalOrderConsistentWithEquality) {
  Result<Vec> all = ReadAll(
      "nil true false 0 -0 1 1.0 -1.5 0.0 -0.0 ##NaN ##Inf ##-Inf 9223372036854775807 "
      "-9223372036854775808 1N 99999999999999999999 1.5M 1.50M \\a \\b \"\" \"a\" \"b\" :a :a/b "
      "b c/d () [] (1) [1] [1 2] (1 2) {} {:a 1} {:a 2} {1 2} #{} #{1} #{1 2} #{[1] 2} "
      "#inst \"1970-01-01\" #inst \"1960-01-01\" #uuid \"550e8400-e29b-41d4-a716-446655440000\" "
      "#bytes \"\" #bytes \"00\" [nil [nil]] [[1] (2)]");
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  const Vec& v = *all;
  for (const Value& a : v) {
    for (const Value& b : v) {
      int ab = Compare(a, b), ba = Compare(b, a);
      EXPECT_EQ(ab<0, ba> 0) << Print(a) << " vs " << Print(b);
      EXPECT_EQ(ab == 0, a == b) << Print(a) << " vs " << Print(b);
      if (a == b) {
        EXPECT_EQ(a.Hash(), b.Hash()) << Print(a) << " vs " << Print(b);
      }
      for (const Value& c : v) {
        if (ab < 0 && Compare(b, c) < 0) {
          EXPECT_LT(Compare(a, c), 0) << Print(a) << " < " << Print(b) << " < " << Print(c);
        }
      }
    }
  }
  // Sorting is deterministic whatever the input order.
  Vec shuffled = v;
  std::mt19937 rng(42);
  std::shuffle(shuffled.begin(), shuffled.end(), rng);
  Vec sorted1 = v, sorted2 = shuffled;
  std::sort(sorted1.begin(), sorted1.end());
  std::sort(sorted2.begin(), sorted2.end());
  EXPECT_EQ(Value::Set(sorted1), Value::Set(shuffled));
  for (size_t i = 0; i < sorted1.size(); ++i) EXPECT_EQ(Compare(sorted1[i], sorted2[i]), 0);
}

TEST(EdnValue, HashIsConsistentWithEquality) {
  EXPECT_EQ(R("(1 2 3)").Hash(), R("[1 2 3]").Hash());
  EXPECT_EQ(R("#{1 2 3}").Hash(), R("#{3 2 1}").Hash());
  EXPECT_EQ(R("{:a 1 :b 2}").Hash(), R("{:b 2 :a 1}").Hash());
  EXPECT_EQ(Value::Float(0.0).Hash(), Value::Float(-0.0).Hash());
  EXPECT_EQ(Value::Float(kNaN).Hash(), Value::Float(-kNaN).Hash());
  EXPECT_EQ(Value::Int(1).Hash(), R("1").Hash());
  // Unequal values of different kinds usually hash differently.
  EXPECT_NE(Value::Int(1).Hash(), Value::Float(1.0).Hash());
  EXPECT_NE(Value::Keyword("a").Hash(), Value::Symbol("a").Hash());
  EXPECT_NE(Value::Keyword("a").Hash(), Value::String("a").Hash());
  EXPECT_NE(Value::Int(5).Hash(), Value::Inst(5).Hash());
  EXPECT_NE(R("[1 2]").Hash(), R("[2 1]").Hash());
  EXPECT_NE(R("#{1}").Hash(), R("[1]").Hash());

  std::unordered_set<Value, ValueHash> set;
  set.insert(R("[1 2]"));
  set.insert(R("(1 2)"));
  set.insert(R("{:a #{1 2}}"));
  set.insert(R("{:a #{2 1}}"));
  set.insert(Value::Int(1));
  set.insert(Value::Float(1.0));
  EXPECT_EQ(set.size(), 4u);
  EXPECT_EQ(set.count(Value::Vector({Value::Int(1), Value::Int(2)})), 1u);
}

TEST(EdnValue, CopiesShareCollections) {
  Value v = R("[1 2 3]");
  Value copy = v;
  EXPECT_EQ(&v.items(), &copy.items());
  EXPECT_EQ(copy, v);
}

}  // namespace
}  // namespace mentat::edn
