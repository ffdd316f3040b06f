// Maintained per-value counts, so that the common "how many of each" query
//
//   [:find ?v (count ?e) :where [?e :some/attr ?v]]
//
// costs O(distinct values + datoms changed since the last call) instead of a scan of every
// datom of the attribute (the scale suite's q3 reads 130,000 index entries for 5 groups).
//
// The counts live in memory, one entry per attribute, each valid at one transaction `t`
// of one schema generation. A reader whose snapshot is at `now >= t` brings the entry up
// to date from the transactions after `t`, read from the tx-ordered indexes:
//   count(now) = count(t) + |datoms with tx > t| + |history with tx > t| - |history with rtx > t|
// (a datom asserted and retracted after t appears in history with both, and nets out).
// Attributes with :db/noHistory keep no retraction intervals, so their entries are
// recounted instead of updated. Anything unusual (an older snapshot, too many distinct
// values, a large backlog) falls back to a full count or to the ordinary query path, so the
// answer is always the one the SQL would give: datoms are a set, so the number of distinct
// (?e, ?v) pairs for ?v is exactly the number of datoms with that value.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "mentat/schema.h"
#include "mentat/status.h"
#include "mentat/store.h"
#include "schema/codec.h"
#include "storage/sqlite.h"

namespace mentat {

class ValueCounts {
 public:
  using Counts = std::vector<std::pair<schema::DbVal, int64_t>>;

  // The number of current datoms of `a` per value at the snapshot of `c` (which must be
  // inside a read transaction), whose last transaction is `snapshot_tx` and whose schema
  // generation is `schema_gen`. nullopt when this attribute has too many distinct values
  // to keep counts for (the caller then runs the query normally).
  Result<std::optional<Counts>> Get(storage::Connection* c, const Attribute& attr,
                                    int64_t schema_gen, Entid snapshot_tx);

  // Entries kept at most, and distinct values per entry at most.
  static constexpr size_t kMaxEntries = 256;
  static constexpr size_t kMaxValues = 100000;

 private:
  struct Entry {
    int64_t schema_gen = -1;
    Entid tx = 0;
    bool too_many = false;
    std::map<schema::DbVal, int64_t> counts;
  };
  static Status Recount(storage::Connection* c, const Attribute& a, Entry* e);
  static Result<bool> ApplyDelta(storage::Connection* c, Entid a, Entid since, Entry* e);

  std::mutex mu_;
  std::unordered_map<Entid, Entry> entries_;
};

}  // namespace mentat

namespace mentat {
namespace query {
struct ParsedQuery;
struct DbView;
}  // namespace query

// The attribute of a query that maintained counts answer: exactly
//   [:find ?v (count ?e) :where [?e :attr ?v]]   (either find order; count-distinct too)
// on the current database (no as-of, since or history), with no inputs, :with, :keys,
// :order, :limit or :offset. nullptr otherwise.
const Attribute* CountQueryAttribute(const query::ParsedQuery& q, const Schema& schema,
                                     const query::DbView& view, size_t n_inputs);

// Answers such a query from `counts` (the result the query engine would give).
QueryResult CountQueryResult(const query::ParsedQuery& q, const Attribute& attr,
                             const ValueCounts::Counts& counts);

// Answers `q` from `counts` when CountQueryAttribute() accepts it and `c` is not inside a
// write transaction (whose transaction id a rollback could reuse); nullopt: run the query
// normally.
Result<std::optional<QueryResult>> TryCountQuery(ValueCounts& counts, storage::Connection* c,
                                                 const Schema& schema, int64_t schema_gen,
                                                 const query::ParsedQuery& q,
                                                 const query::DbView& view, size_t n_inputs);

}  // namespace mentat
