#include "storage/format.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "storage/format_pg.h"
#include "storage/table_prefix.h"

namespace mentat::storage {

namespace {

// Format 1: datoms, history, partitions, metadata and full-text search.
constexpr const char* kTablesV1 = R"sql(
CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value) WITHOUT ROWID;
CREATE TABLE parts (part INTEGER PRIMARY KEY NOT NULL, start INTEGER NOT NULL,
                    end INTEGER NOT NULL, next INTEGER NOT NULL);
CREATE TABLE datoms (e INTEGER NOT NULL, a INTEGER NOT NULL, v NOT NULL, tx INTEGER NOT NULL,
                     PRIMARY KEY (e, a, v)) WITHOUT ROWID;
CREATE INDEX datoms_avet ON datoms (a, v, e, tx);
CREATE INDEX datoms_tx ON datoms (tx, a);
CREATE TABLE history (e INTEGER NOT NULL, a INTEGER NOT NULL, v NOT NULL,
                      tx INTEGER NOT NULL, rtx INTEGER NOT NULL,
                      PRIMARY KEY (e, a, v, tx)) WITHOUT ROWID;
CREATE INDEX history_avet ON history (a, v, e, tx, rtx);
CREATE INDEX history_tx ON history (tx);
CREATE INDEX history_rtx ON history (rtx);
CREATE TABLE fulltext_docs (id INTEGER PRIMARY KEY, e INTEGER NOT NULL, a INTEGER NOT NULL,
                            text TEXT NOT NULL);
CREATE UNIQUE INDEX fulltext_docs_eav ON fulltext_docs (e, a, text);
CREATE VIRTUAL TABLE fulltext USING fts5(text, content='fulltext_docs', content_rowid='id');
)sql";

// Format 2 adds per-attribute statistics for the query planner.
constexpr const char* kUpgradeV1toV2 = R"sql(
CREATE TABLE attr_stats (a INTEGER PRIMARY KEY NOT NULL, datoms INTEGER NOT NULL,
                         distinct_values INTEGER NOT NULL, distinct_at INTEGER NOT NULL);
INSERT INTO attr_stats (a, datoms, distinct_values, distinct_at)
  SELECT a, count(*), count(DISTINCT v), count(*) FROM datoms GROUP BY a;
)sql";

// Format 3 indexes each datom once by attribute: in datoms_avet (by value) when its
// attribute's values are indexed (ix = 1: unique, :db/index, ref, or an adaptive index),
// else in datoms_aevt (by entity; ix = 0). Partial indexes: a query names the term
// `ix IS NOT 0` or `ix IS NOT 1` for SQLite to use them. The upgrade derives ix from the
// schema datoms: :db/unique (7), :db/index true (8), :db/valueType :db.type/ref (5, 13).
constexpr const char* kUpgradeV2toV3 = R"sql(
ALTER TABLE datoms ADD COLUMN ix INTEGER NOT NULL DEFAULT 0;
UPDATE datoms SET ix = 1 WHERE a IN (SELECT e FROM datoms WHERE a = 7 OR (a = 8 AND v = 1)
                                     OR (a = 5 AND v = 13));
DROP INDEX datoms_avet;
CREATE INDEX datoms_avet ON datoms (a, v, e, tx, ix) WHERE ix IS NOT 0;
CREATE INDEX datoms_aevt ON datoms (a, e, v, tx, ix) WHERE ix IS NOT 1;
CREATE TABLE auto_indexes (a INTEGER PRIMARY KEY NOT NULL, uses INTEGER NOT NULL,
                           created INTEGER NOT NULL, last_used INTEGER NOT NULL);
)sql";

// Format 5 adds to the planner's statistics each attribute's distinct entities (so the
// values per entity of a cardinality-many attribute) and its most common values.
constexpr const char* kUpgradeV4toV5 = R"sql(
ALTER TABLE attr_stats ADD COLUMN distinct_entities INTEGER NOT NULL DEFAULT 0;
CREATE TABLE attr_values (a INTEGER NOT NULL, v NOT NULL, datoms INTEGER NOT NULL,
                          PRIMARY KEY (a, v)) WITHOUT ROWID;
)sql";

// Returns the first mentat table name already present in `c`'s main schema, or "".
Result<std::string> ClashingTable(Connection* c) {
  MENTAT_ASSIGN_OR_RETURN(
      auto s, c->Prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND "
                         "name = ?1 COLLATE NOCASE"));
  for (const char* const* t = kStoreTables; *t; ++t) {
    s.BindText(1, c->table_prefix() + *t);
    MENTAT_ASSIGN_OR_RETURN(bool row, s.Step());
    if (row) return std::string(s.ColumnText(0));
    s.Reset();
  }
  return std::string();
}

Status HasAnyTable(Connection* c, bool* any) {
  auto r = c->QueryInt("SELECT count(*) FROM sqlite_master", 0);
  if (!r.ok()) return r.status();
  *any = *r > 0;
  return Status::OK();
}

}  // namespace

const char* const kStoreTables[] = {
    "meta",         "parts",           "datoms",           "history",          "attr_stats",
    "attr_values",  "auto_indexes",    "fulltext_docs",    "fulltext",         "fulltext_data",
    "fulltext_idx", "fulltext_config", "fulltext_docsize", "fulltext_content", nullptr};

Result<int64_t> ReadFormatVersion(Connection* c) {
  if (c->table_prefix().empty()) return c->QueryInt("PRAGMA user_version", 0);
  return c->QueryInt("SELECT value FROM meta WHERE key = 'format_version'", 0);
}

Status WriteFormatVersion(Connection* c, int version) {
  if (c->table_prefix().empty()) return c->Exec("PRAGMA user_version = " + std::to_string(version));
  return c->Exec("INSERT OR REPLACE INTO meta (key, value) VALUES ('format_version', " +
                 std::to_string(version) + ")");
}

namespace {

// True when `c`'s main schema has a table named `name` (exactly).
Result<bool> HasTable(Connection* c, const std::string& name) {
  MENTAT_ASSIGN_OR_RETURN(
      auto s, c->Prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1"));
  s.BindText(1, name);
  return s.Step();
}

// True when `c` has a meta table (under its prefix) holding mentat's format marker.
bool HasFormatMarker(Connection* c) {
  auto marker = c->Prepare("SELECT value FROM meta WHERE key = 'format'");
  if (!marker.ok()) return false;
  auto row = marker->Step();
  return row.ok() && *row && marker->ColumnText(0) == "mentat";
}

// Checks the marker, the version and the tables of a store whose format version is
// `*version` (read by the caller as the layout keeps it).
Result<FileState> InspectStore(Connection* c, int* version) {
  const std::string meta = c->table_prefix() + "meta";
  auto marker = c->Prepare("SELECT value FROM meta WHERE key = 'format'");
  if (!marker.ok()) return Status::Corrupt("not a mentat store: no " + meta + " table");
  auto row = marker->Step();
  if (!row.ok() || !*row || marker->ColumnText(0) != "mentat")
    return Status::Corrupt("not a mentat store: missing format marker in " + meta);
  if (*version > kFormatVersion)
    return Status::Unsupported("store format " + std::to_string(*version) +
                               " is newer than this mentat supports (" +
                               std::to_string(kFormatVersion) + "); upgrade mentat");
  if (*version < kOldestFormat)
    return Status::Unsupported("store format " + std::to_string(*version) + " is too old");
  // The tables must be those of the format the version names: one changed outside mentat
  // would send an upgrade at tables it does not expect ("table attr_stats already exists"),
  // or this format's statements at tables that are missing. The names in the literal are
  // renamed with the connection's (PrefixTables); those read back are stripped of it.
  MENTAT_ASSIGN_OR_RETURN(
      auto tables, c->Prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN "
                              "('meta', 'parts', 'datoms', 'history', 'attr_stats', "
                              "'auto_indexes', 'attr_values')"));
  const std::string& prefix = c->table_prefix();
  std::set<std::string> have;
  for (;;) {
    MENTAT_ASSIGN_OR_RETURN(bool row, tables.Step());
    if (!row) break;
    std::string name(tables.ColumnText(0));
    have.insert(name.substr(std::min(prefix.size(), name.size())));
  }
  // The table each format added (format 1 had the first four).
  const std::pair<int, const char*> kAdded[] = {
      {1, "meta"},       {1, "parts"},        {1, "datoms"},     {1, "history"},
      {2, "attr_stats"}, {3, "auto_indexes"}, {5, "attr_values"}};
  std::string missing, later;
  for (const auto& [since, name] : kAdded) {
    if (since <= *version && !have.count(name))
      missing += std::string(missing.empty() ? "" : ", ") + prefix + name;
    if (since > *version && have.count(name))
      later += std::string(later.empty() ? "" : ", ") + prefix + name;
  }
  const std::string where =
      prefix.empty() ? "user_version" : "the format_version in " + prefix + "meta";
  if (!later.empty())
    return Status::Corrupt("the store's " + where + " says format " + std::to_string(*version) +
                           ", but it has tables of a later format (" + later +
                           "): it was changed outside mentat; restore it "
                           "(this mentat writes format " +
                           std::to_string(kFormatVersion) + ") or the file");
  if (!missing.empty())
    return Status::Corrupt("the store (format " + std::to_string(*version) +
                           ") is missing its tables " + missing);
  return *version == kFormatVersion ? FileState::kCurrent : FileState::kOld;
}

}  // namespace

Result<FileState> Inspect(Connection* c, int* version, bool beside_other_tables) {
  if (c->is_pg()) return PgInspect(c, version);
  // Only SQLITE_NOTADB and SQLITE_CORRUPT (Code::kCorrupt) say what the file is; any
  // other failure (permissions, a read-only directory where WAL mode cannot create its
  // -shm file, an I/O error) says nothing about it and is passed on as it is.
  // Permissions are named only when the operating system said so: a full disk, for one,
  // also makes WAL mode fail to set up its -shm file.
  auto not_a_store = [c](const Status& st) -> Status {
    if (st.code() == Code::kCorrupt)
      return Status::Corrupt("not a mentat store (not an SQLite database): " + st.message());
    if (st.code() == Code::kIo) {
      int e = sqlite3_system_errno(c->raw());
      int rc = sqlite3_extended_errcode(c->raw()) & 0xff;
      bool denied = e == EACCES || e == EPERM || e == EROFS || rc == SQLITE_READONLY ||
                    rc == SQLITE_PERM || (rc == SQLITE_CANTOPEN && e == 0);
      return Status::Io(std::string("cannot open the store") +
                        (denied ? " (check the permissions of the file and its directory)" : "") +
                        ": " + st.message());
    }
    return st;
  };
  auto v = c->QueryInt("PRAGMA user_version", 0);
  if (!v.ok()) return not_a_store(v.status());
  bool any = false;
  if (Status st = HasAnyTable(c, &any); !st.ok()) return not_a_store(st);
  // Host mode's layout: the tables under kHostTablePrefix, the version in its meta table.
  const std::string host_meta = std::string(kHostTablePrefix) + "meta";
  bool prefixed = c->table_prefix() == kHostTablePrefix;
  if (!prefixed && any) {
    MENTAT_ASSIGN_OR_RETURN(prefixed, HasTable(c, host_meta));
    if (prefixed) c->set_table_prefix(std::string(kHostTablePrefix));
  }
  if (prefixed) {
    MENTAT_ASSIGN_OR_RETURN(bool exists, HasTable(c, host_meta));
    if (!exists) return FileState::kEmpty;
    // An application's own table of that name is not a store to open.
    if (!HasFormatMarker(c))
      return Status::Corrupt(
          "cannot add a mentat store to this database: it already has a table named '" + host_meta +
          "' that is not mentat's");
    MENTAT_ASSIGN_OR_RETURN(int64_t fv, ReadFormatVersion(c));
    *version = static_cast<int>(fv);
    return InspectStore(c, version);
  }
  *version = static_cast<int>(*v);
  if (*version == 0 || beside_other_tables) {
    // A store file's layout keeps its version in user_version: a database with another
    // user_version and a mentat meta table is a store (opened in host mode as it is).
    bool store = *version != 0 && HasFormatMarker(c);
    if (!store) {
      if (beside_other_tables) {
        // A new store beside the application's tables: host mode's layout, which leaves
        // user_version to the application.
        c->set_table_prefix(std::string(kHostTablePrefix));
        MENTAT_ASSIGN_OR_RETURN(std::string clash, ClashingTable(c));
        if (!clash.empty())
          return Status::Corrupt(
              "cannot add a mentat store to this database: it already has a "
              "table named '" +
              clash + "'");
        return FileState::kEmpty;
      }
      if (any) return Status::Corrupt("not a mentat store: the SQLite file has other tables");
      return FileState::kEmpty;
    }
  }
  return InspectStore(c, version);
}

Status CreateTablesOfVersion(Connection* c, int version) {
  if (version < kOldestFormat || version > kFormatVersion)
    return Status::InvalidArgument("no such format version");
  MENTAT_RETURN_IF_ERROR(c->Exec(kTablesV1));
  MENTAT_RETURN_IF_ERROR(c->Exec("INSERT INTO meta VALUES ('format', 'mentat')"));
  MENTAT_RETURN_IF_ERROR(WriteFormatVersion(c, 1));
  if (version >= 2) MENTAT_RETURN_IF_ERROR(Upgrade(c, 1, version));
  return Status::OK();
}

Status CreateTables(Connection* c) {
  if (c->is_pg()) return PgCreateTables(c);
  return CreateTablesOfVersion(c, kFormatVersion);
}

Status Upgrade(Connection* c, int from, int to) {
  if (c->is_pg()) return PgUpgrade(c, from, to);
  if (from < 2 && to >= 2) {
    MENTAT_RETURN_IF_ERROR(c->Exec(kUpgradeV1toV2));
    MENTAT_RETURN_IF_ERROR(WriteFormatVersion(c, 2));
  }
  if (from < 3 && to >= 3) {
    MENTAT_RETURN_IF_ERROR(c->Exec(kUpgradeV2toV3));
    MENTAT_RETURN_IF_ERROR(WriteFormatVersion(c, 3));
  }
  if (from < 4 && to >= 4) {
    // Format 4 reserves the top of :db.part/db for system entities (the store layer
    // installs them: StoreImpl::InstallSystemEntities). A store whose idents already
    // reach into that block cannot take them.
    MENTAT_ASSIGN_OR_RETURN(int64_t next, c->QueryInt("SELECT next FROM parts WHERE part = 0", 0));
    if (next > kSystemIdsStart)
      return Status::Unsupported(
          "cannot upgrade the store to format 4: its idents use entity ids up to " +
          std::to_string(next - 1) + ", and format 4 reserves " + std::to_string(kSystemIdsStart) +
          " and above for system entities");
    MENTAT_RETURN_IF_ERROR(
        c->Exec("UPDATE parts SET end = " + std::to_string(kSystemIdsStart) + " WHERE part = 0"));
    MENTAT_RETURN_IF_ERROR(WriteFormatVersion(c, 4));
  }
  if (from < 5 && to >= 5) {
    MENTAT_RETURN_IF_ERROR(c->Exec(kUpgradeV4toV5));
    MENTAT_RETURN_IF_ERROR(RecountAllAttrStats(c));
    MENTAT_RETURN_IF_ERROR(WriteFormatVersion(c, 5));
  }
  // Format 6 adds system entities only (:db/fn, :db.attr/preds; the store layer installs
  // them): no table changes.
  if (from < 6 && to >= 6) MENTAT_RETURN_IF_ERROR(WriteFormatVersion(c, 6));
  return Status::OK();
}

Status RecountAttrStats(Connection* c, int64_t a, bool value_indexed, bool many) {
  const std::string ix = IndexTerm(value_indexed);
  // One pass over the attribute's values in order: the groups are its distinct values,
  // and the largest groups its common values.
  struct Common {
    int64_t n;
    int type;
    int64_t i;
    double d;
    std::string s;
  };
  std::vector<Common> common;
  int64_t distinct = 0;
  MENTAT_ASSIGN_OR_RETURN(
      auto groups,
      c->Cached("SELECT count(*), v FROM datoms WHERE a = ?1 AND " + ix + " GROUP BY v"));
  groups->BindInt(1, a);
  for (;;) {
    MENTAT_ASSIGN_OR_RETURN(bool row, groups->Step());
    if (!row) break;
    ++distinct;
    int64_t n = groups->ColumnInt(0);
    if (n < 2) continue;
    if (common.size() == static_cast<size_t>(kCommonValuesPerAttr) && n <= common.back().n)
      continue;
    Common cv{n, groups->ColumnType(1), 0, 0, {}};
    if (cv.type == SQLITE_INTEGER) cv.i = groups->ColumnInt(1);
    if (cv.type == SQLITE_FLOAT) cv.d = groups->ColumnDouble(1);
    if (cv.type == SQLITE_TEXT) cv.s = std::string(groups->ColumnText(1));
    if (cv.type == SQLITE_BLOB) cv.s = std::string(groups->ColumnBlob(1));
    if (cv.s.size() > static_cast<size_t>(kCommonValueMaxLength)) continue;
    if (common.size() == static_cast<size_t>(kCommonValuesPerAttr)) common.pop_back();
    auto at = std::find_if(common.begin(), common.end(),
                           [&](const Common& x) { return x.n < n; });  // ties: first in order
    common.insert(at, std::move(cv));
  }
  MENTAT_ASSIGN_OR_RETURN(
      auto counts,
      c->Cached("UPDATE attr_stats SET distinct_values = ?2, distinct_entities = " +
                (many ? "(SELECT count(DISTINCT e) FROM datoms WHERE a = ?1 AND " + ix + ")"
                      : std::string("datoms")) +
                ", distinct_at = datoms WHERE a = ?1"));
  counts->BindInt(1, a);
  counts->BindInt(2, distinct);
  MENTAT_RETURN_IF_ERROR(counts->Run());
  MENTAT_ASSIGN_OR_RETURN(auto clear, c->Cached("DELETE FROM attr_values WHERE a = ?1"));
  clear->BindInt(1, a);
  MENTAT_RETURN_IF_ERROR(clear->Run());
  MENTAT_ASSIGN_OR_RETURN(auto insert,
                          c->Cached("INSERT INTO attr_values (a, v, datoms) VALUES (?1, ?2, ?3)"));
  for (const Common& cv : common) {
    insert->BindInt(1, a);
    if (cv.type == SQLITE_INTEGER) insert->BindInt(2, cv.i);
    if (cv.type == SQLITE_FLOAT) insert->BindDouble(2, cv.d);
    if (cv.type == SQLITE_TEXT) insert->BindText(2, cv.s);
    if (cv.type == SQLITE_BLOB) insert->BindBlob(2, cv.s);
    insert->BindInt(3, cv.n);
    MENTAT_RETURN_IF_ERROR(insert->Run());
    insert->Reset();
  }
  return Status::OK();
}

Status RecountAllAttrStats(Connection* c) {
  // A value's size in bytes (common values are kept up to kCommonValueMaxLength).
  const char* size = c->is_pg() ? "octet_length(v::text)" : "length(CAST(v AS BLOB))";
  return c->Exec(
      "INSERT OR REPLACE INTO attr_stats (a, datoms, distinct_values, distinct_at, "
      "distinct_entities) SELECT a, count(*), count(DISTINCT v), count(*), count(DISTINCT e) "
      "FROM datoms GROUP BY a;"
      "DELETE FROM attr_values;"
      "INSERT INTO attr_values (a, v, datoms) SELECT a, v, n FROM (SELECT a, v, n, "
      "row_number() OVER (PARTITION BY a ORDER BY n DESC, v) AS r FROM (SELECT a, v, count(*) "
      "AS n FROM datoms GROUP BY a, v) AS g WHERE n > 1 AND " +
      std::string(size) + " <= " + std::to_string(kCommonValueMaxLength) +
      ") AS ranked WHERE r <= " + std::to_string(kCommonValuesPerAttr) + ";");
}

Status ApplySettings(Connection* c, const ConnectionSettings& s) {
  std::string sql;
  sql += "PRAGMA busy_timeout = " + std::to_string(s.busy_timeout_ms) + ";";
  if (!s.in_memory) {
    if (!s.read_only) {
      sql += "PRAGMA journal_mode = WAL;";
      // Checkpoint every 10,000 pages (40 MiB of WAL) instead of SQLite's 1,000: a large
      // transaction dirties pages all over the indexes, and checkpointing them less often
      // writes each hot page to the database file fewer times (bulk load: -20% CPU,
      // -30% wall; doc/format.md "Connections and durability").
      sql += "PRAGMA wal_autocheckpoint = " + std::to_string(kWalAutocheckpoint) + ";";
    }
    sql += "PRAGMA mmap_size = " + std::to_string(s.mmap_size) + ";";
  }
  sql += "PRAGMA synchronous = " + std::to_string(s.synchronous) + ";";
  sql += "PRAGMA temp_store = " + std::to_string(s.temp_store) + ";";
  sql += "PRAGMA cache_size = -" + std::to_string(s.cache_size_kib) + ";";
  sql += "PRAGMA foreign_keys = OFF;";
  // `journal_mode = WAL` fails with SQLITE_BUSY at once, without calling the busy handler,
  // while another connection holds a lock it needs (another process setting up the same new
  // file): retry for as long as the busy timeout allows. The statements are idempotent.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(s.busy_timeout_ms);
  for (int attempt = 1;; ++attempt) {
    Status st = c->Exec(sql);
    if (st.code() != Code::kBusy || std::chrono::steady_clock::now() >= deadline) return st;
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(attempt, 10)));
  }
}

}  // namespace mentat::storage
