// Test support for the sandbox tests: runs probes (scripts that must stop at a limit) in
// forked child processes, so that a probe that runs away fails its test at a deadline
// instead of hanging it, and one that allocates past the memory limit without charging
// it fails on an address-space cap (RLIMIT_AS, except under sanitizers, which reserve
// address space of their own) instead of exhausting the machine.
#pragma once

#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace mentat::script::testing {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

struct Outcome {
  enum Kind { kDone, kTimedOut, kCrashed };
  Kind kind = kCrashed;
  std::string text;  // what the probe returned (kDone), or how the child ended
  double seconds = 0;
};

namespace internal {

inline bool WriteAll(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// Caps the child's address space at what it uses now plus `extra` bytes.
inline void CapAddressSpace(size_t extra) {
  if (kSanitized || extra == 0) return;
  long pages = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld", &pages) != 1) pages = 0;
    std::fclose(f);
  }
  if (pages <= 0) return;
  rlim_t cap = static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) + extra;
  struct rlimit rl = {cap, cap};
  setrlimit(RLIMIT_AS, &rl);
}

// A record: index, seconds, text length, text.
struct Header {
  uint64_t index;
  double seconds;
  uint64_t size;
};

}  // namespace internal

// Runs probe(0) .. probe(n - 1) in order in forked children and returns their outcomes.
// A probe that takes longer than `deadline_seconds` is killed (kTimedOut), one whose
// child dies is kCrashed; the next probe runs in a new child. `setup` runs once in each
// child before its first probe. Children cap their address space at `extra_address_space`
// bytes above what they inherit (0: no cap) and end with _exit, so no atexit handler or
// leak check of the test binary runs in them.
inline std::vector<Outcome> RunIsolated(size_t n, const std::function<void()>& setup,
                                        const std::function<std::string(size_t)>& probe,
                                        double deadline_seconds, size_t extra_address_space) {
  std::vector<Outcome> out(n);
  size_t next = 0;
  while (next < n) {
    int fds[2];
    if (pipe(fds) != 0) {
      out[next].text = "pipe failed";
      ++next;
      continue;
    }
    std::fflush(nullptr);
    pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      internal::CapAddressSpace(extra_address_space);
      setup();
      for (size_t i = next; i < n; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        std::string text = probe(i);
        std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
        internal::Header h{i, dt.count(), text.size()};
        if (!internal::WriteAll(fds[1], &h, sizeof h) ||
            !internal::WriteAll(fds[1], text.data(), text.size())) {
          _exit(2);
        }
      }
      _exit(0);
    }
    close(fds[1]);
    if (pid < 0) {
      close(fds[0]);
      out[next].text = "fork failed";
      ++next;
      continue;
    }
    // Read records until the child ends or the probe it is running passes the deadline.
    std::string buffer;
    auto started = std::chrono::steady_clock::now();  // of probe `next`
    bool timed_out = false;
    for (;;) {
      while (buffer.size() >= sizeof(internal::Header)) {
        internal::Header h;
        std::memcpy(&h, buffer.data(), sizeof h);
        if (buffer.size() < sizeof h + h.size) break;
        Outcome& o = out[h.index];
        o.kind = Outcome::kDone;
        o.seconds = h.seconds;
        o.text = buffer.substr(sizeof h, h.size);
        buffer.erase(0, sizeof h + h.size);
        next = h.index + 1;
        started = std::chrono::steady_clock::now();
      }
      std::chrono::duration<double> waited = std::chrono::steady_clock::now() - started;
      double left = deadline_seconds - waited.count();
      if (left <= 0) {
        timed_out = true;
        break;
      }
      struct pollfd p = {fds[0], POLLIN, 0};
      int r = poll(&p, 1, static_cast<int>(left * 1000) + 1);
      if (r < 0) continue;
      if (r == 0) continue;  // re-checks the deadline
      char chunk[65536];
      ssize_t got = read(fds[0], chunk, sizeof chunk);
      if (got <= 0) break;  // the child ended
      buffer.append(chunk, static_cast<size_t>(got));
    }
    close(fds[0]);
    if (timed_out) kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    if (next < n) {  // the child stopped before its last probe
      Outcome& o = out[next];
      if (timed_out) {
        o.kind = Outcome::kTimedOut;
        o.text = "still running after " + std::to_string(deadline_seconds) + " s (killed)";
        o.seconds = deadline_seconds;
      } else {
        o.kind = Outcome::kCrashed;
        o.text = WIFSIGNALED(status)
                     ? "the child died of signal " + std::to_string(WTERMSIG(status))
                     : "the child exited with " + std::to_string(WEXITSTATUS(status));
      }
      ++next;
    }
  }
  return out;
}

}  // namespace mentat::script::testing
