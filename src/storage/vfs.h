// mentat's SQLite VFS: a thin layer over the default VFS with three jobs, each of which a
// plain SQLite connection cannot be configured to do (doc/format.md "Connections and
// durability"). The file format is unchanged; any SQLite reads a store written through it.
//
// WAL write buffer. SQLite writes each WAL frame as two writes (its 24-byte header, then
// the page), so a commit of n pages costs 2n write system calls; through this layer it
// costs one per 124 KiB of frames (the most SQLite's unix VFS takes in one write).
//  - A commit is in the operating system before SQLite publishes it: the write of a
//    commit frame's page (the frame whose header carries the database size) writes the
//    buffer out and returns its error, so a failed write fails the commit as it would
//    without the buffer. Readers, in this process or another, read only committed frames.
//  - Order is kept: a write that does not continue the buffered run, and every read, sync,
//    truncate, size query, file control and close, writes the buffer out first.
//  - After a failed write-out the buffer is dropped, as SQLite considers those writes
//    failed and writes the frames again.
//
// Memory map kept across snapshots. With mmap on, SQLite unmaps the whole database file
// whenever a read transaction starts on a snapshot other than the connection's last
// (another connection committed), so a reader beside a busy writer unmapped and faulted
// its pages in again for nearly every read. This layer ignores that request while the
// file is no smaller than it was when the map was made and has not grown by more than an
// eighth since (then the map is dropped as SQLite asked, and the next read maps the file
// anew). Pages the map does not cover are read with read(), as SQLite does anyway.
// SQLite unmaps so conservatively for portability: a file truncated and extended again
// by another process could leave some systems' maps stale. On Linux a shared file map
// stays coherent with the file through truncation and re-extension, and SQLite reads
// from the file only pages the snapshot has there, never past its end.
//
// Database size kept while the WAL is empty. When a read transaction starts and the WAL
// holds no frames, SQLite asks the database file's size (an fstat, over a microsecond on
// a virtual machine: a sixth of a point lookup). The size can only change through a
// checkpoint (frames written back) or a write of this file; a checkpoint needs frames,
// and frames change the wal-index header in shared memory (every commit bumps its change
// counter, every WAL restart its salts). So this layer answers the size from its last
// reading while the header is byte for byte the one seen then with no frames, and this
// file was not written or truncated since; anything else reads the size again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "mentat/status.h"
#include "storage/sqlite_api.h"

namespace mentat::storage {

// A file of a VFS layered over another (this one, or a test's fault-injecting VFS):
// SQLite's view of it first, then the file the VFS underneath opened.
struct LayeredFile {
  sqlite3_file base;
  sqlite3_file* real;
};
// Method tables of `version` (1..3) for a LayeredFile that pass every call to `real`; a
// layer replaces the calls it changes.
sqlite3_io_methods PassThroughMethods(int version);

struct VfsOptions {
  size_t wal_buffer_bytes = 1024 * 1024;  // 0: WAL writes go straight through
  bool keep_map = true;                   // false: SQLite unmaps as it asks
  bool cache_size = true;                 // false: every size query reads the file's size
};

// The name of mentat's VFS over the process's default VFS, registered on first use (not
// as the default), or nullptr when every job is off. MENTAT_WAL_WRITE_BUFFER (KiB,
// default 1024; 0 off), MENTAT_MMAP_KEEP and MENTAT_SIZE_CACHE (default 1; 0 off) set the
// options.
// Connection::Open opens files through it unless the URI names a VFS.
const char* MentatVfs();

// Registers a VFS called `name` over the registered VFS `base` (nullptr: the default):
// for tests that stack it on a fault-injecting VFS or set its options. Registering an
// existing name again is a no-op.
Status RegisterVfs(const std::string& name, const char* base, const VfsOptions& options);

// Counts over the process, for tests and benchmarks: SQLite's WAL writes and the
// write-outs that carried them; the unmap requests ignored and those passed on.
struct VfsCounts {
  uint64_t wal_writes = 0;
  uint64_t wal_flushes = 0;
  uint64_t maps_kept = 0;
  uint64_t maps_dropped = 0;
  uint64_t sizes_reused = 0;  // database size queries answered from the size cache
};
VfsCounts VfsStats();

}  // namespace mentat::storage
