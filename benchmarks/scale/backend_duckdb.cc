// The "duckdb" backend: mentat as a DuckDB extension (ext/duckdb), called the way a DuckDB
// user calls it. Each process opens one in-memory DuckDB (libduckdb.so through
// ext/duckdb/host, DuckDB's C API), loads build/mentat.duckdb_extension into it, and each
// session is one DuckDB connection. A query is one SQL statement
//
//   SELECT * FROM edn_q('<store>', '<query>', '<options JSON>')
//
// whose typed columns (BIGINT ids and longs, VARCHAR strings, VARCHAR ':ns/name' keywords)
// are read back into EDN values; the pull scenario uses `format := 'edn'` (a pull map has
// no typed column), writes are `SELECT edn_t(...)` and plans `SELECT edn_explain(...)`.
// The C API has no statement parameters for table functions here, so every call is parsed
// and bound by DuckDB: that cost is part of what a SQL user pays, and part of the figure.
//
// Built only when the DuckDB pieces are (the mentat_duckdb_host target, i.e. ext/duckdb
// configured with its npm packages); otherwise OpenDuckdb says the backend is unavailable.
// libduckdb.so is $MENTAT_DUCKDB_LIBRARY, else the one ext/duckdb was configured with; the
// extension is $MENTAT_DUCKDB_EXTENSION, else build/mentat.duckdb_extension beside the
// driver's build tree.
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "duckdb_host.h"
#include "scale.h"

namespace mentat::scale {

namespace {

using duckdb_host::Connection;
using duckdb_host::DuckHost;
using duckdb_host::QueryOutput;
using duckdb_host::Quote;

std::string ExtensionPath() {
  if (const char* p = std::getenv("MENTAT_DUCKDB_EXTENSION")) return p;
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    auto beside = exe.parent_path().parent_path().parent_path() / "mentat.duckdb_extension";
    if (std::filesystem::exists(beside)) return beside.string();
  }
  return duckdb_host::DefaultExtensionPath();
}

// One cell of a typed edn_q column as an EDN value: BIGINT as an integer, a keyword column
// (`keyword`) as a keyword, any other text as a string; NULL as nil.
Result<edn::Value> Cell(const std::optional<std::string>& text, const std::string& type,
                        bool keyword) {
  if (!text) return edn::Value::Nil();
  if (type == "BIGINT" || type == "INTEGER") {
    try {
      size_t used = 0;
      int64_t v = std::stoll(*text, &used);
      if (used == text->size()) return edn::Value::Int(v);
    } catch (const std::exception&) {
    }
    return Status::Internal("duckdb: BIGINT cell '" + *text + "' is not an integer");
  }
  if (keyword) {
    if (text->size() < 2 || (*text)[0] != ':')
      return Status::Internal("duckdb: keyword cell '" + *text + "' lacks its ':'");
    return edn::Value::Keyword(std::string_view(*text).substr(1));
  }
  return edn::Value::String(*text);
}

class DuckSession : public Session {
 public:
  DuckSession(std::unique_ptr<Connection> con, std::string store)
      : con_(std::move(con)), store_(Quote(store)) {}

  Result<Rows> PointLookup(const std::string& email) override {
    return RowsOf(kQ1PointLookup, Inputs({email}), {});
  }
  Result<Rows> RefTraversal(const std::string& email, std::optional<Entid> as_of) override {
    nlohmann::json o = Inputs({email});
    if (as_of) o["asOf"] = *as_of;
    return RowsOf(kQ2RefTraversal, o, {2});
  }
  Result<Rows> Aggregate() override { return RowsOf(kQ3Aggregate, nlohmann::json::object(), {0}); }
  Result<Rows> PredicateScan(int64_t min) override {
    return RowsOf(kQ4PredicateScan, {{"inputs", {min}}}, {});
  }
  Result<Rows> Since(Entid t) override { return RowsOf(kQSince, {{"since", t}}, {}); }
  Result<Rows> InputBindings(const std::vector<std::string>& emails) override {
    return RowsOf(kQInputBindings, {{"inputs", {emails}}}, {});
  }
  Result<edn::Value> Pull(Entid e) override {
    nlohmann::json o = {{"inputs", {e}}};
    MENTAT_ASSIGN_OR_RETURN(QueryOutput out,
                            Run("SELECT result FROM edn_q(" + store_ + ", " + Quote(kQPull) + ", " +
                                Quote(o.dump()) + ", format := 'edn')"));
    if (out.rows.size() != 1 || out.rows[0].size() != 1)
      return Status::Internal("duckdb: edn_q(format := 'edn') gave " +
                              std::to_string(out.rows.size()) + " rows, expected 1");
    if (!out.rows[0][0] || out.rows[0][0]->empty()) return edn::Value::Nil();
    return edn::Read(*out.rows[0][0]);
  }
  Result<Rows> AllStates() override {
    return RowsOf("[:find ?i ?s :where [?i :issue/state ?s]]", nlohmann::json::object(), {1});
  }
  Status SetState(Entid issue, const std::string& state) override {
    return Transact(SetStateTx(issue, state));
  }
  Status AddLabel(Entid issue, const std::string& label) override {
    return Transact(AddLabelTx(issue, label));
  }
  Result<std::string> Explain(const std::string& scenario, const Context& ctx) override {
    auto [q, o] = ExplainCall(scenario, ctx);
    if (q.empty()) return Status::InvalidArgument("no query for scenario " + scenario);
    MENTAT_ASSIGN_OR_RETURN(QueryOutput out, Run("SELECT edn_explain(" + store_ + ", " + Quote(q) +
                                                 ", " + Quote(o.dump()) + ")"));
    std::string plan = out.Cell(0, 0);
    // DuckDB's own plan of the statement a scenario runs, after mentat's.
    std::string sql = "SELECT * FROM edn_q(" + store_ + ", " + Quote(q) + ", " + Quote(o.dump()) +
                      (scenario == "pull" ? ", format := 'edn')" : ")");
    auto duck = Run("EXPLAIN " + sql);
    std::string duck_plan;
    if (duck.ok()) {
      for (size_t r = 0; r < duck->rows.size(); ++r) duck_plan += duck->Cell(r, 1) + "\n";
    } else {
      duck_plan = "error: " + duck.status().ToString() + "\n";
    }
    return sql + "\n\n-- edn_explain:\n" + plan + "\n\n-- DuckDB EXPLAIN:\n" + duck_plan;
  }

 private:
  static nlohmann::json Inputs(std::initializer_list<std::string> values) {
    return {{"inputs", nlohmann::json::array_t(values.begin(), values.end())}};
  }

  Result<QueryOutput> Run(const std::string& sql) {
    auto out = con_->Query(sql);
    if (!out.ok()) return Status(out.status().code(), "duckdb: " + out.status().message());
    return out;
  }

  // The relation of `query` from edn_q's typed columns; `keywords` are the column indexes
  // holding keywords (VARCHAR ':ns/name').
  Result<Rows> RowsOf(std::string_view query, const nlohmann::json& options,
                      std::initializer_list<size_t> keywords) {
    MENTAT_ASSIGN_OR_RETURN(QueryOutput out,
                            Run("SELECT * FROM edn_q(" + store_ + ", " + Quote(query) + ", " +
                                Quote(options.dump()) + ")"));
    std::vector<bool> is_keyword(out.types.size(), false);
    for (size_t k : keywords)
      if (k < is_keyword.size()) is_keyword[k] = true;
    Rows rows;
    rows.reserve(out.rows.size());
    for (const auto& cells : out.rows) {
      Row row;
      row.reserve(cells.size());
      for (size_t c = 0; c < cells.size(); ++c) {
        MENTAT_ASSIGN_OR_RETURN(edn::Value v, Cell(cells[c], out.types[c], is_keyword[c]));
        row.push_back(std::move(v));
      }
      rows.push_back(std::move(row));
    }
    return rows;
  }

  Status Transact(const std::string& edn) {
    return Run("SELECT edn_t(" + store_ + ", " + Quote(edn) + ")").status();
  }

  std::unique_ptr<Connection> con_;
  std::string store_;  // the store path as a SQL literal
};

class DuckBackend : public Backend {
 public:
  DuckBackend(std::unique_ptr<DuckHost> host, std::string store)
      : host_(std::move(host)), store_(std::move(store)) {}
  std::string name() const override { return "duckdb"; }
  Result<std::unique_ptr<Session>> Connect() override {
    MENTAT_ASSIGN_OR_RETURN(auto con, host_->Connect());
    return std::unique_ptr<Session>(std::make_unique<DuckSession>(std::move(con), store_));
  }

 private:
  std::unique_ptr<DuckHost> host_;
  std::string store_;
};

}  // namespace

Result<std::unique_ptr<Backend>> OpenDuckdb(const std::string& store) {
  std::string ext = ExtensionPath();
  if (!std::filesystem::exists(ext))
    return Status::NotFound("duckdb: no extension at " + ext +
                            " (build the mentat_duckdb_extension target or set "
                            "MENTAT_DUCKDB_EXTENSION)");
  MENTAT_ASSIGN_OR_RETURN(auto host, DuckHost::Open());
  // LOAD is per database: once here, then every connection of this host has the functions.
  MENTAT_ASSIGN_OR_RETURN(auto con, host->Connect());
  auto loaded = con->Query("LOAD " + Quote(ext));
  if (!loaded.ok())
    return Status(loaded.status().code(),
                  "duckdb: cannot load " + ext + ": " + loaded.status().message());
  return std::unique_ptr<Backend>(std::make_unique<DuckBackend>(std::move(host), store));
}

std::string DuckdbAvailability() {
  std::string ext = ExtensionPath();
  if (!std::filesystem::exists(ext)) return "no extension at " + ext;
  std::string lib = duckdb_host::DefaultLibraryPath();
  if (!std::filesystem::exists(lib)) return "no libduckdb.so at " + lib;
  return "";
}

std::string DuckdbVersion() {
  std::string lib = duckdb_host::DefaultLibraryPath();
  auto host = DuckHost::Open();
  if (!host.ok()) return "unavailable (" + host.status().message() + ")";
  return (*host)->version() + " (" + lib + ")";
}

}  // namespace mentat::scale
