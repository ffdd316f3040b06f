// The one place the extension includes DuckDB's headers.
//
// duckdb_extension.h maps every duckdb_* name onto the function-pointer struct DuckDB
// hands the extension when it loads (the stable C extension API, v1.2.0 and later), so
// the extension links no DuckDB library and loads into any DuckDB release whose C API
// is at least that version. The struct itself is defined once, by the entry point in
// extension.cc (DUCKDB_EXTENSION_ENTRYPOINT).
#pragma once

#include "duckdb_extension.h"

DUCKDB_EXTENSION_EXTERN

namespace mentat::duckdb_ext {

// Registration of each function (edn_q.cc, scalars.cc). Return false and fill *error
// when DuckDB refuses a registration.
bool RegisterEdnQ(duckdb_connection connection, std::string* error);
bool RegisterScalars(duckdb_connection connection, std::string* error);

// Reads a VARCHAR (or NULL) parameter of a table function; false for NULL.
bool ParameterText(duckdb_value value, std::string* out);

}  // namespace mentat::duckdb_ext
