// What the SQLite extension's host mode needs from the store layer, and no more: a Store
// over the host's own connection, and releasing its statements before the host closes
// that connection. (The extension includes this, never store_impl.h.)
#pragma once

#include <memory>

#include "mentat/store.h"
#include "storage/sqlite_api.h"

namespace mentat {

// Opens a public Store over a borrowed connection (StoreImpl::OpenBorrowed): mentat's
// tables inside `db`'s main database, every read and write on `db` itself.
// REQUIRES: `db` outlives the store.
Result<std::unique_ptr<Store>> OpenStoreOnConnection(sqlite3* db, const Options& options);

// Finalizes the store's cached prepared statements (before the host closes `db`); the
// store stays usable.
void ReleaseHostStatements(Store* store);

}  // namespace mentat
