#include "store/value_counts.h"

#include <algorithm>

#include "query/ast.h"
#include "query/query.h"
#include "storage/format.h"

namespace mentat {

namespace {

// How many changed datoms an update may read before a full recount is cheaper: a quarter
// of the attribute's datoms, and at least this many.
constexpr int64_t kMinDeltaBudget = 4096;

int64_t Total(const std::map<schema::DbVal, int64_t>& counts) {
  int64_t n = 0;
  for (const auto& [v, c] : counts) n += c;
  return n;
}

}  // namespace

Status ValueCounts::Recount(storage::Connection* c, const Attribute& a, Entry* e) {
  MENTAT_ASSIGN_OR_RETURN(auto s, c->Cached(std::string("SELECT v, count(*) FROM datoms WHERE "
                                                        "a = ?1 AND ") +
                                            storage::IndexTerm(a.value_indexed()) + " GROUP BY v"));
  s->BindInt(1, a.id);
  e->counts.clear();
  e->too_many = false;
  for (;;) {
    MENTAT_ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) break;
    if (e->counts.size() >= kMaxValues) {
      e->too_many = true;
      e->counts.clear();
      s->Reset();
      return Status::OK();
    }
    e->counts.emplace(schema::Column(*s, 0), s->ColumnInt(1));
  }
  return Status::OK();
}

// Adds the changes after `since` to `e`; false when there were more than the budget (the
// entry is then left unusable and the caller recounts).
Result<bool> ValueCounts::ApplyDelta(storage::Connection* c, Entid a, Entid since, Entry* e) {
  int64_t budget = std::max<int64_t>(kMinDeltaBudget, Total(e->counts) / 4);
  struct Part {
    const char* sql;
    int sign;
  };
  // Each statement reads a covering index ordered by transaction (doc/format.md).
  const Part parts[] = {
      {"SELECT a, v FROM datoms WHERE tx > ?1 LIMIT ?2", +1},
      {"SELECT a, v FROM history WHERE tx > ?1 LIMIT ?2", +1},
      {"SELECT a, v FROM history WHERE rtx > ?1 LIMIT ?2", -1},
  };
  for (const Part& p : parts) {
    MENTAT_ASSIGN_OR_RETURN(auto s, c->Cached(p.sql));
    s->BindInt(1, since);
    s->BindInt(2, budget + 1);
    for (;;) {
      MENTAT_ASSIGN_OR_RETURN(bool row, s->Step());
      if (!row) break;
      if (--budget < 0) {
        s->Reset();
        return false;
      }
      if (s->ColumnInt(0) != a) continue;
      auto& n = e->counts[schema::Column(*s, 1)];
      n += p.sign;
    }
  }
  for (auto it = e->counts.begin(); it != e->counts.end();) {
    if (it->second < 0) return false;  // cannot happen with complete history; be safe
    it = it->second == 0 ? e->counts.erase(it) : std::next(it);
  }
  return e->counts.size() <= kMaxValues;
}

Result<std::optional<ValueCounts::Counts>> ValueCounts::Get(storage::Connection* c,
                                                            const Attribute& attr,
                                                            int64_t schema_gen, Entid snapshot_tx) {
  Entry e;
  bool have = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(attr.id);
    if (it != entries_.end() && it->second.schema_gen == schema_gen &&
        it->second.tx <= snapshot_tx) {
      if (it->second.too_many) return std::optional<Counts>();
      if (it->second.tx == snapshot_tx)
        return std::optional<Counts>(Counts(it->second.counts.begin(), it->second.counts.end()));
      e = it->second;
      have = true;
    }
  }
  bool updated = false;
  if (have && !attr.no_history) {
    MENTAT_ASSIGN_OR_RETURN(updated, ApplyDelta(c, attr.id, e.tx, &e));
  }
  if (!updated) MENTAT_RETURN_IF_ERROR(Recount(c, attr, &e));
  e.schema_gen = schema_gen;
  e.tx = snapshot_tx;
  std::optional<Counts> out;
  if (!e.too_many) out = Counts(e.counts.begin(), e.counts.end());
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(attr.id);
    bool newer =
        it == entries_.end() || it->second.schema_gen != schema_gen || it->second.tx < snapshot_tx;
    if (newer) {
      if (it == entries_.end() && entries_.size() >= kMaxEntries) entries_.clear();
      entries_[attr.id] = std::move(e);
    }
  }
  return out;
}

}  // namespace mentat

// ---- the query shape ----

namespace mentat {

const Attribute* CountQueryAttribute(const query::ParsedQuery& q, const Schema& schema,
                                     const query::DbView& view, size_t n_inputs) {
  using query::Clause;
  using query::FindElem;
  if (view.as_of || view.since || view.history || n_inputs != 0) return nullptr;
  if (q.find_kind != query::ParsedQuery::FindKind::kRel || q.find.size() != 2) return nullptr;
  if (!q.keys.empty() || !q.with.empty() || !q.order.empty() || q.limit || q.offset ||
      !q.limit_var.empty() || !q.offset_var.empty())
    return nullptr;
  for (const auto& in : q.in)
    if (in.kind != query::InSpec::Kind::kSrc || in.name != "$") return nullptr;
  if (q.where.size() != 1) return nullptr;
  const Clause& c = q.where[0];
  if (c.kind != Clause::Kind::kPattern || c.src != "$" || c.places.size() < 3) return nullptr;
  for (size_t i = 3; i < c.places.size(); ++i)
    if (!c.places[i].is_blank()) return nullptr;
  const auto& e = c.places[0];
  const auto& a = c.places[1];
  const auto& v = c.places[2];
  if (!e.is_var() || !v.is_var() || e.name == v.name || !a.is_const()) return nullptr;
  const Attribute* attr = nullptr;
  if (a.value.is_keyword()) {
    attr = schema.attribute(a.value.str());
  } else if (a.value.is_int()) {
    attr = schema.attribute(a.value.as_int());
  }
  if (!attr) return nullptr;
  const FindElem* var = nullptr;
  const FindElem* agg = nullptr;
  for (const FindElem& f : q.find) {
    if (f.kind == FindElem::Kind::kVar) var = &f;
    if (f.kind == FindElem::Kind::kAgg) agg = &f;
  }
  if (!var || !agg || var->var != v.name) return nullptr;
  if (agg->fn != "count" && agg->fn != "count-distinct") return nullptr;
  if (agg->args.size() != 1 || !agg->args[0].is_var() || agg->args[0].name != e.name)
    return nullptr;
  return attr;
}

QueryResult CountQueryResult(const query::ParsedQuery& q, const Attribute& attr,
                             const ValueCounts::Counts& counts) {
  QueryResult r;
  r.shape = QueryResult::Shape::kRelation;
  bool value_first = q.find[0].kind == query::FindElem::Kind::kVar;
  for (const auto& f : q.find) r.columns.push_back(edn::Print(f.form));
  r.rows.reserve(counts.size());
  for (const auto& [v, n] : counts) {
    edn::Value value = schema::Decode(v, attr.type);
    edn::Value count = edn::Value::Int(n);
    if (value_first)
      r.rows.push_back({std::move(value), std::move(count)});
    else
      r.rows.push_back({std::move(count), std::move(value)});
  }
  return r;
}

Result<std::optional<QueryResult>> TryCountQuery(ValueCounts& counts, storage::Connection* c,
                                                 const Schema& schema, int64_t schema_gen,
                                                 const query::ParsedQuery& q,
                                                 const query::DbView& view, size_t n_inputs) {
  const Attribute* attr = CountQueryAttribute(q, schema, view, n_inputs);
  if (!attr) return std::optional<QueryResult>();
  if (c->InWriteTransaction()) return std::optional<QueryResult>();
  MENTAT_ASSIGN_OR_RETURN(auto s, c->Cached("SELECT value FROM meta WHERE key = 'last_tx'"));
  MENTAT_ASSIGN_OR_RETURN(bool row, s->Step());
  if (!row) return std::optional<QueryResult>();
  Entid tx = s->ColumnInt(0);
  s->Reset();
  MENTAT_ASSIGN_OR_RETURN(auto got, counts.Get(c, *attr, schema_gen, tx));
  if (!got) return std::optional<QueryResult>();
  return std::optional<QueryResult>(CountQueryResult(q, *attr, *got));
}

}  // namespace mentat
