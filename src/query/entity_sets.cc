// Pass 3b (after the join order and the attribute caches): entity-set filters.
//
// A block that starts from a pattern D giving many entities and nothing else
// (`[?i :issue/state :state/open]`) and goes on with a pattern P on the same entity that
// its value index can read by value (`[?i :issue/priority ?p] [(>= ?p ?min)]`) would probe
// P's datoms once per entity of D: a B-tree descent each. When P's value range is not much
// larger than D, it is cheaper to read D once into an in-memory set of entity ids and scan
// P's value range, keeping the rows whose entity is in the set (a semi-join):
//
//   FROM datoms AS t1 ... WHERE t1.a = 31 AND t1.v >= ?3 AND
//     mentat_in_eset((SELECT mentat_eset(t0.e) FROM datoms AS t0 WHERE t0.a = 30 AND ...),
//                    t1.e)
//
// SQLite evaluates the uncorrelated subquery once per statement run, so the set is built
// from the statement's own snapshot. D's entity column then reads as P's; D has no other
// binding, so every row and every answer is the same as the nested-loop plan's.
#include <algorithm>

#include "query/analyze.h"
#include "storage/format.h"

namespace mentat::query {

namespace {

// Below this many entities the nested loop's probes cost less than building a set.
constexpr double kMinSetRows = 256;
// A probe (a B-tree descent) costs about as much as reading this many index entries in
// order and testing them against the set (measured on the scale suite's q4: 0.45 us
// against 0.05 us to scan plus 0.05 us to test).
constexpr double kProbeToScan = 4;

// The items whose columns `e` refers to.
std::set<int> ItemsIn(const Expr& e) {
  std::set<int> out;
  e.Items(&out);
  return out;
}

// True when `e` reads only columns of `item` other than its entity, and no subquery.
bool OnlyOwnColumns(const Expr& e, int item) {
  std::set<int> blocks;
  e.Blocks(&blocks);
  if (!blocks.empty()) return false;
  if (e.Reads(item, "e")) return false;
  for (int i : ItemsIn(e))
    if (i != item) return false;
  return true;
}

bool ReadsDatoms(const Item& item) {
  return item.kind == Item::Kind::kPattern && item.variants.size() == 1 && !item.use_collapsed &&
         item.variants[0].table == "datoms" && item.index_hint.empty() && item.cached_from < 0 &&
         item.plan.attr >= 0 && item.plan.e == PlanInfo::Pos::kVar;
}

struct Rewriter {
  Unit* unit;
  const Schema& schema;
  const Stats& stats;

  // The rows P's own index reads when P drives; < 0 when P has no value to read by (a
  // constant, a variable bound before the block, or a comparison).
  double ScanRows(const Item& p, const std::set<std::string>& bound) const {
    const Attribute* attr = schema.attribute(p.plan.attr);
    if (!attr) return -1;
    double n = stats.Datoms(p.plan.attr);
    bool indexed = attr->value_indexed();
    if (p.plan.v == PlanInfo::Pos::kConst ||
        (p.plan.v == PlanInfo::Pos::kVar && bound.count(p.plan.v_var))) {
      if (!indexed) return n;
      return attr->unique != Unique::kNone ? 1 : n / stats.Distinct(p.plan.attr);
    }
    if (p.plan.v_range) return indexed ? n / 3 : n;
    return -1;
  }

  void Block(struct Block& block) {
    if (block.order.size() < 2) return;
    Item& d = unit->items[block.order[0]];
    Item& p = unit->items[block.order[1]];
    if (!ReadsDatoms(d) || !ReadsDatoms(p) || p.plan.e_var != d.plan.e_var) return;
    // D contributes its entity and nothing else.
    if (d.plan.binds != std::vector<std::string>{d.plan.e_var}) return;
    if (d.est < kMinSetRows) return;
    double scan = ScanRows(p, block.bound_on_entry);
    if (scan < 0 || scan > kProbeToScan * d.est) return;
    std::vector<Expr> own = d.conds;
    own.insert(own.end(), d.variants[0].conds.begin(), d.variants[0].conds.end());
    if (!d.index_term.empty()) own.push_back(d.index_term);
    for (const Expr& c : own)
      if (!OnlyOwnColumns(c, d.id)) return;

    std::string alias = "t" + std::to_string(d.id);
    Expr where = own.empty() ? Expr() : " WHERE " + Expr::Call(Fn::kAnd, own);
    p.conds.push_back(
        Expr::Call(Fn::kInEntitySet, {"(SELECT " + Expr::Call(Fn::kEntitySet, {alias + ".e"}) +
                                          " FROM datoms AS " + alias + where + ")",
                                      Col(p.id, "e")}));
    const Attribute* attr = schema.attribute(p.plan.attr);
    p.index_term = Col(p.id, "ix") + " " + unit->dialect->IndexTest(attr->value_indexed());
    d.variants[0].table.clear();
    d.variants[0].conds.clear();
    d.variants[0].cols["e"] = Col(p.id, "e");
    d.conds.clear();
    d.index_term.clear();
    d.set_for = p.id;
  }
};

}  // namespace

void UseEntitySets(Unit* unit, const Schema& schema, const Stats& stats) {
  std::set<int> branches;
  for (const Item& item : unit->items)
    if (item.kind == Item::Kind::kComposite)
      for (const Variant& v : item.variants) branches.insert(v.branch);
  Rewriter r{unit, schema, stats};
  for (size_t b = 0; b < unit->blocks.size(); ++b) {
    // A branch's items are spliced into its parent's arms: its first item drives nothing.
    if (branches.count(static_cast<int>(b)) || unit->blocks[b].correlated) continue;
    r.Block(unit->blocks[b]);
  }
}

}  // namespace mentat::query
