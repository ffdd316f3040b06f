// Value indexes: AutoIndex modes, Store::tune_indexes, MENTAT_AUTO_INDEX.
#include "store/index_advisor.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "query/ast.h"
#include "store/store_test_util.h"

namespace mentat {
namespace {

using testing::TempDir;

// 40 people: :p/age is not indexed (40 distinct values), :p/team has 2 values.
std::unique_ptr<Store> PeopleStore(const std::string& path, const Options& o = {}) {
  auto s = Store::open(path, o);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  if (!s.ok()) return nullptr;
  EXPECT_TRUE((*s)->transact(R"([
    {:db/ident :p/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one
     :db/unique :db.unique/identity}
    {:db/ident :p/age :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
    {:db/ident :p/team :db/valueType :db.type/keyword :db/cardinality :db.cardinality/one}])")
                  .ok());
  std::string tx = "[";
  for (int i = 0; i < 40; ++i)
    tx += "{:p/name \"n" + std::to_string(i) + "\" :p/age " + std::to_string(20 + i) + " :p/team " +
          (i % 2 ? ":team/a" : ":team/b") + "}";
  EXPECT_TRUE((*s)->transact(tx + "]").ok());
  return std::move(*s);
}

const char* kByAge = "[:find ?n . :in $ ?a :where [?e :p/age ?a] [?e :p/name ?n]]";

std::string NameOfAge(Store* s, int age) {
  auto r = s->q(kByAge, {edn::Value::Int(age)});
  return r.ok() ? edn::Print(r->ToEdn()) : r.status().ToString();
}

bool AgeIndexed(Store* s) { return s->schema()->attribute("p/age")->value_indexed(); }

std::string Explain(Store* s) {
  QueryOptions o;
  o.inputs = {edn::Value::Int(30)};
  auto e = s->q_explain(kByAge, o);
  return e.ok() ? *e : e.status().ToString();
}

TEST(ValueFilteredAttributes, ConstantsAndInputsButNotJoins) {
  auto s = Store::open("");
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->transact(R"([
    {:db/ident :p/age :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
    {:db/ident :p/team :db/valueType :db.type/keyword :db/cardinality :db.cardinality/one}
    {:db/ident :p/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one}])")
                  .ok());
  auto schema = (*s)->schema();
  auto attrs = [&](const char* q) {
    auto form = edn::Read(q);
    EXPECT_TRUE(form.ok()) << form.status().ToString();
    if (!form.ok()) return std::vector<std::string>{"parse error"};
    auto p = query::ParseQuery(*form);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    std::vector<std::string> out;
    if (p.ok())
      for (Entid a : ValueFilteredAttributes(*p, *schema)) out.push_back(*schema->ident(a));
    return out;
  };
  EXPECT_EQ(attrs("[:find ?e :where [?e :p/age 3]]"), std::vector<std::string>{"p/age"});
  EXPECT_EQ(attrs("[:find ?e :in $ [?t ...] :where [?e :p/team ?t] [?e :p/name ?n]]"),
            std::vector<std::string>{"p/team"});
  EXPECT_EQ(attrs("[:find ?e :where [?e :p/age ?a] (not [?e :p/team :team/a])]"),
            std::vector<std::string>{"p/team"});
  EXPECT_TRUE(attrs("[:find ?e ?a :where [?e :p/age ?a] [?f :p/name ?a]]").empty());
}

TEST(AutoIndex, AdaptiveCreatesAnIndexForAFrequentValueFilterAndThePlannerUsesIt) {
  TempDir dir;
  auto s = PeopleStore(dir.Path("a.db"));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->auto_index(), AutoIndex::kSchema);
  s->set_auto_index(AutoIndex::kAdaptive);
  s->set_index_tuning(3, std::chrono::hours(1));
  EXPECT_NE(Explain(s.get()).find("datoms_aevt"), std::string::npos) << Explain(s.get());
  EXPECT_EQ(NameOfAge(s.get(), 21), "\"n1\"");
  EXPECT_EQ(NameOfAge(s.get(), 22), "\"n2\"");
  EXPECT_FALSE(AgeIndexed(s.get()));
  // The third value-filtered query reaches min_uses: the pass runs after it.
  EXPECT_EQ(NameOfAge(s.get(), 23), "\"n3\"");
  EXPECT_TRUE(AgeIndexed(s.get()));
  EXPECT_NE(Explain(s.get()).find("datoms_avet (a=? AND v=?)"), std::string::npos)
      << Explain(s.get());
  EXPECT_EQ(NameOfAge(s.get(), 59), "\"n39\"");
  // Another store on the file sees the index through the schema generation.
  auto other = Store::open(dir.Path("a.db"));
  ASSERT_TRUE(other.ok());
  EXPECT_TRUE(AgeIndexed(other->get()));
  EXPECT_EQ(NameOfAge(other->get(), 40), "\"n20\"");
  // Writes after the move go to the value index too, and read back.
  ASSERT_TRUE(s->transact(R"([{:p/name "late" :p/age 99}])").ok());
  EXPECT_EQ(NameOfAge(other->get(), 99), "\"late\"");
}

TEST(AutoIndex, DryRunPlansWithoutApplyingAndSchemaModeDropsAdaptiveIndexes) {
  TempDir dir;
  auto s = PeopleStore(dir.Path("b.db"));
  ASSERT_TRUE(s);
  s->set_auto_index(AutoIndex::kAdaptive);
  s->set_index_tuning(1000, std::chrono::hours(1));
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(NameOfAge(s.get(), 20 + i), "\"n" + std::to_string(i) + "\"");
  s->set_index_tuning(5, std::chrono::hours(1));
  auto plan = s->tune_indexes(true);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_EQ(plan->size(), 1u);
  EXPECT_EQ((*plan)[0].ToString(), "create value index on :p/age (5 value-filtered queries)");
  EXPECT_FALSE(AgeIndexed(s.get()));
  auto done = s->tune_indexes();
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ(*done, *plan);
  EXPECT_TRUE(AgeIndexed(s.get()));
  // Nothing more to do in the new period.
  auto again = s->tune_indexes();
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->empty());
  s->set_auto_index(AutoIndex::kSchema);
  auto dropped = s->tune_indexes();
  ASSERT_TRUE(dropped.ok()) << dropped.status().ToString();
  ASSERT_EQ(dropped->size(), 1u);
  EXPECT_EQ((*dropped)[0].ToString(), "drop value index on :p/age (mode schema)");
  EXPECT_FALSE(AgeIndexed(s.get()));
  EXPECT_EQ(NameOfAge(s.get(), 30), "\"n10\"");
  EXPECT_NE(Explain(s.get()).find("datoms_aevt"), std::string::npos) << Explain(s.get());
}

TEST(AutoIndex, IdleIndexesAreDroppedAndUnselectiveOnesNeverBuilt) {
  TempDir dir;
  auto s = PeopleStore(dir.Path("c.db"));
  ASSERT_TRUE(s);
  // 2,000 more people in two teams: :p/team is not selective enough to index.
  std::string tx = "[";
  for (int i = 0; i < 2000; ++i)
    tx +=
        "{:p/name \"m" + std::to_string(i) + "\" :p/team " + (i % 2 ? ":team/a" : ":team/b") + "}";
  ASSERT_TRUE(s->transact(tx + "]").ok());
  s->set_auto_index(AutoIndex::kAdaptive);
  s->set_index_tuning(2, std::chrono::seconds(0));
  const char* by_team = "[:find (count ?e) . :where [?e :p/team :team/a]]";
  for (int i = 0; i < 3; ++i) {
    auto r = s->q(by_team);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(edn::Print(r->ToEdn()), "1020");
  }
  EXPECT_FALSE(s->schema()->attribute("p/team")->value_indexed());
  EXPECT_EQ(NameOfAge(s.get(), 25), "\"n5\"");
  EXPECT_EQ(NameOfAge(s.get(), 26), "\"n6\"");
  EXPECT_TRUE(AgeIndexed(s.get()));
  // A period without a use, with idle 0: dropped.
  auto r = s->tune_indexes();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].ToString(), "drop value index on :p/age (idle)");
  EXPECT_FALSE(AgeIndexed(s.get()));
  EXPECT_EQ(NameOfAge(s.get(), 27), "\"n7\"");
}

TEST(AutoIndex, OffDoesNothingAndReadOnlyStoresRefuseToApply) {
  TempDir dir;
  std::string path = dir.Path("d.db");
  {
    Options o;
    o.auto_index = AutoIndex::kOff;
    auto s = PeopleStore(path, o);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->auto_index(), AutoIndex::kOff);
    for (int i = 0; i < 40; ++i) NameOfAge(s.get(), 20 + i);
    auto r = s->tune_indexes();
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(r->empty());
    EXPECT_FALSE(AgeIndexed(s.get()));
  }
  Options ro;
  ro.read_only = true;
  auto s = Store::open(path, ro);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  auto r = (*s)->tune_indexes();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kUnsupported);
  EXPECT_TRUE((*s)->tune_indexes(true).ok());
}

TEST(AutoIndex, ModeFromTheEnvironment) {
  setenv("MENTAT_AUTO_INDEX", "adaptive", 1);
  auto a = Store::open("");
  setenv("MENTAT_AUTO_INDEX", "sometimes", 1);
  auto bad = Store::open("");
  Options explicit_mode;
  explicit_mode.auto_index = AutoIndex::kOff;
  auto given = Store::open("", explicit_mode);
  unsetenv("MENTAT_AUTO_INDEX");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ((*a)->auto_index(), AutoIndex::kAdaptive);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Code::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("MENTAT_AUTO_INDEX is 'sometimes'"), std::string::npos)
      << bad.status().ToString();
  ASSERT_TRUE(given.ok());
  EXPECT_EQ((*given)->auto_index(), AutoIndex::kOff);
}

}  // namespace
}  // namespace mentat
