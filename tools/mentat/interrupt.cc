#include "interrupt.h"

#include <signal.h>

#include <chrono>
#include <mutex>
#include <thread>

namespace mentat::cli {

namespace {

std::atomic<bool> g_in_command{false};
std::atomic<bool> g_cancel{false};
std::atomic<bool> g_prompt{false};
std::atomic<Store*> g_store{nullptr};
std::atomic<int> g_mode{static_cast<int>(InterruptMode::kBatch)};

static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<Store*>::is_always_lock_free,
              "the SIGINT handler needs lock-free atomics");

void Die() {
  signal(SIGINT, SIG_DFL);
  raise(SIGINT);
}

void OnSigint(int) {
  bool batch = g_mode.load() == static_cast<int>(InterruptMode::kBatch);
  if (g_in_command.load()) {
    if (batch && g_cancel.load()) Die();  // a second Ctrl-C: the user means it
    g_cancel.store(true);
    if (Store* s = g_store.load()) s->interrupt();
    return;
  }
  if (batch) Die();
  g_prompt.store(true);
}

}  // namespace

void InstallInterruptHandler(InterruptMode mode) {
  g_mode.store(static_cast<int>(mode));
  struct sigaction sa {};
  sa.sa_handler = OnSigint;
  sigemptyset(&sa.sa_mask);
  // The REPL's select() must wake up (no SA_RESTART); batch reads and writes restart.
  sa.sa_flags = mode == InterruptMode::kBatch ? SA_RESTART : 0;
  sigaction(SIGINT, &sa, nullptr);
  StartInterruptWatcher();
}

// Nesting depth of CommandScopes (.read runs commands inside a command); only the
// outermost one changes the flags. Touched by the main thread only.
namespace {
int g_depth = 0;
}  // namespace

CommandScope::CommandScope(Store* store) {
  if (g_depth++ > 0) return;
  g_cancel.store(false);
  SetInterruptStore(store);
  g_in_command.store(true);
}

CommandScope::~CommandScope() {
  if (--g_depth > 0) return;
  g_in_command.store(false);
  SetInterruptStore(nullptr);
}

namespace {

// Guards the life of the store behind g_store for the watcher (not for the signal
// handler, which cannot lock: .open and the end of a command clear g_store under it
// before the store can go away).
std::mutex& StoreMutex() {
  static std::mutex mu;
  return mu;
}

}  // namespace

void SetInterruptStore(Store* store) {
  std::lock_guard<std::mutex> lock(StoreMutex());
  g_store.store(store);
}

void StartInterruptWatcher() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Store::interrupt() stops the queries running when it is called; a Ctrl-C that lands
    // while a command is still parsing, or between two queries of one command, would be
    // lost. While the cancel flag is up during a command, repeat it.
    std::thread([] {
      for (;;) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        if (!g_in_command.load() || !g_cancel.load()) continue;
        std::lock_guard<std::mutex> lock(StoreMutex());
        if (!g_in_command.load()) continue;
        if (Store* s = g_store.load()) s->interrupt();
      }
    }).detach();
  });
}

const std::atomic<bool>& CancelFlag() { return g_cancel; }

void RequestCancel() { g_cancel.store(true); }

bool TakePromptInterrupt() { return g_prompt.exchange(false); }

}  // namespace mentat::cli
