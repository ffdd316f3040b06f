#include "storage/deadline.h"

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

namespace mentat::storage {

namespace {

using Clock = std::chrono::steady_clock;

// The watches of the process, by deadline. Never destroyed (the thread outlives static
// destruction at exit, and an extension cannot join a thread when it is unloaded).
class Watcher {
 public:
  static Watcher& Get() {
    static Watcher* w = new Watcher();
    return *w;
  }

  uint64_t Add(sqlite3* db, Clock::time_point deadline) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!started_) {
      started_ = true;
      std::thread([this] { Run(); }).detach();
    }
    uint64_t id = ++next_id_;
    by_deadline_.emplace(std::make_pair(deadline, id), db);
    deadlines_.emplace(id, deadline);
    cv_.notify_one();
    return id;
  }

  void Remove(uint64_t id) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = deadlines_.find(id);
    if (it != deadlines_.end()) {
      by_deadline_.erase(std::make_pair(it->second, id));
      deadlines_.erase(it);
    }
    fired_.erase(id);
  }

  bool Fired(uint64_t id) {
    std::lock_guard<std::mutex> lock(mu_);
    return fired_.count(id) > 0;
  }

 private:
  void Run() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      if (by_deadline_.empty()) {
        cv_.wait(lock);
        continue;
      }
      auto first = by_deadline_.begin();
      // A copy: wait_until reads its deadline again after waking, and the watch (its map
      // node) may be destroyed while the lock is released.
      const Clock::time_point until = first->first.first;
      if (Clock::now() < until) {
        cv_.wait_until(lock, until);
        continue;
      }
      // Under the lock, so that a watch being destroyed waits until this is done with db.
      sqlite3_interrupt(first->second);
      fired_.insert(first->first.second);
      deadlines_.erase(first->first.second);
      by_deadline_.erase(first);
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  bool started_ = false;
  uint64_t next_id_ = 0;
  std::map<std::pair<Clock::time_point, uint64_t>, sqlite3*> by_deadline_;
  std::map<uint64_t, Clock::time_point> deadlines_;
  std::set<uint64_t> fired_;  // watches that fired and are not destroyed yet
};

}  // namespace

DeadlineWatch::DeadlineWatch(sqlite3* db, Clock::time_point deadline)
    : id_(Watcher::Get().Add(db, deadline)) {}

DeadlineWatch::~DeadlineWatch() { Watcher::Get().Remove(id_); }

bool DeadlineWatch::fired() const { return Watcher::Get().Fired(id_); }

}  // namespace mentat::storage
