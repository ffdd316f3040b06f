// A fault-injecting SQLite VFS for the reliability tests.
//
// "mentat-fault" wraps the default VFS and, when armed, makes the Nth read, write or sync
// (counted from Arm(), over every file SQLite opens through it) fail with a chosen SQLite
// error; optionally every later one too (a full disk), and optionally after writing half
// of the bytes (a torn write). A store opened with the URI from Uri() uses it: mentat
// opens paths with SQLITE_OPEN_URI.
//
// Thread safety: the controls are process-wide atomics; arm and disarm between
// operations, not during them.
#pragma once

#include <functional>
#include <string>

namespace mentat::reliability::faultvfs {

enum class Op { kRead, kWrite, kSync };

// Registers the VFS (idempotent). Returns false when SQLite refused it.
bool Register();

// The URI that opens `path` through the fault VFS.
std::string Uri(const std::string& path);

// The `nth` (1-based) operation of kind `op` from now fails with `rc`; with `persistent`,
// every later one of that kind fails too. With `torn`, a failing write first writes the
// first half of its bytes.
void Arm(Op op, int nth, int rc, bool persistent = false, bool torn = false);
void Disarm();
// How many operations failed since the last Arm().
int Triggered();

// Runs `fn` once, the next time a connection opened through the VFS releases the WAL write
// lock (at the end of its COMMIT, before the connection's next statement), then forgets
// it. `fn` runs on that connection's thread, inside SQLite; it may use other connections
// (not opened through this VFS) to commit in the gap. An empty `fn` disarms.
void OnWriteLockReleased(std::function<void()> fn);

// How many operations of kind `op` ran (or failed) since the last ResetCounts().
int Count(Op op);
void ResetCounts();

}  // namespace mentat::reliability::faultvfs
