// storage::Connection, Statement and Transaction over PostgreSQL: the calls the layers above
// make, with SQLite's placeholders and storage classes.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "pg/connection.h"
#include "pg/pgtest_util.h"
#include "storage/sqlite.h"

namespace mentat::storage {
namespace {

class StoragePg : public ::testing::Test {
 protected:
  std::unique_ptr<Connection> Open() {
    auto c = Connection::OpenPostgres(pg::TestConninfo());
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    if (!c.ok()) return nullptr;
    EXPECT_TRUE((*c)->Exec("SET search_path = " + schema_).ok());
    return std::move(*c);
  }
  void SetUp() override {
    auto c = Connection::OpenPostgres(pg::TestConninfo());
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    admin_ = std::move(*c);
    schema_ = pg::TestSchema(*admin_->pg());
  }
  void TearDown() override {
    if (admin_) {
      EXPECT_TRUE(admin_->Exec("DROP SCHEMA IF EXISTS " + schema_ + " CASCADE").ok());
    }
  }
  std::unique_ptr<Connection> admin_;
  std::string schema_;
};

TEST_F(StoragePg, StatementsTakeSqlitePlaceholdersAndReportStorageClasses) {
  auto c = Open();
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->is_pg());
  EXPECT_EQ(c->raw(), nullptr);
  ASSERT_TRUE(c->Exec("CREATE TABLE t (e bigint, s text, d double precision, b bytea)").ok());
  {
    auto st = c->Cached("INSERT INTO t VALUES (?1, ?2, ?3, ?4)");
    ASSERT_TRUE(st.ok()) << st.status().ToString();
    for (int i = 0; i < 3; ++i) {
      (*st)->BindInt(1, i);
      (*st)->BindText(2, "s" + std::to_string(i));
      if (i == 2) {
        (*st)->BindNull(3);
      } else {
        (*st)->BindDouble(3, i + 0.5);
      }
      (*st)->BindBlob(4, std::string("\0x", 2));
      ASSERT_TRUE((*st)->Run().ok());
      (*st)->Reset();
    }
  }
  auto st = c->Cached("SELECT e, s, d, b FROM t WHERE e >= ?1 ORDER BY e");
  ASSERT_TRUE(st.ok());
  (*st)->BindInt(1, 1);
  auto row = (*st)->Step();
  ASSERT_TRUE(row.ok() && *row) << row.status().ToString();
  EXPECT_EQ((*st)->ColumnType(0), SQLITE_INTEGER);
  EXPECT_EQ((*st)->ColumnInt(0), 1);
  EXPECT_EQ((*st)->ColumnType(1), SQLITE_TEXT);
  EXPECT_EQ((*st)->ColumnText(1), "s1");
  EXPECT_EQ((*st)->ColumnType(2), SQLITE_FLOAT);
  EXPECT_EQ((*st)->ColumnDouble(2), 1.5);
  EXPECT_EQ((*st)->ColumnType(3), SQLITE_BLOB);
  EXPECT_EQ((*st)->ColumnBlob(3), std::string("\0x", 2));
  row = (*st)->Step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ((*st)->ColumnType(2), SQLITE_NULL);
  row = (*st)->Step();
  ASSERT_TRUE(row.ok());
  EXPECT_FALSE(*row);
  auto n = c->QueryInt("SELECT count(*) FROM t", -1);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 3);
  EXPECT_EQ(c->PagerDataVersion(), 0u);
}

TEST_F(StoragePg, ARolledBackTransactionWritesNothingAndNestsAsSavepoints) {
  auto c = Open();
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->Exec("CREATE TABLE t (k bigint)").ok());
  {
    Transaction outer(c.get());
    ASSERT_TRUE(outer.Begin(true).ok());
    EXPECT_FALSE(outer.nested());
    ASSERT_TRUE(c->Exec("INSERT INTO t VALUES (1)").ok());
    {
      Transaction inner(c.get());
      ASSERT_TRUE(inner.Begin(true).ok());
      EXPECT_TRUE(inner.nested());
      ASSERT_TRUE(c->Exec("INSERT INTO t VALUES (2)").ok());
      // Rolled back by its destructor: only 2 goes.
    }
    ASSERT_TRUE(outer.Commit().ok());
  }
  auto n = c->QueryInt("SELECT sum(k) FROM t", -1);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 1);
  {
    Transaction t(c.get());
    ASSERT_TRUE(t.Begin(true).ok());
    ASSERT_TRUE(c->Exec("INSERT INTO t VALUES (10)").ok());
  }
  EXPECT_FALSE(c->InTransaction());
  n = c->QueryInt("SELECT sum(k) FROM t", -1);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 1);
}

TEST_F(StoragePg, WritersQueueOnTheLockWhileAReaderKeepsItsSnapshot) {
  auto w1 = Open(), w2 = Open(), r = Open();
  ASSERT_TRUE(w1 && w2 && r);
  ASSERT_TRUE(w1->Exec("CREATE TABLE t (k bigint)").ok());

  Transaction read(r.get());
  ASSERT_TRUE(read.Begin(false).ok());
  auto before = r->QueryInt("SELECT count(*) FROM t", -1);  // the snapshot starts here
  ASSERT_TRUE(before.ok());
  EXPECT_EQ(*before, 0);

  Transaction t1(w1.get());
  ASSERT_TRUE(t1.Begin(true).ok());
  ASSERT_TRUE(w1->Exec("INSERT INTO t VALUES (1)").ok());

  std::atomic<bool> second_in{false};
  std::thread second([&] {
    Transaction t2(w2.get());
    // BEGIN and the lock wait for the first statement that needs an answer
    // (pg::Connection "Writes that wait"), which then waits for t1's lock.
    ASSERT_TRUE(t2.Begin(true).ok());
    // READ COMMITTED after the lock: it sees t1's commit.
    auto n = w2->QueryInt("SELECT count(*) FROM t", -1);
    second_in = true;
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(*n, 1);
    ASSERT_TRUE(w2->Exec("INSERT INTO t VALUES (2)").ok());
    ASSERT_TRUE(t2.Commit().ok());
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(second_in) << "the second writer did not wait for the first";
  // The reader is not blocked by either writer.
  auto mid = r->QueryInt("SELECT count(*) FROM t", -1);
  ASSERT_TRUE(mid.ok());
  EXPECT_EQ(*mid, 0);
  ASSERT_TRUE(t1.Commit().ok());
  second.join();
  EXPECT_TRUE(second_in);
  // Still the reader's snapshot (REPEATABLE READ) until it ends.
  auto still = r->QueryInt("SELECT count(*) FROM t", -1);
  ASSERT_TRUE(still.ok());
  EXPECT_EQ(*still, 0);
  ASSERT_TRUE(read.Commit().ok());
  auto after = r->QueryInt("SELECT count(*) FROM t", -1);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(*after, 2);
}

}  // namespace
}  // namespace mentat::storage
