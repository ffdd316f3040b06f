#include "progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "output.h"

namespace mentat::cli {

std::string WithCommas(uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

namespace {

std::string Duration(double seconds) {
  auto s = static_cast<uint64_t>(seconds + 0.5);
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%llu:%02llu:%02llu", static_cast<unsigned long long>(s / 3600),
                  static_cast<unsigned long long>(s / 60 % 60),
                  static_cast<unsigned long long>(s % 60));
  } else {
    std::snprintf(buf, sizeof buf, "%llu:%02llu", static_cast<unsigned long long>(s / 60),
                  static_cast<unsigned long long>(s % 60));
  }
  return buf;
}

}  // namespace

std::string ProgressLine(const std::string& label, uint64_t done_bytes, uint64_t total_bytes,
                         uint64_t datoms, double elapsed_seconds, size_t width) {
  double frac = total_bytes ? std::min(1.0, static_cast<double>(done_bytes) / total_bytes) : 0.0;
  std::string stats =
      "  " + std::to_string(static_cast<int>(frac * 100)) + "%  " + WithCommas(datoms) + " datoms";
  if (elapsed_seconds > 0.05) {
    stats += "  " + WithCommas(static_cast<uint64_t>(datoms / elapsed_seconds)) + " datoms/s";
  }
  if (frac > 0.0 && elapsed_seconds > 0.5) {
    stats += "  ETA " + Duration(elapsed_seconds * (1.0 - frac) / frac);
  }
  std::string head = label;
  size_t fixed = DisplayWidth(head) + DisplayWidth(stats) + 3;
  size_t bar = width > fixed + 10 ? std::min<size_t>(30, width - fixed) : 10;
  auto filled = static_cast<size_t>(frac * bar);
  std::string line =
      head + " [" + std::string(filled, '#') + std::string(bar - filled, '-') + "]" + stats;
  if (width > 0 && line.size() > width) line.resize(width);
  return line;
}

Progress::Progress(bool enabled, int fd, std::string label, uint64_t total_bytes)
    : enabled_(enabled),
      fd_(fd),
      label_(std::move(label)),
      total_(total_bytes),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

Progress::~Progress() { Clear(); }

void Progress::Clear() {
  if (!drawn_) return;
  std::string clear = "\r\033[K";
  [[maybe_unused]] ssize_t n = write(fd_, clear.data(), clear.size());
  drawn_ = false;
}

double Progress::elapsed_seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Progress::Update(uint64_t done_bytes, uint64_t datoms) {
  if (!enabled_) return;
  auto now = std::chrono::steady_clock::now();
  if (now - start_ < std::chrono::milliseconds(300)) return;
  if (drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  size_t width = TerminalWidth(fd_);
  std::string line = "\r" +
                     ProgressLine(label_, done_bytes, total_, datoms, elapsed_seconds(),
                                  width > 1 ? width - 1 : 79) +
                     "\033[K";
  [[maybe_unused]] ssize_t n = write(fd_, line.data(), line.size());
  drawn_ = true;
}

}  // namespace mentat::cli
