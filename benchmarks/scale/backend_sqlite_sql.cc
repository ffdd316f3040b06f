// The "sqlite-sql" backend: hand-written SQL on the very same store file, using the tables
// of doc/format.md directly. It is the lower bound for the SQL mentat generates: statements
// prepared once per session, join orders pinned by hand (CROSS JOIN), attribute ids
// inlined as constants, and the value types known in advance.
//
// Writes are hand-written too, doing what doc/format.md says a transaction does (allocate
// the tx id from `parts`, assert :db/txInstant, move a replaced datom to `history`, keep
// `attr_stats` and `meta` in step), so other connections, mentat's included, read them.
#include <sqlite3.h>

#include <chrono>
#include <map>

#include "scale.h"
#include "variants.h"

namespace mentat::scale {
namespace {

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
struct StmtFinalizer {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using DbPtr = std::unique_ptr<sqlite3, DbCloser>;
using StmtPtr = std::unique_ptr<sqlite3_stmt, StmtFinalizer>;

// Value type entity ids (doc/format.md "Bootstrap").
constexpr int64_t kTypeRef = 13, kTypeKeyword = 14, kTypeLong = 15, kTypeDouble = 16,
                  kTypeString = 17, kTypeBoolean = 18, kTypeInstant = 19, kTypeUuid = 20;
constexpr int64_t kCardinalityMany = 23;
constexpr int64_t kAttrIdent = 1, kAttrTxInstant = 4, kAttrValueType = 5, kAttrCardinality = 6;
constexpr int64_t kPartTx = 3;

std::string Text(sqlite3_stmt* s, int col) {
  const unsigned char* t = sqlite3_column_text(s, col);
  return t ? std::string(reinterpret_cast<const char*>(t), sqlite3_column_bytes(s, col)) : "";
}

// A keyword column (stored with its leading colon) as an EDN keyword.
edn::Value Keyword(sqlite3_stmt* s, int col) {
  std::string t = Text(s, col);
  return edn::Value::Keyword(std::string_view(t).substr(t.empty() || t[0] != ':' ? 0 : 1));
}

class SqliteSession : public Session {
 public:
  static Result<std::unique_ptr<Session>> Open(const std::string& path) {
    sqlite3* raw = nullptr;
    int rc =
        sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr);
    DbPtr db(raw);
    if (rc != SQLITE_OK) return Status::Io(path + ": " + sqlite3_errstr(rc));
    std::unique_ptr<SqliteSession> s(new SqliteSession(std::move(db)));
    MENTAT_RETURN_IF_ERROR(s->Init());
    return std::unique_ptr<Session>(std::move(s));
  }

  Result<Rows> PointLookup(const std::string& email) override {
    sqlite3_stmt* s = q1_.get();
    sqlite3_bind_text(s, 1, email.data(), static_cast<int>(email.size()), SQLITE_STATIC);
    return Collect(s, [](sqlite3_stmt* st) {
      return Row{edn::Value::Int(sqlite3_column_int64(st, 0)), edn::Value::String(Text(st, 1))};
    });
  }
  Result<Rows> RefTraversal(const std::string& email, std::optional<Entid> as_of) override {
    sqlite3_stmt* s = as_of ? q2_as_of_.get() : q2_.get();
    sqlite3_bind_text(s, 1, email.data(), static_cast<int>(email.size()), SQLITE_STATIC);
    if (as_of) sqlite3_bind_int64(s, 2, *as_of);
    return Collect(s, [](sqlite3_stmt* st) {
      return Row{edn::Value::Int(sqlite3_column_int64(st, 0)), edn::Value::String(Text(st, 1)),
                 Keyword(st, 2)};
    });
  }
  Result<Rows> Aggregate() override {
    return Collect(q3_.get(), [](sqlite3_stmt* st) {
      return Row{Keyword(st, 0), edn::Value::Int(sqlite3_column_int64(st, 1))};
    });
  }
  Result<Rows> PredicateScan(int64_t min) override {
    sqlite3_bind_int64(q4_.get(), 1, min);
    return Collect(q4_.get(), [](sqlite3_stmt* st) {
      return Row{edn::Value::Int(sqlite3_column_int64(st, 0)), edn::Value::String(Text(st, 1)),
                 edn::Value::Int(sqlite3_column_int64(st, 2))};
    });
  }
  Result<Rows> Since(Entid t) override {
    sqlite3_bind_int64(since_.get(), 1, t);
    return Collect(since_.get(), [](sqlite3_stmt* st) {
      return Row{edn::Value::Int(sqlite3_column_int64(st, 0))};
    });
  }
  Result<Rows> InputBindings(const std::vector<std::string>& emails) override {
    std::string json = "[";
    for (size_t i = 0; i < emails.size(); ++i) json += (i ? ",\"" : "\"") + emails[i] + "\"";
    json += "]";
    sqlite3_bind_text(bindings_.get(), 1, json.data(), static_cast<int>(json.size()),
                      SQLITE_STATIC);
    return Collect(bindings_.get(), [](sqlite3_stmt* st) {
      return Row{edn::Value::Int(sqlite3_column_int64(st, 0)), edn::Value::String(Text(st, 1))};
    });
  }
  Result<edn::Value> Pull(Entid e) override {
    sqlite3_stmt* s = pull_.get();
    sqlite3_bind_int64(s, 1, e);
    std::map<int64_t, edn::Vec> values;
    bool has_title = false;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
      int64_t a = sqlite3_column_int64(s, 0);
      has_title |= a == title_;
      values[a].push_back(Decode(a, s, 1));
    }
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) return Error("pull");
    if (!has_title) return edn::Value();
    edn::MapEntries m;
    m.emplace_back(edn::Value::Keyword("db/id"), edn::Value::Int(e));
    for (auto& [a, vs] : values) {
      auto it = attrs_.find(a);
      edn::Value key = it == attrs_.end() ? edn::Value::Int(a) : it->second.ident;
      bool many = it != attrs_.end() && it->second.many;
      m.emplace_back(key, many ? edn::Value::Vector(std::move(vs)) : vs.front());
    }
    return edn::Value::Map(std::move(m));
  }
  Result<Rows> AllStates() override {
    return Collect(all_states_.get(), [](sqlite3_stmt* st) {
      return Row{edn::Value::Int(sqlite3_column_int64(st, 0)), Keyword(st, 1)};
    });
  }
  Status SetState(Entid issue, const std::string& state) override {
    return Write([&](Entid tx, int64_t* delta_label) -> Status {
      (void)delta_label;
      sqlite3_stmt* cur = cur_state_.get();
      sqlite3_bind_int64(cur, 1, issue);
      std::string old;
      int64_t old_tx = 0;
      bool found = false;
      if (sqlite3_step(cur) == SQLITE_ROW) {
        found = true;
        old = Text(cur, 0);
        old_tx = sqlite3_column_int64(cur, 1);
      }
      sqlite3_reset(cur);
      if (found && old == state) return Status::OK();  // already asserted: a no-op
      if (found) {
        MENTAT_RETURN_IF_ERROR(Run(del_state_.get(), {issue}, {old}));
        MENTAT_RETURN_IF_ERROR(Run(hist_state_.get(), {issue, old_tx, tx}, {old}));
      }
      return Run(ins_state_.get(), {issue, tx}, {state});
    });
  }
  Status AddLabel(Entid issue, const std::string& label) override {
    return Write([&](Entid tx, int64_t* delta_label) -> Status {
      MENTAT_RETURN_IF_ERROR(Run(ins_label_.get(), {issue, tx}, {label}));
      *delta_label = sqlite3_changes(db_.get());
      return Status::OK();
    });
  }

  // The variant's SQL, prepared on its first call in this session; the inputs bound as
  // ?1..?n (strings as text, keywords as ':ns/name' text, the rest as numbers), the columns
  // decoded by Variant::cols. No timeout: the hand-written SQL is the fast side.
  Result<Rows> RunVariant(const Variant& v, const VariantArgs& args, const Context& ctx,
                          int64_t) override {
    auto it = variants_.find(v.name);
    if (it == variants_.end()) {
      MENTAT_ASSIGN_OR_RETURN(std::string sql, VariantSql(v, ctx, [&](const std::string& ident) {
                                std::optional<int64_t> id;
                                for (const auto& [a, attr] : attrs_)
                                  if (attr.ident.str() == ident) id = a;
                                return id;
                              }));
      StmtPtr stmt;
      MENTAT_RETURN_IF_ERROR(Prepare(sql, &stmt));
      it = variants_.emplace(v.name, std::move(stmt)).first;
    }
    sqlite3_stmt* s = it->second.get();
    sqlite3_clear_bindings(s);
    for (size_t i = 0; i < args.values.size(); ++i) {
      const edn::Value& a = args.values[i];
      const int p = static_cast<int>(i + 1);
      if (a.is_string()) {
        sqlite3_bind_text(s, p, a.str().data(), static_cast<int>(a.str().size()), SQLITE_TRANSIENT);
      } else if (a.is_keyword()) {
        std::string k = ":" + a.str();
        sqlite3_bind_text(s, p, k.data(), static_cast<int>(k.size()), SQLITE_TRANSIENT);
      } else if (a.is_float()) {
        sqlite3_bind_double(s, p, a.as_double());
      } else if (a.is_int() || a.is_inst()) {
        sqlite3_bind_int64(s, p, a.as_int());
      } else {
        return Status::InvalidArgument("variant " + v.name + ": cannot bind " + edn::Print(a));
      }
    }
    const std::string& cols = v.cols;
    return Collect(s, [&cols](sqlite3_stmt* st) {
      Row row;
      row.reserve(cols.size());
      for (int c = 0; c < static_cast<int>(cols.size()); ++c) {
        if (sqlite3_column_type(st, c) == SQLITE_NULL) {
          row.push_back(edn::Value());
          continue;
        }
        switch (cols[c]) {
          case 'i':
            row.push_back(edn::Value::Int(sqlite3_column_int64(st, c)));
            break;
          case 's':
            row.push_back(edn::Value::String(Text(st, c)));
            break;
          case 'k':
            row.push_back(Keyword(st, c));
            break;
          case 'd':
            row.push_back(edn::Value::Float(sqlite3_column_double(st, c)));
            break;
          case 't':
            row.push_back(edn::Value::Inst(sqlite3_column_int64(st, c)));
            break;
          case 'b':
            row.push_back(edn::Value::Bool(sqlite3_column_int64(st, c) != 0));
            break;
          default:
            row.push_back(edn::Value::String(Text(st, c)));
        }
      }
      return row;
    });
  }

  Result<std::string> Explain(const std::string& scenario, const Context&) override {
    sqlite3_stmt* s = nullptr;
    if (scenario == "point_lookup") s = q1_.get();
    if (scenario == "ref_traversal") s = q2_.get();
    if (scenario == "as_of") s = q2_as_of_.get();
    if (scenario == "aggregate") s = q3_.get();
    if (scenario == "predicate_scan") s = q4_.get();
    if (scenario == "since") s = since_.get();
    if (scenario == "input_bindings") s = bindings_.get();
    if (scenario == "pull") s = pull_.get();
    if (!s) return Status::InvalidArgument("no statement for scenario " + scenario);
    std::string sql = sqlite3_sql(s);
    StmtPtr plan;
    MENTAT_RETURN_IF_ERROR(Prepare("EXPLAIN QUERY PLAN " + sql, &plan));
    std::string out = sql + "\n\nEXPLAIN QUERY PLAN\n";
    std::map<int64_t, int> depth;
    while (sqlite3_step(plan.get()) == SQLITE_ROW) {
      int64_t id = sqlite3_column_int64(plan.get(), 0);
      int64_t parent = sqlite3_column_int64(plan.get(), 1);
      int d = depth.count(parent) ? depth[parent] + 1 : 0;
      depth[id] = d;
      out += std::string(2 * d, ' ') + "- " + Text(plan.get(), 3) + "\n";
    }
    return out;
  }

 private:
  struct Attr {
    edn::Value ident;
    int64_t type = 0;
    bool many = false;
  };

  explicit SqliteSession(DbPtr db) : db_(std::move(db)) {}

  Status Error(const std::string& what) {
    return Status::Io("sqlite-sql " + what + ": " + sqlite3_errmsg(db_.get()));
  }

  Status Prepare(const std::string& sql, StmtPtr* out) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v3(db_.get(), sql.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &s, nullptr) !=
        SQLITE_OK)
      return Error("prepare " + sql);
    out->reset(s);
    return Status::OK();
  }

  // Steps `s` to the end, converting each row; resets it.
  template <typename F>
  Result<Rows> Collect(sqlite3_stmt* s, F row) {
    Rows rows;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) rows.push_back(row(s));
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) return Error("query");
    return rows;
  }

  // Binds ints then texts (parameters 1..n in that order), runs `s` and resets it.
  Status Run(sqlite3_stmt* s, std::initializer_list<int64_t> ints,
             std::initializer_list<std::string> texts) {
    int i = 1;
    for (int64_t v : ints) sqlite3_bind_int64(s, i++, v);
    for (const auto& t : texts)
      sqlite3_bind_text(s, i++, t.data(), static_cast<int>(t.size()), SQLITE_TRANSIENT);
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    return rc == SQLITE_DONE || rc == SQLITE_ROW ? Status::OK() : Error("write");
  }

  // The first column of the first row of `s`.
  Result<int64_t> One(sqlite3_stmt* s) {
    int rc = sqlite3_step(s);
    int64_t v = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
    sqlite3_reset(s);
    if (rc != SQLITE_ROW) return Status::NotFound(std::string("no row for ") + sqlite3_sql(s));
    return v;
  }

  edn::Value Decode(int64_t a, sqlite3_stmt* s, int col) {
    auto it = attrs_.find(a);
    int64_t type = it == attrs_.end() ? 0 : it->second.type;
    switch (type) {
      case kTypeRef:
        return edn::Value::Map(
            {{edn::Value::Keyword("db/id"), edn::Value::Int(sqlite3_column_int64(s, col))}});
      case kTypeKeyword:
        return Keyword(s, col);
      case kTypeLong:
        return edn::Value::Int(sqlite3_column_int64(s, col));
      case kTypeDouble:
        return edn::Value::Float(sqlite3_column_double(s, col));
      case kTypeString:
        return edn::Value::String(Text(s, col));
      case kTypeBoolean:
        return edn::Value::Bool(sqlite3_column_int64(s, col) != 0);
      case kTypeInstant:
        return edn::Value::Inst(sqlite3_column_int64(s, col));
      case kTypeUuid:
      default:
        return edn::Value::Bytes(std::string(static_cast<const char*>(sqlite3_column_blob(s, col)),
                                             sqlite3_column_bytes(s, col)));
    }
  }

  Status Init();

  // Runs `body(tx, &label_delta)` in a write transaction that allocates the tx id, asserts
  // :db/txInstant and keeps attr_stats and meta in step, as mentat's transactor does.
  template <typename F>
  Status Write(F body) {
    MENTAT_RETURN_IF_ERROR(Run(begin_.get(), {}, {}));
    Status st = WriteBody(body);
    if (!st.ok()) {
      (void)Run(rollback_.get(), {}, {});
      return st;
    }
    return Run(commit_.get(), {}, {});
  }
  template <typename F>
  Status WriteBody(F body) {
    MENTAT_ASSIGN_OR_RETURN(Entid tx, One(next_of_tx_.get()));
    MENTAT_ASSIGN_OR_RETURN(int64_t last_instant, One(last_instant_.get()));
    int64_t now = std::chrono::duration_cast<std::chrono::microseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
    int64_t instant = std::max(now, last_instant);
    MENTAT_RETURN_IF_ERROR(Run(next_tx_.get(), {tx + 1, kPartTx}, {}));
    MENTAT_RETURN_IF_ERROR(Run(ins_instant_.get(), {tx, instant}, {}));
    int64_t delta_label = 0;
    MENTAT_RETURN_IF_ERROR(body(tx, &delta_label));
    MENTAT_RETURN_IF_ERROR(Stats(kAttrTxInstant, 1));
    if (delta_label) MENTAT_RETURN_IF_ERROR(Stats(label_, delta_label));
    MENTAT_RETURN_IF_ERROR(Run(set_meta_.get(), {tx}, {"last_tx"}));
    return Run(set_meta_.get(), {instant}, {"last_tx_instant"});
  }
  // attr_stats: the datom count, and a distinct-value recount when the count has doubled
  // or halved since the last one (the transactor's rule).
  Status Stats(int64_t a, int64_t delta) {
    sqlite3_stmt* s = stats_.get();
    sqlite3_bind_int64(s, 1, a);
    sqlite3_bind_int64(s, 2, delta);
    int64_t datoms = 0, at = 0;
    if (sqlite3_step(s) == SQLITE_ROW) {
      datoms = sqlite3_column_int64(s, 0);
      at = sqlite3_column_int64(s, 1);
    }
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) return Error("attr_stats");
    if (datoms > 2 * at || datoms < at / 2) return Run(recount_.get(), {a}, {});
    return Status::OK();
  }

  DbPtr db_;
  std::map<int64_t, Attr> attrs_;
  std::map<std::string, StmtPtr> variants_;  // by variant name
  int64_t title_ = 0, label_ = 0;
  StmtPtr q1_, q2_, q2_as_of_, q3_, q4_, since_, bindings_, pull_, all_states_;
  StmtPtr begin_, commit_, rollback_, next_of_tx_, last_instant_, next_tx_, ins_instant_,
      cur_state_, del_state_, hist_state_, ins_state_, ins_label_, stats_, recount_, set_meta_;
};

Status SqliteSession::Init() {
  sqlite3* db = db_.get();
  sqlite3_busy_timeout(db, 10000);
  // The same connection settings as mentat's (doc/format.md "Connections").
  for (const char* p : {"PRAGMA mmap_size = 1073741824", "PRAGMA temp_store = 1",
                        "PRAGMA cache_size = -65536", "PRAGMA synchronous = NORMAL"}) {
    if (sqlite3_exec(db, p, nullptr, nullptr, nullptr) != SQLITE_OK) return Error(p);
  }
  // The attributes: ident, value type, cardinality.
  {
    StmtPtr s;
    MENTAT_RETURN_IF_ERROR(Prepare(
        "SELECT i.e, i.v, t.v, c.v FROM datoms i JOIN datoms t ON t.e = i.e AND t.a = " +
            std::to_string(kAttrValueType) +
            " LEFT JOIN datoms c ON c.e = i.e AND c.a = " + std::to_string(kAttrCardinality) +
            " WHERE i.a = " + std::to_string(kAttrIdent) + " AND i.ix IS NOT 0",
        &s));
    while (sqlite3_step(s.get()) == SQLITE_ROW) {
      Attr a;
      a.ident = Keyword(s.get(), 1);
      a.type = sqlite3_column_int64(s.get(), 2);
      a.many = sqlite3_column_int64(s.get(), 3) == kCardinalityMany;
      attrs_[sqlite3_column_int64(s.get(), 0)] = a;
    }
  }
  std::map<std::string, std::string> id;
  for (const char* ident : {"user/email", "user/name", "issue/title", "issue/state",
                            "issue/priority", "issue/assignee", "issue/label", "label/name"}) {
    int64_t e = 0;
    for (const auto& [a, attr] : attrs_)
      if (attr.ident.str() == ident) e = a;
    if (!e) return Status::NotFound(std::string("sqlite-sql: no attribute :") + ident);
    id[ident] = std::to_string(e);
  }
  title_ = std::stoll(id["issue/title"]);
  label_ = std::stoll(id["issue/label"]);
  const std::string email = id["user/email"], name = id["user/name"], title = id["issue/title"],
                    state = id["issue/state"], prio = id["issue/priority"],
                    asg = id["issue/assignee"];
  // A ref value compared with an entity column is written `v = +e`: the unary plus drops
  // the column's INTEGER affinity, which would otherwise keep SQLite from using the
  // (a, v) index on `v`, a column without affinity.
  // The as-of view of one pattern: current datoms asserted at or before t, and history
  // intervals open at t (doc/format.md "The database views").
  // `by_value`: the pattern reads the value index (format 3: `ix IS NOT 0` on datoms).
  auto as_of = [](const std::string& cols, const std::string& from, const std::string& where,
                  bool by_value = false) {
    return "SELECT " + cols + " FROM " + from + " datoms d WHERE " + where +
           (by_value ? " AND d.ix IS NOT 0" : "") + " AND d.tx <= ?2 UNION ALL SELECT " + cols +
           " FROM " + from + " history d WHERE " + where + " AND d.tx <= ?2 AND d.rtx > ?2";
  };
  struct {
    StmtPtr* stmt;
    std::string sql;
  } stmts[] = {
      {&q1_, "SELECT u.e, n.v FROM datoms u CROSS JOIN datoms n WHERE u.a = " + email +
                 " AND u.ix IS NOT 0 AND u.v = ?1 AND n.e = u.e AND n.a = " + name},
      {&q2_,
       "SELECT i.e, t.v, s.v FROM datoms u CROSS JOIN datoms i CROSS JOIN datoms t "
       "CROSS JOIN datoms s WHERE u.a = " +
           email + " AND u.ix IS NOT 0 AND u.v = ?1 AND i.a = " + asg +
           " AND i.ix IS NOT 0 AND i.v = +u.e AND t.e = i.e AND t.a = " + title +
           " AND s.e = i.e AND s.a = " + state},
      // Title and state are cardinality one: at most one value holds at t, so each is a
      // scalar subquery per issue (a join of two UNION ALL views would be flattened by
      // SQLite into a product of the issue set with itself).
      {&q2_as_of_, "WITH u(e) AS (" + as_of("d.e", "", "d.a = " + email + " AND d.v = ?1", true) +
                       "), i(e) AS (SELECT DISTINCT e FROM (" +
                       as_of("d.e", "u CROSS JOIN", "d.a = " + asg + " AND d.v = +u.e", true) +
                       ")) SELECT e, t, s FROM (SELECT i.e AS e, (" +
                       as_of("d.v", "", "d.e = i.e AND d.a = " + title) + ") AS t, (" +
                       as_of("d.v", "", "d.e = i.e AND d.a = " + state) +
                       ") AS s FROM i) WHERE t IS NOT NULL AND s IS NOT NULL"},
      {&q3_, "SELECT v, count(*) FROM datoms WHERE a = " + state + " AND ix IS NOT 0 GROUP BY v"},
      {&q4_,
       "SELECT s.e, t.v, p.v FROM datoms s CROSS JOIN datoms p CROSS JOIN datoms t "
       "WHERE s.a = " +
           state + " AND s.ix IS NOT 0 AND s.v = ':state/open' AND p.e = s.e AND p.a = " + prio +
           " AND p.v >= ?1 AND t.e = s.e AND t.a = " + title},
      // :issue/state is cardinality one: an entity has one current datom, so no DISTINCT.
      {&since_, "SELECT e FROM datoms INDEXED BY datoms_tx WHERE tx > ?1 AND a = " + state},
      {&bindings_, "SELECT u.e, n.v FROM datoms u CROSS JOIN datoms n WHERE u.a = " + email +
                       " AND u.ix IS NOT 0 AND u.v IN (SELECT value FROM json_each(?1)) AND n.e = "
                       "u.e AND n.a = " +
                       name},
      {&pull_, "SELECT a, v FROM datoms WHERE e = ?1"},
      {&all_states_, "SELECT e, v FROM datoms WHERE a = " + state + " AND ix IS NOT 0"},
      {&begin_, "BEGIN IMMEDIATE"},
      {&commit_, "COMMIT"},
      {&rollback_, "ROLLBACK"},
      {&next_of_tx_, "SELECT next FROM parts WHERE part = " + std::to_string(kPartTx)},
      {&last_instant_, "SELECT value FROM meta WHERE key = 'last_tx_instant'"},
      {&next_tx_, "UPDATE parts SET next = ?1 WHERE part = ?2"},
      {&ins_instant_, "INSERT INTO datoms (e, a, v, tx, ix) VALUES (?1, " +
                          std::to_string(kAttrTxInstant) + ", ?2, ?1, 1)"},
      {&cur_state_, "SELECT v, tx FROM datoms WHERE e = ?1 AND a = " + state},
      {&del_state_, "DELETE FROM datoms WHERE e = ?1 AND a = " + state + " AND v = ?2"},
      {&hist_state_,
       "INSERT OR REPLACE INTO history (e, a, v, tx, rtx) VALUES (?1, " + state + ", ?4, ?2, ?3)"},
      {&ins_state_, "INSERT INTO datoms (e, a, v, tx, ix) VALUES (?1, " + state + ", ?3, ?2, 1)"},
      {&ins_label_, "INSERT OR IGNORE INTO datoms (e, a, v, tx, ix) SELECT ?1, " +
                        id["issue/label"] + ", l.e, ?2, 1 FROM datoms l WHERE l.a = " +
                        id["label/name"] + " AND l.ix IS NOT 0 AND l.v = ?3"},
      {&stats_,
       "INSERT INTO attr_stats (a, datoms, distinct_values, distinct_at) "
       "VALUES (?1, ?2, 0, 0) ON CONFLICT(a) DO UPDATE SET "
       "datoms = datoms + excluded.datoms RETURNING datoms, distinct_at"},
      {&recount_,
       "UPDATE attr_stats SET distinct_values = (SELECT count(DISTINCT v) "
       "FROM datoms WHERE a = ?1 AND ix IS NOT 0), distinct_at = datoms WHERE a = ?1"},
      {&set_meta_,
       "INSERT INTO meta (key, value) VALUES (?2, ?1) "
       "ON CONFLICT(key) DO UPDATE SET value = excluded.value"},
  };
  for (auto& s : stmts) MENTAT_RETURN_IF_ERROR(Prepare(s.sql, s.stmt));
  return Status::OK();
}

class SqliteBackend : public Backend {
 public:
  explicit SqliteBackend(std::string path) : path_(std::move(path)) {}
  std::string name() const override { return "sqlite-sql"; }
  Result<std::unique_ptr<Session>> Connect() override { return SqliteSession::Open(path_); }

 private:
  std::string path_;
};

}  // namespace

Result<std::unique_ptr<Backend>> OpenSqliteSql(const std::string& store) {
  return std::unique_ptr<Backend>(new SqliteBackend(store));
}

}  // namespace mentat::scale
