// Host mode's layout (doc/format.md "Host mode"): a store opened on an application's own
// connection keeps its tables under the `mentat_` prefix and its format version in its
// meta table, leaving the application's names and user_version alone; the same file opens
// as a store (Store::open), and a store file opened on a connection keeps its own layout.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>
#include <vector>

#include "mentat/sqlite_host.h"
#include "mentat/store.h"
#include "store/store_test_util.h"

namespace mentat {
namespace {

using testing::TempDir;

const char* kSchema = R"([
  {:db/ident :p/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
  {:db/ident :p/bio :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/fulltext true}])";

std::vector<std::string> Column(sqlite3* db, const std::string& sql) {
  std::vector<std::string> out;
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK)
    return {std::string("error: ") + sqlite3_errmsg(db)};
  while (sqlite3_step(st) == SQLITE_ROW) {
    const unsigned char* t = sqlite3_column_text(st, 0);
    out.push_back(t ? reinterpret_cast<const char*>(t) : "NULL");
  }
  sqlite3_finalize(st);
  return out;
}

void Exec(sqlite3* db, const std::string& sql) {
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
}

std::string Names(Store* s) {
  auto r = s->q("[:find [?n ...] :where [?e :p/name ?n]]");
  if (!r.ok()) return r.status().ToString();
  std::string out;
  for (const auto& row : r->rows) out += edn::Print(row[0]) + " ";
  return out;
}

TEST(HostLayout, TablesUnderThePrefixBesideTheApplicationsOwn) {
  TempDir dir;
  const std::string path = dir.Path("app.db");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  // The application's own tables may use the plain names mentat's store files use, and
  // its own user_version.
  Exec(db, "CREATE TABLE meta(k, v); CREATE TABLE datoms(x); PRAGMA user_version = 7");
  {
    Options o;
    o.create = true;
    auto s = OpenStoreOnConnection(db, o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    ASSERT_TRUE((*s)->transact(kSchema).ok());
    ASSERT_TRUE((*s)->transact(R"([{:p/name "ada" :p/bio "counts engines"}])").ok());
    EXPECT_EQ(Names(s->get()), "\"ada\" ");
    auto ft =
        (*s)->q(R"([:find ?n . :where [(fulltext $ :p/bio "engines") [[?e]]] [?e :p/name ?n]])");
    ASSERT_TRUE(ft.ok()) << ft.status().ToString();
    EXPECT_EQ(edn::Print(ft->ToEdn()), "\"ada\"");
    ReleaseHostStatements(s->get());
  }
  EXPECT_EQ(Column(db, "PRAGMA user_version"), std::vector<std::string>{"7"});
  EXPECT_EQ(Column(db, "SELECT count(*) FROM meta"), std::vector<std::string>{"0"});
  // Every table, index and view is the application's or has the prefix.
  for (const std::string& name :
       Column(db,
              "SELECT name FROM sqlite_master WHERE name NOT IN ('meta', 'datoms') AND "
              "name NOT LIKE 'sqlite_autoindex_%'"))
    EXPECT_EQ(name.rfind("mentat_", 0), 0u) << name;
  EXPECT_EQ(Column(db, "SELECT value FROM mentat_meta WHERE key = 'format_version'"),
            std::vector<std::string>{"6"});
  EXPECT_EQ(Column(db, "SELECT count(*) > 0 FROM mentat_datoms"), std::vector<std::string>{"1"});
  sqlite3_close(db);

  // The same file through Store::open: the layout is found, every connection uses it.
  auto s = Store::open(path);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_TRUE((*s)->transact(R"([{:p/name "bo"}])").ok());
  EXPECT_EQ(Names(s->get()), "\"ada\" \"bo\" ");
}

TEST(HostLayout, AStoreFileOnAConnectionKeepsItsLayout) {
  TempDir dir;
  const std::string path = dir.Path("store.db");
  {
    auto s = Store::open(path);
    ASSERT_TRUE(s.ok());
    ASSERT_TRUE((*s)->transact(kSchema).ok());
    ASSERT_TRUE((*s)->transact(R"([{:p/name "cy"}])").ok());
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  {
    auto s = OpenStoreOnConnection(db, Options());
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    ASSERT_TRUE((*s)->transact(R"([{:p/name "di"}])").ok());
    EXPECT_EQ(Names(s->get()), "\"cy\" \"di\" ");
    ReleaseHostStatements(s->get());
  }
  EXPECT_EQ(Column(db, "SELECT count(*) FROM sqlite_master WHERE name LIKE 'mentat_%'"),
            std::vector<std::string>{"0"});
  EXPECT_EQ(Column(db, "PRAGMA user_version"), std::vector<std::string>{"6"});
  sqlite3_close(db);
}

TEST(HostLayout, APrefixedNameTheApplicationTookIsRefused) {
  TempDir dir;
  const std::string path = dir.Path("clash.db");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  Exec(db, "CREATE TABLE mentat_history(x)");
  Options o;
  o.create = true;
  auto s = OpenStoreOnConnection(db, o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("already has a table named 'mentat_history'"),
            std::string::npos)
      << s.status().ToString();
  EXPECT_EQ(Column(db, "SELECT count(*) FROM sqlite_master"), std::vector<std::string>{"1"});
  // A table of the application's called mentat_meta is not taken for a store.
  Exec(db, "DROP TABLE mentat_history; CREATE TABLE mentat_meta(k, v)");
  s = OpenStoreOnConnection(db, o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("mentat_meta"), std::string::npos) << s.status().ToString();
  sqlite3_close(db);
}

}  // namespace
}  // namespace mentat
