// mentat_close_hook: finalizes the host-mode store's statements when the host connection
// closes.
//
// The host-mode store caches prepared statements on the host's own connection, and
// sqlite3_close() refuses to close a connection that still has one. SQLite disconnects
// every virtual table of a closing connection before it checks for open statements, so
// this eponymous table, connected once per connection (ArmCloseHook) and never used
// otherwise, gets its xDisconnect at the right moment and drops the host store. Where it
// cannot be armed, the store releases its statements after every call instead (stores.cc).
#include <memory>
#include <new>

#include "functions.h"
#include "stores.h"

namespace mentat::sqlite_ext {

namespace {

struct HookTable {
  sqlite3_vtab base;  // first: SQLite sees a sqlite3_vtab*
  HostContext* ctx = nullptr;
};

int xConnect(sqlite3* db, void* aux, int, const char* const*, sqlite3_vtab** out, char**) {
  int rc = sqlite3_declare_vtab(db, "CREATE TABLE x(armed)");
  if (rc != SQLITE_OK) return rc;
  auto* t = new (std::nothrow) HookTable();  // NOLINT: owned by SQLite until xDisconnect
  if (!t) return SQLITE_NOMEM;
  t->ctx = static_cast<HostContext*>(aux);
  *out = &t->base;
  return SQLITE_OK;
}

int xDisconnect(sqlite3_vtab* v) {
  std::unique_ptr<HookTable> t(reinterpret_cast<HookTable*>(v));
  // The connection is closing (or the extension is being registered again): nothing of
  // ours may stay prepared on it.
  t->ctx->host_store.reset();
  t->ctx->close_hook = false;
  return SQLITE_OK;
}

int xBestIndex(sqlite3_vtab*, sqlite3_index_info* info) {
  info->estimatedCost = 1;
  info->estimatedRows = 1;
  return SQLITE_OK;
}

int xOpen(sqlite3_vtab*, sqlite3_vtab_cursor** out) {
  auto* c = new (std::nothrow) sqlite3_vtab_cursor();  // NOLINT: freed by xClose
  if (!c) return SQLITE_NOMEM;
  *out = c;
  return SQLITE_OK;
}

int xClose(sqlite3_vtab_cursor* c) {
  delete c;  // NOLINT: allocated by xOpen
  return SQLITE_OK;
}

int xFilter(sqlite3_vtab_cursor*, int, const char*, int, sqlite3_value**) { return SQLITE_OK; }
int xNext(sqlite3_vtab_cursor*) { return SQLITE_OK; }
int xEof(sqlite3_vtab_cursor*) { return 1; }  // no rows

int xColumn(sqlite3_vtab_cursor*, sqlite3_context* ctx, int) {
  sqlite3_result_null(ctx);
  return SQLITE_OK;
}

int xRowid(sqlite3_vtab_cursor*, sqlite3_int64* rowid) {
  *rowid = 0;
  return SQLITE_OK;
}

}  // namespace

// Eponymous only (no xCreate): it exists once per connection, connected by ArmCloseHook.
const sqlite3_module kCloseHookModule = {
    0,            // iVersion
    nullptr,      // xCreate: eponymous only
    xConnect,     // xConnect
    xBestIndex,   // xBestIndex
    xDisconnect,  // xDisconnect: the connection closes
    nullptr,      // xDestroy
    xOpen,        // xOpen
    xClose,       // xClose
    xFilter,      // xFilter
    xNext,        // xNext
    xEof,         // xEof: always, no rows
    xColumn,      // xColumn
    xRowid,       // xRowid
    nullptr,      // xUpdate
    nullptr,      // xBegin
    nullptr,      // xSync
    nullptr,      // xCommit
    nullptr,      // xRollback
    nullptr,      // xFindFunction
    nullptr,      // xRename
    nullptr,      // xSavepoint
    nullptr,      // xRelease
    nullptr,      // xRollbackTo
    nullptr,      // xShadowName
};

bool ArmCloseHook(HostContext* ctx) {
  if (ctx->close_hook) return true;
  // Preparing a statement that names the table connects it; it stays connected, with
  // its xDisconnect pending, after the statement is finalized.
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(ctx->db, "SELECT armed FROM mentat_close_hook", -1, &stmt, nullptr);
  sqlite3_finalize(stmt);
  ctx->close_hook = rc == SQLITE_OK;
  return ctx->close_hook;
}

}  // namespace mentat::sqlite_ext
