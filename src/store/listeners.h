// Store::listen and Store::tx_report_queue: a registry of listeners and the thread that
// delivers committed transactions to them, in commit order.
//
// This process's commits are handed over as they commit (Committed, with their tempids);
// the thread also reads the store's last transaction every kPollInterval while any
// listener is registered, and takes the transactions of other processes from the log
// (ReadLog). A listener gets the transactions after the last one committed when it was
// added.
//
// Thread safety: every method may be called from any thread; callbacks run on the
// registry's thread, one at a time.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "mentat/store.h"

namespace mentat {

class StoreImpl;

class Listeners {
 public:
  static constexpr std::chrono::milliseconds kPollInterval{25};

  explicit Listeners(StoreImpl* store) : store_(store) {}
  ~Listeners();

  // Registers `cb` for transactions after `after` that touch one of `attrs` (all when
  // empty). Starts the thread at the first listener.
  uint64_t Add(TxListener cb, std::set<Entid> attrs, Entid after);
  // Unregisters; when the callback is running on another thread, waits for it to return.
  void Remove(uint64_t id);
  // This process committed `report` (called under the writer's lock, so in commit order).
  void Committed(const TxReport& report);
  // Stops the thread (the store is going away); later calls do nothing.
  void Shutdown();

 private:
  struct Entry {
    TxListener cb;
    std::set<Entid> attrs;
    Entid after = 0;
  };
  void Run();
  // The reports of (delivered_, last]; from own_ when it has them all, else from the log.
  Result<std::vector<TxReport>> Pending(Entid last);

  StoreImpl* store_;
  std::mutex mu_;
  std::condition_variable cv_;    // wakes the thread: a commit, a stop
  std::condition_variable idle_;  // a callback returned
  std::map<uint64_t, Entry> entries_;
  std::map<Entid, TxReport> own_;  // committed here, not yet delivered
  Entid delivered_ = 0;            // every transaction up to this one was handled
  uint64_t next_id_ = 1;
  uint64_t running_ = 0;  // the listener whose callback is running
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace mentat
