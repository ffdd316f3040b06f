// The optimizer's pass list (src/query/passes.h) through the public API: every pass is
// switched off by name (QueryOptions::disabled_passes, options JSON disabledPasses) and
// compared with the optimized run and with the planner off; explain shows what each pass
// changed, and that a disabled one did not run. Each pass's query is one the pass does
// rewrite (its explain line is asserted), so no comparison is vacuous.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "mentat/store.h"

namespace mentat {
namespace {

const char* kSchema = R"([
  {:db/ident :i/title :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
  {:db/ident :i/state :db/valueType :db.type/keyword :db/cardinality :db.cardinality/one :db/index true}
  {:db/ident :i/priority :db/valueType :db.type/long :db/cardinality :db.cardinality/one :db/index true}
  {:db/ident :i/owner :db/valueType :db.type/ref :db/cardinality :db.cardinality/one :db/index true}
  {:db/ident :u/email :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
  {:db/ident :u/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one}])";

const char* kStates[] = {":open", ":closed", ":done", ":later", ":new"};

std::multiset<std::string> Rows(const QueryResult& r) {
  std::multiset<std::string> out;
  for (const auto& row : r.rows) {
    std::string s;
    for (const auto& v : row) s += edn::Print(v) + " ";
    out.insert(s);
  }
  return out;
}

class PassesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/mentat-passes-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
    auto s = Store::open(dir_ + "/s.db");
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
    Tx(kSchema);
    std::string users = "[";
    for (int u = 0; u < 40; ++u)
      users +=
          "{:u/email \"u" + std::to_string(u) + "\" :u/name \"User " + std::to_string(u) + "\"}";
    Tx(users + "]");
    for (int b = 0; b < 3000; b += 500) {
      std::string tx = "[";
      for (int i = b; i < b + 500; ++i)
        tx += "{:i/title \"Issue " + std::to_string(i) + "\" :i/state " + kStates[i % 5] +
              " :i/priority " + std::to_string(1 + (i / 5) % 5) + " :i/owner [:u/email \"u" +
              std::to_string(i % 40) + "\"]}";
      Tx(tx + "]");
    }
    auto t = store_->q("[:find (max ?t) . :where [_ :db/txInstant _ ?t]]");
    ASSERT_TRUE(t.ok());
    t_mid_ = t->rows[0][0].as_int();
    // Later changes, so that as-of reads both tables.
    auto open = store_->q("[:find ?i :where [?i :i/state :open]]");
    ASSERT_TRUE(open.ok());
    std::string later = "[";
    for (size_t k = 0; k < open->rows.size(); k += 7)
      later += "[:db/add " + edn::Print(open->rows[k][0]) + " :i/state :closed]";
    Tx(later + "]");
  }
  void TearDown() override {
    store_.reset();
    std::system(("rm -rf " + dir_).c_str());
  }
  void Tx(const std::string& edn) {
    auto r = store_->transact(edn);
    ASSERT_TRUE(r.ok()) << r.status().ToString() << " in " << edn.substr(0, 200);
  }

  // Runs `q` with everything on, with `pass` off and with the planner off; expects the same
  // rows from all three, that explain shows `pass` changing something when on (a line
  // containing `change`) and "off" when disabled. Returns the rows.
  std::multiset<std::string> Differential(const std::string& pass, const std::string& q,
                                          QueryOptions base, const std::string& change) {
    QueryOptions off = base, unplanned = base;
    off.disabled_passes = {pass};
    unplanned.use_planner = false;
    auto a = store_->q(q, base), b = store_->q(q, off), c = store_->q(q, unplanned);
    EXPECT_TRUE(a.ok()) << a.status().ToString();
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    if (!a.ok() || !b.ok() || !c.ok()) return {};
    EXPECT_FALSE(a->rows.empty()) << q;
    EXPECT_EQ(Rows(*a), Rows(*b)) << pass << " off changes the answer of " << q;
    EXPECT_EQ(Rows(*a), Rows(*c)) << "the planner off changes the answer of " << q;
    auto on_plan = store_->q_explain(q, base), off_plan = store_->q_explain(q, off);
    EXPECT_TRUE(on_plan.ok() && off_plan.ok());
    if (on_plan.ok()) {
      EXPECT_NE(on_plan->find(change), std::string::npos)
          << pass << " did not rewrite " << q << ":\n"
          << *on_plan;
    }
    if (off_plan.ok()) {
      if (pass == "value_counts") {
        EXPECT_EQ(off_plan->find("value_counts"), std::string::npos) << *off_plan;
      } else {
        EXPECT_NE(off_plan->find("  " + pass + ": off\n"), std::string::npos) << *off_plan;
        EXPECT_EQ(off_plan->find(change), std::string::npos) << *off_plan;
      }
    }
    return Rows(*a);
  }

  std::string dir_;
  std::unique_ptr<Store> store_;
  Entid t_mid_ = 0;
};

TEST_F(PassesTest, ValueCounts) {
  auto rows = Differential("value_counts", "[:find ?s (count ?i) :where [?i :i/state ?s]]", {},
                           "plan (optimizer pass value_counts)");
  EXPECT_EQ(rows.size(), 5u);
}

TEST_F(PassesTest, JoinOrder) {
  // Written from the widest pattern; the planner starts from the user.
  Differential("join_order",
               "[:find ?t :where [?i :i/title ?t] [?i :i/owner ?u] [?u :u/email \"u3\"]]", {},
               "(written t0 t1 t2)");
}

TEST_F(PassesTest, AsOfProbes) {
  QueryOptions o;
  o.as_of = TxPoint::Tx(t_mid_);
  Differential("as_of_probes",
               "[:find ?i ?s :where [?u :u/email \"u5\"] [?i :i/owner ?u] [?i :i/state ?s]]", o,
               "its value at t as a scalar subquery");
  // A constant value: the probe compared with it (the issues open at t, some closed since).
  auto open_then = Differential(
      "as_of_probes", "[:find ?i :where [?u :u/email \"u5\"] [?i :i/owner ?u] [?i :i/state :open]]",
      o, "its value at t as a scalar subquery");
  auto open_now =
      store_->q("[:find ?i :where [?u :u/email \"u5\"] [?i :i/owner ?u] [?i :i/state :open]]");
  ASSERT_TRUE(open_now.ok());
  EXPECT_GT(open_then.size(), open_now->rows.size());
}

TEST_F(PassesTest, AttributeCache) {
  ASSERT_TRUE(store_->cache(":i/title").ok());
  Differential("attribute_cache",
               "[:find ?i ?t :where [?u :u/email \"u7\"] [?i :i/owner ?u] [?i :i/title ?t]]", {},
               "read from the attribute cache");
}

TEST_F(PassesTest, EntitySets) {
  Differential("entity_sets",
               "[:find ?i ?p :where [?i :i/state :open] [?i :i/priority ?p] [(>= ?p 5)]]", {},
               "read once as a set of entities");
}

TEST_F(PassesTest, DistinctElimination) {
  // Every row is one issue's (its owner found by a unique email, its title cardinality
  // one), and the rule call is placed as a test (or_joins off): no DISTINCT.
  QueryOptions o;
  o.disabled_passes = {"or_joins"};
  auto rules = edn::Read("[[(open-urgent ?i) [?i :i/state :open] [?i :i/priority 5]]]");
  ASSERT_TRUE(rules.ok());
  o.inputs = {Input(*rules)};
  std::string q =
      "[:find ?i ?t :in $ % :where [?u :u/email \"u5\"] [?i :i/owner ?u] (open-urgent ?i) "
      "[?i :i/title ?t]]";
  auto rows = Differential("distinct_elimination", q, o, "every row unique by the found variables");
  o.disabled_passes.push_back("distinct_elimination");  // Differential's `off` is alone
  EXPECT_EQ(Rows(*store_->q(q, o)), rows);
  o.disabled_passes = {"or_joins"};
  EXPECT_FALSE(rows.empty());
  auto plan = store_->q_explain(q, o);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->find("SELECT DISTINCT"), std::string::npos) << *plan;
  // Owners of open issues repeat per issue: the DISTINCT stays, and the answer is a set.
  std::string owners = "[:find ?o :where [?i :i/state :open] [?i :i/owner ?o]]";
  auto own = store_->q_explain(owners);
  ASSERT_TRUE(own.ok());
  EXPECT_NE(own->find("SELECT DISTINCT"), std::string::npos) << *own;
  EXPECT_EQ(own->find("every row unique"), std::string::npos) << *own;
  auto r = store_->q(owners);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->rows.size(), 8u);  // owners u0, u5, u10, ... (i % 5 == 0 and i % 40)
  const std::multiset<std::string> got = Rows(*r);
  EXPECT_EQ(std::set<std::string>(got.begin(), got.end()).size(), got.size());
}

// The rewrites that apply to a pattern apply inside a recursive rule's clauses too, and
// explain shows them under the rule's name. `(r ?i ?x)` is recursive through itself only
// to make it a derived relation, evaluated clause by clause.
class RuleBodyPassesTest : public PassesTest {
 protected:
  std::multiset<std::string> InRule(const std::string& pass, const std::string& body,
                                    QueryOptions o, const std::string& change) {
    auto rules = edn::Read("[[(r ?i ?x) " + body + "] [(r ?i ?x) (r ?i ?x)]]");
    EXPECT_TRUE(rules.ok()) << rules.status().ToString();
    if (!rules.ok()) return {};
    o.inputs.push_back(*rules);
    auto rows = Differential(pass, "[:find ?i ?x :in $ % :where (r ?i ?x)]", o, change);
    auto plan = store_->q_explain("[:find ?i ?x :in $ % :where (r ?i ?x)]", o);
    EXPECT_TRUE(plan.ok());
    if (plan.ok()) {
      EXPECT_NE(plan->find("rule r: t"), std::string::npos) << *plan;
    }
    return rows;
  }
};

TEST_F(RuleBodyPassesTest, AsOfProbes) {
  QueryOptions o;
  o.as_of = TxPoint::Tx(t_mid_);
  auto rows = InRule("as_of_probes", "[?u :u/email \"u5\"] [?i :i/owner ?u] [?i :i/state ?x]", o,
                     "its value at t as a scalar subquery");
  EXPECT_EQ(rows.size(), 75u);  // 3,000 issues over 40 users
}

TEST_F(RuleBodyPassesTest, AttributeCache) {
  ASSERT_TRUE(store_->cache(":i/title").ok());
  auto rows = InRule("attribute_cache", "[?u :u/email \"u7\"] [?i :i/owner ?u] [?i :i/title ?x]",
                     {}, "read from the attribute cache");
  EXPECT_EQ(rows.size(), 75u);
  // A title changed after the cache was filled is read as it is now.
  auto one = store_->q("[:find ?i . :where [?u :u/email \"u7\"] [?i :i/owner ?u]]");
  ASSERT_TRUE(one.ok());
  Tx("[[:db/add " + edn::Print(one->ToEdn()) + " :i/title \"renamed\"]]");
  auto rules = edn::Read(
      "[[(r ?i ?x) [?u :u/email \"u7\"] [?i :i/owner ?u] [?i :i/title ?x]] [(r ?i ?x) (r ?i ?x)]]");
  ASSERT_TRUE(rules.ok());
  auto renamed = store_->q("[:find ?i . :in $ % :where (r ?i \"renamed\")]", {*rules});
  ASSERT_TRUE(renamed.ok()) << renamed.status().ToString();
  EXPECT_EQ(edn::Print(renamed->ToEdn()), edn::Print(one->ToEdn()));
}

TEST_F(RuleBodyPassesTest, EntitySets) {
  auto rows = InRule("entity_sets", "[?i :i/state :open] [?i :i/priority ?x] [(>= ?x 5)]", {},
                     "read once as a set of entities");
  EXPECT_GT(rows.size(), 10u);
}

TEST_F(PassesTest, AggPushdown) {
  // Per owner name, how many issues: counted per owner over :i/owner's index, then summed.
  auto rows =
      Differential("agg_pushdown", "[:find ?n (count ?i) :where [?i :i/owner ?u] [?u :u/name ?n]]",
                   {}, "counted per ?u");
  EXPECT_EQ(rows.size(), 40u);
  EXPECT_EQ(rows.count("\"User 3\" 75 "), 1u);
}

TEST_F(PassesTest, OrJoins) {
  // ?i is bound by [?i :i/state :open] too; the or-join finds the user's few issues first.
  auto rows = Differential(
      "or_joins",
      "[:find ?i ?t :where [?u :u/email \"u3\"] (or-join [?i ?u] [?i :i/owner ?u] "
      "(and [?i :i/priority 5] [?u :u/name \"User 3\"])) [?i :i/state :open] [?i :i/title ?t]]",
      {}, ": may produce ?");
  EXPECT_GT(rows.size(), 10u);
  // A two-body rule, a predicate after it.
  QueryOptions o;
  auto rules = edn::Read(
      "[[(owned ?u ?i) [?i :i/owner ?u]] "
      "[(owned ?u ?i) [?i :i/title \"Issue 7\"] [?u :u/email \"u1\"]]]");
  ASSERT_TRUE(rules.ok());
  o.inputs.push_back(*rules);
  rows = Differential("or_joins",
                      "[:find ?i :in $ % :where [?u :u/email \"u1\"] (owned ?u ?i) "
                      "[?i :i/priority ?p] [(>= ?p 4)]]",
                      o, ": may produce ?");
  EXPECT_GT(rows.size(), 5u);
  // Placed after the items that bind its variables, it stays a test of their rows.
  auto plan = store_->q_explain(
      "[:find ?i :where [?u :u/email \"u2\"] [?i :i/owner ?u] "
      "(or [?i :i/priority 5] [?i :i/state :later])]");
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_NE(plan->find("EXISTS per branch"), std::string::npos) << *plan;
}

TEST_F(PassesTest, PassThrough) {
  Tx("[{:db/ident :n/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one "
     ":db/unique :db.unique/identity} {:db/ident :n/up :db/valueType :db.type/ref "
     ":db/cardinality :db.cardinality/one}]");
  std::string tx = "[{:db/id \"n0\" :n/name \"n0\"}";
  for (int i = 1; i < 200; ++i)
    tx += "{:db/id \"n" + std::to_string(i) + "\" :n/name \"n" + std::to_string(i) +
          "\" :n/up \"n" + std::to_string(i - 1) + "\"}";
  Tx(tx + "]");
  auto rules = edn::Read(
      "[[(anc ?x ?y) [?x :n/up ?y]] [(anc ?x ?y) [?x :n/up ?z] (anc ?z ?y)]"
      " [(odd ?x ?y) [?x :n/up ?y]] [(odd ?x ?y) [?x :n/up ?z] (even ?z ?y)]"
      " [(even ?x ?y) [?x :n/up ?z] (odd ?z ?y)]]");
  ASSERT_TRUE(rules.ok());
  QueryOptions o;
  o.inputs = {*rules, edn::Value::String("n150")};
  const std::string anc =
      "[:find ?n :in $ % ?start :where [?s :n/name ?start] (anc ?s ?a) [?a :n/name ?n]]";
  EXPECT_EQ(Differential("pass_through", anc, o, "over the bound values it reaches").size(), 150u);
  // Mutual recursion: the ancestors at an even distance.
  const std::string even =
      "[:find ?n :in $ % ?start :where [?s :n/name ?start] (even ?s ?a) [?a :n/name ?n]]";
  EXPECT_EQ(Differential("pass_through", even, o, "over the bound values it reaches").size(), 75u);
  // The start found by a clause (sideways information passing), also with both ends free.
  EXPECT_EQ(Differential("seed_recursion", anc, o, "found by other clauses").size(), 150u);
  QueryOptions rules_only;
  rules_only.inputs = {*rules};
  EXPECT_EQ(Differential("seed_recursion",
                         "[:find ?a ?b :in $ % :where (anc ?a ?b) [?a :n/name \"n7\"] "
                         "[?b :n/name ?nb]]",
                         rules_only, "found by other clauses")
                .size(),
            7u);
  // One statement for the stratum, or the engine's loop: the same rows.
  EXPECT_EQ(Differential("recursive_cte", anc, o, "one WITH RECURSIVE statement").size(), 150u);
  EXPECT_EQ(Differential("recursive_cte", even, o, "one WITH RECURSIVE statement").size(), 75u);
  QueryOptions loop = o;
  loop.disabled_passes = {"pass_through", "recursive_cte"};
  auto a = store_->q(anc, o), b = store_->q(anc, loop);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(Rows(*a), Rows(*b));
}

TEST_F(PassesTest, ExplainAnalyzeCountsTheRowsAfterEachStep) {
  QueryOptions o;
  o.analyze = true;
  auto plan = store_->q_explain(
      "[:find ?t :where [?i :i/title ?t] [?i :i/owner ?u] [?u :u/email \"u3\"]]", o);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  // The user (1 row), the user's 75 issues, their titles (75).
  EXPECT_NE(plan->find("query: 75 rows in "), std::string::npos) << *plan;
  EXPECT_NE(plan->find("1. t2  est. 1 rows, actual 1 rows, "), std::string::npos) << *plan;
  EXPECT_NE(plan->find("2. t1  est. "), std::string::npos) << *plan;
  EXPECT_NE(plan->find("3. t0  est. "), std::string::npos) << *plan;
  size_t n = 0;
  for (size_t at = plan->find("actual 75 rows, "); at != std::string::npos;
       at = plan->find("actual 75 rows, ", at + 1))
    ++n;
  EXPECT_EQ(n, 2u) << *plan;
  auto j = options_from_json("[:find ?t :where [?i :i/title ?t]]", R"({"analyze": true})");
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_TRUE(j->analyze);
  // Without it, explain does not run the query.
  auto quiet = store_->q_explain("[:find ?t :where [?i :i/title ?t]]");
  ASSERT_TRUE(quiet.ok());
  EXPECT_EQ(quiet->find("analyze"), std::string::npos);
}

TEST_F(PassesTest, EveryPassIsListedInExplainInOrder) {
  auto plan = store_->q_explain("[:find ?t :where [?i :i/title ?t]]");
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  size_t at = plan->find("optimizer passes:\n");
  ASSERT_NE(at, std::string::npos) << *plan;
  for (const char* p : {"seed_recursion", "pass_through", "agg_pushdown", "or_joins", "join_order",
                        "recursive_cte", "rules_in_query", "as_of_probes", "attribute_cache",
                        "entity_sets", "distinct_elimination"}) {
    size_t next = plan->find(std::string("  ") + p, at);
    EXPECT_NE(next, std::string::npos) << p << " missing or out of order:\n" << *plan;
    at = next;
  }
  QueryOptions unplanned;
  unplanned.use_planner = false;
  auto off = store_->q_explain("[:find ?t :where [?i :i/title ?t]]", unplanned);
  ASSERT_TRUE(off.ok());
  for (const char* p : {"seed_recursion: off", "pass_through: off", "agg_pushdown: off",
                        "or_joins: off", "join_order: off", "recursive_cte: off",
                        "rules_in_query: off", "as_of_probes: off", "entity_sets: off"})
    EXPECT_NE(off->find(p), std::string::npos) << p << "\n" << *off;
  EXPECT_NE(off->find("attribute_cache: no change"), std::string::npos) << *off;
}

TEST_F(PassesTest, AnUnknownPassIsAnErrorThatListsThem) {
  QueryOptions o;
  o.disabled_passes = {"join_order", "no_such_pass"};
  for (const std::string& q : {std::string("[:find ?t :where [?i :i/title ?t]]"),
                               std::string("[:find ?s (count ?i) :where [?i :i/state ?s]]")}) {
    auto r = store_->q(q, o);
    ASSERT_FALSE(r.ok()) << q;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    EXPECT_NE(r.status().message().find("unknown optimizer pass \"no_such_pass\""),
              std::string::npos)
        << r.status().ToString();
    EXPECT_NE(r.status().message().find("entity_sets"), std::string::npos);
  }
  auto j = options_from_json("[:find ?t :where [?i :i/title ?t]]",
                             R"({"disabledPasses": ["entity_sets", "nope"]})");
  ASSERT_FALSE(j.ok());
  EXPECT_NE(j.status().message().find("disabledPasses: unknown optimizer pass \"nope\""),
            std::string::npos)
      << j.status().ToString();
  auto bad = options_from_json("[:find ?t :where [?i :i/title ?t]]", R"({"disabledPasses": 1})");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("array of pass names"), std::string::npos);
  auto ok = options_from_json("[:find ?t :where [?i :i/title ?t]]",
                              R"({"disabledPasses": ["entity_sets", "value_counts"]})");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->disabled_passes, (std::vector<std::string>{"entity_sets", "value_counts"}));
}

TEST_F(PassesTest, ADisabledPassIsPartOfThePlanCacheKey) {
  // The same prepared text, alternately with and without a pass: each run's explain and
  // answer are its own (a plan made with the pass is never reused without it).
  const std::string q = "[:find ?i ?p :where [?i :i/state :open] [?i :i/priority ?p] [(>= ?p 5)]]";
  QueryOptions off;
  off.disabled_passes = {"entity_sets"};
  for (int round = 0; round < 3; ++round) {
    auto a = store_->q_explain(q), b = store_->q_explain(q, off);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_NE(a->find("read once as a set of entities"), std::string::npos);
    EXPECT_EQ(b->find("read once as a set of entities"), std::string::npos);
    EXPECT_NE(b->find("entity_sets: off"), std::string::npos);
  }
}

}  // namespace
}  // namespace mentat
