// .import: loading EDN transaction files, and records (CSV, JSON, JSON Lines) into a store.
//
// EDN: every top-level form of the file is one transaction (a vector of entity maps and
// list forms), read one at a time with edn::Reader and committed in order.
// CSV (a header row, then one entity per row), JSON (an array of objects) and JSON Lines
// (an object per line): one entity per record, columns naming attributes, attributes that
// do not exist yet inferred from the values (import_records.h); records are committed in
// batches.
//
// Every committed transaction stays committed when a later one fails or the import is
// cancelled; a failed transaction writes nothing.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "mentat/store.h"

namespace mentat::cli {

enum class ImportFormat { kAuto, kEdn, kCsv, kJson, kJsonl };

struct ImportOptions {
  // kAuto: by the name: *.csv, *.json, *.jsonl or *.ndjson, else EDN.
  ImportFormat format = ImportFormat::kAuto;
  size_t csv_batch_rows = 1000;  // records per transaction
  // Records (import_records.h): --as NS, --map COL=ATTR, --unique COL, --ref COL=ATTR,
  // --dry-run, --on-error skip (skip_errors) or abort.
  std::string as_ns;
  std::map<std::string, std::string> column_map;
  std::set<std::string> unique_columns;
  std::map<std::string, std::string> ref_columns;
  bool dry_run = false;
  bool skip_errors = false;
  // Where skipped records and the dry run are reported (standard error when null).
  std::ostream* report = nullptr;
  // Polled before each transaction; when it becomes true the import stops with
  // kInterrupted, keeping every transaction committed so far.
  const std::atomic<bool>* cancel = nullptr;
  // Called after each transaction with the bytes consumed and datoms committed so far.
  std::function<void(uint64_t done_bytes, uint64_t datoms)> progress;
  bool collect_tempids = false;  // fill ImportStats::tempids
};

struct ImportStats {
  uint64_t transactions = 0;
  uint64_t datoms = 0;  // datoms asserted or retracted, without the :db/txInstant datoms
  std::map<std::string, Entid> tempids;  // every tempid of every transaction (last wins)
  uint64_t entities = 0;                 // records imported (or, in a dry run, that would be)
  uint64_t skipped = 0;                  // records left out (--on-error skip)
  std::vector<std::string> created;      // attributes the import created (":ns/name")
};

// Imports `text` (the contents of `name`). Errors name the file and the line:column of
// the failing form, show the line with a caret, and say how much was imported before.
// `stats` (required) holds what was committed, also on error.
Status ImportText(Store& store, std::string_view text, const std::string& name,
                  const ImportOptions& options, ImportStats* stats);

// Imports the file at `path` (memory-mapped, so large files are not copied).
Status ImportFile(Store& store, const std::string& path, const ImportOptions& options,
                  ImportStats* stats);

// The size of the file at `path` in bytes, or 0.
uint64_t FileSize(const std::string& path);

}  // namespace mentat::cli
