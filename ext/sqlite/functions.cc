// The scalar SQL functions: edn_t, edn_q, edn_pull, edn_eval (as in the Rust mentat), and
// edn_datoms, edn_explain and mentat_version beyond it. README.md documents each.
#include "functions.h"

#include <new>
#include <string>

#include "calls.h"
#include "json_shapes.h"
#include "mentat/log.h"
#include "mentat/script.h"

namespace mentat::sqlite_ext {

namespace {

HostContext* Ctx(sqlite3_context* c) { return static_cast<HostContext*>(sqlite3_user_data(c)); }

enum class Format { kJson, kEdn };

// The optional trailing format argument: 'json' (the default) or 'edn'.
Result<Format> FormatArg(int argc, sqlite3_value** argv, int index) {
  if (argc <= index) return Format::kJson;
  auto f = TextArg(argv[index]);
  if (!f || *f == "json" || *f == "JSON") return Format::kJson;
  if (*f == "edn" || *f == "EDN") return Format::kEdn;
  return Status::InvalidArgument("format must be 'json' or 'edn', got '" + *f + "'");
}

// The result of one call: text, or NULL when std::nullopt.
using Out = Result<std::optional<std::string>>;
Out Text(std::string s) { return std::optional<std::string>(std::move(s)); }
Out Null() { return std::optional<std::string>(); }

// Runs `body` and hands its outcome to SQLite. No exception reaches the host.
template <typename Body>
void Call(sqlite3_context* c, const char* fn, Body&& body) {
  try {
    Out out = body();
    if (!out.ok()) return ResultStatus(c, fn, out.status());
    if (!*out) return sqlite3_result_null(c);
    const std::string& s = **out;
    sqlite3_result_text(c, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
  } catch (const std::bad_alloc&) {
    sqlite3_result_error_nomem(c);
  } catch (const std::exception& e) {
    ResultStatus(c, fn, Status::Internal(e.what()));
  } catch (...) {
    ResultStatus(c, fn, Status::Internal("unknown exception"));
  }
}

// Host mode reads of a database without a store return NULL.
#define MENTAT_NULL_IF_NO_STORE(ref) \
  if (!(ref).get()) return std::optional<std::string>()

void EdnT(sqlite3_context* c, int argc, sqlite3_value** argv) {
  Call(c, "edn_t", [&]() -> Out {
    auto db_path = TextArg(argv[0]);
    auto edn = TextArg(argv[1]);
    if (!edn) return Null();
    MENTAT_ASSIGN_OR_RETURN(Format format, FormatArg(argc, argv, 2));
    MENTAT_ASSIGN_OR_RETURN(StoreRef ref, AcquireStore(Ctx(c), db_path, Access::kWrite));
    MENTAT_ASSIGN_OR_RETURN(TxReport report, ref.get()->transact(*edn));
    if (format == Format::kEdn) {
      auto schema = ref.get()->schema();
      return Text(edn::Print(report.ToEdn(schema.get())));
    }
    return Text(TxReportJson(report));
  });
}

void EdnQ(sqlite3_context* c, int argc, sqlite3_value** argv) {
  Call(c, "edn_q", [&]() -> Out {
    auto db_path = TextArg(argv[0]);
    auto query = TextArg(argv[1]);
    if (!query) return Null();
    std::optional<std::string> options;
    if (argc > 2) options = TextArg(argv[2]);
    MENTAT_ASSIGN_OR_RETURN(Format format, FormatArg(argc, argv, 3));
    MENTAT_ASSIGN_OR_RETURN(auto result, RunQuery(Ctx(c), db_path, *query, options));
    if (!result) return Null();
    if (format == Format::kEdn) return Text(edn::Print(result->ToEdn()));
    return Text(QueryResultJson(*result));
  });
}

// The entity argument of edn_pull: an INTEGER id, or EDN text (an id, an ident such as
// :person/alice, a lookup ref such as [:person/email "a@example.com"]). `*plain` is false
// for text that is none of those, which the store then rejects.
constexpr const char* kEntityWanted =
    "entity must be an INTEGER entity id (or, as EDN text, an ident or a lookup ref)";

Result<edn::Value> EntityArg(sqlite3_value* v, bool* plain) {
  int type = sqlite3_value_type(v);
  *plain = true;
  if (type == SQLITE_INTEGER) return edn::Value::Int(sqlite3_value_int64(v));
  if (type == SQLITE_TEXT) {
    std::string text = *TextArg(v);
    auto e = edn::Read(text);
    if (!e.ok())
      return Status::InvalidArgument(std::string(kEntityWanted) + ", got '" + text + "'");
    *plain = e->is_int() || e->is_keyword() || (e->is_vector() && e->size() == 2);
    return *e;
  }
  return Status::InvalidArgument(std::string(kEntityWanted) + ", got a " +
                                 (type == SQLITE_FLOAT ? "REAL" : "BLOB"));
}

// The id of the entity `eid` names (an id, an ident or a lookup ref); std::nullopt when
// an ident or lookup ref names nothing.
Result<std::optional<Entid>> EntityId(Store* store, const edn::Value& eid) {
  if (eid.is_int()) return std::optional<Entid>(eid.as_int());
  std::vector<edn::Value> avet;
  if (eid.is_keyword()) {
    avet = {edn::Value::Keyword("db/ident"), eid};
  } else if (eid.is_vector() && eid.size() == 2) {
    avet = eid.items();
  } else {
    return std::optional<Entid>();
  }
  MENTAT_ASSIGN_OR_RETURN(auto datoms, store->datoms(":avet", avet));
  if (datoms.empty()) return std::optional<Entid>();
  return std::optional<Entid>(datoms[0].e);
}

void EdnPull(sqlite3_context* c, int argc, sqlite3_value** argv) {
  Call(c, "edn_pull", [&]() -> Out {
    auto db_path = TextArg(argv[0]);
    auto pattern = TextArg(argv[1]);
    if (!pattern || sqlite3_value_type(argv[2]) == SQLITE_NULL) return Null();
    bool plain = true;
    MENTAT_ASSIGN_OR_RETURN(edn::Value eid, EntityArg(argv[2], &plain));
    MENTAT_ASSIGN_OR_RETURN(Format format, FormatArg(argc, argv, 3));
    MENTAT_ASSIGN_OR_RETURN(StoreRef ref, AcquireStore(Ctx(c), db_path, Access::kRead));
    MENTAT_NULL_IF_NO_STORE(ref);
    auto pulled = ref.get()->pull(*pattern, eid);
    if (!pulled.ok()) {
      // The store's message, with the Rust extension's wording for its two usual causes.
      std::string msg = pulled.status().message();
      if (!plain) msg = std::string(kEntityWanted) + ": " + msg;
      auto parsed = edn::Read(*pattern);
      if (!parsed.ok() || !parsed->is_vector())
        msg += " (the pattern must be an EDN vector like [*] or [:person/name])";
      return Status(pulled.status().code(), msg);
    }
    if (format == Format::kEdn) return Text(edn::Print(*pulled));
    // As the Rust extension (pg_mentat's mentat_pull): a map that always has :db/id.
    std::optional<Entid> id;
    if (!pulled->is_map() || !pulled->get_keyword("db/id")) {
      MENTAT_ASSIGN_OR_RETURN(id, EntityId(ref.get(), eid));
    }
    return Text(PullJson(*pulled, id));
  });
}

// edn_entity(db_path, eid [, format]): the entity touched (Datomic's
// (d/touch (d/entity db eid))): every attribute with its values, cardinality-many ones as
// sets, refs as {:db/id N} (or the ident), components touched too; eid as for edn_pull.
void EdnEntity(sqlite3_context* c, int argc, sqlite3_value** argv) {
  Call(c, "edn_entity", [&]() -> Out {
    auto db_path = TextArg(argv[0]);
    if (sqlite3_value_type(argv[1]) == SQLITE_NULL) return Null();
    bool plain = true;
    MENTAT_ASSIGN_OR_RETURN(edn::Value eid, EntityArg(argv[1], &plain));
    MENTAT_ASSIGN_OR_RETURN(Format format, FormatArg(argc, argv, 2));
    MENTAT_ASSIGN_OR_RETURN(StoreRef ref, AcquireStore(Ctx(c), db_path, Access::kRead));
    MENTAT_NULL_IF_NO_STORE(ref);
    auto entity = ref.get()->entity(eid);
    if (!entity.ok()) {
      if (plain) return entity.status();
      return Status(entity.status().code(),
                    std::string(kEntityWanted) + ": " + entity.status().message());
    }
    MENTAT_ASSIGN_OR_RETURN(edn::Value touched, entity->touch());
    if (format == Format::kEdn) return Text(edn::Print(touched));
    return Text(PullJson(touched, std::nullopt));
  });
}

// edn_eval(db_path, script): runs a script (include/mentat/script.h) whose default
// connection, (mentat.store/open) with no argument, is the store named by db_path; the
// result is the last form's value as EDN text. Sandboxed: no files (other stores
// included), network or processes; step, memory and depth limits.
void EdnEval(sqlite3_context* c, int, sqlite3_value** argv) {
  Call(c, "edn_eval", [&]() -> Out {
    auto db_path = TextArg(argv[0]);
    auto source = TextArg(argv[1]);
    if (!source) return Null();
    MENTAT_ASSIGN_OR_RETURN(StoreRef ref, AcquireStore(Ctx(c), db_path, Access::kWrite));
    script::Interpreter interpreter;
    interpreter.SetStore(ref.get(), "");
    auto out = interpreter.EvalToString(*source);
    if (!out.ok()) {
      // The Rust extension's users match "unbound symbol: NAME" (its sandbox leaves the
      // file functions unbound); say it their way as well.
      std::string msg = out.status().message();
      constexpr std::string_view kUnresolved = "unable to resolve symbol: ";
      size_t at = msg.find(kUnresolved);
      if (at != std::string::npos) {
        std::string name = msg.substr(at + kUnresolved.size());
        name = name.substr(0, name.find_first_of(" \n"));
        msg += " (unbound symbol: " + name + ")";
      }
      return Status(out.status().code(), msg);
    }
    return Text(std::move(*out));
  });
}

void EdnDatoms(sqlite3_context* c, int argc, sqlite3_value** argv) {
  Call(c, "edn_datoms", [&]() -> Out {
    auto db_path = TextArg(argv[0]);
    auto index = TextArg(argv[1]);
    if (!index) return Null();
    std::vector<edn::Value> components;
    if (argc > 2) {
      if (auto text = TextArg(argv[2])) {
        MENTAT_ASSIGN_OR_RETURN(edn::Vec parts, edn::ReadAll(*text));
        components.assign(parts.begin(), parts.end());
      }
    }
    MENTAT_ASSIGN_OR_RETURN(Format format, FormatArg(argc, argv, 3));
    MENTAT_ASSIGN_OR_RETURN(StoreRef ref, AcquireStore(Ctx(c), db_path, Access::kRead));
    MENTAT_NULL_IF_NO_STORE(ref);
    MENTAT_ASSIGN_OR_RETURN(auto datoms, ref.get()->datoms(*index, components));
    auto schema = ref.get()->schema();
    edn::Vec rows;
    rows.reserve(datoms.size());
    for (const auto& d : datoms) {
      edn::Value a = edn::Value::Int(d.a);
      if (const std::string* id = schema->ident(d.a)) a = edn::Value::Keyword(*id);
      rows.push_back(edn::Value::Vector(
          {edn::Value::Int(d.e), a, d.v, edn::Value::Int(d.tx), edn::Value::Bool(d.added)}));
    }
    edn::Value all = edn::Value::Vector(std::move(rows));
    if (format == Format::kEdn) return Text(edn::Print(all));
    return Text(QueryValueJson(all));
  });
}

// A bound of edn_log: NULL (open), an integer (a tx id, or a t below the tx partition) or
// EDN text of one (an #inst too).
Result<std::optional<TxPoint>> LogBound(sqlite3_value* v) {
  if (sqlite3_value_type(v) == SQLITE_NULL) return std::optional<TxPoint>();
  if (sqlite3_value_type(v) == SQLITE_INTEGER)
    return std::optional<TxPoint>(TxPoint::Tx(sqlite3_value_int64(v)));
  auto text = TextArg(v);
  if (!text) return std::optional<TxPoint>();
  MENTAT_ASSIGN_OR_RETURN(edn::Value x, edn::Read(*text));
  if (x.is_nil()) return std::optional<TxPoint>();
  if (x.is_int() && x.as_int() >= 0) return std::optional<TxPoint>(TxPoint::Tx(x.as_int()));
  if (x.is_inst()) return std::optional<TxPoint>(TxPoint::Instant(x.as_inst_micros()));
  return Status::InvalidArgument("a log bound is a tx id, a t, an #inst or NULL, got " + *text);
}

void EdnLog(sqlite3_context* c, int argc, sqlite3_value** argv) {
  Call(c, "edn_log", [&]() -> Out {
    auto db_path = TextArg(argv[0]);
    std::optional<TxPoint> from, to;
    if (argc > 1) {
      MENTAT_ASSIGN_OR_RETURN(from, LogBound(argv[1]));
    }
    if (argc > 2) {
      MENTAT_ASSIGN_OR_RETURN(to, LogBound(argv[2]));
    }
    MENTAT_ASSIGN_OR_RETURN(Format format, FormatArg(argc, argv, 3));
    MENTAT_ASSIGN_OR_RETURN(StoreRef ref, AcquireStore(Ctx(c), db_path, Access::kRead));
    MENTAT_NULL_IF_NO_STORE(ref);
    MENTAT_ASSIGN_OR_RETURN(auto txs, ref.get()->tx_range(from, to));
    edn::Value v = LogToEdn(txs, *ref.get()->schema());
    if (format == Format::kEdn) return Text(edn::Print(v));
    return Text(QueryValueJson(v));
  });
}

void EdnExplain(sqlite3_context* c, int argc, sqlite3_value** argv) {
  Call(c, "edn_explain", [&]() -> Out {
    auto db_path = TextArg(argv[0]);
    auto query = TextArg(argv[1]);
    if (!query) return Null();
    std::optional<std::string> options;
    if (argc > 2) options = TextArg(argv[2]);
    MENTAT_ASSIGN_OR_RETURN(QueryOptions opts, ParseQueryOptions(*query, options));
    MENTAT_ASSIGN_OR_RETURN(StoreRef ref, AcquireStore(Ctx(c), db_path, Access::kRead));
    MENTAT_NULL_IF_NO_STORE(ref);
    MENTAT_ASSIGN_OR_RETURN(std::string text, ref.get()->q_explain(*query, opts));
    return Text(std::move(text));
  });
}

void MentatVersion(sqlite3_context* c, int, sqlite3_value**) {
  Call(c, "mentat_version", []() -> Out { return Text(MENTAT_VERSION); });
}

}  // namespace

const FunctionSpec kFunctions[] = {
    // name, min args, max args, function
    {"edn_t", 2, 3, EdnT},              // (db_path, edn [, format])
    {"edn_q", 2, 4, EdnQ},              // (db_path, query [, options [, format]])
    {"edn_pull", 3, 4, EdnPull},        // (db_path, pattern, eid [, format])
    {"edn_entity", 2, 3, EdnEntity},    // (db_path, eid [, format])
    {"edn_eval", 2, 2, EdnEval},        // (db_path, script)
    {"edn_datoms", 2, 4, EdnDatoms},    // (db_path, index [, components [, format]])
    {"edn_explain", 2, 3, EdnExplain},  // (db_path, query [, options])
    {"edn_log", 1, 4, EdnLog},          // (db_path [, from [, to [, format]]])
    {"mentat_version", 0, 0, MentatVersion},
    {nullptr, 0, 0, nullptr},
};

}  // namespace mentat::sqlite_ext
