// The background checkpointer (checkpointer.h): commits that make the WAL large wake the
// thread instead of copying pages themselves; a WAL that still grows past the inline limit
// is checkpointed by the committing connection; nothing is lost either way; a store
// closes cleanly with or without a thread.
#include "store/checkpointer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "mentat/store.h"

namespace mentat {
namespace {

class CheckpointerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/mentat-ckpt-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
    path_ = dir_ + "/t.db";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  sqlite3* OpenWal() {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    Exec(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL");
    return db;
  }
  static void Exec(sqlite3* db, const std::string& sql) {
    char* err = nullptr;
    ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK)
        << (err ? err : "") << " in " << sql;
  }
  static int64_t Count(sqlite3* db) {
    sqlite3_stmt* s = nullptr;
    sqlite3_prepare_v2(db, "SELECT count(*) FROM t", -1, &s, nullptr);
    int64_t n = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
    sqlite3_finalize(s);
    return n;
  }
  // Frames in the WAL and frames already copied to the database file.
  static std::pair<int, int> WalState(sqlite3* db) {
    int log = -1, ckpt = -1;
    // A PASSIVE checkpoint that copies nothing new reports the state.
    sqlite3_wal_checkpoint_v2(db, "main", SQLITE_CHECKPOINT_PASSIVE, &log, &ckpt);
    return {log, ckpt};
  }
  // One transaction of `rows` rows of 1000 bytes (about rows / 4 pages).
  static void Insert(sqlite3* db, int rows) {
    Exec(db, "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < " +
                 std::to_string(rows) + ") INSERT INTO t (x) SELECT randomblob(1000) FROM c");
  }

  std::string dir_, path_;
};

TEST_F(CheckpointerTest, LargeCommitsWakeTheThreadWhichCopiesTheWal) {
  sqlite3* db = OpenWal();
  Exec(db, "CREATE TABLE t (x BLOB)");
  {
    Checkpointer c(path_, 1, /*threshold_pages=*/50, /*inline_pages=*/100000);
    c.Attach(db);
    for (int i = 0; i < 10; ++i) Insert(db, 400);  // ~100 pages each
    c.WaitIdle();
    EXPECT_GE(c.background_runs(), 1);
    EXPECT_EQ(c.inline_runs(), 0);
    auto [log, ckpt] = WalState(db);
    EXPECT_GT(log, 0);
    EXPECT_EQ(ckpt, log) << "the background checkpoint copied every frame";
  }
  EXPECT_EQ(Count(db), 4000);
  sqlite3_close(db);
}

TEST_F(CheckpointerTest, SmallCommitsDoNotStartAThread) {
  sqlite3* db = OpenWal();
  Exec(db, "CREATE TABLE t (x BLOB)");
  Checkpointer c(path_, 1, 1000, 4000);
  c.Attach(db);
  for (int i = 0; i < 20; ++i) Insert(db, 4);
  c.WaitIdle();
  EXPECT_EQ(c.background_runs(), 0);
  EXPECT_EQ(c.inline_runs(), 0);
  sqlite3_close(db);
}

TEST_F(CheckpointerTest, AWalPastTheInlineLimitIsCheckpointedByTheCommit) {
  sqlite3* db = OpenWal();
  Exec(db, "CREATE TABLE t (x BLOB)");
  Checkpointer c(path_, 1, 10, 50);
  c.Attach(db);
  Insert(db, 800);  // ~200 pages in one commit: past the inline limit at once
  EXPECT_EQ(c.inline_runs(), 1);
  auto [log, ckpt] = WalState(db);
  EXPECT_EQ(ckpt, log);
  c.WaitIdle();
  sqlite3_close(db);
}

TEST_F(CheckpointerTest, StoreWithBackgroundCheckpointsKeepsEveryTransaction) {
  // Through the public API: many transactions, the store closed while the thread may be
  // copying, then reopened and checked.
  const int kTx = 60, kPerTx = 200;
  setenv("MENTAT_CHECKPOINT_PAGES", "300", 1);  // ~6,000 pages in all: 20 wake-ups
  {
    auto s = Store::open(path_);
    unsetenv("MENTAT_CHECKPOINT_PAGES");
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    ASSERT_TRUE((*s)->transact("[{:db/ident :t/blob :db/valueType :db.type/string "
                               ":db/cardinality :db.cardinality/one}]")
                    .ok());
    std::string pad(2000, 'x');
    for (int t = 0; t < kTx; ++t) {
      std::string tx = "[";
      for (int i = 0; i < kPerTx; ++i)
        tx += "{:t/blob \"" + std::to_string(t) + "-" + std::to_string(i) + pad + "\"}";
      tx += "]";
      auto r = (*s)->transact(tx);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
    }
    // Over 24 MB went through the WAL; checkpoints (background, or inline past 1,200
    // pages, plus one transaction) kept it to about a third of that.
    EXPECT_LT(std::filesystem::file_size(path_ + "-wal"), 12u << 20);
  }
  Options o;
  o.background_checkpoint = false;
  auto s = Store::open(path_, o);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  auto n = (*s)->q("[:find (count ?e) . :where [?e :t/blob _]]");
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(edn::Print(n->ToEdn()), std::to_string(kTx * kPerTx));
  auto ok = (*s)->q("[:find ?e . :where [?e :t/blob \"59-199" + std::string(2000, 'x') + "\"]]");
  ASSERT_TRUE(ok.ok());
  EXPECT_FALSE(ok->rows.empty());
}

}  // namespace
}  // namespace mentat
