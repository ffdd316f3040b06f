// Importing records: CSV rows, JSON arrays of objects, JSON Lines. Each record is one
// entity; its columns (CSV headers, JSON keys) name attributes.
//
// Columns to attributes, in this order: `--map COL=ATTR`; ":db/id" (an entity id, ident,
// lookup ref or tempid); a qualified name (`person/name` or `:person/name`); an
// unqualified name with `--as NS` (`name` is `:NS/name`). Any other column is an error.
//
// Attributes that do not exist yet are created by one schema transaction before the data
// (schema inference): the type is read from the values of the whole file: long when every
// value is an integer, double when every value is a number, boolean (true/false), instant
// (RFC 3339 dates and times: 2024-01-31, 2024-01-31T10:00:00Z), uuid, else string;
// cardinality one, except JSON arrays of scalars (cardinality many). `--unique COL` makes
// the column's new attribute :db.unique/identity (so importing again upserts);
// `--ref COL=ATTR` makes it a ref whose cells are values of ATTR (a unique attribute),
// written as lookup refs [ATTR value].
//
// Nested JSON objects become component entities: the key `k` of an object holding an
// object is a ref attribute (:db/isComponent true) of the outer entity, and the inner
// object's keys are attributes of namespace `k` (`{"address": {"city": "Oslo"}}` with
// --as person: :person/address, a component entity with :address/city).
//
// Rows go to the store in transactions of `batch` records. A record that cannot be
// converted, or whose transaction fails, is an error naming FILE:LINE: with on_error
// abort (the default) the import stops there (earlier transactions stay committed); with
// skip it is left out, reported, and counted, and the rest goes on. dry_run prints the
// schema that would be created and the first entities, and writes nothing.
#pragma once

#include <map>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "import.h"
#include "mentat/store.h"

namespace mentat::cli {

enum class RecordFormat { kCsv, kJson, kJsonl };

// Imports `text` (the contents of `name`) as records. Reports of skipped records and the
// dry run's output go to `report`. `stats` (required) holds what was committed and
// skipped, also on error.
Status ImportRecords(Store& store, std::string_view text, const std::string& name,
                     RecordFormat format, const ImportOptions& options, std::ostream& report,
                     ImportStats* stats);

}  // namespace mentat::cli
