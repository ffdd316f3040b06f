// The scalar functions:
//
//   edn_t(db_path VARCHAR, edn VARCHAR) -> VARCHAR
//     Transacts `edn` (creating the store when the file is missing) and returns the tx
//     report as JSON: {"tx_id":N,"tx_instant":"...","tempids":{"a":N}}. One
//     transaction per row; the first failing row fails the statement (earlier rows'
//     transactions stay committed).
//   edn_pull(db_path VARCHAR, pattern VARCHAR, eid BIGINT | VARCHAR) -> VARCHAR
//     Pulls `pattern` for one entity (an id, or the EDN text of an id, ident or lookup
//     ref) and returns the map as JSON; NULL when there is nothing to pull.
//
// NULL arguments give NULL. Both are volatile: they read or change a store outside
// DuckDB, so DuckDB must not fold or reuse their results.
#include <string>
#include <string_view>

#include "duckdb_api.h"
#include "mentat/store.h"
#include "results.h"
#include "store_cache.h"
#include "vectors.h"

namespace mentat::duckdb_ext {

namespace {

// Runs `row_fn(row, &out)` for every row; `row_fn` returns the text to write, nullopt
// for NULL, or an error that stops the statement.
template <typename RowFn>
void ForEachRow(const char* name, duckdb_function_info info, duckdb_data_chunk input,
                duckdb_vector output, RowFn row_fn) {
  try {
    const idx_t n = duckdb_data_chunk_get_size(input);
    for (idx_t r = 0; r < n; ++r) {
      Result<std::optional<std::string>> out = row_fn(r);
      if (!out.ok()) {
        std::string msg = std::string(name) + ": " + out.status().ToString();
        duckdb_scalar_function_set_error(info, msg.c_str());
        return;
      }
      if (out->has_value())
        SetText(output, r, **out);
      else
        SetNull(output, r);
    }
  } catch (const std::exception& e) {
    duckdb_scalar_function_set_error(info, (std::string(name) + ": " + e.what()).c_str());
  } catch (...) {
    duckdb_scalar_function_set_error(info, (std::string(name) + ": unexpected error").c_str());
  }
}

void EdnT(duckdb_function_info info, duckdb_data_chunk input, duckdb_vector output) {
  duckdb_vector paths = duckdb_data_chunk_get_vector(input, 0);
  duckdb_vector edns = duckdb_data_chunk_get_vector(input, 1);
  ForEachRow("edn_t", info, input, output, [&](idx_t r) -> Result<std::optional<std::string>> {
    std::string_view path, edn;
    if (!InputText(paths, r, &path) || !InputText(edns, r, &edn)) {
      return std::optional<std::string>();
    }
    MENTAT_ASSIGN_OR_RETURN(auto store,
                            StoreCache::Global().Get(std::string(path), StoreCache::Mode::kCreate));
    MENTAT_ASSIGN_OR_RETURN(TxReport report, store->transact(edn));
    return std::optional<std::string>(TxReportJson(report));
  });
}

// `eid_text`: true when the third argument is VARCHAR (EDN text), false for BIGINT.
template <bool eid_text>
void EdnPull(duckdb_function_info info, duckdb_data_chunk input, duckdb_vector output) {
  duckdb_vector paths = duckdb_data_chunk_get_vector(input, 0);
  duckdb_vector patterns = duckdb_data_chunk_get_vector(input, 1);
  duckdb_vector eids = duckdb_data_chunk_get_vector(input, 2);
  ForEachRow("edn_pull", info, input, output, [&](idx_t r) -> Result<std::optional<std::string>> {
    std::string_view path, pattern;
    edn::Value eid;
    if (!InputText(paths, r, &path) || !InputText(patterns, r, &pattern)) {
      return std::optional<std::string>();
    }
    if constexpr (eid_text) {
      std::string_view text;
      if (!InputText(eids, r, &text)) return std::optional<std::string>();
      MENTAT_ASSIGN_OR_RETURN(eid, edn::Read(text));
    } else {
      int64_t id = 0;
      if (!InputInt(eids, r, &id)) return std::optional<std::string>();
      eid = edn::Value::Int(id);
    }
    MENTAT_ASSIGN_OR_RETURN(
        auto store, StoreCache::Global().Get(std::string(path), StoreCache::Mode::kMustExist));
    MENTAT_ASSIGN_OR_RETURN(edn::Value pulled, store->pull(pattern, eid));
    if (pulled.is_nil()) return std::optional<std::string>();
    return std::optional<std::string>(ValueJson(pulled));
  });
}

duckdb_scalar_function MakeScalar(const char* name, std::initializer_list<duckdb_type> params,
                                  duckdb_scalar_function_t fn) {
  duckdb_scalar_function f = duckdb_create_scalar_function();
  duckdb_scalar_function_set_name(f, name);
  for (duckdb_type p : params) {
    duckdb_logical_type t = duckdb_create_logical_type(p);
    duckdb_scalar_function_add_parameter(f, t);
    duckdb_destroy_logical_type(&t);
  }
  duckdb_logical_type ret = duckdb_create_logical_type(DUCKDB_TYPE_VARCHAR);
  duckdb_scalar_function_set_return_type(f, ret);
  duckdb_destroy_logical_type(&ret);
  duckdb_scalar_function_set_volatile(f);
  duckdb_scalar_function_set_function(f, fn);
  return f;
}

}  // namespace

bool RegisterScalars(duckdb_connection connection, std::string* error) {
  duckdb_scalar_function edn_t =
      MakeScalar("edn_t", {DUCKDB_TYPE_VARCHAR, DUCKDB_TYPE_VARCHAR}, EdnT);
  bool ok = duckdb_register_scalar_function(connection, edn_t) == DuckDBSuccess;
  duckdb_destroy_scalar_function(&edn_t);
  if (!ok) {
    *error = "could not register edn_t";
    return false;
  }

  duckdb_scalar_function_set pull = duckdb_create_scalar_function_set("edn_pull");
  duckdb_scalar_function by_id = MakeScalar(
      "edn_pull", {DUCKDB_TYPE_VARCHAR, DUCKDB_TYPE_VARCHAR, DUCKDB_TYPE_BIGINT}, EdnPull<false>);
  duckdb_scalar_function by_text = MakeScalar(
      "edn_pull", {DUCKDB_TYPE_VARCHAR, DUCKDB_TYPE_VARCHAR, DUCKDB_TYPE_VARCHAR}, EdnPull<true>);
  ok = duckdb_add_scalar_function_to_set(pull, by_id) == DuckDBSuccess &&
       duckdb_add_scalar_function_to_set(pull, by_text) == DuckDBSuccess &&
       duckdb_register_scalar_function_set(connection, pull) == DuckDBSuccess;
  duckdb_destroy_scalar_function(&by_id);
  duckdb_destroy_scalar_function(&by_text);
  duckdb_destroy_scalar_function_set(&pull);
  if (!ok) *error = "could not register edn_pull";
  return ok;
}

}  // namespace mentat::duckdb_ext
