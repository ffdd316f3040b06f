#include "input.h"

#include <gtest/gtest.h>

namespace mentat::cli {
namespace {

TEST(Input, IsCompleteBalancesBracketsOutsideStringsCharsAndComments) {
  EXPECT_TRUE(IsComplete(".schema"));
  EXPECT_TRUE(IsComplete(".t [{:a 1}]"));
  EXPECT_FALSE(IsComplete(".t [{:a 1}"));
  EXPECT_FALSE(IsComplete(".t [{:a \"]\""));
  EXPECT_TRUE(IsComplete(".t [{:a \"]\"}]"));
  EXPECT_FALSE(IsComplete(".t [\"unterminated"));
  EXPECT_TRUE(IsComplete(".t [\\[ \\( \\{]"));  // character literals
  EXPECT_FALSE(IsComplete(".q [:find ?x ; ] in a comment\n"));
  EXPECT_TRUE(IsComplete(".q [:find ?x ; ] in a comment\n]"));
  EXPECT_TRUE(IsComplete(".t [\"a \\\" quote\"]"));
  EXPECT_TRUE(IsComplete(".t ]]"));  // unbalanced closers run (and fail to parse)
}

TEST(Input, SplitCommandTrimsBothEnds) {
  std::string name, rest;
  SplitCommand("  .t   [1 2]  \n", &name, &rest);
  EXPECT_EQ(name, ".t");
  EXPECT_EQ(rest, "[1 2]");
  SplitCommand(".schema", &name, &rest);
  EXPECT_EQ(name, ".schema");
  EXPECT_EQ(rest, "");
  SplitCommand(" \t\n", &name, &rest);
  EXPECT_EQ(name, "");
}

TEST(Input, LooksLikeQuery) {
  EXPECT_TRUE(LooksLikeQuery("[:find ?e :where [?e :a]]"));
  EXPECT_TRUE(LooksLikeQuery("  [ :find ?e]"));
  EXPECT_TRUE(LooksLikeQuery("{:find [?e] :where [[?e :a]]}"));
  EXPECT_FALSE(LooksLikeQuery("[:findx ?e]"));
  EXPECT_FALSE(LooksLikeQuery("[{:db/id 1}]"));
  EXPECT_FALSE(LooksLikeQuery(".q [:find ?e]"));
}

TEST(Input, FlattenForHistoryKeepsMeaning) {
  EXPECT_EQ(FlattenForHistory(".t [{:a 1\n     :b 2}\n]"), ".t [{:a 1 :b 2}]");
  EXPECT_EQ(FlattenForHistory(".t [\"two\nlines\"]"), ".t [\"two\\nlines\"]");
  EXPECT_EQ(FlattenForHistory(".q [:find ?x ; why\n :where [?x :a]]"),
            ".q [:find ?x :where [?x :a]]");
  EXPECT_EQ(FlattenForHistory(".t [\";not a comment\"]"), ".t [\";not a comment\"]");
  EXPECT_EQ(FlattenForHistory(".t [\\;]"), ".t [\\;]");
}

TEST(Input, CaretLinesPointsAtTheColumn) {
  EXPECT_EQ(CaretLines("[:find ?x\n :wher [?x]]", 2, 2), "   :wher [?x]]\n   ^");
  EXPECT_EQ(CaretLines("abc", 1, 4), "  abc\n     ^");  // just past the end
  EXPECT_EQ(CaretLines("abc", 1, 5), "");
  EXPECT_EQ(CaretLines("abc", 2, 1), "");
  EXPECT_EQ(CaretLines("\tx y", 1, 4), "  \tx y\n  \t  ^");      // tabs kept in the indent
  EXPECT_EQ(CaretLines("\"é\" x", 1, 6), "  \"é\" x\n      ^");  // UTF-8: one column
}

TEST(Input, ErrorPositionPrefixOrSuffix) {
  unsigned line = 0, col = 0;
  EXPECT_TRUE(ErrorPosition("3:14: unexpected )", &line, &col));
  EXPECT_EQ(line, 3u);
  EXPECT_EQ(col, 14u);
  EXPECT_TRUE(ErrorPosition("unknown attribute :a/b in [?e :a/b] at 2:7", &line, &col));
  EXPECT_EQ(line, 2u);
  EXPECT_EQ(col, 7u);
  EXPECT_FALSE(ErrorPosition("no position here", &line, &col));
  EXPECT_FALSE(ErrorPosition("12:30 is a time, not a position", &line, &col));
  EXPECT_FALSE(ErrorPosition("meet at 12:30 tomorrow", &line, &col));
}

TEST(Input, EditDistance) {
  EXPECT_EQ(EditDistance("", ""), 0u);
  EXPECT_EQ(EditDistance(".scema", ".schema"), 1u);
  EXPECT_EQ(EditDistance("--fromat", "--format"), 2u);
  EXPECT_EQ(EditDistance("abc", ""), 3u);
}

TEST(Input, SplitWordsHonoursQuotes) {
  EXPECT_EQ(SplitWords("  a.edn --batch  10 "),
            (std::vector<std::string>{"a.edn", "--batch", "10"}));
  EXPECT_EQ(SplitWords("\"my file.csv\" --csv"),
            (std::vector<std::string>{"my file.csv", "--csv"}));
  EXPECT_TRUE(SplitWords("   ").empty());
}

}  // namespace
}  // namespace mentat::cli
