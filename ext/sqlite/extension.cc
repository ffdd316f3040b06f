// The entry point of the mentat SQLite extension (build/libmentat_sqlite.so).
//
//   .load ./build/libmentat_sqlite            -- the sqlite3 shell
//   SELECT load_extension('./build/libmentat_sqlite');
//
// SQLite looks for sqlite3_extension_init, then for the name it derives from the file
// name (libmentat_sqlite.so: "lib" and non-letters dropped, so sqlite3_mentatsqlite_init);
// both are this function. It registers, on the loading connection, the scalar functions
// of functions.cc and the edn_rows module of rows_vtab.cc, all sharing one HostContext
// for that connection (its host-mode store), which SQLite destroys with the connection.
#include <atomic>
#include <new>

#include "functions.h"
#include "storage/sqlite_api.h"
#include "stores.h"

SQLITE_EXTENSION_INIT1

namespace mentat::sqlite_ext {
namespace {

// Host connections with the extension loaded; the cached store files are closed when the
// last of them closes.
std::atomic<int> live_contexts{0};

void Unref(void* p) {
  auto* ctx = static_cast<HostContext*>(p);
  if (--ctx->refs > 0) return;
  delete ctx;  // NOLINT: owned by SQLite's registrations, released by their destructors
  if (--live_contexts == 0) CloseCachedStores();
}

// SQLITE_DIRECTONLY (3.30.0): the functions open files and write, so an untrusted schema
// (a view, trigger or CHECK constraint) must not call them.
constexpr int kMinVersion = 3030000;

int Init(sqlite3* db, char** pz_err, const sqlite3_api_routines* api) {
  SQLITE_EXTENSION_INIT2(api);
  if (sqlite3_libversion_number() < kMinVersion) {
    *pz_err =
        sqlite3_mprintf("mentat: needs SQLite 3.30.0 or newer (this is %s)", sqlite3_libversion());
    return SQLITE_ERROR;
  }
  auto* ctx = new (std::nothrow) HostContext(db);  // NOLINT: see Unref
  if (!ctx) return SQLITE_NOMEM;
  ++live_contexts;
  // Every registration holds a reference and drops it in its destructor, which SQLite
  // also calls when a registration fails; hold one ourselves until we are done.
  ctx->refs = 1;
  int rc = SQLITE_OK;
  for (const FunctionSpec* f = kFunctions; f->name && rc == SQLITE_OK; ++f) {
    for (int n = f->min_args; n <= f->max_args && rc == SQLITE_OK; ++n) {
      ++ctx->refs;
      // Not SQLITE_DETERMINISTIC: the store changes between calls.
      rc = sqlite3_create_function_v2(db, f->name, n, SQLITE_UTF8 | SQLITE_DIRECTONLY, ctx, f->fn,
                                      nullptr, nullptr, Unref);
    }
  }
  if (rc == SQLITE_OK) {
    ++ctx->refs;
    rc = sqlite3_create_module_v2(db, "edn_rows", &kRowsModule, ctx, Unref);
  }
  if (rc == SQLITE_OK) {
    ++ctx->refs;
    rc = sqlite3_create_module_v2(db, "mentat_close_hook", &kCloseHookModule, ctx, Unref);
  }
  Unref(ctx);
  if (rc != SQLITE_OK) *pz_err = sqlite3_mprintf("mentat: registering functions failed (%d)", rc);
  return rc;
}

}  // namespace
}  // namespace mentat::sqlite_ext

extern "C" {

__attribute__((visibility("default"))) int sqlite3_mentatsqlite_init(
    sqlite3* db, char** pz_err, const sqlite3_api_routines* api) {
  try {
    return mentat::sqlite_ext::Init(db, pz_err, api);
  } catch (...) {
    return SQLITE_ERROR;
  }
}

__attribute__((visibility("default"))) int sqlite3_extension_init(sqlite3* db, char** pz_err,
                                                                  const sqlite3_api_routines* api) {
  return sqlite3_mentatsqlite_init(db, pz_err, api);
}

}  // extern "C"
