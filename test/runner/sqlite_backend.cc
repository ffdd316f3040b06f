// The SQLite extension backend of the data-driven runner: every record runs as SQL through
// build/libmentat_sqlite.so, loaded into an SQLite connection in this process, using the
// extension's EDN output format (the trailing 'edn' argument) so that results compare
// exactly:
//
//   transact  SELECT edn_t(db_path, body, 'edn')
//   query     SELECT edn_q(db_path, body, options, 'edn')
//   explain   SELECT edn_explain(db_path, body, options)
//   pull      SELECT edn_pull(db_path, pattern, eid, 'edn')
//   datoms    SELECT edn_datoms(db_path, index, components, 'edn')
//
// Two modes: a store file named by path (the host connection is in-memory), and host mode
// (db_path NULL: the datoms live in the host connection's own database file).
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "backend.h"
#include "mentat/store.h"
#include "storage/sqlite_api.h"

namespace mentat::testing {

namespace {

class SqliteBackend : public Backend {
 public:
  SqliteBackend(std::string extension, bool host_mode)
      : extension_(std::move(extension)), host_mode_(host_mode) {
    char tmpl[] = "/tmp/mentat-sqlite-test-XXXXXX";
    char* dir = mkdtemp(tmpl);
    dir_ = dir ? dir : "/tmp";
  }
  ~SqliteBackend() override {
    Close();
    rmdir(dir_.c_str());
  }

  Status Reset() override {
    Close();
    ++n_;
    file_ = dir_ + (host_mode_ ? "/host" : "/store") + std::to_string(n_) + ".db";
    std::string host = host_mode_ ? file_ : ":memory:";
    if (sqlite3_open(host.c_str(), &db_) != SQLITE_OK)
      return Status::Io("cannot open " + host + ": " + sqlite3_errmsg(db_));
    sqlite3_enable_load_extension(db_, 1);
    char* err = nullptr;
    if (sqlite3_load_extension(db_, extension_.c_str(), nullptr, &err) != SQLITE_OK) {
      std::string msg = err ? err : "unknown error";
      sqlite3_free(err);
      return Status::Io("cannot load " + extension_ + ": " + msg);
    }
    return Status::OK();
  }

  Result<edn::Value> Transact(const std::string& edn) override {
    return ReadEdn(Call("SELECT edn_t(?1, ?2, 'edn')", {edn}));
  }
  Result<edn::Value> Query(const std::string& q, const std::string& json) override {
    return ReadEdn(Call("SELECT edn_q(?1, ?2, ?3, 'edn')", {q, Opt(json)}));
  }
  Result<std::string> Explain(const std::string& q, const std::string& json) override {
    MENTAT_ASSIGN_OR_RETURN(auto text, Call("SELECT edn_explain(?1, ?2, ?3)", {q, Opt(json)}));
    return text.value_or("");
  }
  Result<edn::Value> Pull(const std::string& pattern, const std::string& eid) override {
    // An entity id goes in as an INTEGER (as SQL callers pass it), anything else as text.
    auto e = edn::Read(eid);
    if (e.ok() && e->is_int()) {
      return ReadEdn(Call("SELECT edn_pull(?1, ?2, ?3, 'edn')", {pattern}, e->as_int()));
    }
    return ReadEdn(Call("SELECT edn_pull(?1, ?2, ?3, 'edn')", {pattern, eid}));
  }
  Result<edn::Value> Entity(const std::string& eid) override {
    auto e = edn::Read(eid);
    if (e.ok() && e->is_int())
      return ReadEdn(Call("SELECT edn_entity(?1, ?2, 'edn')", {}, e->as_int()));
    return ReadEdn(Call("SELECT edn_entity(?1, ?2, 'edn')", {eid}));
  }
  Result<edn::Value> Datoms(const std::string& args) override {
    std::string index = args, components;
    size_t space = args.find_first_of(" \t\n");
    if (space != std::string::npos) {
      index = args.substr(0, space);
      components = args.substr(space + 1);
    }
    return ReadEdn(Call("SELECT edn_datoms(?1, ?2, ?3, 'edn')", {index, components}));
  }

 private:
  using Arg = std::optional<std::string>;

  static Arg Opt(const std::string& s) { return s.empty() ? Arg() : Arg(s); }

  void Close() {
    if (db_) sqlite3_close(db_);
    db_ = nullptr;
    if (file_.empty()) return;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"})
      std::remove((file_ + suffix).c_str());
  }

  // Runs `sql` with ?1 = the db_path (NULL in host mode) and ?2.. = `args` (then `eid`,
  // when given, as an INTEGER); returns the single text value (std::nullopt for NULL) or
  // the SQL error.
  Result<Arg> Call(const char* sql, const std::vector<Arg>& args,
                   std::optional<int64_t> eid = std::nullopt) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db_, sql, -1, &st, nullptr) != SQLITE_OK)
      return Status::Internal(std::string("prepare: ") + sqlite3_errmsg(db_));
    int i = 1;
    if (host_mode_) {
      sqlite3_bind_null(st, i++);
    } else {
      sqlite3_bind_text(st, i++, file_.c_str(), -1, SQLITE_TRANSIENT);
    }
    for (const Arg& a : args) {
      if (a) {
        sqlite3_bind_text(st, i++, a->data(), static_cast<int>(a->size()), SQLITE_TRANSIENT);
      } else {
        sqlite3_bind_null(st, i++);
      }
    }
    if (eid) sqlite3_bind_int64(st, i++, *eid);
    int rc = sqlite3_step(st);
    Result<Arg> out = Arg();
    if (rc == SQLITE_ROW) {
      if (sqlite3_column_type(st, 0) != SQLITE_NULL)
        out = Arg(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
    } else {
      out = Status::InvalidArgument(sqlite3_errmsg(db_));
    }
    sqlite3_finalize(st);
    return out;
  }

  // A NULL result (host mode before any store exists) reads as nil.
  static Result<edn::Value> ReadEdn(Result<Arg> r) {
    if (!r.ok()) return r.status();
    if (!*r) return edn::Value();
    return edn::Read(**r);
  }

  std::string extension_;
  bool host_mode_;
  std::string dir_;
  std::string file_;
  sqlite3* db_ = nullptr;
  int n_ = 0;
};

}  // namespace

std::unique_ptr<Backend> MakeSqliteBackend(const std::string& extension, bool host_mode) {
  return std::make_unique<SqliteBackend>(extension, host_mode);
}

#ifdef MENTAT_SQLITE_RUNNER_SHIM
// mentat-test-runner-sqlite is runner.cc compiled with its two factories renamed to these
// (test/runner/CMakeLists.txt), until runner.cc has a --backend for the extension:
// `--backend lib` runs in host mode, `--backend cli --mentat EXT` on a store file.
std::unique_ptr<Backend> MakeSqliteHostShim() {
  return MakeSqliteBackend(MENTAT_SQLITE_RUNNER_SHIM, true);
}
std::unique_ptr<Backend> MakeSqlitePathShim(const std::string& extension) {
  return MakeSqliteBackend(extension, false);
}
#endif

}  // namespace mentat::testing
