// Concurrency stress: writer threads, writer processes, reader threads, a second Store
// in the same process, queries and interrupts, all on one store file for a bounded time,
// with invariants checked throughout:
//  - the transfer workload never changes the total of all balances, in any snapshot
//    (current, as-of any acknowledged transaction, query results);
//  - every snapshot has exactly one balance per account;
//  - no two transactions or transfer entities share an id, across threads and processes;
//  - each writer sees its own tx ids strictly increase;
//  - no caller gets SQLITE_BUSY (Code::kBusy): writers wait for each other.
//
// MENTAT_STRESS_MILLIS (default 4000) sets the duration; `make stress` raises it.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "util.h"

namespace mentat::reliability {
namespace {

edn::Value Kw(const char* k) { return edn::Value::Keyword(k); }

std::unique_ptr<Store> MustOpen(const std::string& path) {
  auto s = Store::open(path);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(*s) : nullptr;
}

// Errors seen by the threads, reported at the end (gtest assertions are not made off the
// main thread).
class Errors {
 public:
  void Add(const std::string& what) {
    std::lock_guard<std::mutex> lock(mu_);
    if (list_.size() < 20) list_.push_back(what);
    ++count_;
  }
  int count() {
    std::lock_guard<std::mutex> lock(mu_);
    return count_;
  }
  std::string Describe() {
    std::lock_guard<std::mutex> lock(mu_);
    std::string s;
    for (const auto& e : list_) s += "  " + e + "\n";
    return s;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> list_;
  int count_ = 0;
};

struct Acked {
  Entid tx;
  Entid xfer;
  std::string writer;
};

TEST(Concurrency, TransfersAcrossThreadsAndProcessesKeepEveryInvariant) {
  TempDir dir;
  std::string path = dir.Path("bank.db");
  auto store = MustOpen(path);
  ASSERT_TRUE(store);
  ASSERT_TRUE(SetUpBank(store.get()).ok());
  auto other = MustOpen(path);  // a second Store on the same file, as another library user
  ASSERT_TRUE(other);
  const int64_t total = kAccounts * kInitialBalance;
  const int64_t millis = EnvInt("MENTAT_STRESS_MILLIS", 4000);
  const int processes = static_cast<int>(EnvInt("MENTAT_STRESS_PROCESSES", 2));

  std::vector<Child> children;
  for (int p = 0; p < processes; ++p) {
    children.push_back(
        Spawn({WorkerPath(), "transfer", path, "proc" + std::to_string(p), std::to_string(millis),
               dir.Path("proc" + std::to_string(p)), std::to_string(1000 + p)},
              dir.path()));
    ASSERT_GT(children.back().pid, 0);
  }

  Errors errors;
  std::mutex acked_mu;
  std::vector<Acked> acked;
  std::atomic<bool> stop{false};
  std::atomic<int64_t> reads{0}, as_of_reads{0}, queries{0}, interrupted{0}, interrupts{0};
  std::atomic<bool> queries_supported{true};
  std::vector<std::thread> threads;

  auto writer = [&](Store* s, const std::string& name, uint64_t seed) {
    Rng rng(seed);
    Entid last = 0;
    for (int64_t seq = 0; !stop; ++seq) {
      Entid xfer = 0;
      auto tx = Transfer(s, &rng, name, seq, &xfer);
      if (!tx.ok()) {
        errors.Add(name + ": " + tx.status().ToString());
        return;
      }
      if (*tx <= last) errors.Add(name + ": tx ids went backwards");
      last = *tx;
      std::lock_guard<std::mutex> lock(acked_mu);
      acked.push_back({*tx, xfer, name});
    }
  };
  threads.emplace_back(writer, store.get(), "thread0", 1);
  threads.emplace_back(writer, store.get(), "thread1", 2);
  threads.emplace_back(writer, other.get(), "other0", 3);

  // Readers of the current state, on both Store objects.
  for (Store* s : {store.get(), store.get(), other.get()}) {
    threads.emplace_back([&, s] {
      Entid last_basis = 0;
      while (!stop) {
        Db db = s->db();
        int64_t sum = 0, count = 0;
        Status st = SumBalances(db, &sum, &count);
        if (!st.ok()) {
          errors.Add("reader: " + st.ToString());
          return;
        }
        if (sum != total || count != kAccounts)
          errors.Add("reader saw total " + std::to_string(sum) + " over " + std::to_string(count) +
                     " balances");
        if (db.basis() && *db.basis() < last_basis) errors.Add("reader: basis went backwards");
        if (db.basis()) last_basis = *db.basis();
        ++reads;
      }
    });
  }
  // A reader of the past: as-of any acknowledged transaction.
  threads.emplace_back([&] {
    Rng rng(99);
    while (!stop) {
      Entid t = 0;
      {
        std::lock_guard<std::mutex> lock(acked_mu);
        if (!acked.empty()) t = acked[rng.Next() % acked.size()].tx;
      }
      if (t == 0) {
        std::this_thread::yield();
        continue;
      }
      int64_t sum = 0, count = 0;
      Status st = SumBalances(store->db().as_of(TxPoint::Tx(t)), &sum, &count);
      if (!st.ok()) {
        errors.Add("as-of reader: " + st.ToString());
        return;
      }
      if (sum != total || count != kAccounts)
        errors.Add("as-of " + std::to_string(t) + " saw total " + std::to_string(sum));
      ++as_of_reads;
    }
  });
  // Queries, some interrupted: an interrupted query fails cleanly, others are right.
  threads.emplace_back([&] {
    while (!stop) {
      auto r = store->q("[:find ?a ?b :where [?a :acct/balance ?b]]");
      if (!r.ok()) {
        if (r.status().code() == Code::kUnsupported) {
          queries_supported = false;
          return;
        }
        if (r.status().code() == Code::kInterrupted) {
          ++interrupted;
          continue;
        }
        errors.Add("query: " + r.status().ToString());
        return;
      }
      int64_t sum = 0;
      for (const auto& row : r->rows) sum += row.at(1).as_int();
      if (sum != total || r->rows.size() != static_cast<size_t>(kAccounts))
        errors.Add("query saw total " + std::to_string(sum) + " over " +
                   std::to_string(r->rows.size()) + " rows");
      ++queries;
    }
  });
  threads.emplace_back([&] {
    while (!stop) {
      std::this_thread::sleep_for(std::chrono::milliseconds(3));
      store->interrupt();
      ++interrupts;
    }
  });

  std::this_thread::sleep_for(std::chrono::milliseconds(millis));
  stop = true;
  for (auto& t : threads) t.join();

  for (int p = 0; p < processes; ++p) {
    Exit e = Wait(children[p], 60000);
    EXPECT_TRUE(e.exited && e.code == 0)
        << "process " << p << " " << e.Describe() << ": " << ReadFile(children[p].stderr_path);
    std::istringstream in(ReadFile(dir.Path("proc" + std::to_string(p))));
    Entid tx, xfer;
    while (in >> tx >> xfer) acked.push_back({tx, xfer, "proc" + std::to_string(p)});
  }
  EXPECT_EQ(errors.count(), 0) << errors.Describe();

  // No two writers got the same tx id or entity id.
  std::set<Entid> txs, xfers;
  for (const auto& a : acked) {
    EXPECT_TRUE(txs.insert(a.tx).second) << "tx id " << a.tx << " handed out twice";
    EXPECT_TRUE(xfers.insert(a.xfer).second) << "entity id " << a.xfer << " handed out twice";
  }
  // Every acknowledged transfer is there, in the transaction that acknowledged it.
  auto amounts = store->datoms(":aevt", {Kw("xfer/amount")});
  ASSERT_TRUE(amounts.ok()) << amounts.status().ToString();
  EXPECT_EQ(amounts->size(), acked.size());
  std::map<Entid, Entid> tx_of;
  for (const Datom& d : *amounts) tx_of[d.e] = d.tx;
  for (const auto& a : acked) {
    auto it = tx_of.find(a.xfer);
    if (it == tx_of.end()) {
      ADD_FAILURE() << a.writer << "'s transfer " << a.xfer << " is missing";
      continue;
    }
    EXPECT_EQ(it->second, a.tx) << a.writer << "'s transfer " << a.xfer;
  }
  int64_t sum = 0, count = 0;
  ASSERT_TRUE(SumBalances(store->db(), &sum, &count).ok());
  EXPECT_EQ(sum, total);
  EXPECT_EQ(count, kAccounts);
  store.reset();
  other.reset();
  EXPECT_EQ(IntegrityCheck(path), "ok");
  std::cout << "[stress] " << acked.size() << " transfers, " << reads << " snapshot reads, "
            << as_of_reads << " as-of reads, " << queries << " queries (" << interrupted
            << " interrupted by " << interrupts << " interrupts"
            << (queries_supported ? "" : "; queries not available") << ")" << std::endl;
  EXPECT_GT(acked.size(), 0u);
  EXPECT_GT(reads.load(), 0);
}

TEST(Concurrency, ProcessesCreatingOneNewStoreAtOnceAgree) {
  TempDir dir;
  std::string path = dir.Path("new.db");
  constexpr int kProcesses = 4, kTx = 20;
  std::vector<Child> children;
  for (int p = 0; p < kProcesses; ++p)
    children.push_back(Spawn(
        {WorkerPath(), "create", path, dir.Path("out" + std::to_string(p)), std::to_string(kTx)},
        dir.path()));
  std::set<Entid> txs, entities;
  for (int p = 0; p < kProcesses; ++p) {
    Exit e = Wait(children[p], 60000);
    ASSERT_TRUE(e.exited && e.code == 0)
        << "process " << p << " " << e.Describe() << ": " << ReadFile(children[p].stderr_path);
    std::istringstream in(ReadFile(dir.Path("out" + std::to_string(p))));
    Entid tx, ent;
    int n = 0;
    for (; in >> tx >> ent; ++n) {
      EXPECT_TRUE(txs.insert(tx).second) << "tx " << tx << " twice";
      EXPECT_TRUE(entities.insert(ent).second) << "entity " << ent << " twice";
    }
    EXPECT_EQ(n, kTx);
  }
  auto store = MustOpen(path);
  ASSERT_TRUE(store);
  auto keys = store->datoms(":aevt", {Kw("crash/key")});
  ASSERT_TRUE(keys.ok());
  EXPECT_EQ(keys->size(), size_t{kProcesses * kTx + 1});  // + the counter entity
  // One bootstrap, one copy of each schema attribute.
  auto idents = store->datoms(":avet", {Kw("db/ident"), Kw("crash/batch")});
  ASSERT_TRUE(idents.ok());
  EXPECT_EQ(idents->size(), 1u);
  auto instants = store->datoms(":aevt", {Kw("db/txInstant")});
  ASSERT_TRUE(instants.ok());
  std::set<Entid> all_tx;
  for (const Datom& d : *instants) all_tx.insert(d.e);
  EXPECT_EQ(all_tx.size(), instants->size()) << "a transaction with two instants";
  for (Entid t : txs) EXPECT_TRUE(all_tx.count(t)) << "tx " << t << " has no instant";
  store.reset();
  EXPECT_EQ(IntegrityCheck(path), "ok");
}

// Intervals [from, to) of the transactions during which a datom or schema fact held, read
// from a history database (to: INT64_MAX while it still holds).
using Intervals = std::vector<std::pair<Entid, Entid>>;

Intervals HeldDuring(std::vector<std::pair<Entid, bool>> events) {
  std::sort(events.begin(), events.end());
  Intervals out;
  for (const auto& [tx, added] : events) {
    if (added) {
      out.emplace_back(tx, INT64_MAX);
    } else if (!out.empty() && out.back().second == INT64_MAX) {
      out.back().second = tx;
    }
  }
  return out;
}

bool Overlap(const std::pair<Entid, Entid>& x, const std::pair<Entid, Entid>& y, Entid* from,
             Entid* to) {
  *from = std::max(x.first, y.first);
  *to = std::min(x.second, y.second);
  return *from < *to;
}

// Process A writes a value twice and retracts the duplicate, in a loop; process B turns
// :db.unique/value on and off on that attribute. Each commits with the schema its Store
// last read, so a Store that takes a foreign schema change as seen (for instance by reading
// SQLite's data version after its own COMMIT, when another process may have committed in
// between) lets duplicates in while the attribute is unique. The whole history is checked:
// no two entities may hold one value at any transaction during which :race/v was unique.
// MENTAT_SCHEMA_RACE_MILLIS (default 30000) sets the duration.
TEST(Concurrency, SchemaChangesOfAnotherProcessAreSeenByTheNextTransaction) {
  TempDir dir;
  std::string path = dir.Path("race.db");
  {
    auto store = MustOpen(path);
    ASSERT_TRUE(store);
    ASSERT_TRUE(store
                    ->transact("[{:db/ident :race/v :db/valueType :db.type/long "
                               ":db/cardinality :db.cardinality/one}]")
                    .ok());
  }
  const int64_t millis = EnvInt("MENTAT_SCHEMA_RACE_MILLIS", 30000);
  Child writer = Spawn({WorkerPath(), "dup-writer", path, std::to_string(millis)}, dir.path());
  Child toggler = Spawn({WorkerPath(), "unique-toggler", path, std::to_string(millis)}, dir.path());
  ASSERT_GT(writer.pid, 0);
  ASSERT_GT(toggler.pid, 0);
  for (const Child* c : {&writer, &toggler}) {
    Exit e = Wait(*c, static_cast<int>(millis) + 120000);
    ASSERT_TRUE(e.exited && e.code == 0) << e.Describe() << ": " << ReadFile(c->stderr_path);
  }
  std::string wrote = ReadFile(writer.stdout_path), toggled = ReadFile(toggler.stdout_path);
  std::cout << "[   INFO   ] " << millis << " ms: writer " << wrote << "             toggler "
            << toggled;

  auto store = MustOpen(path);
  ASSERT_TRUE(store);
  Db history = store->db().history();
  auto unique =
      history.q("[:find ?tx ?added :where [?a :db/ident :race/v] [?a :db/unique _ ?tx ?added]]");
  ASSERT_TRUE(unique.ok()) << unique.status().ToString();
  std::vector<std::pair<Entid, bool>> unique_events;
  for (const auto& row : unique->rows)
    unique_events.emplace_back(row[0].as_int(), row[1].as_bool());
  Intervals unique_during = HeldDuring(unique_events);
  // Both sides made progress, and the race was run many times over.
  EXPECT_GT(unique_during.size(), 10u) << toggled;
  auto values = history.q("[:find ?v ?e ?tx ?added :where [?e :race/v ?v ?tx ?added]]");
  ASSERT_TRUE(values.ok()) << values.status().ToString();
  // value -> entity -> events
  std::map<int64_t, std::map<Entid, std::vector<std::pair<Entid, bool>>>> by_value;
  for (const auto& row : values->rows)
    by_value[row[0].as_int()][row[1].as_int()].emplace_back(row[2].as_int(), row[3].as_bool());
  EXPECT_GT(by_value.size(), 10u) << wrote;
  int violations = 0;
  std::string first;
  for (const auto& [v, holders] : by_value) {
    std::vector<Intervals> held;
    for (const auto& [e, events] : holders) held.push_back(HeldDuring(events));
    for (size_t i = 0; i < held.size(); ++i)
      for (size_t j = i + 1; j < held.size(); ++j)
        for (const auto& x : held[i])
          for (const auto& y : held[j]) {
            Entid from, to;
            if (!Overlap(x, y, &from, &to)) continue;
            for (const auto& u : unique_during) {
              Entid f2, t2;
              if (!Overlap({from, to}, u, &f2, &t2)) continue;
              if (violations++ == 0)
                first = "value " + std::to_string(v) + " held twice during tx " +
                        std::to_string(f2) + " .. " + std::to_string(t2) + " while unique";
            }
          }
  }
  EXPECT_EQ(violations, 0) << first;
  store.reset();
  EXPECT_EQ(IntegrityCheck(path), "ok");
}

TEST(Concurrency, InterruptStopsALongQueryAndLeavesTheStoreUsable) {
  TempDir dir;
  auto store = MustOpen(dir.Path("interrupt.db"));
  ASSERT_TRUE(store);
  ASSERT_TRUE(SetUpBank(store.get()).ok());
  auto probe = store->q("[:find ?a :where [?a :acct/id _]]");
  ASSERT_TRUE(probe.ok()) << probe.status().ToString();
  // Seed enough entities that a four-way cross product takes far longer than the test.
  std::string tx = "[";
  for (int i = 0; i < 300; ++i) tx += "{:xfer/seq " + std::to_string(i) + "}";
  tx += "]";
  ASSERT_TRUE(store->transact(tx).ok());
  const char* slow =
      "[:find (count ?a) . :where [?a :xfer/seq ?x] [?b :xfer/seq ?y] [?c :xfer/seq ?z] "
      "[?d :xfer/seq ?w] [(< ?x ?y)] [(< ?z ?w)]]";
  for (int round = 0; round < 3; ++round) {
    std::atomic<bool> done{false};
    Result<QueryResult> r = Status::Internal("not run");
    std::thread t([&] {
      r = store->q(slow);
      done = true;
    });
    auto start = std::chrono::steady_clock::now();
    while (!done && std::chrono::steady_clock::now() - start < std::chrono::seconds(30)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      store->interrupt();
    }
    t.join();
    ASSERT_FALSE(r.ok()) << "the cross product finished";
    EXPECT_EQ(r.status().code(), Code::kInterrupted) << r.status().ToString();
    // The store is usable: writes, reads and queries succeed.
    ASSERT_TRUE(store->transact("[{:xfer/seq -1}]").ok());
    auto q = store->q("[:find ?b :where [_ :acct/balance ?b]]");
    ASSERT_TRUE(q.ok()) << q.status().ToString();
  }
  // A timeout is an interrupt too.
  QueryOptions o;
  o.timeout_ms = 50;
  auto timed = store->q(slow, o);
  ASSERT_FALSE(timed.ok());
  EXPECT_EQ(timed.status().code(), Code::kInterrupted) << timed.status().ToString();
}

}  // namespace
}  // namespace mentat::reliability
