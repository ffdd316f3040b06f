// Writing mentat values into DuckDB vectors and reading text out of them.
#pragma once

#include <string>
#include <string_view>

#include "columns.h"
#include "duckdb_api.h"
#include "mentat/edn.h"
#include "mentat/status.h"

namespace mentat::duckdb_ext {

// The DuckDB logical type of a column type; the caller destroys it.
duckdb_logical_type MakeLogicalType(ColumnType t);

// Writes `v` at `row` of `vec`, a vector of type `t`; nil writes NULL. Numbers convert
// between BIGINT and DOUBLE when no precision is lost; any other mismatch is an
// kInvalidArgument error naming `column`.
Status WriteCell(duckdb_vector vec, ColumnType t, idx_t row, const edn::Value& v,
                 const std::string& column);

// Marks `row` of `vec` NULL.
void SetNull(duckdb_vector vec, idx_t row);
// Writes text into a VARCHAR vector: bytes that are not UTF-8 become U+FFFD (DuckDB
// requires valid UTF-8).
void SetText(duckdb_vector vec, idx_t row, std::string_view text);
// Writes bytes into a BLOB vector, as they are.
void SetBlob(duckdb_vector vec, idx_t row, std::string_view bytes);

// Reads row `row` of a flat input vector: its text and false when it is NULL.
// REQUIRES: `vec` holds VARCHAR (duckdb_string_t) values.
bool InputText(duckdb_vector vec, idx_t row, std::string_view* out);
// Same for a BIGINT input vector.
bool InputInt(duckdb_vector vec, idx_t row, int64_t* out);

}  // namespace mentat::duckdb_ext
