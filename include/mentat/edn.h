// EDN values, reader and printer.
//
// Value is an immutable EDN value. Collections share their elements (copying a Value is
// O(1)); maps and sets are kept sorted by Compare() and free of duplicates, so equality,
// hashing and ordering are structural. Values are safe to share between threads.
//
// Every Value produced by the reader carries the line:column (1-based) of its first
// character; values built in code have line 0.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "mentat/status.h"

namespace mentat::edn {

struct Pos {
  uint32_t line = 0;  // 1-based; 0 means "not from text"
  uint32_t col = 0;   // 1-based, in bytes
  bool known() const { return line != 0; }
};

enum class Kind : uint8_t {
  kNil,
  kBool,
  kInt,     // 64-bit integer
  kBigInt,  // integer literal with N suffix or too large for 64 bits; text in str()
  kFloat,   // double
  kBigDec,  // decimal literal with M suffix; text (without M) in str()
  kChar,
  kString,
  kKeyword,  // str() is "ns/name" or "name", without the colon
  kSymbol,   // str() is "ns/name" or "name"
  kList,
  kVector,
  kMap,
  kSet,
  kInst,   // #inst: microseconds since the Unix epoch, UTC
  kUuid,   // #uuid: 16 bytes
  kBytes,  // #bytes "hex": a byte string (mentat's bytes value type)
  kUri,    // #uri "text": a URI (mentat's uri value type); the text in str()
};

const char* KindName(Kind kind);

using Uuid = std::array<uint8_t, 16>;

class Value;
using Vec = std::vector<Value>;
using MapEntries = std::vector<std::pair<Value, Value>>;

class Value {
 public:
  Value() = default;  // nil
  Value(const Value&) = default;
  Value(Value&&) noexcept = default;
  Value& operator=(const Value&) = default;
  Value& operator=(Value&&) noexcept = default;
  // Frees a value nested far deeper than the stack allows (built in code, or a long
  // recursive pull) without running out of it: collections are freed recursively up to a
  // depth, and iteratively below it.
  ~Value() {
    if (kind_ >= Kind::kList && kind_ <= Kind::kSet) ReleaseCollection();
  }

  static Value Nil() { return Value(); }
  static Value Bool(bool b);
  static Value Int(int64_t i);
  static Value BigInt(std::string digits);  // optional sign, decimal digits
  static Value Float(double d);
  static Value BigDec(std::string text);
  static Value Char(char32_t c);
  static Value String(std::string s);
  static Value Keyword(std::string_view ns_slash_name);  // "db/ident" or "foo"
  static Value Keyword(std::string_view ns, std::string_view name);
  static Value Symbol(std::string_view ns_slash_name);
  static Value List(Vec items);
  static Value Vector(Vec items);
  static Value Set(Vec items);           // sorts and removes duplicates
  static Value Map(MapEntries entries);  // sorts by key; a later duplicate key wins
  static Value Inst(int64_t micros);
  static Value MakeUuid(const Uuid& u);
  static Value Bytes(std::string bytes);
  static Value Uri(std::string text);

  Kind kind() const { return kind_; }
  Pos pos() const { return pos_; }
  Value& set_pos(Pos p) {
    pos_ = p;
    return *this;
  }

  bool is_nil() const { return kind_ == Kind::kNil; }
  bool is_bool() const { return kind_ == Kind::kBool; }
  bool is_int() const { return kind_ == Kind::kInt; }
  bool is_float() const { return kind_ == Kind::kFloat; }
  bool is_number() const { return kind_ == Kind::kInt || kind_ == Kind::kFloat; }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_keyword() const { return kind_ == Kind::kKeyword; }
  bool is_symbol() const { return kind_ == Kind::kSymbol; }
  bool is_list() const { return kind_ == Kind::kList; }
  bool is_vector() const { return kind_ == Kind::kVector; }
  bool is_map() const { return kind_ == Kind::kMap; }
  bool is_set() const { return kind_ == Kind::kSet; }
  bool is_inst() const { return kind_ == Kind::kInst; }
  bool is_uuid() const { return kind_ == Kind::kUuid; }
  // List, vector or set.
  bool is_seq() const {
    return kind_ == Kind::kList || kind_ == Kind::kVector || kind_ == Kind::kSet;
  }
  bool is_keyword(std::string_view text) const { return is_keyword() && str() == text; }
  bool is_symbol(std::string_view text) const { return is_symbol() && str() == text; }

  // REQUIRES: the matching kind.
  bool as_bool() const { return std::get<bool>(rep_); }
  int64_t as_int() const { return std::get<int64_t>(rep_); }  // kInt and kInst
  double as_double() const { return std::get<double>(rep_); }
  char32_t as_char() const { return std::get<char32_t>(rep_); }
  int64_t as_inst_micros() const { return std::get<int64_t>(rep_); }
  const Uuid& as_uuid() const { return std::get<Uuid>(rep_); }
  // Text of strings, keywords, symbols, big numbers and bytes.
  const std::string& str() const { return std::get<std::string>(rep_); }
  // Elements of a list, vector or set (an empty Vec for other kinds).
  const Vec& items() const;
  // Entries of a map, sorted by key (empty for other kinds).
  const MapEntries& entries() const;
  size_t size() const;  // elements of a collection, 0 otherwise

  // Keyword and symbol parts: namespace ("" if none) and name.
  std::string_view ns() const;
  std::string_view name() const;

  // Map lookup; nullptr when absent or when this is not a map.
  const Value* get(const Value& key) const;
  const Value* get_keyword(std::string_view kw) const;

  // Total order: by kind rank, then value. Numbers (int, float) compare numerically
  // across kinds, ties broken by kind. Lists and vectors compare elementwise.
  friend int Compare(const Value& a, const Value& b);
  // Structural equality (EDN semantics: 1 != 1.0; a list equals a vector with the same
  // elements, as in Clojure). Positions are ignored.
  friend bool operator==(const Value& a, const Value& b);
  friend bool operator!=(const Value& a, const Value& b) { return !(a == b); }
  friend bool operator<(const Value& a, const Value& b) { return Compare(a, b) < 0; }
  size_t Hash() const;

 private:
  using Rep = std::variant<std::monostate, bool, int64_t, double, char32_t, std::string,
                           std::shared_ptr<const Vec>, std::shared_ptr<const MapEntries>, Uuid>;
  Value(Kind k, Rep r) : kind_(k), rep_(std::move(r)) {}
  void ReleaseCollection() noexcept;
  // Moves the nested collections this value alone owns onto a work list and frees them
  // one at a time.
  void ReleaseNested() noexcept;

  Kind kind_ = Kind::kNil;
  Pos pos_;
  Rep rep_;
};

struct ValueHash {
  size_t operator()(const Value& v) const { return v.Hash(); }
};

// ---- Reader ----

struct ReadOptions {
  int max_depth = 512;       // deeper nesting is a parse error, never a stack overflow
  bool allow_quote = false;  // 'x reads as (quote x) (scripting)
  // Clojure reader forms for scripting: @x reads as (clojure.core/deref x); #"re" as
  // (clojure.core/re-pattern "re") (the text between the quotes taken as is); #(...) as
  // (fn [%1 ... %N & %&] (...)), with (let [% %1] (...)) as the body when `%` is used.
  bool script_syntax = false;
};

// Reads exactly one form from `text` (surrounding whitespace and comments allowed).
// Errors are Status::Parse with "line:col: message".
Result<Value> Read(std::string_view text, const ReadOptions& options = {});

// Reads every top-level form of `text`.
Result<Vec> ReadAll(std::string_view text, const ReadOptions& options = {});

// Reads top-level forms one at a time (for large files). `text` must outlive the reader.
class Reader {
 public:
  explicit Reader(std::string_view text, ReadOptions options = {});
  // The next form, std::nullopt at the end of input, or a parse error.
  Result<std::optional<Value>> Next();
  // Byte offset of the next unread character.
  size_t offset() const { return off_; }

 private:
  std::string_view text_;
  ReadOptions options_;
  size_t off_ = 0;
  uint32_t line_ = 1;
  size_t line_start_ = 0;
};

// ---- Printer ----

// Prints `v` as EDN text that Read() turns back into an equal value.
std::string Print(const Value& v);
void PrintTo(const Value& v, std::string* out);

// Formats an instant (microseconds since the epoch) as RFC 3339 UTC,
// e.g. "2025-01-01T00:00:00.000Z" (6 fractional digits when micros are not whole ms).
std::string FormatInstant(int64_t micros);
// Parses RFC 3339 ("2025-01-01", "2025-01-01T10:00Z", "...T10:00:00.123+02:00").
Result<int64_t> ParseInstant(std::string_view text);
std::string FormatUuid(const Uuid& u);
Result<Uuid> ParseUuid(std::string_view text);
// Checks the text of a #uri: a URI reference of RFC 3986 (absolute, with a valid scheme,
// or relative), non-empty, with no spaces, control characters, or characters a URI must
// escape ("<>\\^`{|}), and '%' only before two hex digits. Non-ASCII UTF-8 is allowed
// (java.net.URI's "other" characters).
Status CheckUri(std::string_view text);

}  // namespace mentat::edn
