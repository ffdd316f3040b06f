// The cost model and the join_order pass: row estimates from per-attribute statistics
// (attr_stats, attr_values) and the schema (unique, cardinality); blocks of 3 to 10 items
// ordered by dynamic programming over subsets of placed items, larger ones greedily. The
// order is pinned in the SQL with the dialect's pinned join (sql.cc). README.md "plan".
#include <algorithm>
#include <cmath>
#include <limits>

#include "query/analyze.h"

namespace mentat::query {

namespace {

constexpr int kMaxArms = 64;
constexpr size_t kMaxDpItems = 10;  // join order by dynamic programming up to this many items

struct Planner {
  Unit* unit;
  const Schema& schema;
  const Stats& stats;
  const std::map<std::string, ViewShape>& shapes;
  const std::map<std::string, DbView>& views;
  const std::vector<RelSpec>& rels;
  bool use_planner;
  std::set<int> branch_blocks;

  // The fraction of datoms a since view keeps (1 when not a since view).
  double SinceFraction(const std::string& src) const {
    auto it = views.find(src);
    if (it == views.end() || !it->second.since) return 1;
    auto probe = stats.since_datoms.find(src);
    if (probe != stats.since_datoms.end())
      return std::clamp(probe->second / std::max(1.0, stats.total_datoms), 0.000001, 1.0);
    if (stats.last_tx <= ids::kTxStart) return 1;
    double txs = static_cast<double>(stats.last_tx - ids::kTxStart + 1);
    double window = static_cast<double>(stats.last_tx - *it->second.since);
    return std::clamp(window / txs, 0.0001, 1.0);
  }

  double AttrDatoms(Entid a) const { return stats.Datoms(a); }
  double AttrDistinct(Entid a) const { return stats.Distinct(a); }

  static bool Bound(const std::set<std::string>& b, PlanInfo::Pos pos, const std::string& v) {
    return pos == PlanInfo::Pos::kConst || (pos == PlanInfo::Pos::kVar && b.count(v));
  }

  double Estimate(const Item& item, const std::set<std::string>& bound,
                  const std::set<int>& placed) {
    const PlanInfo& p = item.plan;
    if (item.kind == Item::Kind::kComposite) {
      double sum = 0;
      for (const Variant& v : item.variants) sum += PlanBlock(v.branch, bound, placed);
      // Placed after all its variables are bound it only tests rows (EXISTS per branch).
      if (AsFilter(item, bound)) return std::min(1.0, sum);
      return std::max(1.0, sum);
    }
    if (item.kind != Item::Kind::kPattern) {
      double rows = p.fixed_rows < 0 ? 100 : p.fixed_rows;
      if (item.kind == Item::Kind::kRel || item.kind == Item::Kind::kGenerator) {
        bool any = false, all = !p.binds.empty();
        for (const auto& v : p.binds) {
          if (bound.count(v)) {
            any = true;
          } else {
            all = false;
          }
        }
        if (all) return 1;
        if (any) return std::max(1.0, std::sqrt(rows));
      }
      return rows;
    }
    bool eb = Bound(bound, p.e, p.e_var), vb = Bound(bound, p.v, p.v_var);
    double rows;
    double total = std::max(1.0, stats.total_datoms);
    if (p.attr >= 0) {
      const Attribute* a = schema.attribute(p.attr);
      double n = AttrDatoms(p.attr), d = AttrDistinct(p.attr);
      bool unique = a && a->unique != Unique::kNone;
      // Values per entity: one for cardinality one; for cardinality many the datoms per
      // distinct entity (a few when not counted yet).
      double fan = 1;
      if (a && a->many) fan = stats.FanOut(p.attr).value_or(std::max(1.0, std::min(4.0, n)));
      // The datoms holding a bound value: a constant's own count when it is one of the
      // attribute's common values, else an even share.
      double per_value = n / d;
      if (p.v_value && !unique) per_value = stats.ValueDatoms(p.attr, *p.v_value);
      // The fraction of an entity's values that a bound value or a range keeps: the
      // pattern then filters the rows so far (a selectivity below 1).
      double keep = unique ? 1 / n : per_value / n;
      if (eb && vb) {
        rows = std::min(1.0, fan * keep);
      } else if (eb && p.v_range) {
        rows = fan / 3;
      } else if (eb) {
        rows = fan;
      } else if (vb) {
        rows = unique ? 1 : std::max(1.0, per_value);
      } else if (p.v_range) {
        rows = std::max(1.0, n / 3);
      } else {
        rows = n;
      }
    } else {
      bool ab = Bound(bound, p.a, p.a_var);
      if (eb) {
        rows = ab ? 2 : 20;
      } else {
        rows = total;  // no index has the value first
      }
    }
    rows *= SinceFraction(p.src);
    if (p.fixed_rows >= 0) rows = std::min(rows, p.fixed_rows);
    return std::max(rows, 1e-9);
  }

  static bool AsFilter(const Item& item, const std::set<std::string>& bound) {
    if (item.kind != Item::Kind::kComposite || !item.filter_ok) return false;
    for (const auto& v : item.plan.binds)
      if (!bound.count(v)) return false;
    return true;
  }

  bool Eligible(const Item& item, const std::set<std::string>& bound,
                const std::set<int>& placed) const {
    for (const auto& v : item.plan.needs)
      if (!bound.count(v)) return false;
    for (int a : item.plan.after)
      if (!placed.count(a)) return false;
    return true;
  }

  // The variables an item reads or binds (for connectivity).
  std::set<std::string> VarsOf(const Item& item) const {
    const PlanInfo& p = item.plan;
    std::set<std::string> v(p.binds.begin(), p.binds.end());
    v.insert(p.needs.begin(), p.needs.end());
    if (p.e == PlanInfo::Pos::kVar) v.insert(p.e_var);
    if (p.v == PlanInfo::Pos::kVar) v.insert(p.v_var);
    if (p.a == PlanInfo::Pos::kVar) v.insert(p.a_var);
    return v;
  }

  // Whether the join order of `block` is chosen by dynamic programming (BestOrder): a
  // block of 3 to kMaxDpItems items, not a branch (planned again at every estimate of its
  // composite), whose composites have small branches.
  bool UseDp(int block_id) const {
    const Block& block = unit->blocks[block_id];
    if (!use_planner || block.items.size() < 3 || block.items.size() > kMaxDpItems ||
        branch_blocks.count(block_id))
      return false;
    for (int id : block.items) {
      const Item& item = unit->items[id];
      if (item.kind != Item::Kind::kComposite) continue;
      for (const Variant& v : item.variants)
        if (unit->blocks[v.branch].items.size() > 4) return false;
    }
    return true;
  }

  // The order of `block`'s items with the least estimated work: the sum over the steps of
  // the rows after each (C_out), over every subset of placed items (dynamic programming).
  // An item that shares no variable with those placed before it (a cross product) is a
  // candidate only when no connected one is.
  std::vector<int> BestOrder(int block_id, const std::set<std::string>& bound0,
                             const std::set<int>& placed0) {
    const Block& block = unit->blocks[block_id];
    const std::vector<int>& items = block.items;
    const size_t k = items.size(), n_masks = size_t{1} << k;
    std::set<int> mine(items.begin(), items.end());
    std::vector<std::set<std::string>> vars(k);
    for (size_t i = 0; i < k; ++i) vars[i] = VarsOf(unit->items[items[i]]);
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<double> cost(n_masks, inf), rows(n_masks, 0);
    std::vector<int> last(n_masks, -1);
    cost[0] = 0;
    rows[0] = 1;
    for (size_t mask = 0; mask + 1 < n_masks; ++mask) {
      if (cost[mask] == inf) continue;
      std::set<std::string> bound = bound0;
      bound.insert(block.bound_on_entry.begin(), block.bound_on_entry.end());
      std::set<int> placed = placed0;
      for (size_t i = 0; i < k; ++i) {
        if (!(mask >> i & 1)) continue;
        placed.insert(items[i]);
        const auto& b = unit->items[items[i]].plan.binds;
        bound.insert(b.begin(), b.end());
      }
      for (const auto& [var, deps] : block.expr_deps) {
        bool ok = true;
        for (int d : deps)
          if (mine.count(d) && !placed.count(d)) ok = false;
        if (ok) bound.insert(var);
      }
      std::vector<size_t> eligible, connected;
      for (size_t i = 0; i < k; ++i) {
        if (mask >> i & 1) continue;
        if (!Eligible(unit->items[items[i]], bound, placed)) continue;
        eligible.push_back(i);
        bool c = mask == 0;
        for (const auto& v : vars[i]) c = c || bound.count(v) > 0;
        if (c) connected.push_back(i);
      }
      if (eligible.empty())
        for (size_t i = 0; i < k; ++i)
          if (!(mask >> i & 1)) eligible.push_back(i);
      for (size_t i : connected.empty() ? eligible : connected) {
        double est = Estimate(unit->items[items[i]], bound, placed);
        double r = std::min(1e18, rows[mask] * est);
        double c = cost[mask] + r;
        size_t next = mask | (size_t{1} << i);
        if (c < cost[next]) {
          cost[next] = c;
          rows[next] = r;
          last[next] = static_cast<int>(i);
        }
      }
    }
    std::vector<int> order;
    for (size_t mask = n_masks - 1; mask && last[mask] >= 0; mask &= ~(size_t{1} << last[mask]))
      order.push_back(items[static_cast<size_t>(last[mask])]);
    std::reverse(order.begin(), order.end());
    if (order.size() != k) return {};
    return order;
  }

  // Orders `block`; returns its estimated rows.
  double PlanBlock(int block_id, std::set<std::string> bound, std::set<int> placed) {
    Block& block = unit->blocks[block_id];
    std::vector<int> chosen =
        UseDp(block_id) ? BestOrder(block_id, bound, placed) : std::vector<int>{};
    bound.insert(block.bound_on_entry.begin(), block.bound_on_entry.end());
    std::set<int> mine(block.items.begin(), block.items.end());
    auto close = [&]() {
      for (const auto& [var, deps] : block.expr_deps) {
        bool ok = true;
        for (int d : deps)
          if (mine.count(d) && !placed.count(d)) ok = false;
        if (ok) bound.insert(var);
      }
    };
    close();
    std::vector<int> remaining = block.items, order;
    double rows = 1;
    while (!remaining.empty()) {
      int best = -1;
      double best_est = 0;
      if (!chosen.empty()) {
        // The order dynamic programming chose: placed one by one as below.
        int want = chosen[order.size()];
        best = static_cast<int>(std::find(remaining.begin(), remaining.end(), want) -
                                remaining.begin());
        best_est = Estimate(unit->items[want], bound, placed);
      }
      for (size_t i = 0; i < remaining.size() && chosen.empty(); ++i) {
        const Item& item = unit->items[remaining[i]];
        if (!Eligible(item, bound, placed)) continue;
        double est = Estimate(item, bound, placed);
        if (best < 0 || (use_planner && est < best_est)) {
          best = static_cast<int>(i);
          best_est = est;
        }
        if (!use_planner) break;
      }
      if (best < 0) {
        best = 0;
        best_est = Estimate(unit->items[remaining[0]], bound, placed);
      }
      int id = remaining[static_cast<size_t>(best)];
      remaining.erase(remaining.begin() + best);
      Item& item = unit->items[id];
      if (item.kind == Item::Kind::kComposite) {
        item.exists_filter = AsFilter(item, bound);
        for (const Variant& v : item.variants) PlanBlock(v.branch, bound, placed);
      }
      // A pattern whose entity is known reads the primary key (e, a), next to the entity's
      // other datoms, not an attribute index. Decided at each placement: a branch is
      // placed again, with other variables bound, each time its composite is estimated.
      if (item.kind == Item::Kind::kPattern)
        item.index_term = Bound(bound, item.plan.e, item.plan.e_var) ? "" : item.index_term_written;
      item.est = best_est;
      order.push_back(id);
      placed.insert(id);
      for (const auto& v : item.plan.binds) bound.insert(v);
      close();
      rows = std::min(1e18, rows * best_est);
    }
    block.order = order;
    block.estimate = rows;
    return rows;
  }

  int Arms(int block_id) const {
    int n = 1;
    for (int id : unit->blocks[block_id].items) {
      const Item& item = unit->items[id];
      int k = 0;
      if (item.kind == Item::Kind::kComposite && item.exists_filter) {
        k = 1;
      } else if (item.kind == Item::Kind::kComposite) {
        for (const Variant& v : item.variants) k += Arms(v.branch);
      } else {
        k = item.use_collapsed ? 1 : static_cast<int>(item.variants.size());
      }
      n *= std::max(1, k);
      if (n > (1 << 20)) return n;
    }
    return n;
  }

  // Reads whole views through one UNION ALL subquery per pattern (innermost first) when
  // the arms of a block would be too many.
  void LimitArms(int block_id) {
    Block& block = unit->blocks[block_id];
    for (auto it = block.order.rbegin(); it != block.order.rend() && Arms(block_id) > kMaxArms;
         ++it) {
      Item& item = unit->items[*it];
      if (item.collapsed) item.use_collapsed = true;
    }
  }

  void SinceHint(int block_id) {
    Block& block = unit->blocks[block_id];
    if (block.order.empty()) return;
    Item& first = unit->items[block.order[0]];
    const PlanInfo& p = first.plan;
    if (first.kind != Item::Kind::kPattern || p.attr < 0 || first.variants.size() != 1) return;
    auto sh = shapes.find(p.src);
    if (sh == shapes.end() || !sh->second.since || sh->second.as_of || sh->second.history) return;
    std::set<std::string> entry = block.bound_on_entry;
    if (Bound(entry, p.e, p.e_var) || Bound(entry, p.v, p.v_var)) return;
    double window = SinceFraction(p.src) * std::max(1.0, stats.total_datoms);
    if (window < AttrDatoms(p.attr) / 2) first.index_hint = "datoms_tx";
  }
};

}  // namespace

void PlanUnit(Unit* unit, const Schema& schema, const Stats& stats,
              const std::map<std::string, ViewShape>& shapes,
              const std::map<std::string, DbView>& views, const std::vector<RelSpec>& rels,
              bool use_planner) {
  Planner p{unit, schema, stats, shapes, views, rels, use_planner, {}};
  for (const Item& item : unit->items)
    if (item.kind == Item::Kind::kComposite)
      for (const Variant& v : item.variants) p.branch_blocks.insert(v.branch);
  for (size_t b = 0; b < unit->blocks.size(); ++b) {
    if (p.branch_blocks.count(static_cast<int>(b))) continue;
    p.PlanBlock(static_cast<int>(b), {}, {});
  }
  for (size_t b = 0; b < unit->blocks.size(); ++b) {
    p.LimitArms(static_cast<int>(b));
    if (use_planner) p.SinceHint(static_cast<int>(b));
  }
}

Result<Stats> ReadStats(storage::Connection* conn, const std::map<std::string, DbView>& views) {
  Stats st;
  auto stmt = conn->Cached("SELECT a, datoms, distinct_values, distinct_entities FROM attr_stats");
  if (stmt.ok()) {
    for (;;) {
      MENTAT_ASSIGN_OR_RETURN(bool row, (*stmt)->Step());
      if (!row) break;
      AttrStats a;
      a.datoms = static_cast<double>((*stmt)->ColumnInt(1));
      a.distinct_values = static_cast<double>((*stmt)->ColumnInt(2));
      a.distinct_entities = static_cast<double>((*stmt)->ColumnInt(3));
      st.total_datoms += a.datoms;
      st.attrs[(*stmt)->ColumnInt(0)] = a;
    }
  }
  auto common = conn->Cached("SELECT a, v, datoms FROM attr_values");
  if (common.ok()) {
    for (;;) {
      MENTAT_ASSIGN_OR_RETURN(bool row, (*common)->Step());
      if (!row) break;
      auto it = st.attrs.find((*common)->ColumnInt(0));
      if (it != st.attrs.end())
        it->second.common.emplace_back(schema::Column(**common, 1),
                                       static_cast<double>((*common)->ColumnInt(2)));
    }
  }
  auto last = conn->QueryInt("SELECT value FROM meta WHERE key = 'last_tx'", 0);
  if (last.ok()) st.last_tx = *last;
  for (const auto& [src, view] : views) {
    if (!view.since) continue;
    // Bounded: past the cap a since view is as good as the whole attribute anyway.
    MENTAT_ASSIGN_OR_RETURN(
        auto probe,
        conn->Cached("SELECT count(*) FROM (SELECT 1 FROM datoms WHERE tx > ?1 LIMIT 200000)"));
    probe->BindInt(1, *view.since);
    MENTAT_ASSIGN_OR_RETURN(bool row, probe->Step());
    st.since_datoms[src] = row ? static_cast<double>(probe->ColumnInt(0)) : st.total_datoms;
  }
  return st;
}

}  // namespace mentat::query
