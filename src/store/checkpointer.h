// Checkpointer: moves WAL checkpoints off the commit path.
//
// SQLite's automatic checkpoint runs inside the COMMIT that makes the WAL cross the
// threshold, so that one commit pays for copying every page of the WAL into the database
// file and for the fsyncs (a bulk load spent 8-13% of its time there). A Checkpointer
// replaces it with a WAL hook on each of the store's connections: a commit that leaves
// the WAL at `threshold_pages` or more only wakes a background thread, which runs a
// PASSIVE checkpoint on a connection of its own. PASSIVE never blocks readers or
// writers; commits go on appending to the WAL while it copies.
//
// Back-pressure: if the WAL still grows to `inline_pages` (the thread cannot keep up, or
// it cannot run), the committing connection checkpoints inline, as SQLite would, so the
// WAL stays bounded. Durability is unchanged: a commit is durable in the WAL by the rules
// of `synchronous` before the checkpoint copies it (doc/reliability.md).
//
// Thread safety: Attach and the hook may be called from any thread. The thread starts on
// the first wake-up, so stores that never write much never start one.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "storage/sqlite_api.h"

namespace mentat {

class Checkpointer {
 public:
  // `uri`: the store file. `synchronous`: the store's setting (0-3), used for the
  // checkpoint's own fsyncs. REQUIRES: 0 < threshold_pages < inline_pages.
  Checkpointer(std::string uri, int synchronous, int threshold_pages, int inline_pages);
  // Stops the thread (a checkpoint under way finishes first) and closes its connection.
  ~Checkpointer();
  Checkpointer(const Checkpointer&) = delete;
  Checkpointer& operator=(const Checkpointer&) = delete;

  // Installs the hook on `db`, replacing SQLite's automatic checkpoint.
  // REQUIRES: `db` is a WAL-mode connection to `uri` that lives no longer than this.
  void Attach(sqlite3* db);

  // Background checkpoints that ran, and checkpoints run inline by the back-pressure rule.
  int64_t background_runs() const { return background_runs_.load(); }
  int64_t inline_runs() const { return inline_runs_.load(); }
  // Blocks until no wake-up is pending and no checkpoint is running (for tests).
  void WaitIdle();

 private:
  static int OnCommit(void* self, sqlite3* db, const char* schema, int pages);
  void Wake();
  void Loop();
  // One PASSIVE checkpoint on the thread's connection (opened on first use).
  void RunOnce();

  const std::string uri_;
  const int synchronous_;
  const int threshold_pages_;
  const int inline_pages_;
  const pid_t owner_pid_;  // after fork() a child has no thread: it checkpoints inline

  std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable idle_cv_;
  bool pending_ = false;
  bool running_ = false;
  bool stop_ = false;
  std::thread thread_;
  sqlite3* db_ = nullptr;  // the thread's connection

  std::atomic<int64_t> background_runs_{0};
  std::atomic<int64_t> inline_runs_{0};
};

}  // namespace mentat
