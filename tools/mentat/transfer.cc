// .import and .export.
#include <unistd.h>

#include <charconv>

#include "export.h"
#include "import.h"
#include "input.h"
#include "interrupt.h"
#include "progress.h"
#include "session.h"

namespace mentat::cli {

namespace {

Result<size_t> ParseCount(const std::string& v) {
  size_t n = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || p != v.data() + v.size() || n == 0)
    return Status::InvalidArgument("--batch needs a positive number, got '" + v + "'");
  return n;
}

}  // namespace

Status Session::Import(const std::string& rest) {
  MENTAT_RETURN_IF_ERROR(RequireStore());
  const char* usage = "usage: .import FILE [--csv|--edn] [--batch N]";
  ImportOptions options;
  std::string file;
  auto words = SplitWords(rest);
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w == "--csv") {
      options.format = ImportFormat::kCsv;
    } else if (w == "--edn") {
      options.format = ImportFormat::kEdn;
    } else if (w == "--batch") {
      if (i + 1 >= words.size()) return Status::InvalidArgument(usage);
      MENTAT_ASSIGN_OR_RETURN(options.csv_batch_rows, ParseCount(words[++i]));
    } else if (w.size() > 1 && w[0] == '-' && w.rfind("--", 0) == 0) {
      return Status::InvalidArgument("unknown option '" + w + "'; " + usage);
    } else if (file.empty()) {
      file = w;
    } else {
      return Status::InvalidArgument(usage);
    }
  }
  if (file.empty()) return Status::InvalidArgument(usage);
  Progress bar(progress_, STDERR_FILENO, file, FileSize(file));
  options.cancel = &CancelFlag();
  options.progress = [&](uint64_t done, uint64_t datoms) { bar.Update(done, datoms); };
  ImportStats stats;
  Status st = ImportFile(*store_, file, options, &stats);
  bar.Clear();
  if (!st.ok()) return st;
  PrintSummary("imported " + std::to_string(stats.transactions) +
                   (stats.transactions == 1 ? " transaction (" : " transactions (") +
                   std::to_string(stats.datoms) + " datoms) from " + file,
               {"file", "transactions", "datoms"},
               {edn::Value::String(file), edn::Value::Int(static_cast<int64_t>(stats.transactions)),
                edn::Value::Int(static_cast<int64_t>(stats.datoms))});
  return Status::OK();
}

Status Session::Export(const std::string& rest) {
  MENTAT_RETURN_IF_ERROR(RequireStore());
  const char* usage = "usage: .export [FILE] [--since T] [--batch N]";
  ExportOptions options;
  std::string file;
  auto words = SplitWords(rest);
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w == "--since") {
      if (i + 1 >= words.size()) return Status::InvalidArgument(usage);
      // --since #inst "2024-01-31T10:00:00Z": the tag and the quoted instant are two words.
      if (words[i + 1] == "#inst" && i + 2 < words.size()) ++i;
      MENTAT_ASSIGN_OR_RETURN(TxPoint t, ParseTxPoint(words[++i]));
      options.since = t;
    } else if (w == "--batch") {
      if (i + 1 >= words.size()) return Status::InvalidArgument(usage);
      MENTAT_ASSIGN_OR_RETURN(options.batch_datoms, ParseCount(words[++i]));
    } else if (w.rfind("--", 0) == 0) {
      return Status::InvalidArgument("unknown option '" + w + "'; " + usage);
    } else if (file.empty()) {
      file = w;
    } else {
      return Status::InvalidArgument(usage);
    }
  }
  if (file.empty()) file = "-";  // as sqlite3's .dump: to the output
  ExportStats stats;
  if (file == "-") return cli::Export(*store_, out_, options, &stats);
  MENTAT_RETURN_IF_ERROR(ExportFile(*store_, file, options, &stats));
  PrintSummary("exported " + std::to_string(stats.entities) + " entities (" +
                   std::to_string(stats.datoms) + " datoms) in " +
                   std::to_string(stats.transactions) +
                   (stats.transactions == 1 ? " transaction to " : " transactions to ") + file,
               {"file", "entities", "datoms", "transactions"},
               {edn::Value::String(file), edn::Value::Int(static_cast<int64_t>(stats.entities)),
                edn::Value::Int(static_cast<int64_t>(stats.datoms)),
                edn::Value::Int(static_cast<int64_t>(stats.transactions))});
  return Status::OK();
}

}  // namespace mentat::cli
