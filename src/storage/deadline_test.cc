// DeadlineWatch (deadline.h): the interrupt at the deadline, nothing after the watch is
// destroyed, and no use of a destroyed watch by the background thread (a regression found
// by `make test-asan`: the thread waited on a reference to the deadline of a watch that was
// then destroyed; AddressSanitizer reports that read in this build of the tests).
#include "storage/deadline.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>
#include <thread>
#include <vector>

namespace mentat::storage {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Steps a statement that runs for a long time; returns its result code.
int RunLong(sqlite3* db) {
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db,
                               "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
                               "WHERE x < 2000000000) SELECT count(*) FROM c",
                               -1, &st, nullptr),
            SQLITE_OK);
  int rc = sqlite3_step(st);
  sqlite3_finalize(st);
  return rc;
}

class DeadlineWatchTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(sqlite3_open(":memory:", &db_), SQLITE_OK); }
  void TearDown() override { sqlite3_close(db_); }
  sqlite3* db_ = nullptr;
};

TEST_F(DeadlineWatchTest, InterruptsTheConnectionAtTheDeadline) {
  auto t0 = Clock::now();
  DeadlineWatch w(db_, t0 + milliseconds(100));
  EXPECT_EQ(RunLong(db_), SQLITE_INTERRUPT);
  EXPECT_TRUE(w.fired());
  EXPECT_GE(Clock::now() - t0, milliseconds(100));
  EXPECT_LT(Clock::now() - t0, milliseconds(5000));
}

TEST_F(DeadlineWatchTest, AWatchDestroyedWhileTheThreadWaitsOnItIsNeverTouched) {
  // The thread waits on the earliest deadline; the watch is destroyed during that wait,
  // and the thread wakes at its deadline afterwards. Several rounds, so that the wait has
  // begun in at least some of them.
  for (int round = 0; round < 5; ++round) {
    {
      DeadlineWatch w(db_, Clock::now() + milliseconds(200));
      std::this_thread::sleep_for(milliseconds(10));
      EXPECT_FALSE(w.fired());
    }
    std::this_thread::sleep_for(milliseconds(250));
    // Nothing was interrupted: a short statement runs to completion.
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db_, "SELECT 1", -1, &st, nullptr), SQLITE_OK);
    EXPECT_EQ(sqlite3_step(st), SQLITE_ROW);
    sqlite3_finalize(st);
  }
}

TEST_F(DeadlineWatchTest, ManyWatchesFromManyThreads) {
  std::vector<std::thread> threads;
  std::vector<int> fired(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      sqlite3* db = nullptr;
      ASSERT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
      for (int i = 0; i < 50; ++i) {
        DeadlineWatch w(db, Clock::now() + milliseconds(i % 3 == 0 ? 1 : 1000));
        if (i % 3 == 0) std::this_thread::sleep_for(milliseconds(5));
        fired[t] += w.fired();
      }
      sqlite3_close(db);
    });
  }
  for (auto& th : threads) th.join();
  // The watches of 1 ms had time to fire; the others were destroyed long before theirs.
  for (int t = 0; t < 8; ++t) EXPECT_GT(fired[t], 0) << "thread " << t;
  for (int t = 0; t < 8; ++t) EXPECT_LE(fired[t], 17) << "thread " << t;
}

}  // namespace
}  // namespace mentat::storage
