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
#include <sstream>

#include "csv.h"
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

std::string Plural(uint64_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

std::string Committed(const ImportStats& stats) {
  if (stats.transactions == 0) return "nothing";
  return Plural(stats.transactions, "transaction") + " (" + Plural(stats.datoms, "datom") + ")";
}

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

std::string Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

bool ParseLong(const std::string& s, int64_t* out) {
  const char* b = s.data();
  if (!s.empty() && s[0] == '+') ++b;
  auto [p, ec] = std::from_chars(b, s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

Result<edn::Value> EntityRef(const std::string& cell) {
  int64_t n = 0;
  if (ParseLong(cell, &n)) return edn::Value::Int(n);
  if (cell[0] == ':') return edn::Value::Keyword(cell.substr(1));
  if (cell[0] == '[') {
    MENTAT_ASSIGN_OR_RETURN(edn::Value v, edn::Read(cell));
    if (!v.is_vector() || v.size() != 2)
      return Status::InvalidArgument("expected a lookup ref [:attr value], got " + cell);
    return v;
  }
  return edn::Value::String(cell);  // a tempid
}

Result<edn::Value> TypedCell(const Attribute& attr, const std::string& cell) {
  auto bad = [&](const char* what) {
    return Status::InvalidArgument("expected " + std::string(what) + ", got \"" + cell + "\"");
  };
  if (attr.type != ValueType::kString && cell[0] == '#') {  // a tagged EDN literal
    auto v = edn::Read(cell);
    if (v.ok()) return *v;
  }
  switch (attr.type) {
    case ValueType::kString:
      return edn::Value::String(cell);
    case ValueType::kLong: {
      int64_t n = 0;
      if (!ParseLong(cell, &n)) return bad("a long");
      return edn::Value::Int(n);
    }
    case ValueType::kBigInt:
    case ValueType::kBigDec: {
      // The literal's text, with or without its suffix (123N, 1.50M).
      std::string text = cell;
      char suffix = attr.type == ValueType::kBigInt ? 'N' : 'M';
      if (!text.empty() && text.back() == suffix) text.pop_back();
      auto v = edn::Read(text + suffix);
      if (!v.ok() || (v->kind() != edn::Kind::kBigInt && v->kind() != edn::Kind::kBigDec))
        return bad(attr.type == ValueType::kBigInt ? "an integer" : "a decimal number");
      return *v;
    }
    case ValueType::kUri:
      return edn::Value::Uri(cell);
    case ValueType::kSymbol: {
      auto v = edn::Read(cell);
      if (!v.ok() || v->kind() != edn::Kind::kSymbol) return bad("a symbol");
      return *v;
    }
    case ValueType::kTuple: {
      auto v = edn::Read(cell);
      if (!v.ok() || !v->is_vector()) return bad("a tuple (an EDN vector such as [\"a\" 1])");
      return *v;
    }
    case ValueType::kFloat:
    case ValueType::kDouble: {
      char* end = nullptr;
      double d = std::strtod(cell.c_str(), &end);
      if (end != cell.c_str() + cell.size()) return bad("a double");
      return edn::Value::Float(d);
    }
    case ValueType::kBoolean: {
      std::string l = cell;
      std::transform(l.begin(), l.end(), l.begin(),
                     [](unsigned char c) { return std::tolower(c); });
      if (l == "true" || l == "t" || l == "1" || l == "yes") return edn::Value::Bool(true);
      if (l == "false" || l == "f" || l == "0" || l == "no") return edn::Value::Bool(false);
      return bad("a boolean (true or false)");
    }
    case ValueType::kInstant: {
      auto t = edn::ParseInstant(cell);
      if (!t.ok()) return bad("an instant (RFC 3339, e.g. 2024-01-31T10:00:00Z)");
      return edn::Value::Inst(*t);
    }
    case ValueType::kUuid: {
      auto u = edn::ParseUuid(cell);
      if (!u.ok()) return bad("a uuid");
      return edn::Value::MakeUuid(*u);
    }
    case ValueType::kKeyword:
      return edn::Value::Keyword(cell[0] == ':' ? cell.substr(1) : cell);
    case ValueType::kRef:
      return EntityRef(cell);
    case ValueType::kBytes: {
      if (cell.size() % 2 != 0) return bad("hex bytes");
      std::string bytes;
      for (size_t i = 0; i < cell.size(); i += 2) {
        unsigned x = 0;
        auto [p, ec] = std::from_chars(cell.data() + i, cell.data() + i + 2, x, 16);
        if (ec != std::errc() || p != cell.data() + i + 2) return bad("hex bytes");
        bytes += static_cast<char>(x);
      }
      return edn::Value::Bytes(std::move(bytes));
    }
  }
  return bad("a value");
}

Status ImportCsv(Store& store, std::string_view text, const std::string& name,
                 const ImportOptions& options, ImportStats* stats) {
  CsvReader reader(text);
  std::vector<std::string> fields;
  auto csv_error = [&](const Status& st) { return InFile(st, name, text, *stats); };
  auto header = reader.Next(&fields);
  if (!header.ok()) return csv_error(header.status());
  if (!*header) return Status::OK();  // an empty file
  auto schema = store.schema();
  // Column -> attribute; nullptr for :db/id.
  std::vector<const Attribute*> columns;
  std::vector<std::string> column_names;
  for (const auto& f : fields) {
    std::string ident = Trim(f);
    if (!ident.empty() && ident[0] == ':') ident.erase(0, 1);
    column_names.push_back(":" + ident);
    if (ident == "db/id") {
      columns.push_back(nullptr);
      continue;
    }
    const Attribute* attr = schema->attribute(ident);
    if (!attr)
      return csv_error(Status::Schema(
          "1:1: the header names an unknown attribute :" + ident +
          " (columns must name attributes of the schema, e.g. :person/name, or :db/id)"));
    columns.push_back(attr);
  }
  edn::Vec batch;
  size_t first_line = 0, last_line = 0;
  auto flush = [&]() -> Status {
    if (batch.empty()) return Status::OK();
    if (options.cancel && options.cancel->load()) return Cancelled(name, *stats);
    auto report = store.transact(edn::Value::Vector(std::move(batch)));
    batch.clear();
    if (!report.ok()) {
      std::string where = first_line == last_line ? "line " + std::to_string(first_line)
                                                  : "lines " + std::to_string(first_line) + "-" +
                                                        std::to_string(last_line);
      // Positions in transactor messages refer to values built here, not to the file.
      return InFile(report.status(), name, text, *stats, where);
    }
    Count(*report, options, stats);
    if (options.progress) options.progress(reader.offset(), stats->datoms);
    return Status::OK();
  };
  for (;;) {
    auto more = reader.Next(&fields);
    if (!more.ok()) return csv_error(more.status());
    if (!*more) break;
    size_t line = reader.record_line();
    if (fields.size() > columns.size())
      return InFile(Status::InvalidArgument("the row has " + std::to_string(fields.size()) +
                                            " fields but the header names " +
                                            std::to_string(columns.size()) + " columns"),
                    name, text, *stats, std::to_string(line));
    edn::MapEntries entries;
    std::map<Entid, edn::Vec> values;
    for (size_t i = 0; i < fields.size(); ++i) {
      std::string cell = Trim(fields[i]);
      if (cell.empty()) continue;
      const Attribute* attr = columns[i];
      auto v = attr ? TypedCell(*attr, cell) : EntityRef(cell);
      if (!v.ok())
        return InFile(
            Status(v.status().code(), "column " + column_names[i] + ": " + v.status().message()),
            name, text, *stats, std::to_string(line));
      if (!attr) {
        entries.emplace_back(edn::Value::Keyword("db/id"), *v);
      } else {
        values[attr->id].push_back(*v);
      }
    }
    if (values.empty()) continue;
    for (auto& [id, vs] : values) {
      const Attribute* attr = schema->attribute(id);
      edn::Value key = edn::Value::Keyword(attr->ident);
      if (vs.size() == 1 && !(attr->many && attr->type == ValueType::kRef)) {
        entries.emplace_back(key, vs[0]);
      } else {
        entries.emplace_back(key, edn::Value::Vector(std::move(vs)));
      }
    }
    if (batch.empty()) first_line = line;
    last_line = line;
    batch.push_back(edn::Value::Map(std::move(entries)));
    if (batch.size() >= std::max<size_t>(1, options.csv_batch_rows)) {
      MENTAT_RETURN_IF_ERROR(flush());
    }
  }
  return flush();
}

bool EndsWithCsv(const std::string& name) {
  if (name.size() < 4) return false;
  std::string ext = name.substr(name.size() - 4);
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return ext == ".csv";
}

}  // namespace

Status ImportText(Store& store, std::string_view text, const std::string& name,
                  const ImportOptions& options, ImportStats* stats) {
  bool csv = options.format == ImportFormat::kCsv ||
             (options.format == ImportFormat::kAuto && EndsWithCsv(name));
  return csv ? ImportCsv(store, text, name, options, stats)
             : ImportEdn(store, text, name, options, stats);
}

Status ImportFile(Store& store, const std::string& path, const ImportOptions& options,
                  ImportStats* stats) {
  FileText file;
  MENTAT_RETURN_IF_ERROR(file.Open(path));
  if (file.regular()) return ImportText(store, file.text(), path, options, stats);
  Stream in(file.fd(), path);
  bool csv = options.format == ImportFormat::kCsv ||
             (options.format == ImportFormat::kAuto && EndsWithCsv(path));
  if (!csv) return ImportEdnStream(store, in, path, options, stats);
  // CSV from a stream is read whole, within the window's bound.
  while (!in.eof()) {
    Status more = in.More();
    if (!more.ok())
      return Status::InvalidArgument(
          path + ": CSV from a pipe or device is read whole, and " + "this one holds more than " +
          std::to_string(Stream::kMaxWindow >> 20) + " MiB; import it from a regular file");
  }
  return ImportCsv(store, in.window(), path, options, stats);
}

}  // namespace mentat::cli
