// Pass 2: resolves every entity place to an entity id: idents, lookup refs, upserts
// through :db.unique/identity (iterated to a fixpoint), then new ids for the remaining
// tempids (tempids asserting the same identity value become one entity).
#pragma once

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "mentat/schema.h"
#include "storage/sqlite.h"
#include "tx/terms.h"

namespace mentat::tx {

// Partition marks, read and advanced inside the write transaction.
struct Partitions {
  struct Part {
    Entid start = 0;
    Entid end = 0;
    Entid next = 0;
  };
  Part db, user, tx;
  // meta's last_tx_instant (0 when unset), read in the same statement: the transactor
  // needs both, and on PostgreSQL a statement is a round trip.
  int64_t last_instant = 0;

  static Result<Partitions> Read(storage::Connection* c);
  Status Write(storage::Connection* c) const;
  // Whether `id` was handed out already: it lies below its partition's mark (the current
  // transaction's id counts once allocated). An explicit id must be one of these; a mark
  // only ever moves by allocation, never because of a number a user wrote.
  bool Allocated(Entid id) const;
};

struct UniqueKeyHash {
  size_t operator()(const std::pair<Entid, schema::DbVal>& k) const {
    return std::hash<int64_t>()(k.first) * 1000003 ^ k.second.Hash();
  }
};
// The entities holding unique values in the database before the transaction: (attribute,
// value) -> entity, or -1 for a value nobody holds.
using UniqueHolders = std::unordered_map<std::pair<Entid, schema::DbVal>, Entid, UniqueKeyHash>;

struct Resolution {
  Entid tx_id = 0;
  std::unordered_map<std::string, Entid> tempids;  // every tempid, internal ones included
  std::unordered_set<Entid> new_entities;          // allocated by this transaction
  UniqueHolders unique_holders;                    // every unique value looked up
};

// Looks up the entity holding unique value `v` of attribute `a`, if any: from `known` when
// it has the value, else by a statement.
Result<std::optional<Entid>> LookupUnique(storage::Connection* c, Entid a, const schema::DbVal& v,
                                          const UniqueHolders* known = nullptr);

// Looks up the holders of many unique values of attribute `a` at once, into `out`: one
// statement per thousand values instead of one per value (PostgreSQL, where a statement is
// a round trip to the server).
Status PrefetchUnique(storage::Connection* c, Entid a, const std::vector<schema::DbVal>& values,
                      UniqueHolders* out);

// Encodes a plain value of `attr` for `t`, with an error naming the datom.
Result<schema::DbVal> EncodeFor(const Attribute& attr, const edn::Value& v, const Term& t);

// Resolves all places of `terms` in place (sets EntityPlace::id), allocating ids from
// `parts`. `tx_id` must already be allocated.
Status Resolve(storage::Connection* c, const Schema& schema, std::vector<Term>* terms,
               Partitions* parts, Resolution* out);

}  // namespace mentat::tx
