#include "util/decimal.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "mentat/edn.h"

namespace mentat::decimal {
namespace {

// Keys order as the numbers do: the order of edn::Compare over the same values as
// bigdecs, over integers, fractions, tiny and huge exponents of both signs.
TEST(Decimal, KeysOrderAsTheNumbers) {
  std::vector<std::string> texts = {"0",
                                    "-0.0",
                                    "1",
                                    "-1",
                                    "10",
                                    "9.99",
                                    "1E+60",
                                    "-1E+60",
                                    "1E-60",
                                    "-1E-60",
                                    "0.001",
                                    "123456789012345678901234567890",
                                    "-123456789012345678901234567891",
                                    "1.5",
                                    "1.50001",
                                    "-1.5"};
  std::mt19937_64 rng(7);
  for (int i = 0; i < 300; ++i) {
    std::string t = rng() % 2 ? "-" : "";
    t += std::to_string(rng() % 100000);
    if (rng() % 2) t += "." + std::to_string(rng() % 1000);
    if (rng() % 3 == 0) t += "E" + std::to_string(static_cast<int>(rng() % 81) - 40);
    texts.push_back(t);
  }
  std::vector<edn::Value> values;
  for (const auto& t : texts) values.push_back(edn::Value::BigDec(t));
  for (const auto& a : values)
    for (const auto& b : values) {
      int by_value = Compare(a, b);  // edn::Compare, found by ADL
      std::string ka = Key(Parse(a.str())), kb = Key(Parse(b.str()));
      int by_key = ka < kb ? -1 : (kb < ka ? 1 : 0);
      // Compare breaks ties of equal numbers by text (1.0M != 1.00M); keys do not.
      if (by_key == 0) {
        EXPECT_EQ(Format(Parse(a.str()), false), Format(Parse(b.str()), false));
      } else {
        EXPECT_EQ(by_key, by_value < 0 ? -1 : 1) << a.str() << " vs " << b.str();
      }
    }
}

TEST(Decimal, KeysRoundTripAndPrint) {
  struct Case {
    const char* in;
    bool integer;
    const char* out;
  } cases[] = {{"0", true, "0"},
               {"-000120", true, "-120"},
               {"+5", true, "5"},
               {"1.50", false, "1.5"},
               {"-0.000123", false, "-0.000123"},
               {"12E+50", false, "1.2E+51"},
               {"1E-10", false, "1E-10"},
               {"150", false, "150"},
               {"123456789012345678901234567890", true, "123456789012345678901234567890"}};
  for (const auto& c : cases) {
    auto back = FromKey(Key(Parse(c.in)));
    ASSERT_TRUE(back.has_value()) << c.in;
    EXPECT_EQ(Format(*back, c.integer), c.out) << c.in;
  }
  EXPECT_FALSE(FromKey("").has_value());
  EXPECT_FALSE(FromKey("\x81xx").has_value());
  EXPECT_FALSE(FromKey(std::string("\x81\x80\0\0\0\0\0\0\x01"
                                   "1",
                                   10))
                   .has_value());
}

TEST(Decimal, AddIsExact) {
  auto sum = [](const char* a, const char* b) {
    auto r = Add(Parse(a), Parse(b));
    return r ? Format(*r, false) : std::string("none");
  };
  EXPECT_EQ(sum("0.1", "0.2"), "0.3");
  EXPECT_EQ(sum("99999999999999999999", "1"), "100000000000000000000");
  EXPECT_EQ(sum("1.5", "-1.5"), "0");
  EXPECT_EQ(sum("-2", "1.25"), "-0.75");
  EXPECT_EQ(sum("1E+40", "-1"), "9999999999999999999999999999999999999999");
  EXPECT_EQ(sum("1E+200000", "1"), "none");
}

}  // namespace
}  // namespace mentat::decimal
