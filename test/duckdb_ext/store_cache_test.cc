// The extension's cache of open stores.
#include "store_cache.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <thread>
#include <vector>

namespace mentat::duckdb_ext {
namespace {

class StoreCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/mentat-cache-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string dir_;
};

TEST_F(StoreCacheTest, SamePathSameStore) {
  StoreCache cache(4);
  auto a = cache.Get(dir_ + "/a.db", StoreCache::Mode::kCreate);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  auto again = cache.Get(dir_ + "/./a.db", StoreCache::Mode::kMustExist);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(a->get(), again->get());
  EXPECT_EQ(cache.size(), 1u);
}

TEST_F(StoreCacheTest, MissingStoreIsNotFoundUnlessCreating) {
  StoreCache cache(4);
  auto missing = cache.Get(dir_ + "/none.db", StoreCache::Mode::kMustExist);
  EXPECT_EQ(missing.status().code(), Code::kNotFound);
  EXPECT_NE(missing.status().message().find("none.db"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/none.db"));
}

TEST_F(StoreCacheTest, EvictsLeastRecentlyUsedButKeepsStoresInUse) {
  StoreCache cache(2);
  auto a = cache.Get(dir_ + "/a.db", StoreCache::Mode::kCreate);
  auto b = cache.Get(dir_ + "/b.db", StoreCache::Mode::kCreate);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(cache.Get(dir_ + "/a.db", StoreCache::Mode::kCreate).ok());  // a is now newest
  auto c = cache.Get(dir_ + "/c.db", StoreCache::Mode::kCreate);           // evicts b
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(cache.size(), 2u);
  // The evicted store still works for its holder.
  EXPECT_TRUE((*b)->last_tx().ok());
  auto b2 = cache.Get(dir_ + "/b.db", StoreCache::Mode::kMustExist);
  ASSERT_TRUE(b2.ok());
  EXPECT_NE(b2->get(), b->get());  // reopened
  auto a2 = cache.Get(dir_ + "/a.db", StoreCache::Mode::kMustExist);
  EXPECT_NE(a2->get(), a->get());  // a was evicted by b's reopening
}

TEST_F(StoreCacheTest, InMemoryStoreIsSharedAndPinned) {
  StoreCache cache(1);
  auto m1 = cache.Get("", StoreCache::Mode::kMustExist);
  ASSERT_TRUE(m1.ok()) << m1.status().ToString();
  ASSERT_TRUE(cache.Get(dir_ + "/x.db", StoreCache::Mode::kCreate).ok());
  ASSERT_TRUE(cache.Get(dir_ + "/y.db", StoreCache::Mode::kCreate).ok());
  auto m2 = cache.Get(":memory:", StoreCache::Mode::kMustExist);
  ASSERT_TRUE(m2.ok());
  EXPECT_EQ(m1->get(), m2->get());
}

TEST_F(StoreCacheTest, ConcurrentGetsOpenOnce) {
  StoreCache cache(4);
  std::vector<Store*> seen(8, nullptr);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      auto s = cache.Get(dir_ + "/shared.db", StoreCache::Mode::kCreate);
      if (s.ok()) seen[i] = s->get();
    });
  }
  for (auto& t : threads) t.join();
  for (Store* s : seen) EXPECT_EQ(s, seen[0]);
  EXPECT_NE(seen[0], nullptr);
}

TEST(StoreCacheEnvTest, CapacityFromEnvironment) {
  setenv("MENTAT_STORE_CACHE", "3", 1);
  EXPECT_EQ(StoreCacheCapacityFromEnv(), 3u);
  setenv("MENTAT_STORE_CACHE", "zero", 1);
  EXPECT_EQ(StoreCacheCapacityFromEnv(), 16u);
  setenv("MENTAT_STORE_CACHE", "0", 1);
  EXPECT_EQ(StoreCacheCapacityFromEnv(), 16u);
  unsetenv("MENTAT_STORE_CACHE");
  EXPECT_EQ(StoreCacheCapacityFromEnv(), 16u);
}

}  // namespace
}  // namespace mentat::duckdb_ext
