#include "storage/pg_sql.h"

#include <cctype>
#include <vector>

namespace mentat::storage {

namespace {

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Tracks string literals and quoted names while scanning SQL: true when `c` is a quote or
// inside one (so not SQL to rewrite), updating `*quote`.
bool Quoted(char c, char* quote) {
  if (*quote) {
    if (c == *quote) *quote = 0;
    return true;
  }
  if (c == '\'' || c == '"') {
    *quote = c;
    return true;
  }
  return false;
}

// The statements of `sql`, split at semicolons outside quotes.
std::vector<std::string> SplitStatements(std::string_view sql) {
  std::vector<std::string> out(1);
  char quote = 0;
  bool dollar = false;  // inside a $$-quoted function body
  for (size_t i = 0; i < sql.size(); ++i) {
    char c = sql[i];
    if (!quote && c == '$' && i + 1 < sql.size() && sql[i + 1] == '$') {
      dollar = !dollar;
      out.back() += "$$";
      ++i;
      continue;
    }
    if (dollar) {
      out.back().push_back(c);
      continue;
    }
    if (!Quoted(c, &quote) && c == ';') {
      out.emplace_back();
      continue;
    }
    out.back().push_back(c);
  }
  return out;
}

// Case-sensitive search for `word` as a whole word outside quotes, from `from`.
size_t FindWord(const std::string& s, std::string_view word, size_t from = 0) {
  char quote = 0;
  for (size_t i = from; i < s.size(); ++i) {
    if (Quoted(s[i], &quote)) continue;
    if (s.compare(i, word.size(), word) == 0 && (i == 0 || !IsWordChar(s[i - 1])) &&
        (i + word.size() >= s.size() || !IsWordChar(s[i + word.size()])))
      return i;
  }
  return std::string::npos;
}

std::string Trimmed(std::string s) {
  size_t b = s.find_first_not_of(" \n\t");
  size_t e = s.find_last_not_of(" \n\t");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// Appends `clause` before a RETURNING clause, or at the end.
void AppendConflict(std::string* s, const std::string& clause) {
  size_t r = FindWord(*s, "RETURNING");
  if (r == std::string::npos) {
    *s = Trimmed(*s) + " " + clause;
  } else {
    s->insert(r, clause + " ");
  }
}

// Names every subquery in a FROM clause that has no alias (PostgreSQL 15 requires one).
std::string AliasSubqueries(std::string s) {
  static const char* const kFollowers[] = {
      "WHERE",  "GROUP",     "ORDER", "LIMIT",  "UNION",   "JOIN",      "CROSS",
      "LEFT",   "INNER",     "ON",    "HAVING", "EXCEPT",  "INTERSECT", "OFFSET",
      "WINDOW", "RETURNING", "FULL",  "RIGHT",  "NATURAL", "USING",     nullptr};
  int next = 0;
  char quote = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (Quoted(s[i], &quote) || s[i] != '(') continue;
    // The word before the parenthesis: FROM or JOIN.
    size_t w = i;
    while (w > 0 && s[w - 1] == ' ') --w;
    size_t ws = w;
    while (ws > 0 && IsWordChar(s[ws - 1])) --ws;
    std::string before = s.substr(ws, w - ws);
    if (before != "FROM" && before != "JOIN") continue;
    size_t inner = s.find_first_not_of(" \n", i + 1);
    if (inner == std::string::npos ||
        (s.compare(inner, 6, "SELECT") != 0 && s.compare(inner, 4, "WITH") != 0 &&
         s.compare(inner, 6, "VALUES") != 0))
      continue;
    // Its closing parenthesis.
    int depth = 0;
    char q = 0;
    size_t close = std::string::npos;
    for (size_t j = i; j < s.size(); ++j) {
      char d = s[j];
      if (Quoted(d, &q)) continue;
      if (d == '(') {
        ++depth;
      } else if (d == ')' && --depth == 0) {
        close = j;
        break;
      }
    }
    if (close == std::string::npos) break;
    size_t after = s.find_first_not_of(" \n", close + 1);
    bool aliased = false;
    if (after != std::string::npos && (IsWordChar(s[after]) || s[after] == '"')) {
      size_t ae = after;
      while (ae < s.size() && IsWordChar(s[ae])) ++ae;
      std::string word = s.substr(after, ae - after);
      aliased = true;
      for (const char* const* k = kFollowers; *k; ++k)
        if (word == *k) aliased = false;
    }
    if (!aliased) s.insert(close + 1, " AS mentat_q" + std::to_string(next++));
  }
  return s;
}

// `SELECT value FROM json_each(P)` over a JSON array of integers (pull's entity lists):
// its elements as bigint.
void JsonEachOfIntegers(std::string* s) {
  static constexpr std::string_view kFrom = "SELECT value FROM json_each(";
  for (size_t at = s->find(kFrom); at != std::string::npos; at = s->find(kFrom, at + 1)) {
    size_t arg = at + kFrom.size();
    size_t close = s->find(')', arg);
    if (close == std::string::npos) return;
    std::string param = s->substr(arg, close - arg);
    s->replace(at, close + 1 - at,
               "SELECT CAST(value AS bigint) FROM json_array_elements_text(CAST(" + param +
                   " AS json)) AS value");
  }
}

std::string OneStatement(std::string s) {
  s = AliasSubqueries(std::move(s));
  // typeof(x) -> mentat_typeof(x): SQLite's storage class names (storage/format_pg.cc)
  for (size_t at = FindWord(s, "typeof"); at != std::string::npos;
       at = FindWord(s, "typeof", at + 7))
    if (at + 6 < s.size() && s[at + 6] == '(') s.insert(at, "mentat_");
  JsonEachOfIntegers(&s);
  // LIMIT -1 (SQLite's "no limit") -> LIMIT ALL
  for (size_t at = FindWord(s, "LIMIT"); at != std::string::npos; at = FindWord(s, "LIMIT", at + 5))
    if (s.compare(at + 5, 4, " -1 ") == 0 ||
        (s.compare(at + 5, 3, " -1") == 0 && at + 8 == s.size()))
      s.replace(at + 6, 2, "ALL");
  // x IS NOT <digit> -> x IS DISTINCT FROM <digit> (SQLite's IS NOT; the partial
  // attribute indexes are declared with the same words, so they still match)
  for (size_t at = s.find(" IS NOT "); at != std::string::npos; at = s.find(" IS NOT ", at + 1)) {
    size_t d = at + 8;
    if (d < s.size() && std::isdigit(static_cast<unsigned char>(s[d])))
      s.replace(at, 8, " IS DISTINCT FROM ");
  }
  // INDEXED BY name -> (nothing)
  for (size_t at = FindWord(s, "INDEXED"); at != std::string::npos;
       at = FindWord(s, "INDEXED", at)) {
    size_t by = s.find_first_not_of(' ', at + 7);
    if (by == std::string::npos || s.compare(by, 2, "BY") != 0) {
      at += 7;
      continue;
    }
    size_t name = s.find_first_not_of(' ', by + 2);
    size_t end = name;
    while (end < s.size() && IsWordChar(s[end])) ++end;
    s.erase(at, end - at);
  }
  size_t ins = FindWord(s, "INSERT");
  if (ins == std::string::npos) return s;
  size_t ignore = FindWord(s, "OR IGNORE INTO", ins);
  if (ignore == ins + 7) {
    s.erase(ins + 7, 10);  // "OR IGNORE "
    AppendConflict(&s, "ON CONFLICT DO NOTHING");
    return s;
  }
  size_t replace = FindWord(s, "OR REPLACE INTO", ins);
  if (replace != ins + 7) return s;
  s.erase(ins + 7, 11);  // "OR REPLACE "
  // INSERT INTO table (cols) ...
  size_t t = ins + 12;  // after "INSERT INTO "
  while (t < s.size() && s[t] == ' ') ++t;
  size_t te = t;
  while (te < s.size() && IsWordChar(s[te])) ++te;
  const std::string table = s.substr(t, te - t);
  const std::string key(PgTableKey(table));
  size_t open = s.find('(', te), close = s.find(')', te);
  if (key.empty() || open == std::string::npos || close == std::string::npos) {
    AppendConflict(&s, "ON CONFLICT DO NOTHING");
    return s;
  }
  // The columns that are not part of the key are set from the new row.
  std::vector<std::string> keys;
  {
    std::string k;
    for (char c : key + ",") {
      if (c == ',') {
        keys.push_back(Trimmed(k));
        k.clear();
      } else {
        k.push_back(c);
      }
    }
  }
  std::string sets, col;
  for (char c : s.substr(open + 1, close - open - 1) + ",") {
    if (c != ',') {
      col.push_back(c);
      continue;
    }
    std::string name = Trimmed(col);
    col.clear();
    bool is_key = false;
    for (const auto& k : keys)
      is_key = is_key || k == name || k.find("(" + name) != std::string::npos;
    if (name.empty() || is_key) continue;
    sets += std::string(sets.empty() ? "" : ", ") + name + " = excluded." + name;
  }
  AppendConflict(&s, "ON CONFLICT (" + key + ") " +
                         (sets.empty() ? std::string("DO NOTHING") : "DO UPDATE SET " + sets));
  return s;
}

}  // namespace

std::string_view PgTableKey(std::string_view table) {
  if (table == "meta") return "key";
  if (table == "parts") return "part";
  if (table == "attr_stats" || table == "auto_indexes") return "a";
  if (table == "attr_values") return "a, v";
  if (table == "datoms") return "e, a, md5(v::text)";
  if (table == "history") return "e, a, md5(v::text), tx";
  return "";
}

std::string PgSql(std::string_view sql) {
  std::vector<std::string> parts = SplitStatements(sql);
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out.push_back(';');
    out += OneStatement(std::move(parts[i]));
  }
  return out;
}

PgName SplitPgName(std::string_view name) {
  PgName out{std::string(name), "mentat"};
  const bool uri = name.rfind("postgresql://", 0) == 0 || name.rfind("postgres://", 0) == 0;
  if (uri) {
    size_t q = name.find('?');
    if (q == std::string_view::npos) return out;
    std::string base(name.substr(0, q)), rest;
    std::string_view query = name.substr(q + 1);
    while (!query.empty()) {
      size_t amp = query.find('&');
      std::string_view param = query.substr(0, amp);
      if (param.rfind("schema=", 0) == 0) {
        out.schema = std::string(param.substr(7));
      } else if (!param.empty()) {
        rest += std::string(rest.empty() ? "" : "&") + std::string(param);
      }
      if (amp == std::string_view::npos) break;
      query = query.substr(amp + 1);
    }
    out.conninfo = rest.empty() ? base : base + "?" + rest;
    return out;
  }
  // A keyword string: `schema=NAME` as one of its space-separated settings.
  std::string rest;
  size_t i = 0;
  while (i < name.size()) {
    while (i < name.size() && name[i] == ' ') ++i;
    size_t start = i;
    char quote = 0;
    while (i < name.size() && (quote || name[i] != ' ')) {
      if (name[i] == '\'') quote = quote ? 0 : '\'';
      ++i;
    }
    std::string_view kv = name.substr(start, i - start);
    if (kv.rfind("schema=", 0) == 0) {
      out.schema = std::string(kv.substr(7));
    } else if (!kv.empty()) {
      rest += std::string(rest.empty() ? "" : " ") + std::string(kv);
    }
  }
  out.conninfo = rest;
  return out;
}

}  // namespace mentat::storage
