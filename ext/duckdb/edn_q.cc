// edn_q(db_path VARCHAR, query VARCHAR, options VARCHAR): a Datalog query as a table.
//
//   SELECT * FROM edn_q('people.db', '[:find ?e ?name :where [?e :person/name ?name]]', '{}');
//
// Bind reads the store's schema and the query's :find elements and declares typed
// columns (columns.h) without running the query. Init runs it once per scan; the scan
// then hands DuckDB one chunk (duckdb_vector_size() rows, converted as they go out) per
// call. Options are the shared JSON form ({"inputs": [...], "asOf": t, "since": t,
// "history": b, "timeout": ms, "planner": b}); NULL or '{}' means none.
//
// The named parameter format := 'edn' (or 'json') returns instead one row with one
// VARCHAR column `result`: the whole result as EDN (QueryResult::ToEdn) or JSON text,
// exact where typed columns would round values to SQL types (sets, mixed numbers).
#include <memory>
#include <string>
#include <vector>

#include "columns.h"
#include "duckdb_api.h"
#include "mentat/store.h"
#include "results.h"
#include "store_cache.h"
#include "vectors.h"

namespace mentat::duckdb_ext {

namespace {

struct BindData {
  std::shared_ptr<Store> store;
  std::string query;
  QueryOptions options;
  QueryColumns columns;
  enum class Format { kTyped, kEdn, kJson } format = Format::kTyped;
};

struct ScanState {
  QueryResult result;
  size_t next = 0;  // the next row to hand out
  // Projection pushdown: the result column behind each output column (DuckDB asks only
  // for the columns the statement uses); an id past the columns (a row id) reads NULL.
  std::vector<idx_t> column_ids;
};

std::string ErrorText(const Status& s) { return "edn_q: " + s.ToString(); }

bool IsEmptyOptions(const std::string& json) {
  return json.find_first_not_of(" \t\r\n{}") == std::string::npos;
}

Result<std::unique_ptr<BindData>> Bind(duckdb_bind_info info) {
  const idx_t args = duckdb_bind_get_parameter_count(info);
  if (args != 3) {
    return Status::InvalidArgument("expected edn_q(db_path, query, options)");
  }
  std::string path, query, json;
  bool has[3] = {false, false, false};
  std::string* dst[3] = {&path, &query, &json};
  for (idx_t i = 0; i < args; ++i) {
    duckdb_value v = duckdb_bind_get_parameter(info, i);
    has[i] = ParameterText(v, dst[i]);
    duckdb_destroy_value(&v);
  }
  if (!has[0]) return Status::InvalidArgument("db_path is NULL");
  if (!has[1]) return Status::InvalidArgument("query is NULL");

  auto data = std::make_unique<BindData>();
  duckdb_value format = duckdb_bind_get_named_parameter(info, "format");
  std::string format_text;
  bool has_format = ParameterText(format, &format_text);
  if (format != nullptr) duckdb_destroy_value(&format);
  if (has_format && format_text == "edn") {
    data->format = BindData::Format::kEdn;
  } else if (has_format && format_text == "json") {
    data->format = BindData::Format::kJson;
  } else if (has_format && format_text != "typed") {
    return Status::InvalidArgument("format must be 'typed', 'edn' or 'json', got '" + format_text +
                                   "'");
  }
  MENTAT_ASSIGN_OR_RETURN(data->store,
                          StoreCache::Global().Get(path, StoreCache::Mode::kMustExist));
  data->query = query;
  if (has[2] && !IsEmptyOptions(json)) {
    MENTAT_ASSIGN_OR_RETURN(data->options, options_from_json(query, json));
  }
  if (data->format != BindData::Format::kTyped) {
    data->columns.columns = {Column{"result", ColumnType::kVarchar}};
    return data;
  }
  std::vector<edn::Value> inputs;
  for (const auto& in : data->options.inputs) {
    if (!in.db) inputs.push_back(in.value);
  }
  auto schema = data->store->schema();
  auto columns = InferColumns(query, *schema, inputs);
  if (!columns.ok()) {
    // Report the query engine's own error for a malformed query, so that edn_q fails
    // with the same message as every other surface.
    auto run = data->store->q(query, data->options);
    if (!run.ok()) return run.status();
    return columns.status();
  }
  data->columns = std::move(*columns);
  return data;
}

void BindCallback(duckdb_bind_info info) {
  try {
    auto data = Bind(info);
    if (!data.ok()) {
      duckdb_bind_set_error(info, ErrorText(data.status()).c_str());
      return;
    }
    for (const Column& c : (*data)->columns.columns) {
      duckdb_logical_type t = MakeLogicalType(c.type);
      duckdb_bind_add_result_column(info, c.name.c_str(), t);
      duckdb_destroy_logical_type(&t);
    }
    duckdb_bind_set_bind_data(info, data->release(),
                              [](void* p) { delete static_cast<BindData*>(p); });
  } catch (const std::exception& e) {
    duckdb_bind_set_error(info, (std::string("edn_q: ") + e.what()).c_str());
  } catch (...) {
    duckdb_bind_set_error(info, "edn_q: unexpected error");
  }
}

void InitCallback(duckdb_init_info info) {
  try {
    auto* bind = static_cast<BindData*>(duckdb_init_get_bind_data(info));
    duckdb_init_set_max_threads(info, 1);
    auto result = bind->store->q(bind->query, bind->options);
    if (!result.ok()) {
      duckdb_init_set_error(info, ErrorText(result.status()).c_str());
      return;
    }
    if (bind->format != BindData::Format::kTyped) {
      edn::Value whole = result->ToEdn();
      std::string text =
          bind->format == BindData::Format::kEdn ? edn::Print(whole) : QueryCellJson(whole);
      *result = QueryResult{};
      result->rows.push_back({edn::Value::String(std::move(text))});
    }
    if (!result->rows.empty() && result->rows[0].size() != bind->columns.columns.size()) {
      duckdb_init_set_error(info,
                            "edn_q: the query returned a different number of columns "
                            "than its :find elements");
      return;
    }
    auto state = std::make_unique<ScanState>();
    state->result = std::move(*result);
    const idx_t projected = duckdb_init_get_column_count(info);
    for (idx_t i = 0; i < projected; ++i) {
      state->column_ids.push_back(duckdb_init_get_column_index(info, i));
    }
    duckdb_init_set_init_data(info, state.release(),
                              [](void* p) { delete static_cast<ScanState*>(p); });
  } catch (const std::exception& e) {
    duckdb_init_set_error(info, (std::string("edn_q: ") + e.what()).c_str());
  } catch (...) {
    duckdb_init_set_error(info, "edn_q: unexpected error");
  }
}

void ScanCallback(duckdb_function_info info, duckdb_data_chunk output) {
  try {
    auto* bind = static_cast<BindData*>(duckdb_function_get_bind_data(info));
    auto* state = static_cast<ScanState*>(duckdb_function_get_init_data(info));
    const auto& rows = state->result.rows;
    const auto& cols = bind->columns.columns;
    const size_t n = std::min<size_t>(rows.size() - state->next, duckdb_vector_size());
    for (size_t out = 0; out < state->column_ids.size(); ++out) {
      duckdb_vector vec = duckdb_data_chunk_get_vector(output, out);
      const idx_t c = state->column_ids[out];
      for (size_t r = 0; r < n; ++r) {
        if (c >= cols.size()) {
          SetNull(vec, r);
          continue;
        }
        const auto& row = rows[state->next + r];
        static const edn::Value kNil;
        const edn::Value& v = c < row.size() ? row[c] : kNil;
        Status st = WriteCell(vec, cols[c].type, r, v, cols[c].name);
        if (!st.ok()) {
          duckdb_function_set_error(info, st.message().c_str());
          return;
        }
      }
    }
    state->next += n;
    duckdb_data_chunk_set_size(output, n);
  } catch (const std::exception& e) {
    duckdb_function_set_error(info, (std::string("edn_q: ") + e.what()).c_str());
  } catch (...) {
    duckdb_function_set_error(info, "edn_q: unexpected error");
  }
}

}  // namespace

bool ParameterText(duckdb_value value, std::string* out) {
  if (value == nullptr || duckdb_is_null_value(value)) return false;
  char* text = duckdb_get_varchar(value);
  if (text == nullptr) return false;
  *out = text;
  duckdb_free(text);
  return true;
}

namespace {

bool RegisterWithArgs(duckdb_connection connection, int args) {
  duckdb_table_function f = duckdb_create_table_function();
  duckdb_table_function_set_name(f, "edn_q");
  duckdb_logical_type varchar = duckdb_create_logical_type(DUCKDB_TYPE_VARCHAR);
  for (int i = 0; i < args; ++i) duckdb_table_function_add_parameter(f, varchar);
  duckdb_table_function_add_named_parameter(f, "format", varchar);
  duckdb_destroy_logical_type(&varchar);
  duckdb_table_function_set_bind(f, BindCallback);
  duckdb_table_function_set_init(f, InitCallback);
  duckdb_table_function_set_function(f, ScanCallback);
  duckdb_table_function_supports_projection_pushdown(f, true);
  bool ok = duckdb_register_table_function(connection, f) == DuckDBSuccess;
  duckdb_destroy_table_function(&f);
  return ok;
}

}  // namespace

bool RegisterEdnQ(duckdb_connection connection, std::string* error) {
  // One signature only: the C API cannot add an overload to a table function (a second
  // registration under the same name is refused), so options are always passed.
  if (!RegisterWithArgs(connection, 3)) {
    *error = "could not register edn_q";
    return false;
  }
  return true;
}

}  // namespace mentat::duckdb_ext
