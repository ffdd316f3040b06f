// The rules_in_query pass: strata of recursive rules that are each one WITH RECURSIVE
// statement (the recursive_cte pass) become the WITH clause of the query's own statement,
// which reads their relations from there instead of from parameters. For an engine where a
// statement is a round trip and a relation travels as text (PostgreSQL: a stratum's rows
// come back to the client, then go out again as a JSON parameter the server parses), the
// query is then one statement, and the server's planner sees where the rows come from.
//
// A stratum goes in when every later stratum that reads it goes in too (the query itself
// always does): a demand rewrite's seed stratum and the stratum it seeds both do. Each
// becomes its own table mentat_rec_<stratum>, its parameters numbered after the main
// unit's and the earlier strata's.
#include <cctype>
#include <optional>
#include <string>

#include "query/analyze.h"

namespace mentat::query {

namespace {

int StratumOf(const Compiled& out, const Param& p) {
  if (p.kind != Param::Kind::kRel || p.slot < 0) return -1;
  const RelSpec& rs = out.rels[static_cast<size_t>(p.slot)];
  if (rs.kind != RelSpec::Kind::kRule) return -1;
  return out.rule_rels[static_cast<size_t>(rs.rule_rel)].stratum;
}

// Whether a clause of stratum `reader` reads a relation of stratum `k` (`k` < `reader`).
bool Reads(const Compiled& out, size_t reader, size_t k) {
  for (int u : out.strata[reader].units) {
    const Unit& unit = out.rule_units[static_cast<size_t>(u)].unit;
    for (size_t i = 0; i < unit.params.size(); ++i)
      if ((i >= unit.used.size() || unit.used[i]) &&
          StratumOf(out, unit.params[i]) == static_cast<int>(k))
        return true;
  }
  return false;
}

// Every occurrence of `from` in `*s` replaced by `to`; how many there were.
int ReplaceAll(std::string* s, const std::string& from, const std::string& to) {
  int n = 0;
  for (size_t at = 0; (at = s->find(from, at)) != std::string::npos; at += to.size(), ++n)
    s->replace(at, from.size(), to);
  return n;
}

// `sql` with the table name mentat_rec written `name` outside quoted text.
std::string RenameTable(const std::string& sql, const std::string& name) {
  static const std::string kTable = "mentat_rec";
  std::string out;
  char quote = 0;
  for (size_t i = 0; i < sql.size();) {
    char ch = sql[i];
    if (quote) {
      out += ch;
      quote = ch == quote ? 0 : quote;
      ++i;
    } else if (ch == '\'' || ch == '"') {
      quote = ch;
      out += ch;
      ++i;
    } else if (sql.compare(i, kTable.size(), kTable) == 0 &&
               (i + kTable.size() == sql.size() ||
                !(std::isalnum(static_cast<unsigned char>(sql[i + kTable.size()])) ||
                  sql[i + kTable.size()] == '_'))) {
      out += name;
      i += kTable.size();
    } else {
      out += ch;
      ++i;
    }
  }
  return out;
}

struct Rewriter {
  Compiled* out;
  const std::vector<bool>& in;  // per stratum: goes in

  std::string Table(size_t stratum) const { return "mentat_rec_" + std::to_string(stratum); }

  // In `*sql`, written with `unit`'s parameters from ?(offset + 1), each used relation
  // parameter of a stratum that goes in read from its table instead; `*used` (the
  // parameters still read) updated. False when one is not found as its table text.
  bool ReadTables(std::string* sql, const Unit& unit, int offset, std::vector<bool>* used,
                  int* replaced) const {
    for (size_t i = 0; i < unit.params.size(); ++i) {
      if (i < used->size() && !(*used)[i]) continue;
      int k = StratumOf(*out, unit.params[i]);
      if (k < 0 || !in[static_cast<size_t>(k)]) continue;
      int rule_rel = out->rels[static_cast<size_t>(unit.params[i].slot)].rule_rel;
      std::string to = "(SELECT k";
      for (int j = 0; j < out->rule_rels[static_cast<size_t>(rule_rel)].arity; ++j)
        to += ", c" + std::to_string(j);
      to +=
          " FROM " + Table(static_cast<size_t>(k)) + " WHERE k = " + std::to_string(rule_rel) + ")";
      std::string from = unit.dialect->RelationTable("?" + std::to_string(offset + i + 1));
      int n = ReplaceAll(sql, from, to);
      if (n == 0) return false;
      *replaced += n;
      if (i < used->size()) (*used)[i] = false;
    }
    return true;
  }
};

}  // namespace

std::optional<std::string> ReadRulesInQuery(Compiled* out) {
  const size_t n = out->strata.size();
  std::vector<bool> in(n, false);
  for (size_t k = n; k-- > 0;) {
    if (out->strata[k].cte_sql.empty()) continue;
    bool ok = true;
    for (size_t later = k + 1; later < n && ok; ++later) ok = in[later] || !Reads(*out, later, k);
    in[k] = ok;
  }
  Rewriter rw{out, in};
  std::string body = out->sql;
  std::vector<bool> main_used = out->main.used;  // (recomputed from the text at the end)
  int replaced = 0;
  if (!rw.ReadTables(&body, out->main, 0, &main_used, &replaced)) return std::nullopt;
  if (replaced == 0) return std::nullopt;  // the query reads none of them
  // Each stratum's definition, its units' reads of earlier strata rewritten the same way
  // (before its parameters are numbered after the others').
  std::vector<std::string> defs(n);
  std::vector<std::vector<std::vector<bool>>> used(n);
  for (size_t k = 0; k < n; ++k) {
    if (!in[k]) continue;
    const Stratum& st = out->strata[k];
    defs[k] = RenameTable(st.cte_def, rw.Table(k));
    for (size_t i = 0; i < st.units.size(); ++i) {
      const Unit& unit = out->rule_units[static_cast<size_t>(st.units[i])].unit;
      used[k].push_back(unit.used);
      int ignored = 0;
      if (!rw.ReadTables(&defs[k], unit, st.unit_offsets[i], &used[k].back(), &ignored))
        return std::nullopt;
    }
  }
  // The strata a stratum that goes in (or the query) reads; one nobody reads stays out.
  std::vector<bool> read(n, false);
  for (size_t i = 0; i < out->main.params.size(); ++i) {
    int k = StratumOf(*out, out->main.params[i]);
    if (k >= 0 && (i >= out->main.used.size() || out->main.used[i]))
      read[static_cast<size_t>(k)] = true;
  }
  for (size_t k = n; k-- > 0;)
    for (size_t later = k + 1; later < n; ++later)
      if (in[later] && read[later] && Reads(*out, later, k)) read[k] = true;
  std::string with;
  std::string names;
  int offset = static_cast<int>(out->main.params.size());
  for (size_t k = 0; k < n; ++k) {
    if (!in[k] || !read[k]) continue;
    Stratum& st = out->strata[k];
    with += (with.empty() ? "WITH RECURSIVE " : ", ") + ShiftParams(defs[k], offset);
    st.in_query = true;
    st.query_offset = offset;
    st.query_used = std::move(used[k]);
    offset += st.cte_params;
    for (int r : st.rule_rels)
      names += (names.empty() ? "" : ", ") + out->rule_rels[static_cast<size_t>(r)].rule;
  }
  out->sql = with + " " + body;
  out->main.MarkUsed(out->sql);
  return names + ": read by the query's statement from its WITH clause";
}

}  // namespace mentat::query
