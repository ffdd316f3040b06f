// The store's tables in PostgreSQL (doc/format.md "PostgreSQL"): private to storage;
// format.h's Inspect, CreateTables and Upgrade call these for a PostgreSQL connection.
#pragma once

#include "storage/format.h"

namespace mentat::storage {

Result<FileState> PgInspect(Connection* c, int* version);
Status PgCreateTables(Connection* c);
Status PgUpgrade(Connection* c, int from, int to);

// CREATE OR REPLACE of the functions of formatted, decimal and tuple values
// (format_pg_values.cc): str of instants, uuids, bigints and bigdecs, numbers compared with
// bigints and bigdecs, tuple, untuple and tuple comparisons.
extern const char* const kPgValueFunctions;

}  // namespace mentat::storage
