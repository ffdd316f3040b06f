// A hand-rolled recursive-descent EDN reader over a string_view.
//
// Errors are reported once, as Status::Parse("LINE:COL: message"), and abort the read.
// Recursion happens only when a form opens a collection (or a quote), and each such step
// checks the depth first, so hostile input cannot overflow the stack. Chains of `#_` are
// counted rather than recursed into.
//
// Decisions beyond the EDN spec:
// - Rejected: hexadecimal (0x1F), octal-looking (007) and ratio (1/2) numbers, `::kw`,
//   tags other than #inst, #uuid, #bytes, and `'` unless ReadOptions.allow_quote.
// - Integers that overflow int64 become kBigInt; floats beyond double range saturate to
//   ±infinity or ±0 (as Clojure's reader does).
// - EDN text is UTF-8: a string, symbol, keyword, character or regex literal holding a byte
//   sequence that is not UTF-8 (a stray byte, an overlong form, a surrogate, beyond
//   U+10FFFF) is an error at that byte, so every string value read is valid UTF-8.
//   \uXXXX surrogates in strings must pair. Characters accept \uXXXX (any value,
//   including lone surrogates) and \oNNN. Comments are not checked.
// - Error positions: the offending character, or the start of the unterminated form; for
//   "nesting deeper than N", the start of the top-level form being read; for an unknown
//   tag, the tag name after '#'.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>

#include "mentat/edn.h"
#include "util/utf8.h"

namespace mentat::edn {

namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool IsWhitespace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' || c == '\f' || c == '\v';
}

// Characters that end a token (symbol, number, keyword, character name, tag).
bool IsDelimiter(char c) {
  switch (c) {
    case ' ':
    case '\t':
    case '\n':
    case '\r':
    case ',':
    case '\f':
    case '\v':
    case '(':
    case ')':
    case '[':
    case ']':
    case '{':
    case '}':
    case '"':
    case ';':
    case '\\':
      return true;
    default:
      return false;
  }
}

bool IsCloser(char c) { return c == ')' || c == ']' || c == '}'; }

// Characters that may appear in a symbol or keyword; bytes >= 0x80 (UTF-8 letters) too.
bool IsSymbolChar(char c) {
  unsigned char u = static_cast<unsigned char>(c);
  if (u >= 0x80) return true;
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || IsDigit(c)) return true;
  switch (c) {
    case '.':
    case '*':
    case '+':
    case '!':
    case '-':
    case '_':
    case '?':
    case '$':
    case '%':
    case '&':
    case '=':
    case '<':
    case '>':
    case '/':
    case '#':
    case ':':
      return true;
    default:
      return false;
  }
}

// One part (namespace or name) of a symbol or keyword.
bool ValidPart(std::string_view part, bool keyword) {
  if (part.empty()) return false;
  char c0 = part[0];
  if (!keyword) {
    if (IsDigit(c0) || c0 == '#' || c0 == ':') return false;
    if ((c0 == '+' || c0 == '-' || c0 == '.') && part.size() > 1 && IsDigit(part[1])) {
      return false;
    }
  } else if (c0 == ':' || c0 == '#') {
    return false;
  }
  for (char c : part) {
    if (!IsSymbolChar(c)) return false;
  }
  return true;
}

// "name", "ns/name" ("ns/a/b" has name "a/b") or "/"; keywords may start with a digit.
bool ValidSymbolText(std::string_view t, bool keyword) {
  if (t == "/") return true;
  size_t slash = t.find('/');
  if (slash == std::string_view::npos) return ValidPart(t, keyword);
  std::string_view ns = t.substr(0, slash), name = t.substr(slash + 1);
  if (name == "/") return ValidPart(ns, keyword);
  return ValidPart(ns, keyword) && ValidPart(name, keyword) && name.back() != '/';
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Parses exactly four hex digits; -1 when malformed.
int32_t Hex4(std::string_view s) {
  if (s.size() < 4) return -1;
  int32_t v = 0;
  for (int i = 0; i < 4; ++i) {
    int h = HexValue(s[i]);
    if (h < 0) return -1;
    v = v * 16 + h;
  }
  return v;
}

void AppendUtf8(char32_t c, std::string* out) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

// A short, printable rendering of a piece of input for error messages.
std::string Excerpt(std::string_view s) {
  constexpr size_t kMax = 40;
  if (s.size() <= kMax) return std::string(s);
  size_t cut = kMax;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // UTF-8
  return std::string(s.substr(0, cut)) + "...";
}

std::string DescribeChar(char c) {
  unsigned char u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7F) return std::string("'") + c + "'";
  static const char kHex[] = "0123456789ABCDEF";
  std::string out = "byte 0x";
  out.push_back(kHex[u >> 4]);
  out.push_back(kHex[u & 15]);
  return out;
}

const char* CollectionName(char opener) {
  switch (opener) {
    case '(':
      return "list";
    case '[':
      return "vector";
    case '{':
      return "map";
    default:
      return "set";
  }
}

std::string PosText(Pos p) { return std::to_string(p.line) + ":" + std::to_string(p.col); }

bool Before(Pos a, Pos b) { return a.line != b.line ? a.line < b.line : a.col < b.col; }

}  // namespace

// Reads from `text` at a cursor (*off, *line, *line_start) that Commit() advances: a
// Reader's, or ReadOne's own.
class ReaderImpl {
 public:
  ReaderImpl(std::string_view text, const ReadOptions& options, size_t* off, uint32_t* line,
             size_t* line_start)
      : off_(off),
        line_out_(line),
        line_start_out_(line_start),
        text_(text),
        n_(text.size()),
        p_(*off),
        line_(*line),
        line_start_(*line_start),
        max_depth_(options.max_depth),
        allow_quote_(options.allow_quote),
        script_syntax_(options.script_syntax) {}

  Result<std::optional<Value>> Next() {
    Value v;
    switch (ReadFormOrEnd(0, &v, nullptr)) {
      case Got::kError:
        return error_;  // the reader stays before the bad form: Next() fails again
      case Got::kEnd:
        if (p_ < n_) return Failure(Here(), std::string("unmatched closing '") + text_[p_] + "'");
        Commit();
        return std::optional<Value>();
      case Got::kForm:
        Commit();
        return std::optional<Value>(std::move(v));
    }
    return Status::Internal("unreachable");
  }

  // Reads exactly one form.
  static Result<Value> ReadOne(std::string_view text, const ReadOptions& options) {
    // A UTF-8 byte order mark is skipped, as Reader does; columns count from after it.
    size_t off = text.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0, line_start = off;
    uint32_t line = 1;
    Result<std::optional<Value>> first = ReaderImpl(text, options, &off, &line, &line_start).Next();
    if (!first.ok()) return first.status();
    if (!first->has_value()) {
      ReaderImpl impl(text, options, &off, &line, &line_start);
      return impl.Failure(impl.Here(), "expected a form, found end of input");
    }
    Result<std::optional<Value>> second =
        ReaderImpl(text, options, &off, &line, &line_start).Next();
    if (!second.ok()) return second.status();
    if (second->has_value()) {
      ReaderImpl impl(text, options, &off, &line, &line_start);
      return impl.Failure((*second)->pos(), "expected end of input, found another form");
    }
    return std::move(**first);
  }

 private:
  enum class Got { kForm, kEnd, kError };

  Pos Here() const { return Pos{line_, static_cast<uint32_t>(p_ - line_start_ + 1)}; }

  Status Failure(Pos pos, const std::string& message) {
    return Status::Parse(PosText(pos) + ": " + message);
  }

  // Records the first error; returns false so callers can `return Fail(...)`.
  bool Fail(Pos pos, const std::string& message) {
    error_ = Failure(pos, message);
    return false;
  }

  void Commit() {
    *off_ = p_;
    *line_out_ = line_;
    *line_start_out_ = line_start_;
  }

  void NewLineAt(size_t newline_offset) {
    ++line_;
    line_start_ = newline_offset + 1;
  }

  // Skips whitespace, commas and comments (not #_ discards).
  void SkipWhitespace() {
    while (p_ < n_) {
      char c = text_[p_];
      if (c == '\n') {
        NewLineAt(p_);
        ++p_;
      } else if (c == ' ' || c == ',' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
        ++p_;
      } else if (c == ';') {
        size_t nl = text_.find('\n', p_);
        p_ = nl == std::string_view::npos ? n_ : nl;
      } else {
        return;
      }
    }
  }

  // Length of the token starting at p_ (up to the next delimiter).
  size_t TokenEnd(size_t from) const {
    size_t q = from;
    while (q < n_ && !IsDelimiter(text_[q])) ++q;
    return q;
  }

  // Skips whitespace and `#_ form`s, then reads one form into *out (kForm), or stops
  // before a closing delimiter or the end of input (kEnd). When `tag` is set, the form
  // must be a string (the argument of #inst, #uuid, #bytes).
  Got ReadFormOrEnd(int depth, Value* out, const char* tag) {
    int pending_discards = 0;
    Pos last_discard;
    for (;;) {
      SkipWhitespace();
      if (p_ == n_ || IsCloser(text_[p_])) {
        if (pending_discards > 0) {
          Fail(last_discard, "#_ has no form to discard");
          return Got::kError;
        }
        return Got::kEnd;
      }
      if (text_[p_] == '#' && p_ + 1 < n_ && text_[p_ + 1] == '_') {
        last_discard = Here();
        p_ += 2;
        ++pending_discards;
        continue;
      }
      if (depth == 0) top_pos_ = Here();
      if (pending_discards > 0) {
        Value discarded;
        if (!ReadBare(depth, &discarded)) return Got::kError;
        --pending_discards;
        continue;
      }
      if (tag != nullptr && text_[p_] != '"') {
        Fail(Here(), std::string("#") + tag + " must be followed by a string");
        return Got::kError;
      }
      return ReadBare(depth, out) ? Got::kForm : Got::kError;
    }
  }

  bool CheckDepth(int depth) {
    if (depth < max_depth_) return true;
    return Fail(top_pos_, "nesting deeper than " + std::to_string(max_depth_));
  }

  // Reads the form starting at p_, which is not whitespace, a discard or a closer.
  bool ReadBare(int depth, Value* out) {
    Pos pos = Here();
    char c = text_[p_];
    switch (c) {
      case '(':
      case '[':
        return ReadSequence(depth, c, pos, out);
      case '{':
        return ReadMap(depth, pos, out);
      case '"':
        return ReadString(pos, out);
      case '\\':
        return ReadChar(pos, out);
      case ':':
        return ReadKeyword(pos, out);
      case '#':
        return ReadDispatch(depth, pos, out);
      case '\'':
        return ReadQuote(depth, pos, out);
      case '@':
        if (script_syntax_) return ReadDeref(depth, pos, out);
        break;
      case ')':
      case ']':
      case '}':
        return Fail(pos, std::string("unmatched closing '") + c + "'");
      default:
        break;
    }
    if (IsDigit(c) || ((c == '+' || c == '-') && p_ + 1 < n_ && IsDigit(text_[p_ + 1]))) {
      return ReadNumber(pos, out);
    }
    return ReadSymbol(pos, out);
  }

  // Reads the elements of a collection up to `closer`; p_ is just after the opener.
  bool ReadElements(int depth, char opener, char closer, Pos pos, Vec* items) {
    for (;;) {
      Value v;
      switch (ReadFormOrEnd(depth + 1, &v, nullptr)) {
        case Got::kError:
          return false;
        case Got::kForm:
          items->push_back(std::move(v));
          continue;
        case Got::kEnd:
          break;
      }
      if (p_ == n_) return Fail(pos, std::string("unterminated ") + CollectionName(opener));
      if (text_[p_] != closer) {
        return Fail(Here(), std::string("expected '") + closer + "' to close the " +
                                CollectionName(opener) + " at " + PosText(pos) + ", found '" +
                                text_[p_] + "'");
      }
      ++p_;
      return true;
    }
  }

  bool ReadSequence(int depth, char opener, Pos pos, Value* out) {
    if (!CheckDepth(depth)) return false;
    ++p_;
    Vec items;
    if (!ReadElements(depth, opener, opener == '(' ? ')' : ']', pos, &items)) return false;
    *out = (opener == '(' ? Value::List(std::move(items)) : Value::Vector(std::move(items)));
    out->set_pos(pos);
    return true;
  }

  bool ReadSet(int depth, Pos pos, Value* out) {
    if (!CheckDepth(depth)) return false;
    p_ += 2;
    Vec items;
    if (!ReadElements(depth, '#', '}', pos, &items)) return false;
    std::stable_sort(items.begin(), items.end(),
                     [](const Value& a, const Value& b) { return Compare(a, b) < 0; });
    const Value* dup = nullptr;
    for (size_t i = 1; i < items.size(); ++i) {
      if (Compare(items[i - 1], items[i]) == 0 &&
          (dup == nullptr || Before(items[i].pos(), dup->pos()))) {
        dup = &items[i];
      }
    }
    if (dup != nullptr) return Fail(dup->pos(), "duplicate set element " + Excerpt(Print(*dup)));
    *out = Value::Set(std::move(items));
    out->set_pos(pos);
    return true;
  }

  bool ReadMap(int depth, Pos pos, Value* out) {
    if (!CheckDepth(depth)) return false;
    ++p_;
    Vec items;
    if (!ReadElements(depth, '{', '}', pos, &items)) return false;
    if (items.size() % 2 != 0) return Fail(pos, "map literal has an odd number of forms");
    MapEntries entries;
    entries.reserve(items.size() / 2);
    for (size_t i = 0; i < items.size(); i += 2) {
      entries.emplace_back(std::move(items[i]), std::move(items[i + 1]));
    }
    std::stable_sort(entries.begin(), entries.end(),
                     [](const auto& a, const auto& b) { return Compare(a.first, b.first) < 0; });
    const Value* dup = nullptr;
    for (size_t i = 1; i < entries.size(); ++i) {
      const Value& k = entries[i].first;
      if (Compare(entries[i - 1].first, k) == 0 &&
          (dup == nullptr || Before(k.pos(), dup->pos()))) {
        dup = &k;
      }
    }
    if (dup != nullptr) return Fail(dup->pos(), "duplicate map key " + Excerpt(Print(*dup)));
    *out = Value::Map(std::move(entries));
    out->set_pos(pos);
    return true;
  }

  bool ReadQuote(int depth, Pos pos, Value* out) {
    if (!allow_quote_) return Fail(pos, "unexpected quote ' (quoting is not EDN)");
    if (!CheckDepth(depth)) return false;
    ++p_;
    Value quoted;
    Got got = ReadFormOrEnd(depth + 1, &quoted, nullptr);
    if (got == Got::kError) return false;
    if (got == Got::kEnd) return Fail(pos, "quote ' must be followed by a form");
    Value sym = Value::Symbol("quote");
    sym.set_pos(pos);
    *out = Value::List(Vec{std::move(sym), std::move(quoted)});
    out->set_pos(pos);
    return true;
  }

  // @x: (clojure.core/deref x).
  bool ReadDeref(int depth, Pos pos, Value* out) {
    if (!CheckDepth(depth)) return false;
    ++p_;
    Value target;
    Got got = ReadFormOrEnd(depth + 1, &target, nullptr);
    if (got == Got::kError) return false;
    if (got == Got::kEnd) return Fail(pos, "@ must be followed by a form");
    Value sym = Value::Symbol("clojure.core/deref");
    sym.set_pos(pos);
    *out = Value::List(Vec{std::move(sym), std::move(target)});
    out->set_pos(pos);
    return true;
  }

  // #"re": (clojure.core/re-pattern "re"). The text up to the closing quote is the pattern as
  // written: a backslash escapes nothing but keeps the next character (so \" does not close it).
  bool ReadRegex(Pos pos, Value* out) {
    p_ += 2;
    std::string text;
    for (;;) {
      if (p_ >= n_) return Fail(pos, "unterminated regex literal");
      char c = text_[p_];
      if (c == '"') {
        ++p_;
        break;
      }
      if (c == '\\' && p_ + 1 < n_) {
        text.push_back(c);
        c = text_[++p_];
      }
      if (c == '\n') NewLineAt(p_);
      text.push_back(c);
      ++p_;
    }
    if (utf8::FirstInvalid(text) != std::string_view::npos)
      return Fail(pos, "invalid UTF-8 in regex literal");
    Value sym = Value::Symbol("clojure.core/re-pattern");
    sym.set_pos(pos);
    Value str = Value::String(std::move(text));
    str.set_pos(pos);
    *out = Value::List(Vec{std::move(sym), std::move(str)});
    out->set_pos(pos);
    return true;
  }

  // Which %-parameters a #(...) body names: `%`, `%1`..`%N`, `%&`.
  struct AnonArgs {
    bool bare = false;
    bool rest = false;
    int max = 0;
  };
  static void ScanAnonArgs(const Value& v, AnonArgs* args, int depth) {
    if (depth > 10000) return;  // the reader's depth limit is far lower
    if (v.is_symbol()) {
      const std::string& s = v.str();
      if (s == "%") {
        args->bare = true;
      } else if (s == "%&") {
        args->rest = true;
      } else if (s.size() > 1 && s.size() <= 3 && s[0] == '%' && s[1] >= '1' && s[1] <= '9' &&
                 (s.size() == 2 || IsDigit(s[2]))) {
        args->max = std::max(args->max, std::stoi(s.substr(1)));
      }
      return;
    }
    if (v.is_map()) {
      for (const auto& [k, val] : v.entries()) {
        ScanAnonArgs(k, args, depth + 1);
        ScanAnonArgs(val, args, depth + 1);
      }
      return;
    }
    for (const Value& item : v.items()) ScanAnonArgs(item, args, depth + 1);
  }

  // #(...): (fn [%1 ... %N & %&] (...)).
  bool ReadAnonFn(int depth, Pos pos, Value* out) {
    if (in_anon_fn_) return Fail(pos, "nested #()s are not allowed");
    if (!CheckDepth(depth)) return false;
    ++p_;  // now at '('
    Pos body_pos = Here();
    Value body;
    in_anon_fn_ = true;
    bool ok = ReadSequence(depth + 1, '(', body_pos, &body);
    in_anon_fn_ = false;
    if (!ok) return false;
    AnonArgs args;
    ScanAnonArgs(body, &args, 0);
    int n = std::max(args.max, args.bare ? 1 : 0);
    auto sym = [&](const std::string& name) {
      Value v = Value::Symbol(name);
      v.set_pos(pos);
      return v;
    };
    Vec params;
    for (int i = 1; i <= n; ++i) params.push_back(sym("%" + std::to_string(i)));
    if (args.rest) {
      params.push_back(sym("&"));
      params.push_back(sym("%&"));
    }
    Value param_vec = Value::Vector(std::move(params));
    param_vec.set_pos(pos);
    if (args.bare) {
      Value bindings = Value::Vector(Vec{sym("%"), sym("%1")});
      bindings.set_pos(pos);
      Value let = Value::List(Vec{sym("let"), std::move(bindings), std::move(body)});
      let.set_pos(pos);
      body = std::move(let);
    }
    *out = Value::List(Vec{sym("fn"), std::move(param_vec), std::move(body)});
    out->set_pos(pos);
    return true;
  }

  bool ReadString(Pos pos, Value* out) {
    ++p_;
    std::string s;
    for (;;) {
      size_t q = p_;
      while (q < n_) {
        char c = text_[q];
        if (c == '"' || c == '\\' || c == '\n') break;
        ++q;
      }
      if (q == n_) return Fail(pos, "unterminated string");
      // The run holds no newline: its columns follow on from p_'s.
      if (!RefuseInvalidUtf8(Here(), text_.substr(p_, q - p_), 0, "string")) return false;
      s.append(text_.data() + p_, q - p_);
      p_ = q;
      if (p_ == n_) return Fail(pos, "unterminated string");
      char c = text_[p_];
      if (c == '"') {
        ++p_;
        break;
      }
      if (c == '\n') {
        s.push_back('\n');
        NewLineAt(p_);
        ++p_;
        continue;
      }
      // A backslash escape.
      Pos esc = Here();
      if (p_ + 1 >= n_) return Fail(pos, "unterminated string");
      char e = text_[p_ + 1];
      p_ += 2;
      switch (e) {
        case 't':
          s.push_back('\t');
          break;
        case 'r':
          s.push_back('\r');
          break;
        case 'n':
          s.push_back('\n');
          break;
        case '\\':
          s.push_back('\\');
          break;
        case '"':
          s.push_back('"');
          break;
        case 'b':
          s.push_back('\b');
          break;
        case 'f':
          s.push_back('\f');
          break;
        case 'u': {
          int32_t u = Hex4(text_.substr(p_));
          if (u < 0) return Fail(esc, "invalid \\u escape: expected four hex digits");
          p_ += 4;
          char32_t cp = static_cast<char32_t>(u);
          if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return Fail(esc, "unpaired low surrogate \\u" + std::string(text_.substr(p_ - 4, 4)));
          }
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            int32_t lo = -1;
            if (p_ + 6 <= n_ && text_[p_] == '\\' && text_[p_ + 1] == 'u') {
              lo = Hex4(text_.substr(p_ + 2));
            }
            if (lo < 0xDC00 || lo > 0xDFFF) {
              return Fail(esc,
                          "unpaired high surrogate \\u" + std::string(text_.substr(p_ - 4, 4)));
            }
            p_ += 6;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (static_cast<char32_t>(lo) - 0xDC00);
          }
          AppendUtf8(cp, &s);
          break;
        }
        case '\n':
          return Fail(esc, "invalid escape: backslash at end of line in string");
        default: {
          char32_t cp;
          size_t len = utf8::Decode(text_.substr(p_ - 1), &cp);
          std::string shown = len > 0 ? std::string(text_.substr(p_ - 1, len)) : DescribeChar(e);
          return Fail(esc, "invalid escape \\" + shown + " in string");
        }
      }
    }
    *out = Value::String(std::move(s));
    out->set_pos(pos);
    return true;
  }

  bool ReadChar(Pos pos, Value* out) {
    ++p_;
    if (p_ == n_ || (IsWhitespace(text_[p_]) && text_[p_] != ',')) {
      return Fail(pos, "expected a character after '\\'");
    }
    char32_t first;
    size_t len = utf8::Decode(text_.substr(p_), &first);
    if (len == 0) return Fail(Here(), "invalid UTF-8 in character literal");
    size_t end = TokenEnd(p_ + len);
    std::string_view token = text_.substr(p_, end - p_);
    p_ = end;
    char32_t c;
    if (token.size() == len) {
      c = first;
    } else if (token == "newline") {
      c = '\n';
    } else if (token == "space") {
      c = ' ';
    } else if (token == "tab") {
      c = '\t';
    } else if (token == "return") {
      c = '\r';
    } else if (token == "backspace") {
      c = '\b';
    } else if (token == "formfeed") {
      c = '\f';
    } else if (token[0] == 'u' && token.size() == 5 && Hex4(token.substr(1)) >= 0) {
      c = static_cast<char32_t>(Hex4(token.substr(1)));
    } else if (token[0] == 'o' && token.size() >= 2 && token.size() <= 4 &&
               std::all_of(token.begin() + 1, token.end(),
                           [](char d) { return d >= '0' && d <= '7'; })) {
      c = 0;
      for (char d : token.substr(1)) c = c * 8 + static_cast<char32_t>(d - '0');
      if (c > 0377)
        return Fail(pos, "octal character \\" + std::string(token) + " is above \\o377");
    } else {
      return Fail(pos, "unknown character literal \\" + Excerpt(token));
    }
    *out = Value::Char(c);
    out->set_pos(pos);
    return true;
  }

  // U+FEFF (a byte order mark) is skipped at the start of the input, so a symbol or
  // keyword holding one would not read back as itself from its printed text: refuse it.
  bool RefuseBom(Pos pos, std::string_view token, size_t token_offset, const char* what) {
    size_t bom = token.find("\xEF\xBB\xBF");
    if (bom == std::string_view::npos) return true;
    return Fail(Pos{pos.line, pos.col + static_cast<uint32_t>(token_offset + bom)},
                std::string("unexpected character U+FEFF (byte order mark) in ") + what);
  }

  // Fails at the first byte of `token` (at column pos.col + token_offset) that is not UTF-8.
  bool RefuseInvalidUtf8(Pos pos, std::string_view token, size_t token_offset, const char* what) {
    size_t bad = utf8::FirstInvalid(token);
    if (bad == std::string_view::npos) return true;
    return Fail(Pos{pos.line, pos.col + static_cast<uint32_t>(token_offset + bad)},
                std::string("invalid UTF-8 in ") + what + ": " + DescribeChar(token[bad]));
  }

  bool ReadKeyword(Pos pos, Value* out) {
    size_t end = TokenEnd(p_ + 1);
    std::string_view body = text_.substr(p_ + 1, end - p_ - 1);
    if (body.empty()) return Fail(pos, "keyword ':' has no name");
    if (!RefuseInvalidUtf8(pos, body, 1, "keyword")) return false;
    if (!RefuseBom(pos, body, 1, "keyword")) return false;
    if (body[0] == ':') {
      return Fail(pos, "auto-resolved keyword :" + Excerpt(body) + " is not EDN");
    }
    if (!ValidSymbolText(body, /*keyword=*/true)) {
      return Fail(pos, "invalid keyword :" + Excerpt(body));
    }
    p_ = end;
    *out = Value::Keyword(body);
    out->set_pos(pos);
    return true;
  }

  bool ReadSymbol(Pos pos, Value* out) {
    char c = text_[p_];
    if (!IsSymbolChar(c) || c == '#' || c == ':') {
      return Fail(pos, "unexpected character " + DescribeChar(c));
    }
    size_t end = TokenEnd(p_);
    std::string_view token = text_.substr(p_, end - p_);
    if (token == "nil") {
      *out = Value::Nil();
    } else if (token == "true") {
      *out = Value::Bool(true);
    } else if (token == "false") {
      *out = Value::Bool(false);
    } else {
      if (!RefuseInvalidUtf8(pos, token, 0, "symbol")) return false;
      if (!RefuseBom(pos, token, 0, "symbol")) return false;
      for (size_t i = 0; i < token.size(); ++i) {
        if (!IsSymbolChar(token[i])) {
          return Fail(Pos{pos.line, pos.col + static_cast<uint32_t>(i)},
                      "unexpected character " + DescribeChar(token[i]) + " in symbol");
        }
      }
      if (!ValidSymbolText(token, /*keyword=*/false)) {
        return Fail(pos, "invalid symbol " + Excerpt(token));
      }
      *out = Value::Symbol(token);
    }
    p_ = end;
    out->set_pos(pos);
    return true;
  }

  // [+-]? (0 | [1-9][0-9]*) ( N | (. [0-9]*)? ([eE] [+-]? [0-9]+)? M? )
  bool ReadNumber(Pos pos, Value* out) {
    size_t end = TokenEnd(p_);
    std::string_view tok = text_.substr(p_, end - p_);
    auto invalid = [&]() {
      std::string msg = "invalid number " + Excerpt(tok);
      size_t digit = (tok[0] == '+' || tok[0] == '-') ? 1 : 0;
      if (tok.size() > digit + 1 && tok[digit] == '0' &&
          (tok[digit + 1] == 'x' || tok[digit + 1] == 'X')) {
        msg += " (hexadecimal integers are not EDN)";
      } else if (tok.find('/') != std::string_view::npos) {
        msg += " (ratios are not EDN)";
      }
      return Fail(pos, msg);
    };
    size_t i = 0;
    bool neg = false;
    if (tok[0] == '+' || tok[0] == '-') neg = tok[i++] == '-';
    size_t int_start = i;
    while (i < tok.size() && IsDigit(tok[i])) ++i;
    size_t int_digits = i - int_start;
    if (int_digits == 0) return invalid();
    if (int_digits > 1 && tok[int_start] == '0') {
      return Fail(pos, "invalid number " + Excerpt(tok) + " (leading zeros are not EDN)");
    }
    bool is_float = false;
    if (i < tok.size() && tok[i] == '.') {
      is_float = true;
      ++i;
      while (i < tok.size() && IsDigit(tok[i])) ++i;
    }
    int64_t exp = 0;
    if (i < tok.size() && (tok[i] == 'e' || tok[i] == 'E')) {
      is_float = true;
      ++i;
      bool eneg = false;
      if (i < tok.size() && (tok[i] == '+' || tok[i] == '-')) eneg = tok[i++] == '-';
      size_t exp_start = i;
      while (i < tok.size() && IsDigit(tok[i])) {
        if (exp < 100000) exp = exp * 10 + (tok[i] - '0');
        ++i;
      }
      if (i == exp_start) return invalid();
      if (eneg) exp = -exp;
    }
    std::string_view unsigned_tok = tok.substr(int_start, i - int_start);
    std::string_view body = tok.substr(0, i);
    if (i < tok.size() && tok[i] == 'N' && !is_float && i + 1 == tok.size()) {
      *out = Value::BigInt(std::string(body));
    } else if (i < tok.size() && tok[i] == 'M' && i + 1 == tok.size()) {
      *out = Value::BigDec(std::string(body));
    } else if (i != tok.size()) {
      return invalid();
    } else if (!is_float) {
      int64_t v = 0;
      // Parse with the sign so that INT64_MIN fits.
      std::string_view digits = neg ? tok.substr(int_start - 1, i - int_start + 1) : unsigned_tok;
      auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
      if (ec == std::errc::result_out_of_range) {
        *out = Value::BigInt(std::string(body));
      } else if (ec != std::errc() || ptr != digits.data() + digits.size()) {
        return invalid();
      } else {
        *out = Value::Int(v);
      }
    } else {
      double d = 0;
      auto [ptr, ec] =
          std::from_chars(unsigned_tok.data(), unsigned_tok.data() + unsigned_tok.size(), d);
      if (ec == std::errc::result_out_of_range) {
        d = OverflowsToInfinity(unsigned_tok, exp) ? std::numeric_limits<double>::infinity() : 0.0;
      } else if (ec != std::errc() || ptr != unsigned_tok.data() + unsigned_tok.size()) {
        return invalid();
      }
      *out = Value::Float(neg ? -d : d);
    }
    p_ = end;
    out->set_pos(pos);
    return true;
  }

  // For a literal too large or too small for a double: true if it is too large.
  static bool OverflowsToInfinity(std::string_view unsigned_tok, int64_t exp) {
    // Decimal exponent of the first significant digit.
    int64_t magnitude = 0;
    size_t i = 0;
    while (i < unsigned_tok.size() && unsigned_tok[i] == '0') ++i;
    if (i < unsigned_tok.size() && IsDigit(unsigned_tok[i])) {
      while (i < unsigned_tok.size() && IsDigit(unsigned_tok[i])) {
        ++magnitude;
        ++i;
      }
    } else if (i < unsigned_tok.size() && unsigned_tok[i] == '.') {
      ++i;
      while (i < unsigned_tok.size() && unsigned_tok[i] == '0') {
        --magnitude;
        ++i;
      }
    }
    return magnitude + exp > 0;
  }

  bool ReadDispatch(int depth, Pos pos, Value* out) {
    if (p_ + 1 >= n_) return Fail(pos, "expected a tag after '#'");
    char c = text_[p_ + 1];
    if (c == '{') return ReadSet(depth, pos, out);
    if (script_syntax_ && c == '(') return ReadAnonFn(depth, pos, out);
    if (script_syntax_ && c == '"') return ReadRegex(pos, out);
    if (c == '#') {
      size_t end = TokenEnd(p_ + 2);
      std::string_view name = text_.substr(p_ + 2, end - p_ - 2);
      double d;
      if (name == "Inf") {
        d = std::numeric_limits<double>::infinity();
      } else if (name == "-Inf") {
        d = -std::numeric_limits<double>::infinity();
      } else if (name == "NaN") {
        d = std::numeric_limits<double>::quiet_NaN();
      } else {
        return Fail(pos, "unknown symbolic value ##" + Excerpt(name));
      }
      p_ = end;
      *out = Value::Float(d);
      out->set_pos(pos);
      return true;
    }
    size_t end = TokenEnd(p_ + 1);
    std::string_view tag = text_.substr(p_ + 1, end - p_ - 1);
    Pos tag_pos{pos.line, pos.col + 1};
    if (tag.empty()) {
      return Fail(tag_pos, "expected a tag after '#', found " + DescribeChar(c));
    }
    if (tag == "db/fn") {
      // Datomic's transaction function literal: #db/fn {:lang .. :params [..] :code ".."}
      // reads as its map (doc/transactions.md "Transaction functions").
      p_ = end;
      Value arg;
      Got got = ReadFormOrEnd(depth + 1, &arg, nullptr);
      if (got == Got::kError) return false;
      if (got == Got::kEnd || !arg.is_map()) return Fail(pos, "#db/fn must be followed by a map");
      *out = std::move(arg);
      out->set_pos(pos);
      return true;
    }
    const char* known = nullptr;
    if (tag == "inst") {
      known = "inst";
    } else if (tag == "uuid") {
      known = "uuid";
    } else if (tag == "bytes") {
      known = "bytes";
    } else if (tag == "uri") {
      known = "uri";
    } else {
      return Fail(tag_pos, "unknown tag #" + Excerpt(tag));
    }
    p_ = end;
    Value arg;
    Got got = ReadFormOrEnd(depth + 1, &arg, known);
    if (got == Got::kError) return false;
    if (got == Got::kEnd)
      return Fail(pos, std::string("#") + known + " must be followed by a string");
    const std::string& s = arg.str();
    if (tag == "inst") {
      Result<int64_t> micros = ParseInstant(s);
      if (!micros.ok()) return Fail(arg.pos(), micros.status().message());
      *out = Value::Inst(*micros);
    } else if (tag == "uuid") {
      Result<Uuid> u = ParseUuid(s);
      if (!u.ok()) return Fail(arg.pos(), u.status().message());
      *out = Value::MakeUuid(*u);
    } else if (tag == "uri") {
      if (Status st = CheckUri(s); !st.ok()) return Fail(arg.pos(), st.message());
      *out = Value::Uri(s);
    } else {
      if (s.size() % 2 != 0) {
        return Fail(arg.pos(), "invalid #bytes: odd number of hex digits");
      }
      std::string bytes(s.size() / 2, '\0');
      for (size_t i = 0; i < bytes.size(); ++i) {
        int hi = HexValue(s[2 * i]), lo = HexValue(s[2 * i + 1]);
        if (hi < 0 || lo < 0) {
          return Fail(arg.pos(), "invalid #bytes: " + DescribeChar(s[hi < 0 ? 2 * i : 2 * i + 1]) +
                                     " is not a hex digit");
        }
        bytes[i] = static_cast<char>(hi * 16 + lo);
      }
      *out = Value::Bytes(std::move(bytes));
    }
    out->set_pos(pos);
    return true;
  }

  size_t* off_;
  uint32_t* line_out_;
  size_t* line_start_out_;
  std::string_view text_;
  size_t n_;
  size_t p_;
  uint32_t line_;
  size_t line_start_;
  int max_depth_;
  bool allow_quote_;
  bool script_syntax_;
  bool in_anon_fn_ = false;
  Pos top_pos_;
  Status error_;
};

Reader::Reader(std::string_view text, ReadOptions options) : text_(text), options_(options) {
  // Skip a UTF-8 byte order mark; columns count from after it.
  if (text_.substr(0, 3) == "\xEF\xBB\xBF") off_ = line_start_ = 3;
}

Result<std::optional<Value>> Reader::Next() {
  return ReaderImpl(text_, options_, &off_, &line_, &line_start_).Next();
}

Result<Value> Read(std::string_view text, const ReadOptions& options) {
  return ReaderImpl::ReadOne(text, options);
}

Result<Vec> ReadAll(std::string_view text, const ReadOptions& options) {
  Reader reader(text, options);
  Vec out;
  for (;;) {
    Result<std::optional<Value>> next = reader.Next();
    if (!next.ok()) return next.status();
    if (!next->has_value()) return out;
    out.push_back(std::move(**next));
  }
}

}  // namespace mentat::edn
