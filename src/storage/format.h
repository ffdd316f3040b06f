// The on-disk format: DDL, format versions and in-place upgrades (doc/format.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "mentat/status.h"
#include "storage/sqlite.h"

namespace mentat::storage {

// The format version of a store written by this build (user_version, or host mode's meta).
inline constexpr int kFormatVersion = 6;
// The first id of the system block of :db.part/db (format 4; ids::kSystemStart).
inline constexpr int64_t kSystemIdsStart = 0xFF00;
// The oldest format this build upgrades in place.
inline constexpr int kOldestFormat = 1;

enum class FileState {
  kEmpty,    // a new (or zero-length) file: create and bootstrap
  kCurrent,  // a store of kFormatVersion
  kOld,      // a store of an older format: upgrade in place
};

// Inspects an open connection. Errors: kCorrupt for a foreign SQLite file or one that is
// not a database; kUnsupported for a newer format. `*version` receives the format version.
//
// Two layouts (doc/format.md): a store file's, with the plain table names and the version
// in user_version, and host mode's, with the names under kHostTablePrefix and the version
// in its meta table. A database with a `mentat_meta` table has host mode's layout, and
// Inspect sets the prefix on `c` (Connection::set_table_prefix); a caller opening more
// connections to the store gives them the same prefix.
//
// With `beside_other_tables` (the SQLite extension's host mode, where mentat's tables live
// in the application's own database), a database without a store is kEmpty rather than
// foreign, whatever its user_version and other tables, and `c` gets host mode's prefix
// for the store to be created, unless one of its tables already has a prefixed mentat
// name (kCorrupt, naming it). A store of a file's layout found there is used as it is.
Result<FileState> Inspect(Connection* c, int* version, bool beside_other_tables = false);

// The store's format version, as `c`'s layout keeps it (PRAGMA user_version, or the
// 'format_version' row of the prefixed meta table), and writing it.
Result<int64_t> ReadFormatVersion(Connection* c);
Status WriteFormatVersion(Connection* c, int version);

// The tables (and FTS5 shadow tables) a store creates, for host-mode clash checks.
extern const char* const kStoreTables[];

// Creates every table and index of kFormatVersion. REQUIRES: inside a write transaction.
Status CreateTables(Connection* c);

// Creates the tables of format `version` (only kOldestFormat..kFormatVersion); used by
// tests to build old stores for the upgrade path.
Status CreateTablesOfVersion(Connection* c, int version);

// Upgrades a store from `from` to `to` (default kFormatVersion), step by step.
// REQUIRES: inside a write transaction.
Status Upgrade(Connection* c, int from, int to = kFormatVersion);

// The SQL terms that let SQLite use the partial attribute indexes (format 3): a datom is
// in datoms_avet when its `ix` is 1 (its attribute's values are indexed), else in
// datoms_aevt. A read of one attribute's datoms names the term for that attribute;
// a read that cannot know it reads both (`UNION ALL`), each datom being in exactly one.
inline const char* IndexTest(bool value_indexed) { return value_indexed ? "IS NOT 0" : "IS NOT 1"; }
inline std::string IndexTerm(bool value_indexed) {
  return std::string("ix ") + IndexTest(value_indexed);
}

// SQL that turns a store of the current format back into format 4 (no distinct entities
// or common values in the statistics, no tuple or spec entities), then 3 (no system block), or into
// format 2 (the inverse of the upgrades to 5, 4 and 3), then format 1 (no attr_stats): for tests of
// the upgrade path, which build a store as an older mentat wrote it.
inline constexpr const char* kDowngradeTo4ForTests =
    "DROP TABLE attr_values; ALTER TABLE attr_stats DROP COLUMN distinct_entities; "
    "DELETE FROM datoms WHERE e IN (65285, 65296, 65297, 65298, 65300, 65301, 65302, 65303, "
    "65306); "
    "DELETE FROM attr_stats WHERE a IN (65296, 65297, 65298, 65301, 65302, 65303); "
    "PRAGMA user_version = 4;";
inline constexpr const char* kDowngrade4To3ForTests =
    "DELETE FROM datoms WHERE e >= 65280 AND e < 65536; UPDATE parts SET end = 65536 WHERE "
    "part = 0; PRAGMA user_version = 3;";
inline constexpr const char* kDowngradeTo2ForTests =
    "DROP TABLE attr_values; ALTER TABLE attr_stats DROP COLUMN distinct_entities; "
    "DELETE FROM datoms WHERE e >= 65280 AND e < 65536; UPDATE parts SET end = 65536 WHERE "
    "part = 0; DROP INDEX datoms_avet; DROP INDEX datoms_aevt; ALTER TABLE datoms DROP COLUMN ix; "
    "CREATE INDEX datoms_avet ON datoms (a, v, e, tx); DROP TABLE auto_indexes; "
    "PRAGMA user_version = 2;";
inline constexpr const char* kDowngrade2To1ForTests =
    "DROP TABLE attr_stats; PRAGMA user_version = 1;";

// WAL pages after which a commit checkpoints (PRAGMA wal_autocheckpoint): 40 MiB, and
// 160 MiB for the commit of a large transaction (a bulk load), whose pages a checkpoint
// would otherwise copy again and again (doc/format.md "Connections and durability").
inline constexpr int64_t kWalAutocheckpoint = 10000;
inline constexpr int64_t kWalAutocheckpointLargeTx = 40000;
inline constexpr size_t kLargeTxDatoms = 1000;

// The planner's statistics (format 5, doc/format.md "attr_stats" and "attr_values"): the
// most common values kept per attribute, those with at least two datoms, and the longest
// value kept (longer ones are never compared as constants often enough to matter).
inline constexpr int kCommonValuesPerAttr = 8;
inline constexpr int kCommonValueMaxLength = 128;

// Recounts attribute `a`'s distinct values and entities and its most common values from
// its current datoms, read through its attribute index (`value_indexed`); `many` says
// whether it is cardinality many (else its entities are its datoms). Amortized by the
// caller (tx/write.cc: when the datom count has doubled or halved since the last count).
Status RecountAttrStats(Connection* c, int64_t a, bool value_indexed, bool many);

// Recounts every attribute's statistics in one pass (bootstrap, upgrades).
Status RecountAllAttrStats(Connection* c);

// Applies per-connection pragmas (WAL, synchronous, busy timeout, mmap, temp store).
struct ConnectionSettings {
  bool in_memory = false;
  bool read_only = false;
  int synchronous = 1;  // 0 OFF, 1 NORMAL, 2 FULL, 3 EXTRA
  int busy_timeout_ms = 10000;
  int64_t mmap_size = int64_t{1} << 30;
  int temp_store = 1;
  int cache_size_kib = 65536;
};
Status ApplySettings(Connection* c, const ConnectionSettings& s);

}  // namespace mentat::storage
