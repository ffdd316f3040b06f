// Bad input through the SQLite extension (build/libmentat_sqlite.so): the bad-input corpus
// (corpus/*.txt, corpus/README.md) through edn_t, edn_q, edn_rows, edn_pull, edn_datoms
// and edn_explain, loaded into this process's SQLite with sqlite3_load_extension, on a
// store file and in host mode. Every record must fail with an SQL error that names the
// function and carries mentat's message (with the record's expected text), never crash;
// afterwards the store holds exactly what it held. Also: the extension stays loaded after
// its last connection closes (unloading it leaked its singletons; under `make test-asan`
// every test here failed on LeakSanitizer's report).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "corpus.h"
#include "util.h"

namespace mentat::reliability {
namespace {

// Statement parameters: text, or NULL.
using Args = std::vector<std::optional<std::string>>;

class SqliteExtensionBadInput : public ::testing::TestWithParam<bool> {
 protected:
  bool HostMode() const { return GetParam(); }

  void SetUp() override {
    alarm(600);  // a hang fails the test instead of stalling the suite
    std::string ext = MENTAT_SQLITE_EXTENSION_PATH;
    ASSERT_TRUE(std::filesystem::exists(ext)) << "the SQLite extension is not built: " << ext;
    path_ = dir_.Path("bank.db");
    {
      auto s = Store::open(path_);
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      ASSERT_TRUE(SetUpBank(s->get()).ok());
    }
    // Host mode: the host connection is the store file itself and db_path is NULL.
    ASSERT_EQ(sqlite3_open(HostMode() ? path_.c_str() : ":memory:", &db_), SQLITE_OK);
    ASSERT_EQ(sqlite3_enable_load_extension(db_, 1), SQLITE_OK);
    char* err = nullptr;
    int rc = sqlite3_load_extension(db_, ext.c_str(), nullptr, &err);
    std::string msg = err ? err : "";
    sqlite3_free(err);
    ASSERT_EQ(rc, SQLITE_OK) << msg;
    before_ = Datoms();
    ASSERT_FALSE(before_.empty());
  }
  void TearDown() override {
    if (db_) {
      EXPECT_EQ(sqlite3_close(db_), SQLITE_OK) << "the host could not close";
    }
    alarm(0);
  }

  std::optional<std::string> Path() const {
    return HostMode() ? std::nullopt : std::optional<std::string>(path_);
  }

  // Runs `sql`, reading every row; returns SQLITE_DONE or the error code, with the
  // error message in *msg and the first column of the last row in *last.
  int Run(const std::string& sql, const Args& args, std::string* msg, std::string* last = nullptr) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
      *msg = sqlite3_errmsg(db_);
      return sqlite3_errcode(db_);
    }
    for (size_t i = 0; i < args.size(); ++i) {
      int at = static_cast<int>(i + 1);
      if (!args[i]) {
        sqlite3_bind_null(st, at);
      } else {
        sqlite3_bind_text(st, at, args[i]->data(), static_cast<int>(args[i]->size()),
                          SQLITE_TRANSIENT);
      }
    }
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      if (last) {
        const unsigned char* t = sqlite3_column_text(st, 0);
        *last = t ? reinterpret_cast<const char*>(t) : "";
      }
    }
    *msg = rc == SQLITE_DONE ? "" : sqlite3_errmsg(db_);
    sqlite3_finalize(st);
    return rc;
  }

  // The statement must fail with "<fn>: ..." that is not an internal error and contains
  // the record's expected text.
  void ExpectFails(const std::string& fn, const std::string& sql, const Args& args, const Record& r,
                   const std::string& file) {
    std::string where =
        file + ":" + std::to_string(r.line) + " via " + fn + ": " + r.body.substr(0, 60);
    std::string msg;
    int rc = Run(sql, args, &msg);
    ASSERT_NE(rc, SQLITE_DONE) << where << ": accepted";
    EXPECT_EQ(msg.rfind(fn + ": ", 0), 0u) << where << ": " << msg;
    EXPECT_EQ(Lower(msg).find("internal"), std::string::npos) << where << ": " << msg;
    if (r.expect != "*") {
      EXPECT_NE(Lower(msg).find(Lower(r.expect)), std::string::npos) << where << ": " << msg;
    }
  }

  // Every datom of the store, through the extension.
  std::string Datoms() {
    std::string msg, out;
    EXPECT_EQ(Run("SELECT edn_datoms(?1, ':eavt', NULL, 'edn')", {Path()}, &msg, &out), SQLITE_DONE)
        << msg;
    return out;
  }

  TempDir dir_;
  std::string path_;
  std::string before_;
  sqlite3* db_ = nullptr;
};

TEST_P(SqliteExtensionBadInput, TransactionsAreRefusedAndWriteNothing) {
  for (const auto& r : LoadCorpus("tx.txt")) {
    ExpectFails("edn_t", "SELECT edn_t(?1, ?2)", {Path(), r.body}, r, "tx.txt");
  }
  // Inside the host's transaction too (a savepoint in host mode).
  std::string msg;
  ASSERT_EQ(Run("BEGIN", {}, &msg), SQLITE_DONE) << msg;
  for (const auto& r : LoadCorpus("tx.txt")) {
    ExpectFails("edn_t", "SELECT edn_t(?1, ?2)", {Path(), r.body}, r, "tx.txt");
  }
  ASSERT_EQ(Run("COMMIT", {}, &msg), SQLITE_DONE) << msg;
  EXPECT_EQ(Datoms(), before_);
}

TEST_P(SqliteExtensionBadInput, QueriesAreRefused) {
  for (const auto& r : LoadCorpus("query.txt")) {
    ExpectFails("edn_q", "SELECT edn_q(?1, ?2, NULL)", {Path(), r.body}, r, "query.txt");
    ExpectFails("edn_rows", "SELECT * FROM edn_rows(?1, ?2)", {Path(), r.body}, r, "query.txt");
    std::string msg;
    (void)Run("SELECT edn_explain(?1, ?2)", {Path(), r.body}, &msg);  // no crash
  }
  for (const auto& r : LoadCorpus("options.txt")) {
    size_t nl = r.body.find('\n');
    ASSERT_NE(nl, std::string::npos) << "options.txt:" << r.line;
    Args args = {Path(), r.body.substr(0, nl), r.body.substr(nl + 1)};
    ExpectFails("edn_q", "SELECT edn_q(?1, ?2, ?3)", args, r, "options.txt");
    ExpectFails("edn_rows", "SELECT * FROM edn_rows(?1, ?2, ?3)", args, r, "options.txt");
  }
  EXPECT_EQ(Datoms(), before_);
}

TEST_P(SqliteExtensionBadInput, PullsAndDatomsAreRefused) {
  for (const auto& r : LoadCorpus("pull.txt")) {
    ExpectFails("edn_pull", "SELECT edn_pull(?1, ?2, '[:acct/id 1]')", {Path(), r.body}, r,
                "pull.txt");
  }
  for (const auto& r : LoadCorpus("edn.txt")) {
    ExpectFails("edn_datoms", "SELECT edn_datoms(?1, ':eavt', ?2)", {Path(), r.body}, r, "edn.txt");
  }
  Record index{"unknown index", "", 0};
  ExpectFails("edn_datoms", "SELECT edn_datoms(?1, ':nosuch')", {Path()}, index, "index");
  EXPECT_EQ(Datoms(), before_);
}

TEST_P(SqliteExtensionBadInput, StoresThatAreNotStores) {
  Record any{"*", "", 0};
  const std::string q = "SELECT edn_q(?1, '[:find ?e :where [?e :acct/id _]]', NULL)";
  if (HostMode()) {
    // The host's own file by path would be a second connection waiting on the host.
    Record own{"host's own database", "", 0};
    ExpectFails("edn_q", q, {path_}, own, "the host's file by path");
    ExpectFails("edn_t", "SELECT edn_t(?1, '[]')", {path_}, own, "the host's file by path");
    return;
  }
  ExpectFails("edn_q", q, {dir_.Path("no/such/dir/x.db")}, any, "missing directory");
  ExpectFails("edn_q", q, {dir_.Path("")}, any, "a directory");
  Record not_store{"not a mentat store", "", 0};
  ExpectFails("edn_q", q, {SourceDir() + "/corpus/README.md"}, not_store, "a text file");
  ASSERT_TRUE(WriteFile(dir_.Path("garbage.db"), std::string(8192, '\x5a')));
  ExpectFails("edn_t", "SELECT edn_t(?1, '[]')", {dir_.Path("garbage.db")}, not_store, "garbage");
}

INSTANTIATE_TEST_SUITE_P(Modes, SqliteExtensionBadInput, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& p) {
                           return p.param ? std::string("HostMode") : std::string("StoreFile");
                         });

TEST(SqliteExtensionBadInputStore, IntactAfterwards) {
  // The whole corpus of transactions through a fresh host, then the store is checked
  // with mentat's own API and SQLite's integrity check.
  TempDir dir;
  std::string path = dir.Path("bank.db");
  {
    auto s = Store::open(path);
    ASSERT_TRUE(s.ok());
    ASSERT_TRUE(SetUpBank(s->get()).ok());
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
  sqlite3_enable_load_extension(db, 1);
  ASSERT_EQ(sqlite3_load_extension(db, MENTAT_SQLITE_EXTENSION_PATH, nullptr, nullptr), SQLITE_OK);
  for (const auto& r : LoadCorpus("tx.txt")) {
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT edn_t(?1, ?2)", -1, &st, nullptr), SQLITE_OK);
    sqlite3_bind_text(st, 1, path.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, r.body.data(), static_cast<int>(r.body.size()), SQLITE_TRANSIENT);
    EXPECT_EQ(sqlite3_step(st), SQLITE_ERROR) << "tx.txt:" << r.line;
    sqlite3_finalize(st);
  }
  EXPECT_EQ(sqlite3_close(db), SQLITE_OK);
  auto s = Store::open(path);
  ASSERT_TRUE(s.ok());
  int64_t sum = 0, count = 0;
  ASSERT_TRUE(SumBalances((*s)->db(), &sum, &count).ok());
  EXPECT_EQ(sum, kAccounts * kInitialBalance);
  EXPECT_EQ(count, kAccounts);
  s->reset();
  EXPECT_EQ(IntegrityCheck(path), "ok");
}

TEST(SqliteExtensionLifetime, StaysLoadedAfterItsLastConnectionCloses) {
  // SQLite dlcloses an extension with the last connection that loaded it; the extension
  // is linked -z nodelete so that its process-wide state (store cache, C++ runtime) is not
  // unmapped unfreed, leaking on every load/close cycle of the host.
  for (int cycle = 0; cycle < 3; ++cycle) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
    sqlite3_enable_load_extension(db, 1);
    ASSERT_EQ(sqlite3_load_extension(db, MENTAT_SQLITE_EXTENSION_PATH, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(
        sqlite3_prepare_v2(db, "SELECT edn_q('', '[:find ?e . :where [?e :db/ident :db/ident]]')",
                           -1, &st, nullptr),
        SQLITE_OK);
    EXPECT_EQ(sqlite3_step(st), SQLITE_ROW) << sqlite3_errmsg(db);
    sqlite3_finalize(st);
    ASSERT_EQ(sqlite3_close(db), SQLITE_OK);
    void* still = dlopen(MENTAT_SQLITE_EXTENSION_PATH, RTLD_NOW | RTLD_NOLOAD);
    EXPECT_NE(still, nullptr) << "the extension was unloaded when its last connection closed";
    if (still) dlclose(still);  // drops only the reference RTLD_NOLOAD added
  }
}

}  // namespace
}  // namespace mentat::reliability
