#include "storage/vfs.h"

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

std::atomic<uint64_t> g_wal_writes{0};
std::atomic<uint64_t> g_wal_flushes{0};
std::atomic<uint64_t> g_maps_kept{0};
std::atomic<uint64_t> g_maps_dropped{0};
std::atomic<uint64_t> g_sizes_reused{0};
// The wal-index header: its first copy, at the start of the shared memory.
constexpr size_t kWalIndexHdrSize = 48;

// One registered VFS: the sqlite3_vfs SQLite calls (first member, so the sqlite3_vfs*
// SQLite hands back is this object), the VFS underneath and the options.
struct MentatVfsObject {
  sqlite3_vfs vfs{};
  sqlite3_vfs* base = nullptr;
  VfsOptions options;
  std::string name;
};

sqlite3_vfs* Base(sqlite3_vfs* v) { return reinterpret_cast<MentatVfsObject*>(v)->base; }

// Every wrapped file starts with a LayeredFile; the real file (opened by the VFS
// underneath) follows the wrapper's own fields in the same allocation.
using Wrapped = LayeredFile;

sqlite3_file* Real(sqlite3_file* f) { return reinterpret_cast<Wrapped*>(f)->real; }

// ---- Calls passed straight through ----

int PassRead(sqlite3_file* f, void* out, int amt, sqlite3_int64 off) {
  return Real(f)->pMethods->xRead(Real(f), out, amt, off);
}
int PassWrite(sqlite3_file* f, const void* data, int amt, sqlite3_int64 off) {
  return Real(f)->pMethods->xWrite(Real(f), data, amt, off);
}
int PassTruncate(sqlite3_file* f, sqlite3_int64 size) {
  return Real(f)->pMethods->xTruncate(Real(f), size);
}
int PassSync(sqlite3_file* f, int flags) { return Real(f)->pMethods->xSync(Real(f), flags); }
int PassFileSize(sqlite3_file* f, sqlite3_int64* size) {
  return Real(f)->pMethods->xFileSize(Real(f), size);
}
int PassFileControl(sqlite3_file* f, int op, void* arg) {
  return Real(f)->pMethods->xFileControl(Real(f), op, arg);
}
int PassFetch(sqlite3_file* f, sqlite3_int64 off, int amt, void** pp) {
  return Real(f)->pMethods->xFetch(Real(f), off, amt, pp);
}
int PassUnfetch(sqlite3_file* f, sqlite3_int64 off, void* p) {
  return Real(f)->pMethods->xUnfetch(Real(f), off, p);
}
int Lock(sqlite3_file* f, int level) { return Real(f)->pMethods->xLock(Real(f), level); }
int Unlock(sqlite3_file* f, int level) { return Real(f)->pMethods->xUnlock(Real(f), level); }
int CheckReservedLock(sqlite3_file* f, int* out) {
  return Real(f)->pMethods->xCheckReservedLock(Real(f), out);
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

// ---- The WAL write buffer ----

struct WalFile {
  Wrapped w;
  size_t capacity;
  std::vector<char> buf;  // reserved to capacity on first write
  sqlite3_int64 buf_off;  // file offset of buf[0]
  bool flush_after_next;  // the last write was a commit frame's header
};

WalFile* W(sqlite3_file* f) { return reinterpret_cast<WalFile*>(f); }

// The most one xWrite hands the VFS underneath: SQLite's unix VFS writes at most
// 0x1ffff bytes per call and reports a larger write as a full disk.
constexpr size_t kMaxWrite = 31 * 4096;

// Writes the buffered run out. On failure the run is dropped: SQLite takes those writes
// as failed and writes the frames again.
int Flush(WalFile* w) {
  if (w->buf.empty()) return SQLITE_OK;
  g_wal_flushes.fetch_add(1, std::memory_order_relaxed);
  sqlite3_file* real = w->w.real;
  int rc = SQLITE_OK;
  for (size_t at = 0; at < w->buf.size() && rc == SQLITE_OK; at += kMaxWrite) {
    size_t n = std::min(kMaxWrite, w->buf.size() - at);
    rc = real->pMethods->xWrite(real, w->buf.data() + at, static_cast<int>(n),
                                w->buf_off + static_cast<sqlite3_int64>(at));
  }
  w->buf.clear();
  return rc;
}

int WalClose(sqlite3_file* f) {
  WalFile* w = W(f);
  int rc = Flush(w);
  int rc2 = w->w.real->pMethods ? w->w.real->pMethods->xClose(w->w.real) : SQLITE_OK;
  w->buf.~vector();
  f->pMethods = nullptr;
  return rc != SQLITE_OK ? rc : rc2;
}

// A WAL frame header is the only 24-byte write SQLite makes to a WAL file; bytes 4..7
// hold the database size after the commit in a commit frame and zero in any other frame.
bool IsCommitFrameHeader(const void* data, int amt) {
  if (amt != 24) return false;
  const unsigned char* p = static_cast<const unsigned char*>(data);
  return (p[4] | p[5] | p[6] | p[7]) != 0;
}

int WalWrite(sqlite3_file* f, const void* data, int amt, sqlite3_int64 off) {
  WalFile* w = W(f);
  g_wal_writes.fetch_add(1, std::memory_order_relaxed);
  bool commit_page = w->flush_after_next;
  w->flush_after_next = IsCommitFrameHeader(data, amt);
  size_t n = static_cast<size_t>(amt);
  bool continues = !w->buf.empty() && off == w->buf_off + static_cast<sqlite3_int64>(w->buf.size());
  if (!continues || w->buf.size() + n > w->capacity) {
    int rc = Flush(w);
    if (rc != SQLITE_OK) return rc;
  }
  if (n >= w->capacity || n > kMaxWrite) return PassWrite(f, data, amt, off);
  if (w->buf.empty()) {
    if (w->buf.capacity() < w->capacity) w->buf.reserve(w->capacity);
    w->buf_off = off;
  }
  const char* c = static_cast<const char*>(data);
  w->buf.insert(w->buf.end(), c, c + n);
  return commit_page ? Flush(w) : SQLITE_OK;
}

// The calls that write the buffer out first.
int WalRead(sqlite3_file* f, void* out, int amt, sqlite3_int64 off) {
  int rc = Flush(W(f));
  return rc != SQLITE_OK ? rc : PassRead(f, out, amt, off);
}
int WalTruncate(sqlite3_file* f, sqlite3_int64 size) {
  int rc = Flush(W(f));
  return rc != SQLITE_OK ? rc : PassTruncate(f, size);
}
int WalSync(sqlite3_file* f, int flags) {
  int rc = Flush(W(f));
  return rc != SQLITE_OK ? rc : PassSync(f, flags);
}
int WalFileSize(sqlite3_file* f, sqlite3_int64* size) {
  int rc = Flush(W(f));
  return rc != SQLITE_OK ? rc : PassFileSize(f, size);
}
int WalFileControl(sqlite3_file* f, int op, void* arg) {
  int rc = Flush(W(f));
  return rc != SQLITE_OK ? rc : PassFileControl(f, op, arg);
}
int WalFetch(sqlite3_file* f, sqlite3_int64 off, int amt, void** pp) {
  // SQLite maps only the database file, but a mapped read of the WAL would bypass the
  // buffer: write out first all the same.
  int rc = Flush(W(f));
  return rc != SQLITE_OK ? rc : PassFetch(f, off, amt, pp);
}

// ---- The main database file: the memory map kept across snapshots ----

struct MainFile {
  Wrapped w;
  // An upper bound of the mapped size, read after the fetch that made the map; 0: no map
  // made since the last unmap (or none known).
  sqlite3_int64 mapped_upper;
  bool keep_map;
  // The size cache (vfs.h): the wal-index header, region 0 of the shared memory once
  // mapped, and the header and file size of the last size read under an empty WAL.
  bool cache_size;
  bool size_known;
  const volatile unsigned char* shm0;
  unsigned char size_hdr[kWalIndexHdrSize];
  sqlite3_int64 size;
};

MainFile* M(sqlite3_file* f) { return reinterpret_cast<MainFile*>(f); }

// Copies the first copy of the wal-index header; false when it is not initialized or the
// WAL has frames (then the file size may change without the header changing: a
// checkpoint writes frames back into the database file).
bool EmptyWalHeader(const MainFile* m, unsigned char* out) {
  if (!m->shm0) return false;
  for (size_t i = 0; i < kWalIndexHdrSize; ++i) out[i] = m->shm0[i];
  uint32_t mx_frame = 0;
  std::memcpy(&mx_frame, out + 16, sizeof mx_frame);  // native order, as SQLite writes it
  return out[12] == 1 && mx_frame == 0;               // isInit
}

int MainFileSize(sqlite3_file* f, sqlite3_int64* size) {
  MainFile* m = M(f);
  unsigned char hdr[kWalIndexHdrSize];
  bool empty = m->cache_size && EmptyWalHeader(m, hdr);
  if (empty && m->size_known && std::memcmp(hdr, m->size_hdr, kWalIndexHdrSize) == 0) {
    g_sizes_reused.fetch_add(1, std::memory_order_relaxed);
    *size = m->size;
    return SQLITE_OK;
  }
  m->size_known = false;
  int rc = PassFileSize(f, size);
  if (rc == SQLITE_OK && empty) {
    std::memcpy(m->size_hdr, hdr, kWalIndexHdrSize);
    m->size = *size;
    m->size_known = true;
  }
  return rc;
}

int MainWrite(sqlite3_file* f, const void* data, int amt, sqlite3_int64 off) {
  M(f)->size_known = false;
  return PassWrite(f, data, amt, off);
}
int MainTruncate(sqlite3_file* f, sqlite3_int64 size) {
  M(f)->size_known = false;
  return PassTruncate(f, size);
}
int MainShmMap(sqlite3_file* f, int pg, int pgsz, int extend, void volatile** pp) {
  int rc = ShmMap(f, pg, pgsz, extend, pp);
  if (rc == SQLITE_OK && pg == 0 && *pp && pgsz >= static_cast<int>(kWalIndexHdrSize))
    M(f)->shm0 = static_cast<const volatile unsigned char*>(*pp);
  return rc;
}
int MainShmUnmap(sqlite3_file* f, int del) {
  MainFile* m = M(f);
  m->shm0 = nullptr;
  m->size_known = false;
  return ShmUnmap(f, del);
}

int MainFetch(sqlite3_file* f, sqlite3_int64 off, int amt, void** pp) {
  int rc = PassFetch(f, off, amt, pp);
  MainFile* m = M(f);
  if (rc == SQLITE_OK && *pp && m->mapped_upper == 0) {
    // The map exists now and was made no larger than the file is at this moment.
    sqlite3_int64 size = 0;
    if (PassFileSize(f, &size) == SQLITE_OK) m->mapped_upper = size;
  }
  return rc;
}

int MainFileControl(sqlite3_file* f, int op, void* arg) {
  // A new mmap limit makes the VFS underneath map the file again, at its size now.
  if (op == SQLITE_FCNTL_MMAP_SIZE) M(f)->mapped_upper = 0;
  return PassFileControl(f, op, arg);
}

int MainUnfetch(sqlite3_file* f, sqlite3_int64 off, void* p) {
  MainFile* m = M(f);
  // p == nullptr asks to unmap the whole file (SQLite does so when a read transaction
  // starts on another snapshot, and only with no page of the map in use).
  if (p == nullptr && m->keep_map && m->mapped_upper > 0) {
    sqlite3_int64 size = 0;
    if (PassFileSize(f, &size) == SQLITE_OK && size >= m->mapped_upper &&
        size - m->mapped_upper <= m->mapped_upper / 8) {
      g_maps_kept.fetch_add(1, std::memory_order_relaxed);
      return SQLITE_OK;
    }
    g_maps_dropped.fetch_add(1, std::memory_order_relaxed);
  }
  if (p == nullptr) m->mapped_upper = 0;
  return PassUnfetch(f, off, p);
}

// ---- Method tables: versions 1..3, a wrapper offers what its real file offers ----

sqlite3_io_methods MakeMethods(int version, bool wal) {
  sqlite3_io_methods m = PassThroughMethods(version);
  if (wal) {
    m.xClose = WalClose;
    m.xRead = WalRead;
    m.xWrite = WalWrite;
    m.xTruncate = WalTruncate;
    m.xSync = WalSync;
    m.xFileSize = WalFileSize;
    m.xFileControl = WalFileControl;
    if (version >= 3) m.xFetch = WalFetch;
  } else {
    m.xFileControl = MainFileControl;
    m.xFileSize = MainFileSize;
    m.xWrite = MainWrite;
    m.xTruncate = MainTruncate;
    if (version >= 2) {
      m.xShmMap = MainShmMap;
      m.xShmUnmap = MainShmUnmap;
    }
    if (version >= 3) {
      m.xFetch = MainFetch;
      m.xUnfetch = MainUnfetch;
    }
  }
  return m;
}

const sqlite3_io_methods kWalMethods[3] = {MakeMethods(1, true), MakeMethods(2, true),
                                           MakeMethods(3, true)};
const sqlite3_io_methods kMainMethods[3] = {MakeMethods(1, false), MakeMethods(2, false),
                                            MakeMethods(3, false)};

// WAL files (with a buffer) and main database files (with map keeping) are wrapped;
// every other file is opened by the VFS underneath straight into SQLite's allocation
// (szOsFile covers every layout), so it runs without a wrapper.
int Open(sqlite3_vfs* v, const char* name, sqlite3_file* f, int flags, int* out_flags) {
  sqlite3_vfs* base = Base(v);
  const VfsOptions& o = reinterpret_cast<MentatVfsObject*>(v)->options;
  bool wal = (flags & SQLITE_OPEN_WAL) && o.wal_buffer_bytes > 0;
  bool main = (flags & SQLITE_OPEN_MAIN_DB) && (o.keep_map || o.cache_size);
  if (!wal && !main) return base->xOpen(base, name, f, flags, out_flags);
  Wrapped* w = reinterpret_cast<Wrapped*>(f);
  w->base.pMethods = nullptr;
  w->real = reinterpret_cast<sqlite3_file*>(reinterpret_cast<char*>(f) +
                                            (wal ? sizeof(WalFile) : sizeof(MainFile)));
  int rc = base->xOpen(base, name, w->real, flags, out_flags);
  if (rc != SQLITE_OK || !w->real->pMethods) return rc;
  int version = w->real->pMethods->iVersion;
  int slot = version < 1 ? 0 : version > 3 ? 2 : version - 1;
  if (wal) {
    WalFile* wf = W(f);
    new (&wf->buf) std::vector<char>();
    wf->capacity = o.wal_buffer_bytes;
    wf->buf_off = 0;
    wf->flush_after_next = false;
    w->base.pMethods = &kWalMethods[slot];
  } else {
    MainFile* m = M(f);
    m->mapped_upper = 0;
    m->keep_map = o.keep_map;
    m->cache_size = o.cache_size;
    m->size_known = false;
    m->shm0 = nullptr;
    w->base.pMethods = &kMainMethods[slot];
  }
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
std::map<std::string, std::unique_ptr<MentatVfsObject>>& Registry() {
  static auto* r = new std::map<std::string, std::unique_ptr<MentatVfsObject>>();
  return *r;
}

constexpr const char* kDefaultName = "mentat";

int64_t EnvInt(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  long long x = std::strtoll(v, &end, 10);
  return (*end == '\0' && x >= 0) ? x : fallback;
}

}  // namespace

Status RegisterVfs(const std::string& name, const char* base_name, const VfsOptions& options) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (Registry().count(name)) return Status::OK();
#ifndef MENTAT_SQLITE_EXTENSION  // an extension's host has initialized SQLite
  if (sqlite3_initialize() != SQLITE_OK) return Status::Io("cannot initialize SQLite");
#endif
  sqlite3_vfs* base = sqlite3_vfs_find(base_name);
  if (!base)
    return Status::NotFound(std::string("no SQLite VFS named ") +
                            (base_name ? base_name : "(default)"));
  auto b = std::make_unique<MentatVfsObject>();
  b->base = base;
  b->options = options;
  b->name = name;
  sqlite3_vfs& v = b->vfs;
  v.iVersion = 2;
  size_t wrapped =
      std::max(sizeof(WalFile), sizeof(MainFile)) + static_cast<size_t>(base->szOsFile);
  v.szOsFile = static_cast<int>(wrapped);
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

const char* MentatVfs() {
  static const char* name = []() -> const char* {
    VfsOptions o;
    o.wal_buffer_bytes = static_cast<size_t>(EnvInt("MENTAT_WAL_WRITE_BUFFER", 1024)) * 1024;
    o.keep_map = EnvInt("MENTAT_MMAP_KEEP", 1) != 0;
    o.cache_size = EnvInt("MENTAT_SIZE_CACHE", 1) != 0;
    if (o.wal_buffer_bytes == 0 && !o.keep_map && !o.cache_size) return nullptr;
    if (!RegisterVfs(kDefaultName, nullptr, o).ok()) return nullptr;
    return kDefaultName;
  }();
  return name;
}

static int PassClose(sqlite3_file* f) {
  sqlite3_file* real = Real(f);
  int rc = real->pMethods ? real->pMethods->xClose(real) : SQLITE_OK;
  f->pMethods = nullptr;
  return rc;
}

sqlite3_io_methods PassThroughMethods(int version) {
  sqlite3_io_methods m{};
  m.iVersion = version;
  m.xClose = PassClose;
  m.xRead = PassRead;
  m.xWrite = PassWrite;
  m.xTruncate = PassTruncate;
  m.xSync = PassSync;
  m.xFileSize = PassFileSize;
  m.xLock = Lock;
  m.xUnlock = Unlock;
  m.xCheckReservedLock = CheckReservedLock;
  m.xFileControl = PassFileControl;
  m.xSectorSize = SectorSize;
  m.xDeviceCharacteristics = DeviceCharacteristics;
  if (version >= 2) {
    m.xShmMap = ShmMap;
    m.xShmLock = ShmLock;
    m.xShmBarrier = ShmBarrier;
    m.xShmUnmap = ShmUnmap;
  }
  if (version >= 3) {
    m.xFetch = PassFetch;
    m.xUnfetch = PassUnfetch;
  }
  return m;
}

VfsCounts VfsStats() {
  return VfsCounts{g_wal_writes.load(), g_wal_flushes.load(), g_maps_kept.load(),
                   g_maps_dropped.load(), g_sizes_reused.load()};
}

}  // namespace mentat::storage
