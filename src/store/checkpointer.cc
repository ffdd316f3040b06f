#include "store/checkpointer.h"

#include <unistd.h>

#include <utility>

namespace mentat {

Checkpointer::Checkpointer(std::string uri, int synchronous, int threshold_pages, int inline_pages)
    : uri_(std::move(uri)),
      synchronous_(synchronous),
      threshold_pages_(threshold_pages),
      inline_pages_(inline_pages),
      owner_pid_(getpid()) {}

Checkpointer::~Checkpointer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) {
    // A forked child has the std::thread object but not the thread.
    if (getpid() == owner_pid_) {
      thread_.join();
    } else {
      thread_.detach();
    }
  }
  if (db_ && getpid() == owner_pid_) sqlite3_close_v2(db_);
}

void Checkpointer::Attach(sqlite3* db) { sqlite3_wal_hook(db, &Checkpointer::OnCommit, this); }

int Checkpointer::OnCommit(void* self, sqlite3* db, const char* schema, int pages) {
  auto* c = static_cast<Checkpointer*>(self);
  if (pages >= c->inline_pages_ || (pages >= c->threshold_pages_ && getpid() != c->owner_pid_)) {
    // Too far behind (or no thread in this process): the committing connection copies, as
    // SQLite's own automatic checkpoint does. Errors (SQLITE_BUSY while another
    // checkpoint runs) are not the commit's errors.
    c->inline_runs_.fetch_add(1);
    sqlite3_wal_checkpoint_v2(db, schema, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
  } else if (pages >= c->threshold_pages_) {
    c->Wake();
  }
  return SQLITE_OK;
}

void Checkpointer::Wake() {
  std::lock_guard<std::mutex> lock(mu_);
  if (stop_) return;
  pending_ = true;
  if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
  cv_.notify_one();
}

void Checkpointer::WaitIdle() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_cv_.wait(lock, [&] { return (!pending_ && !running_) || stop_; });
}

void Checkpointer::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return pending_ || stop_; });
    if (stop_) break;
    pending_ = false;
    running_ = true;
    lock.unlock();
    RunOnce();
    lock.lock();
    running_ = false;
    idle_cv_.notify_all();
  }
  running_ = false;
  idle_cv_.notify_all();
}

void Checkpointer::RunOnce() {
  if (!db_) {
    sqlite3* db = nullptr;
    int rc = sqlite3_open_v2(
        uri_.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI, nullptr);
    if (rc != SQLITE_OK) {
      sqlite3_close_v2(db);
      return;  // the next commits retry; past inline_pages they checkpoint themselves
    }
    // The checkpoint's fsyncs follow the store's setting (none under synchronous=OFF).
    std::string pragma = "PRAGMA synchronous = " + std::to_string(synchronous_);
    sqlite3_exec(db, pragma.c_str(), nullptr, nullptr, nullptr);
    db_ = db;
  }
  if (sqlite3_wal_checkpoint_v2(db_, "main", SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr) ==
      SQLITE_OK)
    background_runs_.fetch_add(1);
}

}  // namespace mentat
