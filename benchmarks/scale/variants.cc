// The table of variants (variants.h): each query beside the hand-written SQL that answers
// it over doc/format.md's tables, in the style of backend_sqlite_sql.cc — join order pinned
// with CROSS JOIN, `ix IS NOT 0` on reads through an attribute's value index (refs,
// :db/index and :db/unique attributes), `v = +e` for ref joins, as-of as the union of
// `datoms` (tx <= t) and `history` (tx <= t < rtx), recursion as WITH RECURSIVE.
#include "variants.h"

#include <algorithm>
#include <cstdio>
#include <map>

namespace mentat::scale {
namespace {

edn::Value Str(std::string s) { return edn::Value::String(std::move(s)); }
edn::Value Int(int64_t i) { return edn::Value::Int(i); }

const nlohmann::json& Graph(const Context& ctx) { return ctx.meta["truth"]["graph"]; }
int64_t ChainFirst(const Context& ctx) { return Graph(ctx)["chain_first"].get<int64_t>(); }
int64_t ChainLength(const Context& ctx) { return Graph(ctx)["chain_length"].get<int64_t>(); }

// ---- Inputs ----

VariantArgs UserArgs(int64_t u) { return {{Str(Email(u))}, "", "user " + std::to_string(u)}; }
VariantArgs RandomUser(const Context& ctx, Rng& rng) {
  return UserArgs(static_cast<int64_t>(rng.Below(ctx.n_users)));
}
// The probe users of meta.json (0, n/2, n-1).
std::vector<VariantArgs> ProbeUsers(const Context& ctx) {
  std::vector<VariantArgs> out;
  for (const auto& u : ctx.meta["truth"]["probe_users"]) out.push_back(UserArgs(u.get<int64_t>()));
  return out;
}
VariantArgs IssueArgs(const Context& ctx, int64_t k) {
  return {{Int(ctx.issue_eids.at(k))}, std::to_string(k), "issue " + std::to_string(k)};
}
// A random issue of the tree (not of the chain).
VariantArgs RandomTreeIssue(const Context& ctx, Rng& rng) {
  return IssueArgs(ctx, static_cast<int64_t>(rng.Below(ChainFirst(ctx))));
}
// The graph probes of meta.json: three tree issues and a root with a mid-sized subtree.
std::vector<VariantArgs> GraphProbes(const Context& ctx) {
  std::vector<VariantArgs> out;
  for (const auto& k : Graph(ctx)["probes"]) out.push_back(IssueArgs(ctx, k.get<int64_t>()));
  return out;
}
VariantArgs ChainTail(const Context& ctx) {
  VariantArgs a = IssueArgs(ctx, ctx.n_issues - 1);
  a.probe = "chain_tail";
  return a;
}
VariantArgs ChainHead(const Context& ctx) {
  VariantArgs a = IssueArgs(ctx, ChainFirst(ctx));
  a.probe = "chain_head";
  return a;
}
VariantArgs LabelArgs(int64_t l) { return {{Str(LabelName(l))}, "", LabelName(l)}; }
VariantArgs RandomLabel(const Context& ctx, Rng& rng) {
  return LabelArgs(static_cast<int64_t>(rng.Below(ctx.n_labels)));
}
VariantArgs NoArgs(const Context&, Rng&) { return {{}, "", "no inputs"}; }
std::vector<VariantArgs> NoCheckArgs(const Context&) { return {{{}, "", "no inputs"}}; }

// A graph probe's figure in meta.json (`field` of truth.graph.by_probe), for the probes
// the generator describes.
std::optional<int64_t> ProbeTruth(const Context& ctx, const VariantArgs& a, const char* field) {
  const auto& by = Graph(ctx)["by_probe"];
  if (a.probe.empty() || !by.contains(a.probe)) return std::nullopt;
  return by[a.probe][field].get<int64_t>();
}

// The (issue, state) pairs of a probe user before and after history (meta.json).
struct Assigned {
  int64_t n = 0, changed = 0;
};
std::optional<Assigned> AssignedTruth(const Context& ctx, const VariantArgs& a) {
  if (a.label.rfind("user ", 0) != 0) return std::nullopt;
  std::string u = a.label.substr(5);
  const auto& before = ctx.meta["truth"]["assigned_before"];
  const auto& after = ctx.meta["truth"]["assigned_after"];
  if (!before.contains(u) || !after.contains(u)) return std::nullopt;
  Assigned out;
  out.n = static_cast<int64_t>(before[u].size());
  for (size_t i = 0; i < before[u].size(); ++i) out.changed += before[u][i] != after[u][i];
  return out;
}

// ---- SQL fragments ----

// The user entity `u` of the email bound to ?1.
constexpr const char* kUserByEmail = "u.a = {user/email} AND u.ix IS NOT 0 AND u.v = ?1";

// One pattern as of {t_mid}: its current datoms asserted at or before it and its history
// intervals open at it (doc/format.md "The database views"). `by_value`: the read goes
// through the attribute's value index.
std::string AsOf(const std::string& cols, const std::string& from, const std::string& where,
                 bool by_value) {
  return "SELECT " + cols + " FROM " + from + " datoms d WHERE " + where +
         (by_value ? " AND d.ix IS NOT 0" : "") + " AND d.tx <= {t_mid} UNION ALL SELECT " + cols +
         " FROM " + from + " history d WHERE " + where + " AND d.tx <= {t_mid} AND d.rtx > {t_mid}";
}

// ---- Rule sets ----

constexpr const char* kBlocksRules =
    "[[(blocks* ?a ?b) [?a :issue/blocks ?b]] "
    "[(blocks* ?a ?b) [?a :issue/blocks ?c] (blocks* ?c ?b)]]";
constexpr const char* kAncestorRules =
    "[[(anc ?x ?y) [?x :issue/parent ?y]] "
    "[(anc ?x ?y) [?x :issue/parent ?z] (anc ?z ?y)]]";
// Mutual recursion: ancestors at an odd and at an even distance.
constexpr const char* kParityRules =
    "[[(odd-anc ?x ?y) [?x :issue/parent ?y]] "
    "[(odd-anc ?x ?y) [?x :issue/parent ?z] (even-anc ?z ?y)] "
    "[(even-anc ?x ?y) [?x :issue/parent ?z] (odd-anc ?z ?y)]]";

constexpr const char* kReachFrom =
    "WITH RECURSIVE r(e) AS (SELECT v FROM datoms WHERE e = ?1 AND a = {A} UNION "
    "SELECT d.v FROM r CROSS JOIN datoms d WHERE d.e = r.e AND d.a = {A}) SELECT e FROM r";
constexpr const char* kReachTo =
    "WITH RECURSIVE r(e) AS (SELECT e FROM datoms WHERE a = {A} AND ix IS NOT 0 AND v = ?1 "
    "UNION SELECT d.e FROM r CROSS JOIN datoms d WHERE d.a = {A} AND d.ix IS NOT 0 AND "
    "d.v = +r.e) SELECT e FROM r";
constexpr const char* kEvenAncestors =
    "WITH RECURSIVE r(e, n) AS (SELECT v, 1 FROM datoms WHERE e = ?1 AND a = {issue/parent} "
    "UNION SELECT d.v, r.n + 1 FROM r CROSS JOIN datoms d WHERE d.e = r.e AND "
    "d.a = {issue/parent}) SELECT DISTINCT e FROM r WHERE n % 2 = 0";

std::string WithAttr(std::string sql, const std::string& attr) {
  for (size_t at; (at = sql.find("{A}")) != std::string::npos;)
    sql.replace(at, 3, "{" + attr + "}");
  return sql;
}

// Nested pull's map as the SQL's row: title, assignee's name, parent's title, the label
// names sorted and joined by commas (nil where the issue has none).
Row FlattenPull(const Row& row) {
  if (row.size() != 1 || !row[0].is_map()) return row;
  const edn::Value& m = row[0];
  auto nested = [&](const char* attr, const char* inner) {
    const edn::Value* v = m.get_keyword(attr);
    const edn::Value* x = v ? v->get_keyword(inner) : nullptr;
    return x ? *x : edn::Value();
  };
  const edn::Value* title = m.get_keyword("issue/title");
  std::vector<std::string> labels;
  if (const edn::Value* ls = m.get_keyword("issue/label"))
    for (const auto& l : ls->items())
      if (const edn::Value* n = l.get_keyword("label/name")) labels.push_back(n->str());
  std::sort(labels.begin(), labels.end());
  std::string joined;
  for (const auto& l : labels) joined += (joined.empty() ? "" : ",") + l;
  return {title ? *title : edn::Value(), nested("issue/assignee", "user/name"),
          nested("issue/parent", "issue/title"), labels.empty() ? edn::Value() : Str(joined)};
}

std::vector<Variant> Build() {
  std::vector<Variant> v;
  auto add = [&](Variant x) {
    if (!x.check_args) x.check_args = ProbeUsers;
    if (!x.args) x.args = RandomUser;
    v.push_back(std::move(x));
  };

  // ---- or, or-join ----
  add({.name = "or_state_user",
       .what = "a user's assigned issues that are open or reopened (`or` on one variable)",
       .query = "[:find ?i :in $ ?email :where [?u :user/email ?email] [?i :issue/assignee ?u] "
                "(or [?i :issue/state :state/open] [?i :issue/state :state/reopened])]",
       .sql =
           std::string("SELECT i.e FROM datoms u CROSS JOIN datoms i CROSS JOIN datoms s WHERE ") +
           kUserByEmail +
           " AND i.a = {issue/assignee} AND i.ix IS NOT 0 AND i.v = +u.e AND s.e = i.e AND "
           "s.a = {issue/state} AND s.v IN (':state/open', ':state/reopened')",
       .cols = "i"});
  add({.name = "or_labels_p5",
       .what = "priority-5 issues labelled label-1 or label-2 (`or` binding the label)",
       .query = "[:find ?i :where (or [?l :label/name \"label-1\"] [?l :label/name \"label-2\"]) "
                "[?i :issue/label ?l] [?i :issue/priority 5]]",
       .sql = "SELECT DISTINCT i.e FROM datoms l CROSS JOIN datoms i CROSS JOIN datoms p WHERE "
              "l.a = {label/name} AND l.ix IS NOT 0 AND l.v IN ('label-1', 'label-2') AND "
              "i.a = {issue/label} AND i.ix IS NOT 0 AND i.v = +l.e AND p.e = i.e AND "
              "p.a = {issue/priority} AND p.v = 5",
       .cols = "i",
       .args = NoArgs,
       .check_args = NoCheckArgs});
  add({.name = "or_join_user",
       .what = "issues a user is assignee or reporter of (`or-join`)",
       .query = "[:find ?i :in $ ?email :where [?u :user/email ?email] "
                "(or-join [?i ?u] [?i :issue/assignee ?u] [?i :issue/reporter ?u])]",
       .sql = std::string("SELECT DISTINCT i.e FROM datoms u CROSS JOIN datoms i WHERE ") +
              kUserByEmail +
              " AND i.a IN ({issue/assignee}, {issue/reporter}) AND i.ix IS NOT 0 AND "
              "i.v = +u.e",
       .cols = "i"});
  add({.name = "or_join_user_open",
       .what = "open issues a user is assignee or reporter of, with titles (`or-join` + joins)",
       .query = "[:find ?i ?title :in $ ?email :where [?u :user/email ?email] "
                "(or-join [?i ?u] [?i :issue/assignee ?u] [?i :issue/reporter ?u]) "
                "[?i :issue/state :state/open] [?i :issue/title ?title]]",
       .sql = std::string("SELECT x.e, t.v FROM (SELECT DISTINCT i.e AS e FROM datoms u CROSS "
                          "JOIN datoms i WHERE ") +
              kUserByEmail +
              " AND i.a IN ({issue/assignee}, {issue/reporter}) AND i.ix IS NOT 0 AND "
              "i.v = +u.e) x CROSS JOIN datoms s CROSS JOIN datoms t WHERE s.e = x.e AND "
              "s.a = {issue/state} AND s.v = ':state/open' AND t.e = x.e AND t.a = {issue/title}",
       .cols = "is"});

  // ---- rules, not recursive ----
  add({.name = "rule_one_body",
       .what = "a user's open priority-5 issues through a one-body rule",
       .query = "[:find ?i ?title :in $ % ?email :where [?u :user/email ?email] "
                "[?i :issue/assignee ?u] (open-urgent ?i) [?i :issue/title ?title]]",
       .rules = "[[(open-urgent ?i) [?i :issue/state :state/open] [?i :issue/priority 5]]]",
       .sql = std::string("SELECT i.e, t.v FROM datoms u CROSS JOIN datoms i CROSS JOIN datoms s "
                          "CROSS JOIN datoms p CROSS JOIN datoms t WHERE ") +
              kUserByEmail +
              " AND i.a = {issue/assignee} AND i.ix IS NOT 0 AND i.v = +u.e AND s.e = i.e AND "
              "s.a = {issue/state} AND s.v = ':state/open' AND p.e = i.e AND "
              "p.a = {issue/priority} AND p.v = 5 AND t.e = i.e AND t.a = {issue/title}",
       .cols = "is"});
  add({.name = "rule_two_bodies",
       .what = "issues a user is involved in (2-body rule: assignee or reporter), priority >= 4",
       .query = "[:find ?i :in $ % ?email :where [?u :user/email ?email] (involved ?u ?i) "
                "[?i :issue/priority ?p] [(>= ?p 4)]]",
       .rules = "[[(involved ?u ?i) [?i :issue/assignee ?u]] "
                "[(involved ?u ?i) [?i :issue/reporter ?u]]]",
       .sql = std::string("SELECT DISTINCT i.e FROM datoms u CROSS JOIN datoms i CROSS JOIN "
                          "datoms p WHERE ") +
              kUserByEmail +
              " AND i.a IN ({issue/assignee}, {issue/reporter}) AND i.ix IS NOT 0 AND "
              "i.v = +u.e AND p.e = i.e AND p.a = {issue/priority} AND p.v >= 4",
       .cols = "i"});
  add({.name = "rule_three_bodies",
       .what = "a user's reported issues that are hot (3-body rule: priority 5, reopened, or "
               "label-0)",
       .query = "[:find ?i :in $ % ?email :where [?u :user/email ?email] [?i :issue/reporter ?u] "
                "(hot ?i)]",
       .rules = "[[(hot ?i) [?i :issue/priority 5]] [(hot ?i) [?i :issue/state :state/reopened]] "
                "[(hot ?i) [?i :issue/label ?l] [?l :label/name \"label-0\"]]]",
       .sql = std::string("SELECT i.e FROM datoms u CROSS JOIN datoms i WHERE ") + kUserByEmail +
              " AND i.a = {issue/reporter} AND i.ix IS NOT 0 AND i.v = +u.e AND (EXISTS "
              "(SELECT 1 FROM datoms p WHERE p.e = i.e AND p.a = {issue/priority} AND p.v = 5) OR "
              "EXISTS (SELECT 1 FROM datoms s WHERE s.e = i.e AND s.a = {issue/state} AND "
              "s.v = ':state/reopened') OR EXISTS (SELECT 1 FROM datoms il CROSS JOIN datoms l "
              "WHERE il.e = i.e AND il.a = {issue/label} AND l.e = il.v AND l.a = {label/name} "
              "AND l.v = 'label-0'))",
       .cols = "i"});

  // ---- recursion ----
  add({.name = "blocks_from",
       .what = "issues an issue blocks, transitively (recursive rule, start bound)",
       .query = "[:find ?b :in $ % ?start :where (blocks* ?start ?b)]",
       .rules = kBlocksRules,
       .sql = WithAttr(kReachFrom, "issue/blocks"),
       .cols = "i",
       .args = RandomTreeIssue,
       .check_args = GraphProbes,
       .truth_rows = [](const Context& c, const VariantArgs& a) {
         return ProbeTruth(c, a, "blocks_reach");
       }});
  add({.name = "blocks_to",
       .what = "issues that block an issue, transitively (recursive rule, end bound)",
       .query = "[:find ?a :in $ % ?end :where (blocks* ?a ?end)]",
       .rules = kBlocksRules,
       .sql = WithAttr(kReachTo, "issue/blocks"),
       .cols = "i",
       .args = RandomTreeIssue,
       .check_args = GraphProbes,
       .truth_rows = [](const Context& c, const VariantArgs& a) {
         return ProbeTruth(c, a, "blocked_by_reach");
       }});
  add({.name = "blocks_pairs_filtered",
       .what = "pairs (a, b), a blocks b transitively, both reopened with priority 5 (recursive "
               "rule, both ends free)",
       .query = "[:find ?a ?b :in $ % :where (blocks* ?a ?b) [?a :issue/priority 5] "
                "[?a :issue/state :state/reopened] [?b :issue/priority 5] "
                "[?b :issue/state :state/reopened]]",
       .rules = kBlocksRules,
       .sql = "WITH RECURSIVE s(e) AS (SELECT p.e FROM datoms p CROSS JOIN datoms st WHERE "
              "p.a = {issue/priority} AND p.ix IS NOT 0 AND p.v = 5 AND st.e = p.e AND "
              "st.a = {issue/state} AND st.v = ':state/reopened'), r(a, b) AS (SELECT s.e, d.v "
              "FROM s CROSS JOIN datoms d WHERE d.e = s.e AND d.a = {issue/blocks} UNION SELECT "
              "r.a, d.v FROM r CROSS JOIN datoms d WHERE d.e = r.b AND d.a = {issue/blocks}) "
              "SELECT r.a, r.b FROM r CROSS JOIN datoms p CROSS JOIN datoms st WHERE p.e = r.b "
              "AND p.a = {issue/priority} AND p.v = 5 AND st.e = r.b AND st.a = {issue/state} "
              "AND st.v = ':state/reopened'",
       .cols = "ii",
       .args = NoArgs,
       .check_args = NoCheckArgs});
  add({.name = "ancestors",
       .what = "an issue's ancestors in the parent tree (recursive rule, start bound)",
       .query = "[:find ?a :in $ % ?i :where (anc ?i ?a)]",
       .rules = kAncestorRules,
       .sql = WithAttr(kReachFrom, "issue/parent"),
       .cols = "i",
       .args = RandomTreeIssue,
       .check_args = GraphProbes,
       .truth_rows = [](const Context& c, const VariantArgs& a) {
         return ProbeTruth(c, a, "ancestors");
       }});
  add({.name = "descendants",
       .what = "an issue's descendants in the parent tree (recursive rule, end bound)",
       .query = "[:find ?d :in $ % ?root :where (anc ?d ?root)]",
       .rules = kAncestorRules,
       .sql = WithAttr(kReachTo, "issue/parent"),
       .cols = "i",
       .args = RandomTreeIssue,
       .check_args = GraphProbes,
       .truth_rows = [](const Context& c, const VariantArgs& a) {
         return ProbeTruth(c, a, "descendants");
       }});
  add({.name = "chain_ancestors",
       .what = "the ancestors of the last issue of the 3,000-issue chain (deep recursion)",
       .query = "[:find ?a :in $ % ?i :where (anc ?i ?a)]",
       .rules = kAncestorRules,
       .sql = WithAttr(kReachFrom, "issue/parent"),
       .cols = "i",
       .args = [](const Context& c, Rng&) { return ChainTail(c); },
       .check_args = [](const Context& c) { return std::vector<VariantArgs>{ChainTail(c)}; },
       .truth_rows = [](const Context& c, const VariantArgs&) -> std::optional<int64_t> {
         return ChainLength(c) - 1;
       }});
  add({.name = "chain_descendants",
       .what = "the descendants of the first issue of the chain (deep recursion, end bound)",
       .query = "[:find ?d :in $ % ?root :where (anc ?d ?root)]",
       .rules = kAncestorRules,
       .sql = WithAttr(kReachTo, "issue/parent"),
       .cols = "i",
       .args = [](const Context& c, Rng&) { return ChainHead(c); },
       .check_args = [](const Context& c) { return std::vector<VariantArgs>{ChainHead(c)}; },
       .truth_rows = [](const Context& c, const VariantArgs&) -> std::optional<int64_t> {
         return ChainLength(c) - 1;
       }});
  add({.name = "mutual_parity",
       .what = "an issue's ancestors at an even distance (mutual recursion: odd-anc / even-anc)",
       .query = "[:find ?y :in $ % ?x :where (even-anc ?x ?y)]",
       .rules = kParityRules,
       .sql = kEvenAncestors,
       .cols = "i",
       .args = RandomTreeIssue,
       .check_args = GraphProbes,
       .truth_rows = [](const Context& c, const VariantArgs& a) -> std::optional<int64_t> {
         auto n = ProbeTruth(c, a, "ancestors");
         if (!n) return std::nullopt;
         return *n / 2;
       }});
  add({.name = "mutual_parity_chain",
       .what = "the chain's last issue's ancestors at an even distance (deep mutual recursion)",
       .query = "[:find ?y :in $ % ?x :where (even-anc ?x ?y)]",
       .rules = kParityRules,
       .sql = kEvenAncestors,
       .cols = "i",
       .args = [](const Context& c, Rng&) { return ChainTail(c); },
       .check_args = [](const Context& c) { return std::vector<VariantArgs>{ChainTail(c)}; },
       .truth_rows = [](const Context& c, const VariantArgs&) -> std::optional<int64_t> {
         return (ChainLength(c) - 1) / 2;
       }});

  // ---- joins of 4-8 patterns ----
  add({.name = "join7_label_fanout",
       .what = "assignee names and titles of open issues with priority >= 3 and a label (7 "
               "patterns; selective start: the label, not the names)",
       .query =
           "[:find ?name ?title :in $ ?label :where [?u :user/name ?name] "
           "[?i :issue/assignee ?u] [?i :issue/state :state/open] [?i :issue/priority ?p] "
           "[(>= ?p 3)] [?i :issue/label ?l] [?l :label/name ?label] [?i :issue/title ?title]]",
       .sql = "SELECT n.v, t.v FROM datoms l CROSS JOIN datoms il CROSS JOIN datoms s CROSS JOIN "
              "datoms p CROSS JOIN datoms a CROSS JOIN datoms n CROSS JOIN datoms t WHERE "
              "l.a = {label/name} AND l.ix IS NOT 0 AND l.v = ?1 AND il.a = {issue/label} AND "
              "il.ix IS NOT 0 AND il.v = +l.e AND s.e = il.e AND s.a = {issue/state} AND "
              "s.v = ':state/open' AND p.e = il.e AND p.a = {issue/priority} AND p.v >= 3 AND "
              "a.e = il.e AND a.a = {issue/assignee} AND n.e = a.v AND n.a = {user/name} AND "
              "t.e = il.e AND t.a = {issue/title}",
       .cols = "ss",
       .args = RandomLabel,
       .check_args = [](const Context&) {
         return std::vector<VariantArgs>{LabelArgs(0), LabelArgs(7)};
       }});
  add({.name = "join5_self_assigned",
       .what = "closed issues of a priority whose reporter is their assignee, with the name (5 "
               "patterns, a join on two refs)",
       .query = "[:find ?i ?name :in $ ?prio :where [?i :issue/priority ?prio] "
                "[?i :issue/state :state/closed] [?i :issue/assignee ?u] [?i :issue/reporter ?u] "
                "[?u :user/name ?name]]",
       .sql = "SELECT p.e, n.v FROM datoms p CROSS JOIN datoms s CROSS JOIN datoms a CROSS JOIN "
              "datoms r CROSS JOIN datoms n WHERE p.a = {issue/priority} AND p.ix IS NOT 0 AND "
              "p.v = ?1 AND s.e = p.e AND s.a = {issue/state} AND s.v = ':state/closed' AND "
              "a.e = p.e AND a.a = {issue/assignee} AND r.e = p.e AND r.a = {issue/reporter} AND "
              "r.v = a.v AND n.e = a.v AND n.a = {user/name}",
       .cols = "is",
       .args =
           [](const Context&, Rng& rng) {
             int64_t p = rng.Between(1, 5);
             return VariantArgs{{Int(p)}, "", "priority " + std::to_string(p)};
           },
       .check_args =
           [](const Context&) {
             return std::vector<VariantArgs>{{{Int(1)}, "", "priority 1"},
                                             {{Int(5)}, "", "priority 5"}};
           }});
  add({.name = "join6_label_pair",
       .what = "issues with both of two labels, with the assignee's email (6 patterns)",
       .query = "[:find ?i ?email :in $ ?n1 ?n2 :where [?l1 :label/name ?n1] [?l2 :label/name ?n2] "
                "[?i :issue/label ?l1] [?i :issue/label ?l2] [?i :issue/assignee ?u] "
                "[?u :user/email ?email]]",
       .sql =
           "SELECT i1.e, m.v FROM datoms l1 CROSS JOIN datoms i1 CROSS JOIN datoms l2 CROSS JOIN "
           "datoms i2 CROSS JOIN datoms a CROSS JOIN datoms m WHERE l1.a = {label/name} AND "
           "l1.ix IS NOT 0 AND l1.v = ?1 AND i1.a = {issue/label} AND i1.ix IS NOT 0 AND "
           "i1.v = +l1.e AND l2.a = {label/name} AND l2.ix IS NOT 0 AND l2.v = ?2 AND "
           "i2.e = i1.e AND i2.a = {issue/label} AND i2.v = l2.e AND a.e = i1.e AND "
           "a.a = {issue/assignee} AND m.e = a.v AND m.a = {user/email}",
       .cols = "is",
       .args =
           [](const Context& c, Rng& rng) {
             int64_t a = static_cast<int64_t>(rng.Below(c.n_labels));
             int64_t b = (a + 1 + static_cast<int64_t>(rng.Below(c.n_labels - 1))) % c.n_labels;
             return VariantArgs{
                 {Str(LabelName(a)), Str(LabelName(b))}, "", LabelName(a) + " " + LabelName(b)};
           },
       .check_args =
           [](const Context&) {
             return std::vector<VariantArgs>{
                 {{Str("label-0"), Str("label-1")}, "", "label-0 label-1"}};
           }});
  add({.name = "join8_coworkers",
       .what = "names of reporters of priority-5 issues sharing a label with a user's priority-5 "
               "issues (8 patterns)",
       .query = "[:find ?other :in $ ?email :where [?u :user/email ?email] [?i :issue/assignee ?u] "
                "[?i :issue/priority 5] [?i :issue/label ?l] [?j :issue/label ?l] "
                "[?j :issue/priority 5] [?j :issue/reporter ?o] [?o :user/name ?other]]",
       .sql = std::string("SELECT DISTINCT n.v FROM datoms u CROSS JOIN datoms i CROSS JOIN datoms "
                          "p CROSS JOIN datoms il CROSS JOIN datoms jl CROSS JOIN datoms q CROSS "
                          "JOIN datoms r CROSS JOIN datoms n WHERE ") +
              kUserByEmail +
              " AND i.a = {issue/assignee} AND i.ix IS NOT 0 AND i.v = +u.e AND p.e = i.e AND "
              "p.a = {issue/priority} AND p.v = 5 AND il.e = i.e AND il.a = {issue/label} AND "
              "jl.a = {issue/label} AND jl.ix IS NOT 0 AND jl.v = +il.v AND q.e = jl.e AND "
              "q.a = {issue/priority} AND q.v = 5 AND r.e = jl.e AND r.a = {issue/reporter} AND "
              "n.e = r.v AND n.a = {user/name}",
       .cols = "s"});
  add({.name = "join5_blocked_open",
       .what = "a user's open issues that block an in-progress issue (5 patterns over "
               ":issue/blocks)",
       .query = "[:find ?i ?j :in $ ?email :where [?u :user/email ?email] [?i :issue/assignee ?u] "
                "[?i :issue/state :state/open] [?i :issue/blocks ?j] "
                "[?j :issue/state :state/in-progress]]",
       .sql = std::string("SELECT i.e, b.v FROM datoms u CROSS JOIN datoms i CROSS JOIN datoms s "
                          "CROSS JOIN datoms b CROSS JOIN datoms t WHERE ") +
              kUserByEmail +
              " AND i.a = {issue/assignee} AND i.ix IS NOT 0 AND i.v = +u.e AND s.e = i.e AND "
              "s.a = {issue/state} AND s.v = ':state/open' AND b.e = i.e AND "
              "b.a = {issue/blocks} AND t.e = b.v AND t.a = {issue/state} AND "
              "t.v = ':state/in-progress'",
       .cols = "ii"});

  // ---- not, not-join, missing? ----
  add({.name = "not_label",
       .what = "a user's open issues without any label (`not`)",
       .query = "[:find ?i :in $ ?email :where [?u :user/email ?email] [?i :issue/assignee ?u] "
                "[?i :issue/state :state/open] (not [?i :issue/label _])]",
       .sql =
           std::string("SELECT i.e FROM datoms u CROSS JOIN datoms i CROSS JOIN datoms s WHERE ") +
           kUserByEmail +
           " AND i.a = {issue/assignee} AND i.ix IS NOT 0 AND i.v = +u.e AND s.e = i.e AND "
           "s.a = {issue/state} AND s.v = ':state/open' AND NOT EXISTS (SELECT 1 FROM datoms "
           "l WHERE l.e = i.e AND l.a = {issue/label})",
       .cols = "i"});
  add({.name = "not_join_blocks",
       .what = "a user's reported issues that block no open issue (`not-join`)",
       .query = "[:find ?i :in $ ?email :where [?u :user/email ?email] [?i :issue/reporter ?u] "
                "(not-join [?i] [?i :issue/blocks ?j] [?j :issue/state :state/open])]",
       .sql = std::string("SELECT i.e FROM datoms u CROSS JOIN datoms i WHERE ") + kUserByEmail +
              " AND i.a = {issue/reporter} AND i.ix IS NOT 0 AND i.v = +u.e AND NOT EXISTS "
              "(SELECT 1 FROM datoms b CROSS JOIN datoms s WHERE b.e = i.e AND "
              "b.a = {issue/blocks} AND s.e = b.v AND s.a = {issue/state} AND "
              "s.v = ':state/open')",
       .cols = "i"});
  add({.name = "missing_parent",
       .what = "a user's reported open issues without a parent (`missing?`)",
       .query = "[:find ?i :in $ ?email :where [?u :user/email ?email] [?i :issue/reporter ?u] "
                "[?i :issue/state :state/open] [(missing? $ ?i :issue/parent)]]",
       .sql =
           std::string("SELECT i.e FROM datoms u CROSS JOIN datoms i CROSS JOIN datoms s WHERE ") +
           kUserByEmail +
           " AND i.a = {issue/reporter} AND i.ix IS NOT 0 AND i.v = +u.e AND s.e = i.e AND "
           "s.a = {issue/state} AND s.v = ':state/open' AND NOT EXISTS (SELECT 1 FROM datoms "
           "p WHERE p.e = i.e AND p.a = {issue/parent})",
       .cols = "i"});

  // ---- aggregates over joins ----
  add({.name = "agg_top_assignees",
       .what = "the 10 users with the most assigned issues, by name (count, :order, :limit)",
       .query = "[:find ?name (count ?i) :where [?i :issue/assignee ?u] [?u :user/name ?name] "
                ":order (desc (count ?i)) ?name :limit 10]",
       .sql = "SELECT n.v, g.c FROM (SELECT v AS u, count(*) AS c FROM datoms WHERE "
              "a = {issue/assignee} AND ix IS NOT 0 GROUP BY v) g CROSS JOIN datoms n WHERE "
              "n.e = g.u AND n.a = {user/name} ORDER BY g.c DESC, n.v LIMIT 10",
       .cols = "si",
       .args = NoArgs,
       .check_args = NoCheckArgs});
  add({.name = "agg_sum_priority",
       .what = "per state, the sum of the priorities of a label's issues (sum with :with)",
       .query = "[:find ?s (sum ?p) :with ?i :in $ ?label :where [?l :label/name ?label] "
                "[?i :issue/label ?l] [?i :issue/state ?s] [?i :issue/priority ?p]]",
       .sql = "SELECT s.v, sum(p.v) FROM datoms l CROSS JOIN datoms il CROSS JOIN datoms s CROSS "
              "JOIN datoms p WHERE l.a = {label/name} AND l.ix IS NOT 0 AND l.v = ?1 AND "
              "il.a = {issue/label} AND il.ix IS NOT 0 AND il.v = +l.e AND s.e = il.e AND "
              "s.a = {issue/state} AND p.e = il.e AND p.a = {issue/priority} GROUP BY s.v",
       .cols = "ki",
       .args = RandomLabel,
       .check_args = [](const Context&) { return std::vector<VariantArgs>{LabelArgs(3)}; }});
  add({.name = "agg_avg_priority",
       .what = "per label, the average priority of reopened issues (avg with :with)",
       .query = "[:find ?n (avg ?p) :with ?i :where [?i :issue/state :state/reopened] "
                "[?i :issue/label ?l] [?l :label/name ?n] [?i :issue/priority ?p]]",
       .sql = "SELECT n.v, avg(p.v) FROM datoms s CROSS JOIN datoms il CROSS JOIN datoms n CROSS "
              "JOIN datoms p WHERE s.a = {issue/state} AND s.ix IS NOT 0 AND "
              "s.v = ':state/reopened' AND il.e = s.e AND il.a = {issue/label} AND n.e = il.v AND "
              "n.a = {label/name} AND p.e = s.e AND p.a = {issue/priority} GROUP BY n.v",
       .cols = "sd",
       .args = NoArgs,
       .check_args = NoCheckArgs});
  add({.name = "agg_max_created",
       .what = "per assignee, the latest creation time of a label's priority-5 issues (max)",
       .query = "[:find ?email (max ?c) :in $ ?label :where [?l :label/name ?label] "
                "[?i :issue/label ?l] [?i :issue/priority 5] [?i :issue/assignee ?u] "
                "[?u :user/email ?email] [?i :issue/created-at ?c]]",
       .sql = "SELECT m.v, max(c.v) FROM datoms l CROSS JOIN datoms il CROSS JOIN datoms p CROSS "
              "JOIN datoms a CROSS JOIN datoms m CROSS JOIN datoms c WHERE l.a = {label/name} AND "
              "l.ix IS NOT 0 AND l.v = ?1 AND il.a = {issue/label} AND il.ix IS NOT 0 AND "
              "il.v = +l.e AND p.e = il.e AND p.a = {issue/priority} AND p.v = 5 AND a.e = il.e "
              "AND a.a = {issue/assignee} AND m.e = a.v AND m.a = {user/email} AND c.e = il.e AND "
              "c.a = {issue/created-at} GROUP BY m.v",
       .cols = "st",
       .args = RandomLabel,
       .check_args = [](const Context&) { return std::vector<VariantArgs>{LabelArgs(5)}; }});
  add({.name = "agg_count_distinct_top",
       .what = "the 5 labels with the most distinct reporters of priority-5 issues "
               "(count-distinct, :order, :limit)",
       .query = "[:find ?n (count-distinct ?r) :where [?i :issue/priority 5] [?i :issue/label ?l] "
                "[?l :label/name ?n] [?i :issue/reporter ?r] "
                ":order (desc (count-distinct ?r)) ?n :limit 5]",
       .sql = "SELECT n.v, count(DISTINCT r.v) AS c FROM datoms p CROSS JOIN datoms il CROSS JOIN "
              "datoms n CROSS JOIN datoms r WHERE p.a = {issue/priority} AND p.ix IS NOT 0 AND "
              "p.v = 5 AND il.e = p.e AND il.a = {issue/label} AND n.e = il.v AND "
              "n.a = {label/name} AND r.e = p.e AND r.a = {issue/reporter} GROUP BY n.v "
              "ORDER BY c DESC, n.v LIMIT 5",
       .cols = "si",
       .args = NoArgs,
       .check_args = NoCheckArgs});
  add({.name = "agg_count_blocked",
       .what = "how many issues a user's assigned issues block (scalar count over a join)",
       .query = "[:find (count ?j) . :in $ ?email :where [?u :user/email ?email] "
                "[?i :issue/assignee ?u] [?i :issue/blocks ?j]]",
       .sql = std::string("SELECT count(DISTINCT b.v) FROM datoms u CROSS JOIN datoms i CROSS JOIN "
                          "datoms b WHERE ") +
              kUserByEmail +
              " AND i.a = {issue/assignee} AND i.ix IS NOT 0 AND i.v = +u.e AND b.e = i.e AND "
              "b.a = {issue/blocks} HAVING count(*) > 0",
       .cols = "i"});

  // ---- strings and regexes ----
  add({.name = "str_starts_with",
       .what = "users whose name starts with a prefix (`starts-with?` over every name)",
       .query = "[:find ?u ?name :in $ ?prefix :where [?u :user/name ?name] "
                "[(starts-with? ?name ?prefix)]]",
       .sql = "SELECT e, v FROM datoms WHERE a = {user/name} AND ix IS NOT 1 AND "
              "substr(v, 1, length(?1)) = ?1",
       .cols = "is",
       .args =
           [](const Context&, Rng& rng) {
             std::string p = "User " + std::to_string(rng.Between(1, 99));
             return VariantArgs{{Str(p)}, "", p};
           },
       .check_args =
           [](const Context&) {
             return std::vector<VariantArgs>{{{Str("User 1")}, "", "User 1"}};
           }});
  // The SQL's GLOBs say what the regex says on titles, which are all "Issue <digits>: <kind>".
  add({.name = "str_regex_title",
       .what = "priority-5 issues whose title matches a regex (`re-find`)",
       .query = "[:find ?i ?t :where [?i :issue/priority 5] [?i :issue/title ?t] "
                "[(re-find \"^Issue [0-9]*7: (crash|typo)$\" ?t)]]",
       .sql = "SELECT p.e, t.v FROM datoms p CROSS JOIN datoms t WHERE p.a = {issue/priority} AND "
              "p.ix IS NOT 0 AND p.v = 5 AND t.e = p.e AND t.a = {issue/title} AND "
              "(t.v GLOB 'Issue *7: crash' OR t.v GLOB 'Issue *7: typo')",
       .cols = "is",
       .args = NoArgs,
       .check_args = NoCheckArgs});
  add({.name = "str_ends_with",
       .what = "a user's reported issues whose title ends with \"perf regression\" (`ends-with?`)",
       .query = "[:find ?i :in $ ?email :where [?u :user/email ?email] [?i :issue/reporter ?u] "
                "[?i :issue/title ?t] [(ends-with? ?t \"perf regression\")]]",
       .sql =
           std::string("SELECT i.e FROM datoms u CROSS JOIN datoms i CROSS JOIN datoms t WHERE ") +
           kUserByEmail +
           " AND i.a = {issue/reporter} AND i.ix IS NOT 0 AND i.v = +u.e AND t.e = i.e AND "
           "t.a = {issue/title} AND substr(t.v, -15) = 'perf regression'",
       .cols = "i"});

  // ---- get-else, get-some ----
  add({.name = "get_else_parent",
       .what = "a user's assigned issues with their parent, -1 for none (`get-else`)",
       .query = "[:find ?i ?p :in $ ?email :where [?u :user/email ?email] [?i :issue/assignee ?u] "
                "[(get-else $ ?i :issue/parent -1) ?p]]",
       .sql = std::string("SELECT i.e, coalesce((SELECT p.v FROM datoms p WHERE p.e = i.e AND "
                          "p.a = {issue/parent}), -1) FROM datoms u CROSS JOIN datoms i WHERE ") +
              kUserByEmail + " AND i.a = {issue/assignee} AND i.ix IS NOT 0 AND i.v = +u.e",
       .cols = "ii"});
  add({.name = "get_some_parent",
       .what = "a user's reported issues with their parent, else their assignee (`get-some`)",
       .query = "[:find ?i ?a ?v :in $ ?email :where [?u :user/email ?email] "
                "[?i :issue/reporter ?u] [(get-some $ ?i :issue/parent :issue/assignee) [?a ?v]]]",
       .sql = std::string("SELECT e, CASE WHEN p IS NOT NULL THEN {issue/parent} ELSE "
                          "{issue/assignee} END, coalesce(p, a) FROM (SELECT i.e AS e, (SELECT "
                          "d.v FROM datoms d WHERE d.e = i.e AND d.a = {issue/parent}) AS p, "
                          "(SELECT d.v FROM datoms d WHERE d.e = i.e AND d.a = {issue/assignee}) "
                          "AS a FROM datoms u CROSS JOIN datoms i WHERE ") +
              kUserByEmail +
              " AND i.a = {issue/reporter} AND i.ix IS NOT 0 AND i.v = +u.e) WHERE p IS NOT NULL "
              "OR a IS NOT NULL",
       .cols = "iii"});

  // ---- pull ----
  add({.name = "pull_nested",
       .what = "nested pull (title, assignee's name, parent's title, label names) of a user's "
               "reported priority-5 issues",
       .query = "[:find (pull ?i [:issue/title {:issue/assignee [:user/name]} "
                "{:issue/parent [:issue/title]} {:issue/label [:label/name]}]) :in $ ?email "
                ":where [?u :user/email ?email] [?i :issue/reporter ?u] [?i :issue/priority 5]]",
       .sql = std::string("SELECT t.v, (SELECT n.v FROM datoms a CROSS JOIN datoms n WHERE a.e = "
                          "i.e AND a.a = {issue/assignee} AND n.e = a.v AND n.a = {user/name}), "
                          "(SELECT pt.v FROM datoms p CROSS JOIN datoms pt WHERE p.e = i.e AND "
                          "p.a = {issue/parent} AND pt.e = p.v AND pt.a = {issue/title}), (SELECT "
                          "group_concat(x, ',') FROM (SELECT ln.v AS x FROM datoms il CROSS JOIN "
                          "datoms ln WHERE il.e = i.e AND il.a = {issue/label} AND ln.e = il.v "
                          "AND ln.a = {label/name} ORDER BY 1)) FROM datoms u CROSS JOIN datoms i "
                          "CROSS JOIN datoms pr CROSS JOIN datoms t WHERE ") +
              kUserByEmail +
              " AND i.a = {issue/reporter} AND i.ix IS NOT 0 AND i.v = +u.e AND pr.e = i.e AND "
              "pr.a = {issue/priority} AND pr.v = 5 AND t.e = i.e AND t.a = {issue/title}",
       .cols = "ssss",
       .normalize = FlattenPull});

  // ---- time: as-of, history, two sources ----
  add({.name = "asof_reporter_states",
       .what = "as of t_mid, the states of a user's reported priority-5 issues (every pattern "
               "as of)",
       .query = "[:find ?i ?s :in $ ?email :where [?u :user/email ?email] [?i :issue/reporter ?u] "
                "[?i :issue/priority 5] [?i :issue/state ?s]]",
       .view = VariantView::kAsOfMid,
       .sql = "WITH u(e) AS (" + AsOf("d.e", "", "d.a = {user/email} AND d.v = ?1", true) +
              "), i(e) AS (SELECT DISTINCT e FROM (" +
              AsOf("d.e", "u CROSS JOIN", "d.a = {issue/reporter} AND d.v = +u.e", true) +
              ")) SELECT e, s FROM (SELECT i.e AS e, (" +
              AsOf("d.v", "", "d.e = i.e AND d.a = {issue/priority}", false) + ") AS p, (" +
              AsOf("d.v", "", "d.e = i.e AND d.a = {issue/state}", false) +
              ") AS s FROM i) WHERE p = 5 AND s IS NOT NULL",
       .cols = "ik"});
  add({.name = "history_user_states",
       .what = "every state assertion and retraction of a user's assigned issues, with tx and "
               "added (history view)",
       .query = "[:find ?i ?s ?tx ?added :in $ ?email :where [?u :user/email ?email] "
                "[?i :issue/assignee ?u] [?i :issue/state ?s ?tx ?added]]",
       .view = VariantView::kHistory,
       .sql = "WITH u(e) AS (SELECT e FROM datoms WHERE a = {user/email} AND ix IS NOT 0 AND "
              "v = ?1 UNION SELECT e FROM history WHERE a = {user/email} AND v = ?1), i(e) AS "
              "(SELECT d.e FROM u CROSS JOIN datoms d WHERE d.a = {issue/assignee} AND "
              "d.ix IS NOT 0 AND d.v = +u.e UNION SELECT d.e FROM u CROSS JOIN history d WHERE "
              "d.a = {issue/assignee} AND d.v = +u.e) SELECT i.e, d.v, d.tx, 1 FROM i CROSS JOIN "
              "datoms d WHERE d.e = i.e AND d.a = {issue/state} UNION ALL SELECT i.e, d.v, d.tx, 1 "
              "FROM i CROSS JOIN history d WHERE d.e = i.e AND d.a = {issue/state} UNION ALL "
              "SELECT i.e, d.v, d.rtx, 0 FROM i CROSS JOIN history d WHERE d.e = i.e AND "
              "d.a = {issue/state}",
       .cols = "ikib",
       // An unchanged issue has its one assertion; a changed one (history changes an issue
       // once) also its first assertion and that assertion's retraction.
       .truth_rows = [](const Context& c, const VariantArgs& a) -> std::optional<int64_t> {
         auto t = AssignedTruth(c, a);
         if (!t) return std::nullopt;
         return t->n + 2 * t->changed;
       }});
  add({.name = "two_sources_changed",
       .what = "a user's assigned issues whose state differs between $old (as of t_mid) and now "
               "(two sources)",
       .query = "[:find ?i ?was ?now :in $ $old ?email :where [?u :user/email ?email] "
                "[?i :issue/assignee ?u] [$old ?i :issue/state ?was] [?i :issue/state ?now] "
                "[(!= ?was ?now)]]",
       .source2 = SecondSource::kAsOfMid,
       .sql = std::string("SELECT e, was, now FROM (SELECT i.e AS e, (") +
              AsOf("d.v", "", "d.e = i.e AND d.a = {issue/state}", false) +
              ") AS was, s.v AS now FROM datoms u CROSS JOIN datoms i CROSS JOIN datoms s WHERE " +
              kUserByEmail +
              " AND i.a = {issue/assignee} AND i.ix IS NOT 0 AND i.v = +u.e AND s.e = i.e AND "
              "s.a = {issue/state}) WHERE was IS NOT NULL AND was <> now",
       .cols = "ikk",
       .truth_rows = [](const Context& c, const VariantArgs& a) -> std::optional<int64_t> {
         auto t = AssignedTruth(c, a);
         if (!t) return std::nullopt;
         return t->changed;
       }});
  add({.name = "two_sources_since",
       .what = "issues whose state changed after t_since ($since) with priority >= 4, and their "
               "current titles (two sources)",
       .query = "[:find ?i ?s ?title :in $ $since :where [$since ?i :issue/state ?s] "
                "[?i :issue/priority ?p] [(>= ?p 4)] [?i :issue/title ?title]]",
       .source2 = SecondSource::kSinceT,
       .sql = "SELECT s.e, s.v, t.v FROM datoms s INDEXED BY datoms_tx CROSS JOIN datoms p CROSS "
              "JOIN datoms t WHERE s.tx > {t_since} AND s.a = {issue/state} AND p.e = s.e AND "
              "p.a = {issue/priority} AND p.v >= 4 AND t.e = s.e AND t.a = {issue/title}",
       .cols = "iks",
       .args = NoArgs,
       .check_args = NoCheckArgs});
  return v;
}

}  // namespace

const std::vector<Variant>& Variants() {
  static const std::vector<Variant> kAll = Build();
  return kAll;
}

const Variant* FindVariant(std::string_view name) {
  if (name.substr(0, kVariantPrefix.size()) == kVariantPrefix)
    name.remove_prefix(kVariantPrefix.size());
  for (const auto& v : Variants())
    if (v.name == name) return &v;
  return nullptr;
}

Result<std::string> VariantSql(
    const Variant& v, const Context& ctx,
    const std::function<std::optional<int64_t>(const std::string&)>& attr, const std::string* sql) {
  std::string out;
  const std::string& s = sql ? *sql : v.sql;
  for (size_t i = 0; i < s.size();) {
    if (s[i] != '{') {
      out += s[i++];
      continue;
    }
    size_t end = s.find('}', i);
    if (end == std::string::npos)
      return Status::InvalidArgument("variant " + v.name + ": unclosed { in its SQL");
    std::string token = s.substr(i + 1, end - i - 1);
    if (token == "t_mid") {
      out += std::to_string(ctx.t_mid);
    } else if (token == "t_since") {
      out += std::to_string(ctx.t_since);
    } else {
      std::optional<int64_t> id = attr(token);
      if (!id) return Status::NotFound("variant " + v.name + ": no attribute :" + token);
      out += std::to_string(*id);
    }
    i = end + 1;
  }
  return out;
}

std::string CanonicalRow(const Row& row) {
  std::string out = "[";
  for (size_t i = 0; i < row.size(); ++i) {
    if (i) out += ' ';
    if (row[i].is_float()) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.9g", row[i].as_double());
      out += buf;
    } else {
      out += edn::Print(row[i]);
    }
  }
  return out + "]";
}

}  // namespace mentat::scale
