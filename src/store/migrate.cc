// mentat migrate: a store copied between engines (SQLite, PostgreSQL) table by table, with
// its ids, then verified attribute by attribute (include/mentat/store.h, migrate).
#include <sys/stat.h>

#include <map>
#include <string>
#include <vector>

#include "mentat/store.h"
#include "schema/codec.h"
#include "storage/sqlite.h"
#include "store/store_impl.h"
#include "util/copy_rows.h"

namespace mentat {

namespace {

using schema::DbVal;

// A table's rows as migrate copies them: `value` is the index of the value column (v),
// which each engine stores its own way; the other columns are integers or text.
struct Table {
  const char* name;
  const char* columns;
  int value = -1;
};

// In the order they are copied. meta is copied key by key (MigrateMeta): its format rows
// are each engine's own.
constexpr Table kTables[] = {
    {"datoms", "e, a, v, tx, ix", 2},
    {"history", "e, a, v, tx, rtx", 2},
    {"parts", "part, start, \"end\", next"},
    {"attr_stats", "a, datoms, distinct_values, distinct_at, distinct_entities"},
    {"attr_values", "a, v, datoms", 1},
    {"auto_indexes", "a, uses, created, last_used"},
    {"fulltext_docs", "e, a, text"},
};

int Columns(const Table& t) {
  int n = 1;
  for (const char* p = t.columns; *p; ++p) n += *p == ',';
  return n;
}

std::string Params(int n) {
  std::string out;
  for (int i = 1; i <= n; ++i) out += (i > 1 ? ", ?" : "?") + std::to_string(i);
  return out;
}

// A row's hash, the same from either engine: its cells' storage classes and values.
uint64_t Mix(uint64_t h, std::string_view bytes) {
  for (unsigned char ch : bytes) h = (h ^ ch) * 1099511628211ULL;
  return h;
}

uint64_t CellHash(uint64_t h, const DbVal& v) {
  switch (v.tag) {
    case DbVal::Tag::kInt:
      return Mix(Mix(h, "i"), std::to_string(v.i));
    case DbVal::Tag::kReal: {
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.17g", v.d);
      return Mix(Mix(h, "r"), buf);
    }
    case DbVal::Tag::kText:
      return Mix(Mix(h, "t"), v.s);
    case DbVal::Tag::kBlob:
      return Mix(Mix(h, "b"), v.s);
  }
  return h;
}

// Per attribute: how many rows of `table` it has, and the sum of their hashes.
using Digest = std::map<int64_t, std::pair<int64_t, uint64_t>>;

// Adds one row to `d`: `cells` are e, v, tx (and rtx for history), `a` its attribute.
void AddToDigest(Digest* d, int64_t a, const DbVal* const* cells, int n) {
  uint64_t h = 14695981039346656037ULL;
  for (int i = 0; i < n; ++i) h = CellHash(h, *cells[i]);
  auto& [count, sum] = (*d)[a];
  ++count;
  sum += h;
}

Result<Digest> DigestOf(storage::Connection* c, const char* table) {
  const bool history = std::string(table) == "history";
  MENTAT_ASSIGN_OR_RETURN(auto st, c->Prepare(std::string("SELECT a, e, v, tx") +
                                              (history ? ", rtx" : "") + " FROM " + table));
  Digest d;
  const int n = history ? 4 : 3;
  DbVal cells[4];
  const DbVal* hashed[] = {&cells[0], &cells[1], &cells[2], &cells[3]};
  for (;;) {
    MENTAT_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    for (int col = 0; col < n; ++col) cells[col] = schema::Column(st, col + 1);
    AddToDigest(&d, st.ColumnInt(0), hashed, n);
  }
  return d;
}

// PostgreSQL: the secondary indexes of the tables migrate fills, dropped before the copy
// and built again after it, in the same transaction: one sorted build per index instead
// of an insertion per row into each (the datoms have four, the history four). Indexes
// that back a constraint (the primary keys) stay.
struct SavedIndex {
  std::string name, definition;
};

Result<std::vector<SavedIndex>> DropIndexes(storage::Connection* c) {
  MENTAT_ASSIGN_OR_RETURN(
      auto st, c->Prepare("SELECT ic.relname, pg_get_indexdef(i.indexrelid) FROM pg_index i "
                          "JOIN pg_class ic ON ic.oid = i.indexrelid "
                          "JOIN pg_class tc ON tc.oid = i.indrelid "
                          "JOIN pg_namespace n ON n.oid = tc.relnamespace "
                          "WHERE n.nspname = current_schema() "
                          "AND tc.relname IN ('datoms', 'history', 'fulltext_docs') "
                          "AND NOT EXISTS (SELECT 1 FROM pg_constraint k "
                          "WHERE k.conindid = i.indexrelid) ORDER BY 1"));
  std::vector<SavedIndex> saved;
  for (;;) {
    MENTAT_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    saved.push_back({std::string(st.ColumnText(0)), std::string(st.ColumnText(1))});
  }
  for (const SavedIndex& ix : saved)
    MENTAT_RETURN_IF_ERROR(c->Exec("DROP INDEX \"" + ix.name + "\""));
  return saved;
}

Status BuildIndexes(storage::Connection* c, const std::vector<SavedIndex>& saved) {
  // The sort of each build in memory rather than in temporary files (this transaction
  // only).
  MENTAT_RETURN_IF_ERROR(c->Exec("SET LOCAL maintenance_work_mem = '256MB'"));
  for (const SavedIndex& ix : saved) MENTAT_RETURN_IF_ERROR(c->Exec(ix.definition));
  return Status::OK();
}

class Migration {
 public:
  Migration(storage::Connection* src, storage::Connection* dst,
            const std::function<void(int64_t, int64_t)>& progress)
      : src_(src), dst_(dst), progress_(progress) {}

  Result<MigrateReport> Run() {
    for (const Table& t : kTables) {
      MENTAT_ASSIGN_OR_RETURN(int64_t n,
                              src_->QueryInt(std::string("SELECT count(*) FROM ") + t.name, 0));
      total_ += n;
    }
    // The new store's bootstrap rows give way to the source's.
    for (const Table& t : kTables)
      MENTAT_RETURN_IF_ERROR(dst_->Exec(std::string("DELETE FROM ") + t.name));
    if (!dst_->is_pg())
      MENTAT_RETURN_IF_ERROR(dst_->Exec("INSERT INTO fulltext (fulltext) VALUES ('delete-all')"));
    std::vector<SavedIndex> indexes;
    if (dst_->is_pg()) {
      MENTAT_ASSIGN_OR_RETURN(indexes, DropIndexes(dst_));
    }
    MigrateReport report;
    for (const Table& t : kTables) {
      MENTAT_ASSIGN_OR_RETURN(int64_t n, Copy(t));
      if (t.name == std::string("datoms")) report.datoms = n;
      if (t.name == std::string("history")) report.history = n;
    }
    if (dst_->is_pg()) MENTAT_RETURN_IF_ERROR(BuildIndexes(dst_, indexes));
    if (!dst_->is_pg())
      MENTAT_RETURN_IF_ERROR(dst_->Exec("INSERT INTO fulltext (fulltext) VALUES ('rebuild')"));
    MENTAT_RETURN_IF_ERROR(Meta());
    return report;
  }

  // The digest of the source's rows of "datoms" or "history", taken while copying them.
  const Digest& source_digest(const std::string& table) const {
    return table == "history" ? history_digest_ : datoms_digest_;
  }

 private:
  // The source's SELECTs of `t`. Into PostgreSQL, which builds datoms_avet and datoms_aevt
  // after the copy (DropIndexes), a SQLite source's datoms are read through its own two
  // partial indexes, split by ix as PostgreSQL's are: rows that arrive in an index's order
  // make the sort of its build one pass (PostgreSQL's sort checks for sorted input).
  std::vector<std::string> Selects(const Table& t) const {
    const std::string all = std::string("SELECT ") + t.columns + " FROM " + t.name;
    if (t.name != std::string("datoms") || src_->is_pg() || !dst_->is_pg()) return {all};
    return {all + " WHERE ix IS NOT 0 ORDER BY a, v, e, tx",
            all + " WHERE ix IS NOT 1 AND ix = 0 ORDER BY a, e, v, tx"};
  }

  Result<int64_t> Copy(const Table& t) {
    const int n = Columns(t);
    // datoms (e, a, v, tx, ix) and history (e, a, v, tx, rtx): the cells the digest reads.
    Digest* digest = t.name == std::string("datoms")    ? &datoms_digest_
                     : t.name == std::string("history") ? &history_digest_
                                                        : nullptr;
    DbVal cells[5];
    const DbVal* hashed[] = {&cells[0], &cells[2], &cells[3], &cells[4]};
    const std::string copy = std::string("COPY ") + t.name + " (" + t.columns + ") FROM STDIN";
    MENTAT_ASSIGN_OR_RETURN(auto out, dst_->Prepare(std::string("INSERT INTO ") + t.name + " (" +
                                                    t.columns + ") VALUES (" + Params(n) + ")"));
    // PostgreSQL: one COPY for the table, its rows sent in pieces as they are read, so
    // that the server parses a piece while the next one is made.
    const bool pg = dst_->is_pg();
    if (pg) MENTAT_RETURN_IF_ERROR(dst_->CopyStart(copy));
    CopyRows rows;
    int64_t copied = 0;
    // The rows of one SELECT of the source, into the COPY (PostgreSQL) or `out`.
    auto copy_rows = [&](storage::Statement& in) -> Status {
      for (;;) {
        MENTAT_ASSIGN_OR_RETURN(bool row, in.Step());
        if (!row) break;
        for (int col = 0; col < n; ++col) {
          DbVal& v = cells[col];
          v = schema::Column(in, col);
          if (pg) {
            if (col == t.value) {
              rows.Text(schema::JsonOf(v));
            } else if (v.tag == DbVal::Tag::kInt) {
              rows.Int(v.i);
            } else {
              rows.Text(v.s);
            }
          } else {
            schema::Bind(out, col + 1, v);
          }
        }
        if (digest) AddToDigest(digest, cells[1].i, hashed, digest == &history_digest_ ? 4 : 3);
        if (pg) {
          rows.EndRow();
          if (rows.rows() >= 4096) {
            MENTAT_RETURN_IF_ERROR(dst_->CopyPut(rows.data()));
            rows.Clear();
          }
        } else {
          MENTAT_RETURN_IF_ERROR(out.Run());
          out.Reset();
        }
        ++copied;
        if (progress_ && (++done_ % 10000 == 0)) progress_(done_, total_);
      }
      return Status::OK();
    };
    Status st = [&]() -> Status {
      for (const std::string& select : Selects(t)) {
        MENTAT_ASSIGN_OR_RETURN(auto in, src_->Prepare(select));
        MENTAT_RETURN_IF_ERROR(copy_rows(in));
      }
      return pg && rows.rows() ? dst_->CopyPut(rows.data()) : Status::OK();
    }();
    if (pg) {
      // A failure while reading the source drops the COPY (the server ends it with the
      // message), so the connection is free for the rollback.
      auto finished = dst_->CopyFinish(st.ok() ? std::string() : "migrate: " + st.message());
      if (st.ok()) st = finished.status();
    }
    MENTAT_RETURN_IF_ERROR(st);
    if (progress_) progress_(done_, total_);
    return copied;
  }

  Status Meta() {
    for (const char* key : {"last_tx", "last_tx_instant", "schema_gen"}) {
      MENTAT_ASSIGN_OR_RETURN(
          int64_t v,
          src_->QueryInt(std::string("SELECT value FROM meta WHERE key = '") + key + "'", 0));
      MENTAT_ASSIGN_OR_RETURN(auto st,
                              dst_->Prepare("INSERT INTO meta (key, value) VALUES (?1, ?2) "
                                            "ON CONFLICT (key) DO UPDATE SET value = "
                                            "excluded.value"));
      st.BindText(1, key);
      st.BindInt(2, v + (std::string(key) == "schema_gen" ? 1 : 0));
      MENTAT_RETURN_IF_ERROR(st.Run());
    }
    return Status::OK();
  }

  storage::Connection* src_;
  storage::Connection* dst_;
  const std::function<void(int64_t, int64_t)>& progress_;
  int64_t total_ = 0, done_ = 0;
  Digest datoms_digest_, history_digest_;
};

// True when `name` already holds a store (or, for a file, anything at all).
Result<bool> Exists(const std::string& name) {
  if (!storage::Connection::IsPostgresName(name)) {
    struct stat st;
    return ::stat(name.c_str(), &st) == 0 && st.st_size > 0;
  }
  Options o;
  o.create = false;
  auto s = Store::open(name, o);
  if (s.ok()) return true;
  if (s.status().code() == Code::kNotFound) return false;
  return s.status();
}

}  // namespace

edn::Value MigrateReport::ToEdn() const {
  return edn::Value::Map({{edn::Value::Keyword("datoms"), edn::Value::Int(datoms)},
                          {edn::Value::Keyword("history"), edn::Value::Int(history)},
                          {edn::Value::Keyword("attributes"), edn::Value::Int(attributes)},
                          {edn::Value::Keyword("verified"), edn::Value::Bool(true)}});
}

Result<MigrateReport> migrate(const std::string& src, const std::string& dst,
                              const std::function<void(int64_t, int64_t)>& progress) {
  if (src.empty() || dst.empty())
    return Status::InvalidArgument(
        "migrate needs two stores: SRC and DST (files or "
        "postgresql:// names)");
  Options ro;
  ro.read_only = true;
  ro.create = false;
  MENTAT_ASSIGN_OR_RETURN(auto from, Store::open(src, ro));
  MENTAT_ASSIGN_OR_RETURN(bool exists, Exists(dst));
  if (exists)
    return Status::Conflict("the destination " + dst +
                            " already holds a store (or a file): migrate writes a new one");
  MENTAT_ASSIGN_OR_RETURN(auto to, Store::open(dst));
  MENTAT_ASSIGN_OR_RETURN(StoreImpl::Lease in, ImplOf(from)->Acquire());
  MENTAT_ASSIGN_OR_RETURN(StoreImpl::Lease out, ImplOf(to)->Acquire());
  storage::Connection* s = in.get()->db.get();
  storage::Connection* d = out.get()->db.get();
  // One snapshot of the source; the copy commits whole or not at all.
  storage::Transaction read(s);
  MENTAT_RETURN_IF_ERROR(read.Begin(false));
  storage::Transaction write(d);
  MENTAT_RETURN_IF_ERROR(write.Begin(true));
  Migration m(s, d, progress);
  auto copied = m.Run();
  if (!copied.ok())
    return Status(copied.status().code(),
                  "migrate: copying into " + dst +
                      " failed (nothing of it committed): " + copied.status().message());
  // Verification: the written rows, read back inside the transaction, against the rows of
  // the snapshot as they were read for the copy.
  MigrateReport report = *copied;
  for (const char* table : {"datoms", "history"}) {
    const Digest& a = m.source_digest(table);
    MENTAT_ASSIGN_OR_RETURN(Digest b, DigestOf(d, table));
    for (const auto& [attr, x] : a) {
      auto it = b.find(attr);
      if (it == b.end() || it->second != x)
        return Status::Corrupt(std::string("migrate: verification failed: the ") + table +
                               " of attribute " + std::to_string(attr) + " differ (" +
                               std::to_string(x.first) + " rows in the source, " +
                               std::to_string(it == b.end() ? 0 : it->second.first) +
                               " copied); nothing was committed");
    }
    if (a.size() != b.size())
      return Status::Corrupt(std::string("migrate: verification failed: the ") + table +
                             " have attributes the source does not; nothing was committed");
    if (table == std::string("datoms")) report.attributes = static_cast<int64_t>(a.size());
  }
  // A PostgreSQL store's planner statistics, for the tables just filled (autovacuum would
  // get to them only after its next nap, and until then PostgreSQL plans as for empty
  // tables): ANALYZE runs inside the transaction, so they come with its commit.
  if (d->is_pg())
    MENTAT_RETURN_IF_ERROR(d->Exec("ANALYZE datoms, history, fulltext_docs, attr_values"));
  MENTAT_RETURN_IF_ERROR(write.Commit());
  MENTAT_RETURN_IF_ERROR(read.Commit());
  return report;
}

}  // namespace mentat
