#include "export.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <set>
#include <sstream>

#include "import.h"

namespace mentat::cli {
namespace {

using edn::Value;

constexpr const char* kSchema = R"([
  {:db/ident :a/id :db/valueType :db.type/string :db/cardinality :db.cardinality/one
   :db/unique :db.unique/identity}
  {:db/ident :a/mail :db/valueType :db.type/string :db/cardinality :db.cardinality/one
   :db/unique :db.unique/value}
  {:db/ident :a/best :db/valueType :db.type/ref :db/cardinality :db.cardinality/one}
  {:db/ident :a/owns :db/valueType :db.type/ref :db/cardinality :db.cardinality/many}
  {:db/ident :n/label :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
  {:db/ident :n/next :db/valueType :db.type/ref :db/cardinality :db.cardinality/one}
  {:db/ident :n/links :db/valueType :db.type/ref :db/cardinality :db.cardinality/many}
  {:db/ident :n/part :db/valueType :db.type/ref :db/cardinality :db.cardinality/one
   :db/isComponent true}
  {:db/ident :n/kind :db/valueType :db.type/ref :db/cardinality :db.cardinality/one}
  {:db/ident :n/tags :db/valueType :db.type/keyword :db/cardinality :db.cardinality/many}
  {:db/ident :n/when :db/valueType :db.type/instant :db/cardinality :db.cardinality/one}
  {:db/ident :n/w :db/valueType :db.type/double :db/cardinality :db.cardinality/one}
  {:db/ident :n/blob :db/valueType :db.type/bytes :db/cardinality :db.cardinality/one}
  {:db/ident :n/uuid :db/valueType :db.type/uuid :db/cardinality :db.cardinality/one}
  {:db/ident :meta/note :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
  {:db/ident :kind/x} {:db/ident :kind/y}])";

// A store with: nodes without unique attributes in rings (cycles through tempids),
// accounts with unique attributes pointing at each other across transactions and at
// nodes, enum refs, a component, every value type, a note on an attribute, and
// retractions in history.
std::unique_ptr<Store> MakeStore(int rings) {
  auto store = Store::open("").value();
  EXPECT_TRUE(store->transact(kSchema).ok());
  EXPECT_TRUE(store->transact("[{:db/id :n/label :meta/note \"labels are free text\"}]").ok());
  for (int r = 0; r < rings; ++r) {
    std::string tx = "[";
    for (int i = 0; i < 4; ++i) {
      std::string id = "\"r" + std::to_string(i) + "\"";
      std::string next = "\"r" + std::to_string((i + 1) % 4) + "\"";
      tx += "{:db/id " + id + " :n/label \"ring " + std::to_string(r) + " node " +
            std::to_string(i) + (i == 1 ? "\\n\\\"quoted\\\"" : "") + "\" :n/next " + next +
            " :n/kind " + (i % 2 ? ":kind/x" : ":kind/y") + " :n/tags [:t/a :b]" +
            " :n/when #inst \"2024-0" + std::to_string(1 + r % 9) + "-01T00:00:00.5Z\"" + " :n/w " +
            std::to_string(r) + ".25 :n/blob #bytes \"0a0b\"" + " :n/part {:n/label \"part\"}}\n";
    }
    tx += "{:db/id \"acct\" :a/id \"acct" + std::to_string(r) + "\" :a/owns [\"r0\" \"r2\"]" +
          (r % 2 ? " :a/mail \"m" + std::to_string(r) + "@x\"" : "") +
          (r > 0 ? " :a/best [:a/id \"acct" + std::to_string(r - 1) + "\"]" : "") + "}\n";
    tx += "[:db/add \"r3\" :n/links \"acct\"]";
    if (r > 0) tx += "[:db/add \"r1\" :n/links [:a/id \"acct" + std::to_string(r - 1) + "\"]]";
    tx += "]";
    auto rep = store->transact(tx);
    EXPECT_TRUE(rep.ok()) << rep.status().ToString();
    if (rep.ok() && r % 3 == 2) {
      std::string acct = "[:a/id \"acct" + std::to_string(r) + "\"]";
      EXPECT_TRUE(store
                      ->transact("[[:db/retract " + acct + " :a/owns " +
                                 std::to_string(rep->tempids["r0"]) + "]]")
                      .ok());
      EXPECT_TRUE(store->transact("[{:db/id " + acct + " :a/best [:a/id \"acct0\"]}]").ok());
    }
  }
  // An account pointing forward (at a later-created account): a cycle between
  // transactions that the exporter must merge.
  EXPECT_TRUE(store->transact("[{:a/id \"acct0\" :a/best [:a/id \"acct1\"]}]").ok());
  return store;
}

// The current datoms of `store`, entity ids mapped through `map` (identity when empty),
// attributes as idents; transaction entities and the bootstrap left out.
std::set<std::tuple<Entid, std::string, std::string>> Datoms(Store& store,
                                                             const std::map<Entid, Entid>* map) {
  auto schema = store.schema();
  auto m = [&](Entid e) {
    if (!map) return e;
    auto it = map->find(e);
    EXPECT_NE(it, map->end()) << "entity " << e << " was not exported";
    return it == map->end() ? Entid(-1) : it->second;
  };
  std::set<std::tuple<Entid, std::string, std::string>> out;
  auto datoms = store.datoms(":eavt");
  for (const auto& d : *datoms) {
    if (d.e >= ids::kTxStart || d.tx == ids::kBootstrapTx) continue;
    const Attribute* a = schema->attribute(d.a);
    Value v = d.v;
    if (a->type == ValueType::kRef) v = Value::Int(m(v.as_int()));
    out.emplace(m(d.e), a->ident, edn::Print(v));
  }
  return out;
}

// Exports `a`, imports into a fresh store, and checks the two hold equal datoms modulo
// renumbering (through the "e<id>" tempids and the idents).
void RoundTrip(Store& a, const ExportOptions& options, ExportStats* es) {
  std::ostringstream dump;
  ASSERT_TRUE(Export(a, dump, options, es).ok());
  auto b = Store::open("").value();
  ImportOptions io;
  io.collect_tempids = true;
  ImportStats is;
  Status st = ImportText(*b, dump.str(), "dump", io, &is);
  ASSERT_TRUE(st.ok()) << st.ToString() << "\n" << dump.str();
  EXPECT_EQ(is.transactions, es->transactions);
  EXPECT_EQ(is.datoms, es->datoms);
  std::map<Entid, Entid> map;
  std::set<Entid> targets;
  for (const auto& [tempid, e] : is.tempids) {
    ASSERT_EQ(tempid[0], 'e');
    map[std::stoll(tempid.substr(1))] = e;
    EXPECT_TRUE(targets.insert(e).second) << "two entities imported as " << e;
  }
  auto sa = a.schema(), sb = b->schema();
  for (const auto& [e, ident] : sa->idents()) {
    auto other = sb->entid(ident);
    ASSERT_TRUE(other.has_value()) << ident;
    map[e] = *other;
  }
  auto want = Datoms(a, &map), got = Datoms(*b, nullptr);
  EXPECT_EQ(want.size(), got.size());
  EXPECT_TRUE(want == got);
}

TEST(Export, RoundTripIsEqualModuloRenumbering) {
  auto a = MakeStore(12);
  ExportStats es;
  RoundTrip(*a, {}, &es);
  EXPECT_EQ(es.transactions, 2u);  // the schema, then everything in one transaction
  EXPECT_GT(es.entities, 12u * 9);
}

TEST(Export, SmallTransactionsLinkedByLookupRefs) {
  auto a = MakeStore(12);
  ExportOptions options;
  options.batch_datoms = 40;
  ExportStats es;
  RoundTrip(*a, options, &es);
  EXPECT_GT(es.transactions, 5u);
}

TEST(Export, IsDeterministicAndStartsWithTheSchema) {
  auto a = MakeStore(3);
  std::ostringstream d1, d2;
  ExportStats es;
  ASSERT_TRUE(Export(*a, d1, {}, &es).ok());
  ASSERT_TRUE(Export(*a, d2, {}, &es).ok());
  EXPECT_EQ(d1.str(), d2.str());
  std::string text = d1.str();
  size_t schema = text.find(";; schema\n[{");
  size_t entities = text.find(";; entities\n[");
  ASSERT_NE(schema, std::string::npos);
  ASSERT_NE(entities, std::string::npos);
  EXPECT_LT(schema, entities);
  // The note on :n/label is data about an attribute: in the entity section, by ident.
  EXPECT_NE(text.find("{:db/id :n/label, :meta/note \"labels are free text\"}"), std::string::npos)
      << text;
  // Many-valued refs are list forms (a vector of refs could read as a lookup ref).
  EXPECT_NE(text.find("[:db/add \"e"), std::string::npos);
  EXPECT_EQ(text.find(":db/txInstant"), std::string::npos);
}

TEST(Export, EmptyStoreExportsNothing) {
  auto a = Store::open("").value();
  std::ostringstream dump;
  ExportStats es;
  ASSERT_TRUE(Export(*a, dump, {}, &es).ok());
  EXPECT_EQ(es.transactions, 0u);
  EXPECT_EQ(es.datoms, 0u);
  auto b = Store::open("").value();
  ImportStats is;
  EXPECT_TRUE(ImportText(*b, dump.str(), "empty", {}, &is).ok());
  EXPECT_EQ(is.transactions, 0u);
}

TEST(Export, SinceAppliesToACopyOfTheEarlierStore) {
  auto a = MakeStore(4);
  Entid mid = *a->last_tx();
  // A copy of `a` as of `mid`.
  std::ostringstream full;
  ExportStats es;
  ASSERT_TRUE(Export(*a, full, {}, &es).ok());
  auto b = Store::open("").value();
  ImportStats is;
  ASSERT_TRUE(ImportText(*b, full.str(), "full", {}, &is).ok());
  // New entities, an update through a unique attribute, refs to old accounts.
  ASSERT_TRUE(a->transact("[{:a/id \"acct1\" :a/mail \"new@x\" :a/best [:a/id \"acct3\"]}"
                          " {:db/id \"n\" :n/label \"late\" :n/next \"n\"}"
                          " {:a/id \"acct9\" :a/owns [\"n\"] :a/best [:a/id \"acct0\"]}]")
                  .ok());
  std::ostringstream since;
  ExportOptions options;
  options.since = TxPoint::Tx(mid);
  ASSERT_TRUE(Export(*a, since, options, &es).ok());
  EXPECT_EQ(es.transactions, 1u) << since.str();
  EXPECT_NE(
      since.str().find("{:a/best [:a/id \"acct3\"], :a/mail \"new@x\", :db/id [:a/id \"acct1\"]}"),
      std::string::npos)
      << since.str();
  ASSERT_TRUE(ImportText(*b, since.str(), "since", {}, &is).ok()) << since.str();
  // Equal, matched by label / account id (entities here have one or the other).
  auto key = [](Store& s) {
    auto schema = s.schema();
    std::map<Entid, std::string> name;
    auto datoms = s.datoms(":eavt");
    for (const auto& d : *datoms) {
      const std::string* a = schema->ident(d.a);
      if (*a == "a/id" || *a == "n/label") name[d.e] += edn::Print(d.v);
      if (*a == "db/ident") name[d.e] = edn::Print(d.v);
    }
    return name;
  };
  auto na = key(*a), nb = key(*b);
  std::map<std::string, Entid> by_name;
  std::map<Entid, Entid> map;
  for (const auto& [e, n] : nb) by_name[n] = e;
  for (const auto& [e, n] : na) {
    if (by_name.count(n)) map[e] = by_name[n];
  }
  // Parts share the label "part": map them by their owner.
  auto parts = a->datoms(":aevt", {Value::Keyword("n/part")});
  for (const auto& d : *parts) {
    auto owner = map.find(d.e);
    ASSERT_NE(owner, map.end());
    auto part = b->datoms(":eavt", {Value::Int(owner->second), Value::Keyword("n/part")});
    ASSERT_EQ(part->size(), 1u);
    map[d.v.as_int()] = part->at(0).v.as_int();
  }
  EXPECT_TRUE(Datoms(*a, &map) == Datoms(*b, nullptr));
}

TEST(Export, ParseTxPoint) {
  auto t = ParseTxPoint("268435460");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->tx, 268435460);
  t = ParseTxPoint("2024-01-31T10:00:00Z");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->instant_micros, *edn::ParseInstant("2024-01-31T10:00:00Z"));
  t = ParseTxPoint("#inst \"2024-01-31\"");
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->instant_micros.has_value());
  EXPECT_FALSE(ParseTxPoint("yesterday").ok());
  EXPECT_FALSE(ParseTxPoint("").ok());
}

TEST(Export, FileIsWrittenWhole) {
  auto a = MakeStore(2);
  std::string path =
      ::testing::TempDir() + "/mentat-export-test-" + std::to_string(getpid()) + ".edn";
  ExportStats es;
  ASSERT_TRUE(ExportFile(*a, path, {}, &es).ok());
  EXPECT_GT(FileSize(path), 100u);
  EXPECT_EQ(ExportFile(*a, "/nonexistent-dir/x.edn", {}, &es).code(), Code::kIo);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace mentat::cli
