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
  const char* usage =
      "usage: .import FILE [--csv|--json|--jsonl|--edn] [--as NS] [--map COL=ATTR] "
      "[--unique COL] [--ref COL=ATTR] [--dry-run] [--on-error skip|abort] [--batch N]";
  // COL=ATTR, for --map and --ref.
  auto pair = [&](const std::string& flag, const std::string& v,
                  std::map<std::string, std::string>* into) -> Status {
    size_t eq = v.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == v.size())
      return Status::InvalidArgument(flag + " takes COL=ATTR, got '" + v + "'");
    (*into)[v.substr(0, eq)] = v.substr(eq + 1);
    return Status::OK();
  };
  ImportOptions options;
  std::string file;
  auto words = SplitWords(rest);
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w == "--csv") {
      options.format = ImportFormat::kCsv;
    } else if (w == "--edn") {
      options.format = ImportFormat::kEdn;
    } else if (w == "--json") {
      options.format = ImportFormat::kJson;
    } else if (w == "--jsonl" || w == "--ndjson") {
      options.format = ImportFormat::kJsonl;
    } else if (w == "--dry-run") {
      options.dry_run = true;
    } else if (w == "--as" || w == "--map" || w == "--unique" || w == "--ref" ||
               w == "--on-error") {
      if (i + 1 >= words.size()) return Status::InvalidArgument(w + " needs a value; " + usage);
      const std::string& v = words[++i];
      if (w == "--as") {
        std::string ns = !v.empty() && v[0] == ':' ? v.substr(1) : v;
        if (ns.empty() || ns.find('/') != std::string::npos)
          return Status::InvalidArgument("--as takes a namespace (person), got '" + v + "'");
        options.as_ns = ns;
      } else if (w == "--map") {
        MENTAT_RETURN_IF_ERROR(pair(w, v, &options.column_map));
      } else if (w == "--ref") {
        MENTAT_RETURN_IF_ERROR(pair(w, v, &options.ref_columns));
      } else if (w == "--unique") {
        options.unique_columns.insert(v);
      } else if (v == "skip" || v == "abort") {
        options.skip_errors = v == "skip";
      } else {
        return Status::InvalidArgument("--on-error takes skip or abort, got '" + v + "'");
      }
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
  // Skipped records and the dry run are reported on the output, before the summary.
  options.report = &out_;
  ImportStats stats;
  Status st = ImportFile(*store_, file, options, &stats);
  bar.Clear();
  if (!st.ok()) return st;
  if (options.dry_run) {
    out_ << ";; dry run: " << stats.entities << (stats.entities == 1 ? " entity" : " entities")
         << " and " << stats.created.size() << " new attribute"
         << (stats.created.size() == 1 ? "" : "s") << " would be written; nothing was\n";
    return Status::OK();
  }
  std::string text = "imported " + std::to_string(stats.transactions) +
                     (stats.transactions == 1 ? " transaction (" : " transactions (") +
                     std::to_string(stats.datoms) + " datoms) from " + file;
  if (!stats.created.empty()) {
    text += "; created";
    for (const auto& a : stats.created) text += " " + a;
  }
  if (stats.skipped) text += "; skipped " + std::to_string(stats.skipped) + " records";
  std::vector<std::string> keys = {"file", "transactions", "datoms"};
  std::vector<edn::Value> values = {edn::Value::String(file),
                                    edn::Value::Int(static_cast<int64_t>(stats.transactions)),
                                    edn::Value::Int(static_cast<int64_t>(stats.datoms))};
  if (!stats.created.empty() || stats.skipped) {
    edn::Vec created;
    for (const auto& a : stats.created) created.push_back(edn::Value::Keyword(a.substr(1)));
    keys.insert(keys.end(), {"created", "skipped"});
    values.push_back(edn::Value::Vector(std::move(created)));
    values.push_back(edn::Value::Int(static_cast<int64_t>(stats.skipped)));
  }
  PrintSummary(text, keys, values);
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
