// The extension in a real DuckDB: loading, edn_t, edn_pull, errors, store cache and
// parallel calls. (Typed edn_q results are in query_test.cc.)
#include <gmock/gmock.h>

#include <thread>

#include "fixture.h"

namespace mentat::duckdb_host {
namespace {

using ::testing::HasSubstr;

constexpr char kSchema[] =
    "[{:db/ident :person/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one"
    "  :db/unique :db.unique/identity}"
    " {:db/ident :person/age :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]";

class ExtensionTest : public DuckTest {};

TEST_F(ExtensionTest, LoadsAndRegistersFunctions) {
  auto r =
      Run("SELECT function_name || ' ' || function_type || ' ' || n FROM (SELECT function_name, "
          "function_type, count(*) AS n FROM duckdb_functions() WHERE function_name LIKE 'edn_%' "
          "GROUP BY ALL) ORDER BY 1");
  ASSERT_EQ(r.rows.size(), 8u);
  EXPECT_EQ(r.Cell(0, 0), "edn_datoms scalar 2");
  EXPECT_EQ(r.Cell(1, 0), "edn_entity scalar 4");  // BIGINT or VARCHAR eid, optional format
  EXPECT_EQ(r.Cell(2, 0), "edn_eval scalar 1");
  EXPECT_EQ(r.Cell(3, 0), "edn_explain scalar 1");
  EXPECT_EQ(r.Cell(4, 0), "edn_log scalar 3");
  EXPECT_EQ(r.Cell(5, 0), "edn_pull scalar 4");  // BIGINT or VARCHAR eid, optional format
  EXPECT_EQ(r.Cell(6, 0), "edn_q table 1");
  EXPECT_EQ(r.Cell(7, 0), "edn_t scalar 2");
}

TEST_F(ExtensionTest, TransactReturnsJsonReport) {
  std::string p = Quote(Path("t.db"));
  auto s = Run("SELECT edn_t(" + p + ", " + Quote(kSchema) + ")");
  ASSERT_EQ(s.rows.size(), 1u);
  EXPECT_EQ(s.types[0], "VARCHAR");
  auto r = Run("SELECT edn_t(" + p +
               ", '[{:db/id \"a\" :person/name \"Alice\" :person/age 30}]')"
               " AS report");
  ASSERT_EQ(r.rows.size(), 1u);
  const std::string report = r.Cell(0, 0);
  EXPECT_THAT(report,
              ::testing::MatchesRegex(
                  R"(\{"tx_id":[0-9]+,"tx_instant":"[0-9]{4}-[0-9]{2}-[0-9]{2}T[^"]+\+00:00",)"
                  R"("tempids":\{"a":65536\}\})"));
  // The report is JSON DuckDB can read.
  auto id = Run("SELECT json_extract(" + Quote(report) + ", '$.tempids.a')::BIGINT");
  EXPECT_EQ(id.Cell(0, 0), "65536");
}

TEST_F(ExtensionTest, EntityIsTouchedAsJsonOrEdn) {
  std::string p = Quote(Path("entity.db"));
  Run("SELECT edn_t(" + p + ", " + Quote(kSchema) + ")");
  Run("SELECT edn_t(" + p + ", '[{:db/id \"a\" :person/name \"Ann\" :person/age 31}]')");
  EXPECT_EQ(Run("SELECT edn_entity(" + p + ", 65536)").Cell(0, 0),
            R"({":db/id":65536,":person/age":31,":person/name":"Ann"})");
  EXPECT_EQ(Run("SELECT edn_entity(" + p + ", '[:person/name \"Ann\"]', 'edn')").Cell(0, 0),
            "{:db/id 65536, :person/age 31, :person/name \"Ann\"}");
  EXPECT_THAT(Error("SELECT edn_entity(" + p + ", '[:person/age 31]')"),
              HasSubstr("not :db/unique"));
}

TEST_F(ExtensionTest, TransactOneRowPerTransaction) {
  std::string p = Quote(Path("rows.db"));
  Run("SELECT edn_t(" + p + ", " + Quote(kSchema) + ")");
  Run("CREATE TABLE people(name VARCHAR, age BIGINT)");
  Run("INSERT INTO people VALUES ('Ann', 31), ('Bob', 42), ('Cy', 53)");
  auto r = Run("SELECT count(DISTINCT json_extract(edn_t(" + p +
               ", '[{:person/name \"' || name || '\" :person/age ' || age || '}]'), '$.tx_id')) "
               "FROM people");
  EXPECT_EQ(r.Cell(0, 0), "3");
}

TEST_F(ExtensionTest, TransactErrorsBecomeDuckdbErrors) {
  std::string p = Quote(Path("err.db"));
  Run("SELECT edn_t(" + p + ", " + Quote(kSchema) + ")");
  EXPECT_THAT(Error("SELECT edn_t(" + p + ", '[{:person/name 42}]')"), HasSubstr("edn_t:"));
  EXPECT_THAT(Error("SELECT edn_t(" + p + ", '[{:person/nope 1}]')"), HasSubstr("person/nope"));
  // Malformed EDN names the position.
  EXPECT_THAT(Error("SELECT edn_t(" + p + ", '[{:person/name \"x\"')"), HasSubstr("1:"));
  // The host is fine afterwards.
  EXPECT_EQ(Run("SELECT 1 + 1").Cell(0, 0), "2");
}

TEST_F(ExtensionTest, NullArgumentsGiveNull) {
  std::string p = Quote(Path("null.db"));
  auto r = Run("SELECT edn_t(" + p + ", NULL) IS NULL, edn_t(NULL, '[]') IS NULL");
  EXPECT_EQ(r.Cell(0, 0), "true");
  EXPECT_EQ(r.Cell(0, 1), "true");
}

TEST_F(ExtensionTest, EdnFormatAndDatoms) {
  std::string p = Quote(Path("fmt.db"));
  Run("SELECT edn_t(" + p + ", " + Quote(kSchema) + ")");
  auto r = Run("SELECT edn_t(" + p + ", '[{:db/id \"a\" :person/name \"Ann\"}]', 'edn')");
  EXPECT_THAT(r.Cell(0, 0), HasSubstr(":tempids {\"a\" 65536}"));
  EXPECT_THAT(r.Cell(0, 0), HasSubstr("[65536 :person/name \"Ann\""));
  auto d = Run("SELECT edn_datoms(" + p + ", ':eavt', '65536', 'edn'), edn_datoms(" + p +
               ", ':aevt', ':person/name', 'json')");
  EXPECT_THAT(d.Cell(0, 0),
              ::testing::MatchesRegex(R"(\[\[65536 :person/name "Ann" [0-9]+ true\]\])"));
  EXPECT_THAT(d.Cell(0, 1),
              ::testing::MatchesRegex(R"(\[\[65536,":person/name","Ann",[0-9]+,true\]\])"));
  EXPECT_THAT(Error("SELECT edn_datoms(" + p + ", ':nope', '')"), HasSubstr("edn_datoms"));
  EXPECT_THAT(Error("SELECT edn_t(" + p + ", '[]', 'yaml')"), HasSubstr("'json' or 'edn'"));
}

TEST_F(ExtensionTest, LogListsTransactions) {
  std::string p = Quote(Path("log.db"));
  Run("SELECT edn_t(" + p + ", " + Quote(kSchema) + ")");
  Run("SELECT edn_t(" + p + ", '[{:db/id \"a\" :person/name \"Ann\" :person/age 30}]')");
  Run("SELECT edn_t(" + p + ", '[[:db/add [:person/name \"Ann\"] :person/age 31]]')");
  auto r = Run("SELECT edn_log(" + p + ", '2', 'nil', 'edn'), edn_log(" + p + ", '3', '', 'json')");
  EXPECT_THAT(r.Cell(0, 0), HasSubstr("{:data [[65536 :person/name \"Ann\" 268435458 true] "
                                      "[65536 :person/age 30 268435458 true]"));
  EXPECT_THAT(r.Cell(0, 0), HasSubstr(":t 3"));
  EXPECT_THAT(r.Cell(0, 1), HasSubstr("[65536,\":person/age\",30,268435459,false]"));
  EXPECT_THAT(r.Cell(0, 1), HasSubstr("[65536,\":person/age\",31,268435459,true]"));
  EXPECT_EQ(Run("SELECT edn_log(" + p + ", '9', NULL) IS NULL").Cell(0, 0), "true");
  EXPECT_EQ(Run("SELECT edn_log(" + p + ", '9', '', 'edn')").Cell(0, 0), "[]");
  EXPECT_THAT(Error("SELECT edn_log(" + p + ", ':x', '')"), HasSubstr("a log bound"));
}

TEST_F(ExtensionTest, ExplainShowsThePlan) {
  std::string p = Quote(Path("explain.db"));
  Run("SELECT edn_t(" + p + ", " + Quote(kSchema) + ")");
  auto r = con_->Query("SELECT edn_explain(" + p +
                       ", '[:find ?e :where [?e :person/name \"Ann\"]]', '{}')");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_THAT(r->Cell(0, 0), HasSubstr("SELECT"));
  EXPECT_THAT(Error("SELECT edn_explain(" + p + ", '[:find ?e :where [?e :person/nope _]]', '{}')"),
              HasSubstr("person/nope"));
}

TEST_F(ExtensionTest, EvalRunsScriptsOnTheStore) {
  std::string p = Quote(Path("eval.db"));
  Run("SELECT edn_t(" + p + ", " + Quote(kSchema) + ")");
  auto r = con_->Query("SELECT edn_eval(" + p + ", '(+ 1 2)')");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->Cell(0, 0), "3");
  auto t = Run("SELECT edn_eval(" + p +
               ", '(mentat.store/transact conn [{:person/name \"Zed\" :person/age 9}])"
               " (mentat.store/q (mentat.store/db conn)"
               " (quote [:find ?a . :where [?e :person/name \"Zed\"] [?e :person/age ?a]]))')");
  EXPECT_EQ(t.Cell(0, 0), "9");
  // The script wrote to the store: DuckDB sees it.
  auto d = Run("SELECT edn_datoms(" + p + ", ':avet', ':person/name \"Zed\"', 'edn')");
  EXPECT_THAT(d.Cell(0, 0), HasSubstr("\"Zed\""));
  // Errors: unreadable source, a script error, and the sandbox refusing a file.
  EXPECT_THAT(Error("SELECT edn_eval(" + p + ", '(+ 1')"), HasSubstr("edn_eval"));
  EXPECT_THAT(Error("SELECT edn_eval(" + p + ", '(throw (ex-info \"boom\" {}))')"),
              HasSubstr("boom"));
  EXPECT_THAT(Error("SELECT edn_eval(" + p + ", '(mentat.store/open \"/tmp/other.db\")')"),
              HasSubstr("edn_eval"));
  EXPECT_FALSE(std::filesystem::exists("/tmp/other.db"));
}

}  // namespace
}  // namespace mentat::duckdb_host
