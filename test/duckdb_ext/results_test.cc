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
  EXPECT_EQ(TxReportJson(r), R"({"tx_id":268435457,"tx_instant":"2025-01-01T00:00:00.000Z",)"
                             R"("tempids":{"a":65536,"b":65537}})");
  EXPECT_EQ(TxReportJson(TxReport{}),
            R"({"tx_id":0,"tx_instant":"1970-01-01T00:00:00.000Z","tempids":{}})");
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
  EXPECT_EQ(ValueJson(*map), R"({":db/id":65536,":person/name":"Ann"})");
}

}  // namespace
}  // namespace mentat::duckdb_ext
