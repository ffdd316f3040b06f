#include "import.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "import_records.h"
#include "import_values.h"
#include "input.h"

namespace mentat::cli {

uint64_t FileSize(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return 0;
  return static_cast<uint64_t>(st.st_size);
}

namespace {

// A file to import: memory-mapped when it is a regular file (the whole text at once, no
// copy); otherwise (a pipe, a device, standard input) read as a stream in a window of
// bounded size (Stream below), so that no input makes the import hold more than a few
// times its largest transaction.
class FileText {
 public:
  FileText() = default;
  ~FileText() {
    if (map_) munmap(map_, size_);
    if (fd_ >= 0) close(fd_);
  }
  FileText(const FileText&) = delete;
  FileText& operator=(const FileText&) = delete;

  Status Open(const std::string& path) {
    path_ = path;
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Status::NotFound("cannot open '" + path + "': " + std::strerror(errno));
    struct stat st {};
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
      close(fd);
      return Status::InvalidArgument("'" + path + "' is a directory");
    }
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
      if (st.st_size > 0) {
        void* p = mmap(nullptr, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
          close(fd);
          return Status::Io("cannot map '" + path + "': " + std::strerror(errno));
        }
        map_ = p;
        size_ = st.st_size;
        madvise(map_, size_, MADV_SEQUENTIAL);
      }
      close(fd);
      regular_ = true;
      return Status::OK();
    }
    fd_ = fd;
    return Status::OK();
  }

  bool regular() const { return regular_; }
  std::string_view text() const {
    return map_ ? std::string_view(static_cast<const char*>(map_), size_) : std::string_view();
  }
  int fd() const { return fd_; }

 private:
  std::string path_;
  void* map_ = nullptr;
  size_t size_ = 0;
  bool regular_ = false;
  int fd_ = -1;
};

// A window over a stream: bytes read and not yet consumed, with the line and column at
// which the window starts (for error positions).
class Stream {
 public:
  Stream(int fd, std::string name) : fd_(fd), name_(std::move(name)) {}

  std::string_view window() const { return std::string_view(buf_).substr(start_); }
  bool eof() const { return eof_; }
  uint64_t consumed() const { return consumed_; }

  // Reads more: at least as much as the window already holds (so that parsing again from
  // the window's start costs O(total) over all refills), at least 1 MiB.
  Status More() {
    size_t want = std::max<size_t>(size_t{1} << 20, window().size());
    if (window().size() + want > kMaxWindow)
      want = kMaxWindow - std::min(kMaxWindow, window().size());
    if (want == 0)
      return Status::InvalidArgument(
          "a single transaction (top-level form) of more than " + std::to_string(kMaxWindow >> 20) +
          " MiB, or bytes that do not end one, in " + name_ +
          " (a pipe or device; a regular file is imported without this limit)");
    if (start_ > 0) {
      buf_.erase(0, start_);
      start_ = 0;
    }
    size_t old = buf_.size();
    buf_.resize(old + want);
    size_t got = 0;
    while (got < want) {
      ssize_t n = read(fd_, buf_.data() + old + got, want - got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        buf_.resize(old + got);
        return Status::Io("cannot read '" + name_ + "': " + std::strerror(errno));
      }
      if (n == 0) {
        eof_ = true;
        break;
      }
      got += static_cast<size_t>(n);
    }
    buf_.resize(old + got);
    return Status::OK();
  }

  void Consume(size_t n) {
    for (size_t i = start_; i < start_ + n; ++i) {
      if (buf_[i] == '\n') {
        ++line_;
        col_ = 0;
      } else {
        ++col_;
      }
    }
    start_ += n;
    consumed_ += n;
  }

  // `st` (positions relative to the window) with positions in the whole stream.
  Status Absolute(const Status& st) const {
    unsigned line = 0, col = 0;
    const std::string& msg = st.message();
    if (!ErrorPosition(msg, &line, &col)) return st;
    std::string prefix = std::to_string(line) + ":" + std::to_string(col) + ":";
    if (msg.rfind(prefix, 0) != 0) return st;
    unsigned abs_col = line == 1 ? col + static_cast<unsigned>(col_) : col;
    return Status(st.code(), std::to_string(line + line_) + ":" + std::to_string(abs_col) + ":" +
                                 msg.substr(prefix.size()));
  }

  static constexpr size_t kMaxWindow = size_t{256} << 20;

 private:
  int fd_;
  std::string name_;
  std::string buf_;
  size_t start_ = 0;
  uint64_t consumed_ = 0;
  size_t line_ = 0;  // newlines before the window
  size_t col_ = 0;   // bytes since the last of them
  bool eof_ = false;
};

std::string Summary(const ImportStats& stats) {
  return "committed before the error: " + Committed(stats);
}

// Rewrites "L:C: message" (about `text`) as "NAME:L:C: message" with the line and a
// caret; other messages, and all messages when `where` is given, become "NAME: message"
// (or "NAME:WHERE: message").
// With `stream`, `st` and `text` are the stream's window, and the message gets the
// position in the whole stream (the caret line is the window's).
Status InFile(const Status& st, const std::string& name, std::string_view text,
              const ImportStats& stats, const std::string& where = "",
              const Stream* stream = nullptr) {
  const std::string msg = stream ? stream->Absolute(st).message() : st.message();
  unsigned line = 0, col = 0;
  std::string located;
  if (where.empty() && ErrorPosition(msg, &line, &col)) {
    std::string prefix = std::to_string(line) + ":" + std::to_string(col) + ":";
    located = name + ":" + (msg.rfind(prefix, 0) == 0 ? msg : prefix + " " + msg);
    if (stream) ErrorPosition(st.message(), &line, &col);
    std::string caret = CaretLines(text, line, col);
    if (!caret.empty()) located += "\n" + caret;
  } else {
    located = name + (where.empty() ? "" : ":" + where) + ": " + msg;
  }
  return Status(st.code(), located + "\n" + Summary(stats));
}

void Count(const TxReport& r, const ImportOptions& options, ImportStats* stats) {
  ++stats->transactions;
  for (const auto& d : r.tx_data)
    if (d.e != r.tx_id) ++stats->datoms;
  if (options.collect_tempids)
    for (const auto& [k, v] : r.tempids) stats->tempids[k] = v;
}

Status Cancelled(const std::string& name, const ImportStats& stats) {
  return Status::Interrupted("interrupted: " + name + ": committed " + Committed(stats) +
                             "; the rest was not imported");
}

// Commits one top-level form `tx` of `text` (the file, or a stream's window).
Status TransactForm(Store& store, const edn::Value& tx, std::string_view text,
                    const std::string& name, const ImportOptions& options, ImportStats* stats,
                    const Stream* stream) {
  if (!tx.is_vector()) {
    std::string pos = std::to_string(tx.pos().line) + ":" + std::to_string(tx.pos().col);
    return InFile(Status::InvalidArgument(pos +
                                          ": expected a transaction (a vector of entity "
                                          "maps and list forms), got " +
                                          std::string(edn::KindName(tx.kind()))),
                  name, text, *stats, "", stream);
  }
  if (options.cancel && options.cancel->load()) return Cancelled(name, *stats);
  auto report = store.transact(tx);
  if (!report.ok()) return InFile(report.status(), name, text, *stats, "", stream);
  Count(*report, options, stats);
  return Status::OK();
}

Status ImportEdn(Store& store, std::string_view text, const std::string& name,
                 const ImportOptions& options, ImportStats* stats) {
  edn::Reader reader(text);
  for (;;) {
    auto form = reader.Next();
    if (!form.ok()) return InFile(form.status(), name, text, *stats);
    if (!form->has_value()) break;
    MENTAT_RETURN_IF_ERROR(TransactForm(store, **form, text, name, options, stats, nullptr));
    if (options.progress) options.progress(reader.offset(), stats->datoms);
  }
  return Status::OK();
}

// The same over a stream (a pipe, a device): the next form is parsed from the window;
// when the window may end inside it (it is unterminated, or holds nothing but blanks, or
// the error might be a token cut in two), more is read and it is parsed again.
Status ImportEdnStream(Store& store, Stream& in, const std::string& name,
                       const ImportOptions& options, ImportStats* stats) {
  std::string last_error;
  for (;;) {
    std::string_view w = in.window();
    edn::Reader reader(w);
    auto form = reader.Next();
    if (!in.eof() && (!form.ok() || !form->has_value())) {
      bool retry = form.ok() || form.status().message().find("unterminated") != std::string::npos ||
                   form.status().message() != last_error;
      if (retry) {
        if (!form.ok()) last_error = form.status().message();
        Status more = in.More();
        if (more.ok()) continue;
        if (form.ok()) return more;
      }
      return InFile(form.status(), name, w, *stats, "", &in);
    }
    last_error.clear();
    if (!form.ok()) return InFile(form.status(), name, w, *stats, "", &in);
    if (!form->has_value()) break;
    MENTAT_RETURN_IF_ERROR(TransactForm(store, **form, w, name, options, stats, &in));
    in.Consume(reader.offset());
    if (options.progress) options.progress(in.consumed(), stats->datoms);
  }
  return Status::OK();
}

// ---- CSV ----

bool EndsWith(const std::string& name, std::string_view suffix) {
  if (name.size() < suffix.size()) return false;
  std::string ext = name.substr(name.size() - suffix.size());
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return ext == suffix;
}

// The format: given, or from the name (.csv, .json, .jsonl or .ndjson; else EDN).
ImportFormat FormatOf(const ImportOptions& options, const std::string& name) {
  if (options.format != ImportFormat::kAuto) return options.format;
  if (EndsWith(name, ".csv")) return ImportFormat::kCsv;
  if (EndsWith(name, ".json")) return ImportFormat::kJson;
  if (EndsWith(name, ".jsonl") || EndsWith(name, ".ndjson")) return ImportFormat::kJsonl;
  return ImportFormat::kEdn;
}

}  // namespace

Status ImportText(Store& store, std::string_view text, const std::string& name,
                  const ImportOptions& options, ImportStats* stats) {
  ImportFormat f = FormatOf(options, name);
  if (f == ImportFormat::kEdn) return ImportEdn(store, text, name, options, stats);
  RecordFormat rf = f == ImportFormat::kCsv    ? RecordFormat::kCsv
                    : f == ImportFormat::kJson ? RecordFormat::kJson
                                               : RecordFormat::kJsonl;
  return ImportRecords(store, text, name, rf, options, options.report ? *options.report : std::cerr,
                       stats);
}

Status ImportFile(Store& store, const std::string& path, const ImportOptions& options,
                  ImportStats* stats) {
  FileText file;
  MENTAT_RETURN_IF_ERROR(file.Open(path));
  if (file.regular()) return ImportText(store, file.text(), path, options, stats);
  Stream in(file.fd(), path);
  if (FormatOf(options, path) == ImportFormat::kEdn)
    return ImportEdnStream(store, in, path, options, stats);
  // Records from a stream are read whole, within the window's bound.
  while (!in.eof()) {
    Status more = in.More();
    if (!more.ok())
      return Status::InvalidArgument(
          path + ": CSV and JSON from a pipe or device are read whole, and " +
          "this one holds more than " + std::to_string(Stream::kMaxWindow >> 20) +
          " MiB; import it from a regular file");
  }
  return ImportText(store, in.window(), path, options, stats);
}

}  // namespace mentat::cli
