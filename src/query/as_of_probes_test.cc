// As-of probes (plan.cc UseAsOfProbes): an as-of pattern of a cardinality-one attribute
// whose entity is already found reads its value as one scalar subquery over datoms and
// history. Every answer equals the arm-per-table plan's (the planner off) and the truth.
#include <set>

#include "query/query_test_util.h"

namespace mentat::query::testing {
namespace {

class AsOfProbes : public QueryTest {
 protected:
  void SetUp() override {
    QueryTest::SetUp();
    Tx(R"([{:db/ident :p/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
 {:db/ident :p/score :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
 {:db/ident :p/tag :db/valueType :db.type/keyword :db/cardinality :db.cardinality/many}
 {:db/ident :p/friend :db/valueType :db.type/ref :db/cardinality :db.cardinality/one :db/index true}])");
    std::string tx = "[";
    for (int i = 0; i < 30; ++i)
      tx += "{:db/id \"p" + std::to_string(i) + "\" :p/name \"p" + std::to_string(i) +
            "\" :p/score " + std::to_string(i) + " :p/tag [:t/a :t/b]" +
            (i ? " :p/friend \"p" + std::to_string(i % 3) + "\"" : "") + "}";
    for (const auto& [k, e] : TxIds(tx + "]")) id_[std::stoi(k.substr(1))] = e;
    t_.push_back(LastTx());
    // Renamed, a score retracted, a friend changed.
    t_.push_back(Tx("[[:db/add " + E(3) + " :p/name \"q3\"] [:db/retract " + E(6) + " :p/score 6]" +
                    "[:db/add " + E(9) + " :p/friend " + E(1) + "] [:db/retract " + E(3) +
                    " :p/tag :t/a]]"));
    // The old name back, the score back with another value, a friend retracted.
    t_.push_back(Tx("[[:db/add " + E(3) + " :p/name \"p3\"] [:db/add " + E(6) + " :p/score 60]" +
                    "[:db/retract " + E(12) + " :p/friend " + E(0) + "]]"));
    t_.push_back(
        Tx("[[:db/add " + E(3) + " :p/name \"r3\"] [:db/add " + E(15) + " :p/score 150]]"));
  }

  std::string E(int i) { return std::to_string(id_[i]); }
  Entid LastTx() {
    auto r = Q("[:find (max ?t) . :where [_ :db/txInstant _ ?t]]");
    return r.ok() && !r->rows.empty() ? r->rows[0][0].as_int() : 0;
  }

  // The rows as of `t`, checked against the planner-off run.
  std::set<std::vector<edn::Value>> AsOf(const std::string& q, Entid t, std::vector<Input> in) {
    auto on = Q(q, in, [&](ExecContext& c) { c.view.as_of = t; });
    auto off = Q(q, in, [&](ExecContext& c) {
      c.view.as_of = t;
      c.use_planner = false;
    });
    EXPECT_TRUE(on.ok()) << on.status().ToString();
    EXPECT_TRUE(off.ok()) << off.status().ToString();
    if (!on.ok() || !off.ok()) return {};
    std::set<std::vector<edn::Value>> a(on->rows.begin(), on->rows.end()),
        b(off->rows.begin(), off->rows.end());
    EXPECT_EQ(a.size(), on->rows.size()) << "duplicate rows as of " << t;
    EXPECT_EQ(a, b) << q << " as of " << t;
    return a;
  }

  std::map<int, Entid> id_;
  std::vector<Entid> t_;
};

TEST_F(AsOfProbes, FriendsNamesAndScoresAtEveryPoint) {
  const std::string q =
      "[:find ?p ?n ?s :in $ ?f :where [?p :p/friend ?f] [?p :p/name ?n] [?p :p/score ?s]]";
  auto ex = ExplainQ(q, {edn::Value::Int(id_[0])}, [&](ExecContext& c) { c.view.as_of = t_[1]; });
  ASSERT_TRUE(ex.ok()) << ex.status().ToString();
  EXPECT_NE(ex->find("as of t, one scalar read by t"), std::string::npos) << *ex;
  auto row = [&](int i, const std::string& n, int64_t s) {
    return std::vector<edn::Value>{edn::Value::Int(id_[i]), edn::Value::String(n),
                                   edn::Value::Int(s)};
  };
  for (size_t k = 0; k < t_.size(); ++k) {
    // Friends of p0: i % 3 == 0, i > 0; p9 leaves at t_[1], p12 at t_[2].
    std::set<std::vector<edn::Value>> truth;
    for (int i = 3; i < 30; i += 3) {
      if ((i == 12 && k >= 2) || (i == 9 && k >= 1)) continue;
      std::string name = "p" + std::to_string(i);
      if (i == 3) name = k == 1 ? "q3" : k == 3 ? "r3" : "p3";
      int64_t score = i == 15 && k == 3 ? 150 : i;
      if (i == 6 && k == 1) continue;  // no score then
      if (i == 6 && k >= 2) score = 60;
      truth.insert(row(i, name, score));
    }
    EXPECT_EQ(AsOf(q, t_[k], {edn::Value::Int(id_[0])}), truth) << "as of point " << k;
  }
  // p9 moved from p0's friends to p1's at t_[1].
  auto of1 = AsOf(q, t_[1], {edn::Value::Int(id_[1])});
  EXPECT_TRUE(of1.count(row(9, "p9", 9)));
  EXPECT_FALSE(AsOf(q, t_[0], {edn::Value::Int(id_[1])}).count(row(9, "p9", 9)));
}

TEST_F(AsOfProbes, ManyValuedAndBlankValuesAndTheCurrentDatabase) {
  // :p/tag is cardinality-many (arms as before); `_` only asks that a value exists.
  const std::string tags =
      "[:find ?p ?t :in $ ?f :where [?p :p/friend ?f] [?p :p/tag ?t] [?p :p/score _]]";
  for (Entid t : t_) {
    auto rows = AsOf(tags, t, {edn::Value::Int(id_[0])});
    EXPECT_FALSE(rows.empty());
  }
  auto at1 = AsOf(tags, t_[1], {edn::Value::Int(id_[0])});
  EXPECT_FALSE(at1.count({edn::Value::Int(id_[3]), *edn::Read(":t/a")}));
  EXPECT_FALSE(at1.count({edn::Value::Int(id_[6]), *edn::Read(":t/a")})) << "p6 had no score";
  EXPECT_TRUE(at1.count({edn::Value::Int(id_[9]), *edn::Read(":t/b")}) == 0);
  // Without as-of nothing changes.
  auto now =
      Q("[:find ?n . :in $ ?p :where [?p :p/friend _] [?p :p/name ?n]]", {edn::Value::Int(id_[3])});
  ASSERT_TRUE(now.ok());
  EXPECT_EQ(edn::Print(now->ToEdn()), "\"r3\"");
}

}  // namespace
}  // namespace mentat::query::testing
