// The Store on PostgreSQL: opened by a connection string, shared by processes and
// threads with connections of their own, and what a writer that dies leaves behind.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "mentat/store.h"
#include "pg/connection.h"
#include "pg/pgtest_util.h"
#include "store/store_impl.h"

namespace mentat {
namespace {

class StorePg : public ::testing::Test {
 protected:
  void SetUp() override {
    auto c = pg::Connection::Open(pg::TestConninfo());
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    admin_ = std::move(*c);
    schema_ = pg::TestSchema(*admin_);
    // The store creates its schema itself.
    ASSERT_TRUE(admin_->Exec("DROP SCHEMA " + schema_).ok());
  }
  void TearDown() override {
    if (admin_) {
      EXPECT_TRUE(admin_->Exec("DROP SCHEMA IF EXISTS " + schema_ + " CASCADE").ok());
    }
  }
  std::string Name() const { return pg::TestConninfo() + " schema=" + schema_; }
  std::unique_ptr<Store> Open() {
    auto s = Store::open(Name());
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(*s) : nullptr;
  }
  std::unique_ptr<pg::Connection> admin_;
  std::string schema_;
};

constexpr const char* kSchema =
    "[{:db/ident :acct/id :db/valueType :db.type/long :db/cardinality :db.cardinality/one "
    ":db/unique :db.unique/identity} "
    "{:db/ident :acct/balance :db/valueType :db.type/long :db/cardinality "
    ":db.cardinality/one} "
    "{:db/ident :acct/batch :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]";

// kSchema and account 1 with balance 10, and the query of its balance.
void SeedAccount(Store* s) {
  ASSERT_TRUE(s->transact(kSchema).ok());
  ASSERT_TRUE(s->transact("[{:acct/id 1 :acct/balance 10}]").ok());
}
constexpr const char* kBalanceOfOne = "[:find ?b . :where [?e :acct/id 1] [?e :acct/balance ?b]]";

TEST_F(StorePg, AStoreInASchemaKeepsItsDataAcrossOpens) {
  {
    auto s = Open();
    ASSERT_TRUE(s);
    ASSERT_TRUE(s->transact(kSchema).ok());
    auto r = s->transact("[{:acct/id 1 :acct/balance 10} {:acct/id 2 :acct/balance 20}]");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  auto s = Open();
  ASSERT_TRUE(s);
  auto q = s->q("[:find (sum ?b) . :where [_ :acct/balance ?b]]");
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(edn::Print(q->ToEdn()), "30");
  // An upsert by the unique id, then the value as of before it.
  auto up = s->transact("[{:acct/id 1 :acct/balance 11}]");
  ASSERT_TRUE(up.ok()) << up.status().ToString();
  auto now = s->q("[:find ?b . :where [?e :acct/id 1] [?e :acct/balance ?b]]");
  ASSERT_TRUE(now.ok()) << now.status().ToString();
  EXPECT_EQ(edn::Print(now->ToEdn()), "11");
  QueryOptions o;
  o.as_of = TxPoint::Tx(up->tx_id - 1);
  auto before = s->q("[:find ?b . :where [?e :acct/id 1] [?e :acct/balance ?b]]", o);
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  EXPECT_EQ(edn::Print(before->ToEdn()), "10");
}

// A store made before the value functions existed (here: with them dropped) gets them
// when it is opened read-write, and its tuple and bigint queries work; a read-only open
// before that is refused with the reason.
TEST_F(StorePg, AStoreWithoutTheValueFunctionsGetsThemOnOpen) {
  {
    auto s = Open();
    ASSERT_TRUE(s);
    ASSERT_TRUE(s->transact("[{:db/ident :p/pt :db/valueType :db.type/tuple :db/tupleType "
                            ":db.type/long :db/cardinality :db.cardinality/one} "
                            "{:db/ident :p/big :db/valueType :db.type/bigint :db/cardinality "
                            ":db.cardinality/one}]")
                    .ok());
    ASSERT_TRUE(s->transact("[{:p/pt [1 2] :p/big 12345678901234567890N}]").ok());
  }
  for (const char* fn : {"mentat_tuple(jsonb[])", "mentat_tuple_get(jsonb,bigint)",
                         "mentat_fmt_decimal(jsonb,integer)"})
    ASSERT_TRUE(admin_->Exec("DROP FUNCTION " + schema_ + "." + fn).ok()) << fn;
  Options ro;
  ro.read_only = true;
  auto refused = Store::open(Name(), ro);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("upgrade"), std::string::npos)
      << refused.status().ToString();
  auto s = Open();
  ASSERT_TRUE(s);
  auto q = s->q(
      "[:find ?x ?y ?s :where [?e :p/pt ?t] [(untuple ?t) [?x ?y]] [?e :p/big ?b] "
      "[(> ?b 5)] [(str ?b) ?s]]");
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(edn::Print(q->ToEdn()), "[[1 2 \"12345678901234567890\"]]");
}

TEST_F(StorePg, ANameWithoutAStoreIsNotFoundWhenCreateIsOff) {
  Options o;
  o.create = false;
  auto s = Store::open(Name(), o);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), Code::kNotFound) << s.status().ToString();
  auto bad = Store::open(pg::TestConninfo() + " schema=no-such;schema");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("schema"), std::string::npos) << bad.status().ToString();
}

TEST_F(StorePg, ASchemaChangedByAnotherStoreIsSeenBeforeTheNextWrite) {
  auto a = Open();
  auto b = Open();
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(a->transact(kSchema).ok());
  // b has never read the new attributes: its next transaction must know them.
  auto r = b->transact("[{:acct/id 7 :acct/balance 70}]");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(a->transact("[{:db/ident :acct/owner :db/valueType :db.type/string "
                          ":db/cardinality :db.cardinality/one}]")
                  .ok());
  auto w = b->transact("[{:acct/id 7 :acct/owner \"ann\"}]");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  auto q = a->q("[:find ?o . :where [?e :acct/id 7] [?e :acct/owner ?o]]");
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(edn::Print(q->ToEdn()), "\"ann\"");
}

// A read runs in one round trip with the schema generation (StoreImpl::Read's envelope):
// a schema another store changed since is noticed by that very read, which then runs again
// with the new schema.
TEST_F(StorePg, ASchemaChangedByAnotherStoreIsSeenByTheNextRead) {
  auto a = Open();
  auto b = Open();
  ASSERT_TRUE(a && b);
  ASSERT_NO_FATAL_FAILURE(SeedAccount(a.get()));
  const char* q = kBalanceOfOne;
  auto warm = b->q(q);
  ASSERT_TRUE(warm.ok()) << warm.status().ToString();
  EXPECT_EQ(edn::Print(warm->ToEdn()), "10");
  // :acct/balance is renamed elsewhere: b's next read by the old name must fail, as on a
  // fresh store, not answer from the attribute it knew by that name.
  ASSERT_TRUE(a->transact("[{:db/id :acct/balance :db/ident :acct/amount}]").ok());
  auto old = b->q(q);
  EXPECT_FALSE(old.ok()) << edn::Print(old->ToEdn());
  auto renamed = b->q("[:find ?b . :where [?e :acct/id 1] [?e :acct/amount ?b]]");
  ASSERT_TRUE(renamed.ok()) << renamed.status().ToString();
  EXPECT_EQ(edn::Print(renamed->ToEdn()), "10");
  auto after = b->q("[:find (count ?e) . :where [?e :acct/id _]]");
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ(edn::Print(after->ToEdn()), "1");
}

// The statements the connections of `s` executed so far (its pool holds one here).
uint64_t Executions(Store* s) {
  auto lease = ImplOf(s)->Acquire();
  EXPECT_TRUE(lease.ok()) << lease.status().ToString();
  return lease.ok() ? lease->get()->db->pg()->executions() : 0;
}

// A query on a Db value compares the value's basis with the snapshot's last transaction,
// which the read's envelope reads with the schema generation: one statement, and as of
// the basis once another store has written past it (a read of its own for the last
// transaction made the envelope's work two statements, so every such query ran twice).
TEST_F(StorePg, AQueryOnADbValueIsOneStatementAndReadsAsOfItsBasis) {
  auto a = Open();
  auto b = Open();
  ASSERT_TRUE(a && b);
  ASSERT_NO_FATAL_FAILURE(SeedAccount(a.get()));
  const char* q = kBalanceOfOne;
  Db d = a->db();
  auto answer = [&](const Db& db) {
    auto r = db.q(q);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? edn::Print(r->ToEdn()) : std::string();
  };
  ASSERT_EQ(answer(d), "10");  // (prepares its statements)
  uint64_t before = Executions(a.get());
  EXPECT_EQ(answer(d), "10");
  EXPECT_EQ(Executions(a.get()), before + 1);
  // Another store writes past d's basis: d still reads its basis, the store's new Db the
  // write; the first read of d after it finds the assumption wrong and runs again.
  ASSERT_TRUE(b->transact("[{:acct/id 1 :acct/balance 20}]").ok());
  EXPECT_EQ(answer(d), "10");
  EXPECT_EQ(answer(a->db()), "20");
  EXPECT_EQ(edn::Print(a->q(q)->ToEdn()), "20");
  EXPECT_EQ(answer(d), "10");
  before = Executions(a.get());
  EXPECT_EQ(answer(d), "10");
  EXPECT_EQ(Executions(a.get()), before + 1);
  // An as-of Db of a later point than the last transaction reads the current datoms.
  Db now = a->db();
  ASSERT_TRUE(now.basis());
  EXPECT_EQ(answer(now.as_of(TxPoint::Tx(*now.basis() + 5))), "20");
}

// A scalar or tuple find that pulls one entity reads the entity's datoms in the query's
// statement (pass pull_in_query): the same results as with the pass off, for patterns that
// read beyond the first level too (nested, reverse, components, limits, defaults), and one
// statement where the pattern needs nothing beyond the entity's own datoms.
TEST_F(StorePg, APullOfOneEntityReadsItsDatomsInTheQuerysStatement) {
  auto s = Open();
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->transact("[{:db/ident :p/name :db/valueType :db.type/string :db/cardinality "
                          ":db.cardinality/one :db/unique :db.unique/identity} "
                          "{:db/ident :p/age :db/valueType :db.type/long :db/cardinality "
                          ":db.cardinality/one} "
                          "{:db/ident :p/tag :db/valueType :db.type/keyword :db/cardinality "
                          ":db.cardinality/many} "
                          "{:db/ident :p/friend :db/valueType :db.type/ref :db/cardinality "
                          ":db.cardinality/many} "
                          "{:db/ident :p/addr :db/valueType :db.type/ref :db/cardinality "
                          ":db.cardinality/one :db/isComponent true} "
                          "{:db/ident :a/city :db/valueType :db.type/string :db/cardinality "
                          ":db.cardinality/one}]")
                  .ok());
  ASSERT_TRUE(s->transact("[{:db/id \"a\" :p/name \"ann\" :p/age 40 :p/tag [:x :y :z] "
                          ":p/friend [\"b\" \"c\"] :p/addr {:a/city \"Oslo\"}} "
                          "{:db/id \"b\" :p/name \"bob\" :p/friend [\"a\"]} "
                          "{:db/id \"c\" :p/name \"cy\"}]")
                  .ok());
  const std::vector<std::string> queries = {
      "[:find (pull ?e [*]) . :in $ ?n :where [?e :p/name ?n]]",
      "[:find (pull ?e [:p/age :db/id]) . :in $ ?n :where [?e :p/name ?n]]",
      "[:find (pull ?e [:p/name {:p/friend [:p/name {:p/friend [:p/name]}]}]) . :in $ ?n "
      ":where [?e :p/name ?n]]",
      "[:find (pull ?e [:p/name :p/_friend]) . :in $ ?n :where [?e :p/name ?n]]",
      "[:find (pull ?e [(:p/tag :limit 2) (:p/age :default 0) :p/addr]) . :in $ ?n :where "
      "[?e :p/name ?n]]",
      "[:find [?n (pull ?e [*])] :in $ ?n :where [?e :p/name ?n]]",
      "[:find (pull ?f [:p/name]) . :in $ ?n :where [?e :p/name ?n] [?e :p/friend ?f] "
      "[?f :p/name \"cy\"]]",
      "[:find (pull ?e [*]) . :in $ ?n :where [?e :p/name ?n] [?e :p/age 99]]",
  };
  for (const char* name : {"ann", "bob", "cy", "nobody"}) {
    for (const std::string& q : queries) {
      SCOPED_TRACE(q + " with " + std::string(name));
      QueryOptions on;
      on.inputs.emplace_back(edn::Value::String(name));
      QueryOptions off = on;
      off.disabled_passes = {"pull_in_query"};
      auto a = s->q(q, on);
      auto b = s->q(q, off);
      ASSERT_TRUE(a.ok()) << a.status().ToString();
      ASSERT_TRUE(b.ok()) << b.status().ToString();
      EXPECT_EQ(edn::Print(a->ToEdn()), edn::Print(b->ToEdn()));
      auto plan = s->q_explain(q, on);
      ASSERT_TRUE(plan.ok()) << plan.status().ToString();
      EXPECT_NE(plan->find("LEFT JOIN LATERAL"), std::string::npos) << *plan;
    }
  }
  // The wildcard pull of an entity without components: the query's one statement, or two
  // with the pass off.
  QueryOptions on;
  on.inputs.emplace_back(edn::Value::String("bob"));
  QueryOptions off = on;
  off.disabled_passes = {"pull_in_query"};
  const std::string& q = queries[0];
  ASSERT_TRUE(s->q(q, on).ok() && s->q(q, off).ok());  // (prepares the statements)
  uint64_t before = Executions(s.get());
  auto a = s->q(q, on);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(Executions(s.get()), before + 1);
  EXPECT_NE(edn::Print(a->ToEdn()).find(":p/name \"bob\""), std::string::npos)
      << edn::Print(a->ToEdn());
  before = Executions(s.get());
  ASSERT_TRUE(s->q(q, off).ok());
  EXPECT_EQ(Executions(s.get()), before + 2);
  // Not for a relation find, nor as of a point (the pull's own statement keeps its view).
  auto many = s->q_explain("[:find (pull ?e [*]) :where [?e :p/name]]");
  ASSERT_TRUE(many.ok());
  EXPECT_EQ(many->find("LEFT JOIN LATERAL"), std::string::npos) << *many;
}

TEST_F(StorePg, WritersOnSeparateConnectionsNeverShareAnId) {
  {
    auto s = Open();
    ASSERT_TRUE(s);
    ASSERT_TRUE(s->transact(kSchema).ok());
  }
  constexpr int kWriters = 4, kTxs = 25;
  std::vector<std::thread> ts;
  std::atomic<int> failures{0};
  for (int w = 0; w < kWriters; ++w) {
    ts.emplace_back([&, w] {
      auto s = Store::open(Name());
      if (!s.ok()) {
        ++failures;
        return;
      }
      for (int i = 0; i < kTxs; ++i) {
        std::string id = std::to_string(w * 1000 + i);
        auto r = (*s)->transact("[{:db/id \"x\" :acct/id " + id + " :acct/balance " + id + "}]");
        if (!r.ok()) ++failures;
      }
    });
  }
  for (auto& t : ts) t.join();
  EXPECT_EQ(failures.load(), 0);
  auto s = Open();
  ASSERT_TRUE(s);
  auto e = s->q("[:find (count-distinct ?e) . :where [?e :acct/id _]]");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(edn::Print(e->ToEdn()), std::to_string(kWriters * kTxs));
  auto tx = s->q("[:find (count-distinct ?tx) . :where [_ :acct/id _ ?tx]]");
  ASSERT_TRUE(tx.ok()) << tx.status().ToString();
  EXPECT_EQ(edn::Print(tx->ToEdn()), std::to_string(kWriters * kTxs));
}

TEST_F(StorePg, AWriterKilledMidTransactionLeavesOnlyWholeTransactions) {
  {
    auto s = Open();
    ASSERT_TRUE(s);
    ASSERT_TRUE(s->transact(kSchema).ok());
  }
  // A child writes batches of 200 accounts, each batch one transaction, until killed.
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto s = Store::open(Name());
    if (!s.ok()) _exit(2);
    for (int b = 0;; ++b) {
      std::string tx = "[";
      for (int i = 0; i < 200; ++i)
        tx +=
            "{:acct/id " + std::to_string(b * 1000 + i) + " :acct/batch " + std::to_string(b) + "}";
      tx += "]";
      if (!(*s)->transact(tx).ok()) _exit(3);
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  ASSERT_EQ(kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the writer stopped by itself: " << status;
  auto s = Open();
  ASSERT_TRUE(s);
  // Every batch is whole: 200 accounts each, and the store takes new writes.
  auto sizes = s->q("[:find ?b (count ?e) :where [?e :acct/batch ?b]]");
  ASSERT_TRUE(sizes.ok()) << sizes.status().ToString();
  ASSERT_GT(sizes->rows.size(), 0u) << "the writer committed nothing in 700 ms";
  for (const auto& row : sizes->rows) EXPECT_EQ(edn::Print(row[1]), "200") << edn::Print(row[0]);
  auto more = s->transact("[{:acct/id -1 :acct/batch -1}]");
  EXPECT_TRUE(more.ok()) << more.status().ToString();
}

// Recursive rules as one WITH RECURSIVE statement on PostgreSQL (the recursive_cte pass;
// several recursive SELECTs become one recursive term reading the table once, through
// LATERAL): the same answers as the engine's own loop with the pass off, on a graph with
// a cycle, for mutual recursion and for a start bound or free.
TEST_F(StorePg, RecursiveRulesAsOneStatementAnswerAsTheEnginesLoop) {
  auto s = Open();
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->transact("[{:db/ident :n/name :db/valueType :db.type/string :db/cardinality "
                          ":db.cardinality/one :db/unique :db.unique/identity} "
                          "{:db/ident :n/next :db/valueType :db.type/ref :db/cardinality "
                          ":db.cardinality/many}]")
                  .ok());
  // a -> b -> c -> a (a cycle), d -> c, e alone.
  ASSERT_TRUE(s->transact("[{:db/id \"a\" :n/name \"a\" :n/next \"b\"} {:db/id \"b\" :n/name "
                          "\"b\" :n/next \"c\"} {:db/id \"c\" :n/name \"c\" :n/next \"a\"} "
                          "{:db/id \"d\" :n/name \"d\" :n/next \"c\"} {:n/name \"e\"}]")
                  .ok());
  const std::string reach =
      "[[(reach ?x ?y) [?x :n/next ?y]] [(reach ?x ?y) [?x :n/next ?z] (reach ?z ?y)]]";
  const std::string parity =
      "[[(odd ?x ?y) [?x :n/next ?y]] [(odd ?x ?y) [?x :n/next ?z] (even ?z ?y)] "
      "[(even ?x ?y) [?x :n/next ?z] (odd ?z ?y)]]";
  struct Case {
    std::string query, rules, expected;
  };
  std::vector<Case> cases = {
      {"[:find ?n :in $ % :where [?s :n/name \"d\"] (reach ?s ?t) [?t :n/name ?n]]", reach,
       "[[\"a\"] [\"b\"] [\"c\"]]"},
      {"[:find ?n :in $ % :where [?t :n/name \"a\"] (reach ?s ?t) [?s :n/name ?n]]", reach,
       "[[\"a\"] [\"b\"] [\"c\"] [\"d\"]]"},
      {"[:find (count ?s) . :in $ % :where (reach ?s ?t)]", reach, "4"},
      {"[:find ?n :in $ % :where [?s :n/name \"d\"] (even ?s ?t) [?t :n/name ?n]]", parity,
       "[[\"a\"] [\"b\"] [\"c\"]]"},
      {"[:find ?n :in $ % :where [?s :n/name \"e\"] (odd ?s ?t) [?t :n/name ?n]]", parity, "[]"},
      // The relation read twice, in a not, by a pull, counted, ordered and limited.
      {"[:find ?n ?m :in $ % :where [?s :n/name \"d\"] (reach ?s ?t) (reach ?t ?u) "
       "[?t :n/name ?n] [?u :n/name ?m] [(< ?n ?m)]]",
       reach, "[[\"a\" \"b\"] [\"a\" \"c\"] [\"b\" \"c\"]]"},
      {"[:find ?n :in $ % :where [?s :n/name ?n] (not (reach ?s ?s))]", reach, "[[\"d\"] [\"e\"]]"},
      {"[:find (pull ?t [:n/name]) :in $ % :where [?s :n/name \"d\"] (reach ?s ?t) "
       "[?t :n/name \"b\"]]",
       reach, "[[{:n/name \"b\"}]]"},
      {"[:find ?n (count ?t) :in $ % :where (reach ?s ?t) [?s :n/name ?n]]", reach,
       "[[\"a\" 3] [\"b\" 3] [\"c\" 3] [\"d\" 3]]"},
      {"[:find ?n :in $ % :where [?t :n/name \"c\"] (reach ?s ?t) [?s :n/name ?n] "
       ":order (desc ?n) :limit 2]",
       reach, "[[\"c\"] [\"d\"]]"},
  };
  // Two strata: the later (read by the query) reads the earlier twice.
  cases.push_back({"[:find ?n :in $ % :where [?s :n/name \"d\"] (r2 ?s ?t) [?t :n/name ?n]]",
                   reach.substr(0, reach.size() - 1) +
                       " [(r2 ?x ?y) (reach ?x ?y)] [(r2 ?x ?y) (reach ?x ?z) (r2 ?z ?y)]]",
                   "[[\"a\"] [\"b\"] [\"c\"]]"});
  // All passes; rules_in_query off (the statement's rows bound back as a relation); the
  // engine's loop.
  const std::vector<std::string> modes[] = {{}, {"rules_in_query"}, {"recursive_cte"}};
  bool two_strata = false;
  for (const Case& c : cases) {
    std::string answers[3];
    for (int off = 0; off < 3; ++off) {
      QueryOptions o;
      o.inputs.emplace_back(edn::Value::String(c.rules));
      o.disabled_passes = modes[off];
      auto r = s->q(c.query, o);
      ASSERT_TRUE(r.ok()) << c.query << ": " << r.status().ToString();
      auto rows = r->ToEdn();
      if (rows.is_vector()) {
        edn::Vec sorted = rows.items();
        std::sort(sorted.begin(), sorted.end(), [](const edn::Value& x, const edn::Value& y) {
          return edn::Print(x) < edn::Print(y);
        });
        rows = edn::Value::Vector(std::move(sorted));
      }
      answers[off] = edn::Print(rows);
    }
    EXPECT_EQ(answers[0], c.expected) << c.query;
    EXPECT_EQ(answers[1], c.expected) << c.query << " (rules_in_query off)";
    EXPECT_EQ(answers[2], c.expected) << c.query << " (recursive_cte off)";
    for (int off = 0; off < 2; ++off) {
      QueryOptions o;
      o.inputs.emplace_back(edn::Value::String(c.rules));
      o.disabled_passes = modes[off];
      o.analyze = true;  // also runs it, and counts the join's prefixes
      auto plan = s->q_explain(c.query, o);
      ASSERT_TRUE(plan.ok()) << c.query << ": " << plan.status().ToString();
      EXPECT_NE(plan->find("one WITH RECURSIVE statement"), std::string::npos) << *plan;
      EXPECT_EQ(plan->find("read by the query's statement") != std::string::npos, off == 0)
          << *plan;
      EXPECT_EQ(plan->find("sql:\n  WITH RECURSIVE") != std::string::npos, off == 0) << *plan;
      // A demand rewrite's seed stratum and the stratum it seeds, both in the statement.
      if (off == 0 && plan->find("), mentat_rec_") != std::string::npos) two_strata = true;
    }
  }
  EXPECT_TRUE(two_strata) << "no query read two strata from its WITH clause";
}

}  // namespace
}  // namespace mentat

namespace mentat {
namespace {

// The definitions of the indexes of schema `schema`'s tables, without the schema's name.
std::vector<std::string> IndexesOf(pg::Connection& c, const std::string& schema) {
  auto st = c.Prepare(
      "SELECT replace(indexdef, ?1 || '.', '') FROM pg_indexes "
      "WHERE schemaname = ?1 ORDER BY indexname");
  st->BindText(1, schema);
  std::vector<std::string> out;
  for (;;) {
    auto row = st->Step();
    EXPECT_TRUE(row.ok()) << row.status().ToString();
    if (!row.ok() || !*row) break;
    out.emplace_back(st->ColumnText(0));
  }
  return out;
}

TEST_F(StorePg, MigrateCopiesAStoreBothWaysWithItsHistoryAndIds) {
  char tmpl[] = "/tmp/mentat-migrate-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl, file = dir + "/a.db", back = dir + "/b.db";
  Entid ann = 0, tx1 = 0;
  {
    auto s = Store::open(file);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    ASSERT_TRUE((*s)->transact(kSchema).ok());
    auto r = (*s)->transact("[{:db/id \"a\" :acct/id 1 :acct/balance 10} {:acct/id 2}]");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ann = r->tempids.at("a");
    tx1 = r->tx_id;
    ASSERT_TRUE((*s)->transact("[{:acct/id 1 :acct/balance 15}]").ok());
  }
  auto there = migrate(file, Name());
  ASSERT_TRUE(there.ok()) << there.status().ToString();
  EXPECT_EQ(there->history, 1);
  {
    // migrate drops the big tables' indexes for the copy and builds them after it: the
    // migrated store has every index a new store has, the same.
    const std::string fresh = schema_ + "_fresh";
    ASSERT_TRUE(Store::open(pg::TestConninfo() + " schema=" + fresh).ok());
    const auto want = IndexesOf(*admin_, fresh);
    EXPECT_GE(want.size(), 8u);
    EXPECT_EQ(IndexesOf(*admin_, schema_), want);
    EXPECT_TRUE(admin_->Exec("DROP SCHEMA " + fresh + " CASCADE").ok());
  }
  auto again = migrate(file, Name());
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), Code::kConflict) << again.status().ToString();
  auto home = migrate(Name(), back);
  ASSERT_TRUE(home.ok()) << home.status().ToString();
  EXPECT_EQ(home->datoms, there->datoms);
  for (const std::string& name : {Name(), back}) {
    auto s = Store::open(name);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    // The same ids, the current value and the value as of the first transaction.
    auto e = (*s)->q("[:find ?e . :where [?e :acct/id 1]]");
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    EXPECT_EQ(edn::Print(e->ToEdn()), std::to_string(ann)) << name;
    QueryOptions o;
    o.as_of = TxPoint::Tx(tx1);
    auto old = (*s)->q("[:find ?b . :where [?e :acct/id 1] [?e :acct/balance ?b]]", o);
    ASSERT_TRUE(old.ok()) << old.status().ToString();
    EXPECT_EQ(edn::Print(old->ToEdn()), "10") << name;
    // New ids continue after the copied ones.
    auto r = (*s)->transact("[{:db/id \"n\" :acct/id 3}]");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_GT(r->tempids.at("n"), ann + 1) << name;
    auto check = (*s)->check();
    ASSERT_TRUE(check.ok()) << check.status().ToString();
    EXPECT_TRUE(check->ok()) << edn::Print(check->ToEdn());
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace mentat

namespace mentat {
namespace {

// A store with a query that takes seconds: every pair of 4,000 accounts of one batch.
std::unique_ptr<Store> SlowStore(const std::string& name) {
  auto s = Store::open(name);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  if (!s.ok()) return nullptr;
  EXPECT_TRUE((*s)->transact(kSchema).ok());
  std::string tx = "[";
  for (int i = 0; i < 4000; ++i) tx += "{:acct/id " + std::to_string(i) + " :acct/batch 1}";
  EXPECT_TRUE((*s)->transact(tx + "]").ok());
  return std::move(*s);
}

constexpr const char* kSlowQuery =
    "[:find (count ?a) . :where [?a :acct/batch ?x] [?b :acct/batch ?x] [?c :acct/batch ?x]]";

TEST_F(StorePg, ATimeoutStopsAQueryOnTheServer) {
  auto s = SlowStore(Name());
  ASSERT_TRUE(s);
  QueryOptions o;
  o.timeout_ms = 200;
  auto start = std::chrono::steady_clock::now();
  auto r = s->q(kSlowQuery, o);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                  start)
                .count();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInterrupted) << r.status().ToString();
  EXPECT_NE(r.status().message().find("timed out after 200 ms"), std::string::npos)
      << r.status().ToString();
  EXPECT_LT(ms, 3000);
  // The connection is usable, without the timeout, afterwards.
  auto n = s->q("[:find (count ?a) . :where [?a :acct/batch 1]]");
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(edn::Print(n->ToEdn()), "4000");
}

TEST_F(StorePg, InterruptCancelsARunningQuery) {
  auto s = SlowStore(Name());
  ASSERT_TRUE(s);
  Store* store = s.get();
  std::thread stopper([store] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    store->interrupt();
  });
  auto start = std::chrono::steady_clock::now();
  auto r = s->q(kSlowQuery);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                  start)
                .count();
  stopper.join();
  ASSERT_FALSE(r.ok()) << "the query finished before the interrupt: make it slower";
  EXPECT_EQ(r.status().code(), Code::kInterrupted) << r.status().ToString();
  EXPECT_LT(ms, 3000);
}

}  // namespace
}  // namespace mentat

namespace mentat {
namespace {

// Transactions of many entities read what they need in batches on PostgreSQL (the unique
// values' holders, the existing entities' datoms): the same answers as one at a time.
TEST_F(StorePg, ManyUpsertsInOneTransactionReplaceKeepAndAddAsOneByOne) {
  auto s = Open();
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->transact(kSchema).ok());
  ASSERT_TRUE(s->transact("[{:db/ident :acct/tag :db/valueType :db.type/keyword "
                          ":db/cardinality :db.cardinality/many}]")
                  .ok());
  std::string first = "[", second = "[";
  for (int i = 0; i < 40; ++i) {
    std::string id = std::to_string(i);
    first += "{:acct/id " + id + " :acct/balance " + id + " :acct/tag [:t/a :t/b]}";
    // Even accounts keep their balance, odd ones change it; every one keeps :t/a and gets :t/c.
    second += "{:acct/id " + id + " :acct/balance " + std::to_string(i % 2 ? i + 100 : i) +
              " :acct/tag [:t/a :t/c]}";
  }
  ASSERT_TRUE(s->transact(first + "]").ok());
  auto r = s->transact(second + "]");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // 20 balances retracted and 20 asserted, 40 :t/c asserted, the txInstant: nothing else.
  int added = 0, retracted = 0;
  for (const auto& d : r->tx_data) (d.added ? added : retracted)++;
  EXPECT_EQ(retracted, 20);
  EXPECT_EQ(added, 20 + 40 + 1);
  auto n = s->q("[:find (count ?e) . :where [?e :acct/id _]]");
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(edn::Print(n->ToEdn()), "40");
  auto b = s->q("[:find ?b . :where [?e :acct/id 7] [?e :acct/balance ?b]]");
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(edn::Print(b->ToEdn()), "107");
  auto tags = s->q("[:find (count ?t) . :where [?e :acct/id 8] [?e :acct/tag ?t]]");
  ASSERT_TRUE(tags.ok()) << tags.status().ToString();
  EXPECT_EQ(edn::Print(tags->ToEdn()), "3");
  // The same again is a no-op but for the transaction's instant.
  auto again = s->transact(second + "]");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->tx_data.size(), 1u);
}

}  // namespace
}  // namespace mentat

namespace mentat {
namespace {

// The standby's count of committed transactions in the database: each read there is one.
int64_t StandbyReads() {
  auto c = pg::Connection::Open(pg::TestStandbyConninfo());
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  if (!c.ok()) return -1;
  // Statistics of other sessions reach the shared counters when those sessions report:
  // asked for fresh numbers, without this session's own.
  auto n = (*c)->QueryInt(
      "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()", -1);
  EXPECT_TRUE(n.ok()) << n.status().ToString();
  return n.ok() ? *n : -1;
}

TEST_F(StorePg, ReadsGoToAStandbyThatHasReplayedTheStoresWrites) {
  Options o;
  o.replicas = {pg::TestStandbyConninfo()};
  o.replica_wait_ms = 5000;
  auto s = Store::open(Name(), o);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_TRUE((*s)->transact(kSchema).ok());
  const int64_t before = StandbyReads();
  for (int i = 0; i < 5; ++i) {
    // Each write is read back at once: the standby waits until it has replayed it.
    auto w = (*s)->transact("[{:acct/id " + std::to_string(i) + " :acct/balance " +
                            std::to_string(i * 10) + "}]");
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    auto r = (*s)->q("[:find (count ?e) . :where [?e :acct/id _]]");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(edn::Print(r->ToEdn()), std::to_string(i + 1));
  }
  auto pulled = (*s)->pull(
      "[:acct/balance]", edn::Value::Vector({edn::Value::Keyword("acct/id"), edn::Value::Int(4)}));
  ASSERT_TRUE(pulled.ok()) << pulled.status().ToString();
  EXPECT_EQ(edn::Print(*pulled), "{:acct/balance 40}");
  std::this_thread::sleep_for(std::chrono::milliseconds(700));  // statistics are reported
  EXPECT_GE(StandbyReads() - before, 5) << "the reads did not go to the standby";
}

TEST_F(StorePg, AStandbyThatHasNotReplayedLeavesTheReadToThePrimary) {
  Options o;
  o.replicas = {pg::TestStandbyConninfo()};
  o.replica_wait_ms = 100;
  auto s = Store::open(Name(), o);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_TRUE((*s)->transact(kSchema).ok());
  auto standby = pg::Connection::Open(pg::TestStandbyConninfo());
  ASSERT_TRUE(standby.ok()) << standby.status().ToString();
  // Replay is paused: the standby stays behind the write below.
  ASSERT_TRUE((*standby)->Exec("SELECT pg_wal_replay_pause()").ok());
  auto w = (*s)->transact("[{:acct/id 1 :acct/balance 10}]");
  // Read while the standby is behind: the primary must answer (the standby has no account).
  auto paused_read = (*s)->q("[:find ?b . :where [?e :acct/id 1] [?e :acct/balance ?b]]");
  Status resume = (*standby)->Exec("SELECT pg_wal_replay_resume()");
  EXPECT_TRUE(resume.ok()) << resume.ToString();
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE(paused_read.ok()) << paused_read.status().ToString();
  EXPECT_EQ(edn::Print(paused_read->ToEdn()), "10");
  // A standby that cannot be reached leaves the reads to the primary too.
  Options down;
  down.replicas = {"host=/nonexistent-mentat-standby port=1 dbname=mentat connect_timeout=1"};
  auto d = Store::open(Name(), down);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  auto r = (*d)->q("[:find ?b . :where [?e :acct/id 1] [?e :acct/balance ?b]]");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(edn::Print(r->ToEdn()), "10");
}

}  // namespace
}  // namespace mentat

namespace mentat {
namespace {

// The synchronous_commit of a connection of `s`.
std::string SynchronousCommitOf(Store* s) {
  auto lease = ImplOf(s)->Acquire();
  EXPECT_TRUE(lease.ok()) << lease.status().ToString();
  if (!lease.ok()) return "";
  auto st = lease->get()->db->Prepare("SHOW synchronous_commit");
  EXPECT_TRUE(st.ok()) << st.status().ToString();
  if (!st.ok()) return "";
  auto row = st->Step();
  EXPECT_TRUE(row.ok() && *row);
  return std::string(st->ColumnText(0));
}

TEST_F(StorePg, SynchronousOffIsAsynchronousCommitOnTheServer) {
  {
    auto s = Open();
    ASSERT_TRUE(s);
    EXPECT_EQ(SynchronousCommitOf(s.get()), "on");
  }
  Options o;
  o.synchronous = Synchronous::kOff;
  auto s = Store::open(Name(), o);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(SynchronousCommitOf(s->get()), "off");
  // It still commits: another store sees the transaction.
  ASSERT_TRUE((*s)->transact(kSchema).ok());
  ASSERT_TRUE((*s)->transact("[{:acct/id 7}]").ok());
  auto other = Open();
  ASSERT_TRUE(other);
  auto n = other->q("[:find (count ?e) . :where [?e :acct/id]]");
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(edn::Print(n->ToEdn()), "1");
}

}  // namespace
}  // namespace mentat
