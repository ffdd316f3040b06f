// The public API's checked failures: Result::value() on an error, and (debug builds) a
// database value used after its Store was destroyed.
#include <gtest/gtest.h>

#include "mentat/status.h"
#include "mentat/store.h"

namespace mentat {
namespace {

TEST(ApiContractDeathTest, ValueOfAnErrorResultAbortsWithTheStatus) {
  EXPECT_DEATH(
      {
        Result<int> r(Status::NotFound("no such thing"));
        (void)r.value();
      },
      "Result::value\\(\\) on an error: not found: no such thing");
  EXPECT_DEATH(
      {
        Result<std::string> r(Status::Parse("1:2: bad"));
        std::string s = std::move(r).value();
      },
      "parse error: 1:2: bad");
}

TEST(ApiContractDeathTest, ValueOfAnOkResultIsTheValue) {
  Result<int> r(42);
  EXPECT_EQ(r.value(), 42);
  EXPECT_EQ(*r, 42);
}

#ifndef NDEBUG
// Debug builds check a Db's lifetime against its Store's (include/mentat/store.h).
TEST(ApiContractDeathTest, ADbUsedAfterItsStoreIsDestroyedAborts) {
  EXPECT_DEATH(
      {
        auto store = Store::open("");
        Db db = (*store)->db();
        store->reset();
        (void)db.q("[:find ?e :where [?e :db/ident]]");
      },
      "Db::q on a database value whose Store was destroyed");
  EXPECT_DEATH(
      {
        auto store = Store::open("");
        auto p = (*store)->q_prepare("[:find ?e :where [?e :db/ident]]");
        store->reset();
        (void)p->run();
      },
      "PreparedQuery::run on a database value whose Store was destroyed");
}
#endif

TEST(ApiContract, ADbOfALiveStoreWorks) {
  auto store = Store::open("");
  ASSERT_TRUE(store.ok());
  Db db = (*store)->db();
  auto r = db.q("[:find ?e . :where [?e :db/ident :db/ident]]");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->rows.size(), 1u);
}

}  // namespace
}  // namespace mentat
