// A process-wide cache of open mentat stores for the DuckDB extension, keyed by path.
//
// Every edn_* call names its store by path; opening a store per call would cost a schema
// load each time, so open stores are kept, least recently used first out, up to
// MENTAT_STORE_CACHE of them (default 16). A Store is thread-safe and gives each thread
// that uses it its own SQLite connection, so calls from several DuckDB threads on one
// cached store run in parallel. Callers hold a shared_ptr: evicting a store that is in
// use closes it only when the last caller lets go.
//
// Paths: "" and ":memory:" name one in-memory store per process (never evicted, so
// edn_t and edn_q on it see the same data); other paths are made absolute and
// normalized, so "x.db" and "./x.db" share an entry.
//
// Thread safety: all methods may be called from any thread.
#pragma once

#include <cstddef>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "mentat/status.h"
#include "mentat/store.h"

namespace mentat::duckdb_ext {

class StoreCache {
 public:
  enum class Mode {
    kCreate,     // create and bootstrap the store when the file is missing (edn_t)
    kMustExist,  // a missing file is a kNotFound error (edn_q, edn_pull)
  };

  // The process-wide cache; its capacity is read from MENTAT_STORE_CACHE on first use.
  static StoreCache& Global();

  // REQUIRES: capacity >= 1.
  explicit StoreCache(size_t capacity) : capacity_(capacity) {}

  // The open store for `path`, opening it if needed (and evicting the least recently
  // used store when the cache is full).
  Result<std::shared_ptr<Store>> Get(const std::string& path, Mode mode);

  // The cache key of `path` (see above).
  static std::string Key(const std::string& path);

  size_t size() const;
  size_t capacity() const { return capacity_; }

 private:
  struct Entry {
    std::shared_ptr<Store> store;
    std::list<std::string>::iterator lru;  // position in lru_
  };

  const size_t capacity_;
  mutable std::mutex mu_;
  std::map<std::string, Entry> entries_;
  // Path as given -> Key(path), so that repeated calls skip the file system (Key
  // resolves symlinks). Cleared when it grows past a few thousand paths.
  std::map<std::string, std::string> keys_;
  std::list<std::string> lru_;  // most recently used first; in-memory stores not listed
};

// MENTAT_STORE_CACHE parsed: a positive integer, else 16.
size_t StoreCacheCapacityFromEnv();

}  // namespace mentat::duckdb_ext
