// The JSON and text forms of edn_t, edn_pull and VARCHAR cells.
#include "results.h"

#include <gtest/gtest.h>

namespace mentat::duckdb_ext {
namespace {

TEST(ResultsTest, TxReportJsonKeepsDocumentedKeyOrder) {
  TxReport r;
  r.tx_id = 268435457;
  r.tx_instant = 1735689600000000;  // 2025-01-01T00:00:00Z
  r.tempids = {{"b", 65537}, {"a", 65536}};
  EXPECT_EQ(TxReportJson(r), R"({"tx_id":268435457,"tx_instant":"2025-01-01T00:00:00+00:00",)"
                             R"("tempids":{"a":65536,"b":65537}})");
  EXPECT_EQ(TxReportJson(TxReport{}),
            R"({"tx_id":0,"tx_instant":"1970-01-01T00:00:00+00:00","tempids":{}})");
}

TEST(ResultsTest, Rfc3339AsChronoPrintsIt) {
  EXPECT_EQ(Rfc3339(1735689600000000), "2025-01-01T00:00:00+00:00");
  EXPECT_EQ(Rfc3339(1735689600123000), "2025-01-01T00:00:00.123+00:00");
  EXPECT_EQ(Rfc3339(1735689600123456), "2025-01-01T00:00:00.123456+00:00");
  EXPECT_EQ(Rfc3339(-1), "1969-12-31T23:59:59.999999+00:00");
}

TEST(ResultsTest, CellText) {
  EXPECT_EQ(CellText(edn::Value::String("it's")), "it's");
  EXPECT_EQ(CellText(edn::Value::Keyword("db/ident")), ":db/ident");
  EXPECT_EQ(CellText(edn::Value::Int(-3)), "-3");
  EXPECT_EQ(CellText(edn::Value::Bool(true)), "true");
  EXPECT_EQ(CellText(edn::Value::Vector({edn::Value::Int(1), edn::Value::String("x")})),
            R"([1,"x"])");
  auto map = edn::Read(R"({:person/name "Ann" :db/id 65536})");
  ASSERT_TRUE(map.ok());
  EXPECT_EQ(PullJson(*map), R"({":db/id":65536,":person/name":"Ann"})");
  EXPECT_EQ(CellText(edn::Value::Inst(1735689600000000)), R"("2025-01-01T00:00:00.000000Z")");
}

TEST(ResultsTest, PullJsonInstantsAreMicroseconds) {
  auto pulled = edn::Read(R"({:e/at #inst "2025-01-01T00:00:00Z" :e/tags [:a/b]
                              :e/sub {:e/at #inst "1970-01-01T00:00:01Z"}})");
  ASSERT_TRUE(pulled.ok());
  EXPECT_EQ(PullJson(*pulled),
            R"({":e/at":1735689600000000,":e/sub":{":e/at":1000000},":e/tags":[":a/b"]})");
  // In a query cell, the instant is ISO text, but a pulled map inside keeps pull's form.
  auto cell = edn::Read(R"([#inst "2025-01-01T00:00:00Z" {:e/at #inst "1970-01-01T00:00:01Z"}])");
  ASSERT_TRUE(cell.ok());
  EXPECT_EQ(QueryCellJson(*cell), R"(["2025-01-01T00:00:00.000000Z",{":e/at":1000000}])");
  // Invalid UTF-8 is replaced, not thrown.
  EXPECT_EQ(QueryCellJson(edn::Value::String("a\xff")), "\"a\xef\xbf\xbd\"");
}

}  // namespace
}  // namespace mentat::duckdb_ext
