// edn_rows: query results as real rows with typed columns.
//
//   SELECT * FROM edn_rows(db_path, query [, options]);          -- table-valued function
//   CREATE VIRTUAL TABLE temp.people USING edn_rows(db_path, query [, options]);
//   SELECT * FROM people;                                          -- columns e, n
//
// The table-valued form has a fixed schema, as every SQLite table-valued function has
// (its columns are declared before its arguments are known): value columns c0..c7, one
// per find element in order (the rest NULL), and the hidden argument columns db_path,
// query and options. The CREATE form knows its query up front, so its columns are exactly
// the find elements, named after them (?e -> e, (count ?x) -> count_x, :keys names).
// Values are typed by their kind (calls.h ResultValue): a ref or long is an INTEGER, a
// double a REAL, a string or keyword TEXT, bytes a BLOB, so rows join with ordinary
// tables without json_each. Rows are computed by xFilter, on each scan.
#include <cctype>
#include <memory>
#include <new>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "calls.h"
#include "functions.h"

namespace mentat::sqlite_ext {

namespace {

constexpr int kValueColumns = 8;
// The hidden columns of the table-valued form, after the value columns.
enum : int { kColDbPath = kValueColumns, kColQuery, kColOptions };

struct RowsTable {
  sqlite3_vtab base;  // first: SQLite sees a sqlite3_vtab*
  HostContext* ctx = nullptr;
  // The CREATE form: the table's query and its columns.
  bool fixed = false;
  std::optional<std::string> db_path;
  std::string query;
  std::optional<std::string> options;
  int columns = kValueColumns;
};

struct RowsCursor {
  sqlite3_vtab_cursor base;  // first: SQLite sees a sqlite3_vtab_cursor*
  std::vector<std::vector<edn::Value>> rows;
  size_t row = 0;
  // The arguments of this scan (the hidden columns of the table-valued form).
  std::optional<std::string> db_path, query, options;
};

RowsTable* Table(sqlite3_vtab* v) { return reinterpret_cast<RowsTable*>(v); }
RowsCursor* Cursor(sqlite3_vtab_cursor* c) { return reinterpret_cast<RowsCursor*>(c); }

void SetError(sqlite3_vtab* v, const std::string& msg) {
  sqlite3_free(v->zErrMsg);
  v->zErrMsg = sqlite3_mprintf("edn_rows: %s", msg.c_str());
}

void SetError(char** pz, const std::string& msg) {
  *pz = sqlite3_mprintf("edn_rows: %s", msg.c_str());
}

// A module argument as written in CREATE VIRTUAL TABLE: a quoted string (quotes removed),
// NULL, or bare text.
std::optional<std::string> ModuleArg(const char* raw) {
  std::string s(raw ? raw : "");
  size_t b = s.find_first_not_of(" \t\r\n"), e = s.find_last_not_of(" \t\r\n");
  if (b == std::string::npos) return std::string();
  s = s.substr(b, e - b + 1);
  if (s.size() >= 2 && (s[0] == '\'' || s[0] == '"') && s.back() == s[0]) {
    char q = s[0];
    std::string out;
    for (size_t i = 1; i + 1 < s.size(); ++i) {
      out += s[i];
      if (s[i] == q && s[i + 1] == q) ++i;
    }
    return out;
  }
  std::string upper;
  for (char c : s) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (upper == "NULL") return std::nullopt;
  return s;
}

// A column name from a find element: "?e" -> e, "(count ?x)" -> count_x.
std::string ColumnName(const std::string& element, int index, std::set<std::string>* taken) {
  std::string name;
  for (char c : element) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      name += c;
    } else if (!name.empty() && name.back() != '_') {
      name += '_';
    }
  }
  while (!name.empty() && name.back() == '_') name.pop_back();
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])))
    name = "c" + std::to_string(index);
  std::string unique = name;
  for (int n = 2; taken->count(unique); ++n) unique = name + "_" + std::to_string(n);
  taken->insert(unique);
  return unique;
}

const char* DeclaredType(const edn::Value& v) {
  switch (v.kind()) {
    case edn::Kind::kBool:
    case edn::Kind::kInt:
      return " INTEGER";
    case edn::Kind::kFloat:
      return " REAL";
    case edn::Kind::kBytes:
      return " BLOB";
    case edn::Kind::kNil:
      return "";
    default:
      return " TEXT";
  }
}

// The CREATE TABLE statement of a table created with `query`: one column per find
// element, named after it, typed from a first run of the query when that succeeds.
Result<std::string> FixedSchema(RowsTable* t) {
  MENTAT_ASSIGN_OR_RETURN(QueryResult shape, describe_query(t->query));
  std::vector<std::string> elements;
  if (!shape.map_keys.empty()) {
    for (const auto& k : shape.map_keys)
      elements.push_back(k.is_string() ? k.str() : edn::Print(k));
  } else {
    elements = shape.columns;
  }
  using Shape = QueryResult::Shape;
  if (shape.shape == Shape::kCollection || shape.shape == Shape::kScalar) elements.resize(1);
  std::vector<edn::Value> first_row;
  auto run = RunQuery(t->ctx, t->db_path, t->query, t->options);
  if (run.ok() && *run && !(*run)->rows.empty()) first_row = (*run)->rows[0];
  std::set<std::string> taken;
  std::string sql = "CREATE TABLE x(";
  for (size_t i = 0; i < elements.size(); ++i) {
    std::string name = ColumnName(elements[i], static_cast<int>(i), &taken);
    sql += (i ? ", \"" : "\"") + name + "\"";
    if (i < first_row.size()) sql += DeclaredType(first_row[i]);
  }
  t->columns = static_cast<int>(elements.size());
  return sql + ")";
}

std::string GenericSchema() {
  std::string sql = "CREATE TABLE x(";
  for (int i = 0; i < kValueColumns; ++i) sql += "c" + std::to_string(i) + ", ";
  return sql + "db_path HIDDEN, query HIDDEN, options HIDDEN)";
}

int xConnect(sqlite3* db, void* aux, int argc, const char* const* argv, sqlite3_vtab** out,
             char** pz_err) {
  try {
    auto t = std::make_unique<RowsTable>();
    t->base = sqlite3_vtab{};
    t->ctx = static_cast<HostContext*>(aux);
    std::string schema;
    if (argc > 3) {  // CREATE VIRTUAL TABLE t USING edn_rows(db_path, query [, options])
      if (argc < 5 || argc > 6) {
        SetError(pz_err, "expected USING edn_rows(db_path, query [, options])");
        return SQLITE_ERROR;
      }
      t->fixed = true;
      t->db_path = ModuleArg(argv[3]);
      auto q = ModuleArg(argv[4]);
      if (!q || q->empty()) {
        SetError(pz_err, "the query argument is empty");
        return SQLITE_ERROR;
      }
      t->query = *q;
      if (argc == 6) t->options = ModuleArg(argv[5]);
      auto s = FixedSchema(t.get());
      if (!s.ok()) {
        SetError(pz_err, s.status().ToString());
        return SQLITE_ERROR;
      }
      schema = *s;
    } else {
      schema = GenericSchema();
    }
    int rc = sqlite3_declare_vtab(db, schema.c_str());
    if (rc != SQLITE_OK) return rc;
    // Like the functions: not callable from triggers, views or schema expressions.
    if (sqlite3_libversion_number() >= 3031000) sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY);
    *out = &t.release()->base;
    return SQLITE_OK;
  } catch (const std::bad_alloc&) {
    return SQLITE_NOMEM;
  } catch (const std::exception& e) {
    SetError(pz_err, e.what());
    return SQLITE_ERROR;
  }
}

int xDisconnect(sqlite3_vtab* v) {
  std::unique_ptr<RowsTable> t(Table(v));
  sqlite3_free(v->zErrMsg);
  return SQLITE_OK;
}

// Arguments are equality constraints on the hidden columns; idxNum has bit (col -
// kColDbPath) set for each one given, and they arrive in xFilter in column order.
int xBestIndex(sqlite3_vtab* v, sqlite3_index_info* info) {
  RowsTable* t = Table(v);
  info->estimatedCost = 1000;
  info->estimatedRows = 100;
  if (t->fixed) return SQLITE_OK;
  int usable[3] = {-1, -1, -1};
  bool unusable[3] = {false, false, false};
  for (int i = 0; i < info->nConstraint; ++i) {
    const auto& c = info->aConstraint[i];
    if (c.iColumn < kColDbPath || c.op != SQLITE_INDEX_CONSTRAINT_EQ) continue;
    if (c.usable) {
      usable[c.iColumn - kColDbPath] = i;
    } else {
      unusable[c.iColumn - kColDbPath] = true;
    }
  }
  // An argument whose value this plan cannot supply (it depends on a table joined later,
  // as in FROM t JOIN edn_rows(..., t.x)): ask for another plan.
  for (int k = 0; k < 3; ++k) {
    if (unusable[k] && usable[k] < 0) return SQLITE_CONSTRAINT;
  }
  if (usable[kColQuery - kColDbPath] < 0) {
    SetError(v, "needs a query: SELECT * FROM edn_rows(db_path, query [, options])");
    return SQLITE_ERROR;
  }
  int argv_index = 0, mask = 0;
  for (int k = 0; k < 3; ++k) {
    if (usable[k] < 0) continue;
    info->aConstraintUsage[usable[k]].argvIndex = ++argv_index;
    info->aConstraintUsage[usable[k]].omit = 1;
    mask |= 1 << k;
  }
  info->idxNum = mask;
  return SQLITE_OK;
}

int xOpen(sqlite3_vtab*, sqlite3_vtab_cursor** out) {
  try {
    auto c = std::make_unique<RowsCursor>();
    c->base = sqlite3_vtab_cursor{};
    *out = &c.release()->base;
    return SQLITE_OK;
  } catch (...) {
    return SQLITE_NOMEM;
  }
}

int xClose(sqlite3_vtab_cursor* cur) {
  std::unique_ptr<RowsCursor> c(Cursor(cur));
  return SQLITE_OK;
}

// The rows of `r`: relation and tuple rows as they are, a collection one value per row,
// a scalar one row (none for nil).
std::vector<std::vector<edn::Value>> RowsOf(QueryResult r) {
  switch (r.shape) {
    case QueryResult::Shape::kRelation:
      return std::move(r.rows);
    case QueryResult::Shape::kTuple:
      if (r.rows.size() > 1) r.rows.resize(1);
      return std::move(r.rows);
    case QueryResult::Shape::kCollection:
    case QueryResult::Shape::kScalar: {
      std::vector<std::vector<edn::Value>> out;
      for (auto& row : r.rows) {
        if (row.empty()) continue;
        if (r.shape == QueryResult::Shape::kScalar && row[0].is_nil()) continue;
        out.push_back({std::move(row[0])});
        if (r.shape == QueryResult::Shape::kScalar) break;
      }
      return out;
    }
  }
  return {};
}

int xFilter(sqlite3_vtab_cursor* cur, int idx_num, const char*, int argc, sqlite3_value** argv) {
  RowsCursor* c = Cursor(cur);
  RowsTable* t = Table(cur->pVtab);
  try {
    c->rows.clear();
    c->row = 0;
    if (t->fixed) {
      c->db_path = t->db_path;
      c->query = t->query;
      c->options = t->options;
    } else {
      int arg = 0;
      auto next = [&](int bit) -> std::optional<std::string> {
        if (!(idx_num & (1 << bit)) || arg >= argc) return std::nullopt;
        return TextArg(argv[arg++]);
      };
      c->db_path = next(0);
      c->query = next(1);
      c->options = next(2);
    }
    if (!c->query) return SQLITE_OK;  // a NULL query: no rows
    auto r = RunQuery(t->ctx, c->db_path, *c->query, c->options);
    if (!r.ok()) {
      SetError(cur->pVtab, r.status().ToString());
      return SqliteCode(r.status());
    }
    if (!*r) return SQLITE_OK;  // host mode, no store yet: no rows
    c->rows = RowsOf(std::move(**r));
    int width = c->rows.empty() ? 0 : static_cast<int>(c->rows[0].size());
    if (width > t->columns) {
      c->rows.clear();
      SetError(cur->pVtab, "the query has " + std::to_string(width) +
                               " find elements, more than the " + std::to_string(t->columns) +
                               " value columns c0..c7; use CREATE VIRTUAL TABLE t USING "
                               "edn_rows(db_path, query) for a table with one column each");
      return SQLITE_ERROR;
    }
    return SQLITE_OK;
  } catch (const std::bad_alloc&) {
    return SQLITE_NOMEM;
  } catch (const std::exception& e) {
    SetError(cur->pVtab, e.what());
    return SQLITE_ERROR;
  }
}

int xNext(sqlite3_vtab_cursor* cur) {
  ++Cursor(cur)->row;
  return SQLITE_OK;
}

int xEof(sqlite3_vtab_cursor* cur) {
  RowsCursor* c = Cursor(cur);
  return c->row >= c->rows.size();
}

int xColumn(sqlite3_vtab_cursor* cur, sqlite3_context* ctx, int col) {
  RowsCursor* c = Cursor(cur);
  RowsTable* t = Table(cur->pVtab);
  try {
    auto arg = [&](const std::optional<std::string>& s) {
      if (s) {
        sqlite3_result_text(ctx, s->data(), static_cast<int>(s->size()), SQLITE_TRANSIENT);
      } else {
        sqlite3_result_null(ctx);
      }
    };
    if (!t->fixed && col == kColDbPath) {
      arg(c->db_path);
    } else if (!t->fixed && col == kColQuery) {
      arg(c->query);
    } else if (!t->fixed && col == kColOptions) {
      arg(c->options);
    } else {
      const auto& row = c->rows[c->row];
      if (col >= 0 && static_cast<size_t>(col) < row.size()) {
        ResultValue(ctx, row[static_cast<size_t>(col)]);
      } else {
        sqlite3_result_null(ctx);
      }
    }
    return SQLITE_OK;
  } catch (const std::bad_alloc&) {
    return SQLITE_NOMEM;
  }
}

int xRowid(sqlite3_vtab_cursor* cur, sqlite3_int64* rowid) {
  *rowid = static_cast<sqlite3_int64>(Cursor(cur)->row) + 1;
  return SQLITE_OK;
}

}  // namespace

// xCreate == xConnect: eponymous (the table-valued function edn_rows(...)) and usable with
// CREATE VIRTUAL TABLE, which needs no storage of its own (so xDestroy == xDisconnect).
const sqlite3_module kRowsModule = {
    0,            // iVersion
    xConnect,     // xCreate
    xConnect,     // xConnect
    xBestIndex,   // xBestIndex
    xDisconnect,  // xDisconnect
    xDisconnect,  // xDestroy
    xOpen,        // xOpen: a cursor
    xClose,       // xClose
    xFilter,      // xFilter: runs the query
    xNext,        // xNext
    xEof,         // xEof
    xColumn,      // xColumn
    xRowid,       // xRowid
    nullptr,      // xUpdate: read-only
    nullptr,      // xBegin
    nullptr,      // xSync
    nullptr,      // xCommit
    nullptr,      // xRollback
    nullptr,      // xFindFunction
    nullptr,      // xRename
    nullptr,      // xSavepoint
    nullptr,      // xRelease
    nullptr,      // xRollbackTo
    nullptr,      // xShadowName
};

}  // namespace mentat::sqlite_ext
