// A store inside a host's own SQLite connection: what the SQLite extension's host mode
// uses (mentat's tables in the host's database, every read and write on that connection).
#pragma once

#include <memory>

#include "mentat/store.h"

struct sqlite3;  // SQLite's connection (sqlite3.h)

namespace mentat {

// Opens a Store over a borrowed connection: mentat's tables inside `db`'s main database,
// created when missing. The connection must be the SQLite that this library calls (the
// host's own, for the extension).
// REQUIRES: `db` outlives the store.
Result<std::unique_ptr<Store>> OpenStoreOnConnection(sqlite3* db, const Options& options);

// Finalizes the store's cached prepared statements (before the host closes `db`); the
// store stays usable.
void ReleaseHostStatements(Store* store);

}  // namespace mentat
