// The "pg-sql" backend: hand-written SQL over doc/format.md's PostgreSQL tables, in the
// schema the "pg" backend reads (run.sh migrates the store there and names it in
// MENTAT_SCALE_PG). It is to mentat on PostgreSQL what sqlite-sql is to the embedded
// store: the lower bound for the SQL mentat generates there. libpq directly: statements
// prepared once per session (parameter types inferred by the server and read back with
// PQdescribePrepared), each read one statement in autocommit, attribute ids inlined as
// constants, values decoded by the types known in advance. The variants' texts are in
// variants_pg.cc.
//
// Writes (write_mixed) are not written for PostgreSQL yet: SetState and AddLabel answer
// kUnsupported, and run.sh does not run write_mixed on pg or pg-sql.
#include <libpq-fe.h>

#include <cstdlib>
#include <map>
#include <optional>

#include "scale.h"
#include "variants.h"

namespace mentat::scale {
namespace {

// Type oids (pg_type.dat).
constexpr Oid kBool = 16, kInt8 = 20, kInt4 = 23, kText = 25, kFloat8 = 701, kNumeric = 1700,
              kJsonb = 3802, kVarchar = 1043;
// Value type entity ids (doc/format.md "Bootstrap"), as backend_sqlite_sql.cc.
constexpr int64_t kTypeRef = 13, kTypeKeyword = 14, kTypeLong = 15, kTypeDouble = 16,
                  kTypeString = 17, kTypeBoolean = 18, kTypeInstant = 19;
constexpr int64_t kCardinalityMany = 23;
constexpr int64_t kAttrIdent = 1, kAttrValueType = 5, kAttrCardinality = 6;

struct ResultCloser {
  void operator()(PGresult* r) const { PQclear(r); }
};
using ResultPtr = std::unique_ptr<PGresult, ResultCloser>;
struct ConnCloser {
  void operator()(PGconn* c) const { PQfinish(c); }
};
using ConnPtr = std::unique_ptr<PGconn, ConnCloser>;

// MENTAT_SCALE_PG's connection string without mentat's own `schema=NAME` (keyword form, as
// run.sh writes it; a URI's `?schema=`/`&schema=` too), and that schema ("mentat" if none).
std::pair<std::string, std::string> SplitSchema(std::string conninfo) {
  std::string schema = "mentat";
  for (const char* key : {" schema=", "?schema=", "&schema="}) {
    size_t at = conninfo.find(key);
    if (conninfo.rfind("schema=", 0) == 0)
      at = 0;
    else if (at == std::string::npos)
      continue;
    else
      at += 1;
    size_t end = conninfo.find_first_of(" &", at);
    schema = conninfo.substr(at + 7, end == std::string::npos ? std::string::npos : end - at - 7);
    conninfo.erase(at, end == std::string::npos ? std::string::npos : end - at);
    break;
  }
  while (!conninfo.empty() &&
         (conninfo.back() == ' ' || conninfo.back() == '?' || conninfo.back() == '&'))
    conninfo.pop_back();
  return {conninfo, schema};
}

// A JSON string literal of `s`.
std::string JsonString(const std::string& s) { return nlohmann::json(s).dump(); }

// A value as text: a jsonb column's JSON text ("abc" with its quotes, 5, 1.5, {"b": ..}) or
// a number column's digits.
edn::Value DecodeAs(char col, const char* text) {
  std::string t(text);
  std::string str = t;
  if (!t.empty() && t[0] == '"') str = nlohmann::json::parse(t).get<std::string>();
  switch (col) {
    case 'i':
      return edn::Value::Int(std::stoll(t));
    case 't':
      return edn::Value::Inst(std::stoll(t));
    case 'd':
      return edn::Value::Float(std::stod(t));
    case 'b':
      return edn::Value::Bool(t == "true" || t == "t" || t == "1");
    case 'k':
      return edn::Value::Keyword(std::string_view(str).substr(!str.empty() && str[0] == ':'));
    default:
      return edn::Value::String(str);
  }
}

class PgSqlSession : public Session {
 public:
  static Result<std::unique_ptr<Session>> Open(const std::string& name) {
    auto [conninfo, schema] = SplitSchema(name);
    ConnPtr conn(PQconnectdb(conninfo.c_str()));
    if (PQstatus(conn.get()) != CONNECTION_OK)
      return Status::Io("pg-sql: cannot connect: " + std::string(PQerrorMessage(conn.get())));
    std::unique_ptr<PgSqlSession> s(new PgSqlSession(std::move(conn)));
    // The settings mentat's connections have (doc/postgres.md "Speed"), so both sides plan alike.
    MENTAT_RETURN_IF_ERROR(s->Exec("SET search_path TO \"" + schema + "\"; SET jit = off"));
    MENTAT_RETURN_IF_ERROR(s->Init());
    return std::unique_ptr<Session>(std::move(s));
  }

  Result<Rows> PointLookup(const std::string& email) override {
    return Run(q1_, {Str(email)}, "is");
  }
  Result<Rows> RefTraversal(const std::string& email, std::optional<Entid> as_of) override {
    if (as_of) return Run(q2_as_of_, {Str(email), edn::Value::Int(*as_of)}, "isk");
    return Run(q2_, {Str(email)}, "isk");
  }
  Result<Rows> Aggregate() override { return Run(q3_, {}, "ki"); }
  Result<Rows> PredicateScan(int64_t min) override {
    return Run(q4_, {edn::Value::Int(min)}, "isi");
  }
  Result<Rows> Since(Entid t) override { return Run(since_, {edn::Value::Int(t)}, "i"); }
  Result<Rows> InputBindings(const std::vector<std::string>& emails) override {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& e : emails) arr.push_back(e);
    return Run(bindings_, {RawJson(arr.dump())}, "is");
  }
  Result<edn::Value> Pull(Entid e) override {
    MENTAT_ASSIGN_OR_RETURN(ResultPtr r, Execute(pull_, {edn::Value::Int(e)}));
    std::map<int64_t, edn::Vec> values;
    bool has_title = false;
    for (int i = 0; i < PQntuples(r.get()); ++i) {
      int64_t a = std::stoll(PQgetvalue(r.get(), i, 0));
      has_title |= a == title_;
      values[a].push_back(Decode(a, PQgetvalue(r.get(), i, 1)));
    }
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
  Result<Rows> AllStates() override { return Run(all_states_, {}, "ik"); }
  Status SetState(Entid, const std::string&) override {
    return Status::Unsupported("pg-sql: hand-written writes are not written for PostgreSQL yet");
  }
  Status AddLabel(Entid, const std::string&) override {
    return Status::Unsupported("pg-sql: hand-written writes are not written for PostgreSQL yet");
  }

  Result<Rows> RunVariant(const Variant& v, const VariantArgs& args, const Context& ctx,
                          int64_t) override {
    auto it = variants_.find(v.name);
    if (it == variants_.end()) {
      const std::string* text = PgVariantSql(v.name);
      if (!text) return Status::Unsupported("pg-sql: no PostgreSQL text for variant " + v.name);
      MENTAT_ASSIGN_OR_RETURN(std::string sql, VariantSql(
                                                   v, ctx,
                                                   [&](const std::string& ident) {
                                                     std::optional<int64_t> id;
                                                     for (const auto& [a, attr] : attrs_)
                                                       if (attr.ident.str() == ident) id = a;
                                                     return id;
                                                   },
                                                   text));
      MENTAT_ASSIGN_OR_RETURN(Stmt s, Prepare(sql));
      it = variants_.emplace(v.name, std::move(s)).first;
    }
    return Run(it->second, std::vector<Arg>(args.values.begin(), args.values.end()), v.cols);
  }

  Result<std::string> Explain(const std::string& scenario, const Context& ctx) override {
    const Stmt* s = nullptr;
    std::vector<Arg> args;
    if (scenario == "point_lookup" || scenario == "ref_traversal" || scenario == "as_of") {
      s = scenario == "point_lookup" ? &q1_ : scenario == "as_of" ? &q2_as_of_ : &q2_;
      args.push_back(Str(Email(0)));
      if (scenario == "as_of") args.push_back(edn::Value::Int(ctx.t_mid));
    } else if (scenario == "aggregate") {
      s = &q3_;
    } else if (scenario == "predicate_scan") {
      s = &q4_;
      args.push_back(edn::Value::Int(4));
    } else if (scenario == "since") {
      s = &since_;
      args.push_back(edn::Value::Int(ctx.t_since));
    } else if (scenario == "input_bindings") {
      s = &bindings_;
      args.push_back(RawJson("[\"" + Email(0) + "\"]"));
    } else if (scenario == "pull") {
      s = &pull_;
      args.push_back(edn::Value::Int(ctx.issue_eids.empty() ? 0 : ctx.issue_eids[0]));
    }
    if (!s) return Status::InvalidArgument("no statement for scenario " + scenario);
    // EXPLAIN of the prepared statement with these parameters (its generic or custom plan).
    std::string sql = "EXPLAIN EXECUTE " + s->name + "(";
    for (size_t i = 0; i < args.size(); ++i) {
      MENTAT_ASSIGN_OR_RETURN(std::string p, Encode(args[i], s->types.at(i)));
      char* lit = PQescapeLiteral(conn_.get(), p.data(), p.size());
      sql += (i ? ", " : "") + std::string(lit ? lit : "NULL");
      PQfreemem(lit);
    }
    sql += ")";
    ResultPtr r(PQexec(conn_.get(), sql.c_str()));
    if (PQresultStatus(r.get()) != PGRES_TUPLES_OK) return Error("explain", r.get());
    std::string out = s->sql + "\n\nEXPLAIN\n";
    for (int i = 0; i < PQntuples(r.get()); ++i)
      out += std::string(PQgetvalue(r.get(), i, 0)) + "\n";
    return out;
  }

 private:
  struct Attr {
    edn::Value ident;
    int64_t type = 0;
    bool many = false;
  };
  struct Stmt {
    std::string name, sql;
    std::vector<Oid> types;  // the parameters' types, as the server inferred them
  };

  explicit PgSqlSession(ConnPtr conn) : conn_(std::move(conn)) {}

  static edn::Value Str(const std::string& s) { return edn::Value::String(s); }
  // An input: a value, or JSON text bound as is (to a jsonb parameter).
  struct Arg {
    Arg(edn::Value v) : value(std::move(v)) {}  // NOLINT: implicit, as the inputs are values
    edn::Value value;
    std::optional<std::string> json;
  };
  static Arg RawJson(std::string json) {
    Arg a{edn::Value()};
    a.json = std::move(json);
    return a;
  }

  Status Error(const std::string& what, const PGresult* r) const {
    const char* msg = r ? PQresultErrorMessage(r) : PQerrorMessage(conn_.get());
    return Status::Io("pg-sql " + what + ": " + msg);
  }
  Status Exec(const std::string& sql) {
    ResultPtr r(PQexec(conn_.get(), sql.c_str()));
    auto st = PQresultStatus(r.get());
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) return Error(sql, r.get());
    return Status::OK();
  }

  Result<Stmt> Prepare(const std::string& sql) {
    Stmt s;
    s.name = "q" + std::to_string(next_++);
    s.sql = sql;
    ResultPtr r(PQprepare(conn_.get(), s.name.c_str(), sql.c_str(), 0, nullptr));
    if (PQresultStatus(r.get()) != PGRES_COMMAND_OK) return Error("prepare " + sql, r.get());
    ResultPtr d(PQdescribePrepared(conn_.get(), s.name.c_str()));
    if (PQresultStatus(d.get()) != PGRES_COMMAND_OK) return Error("describe " + sql, d.get());
    for (int i = 0; i < PQnparams(d.get()); ++i) s.types.push_back(PQparamtype(d.get(), i));
    return s;
  }

  // `v` as the text of a parameter of type `type`.
  static Result<std::string> Encode(const Arg& a, Oid type) {
    if (a.json) return *a.json;
    const edn::Value& v = a.value;
    if (type == kJsonb) {
      if (v.is_string()) return JsonString(v.str());
      if (v.is_keyword()) return JsonString(":" + v.str());
      if (v.is_float()) return nlohmann::json(v.as_double()).dump();
      if (v.is_int() || v.is_inst()) return std::to_string(v.as_int());
    } else if (type == kText || type == kVarchar) {
      if (v.is_string()) return v.str();
      if (v.is_keyword()) return ":" + v.str();
    } else if (type == kInt8 || type == kInt4 || type == kNumeric) {
      if (v.is_int() || v.is_inst()) return std::to_string(v.as_int());
    } else if (type == kFloat8) {
      if (v.is_float()) return nlohmann::json(v.as_double()).dump();
      if (v.is_int()) return std::to_string(v.as_int());
    } else if (type == kBool) {
      if (v.is_bool()) return std::string(v.as_bool() ? "true" : "false");
    }
    return Status::InvalidArgument("pg-sql: cannot bind " + edn::Print(v) +
                                   " to a parameter of type " + std::to_string(type));
  }

  Result<ResultPtr> Execute(const Stmt& s, const std::vector<Arg>& args) {
    if (args.size() != s.types.size())
      return Status::InvalidArgument("pg-sql: " + std::to_string(args.size()) + " inputs for " +
                                     std::to_string(s.types.size()) + " parameters: " + s.sql);
    std::vector<std::string> texts;
    texts.reserve(args.size());
    for (size_t i = 0; i < args.size(); ++i) {
      MENTAT_ASSIGN_OR_RETURN(std::string t, Encode(args[i], s.types[i]));
      texts.push_back(std::move(t));
    }
    std::vector<const char*> values;
    for (const auto& t : texts) values.push_back(t.c_str());
    ResultPtr r(PQexecPrepared(conn_.get(), s.name.c_str(), static_cast<int>(values.size()),
                               values.data(), nullptr, nullptr, 0));
    if (PQresultStatus(r.get()) != PGRES_TUPLES_OK) return Error("query " + s.sql, r.get());
    return r;
  }

  // The rows of `s` for `args`, each column decoded by its letter in `cols` (Variant::cols).
  Result<Rows> Run(const Stmt& s, const std::vector<Arg>& args, const std::string& cols) {
    MENTAT_ASSIGN_OR_RETURN(ResultPtr r, Execute(s, args));
    Rows rows;
    const int n = PQntuples(r.get()), nc = std::min<int>(PQnfields(r.get()), cols.size());
    rows.reserve(n);
    for (int i = 0; i < n; ++i) {
      Row row;
      row.reserve(nc);
      for (int c = 0; c < nc; ++c)
        row.push_back(PQgetisnull(r.get(), i, c) ? edn::Value()
                                                 : DecodeAs(cols[c], PQgetvalue(r.get(), i, c)));
      rows.push_back(std::move(row));
    }
    return rows;
  }

  // A value of attribute `a`, from its jsonb text.
  edn::Value Decode(int64_t a, const char* text) {
    auto it = attrs_.find(a);
    int64_t type = it == attrs_.end() ? 0 : it->second.type;
    switch (type) {
      case kTypeRef:
        return edn::Value::Map({{edn::Value::Keyword("db/id"), DecodeAs('i', text)}});
      case kTypeKeyword:
        return DecodeAs('k', text);
      case kTypeLong:
        return DecodeAs('i', text);
      case kTypeDouble:
        return DecodeAs('d', text);
      case kTypeString:
        return DecodeAs('s', text);
      case kTypeBoolean:
        return DecodeAs('b', text);
      case kTypeInstant:
        return DecodeAs('t', text);
      default:  // uuid and the other byte values: {"b": "<hex>"}
      {
        std::string hex = nlohmann::json::parse(text).value("b", "");
        std::string bytes;
        for (size_t i = 0; i + 1 < hex.size(); i += 2)
          bytes += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
        return edn::Value::Bytes(bytes);
      }
    }
  }

  Status Init();

  ConnPtr conn_;
  uint64_t next_ = 0;
  std::map<int64_t, Attr> attrs_;
  std::map<std::string, Stmt> variants_;  // by variant name
  int64_t title_ = 0;
  Stmt q1_, q2_, q2_as_of_, q3_, q4_, since_, bindings_, pull_, all_states_;
};

Status PgSqlSession::Init() {
  {
    MENTAT_ASSIGN_OR_RETURN(
        Stmt s,
        Prepare("SELECT i.e, i.v, t.v, c.v FROM datoms i JOIN datoms t ON t.e = i.e AND "
                "t.a = " +
                std::to_string(kAttrValueType) +
                " LEFT JOIN datoms c ON c.e = i.e AND c.a = " + std::to_string(kAttrCardinality) +
                " WHERE i.a = " + std::to_string(kAttrIdent) + " AND i.ix IS DISTINCT FROM 0"));
    MENTAT_ASSIGN_OR_RETURN(Rows rows, Run(s, {}, "ikii"));
    for (const auto& row : rows) {
      Attr a;
      a.ident = row[1];
      a.type = row[2].as_int();
      a.many = !row[3].is_nil() && row[3].as_int() == kCardinalityMany;
      attrs_[row[0].as_int()] = a;
    }
  }
  std::map<std::string, std::string> id;
  for (const char* ident : {"user/email", "user/name", "issue/title", "issue/state",
                            "issue/priority", "issue/assignee"}) {
    int64_t e = 0;
    for (const auto& [a, attr] : attrs_)
      if (attr.ident.str() == ident) e = a;
    if (!e) return Status::NotFound(std::string("pg-sql: no attribute :") + ident);
    id[ident] = std::to_string(e);
  }
  title_ = std::stoll(id["issue/title"]);
  const std::string email = id["user/email"], name = id["user/name"], title = id["issue/title"],
                    state = id["issue/state"], prio = id["issue/priority"],
                    asg = id["issue/assignee"];
  // One pattern as of $2 (backend_sqlite_sql.cc): current datoms asserted at or before it,
  // history intervals open at it.
  auto as_of = [](const std::string& cols, const std::string& from, const std::string& where,
                  bool by_value = false) {
    return "SELECT " + cols + " FROM " + from + " datoms d WHERE " + where +
           (by_value ? " AND d.ix IS DISTINCT FROM 0" : "") + " AND d.tx <= $2 UNION ALL SELECT " +
           cols + " FROM " + from + " history d WHERE " + where + " AND d.tx <= $2 AND d.rtx > $2";
  };
  struct {
    Stmt* stmt;
    std::string sql;
  } stmts[] = {
      {&q1_, "SELECT u.e, n.v FROM datoms u, datoms n WHERE u.a = " + email +
                 " AND u.ix IS DISTINCT FROM 0 AND u.v = $1 AND n.e = u.e AND n.a = " + name},
      {&q2_, "SELECT i.e, t.v, s.v FROM datoms u, datoms i, datoms t, datoms s WHERE u.a = " +
                 email + " AND u.ix IS DISTINCT FROM 0 AND u.v = $1 AND i.a = " + asg +
                 " AND i.ix IS DISTINCT FROM 0 AND i.v = to_jsonb(u.e) AND t.e = i.e AND t.a = " +
                 title + " AND s.e = i.e AND s.a = " + state},
      {&q2_as_of_, "WITH u(e) AS (" + as_of("d.e", "", "d.a = " + email + " AND d.v = $1", true) +
                       "), i(e) AS (SELECT DISTINCT e FROM (" +
                       as_of("d.e", "u,", "d.a = " + asg + " AND d.v = to_jsonb(u.e)", true) +
                       ") x) SELECT e, t, s FROM (SELECT i.e AS e, (" +
                       as_of("d.v", "", "d.e = i.e AND d.a = " + title) + ") AS t, (" +
                       as_of("d.v", "", "d.e = i.e AND d.a = " + state) +
                       ") AS s FROM i) y WHERE t IS NOT NULL AND s IS NOT NULL"},
      {&q3_, "SELECT v, count(*) FROM datoms WHERE a = " + state +
                 " AND ix IS DISTINCT FROM 0 GROUP BY v"},
      {&q4_, "SELECT s.e, t.v, p.v FROM datoms s, datoms p, datoms t WHERE s.a = " + state +
                 " AND s.ix IS DISTINCT FROM 0 AND s.v = '\":state/open\"' AND p.e = s.e AND "
                 "p.a = " +
                 prio + " AND p.v >= $1 AND t.e = s.e AND t.a = " + title},
      // :issue/state is cardinality one: one current datom per entity, so no DISTINCT.
      {&since_, "SELECT e FROM datoms WHERE tx > $1 AND a = " + state},
      {&bindings_, "SELECT u.e, n.v FROM datoms u, datoms n WHERE u.a = " + email +
                       " AND u.ix IS DISTINCT FROM 0 AND u.v IN (SELECT "
                       "jsonb_array_elements($1::jsonb)) AND n.e = u.e AND n.a = " +
                       name},
      {&pull_, "SELECT a, v FROM datoms WHERE e = $1"},
      {&all_states_, "SELECT e, v FROM datoms WHERE a = " + state + " AND ix IS DISTINCT FROM 0"},
  };
  for (auto& s : stmts) {
    MENTAT_ASSIGN_OR_RETURN(*s.stmt, Prepare(s.sql));
  }
  return Status::OK();
}

class PgSqlBackend : public Backend {
 public:
  explicit PgSqlBackend(std::string conninfo) : conninfo_(std::move(conninfo)) {}
  std::string name() const override { return "pg-sql"; }
  Result<std::unique_ptr<Session>> Connect() override { return PgSqlSession::Open(conninfo_); }

 private:
  std::string conninfo_;
};

}  // namespace

Result<std::unique_ptr<Backend>> OpenPgSql(const std::string& conninfo) {
  return std::unique_ptr<Backend>(new PgSqlBackend(conninfo));
}

}  // namespace mentat::scale
