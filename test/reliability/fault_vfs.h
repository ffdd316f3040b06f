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

// How many operations of kind `op` ran (or failed) since the last ResetCounts().
int Count(Op op);
void ResetCounts();

}  // namespace mentat::reliability::faultvfs
