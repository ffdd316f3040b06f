// Strings, keywords and symbols, format, clojure.string, and regular expressions
// (std::regex, ECMAScript syntax). String indices count code points.
#include <cctype>
#include <cstdio>
#include <cstring>
#include <regex>

#include "script/core.h"
#include "script/print.h"

namespace mentat::script {

namespace {

using Args = const Val*;

// libstdc++'s regex matcher recurses per input character; longer subjects are refused
// rather than risking the stack.
constexpr size_t kMaxRegexSubject = 20000;

struct RegexObj : OpaqueObj {
  std::string pattern;
  std::regex re;
  std::string Describe() const override {
    std::string out = "#\"";
    out += pattern;
    out += '"';
    return out;
  }
};

Val MakeRegex(const std::string& pattern) {
  Ref<RegexObj> r = Make<RegexObj>(pattern.size() * 8);
  r->pattern = pattern;
  try {
    r->re = std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    Fail("invalid regex " + PrStr(Val::String(pattern)) + ": " + e.what());
  }
  return Val::Object(Type::kRegex, r.get());
}

const std::regex& RegexArg(const FnObj& self, const Val& v, Val* holder) {
  if (v.is(Type::kRegex)) return v.as<RegexObj>()->re;
  if (v.is(Type::kString)) {
    *holder = MakeRegex(v.str());
    return holder->as<RegexObj>()->re;
  }
  Fail(self.name + " expects a regex (re-pattern) or a pattern string, got " + PrStr(v));
}

const std::string& Subject(const FnObj& self, const Val& v) {
  const std::string& s = StrArg(self, v);
  if (s.size() > kMaxRegexSubject) {
    Fail(self.name + ": strings longer than " + std::to_string(kMaxRegexSubject) +
         " bytes are not matched by regexes here");
  }
  return s;
}

// A match as Clojure returns it: the string, or [whole group1 ...] with nil for groups
// that did not participate.
Val MatchVal(const std::smatch& m) {
  if (m.size() == 1) return Val::String(m[0].str());
  VecBuilder b;
  for (size_t i = 0; i < m.size(); ++i) b.Add(m[i].matched ? Val::String(m[i].str()) : Val());
  return b.Build();
}

template <typename F>
Val RegexCall(const FnObj& self, F&& f) {
  try {
    return f();
  } catch (const std::regex_error& e) {
    Fail(self.name + ": regex error: " + e.what());
  }
}

// Byte offset of code point `index` in s (s.size() when index == count).
size_t ByteOffset(const std::string& s, int64_t index, const FnObj& self) {
  size_t off = 0;
  for (int64_t i = 0; i < index; ++i) {
    if (off >= s.size()) Fail(self.name + ": index " + std::to_string(index) + " out of bounds");
    DecodeUtf8(s, &off);
  }
  return off;
}

std::string MapAscii(std::string s, int (*f)(int)) {
  for (char& c : s) {
    if (static_cast<unsigned char>(c) < 0x80) c = static_cast<char>(f(c));
  }
  return s;
}

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

std::string Trim(const std::string& s, bool left, bool right) {
  size_t b = 0, e = s.size();
  while (left && b < e && IsSpace(s[b])) ++b;
  while (right && e > b && IsSpace(s[e - 1])) --e;
  return s.substr(b, e - b);
}

std::string Format(const FnObj& self, const std::string& fmt, Args a, size_t n) {
  std::string out;
  size_t arg = 0;
  for (size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%') {
      out.push_back(fmt[i]);
      continue;
    }
    size_t j = i + 1;
    std::string spec = "%";
    while (j < fmt.size() && std::strchr("-+ 0#.123456789", fmt[j])) spec.push_back(fmt[j++]);
    if (j >= fmt.size()) Fail("format: incomplete format specifier");
    char conv = fmt[j];
    i = j;
    if (conv == '%') {
      out.push_back('%');
      continue;
    }
    if (conv == 'n') {
      out.push_back('\n');
      continue;
    }
    if (arg >= n) Fail("format: not enough arguments for the format string");
    const Val& v = a[arg++];
    char buf[512];
    switch (conv) {
      case 'd':
      case 'x':
      case 'X':
      case 'o': {
        spec += "ll";
        spec.push_back(conv);
        std::snprintf(buf, sizeof buf, spec.c_str(), static_cast<long long>(IntArg(self, v)));
        out += buf;
        break;
      }
      case 'f':
      case 'e':
      case 'E':
      case 'g':
      case 'G': {
        spec.push_back(conv);
        std::snprintf(buf, sizeof buf, spec.c_str(), NumArg(self, v));
        out += buf;
        break;
      }
      case 's':
      case 'c':
      case 'b': {
        std::string text;
        if (conv == 'b') {
          text = v.truthy() ? "true" : "false";
        } else {
          StrAppend(v, &text);
        }
        spec.push_back('s');
        if (spec == "%s") {
          out += text;
        } else {
          std::snprintf(buf, sizeof buf, spec.c_str(), text.c_str());
          out += buf;
        }
        break;
      }
      default:
        Fail(std::string("format: unsupported conversion %") + conv);
    }
  }
  return out;
}

Val NamedFrom(Type t, Args a, size_t n, const FnObj& self) {
  if (n == 2) {
    std::string ns = a[0].is_nil() ? "" : StrArg(self, a[0]);
    const std::string& name = StrArg(self, a[1]);
    return Val::Text(t, ns.empty() ? name : ns + "/" + name);
  }
  const Val& x = a[0];
  if (x.is(t)) return x;
  if (x.is(Type::kString))
    return x.str().empty() && t == Type::kKeyword ? Val() : Val::Text(t, x.str());
  if (x.is_named()) return Val::Text(t, x.str());
  if (t == Type::kKeyword) return Val();
  Fail(self.name + " expects a string, keyword or symbol, got " + PrStr(x));
}

}  // namespace

void RegisterString(Interp& in) {
  in.DefNative(
      "str",
      [](Interp&, Args a, size_t n, const FnObj&) {
        std::string out;
        for (size_t i = 0; i < n; ++i) StrAppend(a[i], &out);
        return Val::String(std::move(out));
      },
      0, -1);
  in.DefNative(
      "keyword",
      [](Interp&, Args a, size_t n, const FnObj& s) { return NamedFrom(Type::kKeyword, a, n, s); },
      1, 2);
  in.DefNative(
      "symbol",
      [](Interp&, Args a, size_t n, const FnObj& s) { return NamedFrom(Type::kSymbol, a, n, s); },
      1, 2);
  in.DefNative(
      "name",
      [](Interp&, Args a, size_t, const FnObj& s) {
        if (a[0].is(Type::kString)) return a[0];
        if (!a[0].is_named()) Fail("name expects a string, keyword or symbol, got " + PrStr(a[0]));
        (void)s;
        return Val::String(std::string(a[0].name()));
      },
      1, 1);
  in.DefNative(
      "namespace",
      [](Interp&, Args a, size_t, const FnObj&) {
        if (!a[0].is_named()) Fail("namespace expects a keyword or symbol, got " + PrStr(a[0]));
        return a[0].ns().empty() ? Val() : Val::String(std::string(a[0].ns()));
      },
      1, 1);
  in.DefNative(
      "subs",
      [](Interp&, Args a, size_t n, const FnObj& s) {
        const std::string& t = StrArg(s, a[0]);
        int64_t from = IntArg(s, a[1]);
        if (from < 0) Fail("subs: index out of bounds");
        size_t b = ByteOffset(t, from, s);
        size_t e = t.size();
        if (n == 3) {
          int64_t to = IntArg(s, a[2]);
          if (to < from) Fail("subs: end before start");
          e = b + ByteOffset(t.substr(b), to - from, s);
        }
        return Val::String(t.substr(b, e - b));
      },
      2, 3);
  in.DefNative(
      "format",
      [](Interp&, Args a, size_t n, const FnObj& s) {
        return Val::String(Format(s, StrArg(s, a[0]), a + 1, n - 1));
      },
      1, -1);
  in.DefNative(
      "clojure.string/join",
      [](Interp&, Args a, size_t n, const FnObj&) {
        std::string out, sep;
        if (n == 2) StrAppend(a[0], &sep);
        bool first = true;
        ForEach(a[n - 1], [&](const Val& x) {
          if (!first) out += sep;
          first = false;
          StrAppend(x, &out);
          return true;
        });
        return Val::String(std::move(out));
      },
      1, 2, false);
  in.DefNative(
      "clojure.string/upper-case",
      [](Interp&, Args a, size_t, const FnObj& s) {
        return Val::String(MapAscii(StrArg(s, a[0]), ::toupper));
      },
      1, 1, false);
  in.DefNative(
      "clojure.string/lower-case",
      [](Interp&, Args a, size_t, const FnObj& s) {
        return Val::String(MapAscii(StrArg(s, a[0]), ::tolower));
      },
      1, 1, false);
  in.DefNative(
      "clojure.string/capitalize",
      [](Interp&, Args a, size_t, const FnObj& s) {
        std::string t = MapAscii(StrArg(s, a[0]), ::tolower);
        if (!t.empty() && static_cast<unsigned char>(t[0]) < 0x80)
          t[0] = static_cast<char>(::toupper(t[0]));
        return Val::String(std::move(t));
      },
      1, 1, false);
  in.DefNative(
      "clojure.string/trim",
      [](Interp&, Args a, size_t, const FnObj& s) {
        return Val::String(Trim(StrArg(s, a[0]), true, true));
      },
      1, 1, false);
  in.DefNative(
      "clojure.string/triml",
      [](Interp&, Args a, size_t, const FnObj& s) {
        return Val::String(Trim(StrArg(s, a[0]), true, false));
      },
      1, 1, false);
  in.DefNative(
      "clojure.string/trimr",
      [](Interp&, Args a, size_t, const FnObj& s) {
        return Val::String(Trim(StrArg(s, a[0]), false, true));
      },
      1, 1, false);
  in.DefNative(
      "clojure.string/blank?",
      [](Interp&, Args a, size_t, const FnObj& s) {
        return Val::Bool(a[0].is_nil() || Trim(StrArg(s, a[0]), true, true).empty());
      },
      1, 1, false);
  in.DefNative(
      "clojure.string/includes?",
      [](Interp&, Args a, size_t, const FnObj& s) {
        return Val::Bool(StrArg(s, a[0]).find(StrArg(s, a[1])) != std::string::npos);
      },
      2, 2, false);
  in.DefNative(
      "clojure.string/starts-with?",
      [](Interp&, Args a, size_t, const FnObj& s) {
        return Val::Bool(StrArg(s, a[0]).rfind(StrArg(s, a[1]), 0) == 0);
      },
      2, 2, false);
  in.DefNative(
      "clojure.string/ends-with?",
      [](Interp&, Args a, size_t, const FnObj& s) {
        const std::string &t = StrArg(s, a[0]), &x = StrArg(s, a[1]);
        return Val::Bool(t.size() >= x.size() && t.compare(t.size() - x.size(), x.size(), x) == 0);
      },
      2, 2, false);
  in.DefNative(
      "clojure.string/index-of",
      [](Interp&, Args a, size_t, const FnObj& s) {
        const std::string& t = StrArg(s, a[0]);
        size_t at = t.find(StrArg(s, a[1]));
        return at == std::string::npos
                   ? Val()
                   : Val::Int(static_cast<int64_t>(CountCodePoints(t.substr(0, at))));
      },
      2, 2, false);
  in.DefNative(
      "clojure.string/reverse",
      [](Interp&, Args a, size_t, const FnObj& s) {
        const std::string& t = StrArg(s, a[0]);
        std::vector<char32_t> cps;
        for (size_t off = 0; off < t.size();) cps.push_back(DecodeUtf8(t, &off));
        std::string out;
        for (size_t i = cps.size(); i-- > 0;) AppendUtf8(cps[i], &out);
        return Val::String(std::move(out));
      },
      1, 1, false);
  in.DefNative(
      "clojure.string/split-lines",
      [](Interp&, Args a, size_t, const FnObj& s) {
        const std::string& t = StrArg(s, a[0]);
        VecBuilder b;
        size_t start = 0;
        for (size_t i = 0; i <= t.size(); ++i) {
          if (i == t.size() || t[i] == '\n') {
            size_t end = (i > start && t[i - 1] == '\r') ? i - 1 : i;
            if (i < t.size() || start < t.size()) b.Add(Val::String(t.substr(start, end - start)));
            start = i + 1;
          }
        }
        return b.Build();
      },
      1, 1, false);
  in.DefNative(
      "clojure.string/split",
      [](Interp&, Args a, size_t n, const FnObj& s) {
        const std::string& t = Subject(s, a[0]);
        int64_t limit = n == 3 ? IntArg(s, a[2]) : 0;
        Val holder;
        const std::regex& re = RegexArg(s, a[1], &holder);
        return RegexCall(s, [&]() {
          std::vector<Val> parts;
          auto begin = t.cbegin();
          std::smatch m;
          auto seg = begin;     // start of the current part
          auto search = begin;  // where the next match may start
          while ((limit <= 0 || static_cast<int64_t>(parts.size()) + 1 < limit) &&
                 search != t.cend() && std::regex_search(search, t.cend(), m, re)) {
            if (m.length(0) == 0) {
              // An empty match splits before the next character (never at the start).
              auto at = m[0].first;
              if (at == t.cend()) break;
              if (at != begin) {
                parts.push_back(Val::String(std::string(seg, at)));
                seg = at;
              }
              size_t next = static_cast<size_t>(at - begin);
              DecodeUtf8(t, &next);
              search = begin + static_cast<long>(next);
              continue;
            }
            parts.push_back(Val::String(std::string(seg, m[0].first)));
            seg = search = m[0].second;
          }
          auto from = seg;
          parts.push_back(Val::String(std::string(from, t.cend())));
          if (limit == 0) {
            while (parts.size() > 1 && parts.back().str().empty()) parts.pop_back();
          }
          return VecFrom(std::move(parts));
        });
      },
      2, 3, false);
  for (const char* name : {"clojure.string/replace", "clojure.string/replace-first"}) {
    in.DefNative(
        name,
        [](Interp& in, Args a, size_t, const FnObj& s) {
          const std::string& t = Subject(s, a[0]);
          bool first_only = s.name == "clojure.string/replace-first";
          if (a[1].is(Type::kString) && a[2].is(Type::kString)) {
            const std::string &from = a[1].str(), &to = a[2].str();
            if (from.empty()) {  // as Java: the replacement goes between every character
              if (first_only) return Val::String(to + t);
              std::string out = to;
              for (size_t off = 0; off < t.size();) {
                size_t start = off;
                DecodeUtf8(t, &off);
                out.append(t, start, off - start);
                out += to;
              }
              return Val::String(std::move(out));
            }
            std::string out;
            size_t pos = 0;
            for (;;) {
              size_t at = t.find(from, pos);
              if (at == std::string::npos) break;
              out.append(t, pos, at - pos).append(to);
              pos = at + from.size();
              if (first_only) break;
            }
            out.append(t, pos);
            return Val::String(std::move(out));
          }
          Val holder;
          const std::regex& re = RegexArg(s, a[1], &holder);
          return RegexCall(s, [&]() {
            std::string out;
            auto from = t.cbegin();
            std::smatch m;
            while (std::regex_search(from, t.cend(), m, re)) {
              out.append(from, m[0].first);
              if (a[2].is(Type::kString)) {
                out += m.format(a[2].str());
              } else {
                StrAppend(in.Call(a[2], {MatchVal(m)}), &out);
              }
              if (m.length(0) == 0) {
                if (m[0].second == t.cend()) {
                  from = t.cend();
                  break;
                }
                out.push_back(*m[0].second);
                from = m[0].second + 1;
              } else {
                from = m[0].second;
              }
              if (first_only) break;
            }
            out.append(from, t.cend());
            return Val::String(std::move(out));
          });
        },
        3, 3, false);
  }
  in.DefNative(
      "re-pattern",
      [](Interp&, Args a, size_t, const FnObj& s) {
        if (a[0].is(Type::kRegex)) return a[0];
        return MakeRegex(StrArg(s, a[0]));
      },
      1, 1);
  in.DefNative(
      "re-find",
      [](Interp&, Args a, size_t, const FnObj& s) {
        Val holder;
        const std::regex& re = RegexArg(s, a[0], &holder);
        const std::string& t = Subject(s, a[1]);
        return RegexCall(s, [&]() {
          std::smatch m;
          return std::regex_search(t, m, re) ? MatchVal(m) : Val();
        });
      },
      2, 2);
  in.DefNative(
      "re-matches",
      [](Interp&, Args a, size_t, const FnObj& s) {
        Val holder;
        const std::regex& re = RegexArg(s, a[0], &holder);
        const std::string& t = Subject(s, a[1]);
        return RegexCall(s, [&]() {
          std::smatch m;
          return std::regex_match(t, m, re) ? MatchVal(m) : Val();
        });
      },
      2, 2);
  in.DefNative(
      "re-seq",
      [](Interp& in, Args a, size_t, const FnObj& s) {
        Val holder;
        const std::regex& re = RegexArg(s, a[0], &holder);
        const std::string& t = Subject(s, a[1]);
        return RegexCall(s, [&]() {
          std::vector<Val> out;
          for (auto it = std::sregex_iterator(t.begin(), t.end(), re); it != std::sregex_iterator();
               ++it) {
            in.Step();
            out.push_back(MatchVal(*it));
          }
          return out.empty() ? Val() : ListOf(std::move(out));
        });
      },
      2, 2);
}

}  // namespace mentat::script
