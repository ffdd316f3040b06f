// Attribute caches (Store::cache, the Rust mentat's `cache`): the current values of chosen
// cardinality-one attributes held in memory, entity -> value, so that a query that has
// found its entities reads their other attributes without one B-tree descent per entity
// and attribute.
//
// One AttrCache per connection (a connection is leased to one thread at a time, so a
// column never changes under a running statement). The query compiler reads a cached
// attribute through the SQL function mentat_cached(a, e), which returns the value or NULL
// (query/plan.cc, UseAttributeCache). Before such a statement runs, Refresh brings each
// column it reads to the statement's snapshot, identified by the snapshot's last
// transaction and schema generation:
//   - same transaction and generation: nothing to do;
//   - a later transaction: the entities whose value may have changed since are those with
//     a datom of the attribute asserted after it (datoms, tx > t) or retracted after it
//     (history, rtx > t); each one's current value is read again (one primary-key probe).
//     Attributes with :db/noHistory keep no retraction intervals, so they are re-read
//     whole, as is a column whose backlog exceeds a quarter of its size;
//   - anything else (a new column, another schema generation): the whole attribute is
//     read from its index.
// A column is never labelled with a later transaction than the data it holds (the label
// is read before the data), and re-reading an entity is idempotent, so a column refreshed
// across two snapshots (an autocommit read, StoreImpl::Read) is still exact once the next
// refresh has run. Columns are never touched inside a write transaction (the caller
// compiles the query without the cache there).
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "mentat/schema.h"
#include "mentat/status.h"
#include "schema/codec.h"
#include "storage/sqlite.h"

namespace mentat {

class AttrCache {
 public:
  AttrCache() = default;
  AttrCache(const AttrCache&) = delete;
  AttrCache& operator=(const AttrCache&) = delete;

  // Registers mentat_cached(a, e) on `db`, reading this cache. REQUIRES: this cache
  // outlives every statement of `db` that calls it.
  Status Register(sqlite3* db);

  // Brings the columns of `attrs` to the snapshot of `c` (inside a read), whose last
  // transaction is `snapshot_tx` and schema generation `schema_gen`.
  Status Refresh(storage::Connection* c, const Schema& schema, int64_t schema_gen,
                 Entid snapshot_tx, const std::vector<Entid>& attrs);

  // Drops the columns of attributes not in `attrs` (no longer cached by the store).
  void Retain(const std::vector<Entid>& attrs);

  // The cached value of attribute `a` for entity `e`; nullptr when it has none.
  const schema::DbVal* Find(Entid a, Entid e) const;

  // Entity -> value. Entity ids of one attribute are mostly dense (allocated in order), so
  // the values sit in a vector indexed by e - base, read in order when the entities come
  // from an index in order; ids far outside that range go to a hash map.
  class Values {
   public:
    // An entity is in at most one of the two: Set moves it to the dense range when the
    // range has grown over it.
    const schema::DbVal* Get(Entid e) const {
      uint64_t i = static_cast<uint64_t>(e) - static_cast<uint64_t>(base_);
      if (i < present_.size() && present_[i]) return &dense_[i];
      if (sparse_.empty()) return nullptr;
      auto it = sparse_.find(e);
      return it == sparse_.end() ? nullptr : &it->second;
    }
    void Set(Entid e, schema::DbVal v);
    void Erase(Entid e);
    void Clear();
    // Sizes the dense range for entities [lo, hi] before a load.
    void Reserve(Entid lo, Entid hi, size_t count);
    size_t size() const { return count_; }

   private:
    Entid base_ = 0;
    std::vector<schema::DbVal> dense_;
    std::vector<uint8_t> present_;
    std::unordered_map<Entid, schema::DbVal> sparse_;
    size_t count_ = 0;
  };

 private:
  struct Column {
    Entid attr = -1;
    int64_t schema_gen = -1;
    Entid tx = 0;
    Values values;
  };
  static Status Load(storage::Connection* c, const Attribute& a, Column* col);
  // Applies the changes after col->tx; false when there were more than its budget.
  static Result<bool> ApplyDelta(storage::Connection* c, const Attribute& a, Column* col);

  std::vector<std::unique_ptr<Column>> columns_;  // a few: searched linearly
};

}  // namespace mentat
