#include "fault_vfs.h"

#include <sqlite3.h>

#include <atomic>
#include <cstring>
#include <mutex>

#include "storage/vfs.h"

namespace mentat::reliability::faultvfs {
namespace {

constexpr const char* kName = "mentat-fault";

std::atomic<int> g_op{-1};  // armed Op, -1 when disarmed
std::atomic<int> g_countdown{0};
std::atomic<int> g_rc{SQLITE_IOERR};
std::atomic<bool> g_persistent{false};
std::atomic<bool> g_torn{false};
std::atomic<int> g_triggered{0};
std::atomic<int> g_counts[3] = {0, 0, 0};

sqlite3_vfs* g_real = nullptr;
sqlite3_vfs g_vfs;

// Decides whether this operation of kind `op` fails; returns its error code or SQLITE_OK.
int Fault(Op op) {
  ++g_counts[static_cast<int>(op)];
  if (g_op.load() != static_cast<int>(op)) return SQLITE_OK;
  int left = --g_countdown;
  if (left > 0) return SQLITE_OK;
  if (left < 0 && !g_persistent) return SQLITE_OK;
  ++g_triggered;
  return g_rc.load();
}

using FaultFile = storage::LayeredFile;

sqlite3_file* Real(sqlite3_file* f) { return reinterpret_cast<FaultFile*>(f)->real; }

int Read(sqlite3_file* f, void* buf, int amt, sqlite3_int64 off) {
  int rc = Fault(Op::kRead);
  if (rc != SQLITE_OK) return rc;
  return Real(f)->pMethods->xRead(Real(f), buf, amt, off);
}
int Write(sqlite3_file* f, const void* buf, int amt, sqlite3_int64 off) {
  int rc = Fault(Op::kWrite);
  if (rc != SQLITE_OK) {
    if (g_torn && amt > 1) (void)Real(f)->pMethods->xWrite(Real(f), buf, amt / 2, off);
    return rc;
  }
  return Real(f)->pMethods->xWrite(Real(f), buf, amt, off);
}
int Sync(sqlite3_file* f, int flags) {
  int rc = Fault(Op::kSync);
  if (rc != SQLITE_OK) return rc;
  return Real(f)->pMethods->xSync(Real(f), flags);
}

std::mutex g_hook_mu;
std::function<void()> g_on_write_unlock;

int ShmLock(sqlite3_file* f, int offset, int n, int flags) {
  int rc = Real(f)->pMethods->xShmLock(Real(f), offset, n, flags);
  // WAL_WRITE_LOCK is shm lock 0.
  if (rc == SQLITE_OK && offset == 0 && flags == (SQLITE_SHM_UNLOCK | SQLITE_SHM_EXCLUSIVE)) {
    std::function<void()> fn;
    {
      std::lock_guard<std::mutex> lock(g_hook_mu);
      fn.swap(g_on_write_unlock);
    }
    if (fn) fn();
  }
  return rc;
}

// Versions 1..3 of the method table (the wrapper offers what the real file offers):
// every call passed through, reads, writes and syncs through the fault switch first.
sqlite3_io_methods MakeMethods(int version) {
  sqlite3_io_methods m = storage::PassThroughMethods(version);
  m.xRead = Read;
  m.xWrite = Write;
  m.xSync = Sync;
  if (version >= 2) m.xShmLock = ShmLock;
  return m;
}

const sqlite3_io_methods kMethods[3] = {MakeMethods(1), MakeMethods(2), MakeMethods(3)};

int Open(sqlite3_vfs*, const char* name, sqlite3_file* f, int flags, int* out_flags) {
  auto* ff = reinterpret_cast<FaultFile*>(f);
  ff->real = reinterpret_cast<sqlite3_file*>(ff + 1);
  std::memset(ff->real, 0, static_cast<size_t>(g_real->szOsFile));
  int rc = g_real->xOpen(g_real, name, ff->real, flags, out_flags);
  if (ff->real->pMethods) {
    int v = ff->real->pMethods->iVersion;
    f->pMethods = &kMethods[(v < 1 ? 1 : v > 3 ? 3 : v) - 1];
  } else {
    f->pMethods = nullptr;
  }
  return rc;
}

int Delete(sqlite3_vfs*, const char* name, int sync_dir) {
  return g_real->xDelete(g_real, name, sync_dir);
}
int Access(sqlite3_vfs*, const char* name, int flags, int* out) {
  return g_real->xAccess(g_real, name, flags, out);
}
int FullPathname(sqlite3_vfs*, const char* name, int n, char* out) {
  return g_real->xFullPathname(g_real, name, n, out);
}
void* DlOpen(sqlite3_vfs*, const char* name) { return g_real->xDlOpen(g_real, name); }
void DlError(sqlite3_vfs*, int n, char* msg) { g_real->xDlError(g_real, n, msg); }
void (*DlSym(sqlite3_vfs*, void* h, const char* sym))(void) {
  return g_real->xDlSym(g_real, h, sym);
}
void DlClose(sqlite3_vfs*, void* h) { g_real->xDlClose(g_real, h); }
int Randomness(sqlite3_vfs*, int n, char* out) { return g_real->xRandomness(g_real, n, out); }
int Sleep(sqlite3_vfs*, int us) { return g_real->xSleep(g_real, us); }
int CurrentTime(sqlite3_vfs*, double* t) { return g_real->xCurrentTime(g_real, t); }
int GetLastError(sqlite3_vfs*, int n, char* out) {
  return g_real->xGetLastError ? g_real->xGetLastError(g_real, n, out) : 0;
}
int CurrentTimeInt64(sqlite3_vfs*, sqlite3_int64* t) {
  return g_real->xCurrentTimeInt64(g_real, t);
}

}  // namespace

bool Register() {
  if (sqlite3_vfs_find(kName)) return true;
  sqlite3_initialize();
  g_real = sqlite3_vfs_find(nullptr);
  if (!g_real) return false;
  g_vfs = sqlite3_vfs{};
  g_vfs.iVersion = 2;
  g_vfs.szOsFile = static_cast<int>(sizeof(FaultFile)) + g_real->szOsFile;
  g_vfs.mxPathname = g_real->mxPathname;
  g_vfs.zName = kName;
  g_vfs.xOpen = Open;
  g_vfs.xDelete = Delete;
  g_vfs.xAccess = Access;
  g_vfs.xFullPathname = FullPathname;
  g_vfs.xDlOpen = DlOpen;
  g_vfs.xDlError = DlError;
  g_vfs.xDlSym = DlSym;
  g_vfs.xDlClose = DlClose;
  g_vfs.xRandomness = Randomness;
  g_vfs.xSleep = Sleep;
  g_vfs.xCurrentTime = CurrentTime;
  g_vfs.xGetLastError = GetLastError;
  g_vfs.xCurrentTimeInt64 = CurrentTimeInt64;
  return sqlite3_vfs_register(&g_vfs, 0) == SQLITE_OK;
}

std::string Uri(const std::string& path) { return "file:" + path + "?vfs=" + kName; }

void Arm(Op op, int nth, int rc, bool persistent, bool torn) {
  g_op = -1;
  g_countdown = nth;
  g_rc = rc;
  g_persistent = persistent;
  g_torn = torn;
  g_triggered = 0;
  g_op = static_cast<int>(op);
}

void Disarm() { g_op = -1; }

int Triggered() { return g_triggered.load(); }

void OnWriteLockReleased(std::function<void()> fn) {
  std::lock_guard<std::mutex> lock(g_hook_mu);
  g_on_write_unlock = std::move(fn);
}

int Count(Op op) { return g_counts[static_cast<int>(op)].load(); }

void ResetCounts() {
  for (auto& c : g_counts) c = 0;
}

}  // namespace mentat::reliability::faultvfs
