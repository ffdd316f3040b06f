// The typed columns of edn_q: names and SQL types derived from a query's :find
// elements and the store's schema, without running the query (DuckDB must know the
// columns when it binds the table function).
//
// Names: a variable ?x names its column "x"; an aggregate (count ?x) names "count_x"
// ("count-distinct" -> "count_distinct_x"); (pull ?e [...]) and (the ?x) name "e" and
// "x"; :keys/:strs/:syms give the names outright. A repeated name gets "_2", "_3"...
//
// Types: a variable in the entity or tx place of a pattern is a BIGINT; in the value
// place of a pattern with a constant attribute it takes the attribute's type (refs are
// BIGINT, strings VARCHAR, keywords VARCHAR ":ns/name", instants TIMESTAMP, uuids UUID,
// bytes BLOB); in the added place a BOOLEAN. Ground constants, get-else, fulltext,
// tx-ids and tx-data bindings are typed too. count is BIGINT; avg, median, variance and
// stddev DOUBLE; sum BIGINT over longs, otherwise DOUBLE; min, max and the keep their
// variable's type. Anything that cannot be typed before running (conflicting uses, rule
// outputs, unknown functions, pull, collections) is a JSON column: VARCHAR holding each
// value's JSON text ("Ann" quoted, 42, ":ns/name" quoted, maps as objects).
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "mentat/edn.h"
#include "mentat/schema.h"
#include "mentat/status.h"

namespace mentat::duckdb_ext {

// kVarchar, kKeyword and kJson are all DuckDB VARCHARs; they differ in the text written.
enum class ColumnType {
  kBigInt,
  kDouble,
  kVarchar,  // strings as they are
  kKeyword,  // keywords as ":ns/name"
  kJson,     // any value as JSON text
  kBoolean,
  kTimestamp,
  kUuid,
  kBlob,
};

// "BIGINT", "DOUBLE", ... (DuckDB's names; VARCHAR for the three text kinds).
const char* ColumnTypeName(ColumnType t);
// The column type of an attribute's values.
ColumnType ColumnTypeOf(ValueType t);

struct Column {
  std::string name;
  ColumnType type = ColumnType::kVarchar;
  friend bool operator==(const Column&, const Column&) = default;
};

struct QueryColumns {
  enum class Shape { kRelation, kCollection, kTuple, kScalar };
  Shape shape = Shape::kRelation;
  std::vector<Column> columns;
  // :keys (keywords), :strs (strings) or :syms (symbols), as QueryResult::map_keys.
  std::vector<edn::Value> map_keys;
};

// Reads `query` (EDN text of a vector or map query) and derives its columns. `inputs`
// are the values for the :in items after the sources (they type variables nothing else
// types). Errors: kParse for text that does not read, kInvalidArgument for a query
// without :find. Unknown attributes are not errors here (the query engine reports them
// when it runs).
Result<QueryColumns> InferColumns(std::string_view query, const Schema& schema,
                                  const std::vector<edn::Value>& inputs = {});
Result<QueryColumns> InferColumns(const edn::Value& query, const Schema& schema,
                                  const std::vector<edn::Value>& inputs = {});

}  // namespace mentat::duckdb_ext
