#include "util.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace mentat::reliability {

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/mentat-rel-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  const char* d = mkdtemp(buf.data());
  dir_ = d ? d : "/tmp";
}

TempDir::~TempDir() {
  std::error_code ec;
  if (dir_ != "/tmp") std::filesystem::remove_all(dir_, ec);
}

std::string WorkerPath() { return MENTAT_RELIABILITY_WORKER; }
std::string CliPath() { return MENTAT_CLI_BINARY; }
std::string SourceDir() { return MENTAT_RELIABILITY_SOURCE_DIR; }

Child Spawn(const std::vector<std::string>& argv, const std::string& dir,
            const std::string& stdin_path) {
  static int counter = 0;
  Child c;
  std::string tag = std::to_string(getpid()) + "-" + std::to_string(++counter);
  c.stdout_path = dir + "/child-" + tag + ".out";
  c.stderr_path = dir + "/child-" + tag + ".err";
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, stdin_path.empty() ? "/dev/null" : stdin_path.c_str(),
                                   O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, c.stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addopen(&fa, 2, c.stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  c.pid = pid;
  return c;
}

std::string Exit::Describe() const {
  if (timed_out) return "timed out (killed)";
  if (signaled) return std::string("killed by signal ") + strsignal(signal);
  if (exited) return "exited with code " + std::to_string(code);
  return "unknown";
}

Exit Wait(const Child& child, int timeout_ms) {
  Exit e;
  if (child.pid <= 0) return e;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  int status = 0;
  for (;;) {
    pid_t r = waitpid(child.pid, &status, WNOHANG);
    if (r == child.pid) break;
    if (r < 0 && errno != EINTR) return e;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(child.pid, SIGKILL);
      waitpid(child.pid, &status, 0);
      e.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (WIFEXITED(status)) {
    e.exited = true;
    e.code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    e.signaled = true;
    e.signal = WTERMSIG(status);
  }
  return e;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool WriteFile(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
  return static_cast<bool>(out);
}

bool AppendDurable(int fd, const std::string& line) {
  std::string rec = line + "\n";
  size_t off = 0;
  while (off < rec.size()) {
    ssize_t n = write(fd, rec.data() + off, rec.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    off += static_cast<size_t>(n);
  }
  return fsync(fd) == 0;
}

std::string IntegrityCheck(const std::string& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : "cannot open";
    sqlite3_close(db);
    return msg;
  }
  sqlite3_busy_timeout(db, 10000);
  std::string out;
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, nullptr) != SQLITE_OK) {
    out = sqlite3_errmsg(db);
  } else {
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      if (!out.empty()) out += "; ";
      out += reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    }
    if (rc != SQLITE_DONE) out += std::string(" (") + sqlite3_errmsg(db) + ")";
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

int ExecRaw(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr);
  if (rc == SQLITE_OK) {
    sqlite3_busy_timeout(db, 10000);
    rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr);
  }
  sqlite3_close(db);
  return rc;
}

uint64_t Rng::Next() {
  uint64_t z = (s_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

int64_t EnvInt(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  long long x = std::strtoll(v, &end, 10);
  return (end && *end == '\0') ? x : fallback;
}

// ---- Crash-recovery workload ----

const char* kCrashSchema = R"([
  {:db/ident :crash/key :db/valueType :db.type/string :db/cardinality :db.cardinality/one
   :db/unique :db.unique/identity}
  {:db/ident :crash/batch :db/valueType :db.type/long :db/cardinality :db.cardinality/one
   :db/index true}
  {:db/ident :crash/size :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
  {:db/ident :crash/seq :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
  {:db/ident :crash/blob :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
  {:db/ident :crash/tags :db/valueType :db.type/long :db/cardinality :db.cardinality/many}
  {:db/ident :crash/counter :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
  {:db/ident :crash/probe :db/valueType :db.type/long :db/cardinality :db.cardinality/one}])";

Status InstallCrashSchema(Store* store) {
  auto schema = store->transact(kCrashSchema);
  if (!schema.ok()) return schema.status();
  auto counter = store->transact(R"([{:crash/key "counter"}])");
  return counter.ok() ? Status::OK() : counter.status();
}

int BatchSize(int64_t n) {
  Rng r(static_cast<uint64_t>(n) * 7919 + 17);
  uint64_t bucket = r.Next() % 100;
  if (bucket < 45) return static_cast<int>(r.Range(1, 3));
  if (bucket < 80) return static_cast<int>(r.Range(4, 30));
  if (bucket < 96) return static_cast<int>(r.Range(31, 200));
  return static_cast<int>(r.Range(201, 1500));
}

std::string BlobFor(int64_t n, int64_t i) {
  Rng r(static_cast<uint64_t>(n) * 1000003 + static_cast<uint64_t>(i));
  size_t len = r.OneIn(400) ? static_cast<size_t>(r.Range(20000, 70000))
                            : static_cast<size_t>(r.Range(0, 120));
  std::string s;
  s.reserve(len);
  const char* alphabet = "abcdefghijklmnopqrstuvwxyz0123456789 ";
  for (size_t k = 0; k < len; ++k) s.push_back(alphabet[(n * 31 + i * 7 + k) % 37]);
  return s;
}

std::string BatchTx(int64_t n) {
  int size = BatchSize(n);
  std::string ns = std::to_string(n);
  std::string tx = "[{:db/id \"h\" :crash/key \"h" + ns + "\" :crash/batch " + ns +
                   " :crash/size " + std::to_string(size) + "}\n";
  tx += " [:db/add [:crash/key \"counter\"] :crash/counter " + ns + "]\n";
  for (int i = 0; i < size; ++i) {
    std::string is = std::to_string(i);
    tx += " {:crash/key \"b" + ns + "-" + is + "\" :crash/batch " + ns + " :crash/seq " + is +
          " :crash/blob \"" + BlobFor(n, i) + "\" :crash/tags [" + is + " " +
          std::to_string(i + 1) + "]}\n";
  }
  tx += "]";
  return tx;
}

// ---- Transfer workload ----

const char* kBankSchema = R"([
  {:db/ident :acct/id :db/valueType :db.type/long :db/cardinality :db.cardinality/one
   :db/unique :db.unique/identity}
  {:db/ident :acct/balance :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
  {:db/ident :xfer/from :db/valueType :db.type/ref :db/cardinality :db.cardinality/one}
  {:db/ident :xfer/to :db/valueType :db.type/ref :db/cardinality :db.cardinality/one}
  {:db/ident :xfer/amount :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
  {:db/ident :xfer/writer :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
  {:db/ident :xfer/seq :db/valueType :db.type/long :db/cardinality :db.cardinality/one}])";

Status SetUpBank(Store* store) {
  auto schema = store->transact(kBankSchema);
  if (!schema.ok()) return schema.status();
  auto existing = store->datoms(":aevt", {edn::Value::Keyword("acct/id")});
  if (!existing.ok()) return existing.status();
  if (!existing->empty()) return Status::OK();
  std::string tx = "[";
  for (int i = 0; i < kAccounts; ++i)
    tx += "{:acct/id " + std::to_string(i) + " :acct/balance " + std::to_string(kInitialBalance) +
          "}";
  tx += "]";
  auto r = store->transact(tx);
  return r.ok() ? Status::OK() : r.status();
}

Result<Entid> Transfer(Store* store, Rng* rng, const std::string& writer, int64_t seq,
                       Entid* xfer) {
  for (int attempt = 0;; ++attempt) {
    auto balances = store->datoms(":aevt", {edn::Value::Keyword("acct/balance")});
    if (!balances.ok()) return balances.status();
    if (balances->size() < 2) return Status::Internal("fewer than two accounts");
    size_t i = rng->Next() % balances->size();
    size_t j = rng->Next() % (balances->size() - 1);
    if (j >= i) ++j;
    const Datom& from = (*balances)[i];
    const Datom& to = (*balances)[j];
    int64_t fb = from.v.as_int(), tb = to.v.as_int();
    int64_t amount = fb == 0 ? 0 : rng->Range(1, std::min<int64_t>(fb, 50));
    std::string f = std::to_string(from.e), t = std::to_string(to.e);
    std::string tx = "[[:db/cas " + f + " :acct/balance " + std::to_string(fb) + " " +
                     std::to_string(fb - amount) + "] [:db/cas " + t + " :acct/balance " +
                     std::to_string(tb) + " " + std::to_string(tb + amount) +
                     "] {:db/id \"x\" :xfer/from " + f + " :xfer/to " + t + " :xfer/amount " +
                     std::to_string(amount) + " :xfer/writer \"" + writer + "\" :xfer/seq " +
                     std::to_string(seq) + "}]";
    auto r = store->transact(tx);
    if (r.ok()) {
      *xfer = r->tempids.at("x");
      return r->tx_id;
    }
    if (r.status().code() != Code::kCasMismatch || attempt > 10000) return r.status();
  }
}

Status SumBalances(const Db& db, int64_t* sum, int64_t* count) {
  auto balances = db.datoms(":aevt", {edn::Value::Keyword("acct/balance")});
  if (!balances.ok()) return balances.status();
  *sum = 0;
  *count = 0;
  for (const auto& d : *balances) {
    *sum += d.v.as_int();
    ++*count;
  }
  return Status::OK();
}

}  // namespace mentat::reliability
