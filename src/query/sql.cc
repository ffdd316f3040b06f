// Pass 4: SQL text. A block becomes one SELECT per arm (a choice of variant for every
// item: the table a view pattern reads, the branch of a distributed `or`), joined with
// UNION [ALL]. Items are joined in the planned order with CROSS JOIN, which SQLite keeps.
#include <cstdlib>
#include <functional>
#include <optional>
#include <set>

#include "query/analyze.h"

namespace mentat::query {

namespace {

struct Arm {
  std::vector<std::pair<int, int>> from;  // (item, variant) in join order
  std::vector<int> blocks;                // blocks whose conditions apply
};

// A datoms or history column of ids (bigint on every engine): a UNION's column that is one
// of these in every arm needs no common type (Dialect::UnionColumn).
bool IdColumn(const std::string& col) {
  return col == "e" || col == "a" || col == "tx" || col == "rtx";
}

struct Emitter {
  const Unit& unit;
  bool pin;  // CROSS JOIN
  // While an arm's FROM ... WHERE is written: each of its items' place in the join order;
  // the items of enclosing statements, which come before them all, at -1.
  mutable std::map<int, int> place;

  // kEqIntValue as the form the planned order wants: the later item found by its index.
  // Unchanged when either side is not one item's column or neither item is placed.
  Fn EqIntValueForm(const std::vector<Expr>& args) const {
    const Expr::Part* v = args.size() == 2 ? args[0].AsColumn() : nullptr;
    const Expr::Part* x = args.size() == 2 ? args[1].AsColumn() : nullptr;
    if (!v || !x) return Fn::kEqIntValue;
    auto pv = place.find(v->id), px = place.find(x->id);
    if (pv == place.end() || px == place.end() || pv->second == px->second) return Fn::kEqIntValue;
    return pv->second > px->second ? Fn::kEqIntValueByValue : Fn::kEqIntValueByB;
  }

  const Variant& VariantOf(int item, int k) const {
    const Item& it = unit.items[item];
    if (it.use_collapsed && it.collapsed) return *it.collapsed;
    return it.variants[static_cast<size_t>(k)];
  }

  int VariantCount(int item) const {
    const Item& it = unit.items[item];
    return it.use_collapsed && it.collapsed ? 1 : static_cast<int>(it.variants.size());
  }

  // Every arm of a block: the product of its items' variants, composites expanding into
  // their branch's items, in depth-first order (variant 0 first). Iterative, and copying
  // state only where an item has a choice: a block of thousands of plain patterns costs
  // linear time and memory, never a frame per pattern.
  void Enumerate(std::vector<int> order, Arm start, std::vector<Arm>* out) const {
    struct State {
      std::vector<int> pending;  // items still to place, from `next` on
      size_t next = 0;
      Arm arm;
    };
    std::vector<State> stack;
    stack.push_back(State{std::move(order), 0, std::move(start)});
    while (!stack.empty()) {
      State s = std::move(stack.back());
      stack.pop_back();
      while (s.next < s.pending.size()) {
        int id = s.pending[s.next];
        const Item& it = unit.items[id];
        if (it.kind == Item::Kind::kComposite && it.exists_filter) {
          s.arm.from.push_back({id, -1});  // a test: (EXISTS branch OR ...)
          ++s.next;
          continue;
        }
        if (VariantCount(id) != 1 || it.kind == Item::Kind::kComposite) break;
        s.arm.from.push_back({id, 0});
        ++s.next;
      }
      if (s.next == s.pending.size()) {
        out->push_back(std::move(s.arm));
        continue;
      }
      int id = s.pending[s.next];
      const Item& item = unit.items[id];
      for (int k = VariantCount(id) - 1; k >= 0; --k) {
        State t;
        t.arm = s.arm;
        t.arm.from.push_back({id, k});
        if (item.kind == Item::Kind::kComposite) {
          int b = item.variants[static_cast<size_t>(k)].branch;
          t.arm.blocks.push_back(b);
          const auto& inner = unit.blocks[b].order;
          t.pending.assign(inner.begin(), inner.end());
          t.pending.insert(t.pending.end(), s.pending.begin() + static_cast<long>(s.next) + 1,
                           s.pending.end());
        } else {
          t.pending = s.pending;
          t.next = s.next + 1;
        }
        stack.push_back(std::move(t));
      }
    }
  }

  std::vector<Arm> Arms(int block) const {
    std::vector<Arm> out;
    Arm start;
    start.blocks.push_back(block);
    Enumerate(unit.blocks[block].order, start, &out);
    return out;
  }

  // The SQL text of `e`; `assign` maps items to their chosen variant.
  std::string Resolve(const Expr& e, const std::map<int, int>& assign) const {
    std::string out;
    for (const Expr::Part& p : e.parts()) {
      switch (p.kind) {
        case Expr::Part::Kind::kText:
          out += p.text;
          break;
        case Expr::Part::Kind::kColumn: {
          auto it = assign.find(p.id);
          if (it != assign.end() && it->second >= 0) {
            const Variant& v = VariantOf(p.id, it->second);
            auto ov = v.cols.find(p.text);
            if (ov != v.cols.end()) {
              out += Resolve(ov->second, assign);
              break;
            }
          }
          out += "t" + std::to_string(p.id) + "." + p.text;
          break;
        }
        case Expr::Part::Kind::kExists:
          out += "(" + Exists(p.id, assign) + ")";
          break;
        case Expr::Part::Kind::kGenerator:
          out += Generator(p.id, assign);
          break;
        case Expr::Part::Kind::kCall: {
          std::vector<std::string> args;
          args.reserve(p.args.size());
          for (const Expr& a : p.args) args.push_back(Resolve(a, assign));
          out += unit.dialect->Call(p.fn == Fn::kEqIntValue ? EqIntValueForm(p.args) : p.fn, args);
          break;
        }
      }
    }
    return out;
  }

  // The table column `e` is in an arm (through the arm's variants' column overrides), or
  // "" when it is not one column.
  std::string FinalColumn(const Expr& e, const std::map<int, int>& assign) const {
    const Expr::Part* p = e.AsColumn();
    if (!p) return "";
    auto it = assign.find(p->id);
    if (it != assign.end() && it->second >= 0) {
      const Variant& v = VariantOf(p->id, it->second);
      auto ov = v.cols.find(p->text);
      if (ov != v.cols.end()) return FinalColumn(ov->second, assign);
    }
    return p->text;
  }

  // Per column of a UNION of `arms` (their assignments): whether it needs a common type,
  // that is whether some arm reads it from other than an id column.
  template <typename Columns>
  std::vector<bool> NeedsUnionType(const Columns& columns,
                                   const std::vector<std::map<int, int>>& assigns) const {
    std::vector<bool> out;
    for (const Expr& c : columns) {
      bool ids = true;
      for (const auto& assign : assigns) ids = ids && IdColumn(FinalColumn(c, assign));
      out.push_back(assigns.size() > 1 && !ids);
    }
    return out;
  }

  // FROM ... WHERE ... of one arm.
  std::string FromWhere(const Arm& arm, std::map<int, int>* assign) const {
    for (const auto& [id, k] : arm.from) (*assign)[id] = k;
    std::map<int, int> enclosing = place;
    for (auto& [id, at] : place) at = -1;
    for (size_t i = 0; i < arm.from.size(); ++i) place[arm.from[i].first] = static_cast<int>(i);
    struct Restore {
      std::map<int, int>& place;
      std::map<int, int> saved;
      ~Restore() { place = std::move(saved); }
    } restore{place, std::move(enclosing)};
    std::string from, where;
    auto add_where = [&](const Expr& x) {
      where += (where.empty() ? " WHERE " : " AND ") + Resolve(x, *assign);
    };
    for (const auto& [id, k] : arm.from) {
      const Item& item = unit.items[id];
      if (k < 0) {
        Expr test;
        for (const Variant& b : item.variants)
          test += (test.empty() ? "(EXISTS " : " OR EXISTS ") + ExistsOf(b.branch);
        add_where(test + ")");
        for (const auto& x : item.conds) add_where(x);
        continue;
      }
      const Variant& v = VariantOf(id, k);
      if (!v.table.empty()) {
        if (!from.empty()) from += pin ? unit.dialect->PinnedJoin() : ", ";
        from += Resolve(v.table, *assign) + " AS t" + std::to_string(id);
      }
      bool hinted = !v.table.empty() && !item.index_hint.empty() && !item.use_collapsed;
      if (hinted) {
        std::string hint = unit.dialect->IndexHint(item.index_hint);
        if (!hint.empty()) from += " " + hint;
      }
      if (!item.index_term.empty() && !hinted) add_where(item.index_term);
      for (const auto& x : item.conds) add_where(x);
      for (const auto& x : v.conds) add_where(x);
    }
    for (int b : arm.blocks)
      for (const auto& x : unit.blocks[b].where) add_where(x);
    return (from.empty() ? std::string() : " FROM " + from) + where;
  }

  std::string Exists(int block, const std::map<int, int>& outer) const {
    std::string sql;
    for (const Arm& arm : Arms(block)) {
      std::map<int, int> assign = outer;
      if (!sql.empty()) sql += " UNION ALL ";
      sql += "SELECT 1" + FromWhere(arm, &assign);
    }
    return sql;
  }

  std::string Generator(int block, const std::map<int, int>& outer) const {
    const std::vector<Arm> arms = Arms(block);
    std::vector<std::map<int, int>> assigns(arms.size(), outer);
    std::vector<std::string> fws;
    for (size_t k = 0; k < arms.size(); ++k) fws.push_back(FromWhere(arms[k], &assigns[k]));
    std::vector<Expr> outputs;
    for (const auto& [name, e] : unit.blocks[block].outputs) outputs.push_back(e);
    const std::vector<bool> typed = NeedsUnionType(outputs, assigns);
    std::string sql;
    for (size_t k = 0; k < arms.size(); ++k) {
      std::string cols;
      size_t i = 0;
      for (const auto& [name, e] : unit.blocks[block].outputs) {
        std::string x = Resolve(e, assigns[k]);
        cols += (cols.empty() ? "" : ", ") + (typed[i++] ? unit.dialect->UnionColumn(x) : x) +
                " AS " + name;
      }
      if (!sql.empty()) sql += " UNION ";
      sql += "SELECT DISTINCT " + cols + fws[k];
    }
    return sql;
  }
};

}  // namespace

std::string EmitSelect(const Unit& unit, int block, const SelectSpec& spec, bool pin) {
  Emitter em{unit, pin, {}};
  std::vector<Arm> arms = em.Arms(block);
  std::vector<std::map<int, int>> assigns(arms.size());
  std::vector<std::string> fws;
  for (size_t k = 0; k < arms.size(); ++k) fws.push_back(em.FromWhere(arms[k], &assigns[k]));
  const std::vector<bool> typed = em.NeedsUnionType(spec.columns, assigns);
  std::string sql;
  for (size_t k = 0; k < arms.size(); ++k) {
    const std::map<int, int>& assign = assigns[k];
    const std::string& fw = fws[k];
    std::string cols;
    for (size_t i = 0; i < spec.columns.size(); ++i) {
      std::string x = em.Resolve(spec.columns[i], assign);
      cols += (i ? ", " : "") + (typed[i] ? unit.dialect->UnionColumn(x) : x) + " AS c" +
              std::to_string(i);
    }
    if (cols.empty()) cols = "1";
    if (!sql.empty()) sql += spec.distinct ? " UNION " : " UNION ALL ";
    sql += std::string("SELECT ") +
           (spec.distinct && arms.size() == 1 && !spec.in_union ? "DISTINCT " : "") + cols + fw;
  }
  return sql;
}

std::string ShiftParams(const std::string& sql, int offset) {
  std::string out;
  out.reserve(sql.size() + 16);
  for (size_t i = 0; i < sql.size(); ++i) {
    char c = sql[i];
    if (c == '\'' || c == '"') {
      // A quoted literal or identifier, its quote doubled inside.
      size_t j = i + 1;
      for (; j < sql.size(); ++j) {
        if (sql[j] != c) continue;
        if (j + 1 < sql.size() && sql[j + 1] == c) {
          ++j;
          continue;
        }
        break;
      }
      out.append(sql, i, j - i + 1);
      i = j;
      continue;
    }
    if (c == '?' && i + 1 < sql.size() && sql[i + 1] >= '0' && sql[i + 1] <= '9') {
      size_t j = i + 1;
      long n = 0;
      while (j < sql.size() && sql[j] >= '0' && sql[j] <= '9') n = n * 10 + (sql[j++] - '0');
      out += "?" + std::to_string(n + offset);
      i = j - 1;
      continue;
    }
    out += c;
  }
  return out;
}

namespace {

// The items of `in` referenced by `e`, through the blocks its EXISTS and generator
// subqueries read too.
void Refs(const Unit& unit, const Expr& e, const std::set<int>& in, std::set<int>* out,
          int depth = 0) {
  for (const Expr::Part& p : e.parts()) {
    if (p.kind == Expr::Part::Kind::kColumn) {
      if (in.count(p.id)) out->insert(p.id);
    } else if (p.kind == Expr::Part::Kind::kCall) {
      for (const Expr& a : p.args) Refs(unit, a, in, out, depth);
    } else if (p.kind != Expr::Part::Kind::kText && depth < 32) {
      const Block& b = unit.blocks[static_cast<size_t>(p.id)];
      for (const auto& w : b.where) Refs(unit, w, in, out, depth + 1);
      for (int id : b.items) {
        const Item& it = unit.items[static_cast<size_t>(id)];
        for (const auto& c : it.conds) Refs(unit, c, in, out, depth + 1);
        for (const Variant& v : it.variants) {
          for (const auto& c : v.conds) Refs(unit, c, in, out, depth + 1);
          for (const auto& [k, c] : v.cols) Refs(unit, c, in, out, depth + 1);
        }
      }
    }
  }
}

}  // namespace

std::optional<std::string> EmitPrefixCount(const Unit& unit, size_t k) {
  Unit u = unit;
  Block& top = u.blocks[0];
  if (k > top.order.size()) return std::nullopt;
  std::set<int> all(top.items.begin(), top.items.end());
  std::set<int> kept(top.order.begin(), top.order.begin() + static_cast<long>(k));
  std::set<int> dropped;
  for (int id : all)
    if (!kept.count(id)) dropped.insert(id);
  top.order.resize(k);
  auto keep = [&](const Expr& e) {
    std::set<int> r;
    Refs(u, e, dropped, &r);
    return r.empty();
  };
  auto filter = [&](std::vector<Expr>* v) {
    std::vector<Expr> out;
    for (auto& e : *v)
      if (keep(e)) out.push_back(std::move(e));
    *v = std::move(out);
  };
  for (Block& b : u.blocks) filter(&b.where);
  for (Item& it : u.items) {
    filter(&it.conds);
    if (!keep(it.index_term)) it.index_term.clear();
    for (Variant& v : it.variants) {
      filter(&v.conds);
      // A kept item that reads a dropped one's columns (an entity set, a cached value):
      // this prefix has no SQL of its own.
      for (const auto& [c, e] : v.cols)
        if (kept.count(it.id) && !keep(e)) return std::nullopt;
      if (kept.count(it.id) && !keep(v.table)) return std::nullopt;
    }
  }
  return "SELECT count(*) FROM (" + EmitSelect(u, 0, SelectSpec{{"1"}, false, "", ""}, true) + ")";
}

int CountArms(const Unit& unit, int block) {
  Emitter em{unit, true, {}};
  return static_cast<int>(em.Arms(block).size());
}

std::vector<std::string> DescribeOrder(const Unit& unit, int block) {
  std::vector<std::string> out;
  std::function<void(int, const std::string&)> walk = [&](int b, const std::string& indent) {
    for (int id : unit.blocks[b].order) {
      const Item& item = unit.items[id];
      char est[64];
      // Below one row the estimate is a filter's selectivity.
      snprintf(est, sizeof est, item.est >= 1 || item.est == 0 ? "%.0f" : "%.2g", item.est);
      out.push_back(
          indent + "t" + std::to_string(id) + " " + edn::Print(item.form) + "  (est. " + est +
          " rows" +
          (item.cached_from >= 0
               ? "; from the attribute cache by t" + std::to_string(item.cached_from) + ".e"
               : "") +
          (item.probe_from >= 0
               ? "; as of t, one scalar read by t" + std::to_string(item.probe_from) + ".e"
               : "") +
          (item.set_for >= 0
               ? "; read once as a set of entities filtering t" + std::to_string(item.set_for)
               : "") +
          ")");
      if (item.kind == Item::Kind::kComposite) {
        if (item.exists_filter)
          out.push_back(indent + "  a test of the rows so far, EXISTS per branch:");
        for (size_t k = 0; k < item.variants.size(); ++k) {
          out.push_back(indent + "  branch " + std::to_string(k + 1) + ":");
          walk(item.variants[k].branch, indent + "    ");
        }
      }
    }
  };
  walk(block, "");
  return out;
}

}  // namespace mentat::query
