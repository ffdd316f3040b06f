// The SQL dialect (dialect.h): what the compiler writes that is not portable SQL comes from
// the ExecContext's Dialect. A dialect without SQLite's tricks (no order-pinning CROSS
// JOIN, no INDEXED BY, no affinity-free `+x`) changes the SQL of every construct that uses
// them, and no answer.
#include "query/dialect.h"

#include <algorithm>
#include <set>

#include "query/query_test_util.h"

namespace mentat::query::testing {
namespace {

class PlainDialect : public Dialect {
 public:
  const char* name() const override { return "plain"; }
  std::string IndexTest(bool value_indexed) const override {
    return SqliteDialect().IndexTest(value_indexed);
  }
  Expr EqValue(const Expr& v, const Expr& x) const override { return v + " = " + x; }
  Expr NoAffinity(const Expr& x) const override { return x; }
  const char* PinnedJoin() const override { return " JOIN "; }
  std::string IndexHint(const std::string&) const override { return ""; }
  std::string RelationTable(const std::string& param) const override {
    return SqliteDialect().RelationTable(param);
  }
  // Other spellings SQLite also reads, so that the SQL differs and the answers must not.
  std::string Call(Fn fn, const std::vector<std::string>& args) const override {
    called.insert(fn);
    if (fn == Fn::kNe) return Infix("!=", args);
    if (fn == Fn::kIsNot) return "NOT (" + args[0] + " IS " + args[1] + ")";
    if (fn == Fn::kLength) return Function("LENGTH", args);
    if (fn == Fn::kCoalesce) return Function("ifnull", args);
    return SqliteDialect().Call(fn, args);
  }
  std::string NamedOrder(const std::string& x) const override {
    return SqliteDialect().NamedOrder(x);
  }
  mutable std::set<Fn> called;
};

// A dialect whose value column meets integer columns through Fn::kEqIntValue (as
// PostgreSQL's does), each form spelled apart and recorded.
class IntValueDialect : public PlainDialect {
 public:
  Expr EqIntegerValue(const Expr& v, const Expr& x) const override {
    return Expr::Call(Fn::kEqIntValue, {v, x});
  }
  std::string Call(Fn fn, const std::vector<std::string>& args) const override {
    if (fn == Fn::kEqIntValue) forms.push_back("both");
    if (fn == Fn::kEqIntValueByValue) forms.push_back("by value");
    if (fn == Fn::kEqIntValueByB) forms.push_back("by entity");
    if (fn == Fn::kEqIntValue)
      return "(" + args[0] + " = " + args[1] + " AND " + args[1] + " = " + args[0] + ")";
    if (fn == Fn::kEqIntValueByValue) return "(" + args[0] + " = " + args[1] + ")";
    if (fn == Fn::kEqIntValueByB) return "(" + args[1] + " = " + args[0] + ")";
    return PlainDialect::Call(fn, args);
  }
  mutable std::vector<std::string> forms;
};

class DialectTest : public QueryTest {
 protected:
  void SetUp() override {
    QueryTest::SetUp();
    Tx(R"([{:db/ident :n/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one
            :db/unique :db.unique/identity}
           {:db/ident :n/next :db/valueType :db.type/ref :db/cardinality :db.cardinality/many}
           {:db/ident :n/k :db/valueType :db.type/long :db/cardinality :db.cardinality/one}])");
    Tx(R"([{:db/id "a" :n/name "a" :n/k 1 :n/next "b"} {:db/id "b" :n/name "b" :n/k 2 :n/next "c"}
           {:db/id "c" :n/name "c" :n/k 3 :n/next "a"} {:db/id "d" :n/name "d" :n/k 4}])");
    std::string many = "[";
    for (int i = 0; i < 200; ++i)
      many += "{:n/name \"x" + std::to_string(i) + "\" :n/next [:n/name \"d\"]}";
    Tx(many + "]");
    since_ = Tx(R"([[:db/add "e" :n/name "e"] [:db/add "e" :n/next [:n/name "a"]]])");
  }
  std::function<void(ExecContext&)> Plain() {
    return [this](ExecContext& c) { c.dialect = &plain_; };
  }
  // The answer as a sorted list of printed rows (relations come in no set order).
  std::vector<std::string> Rows(const std::string& q, std::vector<Input> in = {},
                                const std::function<void(ExecContext&)>& tweak = {}) {
    auto r = Q(q, std::move(in), tweak);
    EXPECT_TRUE(r.ok()) << q << ": " << r.status().ToString();
    std::vector<std::string> out;
    if (!r.ok()) return out;
    edn::Value v = r->ToEdn();
    if (!v.is_seq()) return {edn::Print(v)};
    for (const edn::Value& row : v.items()) out.push_back(edn::Print(row));
    std::sort(out.begin(), out.end());
    return out;
  }
  PlainDialect plain_;
  Entid since_ = 0;
};

TEST_F(DialectTest, TheDialectWritesTheSqlAndTheAnswersStay) {
  const char* kRules =
      "[[(reach ?a ?b) [?a :n/next ?b]] [(reach ?a ?b) [?a :n/next ?x] (reach ?x ?b)]]";
  const std::vector<std::string> queries = {
      // v = e joins (EqValue), a pinned join order.
      "[:find ?n2 :where [?a :n/name \"a\"] [?a :n/next ?b] [?b :n/name ?n2]]",
      "[:find ?n :where [?x :n/k ?k] [(> ?k 1)] (or [?x :n/next ?y] [?y :n/next ?x]) "
      "[?y :n/name ?n]]",
      "[:find (count ?x) . :where [?x :n/name] (not [?x :n/next _])]",
  };
  for (const std::string& q : queries) {
    auto sqlite = Rows(q);
    EXPECT_FALSE(sqlite.empty()) << q;
    EXPECT_EQ(Rows(q, {}, Plain()), sqlite) << q;
    auto ex = ExplainQ(q, {}, Plain());
    ASSERT_TRUE(ex.ok()) << ex.status().ToString();
    EXPECT_EQ(ex->find("CROSS JOIN"), std::string::npos) << *ex;
    EXPECT_EQ(ex->find("= +"), std::string::npos) << *ex;
  }
  auto native_ex = ExplainQ(queries[0]);
  ASSERT_TRUE(native_ex.ok());
  EXPECT_NE(native_ex->find("CROSS JOIN"), std::string::npos) << *native_ex;
  EXPECT_NE(native_ex->find("= +"), std::string::npos) << *native_ex;
  // A recursive rule (one WITH RECURSIVE statement: its columns without affinity).
  std::string rq = "[:find ?n :in $ % :where [?s :n/name \"a\"] (reach ?s ?t) [?t :n/name ?n]]";
  auto native = Rows(rq, {V(kRules)});
  EXPECT_EQ(native, (std::vector<std::string>{"[\"a\"]", "[\"b\"]", "[\"c\"]"}));
  EXPECT_EQ(Rows(rq, {V(kRules)}, Plain()), native);
  // A since view over few datoms reads the transaction index (an index hint in SQLite's).
  auto since = [&](ExecContext& c) { c.view.since = since_ - 1; };
  auto plain_since = [&](ExecContext& c) {
    since(c);
    c.dialect = &plain_;
  };
  std::string sq = "[:find ?n :where [?e :n/next ?x] [?e :n/name ?n]]";
  EXPECT_EQ(Rows(sq, {}, plain_since), (std::vector<std::string>{"[\"e\"]"}));
  EXPECT_EQ(Rows(sq, {}, since), Rows(sq, {}, plain_since));
  auto ex = ExplainQ(sq, {}, plain_since);
  ASSERT_TRUE(ex.ok());
  EXPECT_EQ(ex->find("INDEXED BY"), std::string::npos) << *ex;
  auto native_since = ExplainQ(sq, {}, since);
  ASSERT_TRUE(native_since.ok());
  EXPECT_NE(native_since->find("INDEXED BY datoms_tx"), std::string::npos) << *native_since;
}

TEST_F(DialectTest, TheDialectSpellsEveryOperatorAndFunction) {
  const std::vector<std::string> queries = {
      "[:find ?n :where [?x :n/name ?n] [(not= ?n \"a\")] [(starts-with? ?n \"x1\")]]",
      "[:find ?n ?s :where [?x :n/k ?k] [?x :n/name ?n] [(str ?n \"-\" ?k) ?s]]",
      "[:find ?n ?g :where [?x :n/name ?n] [(re-find #\"^[a-c]$\" ?n) ?g]]",
      "[:find ?n ?k :where [?x :n/name ?n] [(get-else $ ?x :n/k -1) ?k]]",
      "[:find ?n :where [?x :n/name ?n] [?x :n/k ?k] [(* ?k 2) ?d] [(> ?d 4)]]",
      "[:find ?n :where [?x :n/name ?n] [(ends-with? ?n \"9\")] [(count ?n) ?l] [(< ?l 3)]]",
      "[:find ?n :where [?x :n/name ?n] [(ends-with? ?n ?n)]]",        // a suffix not constant
      "[:find ?n :where [?x :n/name ?n] [(starts-with? ?n ?n)]]",      // a prefix not constant
      "[:find ?n :where [?x :n/name ?n] [(re-find #\"^[a-c]\" ?n)]]",  // a predicate
  };
  std::set<Fn> called;
  for (const std::string& q : queries) {
    auto sqlite = Rows(q);
    EXPECT_FALSE(sqlite.empty()) << q;
    plain_.called.clear();
    EXPECT_EQ(Rows(q, {}, Plain()), sqlite) << q;
    EXPECT_FALSE(plain_.called.empty()) << q;
    called.insert(plain_.called.begin(), plain_.called.end());
  }
  for (Fn fn :
       {Fn::kNe, Fn::kStartsWith, Fn::kReTest, Fn::kSubstr, Fn::kLength, Fn::kConcat, Fn::kCastText,
        Fn::kReFind, Fn::kCoalesce, Fn::kMul, Fn::kGt, Fn::kLt, Fn::kEq, Fn::kAnd, Fn::kOr})
    EXPECT_TRUE(called.count(fn)) << FnName(fn);
  auto ex = ExplainQ(queries[0], {}, Plain());
  ASSERT_TRUE(ex.ok()) << ex.status().ToString();
  EXPECT_NE(ex->find("!="), std::string::npos) << *ex;
  EXPECT_EQ(ex->find("<>"), std::string::npos) << *ex;
  auto ge = ExplainQ(queries[3], {}, Plain());
  ASSERT_TRUE(ge.ok());
  EXPECT_NE(ge->find("ifnull("), std::string::npos) << *ge;
  EXPECT_EQ(ge->find("COALESCE"), std::string::npos) << *ge;
}

// A join of a ref's value with an entity is written for the planned order: the later
// pattern found by its index, the condition stated once (an engine's planner would count
// both statements of it); in a subquery the enclosing pattern comes first. The answers are
// SQLite's.
TEST_F(DialectTest, AValueEntityJoinIsWrittenForThePlannedOrder) {
  IntValueDialect d;
  auto with = [&d](ExecContext& c) { c.dialect = &d; };
  struct Case {
    std::string query;
    std::vector<std::string> forms;
  } cases[] = {
      // a's name first (unique), then its :n/next datoms, then their names by entity.
      {"[:find ?n :where [?a :n/name \"a\"] [?a :n/next ?b] [?b :n/name ?n]]", {"by entity"}},
      // b's name first, then the datoms whose value is b: by value.
      {"[:find ?n :where [?b :n/name \"b\"] [?a :n/next ?b] [?a :n/name ?n]]", {"by value"}},
      // Inside the not, the enclosing ?a is found: the :n/next datom by its value.
      {"[:find ?n :where [?a :n/name ?n] (not [_ :n/next ?a])]", {"by value"}},
  };
  for (const Case& c : cases) {
    auto sqlite = Rows(c.query);
    EXPECT_FALSE(sqlite.empty()) << c.query;
    d.forms.clear();
    EXPECT_EQ(Rows(c.query, {}, with), sqlite) << c.query;
    EXPECT_EQ(d.forms, c.forms) << c.query;
  }
}

// On SQLite (every statement pinned) a ref value found by its value index is written
// `v = +e` alone; found the other way, or with the order unknown, both forms stay. The
// answers equal the affinity-free dialect's and the planner-off path's.
TEST_F(DialectTest, SqliteStatesAValueLookupOnce) {
  auto off = [](ExecContext& c) { c.use_planner = false; };
  struct Case {
    std::string query;
    bool single;
  } cases[] = {
      {"[:find ?n :where [?b :n/name \"b\"] [?a :n/next ?b] [?a :n/name ?n]]", true},
      {"[:find ?n :where [?a :n/name ?n] (not [_ :n/next ?a])]", true},
      {"[:find ?n :where [?a :n/name \"a\"] [?a :n/next ?b] [?b :n/name ?n]]", false},
  };
  for (const Case& c : cases) {
    auto ex = ExplainQ(c.query);
    ASSERT_TRUE(ex.ok()) << ex.status().ToString();
    std::string sql = ex->substr(ex->find("sql:"));
    EXPECT_NE(sql.find(".v = +"), std::string::npos) << sql;
    bool both = sql.find(".v = t") != std::string::npos;
    EXPECT_EQ(both, !c.single) << sql;
    auto native = Rows(c.query);
    EXPECT_FALSE(native.empty()) << c.query;
    EXPECT_EQ(Rows(c.query, {}, Plain()), native) << c.query;
    EXPECT_EQ(Rows(c.query, {}, off), native) << c.query;
  }
}

}  // namespace
}  // namespace mentat::query::testing
