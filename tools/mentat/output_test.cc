#include "output.h"

#include <gtest/gtest.h>

#include <sstream>

namespace mentat::cli {
namespace {

using edn::Value;

std::string Rows(const OutputStyle& style, const std::vector<std::string>& headers,
                 const std::vector<std::vector<Value>>& rows, const Value& whole = Value()) {
  std::ostringstream out;
  PrintRows(out, style, headers, rows, whole);
  return out.str();
}

TEST(Output, TableAlignsColumnsAndCountsRows) {
  OutputStyle table{Format::kTable};
  EXPECT_EQ(Rows(table, {"?name", "?age"},
                 {{Value::String("Ada"), Value::Int(36)}, {Value::String("Grace"), Value()}}),
            "?name | ?age\n"
            "------+-----\n"
            "Ada   | 36\n"
            "Grace |\n"
            "(2 rows)\n");
  EXPECT_EQ(Rows(table, {"?x"}, {{Value::Keyword("a/b")}}), "?x\n----\n:a/b\n(1 row)\n");
  EXPECT_EQ(Rows(table, {"?x"}, {}), "?x\n--\n(0 rows)\n");
}

TEST(Output, TableTruncatesLongCellsAndEscapesNewlines) {
  OutputStyle table{Format::kTable};
  table.max_cell = 10;
  std::string out =
      Rows(table, {"v"}, {{Value::String("abcdefghijklmnop")}, {Value::String("a\nb")}});
  EXPECT_EQ(out, "v\n----------\nabcdefghi…\na\\nb\n(2 rows)\n");
}

TEST(Output, TableShrinksToTheTerminalWidth) {
  OutputStyle table{Format::kTable};
  table.max_width = 30;
  std::string long_text(50, 'x');
  std::string out = Rows(table, {"id", "text"}, {{Value::Int(1), Value::String(long_text)}});
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) EXPECT_LE(DisplayWidth(line), 30u) << line;
  EXPECT_NE(out.find("…"), std::string::npos);
}

TEST(Output, TableColoursOnlyWhenAsked) {
  OutputStyle table{Format::kTable};
  EXPECT_EQ(Rows(table, {"h"}, {{Value::Int(1)}}).find("\033["), std::string::npos);
  table.color = true;
  EXPECT_NE(Rows(table, {"h"}, {{Value::Int(1)}}).find("\033[1mh\033[0m"), std::string::npos);
}

TEST(Output, CsvQuotesWhenNeeded) {
  OutputStyle csv{Format::kCsv};
  EXPECT_EQ(Rows(csv, {"a", "b,c"},
                 {{Value::String("x, y"), Value::String("say \"hi\"")},
                  {Value::Keyword("k"), Value()},
                  {Value::String(" pad"), Value::Float(1.5)}}),
            "a,\"b,c\"\n\"x, y\",\"say \"\"hi\"\"\"\n:k,\n\" pad\",1.5\n");
}

TEST(Output, CsvWritesTaggedValuesPlain) {
  OutputStyle csv{Format::kCsv};
  auto inst = edn::Read("#inst \"2024-01-31T10:00:00Z\"");
  auto uuid = edn::Read("#uuid \"4f1c1d8e-1a2b-4c3d-8e9f-0a1b2c3d4e5f\"");
  auto bytes = edn::Read("#bytes \"00ff\"");
  ASSERT_TRUE(inst.ok() && uuid.ok() && bytes.ok());
  EXPECT_EQ(Rows(csv, {"i", "u", "b"}, {{*inst, *uuid, *bytes}}),
            "i,u,b\n2024-01-31T10:00:00.000Z,4f1c1d8e-1a2b-4c3d-8e9f-0a1b2c3d4e5f,00ff\n");
}

TEST(Output, EdnAndJsonPrintTheWholeValue) {
  Value whole = Value::Vector({Value::Vector({Value::Keyword("a"), Value::String("x")})});
  EXPECT_EQ(Rows(OutputStyle{Format::kEdn}, {"h"}, {}, whole), "[[:a \"x\"]]\n");
  EXPECT_EQ(Rows(OutputStyle{Format::kJson}, {"h"}, {}, whole), "[[\":a\",\"x\"]]\n");
}

// A string that is not UTF-8 (in a store written before transactions refused them) once
// aborted the CLI with an uncaught exception in --format json: the bad bytes print as U+FFFD.
TEST(Output, JsonOfAStringThatIsNotUtf8) {
  Value whole = Value::Vector({Value::String("a\xFF"
                                             "b"),
                               Value::Keyword("k\xC3")});
  EXPECT_EQ(Rows(OutputStyle{Format::kJson}, {"h"}, {}, whole),
            "[\"a\xEF\xBF\xBD"
            "b\",\":k\xEF\xBF\xBD\"]\n");
  std::ostringstream out;
  PrintValue(out, OutputStyle{Format::kJson}, Value::String("\xC0\x80"));
  EXPECT_EQ(out.str(), "\"\xEF\xBF\xBD\xEF\xBF\xBD\"\n");
}

TEST(Output, MapAsAttributeValueRows) {
  Value m = Value::Map(
      {{Value::Keyword("db/id"), Value::Int(7)}, {Value::Keyword("p/name"), Value::String("Ada")}});
  std::ostringstream table, edn;
  PrintMap(table, OutputStyle{Format::kTable}, m);
  EXPECT_EQ(table.str(),
            "attribute | value\n----------+------\n:db/id    | 7\n:p/name   | Ada\n(2 rows)\n");
  PrintMap(edn, OutputStyle{Format::kEdn}, m);
  EXPECT_EQ(edn.str(), "{:db/id 7, :p/name \"Ada\"}\n");
}

TEST(Output, QueryResultHeadersFromMapKeys) {
  QueryResult r;
  r.columns = {"?n", "?a"};
  r.map_keys = {Value::Keyword("name"), Value::Keyword("age")};
  r.rows = {{Value::String("Ada"), Value::Int(36)}};
  std::ostringstream out;
  PrintQueryResult(out, OutputStyle{Format::kCsv}, r);
  EXPECT_EQ(out.str(), "name,age\nAda,36\n");
}

TEST(Output, ParseFormat) {
  Format f = Format::kEdn;
  EXPECT_TRUE(ParseFormat("json", &f));
  EXPECT_EQ(f, Format::kJson);
  EXPECT_FALSE(ParseFormat("yaml", &f));
  EXPECT_EQ(f, Format::kJson);
  EXPECT_STREQ(FormatName(Format::kTable), "table");
}

TEST(Output, JsonLinesMarkdownAndLineFormats) {
  std::vector<std::vector<Value>> rows = {{Value::String("Ada"), Value::Int(36)},
                                          {Value::String("a|b"), Value()}};
  EXPECT_EQ(Rows(OutputStyle{Format::kJsonl}, {"?name", "?age"}, rows),
            "{\"name\":\"Ada\",\"age\":36}\n{\"name\":\"a|b\",\"age\":null}\n");
  EXPECT_EQ(Rows(OutputStyle{Format::kMarkdown}, {"?name", "?age"}, rows),
            "| ?name | ?age |\n|---|---|\n| Ada | 36 |\n| a\\|b |  |\n");
  EXPECT_EQ(Rows(OutputStyle{Format::kLine}, {"?name", "?longer"}, rows),
            "  ?name = Ada\n?longer = 36\n\n  ?name = a|b\n?longer = \n");
  Format f;
  ASSERT_TRUE(ParseFormat("jsonl", &f));
  EXPECT_EQ(f, Format::kJsonl);
  ASSERT_TRUE(ParseFormat("markdown", &f));
  EXPECT_EQ(f, Format::kMarkdown);
  ASSERT_TRUE(ParseFormat("line", &f));
  EXPECT_EQ(f, Format::kLine);
  EXPECT_STREQ(FormatName(Format::kLine), "line");
}

TEST(Output, JsonRelationsAreObjectsKeyedByColumn) {
  QueryResult r;
  r.shape = QueryResult::Shape::kRelation;
  r.columns = {"?name", "(count ?f)"};
  r.rows = {{Value::String("Ada"), Value::Int(2)}};
  std::ostringstream out;
  PrintQueryResult(out, OutputStyle{Format::kJson}, r);
  EXPECT_EQ(out.str(), "[{\"name\":\"Ada\",\"(count ?f)\":2}]\n");
  // :keys name their objects' keys without the colon.
  r.map_keys = {Value::Keyword("who"), Value::Keyword("n")};
  out.str("");
  PrintQueryResult(out, OutputStyle{Format::kJson}, r);
  EXPECT_EQ(out.str(), "[{\"who\":\"Ada\",\"n\":2}]\n");
  // A tuple is one object; a collection stays an array of values.
  r.map_keys.clear();
  r.shape = QueryResult::Shape::kTuple;
  out.str("");
  PrintQueryResult(out, OutputStyle{Format::kJson}, r);
  EXPECT_EQ(out.str(), "{\"name\":\"Ada\",\"(count ?f)\":2}\n");
  r.shape = QueryResult::Shape::kCollection;
  r.columns = {"?name"};
  r.rows = {{Value::String("Ada")}, {Value::String("Bo")}};
  out.str("");
  PrintQueryResult(out, OutputStyle{Format::kJson}, r);
  EXPECT_EQ(out.str(), "[\"Ada\",\"Bo\"]\n");
  out.str("");
  PrintQueryResult(out, OutputStyle{Format::kJsonl}, r);
  EXPECT_EQ(out.str(), "\"Ada\"\n\"Bo\"\n");
}

}  // namespace
}  // namespace mentat::cli
