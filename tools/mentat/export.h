// .export: a dump of a store as an EDN transaction file that .import reads back.
//
// The dump is a snapshot of the current datoms (no history): a schema transaction with
// every ident and attribute (the bootstrap vocabulary excepted), then the entities in
// transactions of about `batch_datoms` datoms. Entities get tempids ("e65536", named after
// their id in the exported store), so importing into a fresh store gives equal data up to
// entity-id renumbering. References between entities in the same transaction use tempids;
// an entity referred to from a later transaction is named by its ident or by a lookup ref
// on one of its unique attributes, and entities connected only by tempids share a
// transaction. Transaction entities (and their :db/txInstant) are not exported.
//
// With `since`, only the datoms asserted after that point that are still current are
// dumped, for applying to a store that holds the earlier data: entities that existed
// before are named by their ident or a unique attribute (entities with neither cannot be
// matched and are created anew), and retractions are not included.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "mentat/store.h"

namespace mentat::cli {

struct ExportOptions {
  std::optional<TxPoint> since;
  size_t batch_datoms = 10000;  // a transaction is closed once it holds this many datoms
};

struct ExportStats {
  uint64_t transactions = 0;
  uint64_t entities = 0;
  uint64_t datoms = 0;
  Entid basis = 0;  // the last transaction included
};

// Writes the dump of `store` to `out`.
Status Export(Store& store, std::ostream& out, const ExportOptions& options, ExportStats* stats);

// Writes the dump to `path` (through a temporary file renamed into place, so a failed
// export never leaves a partial file under `path`).
Status ExportFile(Store& store, const std::string& path, const ExportOptions& options,
                  ExportStats* stats);

// Parses a point in time for --since / asOf: a transaction id, or an instant
// ("2024-01-31T10:00:00Z" or #inst "...").
Result<TxPoint> ParseTxPoint(const std::string& text);

}  // namespace mentat::cli
