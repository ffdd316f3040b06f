// Column names and types of edn_q, derived from :find elements and the schema.
#include "columns.h"

#include <gtest/gtest.h>

namespace mentat::duckdb_ext {
namespace {

class ColumnsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Add(100, "person/name", ValueType::kString);
    Add(101, "person/age", ValueType::kLong);
    Add(102, "person/friend", ValueType::kRef);
    Add(103, "person/height", ValueType::kDouble);
    Add(104, "person/born", ValueType::kInstant);
    Add(105, "person/id", ValueType::kUuid);
    Add(106, "person/photo", ValueType::kBytes);
    Add(107, "person/active", ValueType::kBoolean);
    Add(108, "person/role", ValueType::kKeyword);
    Add(109, "person/bio", ValueType::kString);
  }
  void Add(Entid id, const std::string& ident, ValueType t) {
    schema_.SetIdent(id, ident);
    Attribute a;
    a.id = id;
    a.ident = ident;
    a.type = t;
    schema_.SetAttribute(a);
  }
  QueryColumns Infer(const std::string& q, const std::vector<edn::Value>& inputs = {}) {
    auto r = InferColumns(q, schema_, inputs);
    EXPECT_TRUE(r.ok()) << q << ": " << r.status().ToString();
    return r.ok() ? *r : QueryColumns{};
  }
  // "name:TYPE name:TYPE ...", with KEYWORD and JSON for those VARCHAR kinds.
  std::string Describe(const std::string& q, const std::vector<edn::Value>& inputs = {}) {
    std::string out;
    for (const auto& c : Infer(q, inputs).columns) {
      if (!out.empty()) out += " ";
      out += c.name + ":" +
             (c.type == ColumnType::kKeyword ? "KEYWORD"
              : c.type == ColumnType::kJson  ? "JSON"
                                             : ColumnTypeName(c.type));
    }
    return out;
  }
  Schema schema_;
};

TEST_F(ColumnsTest, PatternPlacesGiveTypes) {
  EXPECT_EQ(Describe("[:find ?e ?n :where [?e :person/name ?n]]"), "e:BIGINT n:VARCHAR");
  EXPECT_EQ(Describe("[:find ?a ?h ?b ?u ?p ?x ?r ?f :where [?e :person/age ?a]"
                     " [?e :person/height ?h] [?e :person/born ?b] [?e :person/id ?u]"
                     " [?e :person/photo ?p] [?e :person/active ?x] [?e :person/role ?r]"
                     " [?e :person/friend ?f]]"),
            "a:BIGINT h:DOUBLE b:TIMESTAMP u:UUID p:BLOB x:BOOLEAN r:KEYWORD f:BIGINT");
  EXPECT_EQ(Describe("[:find ?tx ?added ?attr :where [?e ?attr _ ?tx ?added]]"),
            "tx:BIGINT added:BOOLEAN attr:BIGINT");
  // A value of an attribute that is a variable stays untyped.
  EXPECT_EQ(Describe("[:find ?v :where [_ ?a ?v]]"), "v:JSON");
  // Source-prefixed patterns.
  EXPECT_EQ(Describe("[:find ?n :in $ :where [$ _ :person/name ?n]]"), "n:VARCHAR");
}

TEST_F(ColumnsTest, ShapesAndNames) {
  QueryColumns scalar = Infer("[:find ?n . :where [_ :person/name ?n]]");
  EXPECT_EQ(scalar.shape, QueryColumns::Shape::kScalar);
  ASSERT_EQ(scalar.columns.size(), 1u);
  QueryColumns coll = Infer("[:find [?a ...] :where [_ :person/age ?a]]");
  EXPECT_EQ(coll.shape, QueryColumns::Shape::kCollection);
  EXPECT_EQ(coll.columns, (std::vector<Column>{{"a", ColumnType::kBigInt}}));
  QueryColumns tuple = Infer("[:find [?e ?a] :where [?e :person/age ?a]]");
  EXPECT_EQ(tuple.shape, QueryColumns::Shape::kTuple);
  EXPECT_EQ(tuple.columns.size(), 2u);
  EXPECT_EQ(Describe("[:find ?e ?e :where [?e :person/age _]]"), "e:BIGINT e_2:BIGINT");
  EXPECT_EQ(Describe("[:find ?e ?n :keys id name :where [?e :person/name ?n]]"),
            "id:BIGINT name:VARCHAR");
  EXPECT_EQ(Describe("{:find [?n] :where [[_ :person/name ?n]]}"), "n:VARCHAR");
  // A query held in a string.
  EXPECT_EQ(Describe("\"[:find ?n :where [_ :person/name ?n]]\""), "n:VARCHAR");
}

TEST_F(ColumnsTest, Aggregates) {
  EXPECT_EQ(Describe("[:find (count ?e) (count-distinct ?a) (sum ?a) (avg ?a) (min ?a) (max ?n)"
                     " (sum ?h) (median ?a) :where [?e :person/age ?a] [?e :person/name ?n]"
                     " [?e :person/height ?h]]"),
            "count_e:BIGINT count_distinct_a:BIGINT sum_a:BIGINT avg_a:DOUBLE min_a:BIGINT "
            "max_n:VARCHAR sum_h:DOUBLE median_a:DOUBLE");
  EXPECT_EQ(Describe("[:find (min 2 ?a) (distinct ?a) :where [_ :person/age ?a]]"),
            "min_a:JSON distinct_a:JSON");
  EXPECT_EQ(Describe("[:find (pull ?e [*]) (the ?a) :where [?e :person/age ?a]]"),
            "e:JSON a:BIGINT");
}

TEST_F(ColumnsTest, FunctionsAndBindings) {
  EXPECT_EQ(Describe("[:find ?x ?y :where [(ground 3) ?x] [(ground [\"a\" 1.5]) [?y ?z]]]"),
            "x:BIGINT y:VARCHAR");
  EXPECT_EQ(Describe("[:find ?z :where [(ground [[\"a\" 1.5]]) [[?y ?z]]]]"), "z:DOUBLE");
  // Every element counts: longs and doubles make DOUBLE, anything else mixed is JSON.
  EXPECT_EQ(Describe("[:find ?x :where [(ground [1 2.5]) [?x ...]]]"), "x:DOUBLE");
  EXPECT_EQ(Describe("[:find ?x :where [(ground [1 \"a\"]) [?x ...]]]"), "x:JSON");
  EXPECT_EQ(Describe("[:find ?y ?z :where [(ground [[\"a\" 1] [\"b\" :k]]) [[?y ?z]]]]"),
            "y:VARCHAR z:JSON");
  EXPECT_EQ(Describe("[:find ?b :where [?e :person/age _]"
                     " [(get-else $ ?e :person/bio \"none\") ?b]]"),
            "b:VARCHAR");
  EXPECT_EQ(
      Describe("[:find ?b :where [?e :person/age _] [(get-else $ ?e :person/age \"none\") ?b]]"),
      "b:JSON");
  EXPECT_EQ(
      Describe("[:find ?e ?v ?tx ?s :where [(fulltext $ :person/bio \"x\") [[?e ?v ?tx ?s]]]]"),
      "e:BIGINT v:VARCHAR tx:BIGINT s:DOUBLE");
  EXPECT_EQ(Describe("[:find ?t :where [(tx-ids $ 0 100) [?t ...]]]"), "t:BIGINT");
  EXPECT_EQ(Describe("[:find ?y ?z :where [_ :person/age ?a] [(+ ?a 1) ?y]"
                     " [_ :person/height ?h] [(* ?a ?h) ?z]]"),
            "y:BIGINT z:DOUBLE");
  // Unknown functions leave the result untyped.
  EXPECT_EQ(Describe("[:find ?y :where [_ :person/age ?a] [(my-fn ?a) ?y]]"), "y:JSON");
}

TEST_F(ColumnsTest, NestedClausesAndConflicts) {
  EXPECT_EQ(Describe("[:find ?n :where (or [?e :person/name ?n] [?e :person/bio ?n])]"),
            "n:VARCHAR");
  EXPECT_EQ(Describe("[:find ?x :where (or-join [?x] [_ :person/name ?x] [_ :person/age ?x])]"),
            "x:JSON");  // string or long: untyped
  EXPECT_EQ(Describe("[:find ?a :where (not [?e :person/friend _]) (and [?e :person/age ?a])]"),
            "a:BIGINT");
  // Rule outputs are typed only by other clauses.
  EXPECT_EQ(Describe("[:find ?x ?y :in $ % :where (friend ?x ?y)]"), "x:JSON y:JSON");
}

TEST_F(ColumnsTest, InputsTypeOtherwiseUntypedVariables) {
  EXPECT_EQ(
      Describe("[:find ?x ?e :in $ ?x :where [?e :person/name ?x]]", {edn::Value::String("Ann")}),
      "x:VARCHAR e:BIGINT");
  EXPECT_EQ(Describe("[:find ?x :in $ ?x :where]", {edn::Value::Float(1.5)}), "x:DOUBLE");
  EXPECT_EQ(
      Describe("[:find ?x :in $ [?x ...] :where]", {edn::Value::Vector({edn::Value::Int(1)})}),
      "x:BIGINT");
  EXPECT_EQ(Describe("[:find ?x :in $ [?x ...] :where]",
                     {edn::Value::Vector({edn::Value::Int(1), edn::Value::String("a")})}),
            "x:JSON");
  // The schema wins over an input's kind: a keyword input for an entity is an entity id.
  EXPECT_EQ(Describe("[:find ?e :in $ ?e :where [?e :person/age _]]",
                     {edn::Value::Keyword("some/ident")}),
            "e:BIGINT");
}

TEST_F(ColumnsTest, Errors) {
  EXPECT_EQ(InferColumns("[:find ?x :where", schema_).status().code(), Code::kParse);
  EXPECT_EQ(InferColumns("[:where [?e :person/age _]]", schema_).status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(InferColumns("42", schema_).status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace mentat::duckdb_ext
