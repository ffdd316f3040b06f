// Store::check: a sound store passes; each kind of damage, made with plain SQLite on a
// fresh copy of the store, is reported by name.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "mentat/store.h"
#include "store/store_test_util.h"

namespace mentat {
namespace {

constexpr char kSchema[] =
    "[{:db/ident :c/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one "
    "  :db/unique :db.unique/identity}"
    " {:db/ident :c/n :db/valueType :db.type/long :db/cardinality :db.cardinality/one}"
    " {:db/ident :c/ok :db/valueType :db.type/boolean :db/cardinality :db.cardinality/one}"
    " {:db/ident :c/k :db/valueType :db.type/keyword :db/cardinality :db.cardinality/one}"
    " {:db/ident :c/tags :db/valueType :db.type/string :db/cardinality :db.cardinality/many}"
    " {:db/ident :c/text :db/valueType :db.type/string :db/cardinality :db.cardinality/one "
    "  :db/fulltext true}"
    " {:db/ident :c/friend :db/valueType :db.type/ref :db/cardinality :db.cardinality/one}]";

class CheckTest : public ::testing::Test {
 protected:
  // A fresh store with data and history; returns its path.
  std::string Make(const std::string& name, int entities = 30) {
    std::string path = dir_.Path(name);
    auto s = Store::open(path);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_TRUE((*s)->transact(kSchema).ok());
    std::string tx = "[";
    for (int i = 0; i < entities; ++i) {
      std::string n = std::to_string(i);
      tx += "{:db/id \"e" + n + "\" :c/name \"name " + n + "\" :c/n " + n + " :c/ok " +
            (i % 2 ? "true" : "false") + " :c/k :k/x" + n + " :c/tags [\"a\" \"b" + n +
            "\"] :c/text \"the quick brown fox " + n + "\"" +
            (i > 0 ? " :c/friend \"e" + std::to_string(i - 1) + "\"" : "") + "}";
    }
    auto r = (*s)->transact(tx + "]");
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    first_ = r->tempids.at("e0");
    // History: changed and retracted values.
    EXPECT_TRUE(
        (*s)->transact("[[:db/add \"x\" :c/name \"name 0\"] [:db/add \"x\" :c/n 100]]").ok());
    EXPECT_TRUE((*s)->transact("[[:db/retract [:c/name \"name 1\"] :c/tags \"a\"]]").ok());
    return path;
  }

  void Sql(const std::string& path, const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    char* err = nullptr;
    ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK)
        << sql << ": " << (err ? err : "");
    sqlite3_close(db);
  }

  // The problems check() finds in the store at `path`.
  std::vector<std::string> Problems(const std::string& path) {
    auto s = Store::open(path);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    if (!s.ok()) return {"cannot open: " + s.status().ToString()};
    auto r = (*s)->check();
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->problems : std::vector<std::string>{r.status().ToString()};
  }

  static std::string Join(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += "  " + x + "\n";
    return s;
  }

  // `sql` damages a fresh store; check() must report a problem containing `want`.
  void ExpectFound(const std::string& name, const std::string& sql, const std::string& want) {
    std::string path = Make(name + ".db");
    Sql(path, sql);
    auto problems = Problems(path);
    bool found = false;
    for (const auto& p : problems) found |= p.find(want) != std::string::npos;
    EXPECT_TRUE(found) << name << ": no problem with \"" << want << "\" among:\n" << Join(problems);
  }

  testing::TempDir dir_;
  Entid first_ = 0;
};

TEST_F(CheckTest, ASoundStorePasses) {
  std::string path = Make("sound.db");
  auto s = Store::open(path);
  ASSERT_TRUE(s.ok());
  auto r = (*s)->check();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->ok()) << Join(r->problems);
  bool datoms = false;
  for (const auto& [what, n] : r->checked) datoms |= what == "datoms" && n > 200;
  EXPECT_TRUE(datoms);
  EXPECT_EQ(edn::Print(r->ToEdn().get_keyword("ok") ? *r->ToEdn().get_keyword("ok") : edn::Value()),
            "true");
  // In-memory stores too.
  auto m = Store::open("");
  ASSERT_TRUE(m.ok());
  ASSERT_TRUE((*m)->transact(kSchema).ok());
  auto rm = (*m)->check();
  ASSERT_TRUE(rm.ok());
  EXPECT_TRUE(rm->ok()) << Join(rm->problems);
}

TEST_F(CheckTest, EachBrokenInvariantIsReported) {
  const std::string attr = "(SELECT e FROM datoms WHERE a = 1 AND v = ':c/";
  ExpectFound("unknown", "INSERT INTO datoms VALUES (65536, 9999, 1, 268435457, 0)",
              "unknown attribute: 1 datoms rows of entity 9999, which is not an attribute");
  ExpectFound("type", "UPDATE datoms SET v = 'seven' WHERE a = " + attr + "n') AND v = 7",
              "value of the wrong type: 1 datoms values of :c/n are text, not :db.type/long");
  ExpectFound("boolean", "UPDATE datoms SET v = 7 WHERE a = " + attr + "ok') AND v = 1",
              "values of :c/ok are not :db.type/boolean values");
  ExpectFound("keyword", "UPDATE datoms SET v = 'k/x1' WHERE v = ':k/x1'",
              "values of :c/k are not :db.type/keyword values");
  ExpectFound("utf8", "UPDATE datoms SET v = CAST(X'61FF' AS TEXT) WHERE v = 'name 3'",
              "string that is not UTF-8: 1 datoms values of :c/name");
  ExpectFound("ix", "UPDATE datoms SET ix = 1 WHERE a = " + attr + "n') AND v = 4",
              "datom in the wrong attribute index: 1 datoms of :c/n have ix = 1, not 0");
  ExpectFound("ix-2", "UPDATE datoms SET ix = 2 WHERE a = " + attr + "name') AND v = 'name 4'",
              "have ix = 2, not 1");
  ExpectFound("mark", "UPDATE parts SET next = 65540 WHERE part = 2", "partition mark: id ");
  ExpectFound("tx-mark", "UPDATE parts SET next = 268435457 WHERE part = 3",
              "is in use in partition 3, whose next id is 268435457");
  ExpectFound("last-tx", "UPDATE meta SET value = 268435456 WHERE key = 'last_tx'",
              "transactions: meta last_tx is 268435456 but the last transaction in use is");
  ExpectFound("interval",
              "UPDATE history SET rtx = tx WHERE (e, a, v, tx) IN (SELECT e, a, v, tx FROM "
              "history LIMIT 1)",
              "history interval: 1 history rows do not have tx < rtx");
  ExpectFound("overlap",
              "INSERT INTO history SELECT e, a, v, tx - 1, tx + 1 FROM datoms WHERE a = " + attr +
                  "n') AND v = 5",
              "current and history overlap");
  ExpectFound(
      "cardinality",
      "INSERT INTO datoms SELECT e, a, 555, tx, ix FROM datoms WHERE a = " + attr + "n') AND v = 6",
      "cardinality: 1 entities hold more than one value of :c/n");
  ExpectFound("unique",
              "INSERT INTO datoms SELECT e + 1, a, v, tx, ix FROM datoms WHERE a = " + attr +
                  "name') AND v = 'name 7'",
              "uniqueness: 1 values of :c/name are held by more than one entity");
  ExpectFound("stats", "UPDATE attr_stats SET datoms = datoms + 5 WHERE a = " + attr + "n')",
              "statistics: attr_stats counts");
  ExpectFound("fulltext",
              "DELETE FROM fulltext_docs WHERE rowid IN (SELECT rowid FROM fulltext_docs LIMIT 2)",
              "fulltext: 2 datoms of :c/text are missing from the fulltext index");
}

// Bytes flipped in an index page: SQLite's integrity check finds it, and check() says so
// even though the store still opens and most reads work.
TEST_F(CheckTest, DamagedPagesAreFoundBySqlitesIntegrityCheck) {
  std::string path = Make("pages.db", 2000);
  {
    auto s = Store::open(path);
    ASSERT_TRUE(s.ok());  // a clean close checkpoints the WAL into the file
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db,
                               "SELECT rootpage, (SELECT page_size FROM pragma_page_size) FROM "
                               "sqlite_master WHERE name = 'datoms_tx'",
                               -1, &st, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  int64_t root = sqlite3_column_int64(st, 0), page = sqlite3_column_int64(st, 1);
  sqlite3_finalize(st);
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f.good());
    f.seekp((root - 1) * page + 100);
    std::string junk(200, '\xA5');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  auto problems = Problems(path);
  bool found = false;
  for (const auto& p : problems) found |= p.rfind("sqlite integrity_check: ", 0) == 0;
  EXPECT_TRUE(found) << Join(problems);
}

}  // namespace
}  // namespace mentat
