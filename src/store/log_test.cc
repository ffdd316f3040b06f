// The log (Store::tx_range, LogToEdn) and listeners (Store::listen, tx_report_queue).
#include "mentat/log.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <thread>

#include "mentat/store.h"
#include "store/store_test_util.h"

namespace mentat {
namespace {

using namespace std::chrono_literals;

constexpr const char* kSchema =
    "[{:db/ident :p/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one "
    "  :db/unique :db.unique/identity}"
    " {:db/ident :p/age :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]";

std::unique_ptr<Store> Open(const std::string& path = "") {
  auto s = Store::open(path);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return std::move(*s);
}

TxReport Tx(Store* s, const char* edn) {
  auto r = s->transact(edn);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : TxReport{};
}

// Waits up to 5 s for `cond`.
template <typename F>
bool Eventually(F cond) {
  for (int i = 0; i < 500; ++i) {
    if (cond()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return cond();
}

TEST(Log, TxRangeListsAssertionsAndRetractionsInCommitOrder) {
  auto s = Open();
  TxReport schema = Tx(s.get(), kSchema);
  TxReport a = Tx(s.get(), "[{:db/id \"a\" :p/name \"ann\" :p/age 30}]");
  TxReport b = Tx(s.get(), "[[:db/add [:p/name \"ann\"] :p/age 31]]");
  Entid ann = a.tempids.at("a");

  auto all = s->tx_range(std::nullopt, std::nullopt);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 3u);  // the bootstrap transaction is not the user's log
  EXPECT_EQ((*all)[0].tx_id, schema.tx_id);
  EXPECT_EQ((*all)[1].tx_id, a.tx_id);
  EXPECT_EQ((*all)[2].tx_id, b.tx_id);
  EXPECT_EQ((*all)[1].tx_instant, a.tx_instant);
  // The age 30 asserted in a, later retracted, is still a's assertion.
  const auto& da = (*all)[1].tx_data;
  auto schema_now = s->schema();
  Entid age = schema_now->attribute("p/age")->id;
  auto has = [](const std::vector<Datom>& ds, const Datom& d) {
    return std::find(ds.begin(), ds.end(), d) != ds.end();
  };
  EXPECT_TRUE(has(da, Datom{ann, age, edn::Value::Int(30), a.tx_id, true}));
  const auto& db = (*all)[2].tx_data;
  EXPECT_TRUE(has(db, Datom{ann, age, edn::Value::Int(30), b.tx_id, false}));
  EXPECT_TRUE(has(db, Datom{ann, age, edn::Value::Int(31), b.tx_id, true}));
  EXPECT_EQ(db.size(), 3u);  // and b's :db/txInstant

  // Bounds: from included, to excluded; a t below the tx partition; instants; limits.
  auto one = s->tx_range(TxPoint::Tx(a.tx_id), TxPoint::Tx(b.tx_id));
  ASSERT_TRUE(one.ok());
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ((*one)[0].tx_id, a.tx_id);
  auto by_t = s->tx_range(TxPoint::Tx(tx_to_t(b.tx_id)), std::nullopt);
  ASSERT_TRUE(by_t.ok());
  ASSERT_EQ(by_t->size(), 1u);
  EXPECT_EQ((*by_t)[0].tx_id, b.tx_id);
  EXPECT_EQ(t_to_tx(tx_to_t(b.tx_id)), b.tx_id);
  auto by_instant = s->tx_range(TxPoint::Instant(b.tx_instant), std::nullopt);
  ASSERT_TRUE(by_instant.ok());
  ASSERT_EQ(by_instant->size(), 1u);
  auto future = s->tx_range(TxPoint::Instant(b.tx_instant + 1), std::nullopt);
  ASSERT_TRUE(future.ok());
  EXPECT_TRUE(future->empty());
  auto limited = s->tx_range(std::nullopt, std::nullopt, 2);
  ASSERT_TRUE(limited.ok());
  EXPECT_EQ(limited->size(), 2u);
  EXPECT_EQ(s->db().basis_t(), tx_to_t(b.tx_id));

  edn::Value e = LogToEdn(*one, *schema_now);
  std::string text = edn::Print(e);
  EXPECT_NE(text.find(":t " + std::to_string(tx_to_t(a.tx_id))), std::string::npos) << text;
  EXPECT_NE(
      text.find("[" + std::to_string(ann) + " :p/age 30 " + std::to_string(a.tx_id) + " true]"),
      std::string::npos)
      << text;
}

TEST(Listen, ReceivesThisProcessesCommitsWithTempidsInOrder) {
  auto s = Open();
  Tx(s.get(), kSchema);
  std::mutex mu;
  std::vector<TxReport> got;
  auto h = s->listen([&](const TxReport& r) {
    std::lock_guard<std::mutex> lock(mu);
    got.push_back(r);
  });
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  TxReport a = Tx(s.get(), "[{:db/id \"a\" :p/name \"ann\"}]");
  TxReport b = Tx(s.get(), "[{:db/id \"b\" :p/name \"bob\"}]");
  ASSERT_TRUE(Eventually([&] {
    std::lock_guard<std::mutex> lock(mu);
    return got.size() == 2;
  }));
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_EQ(got[0].tx_id, a.tx_id);
    EXPECT_EQ(got[0].tempids, a.tempids);
    EXPECT_EQ(got[0].tx_data, a.tx_data);
    EXPECT_EQ(got[1].tx_id, b.tx_id);
  }
  // A failed or speculative transaction is not reported; after stop() nothing is.
  EXPECT_FALSE(s->transact("[[:db/add \"x\" :p/nope 1]]").ok());
  ASSERT_TRUE(s->with("[{:p/name \"spec\"}]").ok());
  h->stop();
  Tx(s.get(), "[{:p/name \"cy\"}]");
  std::this_thread::sleep_for(100ms);
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(got.size(), 2u);
}

TEST(Listen, FiltersByAttributeAndRefusesUnknownOnes) {
  auto s = Open();
  Tx(s.get(), kSchema);
  std::atomic<int> calls{0};
  auto h = s->listen([&](const TxReport&) { ++calls; }, {":p/age"});
  ASSERT_TRUE(h.ok());
  Tx(s.get(), "[{:p/name \"ann\"}]");
  Tx(s.get(), "[{:p/name \"bob\" :p/age 3}]");
  ASSERT_TRUE(Eventually([&] { return calls.load() == 1; }));
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(calls.load(), 1);
  auto bad = s->listen([](const TxReport&) {}, {"p/nope"});
  EXPECT_EQ(bad.status().code(), Code::kSchema);
}

TEST(Listen, SeesOtherConnectionsCommitsFromTheFile) {
  testing::TempDir dir;
  auto a = Open(dir.Path("shared.db"));
  auto b = Open(dir.Path("shared.db"));  // another store on the file, as another process
  Tx(a.get(), kSchema);
  auto q = a->tx_report_queue();
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  TxReport theirs = Tx(b.get(), "[{:db/id \"x\" :p/name \"xena\"}]");
  TxReport ours = Tx(a.get(), "[{:db/id \"y\" :p/name \"yan\"}]");
  auto first = (*q)->poll(5s);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->tx_id, theirs.tx_id);
  EXPECT_TRUE(first->tempids.empty());  // from the log
  EXPECT_EQ(first->tx_data.size(), theirs.tx_data.size());
  auto second = (*q)->poll(5s);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->tx_id, ours.tx_id);
  EXPECT_EQ(second->tempids, ours.tempids);
  EXPECT_FALSE((*q)->poll(50ms).has_value());
}

TEST(Listen, ACallbackMayTransactAndStopItself) {
  auto s = Open();
  Tx(s.get(), kSchema);
  std::atomic<int> calls{0};
  ListenerHandle handle;
  auto h = s->listen([&](const TxReport& r) {
    if (++calls == 1) {
      // Reacting to a commit with another one: delivered next, in order.
      auto again = s->transact("[{:p/name \"echo\"}]");
      EXPECT_TRUE(again.ok());
      (void)r;
    } else {
      handle.stop();
    }
  });
  ASSERT_TRUE(h.ok());
  handle = std::move(*h);
  Tx(s.get(), "[{:p/name \"ann\"}]");
  ASSERT_TRUE(Eventually([&] { return calls.load() == 2; }));
  Tx(s.get(), "[{:p/name \"after\"}]");
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(calls.load(), 2);
  EXPECT_FALSE(handle.active());
}

TEST(Listen, TheStoreMayCloseWhileListenersAreRegistered) {
  std::optional<ListenerHandle> keep;
  {
    auto s = Open();
    Tx(s.get(), kSchema);
    auto h = s->listen([](const TxReport&) {});
    ASSERT_TRUE(h.ok());
    keep.emplace(std::move(*h));
    Tx(s.get(), "[{:p/name \"ann\"}]");
  }
  keep->stop();  // after the store is gone: nothing to wait for
  EXPECT_FALSE(keep->active());
}

}  // namespace
}  // namespace mentat
