// The libpq wrappers against a real server: the throwaway cluster ctest starts
// (test/CMakeLists.txt, fixture "pg"), named by MENTAT_TEST_PG.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "pg/connection.h"
#include "pg/pgtest_util.h"

namespace mentat::pg {
namespace {

class PgConnection : public ::testing::Test {
 protected:
  void SetUp() override {
    auto c = Connection::Open(TestConninfo());
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    c_ = std::move(*c);
    schema_ = TestSchema(*c_);
  }
  void TearDown() override {
    if (c_) {
      EXPECT_TRUE(c_->Exec("DROP SCHEMA IF EXISTS " + schema_ + " CASCADE").ok());
    }
  }
  std::unique_ptr<Connection> c_;
  std::string schema_;
};

TEST(PgNames, PostgresNamesAreTellFromFiles) {
  EXPECT_TRUE(IsPostgresName("postgresql://u@h/db"));
  EXPECT_TRUE(IsPostgresName("postgres:///db?host=/tmp"));
  EXPECT_TRUE(IsPostgresName("host=/tmp dbname=x"));
  EXPECT_TRUE(IsPostgresName("dbname = x"));
  EXPECT_FALSE(IsPostgresName("store.db"));
  EXPECT_FALSE(IsPostgresName("/tmp/a=b.db"));
  EXPECT_FALSE(IsPostgresName("file:x.db?mode=ro"));
  EXPECT_FALSE(IsPostgresName("=x"));
  EXPECT_FALSE(IsPostgresName(""));
}

TEST(PgNames, ErrorsMapToStatusCodes) {
  EXPECT_EQ(ErrorStatus("40001", "could not serialize").code(), Code::kBusy);
  EXPECT_EQ(ErrorStatus("23505", "duplicate key").code(), Code::kConflict);
  EXPECT_EQ(ErrorStatus("57014", "canceling statement due to user request").code(),
            Code::kInterrupted);
  Status t = ErrorStatus("57014", "ERROR:  canceling statement due to statement timeout\n");
  EXPECT_EQ(t.code(), Code::kInterrupted);
  EXPECT_NE(t.message().find("timeout"), std::string::npos) << t.message();
  EXPECT_EQ(ErrorStatus("42601", "syntax error").code(), Code::kInvalidArgument);
  EXPECT_EQ(ErrorStatus("25006", "read-only transaction").code(), Code::kUnsupported);
  EXPECT_EQ(ErrorStatus("08006", "connection failure").code(), Code::kIo);
}

TEST(PgNames, SqlitePlaceholdersBecomeNumberedOnesOutsideQuotes) {
  EXPECT_EQ(PgPlaceholders("SELECT ?1, ?2 + ?1"), "SELECT $1, $2 + $1");
  EXPECT_EQ(PgPlaceholders("a = ? AND b = ?"), "a = $1 AND b = $2");
  EXPECT_EQ(PgPlaceholders("?3 + ?"), "$3 + $4");
  EXPECT_EQ(PgPlaceholders("'it''s ?' || ?1"), "'it''s ?' || $1");
  EXPECT_EQ(PgPlaceholders("\"a?\" = ?"), "\"a?\" = $1");
  EXPECT_EQ(PgPlaceholders("x -- why?\n= ?"), "x -- why?\n= $1");
  EXPECT_EQ(PgPlaceholders("x /* ? */ = ?"), "x /* ? */ = $1");
  EXPECT_EQ(PgPlaceholders("no params"), "no params");
}

TEST(PgOpen, AnUnreachableServerIsAnIoErrorNamingTheCause) {
  auto c = Connection::Open("host=/nonexistent-mentat-dir port=1 dbname=x connect_timeout=2");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), Code::kIo);
  EXPECT_NE(c.status().message().find("cannot connect to PostgreSQL"), std::string::npos)
      << c.status().message();
}

TEST_F(PgConnection, ValuesOfEveryKindRoundTripInBinary) {
  ASSERT_TRUE(
      c_->Exec("CREATE TABLE t (i bigint, d double precision, s text, b bytea, n bigint)").ok());
  auto ins = c_->Cached("INSERT INTO t VALUES (?1, ?2, ?3, ?4, ?5)");
  ASSERT_TRUE(ins.ok());
  const std::string blob("\0\x01\xff\x80z", 5);
  (*ins)->BindInt(1, -9007199254740993LL);
  (*ins)->BindDouble(2, -0.1);
  (*ins)->BindText(3, "h\xc3\xa9llo\ttab");
  (*ins)->BindBlob(4, blob);
  (*ins)->BindNull(5);
  ASSERT_TRUE((*ins)->Run().ok());
  EXPECT_EQ((*ins)->Changes(), 1);

  auto sel = c_->Cached("SELECT i, d, s, b, n, i + 1 FROM t");
  ASSERT_TRUE(sel.ok());
  auto row = (*sel)->Step();
  ASSERT_TRUE(row.ok()) << row.status().ToString();
  ASSERT_TRUE(*row);
  EXPECT_EQ((*sel)->ColumnType(0), Kind::kInt);
  EXPECT_EQ((*sel)->ColumnInt(0), -9007199254740993LL);
  EXPECT_EQ((*sel)->ColumnType(1), Kind::kReal);
  EXPECT_EQ((*sel)->ColumnDouble(1), -0.1);
  EXPECT_EQ((*sel)->ColumnType(2), Kind::kText);
  EXPECT_EQ((*sel)->ColumnText(2), "h\xc3\xa9llo\ttab");
  EXPECT_EQ((*sel)->ColumnType(3), Kind::kBlob);
  EXPECT_EQ((*sel)->ColumnBlob(3), blob);
  EXPECT_EQ((*sel)->ColumnType(4), Kind::kNull);
  EXPECT_EQ((*sel)->ColumnInt(5), -9007199254740992LL);
  row = (*sel)->Step();
  ASSERT_TRUE(row.ok());
  EXPECT_FALSE(*row);
}

TEST_F(PgConnection, ACachedStatementRunsAgainWithNewValuesAndNewKinds) {
  ASSERT_TRUE(c_->Exec("CREATE TABLE t (i bigint)").ok());
  ASSERT_TRUE(c_->Exec("INSERT INTO t SELECT generate_series(1, 10)").ok());
  for (int64_t bound : {3, 7}) {
    auto st = c_->Cached("SELECT count(*) FROM t WHERE i <= $1");
    ASSERT_TRUE(st.ok());
    (*st)->BindInt(1, bound);
    auto row = (*st)->Step();
    ASSERT_TRUE(row.ok() && *row) << row.status().ToString();
    EXPECT_EQ((*st)->ColumnInt(0), bound);
  }
  // The same text with a double: prepared again for that kind, not converted.
  auto st = c_->Cached("SELECT count(*) FROM t WHERE i <= $1");
  ASSERT_TRUE(st.ok());
  (*st)->BindDouble(1, 4.5);
  auto row = (*st)->Step();
  ASSERT_TRUE(row.ok() && *row) << row.status().ToString();
  EXPECT_EQ((*st)->ColumnInt(0), 4);
}

TEST_F(PgConnection, AJsonbParameterTakesEveryKindAndReadsBackItsStorageClass) {
  // The value column of a store is jsonb (doc/postgres.md "Values"): a parameter the server
  // infers as jsonb takes a value of any kind, and a jsonb column reads back as the kind.
  ASSERT_TRUE(c_->Exec("CREATE TABLE t (k bigint, v jsonb)").ok());
  auto ins = c_->Cached("INSERT INTO t (k, v) VALUES (?1, ?2)");
  ASSERT_TRUE(ins.ok());
  const std::string blob("\0\x01\xff", 3);
  const std::string text = "q\"uo\\te\n\x01 \xc3\xa9 \xf0\x9f\x98\x80";
  auto put = [&](int64_t k, auto bind) {
    (*ins)->BindInt(1, k);
    bind();
    Status st = (*ins)->Run();
    EXPECT_TRUE(st.ok()) << st.ToString();
    (*ins)->Reset();
  };
  put(1, [&] { (*ins)->BindInt(2, -42); });
  put(2, [&] { (*ins)->BindDouble(2, 2.0); });
  put(3, [&] { (*ins)->BindDouble(2, 0.1); });
  put(4, [&] { (*ins)->BindText(2, text); });
  put(5, [&] { (*ins)->BindBlob(2, blob); });
  put(6, [&] { (*ins)->BindDouble(2, 1e300); });
  auto sel = c_->Cached("SELECT v FROM t WHERE k = ?1");
  ASSERT_TRUE(sel.ok());
  auto read = [&](int64_t k) {
    (*sel)->Reset();
    (*sel)->BindInt(1, k);
    auto row = (*sel)->Step();
    EXPECT_TRUE(row.ok() && *row) << k;
  };
  read(1);
  EXPECT_EQ((*sel)->ColumnType(0), Kind::kInt);
  EXPECT_EQ((*sel)->ColumnInt(0), -42);
  read(2);
  EXPECT_EQ((*sel)->ColumnType(0), Kind::kReal);
  EXPECT_EQ((*sel)->ColumnDouble(0), 2.0);
  read(3);
  EXPECT_EQ((*sel)->ColumnDouble(0), 0.1);
  read(4);
  EXPECT_EQ((*sel)->ColumnType(0), Kind::kText);
  EXPECT_EQ((*sel)->ColumnText(0), text);
  read(5);
  EXPECT_EQ((*sel)->ColumnType(0), Kind::kBlob);
  EXPECT_EQ((*sel)->ColumnBlob(0), blob);
  read(6);
  EXPECT_EQ((*sel)->ColumnDouble(0), 1e300);
  // Numbers compare as numbers whatever their kind, as in SQLite: 2 = 2.0, and -42 < 0.1.
  auto eq = c_->Cached("SELECT k FROM t WHERE v = ?1");
  ASSERT_TRUE(eq.ok());
  (*eq)->BindInt(1, 2);
  auto row = (*eq)->Step();
  ASSERT_TRUE(row.ok() && *row) << row.status().ToString();
  EXPECT_EQ((*eq)->ColumnInt(0), 2);
  // (jsonb orders strings before numbers, SQLite after: the query compiler guards a
  // comparison with a number by jsonb_typeof.)
  auto lt = c_->QueryInt(
      "SELECT count(*) FROM t WHERE jsonb_typeof(v) = 'number' AND v < '0.5'::jsonb", -1);
  ASSERT_TRUE(lt.ok()) << lt.status().ToString();
  EXPECT_EQ(*lt, 2);
  // Text and blobs find themselves.
  (*eq)->Reset();
  (*eq)->BindText(1, text);
  row = (*eq)->Step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ((*eq)->ColumnInt(0), 4);
  (*eq)->Reset();
  (*eq)->BindBlob(1, blob);
  row = (*eq)->Step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ((*eq)->ColumnInt(0), 5);
}

// A statement run in an envelope (one pipeline: BEGIN, the probe, the statement): both
// read one snapshot, the probe's rows are there afterwards, the transaction stays open until
// CommitAsync (whose answer the next command reads), and a statement that fails leaves the
// connection outside any transaction and usable.
TEST_F(PgConnection, AnEnvelopedStatementRunsWithItsProbeInOneTransaction) {
  ASSERT_TRUE(c_->Exec("CREATE TABLE t (i bigint)").ok());
  ASSERT_TRUE(c_->Exec("INSERT INTO t SELECT generate_series(1, 10)").ok());
  auto probe = c_->Cached("SELECT txid_current_if_assigned() IS NULL, pg_current_xact_id()");
  ASSERT_TRUE(probe.ok()) << probe.status().ToString();
  auto st = c_->Cached("SELECT count(*), pg_current_xact_id() FROM t WHERE i <= ?1");
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  const uint64_t before = c_->executions();
  c_->ArmEnvelope(&**probe, /*commit=*/false);
  (*st)->BindInt(1, 4);
  auto row = (*st)->Step();
  ASSERT_TRUE(row.ok() && *row) << row.status().ToString();
  EXPECT_EQ((*st)->ColumnInt(0), 4);
  EXPECT_TRUE(c_->DisarmEnvelope());
  EXPECT_EQ(c_->executions(), before + 1);
  EXPECT_TRUE(c_->InTransaction());
  // The probe's rows without another execution: the same transaction as the statement's.
  auto prow = (*probe)->Step();
  ASSERT_TRUE(prow.ok() && *prow) << prow.status().ToString();
  EXPECT_EQ((*probe)->ColumnText(1), (*st)->ColumnText(1));
  EXPECT_EQ(c_->executions(), before + 1);
  (*st)->Reset();
  (*probe)->Reset();
  c_->CommitAsync();
  EXPECT_FALSE(c_->InTransaction());
  // With its COMMIT in the pipeline: nothing left open, the probe's rows still there.
  c_->ArmEnvelope(&**probe, /*commit=*/true);
  (*st)->BindInt(1, 7);
  row = (*st)->Step();
  ASSERT_TRUE(row.ok() && *row) << row.status().ToString();
  EXPECT_EQ((*st)->ColumnInt(0), 7);
  EXPECT_TRUE(c_->DisarmEnvelope());
  EXPECT_FALSE(c_->InTransaction());
  prow = (*probe)->Step();
  ASSERT_TRUE(prow.ok() && *prow) << prow.status().ToString();
  EXPECT_EQ((*probe)->ColumnText(1), (*st)->ColumnText(1));
  (*st)->Reset();
  (*probe)->Reset();
  // Not armed: the next statement runs on its own.
  EXPECT_FALSE(c_->DisarmEnvelope());
  // A statement that fails in the envelope: its error, no transaction left open.
  auto bad = c_->Cached("SELECT 1 / (i - 3) FROM t");
  ASSERT_TRUE(bad.ok());
  c_->ArmEnvelope(&**probe, /*commit=*/true);
  auto brow = (*bad)->Step();
  while (brow.ok() && *brow) brow = (*bad)->Step();
  ASSERT_FALSE(brow.ok());
  EXPECT_NE(brow.status().message().find("division by zero"), std::string::npos)
      << brow.status().ToString();
  EXPECT_TRUE(c_->DisarmEnvelope());
  EXPECT_FALSE(c_->InTransaction());
  (*bad)->Reset();
  auto n = c_->QueryInt("SELECT count(*) FROM t", -1);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 10);
}

// CommitAsync leaves its COMMIT in pipeline mode: the next command reads its answer, in
// its own pipeline when it has one (an envelope, statements that waited) or before it runs
// alone (a statement, Exec, a prepare, COPY). Whatever comes next, the COMMIT took effect
// and the connection is outside a transaction after it.
TEST_F(PgConnection, ACommitOnItsWayIsReadByWhateverCommandComesNext) {
  ASSERT_TRUE(c_->Exec("CREATE TABLE t (i bigint)").ok());
  auto probe = c_->Cached("SELECT 1");
  ASSERT_TRUE(probe.ok());
  auto count = c_->Cached("SELECT count(*) FROM t WHERE i >= ?1");
  ASSERT_TRUE(count.ok());
  for (int kind = 0; kind < 6; ++kind) {
    SCOPED_TRACE("next command " + std::to_string(kind));
    ASSERT_TRUE(c_->Exec("BEGIN").ok());
    ASSERT_TRUE(c_->Exec("INSERT INTO t VALUES (" + std::to_string(100 + kind) + ")").ok());
    c_->CommitAsync();
    EXPECT_FALSE(c_->InTransaction());
    int64_t seen = -1;
    switch (kind) {
      case 0: {  // an envelope with its COMMIT: one pipeline after the pending one
        c_->ArmEnvelope(&**probe, /*commit=*/true);
        (*count)->BindInt(1, 100);
        auto row = (*count)->Step();
        ASSERT_TRUE(row.ok() && *row) << row.status().ToString();
        seen = (*count)->ColumnInt(0);
        EXPECT_TRUE(c_->DisarmEnvelope());
        (*count)->Reset();
        (*probe)->Reset();
        break;
      }
      case 1: {  // a statement alone
        (*count)->BindInt(1, 100);
        auto row = (*count)->Step();
        ASSERT_TRUE(row.ok() && *row) << row.status().ToString();
        seen = (*count)->ColumnInt(0);
        (*count)->Reset();
        break;
      }
      case 2: {  // Exec
        ASSERT_TRUE(c_->Exec("SELECT 1").ok());
        break;
      }
      case 3: {  // a statement prepared now
        auto fresh = c_->QueryInt(
            "SELECT count(*) + 0 * " + std::to_string(kind) + " FROM t WHERE i >= 100", -1);
        ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
        seen = *fresh;
        break;
      }
      case 4: {  // statements that wait, then one that needs an answer: one pipeline
        auto begin = c_->Cached("BEGIN");
        ASSERT_TRUE(begin.ok() && (*begin)->RunLater().ok());
        auto insert = c_->Cached("INSERT INTO t VALUES (?1)");
        ASSERT_TRUE(insert.ok());
        (*insert)->BindInt(1, 1);
        ASSERT_TRUE((*insert)->RunLater().ok());
        (*count)->BindInt(1, 100);
        auto row = (*count)->Step();
        ASSERT_TRUE(row.ok() && *row) << row.status().ToString();
        seen = (*count)->ColumnInt(0);
        (*count)->Reset();
        EXPECT_TRUE(c_->InTransaction());
        ASSERT_TRUE(c_->Exec("COMMIT").ok());
        break;
      }
      case 5: {  // COPY
        auto copied = c_->CopyIn("COPY t (i) FROM STDIN", "2\n");
        ASSERT_TRUE(copied.ok()) << copied.status().ToString();
        EXPECT_EQ(*copied, 1);
        break;
      }
    }
    if (seen >= 0) {
      EXPECT_EQ(seen, kind + 1);
    }
    EXPECT_FALSE(c_->InTransaction());
    auto n = c_->QueryInt("SELECT count(*) FROM t WHERE i >= 100", -1);
    ASSERT_TRUE(n.ok()) << n.status().ToString();
    EXPECT_EQ(*n, kind + 1);
  }
  auto small = c_->QueryInt("SELECT count(*) FROM t WHERE i < 100", -1);
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(*small, 2);  // the waiting INSERT's and the COPY's
}

TEST_F(PgConnection, NumericResultsReadAsIntegersOrDoubles) {
  auto st = c_->Cached(
      "SELECT sum(x), avg(x), 12345678901234567::numeric, -0.5::numeric FROM "
      "(VALUES (1::bigint), (2::bigint)) AS v (x)");
  ASSERT_TRUE(st.ok());
  auto row = (*st)->Step();
  ASSERT_TRUE(row.ok() && *row) << row.status().ToString();
  EXPECT_EQ((*st)->ColumnType(0), Kind::kInt);
  EXPECT_EQ((*st)->ColumnInt(0), 3);
  EXPECT_EQ((*st)->ColumnType(1), Kind::kReal);
  EXPECT_DOUBLE_EQ((*st)->ColumnDouble(1), 1.5);
  EXPECT_EQ((*st)->ColumnInt(2), 12345678901234567LL);
  EXPECT_EQ((*st)->ColumnText(2), "12345678901234567");
  EXPECT_DOUBLE_EQ((*st)->ColumnDouble(3), -0.5);
}

TEST_F(PgConnection, ErrorsNameTheStatementsProblem) {
  auto st = c_->Cached("SELECT no_such_column FROM pg_class");
  ASSERT_TRUE(st.ok());
  auto row = (*st)->Step();
  ASSERT_FALSE(row.ok());
  EXPECT_EQ(row.status().code(), Code::kInvalidArgument);
  EXPECT_NE(row.status().message().find("no_such_column"), std::string::npos)
      << row.status().message();
  // The connection is usable after the error.
  auto n = c_->QueryInt("SELECT 41 + 1", 0);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 42);
  auto dup = c_->Exec("CREATE TABLE u (k bigint PRIMARY KEY); INSERT INTO u VALUES (1), (1)");
  EXPECT_EQ(dup.code(), Code::kConflict) << dup.ToString();
}

TEST_F(PgConnection, CopyLoadsRowsWithEveryEscape) {
  ASSERT_TRUE(c_->Exec("CREATE TABLE t (i bigint, d double precision, s text, b bytea)").ok());
  CopyRows rows;
  const std::string blob("\0\\\t\n\xff", 5);
  rows.Int(1);
  rows.Double(0.1);
  rows.Text("a\\b\tc\nd\re");
  rows.Bytea(blob);
  rows.EndRow();
  rows.Int(2);
  rows.Null();
  rows.Text("");
  rows.Null();
  rows.EndRow();
  auto n = c_->CopyIn("COPY t FROM STDIN", rows.data());
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 2);
  auto st = c_->Cached("SELECT i, d, s, b FROM t ORDER BY i");
  ASSERT_TRUE(st.ok());
  ASSERT_TRUE(*(*st)->Step());
  EXPECT_EQ((*st)->ColumnDouble(1), 0.1);
  EXPECT_EQ((*st)->ColumnText(2), "a\\b\tc\nd\re");
  EXPECT_EQ((*st)->ColumnBlob(3), blob);
  ASSERT_TRUE(*(*st)->Step());
  EXPECT_EQ((*st)->ColumnType(1), Kind::kNull);
  EXPECT_EQ((*st)->ColumnType(2), Kind::kText);
  EXPECT_EQ((*st)->ColumnText(2), "");
  EXPECT_EQ((*st)->ColumnType(3), Kind::kNull);
}

TEST_F(PgConnection, ABadCopyWritesNothingAndLeavesTheConnectionUsable) {
  ASSERT_TRUE(c_->Exec("CREATE TABLE t (i bigint)").ok());
  auto n = c_->CopyIn("COPY t FROM STDIN", "1\nnot-a-number\n");
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.status().message().find("not-a-number"), std::string::npos) << n.status().message();
  auto count = c_->QueryInt("SELECT count(*) FROM t", -1);
  ASSERT_TRUE(count.ok()) << count.status().ToString();
  EXPECT_EQ(*count, 0);
}

TEST_F(PgConnection, ACopyInStepsTakesRowsInPiecesAndAnAbortedOneWritesNothing) {
  ASSERT_TRUE(c_->Exec("CREATE TABLE t (i bigint)").ok());
  ASSERT_TRUE(c_->CopyStart("COPY t FROM STDIN").ok());
  for (int piece = 0; piece < 3; ++piece) {
    std::string rows;
    for (int i = 0; i < 1000; ++i) rows += std::to_string(piece * 1000 + i) + "\n";
    ASSERT_TRUE(c_->CopyPut(rows).ok());
  }
  auto n = c_->CopyFinish();
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 3000);
  auto sum = c_->QueryInt("SELECT sum(i) FROM t", -1);
  ASSERT_TRUE(sum.ok()) << sum.status().ToString();
  EXPECT_EQ(*sum, 2999 * 3000 / 2);
  // Aborted by the caller (its source failed): an error naming why, no row of it kept,
  // and the connection free for the next statement.
  ASSERT_TRUE(c_->CopyStart("COPY t FROM STDIN").ok());
  ASSERT_TRUE(c_->CopyPut("5\n6\n").ok());
  auto aborted = c_->CopyFinish("the source went away");
  ASSERT_FALSE(aborted.ok());
  EXPECT_NE(aborted.status().message().find("the source went away"), std::string::npos)
      << aborted.status().message();
  auto count = c_->QueryInt("SELECT count(*) FROM t", -1);
  ASSERT_TRUE(count.ok()) << count.status().ToString();
  EXPECT_EQ(*count, 3000);
}

TEST_F(PgConnection, CancelFromAnotherThreadInterruptsTheStatement) {
  std::thread canceller([this] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    c_->Cancel();
  });
  auto start = std::chrono::steady_clock::now();
  Status st = c_->Exec("SELECT pg_sleep(30)");
  canceller.join();
  EXPECT_EQ(st.code(), Code::kInterrupted) << st.ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  auto n = c_->QueryInt("SELECT 1", 0);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
}

TEST_F(PgConnection, AStatementTimeoutIsAnInterruptionThatSaysTimeout) {
  ASSERT_TRUE(c_->Exec("SET statement_timeout = 100").ok());
  Status st = c_->Exec("SELECT pg_sleep(5)");
  EXPECT_EQ(st.code(), Code::kInterrupted) << st.ToString();
  EXPECT_NE(st.message().find("timeout"), std::string::npos) << st.message();
}

// The statement_timeout goes out with the next statement (its pipeline), once while it
// stays the same, and again after a rollback undid it.
TEST_F(PgConnection, AStatementTimeoutIsSentWithTheNextStatementOnceAndAgainAfterARollback) {
  auto setting = [&]() -> std::string {
    auto st = c_->Cached("SELECT current_setting('statement_timeout')");
    if (!st.ok()) return st.status().ToString();
    auto row = (*st)->Step();
    if (!row.ok()) return row.status().ToString();
    return std::string((*st)->ColumnText(0));
  };
  const std::string server_default = setting();
  c_->SetStatementTimeout(250);
  EXPECT_EQ(setting(), "250ms");
  auto sleep = c_->Cached("SELECT pg_sleep(5)");
  ASSERT_TRUE(sleep.ok());
  auto start = std::chrono::steady_clock::now();
  auto slept = (*sleep)->Step();
  EXPECT_EQ(slept.status().code(), Code::kInterrupted) << slept.status().ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(4));
  (*sleep)->Reset();
  // Unchanged, it is not sent again: a value set behind the connection's back stays.
  ASSERT_TRUE(c_->Exec("SET statement_timeout = 999").ok());
  EXPECT_EQ(setting(), "999ms");
  c_->SetStatementTimeout(std::nullopt);
  EXPECT_EQ(setting(), server_default);

  // In a read envelope: the SET is the transaction's; a rollback undoes it, so the next
  // statement carries it again.
  auto probe = c_->Cached("SELECT 1");
  ASSERT_TRUE(probe.ok());
  c_->SetStatementTimeout(300);
  c_->ArmEnvelope(&**probe, /*commit=*/false);
  EXPECT_EQ(setting(), "300ms");
  EXPECT_TRUE(c_->DisarmEnvelope());
  EXPECT_TRUE(c_->InTransaction());
  ASSERT_TRUE(c_->Exec("ROLLBACK").ok());
  EXPECT_EQ(setting(), "300ms");

  // Among waiting statements: in order with them, and again after their rollback.
  ASSERT_TRUE(c_->Exec("CREATE TABLE t (i bigint)").ok());
  auto begin = c_->Cached("BEGIN");
  auto ins = c_->Cached("INSERT INTO t (i) VALUES (1)");
  ASSERT_TRUE(begin.ok() && ins.ok());
  ASSERT_TRUE((*begin)->RunLater().ok());
  (*begin)->Reset();
  c_->SetStatementTimeout(400);
  ASSERT_TRUE((*ins)->RunLater().ok());
  (*ins)->Reset();
  EXPECT_EQ(setting(), "400ms");
  c_->DiscardLater();
  ASSERT_TRUE(c_->Exec("ROLLBACK").ok());
  EXPECT_EQ(setting(), "400ms");
  c_->SetStatementTimeout(std::nullopt);
  EXPECT_EQ(setting(), server_default);
}

TEST_F(PgConnection, TransactionStateIsReported) {
  EXPECT_FALSE(c_->InTransaction());
  ASSERT_TRUE(c_->Exec("BEGIN").ok());
  EXPECT_TRUE(c_->InTransaction());
  ASSERT_TRUE(c_->Exec("ROLLBACK").ok());
  EXPECT_FALSE(c_->InTransaction());
}

TEST_F(PgConnection, StatementsThatWaitRunInOrderWithTheNextThatNeedsAnAnswer) {
  ASSERT_TRUE(c_->Exec("CREATE TABLE t (i bigint PRIMARY KEY, s text)").ok());
  auto begin = c_->Cached("BEGIN");
  auto ins = c_->Cached("INSERT INTO t (i, s) VALUES (?1, ?2)");
  auto upd = c_->Cached("UPDATE t SET s = s || ?2 WHERE i = ?1");
  auto count = c_->Cached("SELECT count(*), string_agg(s, ',' ORDER BY i) FROM t");
  ASSERT_TRUE(begin.ok() && ins.ok() && upd.ok() && count.ok());
  ASSERT_TRUE((*begin)->RunLater().ok());
  (*begin)->Reset();
  EXPECT_TRUE(c_->InTransaction()) << "a waiting BEGIN counts as inside a transaction";
  const uint64_t before = c_->executions();
  for (int64_t i = 1; i <= 3; ++i) {
    (*ins)->BindInt(1, i);
    (*ins)->BindText(2, "v" + std::to_string(i));
    ASSERT_TRUE((*ins)->RunLater().ok());
    EXPECT_EQ((*ins)->Changes(), 0);
    (*ins)->Reset();
  }
  (*upd)->BindInt(1, 2);
  (*upd)->BindText(2, "+");
  ASSERT_TRUE((*upd)->RunLater().ok());
  (*upd)->Reset();
  // The read goes out after them (in order: the update sees its row) and sees them.
  auto row = (*count)->Step();
  ASSERT_TRUE(row.ok() && *row) << row.status().ToString();
  EXPECT_EQ((*count)->ColumnInt(0), 3);
  EXPECT_EQ((*count)->ColumnText(1), "v1,v2+,v3");
  EXPECT_EQ(c_->executions(), before + 5);
  (*count)->Reset();
  ASSERT_TRUE(c_->Exec("COMMIT").ok());
  EXPECT_FALSE(c_->InTransaction());
  auto n = c_->QueryInt("SELECT count(*) FROM t", -1);
  ASSERT_TRUE(n.ok() && *n == 3);

  // Discarded (before a ROLLBACK): they never run.
  ASSERT_TRUE(c_->Exec("BEGIN").ok());
  (*ins)->BindInt(1, 10);
  (*ins)->BindText(2, "x");
  ASSERT_TRUE((*ins)->RunLater().ok());
  (*ins)->Reset();
  c_->DiscardLater();
  ASSERT_TRUE(c_->Exec("ROLLBACK").ok());
  n = c_->QueryInt("SELECT count(*) FROM t WHERE i = 10", -1);
  ASSERT_TRUE(n.ok() && *n == 0);

  // More than a pipeline's worth: every one runs (sent kLaterBatch at a time).
  ASSERT_TRUE(c_->Exec("BEGIN").ok());
  const int64_t many = 3 * static_cast<int64_t>(Connection::kLaterBatch) + 5;
  for (int64_t i = 100; i < 100 + many; ++i) {
    (*ins)->BindInt(1, i);
    (*ins)->BindText(2, "m");
    ASSERT_TRUE((*ins)->RunLater().ok());
    (*ins)->Reset();
  }
  ASSERT_TRUE(c_->Flush().ok());
  ASSERT_TRUE(c_->Exec("COMMIT").ok());
  n = c_->QueryInt("SELECT count(*) FROM t WHERE s = 'm'", -1);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, many);
}

TEST_F(PgConnection, AWaitingStatementsFailureIsTheNextStatementsAndAbortsTheTransaction) {
  ASSERT_TRUE(c_->Exec("CREATE TABLE t (i bigint PRIMARY KEY)").ok());
  ASSERT_TRUE(c_->Exec("INSERT INTO t VALUES (1)").ok());
  // (In a block: its statement handles end before ClearCache below drops the statements.)
  {
    auto ins = c_->Cached("INSERT INTO t (i) VALUES (?1)");
    auto count = c_->Cached("SELECT count(*) FROM t");
    ASSERT_TRUE(ins.ok() && count.ok());
    ASSERT_TRUE(c_->Exec("BEGIN").ok());
    for (int64_t i : {2, 1, 3}) {  // 1 is taken
      (*ins)->BindInt(1, i);
      ASSERT_TRUE((*ins)->RunLater().ok());
      (*ins)->Reset();
    }
    auto row = (*count)->Step();
    ASSERT_FALSE(row.ok());
    EXPECT_EQ(row.status().code(), Code::kConflict) << row.status().ToString();
    EXPECT_NE(row.status().message().find("duplicate key"), std::string::npos)
        << row.status().ToString();
    (*count)->Reset();
    EXPECT_TRUE(c_->InTransaction());
    ASSERT_TRUE(c_->Exec("ROLLBACK").ok());
    auto n = c_->QueryInt("SELECT count(*) FROM t", -1);
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(*n, 1) << "nothing of the failed transaction stays";

    // A COMMIT sent with a failing one does not commit: the others are not written either.
    auto commit = c_->Cached("COMMIT");
    ASSERT_TRUE(commit.ok());
    ASSERT_TRUE(c_->Exec("BEGIN").ok());
    for (int64_t i : {5, 1}) {
      (*ins)->BindInt(1, i);
      ASSERT_TRUE((*ins)->RunLater().ok());
      (*ins)->Reset();
    }
    Status st = (*commit)->Run();
    EXPECT_EQ(st.code(), Code::kConflict) << st.ToString();
    (*commit)->Reset();
    if (c_->InTransaction()) {
      ASSERT_TRUE(c_->Exec("ROLLBACK").ok());
    }
    n = c_->QueryInt("SELECT count(*) FROM t", -1);
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(*n, 1);
  }

  // A statement dropped while its execution waits (ClearCache) still runs first.
  ASSERT_TRUE(c_->Exec("BEGIN").ok());
  {
    auto once = c_->Cached("INSERT INTO t (i) VALUES (?1)");
    ASSERT_TRUE(once.ok());
    (*once)->BindInt(1, 7);
    ASSERT_TRUE((*once)->RunLater().ok());
  }
  ASSERT_TRUE(c_->ClearCache().ok());
  ASSERT_TRUE(c_->Exec("COMMIT").ok());
  auto n = c_->QueryInt("SELECT count(*) FROM t WHERE i = 7", -1);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 1);
}

}  // namespace
}  // namespace mentat::pg
