// reliability-worker: the child processes of the reliability tests.
//
//   reliability-worker crash-writer PATH ACKFILE START SYNC
//       Commits batch START, START+1, ... (util.h) until killed, appending "n tx" to
//       ACKFILE (fsynced) after each acknowledged commit. SYNC: 0..3 (Synchronous).
//   reliability-worker transfer PATH WRITER MILLIS OUTFILE SEED
//       Runs transfers (util.h) for MILLIS ms; writes "tx xfer" per transfer to OUTFILE.
//   reliability-worker create PATH OUTFILE COUNT
//       Opens (maybe creating) PATH at the same time as other workers, then commits COUNT
//       small transactions; writes "tx entity" lines to OUTFILE.
//   reliability-worker fsize PATH ACKFILE START
//       Commits batches START, START+1, ... under a small RLIMIT_FSIZE until the disk is "full",
//       checks the error, lifts the limit and checks the same Store commits again.
//   reliability-worker readonly PATH
//       Drops root privileges, then opens PATH (a read-only file or directory) and tries
//       to read and write; every failure must be a clear error.
//   reliability-worker hold-read PATH MILLIS
//       Holds a plain SQLite read transaction on PATH for MILLIS ms ("ready" on stdout
//       once it is open), then checks its snapshot did not move.
//   reliability-worker dup-writer PATH MILLIS
//       For MILLIS ms: asserts one value of :race/v on two new entities, then retracts it
//       from the second (refused while :race/v is unique). Prints "written N refused M".
//   reliability-worker unique-toggler PATH MILLIS
//       For MILLIS ms: makes :race/v :db.unique/value, then not unique again (making it
//       unique is refused while a duplicate exists). Prints "on N refused M".
//
// Exit codes: 0 expectations held; 2 an unexpected error (printed on stderr); 3 (readonly)
// a good store was reported as corrupt; 64 usage.
#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "util.h"

namespace mentat::reliability {
namespace {

int Fail(const std::string& what, const Status& st) {
  std::cerr << "worker: " << what << ": " << st.ToString() << std::endl;
  return 2;
}

int Fail(const std::string& what) {
  std::cerr << "worker: " << what << std::endl;
  return 2;
}

int CrashWriter(const std::string& path, const std::string& ack, int64_t start, int sync) {
  Options o;
  o.synchronous = static_cast<Synchronous>(sync);
  auto store = Store::open(path, o);
  if (!store.ok()) return Fail("open", store.status());
  Status schema = InstallCrashSchema(store->get());
  if (!schema.ok()) return Fail("schema", schema);
  int fd = open(ack.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) return Fail("cannot open the ack file");
  for (int64_t n = start;; ++n) {
    if (n % 9 == 4) {
      // A transaction that does real work and then fails must write nothing.
      std::string bad = BatchTx(n);
      bad.pop_back();
      bad += " [:db/cas [:crash/key \"counter\"] :crash/counter -1 -2]]";
      auto r = (*store)->transact(bad);
      if (r.ok() || r.status().code() != Code::kCasMismatch)
        return Fail("a failing cas committed or failed oddly", r.status());
    }
    auto r = (*store)->transact(BatchTx(n));
    if (!r.ok()) return Fail("batch " + std::to_string(n), r.status());
    if (!AppendDurable(fd, std::to_string(n) + " " + std::to_string(r->tx_id)))
      return Fail("cannot write the ack file");
  }
}

int TransferWorker(const std::string& path, const std::string& writer, int64_t millis,
                   const std::string& out, uint64_t seed) {
  auto store = Store::open(path);
  if (!store.ok()) return Fail("open", store.status());
  Rng rng(seed);
  std::string lines;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(millis);
  int64_t seq = 0;
  Entid last_tx = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    Entid xfer = 0;
    auto tx = Transfer(store->get(), &rng, writer, seq, &xfer);
    if (!tx.ok()) return Fail("transfer " + std::to_string(seq), tx.status());
    if (*tx <= last_tx) return Fail("tx ids went backwards");
    last_tx = *tx;
    lines += std::to_string(*tx) + " " + std::to_string(xfer) + "\n";
    ++seq;
  }
  if (!WriteFile(out, lines)) return Fail("cannot write " + out);
  return 0;
}

int Create(const std::string& path, const std::string& out, int count) {
  auto store = Store::open(path);
  if (!store.ok()) return Fail("open", store.status());
  Status schema = InstallCrashSchema(store->get());
  if (!schema.ok()) return Fail("schema", schema);
  std::string lines;
  for (int i = 0; i < count; ++i) {
    auto r = (*store)->transact("[{:db/id \"e\" :crash/key \"w" + std::to_string(getpid()) + "-" +
                                std::to_string(i) + "\"}]");
    if (!r.ok()) return Fail("transact", r.status());
    lines += std::to_string(r->tx_id) + " " + std::to_string(r->tempids.at("e")) + "\n";
  }
  if (!WriteFile(out, lines)) return Fail("cannot write " + out);
  return 0;
}

int FileSizeLimit(const std::string& path, const std::string& ack, int64_t start) {
  signal(SIGXFSZ, SIG_IGN);  // writes past the limit fail with EFBIG instead
  auto store = Store::open(path);
  if (!store.ok()) return Fail("open", store.status());
  Status schema = InstallCrashSchema(store->get());
  if (!schema.ok()) return Fail("schema", schema);
  int fd = open(ack.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) return Fail("cannot open the ack file");
  struct stat db_st {
  }, wal_st{};
  stat(path.c_str(), &db_st);
  stat((path + "-wal").c_str(), &wal_st);
  rlimit lim{};
  getrlimit(RLIMIT_FSIZE, &lim);
  rlimit small = lim;
  small.rlim_cur = static_cast<rlim_t>(std::max(db_st.st_size, wal_st.st_size) + 256 * 1024);
  if (setrlimit(RLIMIT_FSIZE, &small) != 0) return Fail("setrlimit");
  Status full;
  int64_t n = start;
  for (; n < start + 100000; ++n) {
    auto r = (*store)->transact(BatchTx(n));
    if (!r.ok()) {
      full = r.status();
      break;
    }
    if (!AppendDurable(fd, std::to_string(n) + " " + std::to_string(r->tx_id)))
      return Fail("cannot write the ack file");
  }
  if (full.ok()) return Fail("the file-size limit was never hit");
  std::cout << "full: " << full.ToString() << std::endl;
  if (full.code() != Code::kIo) return Fail("disk full gave the wrong code", full);
  // A second attempt while still full fails the same way and breaks nothing.
  auto again = (*store)->transact(BatchTx(n));
  if (again.ok()) {
    AppendDurable(fd, std::to_string(n) + " " + std::to_string(again->tx_id));
    ++n;
  } else if (again.status().code() != Code::kIo) {
    return Fail("second disk-full attempt", again.status());
  }
  // Reads still work while the disk is full.
  auto d = (*store)->datoms(
      ":eavt",
      {edn::Value::Vector({edn::Value::Keyword("crash/key"), edn::Value::String("counter")})});
  if (!d.ok()) return Fail("read while full", d.status());
  // Space comes back: the same Store commits again.
  if (setrlimit(RLIMIT_FSIZE, &lim) != 0) return Fail("setrlimit restore");
  for (int k = 0; k < 3; ++k, ++n) {
    auto r = (*store)->transact(BatchTx(n));
    if (!r.ok()) return Fail("commit after space came back", r.status());
    if (!AppendDurable(fd, std::to_string(n) + " " + std::to_string(r->tx_id)))
      return Fail("cannot write the ack file");
  }
  std::cout << "recovered" << std::endl;
  return 0;
}

int ReadOnly(const std::string& path) {
  if (geteuid() == 0) {
    // Root ignores file permissions; become nobody so the read-only file is read-only.
    if (setgid(65534) != 0 || setuid(65534) != 0) return Fail("cannot drop privileges");
  }
  auto store = Store::open(path);
  if (!store.ok()) {
    const Status& st = store.status();
    std::cout << "open: " << st.ToString() << std::endl;
    if (st.message().empty() || st.code() == Code::kInternal) return Fail("unclear open error", st);
    // The file is a good store: calling it corrupt sends the user the wrong way.
    if (st.code() == Code::kCorrupt) return 3;
    return 0;
  }
  auto d = (*store)->datoms(":aevt", {edn::Value::Keyword("crash/batch")});
  if (!d.ok()) {
    std::cout << "read: " << d.status().ToString() << std::endl;
    if (d.status().code() == Code::kInternal) return Fail("read", d.status());
  } else {
    std::cout << "read: " << d->size() << " datoms" << std::endl;
  }
  auto r = (*store)->transact(BatchTx(1));
  if (r.ok()) return Fail("a write to a read-only store succeeded");
  std::cout << "write: " << r.status().ToString() << std::endl;
  if (r.status().code() == Code::kInternal || r.status().message().empty())
    return Fail("unclear write error", r.status());
  return 0;
}

int HoldRead(const std::string& path, int64_t millis) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK)
    return Fail("open");
  sqlite3_busy_timeout(db, 10000);
  auto count = [&]() -> int64_t {
    sqlite3_stmt* st = nullptr;
    int64_t n = -1;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM datoms", -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
      n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
  };
  if (sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr) != SQLITE_OK) return Fail("begin");
  int64_t before = count();
  std::cout << "ready " << before << std::endl;
  std::this_thread::sleep_for(std::chrono::milliseconds(millis));
  int64_t after = count();
  sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  if (before < 0 || before != after) return Fail("the read snapshot moved");
  std::cout << "done " << after << std::endl;
  return 0;
}

// The two sides of the schema race (concurrency_test.cc, SchemaChangesOfAnotherProcess...):
// each works with whatever schema its Store believes current. Two processes writing in
// tight loops can keep each other out past the busy timeout (SQLite's busy handler sleeps
// while the other takes the lock again; more so under ThreadSanitizer): a transaction
// refused as busy wrote nothing and is tried again, as an application would.
Result<TxReport> TransactRetryingBusy(Store* store, const std::string& tx) {
  for (;;) {
    auto r = store->transact(tx);
    if (r.ok() || r.status().code() != Code::kBusy) return r;
  }
}

int DupWriter(const std::string& path, int64_t millis) {
  auto store = Store::open(path);
  if (!store.ok()) return Fail("open", store.status());
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(millis);
  int64_t written = 0, refused = 0;
  for (int64_t n = 0; std::chrono::steady_clock::now() < deadline; ++n) {
    std::string v = std::to_string(n);
    auto r = TransactRetryingBusy(
        store->get(), "[[:db/add \"a\" :race/v " + v + "] [:db/add \"b\" :race/v " + v + "]]");
    if (!r.ok()) {
      if (r.status().code() != Code::kConflict) return Fail("duplicate", r.status());
      ++refused;
      continue;
    }
    ++written;
    auto d =
        TransactRetryingBusy(store->get(), "[[:db/retract " + std::to_string(r->tempids.at("b")) +
                                               " :race/v " + v + "]]");
    if (!d.ok()) return Fail("retract", d.status());
  }
  std::cout << "written " << written << " refused " << refused << std::endl;
  return 0;
}

int UniqueToggler(const std::string& path, int64_t millis) {
  auto store = Store::open(path);
  if (!store.ok()) return Fail("open", store.status());
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(millis);
  int64_t on = 0, refused = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    auto r = TransactRetryingBusy(store->get(), "[[:db/add :race/v :db/unique :db.unique/value]]");
    if (!r.ok()) {
      if (r.status().code() != Code::kSchema) return Fail("unique on", r.status());
      ++refused;
      continue;
    }
    ++on;
    auto off =
        TransactRetryingBusy(store->get(), "[[:db/retract :race/v :db/unique :db.unique/value]]");
    if (!off.ok()) return Fail("unique off", off.status());
  }
  std::cout << "on " << on << " refused " << refused << std::endl;
  return 0;
}

}  // namespace
}  // namespace mentat::reliability

int main(int argc, char** argv) {
  using namespace mentat::reliability;
  std::vector<std::string> a(argv + 1, argv + argc);
  auto num = [](const std::string& s) { return std::strtoll(s.c_str(), nullptr, 10); };
  if (a.size() == 5 && a[0] == "crash-writer")
    return CrashWriter(a[1], a[2], num(a[3]), static_cast<int>(num(a[4])));
  if (a.size() == 6 && a[0] == "transfer")
    return TransferWorker(a[1], a[2], num(a[3]), a[4], static_cast<uint64_t>(num(a[5])));
  if (a.size() == 4 && a[0] == "create") return Create(a[1], a[2], static_cast<int>(num(a[3])));
  if (a.size() == 4 && a[0] == "fsize") return FileSizeLimit(a[1], a[2], num(a[3]));
  if (a.size() == 2 && a[0] == "readonly") return ReadOnly(a[1]);
  if (a.size() == 3 && a[0] == "hold-read") return HoldRead(a[1], num(a[2]));
  if (a.size() == 3 && a[0] == "dup-writer") return DupWriter(a[1], num(a[2]));
  if (a.size() == 3 && a[0] == "unique-toggler") return UniqueToggler(a[1], num(a[2]));
  std::cerr << "usage: reliability-worker MODE ARGS... (see worker.cc)" << std::endl;
  return 64;
}
