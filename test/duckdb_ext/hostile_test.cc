// Inputs that once took a DuckDB host down: strings that are not UTF-8 in a store (DuckDB
// raised an INTERNAL error and invalidated the database), a recursive pull down a long
// chain and a regex over a long string (both crashed the process with SIGSEGV).
#include <gmock/gmock.h>
#include <sqlite3.h>

#include <string>

#include "fixture.h"

namespace mentat::duckdb_host {
namespace {

using ::testing::HasSubstr;

class HostileTest : public DuckTest {
 protected:
  void SetUp() override {
    DuckTest::SetUp();
    if (HasFatalFailure()) return;
    file_ = Path("hostile.db");
    path_ = Quote(file_);
    Run("SELECT edn_t(" + path_ +
        ", '[{:db/ident :p/name :db/valueType :db.type/string :db/cardinality "
        ":db.cardinality/one} {:db/ident :p/next :db/valueType :db.type/ref :db/cardinality "
        ":db.cardinality/one}]')");
  }
  std::string file_, path_;
};

// Transactions refuse such strings now; a store written before that (or by another
// program) may still hold them: here put in place with plain SQLite. Every VARCHAR mentat
// hands DuckDB is UTF-8 (the bad bytes become U+FFFD), and the database stays usable.
TEST_F(HostileTest, StringsThatAreNotUtf8ReachDuckdbRepaired) {
  Run("SELECT edn_t(" + path_ + ", '[{:db/id \"x\" :p/name \"placeholder\"}]')");
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(file_.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(
      sqlite3_exec(raw, "UPDATE datoms SET v = CAST(X'61FF62' AS TEXT) WHERE v = 'placeholder'",
                   nullptr, nullptr, nullptr),
      SQLITE_OK)
      << sqlite3_errmsg(raw);
  EXPECT_EQ(sqlite3_changes(raw), 1);
  sqlite3_close(raw);

  const std::string fixed =
      "a\xEF\xBF\xBD"
      "b";
  auto typed = Run("SELECT * FROM edn_q(" + path_ + ", '[:find ?n :where [_ :p/name ?n]]', '{}')");
  ASSERT_EQ(typed.rows.size(), 1u);
  EXPECT_EQ(typed.Cell(0, 0), fixed);
  auto as_edn = Run("SELECT * FROM edn_q(" + path_ +
                    ", '[:find ?n :where [_ :p/name ?n]]', '{}', format := 'edn')");
  ASSERT_EQ(as_edn.rows.size(), 1u);
  EXPECT_THAT(as_edn.Cell(0, 0), HasSubstr(fixed));
  auto pulled_edn = Run("SELECT edn_pull(" + path_ + ", '[:p/name]', 65536, 'edn')");
  ASSERT_EQ(pulled_edn.rows.size(), 1u);
  EXPECT_THAT(pulled_edn.Cell(0, 0), HasSubstr(fixed));
  auto datoms = Run("SELECT edn_datoms(" + path_ + ", ':aevt', ':p/name', 'edn')");
  ASSERT_EQ(datoms.rows.size(), 1u);
  EXPECT_THAT(datoms.Cell(0, 0), HasSubstr(fixed));
  // The database was not invalidated.
  EXPECT_EQ(Run("SELECT 40 + 2").Cell(0, 0), "42");
}

TEST_F(HostileTest, DeepPullsAndLongRegexesFailCleanlyOrWork) {
  std::string chain = "[";
  for (int i = 0; i < 3000; ++i) {
    chain += "{:db/id \"n" + std::to_string(i) + "\" :p/name \"" +
             std::string(i == 0 ? 40000 : 1, 'a') + "\"";
    if (i + 1 < 3000) chain += " :p/next \"n" + std::to_string(i + 1) + "\"";
    chain += "}";
  }
  Run("SELECT edn_t(" + path_ + ", " + Quote(chain + "]") + ")");
  std::string err = Error("SELECT * FROM edn_q(" + path_ +
                          ", '[:find (pull ?e [:p/name {:p/next ...}]) :where [?e :p/name] "
                          "(not [_ :p/next ?e])]', '{}')");
  EXPECT_THAT(err, HasSubstr("nested deeper than 2000 levels following :p/next"));
  err = Error("SELECT edn_pull(" + path_ + ", '[:p/name {:p/next ...}]', 65536)");
  EXPECT_THAT(err, HasSubstr("nested deeper than 2000 levels"));
  auto limited = Run("SELECT edn_pull(" + path_ + ", '[:p/name {:p/next 1500}]', 65536)");
  EXPECT_EQ(limited.rows.size(), 1u);
  auto re = Run("SELECT * FROM edn_q(" + path_ +
                ", '[:find (count ?n) . :where [_ :p/name ?n] [(re-find \"(a|b)*c\" ?n)]]', '{}')");
  EXPECT_TRUE(re.rows.empty() || re.Cell(0, 0) == "NULL") << re.Cell(0, 0);  // no match: nil
  auto matched = Run("SELECT * FROM edn_q(" + path_ +
                     ", '[:find (count ?n) . :where [_ :p/name ?n] [(re-matches \"(a|b)*\" ?n)]]', "
                     "'{}')");
  EXPECT_EQ(matched.Cell(0, 0), "2");  // two distinct names: the long one and "a"
  EXPECT_EQ(Run("SELECT 40 + 2").Cell(0, 0), "42");
}

}  // namespace
}  // namespace mentat::duckdb_host
