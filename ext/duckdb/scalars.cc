// The scalar functions (NULL arguments give NULL; all volatile: they read or change a
// store outside DuckDB, so DuckDB must neither fold nor reuse their results):
//
//   edn_t(db_path, edn [, format]) -> VARCHAR
//     Transacts `edn` (creating the store when the file is missing); returns the tx
//     report, as JSON {"tx_id":N,"tx_instant":"...","tempids":{"a":N}} or, with format
//     'edn', as EDN with :tx-data. One transaction per row; the first failing row fails
//     the statement (earlier rows' transactions stay committed).
//   edn_pull(db_path, pattern, eid [, format]) -> VARCHAR
//     Pulls `pattern` for one entity: eid is a BIGINT, or VARCHAR EDN text of an id,
//     ident or lookup ref. JSON (results.h) or EDN; NULL when there is nothing to pull.
//   edn_entity(db_path, eid [, format]) -> VARCHAR
//     The entity touched (Datomic's (d/touch (d/entity db eid))): every attribute with its
//     values, cardinality-many ones as sets, refs as {:db/id N} (or the ident), components
//     touched too; eid as for edn_pull. JSON (results.h) or EDN.
//   edn_explain(db_path, query, options) -> VARCHAR
//     The query's plan: the chosen join order, the SQL and SQLite's query plan.
//   edn_eval(db_path, script) -> VARCHAR
//     Runs a sandboxed script (include/mentat/script.h) whose default connection,
//     (mentat.store/open) with no argument and the variable `conn`, is the store at
//     db_path (created when missing); returns the last form's value as EDN text. The
//     script cannot open files (other stores included), the network or processes, and
//     stops at the interpreter's step, memory and depth limits.
//   edn_datoms(db_path, index, components [, format]) -> VARCHAR
//     The datoms of :eavt :aevt :avet or :vaet whose leading parts equal `components`
//     (EDN text of zero or more ids, idents, lookup refs or values), as a JSON array of
//     [e, ":attr", v, tx, added] or an EDN vector of [e :attr v tx added].
//   edn_log(db_path [, from, to [, format]]) -> VARCHAR
//     The log (Datomic's tx-range): the transactions with from <= tx < to (bounds: EDN
//     text of a tx id, a t or an #inst; NULL, '' or 'nil' open), as a JSON array of
//     {"t", "tx-id", "tx-instant", "data": [[e, ":attr", v, tx, added], ...]} or EDN.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "duckdb_api.h"
#include "mentat/entity.h"
#include "mentat/log.h"
#include "mentat/script.h"
#include "mentat/store.h"
#include "results.h"
#include "store_cache.h"
#include "vectors.h"

namespace mentat::duckdb_ext {

namespace {

using Text = std::optional<std::string>;  // nullopt: SQL NULL

// The arguments of one row: VARCHAR text (nullopt for NULL) or, for BIGINT columns,
// the number as text.
class Row {
 public:
  Row(duckdb_data_chunk input, idx_t row) : input_(input), row_(row) {}
  std::optional<std::string_view> Text(idx_t col) const {
    std::string_view s;
    if (!InputText(duckdb_data_chunk_get_vector(input_, col), row_, &s)) return std::nullopt;
    return s;
  }
  std::optional<int64_t> Int(idx_t col) const {
    int64_t v = 0;
    if (!InputInt(duckdb_data_chunk_get_vector(input_, col), row_, &v)) return std::nullopt;
    return v;
  }
  idx_t columns() const { return duckdb_data_chunk_get_column_count(input_); }

 private:
  duckdb_data_chunk input_;
  idx_t row_;
};

using RowFn = Result<Text> (*)(const Row& row);

// Runs `fn` for every row of `input`. An error stops the statement with
// "<name>: <code>: <message>".
void ForEachRow(const char* name, RowFn fn, duckdb_function_info info, duckdb_data_chunk input,
                duckdb_vector output) {
  try {
    const idx_t n = duckdb_data_chunk_get_size(input);
    for (idx_t r = 0; r < n; ++r) {
      Result<Text> out = fn(Row(input, r));
      if (!out.ok()) {
        std::string msg = std::string(name) + ": " + out.status().ToString();
        duckdb_scalar_function_set_error(info, msg.c_str());
        return;
      }
      if (out->has_value()) {
        SetText(output, r, **out);
      } else {
        SetNull(output, r);
      }
    }
  } catch (const std::exception& e) {
    duckdb_scalar_function_set_error(info, (std::string(name) + ": " + e.what()).c_str());
  } catch (...) {
    duckdb_scalar_function_set_error(info, (std::string(name) + ": unexpected error").c_str());
  }
}

// The optional trailing format argument: true for 'edn', false for 'json' (or absent).
Result<bool> WantsEdn(const Row& row, idx_t col) {
  if (row.columns() <= col) return false;
  auto f = row.Text(col);
  if (!f || *f == "json") return false;
  if (*f == "edn") return true;
  return Status::InvalidArgument("format must be 'json' or 'edn', got '" + std::string(*f) + "'");
}

Result<std::shared_ptr<Store>> StoreAt(std::string_view path, StoreCache::Mode mode) {
  return StoreCache::Global().Get(std::string(path), mode);
}

Result<Text> Transact(const Row& row) {
  auto path = row.Text(0), edn = row.Text(1);
  if (!path || !edn) return Text();
  MENTAT_ASSIGN_OR_RETURN(bool as_edn, WantsEdn(row, 2));
  MENTAT_ASSIGN_OR_RETURN(auto store, StoreAt(*path, StoreCache::Mode::kCreate));
  MENTAT_ASSIGN_OR_RETURN(TxReport report, store->transact(*edn));
  if (as_edn) return Text(TxReportEdn(report, store->schema().get()));
  return Text(TxReportJson(report));
}

// The eid argument of edn_pull and edn_entity: a BIGINT id, or EDN text.
template <bool kEidIsText>
Result<std::optional<edn::Value>> EidArg(const Row& row, idx_t col) {
  if constexpr (kEidIsText) {
    auto text = row.Text(col);
    if (!text) return std::optional<edn::Value>();
    MENTAT_ASSIGN_OR_RETURN(edn::Value eid, edn::Read(*text));
    return std::optional<edn::Value>(std::move(eid));
  } else {
    auto id = row.Int(col);
    if (!id) return std::optional<edn::Value>();
    return std::optional<edn::Value>(edn::Value::Int(*id));
  }
}

template <bool kEidIsText>
Result<Text> Pull(const Row& row) {
  auto path = row.Text(0), pattern = row.Text(1);
  if (!path || !pattern) return Text();
  MENTAT_ASSIGN_OR_RETURN(auto eid_arg, EidArg<kEidIsText>(row, 2));
  if (!eid_arg) return Text();
  const edn::Value& eid = *eid_arg;
  MENTAT_ASSIGN_OR_RETURN(bool as_edn, WantsEdn(row, 3));
  MENTAT_ASSIGN_OR_RETURN(auto store, StoreAt(*path, StoreCache::Mode::kMustExist));
  MENTAT_ASSIGN_OR_RETURN(edn::Value pulled, store->pull(*pattern, eid));
  if (pulled.is_nil()) return Text();
  if (as_edn) return Text(edn::Print(pulled));
  // As the Rust extension (and the SQLite one): the JSON map always has ":db/id", even
  // when the pattern does not ask for it.
  if (pulled.is_map() && !pulled.get_keyword("db/id")) {
    edn::Value id = eid;  // an ident or a lookup ref: resolved by a second, tiny pull
    if (!eid.is_int()) {
      MENTAT_ASSIGN_OR_RETURN(edn::Value m, store->pull("[:db/id]", eid));
      const edn::Value* v = m.is_map() ? m.get_keyword("db/id") : nullptr;
      id = v ? *v : edn::Value();
    }
    if (!id.is_nil()) {
      edn::MapEntries entries = pulled.entries();
      entries.emplace_back(edn::Value::Keyword("db/id"), std::move(id));
      pulled = edn::Value::Map(std::move(entries));
    }
  }
  return Text(PullJson(pulled));
}

template <bool kEidIsText>
Result<Text> TouchEntity(const Row& row) {
  auto path = row.Text(0);
  if (!path) return Text();
  MENTAT_ASSIGN_OR_RETURN(auto eid, EidArg<kEidIsText>(row, 1));
  if (!eid) return Text();
  MENTAT_ASSIGN_OR_RETURN(bool as_edn, WantsEdn(row, 2));
  MENTAT_ASSIGN_OR_RETURN(auto store, StoreAt(*path, StoreCache::Mode::kMustExist));
  MENTAT_ASSIGN_OR_RETURN(Entity entity, store->entity(*eid));
  MENTAT_ASSIGN_OR_RETURN(edn::Value touched, entity.touch());
  return Text(as_edn ? edn::Print(touched) : PullJson(touched));
}

Result<Text> Explain(const Row& row) {
  auto path = row.Text(0), query = row.Text(1), json = row.Text(2);
  if (!path || !query) return Text();
  MENTAT_ASSIGN_OR_RETURN(auto store, StoreAt(*path, StoreCache::Mode::kMustExist));
  QueryOptions options;
  if (json && json->find_first_not_of(" \t\r\n{}") != std::string_view::npos) {
    MENTAT_ASSIGN_OR_RETURN(options, options_from_json(*query, *json));
  }
  MENTAT_ASSIGN_OR_RETURN(std::string plan, store->q_explain(*query, options));
  return Text(plan);
}

Result<Text> Eval(const Row& row) {
  auto path = row.Text(0), source = row.Text(1);
  if (!path || !source) return Text();
  MENTAT_ASSIGN_OR_RETURN(auto store, StoreAt(*path, StoreCache::Mode::kCreate));
  script::Interpreter interpreter;
  interpreter.SetStore(store.get(), "conn");
  MENTAT_ASSIGN_OR_RETURN(std::string out, interpreter.EvalToString(*source));
  return Text(std::move(out));
}

Result<Text> Datoms(const Row& row) {
  auto path = row.Text(0), index = row.Text(1), components = row.Text(2);
  if (!path || !index) return Text();
  MENTAT_ASSIGN_OR_RETURN(bool as_edn, WantsEdn(row, 3));
  edn::Vec comps;
  if (components) {
    MENTAT_ASSIGN_OR_RETURN(comps, edn::ReadAll(*components));
  }
  std::string_view idx = *index;
  if (!idx.empty() && idx[0] == ':') idx.remove_prefix(1);
  MENTAT_ASSIGN_OR_RETURN(auto store, StoreAt(*path, StoreCache::Mode::kMustExist));
  MENTAT_ASSIGN_OR_RETURN(auto datoms, store->datoms(idx, comps));
  auto schema = store->schema();
  edn::Vec out;
  out.reserve(datoms.size());
  for (const auto& d : datoms) {
    edn::Value a = edn::Value::Int(d.a);
    if (const std::string* ident = schema->ident(d.a)) a = edn::Value::Keyword(*ident);
    out.push_back(edn::Value::Vector(
        {edn::Value::Int(d.e), a, d.v, edn::Value::Int(d.tx), edn::Value::Bool(d.added)}));
  }
  edn::Value v = edn::Value::Vector(std::move(out));
  return Text(as_edn ? edn::Print(v) : QueryCellJson(v));
}

// A bound of edn_log: NULL, '' or 'nil' (open), or EDN text of a tx id, a t or an #inst.
Result<std::optional<TxPoint>> LogBound(std::optional<std::string_view> text) {
  if (!text || text->empty()) return std::optional<TxPoint>();
  MENTAT_ASSIGN_OR_RETURN(edn::Value x, edn::Read(*text));
  if (x.is_nil()) return std::optional<TxPoint>();
  if (x.is_int() && x.as_int() >= 0) return std::optional<TxPoint>(TxPoint::Tx(x.as_int()));
  if (x.is_inst()) return std::optional<TxPoint>(TxPoint::Instant(x.as_inst_micros()));
  return Status::InvalidArgument("a log bound is a tx id, a t, an #inst or nil, got " +
                                 std::string(*text));
}

Result<Text> Log(const Row& row) {
  auto path = row.Text(0);
  if (!path) return Text();
  std::optional<TxPoint> from, to;
  if (row.columns() > 1) {
    MENTAT_ASSIGN_OR_RETURN(from, LogBound(row.Text(1)));
  }
  if (row.columns() > 2) {
    MENTAT_ASSIGN_OR_RETURN(to, LogBound(row.Text(2)));
  }
  MENTAT_ASSIGN_OR_RETURN(bool as_edn, WantsEdn(row, 3));
  MENTAT_ASSIGN_OR_RETURN(auto store, StoreAt(*path, StoreCache::Mode::kMustExist));
  MENTAT_ASSIGN_OR_RETURN(auto txs, store->tx_range(from, to));
  edn::Value v = LogToEdn(txs, *store->schema());
  return Text(as_edn ? edn::Print(v) : QueryCellJson(v));
}

// DuckDB calls these; each names its function for error messages.
void EdnT(duckdb_function_info i, duckdb_data_chunk in, duckdb_vector out) {
  ForEachRow("edn_t", Transact, i, in, out);
}
void EdnPullById(duckdb_function_info i, duckdb_data_chunk in, duckdb_vector out) {
  ForEachRow("edn_pull", Pull<false>, i, in, out);
}
void EdnPullByText(duckdb_function_info i, duckdb_data_chunk in, duckdb_vector out) {
  ForEachRow("edn_pull", Pull<true>, i, in, out);
}
void EdnEntityById(duckdb_function_info i, duckdb_data_chunk in, duckdb_vector out) {
  ForEachRow("edn_entity", TouchEntity<false>, i, in, out);
}
void EdnEntityByText(duckdb_function_info i, duckdb_data_chunk in, duckdb_vector out) {
  ForEachRow("edn_entity", TouchEntity<true>, i, in, out);
}
void EdnExplain(duckdb_function_info i, duckdb_data_chunk in, duckdb_vector out) {
  ForEachRow("edn_explain", Explain, i, in, out);
}
void EdnEval(duckdb_function_info i, duckdb_data_chunk in, duckdb_vector out) {
  ForEachRow("edn_eval", Eval, i, in, out);
}
void EdnDatoms(duckdb_function_info i, duckdb_data_chunk in, duckdb_vector out) {
  ForEachRow("edn_datoms", Datoms, i, in, out);
}
void EdnLog(duckdb_function_info i, duckdb_data_chunk in, duckdb_vector out) {
  ForEachRow("edn_log", Log, i, in, out);
}

struct Overload {
  std::vector<duckdb_type> params;
  duckdb_scalar_function_t fn;
};

// Registers `name` with its overloads (one scalar function set).
bool Register(duckdb_connection con, const char* name, const std::vector<Overload>& overloads) {
  duckdb_scalar_function_set set = duckdb_create_scalar_function_set(name);
  bool ok = true;
  for (const Overload& o : overloads) {
    duckdb_scalar_function f = duckdb_create_scalar_function();
    duckdb_scalar_function_set_name(f, name);
    for (duckdb_type p : o.params) {
      duckdb_logical_type t = duckdb_create_logical_type(p);
      duckdb_scalar_function_add_parameter(f, t);
      duckdb_destroy_logical_type(&t);
    }
    duckdb_logical_type ret = duckdb_create_logical_type(DUCKDB_TYPE_VARCHAR);
    duckdb_scalar_function_set_return_type(f, ret);
    duckdb_destroy_logical_type(&ret);
    duckdb_scalar_function_set_volatile(f);
    duckdb_scalar_function_set_function(f, o.fn);
    ok = ok && duckdb_add_scalar_function_to_set(set, f) == DuckDBSuccess;
    duckdb_destroy_scalar_function(&f);
  }
  ok = ok && duckdb_register_scalar_function_set(con, set) == DuckDBSuccess;
  duckdb_destroy_scalar_function_set(&set);
  return ok;
}

}  // namespace

bool RegisterScalars(duckdb_connection con, std::string* error) {
  constexpr duckdb_type V = DUCKDB_TYPE_VARCHAR, I = DUCKDB_TYPE_BIGINT;
  struct {
    const char* name;
    std::vector<Overload> overloads;
  } const functions[] = {
      {"edn_t", {{{V, V}, EdnT}, {{V, V, V}, EdnT}}},
      {"edn_pull",
       {{{V, V, I}, EdnPullById},
        {{V, V, V}, EdnPullByText},
        {{V, V, I, V}, EdnPullById},
        {{V, V, V, V}, EdnPullByText}}},
      {"edn_entity",
       {{{V, I}, EdnEntityById},
        {{V, V}, EdnEntityByText},
        {{V, I, V}, EdnEntityById},
        {{V, V, V}, EdnEntityByText}}},
      {"edn_explain", {{{V, V, V}, EdnExplain}}},
      {"edn_eval", {{{V, V}, EdnEval}}},
      {"edn_datoms", {{{V, V, V}, EdnDatoms}, {{V, V, V, V}, EdnDatoms}}},
      {"edn_log", {{{V}, EdnLog}, {{V, V, V}, EdnLog}, {{V, V, V, V}, EdnLog}}},
  };
  for (const auto& f : functions) {
    if (!Register(con, f.name, f.overloads)) {
      *error = std::string("could not register ") + f.name;
      return false;
    }
  }
  return true;
}

}  // namespace mentat::duckdb_ext
