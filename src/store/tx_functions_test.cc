// Transaction functions and predicates through the store (store/tx_functions.h): what the
// data-driven tx/functions.test cannot reach: with, scripts that transact calls, limits,
// in-memory and file stores, the database values functions see.
#include "store/tx_functions.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "mentat/script.h"
#include "mentat/store.h"
#include "store/store_test_util.h"

namespace mentat {
namespace {

constexpr const char* kSchema = R"tx([
  {:db/ident :c/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one
   :db/unique :db.unique/identity}
  {:db/ident :c/n :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
  {:db/ident :c/inc
   :db/fn "(fn [db e] [[:db/add e :c/n (inc (or (mentat.store/read db e :c/n) 0))]])"}
  {:db/ident :c/count-named
   :db/fn "(fn [db e] [[:db/add e :c/n (count (mentat.store/q db '[:find ?x :where [?x :c/name]]))]])"}
  {:db/ident :c/spin :db/fn "(fn [db] (loop [i 0] (recur (inc i))))"}
  {:db/ident :c/named? :db/fn "(fn [db e] (some? (mentat.store/read db e :c/name)))"}
  {:db/ident :c/spec :db.entity/preds [c/named?]}])tx";

class TxFunctionsTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    auto s = Store::open(GetParam() ? dir_.Path("s.db") : "");
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
    auto r = store_->transact(kSchema);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    r = store_->transact(R"([{:c/name "a" :c/n 0}])");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  int64_t N() {
    auto r = store_->q(R"([:find ?n . :where [?e :c/name "a"] [?e :c/n ?n]])");
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->ToEdn().as_int() : -1;
  }
  testing::TempDir dir_;
  std::unique_ptr<Store> store_;
};

TEST_P(TxFunctionsTest, CallsSeeTheDatabaseBeforeTheTransaction) {
  ASSERT_TRUE(store_->transact(R"([[:c/inc [:c/name "a"]]])").ok());
  EXPECT_EQ(N(), 1);
  // The new entity of the same transaction is not among the named ones the call counts.
  auto r = store_->transact(R"([{:c/name "b"} [:c/count-named [:c/name "a"]]])");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(N(), 1);
  ASSERT_TRUE(store_->transact(R"([[:c/count-named [:c/name "a"]]])").ok());
  EXPECT_EQ(N(), 2);
}

TEST_P(TxFunctionsTest, WithRunsFunctionsAndWritesNothing) {
  auto r = store_->with(R"([[:c/inc [:c/name "a"]]])");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  bool saw = false;
  for (const Datom& d : r->tx_data) saw = saw || (d.added && d.v.is_int() && d.v.as_int() == 1);
  EXPECT_TRUE(saw);
  EXPECT_EQ(N(), 0);
}

TEST_P(TxFunctionsTest, AScriptThatTransactsACall) {
  script::Interpreter in;
  in.SetStore(store_.get());
  auto v = in.EvalToString(
      R"((mentat.store/transact conn [[:c/inc [:c/name "a"]] [:c/inc [:c/name "b"]]]))");
  // :c/name "b" does not exist: the lookup ref fails inside the function's read.
  EXPECT_FALSE(v.ok());
  v = in.EvalToString(R"((do (mentat.store/transact conn [[:c/inc [:c/name "a"]]]) :ok))");
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(*v, ":ok");
  EXPECT_EQ(N(), 1);
}

TEST_P(TxFunctionsTest, ALimitStopsAFunctionAndTheStoreStaysUsable) {
  auto r = store_->transact("[[:c/spin]]");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInterrupted);
  EXPECT_NE(r.status().message().find("transaction function :c/spin"), std::string::npos)
      << r.status().message();
  ASSERT_TRUE(store_->transact(R"([[:c/inc [:c/name "a"]]])").ok());
  EXPECT_EQ(N(), 1);
}

TEST_P(TxFunctionsTest, EntityPredicatesSeeTheTransactionsDatoms) {
  // The name is asserted in the same transaction as the check.
  auto ok = store_->transact(R"([{:db/id "x" :c/name "x" :db/ensure :c/spec}])");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  auto bad = store_->transact(R"([{:db/id "y" :c/n 5 :db/ensure :c/spec}])");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("its predicate c/named? returned false"), std::string::npos)
      << bad.status().message();
}

TEST_P(TxFunctionsTest, ReadersOnOtherThreadsDoNotSeeTheTransactionInProgress) {
  // A function that takes a while; a reader meanwhile sees the committed value.
  ASSERT_TRUE(store_
                  ->transact(R"tx([{:db/ident :c/slow
    :db/fn "(fn [db e] (dotimes [i 200000] i) [[:db/add e :c/n 42]])"}])tx")
                  .ok());
  std::thread writer([&] { EXPECT_TRUE(store_->transact(R"([[:c/slow [:c/name "a"]]])").ok()); });
  int64_t seen = N();
  writer.join();
  EXPECT_TRUE(seen == 0 || seen == 42) << seen;
  EXPECT_EQ(N(), 42);
}

// :db.attr/preds live in the schema: a predicate another handle (another connection, with
// its own cached schema) asserts or retracts holds for this handle's next transaction.
TEST_P(TxFunctionsTest, AttributePredicatesSetElsewhereHoldAtTheNextTransaction) {
  std::unique_ptr<Store> other;
  if (GetParam()) {
    auto o = Store::open(dir_.Path("s.db"));
    ASSERT_TRUE(o.ok()) << o.status().ToString();
    other = std::move(*o);
  }
  Store* setter = other ? other.get() : store_.get();
  ASSERT_TRUE(store_->transact(R"([{:c/name "a" :c/n 3}])").ok());
  auto r = setter->transact("[[:db/add :c/n :db.attr/preds clojure.core/even?]]");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  r = store_->transact(R"([{:c/name "a" :c/n 5}])");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("fails its predicate clojure.core/even?"), std::string::npos)
      << r.status().message();
  EXPECT_EQ(N(), 3);
  ASSERT_TRUE(store_->transact(R"([{:c/name "a" :c/n 4}])").ok());
  r = setter->transact("[[:db/retract :c/n :db.attr/preds clojure.core/even?]]");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  r = store_->transact(R"([{:c/name "a" :c/n 7}])");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(N(), 7);
  // And one asserted in the same transaction as a value holds for that value.
  r = store_->transact(
      R"([[:db/add :c/n :db.attr/preds clojure.core/even?] {:c/name "a" :c/n 9}])");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(N(), 7);
}

INSTANTIATE_TEST_SUITE_P(Stores, TxFunctionsTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "File" : "Memory"; });

}  // namespace
}  // namespace mentat
