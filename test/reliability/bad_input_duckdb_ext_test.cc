// Bad input through the DuckDB extension (build/mentat.duckdb_extension): the bad-input
// corpus (corpus/*.txt, corpus/README.md) through edn_t, edn_q (typed, 'edn' and 'json'
// results), edn_pull (BIGINT and EDN-text entity ids), edn_datoms, edn_explain and
// edn_eval, loaded into a real DuckDB (libduckdb.so from npm, through the C API test host
// ext/duckdb/host/duckdb_host.h), in DuckDB 1.4 and in the newer release the extension
// must also load into. Every record must fail with a DuckDB error that names the function
// and carries mentat's message (with the record's expected text), never crash or hang;
// afterwards the store holds exactly what it held.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>

#include "corpus.h"
#include "duckdb_host.h"
#include "util.h"

namespace mentat::reliability {
namespace {

using duckdb_host::Connection;
using duckdb_host::DuckHost;
using duckdb_host::Quote;

// The DuckDB release under test: its name and libduckdb.so ("" for the default, 1.4).
struct Release {
  const char* name;
  const char* library;
};
void PrintTo(const Release& r, std::ostream* os) { *os << r.name; }

class DuckdbExtensionBadInput : public ::testing::TestWithParam<Release> {
 protected:
  void SetUp() override {
    alarm(600);  // a hang fails the test instead of stalling the suite
    std::string ext = duckdb_host::DefaultExtensionPath();
    ASSERT_TRUE(std::filesystem::exists(ext)) << "the DuckDB extension is not built: " << ext;
    path_ = dir_.Path("bank.db");
    {
      // Created with this process's mentat, closed before the extension (with its own
      // SQLite) opens the file.
      auto s = Store::open(path_);
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      ASSERT_TRUE(SetUpBank(s->get()).ok());
    }
    auto db = DuckHost::Open(GetParam().library);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(*db);
    auto con = db_->Connect();
    ASSERT_TRUE(con.ok()) << con.status().ToString();
    con_ = std::move(*con);
    auto loaded = con_->Query("LOAD " + Quote(ext));
    ASSERT_TRUE(loaded.ok()) << db_->version() << ": " << loaded.status().ToString();
    p_ = Quote(path_);
    before_ = Datoms();
    ASSERT_NE(before_.find(":acct/balance"), std::string::npos) << before_;
  }
  void TearDown() override {
    con_.reset();
    db_.reset();
    alarm(0);
  }

  // The statement must fail with a DuckDB error carrying "<fn>: <mentat's message>",
  // not an internal error, containing the record's expected text.
  void ExpectFails(const std::string& fn, const std::string& sql, const Record& r,
                   const std::string& file) {
    std::string where = std::string(GetParam().name) + " " + file + ":" + std::to_string(r.line) +
                        " via " + fn + ": " + r.body.substr(0, 60);
    auto out = con_->Query(sql);
    ASSERT_FALSE(out.ok()) << where << ": accepted, " << out->rows.size() << " rows";
    const std::string msg = out.status().message();
    EXPECT_NE(msg.find(fn + ": "), std::string::npos) << where << ": " << msg;
    EXPECT_EQ(Lower(msg).find("internal"), std::string::npos) << where << ": " << msg;
    if (r.expect != "*") {
      EXPECT_NE(Lower(msg).find(Lower(r.expect)), std::string::npos) << where << ": " << msg;
    }
  }

  // Every datom of the store (transactions' included), through the extension.
  std::string Datoms() {
    auto out = con_->Query("SELECT edn_datoms(" + p_ + ", ':eavt', '', 'edn')");
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    return out.ok() ? out->Cell(0, 0) : "";
  }

  TempDir dir_;
  std::string path_;
  std::string p_;  // path_ as an SQL literal
  std::string before_;
  std::unique_ptr<DuckHost> db_;
  std::unique_ptr<Connection> con_;
};

TEST_P(DuckdbExtensionBadInput, TransactionsAreRefusedAndWriteNothing) {
  for (const auto& r : LoadCorpus("tx.txt")) {
    ExpectFails("edn_t", "SELECT edn_t(" + p_ + ", " + Quote(r.body) + ")", r, "tx.txt");
    ExpectFails("edn_t", "SELECT edn_t(" + p_ + ", " + Quote(r.body) + ", 'edn')", r, "tx.txt");
  }
  for (const auto& r : LoadCorpus("edn.txt")) {
    ExpectFails("edn_t", "SELECT edn_t(" + p_ + ", " + Quote(r.body) + ")", r, "edn.txt");
  }
  // The whole corpus as the rows of one statement: its first row fails it.
  std::string values;
  for (const auto& r : LoadCorpus("tx.txt"))
    values += (values.empty() ? "" : ", ") + ("(" + Quote(r.body) + ")");
  ExpectFails("edn_t", "SELECT edn_t(" + p_ + ", tx) FROM (VALUES " + values + ") t(tx)",
              Record{"*", "every tx.txt record", 0}, "tx.txt");
  Record format{"'json' or 'edn'", "a bad format", 0};
  ExpectFails("edn_t", "SELECT edn_t(" + p_ + ", '[]', 'yaml')", format, "format");
  EXPECT_EQ(Datoms(), before_);
}

TEST_P(DuckdbExtensionBadInput, QueriesAreRefused) {
  for (const auto& r : LoadCorpus("query.txt")) {
    const std::string q = Quote(r.body);
    ExpectFails("edn_q", "SELECT * FROM edn_q(" + p_ + ", " + q + ", '{}')", r, "query.txt");
    ExpectFails("edn_q", "SELECT * FROM edn_q(" + p_ + ", " + q + ", NULL, format := 'edn')", r,
                "query.txt");
    ExpectFails("edn_q", "SELECT * FROM edn_q(" + p_ + ", " + q + ", '{}', format := 'json')", r,
                "query.txt");
    // A query may be planned and fail only when it runs; explain must not crash, and
    // its errors must be edn_explain's.
    auto plan = con_->Query("SELECT edn_explain(" + p_ + ", " + q + ", '{}')");
    if (!plan.ok()) {
      EXPECT_NE(plan.status().message().find("edn_explain: "), std::string::npos)
          << "query.txt:" << r.line << ": " << plan.status().message();
    }
  }
  for (const auto& r : LoadCorpus("edn.txt")) {
    ExpectFails("edn_q", "SELECT * FROM edn_q(" + p_ + ", " + Quote(r.body) + ", '{}')", r,
                "edn.txt");
  }
  for (const auto& r : LoadCorpus("options.txt")) {
    size_t nl = r.body.find('\n');
    ASSERT_NE(nl, std::string::npos) << "options.txt:" << r.line;
    const std::string args =
        p_ + ", " + Quote(r.body.substr(0, nl)) + ", " + Quote(r.body.substr(nl + 1));
    ExpectFails("edn_q", "SELECT * FROM edn_q(" + args + ")", r, "options.txt");
    ExpectFails("edn_q", "SELECT * FROM edn_q(" + args + ", format := 'edn')", r, "options.txt");
    ExpectFails("edn_explain", "SELECT edn_explain(" + args + ")", r, "options.txt");
  }
  Record format{"'typed', 'edn' or 'json'", "a bad format", 0};
  ExpectFails("edn_q",
              "SELECT * FROM edn_q(" + p_ +
                  ", '[:find ?e :where [?e :acct/id _]]', "
                  "'{}', format := 'yaml')",
              format, "format");
  EXPECT_EQ(Datoms(), before_);
}

TEST_P(DuckdbExtensionBadInput, PullsAndDatomsAreRefused) {
  for (const auto& r : LoadCorpus("pull.txt")) {
    const std::string pattern = Quote(r.body);
    ExpectFails("edn_pull", "SELECT edn_pull(" + p_ + ", " + pattern + ", '[:acct/id 1]')", r,
                "pull.txt");
    ExpectFails("edn_pull", "SELECT edn_pull(" + p_ + ", " + pattern + ", 65536::BIGINT, 'edn')", r,
                "pull.txt");
  }
  for (const auto& r : LoadCorpus("edn.txt")) {
    const std::string edn = Quote(r.body);
    ExpectFails("edn_pull", "SELECT edn_pull(" + p_ + ", '[*]', " + edn + ")", r, "edn.txt");
    ExpectFails("edn_pull", "SELECT edn_pull(" + p_ + ", " + edn + ", 65536::BIGINT)", r,
                "edn.txt");
    ExpectFails("edn_datoms", "SELECT edn_datoms(" + p_ + ", ':eavt', " + edn + ")", r, "edn.txt");
  }
  Record index{"unknown index", "", 0};
  ExpectFails("edn_datoms", "SELECT edn_datoms(" + p_ + ", ':nosuch', '')", index, "index");
  Record format{"'json' or 'edn'", "a bad format", 0};
  ExpectFails("edn_pull", "SELECT edn_pull(" + p_ + ", '[*]', 65536::BIGINT, 'yaml')", format,
              "format");
  ExpectFails("edn_datoms", "SELECT edn_datoms(" + p_ + ", ':eavt', '', 'yaml')", format, "format");
  EXPECT_EQ(Datoms(), before_);
}

TEST_P(DuckdbExtensionBadInput, ScriptsFailWithinTheirLimits) {
  const std::string escape = "/tmp/mentat-script-sandbox-escape.db";
  for (const auto& r : LoadCorpus("script.txt")) {
    auto start = std::chrono::steady_clock::now();
    ExpectFails("edn_eval", "SELECT edn_eval(" + p_ + ", " + Quote(r.body) + ")", r, "script.txt");
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::steady_clock::now() - start)
                  .count();
    EXPECT_LT(ms, 30000) << r.body << " took " << ms << " ms";
  }
  EXPECT_FALSE(std::filesystem::exists(escape)) << "a script created " << escape;
  EXPECT_EQ(Datoms(), before_);
}

TEST_P(DuckdbExtensionBadInput, StoresThatAreNotStores) {
  const std::string q = "'[:find ?e :where [?e :acct/id _]]'";
  auto each = [&](const std::string& path, const Record& r, const std::string& what, bool creates) {
    const std::string p = Quote(path);
    ExpectFails("edn_q", "SELECT * FROM edn_q(" + p + ", " + q + ", '{}')", r, what);
    ExpectFails("edn_explain", "SELECT edn_explain(" + p + ", " + q + ", '{}')", r, what);
    ExpectFails("edn_pull", "SELECT edn_pull(" + p + ", '[*]', 65536::BIGINT)", r, what);
    ExpectFails("edn_datoms", "SELECT edn_datoms(" + p + ", ':eavt', '')", r, what);
    if (creates) {  // edn_t and edn_eval create a missing store
      ExpectFails("edn_t", "SELECT edn_t(" + p + ", '[]')", r, what);
      ExpectFails("edn_eval", "SELECT edn_eval(" + p + ", '1')", r, what);
    }
  };
  Record any{"*", "", 0};
  each(dir_.Path("no/such/dir/x.db"), any, "missing directory", true);
  each(dir_.Path(""), any, "a directory", true);
  each(dir_.Path("missing.db"), Record{"no mentat store", "", 0}, "missing file", false);
  EXPECT_FALSE(std::filesystem::exists(dir_.Path("missing.db")));
  Record not_store{"not a mentat store", "", 0};
  const std::string text = ReadFile(SourceDir() + "/corpus/README.md");
  ASSERT_TRUE(WriteFile(dir_.Path("text.db"), text));
  each(dir_.Path("text.db"), not_store, "a text file", true);
  EXPECT_EQ(ReadFile(dir_.Path("text.db")), text);
  ASSERT_TRUE(WriteFile(dir_.Path("garbage.db"), std::string(8192, '\x5a')));
  each(dir_.Path("garbage.db"), not_store, "garbage", true);
  EXPECT_EQ(ReadFile(dir_.Path("garbage.db")), std::string(8192, '\x5a'));
  EXPECT_EQ(Datoms(), before_);
}

INSTANTIATE_TEST_SUITE_P(Releases, DuckdbExtensionBadInput,
                         ::testing::Values(Release{"DuckDB_1_4", ""},
                                           Release{"DuckDB_next", MENTAT_DUCKDB_LIBRARY_NEXT}),
                         [](const ::testing::TestParamInfo<Release>& p) {
                           return std::string(p.param.name);
                         });

}  // namespace
}  // namespace mentat::reliability
