// Attribute caches (Store::cache, attr_cache.h): queries give exactly the answers of a
// store without the cache, through every kind of change, by this connection or another.
#include "store/attr_cache.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "mentat/store.h"
#include "store/store_test_util.h"

namespace mentat {
namespace {

using testing::TempDir;

constexpr const char* kSchema = R"([
  {:db/ident :i/title :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
  {:db/ident :i/state :db/valueType :db.type/keyword :db/cardinality :db.cardinality/one
   :db/index true}
  {:db/ident :i/prio :db/valueType :db.type/long :db/cardinality :db.cardinality/one
   :db/index true}
  {:db/ident :i/score :db/valueType :db.type/double :db/cardinality :db.cardinality/one
   :db/noHistory true}
  {:db/ident :i/tag :db/valueType :db.type/string :db/cardinality :db.cardinality/many}])";

std::unique_ptr<Store> MustOpen(const std::string& path) {
  auto s = Store::open(path);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(*s) : nullptr;
}

// The queries compared: each reads cached attributes by an entity that another pattern
// found, in the ways a query can use a value (projected, filtered, joined, negated).
const char* const kQueries[] = {
    "[:find ?i ?t ?p :in $ ?min :where [?i :i/state :open] [?i :i/prio ?p] [?i :i/title ?t] "
    "[(>= ?p ?min)]]",
    "[:find ?t :where [?i :i/state :closed] [?i :i/title ?t]]",
    "[:find ?i ?s :where [?i :i/prio 3] [?i :i/score ?s]]",
    "[:find ?i :where [?i :i/state _] [?i :i/title _] (not [?i :i/prio 1])]",
    "[:find ?a ?b :where [?a :i/state :open] [?a :i/prio ?p] [?b :i/state :closed] [?b :i/prio "
    "?p] [(< ?a ?b)]]",
    "[:find (count ?i) . :where [?i :i/state :open] [?i :i/title _]]",
    "[:find ?t . :in $ ?min :where [?i :i/prio ?min] [?i :i/title ?t]]",
};

std::vector<std::string> Answers(Store* s) {
  std::vector<std::string> out;
  for (const char* q : kQueries) {
    QueryOptions o;
    if (std::string(q).find("?min") != std::string::npos)
      o.inputs.push_back(Input{edn::Value::Int(3)});
    auto r = s->q(q, o);
    EXPECT_TRUE(r.ok()) << q << ": " << r.status().ToString();
    if (!r.ok()) {
      out.push_back("error");
      continue;
    }
    std::vector<std::string> rows;
    for (const auto& row : r->rows) {
      std::string line;
      for (const auto& v : row) line += edn::Print(v) + " ";
      rows.push_back(line);
    }
    std::sort(rows.begin(), rows.end());
    std::string all;
    for (const auto& row : rows) all += row + "\n";
    out.push_back(all);
  }
  return out;
}

std::string Issues(int from, int n) {
  static const char* states[] = {":open", ":closed", ":wip"};
  std::string tx = "[";
  for (int k = from; k < from + n; ++k) {
    tx += "{:i/title \"issue " + std::to_string(k) + "\" :i/state " + states[k % 3] + " :i/prio " +
          std::to_string(1 + k % 5) + " :i/score " + std::to_string(k % 7) + ".5 :i/tag \"t" +
          std::to_string(k % 2) + "\"}";
  }
  return tx + "]";
}

class AttrCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.Path("cache.db");
    cached_ = MustOpen(path_);
    plain_ = MustOpen(path_);
    ASSERT_TRUE(cached_->transact(kSchema).ok());
    ASSERT_TRUE(cached_->transact(Issues(0, 60)).ok());
    for (const char* a : {":i/title", "i/prio", ":i/state", ":i/score"})
      ASSERT_TRUE(cached_->cache(a).ok()) << a;
  }
  void ExpectSame(const std::string& when) {
    auto want = Answers(plain_.get());
    auto got = Answers(cached_.get());
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_EQ(got[i], want[i]) << when << ": " << kQueries[i];
  }
  TempDir dir_;
  std::string path_;
  std::unique_ptr<Store> cached_, plain_;
};

TEST_F(AttrCacheTest, QueriesReadCachedAttributesAndExplainSaysSo) {
  EXPECT_EQ(cached_->cached_attributes(),
            (std::vector<std::string>{"i/prio", "i/score", "i/state", "i/title"}));
  QueryOptions o;
  o.inputs.push_back(Input{edn::Value::Int(3)});
  auto text = cached_->q_explain(kQueries[0], o);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_NE(text->find("from the attribute cache"), std::string::npos) << *text;
  EXPECT_NE(text->find("mentat_cached("), std::string::npos) << *text;
  auto plain = plain_->q_explain(kQueries[0], o);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->find("mentat_cached("), std::string::npos) << *plain;
  ExpectSame("after the load");
  auto r = cached_->q(kQueries[0], o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->rows.size(), 12u);  // open: k % 3 == 0 (20); prio >= 3: k % 5 >= 2 (3 in 5)
}

TEST_F(AttrCacheTest, FollowsEveryChangeOfEitherConnection) {
  ExpectSame("after the load");
  // Its own writes, then the other connection's: a value changed, retracted, an entity
  // retracted whole, new entities.
  ASSERT_TRUE(cached_
                  ->transact(R"([[:db/add 65536 :i/title "renamed"]
                                    [:db/add 65537 :i/prio 5]])")
                  .ok());
  ExpectSame("own update");
  ASSERT_TRUE(plain_
                  ->transact(R"([[:db/retract 65539 :i/prio 4]
                                   [:db/retractEntity 65542]
                                   [:db/add 65545 :i/state :closed]])")
                  .ok());
  ExpectSame("other connection's retractions");
  ASSERT_TRUE(plain_->transact(Issues(100, 10)).ok());
  ExpectSame("new entities");
  // :i/score keeps no history: its retractions leave no trace, so it is re-read whole.
  ASSERT_TRUE(plain_->transact(R"([[:db/retract 65548 :i/score 5.5]])").ok());
  ExpectSame("a noHistory retraction");
  // A value that goes and comes back between two queries.
  ASSERT_TRUE(plain_->transact(R"([[:db/retract 65551 :i/title "issue 15"]])").ok());
  ASSERT_TRUE(plain_->transact(R"([[:db/add 65551 :i/title "issue 15"]])").ok());
  ExpectSame("retracted and asserted again");
  // A backlog larger than the update budget: the column is read again.
  ASSERT_TRUE(plain_->transact(Issues(1000, 5000)).ok());
  ExpectSame("a large backlog");
  // A schema change (a new attribute) moves the schema generation.
  ASSERT_TRUE(plain_
                  ->transact(R"([{:db/ident :i/extra :db/valueType :db.type/long
                                    :db/cardinality :db.cardinality/one}])")
                  .ok());
  ASSERT_TRUE(plain_->transact(R"([[:db/add 65536 :i/title "after schema"]])").ok());
  ExpectSame("after a schema change");
}

TEST_F(AttrCacheTest, HistoricalViewsAndUncachedStoresReadTheIndexes) {
  auto before = cached_->last_tx();
  ASSERT_TRUE(before.ok());
  ASSERT_TRUE(cached_->transact(R"([[:db/add 65536 :i/title "new title"]])").ok());
  auto now = cached_->q("[:find ?t . :where [?i :i/state :open] [?i :i/title ?t] [(= ?i 65536)]]");
  ASSERT_TRUE(now.ok()) << now.status().ToString();
  EXPECT_EQ(now->rows.at(0).at(0).str(), "new title");
  QueryOptions o;
  o.as_of = TxPoint::Tx(*before);
  const char* q = "[:find ?t . :where [?i :i/state :open] [?i :i/title ?t] [(= ?i 65536)]]";
  auto then = cached_->q(q, o);
  ASSERT_TRUE(then.ok()) << then.status().ToString();
  EXPECT_EQ(then->rows.at(0).at(0).str(), "issue 0");
  auto text = cached_->q_explain(q, o);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text->find("mentat_cached("), std::string::npos) << *text;
  // Uncached again: plans go back to the indexes.
  ASSERT_TRUE(cached_->uncache(":i/title").ok());
  text = cached_->q_explain(q);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text->find("mentat_cached("), std::string::npos) << *text;
  EXPECT_EQ(cached_->cached_attributes(),
            (std::vector<std::string>{"i/prio", "i/score", "i/state"}));
  ExpectSame("after uncache");
}

// Reader threads (one connection each) read two cached attributes that a writer changes
// together in every transaction: each answer pairs values of one snapshot.
TEST_F(AttrCacheTest, ConcurrentReadersSeeOneSnapshotWhileAWriterWrites) {
  constexpr int kWrites = 150;
  std::atomic<bool> done{false};
  std::atomic<int> checked{0}, bad{0};
  auto reader = [&] {
    while (!done.load()) {
      auto r = cached_->q(
          "[:find [?t ?p] :where [?i :i/state :open] [?i :i/title ?t] [?i :i/prio ?p] "
          "[(= ?i 65536)]]");
      if (!r.ok() || r->rows.size() != 1 || r->rows[0].size() != 2) {
        ++bad;
        continue;
      }
      const std::string t = r->rows[0][0].str();
      const int64_t p = r->rows[0][1].as_int();
      if (t != "issue 0") {  // "w<n>" written with priority n % 5 + 1
        if (t.size() < 2 || t[0] != 'w' || std::stoi(t.substr(1)) % 5 + 1 != p) ++bad;
      }
      ++checked;
    }
  };
  std::vector<std::thread> readers;
  for (int i = 0; i < 3; ++i) readers.emplace_back(reader);
  for (int n = 0; n < kWrites; ++n) {
    std::string tx = "[[:db/add 65536 :i/title \"w" + std::to_string(n) +
                     "\"] [:db/add 65536 :i/prio " + std::to_string(n % 5 + 1) + "]]";
    auto w = plain_->transact(tx);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
  }
  done = true;
  for (auto& t : readers) t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(checked.load(), 0);
  ExpectSame("after the writes");
}

// Plans are cached per query text for every store of a thread: two stores caching
// different attributes each get their own plan and answers.
TEST_F(AttrCacheTest, StoresCachingDifferentAttributesKeepTheirOwnPlans) {
  std::string other_path = dir_.Path("other.db");
  auto other = MustOpen(other_path);
  auto other_plain = MustOpen(other_path);
  ASSERT_TRUE(other->transact(kSchema).ok());
  ASSERT_TRUE(other->transact(Issues(500, 40)).ok());
  ASSERT_TRUE(cached_->uncache(":i/prio").ok());
  ASSERT_TRUE(other->cache(":i/prio").ok());
  for (int round = 0; round < 3; ++round) {
    ExpectSame("round " + std::to_string(round));
    auto want = Answers(other_plain.get());
    auto got = Answers(other.get());
    for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << kQueries[i];
  }
  QueryOptions o;
  o.inputs.push_back(Input{edn::Value::Int(3)});
  auto a = cached_->q_explain(kQueries[0], o);
  auto b = other->q_explain(kQueries[0], o);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->find("mentat_cached(" + std::to_string(*cached_->schema()->entid("i/prio"))),
            std::string::npos)
      << *a;
  EXPECT_NE(b->find("mentat_cached(" + std::to_string(*other->schema()->entid("i/prio"))),
            std::string::npos)
      << *b;
}

// Entity ids far from the others are held apart from the dense range, and stay found
// when that range later grows over them.
TEST_F(AttrCacheTest, FarEntityIdsStayFoundWhenTheDenseRangeGrowsOverThem) {
  ExpectSame("after the load");
  // 2,100 entities with nothing cached (only a :db/doc), so that the last is far from the
  // cached ones; it then gets the cached attributes.
  std::string pad = "[";
  for (int i = 0; i < 2100; ++i) pad += "{:db/id \"p" + std::to_string(i) + "\" :db/doc \"pad\"}";
  auto padded = cached_->transact(pad + "]");
  ASSERT_TRUE(padded.ok()) << padded.status().ToString();
  const Entid first = padded->tempids.at("p0"), far = padded->tempids.at("p2099");
  const std::string f = std::to_string(far);
  ASSERT_TRUE(cached_
                  ->transact("[[:db/add " + f + " :i/title \"far\"] [:db/add " + f +
                             " :i/state :open] [:db/add " + f + " :i/prio 5]]")
                  .ok());
  ExpectSame("a far entity");
  std::string tx = "[";
  for (Entid e = first; e < far; ++e)
    tx += "[:db/add " + std::to_string(e) + " :i/title \"n" + std::to_string(e) + "\"]";
  ASSERT_TRUE(cached_->transact(tx + "]").ok());
  ExpectSame("the dense range grown over it");
  auto r =
      cached_->q("[:find ?t . :where [?i :i/state :open] [?i :i/title ?t] [(= ?i " + f + ")]]");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->rows.size(), 1u);
  EXPECT_EQ(r->rows[0][0].str(), "far");
}

// The entity -> value map against std::map, with ids dense, far apart and below the range.
TEST(AttrCacheValues, AgreeWithAnOrderedMapUnderRandomChanges) {
  std::mt19937_64 rng(20261130);
  for (int round = 0; round < 20; ++round) {
    AttrCache::Values values;
    std::map<Entid, int64_t> want;
    const Entid lo = 65536;
    std::vector<std::pair<Entid, int64_t>> initial;
    for (Entid e = lo; e < lo + 500; ++e)
      if (rng() % 3) initial.emplace_back(e, static_cast<int64_t>(rng() % 1000));
    if (round % 2) {
      values.Reserve(initial.front().first, initial.back().first, initial.size());
    } else {
      values.Reserve(lo, lo + 100000, initial.size());  // too wide: a hash map only
    }
    for (const auto& [e, v] : initial) {
      values.Set(e, schema::DbVal::Int(v));
      want[e] = v;
    }
    for (int step = 0; step < 5000; ++step) {
      Entid e;
      switch (rng() % 4) {
        case 0:
          e = lo + static_cast<Entid>(rng() % 600);
          break;  // in and just past the range
        case 1:
          e = lo + static_cast<Entid>(rng() % 5000);
          break;  // far past it
        case 2:
          e = lo - 1 - static_cast<Entid>(rng() % 50);
          break;  // below it
        default:
          e = lo + 500 + step / 2;
          break;  // growing ids
      }
      if (rng() % 4 == 0) {
        values.Erase(e);
        want.erase(e);
      } else {
        int64_t v = static_cast<int64_t>(rng() % 1000);
        values.Set(e, schema::DbVal::Int(v));
        want[e] = v;
      }
    }
    ASSERT_EQ(values.size(), want.size()) << "round " << round;
    for (Entid e = lo - 60; e < lo + 6000; ++e) {
      const schema::DbVal* got = values.Get(e);
      auto it = want.find(e);
      if (it == want.end()) {
        EXPECT_EQ(got, nullptr) << "round " << round << " entity " << e;
      } else {
        ASSERT_NE(got, nullptr) << "round " << round << " entity " << e;
        EXPECT_EQ(got->i, it->second) << "round " << round << " entity " << e;
      }
    }
  }
}

TEST_F(AttrCacheTest, RefusesWhatItCannotCache) {
  auto st = cached_->cache(":i/nope");
  EXPECT_EQ(st.code(), Code::kSchema);
  EXPECT_NE(st.message().find("unknown attribute :i/nope"), std::string::npos) << st.ToString();
  st = cached_->cache(":i/tag");
  EXPECT_EQ(st.code(), Code::kSchema);
  EXPECT_NE(st.message().find("cardinality-one"), std::string::npos) << st.ToString();
  st = cached_->cache(":i/title", CacheDirection::kReverse);
  EXPECT_EQ(st.code(), Code::kUnsupported);
  st = cached_->cache(":db.part/user");
  EXPECT_EQ(st.code(), Code::kSchema);
  EXPECT_NE(st.message().find("is not an attribute"), std::string::npos) << st.ToString();
  ASSERT_TRUE(plain_->uncache(":i/title").code() == Code::kNotFound);
  // Caching twice is fine; uncaching twice is not.
  EXPECT_TRUE(cached_->cache(":i/title").ok());
  EXPECT_TRUE(cached_->uncache(":i/title").ok());
  EXPECT_EQ(cached_->uncache(":i/title").code(), Code::kNotFound);
}

}  // namespace
}  // namespace mentat
