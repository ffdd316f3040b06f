#include "store/attr_cache.h"

#include <algorithm>

#include "storage/format.h"

namespace mentat {

namespace {

// How many changed datoms a refresh may read before re-reading the whole attribute is
// cheaper: a quarter of the column, and at least this many.
constexpr int64_t kMinDeltaBudget = 4096;

// mentat_cached(a, e): the cached value of attribute a for entity e, or NULL.
void CachedFn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  const auto* cache = static_cast<const AttrCache*>(sqlite3_user_data(ctx));
  if (sqlite3_value_type(argv[1]) != SQLITE_INTEGER) return;  // NULL
  const schema::DbVal* v = cache->Find(sqlite3_value_int64(argv[0]), sqlite3_value_int64(argv[1]));
  if (!v) return;
  // The column does not change while a statement of this connection runs (attr_cache.h).
  switch (v->tag) {
    case schema::DbVal::Tag::kInt:
      sqlite3_result_int64(ctx, v->i);
      break;
    case schema::DbVal::Tag::kReal:
      sqlite3_result_double(ctx, v->d);
      break;
    case schema::DbVal::Tag::kText:
      sqlite3_result_text(ctx, v->s.data(), static_cast<int>(v->s.size()), SQLITE_STATIC);
      break;
    case schema::DbVal::Tag::kBlob:
      sqlite3_result_blob(ctx, v->s.data(), static_cast<int>(v->s.size()), SQLITE_STATIC);
      break;
  }
}

}  // namespace

void AttrCache::Values::Clear() {
  base_ = 0;
  dense_.clear();
  present_.clear();
  sparse_.clear();
  count_ = 0;
}

void AttrCache::Values::Reserve(Entid lo, Entid hi, size_t count) {
  Clear();
  if (hi < lo) return;
  uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;
  if (range > 2 * static_cast<uint64_t>(count) + 1024) return;  // sparse: hash map only
  base_ = lo;
  dense_.resize(range);
  present_.assign(range, 0);
}

void AttrCache::Values::Set(Entid e, schema::DbVal v) {
  uint64_t i = static_cast<uint64_t>(e) - static_cast<uint64_t>(base_);
  // New entities past the dense range (the usual case: ids grow) extend it while it stays
  // at least half full.
  if (i >= present_.size() && !present_.empty() && e > base_ &&
      i < 2 * static_cast<uint64_t>(count_ + 1) + 1024) {
    dense_.resize(i + 1);
    present_.resize(i + 1, 0);
  }
  if (i < present_.size()) {
    if (!sparse_.empty()) count_ -= sparse_.erase(e);  // held apart before the range grew
    if (!present_[i]) ++count_;
    present_[i] = 1;
    dense_[i] = std::move(v);
    return;
  }
  auto [it, inserted] = sparse_.insert_or_assign(e, std::move(v));
  (void)it;
  if (inserted) ++count_;
}

void AttrCache::Values::Erase(Entid e) {
  uint64_t i = static_cast<uint64_t>(e) - static_cast<uint64_t>(base_);
  if (i < present_.size()) {
    if (present_[i]) --count_;
    present_[i] = 0;
    dense_[i] = schema::DbVal();
  }
  if (!sparse_.empty()) count_ -= sparse_.erase(e);
}

Status AttrCache::Register(sqlite3* db) {
  int rc = sqlite3_create_function_v2(db, "mentat_cached", 2,
                                      SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_DIRECTONLY, this,
                                      CachedFn, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return storage::SqliteError(db, rc, "registering mentat_cached");
  return Status::OK();
}

const schema::DbVal* AttrCache::Find(Entid a, Entid e) const {
  for (const auto& col : columns_) {
    if (col->attr == a) return col->values.Get(e);
  }
  return nullptr;
}

Status AttrCache::Load(storage::Connection* c, const Attribute& a, Column* col) {
  const std::string term = storage::IndexTerm(a.value_indexed());
  MENTAT_ASSIGN_OR_RETURN(
      auto range,
      c->Cached("SELECT min(e), max(e), count(*) FROM datoms WHERE a = ?1 AND " + term));
  range->BindInt(1, a.id);
  MENTAT_ASSIGN_OR_RETURN(bool any, range->Step());
  if (any && range->ColumnType(0) != SQLITE_NULL) {
    col->values.Reserve(range->ColumnInt(0), range->ColumnInt(1),
                        static_cast<size_t>(range->ColumnInt(2)));
  } else {
    col->values.Clear();
  }
  range->Reset();
  MENTAT_ASSIGN_OR_RETURN(auto s, c->Cached("SELECT e, v FROM datoms WHERE a = ?1 AND " + term));
  s->BindInt(1, a.id);
  for (;;) {
    MENTAT_ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) break;
    col->values.Set(s->ColumnInt(0), schema::Column(*s, 1));
  }
  return Status::OK();
}

Result<bool> AttrCache::ApplyDelta(storage::Connection* c, const Attribute& a, Column* col) {
  int64_t budget = std::max<int64_t>(kMinDeltaBudget, static_cast<int64_t>(col->values.size()) / 4);
  // The entities of datoms asserted or retracted after col->tx (tx-ordered indexes).
  const char* const touched_sql[] = {
      "SELECT e FROM datoms INDEXED BY datoms_tx WHERE tx > ?1 AND a = ?2 LIMIT ?3",
      "SELECT e FROM history INDEXED BY history_rtx WHERE rtx > ?1 AND a = ?2 LIMIT ?3",
  };
  std::vector<Entid> touched;
  for (const char* sql : touched_sql) {
    MENTAT_ASSIGN_OR_RETURN(auto s, c->Cached(sql));
    s->BindInt(1, col->tx);
    s->BindInt(2, a.id);
    s->BindInt(3, budget + 1);
    for (;;) {
      MENTAT_ASSIGN_OR_RETURN(bool row, s->Step());
      if (!row) break;
      if (static_cast<int64_t>(touched.size()) >= budget) return false;
      touched.push_back(s->ColumnInt(0));
    }
  }
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  MENTAT_ASSIGN_OR_RETURN(auto probe,
                          c->Cached("SELECT v FROM datoms WHERE e = ?1 AND a = ?2 LIMIT 1"));
  for (Entid e : touched) {
    probe->BindInt(1, e);
    probe->BindInt(2, a.id);
    MENTAT_ASSIGN_OR_RETURN(bool row, probe->Step());
    if (row) {
      col->values.Set(e, schema::Column(*probe, 0));
    } else {
      col->values.Erase(e);
    }
    probe->Reset();
  }
  return true;
}

void AttrCache::Retain(const std::vector<Entid>& attrs) {
  std::erase_if(columns_, [&](const std::unique_ptr<Column>& col) {
    return std::find(attrs.begin(), attrs.end(), col->attr) == attrs.end();
  });
}

Status AttrCache::Refresh(storage::Connection* c, const Schema& schema, int64_t schema_gen,
                          Entid snapshot_tx, const std::vector<Entid>& attrs) {
  for (Entid a : attrs) {
    const Attribute* attr = schema.attribute(a);
    if (!attr) return Status::Internal("attribute cache: unknown attribute " + std::to_string(a));
    Column* col = nullptr;
    for (const auto& existing : columns_)
      if (existing->attr == a) col = existing.get();
    if (!col) {
      columns_.push_back(std::make_unique<Column>());
      col = columns_.back().get();
      col->attr = a;
    }
    if (col->schema_gen == schema_gen && col->tx == snapshot_tx) continue;
    // Invalid until filled: an error below leaves the column to be read again.
    const bool incremental =
        col->schema_gen == schema_gen && col->tx < snapshot_tx && !attr->no_history;
    col->schema_gen = -1;
    bool done = false;
    if (incremental) {
      MENTAT_ASSIGN_OR_RETURN(done, ApplyDelta(c, *attr, col));
    }
    if (!done) MENTAT_RETURN_IF_ERROR(Load(c, *attr, col));
    col->schema_gen = schema_gen;
    col->tx = snapshot_tx;
  }
  return Status::OK();
}

}  // namespace mentat
