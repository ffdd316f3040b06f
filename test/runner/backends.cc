#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

#include "backend.h"
#include "mentat/store.h"
#include "pg/connection.h"

namespace mentat::testing {

namespace {

class LibraryBackend : public Backend {
 public:
  LibraryBackend() = default;
  // A store in PostgreSQL per Reset, in a fresh schema of `conninfo`'s database; the
  // schemas are dropped when the backend is.
  explicit LibraryBackend(std::string conninfo) : pg_(std::move(conninfo)) {}
  ~LibraryBackend() override {
    store_.reset();
    if (pg_.empty() || schemas_.empty()) return;
    auto c = pg::Connection::Open(pg_);
    if (!c.ok()) return;
    for (const auto& s : schemas_) (void)(*c)->Exec("DROP SCHEMA IF EXISTS " + s + " CASCADE");
  }
  Status Reset() override {
    std::string name;
    if (!pg_.empty()) {
      store_.reset();
      std::string schema =
          "mentat_runner_" + std::to_string(getpid()) + "_" + std::to_string(schemas_.size());
      schemas_.push_back(schema);
      const bool uri = pg_.rfind("postgres", 0) == 0 && pg_.find("://") != std::string::npos;
      name = uri ? pg_ + (pg_.find('?') == std::string::npos ? "?" : "&") + "schema=" + schema
                 : pg_ + " schema=" + schema;
    }
    auto s = Store::open(name);
    if (!s.ok()) return s.status();
    store_ = std::move(*s);
    return Status::OK();
  }
  Result<edn::Value> Transact(const std::string& text) override {
    MENTAT_ASSIGN_OR_RETURN(TxReport r, store_->transact(text));
    auto schema = store_->schema();
    return r.ToEdn(schema.get());
  }
  Result<edn::Value> Query(const std::string& q, const std::string& json) override {
    QueryOptions o;
    if (!json.empty()) {
      MENTAT_ASSIGN_OR_RETURN(o, options_from_json(q, json));
    }
    MENTAT_ASSIGN_OR_RETURN(QueryResult r, store_->q(q, o));
    return r.ToEdn();
  }
  Result<std::string> Explain(const std::string& q, const std::string& json) override {
    QueryOptions o;
    if (!json.empty()) {
      MENTAT_ASSIGN_OR_RETURN(o, options_from_json(q, json));
    }
    return store_->q_explain(q, o);
  }
  Result<edn::Value> Pull(const std::string& pattern, const std::string& eid) override {
    MENTAT_ASSIGN_OR_RETURN(edn::Value e, edn::Read(eid));
    return store_->pull(pattern, e);
  }
  Result<edn::Value> Datoms(const std::string& args) override {
    MENTAT_ASSIGN_OR_RETURN(edn::Vec parts, edn::ReadAll(args));
    if (parts.empty() || !parts[0].is_keyword())
      return Status::InvalidArgument("datoms: expected INDEX COMPONENTS...");
    std::vector<edn::Value> comps(parts.begin() + 1, parts.end());
    MENTAT_ASSIGN_OR_RETURN(auto datoms, store_->datoms(parts[0].str(), comps));
    auto schema = store_->schema();
    edn::Vec out;
    for (const auto& d : datoms) {
      edn::Value a = edn::Value::Int(d.a);
      if (const std::string* id = schema->ident(d.a)) a = edn::Value::Keyword(*id);
      out.push_back(edn::Value::Vector(
          {edn::Value::Int(d.e), a, d.v, edn::Value::Int(d.tx), edn::Value::Bool(d.added)}));
    }
    return edn::Value::Vector(std::move(out));
  }
  Result<edn::Value> Entity(const std::string& eid) override {
    MENTAT_ASSIGN_OR_RETURN(edn::Value e, edn::Read(eid));
    MENTAT_ASSIGN_OR_RETURN(mentat::Entity entity, store_->entity(e));
    return entity.touch();
  }

 private:
  std::unique_ptr<Store> store_;
  std::string pg_;
  std::vector<std::string> schemas_;
};

// Runs the CLI binary once per record on a store file, in EDN output mode.
class CliBackend : public Backend {
 public:
  explicit CliBackend(std::string binary) : binary_(std::move(binary)) {
    char tmpl[] = "/tmp/mentat-test-XXXXXX";
    char* dir = mkdtemp(tmpl);
    dir_ = dir ? dir : "/tmp";
  }
  ~CliBackend() override {
    Clean();
    rmdir(dir_.c_str());
  }
  Status Reset() override {
    Clean();
    path_ = dir_ + "/store" + std::to_string(++n_) + ".db";
    return Status::OK();
  }
  Result<edn::Value> Transact(const std::string& text) override {
    MENTAT_ASSIGN_OR_RETURN(std::string out, Run({".transact " + text}));
    return edn::Read(out);
  }
  Result<edn::Value> Query(const std::string& q, const std::string& json) override {
    MENTAT_ASSIGN_OR_RETURN(std::string out,
                            Run({".query " + q + (json.empty() ? "" : " " + json)}));
    return edn::Read(out);
  }
  Result<std::string> Explain(const std::string& q, const std::string& json) override {
    return Run({".explain " + q + (json.empty() ? "" : " " + json)});
  }
  Result<edn::Value> Pull(const std::string& pattern, const std::string& eid) override {
    MENTAT_ASSIGN_OR_RETURN(std::string out, Run({".pull " + pattern + " " + eid}));
    return edn::Read(out);
  }
  Result<edn::Value> Datoms(const std::string& args) override {
    MENTAT_ASSIGN_OR_RETURN(std::string out, Run({".datoms " + args}));
    return edn::Read(out);
  }
  Result<edn::Value> Entity(const std::string& eid) override {
    MENTAT_ASSIGN_OR_RETURN(std::string out, Run({".entity " + eid}));
    return edn::Read(out);
  }

 private:
  void Clean() {
    if (path_.empty()) return;
    for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path_ + suffix).c_str());
  }

  // Runs `mentat --format edn STORE CMD`; stdout on success, stderr as the error.
  Result<std::string> Run(const std::vector<std::string>& commands) {
    std::string out_file = dir_ + "/out", err_file = dir_ + "/err";
    pid_t pid = fork();
    if (pid < 0) return Status::Io("fork failed");
    if (pid == 0) {
      FILE* o = std::freopen(out_file.c_str(), "w", stdout);
      FILE* e = std::freopen(err_file.c_str(), "w", stderr);
      if (!o || !e) _exit(127);
      std::vector<char*> argv;
      argv.push_back(const_cast<char*>(binary_.c_str()));
      argv.push_back(const_cast<char*>("--format"));
      argv.push_back(const_cast<char*>("edn"));
      argv.push_back(const_cast<char*>(path_.c_str()));
      for (const auto& c : commands) argv.push_back(const_cast<char*>(c.c_str()));
      argv.push_back(nullptr);
      execv(binary_.c_str(), argv.data());
      _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    auto slurp = [](const std::string& f) {
      std::ifstream in(f);
      std::stringstream ss;
      ss << in.rdbuf();
      return ss.str();
    };
    if (!WIFEXITED(status)) return Status::Internal("the CLI crashed: " + slurp(err_file));
    if (WEXITSTATUS(status) != 0) {
      std::string err = slurp(err_file);
      if (err.empty()) err = "exit status " + std::to_string(WEXITSTATUS(status));
      return Status::InvalidArgument(err);
    }
    return slurp(out_file);
  }

  std::string binary_;
  std::string dir_;
  std::string path_;
  int n_ = 0;
};

}  // namespace

std::unique_ptr<Backend> MakeLibraryBackend() { return std::make_unique<LibraryBackend>(); }
std::unique_ptr<Backend> MakePgBackend(const std::string& conninfo) {
  return std::make_unique<LibraryBackend>(conninfo);
}
std::unique_ptr<Backend> MakeCliBackend(const std::string& b) {
  return std::make_unique<CliBackend>(b);
}

}  // namespace mentat::testing
