// Relation storage and the mentat_rel virtual table (shaped like SQLite's ext/misc
// carray.c: an eponymous-only table-valued function taking a pointer argument).
#include "query/relation.h"

#include <atomic>
#include <cmath>
#include <cstring>
#include <functional>
#include <mutex>
#include <set>
#include <string>

#include "util/json_text.h"

namespace mentat::query {

using schema::DbVal;

bool CellEq(const DbVal& a, const DbVal& b) {
  if (a.tag == DbVal::Tag::kInt && b.tag == DbVal::Tag::kReal)
    return static_cast<double>(a.i) == b.d;
  if (a.tag == DbVal::Tag::kReal && b.tag == DbVal::Tag::kInt)
    return a.d == static_cast<double>(b.i);
  return a == b;
}

size_t CellHash(const DbVal& v) {
  if (v.tag == DbVal::Tag::kReal) {
    double d = v.d;
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.2e18)
      return std::hash<int64_t>()(static_cast<int64_t>(d)) * 31;
  }
  return v.Hash();
}

DbVal CellOf(sqlite3_value* v) {
  switch (sqlite3_value_type(v)) {
    case SQLITE_INTEGER:
      return DbVal::Int(sqlite3_value_int64(v));
    case SQLITE_FLOAT:
      return DbVal::Real(sqlite3_value_double(v));
    case SQLITE_TEXT:
      return DbVal::Text(std::string(reinterpret_cast<const char*>(sqlite3_value_text(v)),
                                     sqlite3_value_bytes(v)));
    case SQLITE_BLOB: {
      const char* p = static_cast<const char*>(sqlite3_value_blob(v));
      return DbVal::Blob(std::string(p ? p : "", sqlite3_value_bytes(v)));
    }
    default:
      return DbVal::Int(0);
  }
}

Relation::Relation(int arity) : arity_(arity), set_(16, Hash{this}, Eq{this}) {}

size_t Relation::RowHash(const DbVal* row, uint32_t mask) const {
  size_t h = 0x9e3779b97f4a7c15ULL;
  for (int c = 0; c < arity_; ++c)
    if (mask & (1u << c)) h = (h ^ CellHash(row[c])) * 0x100000001b3ULL;
  return h;
}

size_t Relation::Hash::operator()(uint32_t row) const {
  return r->RowHash(&r->cells_[static_cast<size_t>(row) * r->arity_], 0xffffffffu);
}

bool Relation::Eq::operator()(uint32_t a, uint32_t b) const {
  for (int c = 0; c < r->arity_; ++c)
    if (!CellEq(r->at(a, c), r->at(b, c))) return false;
  return true;
}

bool Relation::Insert(const DbVal* row) {
  if (arity_ == 0) {
    if (rows_) return false;
    rows_ = 1;
    return true;
  }
  uint32_t idx = static_cast<uint32_t>(size());
  cells_.insert(cells_.end(), row, row + arity_);
  if (!set_.insert(idx).second) {
    cells_.resize(cells_.size() - arity_);
    return false;
  }
  indexes_.clear();
  return true;
}

bool Relation::Contains(const DbVal* row) {
  if (arity_ == 0) return rows_ > 0;
  // Probe with the row appended (the set hashes row indices into cells_).
  uint32_t idx = static_cast<uint32_t>(size());
  cells_.insert(cells_.end(), row, row + arity_);
  bool found = set_.find(idx) != set_.end();
  cells_.resize(cells_.size() - arity_);
  return found;
}

const std::vector<uint32_t>& Relation::Candidates(uint32_t mask,
                                                  const std::vector<DbVal>& key) const {
  static const std::vector<uint32_t> kEmpty;
  auto& index = indexes_[mask];
  if (index.empty() && size() > 0) {
    for (uint32_t r = 0; r < size(); ++r)
      index[RowHash(&cells_[static_cast<size_t>(r) * arity_], mask)].push_back(r);
  }
  std::vector<DbVal> full(arity_);
  size_t k = 0;
  for (int c = 0; c < arity_; ++c)
    if (mask & (1u << c)) full[c] = key[k++];
  auto it = index.find(RowHash(full.data(), mask));
  return it == index.end() ? kEmpty : it->second;
}

std::string RelationJson(const Relation& r) {
  std::string out = "[";
  for (size_t row = 0; row < r.size(); ++row) {
    out += row ? ",[" : "[";
    for (int c = 0; c < r.arity(); ++c) {
      if (c) out.push_back(',');
      const schema::DbVal& v = r.at(row, c);
      switch (v.tag) {
        case schema::DbVal::Tag::kInt:
          out += std::to_string(v.i);
          break;
        case schema::DbVal::Tag::kReal:
          out += JsonDouble(v.d);
          break;
        case schema::DbVal::Tag::kText:
          out += JsonString(v.s);
          break;
        case schema::DbVal::Tag::kBlob:
          out += JsonBlob(v.s);
          break;
      }
    }
    out.push_back(']');
  }
  return out + "]";
}

namespace {

// ---- mentat_rel virtual table ----

struct RelVtab {
  sqlite3_vtab base;
};

struct RelCursor {
  sqlite3_vtab_cursor base;
  const Relation* rel = nullptr;
  uint32_t mask = 0;
  std::vector<DbVal> key;
  const std::vector<uint32_t>* cand = nullptr;  // nullptr: every row
  size_t pos = 0;
  size_t row = 0;
  bool eof = true;
};

int RelConnect(sqlite3* db, void*, int, const char* const*, sqlite3_vtab** out, char**) {
  std::string ddl = "CREATE TABLE x(";
  for (int i = 0; i < kMaxRelArity; ++i) ddl += "c" + std::to_string(i) + ", ";
  ddl += "rel HIDDEN)";
  int rc = sqlite3_declare_vtab(db, ddl.c_str());
  if (rc != SQLITE_OK) return rc;
  auto* v = static_cast<RelVtab*>(sqlite3_malloc(sizeof(RelVtab)));
  if (!v) return SQLITE_NOMEM;
  memset(v, 0, sizeof(*v));
  *out = &v->base;
  return SQLITE_OK;
}

int RelDisconnect(sqlite3_vtab* v) {
  sqlite3_free(v);
  return SQLITE_OK;
}

int RelBestIndex(sqlite3_vtab*, sqlite3_index_info* info) {
  int rel_constraint = -1;
  uint32_t mask = 0;
  int cons_for_col[kMaxRelArity];
  for (int& c : cons_for_col) c = -1;
  for (int i = 0; i < info->nConstraint; ++i) {
    const auto& c = info->aConstraint[i];
    if (!c.usable || c.op != SQLITE_INDEX_CONSTRAINT_EQ) continue;
    if (c.iColumn == kMaxRelArity) {
      rel_constraint = i;
    } else if (c.iColumn >= 0 && c.iColumn < kMaxRelArity && cons_for_col[c.iColumn] < 0) {
      cons_for_col[c.iColumn] = i;
      mask |= 1u << c.iColumn;
    }
  }
  if (rel_constraint < 0) return SQLITE_CONSTRAINT;
  info->aConstraintUsage[rel_constraint].argvIndex = 1;
  info->aConstraintUsage[rel_constraint].omit = 1;
  int argv = 2;
  for (int col = 0; col < kMaxRelArity; ++col) {
    if (cons_for_col[col] < 0) continue;
    info->aConstraintUsage[cons_for_col[col]].argvIndex = argv++;
    info->aConstraintUsage[cons_for_col[col]].omit = 0;  // collisions and int/real: recheck
  }
  info->idxNum = static_cast<int>(mask);
  info->estimatedCost = mask ? 10 : 1000;
  info->estimatedRows = mask ? 2 : 1000;
  return SQLITE_OK;
}

int RelOpen(sqlite3_vtab*, sqlite3_vtab_cursor** out) {
  auto* c = new RelCursor();
  *out = &c->base;
  return SQLITE_OK;
}

int RelClose(sqlite3_vtab_cursor* cur) {
  delete reinterpret_cast<RelCursor*>(cur);
  return SQLITE_OK;
}

bool Matches(const RelCursor* c, size_t row) {
  size_t k = 0;
  for (int col = 0; col < c->rel->arity(); ++col)
    if (c->mask & (1u << col))
      if (!CellEq(c->rel->at(row, col), c->key[k++])) return false;
  return true;
}

void Settle(RelCursor* c) {
  for (;;) {
    size_t n = c->cand ? c->cand->size() : c->rel->size();
    if (c->pos >= n) {
      c->eof = true;
      return;
    }
    c->row = c->cand ? (*c->cand)[c->pos] : c->pos;
    if (!c->cand || Matches(c, c->row)) {
      c->eof = false;
      return;
    }
    ++c->pos;
  }
}

int RelFilter(sqlite3_vtab_cursor* cur, int idx_num, const char*, int argc, sqlite3_value** argv) {
  auto* c = reinterpret_cast<RelCursor*>(cur);
  c->rel = argc > 0 ? static_cast<const Relation*>(sqlite3_value_pointer(argv[0], kRelPointerType))
                    : nullptr;
  c->eof = true;
  c->pos = 0;
  c->cand = nullptr;
  if (!c->rel) return SQLITE_OK;
  c->mask = static_cast<uint32_t>(idx_num);
  c->key.clear();
  for (int i = 1; i < argc; ++i) {
    if (sqlite3_value_type(argv[i]) == SQLITE_NULL) return SQLITE_OK;  // NULL matches nothing
    c->key.push_back(CellOf(argv[i]));
  }
  // Columns beyond the relation's arity are NULL: a constraint on them matches nothing.
  if (c->rel->arity() < kMaxRelArity && (c->mask >> c->rel->arity()) != 0) return SQLITE_OK;
  if (c->mask) c->cand = &c->rel->Candidates(c->mask, c->key);
  Settle(c);
  return SQLITE_OK;
}

int RelNext(sqlite3_vtab_cursor* cur) {
  auto* c = reinterpret_cast<RelCursor*>(cur);
  ++c->pos;
  Settle(c);
  return SQLITE_OK;
}

int RelEof(sqlite3_vtab_cursor* cur) { return reinterpret_cast<RelCursor*>(cur)->eof; }

int RelColumn(sqlite3_vtab_cursor* cur, sqlite3_context* ctx, int col) {
  auto* c = reinterpret_cast<RelCursor*>(cur);
  if (col >= c->rel->arity()) {
    sqlite3_result_null(ctx);
    return SQLITE_OK;
  }
  const DbVal& v = c->rel->at(c->row, col);
  switch (v.tag) {
    case DbVal::Tag::kInt:
      sqlite3_result_int64(ctx, v.i);
      break;
    case DbVal::Tag::kReal:
      sqlite3_result_double(ctx, v.d);
      break;
    case DbVal::Tag::kText:
      sqlite3_result_text(ctx, v.s.data(), static_cast<int>(v.s.size()), SQLITE_STATIC);
      break;
    case DbVal::Tag::kBlob:
      sqlite3_result_blob(ctx, v.s.data(), static_cast<int>(v.s.size()), SQLITE_STATIC);
      break;
  }
  return SQLITE_OK;
}

int RelRowid(sqlite3_vtab_cursor* cur, sqlite_int64* rowid) {
  *rowid = static_cast<sqlite_int64>(reinterpret_cast<RelCursor*>(cur)->row);
  return SQLITE_OK;
}

sqlite3_module MakeRelModule() {
  sqlite3_module m;
  memset(&m, 0, sizeof m);
  m.iVersion = 0;
  m.xCreate = nullptr;  // eponymous-only
  m.xConnect = RelConnect;
  m.xBestIndex = RelBestIndex;
  m.xDisconnect = RelDisconnect;
  m.xDestroy = RelDisconnect;
  m.xOpen = RelOpen;
  m.xClose = RelClose;
  m.xFilter = RelFilter;
  m.xNext = RelNext;
  m.xEof = RelEof;
  m.xColumn = RelColumn;
  m.xRowid = RelRowid;
  return m;
}

const sqlite3_module kRelModule = MakeRelModule();

std::mutex g_mu;
std::set<sqlite3*>* g_registered = new std::set<sqlite3*>();

// Bumped by every unregistration, so that a thread's memory of the last connection it
// found registered is dropped when any connection closes (a new one may reuse the address).
std::atomic<uint64_t> g_unregistered{0};

void Unregister(void* db) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_registered->erase(static_cast<sqlite3*>(db));
  g_unregistered.fetch_add(1, std::memory_order_release);
}

}  // namespace

Status RegisterFunctions(sqlite3* db);  // sql_functions.cc

Status EnsureRegistered(sqlite3* db) {
  // The common case, a connection this thread found registered before, without the
  // process-wide lock: readers on different threads never meet here.
  thread_local sqlite3* t_db = nullptr;
  thread_local uint64_t t_gen = 0;
  uint64_t gen = g_unregistered.load(std::memory_order_acquire);
  if (db == t_db && gen == t_gen) return Status::OK();
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (g_registered->count(db)) {
      t_db = db;
      t_gen = gen;
      return Status::OK();
    }
  }
  int rc = sqlite3_create_module_v2(db, "mentat_rel", &kRelModule, db, Unregister);
  if (rc != SQLITE_OK)
    return Status::Internal("cannot register mentat_rel: " + std::string(sqlite3_errstr(rc)));
  MENTAT_RETURN_IF_ERROR(RegisterFunctions(db));
  std::lock_guard<std::mutex> lock(g_mu);
  g_registered->insert(db);
  t_db = db;
  t_gen = gen;
  return Status::OK();
}

}  // namespace mentat::query
