// The agg_pushdown pass: a count pushed below the join (eager aggregation).
//
// `[:find ?name (count ?i) :where [?i :issue/assignee ?u] [?u :user/name ?name]]` joins
// every issue to its assignee's name and then groups all of them. When the counted
// variable ?x is the entity of one pattern P = [?x :a ?u] of a cardinality-one attribute
// and appears nowhere else, each ?x has exactly one ?u, so the number of distinct
// (group, ?x) tuples of a group is the sum, over the distinct (group, ?u) rows of the rest
// of the join, of how many ?x each ?u has. P becomes the derived table
//   (SELECT v, count(*) AS n FROM datoms WHERE a = :a GROUP BY v)
// read through the attribute's value index in order, one row per ?u, and the aggregate
// becomes sum(n) over the distinct (group, ?u, n) rows. The planner then places P as the
// small relation it is (one row per distinct value).
#include <algorithm>

#include "query/analyze.h"
#include "storage/format.h"

namespace mentat::query {

namespace {}  // namespace

std::optional<std::string> PushCountBelowJoin(Unit* unit, const AnalyzeEnv& env,
                                              const std::string& var, Expr* count_col,
                                              Expr* extra_col) {
  Block& block = unit->blocks[0];
  // Alone in its block there is no join to count below: the plain GROUP BY is the plan.
  if (block.items.size() < 2) return std::nullopt;
  auto prov = block.providers.find(var);
  if (prov == block.providers.end() || prov->second.size() != 1) return std::nullopt;
  const int pid = prov->second[0];
  Item& p = unit->items[static_cast<size_t>(pid)];
  if (p.kind != Item::Kind::kPattern || p.variants.size() != 1 || p.use_collapsed ||
      p.variants[0].table != "datoms" || p.plan.attr < 0 || p.set_for >= 0 ||
      p.plan.e != PlanInfo::Pos::kVar || p.plan.e_var != var || p.plan.v != PlanInfo::Pos::kVar ||
      p.plan.v_var == var)
    return std::nullopt;
  if (std::find(block.items.begin(), block.items.end(), pid) == block.items.end())
    return std::nullopt;
  auto view = env.sources.find(p.plan.src);
  if (view == env.sources.end() || view->second.as_of || view->second.since || view->second.history)
    return std::nullopt;
  const Attribute* attr = env.schema->attribute(p.plan.attr);
  if (!attr || attr->many) return std::nullopt;
  // Its variables are ?x and ?u only (no tx or added place).
  if (p.plan.binds.size() != 2) return std::nullopt;
  // ?x (P's e) is read nowhere but in the counted column; P's tx and added nowhere.
  auto clean = [&](const Expr& x) {
    return !x.Reads(pid, "e") && !x.Reads(pid, "tx") && !x.Reads(pid, "added");
  };
  for (const Item& it : unit->items) {
    for (const auto& c : it.conds)
      if (!clean(c)) return std::nullopt;
    for (const Variant& v : it.variants) {
      for (const auto& c : v.conds)
        if (!clean(c)) return std::nullopt;
      for (const auto& [k, c] : v.cols)
        if (!clean(c)) return std::nullopt;
      if (!clean(v.table)) return std::nullopt;
    }
  }
  for (const Block& b : unit->blocks) {
    for (const auto& w : b.where)
      if (!clean(w)) return std::nullopt;
    for (const auto& [k, o] : b.outputs)
      if (!clean(o)) return std::nullopt;
  }
  for (const auto& [v, deps] : block.expr_deps)
    if (deps.count(pid)) return std::nullopt;
  // The derived table: one row per value, its count.
  Variant& d = p.variants[0];
  d.table = "(SELECT v, count(*) AS n FROM datoms WHERE " +
            Expr::Call(Fn::kAnd, {Expr::Call(Fn::kEq, {"a", IntLit(attr->id)}),
                                  "ix " + unit->dialect->IndexTest(attr->value_indexed())}) +
            " GROUP BY v)";
  d.cols["a"] = IntLit(attr->id);
  p.index_term.clear();
  p.index_term_written.clear();
  p.cache_attr = -1;
  p.kind = Item::Kind::kGenerator;
  p.plan.binds = {p.plan.v_var};
  p.plan.fixed_rows = env.stats->Distinct(attr->id);
  *count_col = Col(pid, "n");
  *extra_col = Col(pid, "v");
  return "(count " + var + ") counted per " + p.plan.v_var + " by t" + std::to_string(pid) +
         " before the join, then summed";
}

}  // namespace mentat::query
