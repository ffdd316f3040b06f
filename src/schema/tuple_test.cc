// Tuple keys (schema/tuple.h, doc/format.md "Tuple keys"): every scalar kind round-trips,
// the bytes sort as the tuples do element by element, and typed shapes check and coerce.
#include "schema/tuple.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace mentat::schema {
namespace {

edn::Value V(const std::string& text) {
  auto v = edn::Read(text);
  EXPECT_TRUE(v.ok()) << text;
  return v.ok() ? *v : edn::Value();
}

std::string Key(const std::string& text) {
  auto k = EncodeTuple(V(text));
  EXPECT_TRUE(k.ok()) << text << ": " << k.status().ToString();
  return k.ok() ? *k : std::string();
}

TEST(TupleKey, EveryScalarKindRoundTrips) {
  for (const char* t :
       {"[nil true false]", "[-9223372036854775808 0 9223372036854775807]", "[1.5 -0.25 ##Inf]",
        "[\"a\\u0000b\" \"\" \"ü\"]", "[:k/a :b sym ns/sym]", "[#inst \"2024-01-02T03:04:05Z\" 1]",
        "[#uuid \"3e0b4c8a-1c2d-4e5f-8a9b-0c1d2e3f4a5b\" #bytes \"00ff00\"]",
        "[123456789012345678901234567890N -1.25M]", "[#uri \"https://example.org/\" 2]"}) {
    std::string k = Key(t);
    EXPECT_EQ(edn::Print(DecodeTuple(k)), edn::Print(V(t))) << t;
  }
}

TEST(TupleKey, BytesSortAsTuplesElementByElement) {
  // Each list is in tuple order; their keys must sort the same way.
  std::vector<std::vector<std::string>> orders = {
      {"[-5 1]", "[-1 9]", "[0 0]", "[1 2]", "[1 2 3]", "[1 3]", "[2 -100]"},
      {"[\"a\" 1]", "[\"a\\u0000\" 1]", "[\"a\\u0001\" 1]", "[\"ab\" 0]", "[\"b\" 0]"},
      {"[-1.5 0]", "[-0.5 0]", "[0.0 0]", "[0.25 0]", "[1e300 0]", "[##Inf 0]"},
      {"[-10N 0]", "[-1N 0]", "[0N 0]", "[5N 0]", "[100000000000000000000N 0]"},
      {"[nil 1]", "[false 1]", "[true 1]", "[0 1]"},
  };
  for (const auto& order : orders) {
    for (size_t i = 1; i < order.size(); ++i)
      EXPECT_LT(Key(order[i - 1]), Key(order[i])) << order[i - 1] << " < " << order[i];
  }
}

TEST(TupleKey, ShapesCheckCountsAndTypesAndCoerce) {
  TupleShape longs;
  longs.of = ValueType::kLong;
  EXPECT_TRUE(EncodeTuple(V("[1 2 3]"), &longs).ok());
  auto one = EncodeTuple(V("[1]"), &longs);
  ASSERT_FALSE(one.ok());
  EXPECT_EQ(one.status().code(), Code::kSchema);
  EXPECT_FALSE(EncodeTuple(V("[1 2 3 4 5 6 7 8 9]"), &longs).ok());
  auto bad = EncodeTuple(V("[1 \"x\"]"), &longs);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("element 1"), std::string::npos) << bad.status().message();
  EXPECT_TRUE(EncodeTuple(V("[1 nil]"), &longs).ok());

  TupleShape pair;
  pair.types = {ValueType::kDouble, ValueType::kUri};
  auto k = EncodeTuple(V("[2 \"https://example.org/\"]"), &pair);
  ASSERT_TRUE(k.ok()) << k.status().ToString();
  EXPECT_EQ(edn::Print(DecodeTuple(*k)), "[2.0 #uri \"https://example.org/\"]");
  EXPECT_FALSE(EncodeTuple(V("[2.0 \"not a uri\"]"), &pair).ok());
  EXPECT_FALSE(EncodeTuple(V("[2.0]"), &pair).ok());

  TupleShape big;
  big.of = ValueType::kBigInt;
  auto b = EncodeTuple(V("[1 2N]"), &big);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*b, Key("[1N 2N]"));  // a long given for a bigint is the bigint

  EXPECT_FALSE(EncodeTuple(V("[[1] 2]")).ok());
  EXPECT_FALSE(EncodeTuple(V("{:a 1}")).ok());
  EXPECT_FALSE(EncodeTuple(V("[##NaN 1]")).ok());
}

TEST(TupleKey, MalformedBytesDecodeToNil) {
  EXPECT_TRUE(DecodeTuple(std::string("\x10\x01", 2)).is_nil());
  EXPECT_TRUE(DecodeTuple(std::string("\x30"
                                      "ab",
                                      3))
                  .is_nil());
  EXPECT_TRUE(DecodeTuple(std::string("\x7f", 1)).is_nil());
}

}  // namespace
}  // namespace mentat::schema
