// The store from scripts: the model tests of the Rust mentat's scripting layer (db values,
// with, history, cas, retractEntity, as-of/since, query inputs) and the bindings' errors.
// Tests that need the query engine or pull skip themselves until those land.
#include <gtest/gtest.h>

#include "mentat/script.h"
#include "mentat/store.h"

namespace mentat::script {
namespace {

const char* kSchema = R"(
(def conn (mentat.store/open))
(mentat.store/transact conn
  [{:db/ident :p/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one
    :db/unique :db.unique/identity}
   {:db/ident :p/age :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
   {:db/ident :p/tags :db/valueType :db.type/keyword :db/cardinality :db.cardinality/many}
   {:db/ident :p/friend :db/valueType :db.type/ref :db/cardinality :db.cardinality/many}
   {:db/ident :p/address :db/valueType :db.type/ref :db/cardinality :db.cardinality/one
    :db/isComponent true}
   {:db/ident :a/city :db/valueType :db.type/string :db/cardinality :db.cardinality/one}])
(def ada (get-in (mentat.store/transact conn [{:db/id "a" :p/name "Ada" :p/age 30}])
                 [:tempids "a"]))
)";

class StoreScript : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<edn::Value> r = in_.Eval(kSchema);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  std::string Ev(std::string_view src) {
    Result<std::string> r = in_.EvalToString(src);
    return r.ok() ? *r : "ERROR " + r.status().ToString();
  }
  Interpreter in_;
};

TEST_F(StoreScript, TransactReport) {
  EXPECT_EQ(Ev("(def r (mentat.store/transact conn [{:db/id \"b\" :p/name \"Bo\"}])) "
               "(sort (map name (keys r)))"),
            "(\"db-after\" \"db-before\" \"tempids\" \"tx-data\" \"tx-id\" \"tx-instant\")");
  EXPECT_EQ(Ev("(= (:tx-id r) (mentat.store/basis-t (:db-after r)))"), "true");
  EXPECT_EQ(Ev("(< (mentat.store/basis-t (:db-before r)) (:tx-id r))"), "true");
  EXPECT_EQ(Ev("(inst? (:tx-instant r))"), "true");
  EXPECT_EQ(Ev("(let [b (get (:tempids r) \"b\")] "
               "(some #(= % [b :p/name \"Bo\" (:tx-id r) true]) (:tx-data r)))"),
            "true");
  EXPECT_EQ(Ev("(let [b (get (:tempids r) \"b\")] "
               "(boolean (some (fn [d] (= d [b :p/name \"Bo\" (:tx-id r) true])) (:tx-data r))))"),
            "true");
  // The db-before does not see the transaction; the db-after does.
  EXPECT_EQ(Ev("(mentat.store/entity (:db-before r) [:p/name \"Bo\"])"), "nil");
  EXPECT_EQ(Ev("(:p/name (mentat.store/entity (:db-after r) [:p/name \"Bo\"]))"), "\"Bo\"");
  // Transaction data as EDN text works too.
  EXPECT_EQ(Ev("(count (:tx-data (mentat.store/transact conn \"[[:db/add \\\"c\\\" :p/name "
               "\\\"Cy\\\"]]\")))"),
            "2");
}

TEST_F(StoreScript, DbIsAValueNotTheConnection) {
  EXPECT_EQ(Ev("(def before (mentat.store/db conn)) "
               "(mentat.store/transact conn [{:db/id ada :p/age 31}]) "
               "[(mentat.store/read before ada :p/age) "
               " (mentat.store/read (mentat.store/db conn) ada :p/age)]"),
            "[30 31]");
  // The old value keeps its basis.
  EXPECT_EQ(Ev("(< (mentat.store/basis-t before) (mentat.store/basis-t (mentat.store/db conn)))"),
            "true");
}

TEST_F(StoreScript, DbIsAValueForQueries) {
  EXPECT_EQ(Ev("(def before (mentat.store/db conn)) "
               "(mentat.store/transact conn [{:p/name \"Zed\"}]) "
               "(def query '[:find (count ?e) . :where [?e :p/name]]) "
               "[(mentat.store/q before query) (mentat.store/q (mentat.store/db conn) query)]"),
            "[1 2]");
}

TEST_F(StoreScript, WithIsSpeculative) {
  EXPECT_EQ(Ev("(def db (mentat.store/db conn)) "
               "(def r (mentat.store/with db [{:db/id \"z\" :p/name \"Zoe\" :p/tags [:x :y]} "
               "                              [:db/add ada :p/age 99]])) "
               "(def zoe (get (:tempids r) \"z\")) "
               "[(:p/name (mentat.store/entity (:db-after r) zoe)) "
               " (mentat.store/read (:db-after r) zoe :p/tags) "
               " (mentat.store/read (:db-after r) ada :p/age) "
               " (mentat.store/entity (mentat.store/db conn) zoe) "
               " (mentat.store/read (mentat.store/db conn) ada :p/age) "
               " (identical? db (:db-before r))]"),
            "[\"Zoe\" #{:x :y} 99 nil 30 true]");
  EXPECT_EQ(Ev("(contains? (mentat.store/entities (:db-after r) :p/name) zoe)"), "true");
  EXPECT_EQ(Ev("(contains? (mentat.store/entities db :p/name) zoe)"), "false");
  EXPECT_EQ(Ev("(mentat.store/datoms (:db-after r) :eavt ada :p/age)"),
            "[[" + Ev("ada") + " :p/age 99 " + Ev("(:tx-id r)") + " true]]");
  // Nothing was written.
  EXPECT_EQ(Ev("(mentat.store/entity (mentat.store/db conn) [:p/name \"Zoe\"])"), "nil");
  // q and pull refuse a speculative db rather than answering from the wrong data.
  EXPECT_NE(Ev("(mentat.store/q (:db-after r) '[:find ?e :where [?e :p/name]])")
                .find("not supported on a speculative db"),
            std::string::npos);
  // with needs the current db.
  EXPECT_NE(Ev("(mentat.store/transact conn [{:p/name \"New\"}]) (mentat.store/with db [])")
                .find("needs the current db"),
            std::string::npos);
}

TEST_F(StoreScript, HistoryDatoms) {
  EXPECT_EQ(Ev("(def t2 (:tx-id (mentat.store/transact conn [{:db/id ada :p/age 31}]))) "
               "(map (fn [[e a v t added]] [v added]) "
               "     (mentat.store/datoms (mentat.store/history (mentat.store/db conn)) :eavt ada "
               ":p/age))"),
            "([30 true] [30 false] [31 true])");
}

TEST_F(StoreScript, HistoryQuery) {
  EXPECT_EQ(Ev("(mentat.store/transact conn [{:db/id ada :p/age 31}]) "
               "(mentat.store/q (mentat.store/history (mentat.store/db conn)) "
               "  '[:find ?v ?added :in $ ?e :where [?e :p/age ?v ?tx ?added]] ada)"),
            "#{[30 false] [30 true] [31 true]}");
}

TEST_F(StoreScript, CasSuccessAndMismatch) {
  EXPECT_EQ(Ev("(mentat.store/transact conn [[:db/cas ada :p/age 30 31]]) "
               "(mentat.store/read (mentat.store/db conn) ada :p/age)"),
            "31");
  EXPECT_NE(Ev("(try (mentat.store/transact conn [[:db/cas ada :p/age 30 32]]) "
               "  (catch Exception e (ex-message e)))")
                .find(":db/cas failed"),
            std::string::npos);
  EXPECT_EQ(Ev("(mentat.store/read (mentat.store/db conn) ada :p/age)"), "31");
  Result<edn::Value> r = in_.Eval("(mentat.store/transact conn [[:db/cas ada :p/age 30 32]])");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kCasMismatch);
  EXPECT_NE(r.status().message().find("1:1: mentat.store/transact: :db/cas failed"),
            std::string::npos);
}

TEST_F(StoreScript, RetractEntity) {
  EXPECT_EQ(Ev("(def r (mentat.store/transact conn "
               "  [{:db/id \"b\" :p/name \"Bea\" :p/address {:a/city \"Oslo\"}} "
               "   {:db/id \"c\" :p/name \"Cid\" :p/friend [\"b\" ada]}])) "
               "(def bea (get (:tempids r) \"b\")) "
               "(def cid (get (:tempids r) \"c\")) "
               "(def addr (:p/address (mentat.store/entity (mentat.store/db conn) bea))) "
               "(mentat.store/transact conn [[:db/retractEntity bea]]) "
               "(def db (mentat.store/db conn)) "
               "[(mentat.store/entity db bea) (mentat.store/entity db addr) "
               " (= (mentat.store/read db cid :p/friend) #{ada})]"),
            "[nil nil true]");
  // The old db still has all three.
  EXPECT_EQ(Ev("(:a/city (mentat.store/entity (:db-after r) addr))"), "\"Oslo\"");
}

TEST_F(StoreScript, AsOfAndSinceReflectTheBasis) {
  EXPECT_EQ(Ev("(def t1 (mentat.store/basis-t (mentat.store/db conn))) "
               "(def t2 (:tx-id (mentat.store/transact conn [{:db/id ada :p/age 31}]))) "
               "(def t3 (:tx-id (mentat.store/transact conn [{:db/id ada :p/age 32}]))) "
               "(def db (mentat.store/db conn)) "
               "[(mentat.store/read (mentat.store/as-of db t1) ada :p/age) "
               " (mentat.store/read (mentat.store/as-of db t2) ada :p/age) "
               " (mentat.store/read db ada :p/age) "
               " (mapv (fn [d] (nth d 2)) (mentat.store/datoms (mentat.store/since db t2) :eavt "
               "ada :p/age))]"),
            "[30 31 32 [32]]");
  // as-of past the basis of an older db value is clamped to that basis.
  EXPECT_EQ(Ev("(def old (mentat.store/as-of db t2)) "
               "(mentat.store/transact conn [{:db/id ada :p/age 40}]) "
               "[(mentat.store/read (mentat.store/as-of db (+ t3 100)) ada :p/age) "
               " (mentat.store/read old ada :p/age)]"),
            "[32 31]");
  // An instant works as a time point.
  EXPECT_EQ(Ev("(mentat.store/read (mentat.store/as-of db #inst \"2000-01-01\") ada :p/age)"),
            "nil");
  EXPECT_EQ(
      Ev("(str (mentat.store/as-of (mentat.store/since db 5) 7))").find("#mentat/db {:basis-t "),
      1u);
}

TEST_F(StoreScript, QueryInputsOfEveryBindingForm) {
  ASSERT_EQ(
      Ev("(mentat.store/transact conn [{:p/name \"Bo\" :p/age 40} {:p/name \"Cy\" :p/age 50}]) "
         "(def db (mentat.store/db conn)) :ok"),
      ":ok");
  // Scalar.
  EXPECT_EQ(
      Ev("(mentat.store/q db '[:find ?a . :in $ ?n :where [?e :p/name ?n] [?e :p/age ?a]] \"Bo\")"),
      "40");
  // Collection.
  EXPECT_EQ(
      Ev("(mentat.store/q db '[:find [?a ...] :in $ [?n ...] :where [?e :p/name ?n] "
         "[?e :p/age ?a]] [\"Bo\" \"Cy\"])"),
      Ev("(vec (sort (mentat.store/q db '[:find [?a ...] :in $ [?n ...] :where [?e :p/name ?n] "
         "[?e :p/age ?a]] [\"Bo\" \"Cy\"])))"));
  EXPECT_EQ(Ev("(set (mentat.store/q db '[:find [?a ...] :in $ [?n ...] :where [?e :p/name ?n] "
               "[?e :p/age ?a]] [\"Bo\" \"Cy\"]))"),
            "#{40 50}");
  // Tuple.
  EXPECT_EQ(
      Ev("(mentat.store/q db '[:find ?e . :in $ [?n ?a] :where [?e :p/name ?n] [?e :p/age ?a]] "
         "[\"Cy\" 50])"),
      Ev("(:db/id (mentat.store/entity db [:p/name \"Cy\"]))"));
  // Relation.
  EXPECT_EQ(
      Ev("(mentat.store/q db '[:find ?n ?a :in $ [[?n ?a]] :where [?e :p/name ?n] [?e :p/age ?a]] "
         "[[\"Bo\" 40] [\"Cy\" 51] [\"Ada\" 30]])"),
      "#{[\"Ada\" 30] [\"Bo\" 40]}");
  // Another database as a source, and Datomic's argument order.
  EXPECT_EQ(Ev("(mentat.store/q '[:find ?a . :in $old ?n :where [$old ?e :p/name ?n] [$old ?e "
               ":p/age ?a]] "
               "db (mentat.store/as-of db 0) \"Ada\")"),
            "nil");
  // A missing input is an error.
  EXPECT_NE(Ev("(mentat.store/q db '[:find ?a . :in $ ?n :where [?e :p/name ?n] [?e :p/age ?a]])")
                .find("ERROR"),
            std::string::npos);
}

TEST_F(StoreScript, Pull) {
  EXPECT_EQ(Ev("(mentat.store/pull (mentat.store/db conn) ada [:p/name :p/age])"),
            "{:p/age 30, :p/name \"Ada\"}");
  EXPECT_EQ(Ev("(mentat.store/pull (mentat.store/db conn) [:p/name] [:p/name \"Ada\"])"),
            "{:p/name \"Ada\"}");
}

TEST_F(StoreScript, EntityReadDatomsEntities) {
  EXPECT_EQ(Ev("(mentat.store/transact conn [{:db/id ada :p/tags [:a :b]}]) "
               "(dissoc (mentat.store/entity (mentat.store/db conn) [:p/name \"Ada\"]) :db/id)"),
            "{:p/age 30, :p/name \"Ada\", :p/tags #{:a :b}}");
  EXPECT_EQ(Ev("(mentat.store/read (mentat.store/db conn) ada :p/friend)"), "#{}");
  EXPECT_EQ(Ev("(mentat.store/read (mentat.store/db conn) ada :p/address)"), "nil");
  EXPECT_EQ(Ev("(= #{ada} (mentat.store/entities (mentat.store/db conn) :p/age))"), "true");
  EXPECT_EQ(
      Ev("(mapv (fn [[e a v]] [a v]) (mentat.store/datoms (mentat.store/db conn) :eavt ada))"),
      "[[:p/name \"Ada\"] [:p/age 30] [:p/tags :a] [:p/tags :b]]");
  // Refs to entities with idents read as the ident.
  EXPECT_EQ(Ev("(:db/valueType (mentat.store/entity (mentat.store/db conn) :p/name))"),
            ":db.type/string");
  EXPECT_EQ(Ev("(mentat.store/entity (mentat.store/db conn) 999999)"), "nil");
}

// Datomic's client API shapes: (transact conn {:tx-data ...}), (q {:query ... :args ...}).
TEST_F(StoreScript, ClientApiArgumentMaps) {
  EXPECT_EQ(Ev("(require '[mentat.store :as d]) "
               "(def r (d/transact conn {:tx-data [{:p/name \"Cy\"}]})) (count (:tx-data r))"),
            "2");
  EXPECT_EQ(Ev("(d/q {:query '[:find ?n . :in $ ?n :where [_ :p/name ?n]] "
               ":args [(d/db conn) \"Cy\"]})"),
            "\"Cy\"");
  EXPECT_EQ(Ev("(d/q {:query \"[:find ?n . :where [_ :p/name ?n] [(= ?n \\\"Cy\\\")]]\" "
               ":args [(d/db conn)]})"),
            "\"Cy\"");
  EXPECT_EQ(Ev("(count (:tx-data (d/with (d/db conn) {:tx-data [{:p/name \"Di\"}]})))"), "2");
  EXPECT_NE(
      Ev("(d/q {:query '[:find ?n :where [_ :p/name ?n]]})").find(":args needs at least the db"),
      std::string::npos);
  EXPECT_NE(Ev("(d/q {:args []})").find("expects (q db query & inputs)"), std::string::npos);
  EXPECT_NE(Ev("(d/transact conn {:data []})").find("expects transaction data"), std::string::npos);
}

TEST_F(StoreScript, Errors) {
  EXPECT_NE(Ev("(mentat.store/transact conn [{:p/nope 1}])").find("ERROR schema error"),
            std::string::npos);
  EXPECT_NE(Ev("(mentat.store/transact (mentat.store/db conn) [])").find("expects a connection"),
            std::string::npos);
  EXPECT_NE(Ev("(mentat.store/db 42)").find("expects a connection"), std::string::npos);
  EXPECT_NE(Ev("(mentat.store/as-of (mentat.store/db conn) :x)").find("transaction id or an #inst"),
            std::string::npos);
  EXPECT_NE(Ev("(mentat.store/transact conn [(fn [] 1)])").find("cannot contain a function"),
            std::string::npos);
  EXPECT_NE(Ev("(mentat.store/datoms (mentat.store/db conn) :xyz)").find("unknown index"),
            std::string::npos);
  EXPECT_NE(
      Ev("(mentat.store/read (mentat.store/db conn) ada :p/unknown)").find("unknown attribute"),
      std::string::npos);
  EXPECT_EQ(Ev("(def c2 (mentat.store/open)) (mentat.store/close c2) "
               "(try (mentat.store/db c2) (catch Exception e (ex-message e)))"),
            "\"mentat.store/db: the connection is closed\"");
  EXPECT_EQ(Ev("(str c2)"), "\"#mentat/conn {:path \\\":memory:\\\", :closed true}\"");
}

TEST_F(StoreScript, SpeculativeDbReadsAndRefusals) {
  ASSERT_EQ(Ev("(def r (mentat.store/with (mentat.store/db conn) "
               "  [{:db/id \"n\" :p/name \"Nia\" :p/friend ada}])) :ok"),
            ":ok");
  // Lookup refs resolve against the speculative datoms too.
  EXPECT_EQ(
      Ev("(mapv (fn [[e a v]] [a v]) (mentat.store/datoms (:db-after r) :eavt [:p/name \"Nia\"]))"),
      "[[:p/name \"Nia\"] [:p/friend " + Ev("ada") + "]]");
  EXPECT_EQ(Ev("(count (mentat.store/datoms (:db-after r) :vaet ada :p/friend))"), "1");
  EXPECT_EQ(Ev("(count (mentat.store/datoms (mentat.store/db conn) :vaet ada :p/friend))"), "0");
  for (const char* f : {"as-of", "since"}) {
    EXPECT_NE(Ev(std::string("(mentat.store/") + f + " (:db-after r) 0)")
                  .find("ERROR unsupported: 1:1: mentat.store/" + std::string(f) +
                        " is not supported on a speculative db"),
              std::string::npos);
  }
  EXPECT_NE(Ev("(mentat.store/history (:db-after r))").find("not supported on a speculative db"),
            std::string::npos);
  EXPECT_NE(Ev("(mentat.store/with (:db-after r) [])").find("not supported on a speculative db"),
            std::string::npos);
  EXPECT_NE(Ev("(mentat.store/pull (:db-after r) ada [:p/name])")
                .find("not supported on a speculative db"),
            std::string::npos);
  EXPECT_NE(Ev("(str (:db-after r))").find(":speculative true"), std::string::npos);
}

TEST_F(StoreScript, HistoryDbIsNotAnEntity) {
  EXPECT_NE(Ev("(mentat.store/entity (mentat.store/history (mentat.store/db conn)) ada)")
                .find("needs a db that is not a history db"),
            std::string::npos);
}

// q and pull work on history dbs (issue 10); pull reads the entity at the db's time bounds.
TEST_F(StoreScript, PullOnAHistoryDb) {
  EXPECT_EQ(Ev("(mentat.store/pull (mentat.store/history (mentat.store/db conn)) ada [:p/age])"),
            "{:p/age 30}");
  EXPECT_EQ(Ev("(mentat.store/pull (mentat.store/history (mentat.store/db conn)) [:p/name] ada)"),
            "{:p/name \"Ada\"}");
}

TEST_F(StoreScript, PullMany) {
  EXPECT_EQ(Ev("(mentat.store/pull-many (mentat.store/db conn) [:p/age] [ada [:p/name \"Ada\"]])"),
            "[{:p/age 30} {:p/age 30}]");
}

TEST(StoreScriptHost, SetStoreBindsTheHostStore) {
  auto store = Store::open("");
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE((*store)
                  ->transact("[{:db/ident :x/n :db/valueType :db.type/long "
                             ":db/cardinality :db.cardinality/one}]")
                  .ok());
  Interpreter in;
  in.SetStore(store->get());
  Result<std::string> r = in.EvalToString(
      "(mentat.store/transact conn [{:db/id \"e\" :x/n 7}]) "
      "[(identical? conn (mentat.store/open)) "
      " (count (mentat.store/entities (mentat.store/db (mentat.store/open)) :x/n))]");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, "[true 1]");
  // The host sees the script's write.
  auto ds = (*store)->datoms(":aevt", {edn::Value::Keyword("x/n")});
  ASSERT_TRUE(ds.ok());
  EXPECT_EQ(ds->size(), 1u);
}

TEST(StoreScriptHost, InterruptStopsAScriptInAStoreCall) {
  // interrupt() reaches the stores a script opened (a no-op when nothing runs).
  Interpreter in;
  ASSERT_TRUE(in.Eval("(def c (mentat.store/open))").ok());
  in.interrupt();
  EXPECT_TRUE(in.Eval("(mentat.store/db c)").ok());
}

}  // namespace
}  // namespace mentat::script
