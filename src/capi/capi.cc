// The C API (include/mentat/mentat.h) over the public C++ API.
//
// Every entry point catches what the C++ below it could throw (std::bad_alloc, and any
// other exception, which would be a bug of ours) and turns it into an error code, so no
// exception crosses into C. Handles hold the Store through a shared_ptr, so a db, a
// prepared query or a listener keeps the store open after mentat_close.
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <nlohmann/json.hpp>
#include <string>

#include "edn/json_edn.h"
#include "mentat/mentat.h"
#include "mentat/store.h"
#include "query/ast.h"

using mentat::Code;
using mentat::Result;
using mentat::Status;
namespace edn = mentat::edn;

struct mentat_store {
  std::shared_ptr<mentat::Store> store;
};
struct mentat_db {
  std::shared_ptr<mentat::Store> store;  // keeps db.store() alive
  mentat::Db db;
};
struct mentat_prepared {
  std::shared_ptr<mentat::Store> store;
  mentat::PreparedQuery prepared;
};
struct mentat_listener {
  std::shared_ptr<mentat::Store> store;
  mentat::ListenerHandle handle;
};

namespace {

char* CopyString(const std::string& s) {
  char* p = static_cast<char*>(std::malloc(s.size() + 1));
  if (!p) throw std::bad_alloc();
  std::memcpy(p, s.data(), s.size());
  p[s.size()] = '\0';
  return p;
}

int Fail(const Status& st, char** err) {
  if (err) {
    char* m = static_cast<char*>(std::malloc(st.message().size() + 1));
    if (m) {
      std::memcpy(m, st.message().data(), st.message().size());
      m[st.message().size()] = '\0';
    }
    *err = m;  // NULL when even the message could not be allocated
  }
  return static_cast<int>(st.code());
}

int Missing(const char* what, char** err) {
  return Fail(Status::InvalidArgument(std::string(what) + " is NULL"), err);
}

// Runs `body` (returning an int code), turning any exception into an error.
template <typename F>
int Guard(char** err, F&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return Fail(Status::Internal("out of memory"), err);
  } catch (const std::exception& e) {
    return Fail(Status::Internal(std::string("unexpected exception: ") + e.what()), err);
  } catch (...) {
    return Fail(Status::Internal("unexpected exception"), err);
  }
}

Result<std::string> Format(const edn::Value& v, int format) {
  if (format == MENTAT_EDN) return edn::Print(v);
  if (format == MENTAT_JSON)
    return mentat::EdnToJson(v).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return Status::InvalidArgument("format " + std::to_string(format) +
                                 " is neither MENTAT_EDN (0) nor MENTAT_JSON (1)");
}

int Output(const edn::Value& v, int format, char** out, char** err) {
  auto text = Format(v, format);
  if (!text.ok()) return Fail(text.status(), err);
  if (out) *out = CopyString(*text);
  return MENTAT_OK;
}

Result<int64_t> IntOption(const nlohmann::json& v, const std::string& key) {
  if (!v.is_number_integer() && !v.is_number_unsigned())
    return Status::InvalidArgument("options: " + key + " must be an integer");
  int64_t n = v.get<int64_t>();
  if (n < 0) return Status::InvalidArgument("options: " + key + " must not be negative");
  return n;
}

Result<mentat::Options> StoreOptions(const char* text) {
  mentat::Options o;
  if (!text || text[0] == '\0') return o;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument(std::string("options: invalid JSON: ") + e.what());
  }
  if (!j.is_object()) return Status::InvalidArgument("options: expected a JSON object");
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    const nlohmann::json& v = it.value();
    if (key == "readOnly" || key == "create") {
      if (!v.is_boolean())
        return Status::InvalidArgument("options: " + key + " must be true or false");
      (key == "readOnly" ? o.read_only : o.create) = v.get<bool>();
    } else if (key == "busyTimeout" || key == "replicaWait") {
      MENTAT_ASSIGN_OR_RETURN(int64_t ms, IntOption(v, key));
      if (ms > INT32_MAX) return Status::InvalidArgument("options: " + key + " is too large");
      (key == "busyTimeout" ? o.busy_timeout_ms : o.replica_wait_ms) = static_cast<int>(ms);
    } else if (key == "synchronous") {
      static const char* kNames[] = {"off", "normal", "full", "extra"};
      bool found = false;
      for (int i = 0; i < 4 && v.is_string(); ++i)
        if (v.get<std::string>() == kNames[i]) {
          o.synchronous = static_cast<mentat::Synchronous>(i);
          found = true;
        }
      if (!found)
        return Status::InvalidArgument(
            "options: synchronous must be \"off\", \"normal\", \"full\" or \"extra\"");
    } else if (key == "autoIndex") {
      std::string m = v.is_string() ? v.get<std::string>() : "";
      if (m == "off")
        o.auto_index = mentat::AutoIndex::kOff;
      else if (m == "schema")
        o.auto_index = mentat::AutoIndex::kSchema;
      else if (m == "adaptive")
        o.auto_index = mentat::AutoIndex::kAdaptive;
      else
        return Status::InvalidArgument(
            "options: autoIndex must be \"off\", \"schema\" or \"adaptive\"");
    } else if (key == "replicas") {
      if (!v.is_array()) return Status::InvalidArgument("options: replicas must be an array");
      for (const auto& r : v) {
        if (!r.is_string())
          return Status::InvalidArgument("options: replicas must be an array of strings");
        o.replicas.push_back(r.get<std::string>());
      }
    } else {
      return Status::InvalidArgument("options: unknown option \"" + key +
                                     "\" (expected readOnly, create, synchronous, busyTimeout, "
                                     "autoIndex, replicas, replicaWait)");
    }
  }
  return o;
}

// The query options of a call: options_json, with the inputs of inputs_edn.
Result<mentat::QueryOptions> QueryOptionsOf(const char* query, const char* inputs_edn,
                                            const char* options_json) {
  MENTAT_ASSIGN_OR_RETURN(mentat::QueryOptions o,
                          mentat::options_from_json(query, options_json ? options_json : ""));
  if (!inputs_edn) return o;
  if (!o.inputs.empty())
    return Status::InvalidArgument("inputs: given both as inputs_edn and in the options");
  auto v = edn::Read(inputs_edn, mentat::query::QueryReadOptions());
  if (!v.ok()) return Status(v.status().code(), "inputs: " + v.status().message());
  if (!v->is_vector() && !v->is_list())
    return Status::InvalidArgument("inputs: expected an EDN vector of input values, got " +
                                   edn::Print(*v));
  for (const auto& x : v->items()) o.inputs.emplace_back(x);
  return o;
}

Result<edn::Value> ReadArg(const char* text, const char* what) {
  auto v = edn::Read(text);
  if (!v.ok()) return Status(v.status().code(), std::string(what) + ": " + v.status().message());
  return v;
}

int Query(const mentat::Db& db, const char* query, const char* inputs_edn, const char* options_json,
          int format, char** out, char** err) {
  if (!query) return Missing("query", err);
  auto o = QueryOptionsOf(query, inputs_edn, options_json);
  if (!o.ok()) return Fail(o.status(), err);
  auto r = db.q(query, *o);
  if (!r.ok()) return Fail(r.status(), err);
  return Output(r->ToEdn(), format, out, err);
}

int NewDb(const std::shared_ptr<mentat::Store>& store, mentat::Db db, mentat_db** out) {
  *out = new mentat_db{store, std::move(db)};
  return MENTAT_OK;
}

mentat::TxPoint PointOf(int64_t tx, int64_t instant) {
  return tx == INT64_MIN ? mentat::TxPoint::Instant(instant) : mentat::TxPoint::Tx(tx);
}

edn::Value DatomsEdn(const std::vector<mentat::Datom>& datoms, const mentat::Schema& schema) {
  edn::Vec rows;
  rows.reserve(datoms.size());
  for (const auto& d : datoms) {
    const std::string* ident = schema.ident(d.a);
    rows.push_back(edn::Value::Vector({edn::Value::Int(d.e),
                                       ident ? edn::Value::Keyword(*ident) : edn::Value::Int(d.a),
                                       d.v, edn::Value::Int(d.tx), edn::Value::Bool(d.added)}));
  }
  return edn::Value::Vector(std::move(rows));
}

}  // namespace

extern "C" {

const char* mentat_version(void) { return MENTAT_VERSION; }

const char* mentat_code_name(int code) {
  if (code < 0 || code > static_cast<int>(Code::kInternal)) return "unknown code";
  return mentat::CodeName(static_cast<Code>(code));
}

void mentat_free(void* p) { std::free(p); }

int mentat_open(const char* path, const char* options_json, mentat_store** out, char** err) {
  return Guard(err, [&] {
    if (!path) return Missing("path", err);
    if (!out) return Missing("out", err);
    auto o = StoreOptions(options_json);
    if (!o.ok()) return Fail(o.status(), err);
    auto s = mentat::Store::open(path, *o);
    if (!s.ok()) return Fail(s.status(), err);
    *out = new mentat_store{std::shared_ptr<mentat::Store>(std::move(*s))};
    return static_cast<int>(MENTAT_OK);
  });
}

void mentat_close(mentat_store* store) {
  try {
    delete store;
  } catch (...) {  // a destructor that throws would be a bug; never let it reach C
  }
}

void mentat_interrupt(mentat_store* store) {
  if (store) store->store->interrupt();
}

int mentat_last_tx(mentat_store* store, int64_t* out, char** err) {
  return Guard(err, [&] {
    if (!store) return Missing("store", err);
    if (!out) return Missing("out", err);
    auto t = store->store->last_tx();
    if (!t.ok()) return Fail(t.status(), err);
    *out = *t;
    return static_cast<int>(MENTAT_OK);
  });
}

static int TransactImpl(mentat_store* store, const char* text, int format, char** report,
                        char** err, bool speculative) {
  return Guard(err, [&] {
    if (!store) return Missing("store", err);
    if (!text) return Missing("edn", err);
    auto r = speculative ? store->store->with(std::string_view(text))
                         : store->store->transact(std::string_view(text));
    if (!r.ok()) return Fail(r.status(), err);
    auto schema = store->store->schema();
    return Output(r->ToEdn(schema.get()), format, report, err);
  });
}

int mentat_transact(mentat_store* store, const char* edn, int format, char** report, char** err) {
  return TransactImpl(store, edn, format, report, err, false);
}

int mentat_with(mentat_store* store, const char* edn, int format, char** report, char** err) {
  return TransactImpl(store, edn, format, report, err, true);
}

int mentat_db_current(mentat_store* store, mentat_db** out, char** err) {
  return Guard(err, [&] {
    if (!store) return Missing("store", err);
    if (!out) return Missing("out", err);
    return NewDb(store->store, store->store->db(), out);
  });
}

int mentat_db_as_of(const mentat_db* db, int64_t tx, int64_t instant_micros, mentat_db** out,
                    char** err) {
  return Guard(err, [&] {
    if (!db) return Missing("db", err);
    if (!out) return Missing("out", err);
    return NewDb(db->store, db->db.as_of(PointOf(tx, instant_micros)), out);
  });
}

int mentat_db_since(const mentat_db* db, int64_t tx, int64_t instant_micros, mentat_db** out,
                    char** err) {
  return Guard(err, [&] {
    if (!db) return Missing("db", err);
    if (!out) return Missing("out", err);
    return NewDb(db->store, db->db.since(PointOf(tx, instant_micros)), out);
  });
}

int mentat_db_history(const mentat_db* db, mentat_db** out, char** err) {
  return Guard(err, [&] {
    if (!db) return Missing("db", err);
    if (!out) return Missing("out", err);
    return NewDb(db->store, db->db.history(), out);
  });
}

int64_t mentat_db_basis_t(const mentat_db* db) { return db ? db->db.basis_t() : -1; }

void mentat_db_free(mentat_db* db) {
  try {
    delete db;
  } catch (...) {
  }
}

int mentat_q(mentat_store* store, const char* query, const char* inputs_edn,
             const char* options_json, int format, char** out, char** err) {
  return Guard(err, [&] {
    if (!store) return Missing("store", err);
    return Query(store->store->db(), query, inputs_edn, options_json, format, out, err);
  });
}

int mentat_db_q(const mentat_db* db, const char* query, const char* inputs_edn,
                const char* options_json, int format, char** out, char** err) {
  return Guard(err, [&] {
    if (!db) return Missing("db", err);
    return Query(db->db, query, inputs_edn, options_json, format, out, err);
  });
}

int mentat_query_columns(const char* query, int format, char** out, char** err) {
  return Guard(err, [&] {
    if (!query) return Missing("query", err);
    auto d = mentat::describe_query(query);
    if (!d.ok()) return Fail(d.status(), err);
    edn::Vec cols;
    for (const auto& c : d->columns) cols.push_back(edn::Value::String(c));
    return Output(edn::Value::Vector(std::move(cols)), format, out, err);
  });
}

int mentat_db_explain(const mentat_db* db, const char* query, const char* inputs_edn,
                      const char* options_json, char** out, char** err) {
  return Guard(err, [&] {
    if (!db) return Missing("db", err);
    if (!query) return Missing("query", err);
    auto o = QueryOptionsOf(query, inputs_edn, options_json);
    if (!o.ok()) return Fail(o.status(), err);
    auto r = db->db.q_explain(query, *o);
    if (!r.ok()) return Fail(r.status(), err);
    if (out) *out = CopyString(*r);
    return static_cast<int>(MENTAT_OK);
  });
}

int mentat_prepare(const mentat_db* db, const char* query, mentat_prepared** out, char** err) {
  return Guard(err, [&] {
    if (!db) return Missing("db", err);
    if (!query) return Missing("query", err);
    if (!out) return Missing("out", err);
    auto p = db->db.q_prepare(query);
    if (!p.ok()) return Fail(p.status(), err);
    *out = new mentat_prepared{db->store, std::move(*p)};
    return static_cast<int>(MENTAT_OK);
  });
}

int mentat_prepared_run(const mentat_prepared* p, const char* inputs_edn, const char* options_json,
                        int format, char** out, char** err) {
  return Guard(err, [&] {
    if (!p) return Missing("prepared", err);
    // The query text is needed only to shape JSON inputs; prepared queries take inputs as
    // EDN (inputs_edn) and the other options from options_json.
    mentat::QueryOptions o;
    if (options_json && options_json[0]) {
      auto parsed = mentat::options_from_json("[:find ?x :where [?x _ _]]", options_json);
      if (!parsed.ok()) return Fail(parsed.status(), err);
      if (!parsed->inputs.empty())
        return Fail(Status::InvalidArgument("options: a prepared query takes its inputs as "
                                            "inputs_edn"),
                    err);
      o = std::move(*parsed);
    }
    if (inputs_edn) {
      auto v = edn::Read(inputs_edn, mentat::query::QueryReadOptions());
      if (!v.ok()) return Fail(Status(v.status().code(), "inputs: " + v.status().message()), err);
      if (!v->is_vector() && !v->is_list())
        return Fail(Status::InvalidArgument("inputs: expected an EDN vector of input values"), err);
      for (const auto& x : v->items()) o.inputs.emplace_back(x);
    }
    auto r = p->prepared.run(o);
    if (!r.ok()) return Fail(r.status(), err);
    return Output(r->ToEdn(), format, out, err);
  });
}

void mentat_prepared_free(mentat_prepared* p) {
  try {
    delete p;
  } catch (...) {
  }
}

int mentat_pull(const mentat_db* db, const char* pattern, const char* eid_edn, int format,
                char** out, char** err) {
  return Guard(err, [&] {
    if (!db) return Missing("db", err);
    if (!pattern) return Missing("pattern", err);
    if (!eid_edn) return Missing("eid", err);
    auto eid = ReadArg(eid_edn, "eid");
    if (!eid.ok()) return Fail(eid.status(), err);
    auto r = db->db.pull(pattern, *eid);
    if (!r.ok()) return Fail(r.status(), err);
    return Output(*r, format, out, err);
  });
}

int mentat_entity(const mentat_db* db, const char* eid_edn, int format, char** out, char** err) {
  return Guard(err, [&] {
    if (!db) return Missing("db", err);
    if (!eid_edn) return Missing("eid", err);
    auto eid = ReadArg(eid_edn, "eid");
    if (!eid.ok()) return Fail(eid.status(), err);
    auto e = db->db.entity(*eid);
    if (!e.ok()) return Fail(e.status(), err);
    auto touched = e->touch();
    if (!touched.ok()) return Fail(touched.status(), err);
    return Output(*touched, format, out, err);
  });
}

int mentat_datoms(const mentat_db* db, const char* index, const char* components_edn, int format,
                  char** out, char** err) {
  return Guard(err, [&] {
    if (!db) return Missing("db", err);
    if (!index) return Missing("index", err);
    std::vector<edn::Value> components;
    if (components_edn) {
      auto c = ReadArg(components_edn, "components");
      if (!c.ok()) return Fail(c.status(), err);
      if (!c->is_vector() && !c->is_list())
        return Fail(
            Status::InvalidArgument("components: expected an EDN vector, got " + edn::Print(*c)),
            err);
      components = c->items();
    }
    std::string_view name(index);
    if (!name.empty() && name[0] == ':') name.remove_prefix(1);
    auto d = db->db.datoms(name, components);
    if (!d.ok()) return Fail(d.status(), err);
    auto schema = db->db.store()->schema();
    return Output(DatomsEdn(*d, *schema), format, out, err);
  });
}

int mentat_listen(mentat_store* store, const char* attributes_edn, mentat_listen_fn fn,
                  void* user_data, mentat_listener** out, char** err) {
  return Guard(err, [&] {
    if (!store) return Missing("store", err);
    if (!fn) return Missing("fn", err);
    if (!out) return Missing("out", err);
    std::vector<std::string> attrs;
    if (attributes_edn) {
      auto v = ReadArg(attributes_edn, "attributes");
      if (!v.ok()) return Fail(v.status(), err);
      if (!v->is_vector() && !v->is_list())
        return Fail(Status::InvalidArgument("attributes: expected an EDN vector of idents"), err);
      for (const auto& a : v->items()) {
        if (!a.is_keyword())
          return Fail(
              Status::InvalidArgument("attributes: " + edn::Print(a) + " is not an ident keyword"),
              err);
        attrs.push_back(edn::Print(a));
      }
    }
    std::weak_ptr<mentat::Store> weak = store->store;
    auto callback = [fn, user_data, weak](const mentat::TxReport& report) {
      try {
        auto s = weak.lock();
        std::string text = edn::Print(report.ToEdn(s ? s->schema().get() : nullptr));
        fn(user_data, text.c_str());
      } catch (...) {  // never unwind into the listener thread from here
      }
    };
    auto h = store->store->listen(callback, attrs);
    if (!h.ok()) return Fail(h.status(), err);
    *out = new mentat_listener{store->store, std::move(*h)};
    return static_cast<int>(MENTAT_OK);
  });
}

void mentat_listener_free(mentat_listener* l) {
  if (!l) return;
  try {
    l->handle.stop();
    delete l;
  } catch (...) {
  }
}

}  // extern "C"
