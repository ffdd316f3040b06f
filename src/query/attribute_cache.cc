// The attribute_cache pass (passes.h): a pattern [?e :attr ?v] of a cached
// cardinality-one attribute whose entity an earlier pattern of its block found reads the
// value from the connection's attribute cache (mentat_cached(a, e), store/attr_cache.h)
// instead of the datoms table.
#include <algorithm>

#include "query/analyze.h"

namespace mentat::query {

// The first item before position k of `block`'s order that reads the entity of the
// pattern at k from a table of its own (not itself read from a cache, a probe or a set);
// -1 when there is none.
int EntityReader(const Unit& unit, const Block& block, size_t k) {
  const std::string& var = unit.items[block.order[k]].plan.e_var;
  for (size_t j = 0; j < k; ++j) {
    const Item& prev = unit.items[block.order[j]];
    if (prev.kind == Item::Kind::kPattern && prev.probe_from < 0 && prev.cached_from < 0 &&
        prev.set_for < 0 && prev.plan.e == PlanInfo::Pos::kVar && prev.plan.e_var == var)
      return block.order[j];
  }
  return -1;
}

std::vector<Entid> UseAttributeCache(Unit* unit) {
  std::vector<Entid> used;
  for (Block& block : unit->blocks) {
    for (size_t k = 0; k < block.order.size(); ++k) {
      Item& item = unit->items[block.order[k]];
      if (item.cache_attr < 0 || item.variants.size() != 1 || item.use_collapsed ||
          item.variants[0].table != "datoms" || !item.index_hint.empty())
        continue;
      // An earlier pattern of the block that reads the same entity from a table: its e
      // column is the entity this one reads by (the join conditions on e then compare
      // that column with itself).
      int from = EntityReader(*unit, block, k);
      if (from < 0) continue;
      const Expr e = Col(from, "e");
      const Expr v = Expr::Call(Fn::kCached, {IntLit(item.cache_attr), e});
      Variant& var = item.variants[0];
      var.table.clear();
      var.cols["e"] = e;
      var.cols["a"] = IntLit(item.cache_attr);
      var.cols["v"] = v;
      var.cols["ix"] = "NULL";
      var.conds.push_back(Expr::Call(Fn::kIsNotNull, {v}));
      item.index_term.clear();
      item.cached_from = from;
      if (std::find(used.begin(), used.end(), item.cache_attr) == used.end())
        used.push_back(item.cache_attr);
    }
  }
  std::sort(used.begin(), used.end());
  return used;
}

}  // namespace mentat::query
