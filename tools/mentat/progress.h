// A progress bar for long commands (.import) on a terminal: percent done, datoms per
// second and an estimated time to completion, redrawn in place on one line.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace mentat::cli {

// The text of one progress line (without "\r"), at most `width` columns:
// "data.edn [#########-----------]  45%  12,345 datoms  6,170 datoms/s  ETA 0:03".
std::string ProgressLine(const std::string& label, uint64_t done_bytes, uint64_t total_bytes,
                         uint64_t datoms, double elapsed_seconds, size_t width);

// "1,234,567".
std::string WithCommas(uint64_t n);

// Draws ProgressLine on `fd` when enabled (the caller decides: stderr is a terminal).
// Not thread-safe; one per command.
class Progress {
 public:
  Progress(bool enabled, int fd, std::string label, uint64_t total_bytes);
  ~Progress();  // Clear()
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Redraws at most ten times a second; nothing is drawn in the first 0.3 s, so short
  // commands leave no trace.
  void Update(uint64_t done_bytes, uint64_t datoms);
  // The amount Update's done_bytes counts toward, once it is known.
  void SetTotal(uint64_t total) { total_ = total; }
  // Erases the bar (before the command prints its result).
  void Clear();
  double elapsed_seconds() const;

 private:
  bool enabled_;
  bool drawn_ = false;
  int fd_;
  std::string label_;
  uint64_t total_;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace mentat::cli
