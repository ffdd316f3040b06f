// I/O faults injected through a test SQLite VFS (fault_vfs.h): every read, write and sync
// of a transaction, of opening a new store, and of reads, made to fail in turn. Each
// failure must be a clear error, leave no transaction in part, and leave the same Store
// usable once the fault is gone; reopening must find every acknowledged transaction.
#include "fault_vfs.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <map>
#include <set>

#include "storage/vfs.h"
#include "util.h"

namespace mentat::reliability {
namespace {

using faultvfs::Op;

edn::Value Kw(const char* k) { return edn::Value::Keyword(k); }

// batch -> tx of every batch present; each must be complete and from one transaction.
std::map<int64_t, Entid> PresentBatches(Store* store) {
  std::map<int64_t, Entid> out;
  auto d = store->datoms(":aevt", {Kw("crash/batch")});
  EXPECT_TRUE(d.ok()) << d.status().ToString();
  if (!d.ok()) return out;
  std::map<int64_t, int> count;
  for (const Datom& x : *d) {
    int64_t n = x.v.as_int();
    auto [it, fresh] = out.emplace(n, x.tx);
    EXPECT_TRUE(fresh || it->second == x.tx) << "batch " << n << " spans two transactions";
    ++count[n];
  }
  for (const auto& [n, c] : count)
    EXPECT_EQ(c, BatchSize(n) + 1) << "batch " << n << " is there only in part";
  return out;
}

// Checks an I/O failure's status: an I/O error (or a busy/corrupt report SQLite may give
// after a failed write) with a message that says what happened.
void ExpectClearIoError(const Status& st, const std::string& context) {
  EXPECT_TRUE(st.code() == Code::kIo) << context << ": " << st.ToString();
  EXPECT_FALSE(st.message().empty()) << context;
  bool says = st.message().find("I/O") != std::string::npos ||
              st.message().find("disk") != std::string::npos ||
              st.message().find("full") != std::string::npos;
  EXPECT_TRUE(says) << context << ": the message does not say what failed: " << st.ToString();
}

// The next batch number after `n` whose batch is small (<= 30 entities): enough pages to
// fail in many places, few enough operations to try every one of them quickly.
int64_t NextSmallBatch(int64_t n) {
  do {
    ++n;
  } while (BatchSize(n) > 30);
  return n;
}

struct Scenario {
  Op op;
  int rc;
  bool persistent;
  bool torn;
  const char* name;
};

const Scenario kScenarios[] = {
    {Op::kWrite, SQLITE_IOERR_WRITE, false, false, "write error"},
    {Op::kWrite, SQLITE_IOERR_WRITE, false, true, "torn write"},
    {Op::kWrite, SQLITE_FULL, true, false, "disk full"},
    {Op::kSync, SQLITE_IOERR_FSYNC, false, false, "fsync error"},
};

// The fault VFS under mentat's WAL write buffer (storage/vfs.h), as a store opens
// files by default, with a small buffer so that large transactions fill it.
constexpr const char* kBufferOverFaults = "mentat-walbuf-over-fault";

std::string BufferedUri(const std::string& path) {
  return "file:" + path + "?vfs=" + kBufferOverFaults;
}

// Makes each write or sync of a transaction fail in turn, through the VFS that `uri` names.
void CheckEveryFailedWriteOrSync(std::string (*uri)(const std::string&), Synchronous sync) {
  ASSERT_TRUE(faultvfs::Register());
  TempDir dir;
  std::string path = dir.Path("faults.db");
  Options o;
  o.synchronous = sync;
  std::map<int64_t, Entid> acked;
  std::set<int64_t> failed_write, failed_sync;
  int faults = 0;
  {
    auto store = Store::open(uri(path), o);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    ASSERT_TRUE(InstallCrashSchema(store->get()).ok());
    int64_t n = 0;
    for (const Scenario& sc : kScenarios) {
      for (int nth = 1; nth <= 300; ++nth) {
        n = NextSmallBatch(n);
        faultvfs::Arm(sc.op, nth, sc.rc, sc.persistent, sc.torn);
        auto r = (*store)->transact(BatchTx(n));
        int triggered = faultvfs::Triggered();
        faultvfs::Disarm();
        std::string context = std::string(sc.name) + " at operation " + std::to_string(nth);
        if (r.ok()) {
          acked[n] = r->tx_id;
        } else {
          ++faults;
          ExpectClearIoError(r.status(), context);
          (sc.op == Op::kSync ? failed_sync : failed_write).insert(n);
        }
        // The fault is gone: the same Store commits again.
        int64_t failed_n = n;
        n = NextSmallBatch(n);
        auto again = (*store)->transact(BatchTx(n));
        ASSERT_TRUE(again.ok()) << context << ", then: " << again.status().ToString();
        acked[n] = again->tx_id;
        auto present = PresentBatches(store->get());
        for (const auto& [b, tx] : acked) {
          auto it = present.find(b);
          ASSERT_TRUE(it != present.end()) << context << ": acknowledged batch " << b << " lost";
          EXPECT_EQ(it->second, tx);
        }
        if (!r.ok()) {
          EXPECT_EQ(present.count(failed_n), 0u) << context << ": a failed tx is visible";
        }
        if (::testing::Test::HasFailure()) return;
        if (triggered == 0) break;  // the transaction needed fewer operations than nth
      }
    }
  }
  // Reopened without faults (a crash-like restart): all acknowledged transactions are there.
  auto store = Store::open(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto present = PresentBatches(store->get());
  for (const auto& [b, tx] : acked) EXPECT_TRUE(present.count(b)) << "batch " << b << " lost";
  int resurrected = 0;
  for (int64_t b : failed_write)
    EXPECT_EQ(present.count(b), 0u) << "batch " << b << " failed a write but was committed";
  for (int64_t b : failed_sync) resurrected += static_cast<int>(present.count(b));
  store->reset();
  EXPECT_EQ(IntegrityCheck(path), "ok");
  std::cout << "[faults] " << faults << " failed transactions, " << acked.size()
            << " acknowledged; " << resurrected << " of " << failed_sync.size()
            << " whose fsync failed were found committed after reopening" << std::endl;
  EXPECT_GT(faults, 10);
}

TEST(FaultInjection, EveryFailedWriteOrSyncLeavesNoPartialTransaction) {
  CheckEveryFailedWriteOrSync(faultvfs::Uri, Synchronous::kFull);  // a sync in every commit
}

// Through the WAL write buffer, whose write-outs carry many of SQLite's writes at once: a
// failed write-out fails the commit and the frames it carried are written again.
TEST(FaultInjection, EveryFailedWriteThroughTheWalBufferLeavesNoPartialTransaction) {
  ASSERT_TRUE(faultvfs::Register());
  storage::VfsOptions small;
  small.wal_buffer_bytes = 8192;
  ASSERT_TRUE(storage::RegisterVfs(kBufferOverFaults, "mentat-fault", small).ok());
  CheckEveryFailedWriteOrSync(BufferedUri, Synchronous::kNormal);
  CheckEveryFailedWriteOrSync(BufferedUri, Synchronous::kFull);
}

TEST(FaultInjection, FailuresWhileCreatingAStoreLeaveAUsableFile) {
  ASSERT_TRUE(faultvfs::Register());
  TempDir dir;
  int failures = 0;
  for (Op op : {Op::kWrite, Op::kSync}) {
    for (int nth = 1; nth <= 200; ++nth) {
      std::string path = dir.Path("create-" + std::to_string(static_cast<int>(op)) + "-" +
                                  std::to_string(nth) + ".db");
      faultvfs::Arm(op, nth, op == Op::kWrite ? SQLITE_IOERR_WRITE : SQLITE_IOERR_FSYNC);
      int triggered;
      {
        auto s = Store::open(faultvfs::Uri(path));
        triggered = faultvfs::Triggered();
        faultvfs::Disarm();
        if (!s.ok()) {
          ++failures;
          ExpectClearIoError(s.status(), "create, fault at " + std::to_string(nth));
        }
      }
      auto s = Store::open(path);
      ASSERT_TRUE(s.ok()) << "reopen after a fault at " << nth << ": " << s.status().ToString();
      ASSERT_TRUE((*s)->schema()->attribute("db/txInstant") != nullptr);
      Status r = InstallCrashSchema(s->get());
      ASSERT_TRUE(r.ok()) << r.ToString();
      s->reset();
      ASSERT_EQ(IntegrityCheck(path), "ok") << "fault at " << nth;
      if (triggered == 0) break;
    }
  }
  EXPECT_GT(failures, 0);
}

TEST(FaultInjection, ReadErrorsAreCleanErrors) {
  ASSERT_TRUE(faultvfs::Register());
  TempDir dir;
  std::string path = dir.Path("reads.db");
  Options o;
  o.mmap_size = 0;  // reads through xRead, where the faults are
  auto store = Store::open(faultvfs::Uri(path), o);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ASSERT_TRUE(InstallCrashSchema(store->get()).ok());
  for (int64_t n = 1; n <= 20; ++n) ASSERT_TRUE((*store)->transact(BatchTx(n)).ok());
  auto baseline = (*store)->datoms(":aevt", {Kw("crash/batch")});
  ASSERT_TRUE(baseline.ok());
  // Another writer makes the reader's page cache stale before each read.
  auto writer = Store::open(path);
  ASSERT_TRUE(writer.ok());
  int failures = 0;
  for (int nth = 1; nth <= 200; ++nth) {
    ASSERT_TRUE((*writer)->transact("[{:crash/probe " + std::to_string(nth) + "}]").ok());
    faultvfs::Arm(Op::kRead, nth, SQLITE_IOERR_READ);
    auto d = (*store)->datoms(":aevt", {Kw("crash/batch")});
    int triggered = faultvfs::Triggered();
    faultvfs::Disarm();
    if (!d.ok()) {
      ++failures;
      ExpectClearIoError(d.status(), "read fault at " + std::to_string(nth));
    } else {
      EXPECT_EQ(d->size(), baseline->size());
    }
    // A failed read during a transaction fails the transaction cleanly.
    faultvfs::Arm(Op::kRead, nth, SQLITE_IOERR_READ);
    auto t = (*store)->transact("[{:crash/probe -" + std::to_string(nth) + "}]");
    faultvfs::Disarm();
    if (!t.ok()) {
      ExpectClearIoError(t.status(), "read fault in a transaction at " + std::to_string(nth));
    }
    auto again = (*store)->datoms(":aevt", {Kw("crash/batch")});
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    EXPECT_EQ(again->size(), baseline->size());
    if (triggered == 0) break;
  }
  EXPECT_GT(failures, 0);
  store->reset();
  writer->reset();
  EXPECT_EQ(IntegrityCheck(path), "ok");
}

TEST(FaultInjection, FullDiskThenSpaceComesBack) {
  ASSERT_TRUE(faultvfs::Register());
  TempDir dir;
  std::string path = dir.Path("full.db");
  auto store = Store::open(faultvfs::Uri(path));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ASSERT_TRUE(InstallCrashSchema(store->get()).ok());
  ASSERT_TRUE((*store)->transact(BatchTx(1)).ok());
  faultvfs::Arm(Op::kWrite, 1, SQLITE_FULL, /*persistent=*/true);
  for (int64_t n = 2; n < 5; ++n) {
    auto r = (*store)->transact(BatchTx(n));
    ASSERT_FALSE(r.ok());
    ExpectClearIoError(r.status(), "disk full");
    EXPECT_NE(r.status().message().find("full"), std::string::npos) << r.status().ToString();
    // Reads go on while the disk is full.
    auto d = (*store)->datoms(":aevt", {Kw("crash/batch")});
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    EXPECT_EQ(d->size(), static_cast<size_t>(BatchSize(1) + 1));
  }
  faultvfs::Disarm();
  auto r = (*store)->transact(BatchTx(5));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto present = PresentBatches(store->get());
  EXPECT_EQ(present.size(), 2u);
  EXPECT_TRUE(present.count(1) && present.count(5));
  store->reset();
  EXPECT_EQ(IntegrityCheck(path), "ok");
}

// The durability promise of each `synchronous` setting rests on when SQLite syncs: under
// kFull every commit is synced before it is acknowledged; under kNormal and kOff commits
// are not synced (kNormal syncs at checkpoints, kOff never).
TEST(FaultInjection, SynchronousSettingDecidesWhenCommitsAreSynced) {
  ASSERT_TRUE(faultvfs::Register());
  TempDir dir;
  for (Synchronous sync : {Synchronous::kOff, Synchronous::kNormal, Synchronous::kFull}) {
    std::string path = dir.Path("sync-" + std::to_string(static_cast<int>(sync)) + ".db");
    Options o;
    o.synchronous = sync;
    auto store = Store::open(faultvfs::Uri(path), o);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    ASSERT_TRUE(InstallCrashSchema(store->get()).ok());
    constexpr int kCommits = 20;
    int synced_commits = 0;
    for (int64_t n = 1; n <= kCommits; ++n) {
      faultvfs::ResetCounts();
      ASSERT_TRUE((*store)->transact("[{:crash/probe " + std::to_string(n) + "}]").ok());
      if (faultvfs::Count(Op::kSync) > 0) ++synced_commits;
    }
    if (sync == Synchronous::kFull) {
      EXPECT_EQ(synced_commits, kCommits) << "a kFull commit was acknowledged before a sync";
    } else {
      EXPECT_EQ(synced_commits, 0) << "synchronous " << static_cast<int>(sync);
    }
  }
}

// Another process commits a schema change in the gap between this Store's COMMIT and its
// next statement (the fault VFS runs the other commit when this connection releases the
// WAL write lock). Everything the next transaction checks or derives must come from the
// schema of its own write snapshot: here uniqueness, cardinality and the attribute index a
// datom goes to. Before the fix the Store read SQLite's data version after COMMIT, took
// the foreign change as seen, and let duplicates in.
TEST(FaultInjection, ASchemaChangeCommittedRightAfterOurCommitIsSeenByTheNextTransaction) {
  ASSERT_TRUE(faultvfs::Register());
  TempDir dir;
  std::string path = dir.Path("gap.db");
  auto store = Store::open(faultvfs::Uri(path));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  Store* a = store->get();
  ASSERT_TRUE(a->transact("[{:db/ident :gap/v :db/valueType :db.type/long "
                          ":db/cardinality :db.cardinality/many}]")
                  .ok());
  auto other = Store::open(path);  // the other process: plain VFS
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  Store* b = other->get();
  ASSERT_TRUE(b->q("[:find ?e :where [?e :gap/v _]]").ok());

  // B changes the schema right after each of A's commits; A's next transaction must see it.
  auto in_gap = [&](const std::string& schema_tx) {
    Status st = Status::OK();
    faultvfs::OnWriteLockReleased([&] {
      auto r = b->transact(schema_tx);
      st = r.ok() ? Status::OK() : r.status();
    });
    auto r = a->transact("[{:db/id \"x\" :db/doc \"a commit of A\"}]");
    faultvfs::OnWriteLockReleased(nullptr);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_TRUE(st.ok()) << schema_tx << ": " << st.ToString();
  };

  in_gap("[[:db/add :gap/v :db/unique :db.unique/value]]");
  auto dup = a->transact("[[:db/add \"p\" :gap/v 1] [:db/add \"q\" :gap/v 1]]");
  EXPECT_FALSE(dup.ok()) << "a duplicate of a unique value was accepted";
  if (!dup.ok()) {
    EXPECT_EQ(dup.status().code(), Code::kConflict) << dup.status().ToString();
  }

  in_gap(
      "[[:db/retract :gap/v :db/unique :db.unique/value] "
      "[:db/add :gap/v :db/cardinality :db.cardinality/one]]");
  auto e = a->transact("[{:db/id \"e\" :gap/v 1}]");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  std::string eid = std::to_string(e->tempids.at("e"));
  ASSERT_TRUE(a->transact("[[:db/add " + eid + " :gap/v 2]]").ok());
  auto vals = a->q("[:find ?v :where [" + eid + " :gap/v ?v]]");
  ASSERT_TRUE(vals.ok()) << vals.status().ToString();
  EXPECT_EQ(vals->rows.size(), 1u) << "a cardinality-one attribute kept two values";

  // :db/index moves the attribute's datoms to the value index; A's next datom must go there.
  in_gap("[[:db/add :gap/v :db/index true]]");
  ASSERT_TRUE(a->transact("[{:gap/v 3}]").ok());
  store->reset();
  other->reset();
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(raw,
                               "SELECT count(*) FROM datoms WHERE a = (SELECT e FROM datoms "
                               "WHERE a = 1 AND v = ':gap/v') AND ix IS NOT 1",
                               -1, &st, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(raw);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int64(st, 0), 0)
      << "a datom went to the entity index of an indexed attribute";
  sqlite3_finalize(st);
  sqlite3_close(raw);
}

}  // namespace
}  // namespace mentat::reliability
