// The optimizer's pass list (passes.h): the driver and each pass's wrapper, which runs
// the rewrite and describes what it changed.
#include "query/passes.h"

#include <algorithm>

#include "query/analyze.h"
#include "query/relation.h"

namespace mentat::query {

namespace {

std::string ItemName(const Unit& unit, int id) {
  std::string form = unit.items[id].form.is_nil() ? "" : edn::Print(unit.items[id].form);
  if (form.size() > 60) form = form.substr(0, 57) + "...";
  return "t" + std::to_string(id) + (form.empty() ? "" : " " + form);
}

std::string Ids(const std::vector<int>& ids) {
  std::string s;
  for (int i : ids) s += (s.empty() ? "t" : " t") + std::to_string(i);
  return s;
}

// Items whose marker `field` was set by the pass (it was < 0 before).
template <typename F>
std::vector<int> NewlyMarked(const Unit& unit, const std::vector<int>& before, F field) {
  std::vector<int> out;
  for (size_t i = 0; i < unit.items.size(); ++i)
    if (field(unit.items[i]) >= 0 && (i >= before.size() || before[i] < 0))
      out.push_back(static_cast<int>(i));
  return out;
}

template <typename F>
std::vector<int> Markers(const Unit& unit, F field) {
  std::vector<int> out;
  for (const Item& item : unit.items) out.push_back(field(item));
  return out;
}

// An `or`, `or-join` or rule call whose variables other items bind too may be placed
// before them (its branches then produce the rows); join_order makes the choice.
void OrJoins(PassTarget& t, bool, std::vector<std::string>* changes) {
  for (Item& item : t.unit->items) {
    if (!item.filter_ok || item.filter_needs.empty()) continue;
    auto& needs = item.plan.needs;
    for (const auto& v : item.filter_needs)
      needs.erase(std::remove(needs.begin(), needs.end(), v), needs.end());
    std::string vars;
    for (const auto& v : item.filter_needs) vars += (vars.empty() ? "" : " ") + v;
    item.filter_needs.clear();
    changes->push_back(ItemName(*t.unit, item.id) + ": may produce " + vars +
                       " for the items that also bind them");
  }
}

void JoinOrder(PassTarget& t, bool enabled, std::vector<std::string>* changes) {
  const AnalyzeEnv& env = *t.env;
  PlanUnit(t.unit, *env.schema, *env.stats, env.sources, *env.views, *t.rels, enabled);
  if (!enabled) return;
  for (size_t b = 0; b < t.unit->blocks.size(); ++b) {
    const Block& block = t.unit->blocks[b];
    if (block.order.size() < 2 || block.order == block.items) continue;
    changes->push_back("block " + std::to_string(b) + ": " + Ids(block.order) + " (written " +
                       Ids(block.items) + ")");
  }
}

void AsOfProbes(PassTarget& t, bool, std::vector<std::string>* changes) {
  auto field = [](const Item& i) { return i.probe_from; };
  auto before = Markers(*t.unit, field);
  UseAsOfProbes(t.unit, *t.env->schema);
  for (int id : NewlyMarked(*t.unit, before, field))
    changes->push_back(ItemName(*t.unit, id) +
                       ": its value at t as a scalar subquery by the entity of t" +
                       std::to_string(t.unit->items[id].probe_from));
}

void AttributeCache(PassTarget& t, bool, std::vector<std::string>* changes) {
  if (!t.env->cached_attrs || t.env->cached_attrs->empty()) return;
  auto field = [](const Item& i) { return i.cached_from; };
  auto before = Markers(*t.unit, field);
  std::vector<Entid> used = UseAttributeCache(t.unit);
  if (t.cached_attrs) *t.cached_attrs = used;
  for (int id : NewlyMarked(*t.unit, before, field))
    changes->push_back(ItemName(*t.unit, id) +
                       ": read from the attribute cache by the entity of t" +
                       std::to_string(t.unit->items[id].cached_from));
}

void EntitySets(PassTarget& t, bool, std::vector<std::string>* changes) {
  if (!EntitySetsUsable()) return;
  auto field = [](const Item& i) { return i.set_for; };
  auto before = Markers(*t.unit, field);
  UseEntitySets(t.unit, *t.env->schema, *t.env->stats);
  for (int id : NewlyMarked(*t.unit, before, field))
    changes->push_back(ItemName(*t.unit, id) + ": read once as a set of entities filtering t" +
                       std::to_string(t.unit->items[id].set_for));
}

// Runs during analysis (demand.cc), where rule calls are expanded, which records what it
// did (AnalyzeEnv::rewrites).
void RunsInAnalysis(PassTarget&, bool, std::vector<std::string>*) {}

// Runs where the rule clauses are compiled (compile.cc), which reports what it did.
void RunsInCompile(PassTarget&, bool, std::vector<std::string>*) {}

// Runs in the store layer before compilation (store/query_glue.cc); listed so that it is
// named, shown and switched like the others.
void ValueCounts(PassTarget&, bool, std::vector<std::string>*) {}

}  // namespace

const std::vector<Pass>& OptimizerPasses() {
  static const std::vector<Pass> passes = {
      {"value_counts",
       "a one-pattern count per value on the current database read from maintained counts", true,
       false, ValueCounts},
      {"seed_recursion",
       "a recursive call whose argument other clauses find is seeded with what they find "
       "(off: the whole relation bottom-up)",
       true, false, RunsInAnalysis},
      {"pass_through",
       "a right-linear recursive call with bound arguments derives only the bound values it "
       "reaches (off: the demand rewrite)",
       true, false, RunsInAnalysis},
      {"agg_pushdown",
       "a count of the entities of one cardinality-one pattern counted per value before the "
       "join, then summed (off: the join, then the count)",
       true, false, RunsInCompile},
      {"or_joins",
       "an or / rule call whose variables other items bind may produce them (off: a filter)", true,
       true, OrJoins},
      {"join_order", "items ordered by estimated rows (off: as written)", true, true, JoinOrder},
      {"recursive_cte",
       "a stratum of linear recursive rules as one SQLite WITH RECURSIVE statement (off: the "
       "engine's semi-naive loop)",
       true, false, RunsInCompile},
      {"rules_in_query",
       "on PostgreSQL, such statements read by the query's own statement from its WITH clause "
       "(off: their rows go back to the server as relation parameters)",
       true, false, RunsInCompile},
      {"pull_in_query",
       "on PostgreSQL, a scalar or tuple find's pull of one entity reads the entity's datoms in "
       "the query's statement (off: the pull's first level is a statement of its own)",
       false, false, RunsInCompile},
      {"as_of_probes", "as-of values of found entities read by one scalar subquery", true, true,
       AsOfProbes},
      {"attribute_cache", "values of found entities read from attribute caches", false, true,
       AttributeCache},
      {"entity_sets", "a pattern of entities read once as a set filtering the next one", true, true,
       EntitySets},
      {"distinct_elimination",
       "no DISTINCT when the found variables determine every row (patterns by their "
       "cardinality-one and unique attributes; or / rule calls placed as tests add none)",
       false, false, RunsInCompile},
  };
  return passes;
}

Status CheckPassNames(const std::vector<std::string>& names) {
  for (const std::string& n : names) {
    bool known = false;
    for (const Pass& p : OptimizerPasses()) known |= n == p.name;
    if (known) continue;
    std::string list;
    for (const Pass& p : OptimizerPasses())
      list += (list.empty() ? "" : ", ") + std::string(p.name);
    return Status::InvalidArgument("unknown optimizer pass \"" + n + "\" (the passes: " + list +
                                   ")");
  }
  return Status::OK();
}

bool PassEnabled(std::string_view name, bool use_planner,
                 const std::vector<std::string>& disabled) {
  for (const Pass& p : OptimizerPasses()) {
    if (name != p.name) continue;
    if (p.needs_planner && !use_planner) return false;
    return std::find(disabled.begin(), disabled.end(), name) == disabled.end();
  }
  return false;
}

std::vector<PassReport> RunPasses(PassTarget& t, bool use_planner,
                                  const std::vector<std::string>& disabled) {
  std::vector<PassReport> out;
  for (const Pass& p : OptimizerPasses()) {
    if (p.run == ValueCounts) continue;
    if (t.rule_body && !p.in_rule_bodies) continue;
    PassReport r;
    r.name = p.name;
    r.ran = PassEnabled(p.name, use_planner, disabled);
    if (p.run == RunsInAnalysis || p.run == RunsInCompile) {
      if (r.ran && p.run == RunsInAnalysis)
        for (const auto& [pass, line] : t.env->rewrites)
          if (pass == p.name) r.changes.push_back(line);
      out.push_back(std::move(r));
      continue;
    }
    if (r.ran || p.run == JoinOrder) p.run(t, r.ran, &r.changes);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace mentat::query
