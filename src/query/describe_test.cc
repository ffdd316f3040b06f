// mentat::describe_query: a query's result shape, columns and map keys without a store.
#include <gtest/gtest.h>

#include "mentat/store.h"

namespace mentat {
namespace {

TEST(DescribeQuery, ShapesColumnsAndKeysComeFromTheParse) {
  auto rel = describe_query("[:find ?e (count ?v) :where [?e :a/b ?v]]");
  ASSERT_TRUE(rel.ok()) << rel.status().ToString();
  EXPECT_EQ(rel->shape, QueryResult::Shape::kRelation);
  EXPECT_EQ(rel->columns, (std::vector<std::string>{"?e", "(count ?v)"}));
  EXPECT_TRUE(rel->rows.empty());
  EXPECT_TRUE(rel->map_keys.empty());

  auto coll = describe_query("[:find [?e ...] :where [?e :a/b]]");
  ASSERT_TRUE(coll.ok());
  EXPECT_EQ(coll->shape, QueryResult::Shape::kCollection);
  auto scalar = describe_query("[:find ?e . :where [?e :a/b]]");
  ASSERT_TRUE(scalar.ok());
  EXPECT_EQ(scalar->shape, QueryResult::Shape::kScalar);
  auto tuple = describe_query("[:find [?e ?v] :where [?e :a/b ?v]]");
  ASSERT_TRUE(tuple.ok());
  EXPECT_EQ(tuple->shape, QueryResult::Shape::kTuple);
  EXPECT_EQ(tuple->columns, (std::vector<std::string>{"?e", "?v"}));

  auto keys = describe_query("[:find ?e ?v :keys id value :where [?e :a/b ?v]]");
  ASSERT_TRUE(keys.ok());
  ASSERT_EQ(keys->map_keys.size(), 2u);
  EXPECT_EQ(edn::Print(keys->map_keys[1]), ":value");
}

TEST(DescribeQuery, ParseErrorsNameWhereTheyAre) {
  auto bad = describe_query("[:find ?e :where [?e :a/b]");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Code::kParse);
  EXPECT_NE(bad.status().message().find("1:"), std::string::npos) << bad.status().message();
  EXPECT_FALSE(describe_query("[:find :where [?e :a/b]]").ok());
}

}  // namespace
}  // namespace mentat
