// Maintained per-value counts (value_counts.h) give exactly the query engine's answer:
// every check runs the query twice, once through the counts and once with the planner off
// (which also turns the counts path off), and compares the two as sets.
#include "store/value_counts.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "mentat/store.h"

namespace mentat {
namespace {

const char* kSchema = R"([
  {:db/ident :t/state :db/valueType :db.type/keyword :db/cardinality :db.cardinality/one :db/index true}
  {:db/ident :t/tag :db/valueType :db.type/string :db/cardinality :db.cardinality/many}
  {:db/ident :t/owner :db/valueType :db.type/ref :db/cardinality :db.cardinality/one}
  {:db/ident :t/seen :db/valueType :db.type/long :db/cardinality :db.cardinality/one :db/noHistory true}])";

std::set<std::string> Rows(const QueryResult& r) {
  std::set<std::string> out;
  for (const auto& row : r.rows) {
    std::string s;
    for (const auto& v : row) s += edn::Print(v) + " ";
    out.insert(s);
  }
  return out;
}

class ValueCountsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/mentat-counts-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
    auto s = Store::open(dir_ + "/s.db");
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
    ASSERT_TRUE(store_->transact(kSchema).ok());
  }
  void TearDown() override {
    store_.reset();
    std::system(("rm -rf " + dir_).c_str());
  }
  void Tx(const std::string& edn) {
    auto r = store_->transact(edn);
    ASSERT_TRUE(r.ok()) << r.status().ToString() << " in " << edn;
  }
  // The counted answer, after checking it against the ordinary query path.
  std::set<std::string> Check(const std::string& q) {
    auto fast = store_->q(q);
    EXPECT_TRUE(fast.ok()) << fast.status().ToString();
    QueryOptions slow_opts;
    slow_opts.use_planner = false;
    auto slow = store_->q(q, slow_opts);
    EXPECT_TRUE(slow.ok()) << slow.status().ToString();
    if (!fast.ok() || !slow.ok()) return {};
    EXPECT_EQ(fast->columns, slow->columns) << q;
    EXPECT_EQ(Rows(*fast), Rows(*slow)) << q;
    return Rows(*fast);
  }

  std::string dir_;
  std::unique_ptr<Store> store_;
};

TEST_F(ValueCountsTest, CountsFollowAssertionsAndRetractions) {
  const std::string q = "[:find ?s (count ?e) :where [?e :t/state ?s]]";
  Tx(R"([{:db/id "a" :t/state :open} {:db/id "b" :t/state :open} {:db/id "c" :t/state :done}])");
  EXPECT_EQ(Check(q), (std::set<std::string>{":done 1 ", ":open 2 "}));
  // A card-one change retracts the old value; a retraction removes it; a value whose
  // count drops to zero disappears.
  auto e = store_->q("[:find ?e . :where [?e :t/state :done]]");
  ASSERT_TRUE(e.ok());
  std::string done = edn::Print(e->rows[0][0]);
  Tx("[[:db/add " + done + " :t/state :open]]");
  EXPECT_EQ(Check(q), (std::set<std::string>{":open 3 "}));
  Tx("[[:db/retract " + done + " :t/state :open]]");
  EXPECT_EQ(Check(q), (std::set<std::string>{":open 2 "}));
  // Asserted and retracted between two calls: nets out.
  Tx(R"([{:db/id "x" :t/state :tmp}])");
  auto x = store_->q("[:find ?e . :where [?e :t/state :tmp]]");
  ASSERT_TRUE(x.ok());
  Tx("[[:db/retractEntity " + edn::Print(x->rows[0][0]) + "]]");
  EXPECT_EQ(Check(q), (std::set<std::string>{":open 2 "}));
  // Either order of the find elements, and count-distinct.
  EXPECT_EQ(Check("[:find (count ?e) ?s :where [?e :t/state ?s]]"),
            (std::set<std::string>{"2 :open "}));
  EXPECT_EQ(Check("[:find ?s (count-distinct ?e) :where [?e :t/state ?s]]"),
            (std::set<std::string>{":open 2 "}));
}

TEST_F(ValueCountsTest, CardinalityManyRefsAndNoHistory) {
  Tx(R"([{:db/id "u" :db/ident :u/one}
         {:db/id "a" :t/tag ["x" "y"] :t/owner "u" :t/seen 1}
         {:db/id "b" :t/tag ["x"] :t/owner "u" :t/seen 1}])");
  EXPECT_EQ(Check("[:find ?t (count ?e) :where [?e :t/tag ?t]]"),
            (std::set<std::string>{"\"x\" 2 ", "\"y\" 1 "}));
  Check("[:find ?o (count ?e) :where [?e :t/owner ?o]]");
  EXPECT_EQ(Check("[:find ?v (count ?e) :where [?e :t/seen ?v]]"), (std::set<std::string>{"1 2 "}));
  // :db/noHistory keeps no retraction intervals: the counts are recounted, not updated.
  auto b = store_->q("[:find ?e . :where [?e :t/tag \"x\"] (not [?e :t/tag \"y\"])]");
  ASSERT_TRUE(b.ok());
  Tx("[[:db/add " + edn::Print(b->rows[0][0]) + " :t/seen 2]]");
  EXPECT_EQ(Check("[:find ?v (count ?e) :where [?e :t/seen ?v]]"),
            (std::set<std::string>{"1 1 ", "2 1 "}));
  Tx("[[:db/retract " + edn::Print(b->rows[0][0]) + " :t/tag \"x\"]]");
  EXPECT_EQ(Check("[:find ?t (count ?e) :where [?e :t/tag ?t]]"),
            (std::set<std::string>{"\"x\" 1 ", "\"y\" 1 "}));
}

TEST_F(ValueCountsTest, SeesOtherConnectionsWritesAndSchemaChanges) {
  const std::string q = "[:find ?s (count ?e) :where [?e :t/state ?s]]";
  Tx(R"([{:t/state :open}])");
  EXPECT_EQ(Check(q), (std::set<std::string>{":open 1 "}));
  {
    // A second store object (another connection, as another process would be).
    auto other = Store::open(dir_ + "/s.db");
    ASSERT_TRUE(other.ok());
    ASSERT_TRUE((*other)->transact(R"([{:t/state :open} {:t/state :new}])").ok());
  }
  EXPECT_EQ(Check(q), (std::set<std::string>{":new 1 ", ":open 2 "}));
  // Renaming the attribute: the old ident no longer names it.
  Tx("[{:db/id :t/state :db/ident :t/status}]");
  EXPECT_EQ(Check("[:find ?s (count ?e) :where [?e :t/status ?s]]"),
            (std::set<std::string>{":new 1 ", ":open 2 "}));
  EXPECT_FALSE(store_->q(q).ok());
}

TEST_F(ValueCountsTest, OnlyTheExactShapeIsCounted) {
  Tx(R"([{:t/state :open :t/seen 1}])");
  // Explain names the counts for the exact shape, and not otherwise.
  auto ex = store_->q_explain("[:find ?s (count ?e) :where [?e :t/state ?s]]");
  ASSERT_TRUE(ex.ok());
  EXPECT_NE(ex->find("maintained per-value counts of :t/state"), std::string::npos) << *ex;
  for (const char* q : {
           "[:find ?s (count ?e) :with ?e :where [?e :t/state ?s]]",
           "[:find ?s (count ?e) :where [?e :t/state ?s] [?e :t/seen 1]]",
           "[:find ?s (sum ?e) :where [?e :t/state ?s]]",
           "[:find ?s (count ?s) :where [?e :t/state ?s]]",
           "[:find [?s (count ?e)] :where [?e :t/state ?s]]",
       }) {
    auto e = store_->q_explain(q);
    if (!e.ok()) continue;  // some of these are errors; none may take the counts path
    EXPECT_EQ(e->find("maintained per-value counts"), std::string::npos) << q;
  }
  // As of an earlier transaction, the ordinary path answers.
  auto t = store_->last_tx();
  ASSERT_TRUE(t.ok());
  Tx(R"([{:t/state :open}])");
  QueryOptions o;
  o.as_of = TxPoint::Tx(*t);
  auto r = store_->q("[:find ?s (count ?e) :where [?e :t/state ?s]]", o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Rows(*r), (std::set<std::string>{":open 1 "}));
  EXPECT_EQ(Check("[:find ?s (count ?e) :where [?e :t/state ?s]]"),
            (std::set<std::string>{":open 2 "}));
}

}  // namespace
}  // namespace mentat
