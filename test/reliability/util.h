// Helpers shared by the reliability tests and their worker process: temporary
// directories, spawning and killing workers, raw SQLite checks, deterministic workloads.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mentat/store.h"

namespace mentat::reliability {

// A fresh directory under $TMPDIR (or /tmp), removed with its contents on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return dir_; }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

 private:
  std::string dir_;
};

// The path of the reliability worker binary (set at build time).
std::string WorkerPath();
// The path of the mentat CLI binary (set at build time).
std::string CliPath();
// The directory of the reliability test sources (for the bad-input corpus).
std::string SourceDir();

// A child process started by Spawn(). Its stdout and stderr go to files in `dir`.
struct Child {
  pid_t pid = -1;
  std::string stdout_path;
  std::string stderr_path;
};

// Starts `argv[0]` with `argv`, stdin from `stdin_path` (or /dev/null when empty).
// Returns the child, or pid -1 when spawning failed.
Child Spawn(const std::vector<std::string>& argv, const std::string& dir,
            const std::string& stdin_path = "");

// How a child ended.
struct Exit {
  bool exited = false;  // exited normally with `code`
  int code = -1;
  bool signaled = false;  // killed by `signal`
  int signal = 0;
  bool timed_out = false;  // still running after the timeout (then killed)
  std::string Describe() const;
};

// Waits up to `timeout_ms` for `child`; kills it with SIGKILL on timeout.
Exit Wait(const Child& child, int timeout_ms);

// Reads a whole file ("" when missing).
std::string ReadFile(const std::string& path);
// Writes `data` to `path`, replacing it. Returns false on failure.
bool WriteFile(const std::string& path, const std::string& data);

// Appends `line` + '\n' to the file behind `fd` and fsyncs it: the record survives the
// writer's death. Returns false on failure.
bool AppendDurable(int fd, const std::string& line);

// Runs PRAGMA integrity_check (and foreign_key_check-free quick checks) on the file with
// a plain SQLite connection. Returns "ok" or the problems found.
std::string IntegrityCheck(const std::string& path);

// Runs one SQL statement on `path` with a plain SQLite connection; returns the SQLite
// result code.
int ExecRaw(const std::string& path, const std::string& sql);

// A small, fast, deterministic random generator (splitmix64).
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t Next();
  // Uniform in [lo, hi].
  int64_t Range(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(Next() % (hi - lo + 1));
  }
  bool OneIn(int n) { return Next() % n == 0; }

 private:
  uint64_t s_;
};

// An integer from the environment, or `fallback`.
int64_t EnvInt(const char* name, int64_t fallback);

// ---- The crash-recovery workload ----
//
// Batch n is one transaction: a header entity {:crash/key "h<n>" :crash/batch n
// :crash/size s} and s member entities {:crash/key "b<n>-<i>" :crash/batch n :crash/seq i
// :crash/blob <BlobFor(n, i)> :crash/tags #{i (+ i 1)}}, and the singleton counter
// entity's :crash/counter set to n. Sizes and blob lengths are functions of n, so a
// verifier knows what a complete batch looks like without any side channel.

// The schema of the workload (idempotent: transacting it twice changes nothing).
extern const char* kCrashSchema;
// Transacts the schema, then creates the counter entity (both idempotent).
Status InstallCrashSchema(Store* store);
// The number of member entities of batch `n`.
int BatchSize(int64_t n);
// The blob of member `i` of batch `n`.
std::string BlobFor(int64_t n, int64_t i);
// The transaction data of batch `n`, as EDN text.
std::string BatchTx(int64_t n);

// ---- The transfer workload (concurrency) ----

extern const char* kBankSchema;
constexpr int kAccounts = 16;
constexpr int64_t kInitialBalance = 1000;

// Opens `path` and creates the accounts when missing (idempotent).
Status SetUpBank(Store* store);

// One transfer between two random accounts with :db/cas, retried on a cas mismatch.
// On success returns the tx id and sets `*xfer` to the transfer entity's id. `writer`
// and `seq` are recorded on the transfer entity. Any other error is returned.
Result<Entid> Transfer(Store* store, Rng* rng, const std::string& writer, int64_t seq, Entid* xfer);

// The sum of all balances and the number of balance datoms in one snapshot of `db`.
Status SumBalances(const Db& db, int64_t* sum, int64_t* count);

}  // namespace mentat::reliability
