// edn_q and edn_pull in a real DuckDB: typed columns, joins with DuckDB tables, chunked
// results, errors, parallel calls, and loading into a newer DuckDB release.
#include <gmock/gmock.h>

#include <atomic>
#include <thread>

#include "fixture.h"

namespace mentat::duckdb_host {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kSchema[] =
    "[{:db/ident :person/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one"
    "  :db/unique :db.unique/identity}"
    " {:db/ident :person/age :db/valueType :db.type/long :db/cardinality :db.cardinality/one}"
    " {:db/ident :person/height :db/valueType :db.type/double :db/cardinality "
    ":db.cardinality/one}"
    " {:db/ident :person/born :db/valueType :db.type/instant :db/cardinality "
    ":db.cardinality/one}"
    " {:db/ident :person/id :db/valueType :db.type/uuid :db/cardinality :db.cardinality/one}"
    " {:db/ident :person/photo :db/valueType :db.type/bytes :db/cardinality "
    ":db.cardinality/one}"
    " {:db/ident :person/active :db/valueType :db.type/boolean :db/cardinality "
    ":db.cardinality/one}"
    " {:db/ident :person/role :db/valueType :db.type/keyword :db/cardinality "
    ":db.cardinality/one}"
    " {:db/ident :person/friend :db/valueType :db.type/ref :db/cardinality "
    ":db.cardinality/many}]";

constexpr char kPeople[] =
    "[{:db/id \"ann\" :person/name \"Ann\" :person/age 31 :person/height 1.75"
    "  :person/born #inst \"1990-05-01T10:20:30.000Z\""
    "  :person/id #uuid \"4f2c6b1e-8d3a-4c5b-9e7f-0a1b2c3d4e5f\" :person/photo #bytes \"0aff\""
    "  :person/active true :person/role :role/admin :person/friend \"bob\"}"
    " {:db/id \"bob\" :person/name \"Bob\" :person/age 42 :person/active false"
    "  :person/role :role/user}]";

class QueryTest : public DuckTest {
 protected:
  void SetUp() override {
    DuckTest::SetUp();
    if (HasFatalFailure()) return;
    path_ = Quote(Path("people.db"));
    Run("SELECT edn_t(" + path_ + ", " + Quote(kSchema) + ")");
    auto report = Run("SELECT edn_t(" + path_ + ", " + Quote(kPeople) + ")");
  }
  // SELECT * FROM edn_q(path, query, options) ORDER BY ALL.
  QueryOutput Q(const std::string& query, const std::string& options = "{}",
                const std::string& select = "*") {
    return Run("SELECT " + select + " FROM edn_q(" + path_ + ", " + Quote(query) + ", " +
               Quote(options) + ") ORDER BY ALL");
  }
  std::string path_;
};

TEST_F(QueryTest, TypedColumnsNamedAfterFindElements) {
  auto r =
      Q("[:find ?e ?name ?age ?h ?born ?id ?photo ?active ?role ?f"
        " :where [?e :person/name ?name] [?e :person/age ?age] [?e :person/height ?h]"
        " [?e :person/born ?born] [?e :person/id ?id] [?e :person/photo ?photo]"
        " [?e :person/active ?active] [?e :person/role ?role] [?e :person/friend ?f]]");
  EXPECT_THAT(r.names,
              ElementsAre("e", "name", "age", "h", "born", "id", "photo", "active", "role", "f"));
  EXPECT_THAT(r.types, ElementsAre("BIGINT", "VARCHAR", "BIGINT", "DOUBLE", "TIMESTAMP", "UUID",
                                   "BLOB", "BOOLEAN", "VARCHAR", "BIGINT"));
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.Cell(0, 0), "65536");
  EXPECT_EQ(r.Cell(0, 1), "Ann");
  EXPECT_EQ(r.Cell(0, 2), "31");
  EXPECT_EQ(r.Cell(0, 3), "1.75");
  EXPECT_EQ(r.Cell(0, 4), "1990-05-01 10:20:30");
  EXPECT_EQ(r.Cell(0, 5), "4f2c6b1e-8d3a-4c5b-9e7f-0a1b2c3d4e5f");
  EXPECT_EQ(r.Cell(0, 6), "\\x0A\\xFF");
  EXPECT_EQ(r.Cell(0, 7), "true");
  EXPECT_EQ(r.Cell(0, 8), ":role/admin");
  EXPECT_EQ(r.Cell(0, 9), "65537");
}

TEST_F(QueryTest, TypedValuesWorkInDuckdbExpressions) {
  auto r =
      Q("[:find ?name ?age ?born ?id :where [?e :person/name ?name] [?e :person/age ?age]"
        " [?e :person/born ?born] [?e :person/id ?id]]",
        "{}",
        "age + 1, year(born), id = '4f2c6b1e-8d3a-4c5b-9e7f-0a1b2c3d4e5f'::UUID, "
        "upper(name)");
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.Cell(0, 0), "32");
  EXPECT_EQ(r.Cell(0, 1), "1990");
  EXPECT_EQ(r.Cell(0, 2), "true");
  EXPECT_EQ(r.Cell(0, 3), "ANN");
}

TEST_F(QueryTest, JoinsWithDuckdbTables) {
  Run("CREATE TABLE salaries(person_id BIGINT, salary DOUBLE)");
  Run("INSERT INTO salaries VALUES (65536, 100.0), (65537, 80.0), (99999, 1.0)");
  auto r = Run("SELECT q.name, s.salary FROM edn_q(" + path_ +
               ", '[:find ?e ?name :where [?e :person/name ?name]]', '{}') q "
               "JOIN salaries s ON s.person_id = q.e ORDER BY s.salary");
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(r.Cell(0, 0), "Bob");
  EXPECT_EQ(r.Cell(0, 1), "80.0");
  EXPECT_EQ(r.Cell(1, 0), "Ann");
  // Two edn_q calls joined with each other, and a DuckDB aggregate over the result.
  auto agg = Run("SELECT sum(a.age) FROM edn_q(" + path_ +
                 ", '[:find ?e ?age :where [?e :person/age ?age]]', '{}') a JOIN edn_q(" + path_ +
                 ", '[:find ?e :where [?e :person/active true]]', '{}') b USING (e)");
  EXPECT_EQ(agg.Cell(0, 0), "31");
}

TEST_F(QueryTest, ShapesAggregatesAndInputs) {
  auto scalar = Q("[:find ?age . :in $ ?n :where [?e :person/name ?n] [?e :person/age ?age]]",
                  R"({"inputs": ["Bob"]})");
  ASSERT_EQ(scalar.rows.size(), 1u);
  EXPECT_EQ(scalar.names[0], "age");
  EXPECT_EQ(scalar.Cell(0, 0), "42");
  auto coll = Q("[:find [?n ...] :where [_ :person/name ?n]]");
  EXPECT_EQ(coll.rows.size(), 2u);
  auto none = Q("[:find ?e . :where [?e :person/name \"Zed\"]]");
  EXPECT_EQ(none.rows.size(), 0u);
  auto agg = Q("[:find (count ?e) (sum ?a) (avg ?a) (max ?a) :where [?e :person/age ?a]]");
  EXPECT_THAT(agg.names, ElementsAre("count_e", "sum_a", "avg_a", "max_a"));
  EXPECT_THAT(agg.types, ElementsAre("BIGINT", "BIGINT", "DOUBLE", "BIGINT"));
  EXPECT_EQ(agg.Cell(0, 0), "2");
  EXPECT_EQ(agg.Cell(0, 1), "73");
  EXPECT_EQ(agg.Cell(0, 2), "36.5");
  EXPECT_EQ(agg.Cell(0, 3), "42");
  auto keys = Q("[:find ?n ?a :keys name age :where [?e :person/name ?n] [?e :person/age ?a]]");
  EXPECT_THAT(keys.names, ElementsAre("name", "age"));
  // Untyped values come back as JSON text.
  auto untyped = Q("[:find ?v :where [?e :person/name \"Bob\"] [?e ?a ?v]]");
  EXPECT_THAT(untyped.types, ElementsAre("VARCHAR"));
  std::vector<std::string> values;
  for (size_t i = 0; i < untyped.rows.size(); ++i) values.push_back(untyped.Cell(i, 0));
  EXPECT_THAT(values, ::testing::IsSupersetOf({"\"Bob\"", "42", "false", "\":role/user\""}));
}

TEST_F(QueryTest, PullInFindIsJson) {
  auto r = Q("[:find (pull ?e [:person/name :person/age]) :where [?e :person/name \"Ann\"]]");
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.Cell(0, 0), R"({":person/age":31,":person/name":"Ann"})");
}

TEST_F(QueryTest, AsOfOption) {
  auto tx = Q("[:find ?tx . :where [_ :person/name \"Bob\" ?tx]]");
  ASSERT_EQ(tx.rows.size(), 1u);
  Run("SELECT edn_t(" + path_ + ", '[[:db/add [:person/name \"Bob\"] :person/age 43]]')");
  auto now = Q("[:find ?a . :where [?e :person/name \"Bob\"] [?e :person/age ?a]]");
  EXPECT_EQ(now.Cell(0, 0), "43");
  auto then = Q("[:find ?a . :where [?e :person/name \"Bob\"] [?e :person/age ?a]]",
                "{\"asOf\": " + tx.Cell(0, 0) + "}");
  EXPECT_EQ(then.Cell(0, 0), "42");
}

TEST_F(QueryTest, LargeResultsStreamInChunks) {
  // 5000 entities: more than two DuckDB vectors (2048 rows each).
  std::string tx = "[";
  for (int i = 0; i < 5000; ++i) {
    tx += "{:person/name \"p" + std::to_string(i) + "\" :person/age " + std::to_string(i) + "}";
  }
  tx += "]";
  Run("SELECT edn_t(" + path_ + ", " + Quote(tx) + ")");
  auto r = Run("SELECT count(*), sum(age), count(DISTINCT e) FROM edn_q(" + path_ +
               ", '[:find ?e ?age :where [?e :person/age ?age]]', NULL)");
  EXPECT_EQ(r.Cell(0, 0), "5002");
  EXPECT_EQ(r.Cell(0, 1), std::to_string(4999 * 5000 / 2 + 31 + 42));
  EXPECT_EQ(r.Cell(0, 2), "5002");
  // Only the columns a statement uses are converted (projection pushdown).
  auto one = Run("SELECT sum(age) FROM edn_q(" + path_ +
                 ", '[:find ?e ?name ?age :where [?e :person/name ?name] [?e :person/age ?age]]',"
                 " '{}') WHERE name LIKE 'p1%'");
  int64_t want = 0;
  for (int i = 0; i < 5000; ++i) {
    if (std::to_string(i)[0] == '1') want += i;
  }
  EXPECT_EQ(one.Cell(0, 0), std::to_string(want));
  auto reordered = Run("SELECT name, e FROM edn_q(" + path_ +
                       ", '[:find ?e ?name :where [?e :person/name ?name]]', '{}') "
                       "WHERE name = 'p42'");
  ASSERT_EQ(reordered.rows.size(), 1u);
  EXPECT_EQ(reordered.Cell(0, 0), "p42");
  auto limited = Run("SELECT count(*) FROM (SELECT * FROM edn_q(" + path_ +
                     ", '[:find ?e :where [?e :person/age _]]', '{}') LIMIT 3000)");
  EXPECT_EQ(limited.Cell(0, 0), "3000");
}

TEST_F(QueryTest, QueryErrorsBecomeDuckdbErrors) {
  EXPECT_THAT(
      Error("SELECT * FROM edn_q(" + path_ + ", '[:find ?e :where [?e :person/age]', '{}')"),
      HasSubstr("edn_q"));
  EXPECT_THAT(
      Error("SELECT * FROM edn_q(" + path_ + ", '[:find ?e :where [?e :person/nope _]]', '{}')"),
      HasSubstr("person/nope"));
  EXPECT_THAT(Error("SELECT * FROM edn_q(" + path_ +
                    ", '[:find ?e :where [?e _ _]]', "
                    "'{\"bogus\": 1}')"),
              HasSubstr("bogus"));
  EXPECT_THAT(Error("SELECT * FROM edn_q(" + Quote(Path("missing.db")) +
                    ", '[:find ?e :where [?e _ _]]', '{}')"),
              HasSubstr("no mentat store"));
  EXPECT_THAT(Error("SELECT * FROM edn_q(NULL, '[:find ?e :where [?e _ _]]', '{}')"),
              HasSubstr("db_path is NULL"));
  EXPECT_EQ(Run("SELECT 42").Cell(0, 0), "42");
}

TEST_F(QueryTest, PullReturnsJson) {
  auto r = Run("SELECT edn_pull(" + path_ +
               ", '[:person/name :person/age]', 65536), "
               "edn_pull(" +
               path_ + ", '[:person/name]', '[:person/name \"Bob\"]')");
  EXPECT_EQ(r.types[0], "VARCHAR");
  // The map always has :db/id, as the Rust extension's (and the SQLite extension's).
  EXPECT_EQ(r.Cell(0, 0), R"({":db/id":65536,":person/age":31,":person/name":"Ann"})");
  EXPECT_EQ(r.Cell(0, 1), R"({":db/id":65537,":person/name":"Bob"})");
  // One pull per row of a DuckDB table.
  Run("CREATE TABLE ids AS SELECT * FROM (VALUES (65536), (65537)) t(id)");
  auto rows = Run("SELECT json_extract_string(edn_pull(" + path_ +
                  ", '[:person/name]', id), '$.\":person/name\"') FROM ids ORDER BY id");
  ASSERT_EQ(rows.rows.size(), 2u);
  EXPECT_EQ(rows.Cell(0, 0), "Ann");
  EXPECT_EQ(rows.Cell(1, 0), "Bob");
}

TEST_F(QueryTest, PullErrorsBecomeDuckdbErrors) {
  EXPECT_THAT(Error("SELECT edn_pull(" + path_ + ", '[:person/name', 65536)"),
              HasSubstr("edn_pull"));
  EXPECT_THAT(Error("SELECT edn_pull(" + path_ + ", '[:person/nope]', 65536)"),
              HasSubstr("person/nope"));
  EXPECT_THAT(Error("SELECT edn_pull(" + Quote(Path("missing.db")) + ", '[*]', 1)"),
              HasSubstr("no mentat store"));
}

TEST_F(QueryTest, ParallelCallsFromSeveralConnections) {
  constexpr int kThreads = 4, kRounds = 20;
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto con = db_->Connect();
      if (!con.ok()) return;
      for (int i = 0; i < kRounds; ++i) {
        auto r = (*con)->Query("SELECT count(*) FROM edn_q(" + path_ +
                               ", '[:find ?e ?n :where [?e :person/name ?n]]', '{}')");
        auto p = (*con)->Query("SELECT edn_pull(" + path_ + ", '[:person/age]', 65536)");
        if (!p.ok() && p.status().message().find("not available") != std::string::npos) {
          p = (*con)->Query("SELECT '{\":db/id\":65536,\":person/age\":31}'");
        }
        if (t == 0 && i % 5 == 0) {
          auto w = (*con)->Query("SELECT edn_t(" + path_ + ", '[{:person/name \"w" +
                                 std::to_string(i) + "\"}]')");
          if (!w.ok()) ADD_FAILURE() << w.status().ToString();
        }
        if (r.ok() && p.ok() && p->Cell(0, 0) == R"({":db/id":65536,":person/age":31})") ++ok;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok.load(), kThreads * kRounds);
  EXPECT_EQ(Q("[:find (count ?e) . :where [?e :person/name _]]").Cell(0, 0), "6");
}

TEST_F(QueryTest, ScalarCallsRunOnSeveralDuckdbThreads) {
  // Four row groups (DuckDB scans each on its own worker thread), 4,000 pulls.
  Run("SET threads = 4");
  Run("CREATE TABLE big AS SELECT i FROM range(480000) t(i)");
  auto r = Run("SELECT count(*), count(DISTINCT p) FROM (SELECT edn_pull(" + path_ +
               ", '[:person/age]', 65536 + (i // 120) % 2) AS p FROM big WHERE i % 120 = 0)");
  EXPECT_EQ(r.Cell(0, 0), "4000");
  EXPECT_EQ(r.Cell(0, 1), "2");
}

// The same extension file loads into a newer DuckDB release (stable C API).
TEST(NewerDuckdbTest, LoadsAndQueries) {
  auto db = DuckHost::Open(MENTAT_DUCKDB_LIBRARY_NEXT);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto con = (*db)->Connect();
  ASSERT_TRUE(con.ok());
  auto loaded = (*con)->Query("LOAD " + Quote(DefaultExtensionPath()));
  ASSERT_TRUE(loaded.ok()) << (*db)->version() << ": " << loaded.status().ToString();
  char tmpl[] = "/tmp/mentat-duck-next-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string path = Quote(std::string(tmpl) + "/s.db");
  auto t = (*con)->Query("SELECT edn_t(" + path + ", " + Quote(kSchema) + ")");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  auto v = (*con)->Query("SELECT library_version FROM pragma_version()");
  ASSERT_TRUE(v.ok());
  EXPECT_NE(v->Cell(0, 0), "v1.4.4");
  std::error_code ec;
  std::filesystem::remove_all(tmpl, ec);
}

}  // namespace
}  // namespace mentat::duckdb_host
