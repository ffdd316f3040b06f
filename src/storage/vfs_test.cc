#include "storage/vfs.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>

#include "mentat/store.h"
#include "store/store_test_util.h"

namespace mentat::storage {
namespace {

using testing::TempDir;

// The number of :n/x datoms a plain SQLite connection (the default VFS, no buffer) sees
// in the store at `path`: what another process would read.
int64_t CountWithoutBuffer(sqlite3* raw) {
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(raw,
                               "SELECT count(*) FROM datoms WHERE a = (SELECT e FROM datoms "
                               "WHERE a = 1 AND v = ':n/x')",
                               -1, &st, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(raw);
  int64_t n = -1;
  if (sqlite3_step(st) == SQLITE_ROW) n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return n;
}

std::string Entities(int first, int count) {
  std::string tx = "[";
  for (int i = first; i < first + count; ++i)
    tx += "{:n/x " + std::to_string(i) + " :n/s \"" + std::string(40, 'a' + i % 26) + "\"}";
  return tx + "]";
}

void CheckCommitsAreVisibleAtOnce(const std::string& vfs, int batch) {
  TempDir dir;
  std::string path = dir.Path("buffered.db");
  auto store = Store::open("file:" + path + "?vfs=" + vfs);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ASSERT_TRUE((*store)
                  ->transact("[{:db/ident :n/x :db/valueType :db.type/long :db/cardinality "
                             ":db.cardinality/one :db/index true}"
                             " {:db/ident :n/s :db/valueType :db.type/string :db/cardinality "
                             ":db.cardinality/one}]")
                  .ok());
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, "unix"), SQLITE_OK);
  VfsCounts before = VfsStats();
  int64_t total = 0;
  for (int i = 0; i < 40; ++i) {
    int n = i % 4 == 3 ? batch : 1 + i % 3;
    auto r = (*store)->transact(Entities(static_cast<int>(total), n));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    total += n;
    // The other connection reads the commit while the writer still holds its WAL open.
    ASSERT_EQ(CountWithoutBuffer(raw), total) << "after transaction " << i;
  }
  VfsCounts after = VfsStats();
  uint64_t writes = after.wal_writes - before.wal_writes;
  uint64_t flushes = after.wal_flushes - before.wal_flushes;
  EXPECT_GT(writes, 40u * 6);
  EXPECT_LT(flushes * 4, writes) << flushes << " write-outs for " << writes << " writes";
  sqlite3_close(raw);
  store->reset();
  // Reopened without the buffer: every datom is there and the file is sound.
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE, "unix"), SQLITE_OK);
  EXPECT_EQ(CountWithoutBuffer(raw), total);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(raw, "PRAGMA integrity_check", -1, &st, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "ok");
  sqlite3_finalize(st);
  sqlite3_close(raw);
}

TEST(WalBuffer, CommitsAreVisibleToAnotherConnectionAtOnce) {
  const char* vfs = MentatVfs();
  ASSERT_NE(vfs, nullptr);
  CheckCommitsAreVisibleAtOnce(vfs, 400);
}

// A buffer smaller than one large transaction's frames: write-outs when it fills.
TEST(WalBuffer, SmallBufferAndTransactionsLargerThanIt) {
  VfsOptions o;
  o.wal_buffer_bytes = 16 * 1024;
  ASSERT_TRUE(RegisterVfs("mentat-walbuf-test-16k", nullptr, o).ok());
  CheckCommitsAreVisibleAtOnce("mentat-walbuf-test-16k", 3000);
}

int64_t QueryInt(sqlite3* db, const char* sql) {
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  int64_t n = -1;
  if (sqlite3_step(st) == SQLITE_ROW) n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return n;
}

// Plain SQLite through the buffer with a tiny page cache: transactions spill pages to the
// WAL before they commit and write some of them again in place, read spilled pages back,
// and checkpoint; a connection without the buffer sees each commit and nothing before it.
TEST(WalBuffer, CacheSpillsRewritesAndCheckpoints) {
  VfsOptions o;
  o.wal_buffer_bytes = 64 * 1024;
  ASSERT_TRUE(RegisterVfs("mentat-walbuf-test-64k", nullptr, o).ok());
  TempDir dir;
  std::string path = dir.Path("spill.db");
  sqlite3* w = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &w, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                            "mentat-walbuf-test-64k"),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(w,
                         "PRAGMA journal_mode = WAL; PRAGMA cache_size = 8; "
                         "PRAGMA wal_autocheckpoint = 200; "
                         "CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT);"
                         "CREATE INDEX t_v ON t (v);",
                         nullptr, nullptr, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(w);
  sqlite3* r = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &r, SQLITE_OPEN_READONLY, "unix"), SQLITE_OK);
  int64_t rows = 0;
  for (int round = 0; round < 6; ++round) {
    ASSERT_EQ(sqlite3_exec(w, "BEGIN", nullptr, nullptr, nullptr), SQLITE_OK);
    // Inserts, then updates of the same rows: pages spilled earlier are written again.
    std::string sql =
        "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < "
        "2000) INSERT INTO t (v) SELECT printf('%0200d', abs(random()) % 1000000) "
        "FROM c; UPDATE t SET v = printf('%0200d', k * 7919 % 1000003) "
        "WHERE k % 3 = " +
        std::to_string(round % 3) + ";";
    ASSERT_EQ(sqlite3_exec(w, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
        << sqlite3_errmsg(w);
    // Not committed: the other connection still sees the previous commit.
    EXPECT_EQ(QueryInt(r, "SELECT count(*) FROM t"), rows);
    ASSERT_EQ(sqlite3_exec(w, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(w);
    rows += 2000;
    EXPECT_EQ(QueryInt(r, "SELECT count(*) FROM t"), rows);
    EXPECT_EQ(QueryInt(r, "SELECT count(*) FROM t INDEXED BY t_v WHERE v > ''"), rows);
  }
  sqlite3_close(r);
  sqlite3_close(w);
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &r, SQLITE_OPEN_READONLY, "unix"), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(r, "PRAGMA integrity_check", -1, &st, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "ok");
  sqlite3_finalize(st);
  EXPECT_EQ(QueryInt(r, "SELECT count(*) FROM t"), rows);
  sqlite3_close(r);
}

// A reader with a memory map beside a writer: the map is kept while the file grows a
// little, dropped when it grows a lot or shrinks (VACUUM, then a truncating checkpoint),
// and every read sees the current snapshot.
TEST(Vfs, ReaderKeepsItsMapWhileTheFileGrowsAndDropsItWhenItShrinks) {
  const char* vfs = MentatVfs();
  ASSERT_NE(vfs, nullptr);
  TempDir dir;
  std::string path = dir.Path("map.db");
  sqlite3* w = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &w, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, vfs),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(w,
                         "PRAGMA journal_mode = WAL; CREATE TABLE t (k INTEGER PRIMARY KEY, v);"
                         "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c "
                         "WHERE i < 20000) INSERT INTO t (v) SELECT randomblob(100) FROM c;"
                         "PRAGMA wal_checkpoint(TRUNCATE);",
                         nullptr, nullptr, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(w);
  sqlite3* r = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &r, SQLITE_OPEN_READONLY, vfs), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(r, "PRAGMA mmap_size = 268435456", nullptr, nullptr, nullptr), SQLITE_OK);
  int64_t rows = 20000;
  ASSERT_EQ(QueryInt(r, "SELECT count(*) FROM t"), rows);
  VfsCounts before = VfsStats();
  // Small commits, each checkpointed so the file grows a little.
  for (int i = 0; i < 20; ++i) {
    ASSERT_EQ(sqlite3_exec(w,
                           "INSERT INTO t (v) VALUES (randomblob(3000));"
                           "PRAGMA wal_checkpoint(PASSIVE);",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    ++rows;
    ASSERT_EQ(QueryInt(r, "SELECT count(*) FROM t"), rows);
    ASSERT_EQ(QueryInt(r, "SELECT count(*) FROM t WHERE length(v) = 3000"), i + 1);
  }
  VfsCounts mid = VfsStats();
  EXPECT_GE(mid.maps_kept - before.maps_kept, 15u);
  // The file doubles: the map is dropped and made again.
  ASSERT_EQ(sqlite3_exec(w,
                         "INSERT INTO t (v) SELECT randomblob(100) FROM t;"
                         "PRAGMA wal_checkpoint(PASSIVE);",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  rows *= 2;
  ASSERT_EQ(QueryInt(r, "SELECT count(*) FROM t"), rows);
  VfsCounts grown = VfsStats();
  EXPECT_GE(grown.maps_dropped - mid.maps_dropped, 1u);
  // The file shrinks to a fraction: the map must go before any read past the new end.
  ASSERT_EQ(sqlite3_exec(w, "DELETE FROM t WHERE k > 100; VACUUM; PRAGMA wal_checkpoint(TRUNCATE);",
                         nullptr, nullptr, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(w);
  ASSERT_EQ(QueryInt(r, "SELECT count(*) FROM t"), 100);
  ASSERT_EQ(QueryInt(r, "SELECT sum(length(v)) FROM t"), 100 * 100);
  EXPECT_GE(VfsStats().maps_dropped - grown.maps_dropped, 1u);
  sqlite3_close(r);
  sqlite3_close(w);
}

// A reader through the layer beside a writer without it (as another process would be).
// SQLite asks the database size at each read only while the wal-index header it recovered
// at open says nothing about the database (no connection wrote since the store was
// opened with an empty WAL): the size is reused then, and every change of the file,
// growing or shrinking, by the writer or by the reader itself, is seen.
void CheckSizeCacheFollowsTheFile(int64_t mmap_size) {
  const char* vfs = MentatVfs();
  ASSERT_NE(vfs, nullptr);
  TempDir dir;
  std::string path = dir.Path("size.db");
  auto exec = [](sqlite3* db, const std::string& sql) {
    ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
        << sqlite3_errmsg(db) << " in " << sql;
  };
  auto open = [&](const char* via) {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, via),
              SQLITE_OK);
    exec(db, "PRAGMA mmap_size = " + std::to_string(mmap_size));
    return db;
  };
  const std::string insert =
      "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 5000) "
      "INSERT INTO t (v) SELECT randomblob(200) FROM c;";
  sqlite3* w = open(nullptr);
  exec(w, "PRAGMA journal_mode = WAL; CREATE TABLE t (k INTEGER PRIMARY KEY, v);" + insert);
  sqlite3_close(w);  // the last connection: the WAL is written back and removed
  int64_t rows = 5000;
  sqlite3* r = nullptr;
  auto check = [&](const char* what) {
    EXPECT_EQ(QueryInt(r, "SELECT count(*) FROM t"), rows) << what;
    EXPECT_EQ(QueryInt(r, "SELECT sum(length(v)) FROM t"), rows * 200) << what;
    EXPECT_EQ(QueryInt(r, "SELECT count(*) FROM t WHERE k > (SELECT max(k) - 10 FROM t)"),
              std::min<int64_t>(rows, 10))
        << what;
  };
  auto reuses = [&](const char* what) {
    uint64_t before = VfsStats().sizes_reused;
    for (int i = 0; i < 10; ++i) EXPECT_EQ(QueryInt(r, "SELECT count(*) FROM t"), rows) << what;
    EXPECT_GE(VfsStats().sizes_reused - before, 9u) << what << ": the size is reused";
  };

  r = open(vfs);
  check("start");
  reuses("start");
  w = open(nullptr);
  exec(w, insert + "PRAGMA wal_checkpoint(TRUNCATE);");
  rows += 5000;
  check("after the writer grew the file");
  exec(w, insert);
  rows += 5000;
  check("with frames in the WAL");
  exec(w, "PRAGMA wal_checkpoint(PASSIVE);");
  check("after a passive checkpoint");

  // Again from an empty WAL; the writer shrinks the file.
  sqlite3_close(r);
  sqlite3_close(w);
  r = open(vfs);
  reuses("reopened");
  w = open(nullptr);
  exec(w, "DELETE FROM t WHERE k > 100; VACUUM; PRAGMA wal_checkpoint(TRUNCATE);");
  rows = 100;
  check("after the writer shrank the file");
  sqlite3_close(w);

  // Again; the reader writes and checkpoints itself.
  sqlite3_close(r);
  r = open(vfs);
  reuses("reopened alone");
  exec(r, insert + "PRAGMA wal_checkpoint(TRUNCATE);");
  rows += 5000;
  check("after the reader's own write");
  sqlite3_close(r);
}

TEST(Vfs, DatabaseSizeIsReusedOnlyWhileTheWalIsEmptyAndUnchanged) {
  CheckSizeCacheFollowsTheFile(0);
  CheckSizeCacheFollowsTheFile(256 << 20);
}

TEST(WalBuffer, UnknownBaseIsAnError) {
  Status st = RegisterVfs("mentat-walbuf-test-none", "no-such-vfs", VfsOptions());
  EXPECT_EQ(st.code(), Code::kNotFound);
  EXPECT_NE(st.message().find("no-such-vfs"), std::string::npos) << st.ToString();
}

}  // namespace
}  // namespace mentat::storage
