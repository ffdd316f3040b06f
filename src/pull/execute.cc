// Pull execution, batched by level.
//
// Every entity to pull becomes a node: (entity, pattern, parent). Nodes of one level are
// grouped by pattern, and each group reads the attributes of all its entities with one
// SQL statement (driven by a JSON array of the entities, README.md "Execution") and its
// reverse attributes with another, so the number of statements grows with the depth and
// size of the pattern, never with the number of entities. Refs that need more pulling (nested
// patterns, recursion, component expansion) become nodes of the next level. When every
// level is read, values are built bottom-up: children always come after their parents in
// `nodes_`, so one backward pass builds every map without recursion (deep recursive pulls
// cannot overflow the stack).
#include <algorithm>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "pull/pull.h"
#include "schema/codec.h"
#include "schema/names.h"

namespace mentat::pull {

namespace {

// A level of at most this many entities across several patterns reads their forward
// datoms with one statement (Executor::RunLevel).
constexpr size_t kSharedLevelEntities = 4096;
// ... with a UNION ALL arm per pattern, for at most this many patterns (SQLite allows 500
// arms in a compound SELECT).
constexpr size_t kSharedLevelArms = 64;

const edn::Value& DbIdKey() {
  static const edn::Value* k = new edn::Value(edn::Value::Keyword("db/id"));
  return *k;
}

// A ref pulled without a pattern: {:db/id e}, with :db/ident too when the entity has one
// (an enum value, an attribute), as Datomic's pull gives it.
edn::Value IdMap(const Schema& schema, Entid e) {
  static const edn::Value* ident_key = new edn::Value(edn::Value::Keyword("db/ident"));
  if (const std::string* ident = schema.ident(e))
    return edn::Value::Map(
        {{DbIdKey(), edn::Value::Int(e)}, {*ident_key, edn::Value::Keyword(*ident)}});
  return edn::Value::Map({{DbIdKey(), edn::Value::Int(e)}});
}

// [*] with :db/id: how component entities are expanded.
const Pattern& ExpandPattern() {
  static const Pattern* p = [] {
    auto* x = new Pattern();
    x->wildcard = true;
    x->db_id_key = DbIdKey();
    return x;
  }();
  return *p;
}

// One datom read for a group. Forward: (e, a, v). Reverse: e is the entity pointed at,
// v the entity pointing at it (as an integer).
struct Row {
  Entid e;
  Entid a;
  edn::Value v;
  uint32_t arm = 0;  // the statement arm (group) that read it, when several did
};

std::string JsonIds(const std::vector<Entid>& ids) {
  std::string s = "[";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(ids[i]);
  }
  return s + "]";
}

std::string InList(const std::vector<Entid>& ids) {
  if (ids.size() == 1) return " = " + std::to_string(ids[0]);
  std::string s = " IN (";
  for (size_t i = 0; i < ids.size(); ++i) s += (i ? ", " : "") + std::to_string(ids[i]);
  return s + ")";
}

// Entities (sorted, distinct) and the attributes to read of them (all when empty).
struct Group {
  std::vector<Entid> eids;
  std::vector<Entid> attrs;
};

// Streams the rows of `eids` (sorted, distinct), forward or reverse, restricted to
// `attrs` when not empty: in entity order, one entity's rows grouped by attribute, each
// attribute's values in index order.
class Cursor {
 public:
  Status Open(storage::Connection* c, const Schema& schema, const ResolvedView& view, bool reverse,
              const std::vector<Entid>& eids, const std::vector<Entid>& attrs) {
    return OpenGroups(c, schema, view, reverse, {{eids, attrs}});
  }

  // Several (entities, attributes) groups read with one statement, their rows merged in
  // order: each group's entities by its own attributes only (not their cross product).
  // Rows two groups both read come twice, adjacent. An empty attribute list reads every
  // attribute.
  Status OpenGroups(storage::Connection* c, const Schema& schema, const ResolvedView& view,
                    bool reverse, const std::vector<Group>& groups) {
    schema_ = &schema;
    reverse_ = reverse;
    std::vector<const Group*> live;
    for (const Group& g : groups)
      if (!g.eids.empty()) live.push_back(&g);
    if (live.empty()) {
      done_ = true;
      return Status::OK();
    }
    // Forward reads of the current datoms on SQLite are driven by the entity arrays
    // (views::CurrentOfEntities): already in entity order, without the ORDER BY's merge
    // or the temporary index `e IN (SELECT ...)` builds. Several arms are concatenated
    // and put in order by TakeAll. One entity alone keeps `e = ?1`.
    driven_ = !reverse && !c->is_pg() && !view.shape().filtered() &&
              !(live.size() == 1 && live[0]->eids.size() == 1);
    arms_ = live.size();
    const char* ecol = reverse ? "v" : "e";
    std::string sql = driven_ ? "" : reverse ? "SELECT v, a, e FROM (" : "SELECT e, a, v FROM (";
    for (size_t k = 0; k < live.size() && driven_; ++k) {
      const Group& g = *live[k];
      sql += (k ? " UNION ALL " : "") + CurrentOfEntities("?" + std::to_string(k + 1),
                                                          g.attrs.empty() ? "" : InList(g.attrs),
                                                          arms_ > 1 ? std::to_string(k) : "");
    }
    for (size_t k = 0; k < live.size() && !driven_; ++k) {
      const Group& g = *live[k];
      const std::string param = "?" + std::to_string(k + 1);
      std::string where =
          g.eids.size() == 1
              ? std::string(ecol) + " = " + param
              : std::string(ecol) + " IN (SELECT value FROM json_each(" + param + "))";
      if (!g.attrs.empty())
        where = (reverse ? "a" + InList(g.attrs) + " AND " : "") + where +
                (reverse ? "" : " AND a" + InList(g.attrs));
      // Reverse attributes are refs, whose values are indexed.
      AttrIndex index = !reverse          ? AttrIndex::kNone
                        : g.attrs.empty() ? AttrIndex::kBoth
                                          : AttrIndex::kAvet;
      sql += (k ? " UNION ALL " : "") + ViewSql(view, where, index);
    }
    if (!driven_) sql += reverse ? ") ORDER BY v, a, e" : ") ORDER BY e, a, v";
    // Statements over the current view are cached; as-of and since statements embed their
    // time point, so they are prepared per call rather than piling up in the cache.
    if (!view.as_of && !view.since) {
      MENTAT_ASSIGN_OR_RETURN(auto cs, c->Cached(sql));
      cached_.emplace(std::move(cs));
      s_ = &**cached_;
    } else {
      MENTAT_ASSIGN_OR_RETURN(fresh_, c->Prepare(sql));
      s_ = &fresh_;
    }
    for (size_t k = 0; k < live.size(); ++k) {
      const int param = static_cast<int>(k + 1);
      if (live[k]->eids.size() == 1 && !driven_) {
        s_->BindInt(param, live[k]->eids[0]);
      } else {
        s_->BindText(param, JsonIds(live[k]->eids));
      }
    }
    return Advance();
  }

  // Appends to `out` the rows of entity `e`, skipping those of smaller entities.
  // REQUIRES: ascending `e` from call to call.
  Status Take(Entid e, std::vector<Row>* out) {
    while (!done_ && pending_.e < e) MENTAT_RETURN_IF_ERROR(Advance());
    while (!done_ && pending_.e == e) {
      out->push_back(std::move(pending_));
      MENTAT_RETURN_IF_ERROR(Advance());
    }
    return Status::OK();
  }

  // Appends every row to `out`, in the order Open gives (several driven arms: in (e, a)
  // order). A datom two groups both read comes twice, adjacent (once from driven arms).
  Status TakeAll(std::vector<Row>* out) {
    const size_t from = out->size();
    while (!done_) {
      out->push_back(std::move(pending_));
      MENTAT_RETURN_IF_ERROR(Advance());
    }
    if (driven_ && arms_ > 1) {
      // The arms came one after another, each in (e, a, v) order: a stable sort by
      // (e, a, arm) orders them and keeps each (e, a)'s values in index order; the
      // values of an (e, a) that several arms read (the same datoms) are kept once, from
      // its first arm.
      auto begin = out->begin() + static_cast<std::ptrdiff_t>(from);
      std::stable_sort(begin, out->end(), [](const Row& x, const Row& y) {
        return std::tie(x.e, x.a, x.arm) < std::tie(y.e, y.a, y.arm);
      });
      auto keep = begin;
      for (auto it = begin; it != out->end();) {
        auto run = it;
        while (run != out->end() && run->e == it->e && run->a == it->a && run->arm == it->arm)
          ++run;
        for (; it != run; ++it, ++keep)
          if (keep != it) *keep = std::move(*it);
        while (it != out->end() && it->e == (keep - 1)->e && it->a == (keep - 1)->a) ++it;
      }
      out->erase(keep, out->end());
    }
    return Status::OK();
  }

 private:
  Status Advance() {
    MENTAT_ASSIGN_OR_RETURN(bool row, s_->Step());
    if (!row) {
      done_ = true;
      return Status::OK();
    }
    pending_.e = s_->ColumnInt(0);
    pending_.a = s_->ColumnInt(1);
    if (reverse_) {
      pending_.v = edn::Value::Int(s_->ColumnInt(2));
      return Status::OK();
    }
    if (pending_.a != last_a_) {
      const Attribute* attr = schema_->attribute(pending_.a);
      type_ = attr ? attr->type : ValueType::kLong;
      last_a_ = pending_.a;
    }
    pending_.v = schema::ColumnValue(*s_, 2, type_);
    if (driven_ && arms_ > 1) pending_.arm = static_cast<uint32_t>(s_->ColumnInt(3));
    return Status::OK();
  }

  const Schema* schema_ = nullptr;
  bool reverse_ = false;
  storage::Statement fresh_;
  std::optional<storage::CachedStatement> cached_;
  storage::Statement* s_ = nullptr;
  bool done_ = false;
  bool driven_ = false;  // views::CurrentOfEntities arms, not in order across arms
  size_t arms_ = 0;
  Row pending_{0, 0, {}};
  Entid last_a_ = -1;
  ValueType type_ = ValueType::kLong;
};

Status FetchRows(storage::Connection* c, const Schema& schema, const ResolvedView& view,
                 bool reverse, const std::vector<Entid>& eids, const std::vector<Entid>& attrs,
                 std::vector<Row>* out) {
  Cursor cursor;
  MENTAT_RETURN_IF_ERROR(cursor.Open(c, schema, view, reverse, eids, attrs));
  return cursor.TakeAll(out);
}

// For each of `eids` (sorted, distinct), the range of its rows in `rows` (sorted by e).
std::vector<std::pair<size_t, size_t>> Ranges(const std::vector<Entid>& eids,
                                              const std::vector<Row>& rows) {
  std::vector<std::pair<size_t, size_t>> out(eids.size(), {0, 0});
  size_t r = 0;
  for (size_t i = 0; i < eids.size(); ++i) {
    while (r < rows.size() && rows[r].e < eids[i]) ++r;
    size_t b = r;
    while (r < rows.size() && rows[r].e == eids[i]) ++r;
    out[i] = {b, r};
  }
  return out;
}

class Executor {
 public:
  Executor(storage::Connection* c, const Schema& schema, const ResolvedView& view,
           const CheckFn& check)
      : c_(c), schema_(schema), view_(view), check_(check) {}

  Result<std::vector<edn::Value>> Run(const Pattern& pattern, const std::vector<Entid>& eids,
                                      const std::vector<ForwardDatom>* first_level) {
    std::unordered_map<Entid, size_t> root_of;
    std::vector<size_t> roots, level;
    for (Entid e : eids) {
      auto [it, fresh] = root_of.emplace(e, nodes_.size());
      if (fresh) {
        nodes_.push_back(Node{e, &pattern, -1, {}, {}, {}});
        level.push_back(it->second);
      }
      roots.push_back(it->second);
    }
    for (int depth = 0; !level.empty(); ++depth) {
      if (depth > kMaxPullLevels) return TooDeep(level);
      if (check_) MENTAT_RETURN_IF_ERROR(check_());
      std::vector<size_t> next;
      if (depth == 0 && first_level) {
        // The roots' datoms, read already: their forward rows for the one pattern.
        std::vector<Row> rows;
        rows.reserve(first_level->size());
        for (const ForwardDatom& d : *first_level) rows.push_back(Row{d.e, d.a, d.v});
        MENTAT_RETURN_IF_ERROR(RunGroup(pattern, level, &next, &rows));
      } else {
        MENTAT_RETURN_IF_ERROR(RunLevel(level, &next));
      }
      level = std::move(next);
    }
    std::vector<edn::Value> values = Assemble();
    std::vector<edn::Value> out;
    out.reserve(roots.size());
    for (size_t r : roots) out.push_back(values[r]);
    return out;
  }

 private:
  struct Slot {
    edn::Value key;
    bool many;
    std::vector<size_t> kids;  // child nodes (shared between parents when path-independent)
  };
  struct MemoKey {
    Entid e;
    const Pattern* pat;
    bool operator==(const MemoKey& o) const { return e == o.e && pat == o.pat; }
  };
  struct MemoHash {
    size_t operator()(const MemoKey& k) const {
      return std::hash<Entid>()(k.e) * 31 + std::hash<const void*>()(k.pat);
    }
  };
  struct Node {
    Entid e;
    const Pattern* pat;  // nullptr: a repeated entity, pulled as {:db/id e}
    int64_t parent;
    std::vector<std::pair<const AttrSpec*, int64_t>> depth;  // recursion depth per spec
    edn::MapEntries entries;
    std::vector<Slot> slots;
  };

  Status RunLevel(const std::vector<size_t>& level, std::vector<size_t>* next) {
    // Nodes of the next level are shared per (entity, pattern) when the pattern allows:
    // many issues with one assignee pull the assignee once. Only within a level, so every
    // child still comes after all of its parents in nodes_.
    memo_.clear();
    std::vector<const Pattern*> order;
    std::unordered_map<const Pattern*, std::vector<size_t>> groups;
    for (size_t n : level) {
      const Pattern* p = nodes_[n].pat;
      auto& g = groups[p];
      if (g.empty()) order.push_back(p);
      g.push_back(n);
    }
    // Several patterns at one level (the refs of a nested pull: an assignee's name, a
    // parent's title, labels' names) read their forward datoms with one statement, when
    // the level is small enough to hold: each pattern's entities by its own attributes
    // (a UNION ALL arm per pattern), or, with a wildcard among them, every attribute of
    // all their entities.
    std::optional<std::vector<Row>> shared;
    if (order.size() > 1) {
      std::vector<Group> parts;
      std::vector<Entid> all;
      bool wildcard = false;
      for (const Pattern* p : order) {
        if (!p->wildcard && p->forward_attrs.empty()) continue;
        wildcard = wildcard || p->wildcard;
        Group g;
        for (size_t n : groups[p]) g.eids.push_back(nodes_[n].e);
        std::sort(g.eids.begin(), g.eids.end());
        g.eids.erase(std::unique(g.eids.begin(), g.eids.end()), g.eids.end());
        g.attrs = p->forward_attrs;
        std::sort(g.attrs.begin(), g.attrs.end());
        g.attrs.erase(std::unique(g.attrs.begin(), g.attrs.end()), g.attrs.end());
        all.insert(all.end(), g.eids.begin(), g.eids.end());
        parts.push_back(std::move(g));
      }
      std::sort(all.begin(), all.end());
      all.erase(std::unique(all.begin(), all.end()), all.end());
      if (!all.empty() && all.size() <= kSharedLevelEntities) {
        if (wildcard) {
          parts = {Group{all, {}}};
        } else if (parts.size() > kSharedLevelArms) {
          Group one{all, {}};
          for (const Group& g : parts)
            one.attrs.insert(one.attrs.end(), g.attrs.begin(), g.attrs.end());
          std::sort(one.attrs.begin(), one.attrs.end());
          one.attrs.erase(std::unique(one.attrs.begin(), one.attrs.end()), one.attrs.end());
          parts = {std::move(one)};
        }
        shared.emplace();
        Cursor cursor;
        MENTAT_RETURN_IF_ERROR(cursor.OpenGroups(c_, schema_, view_, false, parts));
        MENTAT_RETURN_IF_ERROR(cursor.TakeAll(&*shared));
        // Drop the second of a datom two patterns both read.
        if (parts.size() > 1)
          shared->erase(std::unique(shared->begin(), shared->end(),
                                    [](const Row& x, const Row& y) {
                                      return x.e == y.e && x.a == y.a && x.v == y.v;
                                    }),
                        shared->end());
      }
    }
    for (const Pattern* p : order)
      MENTAT_RETURN_IF_ERROR(RunGroup(*p, groups[p], next, shared ? &*shared : nullptr));
    return Status::OK();
  }

  // Reads the group's forward rows from `shared` (the level's rows, in (e, a, v) order)
  // when given, else with a statement of its own.
  Status RunGroup(const Pattern& p, const std::vector<size_t>& members, std::vector<size_t>* next,
                  const std::vector<Row>* shared) {
    // Members in entity order; forward rows stream in that order, one entity at a time, so
    // a large batch never holds all of its rows at once.
    std::vector<std::pair<Entid, size_t>> order;
    order.reserve(members.size());
    for (size_t n : members) order.emplace_back(nodes_[n].e, n);
    std::sort(order.begin(), order.end());
    std::vector<Entid> eids;
    eids.reserve(order.size());
    for (const auto& [e, n] : order)
      if (eids.empty() || eids.back() != e) eids.push_back(e);
    std::vector<Row> rev;
    if (!p.reverse_attrs.empty()) {
      MENTAT_RETURN_IF_ERROR(FetchRows(c_, schema_, view_, true, eids, p.reverse_attrs, &rev));
    }
    auto rev_ranges = Ranges(eids, rev);
    Cursor fwd;
    bool read_forward = p.wildcard || !p.forward_attrs.empty();
    std::vector<std::pair<size_t, size_t>> shared_ranges;
    if (read_forward && shared) {
      shared_ranges = Ranges(eids, *shared);
    } else if (read_forward) {
      MENTAT_RETURN_IF_ERROR(fwd.Open(c_, schema_, view_, false, eids,
                                      p.wildcard ? std::vector<Entid>{} : p.forward_attrs));
    }
    auto wanted = [&](Entid a) {
      return p.wildcard ||
             std::find(p.forward_attrs.begin(), p.forward_attrs.end(), a) != p.forward_attrs.end();
    };
    std::vector<Row> cur;
    size_t m = 0;
    for (size_t i = 0; i < eids.size(); ++i) {
      if (check_ && i % 1024 == 1023) MENTAT_RETURN_IF_ERROR(check_());
      cur.clear();
      if (read_forward && shared) {
        for (size_t r = shared_ranges[i].first; r < shared_ranges[i].second; ++r)
          if (wanted((*shared)[r].a)) cur.push_back((*shared)[r]);
      } else if (read_forward) {
        MENTAT_RETURN_IF_ERROR(fwd.Take(eids[i], &cur));
      }
      for (; m < order.size() && order[m].first == eids[i]; ++m) {
        bool last = m + 1 == order.size() || order[m + 1].first != eids[i];
        Fill(order[m].second, p, &cur, last, rev, rev_ranges[i], next);
      }
    }
    return Status::OK();
  }

  // The implicit spec a wildcard uses for attribute `a`.
  const AttrSpec* WildcardSpec(Entid a) {
    auto it = wildcard_specs_.find(a);
    if (it != wildcard_specs_.end()) return &it->second;
    AttrSpec s;
    const Attribute* attr = schema_.attribute(a);
    s.a = a;
    if (attr) {
      s.type = attr->type;
      s.many = attr->many;
      s.component = attr->component && attr->type == ValueType::kRef;
      s.expand = s.component;
      s.key = edn::Value::Keyword(attr->ident);
    } else {
      s.key = edn::Value::Int(a);
    }
    if (s.many) s.limit = 1000;
    return &wildcard_specs_.emplace(a, std::move(s)).first->second;
  }

  // Builds node `n` from its forward rows `fwd` (moved from when `last`: no other node
  // reads them) and its reverse rows rev[rr].
  void Fill(size_t n, const Pattern& p, std::vector<Row>* fwd, bool last,
            const std::vector<Row>& rev, std::pair<size_t, size_t> rr, std::vector<size_t>* next) {
    std::vector<Node>& children = children_;  // appended to nodes_ after this node is filled
    children.clear();
    Node& node = nodes_[n];
    if (p.db_id_key) node.entries.emplace_back(*p.db_id_key, edn::Value::Int(node.e));
    std::vector<bool>& found = found_;
    found.assign(p.specs.size(), false);
    std::vector<edn::Value>& values = values_;
    std::vector<size_t>& specs = specs_;
    std::vector<Row>& rows = *fwd;
    for (size_t r = 0; r < rows.size();) {
      Entid a = rows[r].a;
      values.clear();
      for (; r < rows.size() && rows[r].a == a; ++r)
        values.push_back(last ? std::move(rows[r].v) : rows[r].v);
      specs.clear();
      for (size_t i = 0; i < p.specs.size(); ++i)
        if (p.specs[i].dir == AttrSpec::Dir::kForward && p.specs[i].a == a) specs.push_back(i);
      for (size_t k = 0; k < specs.size(); ++k) {
        found[specs[k]] = true;
        Emit(n, node, p.specs[specs[k]], &values, k + 1 == specs.size(), &children);
      }
      if (specs.empty() && p.wildcard) Emit(n, node, *WildcardSpec(a), &values, true, &children);
    }
    for (size_t i = 0; i < p.specs.size(); ++i) {
      const AttrSpec& s = p.specs[i];
      if (s.dir == AttrSpec::Dir::kReverse) {
        values.clear();
        for (size_t r = rr.first; r < rr.second; ++r)
          if (rev[r].a == s.a) values.push_back(rev[r].v);
        found[i] = !values.empty();
        if (found[i]) Emit(n, node, s, &values, true, &children);
      }
      if (!found[i] && s.default_value) node.entries.emplace_back(s.key, *s.default_value);
    }
    for (auto& c : children) {
      if (c.pat) next->push_back(nodes_.size());
      nodes_.push_back(std::move(c));
    }
  }

  Status TooDeep(const std::vector<size_t>& level) const {
    // The recursive spec followed most often on the way here names the cause.
    const AttrSpec* spec = nullptr;
    int64_t most = 0;
    for (const auto& [s, d] : nodes_[level.front()].depth)
      if (d > most) spec = s, most = d;
    std::string what = spec ? " following " + edn::Print(spec->key) : "";
    return Status::InvalidArgument(
        "pull result nested deeper than " + std::to_string(kMaxPullLevels) + " levels" + what +
        (spec ? "; give the recursion a limit, e.g. {" + edn::Print(spec->key) + " 100}" : ""));
  }

  bool OnPath(size_t n, Entid e) const {
    for (int64_t i = static_cast<int64_t>(n); i >= 0; i = nodes_[i].parent)
      if (nodes_[i].e == e) return true;
    return false;
  }

  // Adds the values of spec `s` to `node` (moving them out of `*vals` when `take`).
  void Emit(size_t n, Node& node, const AttrSpec& s, std::vector<edn::Value>* vals, bool take,
            std::vector<Node>* children) {
    std::vector<edn::Value>& values = *vals;
    size_t count = values.size();
    if (s.limit && static_cast<int64_t>(count) > *s.limit) count = static_cast<size_t>(*s.limit);
    if (!s.many) count = std::min<size_t>(count, 1);
    if (count == 0) return;
    if (s.type != ValueType::kRef) {
      if (s.many) {
        // SQL orders keywords by their text; EDN's order is by namespace, then name.
        if (s.type == ValueType::kKeyword) std::sort(values.begin(), values.end());
        edn::Vec out;
        if (take) {
          values.resize(count);
          out = std::move(values);
        } else {
          out.assign(values.begin(), values.begin() + count);
        }
        node.entries.emplace_back(s.key, edn::Value::Vector(std::move(out)));
      } else {
        node.entries.emplace_back(s.key, take ? std::move(values[0]) : values[0]);
      }
      return;
    }
    const Pattern* child_pattern = nullptr;
    bool check_cycles = false;
    std::vector<std::pair<const AttrSpec*, int64_t>> depth;
    if (s.recursion != 0) {
      depth = node.depth;
      auto it = std::find_if(depth.begin(), depth.end(), [&](auto& d) { return d.first == &s; });
      int64_t d = it == depth.end() ? 0 : it->second;
      if (s.recursion > 0 && d >= s.recursion) return;
      if (it == depth.end()) {
        depth.emplace_back(&s, 1);
      } else {
        ++it->second;
      }
      child_pattern = node.pat;
      check_cycles = true;
    } else if (s.sub) {
      child_pattern = s.sub.get();
      depth = node.depth;
    } else if (s.expand) {
      child_pattern = &ExpandPattern();
      depth = node.depth;
      check_cycles = true;
    }
    if (!child_pattern) {
      if (s.many) {
        edn::Vec ids;
        ids.reserve(count);
        for (size_t i = 0; i < count; ++i) ids.push_back(IdMap(schema_, values[i].as_int()));
        node.entries.emplace_back(s.key, edn::Value::Vector(std::move(ids)));
      } else {
        node.entries.emplace_back(s.key, IdMap(schema_, values[0].as_int()));
      }
      return;
    }
    Slot slot{s.key, s.many, {}};
    slot.kids.reserve(count);
    for (size_t i = 0; i < count; ++i) {
      Entid e = values[i].as_int();
      bool repeated = check_cycles && OnPath(n, e);
      size_t index = nodes_.size() + children->size();
      if (!repeated && child_pattern->path_independent) {
        auto [it, fresh] = memo_.emplace(MemoKey{e, child_pattern}, index);
        if (!fresh) {
          slot.kids.push_back(it->second);
          continue;
        }
      }
      children->push_back(
          Node{e, repeated ? nullptr : child_pattern, static_cast<int64_t>(n), depth, {}, {}});
      slot.kids.push_back(index);
    }
    node.slots.push_back(std::move(slot));
  }

  std::vector<edn::Value> Assemble() {
    std::vector<edn::Value> values(nodes_.size());
    for (size_t i = nodes_.size(); i-- > 0;) {
      Node& node = nodes_[i];
      if (!node.pat) {
        values[i] = IdMap(schema_, node.e);
        continue;
      }
      for (const Slot& slot : node.slots) {
        edn::Vec got;
        for (size_t c : slot.kids)
          if (!values[c].is_nil()) got.push_back(values[c]);
        if (got.empty()) continue;  // nothing matched: the attribute is left out
        node.entries.emplace_back(
            slot.key, slot.many ? edn::Value::Vector(std::move(got)) : std::move(got[0]));
      }
      if (!node.entries.empty()) values[i] = edn::Value::Map(std::move(node.entries));
      node.slots.clear();
    }
    return values;
  }

  storage::Connection* c_;
  const Schema& schema_;
  const ResolvedView& view_;
  const CheckFn& check_;
  std::vector<Node> nodes_;
  // Fill's scratch, kept between nodes so that a pull does not allocate them per node.
  std::vector<Node> children_;
  std::vector<bool> found_;
  std::vector<edn::Value> values_;
  std::vector<size_t> specs_;
  std::unordered_map<MemoKey, size_t, MemoHash> memo_;
  std::unordered_map<Entid, AttrSpec> wildcard_specs_;
};

// The common case `[*]` for one entity of the current database, without the executor's
// bookkeeping (nodes, groups, memo): one cached statement, one map. Gives the executor's
// exact result; returns nullopt (the caller then runs the executor) when the entity has a
// component attribute, which the wildcard expands.
Result<std::optional<edn::Value>> PullOneWildcard(storage::Connection* c, const Schema& schema,
                                                  const Pattern& p, Entid e) {
  MENTAT_ASSIGN_OR_RETURN(auto s, c->Cached("SELECT a, v FROM datoms WHERE e = ?1 ORDER BY a, v"));
  s->BindInt(1, e);
  edn::MapEntries entries;
  if (p.db_id_key) entries.emplace_back(*p.db_id_key, edn::Value::Int(e));
  Entid cur = -1;
  const Attribute* attr = nullptr;
  edn::Vec many;         // the values of a cardinality-many attribute, up to the limit
  bool emitted = false;  // the current attribute already has its entry
  auto flush = [&] {
    if (cur >= 0 && attr && attr->many && attr->type == ValueType::kKeyword)
      std::sort(many.begin(), many.end());  // EDN's order: namespace, then name
    if (cur >= 0 && attr && attr->many)
      entries.emplace_back(edn::Value::Keyword(attr->ident), edn::Value::Vector(std::move(many)));
    many = edn::Vec();
    emitted = false;
  };
  for (;;) {
    MENTAT_ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) break;
    Entid a = s->ColumnInt(0);
    if (a != cur) {
      flush();
      cur = a;
      attr = schema.attribute(a);
      if (attr && attr->component && attr->type == ValueType::kRef) {
        s->Reset();
        return std::optional<edn::Value>();
      }
    }
    if (!attr) {  // not an attribute (cannot happen in a consistent store): keyed by id
      if (!emitted)
        entries.emplace_back(edn::Value::Int(a), schema::ColumnValue(*s, 1, ValueType::kLong));
      emitted = true;
      continue;
    }
    edn::Value v = attr->type == ValueType::kRef ? IdMap(schema, s->ColumnInt(1))
                                                 : schema::ColumnValue(*s, 1, attr->type);
    if (attr->many) {
      if (many.size() < 1000) many.push_back(std::move(v));
    } else if (!emitted) {  // cardinality one: the first value, as the executor
      entries.emplace_back(edn::Value::Keyword(attr->ident), std::move(v));
      emitted = true;
    }
  }
  flush();
  s->Reset();
  if (entries.empty()) return std::optional<edn::Value>(edn::Value());
  return std::optional<edn::Value>(edn::Value::Map(std::move(entries)));
}

}  // namespace

Result<std::vector<edn::Value>> PullMany(storage::Connection* c, const Schema& schema,
                                         const ResolvedView& view, const Pattern& pattern,
                                         const std::vector<Entid>& eids, const CheckFn& check,
                                         const std::vector<ForwardDatom>* first_level) {
  if (view.history) return Status::Unsupported("pull is not supported on a history database");
  if (eids.size() == 1 && pattern.wildcard && pattern.specs.empty() && !view.as_of && !view.since &&
      !first_level) {
    if (check) MENTAT_RETURN_IF_ERROR(check());
    MENTAT_ASSIGN_OR_RETURN(auto one, PullOneWildcard(c, schema, pattern, eids[0]));
    if (one) return std::vector<edn::Value>{std::move(*one)};
  }
  return Executor(c, schema, view, check).Run(pattern, eids, first_level);
}

Result<std::vector<edn::Value>> PullMany(storage::Connection* c, const Schema& schema,
                                         const ResolvedView& view, const edn::Value& pattern,
                                         const std::vector<Entid>& eids, const CheckFn& check,
                                         const std::vector<ForwardDatom>* first_level) {
  MENTAT_ASSIGN_OR_RETURN(auto p, ParsePattern(schema, pattern));
  return PullMany(c, schema, view, *p, eids, check, first_level);
}

Result<std::optional<Entid>> ResolveEntity(storage::Connection* c, const Schema& schema,
                                           const ResolvedView& view, const edn::Value& eid) {
  if (eid.is_int()) return std::optional<Entid>(eid.as_int());
  if (eid.is_keyword()) return schema.entid(eid.str());
  if ((eid.is_vector() || eid.is_list()) && eid.size() == 2 &&
      (eid.items()[0].is_keyword() || eid.items()[0].is_int())) {
    const edn::Value& kw = eid.items()[0];
    const Attribute* attr = schema::LookupRefAttribute(schema, kw);
    if (!attr)
      return Status::Schema("unknown attribute " + edn::Print(kw) + " in lookup ref " +
                            edn::Print(eid));
    if (attr->unique == Unique::kNone)
      return Status::Schema("lookup ref attribute " + edn::Print(kw) +
                            " is not :db/unique: " + edn::Print(eid));
    schema::DbVal v;
    if (attr->type == ValueType::kRef) {
      MENTAT_ASSIGN_OR_RETURN(auto target, ResolveEntity(c, schema, view, eid.items()[1]));
      if (!target) return std::optional<Entid>();
      v = schema::DbVal::Int(*target);
    } else {
      edn::Value value = eid.items()[1];
      if (attr->type == ValueType::kTuple && value.is_vector()) {
        // A lookup ref inside a tuple (a composite of a ref attribute: [[:name "Ivan"]
        // "Petr"]) stands for its entity, as the transactor stores it.
        edn::Vec items = value.items();
        bool changed = false;
        for (edn::Value& x : items) {
          if (!x.is_vector() || x.size() != 2 || !x.items()[0].is_keyword()) continue;
          MENTAT_ASSIGN_OR_RETURN(auto target, ResolveEntity(c, schema, view, x));
          if (!target) return std::optional<Entid>();
          x = edn::Value::Int(*target);
          changed = true;
        }
        if (changed) value = edn::Value::Vector(std::move(items));
      }
      MENTAT_ASSIGN_OR_RETURN(v, schema::EncodeForAttribute(value, *attr, &schema));
    }
    std::string sql =
        "SELECT e FROM (" +
        ViewSql(view, "a = " + std::to_string(attr->id) + " AND v = ?1", IndexOf(*attr)) +
        ") LIMIT 1";
    if (!view.as_of && !view.since) {
      MENTAT_ASSIGN_OR_RETURN(auto s, c->Cached(sql));
      schema::Bind(*s, 1, v);
      MENTAT_ASSIGN_OR_RETURN(bool row, s->Step());
      return row ? std::optional<Entid>(s->ColumnInt(0)) : std::optional<Entid>();
    }
    MENTAT_ASSIGN_OR_RETURN(auto s, c->Prepare(sql));
    schema::Bind(s, 1, v);
    MENTAT_ASSIGN_OR_RETURN(bool row, s.Step());
    return row ? std::optional<Entid>(s.ColumnInt(0)) : std::optional<Entid>();
  }
  return Status::InvalidArgument("expected an entity id, ident or lookup ref, got " +
                                 edn::Print(eid));
}

Result<std::vector<std::vector<AttrValue>>> ReadEntities(storage::Connection* c,
                                                         const Schema& schema,
                                                         const ResolvedView& view,
                                                         const std::vector<Entid>& eids, Entid a,
                                                         bool reverse) {
  std::vector<Entid> sorted = eids;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::vector<Row> rows;
  std::vector<Entid> attrs;
  if (a != 0) attrs.push_back(a);
  if (a == 0 && reverse) {  // every ref attribute: the (a, v) index needs an attribute
    for (const auto& [id, attr] : schema.attributes())
      if (attr.type == ValueType::kRef) attrs.push_back(id);
  }
  MENTAT_RETURN_IF_ERROR(FetchRows(c, schema, view, reverse, sorted, attrs, &rows));
  auto ranges = Ranges(sorted, rows);
  std::vector<std::vector<AttrValue>> out(eids.size());
  for (size_t i = 0; i < eids.size(); ++i) {
    size_t k = std::lower_bound(sorted.begin(), sorted.end(), eids[i]) - sorted.begin();
    for (size_t r = ranges[k].first; r < ranges[k].second; ++r)
      out[i].push_back(AttrValue{rows[r].a, rows[r].v});
  }
  return out;
}

}  // namespace mentat::pull
