#include "storage/wal_buffer.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#include "storage/sqlite_api.h"

namespace mentat::storage {
namespace {

std::atomic<uint64_t> g_sqlite_writes{0};
std::atomic<uint64_t> g_flushes{0};

// One registered buffering VFS: the sqlite3_vfs SQLite calls (first member, so the
// sqlite3_vfs* SQLite hands back is this object), the VFS underneath and the buffer size.
struct BufferVfs {
  sqlite3_vfs vfs{};
  sqlite3_vfs* base = nullptr;
  size_t buffer_bytes = 0;
  std::string name;
};

sqlite3_vfs* Base(sqlite3_vfs* v) { return reinterpret_cast<BufferVfs*>(v)->base; }

// An open WAL file: our methods in `base`, the real file (opened by the VFS underneath)
// right after this struct in the same allocation.
struct WalFile {
  sqlite3_file base;
  sqlite3_file* real;
  size_t capacity;
  std::vector<char> buf;  // reserved to capacity on first write
  sqlite3_int64 buf_off;  // file offset of buf[0]
  bool flush_after_next;  // the last write was a commit frame's header
};

WalFile* W(sqlite3_file* f) { return reinterpret_cast<WalFile*>(f); }
sqlite3_file* Real(sqlite3_file* f) { return W(f)->real; }

// The most one xWrite hands the VFS underneath: SQLite's unix VFS writes at most
// 0x1ffff bytes per call and reports a larger write as a full disk.
constexpr size_t kMaxWrite = 31 * 4096;

// Writes the buffered run out. On failure the run is dropped: SQLite takes those writes
// as failed and writes the frames again.
int Flush(WalFile* w) {
  if (w->buf.empty()) return SQLITE_OK;
  g_flushes.fetch_add(1, std::memory_order_relaxed);
  int rc = SQLITE_OK;
  for (size_t at = 0; at < w->buf.size() && rc == SQLITE_OK; at += kMaxWrite) {
    size_t n = std::min(kMaxWrite, w->buf.size() - at);
    rc = w->real->pMethods->xWrite(w->real, w->buf.data() + at, static_cast<int>(n),
                                   w->buf_off + static_cast<sqlite3_int64>(at));
  }
  w->buf.clear();
  return rc;
}

int Close(sqlite3_file* f) {
  WalFile* w = W(f);
  int rc = Flush(w);
  int rc2 = w->real->pMethods ? w->real->pMethods->xClose(w->real) : SQLITE_OK;
  w->buf.~vector();
  f->pMethods = nullptr;
  return rc != SQLITE_OK ? rc : rc2;
}

int Read(sqlite3_file* f, void* out, int amt, sqlite3_int64 off) {
  int rc = Flush(W(f));
  if (rc != SQLITE_OK) return rc;
  return Real(f)->pMethods->xRead(Real(f), out, amt, off);
}

// A WAL frame header is the only 24-byte write SQLite makes to a WAL file; bytes 4..7
// hold the database size after the commit in a commit frame and zero in any other frame.
bool IsCommitFrameHeader(const void* data, int amt) {
  if (amt != 24) return false;
  const unsigned char* p = static_cast<const unsigned char*>(data);
  return (p[4] | p[5] | p[6] | p[7]) != 0;
}

int Write(sqlite3_file* f, const void* data, int amt, sqlite3_int64 off) {
  WalFile* w = W(f);
  g_sqlite_writes.fetch_add(1, std::memory_order_relaxed);
  bool commit_page = w->flush_after_next;
  w->flush_after_next = IsCommitFrameHeader(data, amt);
  size_t n = static_cast<size_t>(amt);
  bool continues = !w->buf.empty() && off == w->buf_off + static_cast<sqlite3_int64>(w->buf.size());
  if (!continues || w->buf.size() + n > w->capacity) {
    int rc = Flush(w);
    if (rc != SQLITE_OK) return rc;
  }
  if (n >= w->capacity || n > kMaxWrite) return w->real->pMethods->xWrite(w->real, data, amt, off);
  if (w->buf.empty()) {
    if (w->buf.capacity() < w->capacity) w->buf.reserve(w->capacity);
    w->buf_off = off;
  }
  const char* c = static_cast<const char*>(data);
  w->buf.insert(w->buf.end(), c, c + n);
  return commit_page ? Flush(w) : SQLITE_OK;
}

int Truncate(sqlite3_file* f, sqlite3_int64 size) {
  int rc = Flush(W(f));
  if (rc != SQLITE_OK) return rc;
  return Real(f)->pMethods->xTruncate(Real(f), size);
}
int Sync(sqlite3_file* f, int flags) {
  int rc = Flush(W(f));
  if (rc != SQLITE_OK) return rc;
  return Real(f)->pMethods->xSync(Real(f), flags);
}
int FileSize(sqlite3_file* f, sqlite3_int64* size) {
  int rc = Flush(W(f));
  if (rc != SQLITE_OK) return rc;
  return Real(f)->pMethods->xFileSize(Real(f), size);
}
int Lock(sqlite3_file* f, int level) { return Real(f)->pMethods->xLock(Real(f), level); }
int Unlock(sqlite3_file* f, int level) { return Real(f)->pMethods->xUnlock(Real(f), level); }
int CheckReservedLock(sqlite3_file* f, int* out) {
  return Real(f)->pMethods->xCheckReservedLock(Real(f), out);
}
int FileControl(sqlite3_file* f, int op, void* arg) {
  int rc = Flush(W(f));
  if (rc != SQLITE_OK) return rc;
  return Real(f)->pMethods->xFileControl(Real(f), op, arg);
}
int SectorSize(sqlite3_file* f) { return Real(f)->pMethods->xSectorSize(Real(f)); }
int DeviceCharacteristics(sqlite3_file* f) {
  return Real(f)->pMethods->xDeviceCharacteristics(Real(f));
}
int ShmMap(sqlite3_file* f, int pg, int pgsz, int extend, void volatile** pp) {
  return Real(f)->pMethods->xShmMap(Real(f), pg, pgsz, extend, pp);
}
int ShmLock(sqlite3_file* f, int offset, int n, int flags) {
  return Real(f)->pMethods->xShmLock(Real(f), offset, n, flags);
}
void ShmBarrier(sqlite3_file* f) { Real(f)->pMethods->xShmBarrier(Real(f)); }
int ShmUnmap(sqlite3_file* f, int del) { return Real(f)->pMethods->xShmUnmap(Real(f), del); }
int Fetch(sqlite3_file* f, sqlite3_int64 off, int amt, void** pp) {
  // Memory-mapped reads of the WAL would bypass the buffer; SQLite maps only the database
  // file, but write out first all the same.
  int rc = Flush(W(f));
  if (rc != SQLITE_OK) return rc;
  return Real(f)->pMethods->xFetch(Real(f), off, amt, pp);
}
int Unfetch(sqlite3_file* f, sqlite3_int64 off, void* p) {
  return Real(f)->pMethods->xUnfetch(Real(f), off, p);
}

// Versions 1..3 of the method table; a WAL file offers what its real file offers.
sqlite3_io_methods MakeMethods(int version) {
  sqlite3_io_methods m{};
  m.iVersion = version;
  m.xClose = Close;
  m.xRead = Read;
  m.xWrite = Write;
  m.xTruncate = Truncate;
  m.xSync = Sync;
  m.xFileSize = FileSize;
  m.xLock = Lock;
  m.xUnlock = Unlock;
  m.xCheckReservedLock = CheckReservedLock;
  m.xFileControl = FileControl;
  m.xSectorSize = SectorSize;
  m.xDeviceCharacteristics = DeviceCharacteristics;
  if (version >= 2) {
    m.xShmMap = ShmMap;
    m.xShmLock = ShmLock;
    m.xShmBarrier = ShmBarrier;
    m.xShmUnmap = ShmUnmap;
  }
  if (version >= 3) {
    m.xFetch = Fetch;
    m.xUnfetch = Unfetch;
  }
  return m;
}

const sqlite3_io_methods kMethods[3] = {MakeMethods(1), MakeMethods(2), MakeMethods(3)};

// WAL files get the buffer; every other file is opened by the VFS underneath straight
// into SQLite's allocation (szOsFile covers both layouts), so it runs without a wrapper.
int Open(sqlite3_vfs* v, const char* name, sqlite3_file* f, int flags, int* out_flags) {
  sqlite3_vfs* base = Base(v);
  if (!(flags & SQLITE_OPEN_WAL)) return base->xOpen(base, name, f, flags, out_flags);
  WalFile* w = W(f);
  w->real = reinterpret_cast<sqlite3_file*>(w + 1);
  w->base.pMethods = nullptr;
  int rc = base->xOpen(base, name, w->real, flags, out_flags);
  if (rc != SQLITE_OK || !w->real->pMethods) return rc;
  new (&w->buf) std::vector<char>();
  w->capacity = reinterpret_cast<BufferVfs*>(v)->buffer_bytes;
  w->buf_off = 0;
  w->flush_after_next = false;
  int version = w->real->pMethods->iVersion;
  w->base.pMethods = &kMethods[version < 1 ? 0 : version > 3 ? 2 : version - 1];
  return SQLITE_OK;
}

int Delete(sqlite3_vfs* v, const char* name, int sync_dir) {
  return Base(v)->xDelete(Base(v), name, sync_dir);
}
int Access(sqlite3_vfs* v, const char* name, int flags, int* out) {
  return Base(v)->xAccess(Base(v), name, flags, out);
}
int FullPathname(sqlite3_vfs* v, const char* name, int n, char* out) {
  return Base(v)->xFullPathname(Base(v), name, n, out);
}
void* DlOpen(sqlite3_vfs* v, const char* name) { return Base(v)->xDlOpen(Base(v), name); }
void DlError(sqlite3_vfs* v, int n, char* msg) { Base(v)->xDlError(Base(v), n, msg); }
void (*DlSym(sqlite3_vfs* v, void* h, const char* sym))(void) {
  return Base(v)->xDlSym(Base(v), h, sym);
}
void DlClose(sqlite3_vfs* v, void* h) { Base(v)->xDlClose(Base(v), h); }
int Randomness(sqlite3_vfs* v, int n, char* out) { return Base(v)->xRandomness(Base(v), n, out); }
int Sleep(sqlite3_vfs* v, int us) { return Base(v)->xSleep(Base(v), us); }
int CurrentTime(sqlite3_vfs* v, double* t) { return Base(v)->xCurrentTime(Base(v), t); }
int GetLastError(sqlite3_vfs* v, int n, char* out) {
  return Base(v)->xGetLastError(Base(v), n, out);
}
int CurrentTimeInt64(sqlite3_vfs* v, sqlite3_int64* t) {
  sqlite3_vfs* b = Base(v);
  if (b->iVersion >= 2 && b->xCurrentTimeInt64) return b->xCurrentTimeInt64(b, t);
  double d = 0;
  int rc = b->xCurrentTime(b, &d);
  *t = static_cast<sqlite3_int64>(d * 86400000.0);
  return rc;
}

std::mutex g_mu;
// Registered VFSes live for the process (SQLite keeps pointers to them).
std::map<std::string, std::unique_ptr<BufferVfs>>& Registry() {
  static auto* r = new std::map<std::string, std::unique_ptr<BufferVfs>>();
  return *r;
}

constexpr const char* kDefaultName = "mentat-walbuf";

}  // namespace

Status RegisterWalBufferVfs(const std::string& name, const char* base_name, size_t buffer_bytes) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (Registry().count(name)) return Status::OK();
#ifndef MENTAT_SQLITE_EXTENSION  // an extension's host has initialized SQLite
  if (sqlite3_initialize() != SQLITE_OK) return Status::Io("cannot initialize SQLite");
#endif
  sqlite3_vfs* base = sqlite3_vfs_find(base_name);
  if (!base)
    return Status::NotFound(std::string("no SQLite VFS named ") +
                            (base_name ? base_name : "(default)"));
  auto b = std::make_unique<BufferVfs>();
  b->base = base;
  b->buffer_bytes = buffer_bytes;
  b->name = name;
  sqlite3_vfs& v = b->vfs;
  v.iVersion = 2;
  size_t wal_size = sizeof(WalFile) + static_cast<size_t>(base->szOsFile);
  v.szOsFile = static_cast<int>(std::max(wal_size, static_cast<size_t>(base->szOsFile)));
  v.mxPathname = base->mxPathname;
  v.zName = b->name.c_str();
  v.xOpen = Open;
  v.xDelete = Delete;
  v.xAccess = Access;
  v.xFullPathname = FullPathname;
  v.xDlOpen = DlOpen;
  v.xDlError = DlError;
  v.xDlSym = DlSym;
  v.xDlClose = DlClose;
  v.xRandomness = Randomness;
  v.xSleep = Sleep;
  v.xCurrentTime = CurrentTime;
  v.xGetLastError = GetLastError;
  v.xCurrentTimeInt64 = CurrentTimeInt64;
  if (sqlite3_vfs_register(&v, 0) != SQLITE_OK)
    return Status::Io("cannot register the SQLite VFS " + name);
  Registry().emplace(name, std::move(b));
  return Status::OK();
}

const char* WalBufferVfs() {
  static const char* name = []() -> const char* {
    size_t kib = 1024;
    if (const char* env = std::getenv("MENTAT_WAL_WRITE_BUFFER")) {
      char* end = nullptr;
      unsigned long long n = std::strtoull(env, &end, 10);
      if (end != env && *end == '\0') kib = static_cast<size_t>(n);
    }
    if (kib == 0) return nullptr;
    if (!RegisterWalBufferVfs(kDefaultName, nullptr, kib * 1024).ok()) return nullptr;
    return kDefaultName;
  }();
  return name;
}

WalBufferCounts WalBufferStats() {
  return WalBufferCounts{g_sqlite_writes.load(), g_flushes.load()};
}

}  // namespace mentat::storage
