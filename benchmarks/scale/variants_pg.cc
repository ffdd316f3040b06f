// The variants' hand-written SQL for PostgreSQL (the `pg-sql` backend): the same questions
// as variants.cc's SQLite texts, written as one writes them over doc/format.md's
// PostgreSQL tables. The value column is jsonb, so a value is compared with a jsonb
// parameter or literal (`v = $1`, `v = '":state/open"'`, `v >= '3'`), a ref value joins
// an entity column through `v = to_jsonb(x.e)` (that reads the (a, v) index) or
// `x.e = (v)::bigint` (the entity index), text is `v #>> ARRAY[]::text[]`, numbers are cast before
// they are added up, and `ix IS DISTINCT FROM 0` names the partial value index. The tokens are
// variants.cc's:
// "{ns/name}" an attribute's id, "{t_mid}" and "{t_since}" the named points' tx ids;
// parameters are $1..$n in the order of VariantArgs::values.
//
// Join order is left to PostgreSQL's planner (as a PostgreSQL user leaves it), every
// statement runs alone in autocommit (one statement reads one snapshot).
#include <map>
#include <string>

#include "variants.h"

namespace mentat::scale {
namespace {

constexpr const char* kUserByEmail = "u.a = {user/email} AND u.ix IS DISTINCT FROM 0 AND u.v = $1";

// One pattern as of {t_mid} (variants.cc AsOf): current datoms asserted at or before it and
// history intervals open at it.
std::string AsOf(const std::string& cols, const std::string& from, const std::string& where,
                 bool by_value) {
  return "SELECT " + cols + " FROM " + from + " datoms d WHERE " + where +
         (by_value ? " AND d.ix IS DISTINCT FROM 0" : "") +
         " AND d.tx <= {t_mid} UNION ALL SELECT " + cols + " FROM " + from + " history d WHERE " +
         where + " AND d.tx <= {t_mid} AND d.rtx > {t_mid}";
}

std::string ReachFrom(const std::string& a) {
  return "WITH RECURSIVE r(e) AS (SELECT (v)::bigint FROM datoms WHERE e = $1 AND a = " + a +
         " UNION SELECT (d.v)::bigint FROM r JOIN datoms d ON d.e = r.e AND d.a = " + a +
         ") SELECT e FROM r";
}
std::string ReachTo(const std::string& a) {
  return "WITH RECURSIVE r(e) AS (SELECT e FROM datoms WHERE a = " + a +
         " AND ix IS DISTINCT FROM 0 AND v = to_jsonb($1::bigint) UNION SELECT d.e FROM r JOIN "
         "datoms d ON d.a = " +
         a + " AND d.ix IS DISTINCT FROM 0 AND d.v = to_jsonb(r.e)) SELECT e FROM r";
}
constexpr const char* kEvenAncestors =
    "WITH RECURSIVE r(e, n) AS (SELECT (v)::bigint, 1 FROM datoms WHERE e = $1 AND "
    "a = {issue/parent} UNION SELECT (d.v)::bigint, r.n + 1 FROM r JOIN datoms d ON d.e = r.e AND "
    "d.a = {issue/parent}) SELECT DISTINCT e FROM r WHERE n % 2 = 0";

std::map<std::string, std::string> Build() {
  const std::string u = kUserByEmail;
  std::map<std::string, std::string> m;
  // ---- or, or-join ----
  m["or_state_user"] =
      "SELECT i.e FROM datoms u, datoms i, datoms s WHERE " + u +
      " AND i.a = {issue/assignee} AND i.ix IS DISTINCT FROM 0 AND i.v = to_jsonb(u.e) AND "
      "s.e = i.e AND s.a = {issue/state} AND s.v IN ('\":state/open\"', '\":state/reopened\"')";
  m["or_labels_p5"] =
      "SELECT DISTINCT i.e FROM datoms l, datoms i, datoms p WHERE l.a = {label/name} AND "
      "l.ix IS DISTINCT FROM 0 AND l.v IN ('\"label-1\"', '\"label-2\"') AND i.a = {issue/label} "
      "AND i.ix IS DISTINCT FROM 0 AND i.v = to_jsonb(l.e) AND p.e = i.e AND "
      "p.a = {issue/priority} AND p.v = '5'";
  m["or_join_user"] = "SELECT DISTINCT i.e FROM datoms u, datoms i WHERE " + u +
                      " AND i.a IN ({issue/assignee}, {issue/reporter}) AND i.ix IS DISTINCT "
                      "FROM 0 AND i.v = to_jsonb(u.e)";
  m["or_join_user_open"] =
      "SELECT x.e, t.v FROM (SELECT DISTINCT i.e AS e FROM datoms u, datoms i WHERE " + u +
      " AND i.a IN ({issue/assignee}, {issue/reporter}) AND i.ix IS DISTINCT FROM 0 AND "
      "i.v = to_jsonb(u.e)) x, datoms s, datoms t WHERE s.e = x.e AND s.a = {issue/state} AND "
      "s.v = '\":state/open\"' AND t.e = x.e AND t.a = {issue/title}";
  // ---- rules, not recursive ----
  m["rule_one_body"] =
      "SELECT i.e, t.v FROM datoms u, datoms i, datoms s, datoms p, datoms t WHERE " + u +
      " AND i.a = {issue/assignee} AND i.ix IS DISTINCT FROM 0 AND i.v = to_jsonb(u.e) AND "
      "s.e = i.e AND s.a = {issue/state} AND s.v = '\":state/open\"' AND p.e = i.e AND "
      "p.a = {issue/priority} AND p.v = '5' AND t.e = i.e AND t.a = {issue/title}";
  m["rule_two_bodies"] = "SELECT DISTINCT i.e FROM datoms u, datoms i, datoms p WHERE " + u +
                         " AND i.a IN ({issue/assignee}, {issue/reporter}) AND i.ix IS DISTINCT "
                         "FROM 0 AND i.v = to_jsonb(u.e) AND p.e = i.e AND "
                         "p.a = {issue/priority} AND p.v >= '4'";
  m["rule_three_bodies"] =
      "SELECT i.e FROM datoms u, datoms i WHERE " + u +
      " AND i.a = {issue/reporter} AND i.ix IS DISTINCT FROM 0 AND i.v = to_jsonb(u.e) AND "
      "(EXISTS (SELECT 1 FROM datoms p WHERE p.e = i.e AND p.a = {issue/priority} AND "
      "p.v = '5') OR EXISTS (SELECT 1 FROM datoms s WHERE s.e = i.e AND s.a = {issue/state} AND "
      "s.v = '\":state/reopened\"') OR EXISTS (SELECT 1 FROM datoms il, datoms l WHERE "
      "il.e = i.e AND il.a = {issue/label} AND l.e = (il.v)::bigint AND l.a = {label/name} AND "
      "l.v = '\"label-0\"'))";
  // ---- recursion ----
  m["blocks_from"] = ReachFrom("{issue/blocks}");
  m["blocks_to"] = ReachTo("{issue/blocks}");
  m["blocks_pairs_filtered"] =
      "WITH RECURSIVE s(e) AS (SELECT p.e FROM datoms p, datoms st WHERE p.a = {issue/priority} "
      "AND p.ix IS DISTINCT FROM 0 AND p.v = '5' AND st.e = p.e AND st.a = {issue/state} AND "
      "st.v = '\":state/reopened\"'), r(a, b) AS (SELECT s.e, (d.v)::bigint FROM s JOIN datoms d "
      "ON d.e = s.e AND d.a = {issue/blocks} UNION SELECT r.a, (d.v)::bigint FROM r JOIN datoms d "
      "ON d.e = r.b AND d.a = {issue/blocks}) SELECT r.a, r.b FROM r, datoms p, datoms st WHERE "
      "p.e = r.b AND p.a = {issue/priority} AND p.v = '5' AND st.e = r.b AND "
      "st.a = {issue/state} AND st.v = '\":state/reopened\"'";
  m["ancestors"] = ReachFrom("{issue/parent}");
  m["descendants"] = ReachTo("{issue/parent}");
  m["chain_ancestors"] = ReachFrom("{issue/parent}");
  m["chain_descendants"] = ReachTo("{issue/parent}");
  m["mutual_parity"] = kEvenAncestors;
  m["mutual_parity_chain"] = kEvenAncestors;
  // ---- joins of 4-8 patterns ----
  m["join7_label_fanout"] =
      "SELECT n.v, t.v FROM datoms l, datoms il, datoms s, datoms p, datoms a, datoms n, "
      "datoms t WHERE l.a = {label/name} AND l.ix IS DISTINCT FROM 0 AND l.v = $1 AND "
      "il.a = {issue/label} AND il.ix IS DISTINCT FROM 0 AND il.v = to_jsonb(l.e) AND "
      "s.e = il.e AND s.a = {issue/state} AND s.v = '\":state/open\"' AND p.e = il.e AND "
      "p.a = {issue/priority} AND p.v >= '3' AND a.e = il.e AND a.a = {issue/assignee} AND "
      "n.e = (a.v)::bigint AND n.a = {user/name} AND t.e = il.e AND t.a = {issue/title}";
  m["join5_self_assigned"] =
      "SELECT p.e, n.v FROM datoms p, datoms s, datoms a, datoms r, datoms n WHERE "
      "p.a = {issue/priority} AND p.ix IS DISTINCT FROM 0 AND p.v = $1 AND s.e = p.e AND "
      "s.a = {issue/state} AND s.v = '\":state/closed\"' AND a.e = p.e AND "
      "a.a = {issue/assignee} AND r.e = p.e AND r.a = {issue/reporter} AND r.v = a.v AND "
      "n.e = (a.v)::bigint AND n.a = {user/name}";
  m["join6_label_pair"] =
      "SELECT i1.e, m.v FROM datoms l1, datoms i1, datoms l2, datoms i2, datoms a, datoms m "
      "WHERE l1.a = {label/name} AND l1.ix IS DISTINCT FROM 0 AND l1.v = $1 AND "
      "i1.a = {issue/label} AND i1.ix IS DISTINCT FROM 0 AND i1.v = to_jsonb(l1.e) AND "
      "l2.a = {label/name} AND l2.ix IS DISTINCT FROM 0 AND l2.v = $2 AND i2.e = i1.e AND "
      "i2.a = {issue/label} AND i2.v = to_jsonb(l2.e) AND a.e = i1.e AND "
      "a.a = {issue/assignee} AND m.e = (a.v)::bigint AND m.a = {user/email}";
  m["join8_coworkers"] =
      "SELECT DISTINCT n.v FROM datoms u, datoms i, datoms p, datoms il, datoms jl, datoms q, "
      "datoms r, datoms n WHERE " +
      u +
      " AND i.a = {issue/assignee} AND i.ix IS DISTINCT FROM 0 AND i.v = to_jsonb(u.e) AND "
      "p.e = i.e AND p.a = {issue/priority} AND p.v = '5' AND il.e = i.e AND "
      "il.a = {issue/label} AND jl.a = {issue/label} AND jl.ix IS DISTINCT FROM 0 AND "
      "jl.v = il.v AND q.e = jl.e AND q.a = {issue/priority} AND q.v = '5' AND r.e = jl.e AND "
      "r.a = {issue/reporter} AND n.e = (r.v)::bigint AND n.a = {user/name}";
  m["join5_blocked_open"] =
      "SELECT i.e, b.v FROM datoms u, datoms i, datoms s, datoms b, datoms t WHERE " + u +
      " AND i.a = {issue/assignee} AND i.ix IS DISTINCT FROM 0 AND i.v = to_jsonb(u.e) AND "
      "s.e = i.e AND s.a = {issue/state} AND s.v = '\":state/open\"' AND b.e = i.e AND "
      "b.a = {issue/blocks} AND t.e = (b.v)::bigint AND t.a = {issue/state} AND "
      "t.v = '\":state/in-progress\"'";
  // ---- not, not-join, missing? ----
  m["not_label"] = "SELECT i.e FROM datoms u, datoms i, datoms s WHERE " + u +
                   " AND i.a = {issue/assignee} AND i.ix IS DISTINCT FROM 0 AND "
                   "i.v = to_jsonb(u.e) AND s.e = i.e AND s.a = {issue/state} AND "
                   "s.v = '\":state/open\"' AND NOT EXISTS (SELECT 1 FROM datoms l WHERE "
                   "l.e = i.e AND l.a = {issue/label})";
  m["not_join_blocks"] =
      "SELECT i.e FROM datoms u, datoms i WHERE " + u +
      " AND i.a = {issue/reporter} AND i.ix IS DISTINCT FROM 0 AND i.v = to_jsonb(u.e) AND NOT "
      "EXISTS (SELECT 1 FROM datoms b, datoms s WHERE b.e = i.e AND b.a = {issue/blocks} AND "
      "s.e = (b.v)::bigint AND s.a = {issue/state} AND s.v = '\":state/open\"')";
  m["missing_parent"] = "SELECT i.e FROM datoms u, datoms i, datoms s WHERE " + u +
                        " AND i.a = {issue/reporter} AND i.ix IS DISTINCT FROM 0 AND "
                        "i.v = to_jsonb(u.e) AND s.e = i.e AND s.a = {issue/state} AND "
                        "s.v = '\":state/open\"' AND NOT EXISTS (SELECT 1 FROM datoms p WHERE "
                        "p.e = i.e AND p.a = {issue/parent})";
  // ---- aggregates over joins ----
  m["agg_top_assignees"] =
      "SELECT n.v, g.c FROM (SELECT (v)::bigint AS u, count(*) AS c FROM datoms WHERE "
      "a = {issue/assignee} AND ix IS DISTINCT FROM 0 GROUP BY v) g, datoms n WHERE n.e = g.u "
      "AND n.a = {user/name} ORDER BY g.c DESC, (n.v #>> ARRAY[]::text[]) COLLATE \"C\" LIMIT 10";
  m["agg_sum_priority"] =
      "SELECT s.v, sum((p.v)::bigint) FROM datoms l, datoms il, datoms s, datoms p WHERE "
      "l.a = {label/name} AND l.ix IS DISTINCT FROM 0 AND l.v = $1 AND il.a = {issue/label} AND "
      "il.ix IS DISTINCT FROM 0 AND il.v = to_jsonb(l.e) AND s.e = il.e AND "
      "s.a = {issue/state} AND p.e = il.e AND p.a = {issue/priority} GROUP BY s.v";
  m["agg_avg_priority"] =
      "SELECT n.v, avg((p.v)::bigint) FROM datoms s, datoms il, datoms n, datoms p WHERE "
      "s.a = {issue/state} AND s.ix IS DISTINCT FROM 0 AND s.v = '\":state/reopened\"' AND "
      "il.e = s.e AND il.a = {issue/label} AND n.e = (il.v)::bigint AND n.a = {label/name} AND "
      "p.e = s.e AND p.a = {issue/priority} GROUP BY n.v";
  m["agg_max_created"] =
      "SELECT m.v, max((c.v)::bigint) FROM datoms l, datoms il, datoms p, datoms a, datoms m, "
      "datoms c WHERE l.a = {label/name} AND l.ix IS DISTINCT FROM 0 AND l.v = $1 AND "
      "il.a = {issue/label} AND il.ix IS DISTINCT FROM 0 AND il.v = to_jsonb(l.e) AND "
      "p.e = il.e AND p.a = {issue/priority} AND p.v = '5' AND a.e = il.e AND "
      "a.a = {issue/assignee} AND m.e = (a.v)::bigint AND m.a = {user/email} AND c.e = il.e AND "
      "c.a = {issue/created-at} GROUP BY m.v";
  m["agg_count_distinct_top"] =
      "SELECT n.v, count(DISTINCT r.v) AS c FROM datoms p, datoms il, datoms n, datoms r WHERE "
      "p.a = {issue/priority} AND p.ix IS DISTINCT FROM 0 AND p.v = '5' AND il.e = p.e AND "
      "il.a = {issue/label} AND n.e = (il.v)::bigint AND n.a = {label/name} AND r.e = p.e AND "
      "r.a = {issue/reporter} GROUP BY n.v ORDER BY c DESC, (n.v #>> ARRAY[]::text[]) COLLATE "
      "\"C\" LIMIT 5";
  m["agg_count_blocked"] =
      "SELECT count(DISTINCT b.v) FROM datoms u, datoms i, datoms b WHERE " + u +
      " AND i.a = {issue/assignee} AND i.ix IS DISTINCT FROM 0 AND i.v = to_jsonb(u.e) AND "
      "b.e = i.e AND b.a = {issue/blocks} HAVING count(*) > 0";
  // ---- strings and regexes ----
  m["str_starts_with"] =
      "SELECT e, v FROM datoms WHERE a = {user/name} AND ix IS DISTINCT FROM 1 AND "
      "starts_with(v #>> ARRAY[]::text[], $1::text)";
  m["str_regex_title"] =
      "SELECT p.e, t.v FROM datoms p, datoms t WHERE p.a = {issue/priority} AND "
      "p.ix IS DISTINCT FROM 0 AND p.v = '5' AND t.e = p.e AND t.a = {issue/title} AND "
      "(t.v #>> ARRAY[]::text[]) ~ '^Issue [0-9]*7: (crash|typo)$'";
  m["str_ends_with"] =
      "SELECT i.e FROM datoms u, datoms i, datoms t WHERE " + u +
      " AND i.a = {issue/reporter} AND i.ix IS DISTINCT FROM 0 AND i.v = to_jsonb(u.e) AND "
      "t.e = i.e AND t.a = {issue/title} AND right(t.v #>> ARRAY[]::text[], 15) = 'perf "
      "regression'";
  // ---- get-else, get-some ----
  m["get_else_parent"] =
      "SELECT i.e, coalesce((SELECT (p.v)::bigint FROM datoms p WHERE p.e = i.e AND "
      "p.a = {issue/parent}), -1) FROM datoms u, datoms i WHERE " +
      u + " AND i.a = {issue/assignee} AND i.ix IS DISTINCT FROM 0 AND i.v = to_jsonb(u.e)";
  m["get_some_parent"] =
      "SELECT e, CASE WHEN p IS NOT NULL THEN {issue/parent} ELSE {issue/assignee} END, "
      "coalesce(p, a) FROM (SELECT i.e AS e, (SELECT (d.v)::bigint FROM datoms d WHERE "
      "d.e = i.e AND d.a = {issue/parent}) AS p, (SELECT (d.v)::bigint FROM datoms d WHERE "
      "d.e = i.e AND d.a = {issue/assignee}) AS a FROM datoms u, datoms i WHERE " +
      u +
      " AND i.a = {issue/reporter} AND i.ix IS DISTINCT FROM 0 AND i.v = to_jsonb(u.e)) x "
      "WHERE p IS NOT NULL OR a IS NOT NULL";
  // ---- pull ----
  m["pull_nested"] =
      "SELECT t.v, (SELECT n.v FROM datoms a, datoms n WHERE a.e = i.e AND a.a = {issue/assignee} "
      "AND n.e = (a.v)::bigint AND n.a = {user/name}), (SELECT pt.v FROM datoms p, datoms pt "
      "WHERE p.e = i.e AND p.a = {issue/parent} AND pt.e = (p.v)::bigint AND "
      "pt.a = {issue/title}), (SELECT string_agg(ln.v #>> ARRAY[]::text[], ',' ORDER BY (ln.v #>> "
      "ARRAY[]::text[]) COLLATE \"C\") "
      "FROM datoms il, datoms ln WHERE il.e = i.e AND il.a = {issue/label} AND "
      "ln.e = (il.v)::bigint AND ln.a = {label/name}) FROM datoms u, datoms i, datoms pr, "
      "datoms t WHERE " +
      u +
      " AND i.a = {issue/reporter} AND i.ix IS DISTINCT FROM 0 AND i.v = to_jsonb(u.e) AND "
      "pr.e = i.e AND pr.a = {issue/priority} AND pr.v = '5' AND t.e = i.e AND "
      "t.a = {issue/title}";
  // ---- time: as-of, history, two sources ----
  m["asof_reporter_states"] =
      "WITH u(e) AS (" + AsOf("d.e", "", "d.a = {user/email} AND d.v = $1", true) +
      "), i(e) AS (SELECT DISTINCT e FROM (" +
      AsOf("d.e", "u,", "d.a = {issue/reporter} AND d.v = to_jsonb(u.e)", true) +
      ") x) SELECT e, s FROM (SELECT i.e AS e, (" +
      AsOf("d.v", "", "d.e = i.e AND d.a = {issue/priority}", false) + ") AS p, (" +
      AsOf("d.v", "", "d.e = i.e AND d.a = {issue/state}", false) +
      ") AS s FROM i) y WHERE p = '5' AND s IS NOT NULL";
  m["history_user_states"] =
      "WITH u(e) AS (SELECT e FROM datoms WHERE a = {user/email} AND ix IS DISTINCT FROM 0 AND "
      "v = $1 UNION SELECT e FROM history WHERE a = {user/email} AND v = $1), i(e) AS (SELECT "
      "d.e FROM u, datoms d WHERE d.a = {issue/assignee} AND d.ix IS DISTINCT FROM 0 AND "
      "d.v = to_jsonb(u.e) UNION SELECT d.e FROM u, history d WHERE d.a = {issue/assignee} AND "
      "d.v = to_jsonb(u.e)) SELECT i.e, d.v, d.tx, 1 FROM i, datoms d WHERE d.e = i.e AND "
      "d.a = {issue/state} UNION ALL SELECT i.e, d.v, d.tx, 1 FROM i, history d WHERE "
      "d.e = i.e AND d.a = {issue/state} UNION ALL SELECT i.e, d.v, d.rtx, 0 FROM i, history d "
      "WHERE d.e = i.e AND d.a = {issue/state}";
  m["two_sources_changed"] =
      "SELECT e, was, now FROM (SELECT i.e AS e, (" +
      AsOf("d.v", "", "d.e = i.e AND d.a = {issue/state}", false) +
      ") AS was, s.v AS now FROM datoms u, datoms i, datoms s WHERE " + u +
      " AND i.a = {issue/assignee} AND i.ix IS DISTINCT FROM 0 AND i.v = to_jsonb(u.e) AND "
      "s.e = i.e AND s.a = {issue/state}) x WHERE was IS NOT NULL AND was <> now";
  m["two_sources_since"] =
      "SELECT s.e, s.v, t.v FROM datoms s, datoms p, datoms t WHERE s.tx > {t_since} AND "
      "s.a = {issue/state} AND p.e = s.e AND p.a = {issue/priority} AND p.v >= '4' AND "
      "t.e = s.e AND t.a = {issue/title}";
  return m;
}

}  // namespace

const std::string* PgVariantSql(std::string_view name) {
  static const std::map<std::string, std::string> kAll = Build();
  auto it = kAll.find(std::string(name));
  return it == kAll.end() ? nullptr : &it->second;
}

}  // namespace mentat::scale
