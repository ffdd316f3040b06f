// Pass 3: resolved terms -> the datoms to retract and assert, with every check:
// value types, cardinality-one conflicts, a datom both added and retracted, uniqueness,
// :db/cas, and the expansion of :db/retractEntity and [:db/retract e a].
#pragma once

#include <vector>

#include "mentat/schema.h"
#include "storage/sqlite.h"
#include "tx/resolve.h"
#include "tx/terms.h"

namespace mentat::tx {

struct Change {
  Entid e;
  Entid a;
  schema::DbVal v;
  Entid tx;  // for retractions: the transaction that asserted the datom
};

struct Changes {
  std::vector<Change> retracted;
  std::vector<Change> asserted;  // tx = 0 (the current transaction)
};

Result<Changes> Apply(storage::Connection* c, const Schema& schema, const std::vector<Term>& terms,
                      const Resolution& res);

}  // namespace mentat::tx
