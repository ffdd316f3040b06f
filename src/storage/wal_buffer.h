// A SQLite VFS that gathers the small writes SQLite makes to a write-ahead log into large
// ones. SQLite writes each WAL frame as two writes (its 24-byte header, then the page), so
// a commit of n pages costs 2n write system calls; through this VFS it costs one per
// 124 KiB of frames (the most SQLite's unix VFS takes in one write). Every other file,
// and every other operation, goes straight to the VFS underneath.
//
// Guarantees (doc/format.md "Connections and durability"):
//  - A commit is in the operating system before SQLite publishes it: the write of a
//    commit frame's page (the frame whose header carries the database size) writes the
//    buffer out and returns its error, so a failed write fails the commit as it would
//    without the buffer. Readers, in this process or another, read only committed frames.
//  - Order is kept: a write that does not continue the buffered run, and every read, sync,
//    truncate, size query, file control and close, writes the buffer out first.
//  - After a failed write-out the buffer is dropped, as SQLite considers those writes
//    failed and writes the frames again.
#pragma once

#include <string>

#include "mentat/status.h"

struct sqlite3_vfs;

namespace mentat::storage {

// The name of the buffering VFS over the process's default VFS, registered on first use
// (not as the default), or nullptr when buffering is off: MENTAT_WAL_WRITE_BUFFER=0 (KiB;
// default 1024) turns it off. Connection::Open opens files through it unless the URI
// names a VFS.
const char* WalBufferVfs();

// Registers a buffering VFS called `name` over the registered VFS `base` (nullptr: the
// default), with a buffer of `buffer_bytes` per WAL file. For tests that stack it on a
// fault-injecting VFS. Registering an existing name again is a no-op.
Status RegisterWalBufferVfs(const std::string& name, const char* base, size_t buffer_bytes);

// Counts, over the process, of WAL write-outs (system writes) and of the SQLite writes
// they carried: for tests and the micro-benchmarks.
struct WalBufferCounts {
  uint64_t sqlite_writes = 0;
  uint64_t flushes = 0;
};
WalBufferCounts WalBufferStats();

}  // namespace mentat::storage
