// The as_of_probes pass (passes.h): an as-of pattern of a cardinality-one attribute whose
// entity an earlier pattern of its block found reads its value at t as one scalar subquery
// by that entity, instead of one UNION arm per table (datoms and history).
#include "query/analyze.h"

namespace mentat::query {

void UseAsOfProbes(Unit* unit, const Schema& schema) {
  for (Block& block : unit->blocks) {
    for (size_t k = 1; k < block.order.size(); ++k) {
      Item& item = unit->items[block.order[k]];
      const PlanInfo& p = item.plan;
      if (item.kind != Item::Kind::kPattern || item.as_of_param.empty() ||
          item.variants.size() != 2 || item.use_collapsed || !item.index_hint.empty() ||
          item.variants[0].table != "datoms" || item.variants[1].table != "history" || p.attr < 0 ||
          p.e != PlanInfo::Pos::kVar)
        continue;
      const Attribute* attr = schema.attribute(p.attr);
      if (!attr || attr->many) continue;
      // Its variables are its entity and value only (no tx or added place).
      bool only_e_v = true;
      for (const auto& b : p.binds)
        only_e_v = only_e_v && (b == p.e_var || (p.v == PlanInfo::Pos::kVar && b == p.v_var));
      if (!only_e_v) continue;
      int from = EntityReader(*unit, block, k);
      if (from < 0) continue;
      // At most one value of a cardinality-one attribute holds at t: the current datom
      // asserted by t, or a history datom asserted by t and retracted after it.
      const std::string s = "s" + std::to_string(item.id), a = IntLit(p.attr), t = item.as_of_param;
      const Expr e = Col(from, "e");
      const Expr where = " WHERE " + Expr::Call(Fn::kAnd, {Expr::Call(Fn::kEq, {s + ".e", e}),
                                                           Expr::Call(Fn::kEq, {s + ".a", a})});
      Expr v = "(";
      views::BoundSql bounds;
      bounds.as_of = t;
      bool first = true;
      for (const views::Branch& b : views::Branches(views::Shape{true, false, false})) {
        v += (first ? "SELECT " : " UNION ALL SELECT ") + s + ".v FROM " + b.table + " AS " + s +
             where + " AND " + views::CondsSql(b, s + ".", bounds);
        first = false;
      }
      v += ")";
      // A constant value is compared with the probe by the pattern's own condition on v
      // (which no NULL passes); a variable needs the row dropped when nothing holds at t.
      Variant probe{"",
                    p.v == PlanInfo::Pos::kConst
                        ? std::vector<Expr>{}
                        : std::vector<Expr>{Expr::Call(Fn::kIsNotNull, {v})},
                    {{"e", e}, {"a", a}, {"v", v}},
                    -1};
      probe.cols["ix"] = "NULL";
      probe.cols["added"] = "1";
      probe.cols["tx"] = "NULL";
      item.variants = {probe};
      item.collapsed.reset();
      item.index_term.clear();
      item.probe_from = from;
    }
  }
}

}  // namespace mentat::query
