// Strings, keywords and symbols, format, clojure.string, and regular expressions
// (util/regex.h: RE2 syntax, linear-time matching, the same engine as queries). String
// indices count code points.
#include <cctype>
#include <cstdio>
#include <cstring>

#include "script/core.h"
#include "script/print.h"
#include "util/regex.h"

namespace mentat::script {

namespace {

using Args = const Val*;

struct RegexObj : OpaqueObj {
  std::shared_ptr<const regex::Regex> re;
  std::string Describe() const override {
    std::string out = "#\"";
    out += re->pattern();
    out += '"';
    return out;
  }
};

Val MakeRegex(const std::string& pattern) {
  auto re = regex::Regex::Compile(pattern);
  if (!re.ok()) Fail(re.status().message());
  // The compiled program and the matcher's caches count against the memory limit.
  Ref<RegexObj> r = Make<RegexObj>(static_cast<size_t>((*re)->footprint()));
  r->re = std::move(*re);
  return Val::Object(Type::kRegex, r.get());
}

const regex::Regex& RegexArg(const FnObj& self, const Val& v, Val* holder) {
  if (v.is(Type::kRegex)) return *v.as<RegexObj>()->re;
  if (v.is(Type::kString)) {
    *holder = MakeRegex(v.str());
    return *holder->as<RegexObj>()->re;
  }
  Fail(self.name + " expects a regex (re-pattern) or a pattern string, got " + PrStr(v));
}

// Searches `t` from byte `from`, charging a step per byte the search may walk.
bool Search(Interp& in, const regex::Regex& re, const std::string& t, size_t from,
            regex::Match* m) {
  bool found = re.Find(t, from, m);
  in.Steps(static_cast<int64_t>((found ? m->end : t.size()) - std::min(from, t.size())) + 1);
  return found;
}

// A match as Clojure returns it: the string, or [whole group1 ...] with nil for groups
// that did not take part.
Val MatchVal(const regex::Match& m) {
  if (m.groups.size() == 1) return Val::String(std::string(*m.groups[0]));
  VecBuilder b;
  for (const auto& g : m.groups) b.Add(g ? Val::String(std::string(*g)) : Val());
  return b.Build();
}

// The byte after the code point at `at` (an empty match moves on by one character).
size_t NextChar(const std::string& t, size_t at) {
  if (at >= t.size()) return t.size() + 1;
  DecodeUtf8(t, &at);
  return at;
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
      [](Interp& in, Args a, size_t n, const FnObj& s) {
        const std::string& t = StrArg(s, a[0]);
        int64_t limit = n == 3 ? IntArg(s, a[2]) : 0;
        Val holder;
        const regex::Regex& re = RegexArg(s, a[1], &holder);
        std::vector<Val> parts;
        regex::Match m;
        size_t seg = 0;     // start of the current part
        size_t search = 0;  // where the next match may start
        while ((limit <= 0 || static_cast<int64_t>(parts.size()) + 1 < limit) &&
               search < t.size() && Search(in, re, t, search, &m)) {
          if (m.end == m.begin) {
            // An empty match splits before the next character (never at the start).
            if (m.begin >= t.size()) break;
            if (m.begin != 0) {
              parts.push_back(Val::String(t.substr(seg, m.begin - seg)));
              seg = m.begin;
            }
            search = NextChar(t, m.begin);
            continue;
          }
          parts.push_back(Val::String(t.substr(seg, m.begin - seg)));
          seg = search = m.end;
        }
        parts.push_back(Val::String(t.substr(seg)));
        if (limit == 0) {
          while (parts.size() > 1 && parts.back().str().empty()) parts.pop_back();
        }
        return VecFrom(std::move(parts));
      },
      2, 3, false);
  for (const char* name : {"clojure.string/replace", "clojure.string/replace-first"}) {
    in.DefNative(
        name,
        [](Interp& in, Args a, size_t, const FnObj& s) {
          const std::string& t = StrArg(s, a[0]);
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
          const regex::Regex& re = RegexArg(s, a[1], &holder);
          std::string out;
          regex::Match m;
          size_t from = 0;  // the first byte not yet copied
          size_t search = 0;
          while (search <= t.size() && Search(in, re, t, search, &m)) {
            out.append(t, from, m.begin - from);
            if (a[2].is(Type::kString)) {
              auto rep = regex::ExpandReplacement(re, m, a[2].str());
              if (!rep.ok()) Fail(s.name + ": " + rep.status().message());
              out += *rep;
            } else {
              StrAppend(in.Call(a[2], {MatchVal(m)}), &out);
            }
            from = m.end;
            search = m.end == m.begin ? NextChar(t, m.end) : m.end;
            if (m.end == m.begin && search <= t.size()) {
              out.append(t, m.end, search - m.end);
              from = search;
            }
            if (first_only) break;
          }
          if (from < t.size()) out.append(t, from, std::string::npos);
          return Val::String(std::move(out));
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
      [](Interp& in, Args a, size_t, const FnObj& s) {
        Val holder;
        const regex::Regex& re = RegexArg(s, a[0], &holder);
        const std::string& t = StrArg(s, a[1]);
        regex::Match m;
        return Search(in, re, t, 0, &m) ? MatchVal(m) : Val();
      },
      2, 2);
  in.DefNative(
      "re-matches",
      [](Interp& in, Args a, size_t, const FnObj& s) {
        Val holder;
        const regex::Regex& re = RegexArg(s, a[0], &holder);
        const std::string& t = StrArg(s, a[1]);
        regex::Match m;
        in.Steps(static_cast<int64_t>(t.size()) + 1);
        return re.FullMatch(t, &m) ? MatchVal(m) : Val();
      },
      2, 2);
  in.DefNative(
      "re-seq",
      [](Interp& in, Args a, size_t, const FnObj& s) {
        Val holder;
        const regex::Regex& re = RegexArg(s, a[0], &holder);
        const std::string& t = StrArg(s, a[1]);
        std::vector<Val> out;
        regex::Match m;
        for (size_t from = 0; from <= t.size() && Search(in, re, t, from, &m);) {
          out.push_back(MatchVal(m));
          from = m.end == m.begin ? NextChar(t, m.end) : m.end;
        }
        return out.empty() ? Val() : ListOf(std::move(out));
      },
      2, 2);
}

}  // namespace mentat::script
