#include "util/regex.h"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>

namespace mentat::regex {
namespace {

std::shared_ptr<const Regex> Must(std::string_view pattern) {
  auto r = Regex::Compile(pattern);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : nullptr;
}

double Seconds(const std::function<void()>& fn) {
  auto t0 = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST(Regex, FindsAndMatchesWithGroups) {
  auto re = Must("([a-z]+)([0-9]+)?");
  Match m;
  ASSERT_TRUE(re->Find("12 ab34 x", 0, &m));
  ASSERT_EQ(m.groups.size(), 3u);
  EXPECT_EQ(*m.groups[0], "ab34");
  EXPECT_EQ(*m.groups[1], "ab");
  EXPECT_EQ(*m.groups[2], "34");
  EXPECT_EQ(m.begin, 3u);
  EXPECT_EQ(m.end, 7u);
  ASSERT_TRUE(re->Find("12 ab34 x", 7, &m));
  EXPECT_EQ(*m.groups[0], "x");
  EXPECT_FALSE(m.groups[2].has_value()) << "a group that did not take part";
  EXPECT_FALSE(re->Find("12 ab34 x", 9, &m));
  EXPECT_TRUE(re->FullMatch("abc9", &m));
  EXPECT_FALSE(re->FullMatch("abc9!", &m));
  // Code points, not bytes.
  EXPECT_TRUE(Must("^.$")->FullMatch("é", &m));
  EXPECT_TRUE(Must("(?i)straße")->Find("STRASSE or Straße", 0, &m));
  EXPECT_EQ(*m.groups[0], "Straße");
}

// The patterns that make a backtracking matcher take exponential time or recurse once per
// character (std::regex crashed on a 40 KB subject) run in linear time here.
TEST(Regex, PathologicalPatternsRunInLinearTime) {
  std::string a30(30, 'a'), big(4 << 20, 'a');
  Match m;
  double t = Seconds([&] {
    EXPECT_FALSE(Must("(a*)*b")->Find(a30, 0, &m));
    EXPECT_FALSE(Must("(a|aa)+$x")->Find(a30, 0, &m));
    EXPECT_TRUE(Must("(a|b)*")->FullMatch(big, &m));
    EXPECT_FALSE(Must("(a|b)*c")->Find(big, 0, &m));
    EXPECT_FALSE(Must("(a*)*b")->Find(big, 0, &m));
  });
  EXPECT_LT(t, 20.0);
}

TEST(Regex, RefusedPatternsSayWhy) {
  auto bad = [](std::string_view p) {
    auto r = Regex::Compile(p);
    EXPECT_FALSE(r.ok()) << p;
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    }
    return r.ok() ? std::string() : r.status().message();
  };
  EXPECT_EQ(bad("("), "invalid regular expression \"(\": missing ): (");
  EXPECT_EQ(bad("(?=x)a"),
            "invalid regular expression \"(?=x)a\": invalid perl operator: (?= (look-around is "
            "not supported: matching is linear-time)");
  EXPECT_EQ(bad("(a)\\1"),
            "invalid regular expression \"(a)\\1\": invalid escape sequence: \\1 (back-references "
            "are not supported: matching is linear-time)");
  // A pattern whose program exceeds the memory bound.
  std::string huge;
  for (int i = 0; i < 200; ++i) huge += "[a-z]{1000}";
  EXPECT_NE(bad(huge).find("pattern too large"), std::string::npos) << bad(huge);
}

TEST(Regex, JavaStyleReplacements) {
  auto re = Must("(?P<word>[a-z]+)-([0-9])");
  Match m;
  ASSERT_TRUE(re->Find("x ab-7 y", 0, &m));
  auto r = ExpandReplacement(*re, m, "<$2$1${word}\\$$0>");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, "<7abab$ab-7>");
  // $12 is group 1 then "2" when there is no group 12.
  EXPECT_EQ(*ExpandReplacement(*re, m, "$12"), "ab2");
  EXPECT_FALSE(ExpandReplacement(*re, m, "$3").ok());
  EXPECT_FALSE(ExpandReplacement(*re, m, "${nope}").ok());
  EXPECT_FALSE(ExpandReplacement(*re, m, "tail\\").ok());
  EXPECT_FALSE(ExpandReplacement(*re, m, "tail$").ok());
}

}  // namespace
}  // namespace mentat::regex
