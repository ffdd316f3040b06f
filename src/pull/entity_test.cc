// The Entity API (include/mentat/entity.h) and the index access of Db: seek_datoms and
// index_range on current, as-of, since and history databases.
#include "mentat/entity.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mentat/store.h"

namespace mentat {
namespace {

using edn::Value;

const char* kSchema = R"([
  {:db/ident :user/email :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
  {:db/ident :user/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
  {:db/ident :user/age :db/valueType :db.type/long :db/cardinality :db.cardinality/one :db/index true}
  {:db/ident :user/nick :db/valueType :db.type/string :db/cardinality :db.cardinality/many}
  {:db/ident :user/status :db/valueType :db.type/ref :db/cardinality :db.cardinality/one}
  {:db/ident :user/friend :db/valueType :db.type/ref :db/cardinality :db.cardinality/many}
  {:db/ident :user/address :db/valueType :db.type/ref :db/cardinality :db.cardinality/one :db/isComponent true}
  {:db/ident :address/city :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
  {:db/ident :status/active}])";

Value V(const std::string& text) {
  auto v = edn::Read(text);
  EXPECT_TRUE(v.ok()) << text;
  return v.ok() ? *v : Value();
}

class EntityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = Store::open("");
    ASSERT_TRUE(s.ok());
    store_ = std::move(*s);
    ASSERT_TRUE(store_->transact(kSchema).ok());
    auto r = store_->transact(R"([
      {:db/id "ann" :user/email "ann@x" :user/name "Ann" :user/age 30 :user/nick ["a" "annie"]
       :user/status :status/active :user/friend ["bob"] :user/address {:address/city "Oslo"}}
      {:db/id "bob" :user/email "bob@x" :user/name "Bob" :user/age 40 :user/friend ["ann"]}
      {:db/id "cat" :user/email "cat@x" :user/age 35}])");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ann_ = r->tempids.at("ann");
    bob_ = r->tempids.at("bob");
    cat_ = r->tempids.at("cat");
    t1_ = r->tx_id;
  }
  std::unique_ptr<Store> store_;
  Entid ann_ = 0, bob_ = 0, cat_ = 0, t1_ = 0;
};

TEST_F(EntityTest, GetReadsValuesRefsAndReverse) {
  auto e = store_->entity(V("[:user/email \"ann@x\"]"));
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->id(), ann_);
  EXPECT_EQ(*e->get(":user/name"), Value::String("Ann"));
  EXPECT_EQ(*e->get("user/age"), Value::Int(30));
  EXPECT_EQ(*e->get(":user/nick"), V("#{\"a\" \"annie\"}"));
  EXPECT_EQ(*e->get(":db/id"), Value::Int(ann_));
  // A ref to an entity with an ident reads as the ident; other refs as {:db/id N}.
  EXPECT_EQ(*e->get(":user/status"), Value::Keyword("status/active"));
  EXPECT_EQ(*e->get(":user/friend"), V("#{{:db/id " + std::to_string(bob_) + "}}"));
  EXPECT_TRUE(e->get(":address/city")->is_nil());
  // Reverse navigation.
  EXPECT_EQ(*e->get(":user/_friend"), V("#{{:db/id " + std::to_string(bob_) + "}}"));
  auto fans = e->get_entities(":user/_friend");
  ASSERT_TRUE(fans.ok());
  ASSERT_EQ(fans->size(), 1u);
  EXPECT_EQ(*(*fans)[0].get(":user/name"), Value::String("Bob"));
  auto addr = e->get_entities(":user/address");
  ASSERT_TRUE(addr.ok());
  ASSERT_EQ(addr->size(), 1u);
  EXPECT_EQ(*(*addr)[0].get(":address/city"), Value::String("Oslo"));
  // The reverse of a component is a single value.
  EXPECT_EQ(*(*addr)[0].get(":user/_address"), V("{:db/id " + std::to_string(ann_) + "}"));
  EXPECT_EQ(e->get(":user/nope").status().code(), Code::kSchema);
  EXPECT_EQ(e->get_entities(":user/name").status().code(), Code::kSchema);
}

TEST_F(EntityTest, KeysAndTouch) {
  auto e = store_->entity(Value::Int(ann_));
  ASSERT_TRUE(e.ok());
  auto keys = e->keys();
  ASSERT_TRUE(keys.ok());
  EXPECT_EQ(Value::Vector(*keys),
            V("[:user/address :user/age :user/email :user/friend :user/name :user/nick "
              ":user/status]"));
  auto t = e->touch();
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const Value* addr = t->get_keyword("user/address");
  ASSERT_TRUE(addr);
  EXPECT_EQ(*addr->get_keyword("address/city"), Value::String("Oslo"));
  EXPECT_EQ(*t->get_keyword("user/friend"), V("#{{:db/id " + std::to_string(bob_) + "}}"));
  EXPECT_EQ(*t->get_keyword("db/id"), Value::Int(ann_));
  EXPECT_EQ(t->size(), 8u);
}

TEST_F(EntityTest, EntitiesKeepTheirDatabaseValue) {
  Db before = store_->db();
  auto e = before.entity(Value::Int(ann_));
  ASSERT_TRUE(e.ok());
  ASSERT_TRUE(
      store_->transact("[[:db/add " + std::to_string(ann_) + " :user/name \"Anna\"]]").ok());
  EXPECT_EQ(*e->get(":user/name"), Value::String("Ann"));
  auto now = store_->entity(Value::Int(ann_));
  EXPECT_EQ(*now->get(":user/name"), Value::String("Anna"));
  auto old = store_->db().as_of(TxPoint::Tx(t1_)).entity(Value::Int(ann_));
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(*old->get(":user/name"), Value::String("Ann"));
  EXPECT_EQ(store_->entity(V("[:user/email \"nobody\"]")).status().code(), Code::kNotFound);
  EXPECT_EQ(store_->db().history().entity(Value::Int(ann_)).status().code(), Code::kUnsupported);
  // An id with no datoms is an empty entity.
  auto empty = store_->entity(Value::Int(123456789));
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->keys()->empty());
  EXPECT_EQ(*empty->touch(), V("{:db/id 123456789}"));
}

std::vector<Entid> Es(const std::vector<Datom>& ds) {
  std::vector<Entid> out;
  for (const auto& d : ds) out.push_back(d.e);
  return out;
}

TEST_F(EntityTest, IndexRange) {
  Entid age = *store_->schema()->entid("user/age");
  auto all = store_->index_range(V(":user/age"), Value(), Value());
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(Es(*all), (std::vector<Entid>{ann_, cat_, bob_}));
  EXPECT_EQ((*all)[0].a, age);
  EXPECT_EQ((*all)[0].v, Value::Int(30));
  auto mid = store_->index_range(V(":user/age"), Value::Int(31), Value::Int(40));
  ASSERT_TRUE(mid.ok());
  EXPECT_EQ(Es(*mid), (std::vector<Entid>{cat_}));
  auto from = store_->index_range(Value::Int(age), Value::Int(35), Value());
  EXPECT_EQ(Es(*from), (std::vector<Entid>{cat_, bob_}));
  auto to = store_->index_range(V(":user/age"), Value(), Value::Int(35), 5);
  EXPECT_EQ(Es(*to), (std::vector<Entid>{ann_}));
  auto limited = store_->index_range(V(":user/age"), Value(), Value(), 2);
  EXPECT_EQ(Es(*limited), (std::vector<Entid>{ann_, cat_}));
  EXPECT_FALSE(store_->index_range(V(":user/age"), Value::String("x"), Value()).ok());
  EXPECT_EQ(store_->index_range(V(":user/nope"), Value(), Value()).status().code(),
            Code::kNotFound);
  // Over time: as-of, since and history views.
  ASSERT_TRUE(store_->transact("[[:db/add " + std::to_string(cat_) + " :user/age 50]]").ok());
  Entid t2 = *store_->last_tx();
  Db db = store_->db();
  EXPECT_EQ(Es(*db.index_range(V(":user/age"), Value(), Value())),
            (std::vector<Entid>{ann_, bob_, cat_}));
  EXPECT_EQ(Es(*db.as_of(TxPoint::Tx(t1_)).index_range(V(":user/age"), Value(), Value())),
            (std::vector<Entid>{ann_, cat_, bob_}));
  EXPECT_EQ(Es(*db.since(TxPoint::Tx(t1_)).index_range(V(":user/age"), Value(), Value())),
            (std::vector<Entid>{cat_}));
  auto hist = db.history().index_range(V(":user/age"), Value::Int(35), Value::Int(36));
  ASSERT_TRUE(hist.ok());
  ASSERT_EQ(hist->size(), 2u);  // asserted at t1, retracted at t2
  EXPECT_TRUE((*hist)[0].added);
  EXPECT_EQ((*hist)[0].tx, t1_);
  EXPECT_FALSE((*hist)[1].added);
  EXPECT_EQ((*hist)[1].tx, t2);
}

TEST_F(EntityTest, SeekDatoms) {
  // EAVT from bob onwards: bob's datoms then cat's.
  auto r = store_->seek_datoms(":eavt", {Value::Int(bob_)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_FALSE(r->empty());
  EXPECT_EQ(r->front().e, bob_);
  EXPECT_EQ(r->back().e, t1_);  // the index runs on to its end: the last tx entity
  for (size_t i = 1; i < r->size(); ++i) {
    EXPECT_LE((*r)[i - 1].e, (*r)[i].e);
    if ((*r)[i - 1].e == (*r)[i].e) {
      EXPECT_LE((*r)[i - 1].a, (*r)[i].a);
    }
  }
  // A full prefix: starts at that datom, continues past the prefix.
  auto at =
      store_->seek_datoms("eavt", {Value::Int(ann_), V(":user/nick"), Value::String("annie")}, 3);
  ASSERT_TRUE(at.ok()) << at.status().ToString();
  ASSERT_EQ(at->size(), 3u);
  EXPECT_EQ((*at)[0].v, Value::String("annie"));
  EXPECT_EQ((*at)[1].a, *store_->schema()->entid("user/status"));
  // AVET seeks by value within an attribute, then runs on into the next attributes.
  auto avet = store_->seek_datoms(":avet", {V(":user/age"), Value::Int(31)}, 2);
  ASSERT_TRUE(avet.ok());
  EXPECT_EQ(Es(*avet), (std::vector<Entid>{cat_, bob_}));
  auto aevt = store_->seek_datoms(":aevt", {V(":user/age"), Value::Int(bob_)});
  ASSERT_TRUE(aevt.ok());
  EXPECT_EQ((*aevt)[0].e, bob_);
  EXPECT_EQ((*aevt)[1].e, cat_);
  // VAET: refs only, by target.
  auto vaet = store_->seek_datoms(":vaet", {Value::Int(ann_)});
  ASSERT_TRUE(vaet.ok());
  ASSERT_FALSE(vaet->empty());
  EXPECT_EQ((*vaet)[0].v, Value::Int(ann_));
  EXPECT_EQ((*vaet)[0].e, bob_);
  for (const auto& d : *vaet) EXPECT_TRUE(d.v.is_int());
  EXPECT_FALSE(store_->seek_datoms(":nope", {}).ok());
  // Over time.
  ASSERT_TRUE(store_->transact("[[:db/retract " + std::to_string(cat_) + " :user/age 35]]").ok());
  Db db = store_->db();
  auto of_cat = [&](const std::vector<Datom>& ds) {
    size_t n = 0;
    for (const auto& d : ds) n += d.e == cat_;
    return n;
  };
  auto now = db.seek_datoms(":eavt", {Value::Int(cat_)});
  ASSERT_TRUE(now.ok());
  EXPECT_EQ(of_cat(*now), 1u);  // only the email is left
  EXPECT_GT(now->size(), 1u);   // the transactions' datoms follow
  auto old = db.as_of(TxPoint::Tx(t1_)).seek_datoms(":eavt", {Value::Int(cat_)});
  EXPECT_EQ(of_cat(*old), 2u);
  EXPECT_EQ(old->back().e, t1_);  // nothing after t1
  auto since = db.since(TxPoint::Tx(t1_)).seek_datoms(":eavt", {});
  EXPECT_TRUE(since->empty() || since->front().e != cat_);
  auto hist = db.history().seek_datoms(":eavt", {Value::Int(cat_), V(":user/age")}, 2);
  ASSERT_TRUE(hist.ok());
  ASSERT_EQ(hist->size(), 2u);
  EXPECT_EQ((*hist)[0].e, cat_);
  EXPECT_EQ((*hist)[1].e, cat_);
  EXPECT_TRUE((*hist)[0].added);
  EXPECT_FALSE((*hist)[1].added);
}

}  // namespace
}  // namespace mentat
