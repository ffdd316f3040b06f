// Entity-set filters (entity_sets.cc): the SQL functions, when the planner uses them, and
// that every answer equals the one computed without the database and the nested-loop plan's.
#include <set>
#include <tuple>

#include "query/query_test_util.h"
#include "query/relation.h"
#include "storage/sqlite.h"
#include "storage/sqlite_api.h"

namespace mentat::query::testing {
namespace {

// ---- The SQL functions ----

class EntitySetSql : public ::testing::Test {
 protected:
  void SetUp() override {
    auto c = storage::Connection::Open(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    conn_ = std::move(*c);
    ASSERT_TRUE(EnsureRegistered(conn_->raw()).ok());
    ASSERT_TRUE(conn_->Exec("CREATE TABLE t (x)").ok());
  }
  // The integers of `probe` that the set of t's x contains, comma-separated, or the error.
  std::string Members(const std::string& probe) {
    std::string sql = "SELECT group_concat(p.value) FROM json_each('[" + probe +
                      "]') AS p WHERE mentat_in_eset((SELECT mentat_eset(x) FROM t), p.value)";
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(conn_->raw(), sql.c_str(), -1, &st, nullptr) != SQLITE_OK)
      return std::string("prepare: ") + sqlite3_errmsg(conn_->raw());
    std::string out;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
      out = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    if (rc != SQLITE_ROW) out = std::string("error: ") + sqlite3_errmsg(conn_->raw());
    sqlite3_finalize(st);
    return out;
  }
  std::unique_ptr<storage::Connection> conn_;
};

TEST_F(EntitySetSql, DenseSetsAreBitmapsAndAnswerMembership) {
  ASSERT_TRUE(conn_->Exec("INSERT INTO t VALUES (10), (12), (12), (75), (11), (NULL), ('x')").ok());
  EXPECT_EQ(Members("9, 10, 11, 12, 13, 74, 75, 76, -5, 1000"), "10,11,12,75");
}

TEST_F(EntitySetSql, SparseSetsAreSortedVectors) {
  ASSERT_TRUE(
      conn_->Exec("INSERT INTO t VALUES (1), (9223372036854775807), (-9223372036854775808), (5)")
          .ok());
  EXPECT_EQ(Members("1, 2, 5, 9223372036854775807, -9223372036854775808, 0"),
            "1,5,9223372036854775807,-9223372036854775808");
}

TEST_F(EntitySetSql, AnEmptySetHasNoMembers) {
  EXPECT_EQ(Members("0, 1, 2"), "");
  ASSERT_TRUE(conn_->Exec("INSERT INTO t VALUES (NULL)").ok());
  EXPECT_EQ(Members("0, 1, 2"), "");
}

TEST_F(EntitySetSql, AForgedSetIsAnError) {
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(conn_->raw(), "SELECT mentat_in_eset(1, 1)", -1, &st, nullptr),
            SQLITE_OK);
  EXPECT_EQ(sqlite3_step(st), SQLITE_ERROR);
  EXPECT_NE(std::string(sqlite3_errmsg(conn_->raw())).find("not a set made by mentat_eset"),
            std::string::npos);
  sqlite3_finalize(st);
}

TEST_F(EntitySetSql, ThisSqliteCarriesASetThroughASubquery) {
  // Else the planner would silently stop using entity sets.
  EXPECT_TRUE(EntitySetsUsable());
}

TEST_F(EntitySetSql, AReusedStatementBuildsItsSetAgainOnEveryRun) {
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(conn_->raw(),
                               "SELECT count(*) FROM json_each('[1,2,3,4]') AS p WHERE "
                               "mentat_in_eset((SELECT mentat_eset(x) FROM t), p.value)",
                               -1, &st, nullptr),
            SQLITE_OK);
  for (int n = 1; n <= 4; ++n) {
    ASSERT_TRUE(conn_->Exec("INSERT INTO t VALUES (" + std::to_string(n) + ")").ok());
    ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
    EXPECT_EQ(sqlite3_column_int(st, 0), n);
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
}

// ---- The planner's use of them ----

class EntitySetQuery : public QueryTest {
 protected:
  static constexpr int kIssues = 3000;
  const char* kStates[5] = {":state/open", ":state/in-progress", ":state/closed", ":state/resolved",
                            ":state/reopened"};

  void SetUp() override {
    QueryTest::SetUp();
    Tx(R"([{:db/ident :issue/title :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
 {:db/ident :issue/state :db/valueType :db.type/keyword :db/cardinality :db.cardinality/one :db/index true}
 {:db/ident :issue/priority :db/valueType :db.type/long :db/cardinality :db.cardinality/one :db/index true}
 {:db/ident :issue/size :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
 {:db/ident :issue/label :db/valueType :db.type/keyword :db/cardinality :db.cardinality/many :db/index true}])");
    for (int b = 0; b < kIssues; b += 500) {
      std::string tx = "[";
      for (int i = b; i < b + 500; ++i) {
        state_[i] = static_cast<int>((i * 7919u) % 5);
        prio_[i] = 1 + static_cast<int>((i * 104729u / 7) % 5);
        tx += "{:db/id \"i" + std::to_string(i) + "\" :issue/title \"Issue " + std::to_string(i) +
              "\" :issue/state " + kStates[state_[i]] + " :issue/priority " +
              std::to_string(prio_[i]) + " :issue/size " + std::to_string(i % 13) +
              (i % 3 ? " :issue/label [:l/a :l/b]" : "") + "}";
      }
      for (const auto& [k, e] : TxIds(tx + "]")) id_[std::stoi(k.substr(1))] = e;
    }
    // History: state changes and retracted priorities.
    std::string tx = "[";
    for (int i = 0; i < kIssues; i += 11) {
      state_[i] = (state_[i] + 1) % 5;
      tx += "[:db/add " + std::to_string(id_[i]) + " :issue/state " + kStates[state_[i]] + "]";
    }
    for (int i = 5; i < kIssues; i += 37) {
      tx += "[:db/retract " + std::to_string(id_[i]) + " :issue/priority " +
            std::to_string(prio_[i]) + "]";
      prio_[i] = 0;
    }
    Tx(tx + "]");
  }

  // The rows of `q` (sorted), after checking the planned and the written-order runs agree.
  std::set<std::vector<edn::Value>> Rows(const std::string& q, std::vector<Input> in = {}) {
    auto planned = Q(q, in);
    auto written = Q(q, in, [](ExecContext& c) { c.use_planner = false; });
    EXPECT_TRUE(planned.ok()) << planned.status().ToString();
    EXPECT_TRUE(written.ok()) << written.status().ToString();
    if (!planned.ok() || !written.ok()) return {};
    std::set<std::vector<edn::Value>> a(planned->rows.begin(), planned->rows.end()),
        b(written->rows.begin(), written->rows.end());
    EXPECT_EQ(a.size(), planned->rows.size()) << "duplicate rows";
    EXPECT_EQ(a, b) << q;
    return a;
  }

  bool UsesSet(const std::string& q, std::vector<Input> in = {}) {
    auto e = ExplainQ(q, std::move(in));
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return e.ok() && e->find("read once as a set of entities") != std::string::npos;
  }

  std::map<int, int> state_, prio_;
  std::map<int, Entid> id_;
};

TEST_F(EntitySetQuery, PredicateScanAnswersTheTruth) {
  const std::string q =
      "[:find ?i ?title ?p :in $ ?min :where [?i :issue/state :state/open] "
      "[?i :issue/priority ?p] [?i :issue/title ?title] [(>= ?p ?min)]]";
  EXPECT_TRUE(UsesSet(q, {edn::Value::Int(4)}));
  for (int min : {4, 1, 6}) {
    std::set<std::vector<edn::Value>> truth;
    for (int i = 0; i < kIssues; ++i)
      if (state_[i] == 0 && prio_[i] >= min && prio_[i] > 0)
        truth.insert({edn::Value::Int(id_[i]), edn::Value::String("Issue " + std::to_string(i)),
                      edn::Value::Int(prio_[i])});
    EXPECT_EQ(Rows(q, {edn::Value::Int(min)}), truth) << "min " << min;
    if (min == 4) {
      EXPECT_GT(truth.size(), 100u);
    }
  }
}

TEST_F(EntitySetQuery, AReusedPlanSeesLaterTransactions) {
  const std::string q =
      "[:find (count ?i) . :where [?i :issue/state :state/open] [?i :issue/priority ?p] "
      "[(>= ?p 3)]]";
  EXPECT_TRUE(UsesSet(q));
  for (int round = 0; round < 3; ++round) {
    int truth = 0;
    for (int i = 0; i < kIssues; ++i) truth += state_[i] == 0 && prio_[i] >= 3;
    EXPECT_EQ(QE(q), std::to_string(truth));
    std::string tx = "[";
    for (int i = round; i < kIssues; i += 50) {
      state_[i] = 0;
      tx += "[:db/add " + std::to_string(id_[i]) + " :issue/state :state/open]";
    }
    Tx(tx + "]");
  }
}

TEST_F(EntitySetQuery, AValueFromAnInputAndAnEmptySet) {
  const std::string q =
      "[:find ?i :in $ ?s ?p :where [?i :issue/state ?s] [?i :issue/priority ?p]]";
  for (int s = 0; s < 5; ++s) {
    std::set<std::vector<edn::Value>> truth;
    for (int i = 0; i < kIssues; ++i)
      if (state_[i] == s && prio_[i] == 2) truth.insert({edn::Value::Int(id_[i])});
    auto in = std::vector<Input>{*edn::Read(kStates[s]), edn::Value::Int(2)};
    EXPECT_EQ(Rows(q, in), truth) << kStates[s];
  }
  EXPECT_TRUE(Rows(q, {*edn::Read(":state/none"), edn::Value::Int(2)}).empty());
  EXPECT_TRUE(
      Rows("[:find ?i :where [?i :issue/state :state/none] [?i :issue/priority ?p] [(> ?p 1)]]")
          .empty());
}

TEST_F(EntitySetQuery, ManyValuedAndUnindexedAttributesAndNegation) {
  // A cardinality-many driver with a blank value; an unindexed attribute read by value.
  std::set<std::vector<edn::Value>> truth, sized;
  for (int i = 0; i < kIssues; ++i) {
    if (i % 3 && prio_[i] > 3) truth.insert({edn::Value::Int(id_[i])});
    if (state_[i] == 2 && i % 13 == 7) sized.insert({edn::Value::Int(id_[i])});
  }
  EXPECT_EQ(Rows("[:find ?i :where [?i :issue/label _] [?i :issue/priority ?p] [(> ?p 3)]]"),
            truth);
  EXPECT_EQ(Rows("[:find ?i :where [?i :issue/state :state/closed] [?i :issue/size 7]]"), sized);
  // Inside not (a correlated block) the set is not used; the answer is the same.
  std::set<std::vector<edn::Value>> labelled_not_open;
  for (int i = 0; i < kIssues; ++i)
    if (i % 3 && state_[i] != 0) labelled_not_open.insert({edn::Value::Int(id_[i])});
  EXPECT_EQ(Rows("[:find ?i :where [?i :issue/label :l/a] (not [?i :issue/state :state/open])]"),
            labelled_not_open);
  // The set's entity read inside a not and a predicate of the outer block.
  std::set<std::vector<edn::Value>> open_high_unlabelled;
  for (int i = 0; i < kIssues; ++i)
    if (state_[i] == 0 && prio_[i] > 2 && i % 3 == 0 && id_[i] % 2 == 0)
      open_high_unlabelled.insert({edn::Value::Int(id_[i])});
  const std::string q =
      "[:find ?i :where [?i :issue/state :state/open] [?i :issue/priority ?p] [(> ?p 2)] "
      "(not [?i :issue/label :l/a]) [(even? ?i)]]";
  EXPECT_TRUE(UsesSet(q));
  EXPECT_EQ(Rows(q), open_high_unlabelled);
}

TEST_F(EntitySetQuery, NotUsedForFewEntitiesOrWithoutThePlanner) {
  const std::string few =
      "[:find ?i :in $ ?t :where [?i :issue/title ?t] [?i :issue/priority ?p] [(> ?p 1)]]";
  EXPECT_FALSE(UsesSet(few, {edn::Value::String("Issue 7")}));
  auto off =
      ExplainQ("[:find ?i :where [?i :issue/state :state/open] [?i :issue/priority ?p] [(> ?p 1)]]",
               {}, [](ExecContext& c) { c.use_planner = false; });
  ASSERT_TRUE(off.ok());
  EXPECT_EQ(off->find("read once as a set"), std::string::npos);
}

}  // namespace
}  // namespace mentat::query::testing
