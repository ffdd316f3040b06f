// Value-index tuning (AutoIndex): counts the queries that filter attributes by value, and
// plans which attributes get or lose an adaptive value index. StoreImpl::TuneIndexes
// applies the plan. The rules are in doc/performance.md "Value indexes".
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#include "mentat/store.h"
#include "query/ast.h"
#include "storage/sqlite.h"

namespace mentat {

// The attributes `q` filters by value: patterns (in any clause, nested ones included) with
// a constant attribute whose value place is a constant or an :in variable. Attributes the
// schema does not know are left out.
std::vector<Entid> ValueFilteredAttributes(const query::ParsedQuery& q, const Schema& schema);

// Thread-safe; one per store.
class IndexAdvisor {
 public:
  // Queries between automatic tuning passes in kAdaptive mode.
  static constexpr int kPeriod = 1000;
  // An adaptive index is refused when the attribute's average value is held by more than
  // 1/kMinSelectivity of its datoms (and it has at least kMinDatomsToJudge datoms): SQLite
  // would probe it and lose to reading the attribute by entity.
  static constexpr int64_t kMinSelectivity = 20;
  static constexpr int64_t kMinDatomsToJudge = 1000;

  explicit IndexAdvisor(AutoIndex mode) : mode_(mode) {}

  AutoIndex mode() const { return mode_.load(std::memory_order_relaxed); }
  void set_mode(AutoIndex m) { mode_.store(m, std::memory_order_relaxed); }
  void set_tuning(int min_uses, std::chrono::seconds idle);

  // Counts one query's value-filtered attributes (kAdaptive only). True when a tuning pass
  // is due: every kPeriod queries, or when an attribute without a value index reaches
  // min_uses.
  bool Record(const std::vector<Entid>& attrs, const Schema& schema);

  // The actions of one tuning pass over the store as `c` sees it, at `now` (seconds since
  // the epoch); `used` receives the adaptive indexes used in this period (their last_used
  // moves to now). REQUIRES: inside a transaction on `c`.
  Result<std::vector<IndexAction>> Plan(storage::Connection* c, const Schema& schema, int64_t now,
                                        std::map<Entid, int64_t>* used);

  // Ends a period after a pass was applied: uses start again from zero.
  void EndPeriod();

 private:
  std::atomic<AutoIndex> mode_;
  std::mutex mu_;
  int min_uses_ = 16;
  int64_t idle_s_ = 24 * 3600;
  std::map<Entid, int64_t> uses_;
  int queries_ = 0;
  std::set<Entid> rejected_;  // judged unselective; not tried again by this store
};

// Reads MENTAT_AUTO_INDEX: kSchema when unset or empty; kInvalidArgument for a value other
// than off, schema or adaptive.
Result<AutoIndex> AutoIndexFromEnv();

}  // namespace mentat
