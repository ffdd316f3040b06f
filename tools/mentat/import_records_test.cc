#include "import_records.h"

#include <gtest/gtest.h>

#include <sstream>

namespace mentat::cli {
namespace {

using edn::Value;

class ImportRecordsTest : public ::testing::Test {
 protected:
  void SetUp() override { store_ = Store::open("").value(); }
  Status Import(const std::string& text, const std::string& name, ImportOptions o = {}) {
    o.report = &report_;
    stats_ = ImportStats();
    return ImportText(*store_, text, name, o, &stats_);
  }
  Value Q(const std::string& q) {
    auto r = store_->q(q);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->ToEdn() : Value();
  }
  const Attribute* Attr(const std::string& ident) { return store_->schema()->attribute(ident); }
  std::unique_ptr<Store> store_;
  std::ostringstream report_;
  ImportStats stats_;
};

TEST_F(ImportRecordsTest, CsvWithInferredSchema) {
  ImportOptions o;
  o.as_ns = "person";
  Status st = Import(
      "name,age,score,active,born,id\n"
      "Ada,36,1.5,true,1815-12-10,6ba7b810-9dad-11d1-80b4-00c04fd430c8\n"
      "Bob,41,2,false,2024-01-31T10:00:00Z,6ba7b811-9dad-11d1-80b4-00c04fd430c8\n",
      "people.csv", o);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(Attr("person/name")->type, ValueType::kString);
  EXPECT_EQ(Attr("person/age")->type, ValueType::kLong);
  EXPECT_EQ(Attr("person/score")->type, ValueType::kDouble);
  EXPECT_EQ(Attr("person/active")->type, ValueType::kBoolean);
  EXPECT_EQ(Attr("person/born")->type, ValueType::kInstant);
  EXPECT_EQ(Attr("person/id")->type, ValueType::kUuid);
  EXPECT_FALSE(Attr("person/age")->many);
  EXPECT_EQ(stats_.created.size(), 6u);
  EXPECT_EQ(stats_.entities, 2u);
  EXPECT_EQ(Q("[:find ?a . :where [?e :person/name \"Bob\"] [?e :person/age ?a]]"), Value::Int(41));
  EXPECT_EQ(Q("[:find ?s . :where [?e :person/name \"Bob\"] [?e :person/score ?s]]"),
            Value::Float(2.0));
}

TEST_F(ImportRecordsTest, UnqualifiedColumnsNeedANamespace) {
  Status st = Import("name\nAda\n", "p.csv");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("p.csv:2:1: column 'name' names no attribute"), std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("--as NS"), std::string::npos);
  // --map names the attribute; qualified headers need nothing.
  ImportOptions o;
  o.column_map["name"] = ":p/full-name";
  ASSERT_TRUE(Import("name,p/age\nAda,3\n", "p.csv", o).ok()) << report_.str();
  EXPECT_EQ(Q("[:find ?n . :where [?e :p/full-name ?n] [?e :p/age 3]]"), Value::String("Ada"));
}

TEST_F(ImportRecordsTest, UniqueColumnsUpsertOnReimport) {
  ImportOptions o;
  o.as_ns = "u";
  o.unique_columns.insert("email");
  ASSERT_TRUE(Import("email,age\na@x.org,1\nb@x.org,2\n", "u.csv", o).ok());
  EXPECT_EQ(Attr("u/email")->unique, Unique::kIdentity);
  ASSERT_TRUE(Import("email,age\na@x.org,10\n", "u.csv", o).ok());
  EXPECT_EQ(Q("[:find (count ?e) . :where [?e :u/email]]"), Value::Int(2));
  EXPECT_EQ(Q("[:find ?a . :where [?e :u/email \"a@x.org\"] [?e :u/age ?a]]"), Value::Int(10));
}

TEST_F(ImportRecordsTest, RefColumnsAreLookupRefs) {
  ImportOptions people;
  people.as_ns = "user";
  people.unique_columns.insert("email");
  ASSERT_TRUE(Import("email\nada@x.org\n", "users.csv", people).ok());
  ImportOptions issues;
  issues.as_ns = "issue";
  issues.ref_columns["assignee"] = ":user/email";
  ASSERT_TRUE(Import("title,assignee\nFix it,ada@x.org\n", "issues.csv", issues).ok())
      << report_.str();
  EXPECT_EQ(Attr("issue/assignee")->type, ValueType::kRef);
  EXPECT_EQ(Q("[:find ?t . :where [?i :issue/title ?t] [?i :issue/assignee ?u] "
              "[?u :user/email \"ada@x.org\"]]"),
            Value::String("Fix it"));
  // A value the lookup ref cannot find fails the record.
  Status st = Import("title,assignee\nLost,nobody@x.org\n", "issues.csv", issues);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("issues.csv:2: "), std::string::npos) << st.message();
}

TEST_F(ImportRecordsTest, JsonArraysJsonLinesAndNestedObjects) {
  ImportOptions o;
  o.as_ns = "person";
  Status st = Import(
      "[\n"
      "  {\"name\": \"Ada\", \"tags\": [\"math\", \"poetry\"],\n"
      "   \"address\": {\"city\": \"London\", \"zip\": 123}},\n"
      "  {\"name\": \"Bob\", \"age\": 41, \"address\": null}\n"
      "]\n",
      "people.json", o);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_TRUE(Attr("person/tags")->many);
  EXPECT_EQ(Attr("person/address")->type, ValueType::kRef);
  EXPECT_TRUE(Attr("person/address")->component);
  EXPECT_EQ(Attr("address/zip")->type, ValueType::kLong);
  EXPECT_EQ(Q("[:find ?c . :where [?p :person/name \"Ada\"] [?p :person/address ?a] "
              "[?a :address/city ?c]]"),
            Value::String("London"));
  EXPECT_EQ(Q("[:find (count ?t) . :where [_ :person/tags ?t]]"), Value::Int(2));
  // JSON Lines: an object per line; an error names its line.
  ImportOptions l;
  l.as_ns = "person";
  ASSERT_TRUE(Import("{\"name\": \"Cy\", \"age\": 7}\n\n{\"name\": \"Dee\"}\n", "p.jsonl", l).ok());
  EXPECT_EQ(Q("[:find (count ?e) . :where [?e :person/name]]"), Value::Int(4));
  st = Import("{\"name\": \"Eve\"}\n{\"name\": \"Flo\", \"age\": \"old\"}\n", "q.jsonl", l);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message().rfind("q.jsonl:2: column age: expected a long", 0), 0u) << st.message();
  st = Import("{\"name\": \"Eve\"}\n{oops\n", "r.jsonl", l);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message().rfind("r.jsonl:2:1:", 0), 0u) << st.message();
  // A JSON array: the error names the line of the record.
  st = Import("[{\"name\": \"Gus\"},\n {\"name\": \"Hal\", \"age\": 1.5}]", "s.json", l);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message().rfind("s.json:2: column age", 0), 0u) << st.message();
}

TEST_F(ImportRecordsTest, SkipLeavesOutBadRecordsAndReportsThem) {
  ASSERT_TRUE(store_
                  ->transact("[{:db/ident :p/age :db/valueType :db.type/long "
                             ":db/cardinality :db.cardinality/one}]")
                  .ok());
  ImportOptions o;
  o.skip_errors = true;
  Status st = Import("p/age\n1\nx\n3\n", "a.csv", o);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(stats_.skipped, 1u);
  EXPECT_EQ(stats_.entities, 2u);
  EXPECT_NE(report_.str().find("skipped a.csv:3: column p/age: expected a long, got \"x\""),
            std::string::npos)
      << report_.str();
  EXPECT_EQ(Q("[:find (count ?e) . :where [?e :p/age]]"), Value::Int(2));
  // abort (the default) stops at the record, keeping what was committed before.
  ImportOptions batch1;
  batch1.csv_batch_rows = 1;
  st = Import("p/age\n5\ny\n6\n", "b.csv", batch1);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("b.csv:3:"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("committed before the error: 1 transaction"), std::string::npos)
      << st.message();
  EXPECT_EQ(Q("[:find (count ?e) . :where [?e :p/age]]"), Value::Int(3));
}

TEST_F(ImportRecordsTest, DryRunWritesNothing) {
  ImportOptions o;
  o.as_ns = "d";
  o.dry_run = true;
  ASSERT_TRUE(Import("name,n\nA,1\nB,2\n", "d.csv", o).ok());
  EXPECT_NE(report_.str().find(":db/ident :d/n"), std::string::npos) << report_.str();
  EXPECT_NE(report_.str().find(":db.type/long"), std::string::npos) << report_.str();
  EXPECT_NE(report_.str().find("{:d/n 1, :d/name \"A\"}"), std::string::npos) << report_.str();
  EXPECT_EQ(Attr("d/n"), nullptr);
  EXPECT_EQ(stats_.transactions, 0u);
  EXPECT_EQ(stats_.entities, 2u);
}

}  // namespace
}  // namespace mentat::cli
