// Status and Result<T>: the error currency of mentat.
//
// No exception crosses a public boundary; every fallible call returns a Status or a
// Result<T>. A Status is cheap to copy when OK (no allocation) and carries a code and a
// message otherwise. Thread safety: values, safe to copy between threads.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace mentat {

enum class Code : int {
  kOk = 0,
  kInvalidArgument,  // bad input from the caller (malformed option, bad value)
  kParse,            // text that does not parse (EDN, query); message has line:column
  kNotFound,         // an entity, attribute, ident or file that does not exist
  kSchema,           // a schema violation (unknown attribute, wrong value type...)
  kConflict,         // a uniqueness or cardinality conflict
  kCasMismatch,      // :db/cas found another value
  kBusy,             // the database is locked and the caller asked not to wait
  kInterrupted,      // interrupt() or a timeout stopped the work
  kIo,               // the file system or SQLite failed
  kCorrupt,          // the file is not a mentat store, or is damaged
  kUnsupported,      // a newer store version, or a feature not available here
  kInternal,         // a bug in mentat
};

// Returns a short lower-case name for `code`, e.g. "parse error".
const char* CodeName(Code code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message)
      : rep_(code == Code::kOk ? nullptr
                               : std::make_shared<const Rep>(Rep{code, std::move(message)})) {}

  static Status OK() { return Status(); }
  static Status InvalidArgument(std::string m) {
    return Status(Code::kInvalidArgument, std::move(m));
  }
  static Status Parse(std::string m) { return Status(Code::kParse, std::move(m)); }
  static Status NotFound(std::string m) { return Status(Code::kNotFound, std::move(m)); }
  static Status Schema(std::string m) { return Status(Code::kSchema, std::move(m)); }
  static Status Conflict(std::string m) { return Status(Code::kConflict, std::move(m)); }
  static Status CasMismatch(std::string m) { return Status(Code::kCasMismatch, std::move(m)); }
  static Status Busy(std::string m) { return Status(Code::kBusy, std::move(m)); }
  static Status Interrupted(std::string m = "interrupted") {
    return Status(Code::kInterrupted, std::move(m));
  }
  static Status Io(std::string m) { return Status(Code::kIo, std::move(m)); }
  static Status Corrupt(std::string m) { return Status(Code::kCorrupt, std::move(m)); }
  static Status Unsupported(std::string m) { return Status(Code::kUnsupported, std::move(m)); }
  static Status Internal(std::string m) { return Status(Code::kInternal, std::move(m)); }

  bool ok() const { return rep_ == nullptr; }
  Code code() const { return rep_ ? rep_->code : Code::kOk; }
  // The message without the code name; "" when OK.
  const std::string& message() const;
  // "<code name>: <message>", or "OK".
  std::string ToString() const;

 private:
  struct Rep {
    Code code;
    std::string message;
  };
  std::shared_ptr<const Rep> rep_;
};

// Called by Result<T>::value() on an error: prints "mentat: Result::value() on an error:
// <status>" to standard error and aborts. A checked failure, not an exception.
[[noreturn]] void ResultValueOnError(const Status& status);

// Result<T> holds either a T or a non-OK Status. value() (and * and ->) REQUIRE ok():
// on an error they abort the process with the status (ResultValueOnError).
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT: implicit by design
    if (std::get<Status>(v_).ok()) v_ = Status::Internal("Result built from an OK status");
  }

  bool ok() const { return v_.index() == 0; }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<1>(v_);
  }
  T& value() & {
    if (!ok()) ResultValueOnError(std::get<1>(v_));
    return *std::get_if<0>(&v_);
  }
  const T& value() const& {
    if (!ok()) ResultValueOnError(std::get<1>(v_));
    return *std::get_if<0>(&v_);
  }
  T&& value() && {
    if (!ok()) ResultValueOnError(std::get<1>(v_));
    return std::move(*std::get_if<0>(&v_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace mentat

// Evaluates `expr` (a Status); returns it from the enclosing function when not OK.
#define MENTAT_RETURN_IF_ERROR(expr) \
  do {                               \
    ::mentat::Status _st = (expr);   \
    if (!_st.ok()) return _st;       \
  } while (0)

#define MENTAT_CONCAT_INNER(a, b) a##b
#define MENTAT_CONCAT(a, b) MENTAT_CONCAT_INNER(a, b)
// Declares `lhs` from a Result expression, or returns its Status when not OK.
#define MENTAT_ASSIGN_OR_RETURN(lhs, expr)                                                  \
  auto MENTAT_CONCAT(_res_, __LINE__) = (expr);                                             \
  if (!MENTAT_CONCAT(_res_, __LINE__).ok()) return MENTAT_CONCAT(_res_, __LINE__).status(); \
  lhs = std::move(MENTAT_CONCAT(_res_, __LINE__)).value()
