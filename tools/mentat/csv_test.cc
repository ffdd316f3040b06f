#include "csv.h"

#include <gtest/gtest.h>

namespace mentat::cli {
namespace {

std::vector<std::vector<std::string>> All(std::string_view text) {
  CsvReader r(text);
  std::vector<std::vector<std::string>> out;
  std::vector<std::string> fields;
  for (;;) {
    auto more = r.Next(&fields);
    EXPECT_TRUE(more.ok()) << more.status().ToString();
    if (!more.ok() || !*more) break;
    out.push_back(fields);
  }
  return out;
}

using Rows = std::vector<std::vector<std::string>>;

TEST(Csv, FieldsQuotesAndLineEnds) {
  EXPECT_EQ(All("a,b,c\n1,2,3\n"), (Rows{{"a", "b", "c"}, {"1", "2", "3"}}));
  EXPECT_EQ(All("a,b\r\n1,2\r\n"), (Rows{{"a", "b"}, {"1", "2"}}));
  EXPECT_EQ(All("a,b\n1,2"), (Rows{{"a", "b"}, {"1", "2"}}));  // no final newline
  EXPECT_EQ(All("\"x, y\",\"say \"\"hi\"\"\"\n"), (Rows{{"x, y", "say \"hi\""}}));
  EXPECT_EQ(All("\"two\nlines\",z\n"), (Rows{{"two\nlines", "z"}}));
  EXPECT_EQ(All("a,,\n"), (Rows{{"a", "", ""}}));
  EXPECT_EQ(All("\xEF\xBB\xBFh\n\n\nv\n"), (Rows{{"h"}, {"v"}}));  // BOM, blank lines
  EXPECT_TRUE(All("").empty());
}

TEST(Csv, RecordLineCountsQuotedNewlines) {
  CsvReader r("h\n\"a\nb\"\nc\n");
  std::vector<std::string> f;
  ASSERT_TRUE(*r.Next(&f));
  EXPECT_EQ(r.record_line(), 1u);
  ASSERT_TRUE(*r.Next(&f));
  EXPECT_EQ(r.record_line(), 2u);
  ASSERT_TRUE(*r.Next(&f));
  EXPECT_EQ(r.record_line(), 4u);
  EXPECT_EQ(f, std::vector<std::string>{"c"});
}

TEST(Csv, UnterminatedQuoteIsAParseErrorWithPosition) {
  CsvReader r("a,b\n1,\"oops\n");
  std::vector<std::string> f;
  ASSERT_TRUE(*r.Next(&f));
  auto more = r.Next(&f);
  ASSERT_FALSE(more.ok());
  EXPECT_EQ(more.status().code(), Code::kParse);
  EXPECT_EQ(more.status().message(), "2:3: unterminated quoted field");
}

}  // namespace
}  // namespace mentat::cli
