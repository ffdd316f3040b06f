// .import: loading EDN transaction files and CSV files into a store.
//
// EDN: every top-level form of the file is one transaction (a vector of entity maps and
// list forms), read one at a time with edn::Reader and committed in order.
// CSV: a header row names an attribute per column (":person/name" or "person/name"; a
// ":db/id" column gives entity ids, idents, lookup refs or tempids); every other row is
// one entity, its cells typed by the column's attribute (empty cells are skipped); rows
// are committed in batches.
//
// Every committed transaction stays committed when a later one fails or the import is
// cancelled; a failed transaction writes nothing.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "mentat/store.h"

namespace mentat::cli {

enum class ImportFormat { kAuto, kEdn, kCsv };

struct ImportOptions {
  ImportFormat format = ImportFormat::kAuto;  // kAuto: CSV for *.csv names, else EDN
  size_t csv_batch_rows = 1000;               // CSV rows per transaction
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
