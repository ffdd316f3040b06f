// Which store an extension call works on, and the caches that keep stores open.
//
// Every edn_* function names its store by its first argument, db_path:
//   NULL or 'main'  the host connection's own database (host mode): mentat's tables live
//                   beside the application's, every read and write runs on the host
//                   connection itself, inside the host's transaction when there is one;
//   '' or ':memory:' a fresh in-memory store for this one call;
//   anything else   a store file (or "file:" URI), created when missing, kept open in a
//                   process-wide cache of MENTAT_STORE_CACHE stores (default 16, 0 = open
//                   and close per call).
//
// A cached store stays current without being reopened: the Store notices other
// connections' commits (PRAGMA data_version) before each read and reads its partitions
// inside each write transaction. A file deleted and recreated under the same path is a
// new cache entry (the key is the file's device and inode).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "mentat/status.h"
#include "mentat/store.h"
#include "storage/sqlite_api.h"

namespace mentat::sqlite_ext {

// Per host connection: the user data of every function and module the extension adds to
// that connection, destroyed when the connection closes. SQLite refuses to close a
// connection with open prepared statements, so the host store's are finalized before the
// close (mentat_close_hook) or, failing that, after every call.
struct HostContext {
  explicit HostContext(sqlite3* db) : db(db) {}
  sqlite3* db;
  std::unique_ptr<Store> host_store;  // host mode, opened on first use
  // A host-mode write ran inside the host's transaction: the host may still roll it back,
  // which the store's cached schema would not notice, so the store is reopened on each
  // call until the host's transaction has ended.
  bool host_dirty = false;
  int refs = 0;  // registrations holding this context
  // mentat_close_hook is connected: the host store may keep its prepared statements
  // between calls, since the hook drops the store before SQLite checks for open ones.
  bool close_hook = false;
};

// Connects mentat_close_hook on `ctx->db` (close_hook.cc); false when it cannot, and the
// host store must then release its statements after every call.
bool ArmCloseHook(HostContext* ctx);

// How a call may use its store.
enum class Access {
  kRead,   // a read: in host mode, a database without a store reads as "no store"
  kWrite,  // a write: creates the store when missing
};

// A store for the duration of one call. Move-only; in host mode without the close hook,
// releases the store's statements on destruction so the host can always close.
class StoreRef {
 public:
  StoreRef() = default;
  StoreRef(StoreRef&& o) noexcept;
  StoreRef& operator=(StoreRef&&) = delete;
  StoreRef(const StoreRef&) = delete;
  ~StoreRef();

  // nullptr when host mode found no store for a read (the call then returns NULL).
  Store* get() const { return store_; }
  bool host_mode() const { return host_ != nullptr; }

 private:
  friend Result<StoreRef> AcquireStore(HostContext*, const std::optional<std::string>&, Access);
  Store* store_ = nullptr;
  std::shared_ptr<Store> shared_;  // path mode: keeps a cached (or one-call) store alive
  HostContext* host_ = nullptr;    // host mode
  bool host_in_txn_ = false;       // host mode: the host was inside a transaction
  Access access_ = Access::kRead;
};

// The store named by `db_path` (std::nullopt for SQL NULL). Errors: the store cannot be
// opened; `db_path` names the host's own database file (pass NULL or 'main' for that).
Result<StoreRef> AcquireStore(HostContext* ctx, const std::optional<std::string>& db_path,
                              Access access);

// True for the db_path values that mean the host's own database.
inline bool IsHostPath(const std::optional<std::string>& db_path) {
  return !db_path || *db_path == "main";
}

// MENTAT_STORE_CACHE: the number of store files kept open (default 16, 0 = none).
size_t StoreCacheCapacity();

// Closes every cached store file (those still in use close when their calls finish).
// Called when the last host connection that loaded the extension closes, so the stores
// are closed (and their WAL checkpointed) while the host's SQLite is still running.
void CloseCachedStores();

}  // namespace mentat::sqlite_ext
