// Faults from the file system and from other programs: a full disk (RLIMIT_FSIZE), a
// read-only file or directory, corrupt and foreign files, and a store upgraded while
// another process has it open. Each must be a clear error that leaves the store
// consistent; none may crash.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <sstream>
#include <thread>

#include "storage/format.h"
#include "util.h"

namespace mentat::reliability {
namespace {

edn::Value Kw(const char* k) { return edn::Value::Keyword(k); }

// Makes a store with the crash schema and batches 1..n, checkpointed into the main file.
void MakeStore(const std::string& path, int64_t n) {
  {
    auto s = Store::open(path);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    ASSERT_TRUE(InstallCrashSchema(s->get()).ok());
    for (int64_t b = 1; b <= n; ++b) ASSERT_TRUE((*s)->transact(BatchTx(b)).ok());
  }
  ASSERT_EQ(ExecRaw(path, "PRAGMA wal_checkpoint(TRUNCATE)"), 0);
}

size_t CountBatchDatoms(Store* s) {
  auto d = s->datoms(":aevt", {Kw("crash/batch")});
  EXPECT_TRUE(d.ok()) << d.status().ToString();
  return d.ok() ? d->size() : 0;
}

size_t ExpectedBatchDatoms(int64_t n) {
  size_t total = 0;
  for (int64_t b = 1; b <= n; ++b) total += static_cast<size_t>(BatchSize(b) + 1);
  return total;
}

TEST(Faults, FileSizeLimitIsADiskFullErrorAndRecovers) {
  TempDir dir;
  std::string path = dir.Path("fsize.db");
  MakeStore(path, 3);
  Child c = Spawn({WorkerPath(), "fsize", path, dir.Path("acks"), "4"}, dir.path());
  Exit e = Wait(c, 120000);
  ASSERT_TRUE(e.exited && e.code == 0) << e.Describe() << ": " << ReadFile(c.stderr_path);
  std::string out = ReadFile(c.stdout_path);
  EXPECT_NE(out.find("recovered"), std::string::npos) << out;
  std::cout << "[fsize] " << out;
  // Every batch the worker acknowledged is there, complete, after it exits.
  auto s = Store::open(path);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  auto d = (*s)->datoms(":aevt", {Kw("crash/batch")});
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  std::map<int64_t, std::pair<Entid, int>> present;  // batch -> (tx, datoms)
  for (const Datom& x : *d) {
    auto& p = present[x.v.as_int()];
    p.first = x.tx;
    ++p.second;
  }
  for (const auto& [n, p] : present)
    EXPECT_EQ(p.second, BatchSize(n) + 1) << "batch " << n << " is there only in part";
  std::istringstream acks(ReadFile(dir.Path("acks")));
  int64_t n = 0;
  Entid tx = 0;
  int acked = 0;
  while (acks >> n >> tx) {
    ++acked;
    ASSERT_TRUE(present.count(n)) << "acknowledged batch " << n << " lost";
    EXPECT_EQ(present[n].first, tx);
  }
  EXPECT_GT(acked, 3);
  s->reset();
  EXPECT_EQ(IntegrityCheck(path), "ok");
}

TEST(Faults, ReadOnlyOptionRefusesWritesAndReads) {
  TempDir dir;
  std::string path = dir.Path("ro.db");
  MakeStore(path, 2);
  Options o;
  o.read_only = true;
  auto s = Store::open(path, o);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  auto r = (*s)->transact(BatchTx(3));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("read-only"), std::string::npos) << r.status().ToString();
  EXPECT_EQ(CountBatchDatoms(s->get()), ExpectedBatchDatoms(2));
  // Opening a missing file read-only is an error, not a new store.
  auto missing = Store::open(dir.Path("missing.db"), o);
  ASSERT_FALSE(missing.ok());
  EXPECT_FALSE(missing.status().message().empty());
  EXPECT_FALSE(std::filesystem::exists(dir.Path("missing.db")) &&
               std::filesystem::file_size(dir.Path("missing.db")) > 0);
}

// A store file (or its directory) without write permission, opened by a process that
// cannot override permissions.
void ReadOnlyFileCase(bool read_only_dir) {
  TempDir dir;
  std::string sub = dir.Path("store");
  std::filesystem::create_directory(sub);
  std::string path = sub + "/ro.db";
  MakeStore(path, 2);
  std::string before = ReadFile(path);
  chmod(dir.path().c_str(), 0755);
  chmod(path.c_str(), 0444);
  chmod(sub.c_str(), read_only_dir ? 0555 : 0777);
  Child c = Spawn({WorkerPath(), "readonly", path}, dir.path());
  Exit e = Wait(c, 60000);
  chmod(sub.c_str(), 0755);
  chmod(path.c_str(), 0644);
  std::cout << "[read-only " << (read_only_dir ? "dir" : "file") << "] " << ReadFile(c.stdout_path);
  EXPECT_TRUE(ReadFile(path) == before) << "a read-only store file changed";
  EXPECT_EQ(IntegrityCheck(path), "ok");
  // Exit code 3: the good store was reported as corrupt (worker.cc).
  EXPECT_TRUE(e.exited && e.code == 0)
      << e.Describe() << ": " << ReadFile(c.stderr_path) << ReadFile(c.stdout_path);
}

TEST(Faults, ReadOnlyFileGivesClearErrors) { ReadOnlyFileCase(false); }
TEST(Faults, ReadOnlyDirectoryGivesClearErrors) { ReadOnlyFileCase(true); }

struct BadFile {
  const char* name;
  std::string bytes;
  Code expect;
};

TEST(Faults, ForeignAndDamagedFilesAreRefusedClearly) {
  TempDir dir;
  std::string good = dir.Path("good.db");
  MakeStore(good, 5);
  std::string store_bytes = ReadFile(good);
  ASSERT_GT(store_bytes.size(), 8192u);
  std::string header_then_junk = std::string("SQLite format 3") + '\0';
  for (int i = 0; i < 8192; ++i) header_then_junk.push_back(static_cast<char>((i * 131) & 0xff));
  std::vector<BadFile> cases = {
      {"text", std::string("name,age\nalice,30\nbob,31\n") + std::string(600, 'x'), Code::kCorrupt},
      {"sqlite-header-junk", header_then_junk, Code::kCorrupt},
      {"first-page-only", store_bytes.substr(0, 4096), Code::kCorrupt},
      {"zeros", std::string(16384, '\0'), Code::kCorrupt},
  };
  for (const auto& c : cases) {
    std::string path = dir.Path(std::string(c.name) + ".db");
    ASSERT_TRUE(WriteFile(path, c.bytes));
    auto s = Store::open(path);
    if (s.ok()) {
      // Opening may succeed when the damage is past what open reads; then every read
      // must fail clearly or succeed, never crash.
      auto d = (*s)->datoms(":aevt", {Kw("crash/batch")});
      if (!d.ok()) {
        EXPECT_NE(d.status().code(), Code::kInternal) << c.name;
      }
      ADD_FAILURE() << c.name << ": opened a file that is not a store";
      continue;
    }
    EXPECT_EQ(s.status().code(), c.expect) << c.name << ": " << s.status().ToString();
    EXPECT_FALSE(s.status().message().empty()) << c.name;
    // The file was not modified by the refusal.
    EXPECT_TRUE(ReadFile(path) == c.bytes) << c.name << " was modified";
  }
  // A mentat store without its format marker, or from a newer mentat.
  {
    std::string path = dir.Path("no-marker.db");
    ASSERT_TRUE(WriteFile(path, store_bytes));
    ASSERT_EQ(ExecRaw(path, "DELETE FROM meta WHERE key = 'format'"), 0);
    auto s = Store::open(path);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().code(), Code::kCorrupt) << s.status().ToString();
  }
  // A garbage WAL beside a good store is ignored: the store opens with its data.
  {
    std::string path = dir.Path("bad-wal.db");
    ASSERT_TRUE(WriteFile(path, store_bytes));
    ASSERT_TRUE(WriteFile(path + "-wal", std::string(40000, 'w')));
    auto s = Store::open(path);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_EQ(CountBatchDatoms(s->get()), ExpectedBatchDatoms(5));
    EXPECT_TRUE((*s)->transact(BatchTx(6)).ok());
  }
}

// Damaged bytes anywhere in a store: open, read and write must each succeed or fail with
// an error; nothing may crash (the sanitizer builds catch memory errors).
TEST(Faults, RandomlyDamagedStoresNeverCrash) {
  TempDir dir;
  std::string good = dir.Path("good.db");
  MakeStore(good, 8);
  std::string bytes = ReadFile(good);
  Rng rng(7);
  int opened = 0, refused = 0, read_errors = 0, write_errors = 0;
  const int rounds = static_cast<int>(EnvInt("MENTAT_DAMAGE_ROUNDS", 60));
  for (int round = 0; round < rounds; ++round) {
    std::string damaged = bytes;
    int flips = static_cast<int>(rng.Range(1, 24));
    for (int i = 0; i < flips; ++i) {
      size_t at = static_cast<size_t>(rng.Range(100, static_cast<int64_t>(damaged.size()) - 1));
      damaged[at] = static_cast<char>(rng.Next() & 0xff);
    }
    std::string path = dir.Path("damaged-" + std::to_string(round) + ".db");
    ASSERT_TRUE(WriteFile(path, damaged));
    auto s = Store::open(path);
    if (!s.ok()) {
      ++refused;
      EXPECT_FALSE(s.status().message().empty());
      continue;
    }
    ++opened;
    for (const char* index : {":eavt", ":aevt", ":avet", ":vaet"}) {
      auto d = (*s)->datoms(index, {});
      if (!d.ok()) {
        ++read_errors;
        EXPECT_NE(d.status().code(), Code::kInternal) << d.status().ToString();
      }
    }
    auto d = (*s)->datoms(":aevt", {Kw("crash/blob")});
    if (!d.ok()) ++read_errors;
    auto r = (*s)->transact(BatchTx(100 + round));
    if (!r.ok()) {
      ++write_errors;
      EXPECT_FALSE(r.status().message().empty());
    }
    auto q = (*s)->q("[:find ?e ?v :where [?e :crash/seq ?v]]");
    (void)q;
    std::filesystem::remove(path);
  }
  std::cout << "[damage] " << rounds << " damaged stores: " << refused << " refused, " << opened
            << " opened (" << read_errors << " read errors, " << write_errors << " write errors)"
            << std::endl;
}

// Turns a current store into the format-1 file an older mentat wrote.
void DowngradeToFormatOne(const std::string& path) {
  ASSERT_EQ(
      ExecRaw(path, std::string(storage::kDowngradeTo2ForTests) + storage::kDowngrade2To1ForTests),
      0);
}

int64_t RawInt(const std::string& path, const std::string& sql);

TEST(Faults, ProcessesOpeningAnOldStoreAtOnceUpgradeItOnce) {
  TempDir dir;
  std::string path = dir.Path("old.db");
  MakeStore(path, 3);
  DowngradeToFormatOne(path);
  constexpr int kProcesses = 3, kTx = 10;
  std::vector<Child> children;
  for (int p = 0; p < kProcesses; ++p)
    children.push_back(Spawn(
        {WorkerPath(), "create", path, dir.Path("out" + std::to_string(p)), std::to_string(kTx)},
        dir.path()));
  for (auto& c : children) {
    Exit e = Wait(c, 60000);
    EXPECT_TRUE(e.exited && e.code == 0) << e.Describe() << ": " << ReadFile(c.stderr_path);
  }
  EXPECT_EQ(RawInt(path, "PRAGMA user_version"), storage::kFormatVersion);
  // The statistics count every datom once, whoever upgraded and whoever wrote after.
  EXPECT_EQ(RawInt(path,
                   "SELECT datoms FROM attr_stats WHERE a = (SELECT e FROM datoms WHERE a = 1 "
                   "AND v = ':crash/key')"),
            RawInt(path,
                   "SELECT count(*) FROM datoms WHERE a = (SELECT e FROM datoms WHERE a = 1 "
                   "AND v = ':crash/key')"));
  EXPECT_EQ(IntegrityCheck(path), "ok");
}

TEST(Faults, UpgradeWhileAnOlderReaderHoldsASnapshot) {
  TempDir dir;
  std::string path = dir.Path("held.db");
  MakeStore(path, 3);
  DowngradeToFormatOne(path);
  Child reader = Spawn({WorkerPath(), "hold-read", path, "1500"}, dir.path());
  auto start = std::chrono::steady_clock::now();
  while (ReadFile(reader.stdout_path).find("ready") == std::string::npos) {
    ASSERT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  auto s = Store::open(path);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(RawInt(path, "PRAGMA user_version"), storage::kFormatVersion);
  ASSERT_TRUE((*s)->transact(BatchTx(4)).ok());
  Exit e = Wait(reader, 60000);
  EXPECT_TRUE(e.exited && e.code == 0) << e.Describe() << ": " << ReadFile(reader.stderr_path);
  EXPECT_EQ(CountBatchDatoms(s->get()), ExpectedBatchDatoms(4));
}

TEST(Faults, StoreUpgradedToANewerFormatWhileOpenIsRefused) {
  TempDir dir;
  std::string path = dir.Path("newer.db");
  MakeStore(path, 2);
  auto s = Store::open(path);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_TRUE((*s)->transact(BatchTx(3)).ok());
  // Another process (a newer mentat) upgrades the file under us.
  ASSERT_EQ(ExecRaw(path, "CREATE TABLE future_thing (x); PRAGMA user_version = " +
                              std::to_string(storage::kFormatVersion + 1)),
            0);
  auto r = (*s)->transact(BatchTx(4));
  ASSERT_FALSE(r.ok()) << "a store upgraded to a newer format while open was written to";
  EXPECT_EQ(r.status().code(), Code::kUnsupported) << r.status().ToString();
  EXPECT_NE(r.status().message().find("newer"), std::string::npos) << r.status().ToString();
  // Reads are refused as well rather than read with the old format's rules.
  auto d = (*s)->datoms(":aevt", {edn::Value::Keyword("crash/batch")});
  ASSERT_FALSE(d.ok()) << "a store upgraded to a newer format while open was read";
  EXPECT_EQ(d.status().code(), Code::kUnsupported) << d.status().ToString();
  EXPECT_NE(d.status().message().find("while it was open"), std::string::npos)
      << d.status().ToString();
  // A new open refuses it the same way.
  auto again = Store::open(path);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), Code::kUnsupported) << again.status().ToString();
  EXPECT_EQ(RawInt(path,
                   "SELECT count(*) FROM datoms WHERE a = (SELECT e FROM datoms WHERE "
                   "a = 1 AND v = ':crash/size')"),
            3);
}

int64_t RawInt(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  int64_t v = -1;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
      v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return v;
}

}  // namespace
}  // namespace mentat::reliability
