#include "stores.h"

#include <sys/stat.h>

#include <cstdlib>
#include <list>
#include <mutex>
#include <utility>

#include "mentat/sqlite_host.h"

namespace mentat::sqlite_ext {

namespace {

struct FileId {
  dev_t dev = 0;
  ino_t ino = 0;
  friend bool operator==(const FileId&, const FileId&) = default;
};

std::optional<FileId> IdOf(const std::string& path) {
  struct stat st;
  if (path.empty() || ::stat(path.c_str(), &st) != 0) return std::nullopt;
  return FileId{st.st_dev, st.st_ino};
}

// The process-wide cache of store files, most recently used first. Entries are few
// (MENTAT_STORE_CACHE), so a list scan is cheaper than any map.
class PathCache {
 public:
  static PathCache& Global() {
    // Never destroyed at exit, when the host's SQLite may already be shut down;
    // CloseCachedStores() empties it while SQLite is still in use.
    static PathCache* cache = new PathCache(StoreCacheCapacity());
    return *cache;
  }

  void Clear() {
    std::list<Entry> doomed;
    {
      std::lock_guard<std::mutex> lock(mu_);
      doomed.swap(entries_);
    }
  }

  explicit PathCache(size_t capacity) : capacity_(capacity) {}

  Result<std::shared_ptr<Store>> Get(const std::string& path) {
    if (capacity_ == 0) return Open(path);
    if (auto id = IdOf(path)) {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto it = entries_.begin(); it != entries_.end(); ++it) {
        if (it->id == *id) {
          entries_.splice(entries_.begin(), entries_, it);
          return it->store;
        }
      }
    }
    // Not cached: open outside the lock (opening may create and bootstrap the file).
    MENTAT_ASSIGN_OR_RETURN(std::shared_ptr<Store> store, Open(path));
    auto id = IdOf(path);
    if (!id) return store;  // nothing on disk to key it by (a URI, say): one call only
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->id == *id) {  // another thread opened it meanwhile: keep theirs
        entries_.splice(entries_.begin(), entries_, it);
        return it->store;
      }
    }
    entries_.push_front(Entry{*id, store});
    while (entries_.size() > capacity_) entries_.pop_back();
    return store;
  }

 private:
  struct Entry {
    FileId id;
    std::shared_ptr<Store> store;
  };

  static Result<std::shared_ptr<Store>> Open(const std::string& path) {
    auto s = Store::open(path);
    if (!s.ok()) return s.status();
    return std::shared_ptr<Store>(std::move(*s));
  }

  const size_t capacity_;
  std::mutex mu_;
  std::list<Entry> entries_;
};

// Refuses a db_path that is the host's own main database file: a second connection
// would wait on (or deadlock with) the host's own transaction. Host mode does what the
// caller wants there.
Status CheckNotHostFile(sqlite3* db, const std::string& path) {
  const char* host = sqlite3_db_filename(db, "main");
  if (!host || !*host) return Status::OK();
  auto a = IdOf(host), b = IdOf(path);
  if (a && b && *a == *b)
    return Status::InvalidArgument(
        "db_path '" + path +
        "' is the host's own database; pass NULL or 'main' to work on it inside the "
        "host's transaction, or give mentat a separate store file");
  return Status::OK();
}

}  // namespace

void CloseCachedStores() { PathCache::Global().Clear(); }

size_t StoreCacheCapacity() {
  const char* v = std::getenv("MENTAT_STORE_CACHE");
  if (!v || !*v) return 16;
  char* end = nullptr;
  long long n = std::strtoll(v, &end, 10);
  if (!end || *end != '\0' || n < 0) return 16;
  return static_cast<size_t>(n);
}

StoreRef::StoreRef(StoreRef&& o) noexcept
    : store_(std::exchange(o.store_, nullptr)),
      shared_(std::move(o.shared_)),
      host_(std::exchange(o.host_, nullptr)),
      host_in_txn_(o.host_in_txn_),
      access_(o.access_) {}

StoreRef::~StoreRef() {
  if (!host_ || !host_->host_store) return;
  // A write inside the host's transaction may yet be rolled back by the host.
  if (access_ == Access::kWrite && host_in_txn_) host_->host_dirty = true;
  // Without the close hook, no statement of ours may outlive the call: the host may close
  // its connection next.
  if (!host_->close_hook) ReleaseHostStatements(host_->host_store.get());
}

Result<StoreRef> AcquireStore(HostContext* ctx, const std::optional<std::string>& db_path,
                              Access access) {
  StoreRef ref;
  ref.access_ = access;
  if (IsHostPath(db_path)) {
    bool in_txn = sqlite3_get_autocommit(ctx->db) == 0;
    if (ctx->host_dirty) {
      // Our earlier write may have been rolled back (or committed) by the host since:
      // reopen, which reads the schema afresh. Once the host's transaction is over, the
      // store is trustworthy again.
      ctx->host_store.reset();
      if (!in_txn) ctx->host_dirty = false;
    }
    if (!ctx->host_store) {
      Options options;
      options.create = access == Access::kWrite;
      auto s = OpenStoreOnConnection(ctx->db, options);
      if (!s.ok()) {
        if (s.status().code() == Code::kNotFound && access == Access::kRead) return ref;
        return s.status();
      }
      ctx->host_store = std::move(*s);
      ArmCloseHook(ctx);
      // Creating the tables inside the host's transaction is a write the host may undo.
      if (in_txn && access == Access::kWrite) ctx->host_dirty = true;
    }
    ref.host_ = ctx;
    ref.host_in_txn_ = in_txn;
    ref.store_ = ctx->host_store.get();
    return ref;
  }
  const std::string& path = *db_path;
  if (path.empty() || path == ":memory:") {
    auto s = Store::open("");
    if (!s.ok()) return s.status();
    ref.shared_ = std::shared_ptr<Store>(std::move(*s));
    ref.store_ = ref.shared_.get();
    return ref;
  }
  MENTAT_RETURN_IF_ERROR(CheckNotHostFile(ctx->db, path));
  MENTAT_ASSIGN_OR_RETURN(ref.shared_, PathCache::Global().Get(path));
  ref.store_ = ref.shared_.get();
  return ref;
}

}  // namespace mentat::sqlite_ext
