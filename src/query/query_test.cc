// Engine-level tests: named sources, interrupts and timeouts, prepared queries, pull
// find elements, options_from_json, and result shapes.
#include <atomic>
#include <chrono>
#include <thread>

#include "query/query_test_util.h"

namespace mentat::query::testing {
namespace {

constexpr const char* kSchema = R"([
  {:db/ident :item/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
  {:db/ident :item/state :db/valueType :db.type/keyword :db/cardinality :db.cardinality/one}
  {:db/ident :item/n :db/valueType :db.type/long :db/cardinality :db.cardinality/one}])";

class EngineTest : public QueryTest {
 protected:
  void SetUp() override {
    QueryTest::SetUp();
    Tx(kSchema);
    t1_ = Tx(R"([{:item/name "x" :item/state :state/open :item/n 1}
                 {:item/name "y" :item/state :state/open :item/n 2}])");
    t2_ = Tx(R"([[:db/add [:item/name "x"] :item/state :state/closed]])");
  }
  Entid t1_ = 0, t2_ = 0;
};

TEST_F(EngineTest, NamedSourcesJoinCurrentAndAsOf) {
  auto tweak = [&](ExecContext& ctx) { ctx.sources["$old"] = DbView{t1_, std::nullopt, false}; };
  EXPECT_EQ(QE(R"([:find ?n ?was ?now :in $ $old
                   :where [$old ?e :item/state ?was] [?e :item/state ?now]
                          [(!= ?was ?now)] [?e :item/name ?n]])",
               {edn::Value()}, tweak),
            R"([["x" :state/open :state/closed]])");
  // A rule called with a source reads that source.
  EXPECT_EQ(QE(R"([:find ?n :in $ $old % :where ($old open ?e) [?e :item/name ?n]])",
               {edn::Value(), V("[[(open ?e) [?e :item/state :state/open]]]")}, tweak),
            R"([["x"] ["y"]])");
  // Unknown source.
  EXPECT_NE(QE("[:find ?e :in $ $nope :where [$nope ?e :item/n _]]", {edn::Value()})
                .find("must be a database"),
            std::string::npos);
}

TEST_F(EngineTest, AsOfViewFromContext) {
  auto tweak = [&](ExecContext& ctx) { ctx.view.as_of = t1_; };
  EXPECT_EQ(QE("[:find ?s . :where [?e :item/name \"x\"] [?e :item/state ?s]]", {}, tweak),
            ":state/open");
  EXPECT_EQ(QE("[:find ?s . :where [?e :item/name \"x\"] [?e :item/state ?s]]"), ":state/closed");
}

TEST_F(EngineTest, InterruptStopsTheQueryAndTheStoreStaysUsable) {
  std::string heavy =
      "[:find (count ?a) . :where [(ground [1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20]) "
      "[?a ...]] [?e1 :item/n] [?e2 :item/n] [?x ?y ?z] [?p ?q ?r] [?s ?t ?u] [(+ ?a 1) ?b]]";
  // An interrupt that happened before the query started (the generation moved on).
  auto r = Q("[:find ?e :where [?e :item/n _]]", {},
             [](ExecContext& ctx) { ctx.start_gen = ctx.interrupt_gen->load() + 1; });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInterrupted);
  // From another thread while the query runs.
  std::atomic<bool> done{false};
  std::thread t([&] {
    while (!done) {
      store_->interrupt();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  auto r2 = Q(heavy);
  done = true;
  t.join();
  ASSERT_FALSE(r2.ok());
  EXPECT_EQ(r2.status().code(), Code::kInterrupted) << r2.status().ToString();
  // Still usable.
  EXPECT_EQ(QE("[:find (count ?e) . :where [?e :item/n _]]"), "2");
  EXPECT_TRUE(store_->transact(R"([{:item/name "z" :item/n 3}])").ok());
  EXPECT_EQ(QE("[:find (count ?e) . :where [?e :item/n _]]"), "3");
}

TEST_F(EngineTest, TimeoutFromQueryAndOptions) {
  std::string heavy =
      "[:find (count ?a) . :where [(ground [1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20]) "
      "[?a ...]] [?e1 :item/n] [?e2 :item/n] [?x ?y ?z] [?p ?q ?r] [?s ?t ?u] [(+ ?a 1) ?b] "
      ":timeout 50]";
  auto r = Q(heavy);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInterrupted);
  EXPECT_NE(r.status().message().find("timed out after 50 ms"), std::string::npos)
      << r.status().message();
  std::string heavy2 = heavy.substr(0, heavy.find(" :timeout")) + "]";
  auto r2 = Q(heavy2, {}, [](ExecContext& ctx) { ctx.timeout_ms = 30; });
  ASSERT_FALSE(r2.ok());
  EXPECT_NE(r2.status().message().find("timed out after 30 ms"), std::string::npos);
  EXPECT_EQ(QE("[:find (count ?e) . :where [?e :item/n _]]"), "2");
}

TEST_F(EngineTest, RecursiveRuleOnALongChainIsInterruptible) {
  Tx(R"([{:db/ident :node/next :db/valueType :db.type/ref :db/cardinality :db.cardinality/one}
         {:db/ident :node/end :db/valueType :db.type/boolean :db/cardinality :db.cardinality/one}])");
  // The last node has a datom of its own (a tempid used only as a value names nothing).
  std::string tx = "[{:db/id \"n400\" :node/end true}";
  for (int i = 0; i < 400; ++i)
    tx += "{:db/id \"n" + std::to_string(i) + "\" :node/next \"n" + std::to_string(i + 1) + "\"}";
  Tx(tx + "]");
  const char* rules =
      "[[(reach ?a ?b) [?a :node/next ?b]] [(reach ?a ?b) [?a :node/next ?c] (reach ?c ?b)]]";
  // 400 * 401 / 2 pairs: no depth cap.
  EXPECT_EQ(QE("[:find (count ?p) . :in $ % :where (reach ?a ?b) [(tuple ?a ?b) ?p]]", {V(rules)}),
            "80200");
  auto r = Q("[:find (count ?p) . :in $ % :where (reach ?a ?b) [(tuple ?a ?b) ?p]]", {V(rules)},
             [](ExecContext& ctx) { ctx.start_gen = ctx.interrupt_gen->load() + 1; });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInterrupted);
}

TEST_F(EngineTest, PreparedQueryRunsManyTimesWithDifferentInputs) {
  auto p = Prepared::Parse("[:find ?n . :in $ ?v :where [?e :item/n ?v] [?e :item/name ?n]]");
  ASSERT_TRUE(p.ok());
  for (int round = 0; round < 3; ++round) {
    for (auto [n, name] : {std::pair{1, "\"x\""}, std::pair{2, "\"y\""}, std::pair{3, "nil"}}) {
      auto r = With<QueryResult>(
          {}, [&](const ExecContext& ctx) { return (*p)->Execute(ctx, {edn::Value::Int(n)}); });
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      EXPECT_EQ(edn::Print(r->ToEdn()), name);
    }
  }
  // A schema change (new generation) gets a new plan.
  Tx(R"([{:db/ident :item/m :db/valueType :db.type/long :db/cardinality :db.cardinality/one}])");
  auto r = With<QueryResult>(
      {}, [&](const ExecContext& ctx) { return (*p)->Execute(ctx, {edn::Value::Int(2)}); });
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(edn::Print(r->ToEdn()), "\"y\"");
}

TEST_F(EngineTest, PullFindElementsGoThroughTheHook) {
  EXPECT_EQ(QE("[:find (pull ?e [:item/name]) . :where [?e :item/n 1]]"),
            "error: pull is not supported yet");
  std::vector<Entid> seen;
  auto hook = [&](ExecContext& ctx) {
    ctx.pull = [&](const DbView& v, const edn::Value& pattern, Entid e) -> Result<edn::Value> {
      seen.push_back(e);
      EXPECT_FALSE(v.as_of.has_value());
      return edn::Value::Vector({pattern, edn::Value::Int(e)});
    };
  };
  auto r = Q("[:find (pull ?e [:item/name]) ?n :where [?e :item/n ?n] [(= ?n 1)]]", {}, hook);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->rows.size(), 1u);
  EXPECT_EQ(edn::Print(r->rows[0][0]), "[[:item/name] " + std::to_string(seen.at(0)) + "]");
  EXPECT_EQ(r->columns[0], "(pull ?e [:item/name])");
  // The batched hook gets every entity of the result at once.
  std::vector<size_t> batches;
  auto many = [&](ExecContext& ctx) {
    ctx.pull_many = [&](const DbView&, const edn::Value&, const std::vector<Entid>& eids,
                        const std::function<Status()>&,
                        const std::vector<PulledDatom>*) -> Result<std::vector<edn::Value>> {
      batches.push_back(eids.size());
      std::vector<edn::Value> out;
      for (Entid e : eids) out.push_back(edn::Value::Int(-e));
      return out;
    };
  };
  auto rm = Q("[:find [(pull ?e [*]) ...] :where [?e :item/n]]", {}, many);
  ASSERT_TRUE(rm.ok()) << rm.status().ToString();
  ASSERT_EQ(batches, std::vector<size_t>{2});
  EXPECT_LT(rm->rows[0][0].as_int(), 0);
  // The pattern can be an input.
  auto r2 = Q("[:find [(pull ?e ?p) ...] :in $ ?p :where [?e :item/n]]", {V("[*]")}, hook);
  ASSERT_TRUE(r2.ok()) << r2.status().ToString();
  EXPECT_EQ(r2->rows.size(), 2u);
}

TEST_F(EngineTest, RegexLiteralsInQueryText) {
  // #"re" reads as (clojure.core/re-pattern "re"): its pattern string.
  auto p = Prepared::Parse(R"([:find ?n :where [?e :item/name ?n] [(re-find #"^x" ?n)]])");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto r = With<QueryResult>({}, [&](const ExecContext& ctx) { return (*p)->Execute(ctx, {}); });
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(edn::Print(r->ToEdn()), R"([["x"]])");
  EXPECT_EQ(QE(R"([:find ?n :where [?e :item/name ?n] [(re-matches #"[xy]" ?n) ?m]])"),
            R"([["x"] ["y"]])");
  EXPECT_NE(QE(R"([:find ?n :where [?e :item/name ?n] [(re-find #"(" ?n)]])")
                .find("invalid regular expression"),
            std::string::npos);
}

// Regexes over long stored strings (std::regex recursed once per character and crashed
// on 40 KB) and patterns that backtrack exponentially run in linear time; a pattern given
// as an input is compiled once per statement.
TEST_F(EngineTest, RegexesOverLongStringsRunInLinearTime) {
  Tx("[{:db/ident :doc/body :db/valueType :db.type/string :db/cardinality :db.cardinality/one}]");
  for (size_t n : {size_t{40000}, size_t{1} << 20})
    Tx("[{:doc/body \"" + std::string(n, 'a') + "\"}]");
  EXPECT_EQ(QE(R"([:find (count ?b) . :where [_ :doc/body ?b] [(re-find "(a|b)*c" ?b)]])"), "nil");
  EXPECT_EQ(QE(R"([:find (count ?b) . :where [_ :doc/body ?b] [(re-matches "(a|b)*" ?b)]])"), "2");
  EXPECT_EQ(
      QE(R"([:find (count ?b) . :where [_ :doc/body ?b] [(re-pattern "(a*)*b") ?re] [(re-find ?re ?b)]])"),
      "nil");
  auto r = Q("[:find (count ?b) . :in $ ?p :where [_ :doc/body ?b] [(re-find ?p ?b)]]",
             {edn::Value::String("^a{3}")});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(edn::Print(r->ToEdn()), "2");
  auto bad = Q("[:find ?b :in $ ?p :where [_ :doc/body ?b] [(re-find ?p ?b)]]",
               {edn::Value::String("(?=a)")});
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("look-around is not supported"), std::string::npos)
      << bad.status().ToString();
}

// Queries too large to run are refused as they are parsed, with the limit they passed
// (5,000 repeated clauses took 254 MB and 20,000 took 3.6 GB and 37 s before SQLite
// refused); a query at the limits runs in bounded time.
TEST_F(EngineTest, QuerySizeLimitsAreCheckedUpFront) {
  auto repeat = [](const std::string& clause, int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += clause + " ";
    return s;
  };
  auto t0 = std::chrono::steady_clock::now();
  for (int n : {5000, 20000}) {
    auto r = Q("[:find ?e :where [?e :item/n ?v] " + repeat("[(> ?v 0)]", n) + "]");
    ASSERT_FALSE(r.ok()) << n;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    EXPECT_NE(r.status().message().find("the query has more than 500 clauses"), std::string::npos)
        << r.status().ToString();
  }
  std::string patterns;
  for (int i = 0; i < 70; ++i) patterns += "[?e :item/n ?v" + std::to_string(i) + "] ";
  auto wide = Q("[:find ?e :where " + patterns + "]");
  ASSERT_FALSE(wide.ok());
  EXPECT_NE(wide.status().message().find("more than 64 data patterns joined in one conjunction of "
                                         ":where (SQLite joins at most 64 tables in one SELECT)"),
            std::string::npos)
      << wide.status().ToString();
  EXPECT_NE(wide.status().message().find("at 1:"), std::string::npos) << wide.status().ToString();
  // Nesting (here of not) is bounded too.
  std::string nested = "[?e :item/n _]";
  for (int i = 0; i < 40; ++i) nested = "(not " + nested + ")";
  auto deep = Q("[:find ?e :where [?e :item/n _] " + nested + "]");
  ASSERT_FALSE(deep.ok());
  EXPECT_NE(deep.status().message().find("clauses nested deeper than 32 levels"), std::string::npos)
      << deep.status().ToString();
  // Rules that call each other twice at each of 20 levels would expand to 2^20 bodies.
  std::string rules = "[[(r0 ?e) [?e :item/n _]]";
  for (int i = 1; i <= 20; ++i)
    rules += " [(r" + std::to_string(i) + " ?e) (r" + std::to_string(i - 1) + " ?e) (r" +
             std::to_string(i - 1) + " ?e)]";
  rules += "]";
  auto wide_rules = Q("[:find ?e :in $ % :where (r20 ?e)]", {edn::Value::String(rules)});
  ASSERT_FALSE(wide_rules.ok());
  EXPECT_NE(wide_rules.status().message().find("the query expands to more than 10000 clauses"),
            std::string::npos)
      << wide_rules.status().ToString();
  // Up to the limits, a query runs: 64 patterns and 430 more clauses (SQLite's expression
  // depth, 1000, bounds the clauses of one SELECT).
  std::string at_limit;
  for (int i = 0; i < 64; ++i) at_limit += "[?e :item/n ?v" + std::to_string(i) + "] ";
  at_limit += repeat("[(> ?v0 -1)]", 430);
  auto ok = Q("[:find (count ?e) . :where " + at_limit + "]");
  EXPECT_TRUE(ok.ok()) << ok.status().ToString().substr(0, 300);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
}

// Item 7 of the engine's design: a function's value is computed once per row, not once
// for the row's filter and again for the result column.
TEST_F(EngineTest, ExpressionsAreWrittenOncePerRow) {
  auto count = [](const std::string& hay, const std::string& needle) {
    size_t n = 0;
    for (size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) ++n;
    return n;
  };
  // get-else is never nil (a nil default is refused), so nothing filters on it.
  std::string q = "[:find ?x ?n :where [?x :item/name] [(get-else $ ?x :item/n -1) ?n]]";
  auto ex = ExplainQ(q);
  ASSERT_TRUE(ex.ok()) << ex.status().ToString();
  std::string sql = ex->substr(ex->find("sql:"));
  sql = sql.substr(0, sql.find('\n', 5));
  EXPECT_EQ(count(sql, "COALESCE"), 1u) << sql;
  auto r = Q("[:find ?n . :where [?x :item/name \"y\"] [(get-else $ ?x :item/n -1) ?n]]");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(edn::Print(r->ToEdn()), "2");
  // A string predicate (re-find) is tested by one call per row.
  auto re = ExplainQ("[:find ?m :where [?x :item/name ?m] [(re-find \"^x\" ?m)]]");
  ASSERT_TRUE(re.ok()) << re.status().ToString();
  std::string re_sql = re->substr(re->find("sql:"));
  re_sql = re_sql.substr(0, re_sql.find('\n', 5));
  EXPECT_EQ(count(re_sql, "mentat_re_find("), 1u) << re_sql;
}

TEST_F(EngineTest, ResultShapesAndColumns) {
  auto r = Q("[:find ?n (count ?e) :where [?e :item/name ?n]]");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->shape, QueryResult::Shape::kRelation);
  ASSERT_EQ(r->columns.size(), 2u);
  EXPECT_EQ(r->columns[1], "(count ?e)");
  auto c = Q("[:find [?n ...] :where [_ :item/name ?n]]");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->shape, QueryResult::Shape::kCollection);
  auto t = Q("[:find [?n ?v] :where [?e :item/name ?n] [?e :item/n ?v] [(= ?v 5)]]");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->shape, QueryResult::Shape::kTuple);
  EXPECT_TRUE(t->ToEdn().is_nil());
}

TEST_F(EngineTest, QueryAsValueAndAsString) {
  auto r = With<QueryResult>({}, [&](const ExecContext& ctx) {
    return query::Run(ctx, V("{:find [?n .] :where [[?e :item/n 2] [?e :item/name ?n]]}"), {});
  });
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(edn::Print(r->ToEdn()), "\"y\"");
  EXPECT_EQ(QE(R"("[:find ?n . :where [?e :item/n 1] [?e :item/name ?n]]")"), "\"x\"");
}

TEST(OptionsFromJson, ShapesAndErrors) {
  auto o = options_from_json(
      "[:find ?e :in $ ?a [?b ...] [?c ?d] [[?x ?y]] % :where [?e :a/b ?a]]",
      R"({"inputs": [1, [":k/w", "s"], [1.5, true], [[1, 2]], "[[(r ?x) [?x :a/b _]]]"],
          "asOf": 5, "since": "2025-01-01T00:00:00Z", "history": true, "timeout": 9,
          "planner": false})");
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  ASSERT_EQ(o->inputs.size(), 5u);
  EXPECT_EQ(edn::Print(o->inputs[0].value), "1");
  EXPECT_EQ(edn::Print(o->inputs[1].value), "[:k/w \"s\"]");
  EXPECT_EQ(edn::Print(o->inputs[2].value), "[1.5 true]");
  EXPECT_EQ(edn::Print(o->inputs[3].value), "[[1 2]]");
  EXPECT_TRUE(o->inputs[4].value.is_vector());
  EXPECT_EQ(*o->as_of->tx, 5);
  EXPECT_TRUE(o->since->instant_micros.has_value());
  EXPECT_TRUE(o->history);
  EXPECT_EQ(*o->timeout_ms, 9);
  EXPECT_FALSE(o->use_planner);
  EXPECT_TRUE(options_from_json("[:find ?e :where [?e :a/b]]", "").ok());
  auto bad = options_from_json("[:find ?e :where [?e :a/b]]", R"({"asof": 1})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Code::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("unknown option \"asof\""), std::string::npos);
  EXPECT_FALSE(options_from_json("[:find ?e :where [?e :a/b]]", "{").ok());
  EXPECT_FALSE(
      options_from_json("[:find ?e :in $ [?a ?b] :where [?e :a/b]]", R"({"inputs": [[1]]})").ok());
}

}  // namespace
}  // namespace mentat::query::testing
