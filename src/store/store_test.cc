#include "mentat/store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "storage/format.h"
#include "storage/sqlite.h"
#include "store/store_test_util.h"

namespace mentat {
namespace {

const char* kSchema = R"([
  {:db/ident :p/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
  {:db/ident :p/age :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
  {:db/ident :p/seen :db/valueType :db.type/long :db/cardinality :db.cardinality/one :db/noHistory true}
  {:db/ident :p/bio :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/fulltext true}])";

using testing::TempDir;

std::unique_ptr<Store> MustOpen(const std::string& path, const Options& o = {}) {
  auto s = Store::open(path, o);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(*s) : nullptr;
}

TEST(Store, OpenInMemoryBootstrapsVocabulary) {
  auto s = MustOpen("");
  auto schema = s->schema();
  ASSERT_TRUE(schema->attribute("db/ident"));
  EXPECT_EQ(schema->attribute("db/ident")->unique, Unique::kIdentity);
  EXPECT_EQ(schema->attribute("db/txInstant")->type, ValueType::kInstant);
  EXPECT_EQ(*schema->entid("db.type/string"), ids::kTypeRef + 4);
  EXPECT_EQ(*s->last_tx(), ids::kBootstrapTx);
}

TEST(Store, ReopenKeepsDataAndNeverReusesIds) {
  TempDir dir;
  std::string path = dir.Path("a.db");
  Entid first_e, first_tx;
  {
    auto s = MustOpen(path);
    ASSERT_TRUE(s->transact(kSchema).ok());
    auto r = s->transact(R"([{:db/id "x" :p/name "x"}])");
    ASSERT_TRUE(r.ok());
    first_e = r->tempids.at("x");
    first_tx = r->tx_id;
    // A speculative transaction allocates nothing durable.
    ASSERT_TRUE(s->with(R"([{:db/id "y" :p/name "y"}])").ok());
  }
  auto s = MustOpen(path);
  auto r = s->transact(R"([{:db/id "y" :p/name "y"}])");
  ASSERT_TRUE(r.ok());
  EXPECT_GT(r->tempids.at("y"), first_e);
  EXPECT_GT(r->tx_id, first_tx);
  auto d = s->datoms(":avet", {edn::Value::Keyword("p/name"), edn::Value::String("x")});
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->size(), 1u);
  EXPECT_EQ((*d)[0].e, first_e);
}

TEST(Store, UsesWalAndUserVersion) {
  TempDir dir;
  std::string path = dir.Path("wal.db");
  MustOpen(path);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, nullptr);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "wal");
  sqlite3_finalize(st);
  sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, nullptr);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(st, 0), storage::kFormatVersion);
  sqlite3_finalize(st);
  sqlite3_close(db);
}

TEST(Store, RefusesForeignAndNewerFiles) {
  TempDir dir;
  {
    std::string path = dir.Path("foreign.db");
    sqlite3* db = nullptr;
    sqlite3_open(path.c_str(), &db);
    sqlite3_exec(db, "CREATE TABLE t (x)", nullptr, nullptr, nullptr);
    sqlite3_close(db);
    auto s = Store::open(path);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().code(), Code::kCorrupt);
    EXPECT_NE(s.status().message().find("not a mentat store"), std::string::npos);
  }
  {
    std::string path = dir.Path("garbage.db");
    FILE* f = std::fopen(path.c_str(), "w");
    std::fputs("this is not a database, just some text that is long enough to matter....", f);
    std::fclose(f);
    auto s = Store::open(path);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().code(), Code::kCorrupt) << s.status().ToString();
  }
  {
    std::string path = dir.Path("newer.db");
    MustOpen(path);
    sqlite3* db = nullptr;
    sqlite3_open(path.c_str(), &db);
    sqlite3_exec(db, "PRAGMA user_version = 99", nullptr, nullptr, nullptr);
    sqlite3_close(db);
    auto s = Store::open(path);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().code(), Code::kUnsupported);
    EXPECT_NE(s.status().message().find("newer"), std::string::npos);
  }
}

// A user_version changed outside mentat: the error says so, instead of an upgrade failing
// on tables it does not expect ("table attr_stats already exists"); the file is unchanged.
TEST(Store, AUserVersionThatContradictsTheTablesIsNamed) {
  TempDir dir;
  std::string path = dir.Path("forced.db");
  {
    auto s = MustOpen(path);
    ASSERT_TRUE(s->transact(kSchema).ok());
  }
  for (int version : {1, 2}) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, ("PRAGMA user_version = " + std::to_string(version)).c_str(),
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
    auto s = Store::open(path);
    ASSERT_FALSE(s.ok()) << version;
    EXPECT_EQ(s.status().code(), Code::kCorrupt) << s.status().ToString();
    EXPECT_NE(s.status().message().find("user_version says format " + std::to_string(version) +
                                        ", but it has tables of a later format"),
              std::string::npos)
        << s.status().ToString();
    EXPECT_EQ(s.status().message().find("already exists"), std::string::npos);
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(
      sqlite3_exec(db, "PRAGMA user_version = 3; DROP TABLE attr_values; DROP TABLE auto_indexes",
                   nullptr, nullptr, nullptr),
      SQLITE_OK);
  sqlite3_close(db);
  auto s = Store::open(path);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("is missing its tables auto_indexes"), std::string::npos)
      << s.status().ToString();
}

TEST(Store, UpgradesFormatOneInPlace) {
  TempDir dir;
  std::string path = dir.Path("v1.db");
  {
    // Build a format-1 store: v1 tables and the bootstrap, as an old mentat wrote it.
    auto s = MustOpen(path);
    ASSERT_TRUE(s->transact(kSchema).ok());
    ASSERT_TRUE(s->transact(R"([{:p/name "old" :p/age 3}])").ok());
  }
  {
    sqlite3* db = nullptr;
    sqlite3_open(path.c_str(), &db);
    std::string sql = std::string(storage::kDowngradeTo2ForTests) + storage::kDowngrade2To1ForTests;
    ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  }
  auto s = MustOpen(path);
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db,
                     "SELECT (SELECT user_version FROM pragma_user_version), datoms FROM "
                     "attr_stats WHERE a = (SELECT e FROM datoms WHERE a = 1 AND v = ':p/age')",
                     -1, &st, nullptr);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(st, 0), storage::kFormatVersion);
  EXPECT_EQ(sqlite3_column_int(st, 1), 1);
  sqlite3_finalize(st);
  sqlite3_close(db);
  EXPECT_TRUE(s->transact(R"([{:p/name "new" :p/age 4}])").ok());
}

// Runs `sql` on the file at `path` and returns the first column of each row, as text.
std::vector<std::string> RawColumn(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_stmt* st = nullptr;
  std::vector<std::string> out;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK) {
    while (sqlite3_step(st) == SQLITE_ROW) {
      const unsigned char* t = sqlite3_column_text(st, 0);
      out.push_back(t ? reinterpret_cast<const char*>(t) : "NULL");
    }
  } else {
    out.push_back(std::string("error: ") + sqlite3_errmsg(db));
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

// Each attribute's datoms and where they are indexed: "ident ix count" rows.
std::vector<std::string> IndexPlacement(const std::string& path) {
  return RawColumn(path,
                   "SELECT i.v || ' ' || d.ix || ' ' || count(*) FROM datoms d JOIN datoms i "
                   "ON i.e = d.a AND i.a = 1 WHERE i.v LIKE ':p/%' OR i.v LIKE ':q/%' "
                   "GROUP BY d.a, d.ix ORDER BY i.v");
}

TEST(Store, UpgradesFormatThreeWithTheSystemBlock) {
  TempDir dir;
  std::string path = dir.Path("v3.db");
  {
    auto s = MustOpen(path);
    ASSERT_TRUE(s->transact(kSchema).ok());
  }
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  std::string to3 = std::string(storage::kDowngradeTo4ForTests) + storage::kDowngrade4To3ForTests;
  ASSERT_EQ(sqlite3_exec(db, to3.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  EXPECT_EQ(RawColumn(path, "SELECT count(*) FROM datoms WHERE v = ':db.type/bigint'"),
            std::vector<std::string>{"0"});
  {
    auto s = MustOpen(path);
    auto r = s->transact(R"([{:db/ident :p/big :db/valueType :db.type/bigint
                               :db/cardinality :db.cardinality/one}])");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_TRUE(s->transact(R"([{:p/name "x" :p/big 123456789012345678901234567890N}])").ok());
    auto q = s->q(R"([:find ?b . :where [?e :p/name "x"] [?e :p/big ?b]])");
    ASSERT_TRUE(q.ok()) << q.status().ToString();
    EXPECT_EQ(edn::Print(q->ToEdn()), "123456789012345678901234567890N");
    auto check = s->check();
    ASSERT_TRUE(check.ok()) << check.status().ToString();
    EXPECT_TRUE(check->ok()) << edn::Print(check->ToEdn());
  }
  EXPECT_EQ(RawColumn(path, "SELECT end FROM parts WHERE part = 0"),
            std::vector<std::string>{"65280"});
  // A format-3 store whose idents reach into the block cannot be upgraded.
  std::string crowded = dir.Path("crowded.db");
  { MustOpen(crowded); }
  sqlite3_open(crowded.c_str(), &db);
  std::string sql = to3 + "UPDATE parts SET next = 65300 WHERE part = 0;";
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto s = Store::open(crowded);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), Code::kUnsupported);
  EXPECT_NE(s.status().message().find("reserves 65280 and above"), std::string::npos)
      << s.status().ToString();
}

TEST(Store, UpgradesFormatTwoToPartialAttributeIndexes) {
  TempDir dir;
  std::string path = dir.Path("v2.db");
  {
    auto s = MustOpen(path);
    ASSERT_TRUE(s->transact(kSchema).ok());
    ASSERT_TRUE(s->transact(R"([{:db/ident :q/friend :db/valueType :db.type/ref
                                  :db/cardinality :db.cardinality/many}
                                 {:db/ident :q/score :db/valueType :db.type/long
                                  :db/cardinality :db.cardinality/one :db/index true}])")
                    .ok());
    ASSERT_TRUE(s->transact(R"([{:db/id "a" :p/name "ann" :p/age 30 :q/score 7}
                                 {:p/name "bob" :p/age 40 :q/friend "a" :q/score 9}])")
                    .ok());
  }
  std::vector<std::string> want = {":p/age 0 2", ":p/name 1 2", ":q/friend 1 1", ":q/score 1 2"};
  EXPECT_EQ(IndexPlacement(path), want);
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  ASSERT_EQ(sqlite3_exec(db, storage::kDowngradeTo2ForTests, nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
  EXPECT_EQ(RawColumn(path, "PRAGMA user_version"), std::vector<std::string>{"2"});
  auto s = MustOpen(path);
  EXPECT_EQ(RawColumn(path, "PRAGMA user_version"),
            std::vector<std::string>{std::to_string(storage::kFormatVersion)});
  // The upgrade derives each attribute's index from its schema, as the transactor does.
  EXPECT_EQ(IndexPlacement(path), want);
  auto r = s->q(R"([:find ?n ?a :where [?e :p/age ?a] [(> ?a 35)] [?e :p/name ?n]])");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(edn::Print(r->ToEdn()), R"([["bob" 40]])");
  r = s->q(R"([:find ?n :where [?f :p/name "ann"] [?e :q/friend ?f] [?e :p/name ?n]])");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(edn::Print(r->ToEdn()), R"([["bob"]])");
}

TEST(Store, ChangingDbIndexMovesAnAttributesDatomsAndKeepsEveryView) {
  TempDir dir;
  std::string path = dir.Path("move.db");
  auto s = MustOpen(path);
  ASSERT_TRUE(s->transact(kSchema).ok());
  auto t1 = s->transact(R"([{:p/name "ann" :p/age 30} {:p/name "bob" :p/age 40}])");
  ASSERT_TRUE(t1.ok());
  ASSERT_TRUE(s->transact(R"([[:db/add [:p/name "ann"] :p/age 31]])").ok());
  const char* by_age = R"([:find ?n :in $ ?a :where [?e :p/age ?a] [?e :p/name ?n]])";
  auto check = [&](const char* when) {
    auto now = s->q(by_age, {edn::Value::Int(31)});
    ASSERT_TRUE(now.ok()) << when << ": " << now.status().ToString();
    EXPECT_EQ(edn::Print(now->ToEdn()), R"([["ann"]])") << when;
    auto then = s->db().as_of(TxPoint::Tx(t1->tx_id)).q(by_age, {edn::Value::Int(30)});
    ASSERT_TRUE(then.ok()) << when << ": " << then.status().ToString();
    EXPECT_EQ(edn::Print(then->ToEdn()), R"([["ann"]])") << when;
    auto range = s->index_range(edn::Value::Keyword("p/age"), edn::Value::Int(35), edn::Value());
    ASSERT_TRUE(range.ok()) << when;
    ASSERT_EQ(range->size(), 1u) << when;
    EXPECT_EQ((*range)[0].v, edn::Value::Int(40)) << when;
  };
  check("not indexed");
  EXPECT_EQ(IndexPlacement(path), (std::vector<std::string>{":p/age 0 2", ":p/name 1 2"}));
  ASSERT_TRUE(s->transact("[[:db/add :p/age :db/index true]]").ok());
  EXPECT_EQ(IndexPlacement(path), (std::vector<std::string>{":p/age 1 2", ":p/name 1 2"}));
  check("indexed");
  ASSERT_TRUE(s->transact("[[:db/retract :p/age :db/index true]]").ok());
  EXPECT_EQ(IndexPlacement(path), (std::vector<std::string>{":p/age 0 2", ":p/name 1 2"}));
  check("index dropped");
}

// A number nobody allocated is refused as an entity id, and the partition marks do not move
// because of it: afterwards ids come in sequence and every transaction commits.
TEST(Store, ExplicitIdsMustBeAllocatedAndNeverMoveAPartitionMark) {
  auto s = Store::open("");
  ASSERT_TRUE(s.ok());
  auto& st = *s;
  ASSERT_TRUE(st->transact("[{:db/ident :p/age :db/valueType :db.type/long "
                           ":db/cardinality :db.cardinality/one}]")
                  .ok());
  auto first = st->transact("[{:db/id \"x\" :p/age 1}]");
  ASSERT_TRUE(first.ok());
  for (const char* id :
       {"9223372036854775806", "9223372036854775807", "268435455", "65535", "1000000"}) {
    auto r = st->transact(std::string("[[:db/add ") + id + " :p/age 1]]");
    ASSERT_FALSE(r.ok()) << id;
    EXPECT_EQ(r.status().code(), Code::kNotFound) << r.status().ToString();
    EXPECT_NE(r.status().message().find("does not exist"), std::string::npos)
        << r.status().ToString();
  }
  auto next = st->transact("[{:db/id \"y\" :p/age 2}]");
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(next->tempids.at("y"), first->tempids.at("x") + 1);
  EXPECT_EQ(next->tx_id, first->tx_id + 1);
  // The entity first made can be changed and retracted by its id.
  std::string x = std::to_string(first->tempids.at("x"));
  EXPECT_TRUE(st->transact("[[:db/retract " + x + " :p/age 1]]").ok());
}

// Strings are UTF-8: a transaction whose string or keyword value (built in code, or from a
// script) is not is refused naming the attribute and writes nothing, as is NaN (refused
// in doc/format.md "Strings" and "Doubles").
TEST(Store, TransactionsRefuseStringsThatAreNotUtf8AndNaN) {
  auto s = Store::open("");
  ASSERT_TRUE(s.ok());
  auto& st = *s;
  ASSERT_TRUE(st->transact("[{:db/ident :p/s :db/valueType :db.type/string "
                           ":db/cardinality :db.cardinality/one}"
                           " {:db/ident :p/k :db/valueType :db.type/keyword "
                           ":db/cardinality :db.cardinality/one}"
                           " {:db/ident :p/d :db/valueType :db.type/double "
                           ":db/cardinality :db.cardinality/one}]")
                  .ok());
  auto before = st->last_tx();
  using V = edn::Value;
  auto tx = [](const char* attr, V v) {
    return V::Vector({V::Vector({V::Keyword("db/add"), V::String("x"), V::Keyword(attr), v})});
  };
  struct Case {
    V data;
    std::string message;
  };
  const Case cases[] = {
      {tx("p/s", V::String("a\xFF"
                           "b")),
       "invalid value for :p/s: the string is not valid UTF-8 (byte 0xFF at offset 1); store "
       "bytes as :db.type/bytes"},
      {tx("p/s", V::String("\xED\xA0\x80")),
       "the string is not valid UTF-8 (byte 0xED at offset 0)"},
      {tx("p/k", V::Keyword("a/\xC3")), "invalid value for :p/k: the keyword is not valid UTF-8"},
      {tx("p/d", V::Float(std::nan(""))), "invalid value for :p/d: NaN cannot be stored"},
  };
  for (const Case& c : cases) {
    auto r = st->transact(c.data);
    ASSERT_FALSE(r.ok()) << edn::Print(c.data);
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << r.status().ToString();
    EXPECT_NE(r.status().message().find(c.message), std::string::npos) << r.status().ToString();
  }
  EXPECT_EQ(*st->last_tx(), *before);
  EXPECT_TRUE(st->transact(tx("p/s", V::String("h\xC3\xA9llo \xF0\x9F\x98\x80"))).ok());
}

TEST(Store, ReadOnlyStoreRefusesWrites) {
  TempDir dir;
  std::string path = dir.Path("ro.db");
  { MustOpen(path); }
  Options o;
  o.read_only = true;
  auto s = MustOpen(path, o);
  auto r = s->transact("[]");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("read-only"), std::string::npos);
  EXPECT_TRUE(s->datoms(":eavt", {edn::Value::Int(1)}).ok());
}

TEST(Store, SeesOtherConnectionsSchemaAndData) {
  TempDir dir;
  std::string path = dir.Path("shared.db");
  auto a = MustOpen(path);
  auto b = MustOpen(path);
  ASSERT_TRUE(b->schema()->attribute("p/name") == nullptr);
  ASSERT_TRUE(a->transact(kSchema).ok());
  // b notices a's commit (data_version) and reloads its schema without reopening.
  EXPECT_TRUE(b->schema()->attribute("p/name") != nullptr);
  auto r = b->transact(R"([{:p/name "from-b"}])");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto d = a->datoms(":avet", {edn::Value::Keyword("p/name")});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->size(), 1u);
}

// A repeated query runs without BEGIN/COMMIT and without re-reading the schema while the
// store has not changed (StoreImpl::Read); each change by another connection, of data or of
// schema, and each of its own writes must still show in the very next call.
TEST(Store, RepeatedQueriesSeeEveryChangeAtOnce) {
  TempDir dir;
  std::string path = dir.Path("optimistic.db");
  auto a = MustOpen(path);
  auto b = MustOpen(path);
  ASSERT_TRUE(a->transact(kSchema).ok());
  auto names = [&](Store* s) {
    auto r = s->q("[:find ?n :where [_ :p/name ?n]]");
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    std::set<std::string> got;
    if (r.ok())
      for (const auto& row : r->rows) got.insert(row[0].str());
    return got;
  };
  auto counts = [&](Store* s) {
    auto r = s->q("[:find ?a (count ?e) :where [?e :p/age ?a]]");
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    std::map<int64_t, int64_t> got;
    if (r.ok())
      for (const auto& row : r->rows) got[row[0].as_int()] = row[1].as_int();
    return got;
  };
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(names(b.get()).empty());
  EXPECT_TRUE(counts(b.get()).empty());
  ASSERT_TRUE(a->transact(R"([{:p/name "ann" :p/age 30}])").ok());
  EXPECT_EQ(names(b.get()), (std::set<std::string>{"ann"}));
  EXPECT_EQ(counts(b.get()), (std::map<int64_t, int64_t>{{30, 1}}));
  EXPECT_EQ(counts(b.get()), (std::map<int64_t, int64_t>{{30, 1}}));
  // Its own write, then another connection's, between two runs of the same query.
  ASSERT_TRUE(b->transact(R"([{:p/name "bob" :p/age 30}])").ok());
  EXPECT_EQ(names(b.get()), (std::set<std::string>{"ann", "bob"}));
  EXPECT_EQ(counts(b.get()), (std::map<int64_t, int64_t>{{30, 2}}));
  ASSERT_TRUE(a->transact(R"([[:db/retract [:p/name "ann"] :p/age 30]])").ok());
  EXPECT_EQ(counts(b.get()), (std::map<int64_t, int64_t>{{30, 1}}));
  // An attribute that another connection has just created is known to the next query.
  ASSERT_TRUE(a->transact(R"([{:db/ident :p/nick :db/valueType :db.type/string
                                :db/cardinality :db.cardinality/one}])")
                  .ok());
  EXPECT_EQ(names(b.get()), (std::set<std::string>{"ann", "bob"}));
  ASSERT_TRUE(a->transact(R"([{:p/name "ann" :p/nick "annie"}])").ok());
  auto nick = b->q("[:find ?k . :where [_ :p/nick ?k]]");
  ASSERT_TRUE(nick.ok()) << nick.status().ToString();
  ASSERT_EQ(nick->rows.size(), 1u);
  EXPECT_EQ(nick->rows[0][0].str(), "annie");
  // Pull queries: a scalar find reads its pull in its statement's read transaction, a
  // relation find in a transaction around both.
  auto pull_one = [&] {
    auto r = b->q("[:find (pull ?e [:p/nick]) . :where [?e :p/name \"ann\"]]");
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() && !r->rows.empty() ? edn::Print(r->rows[0][0]) : std::string();
  };
  auto pull_all = [&] {
    auto r = b->q("[:find (pull ?e [:p/nick]) :where [?e :p/name _]]");
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? edn::Print(r->ToEdn()) : std::string();
  };
  EXPECT_EQ(pull_one(), "{:p/nick \"annie\"}");
  EXPECT_EQ(pull_one(), "{:p/nick \"annie\"}");
  EXPECT_EQ(pull_all(), "[[{:p/nick \"annie\"}] [nil]]");
  ASSERT_TRUE(a->transact(R"([{:p/name "ann" :p/nick "an"} {:p/name "bob" :p/nick "bo"}])").ok());
  EXPECT_EQ(pull_one(), "{:p/nick \"an\"}");
  EXPECT_EQ(pull_all(), "[[{:p/nick \"an\"}] [{:p/nick \"bo\"}]]");
}

TEST(Store, ConcurrentWritersNeverShareIds) {
  TempDir dir;
  std::string path = dir.Path("writers.db");
  { ASSERT_TRUE(MustOpen(path)->transact(kSchema).ok()); }
  constexpr int kThreads = 4, kTx = 50;
  std::vector<std::vector<Entid>> ids(kThreads);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // Each thread has its own Store (as separate processes would).
      auto s = MustOpen(path);
      for (int i = 0; i < kTx; ++i) {
        auto r = s->transact("[{:db/id \"n\" :p/name \"t" + std::to_string(t) + "-" +
                             std::to_string(i) + "\"}]");
        if (!r.ok()) {
          ++failures;
          continue;
        }
        ids[t].push_back(r->tempids.at("n"));
        ids[t].push_back(r->tx_id);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  std::set<Entid> all;
  for (const auto& v : ids)
    for (Entid e : v) EXPECT_TRUE(all.insert(e).second) << "duplicate id " << e;
  EXPECT_EQ(all.size(), size_t{kThreads * kTx * 2});
}

TEST(Store, ReadersRunWhileAWriterWrites) {
  TempDir dir;
  std::string path = dir.Path("readers.db");
  auto s = MustOpen(path);
  ASSERT_TRUE(s->transact(kSchema).ok());
  std::atomic<bool> stop{false};
  std::atomic<int> reads{0}, errors{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&] {
      while (!stop) {
        auto d = s->datoms(":avet", {edn::Value::Keyword("p/name")});
        if (!d.ok()) ++errors;
        ++reads;
      }
    });
  }
  for (int i = 0; i < 100; ++i)
    ASSERT_TRUE(s->transact("[{:p/name \"w" + std::to_string(i) + "\"}]").ok());
  stop = true;
  for (auto& th : readers) th.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_GT(reads.load(), 0);
}

TEST(Store, HistoryAsOfAndSinceViews) {
  auto s = MustOpen("");
  ASSERT_TRUE(s->transact(kSchema).ok());
  auto r1 = s->transact(R"([{:db/id "a" :p/name "a" :p/age 30 :p/seen 1}])");
  ASSERT_TRUE(r1.ok());
  Entid a = r1->tempids.at("a");
  auto r2 = s->transact("[[:db/add " + std::to_string(a) + " :p/age 31] [:db/add " +
                        std::to_string(a) + " :p/seen 2]]");
  ASSERT_TRUE(r2.ok());
  auto age = [&](const Db& db) {
    auto d = db.datoms(":eavt", {edn::Value::Int(a), edn::Value::Keyword("p/age")});
    EXPECT_TRUE(d.ok());
    std::vector<std::string> out;
    for (const auto& x : *d)
      out.push_back(edn::Print(x.v) + (x.added ? "+" : "-") + "@" + std::to_string(x.tx));
    return out;
  };
  std::string t1 = std::to_string(r1->tx_id), t2 = std::to_string(r2->tx_id);
  EXPECT_EQ(age(s->db()), (std::vector<std::string>{"31+@" + t2}));
  EXPECT_EQ(age(s->db().as_of(TxPoint::Tx(r1->tx_id))), (std::vector<std::string>{"30+@" + t1}));
  EXPECT_EQ(age(s->db().since(TxPoint::Tx(r1->tx_id))), (std::vector<std::string>{"31+@" + t2}));
  EXPECT_TRUE(age(s->db().since(TxPoint::Tx(r2->tx_id))).empty());
  EXPECT_EQ(age(s->db().history()),
            (std::vector<std::string>{"30+@" + t1, "30-@" + t2, "31+@" + t2}));
  // as-of an instant: the last transaction at or before it.
  EXPECT_EQ(age(s->db().as_of(TxPoint::Instant(r1->tx_instant))),
            (std::vector<std::string>{"30+@" + t1}));
  // :db/noHistory keeps no interval for the replaced value.
  auto seen =
      s->db().history().datoms(":eavt", {edn::Value::Int(a), edn::Value::Keyword("p/seen")});
  ASSERT_TRUE(seen.ok());
  ASSERT_EQ(seen->size(), 1u);
  EXPECT_EQ((*seen)[0].v, edn::Value::Int(2));
  // A Db value is a snapshot: later transactions do not change it.
  Db before = s->db();
  ASSERT_TRUE(s->transact("[[:db/add " + std::to_string(a) + " :p/age 32]]").ok());
  EXPECT_EQ(age(before), (std::vector<std::string>{"31+@" + t2}));
}

TEST(Store, WithIsSpeculative) {
  auto s = MustOpen("");
  ASSERT_TRUE(s->transact(kSchema).ok());
  auto r = s->with(R"([{:db/id "a" :p/name "spec"}])");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->tx_data.size(), 2u);
  auto d = s->datoms(":avet", {edn::Value::Keyword("p/name")});
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->empty());
  auto real = s->transact(R"([{:db/id "a" :p/name "real"}])");
  ASSERT_TRUE(real.ok());
  EXPECT_EQ(real->tx_id, r->tx_id);  // the speculative id was never committed
}

TEST(Store, FulltextRowsFollowDatoms) {
  TempDir dir;
  std::string path = dir.Path("ft.db");
  auto s = MustOpen(path);
  ASSERT_TRUE(s->transact(kSchema).ok());
  auto r = s->transact(R"([{:db/id "a" :p/name "a" :p/bio "likes green tea"}])");
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(s->transact("[[:db/add " + std::to_string(r->tempids.at("a")) +
                          " :p/bio \"drinks black coffee\"]]")
                  .ok());
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  auto count = [&](const char* term) {
    sqlite3_stmt* st = nullptr;
    std::string sql =
        std::string("SELECT count(*) FROM fulltext WHERE fulltext MATCH '") + term + "'";
    sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr);
    sqlite3_step(st);
    int n = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return n;
  };
  EXPECT_EQ(count("coffee"), 1);
  EXPECT_EQ(count("tea"), 0);
  sqlite3_close(db);
}

TEST(Store, MillionDatomTransaction) {
  TempDir dir;
  auto s = MustOpen(dir.Path("big.db"));
  ASSERT_TRUE(s->transact(kSchema).ok());
  std::string tx = "[";
  tx.reserve(40'000'000);
  for (int i = 0; i < 500'000; ++i) {
    tx += "{:p/name \"n" + std::to_string(i) + "\" :p/age " + std::to_string(i) + "}";
  }
  tx += "]";
  auto r = s->transact(tx);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->tx_data.size(), 1'000'001u);
  auto d = s->datoms(":avet", {edn::Value::Keyword("p/name"), edn::Value::String("n499999")});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->size(), 1u);
}

// The bytes of a file (empty when it does not exist).
std::string FileBytes(const std::string& path) {
  std::string out;
  if (FILE* f = std::fopen(path.c_str(), "rb")) {
    char buf[65536];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
    std::fclose(f);
  }
  return out;
}

bool FileHolds(const std::string& path, const std::string& needle) {
  return FileBytes(path).find(needle) != std::string::npos ||
         FileBytes(path + "-wal").find(needle) != std::string::npos;
}

TEST(Store, ExcisionAndVacuumLeaveNoBytesOfTheValues) {
  TempDir dir;
  std::string path = dir.Path("excise.db");
  const std::string secret = "SECRET-4f1c-XYZZY";
  auto s = MustOpen(path);
  ASSERT_TRUE(s->transact(R"([{:db/ident :p/name :db/valueType :db.type/string
                                :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
                               {:db/ident :p/note :db/valueType :db.type/string
                                :db/cardinality :db.cardinality/one :db/fulltext true}])")
                  .ok());
  ASSERT_TRUE(s->transact("[{:p/name \"ann\" :p/note \"" + secret + " one\"}]").ok());
  ASSERT_TRUE(s->transact("[{:p/name \"ann\" :p/note \"" + secret + " two\"}]").ok());
  ASSERT_TRUE(s->transact(R"([{:p/name "bob" :p/note "plain"}])").ok());
  // Retracting keeps the old value in history, so the file still holds it.
  ASSERT_TRUE(s->vacuum().ok());
  EXPECT_TRUE(FileHolds(path, secret));

  auto r = s->transact(R"([{:db/excise [:p/name "ann"]}])");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto v = s->vacuum();
  ASSERT_TRUE(v.ok()) << v.ToString();
  EXPECT_FALSE(FileHolds(path, secret));
  auto q = s->q(R"([:find ?n :where [?e :p/name ?n]])");
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(edn::Print(q->ToEdn()), R"([["bob"]])");
  auto check = s->check();
  ASSERT_TRUE(check.ok()) << check.status().ToString();
  EXPECT_TRUE(check->ok()) << edn::Print(check->ToEdn());
}

}  // namespace
}  // namespace mentat
