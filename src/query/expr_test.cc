// Expr (expr.h): SQL text with typed references, built by concatenation.
#include "query/expr.h"

#include <gtest/gtest.h>

namespace mentat::query {
namespace {

TEST(Expr, ConcatenationKeepsReferencesAndMergesText) {
  Expr a = Expr::Column(3, "v");
  Expr e = "(" + a + " = " + std::string("?1") + " AND " + Expr::Exists(2) + ")";
  ASSERT_EQ(e.parts().size(), 5u);
  EXPECT_EQ(e.parts()[0].text, "(");
  EXPECT_EQ(e.parts()[1].kind, Expr::Part::Kind::kColumn);
  EXPECT_EQ(e.parts()[2].text, " = ?1 AND ");  // adjacent text is one part
  EXPECT_EQ(e.parts()[3].kind, Expr::Part::Kind::kExists);
  EXPECT_EQ(e.DebugString(), "(t3.v = ?1 AND EXISTS(b2))");
  EXPECT_TRUE(e.Reads(3, "v"));
  EXPECT_TRUE(e.Reads(3));
  EXPECT_FALSE(e.Reads(3, "e"));
  EXPECT_FALSE(e.Reads(4));
  std::set<int> items, blocks;
  e.Items(&items);
  e.Blocks(&blocks);
  EXPECT_EQ(items, std::set<int>{3});
  EXPECT_EQ(blocks, std::set<int>{2});
  EXPECT_EQ(a.AsColumn()->text, "v");
  EXPECT_EQ(e.AsColumn(), nullptr);
}

TEST(Expr, TextOnlyAndEmpty) {
  Expr t = std::string("x = 1");
  ASSERT_EQ(t.parts().size(), 1u);
  EXPECT_EQ(t.parts()[0].text, "x = 1");
  EXPECT_TRUE(Expr("").empty());
  EXPECT_EQ(Expr("NULL"), "NULL");
  EXPECT_NE(Expr::Column(1, "e"), Expr("t1.e"));  // a reference is not its text
}

TEST(Expr, SelfAppendAndSubqueries) {
  Expr e = Expr::Column(1, "e") + " + ";
  e += e;
  EXPECT_EQ(e.DebugString(), "t1.e + t1.e + ");
  Expr g = Expr::Generator(4);
  std::set<int> blocks;
  g.Blocks(&blocks);
  EXPECT_EQ(blocks, std::set<int>{4});
  EXPECT_EQ(g.DebugString(), "GENERATOR(b4)");
}

TEST(Expr, CallsHoldTheirArgumentsAsExpressions) {
  Expr c = Expr::Call(Fn::kEq, {Expr::Column(2, "v"), Expr::Call(Fn::kLength, {"?1"})});
  Expr e = "(" + c + " AND " + Expr::Exists(5) + ")";
  EXPECT_EQ(e.DebugString(), "(=(t2.v, length(?1)) AND EXISTS(b5))");
  EXPECT_TRUE(e.Reads(2, "v"));  // through the call's argument
  EXPECT_FALSE(e.Reads(2, "e"));
  std::set<int> items, blocks;
  Expr::Call(Fn::kIn, {Expr::Column(7, "e"), "1", Expr::Generator(3)}).Items(&items);
  Expr::Call(Fn::kNot, {Expr::Exists(4)}).Blocks(&blocks);
  EXPECT_EQ(items, std::set<int>{7});
  EXPECT_EQ(blocks, std::set<int>{4});
  EXPECT_EQ(c, Expr::Call(Fn::kEq, {Expr::Column(2, "v"), Expr::Call(Fn::kLength, {"?1"})}));
  EXPECT_NE(c, Expr::Call(Fn::kNe, {Expr::Column(2, "v"), Expr::Call(Fn::kLength, {"?1"})}));
  EXPECT_EQ(c.AsColumn(), nullptr);
  EXPECT_EQ(CompareFn(">="), Fn::kGe);
  EXPECT_EQ(CompareFn("<>"), Fn::kNe);
}

}  // namespace
}  // namespace mentat::query
