// Host-side state of the mentat.store bindings: the open connections (for interrupt),
// the embedding's default store and its open policy.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "mentat/store.h"
#include "script/value.h"

namespace mentat::script {

class Interp;
struct ConnObj;

struct StoreState {
  // Closes the connections still open (a script can leak one in a reference cycle
  // through an atom): no store outlives its interpreter unless the host owns it.
  ~StoreState();

  std::function<bool(const std::string&)> allow_open;
  bool read_only = false;  // Options::read_only: store files are opened read-only
  Store* default_store = nullptr;
  Val default_conn;  // the ConnObj wrapping default_store, once made

  // Stores with a live connection object; guarded for interrupt() from other threads.
  std::set<ConnObj*> conns;  // every connection object alive

  std::mutex mu;
  std::multiset<Store*> live;
  void Add(Store* s) {
    std::lock_guard<std::mutex> lock(mu);
    live.insert(s);
  }
  void Remove(Store* s) {
    std::lock_guard<std::mutex> lock(mu);
    auto it = live.find(s);
    if (it != live.end()) live.erase(it);
  }
  void InterruptAll() {
    std::lock_guard<std::mutex> lock(mu);
    for (Store* s : live) s->interrupt();
  }
};

StoreState& StateOf(Interp& in);
// A connection value for a store the host owns.
Val HostConn(Interp& in, Store* store);
// A db value of `db` (Interpreter::Apply), through a connection object of its own that is
// never the default: a function given it has no connection to transact on.
Val HostDb(Interp& in, const Db& db);

}  // namespace mentat::script
