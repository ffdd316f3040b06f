// bulk_load: transacts the generated files into a new embedded store, in order, one
// transaction per line (replacing each "@@<k>" with issue k's entity id), and records what
// later runs need: the tx ids of the named points (t_mid, t_since) and every issue's entity
// id (from the tempids "i<k>"). load-graph: the extra graph phase (graph.edn) on a loaded
// store, recorded in its load record.
#include <sqlite3.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "commands.h"
#include "mentat/store.h"

namespace mentat::scale {
namespace {

// Replaces every "@@<k>" in `line` with the entity id of issue k.
Result<std::string> ResolveIssueRefs(const std::string& line, const std::vector<Entid>& eids) {
  std::string out;
  out.reserve(line.size() + 16);
  size_t i = 0;
  while (i < line.size()) {
    size_t at = line.find("@@", i);
    if (at == std::string::npos) {
      out.append(line, i, std::string::npos);
      break;
    }
    out.append(line, i, at - i);
    size_t j = at + 2;
    int64_t k = 0;
    while (j < line.size() && line[j] >= '0' && line[j] <= '9') k = k * 10 + (line[j++] - '0');
    if (j == at + 2 || k >= static_cast<int64_t>(eids.size()) || eids[k] == 0)
      return Status::InvalidArgument("bad issue reference at byte " + std::to_string(at));
    out += std::to_string(eids[k]);
    i = j;
  }
  return out;
}

// Checkpoints the WAL into the main file and counts the datoms the load added (every
// datom of a transaction after the bootstrap one).
Status Finish(const std::string& store, int64_t* datoms) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(store.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_close(db);
    return Status::Io("cannot open " + store);
  }
  sqlite3_busy_timeout(db, 10000);
  rc = sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", nullptr, nullptr, nullptr);
  sqlite3_stmt* st = nullptr;
  if (rc == SQLITE_OK)
    rc = sqlite3_prepare_v2(db, "SELECT count(*) FROM datoms WHERE tx > 268435456", -1, &st,
                            nullptr);
  if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) *datoms = sqlite3_column_int64(st, 0);
  std::string err = rc == SQLITE_OK ? "" : sqlite3_errmsg(db);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return err.empty() ? Status::OK() : Status::Io(store + ": " + err);
}

int64_t FileBytes(const std::string& path) {
  std::error_code ec;
  auto n = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<int64_t>(n);
}

}  // namespace

Status Load(const std::string& data_dir, const std::string& store, const std::string& out_dir) {
  MENTAT_ASSIGN_OR_RETURN(Context ctx, LoadContext(data_dir, store, /*meta_only=*/true));
  for (const char* suffix : {"", "-wal", "-shm", ".load.json", ".issues"})
    std::filesystem::remove(store + suffix);
  const auto& files = ctx.meta["files"];
  const int64_t issues_file = 2, history_file = 3;  // positions in meta.files
  std::vector<Entid> tx_ids;
  std::vector<Entid> issue_eids(ctx.n_issues, 0);

  const double t0 = Now();
  double close_t0 = t0;
  double next_report = t0 + 10;
  {
    auto opened = Store::open(store);
    if (!opened.ok()) return opened.status();
    std::unique_ptr<Store> s = std::move(*opened);
    for (size_t f = 0; f < files.size(); ++f) {
      const double file_t0 = Now();
      const size_t file_tx0 = tx_ids.size();
      std::string path = data_dir + "/" + files[f].get<std::string>();
      std::ifstream in(path);
      if (!in) return Status::NotFound("cannot read " + path);
      std::string line;
      int64_t line_no = 0;
      while (std::getline(in, line)) {
        ++line_no;
        if (line.empty()) continue;
        if (static_cast<int64_t>(f) == history_file) {
          MENTAT_ASSIGN_OR_RETURN(line, ResolveIssueRefs(line, issue_eids));
        }
        auto r = s->transact(line);
        if (!r.ok())
          return Status(r.status().code(),
                        path + ":" + std::to_string(line_no) + ": " + r.status().message());
        tx_ids.push_back(r->tx_id);
        if (static_cast<int64_t>(f) == issues_file) {
          for (const auto& [tempid, e] : r->tempids) {
            if (tempid.size() < 2 || tempid[0] != 'i') continue;
            int64_t k = std::stoll(tempid.substr(1));
            if (k >= 0 && k < ctx.n_issues) issue_eids[k] = e;
          }
        }
        if (Now() > next_report) {
          std::fprintf(stderr, "load: %zu of %lld transactions, %.0f s\n", tx_ids.size(),
                       static_cast<long long>(ctx.meta["n_tx"].get<int64_t>()), Now() - t0);
          next_report += 10;
        }
      }
      std::fprintf(stderr, "load: %s: %zu transactions in %.2f s\n",
                   files[f].get<std::string>().c_str(), tx_ids.size() - file_tx0, Now() - file_t0);
    }
    close_t0 = Now();
  }  // closes the store
  std::fprintf(stderr, "load: closing the store: %.2f s\n", Now() - close_t0);
  const double wall = Now() - t0;

  if (static_cast<int64_t>(tx_ids.size()) != ctx.meta["n_tx"].get<int64_t>())
    return Status::Internal("loaded " + std::to_string(tx_ids.size()) +
                            " transactions, meta.json "
                            "says " +
                            ctx.meta["n_tx"].dump());
  for (int64_t k = 0; k < ctx.n_issues; ++k)
    if (issue_eids[k] == 0) return Status::Internal("no entity id for issue " + std::to_string(k));
  const int64_t bytes_before_checkpoint = FileBytes(store) + FileBytes(store + "-wal");
  int64_t datoms_in_store = 0;
  MENTAT_RETURN_IF_ERROR(Finish(store, &datoms_in_store));
  const int64_t bytes = FileBytes(store) + FileBytes(store + "-wal");

  nlohmann::json load = {{"scale", ctx.scale},
                         {"seed", ctx.meta["seed"]},
                         {"gen_version", kGenVersion},
                         {"n_tx", tx_ids.size()},
                         {"first_tx", tx_ids.front()},
                         {"last_tx", tx_ids.back()},
                         {"t_mid_tx", tx_ids.at(ctx.meta["t_mid"].get<size_t>())},
                         {"t_since_tx", tx_ids.at(ctx.meta["t_since"].get<size_t>())},
                         {"wall_s", wall},
                         {"n_datoms", ctx.n_datoms},
                         {"datoms_in_store", datoms_in_store},
                         {"store_bytes", bytes},
                         {"store_bytes_before_checkpoint", bytes_before_checkpoint}};
  {
    std::ofstream out(store + ".load.json");
    out << load.dump(1) << "\n";
    std::ofstream eids(store + ".issues", std::ios::binary);
    eids.write(reinterpret_cast<const char*>(issue_eids.data()),
               static_cast<std::streamsize>(issue_eids.size() * sizeof(Entid)));
    if (!out || !eids) return Status::Io("cannot write the load record beside " + store);
  }
  std::string note = datoms_in_store == ctx.n_datoms
                         ? ""
                         : "store has " + std::to_string(datoms_in_store) + " datoms";
  if (!out_dir.empty()) {
    MENTAT_RETURN_IF_ERROR(AppendLine(
        out_dir + "/loads.csv", "backend,scale,n_datoms,n_tx,wall_s,datoms_per_s,store_bytes,note",
        "embedded," + ctx.scale + "," + std::to_string(ctx.n_datoms) + "," +
            std::to_string(tx_ids.size()) + "," + Fixed(wall, 3) + "," +
            Fixed(ctx.n_datoms / wall, 0) + "," + std::to_string(bytes) + "," + note));
  }
  std::fprintf(stderr, "load: %s: %lld datoms in %.1f s (%.0f datoms/s), %.1f MiB%s%s\n",
               ctx.scale.c_str(), static_cast<long long>(ctx.n_datoms), wall, ctx.n_datoms / wall,
               bytes / 1048576.0, note.empty() ? "" : "; ", note.c_str());
  return Status::OK();
}

Status LoadGraph(const std::string& data_dir, const std::string& store) {
  MENTAT_ASSIGN_OR_RETURN(Context ctx, LoadContext(data_dir, store));
  if (ctx.graph) return Status::InvalidArgument(store + " has the graph already");
  const auto& g = ctx.meta["graph"];
  const std::string path = data_dir + "/" + g.value("file", "graph.edn");
  std::ifstream in(path);
  if (!in) return Status::NotFound("cannot read " + path);
  const double t0 = Now();
  int64_t n_tx = 0;
  {
    MENTAT_ASSIGN_OR_RETURN(std::unique_ptr<Store> s, Store::open(store));
    std::string line;
    int64_t line_no = 0;
    while (std::getline(in, line)) {
      ++line_no;
      if (line.empty()) continue;
      MENTAT_ASSIGN_OR_RETURN(line, ResolveIssueRefs(line, ctx.issue_eids));
      auto r = s->transact(line);
      if (!r.ok())
        return Status(r.status().code(),
                      path + ":" + std::to_string(line_no) + ": " + r.status().message());
      ++n_tx;
    }
  }
  if (n_tx != g.value("n_tx", int64_t{-1}))
    return Status::Internal("loaded " + std::to_string(n_tx) +
                            " graph transactions, meta.json says " +
                            g.value("n_tx", nlohmann::json()).dump());
  int64_t datoms_in_store = 0;
  MENTAT_RETURN_IF_ERROR(Finish(store, &datoms_in_store));
  const int64_t expected = ctx.n_datoms + g.value("n_datoms", int64_t{0});
  if (datoms_in_store != expected)
    return Status::Internal(store + " has " + std::to_string(datoms_in_store) +
                            " datoms after the graph, expected " + std::to_string(expected));
  MENTAT_ASSIGN_OR_RETURN(std::string load_text, ReadFile(store + ".load.json"));
  auto load = nlohmann::json::parse(load_text, nullptr, false);
  load["graph"] = {{"n_tx", n_tx}, {"wall_s", Now() - t0}, {"datoms_in_store", datoms_in_store}};
  std::ofstream out(store + ".load.json");
  out << load.dump(1) << "\n";
  if (!out) return Status::Io("cannot write " + store + ".load.json");
  std::fprintf(stderr, "load-graph: %lld transactions, %lld datoms in %.1f s\n",
               static_cast<long long>(n_tx),
               static_cast<long long>(g.value("n_datoms", int64_t{0})), Now() - t0);
  return Status::OK();
}

}  // namespace mentat::scale
