// Crash recovery: a child process commits transactions of many sizes and is killed with
// SIGKILL at a random moment; the store is reopened and must hold every acknowledged
// transaction in full, no transaction in part, pass PRAGMA integrity_check, and accept
// new transactions. Repeated many times on the same store, under each `synchronous`
// setting (a process crash loses nothing under any of them; see doc/reliability.md).
//
// MENTAT_CRASH_ITERATIONS (default 24) sets the number of kills; `make stress` raises it.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "util.h"

namespace mentat::reliability {
namespace {

edn::Value Kw(const char* k) { return edn::Value::Keyword(k); }

// batch number -> tx id, for every complete line of the ack file.
std::map<int64_t, Entid> ReadAcks(const std::string& path) {
  std::map<int64_t, Entid> acks;
  std::string data = ReadFile(path);
  size_t start = 0;
  for (;;) {
    size_t nl = data.find('\n', start);
    if (nl == std::string::npos) break;  // a torn last line was never acknowledged
    std::istringstream line(data.substr(start, nl - start));
    int64_t n = 0;
    Entid tx = 0;
    if (line >> n >> tx) acks[n] = tx;
    start = nl + 1;
  }
  return acks;
}

// True when `pid` has exited (without reaping it).
bool Exited(pid_t pid) {
  siginfo_t info{};
  return waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid != 0;
}

struct BatchState {
  Entid tx = 0;
  std::vector<Entid> entities;  // header and members
};

// Checks every datom of batch `n`'s entities; decrements `*budget` per entity.
void CheckBatchDetail(Store* store, const Schema& schema, int64_t n, const BatchState& batch,
                      int* budget) {
  std::set<int64_t> seqs;
  for (Entid e : batch.entities) {
    --*budget;
    auto d = store->datoms(":eavt", {edn::Value::Int(e)});
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    std::map<std::string, std::vector<edn::Value>> attrs;
    for (const Datom& x : *d) {
      const std::string* ident = schema.ident(x.a);
      ASSERT_NE(ident, nullptr);
      attrs[*ident].push_back(x.v);
      EXPECT_EQ(x.tx, batch.tx);
    }
    if (attrs.count("crash/size")) {
      EXPECT_EQ(attrs["crash/size"].at(0).as_int(), BatchSize(n));
      EXPECT_EQ(attrs["crash/key"].at(0).str(), "h" + std::to_string(n));
      continue;
    }
    ASSERT_EQ(attrs["crash/seq"].size(), 1u) << "entity " << e;
    int64_t i = attrs["crash/seq"][0].as_int();
    seqs.insert(i);
    EXPECT_EQ(attrs["crash/key"].at(0).str(), "b" + std::to_string(n) + "-" + std::to_string(i));
    ASSERT_EQ(attrs["crash/blob"].size(), 1u);
    EXPECT_TRUE(attrs["crash/blob"][0].str() == BlobFor(n, i)) << "blob of b" << n << "-" << i;
    EXPECT_EQ(attrs["crash/tags"].size(), 2u);
  }
  EXPECT_EQ(seqs.size(), static_cast<size_t>(BatchSize(n))) << "batch " << n;
}

// Checks the store after a crash: every batch present is complete and was written by one
// transaction, the batches present are 1..max without gaps, every acknowledged batch is
// present with its acknowledged tx id, and the counter names the last batch. Members of
// batches >= `detail_from` are checked datom by datom (at most `detail_budget` entities).
// Returns the last batch present (0 when none).
int64_t VerifyStore(Store* store, const std::map<int64_t, Entid>& acks, int64_t detail_from,
                    int detail_budget) {
  auto schema = store->schema();
  if (!schema->attribute("crash/batch")) {
    EXPECT_TRUE(acks.empty()) << "acknowledged batches but no schema";
    return 0;
  }
  auto batch_datoms = store->datoms(":aevt", {Kw("crash/batch")});
  EXPECT_TRUE(batch_datoms.ok()) << batch_datoms.status().ToString();
  if (!batch_datoms.ok()) return 0;
  std::map<int64_t, BatchState> batches;
  for (const Datom& d : *batch_datoms) {
    BatchState& b = batches[d.v.as_int()];
    if (b.tx == 0) b.tx = d.tx;
    EXPECT_EQ(b.tx, d.tx) << "batch " << d.v.as_int() << " was written by two transactions";
    b.entities.push_back(d.e);
  }
  int64_t expect_n = 1;
  for (const auto& [n, b] : batches) {
    EXPECT_EQ(n, expect_n) << "batch " << expect_n << " is missing but later ones exist";
    expect_n = n + 1;
    EXPECT_EQ(b.entities.size(), static_cast<size_t>(BatchSize(n) + 1))
        << "batch " << n << " is there only in part";
  }
  int64_t last = batches.empty() ? 0 : batches.rbegin()->first;
  for (const auto& [n, tx] : acks) {
    auto it = batches.find(n);
    if (it == batches.end()) {
      ADD_FAILURE() << "acknowledged batch " << n << " (tx " << tx << ") was lost";
      continue;
    }
    EXPECT_EQ(it->second.tx, tx) << "batch " << n;
  }
  // The counter is set by every batch: it must name the last one.
  auto counter = store->datoms(
      ":eavt",
      {edn::Value::Vector({Kw("crash/key"), edn::Value::String("counter")}), Kw("crash/counter")});
  EXPECT_TRUE(counter.ok()) << counter.status().ToString();
  if (counter.ok()) {
    if (last == 0) {
      EXPECT_TRUE(counter->empty());
    } else {
      EXPECT_EQ(counter->size(), 1u);
      if (counter->size() == 1) {
        EXPECT_EQ((*counter)[0].v.as_int(), last);
        EXPECT_EQ((*counter)[0].tx, batches[last].tx);
      }
    }
  }
  int budget = detail_budget;
  for (auto it = batches.rbegin(); it != batches.rend() && it->first >= detail_from && budget > 0;
       ++it)
    CheckBatchDetail(store, *schema, it->first, it->second, &budget);
  return last;
}

TEST(CrashRecovery, SigkillAtRandomPointsLosesNothingAcknowledged) {
  TempDir dir;
  std::string path = dir.Path("crash.db");
  std::string ack = dir.Path("acks");
  int iterations = static_cast<int>(EnvInt("MENTAT_CRASH_ITERATIONS", 24));
  Rng rng(static_cast<uint64_t>(EnvInt("MENTAT_CRASH_SEED", 20240611)));
  int64_t next = 1, verified = 0;
  int kills = 0, probes = 0;
  for (int it = 0; it < iterations; ++it) {
    int sync = it % 3;  // off, normal, full
    Child child =
        Spawn({WorkerPath(), "crash-writer", path, ack, std::to_string(next), std::to_string(sync)},
              dir.path());
    ASSERT_GT(child.pid, 0);
    // Mostly mid-workload (once the writer has committed in this life, so that slow
    // sanitizer builds get work done too); sometimes within its first milliseconds
    // (open, bootstrap, schema).
    bool early = rng.OneIn(8);
    int delay_ms = early ? static_cast<int>(rng.Range(0, 5)) : static_cast<int>(rng.Range(0, 150));
    if (!early) {
      size_t acked_before = ReadFile(ack).size();
      auto start = std::chrono::steady_clock::now();
      while (ReadFile(ack).size() == acked_before &&
             std::chrono::steady_clock::now() - start < std::chrono::seconds(60) &&
             !Exited(child.pid))
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    kill(child.pid, SIGKILL);
    Exit e = Wait(child, 30000);
    ASSERT_TRUE(e.signaled && e.signal == SIGKILL)
        << "the writer " << e.Describe() << ": " << ReadFile(child.stderr_path);
    ++kills;

    auto store = Store::open(path);
    ASSERT_TRUE(store.ok()) << "reopen after kill " << it << ": " << store.status().ToString();
    auto acks = ReadAcks(ack);
    int64_t last = VerifyStore(store->get(), acks, verified - 1, 3000);
    if (HasFailure()) {
      ADD_FAILURE() << "after kill " << it << " (synchronous " << sync << ", delay " << delay_ms
                    << " ms)";
      return;
    }
    ASSERT_GE(last, acks.empty() ? 0 : acks.rbegin()->first);
    // New transactions work on the recovered store.
    if ((*store)->schema()->attribute("crash/probe")) {
      auto p = (*store)->transact("[{:db/id \"p\" :crash/probe " + std::to_string(it) + "}]");
      ASSERT_TRUE(p.ok()) << p.status().ToString();
      auto d = (*store)->datoms(":eavt", {edn::Value::Int(p->tempids.at("p"))});
      ASSERT_TRUE(d.ok());
      EXPECT_EQ(d->size(), 1u);
      ++probes;
    }
    store->reset();
    ASSERT_EQ(IntegrityCheck(path), "ok") << "after kill " << it;
    verified = last;
    next = last + 1;
  }
  RecordProperty("kills", kills);
  RecordProperty("batches", static_cast<int>(next - 1));
  std::cout << "[crash] " << kills << " kills, " << next - 1 << " batches committed, " << probes
            << " probes" << std::endl;
  EXPECT_GT(next, 1) << "no batch was ever committed";
}

}  // namespace
}  // namespace mentat::reliability
