// PrefixTables (table_prefix.h): mentat's names renamed wherever they stand, nothing else.
#include "storage/table_prefix.h"

#include <gtest/gtest.h>

namespace mentat::storage {
namespace {

std::string P(std::string_view sql) { return PrefixTables(sql, "mentat_"); }

TEST(TablePrefix, RenamesTablesIndexesAndColumnsOfTheSameName) {
  EXPECT_EQ(P("SELECT d.e FROM datoms AS d INDEXED BY datoms_avet WHERE d.a = ?1"),
            "SELECT d.e FROM mentat_datoms AS d INDEXED BY mentat_datoms_avet WHERE d.a = ?1");
  EXPECT_EQ(P("UPDATE attr_stats SET datoms = datoms + 1 WHERE a = ?1"),
            "UPDATE mentat_attr_stats SET mentat_datoms = mentat_datoms + 1 WHERE a = ?1");
  EXPECT_EQ(P("SELECT rowid FROM fulltext WHERE fulltext MATCH ?1 ORDER BY bm25(fulltext)"),
            "SELECT rowid FROM mentat_fulltext WHERE mentat_fulltext MATCH ?1 ORDER BY "
            "bm25(mentat_fulltext)");
  EXPECT_EQ(P("select * from Main.HISTORY"), "select * from Main.mentat_HISTORY");
}

TEST(TablePrefix, QuotedNamesAndWholeLiteralsAreRenamed) {
  EXPECT_EQ(P("CREATE VIRTUAL TABLE fulltext USING fts5(text, content='fulltext_docs')"),
            "CREATE VIRTUAL TABLE mentat_fulltext USING fts5(text, "
            "content='mentat_fulltext_docs')");
  EXPECT_EQ(P("SELECT \"meta\".value FROM [meta], `parts`"),
            "SELECT \"mentat_meta\".value FROM [mentat_meta], `mentat_parts`");
  EXPECT_EQ(P("SELECT name FROM sqlite_master WHERE name IN ('meta', 'ages')"),
            "SELECT name FROM sqlite_master WHERE name IN ('mentat_meta', 'ages')");
}

TEST(TablePrefix, LeavesOtherWordsLiteralsAndCommentsAlone) {
  const std::string same[] = {
      "SELECT metadata, datoms2, my_datoms, x'00', 'datoms of a', 'it''s' FROM t",
      "SELECT 1 -- from datoms\n",
      "SELECT /* history */ 2",
      "SELECT 'meta''' FROM t",  // a doubled quote: not the name
      "SELECT 12e3, ?17 FROM t",
      "SELECT 'unterminated datoms",
      "SELECT 'meta",
  };
  for (const std::string& sql : same) EXPECT_EQ(P(sql), sql) << sql;
  EXPECT_EQ(PrefixTables("SELECT * FROM datoms", ""), "SELECT * FROM datoms");
}

TEST(TablePrefix, KnowsEveryTableTheFormatCreates) {
  for (const char* name : {"meta", "parts", "datoms", "history", "attr_stats", "attr_values",
                           "auto_indexes", "fulltext", "fulltext_docs", "DATOMS"})
    EXPECT_TRUE(IsStoreObjectName(name)) << name;
  for (const char* name : {"", "data", "datom", "fulltext_data", "ages"})
    EXPECT_FALSE(IsStoreObjectName(name)) << name;
}

}  // namespace
}  // namespace mentat::storage
