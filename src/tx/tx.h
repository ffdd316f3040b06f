// The transactor: EDN transaction data -> datoms written to the store.
//
// Pipeline (one file per pass): expand (list forms and entity maps -> terms),
// resolve (lookup refs, idents, upserts, tempids), apply (terms -> the set of datoms to
// assert and retract, with every check), schema_change (validate and apply schema
// datoms), write (SQL), and the report. The caller owns the write transaction: on any
// error it rolls back, so a failed transaction writes nothing.
#pragma once

#include <memory>

#include "mentat/edn.h"
#include "mentat/schema.h"
#include "mentat/status.h"
#include "mentat/store.h"
#include "storage/sqlite.h"
#include "tx/functions.h"

namespace mentat::tx {

struct TxInput {
  storage::Connection* conn;  // inside BEGIN IMMEDIATE
  const Schema* schema;       // the schema of this snapshot
  int64_t now_micros;         // wall clock for :db/txInstant
  // Runs transaction functions and predicates (tx/functions.h); null: none can run.
  Functions* fns = nullptr;
};

struct TxOutput {
  TxReport report;
  // Set when the transaction changed the schema: the schema after it.
  std::shared_ptr<Schema> new_schema;
};

// Runs the whole pipeline for `data` (a vector of forms). REQUIRES: in.conn is inside a
// write transaction that the caller commits or rolls back.
Result<TxOutput> Transact(const TxInput& in, const edn::Value& data);

}  // namespace mentat::tx
