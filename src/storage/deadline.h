// Timeouts for statements on a connection whose progress handler is not ours to set.
//
// A query on mentat's own connection stops at its deadline from SQLite's progress handler
// (query/execute.cc). A host's connection (the SQLite extension's host mode) may have a
// progress handler of the application's, which SQLite offers no way to read back and so to
// restore: mentat leaves it alone, and a DeadlineWatch calls sqlite3_interrupt() on the
// connection from a background thread when the deadline passes instead.
#pragma once

#include <chrono>
#include <cstdint>

#include "storage/sqlite_api.h"

namespace mentat::storage {

class DeadlineWatch {
 public:
  // Arms the watch: at `deadline`, unless destroyed before, sqlite3_interrupt(db) runs
  // once. One background thread (started at the first watch) serves every watch of the
  // process. Thread-safe. REQUIRES: `db` stays open while the watch lives.
  DeadlineWatch(sqlite3* db, std::chrono::steady_clock::time_point deadline);
  // Disarms it; once this returns, the thread no longer touches `db`.
  ~DeadlineWatch();
  DeadlineWatch(const DeadlineWatch&) = delete;
  DeadlineWatch& operator=(const DeadlineWatch&) = delete;

  // Whether the interrupt was sent.
  bool fired() const;

 private:
  uint64_t id_;
};

}  // namespace mentat::storage
