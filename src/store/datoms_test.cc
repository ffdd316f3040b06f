// Store-level tests of the query and pull glue (query_glue.cc, pull_glue.cc, datoms.cc):
// datoms() over the four indexes on current, as-of, since and history databases;
// q_prepare; (pull ?e pattern) in :find batched through the store; interrupt and timeout
// leaving the store usable for queries, pulls and transactions.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "mentat/store.h"
#include "store/store_impl.h"

namespace mentat {
namespace {

using edn::Value;

Value V(const std::string& text) {
  auto v = edn::Read(text);
  EXPECT_TRUE(v.ok()) << text;
  return v.ok() ? *v : Value();
}

// A datom as (e, attribute ident, printed value, tx, added), for set comparisons.
using D = std::tuple<Entid, std::string, std::string, Entid, bool>;

class GlueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = Store::open("");
    ASSERT_TRUE(s.ok());
    store_ = std::move(*s);
    ASSERT_TRUE(store_
                    ->transact(R"([
      {:db/ident :p/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
      {:db/ident :p/age :db/valueType :db.type/long :db/cardinality :db.cardinality/one :db/index true}
      {:db/ident :p/friend :db/valueType :db.type/ref :db/cardinality :db.cardinality/many}])")
                    .ok());
    auto r1 = store_->transact(
        R"([{:db/id "a" :p/name "A" :p/age 1 :p/friend "b"} {:db/id "b" :p/name "B" :p/age 2}])");
    ASSERT_TRUE(r1.ok()) << r1.status().ToString();
    a_ = r1->tempids.at("a");
    b_ = r1->tempids.at("b");
    t1_ = r1->tx_id;
    auto r2 = store_->transact("[[:db/add " + std::to_string(a_) + " :p/age 3] [:db/retract " +
                               std::to_string(a_) + " :p/friend " + std::to_string(b_) + "]]");
    ASSERT_TRUE(r2.ok()) << r2.status().ToString();
    t2_ = r2->tx_id;
    auto r3 = store_->transact("[[:db/add " + std::to_string(b_) + " :p/friend " +
                               std::to_string(a_) + "]]");
    ASSERT_TRUE(r3.ok()) << r3.status().ToString();
    t3_ = r3->tx_id;
  }

  std::set<D> Datoms(const Db& db, const std::string& index, const std::vector<Value>& comps) {
    auto r = db.datoms(index, comps);
    EXPECT_TRUE(r.ok()) << index << ": " << r.status().ToString();
    std::set<D> out;
    if (!r.ok()) return out;
    auto schema = store_->schema();
    for (const Datom& d : *r) {
      const std::string* id = schema->ident(d.a);
      out.insert({d.e, id ? *id : std::to_string(d.a), edn::Print(d.v), d.tx, d.added});
    }
    return out;
  }

  std::unique_ptr<Store> store_;
  Entid a_ = 0, b_ = 0, t1_ = 0, t2_ = 0, t3_ = 0;
};

TEST_F(GlueTest, DatomsOverEveryIndexAndDatabaseValue) {
  Db now = store_->db();
  Db as_of = now.as_of(TxPoint::Tx(t1_));
  Db since = now.since(TxPoint::Tx(t1_));
  Db hist = now.history();
  Value a = Value::Int(a_), b = Value::Int(b_);
  Value age = V(":p/age"), friend_ = V(":p/friend");
  std::string bs = std::to_string(b_), as = std::to_string(a_);

  // EAVT.
  EXPECT_EQ(Datoms(now, ":eavt", {a}),
            (std::set<D>{{a_, "p/name", "\"A\"", t1_, true}, {a_, "p/age", "3", t2_, true}}));
  EXPECT_EQ(Datoms(as_of, ":eavt", {a}), (std::set<D>{{a_, "p/name", "\"A\"", t1_, true},
                                                      {a_, "p/age", "1", t1_, true},
                                                      {a_, "p/friend", bs, t1_, true}}));
  EXPECT_EQ(Datoms(since, ":eavt", {a}), (std::set<D>{{a_, "p/age", "3", t2_, true}}));
  EXPECT_EQ(Datoms(hist, ":eavt", {a, age}), (std::set<D>{{a_, "p/age", "1", t1_, true},
                                                          {a_, "p/age", "1", t2_, false},
                                                          {a_, "p/age", "3", t2_, true}}));
  // AEVT.
  EXPECT_EQ(Datoms(now, ":aevt", {age}),
            (std::set<D>{{a_, "p/age", "3", t2_, true}, {b_, "p/age", "2", t1_, true}}));
  EXPECT_EQ(Datoms(as_of, ":aevt", {age}),
            (std::set<D>{{a_, "p/age", "1", t1_, true}, {b_, "p/age", "2", t1_, true}}));
  EXPECT_EQ(Datoms(since, ":aevt", {age}), (std::set<D>{{a_, "p/age", "3", t2_, true}}));
  EXPECT_EQ(Datoms(hist, ":aevt", {age, a}), (std::set<D>{{a_, "p/age", "1", t1_, true},
                                                          {a_, "p/age", "1", t2_, false},
                                                          {a_, "p/age", "3", t2_, true}}));
  // AVET.
  EXPECT_EQ(Datoms(now, ":avet", {age, Value::Int(1)}), std::set<D>{});
  EXPECT_EQ(Datoms(as_of, ":avet", {age, Value::Int(1)}),
            (std::set<D>{{a_, "p/age", "1", t1_, true}}));
  EXPECT_EQ(Datoms(since, ":avet", {age, Value::Int(1)}), std::set<D>{});
  EXPECT_EQ(Datoms(since, ":avet", {age, Value::Int(3)}),
            (std::set<D>{{a_, "p/age", "3", t2_, true}}));
  EXPECT_EQ(Datoms(hist, ":avet", {age, Value::Int(1)}),
            (std::set<D>{{a_, "p/age", "1", t1_, true}, {a_, "p/age", "1", t2_, false}}));
  // VAET (refs only).
  EXPECT_EQ(Datoms(now, ":vaet", {b}), std::set<D>{});
  EXPECT_EQ(Datoms(as_of, ":vaet", {b}), (std::set<D>{{a_, "p/friend", bs, t1_, true}}));
  EXPECT_EQ(Datoms(since, ":vaet", {b}), std::set<D>{});
  EXPECT_EQ(Datoms(hist, ":vaet", {b, friend_}),
            (std::set<D>{{a_, "p/friend", bs, t1_, true}, {a_, "p/friend", bs, t2_, false}}));
  EXPECT_EQ(Datoms(now, ":vaet", {a}), (std::set<D>{{b_, "p/friend", as, t3_, true}}));
  EXPECT_EQ(Datoms(as_of, ":vaet", {a}), std::set<D>{});
  EXPECT_EQ(Datoms(since, ":vaet", {a}), (std::set<D>{{b_, "p/friend", as, t3_, true}}));
  EXPECT_EQ(Datoms(hist, ":vaet", {a}), (std::set<D>{{b_, "p/friend", as, t3_, true}}));
  // As-of includes t, since excludes it.
  EXPECT_EQ(Datoms(now.as_of(TxPoint::Tx(t2_)), ":eavt", {a, age}),
            (std::set<D>{{a_, "p/age", "3", t2_, true}}));
  EXPECT_EQ(Datoms(now.since(TxPoint::Tx(t2_)), ":eavt", {a}), std::set<D>{});
  // Entities given by lookup ref; bad index names are errors.
  EXPECT_EQ(Datoms(as_of, ":eavt", {V("[:p/name \"A\"]"), age}),
            (std::set<D>{{a_, "p/age", "1", t1_, true}}));
  EXPECT_FALSE(now.datoms(":evat", {}).ok());
}

// All four components on a history database: the tx component names the transaction of
// each event, a retraction's included (the retraction branch reads tx from rtx).
TEST_F(GlueTest, HistoryDatomsByTransactionFindRetractions) {
  Db hist = store_->db().history();
  Value a = Value::Int(a_), age = V(":p/age"), one = Value::Int(1);
  EXPECT_EQ(Datoms(hist, ":eavt", {a, age, one, Value::Int(t2_)}),
            (std::set<D>{{a_, "p/age", "1", t2_, false}}));
  EXPECT_EQ(Datoms(hist, ":eavt", {a, age, one, Value::Int(t1_)}),
            (std::set<D>{{a_, "p/age", "1", t1_, true}}));
  EXPECT_EQ(Datoms(hist, ":aevt", {age, a, one, Value::Int(t2_)}),
            (std::set<D>{{a_, "p/age", "1", t2_, false}}));
  EXPECT_EQ(Datoms(hist.as_of(TxPoint::Tx(t1_)), ":eavt", {a, age, one, Value::Int(t2_)}),
            std::set<D>{});
}

// seek_datoms: index order from the first datom >= the components, on every view.
TEST_F(GlueTest, SeekDatomsOverEveryIndexAndDatabaseValue) {
  Db now = store_->db();
  Db as_of = now.as_of(TxPoint::Tx(t1_));
  Db since = now.since(TxPoint::Tx(t1_));
  Db hist = now.history();
  Value a = Value::Int(a_), b = Value::Int(b_), age = V(":p/age");
  auto seek = [&](const Db& db, const std::string& index, const std::vector<Value>& comps,
                  size_t limit) {
    auto r = db.seek_datoms(index, comps, limit);
    EXPECT_TRUE(r.ok()) << index << ": " << r.status().ToString();
    std::vector<std::string> out;
    if (!r.ok()) return out;
    for (const Datom& d : *r)
      out.push_back(std::to_string(d.e == a_   ? 1
                                   : d.e == b_ ? 2
                                               : d.e) +
                    " " + *store_->schema()->ident(d.a) + " " + edn::Print(d.v) + " " +
                    (d.tx == t1_   ? "t1"
                     : d.tx == t2_ ? "t2"
                     : d.tx == t3_ ? "t3"
                                   : "t?") +
                    (d.added ? "" : " retracted"));
    return out;
  };
  using S = std::vector<std::string>;
  std::string as = std::to_string(a_), bs = std::to_string(b_);
  // AEVT from :p/age: a's then b's.
  EXPECT_EQ(seek(now, ":aevt", {age}, 2), (S{"1 p/age 3 t2", "2 p/age 2 t1"}));
  EXPECT_EQ(seek(as_of, ":aevt", {age}, 2), (S{"1 p/age 1 t1", "2 p/age 2 t1"}));
  EXPECT_EQ(seek(since, ":aevt", {age}, 1), (S{"1 p/age 3 t2"}));
  auto h = seek(hist, ":aevt", {age, a}, 3);
  EXPECT_EQ(std::set<std::string>(h.begin(), h.end()),
            (std::set<std::string>{"1 p/age 1 t1", "1 p/age 1 t2 retracted", "1 p/age 3 t2"}));
  // AVET from a value.
  EXPECT_EQ(seek(now, ":avet", {age, Value::Int(2)}, 2), (S{"2 p/age 2 t1", "1 p/age 3 t2"}));
  EXPECT_EQ(seek(as_of, ":avet", {age, Value::Int(0)}, 2), (S{"1 p/age 1 t1", "2 p/age 2 t1"}));
  EXPECT_EQ(seek(since, ":avet", {age, Value::Int(0)}, 1), (S{"1 p/age 3 t2"}));
  h = seek(hist, ":avet", {age, Value::Int(1)}, 2);
  EXPECT_EQ(std::set<std::string>(h.begin(), h.end()),
            (std::set<std::string>{"1 p/age 1 t1", "1 p/age 1 t2 retracted"}));
  // VAET from a target entity.
  EXPECT_EQ(seek(now, ":vaet", {a}, 1), (S{"2 p/friend " + as + " t3"}));
  EXPECT_EQ(seek(as_of, ":vaet", {a}, 1), (S{"1 p/friend " + bs + " t1"}));
  EXPECT_EQ(seek(since, ":vaet", {a}, 1), (S{"2 p/friend " + as + " t3"}));
  h = seek(hist, ":vaet", {b}, 2);
  EXPECT_EQ(
      std::set<std::string>(h.begin(), h.end()),
      (std::set<std::string>{"1 p/friend " + bs + " t1", "1 p/friend " + bs + " t2 retracted"}));
  // EAVT from an entity.
  EXPECT_EQ(seek(as_of, ":eavt", {b}, 2), (S{"2 p/name \"B\" t1", "2 p/age 2 t1"}));
  EXPECT_EQ(seek(since, ":eavt", {b}, 1), (S{"2 p/friend " + as + " t3"}));
}

TEST_F(GlueTest, PreparedQueryRunsWithNewInputsAndSeesNewTransactions) {
  auto p = store_->q_prepare("[:find ?a . :in $ ?n :where [?e :p/name ?n] [?e :p/age ?a]]");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(edn::Print(p->run({Value::String("A")})->ToEdn()), "3");
  EXPECT_EQ(edn::Print(p->run({Value::String("B")})->ToEdn()), "2");
  EXPECT_EQ(edn::Print(p->run({Value::String("nobody")})->ToEdn()), "nil");
  // A store's prepared query reads the latest database on every run.
  ASSERT_TRUE(store_->transact("[[:db/add " + std::to_string(b_) + " :p/age 20]]").ok());
  EXPECT_EQ(edn::Print(p->run({Value::String("B")})->ToEdn()), "20");
  // Per-run options: as-of.
  QueryOptions o;
  o.inputs = {Value::String("A")};
  o.as_of = TxPoint::Tx(t1_);
  EXPECT_EQ(edn::Print(p->run(o)->ToEdn()), "1");
  // A database value's prepared query keeps that value.
  auto old = store_->db()
                 .as_of(TxPoint::Tx(t1_))
                 .q_prepare("[:find ?a . :in $ ?n :where [?e :p/name ?n] [?e :p/age ?a]]");
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(edn::Print(old->run({Value::String("A")})->ToEdn()), "1");
  QueryOptions eo;
  eo.inputs = {Value::String("A")};
  auto explained = p->explain(eo);
  ASSERT_TRUE(explained.ok()) << explained.status().ToString();
  EXPECT_NE(explained->find("sqlite plan:"), std::string::npos);
  // Errors: parse errors at prepare time, input errors at run time.
  auto bad = store_->q_prepare("[:find ?x :where [?e :p/name]]");
  ASSERT_TRUE(bad.ok());  // analysis needs the schema: reported by run()
  EXPECT_NE(bad->run().status().message().find("unbound variable ?x"), std::string::npos);
  auto unparsable = store_->q_prepare("[:find ?x :where [?e :p/name]");
  ASSERT_FALSE(unparsable.ok());
  EXPECT_NE(unparsable.status().message().find("1:1"), std::string::npos);
  auto missing = p->run();
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("no value for ?n"), std::string::npos)
      << missing.status().message();
}

// Named sources: database values as inputs, so one query joins the current database with
// an as-of one (and pulls from either).
TEST_F(GlueTest, DatabaseInputsJoinCurrentAndAsOf) {
  auto old = std::make_shared<const Db>(store_->db().as_of(TxPoint::Tx(t1_)));
  auto r = store_->q(
      "[:find ?n ?was ?now :in $ $old :where [$old ?e :p/age ?was] [?e :p/age ?now] "
      "[(!= ?was ?now)] [?e :p/name ?n]]",
      {Input(old)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(edn::Print(r->ToEdn()), "[[\"A\" 1 3]]");
  auto p = store_->q(
      "[:find [(pull $old ?e [:p/age]) (pull ?e [:p/age])] :in $ $old :where [?e :p/name \"A\"]]",
      {Input(old)});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(edn::Print(p->ToEdn()), "[{:p/age 1} {:p/age 3}]");
  // A database where a value is expected, and a value where a database is.
  auto bad = store_->q("[:find ?e :in $ ?x :where [?e :p/age ?x]]", {Input(old)});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("not a source"), std::string::npos)
      << bad.status().message();
  auto bad2 = store_->q("[:find ?e :in $ $old :where [$old ?e :p/age _]]", {Value::Int(1)});
  ASSERT_FALSE(bad2.ok());
  EXPECT_NE(bad2.status().message().find("must be a database"), std::string::npos)
      << bad2.status().message();
}

// (pull ?e pattern) in :find runs a bounded number of SQL statements, whatever the number
// of result rows.
TEST_F(GlueTest, PullInFindIsBatched) {
  std::string tx = "[";
  for (int i = 0; i < 400; ++i)
    tx += "{:p/name \"n" + std::to_string(i) + "\" :p/age " + std::to_string(100 + i) +
          " :p/friend " + std::to_string(a_) + "}";
  ASSERT_TRUE(store_->transact(tx + "]").ok());
  const char* q =
      "[:find [(pull ?e [:p/name {:p/friend [:p/name :p/age]}]) ...] :where [?e :p/age ?x] "
      "[(>= ?x 100)]]";
  ASSERT_TRUE(store_->q(q).ok());  // plans and statements cached
  int count = 0;
  sqlite3* raw = nullptr;
  auto install = ImplOf(store_)->Read([&](StoreImpl::Conn* c) -> Result<int> {
    raw = c->db->raw();
    sqlite3_trace_v2(
        raw, SQLITE_TRACE_STMT,
        [](unsigned, void* ctx, void*, void*) -> int {
          ++*static_cast<int*>(ctx);
          return 0;
        },
        &count);
    return 0;
  });
  ASSERT_TRUE(install.ok());
  count = 0;
  auto r = store_->q(q);
  int statements = count;
  auto remove = ImplOf(store_)->Read([&](StoreImpl::Conn* c) -> Result<int> {
    EXPECT_EQ(c->db->raw(), raw) << "the query ran on another connection";
    sqlite3_trace_v2(c->db->raw(), 0, nullptr, nullptr);
    return 0;
  });
  ASSERT_TRUE(remove.ok());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->rows.size(), 400u);
  std::set<std::string> names;
  for (const auto& row : r->rows) {
    ASSERT_TRUE(row[0].is_map()) << edn::Print(row[0]);
    names.insert(row[0].get_keyword("p/name")->str());
    EXPECT_EQ(*row[0].get_keyword("p/friend"), V("[{:p/name \"A\" :p/age 3}]"));
  }
  EXPECT_EQ(names.size(), 400u);
  // BEGIN, the query, two pull levels, COMMIT, and a little slack: never one per row.
  EXPECT_LE(statements, 10) << "statements: " << statements;
  EXPECT_GE(statements, 3);
}

TEST_F(GlueTest, InterruptAndTimeoutLeaveTheStoreUsable) {
  std::string heavy =
      "[:find (count ?a) . :where [(ground [1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20]) "
      "[?a ...]] [?x ?y ?z] [?p ?q ?r] [?s ?t ?u] [?k ?l ?m] [(+ ?a 1) ?b]]";
  std::atomic<bool> done{false};
  std::thread t([&] {
    while (!done) {
      store_->interrupt();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  auto r = store_->q(heavy);
  done = true;
  t.join();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInterrupted) << r.status().ToString();
  EXPECT_NE(r.status().message().find("interrupted"), std::string::npos);
  auto check_usable = [&](const std::string& name) {
    EXPECT_EQ(
        edn::Print(store_->q("[:find ?a . :where [?e :p/name \"A\"] [?e :p/age ?a]]")->ToEdn()),
        "3");
    auto p = store_->pull("[:p/name]", V("[:p/name \"B\"]"));
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    EXPECT_EQ(*p, V("{:p/name \"B\"}"));
    auto tx = store_->transact("[{:db/id \"n\" :p/name \"" + name + "\"}]");
    ASSERT_TRUE(tx.ok()) << tx.status().ToString();
    EXPECT_EQ(
        edn::Print(store_->q("[:find ?e . :in $ ?n :where [?e :p/name ?n]]", {Value::String(name)})
                       ->ToEdn()),
        std::to_string(tx->tempids.at("n")));
  };
  check_usable("after-interrupt");
  // :timeout in the query, and the option.
  auto timed = store_->q(heavy.substr(0, heavy.size() - 1) + " :timeout 30]");
  ASSERT_FALSE(timed.ok());
  EXPECT_EQ(timed.status().code(), Code::kInterrupted);
  EXPECT_NE(timed.status().message().find("timed out"), std::string::npos);
  check_usable("after-timeout");
  QueryOptions o;
  o.timeout_ms = 20;
  auto timed2 = store_->q(heavy, o);
  ASSERT_FALSE(timed2.ok());
  EXPECT_EQ(timed2.status().code(), Code::kInterrupted);
  check_usable("after-option-timeout");
  // An interrupt with nothing running does not affect the next query.
  store_->interrupt();
  check_usable("after-idle-interrupt");
}

}  // namespace
}  // namespace mentat
