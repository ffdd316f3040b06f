// The "sqlite-ext" backend: mentat as an SQLite loadable extension (ext/sqlite), called the
// way an SQLite user calls it: a host connection loads libmentat_sqlite.so and every
// operation is one `SELECT edn_q(store, query, options, 'edn')` (edn_t for writes), with
// the store path, the query text and the options JSON as parameters. The extension keeps
// the store open in its store cache between calls.
//
// The extension is found at $MENTAT_SQLITE_EXT, else at build/libmentat_sqlite.so beside
// the build tree of this driver (build/benchmarks/scale/mentat-scale).
#include <sqlite3.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "scale.h"

namespace mentat::scale {
namespace {

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
struct StmtFinalizer {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};

std::string ExtensionPath() {
  if (const char* p = std::getenv("MENTAT_SQLITE_EXT")) return p;
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "libmentat_sqlite.so";
  return (exe.parent_path().parent_path().parent_path() / "libmentat_sqlite.so").string();
}

class ExtSession : public Session {
 public:
  static Result<std::unique_ptr<Session>> Open(const std::string& store) {
    sqlite3* raw = nullptr;
    int rc =
        sqlite3_open_v2(":memory:", &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr);
    std::unique_ptr<ExtSession> s(new ExtSession(raw, store));
    if (rc != SQLITE_OK) return Status::Io(std::string("sqlite-ext: ") + sqlite3_errstr(rc));
    sqlite3_enable_load_extension(raw, 1);
    char* err = nullptr;
    std::string path = ExtensionPath();
    if (sqlite3_load_extension(raw, path.c_str(), nullptr, &err) != SQLITE_OK) {
      std::string msg = err ? err : "unknown error";
      sqlite3_free(err);
      return Status::NotFound("sqlite-ext: cannot load " + path + ": " + msg +
                              " (build the mentat_sqlite target or set MENTAT_SQLITE_EXT)");
    }
    MENTAT_RETURN_IF_ERROR(s->Prepare("SELECT edn_q(?1, ?2, ?3, 'edn')", &s->q_));
    MENTAT_RETURN_IF_ERROR(s->Prepare("SELECT edn_t(?1, ?2)", &s->t_));
    MENTAT_RETURN_IF_ERROR(s->Prepare("SELECT edn_explain(?1, ?2, ?3)", &s->explain_));
    return std::unique_ptr<Session>(std::move(s));
  }

  Result<Rows> PointLookup(const std::string& email) override {
    return RowsOf(kQ1PointLookup, Inputs({email}));
  }
  Result<Rows> RefTraversal(const std::string& email, std::optional<Entid> as_of) override {
    nlohmann::json o = Inputs({email});
    if (as_of) o["asOf"] = *as_of;
    return RowsOf(kQ2RefTraversal, o);
  }
  Result<Rows> Aggregate() override { return RowsOf(kQ3Aggregate, nlohmann::json::object()); }
  Result<Rows> PredicateScan(int64_t min) override {
    return RowsOf(kQ4PredicateScan, {{"inputs", {min}}});
  }
  Result<Rows> Since(Entid t) override { return RowsOf(kQSince, {{"since", t}}); }
  Result<Rows> InputBindings(const std::vector<std::string>& emails) override {
    return RowsOf(kQInputBindings, {{"inputs", {emails}}});
  }
  Result<edn::Value> Pull(Entid e) override { return Query(kQPull, {{"inputs", {e}}}); }
  Result<Rows> AllStates() override {
    return RowsOf("[:find ?i ?s :where [?i :issue/state ?s]]", nlohmann::json::object());
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
    MENTAT_ASSIGN_OR_RETURN(std::string plan, Call(explain_.get(), q, o.dump()));
    return "SELECT edn_explain(store, query, '" + o.dump() + "')\n\n" + plan;
  }

 private:
  ExtSession(sqlite3* db, std::string store) : db_(db), store_(std::move(store)) {}

  static nlohmann::json Inputs(std::initializer_list<std::string> values) {
    return {{"inputs", nlohmann::json::array_t(values.begin(), values.end())}};
  }

  Status Prepare(const char* sql, std::unique_ptr<sqlite3_stmt, StmtFinalizer>* out) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v3(db_.get(), sql, -1, SQLITE_PREPARE_PERSISTENT, &s, nullptr) != SQLITE_OK)
      return Status::Io(std::string("sqlite-ext: ") + sqlite3_errmsg(db_.get()));
    out->reset(s);
    return Status::OK();
  }

  // Runs `stmt` with (store, text[, options]) and returns its one text column.
  Result<std::string> Call(sqlite3_stmt* stmt, std::string_view text, const std::string& options) {
    sqlite3_bind_text(stmt, 1, store_.data(), static_cast<int>(store_.size()), SQLITE_STATIC);
    sqlite3_bind_text(stmt, 2, text.data(), static_cast<int>(text.size()), SQLITE_STATIC);
    if (sqlite3_bind_parameter_count(stmt) >= 3)
      sqlite3_bind_text(stmt, 3, options.data(), static_cast<int>(options.size()), SQLITE_STATIC);
    int rc = sqlite3_step(stmt);
    std::string out;
    if (rc == SQLITE_ROW && sqlite3_column_type(stmt, 0) == SQLITE_TEXT)
      out.assign(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)),
                 sqlite3_column_bytes(stmt, 0));
    std::string err = rc == SQLITE_ROW ? "" : sqlite3_errmsg(db_.get());
    sqlite3_reset(stmt);
    if (!err.empty()) return Status::Io("sqlite-ext: " + err);
    return out;
  }

  // The query's result as an EDN value (a relation is a vector of row vectors).
  Result<edn::Value> Query(std::string_view query, const nlohmann::json& options) {
    MENTAT_ASSIGN_OR_RETURN(std::string text, Call(q_.get(), query, options.dump()));
    if (text.empty()) return edn::Value();
    return edn::Read(text);
  }
  Result<Rows> RowsOf(std::string_view query, const nlohmann::json& options) {
    MENTAT_ASSIGN_OR_RETURN(edn::Value v, Query(query, options));
    Rows rows;
    for (const auto& row : v.items()) rows.push_back(row.items());
    return rows;
  }
  Status Transact(const std::string& edn) { return Call(t_.get(), edn, "").status(); }

  std::unique_ptr<sqlite3, DbCloser> db_;
  std::string store_;
  std::unique_ptr<sqlite3_stmt, StmtFinalizer> q_, t_, explain_;
};

class ExtBackend : public Backend {
 public:
  explicit ExtBackend(std::string store) : store_(std::move(store)) {}
  std::string name() const override { return "sqlite-ext"; }
  Result<std::unique_ptr<Session>> Connect() override { return ExtSession::Open(store_); }

 private:
  std::string store_;
};

}  // namespace

Result<std::unique_ptr<Backend>> OpenSqliteExt(const std::string& store) {
  return std::unique_ptr<Backend>(new ExtBackend(store));
}

}  // namespace mentat::scale
