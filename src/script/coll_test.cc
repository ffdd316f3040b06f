// Persistent collections against simple models, under random operations; equality,
// ordering and hashing laws; iterative freeing.
#include "script/coll.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "script/print.h"

namespace mentat::script {
namespace {

class CollTest : public ::testing::Test {
 protected:
  CollTest() : scope_(&heap_) {}
  Heap heap_;
  HeapScope scope_;
};

TEST_F(CollTest, VectorMatchesModel) {
  std::mt19937 rng(7);
  Val v = Val::EmptyVector();
  std::vector<int64_t> model;
  std::vector<std::pair<Val, std::vector<int64_t>>> snapshots;
  for (int step = 0; step < 20000; ++step) {
    int op = static_cast<int>(rng() % 10);
    if (op < 6 || model.empty()) {
      int64_t x = static_cast<int64_t>(rng() % 1000);
      v = VecConj(v, Val::Int(x));
      model.push_back(x);
    } else if (op < 8) {
      size_t i = rng() % model.size();
      int64_t x = -static_cast<int64_t>(rng() % 1000);
      v = VecAssoc(v, i, Val::Int(x));
      model[i] = x;
    } else {
      v = VecPop(v);
      model.pop_back();
    }
    if (step % 997 == 0) snapshots.emplace_back(v, model);
  }
  // Older versions are untouched by later updates.
  snapshots.emplace_back(v, model);
  for (const auto& [snap, m] : snapshots) {
    ASSERT_EQ(VecCount(snap), m.size());
    for (size_t i = 0; i < m.size(); ++i) ASSERT_EQ(VecNth(snap, i).as_int(), m[i]) << i;
    ValVec all = ToVector(snap);
    ASSERT_EQ(all.size(), m.size());
  }
}

TEST_F(CollTest, VectorBuilderShapes) {
  for (size_t n : {0, 1, 31, 32, 33, 64, 65, 1024, 1056, 1057, 33000}) {
    VecBuilder b;
    for (size_t i = 0; i < n; ++i) b.Add(Val::Int(static_cast<int64_t>(i)));
    Val v = b.Build();
    ASSERT_EQ(VecCount(v), n);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(VecNth(v, i).as_int(), static_cast<int64_t>(i));
    // A built vector keeps growing and shrinking correctly.
    Val w = VecConj(v, Val::Int(-1));
    ASSERT_EQ(VecNth(w, n).as_int(), -1);
    if (n > 0) {
      Val p = VecPop(v);
      ASSERT_EQ(VecCount(p), n - 1);
      if (n > 1) {
        ASSERT_EQ(VecNth(p, n - 2).as_int(), static_cast<int64_t>(n - 2));
      }
    }
  }
}

TEST_F(CollTest, MapMatchesModel) {
  std::mt19937 rng(11);
  Val m = Val::EmptyMap();
  std::map<int64_t, int64_t> model;
  for (int step = 0; step < 20000; ++step) {
    int64_t k = static_cast<int64_t>(rng() % 500);
    if (rng() % 3 == 0) {
      m = MapDissoc(m, Val::Int(k));
      model.erase(k);
    } else {
      m = MapAssoc(m, Val::Int(k), Val::Int(step));
      model[k] = step;
    }
  }
  ASSERT_EQ(TreeSize(m.as<TNode>()), model.size());
  auto it = model.begin();
  ForEachEntry(m, [&](const Val& k, const Val& v) {
    EXPECT_EQ(k.as_int(), it->first);
    EXPECT_EQ(v.as_int(), it->second);
    ++it;
    return true;
  });
  for (size_t i = 0; i < model.size(); ++i) {
    EXPECT_EQ(TreeNth(m.as<TNode>(), i)->key.as_int(), std::next(model.begin(), i)->first);
  }
}

TEST_F(CollTest, EqualityOrderAndHash) {
  Val list = ListOf({Val::Int(1), Val::Int(2)});
  Val vec = VecFrom({Val::Int(1), Val::Int(2)});
  EXPECT_TRUE(Equal(list, vec));
  EXPECT_EQ(Compare(list, vec), 0);
  EXPECT_EQ(Hash(list), Hash(vec));
  EXPECT_TRUE(Equal(Seq(vec), list));
  EXPECT_FALSE(Equal(Val::Int(1), Val::Float(1.0)));
  EXPECT_LT(Compare(Val::Int(1), Val::Float(1.0)), 0);
  // The same keys inserted in different orders give equal maps with equal hashes.
  MapBuilder a, b;
  for (int i = 0; i < 100; ++i) a.Add(Val::Int(i), Val::Int(i * 2));
  for (int i = 99; i >= 0; --i) b.Add(Val::Int(i), Val::Int(i * 2));
  EXPECT_TRUE(Equal(a.Build(), b.Build()));
  EXPECT_EQ(Hash(a.Build()), Hash(b.Build()));
  EXPECT_EQ(PrStr(MapAssoc(Val::EmptyMap(), list, Val::Int(1))), "{(1 2) 1}");
  // A map keyed by a list finds it by an equal vector.
  EXPECT_NE(MapFind(MapAssoc(Val::EmptyMap(), list, Val::Int(1)), vec), nullptr);
}

TEST_F(CollTest, AccountingReturnsToZero) {
  int64_t before = heap_.live();
  {
    Val v = VecFrom(ValVec(1000, Val::String("a string longer than sso buffers")));
    Val m;
    for (int i = 0; i < 100; ++i) m = MapAssoc(m.is_nil() ? Val::EmptyMap() : m, Val::Int(i), v);
    EXPECT_GT(heap_.live(), before);
  }
  EXPECT_EQ(heap_.live(), before);
}

TEST_F(CollTest, LongListsFreeIteratively) {
  Val l = Val::EmptyList();
  for (int i = 0; i < 300000; ++i) l = Cons(Val::Int(i), std::move(l));
  EXPECT_EQ(Count(l), 300000u);
  l = Val();  // must not overflow the stack
  SUCCEED();
}

}  // namespace
}  // namespace mentat::script
