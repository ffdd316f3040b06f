// The order of keywords and symbols, as Clojure's compare has it: a name without a
// namespace first, then by namespace, then by name (each by UTF-8 bytes, which is code
// point order). So :a/b < :a-/b although "-" < "/" in the raw text, and :z < :a/b.
//
// The namespace is what precedes the first '/', as edn::Value::ns() has it ("/" alone and
// names starting with '/' have none). One leading ':' on both sides (keywords as SQL
// stores them) is skipped. Used by edn::Compare, the scripts' compare and the SQL
// collation mentat_named, so queries, results and scripts agree.
#pragma once

#include <string_view>

namespace mentat {

inline int CompareNamed(std::string_view a, std::string_view b) {
  if (!a.empty() && !b.empty() && a[0] == ':' && b[0] == ':') {
    a.remove_prefix(1);
    b.remove_prefix(1);
  }
  auto split = [](std::string_view s, std::string_view* ns, std::string_view* name) {
    size_t slash = s.find('/');
    if (slash == std::string_view::npos || slash == 0) {
      *name = s;
      return false;
    }
    *ns = s.substr(0, slash);
    *name = s.substr(slash + 1);
    return true;
  };
  std::string_view na, ma, nb, mb;
  bool ha = split(a, &na, &ma), hb = split(b, &nb, &mb);
  if (ha != hb) return ha ? 1 : -1;
  auto cmp = [](std::string_view x, std::string_view y) {
    int c = x.compare(y);
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  };
  if (ha) {
    if (int c = cmp(na, nb)) return c;
  }
  return cmp(ma, mb);
}

}  // namespace mentat
