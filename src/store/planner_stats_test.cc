// The planner's statistics (format 5, doc/format.md "attr_stats", "attr_values"): distinct
// entities give a cardinality-many attribute's values per entity, and the most common
// values give a constant's own count, so that a pattern on a rare value of a skewed
// attribute is placed first. The statistics follow transactions and excision, and the
// answers are those of the planner off.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "mentat/store.h"
#include "storage/format.h"

namespace mentat {
namespace {

class PlannerStatsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/mentat-stats-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
    Open();
    Tx(R"([{:db/ident :t/status :db/valueType :db.type/keyword :db/cardinality :db.cardinality/one :db/index true}
           {:db/ident :t/group :db/valueType :db.type/long :db/cardinality :db.cardinality/one :db/index true}
           {:db/ident :t/tag :db/valueType :db.type/string :db/cardinality :db.cardinality/many}])");
    // 1,000 entities: :t/status :common for 990, :rare for 10; :t/group 0-9, 100 each;
    // five tags each.
    std::string tx = "[";
    for (int i = 0; i < 1000; ++i) {
      tx += "{:t/status " + std::string(i % 100 == 0 ? ":rare" : ":common") + " :t/group " +
            std::to_string(i % 10) + " :t/tag [";
      for (int k = 0; k < 5; ++k) tx += "\"tag" + std::to_string((i + k) % 50) + "\" ";
      tx += "]}";
    }
    Tx(tx + "]");
  }
  void TearDown() override {
    store_.reset();
    std::system(("rm -rf " + dir_).c_str());
  }
  void Open() {
    store_.reset();
    auto s = Store::open(dir_ + "/s.db");
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
  }
  void Tx(const std::string& edn) {
    auto r = store_->transact(edn);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  // The join order lines of explain ("  1. t1 [?e :t/status :rare]  (est. 10 rows)": the
  // rows of the first step, then the rows each later step gives per row before it).
  std::vector<std::string> Order(const std::string& q) {
    auto e = store_->q_explain(q);
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    std::vector<std::string> out;
    if (!e.ok()) return out;
    size_t at = e->find("join order:\n");
    size_t end = e->find("optimizer passes:", at);
    if (at == std::string::npos || end == std::string::npos) return out;
    std::string block = e->substr(at + 12, end - at - 12);
    size_t p = 0;
    while (p < block.size()) {
      size_t nl = block.find('\n', p);
      out.push_back(block.substr(p, nl - p));
      p = nl == std::string::npos ? block.size() : nl + 1;
    }
    return out;
  }
  // The same rows with the planner on and off.
  void ExpectSameAnswer(const std::string& q) {
    QueryOptions off;
    off.use_planner = false;
    auto a = store_->q(q), b = store_->q(q, off);
    ASSERT_TRUE(a.ok() && b.ok()) << q;
    EXPECT_EQ(edn::Print(a->ToEdn()).size(), edn::Print(b->ToEdn()).size()) << q;
    std::multiset<std::string> ra, rb;
    for (const auto& r : a->rows) ra.insert(edn::Print(edn::Value::Vector(r)));
    for (const auto& r : b->rows) rb.insert(edn::Print(edn::Value::Vector(r)));
    EXPECT_EQ(ra, rb) << q;
  }
  std::vector<std::string> Raw(const std::string& sql) {
    sqlite3* db = nullptr;
    sqlite3_open((dir_ + "/s.db").c_str(), &db);
    sqlite3_stmt* st = nullptr;
    std::vector<std::string> out;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK)
      out.push_back(std::string("error: ") + sqlite3_errmsg(db));
    while (st && sqlite3_step(st) == SQLITE_ROW) {
      const unsigned char* t = sqlite3_column_text(st, 0);
      out.push_back(t ? reinterpret_cast<const char*>(t) : "NULL");
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return out;
  }
  std::string dir_;
  std::unique_ptr<Store> store_;
};

TEST_F(PlannerStatsTest, CountsDistinctEntitiesAndCommonValues) {
  EXPECT_EQ(Raw("SELECT i.v || ' ' || s.datoms || ' ' || s.distinct_values || ' ' || "
                "s.distinct_entities FROM attr_stats s JOIN datoms i ON i.e = s.a AND i.a = 1 "
                "WHERE i.v LIKE ':t/%' ORDER BY i.v"),
            (std::vector<std::string>{":t/group 1000 10 1000", ":t/status 1000 2 1000",
                                      ":t/tag 5000 50 1000"}));
  EXPECT_EQ(Raw("SELECT v.v || ' ' || v.datoms FROM attr_values v JOIN datoms i ON i.e = v.a "
                "AND i.a = 1 WHERE i.v = ':t/status' ORDER BY v.datoms DESC"),
            (std::vector<std::string>{":common 990", ":rare 10"}));
}

TEST_F(PlannerStatsTest, ARareConstantOfASkewedAttributeIsPlacedFirst) {
  // By distinct values alone, :t/status :rare would be 500 rows and :t/group 3 100.
  const std::string q = "[:find ?e :where [?e :t/group 3] [?e :t/status :rare]]";
  auto order = Order(q);
  ASSERT_EQ(order.size(), 2u);
  EXPECT_NE(order[0].find("[?e :t/status :rare]  (est. 10 rows)"), std::string::npos) << order[0];
  ExpectSameAnswer(q);
  // The common value is estimated at its own count, and the group goes first.
  order = Order("[:find ?e :where [?e :t/status :common] [?e :t/group 3]]");
  ASSERT_EQ(order.size(), 2u);
  EXPECT_NE(order[0].find("[?e :t/group 3]  (est. 100 rows)"), std::string::npos) << order[0];
  EXPECT_NE(order[1].find("[?e :t/status :common]  (est. 0.99 rows)"), std::string::npos)
      << order[1];
  // A value that is not common: an even share of what the common values leave (here none
  // are left: at least one row).
  order = Order("[:find ?e :where [?e :t/status :other] [?e :t/group 3]]");
  ASSERT_EQ(order.size(), 2u);
  EXPECT_NE(order[0].find("[?e :t/status :other]  (est. 1 rows)"), std::string::npos) << order[0];
}

TEST_F(PlannerStatsTest, ValuesPerEntityOfACardinalityManyAttribute) {
  // 5,000 tags over 1,000 entities: five per entity found (was "a few", four).
  auto order = Order("[:find ?e ?t :where [?e :t/group 3] [?e :t/tag ?t]]");
  ASSERT_EQ(order.size(), 2u);
  EXPECT_NE(order[1].find("[?e :t/tag ?t]  (est. 5 rows)"), std::string::npos) << order[1];
  ExpectSameAnswer("[:find ?e ?t :where [?e :t/group 3] [?e :t/tag ?t]]");
}

TEST_F(PlannerStatsTest, CommonValuesFollowTransactionsAndExcision) {
  // Doubling the attribute's datoms recounts: :rare becomes the most common value.
  std::string tx = "[";
  for (int i = 0; i < 1100; ++i) tx += "{:t/status :rare}";
  Tx(tx + "]");
  EXPECT_EQ(Raw("SELECT v.v || ' ' || v.datoms FROM attr_values v JOIN datoms i ON i.e = v.a "
                "AND i.a = 1 WHERE i.v = ':t/status' ORDER BY v.datoms DESC"),
            (std::vector<std::string>{":rare 1110", ":common 990"}));
  // Excising an entity removes its values from the common values too.
  auto e = store_->q("[:find ?e . :where [?e :t/tag \"tag7\"] [?e :t/group 7]]");
  ASSERT_TRUE(e.ok() && !e->rows.empty());
  Tx("[{:db/excise " + edn::Print(e->rows[0][0]) + "}]");
  EXPECT_EQ(Raw("SELECT count(*) FROM attr_values v JOIN datoms i ON i.e = v.a AND i.a = 1 "
                "WHERE i.v = ':t/group' AND v.v = 7"),
            std::vector<std::string>{"0"});
}

TEST_F(PlannerStatsTest, FormatFourUpgradesWithTheStatistics) {
  store_.reset();
  sqlite3* db = nullptr;
  sqlite3_open((dir_ + "/s.db").c_str(), &db);
  ASSERT_EQ(sqlite3_exec(db, storage::kDowngradeTo4ForTests, nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
  EXPECT_EQ(Raw("PRAGMA user_version"), std::vector<std::string>{"4"});
  Open();
  ASSERT_TRUE(store_);
  EXPECT_EQ(Raw("PRAGMA user_version"),
            std::vector<std::string>{std::to_string(storage::kFormatVersion)});
  EXPECT_EQ(Raw("SELECT s.distinct_entities FROM attr_stats s JOIN datoms i ON i.e = s.a AND "
                "i.a = 1 WHERE i.v = ':t/tag'"),
            std::vector<std::string>{"1000"});
  EXPECT_EQ(Raw("SELECT v.v || ' ' || v.datoms FROM attr_values v JOIN datoms i ON i.e = v.a "
                "AND i.a = 1 WHERE i.v = ':t/status' ORDER BY v.datoms DESC"),
            (std::vector<std::string>{":common 990", ":rare 10"}));
  auto check = store_->check();
  ASSERT_TRUE(check.ok());
  EXPECT_TRUE(check->ok()) << edn::Print(check->ToEdn());
  // The upgrade installed the tuple vocabulary (the system entities of format 5).
  auto t = store_->q("[:find ?t . :where [?a :db/ident :db/tupleAttrs] [?a :db/tupleType ?t]]");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(edn::Print(t->ToEdn()), ":db.type/keyword");
  // And those of format 6.
  auto f = store_->q("[:find ?t . :where [?a :db/ident :db/fn] [?a :db/valueType ?t]]");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(edn::Print(f->ToEdn()), std::to_string(ids::kTypeRef + 4));
}

}  // namespace
}  // namespace mentat
