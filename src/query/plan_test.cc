// SQLite's EXPLAIN QUERY PLAN for the scale suite's queries (../shared/bench/SCALE_SUITE.md):
// every pattern with a constant or a bound variable reads an index range; no query scans
// the datoms table (q3 may read the avet range of its one attribute).
#include <sstream>

#include "query/query_test_util.h"

namespace mentat::query::testing {
namespace {

class ScalePlanTest : public QueryTest {
 protected:
  // The dataset is built once for the suite.
  void SetUp() override {
    static std::shared_ptr<Store> shared;
    static Entid t_mid = 0, t_since = 0;
    if (shared) {
      store_ = shared;
      t_mid_ = t_mid;
      t_since_ = t_since;
      return;
    }
    QueryTest::SetUp();
    Build();
    shared = store_;
    t_mid = t_mid_;
    t_since = t_since_;
  }

  void Build() {
    Tx(R"([{:db/ident :user/email :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity :db/index true}
 {:db/ident :user/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
 {:db/ident :label/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity :db/index true}
 {:db/ident :issue/title :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
 {:db/ident :issue/state :db/valueType :db.type/keyword :db/cardinality :db.cardinality/one :db/index true}
 {:db/ident :issue/priority :db/valueType :db.type/long :db/cardinality :db.cardinality/one :db/index true}
 {:db/ident :issue/assignee :db/valueType :db.type/ref :db/cardinality :db.cardinality/one :db/index true}
 {:db/ident :issue/reporter :db/valueType :db.type/ref :db/cardinality :db.cardinality/one :db/index true}
 {:db/ident :issue/label :db/valueType :db.type/ref :db/cardinality :db.cardinality/many :db/index true}
 {:db/ident :issue/created-at :db/valueType :db.type/instant :db/cardinality :db.cardinality/one}])");
    const int users = 40, issues = 2000;
    std::string tx = "[";
    for (int u = 0; u < users; ++u)
      tx += "{:user/email \"user" + std::to_string(u) + "@example.com\" :user/name \"User " +
            std::to_string(u) + "\"}";
    for (int l = 0; l < 10; ++l) tx += "{:label/name \"label-" + std::to_string(l) + "\"}";
    Tx(tx + "]");
    const char* states[] = {":state/open", ":state/in-progress", ":state/closed", ":state/resolved",
                            ":state/reopened"};
    for (int b = 0; b < issues; b += 500) {
      tx = "[";
      for (int i = b; i < b + 500; ++i)
        tx += "{:db/id \"i" + std::to_string(i) + "\" :issue/title \"Issue " + std::to_string(i) +
              "\" :issue/state " + states[i % 5] + " :issue/priority " + std::to_string(1 + i % 5) +
              " :issue/assignee [:user/email \"user" + std::to_string(i % users) +
              "@example.com\"] :issue/reporter [:user/email \"user" +
              std::to_string((i * 7) % users) +
              "@example.com\"] :issue/label [[:label/name \"label-" + std::to_string(i % 10) +
              "\"]] :issue/created-at #inst \"2025-01-01\"}";
      for (const auto& [k, e] : TxIds(tx + "]")) ids_[std::stoi(k.substr(1))] = e;
    }
    auto issue = [&](int i) { return std::to_string(ids_[i]); };
    t_mid_ = Tx("[[:db/add " + issue(1) + " :issue/state :state/closed]]");
    for (int i = 2; i < 40; ++i) {
      if (i == 36) t_since_ = Tx("[[:db/add " + issue(3) + " :issue/priority 5]]");
      Tx("[[:db/add " + issue(i) + " :issue/state " + states[(i + 1) % 5] + "]]");
    }
  }

  // The SQLite plan lines of explain's output.
  std::vector<std::string> Plan(const std::string& q, std::vector<Input> in,
                                const std::function<void(ExecContext&)>& tweak = {}) {
    auto e = ExplainQ(q, std::move(in), tweak);
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    if (!e.ok()) return {};
    std::vector<std::string> out;
    std::istringstream ss(*e);
    std::string line;
    bool in_plan = false;
    while (std::getline(ss, line)) {
      if (line == "sqlite plan:") {
        in_plan = true;
      } else if (in_plan) {
        out.push_back(line.substr(line.find_first_not_of(' ')));
      }
    }
    return out;
  }

  // No full scan of a real table (virtual tables: input relations, are fine).
  static void ExpectNoScan(const std::vector<std::string>& plan, const std::string& what) {
    ASSERT_FALSE(plan.empty()) << what;
    for (const auto& l : plan) {
      bool scan = l.rfind("SCAN ", 0) == 0 && l.find("VIRTUAL TABLE") == std::string::npos &&
                  l.find("CONSTANT ROW") == std::string::npos;
      EXPECT_FALSE(scan) << what << ": " << l;
      EXPECT_EQ(l.find("AUTOMATIC"), std::string::npos) << what << ": " << l;
    }
  }

  static bool Has(const std::vector<std::string>& plan, const std::string& text) {
    for (const auto& l : plan)
      if (l.find(text) != std::string::npos) return true;
    return false;
  }

  // One datom of a known entity and attribute: the primary key, or for an attribute whose
  // values are not indexed, the equally narrow (a, e) range of datoms_aevt.
  static bool ByEntity(const std::vector<std::string>& plan) {
    return Has(plan, "PRIMARY KEY (e=? AND a=?)") || Has(plan, "datoms_aevt (a=? AND e=?)");
  }

  Entid t_mid_ = 0, t_since_ = 0;
  std::map<int, Entid> ids_;
};

TEST_F(ScalePlanTest, PointLookup) {
  auto plan =
      Plan("[:find ?e ?name :in $ ?email :where [?e :user/email ?email] [?e :user/name ?name]]",
           {edn::Value::String("user3@example.com")});
  ExpectNoScan(plan, "q1");
  EXPECT_TRUE(Has(plan, "datoms_avet (a=? AND v=?)"));
  EXPECT_TRUE(ByEntity(plan)) << ::testing::PrintToString(plan);
  EXPECT_EQ(QE("[:find ?name . :in $ ?email :where [?e :user/email ?email] [?e :user/name ?name]]",
               {edn::Value::String("user3@example.com")}),
            "\"User 3\"");
}

TEST_F(ScalePlanTest, RefTraversalCurrentAndAsOf) {
  const char* q2 =
      "[:find ?i ?title ?state :in $ ?email :where [?u :user/email ?email] "
      "[?i :issue/assignee ?u] [?i :issue/title ?title] [?i :issue/state ?state]]";
  auto plan = Plan(q2, {edn::Value::String("user1@example.com")});
  ExpectNoScan(plan, "q2");
  EXPECT_TRUE(Has(plan, "datoms_avet (a=? AND v=?)"));
  auto as_of = Plan(q2, {edn::Value::String("user1@example.com")},
                    [&](ExecContext& ctx) { ctx.view.as_of = t_mid_; });
  ExpectNoScan(as_of, "q2 as_of");
  EXPECT_TRUE(Has(as_of, "history_avet (a=? AND v=?)"));
  // Every arm reads the assignee's issues by value, in datoms and in history.
  for (const auto& l : as_of) {
    if (l.find("SEARCH t1") == 0) {
      EXPECT_NE(l.find("(a=? AND v=?)"), std::string::npos) << l;
    }
  }
  auto now = Q(q2, {edn::Value::String("user1@example.com")});
  auto then = Q(q2, {edn::Value::String("user1@example.com")},
                [&](ExecContext& ctx) { ctx.view.as_of = t_mid_; });
  ASSERT_TRUE(now.ok() && then.ok());
  EXPECT_EQ(now->rows.size(), 50u);
  EXPECT_EQ(then->rows.size(), 50u);
}

TEST_F(ScalePlanTest, AggregateReadsOneAttributeRange) {
  auto plan = Plan("[:find ?state (count ?i) :where [?i :issue/state ?state]]", {});
  ExpectNoScan(plan, "q3");
  EXPECT_TRUE(Has(plan, "datoms_avet (a=?)"));
  EXPECT_FALSE(Has(plan, "TEMP B-TREE")) << "grouping follows the index order";
  EXPECT_EQ(QE("[:find (sum ?c) . :where [(ground 1) ?one] "
               "[(identity ?one) ?x] [(* ?x 2000) ?c]]"),
            "2000");
}

TEST_F(ScalePlanTest, PredicateScan) {
  auto plan = Plan(
      "[:find ?i ?title ?priority :in $ ?min :where [?i :issue/state :state/open] "
      "[?i :issue/priority ?priority] [?i :issue/title ?title] [(>= ?priority ?min)]]",
      {edn::Value::Int(4)});
  ExpectNoScan(plan, "q4");
  EXPECT_TRUE(Has(plan, "datoms_avet (a=? AND v=?)"));
}

TEST_F(ScalePlanTest, SinceUsesTheTxIndex) {
  auto plan = Plan("[:find ?i :where [?i :issue/state _]]", {},
                   [&](ExecContext& ctx) { ctx.view.since = t_since_; });
  ExpectNoScan(plan, "since");
  EXPECT_TRUE(Has(plan, "datoms_tx (tx>?)")) << "a narrow since window reads the tx index";
  auto r = Q("[:find ?i :where [?i :issue/state _]]", {},
             [&](ExecContext& ctx) { ctx.view.since = t_since_; });
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->rows.size(), 4u);
}

TEST_F(ScalePlanTest, InputBindings) {
  edn::Vec emails;
  for (int u = 0; u < 40; u += 2)
    emails.push_back(edn::Value::String("user" + std::to_string(u) + "@example.com"));
  const char* q =
      "[:find ?e ?name :in $ [?email ...] :where [?e :user/email ?email] [?e :user/name ?name]]";
  auto plan = Plan(q, {edn::Value::Vector(emails)});
  ExpectNoScan(plan, "input_bindings");
  EXPECT_TRUE(Has(plan, "datoms_avet (a=? AND v=?)"));
  auto r = Q(q, {edn::Value::Vector(emails)});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->rows.size(), 20u);
}

TEST_F(ScalePlanTest, PullQueryPattern) {
  // The suite's query as written; the pull itself reads by entity (src/pull).
  auto plan = Plan("[:find (pull ?e [*]) . :in $ ?e :where [?e :issue/title _]]",
                   {edn::Value::Int(ids_[7])});
  ExpectNoScan(plan, "pull");
  EXPECT_TRUE(ByEntity(plan)) << ::testing::PrintToString(plan);
}

TEST_F(ScalePlanTest, PlannerOrdersBySelectivityAndCanBeTurnedOff) {
  // Written worst-first: the planner starts from the unique email anyway.
  const char* q =
      "[:find ?title :in $ ?email :where [?i :issue/title ?title] [?i :issue/assignee ?u] "
      "[?u :user/email ?email]]";
  auto e = ExplainQ(q, {edn::Value::String("user1@example.com")});
  ASSERT_TRUE(e.ok());
  EXPECT_NE(e->find("1. t2 [?u :user/email ?email]"), std::string::npos) << *e;
  auto off = ExplainQ(q, {edn::Value::String("user1@example.com")},
                      [](ExecContext& ctx) { ctx.use_planner = false; });
  ASSERT_TRUE(off.ok());
  EXPECT_NE(off->find("1. t0 [?i :issue/title ?title]"), std::string::npos) << *off;
  // Off: the written order, pinned (Datomic runs clauses in the order written).
  EXPECT_NE(off->find("CROSS JOIN"), std::string::npos);
  EXPECT_EQ(Q(q, {edn::Value::String("user1@example.com")})->rows.size(), 50u);
}

}  // namespace
}  // namespace mentat::query::testing
