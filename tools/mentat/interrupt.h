// Ctrl-C: SIGINT interrupts the running command, never the interactive shell.
//
// While a command runs (a CommandScope is alive), SIGINT calls Store::interrupt() on the
// command's store (a running query fails with "interrupted") and sets the cancel flag,
// which long commands such as .import poll between transactions. At the REPL prompt it
// sets the prompt flag (the REPL clears its input). In batch mode outside a command, and
// on a second Ctrl-C during a batch command, it terminates the process as usual.
//
// Thread safety: the flags are lock-free atomics, safe from the signal handler.
#pragma once

#include <atomic>

#include "mentat/store.h"

namespace mentat::cli {

enum class InterruptMode { kRepl, kBatch };

// Installs the SIGINT handler. In the REPL mode without SA_RESTART, so that a blocking
// select() returns EINTR.
void InstallInterruptHandler(InterruptMode mode);

// Marks a running command for the duration of its life. Nested scopes (commands run by
// .read) leave the flags to the outermost one.
class CommandScope {
 public:
  explicit CommandScope(Store* store);
  ~CommandScope();
  CommandScope(const CommandScope&) = delete;
  CommandScope& operator=(const CommandScope&) = delete;
};

// Starts (once) the thread that repeats Store::interrupt() every 20 ms while the cancel
// flag is up during a command, so that a Ctrl-C arriving before a query starts is not
// lost. InstallInterruptHandler starts it.
void StartInterruptWatcher();

// Changes the store that SIGINT interrupts (nullptr: none) while a command runs; .open
// calls it before closing the old store.
void SetInterruptStore(Store* store);

// The flag set by SIGINT during a command; cleared when the next outermost command
// starts.
const std::atomic<bool>& CancelFlag();
// Sets the cancel flag as SIGINT would (for tests).
void RequestCancel();
// True once when SIGINT arrived at the REPL prompt; clears the flag.
bool TakePromptInterrupt();

}  // namespace mentat::cli
