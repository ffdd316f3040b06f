// Strings, keywords and symbols, format, clojure.string, and regular expressions
// (util/regex.h: RE2 syntax, linear-time matching, the same engine as queries). String
// indices count code points.
#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdio>
#include <cstring>
#include <utility>

#include "script/core.h"
#include "script/print.h"
#include "util/case.h"
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
  CurrentMeter().Text(pattern.size());
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
  Fail(self.name + " expects a regex (re-pattern) or a pattern string, got " + PrBrief(v));
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

// Byte offset of the code point `count` code points after byte `from` in s (s.size()
// when that is the end), charging the text walked; `index` names it in the error.
size_t ByteOffset(const std::string& s, size_t from, int64_t count, int64_t index,
                  const FnObj& self) {
  size_t off = from;
  int64_t walked = 0;
  for (; walked < count && off < s.size(); ++walked) DecodeUtf8(s, &off);
  CurrentMeter().Text(off - from);
  if (walked < count) Fail(self.name + ": index " + std::to_string(index) + " out of bounds");
  return off;
}

// The first `x` in `t` at or after byte `from` (npos when none), in linear time (glibc's
// memmem is the two-way algorithm; std::string::find is quadratic at worst), charging
// the text scanned. The search looks at windows that double in size, so that finding the
// next match costs its distance, not the rest of `t` (sanitizers check memmem's whole
// range: replacing every byte of a long string would be quadratic otherwise).
size_t Find(const std::string& t, const std::string& x, size_t from) {
  if (from > t.size()) return std::string::npos;
  size_t window = std::max<size_t>(64, 4 * x.size());
  for (size_t start = from;; start += window + 1, window *= 2) {
    // A match starting at start + window still ends inside [start, end).
    size_t end = std::min(t.size(), start + window + x.size());
    const void* hit = memmem(t.data() + start, end - start, x.data(), x.size());
    if (hit) {
      size_t at = static_cast<size_t>(static_cast<const char*>(hit) - t.data());
      CurrentMeter().Text(at - from + x.size());
      return at;
    }
    if (end == t.size()) {
      CurrentMeter().Text(t.size() - from);
      return std::string::npos;
    }
  }
}

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// The bounds of `s` without leading (`left`) and trailing (`right`) whitespace.
std::pair<size_t, size_t> TrimBounds(const std::string& s, bool left, bool right) {
  size_t b = 0, e = s.size();
  while (left && b < e && IsSpace(s[b])) ++b;
  while (right && e > b && IsSpace(s[e - 1])) --e;
  CurrentMeter().Text(b + (s.size() - e));
  return {b, e};
}

std::string Trim(const std::string& s, bool left, bool right) {
  auto [b, e] = TrimBounds(s, left, right);
  return s.substr(b, e - b);
}

// ---- format ----

// One conversion: %[flags][width][.precision]conv.
struct Spec {
  std::string flags;
  int width = -1;
  int precision = -1;
  char conv = 0;
};

// A width or precision: at most INT_MAX (snprintf's limit); memory is checked later.
int FormatNumber(const std::string& fmt, size_t* j) {
  int64_t v = 0;
  while (*j < fmt.size() && fmt[*j] >= '0' && fmt[*j] <= '9') {
    v = v * 10 + (fmt[(*j)++] - '0');
    if (v > INT_MAX) Fail("format: width or precision too large");
  }
  return static_cast<int>(v);
}

// Parses the conversion after the '%' at fmt[*i]; leaves *i on its last character.
Spec ParseSpec(const std::string& fmt, size_t* i) {
  Spec spec;
  size_t j = *i + 1;
  while (j < fmt.size() && std::strchr("-+ 0#", fmt[j]) && fmt[j] != '\0') {
    spec.flags.push_back(fmt[j++]);
  }
  if (j < fmt.size() && fmt[j] >= '1' && fmt[j] <= '9') spec.width = FormatNumber(fmt, &j);
  if (j < fmt.size() && fmt[j] == '.') {
    ++j;
    spec.precision = FormatNumber(fmt, &j);
  }
  if (j >= fmt.size()) Fail("format: incomplete format specifier");
  spec.conv = fmt[j];
  *i = j;
  return spec;
}

// Formats one number with snprintf. The room the conversion may need (what glibc may
// also allocate internally: a %.200000000f asks for 200 MB) is charged before anything
// is formatted, and the text goes straight into `out`: no size cap.
template <typename T>
void FormatNumberInto(TextBuf* out, const Spec& spec, const char* length, T value) {
  std::string f = "%" + spec.flags;
  if (spec.width >= 0) f += std::to_string(spec.width);
  if (spec.precision >= 0) f += "." + std::to_string(spec.precision);
  f += length;
  f.push_back(spec.conv);
  // The widest conversion: a %f of 1e308 has 309 integer digits; %o of a 64-bit integer
  // 22 digits; sign, radix point, exponent and prefix fit in the rest.
  size_t bound = static_cast<size_t>(std::max(spec.width, 0)) +
                 static_cast<size_t>(std::max(spec.precision, 0)) + 400;
  out->Reserve(bound);
  int len = std::snprintf(nullptr, 0, f.c_str(), value);
  if (len < 0) Fail("format: cannot format " + f);
  std::snprintf(out->Extend(static_cast<size_t>(len)), static_cast<size_t>(len) + 1, f.c_str(),
                value);
}

// %s %c %b: padded to the width (by bytes, as C's printf), cut to the precision.
void FormatTextInto(TextBuf* out, const Spec& spec, std::string_view text) {
  if (spec.precision >= 0 && text.size() > static_cast<size_t>(spec.precision)) {
    text = text.substr(0, static_cast<size_t>(spec.precision));
  }
  size_t pad = spec.width > 0 && static_cast<size_t>(spec.width) > text.size()
                   ? static_cast<size_t>(spec.width) - text.size()
                   : 0;
  bool left = spec.flags.find('-') != std::string::npos;
  out->Reserve(pad + text.size());
  if (!left) out->Append(pad, ' ');
  out->Append(text);
  if (left) out->Append(pad, ' ');
}

Val Format(const FnObj& self, const std::string& fmt, Args a, size_t n) {
  TextBuf out;
  size_t arg = 0;
  for (size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%') {
      size_t next = fmt.find('%', i);
      if (next == std::string::npos) next = fmt.size();
      out.Append(std::string_view(fmt).substr(i, next - i));
      i = next - 1;
      continue;
    }
    Spec spec = ParseSpec(fmt, &i);
    if (spec.conv == '%') {
      out.Push('%');
      continue;
    }
    if (spec.conv == 'n') {
      out.Push('\n');
      continue;
    }
    if (!std::strchr("dxXofeEgGscb", spec.conv) || spec.conv == '\0') {
      Fail(std::string("format: unsupported conversion %") + spec.conv);
    }
    if (arg >= n) Fail("format: not enough arguments for the format string");
    const Val& v = a[arg++];
    switch (spec.conv) {
      case 'd':
      case 'x':
      case 'X':
      case 'o':
        FormatNumberInto(&out, spec, "ll", static_cast<long long>(IntArg(self, v)));
        break;
      case 'f':
      case 'e':
      case 'E':
      case 'g':
      case 'G':
        FormatNumberInto(&out, spec, "", NumArg(self, v));
        break;
      case 'b':
        FormatTextInto(&out, spec, v.truthy() ? "true" : "false");
        break;
      default: {  // s, c
        TextBuf text;
        StrAppend(v, &text);
        FormatTextInto(&out, spec, text.str());
        break;
      }
    }
  }
  return out.ToVal();
}

Val NamedFrom(Type t, Args a, size_t n, const FnObj& self) {
  if (n == 2) {
    bool no_ns = a[0].is_nil() || StrArg(self, a[0]).empty();
    const std::string& name = StrArg(self, a[1]);
    return Val::Text(t, no_ns ? name : a[0].str() + "/" + name);
  }
  const Val& x = a[0];
  if (x.is(t)) return x;
  if (x.is(Type::kString))
    return x.str().empty() && t == Type::kKeyword ? Val() : Val::Text(t, x.str());
  if (x.is_named()) return Val::Text(t, x.str());
  if (t == Type::kKeyword) return Val();
  Fail(self.name + " expects a string, keyword or symbol, got " + PrBrief(x));
}

}  // namespace

void RegisterString(Interp& in) {
  in.DefNative(
      "str",
      [](Interp&, Args a, size_t n, const FnObj&) {
        TextBuf out;
        for (size_t i = 0; i < n; ++i) StrAppend(a[i], &out);
        return out.ToVal();
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
        if (!a[0].is_named())
          Fail("name expects a string, keyword or symbol, got " + PrBrief(a[0]));
        (void)s;
        return Val::String(std::string(a[0].name()));
      },
      1, 1);
  in.DefNative(
      "namespace",
      [](Interp&, Args a, size_t, const FnObj&) {
        if (!a[0].is_named()) Fail("namespace expects a keyword or symbol, got " + PrBrief(a[0]));
        return a[0].ns().empty() ? Val() : Val::String(std::string(a[0].ns()));
      },
      1, 1);
  in.DefNative(
      "subs",
      [](Interp&, Args a, size_t n, const FnObj& s) {
        const std::string& t = StrArg(s, a[0]);
        int64_t from = IntArg(s, a[1]);
        if (from < 0) Fail("subs: index out of bounds");
        size_t b = ByteOffset(t, 0, from, from, s);
        size_t e = t.size();
        if (n == 3) {
          int64_t to = IntArg(s, a[2]);
          if (to < from) Fail("subs: end before start");
          e = ByteOffset(t, b, to - from, to, s);
        }
        return Val::String(t.substr(b, e - b));
      },
      2, 3);
  in.DefNative(
      "format",
      [](Interp&, Args a, size_t n, const FnObj& s) {
        return Format(s, StrArg(s, a[0]), a + 1, n - 1);
      },
      1, -1);
  in.DefNative(
      "clojure.string/join",
      [](Interp&, Args a, size_t n, const FnObj&) {
        TextBuf out, sep;
        if (n == 2) StrAppend(a[0], &sep);
        bool first = true;
        ForEach(a[n - 1], [&](const Val& x) {
          if (!first) out.Append(sep.str());
          first = false;
          StrAppend(x, &out);
          return true;
        });
        return out.ToVal();
      },
      1, 2, false);
  in.DefNative(
      "clojure.string/upper-case",
      [](Interp&, Args a, size_t, const FnObj& s) {
        return Val::String(text::UpperCase(StrArg(s, a[0])));
      },
      1, 1, false);
  in.DefNative(
      "clojure.string/lower-case",
      [](Interp&, Args a, size_t, const FnObj& s) {
        return Val::String(text::LowerCase(StrArg(s, a[0])));
      },
      1, 1, false);
  in.DefNative(
      "clojure.string/capitalize",
      [](Interp&, Args a, size_t, const FnObj& s) {
        return Val::String(text::Capitalize(StrArg(s, a[0])));
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
        if (a[0].is_nil()) return Val::Bool(true);
        auto [b, e] = TrimBounds(StrArg(s, a[0]), true, true);
        return Val::Bool(b == e);
      },
      1, 1, false);
  in.DefNative(
      "clojure.string/includes?",
      [](Interp&, Args a, size_t, const FnObj& s) {
        return Val::Bool(Find(StrArg(s, a[0]), StrArg(s, a[1]), 0) != std::string::npos);
      },
      2, 2, false);
  in.DefNative(
      "clojure.string/starts-with?",
      [](Interp& in, Args a, size_t, const FnObj& s) {
        const std::string &t = StrArg(s, a[0]), &x = StrArg(s, a[1]);
        in.meter().Text(x.size());
        return Val::Bool(t.size() >= x.size() && t.compare(0, x.size(), x) == 0);
      },
      2, 2, false);
  in.DefNative(
      "clojure.string/ends-with?",
      [](Interp& in, Args a, size_t, const FnObj& s) {
        const std::string &t = StrArg(s, a[0]), &x = StrArg(s, a[1]);
        in.meter().Text(x.size());
        return Val::Bool(t.size() >= x.size() && t.compare(t.size() - x.size(), x.size(), x) == 0);
      },
      2, 2, false);
  in.DefNative(
      "clojure.string/index-of",
      [](Interp&, Args a, size_t, const FnObj& s) {
        const std::string& t = StrArg(s, a[0]);
        size_t at = Find(t, StrArg(s, a[1]), 0);
        return at == std::string::npos ? Val()
                                       : Val::Int(static_cast<int64_t>(
                                             CountCodePoints(std::string_view(t).substr(0, at))));
      },
      2, 2, false);
  in.DefNative(
      "clojure.string/reverse",
      [](Interp& in, Args a, size_t, const FnObj& s) {
        const std::string& t = StrArg(s, a[0]);
        in.meter().Text(t.size());
        std::vector<char32_t, Charged<char32_t>> cps;
        for (size_t off = 0; off < t.size();) cps.push_back(DecodeUtf8(t, &off));
        TextBuf out;
        out.Reserve(t.size());
        std::string utf8;
        for (size_t i = cps.size(); i-- > 0;) {
          utf8.clear();
          AppendUtf8(cps[i], &utf8);
          out.Append(utf8);
        }
        return out.ToVal();
      },
      1, 1, false);
  in.DefNative(
      "clojure.string/split-lines",
      [](Interp& in, Args a, size_t, const FnObj& s) {
        const std::string& t = StrArg(s, a[0]);
        in.meter().Text(t.size());
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
        ValVec parts;
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
          std::string_view tv = t;
          TextBuf out;  // may be far longer than t: charged as it grows
          if (a[1].is(Type::kString) && a[2].is(Type::kString)) {
            const std::string &from = a[1].str(), &to = a[2].str();
            if (from.empty()) {  // as Java: the replacement goes between every character
              out.Append(to);
              if (first_only) {
                out.Append(t);
                return out.ToVal();
              }
              for (size_t off = 0; off < t.size();) {
                size_t start = off;
                DecodeUtf8(t, &off);
                out.Append(tv.substr(start, off - start));
                out.Append(to);
              }
              return out.ToVal();
            }
            size_t pos = 0;
            for (;;) {
              size_t at = Find(t, from, pos);
              if (at == std::string::npos) break;
              out.Append(tv.substr(pos, at - pos));
              out.Append(to);
              pos = at + from.size();
              if (first_only) break;
            }
            out.Append(tv.substr(pos));
            return out.ToVal();
          }
          Val holder;
          const regex::Regex& re = RegexArg(s, a[1], &holder);
          regex::Match m;
          size_t from = 0;  // the first byte not yet copied
          size_t search = 0;
          while (search <= t.size() && Search(in, re, t, search, &m)) {
            out.Append(tv.substr(from, m.begin - from));
            if (a[2].is(Type::kString)) {
              // Each $ reference expands to at most the whole match: charge that bound
              // before the expansion exists.
              const std::string& r = a[2].str();
              size_t refs = static_cast<size_t>(std::count(r.begin(), r.end(), '$'));
              ScopedCharge expansion(static_cast<int64_t>(r.size() + refs * (m.end - m.begin)));
              in.meter().Text(r.size());
              auto rep = regex::ExpandReplacement(re, m, r);
              if (!rep.ok()) Fail(s.name + ": " + rep.status().message());
              out.Append(*rep);
            } else {
              StrAppend(in.Call(a[2], {MatchVal(m)}), &out);
            }
            from = m.end;
            search = m.end == m.begin ? NextChar(t, m.end) : m.end;
            if (m.end == m.begin && search <= t.size()) {
              out.Append(tv.substr(m.end, search - m.end));
              from = search;
            }
            if (first_only) break;
          }
          if (from < t.size()) out.Append(tv.substr(from));
          return out.ToVal();
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
        ListBuilder out;
        regex::Match m;
        for (size_t from = 0; from <= t.size() && Search(in, re, t, from, &m);) {
          out.Add(MatchVal(m));
          from = m.end == m.begin ? NextChar(t, m.end) : m.end;
        }
        return out.size() == 0 ? Val() : out.Build();
      },
      2, 2);
}

}  // namespace mentat::script
