#include "duckdb_host.h"

#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <mutex>

#include "duckdb.h"

namespace mentat::duckdb_host {

// The C API functions the host uses, resolved from the loaded library.
struct Api {
  const char* (*library_version)();
  duckdb_state (*create_config)(duckdb_config*);
  duckdb_state (*set_config)(duckdb_config, const char*, const char*);
  void (*destroy_config)(duckdb_config*);
  duckdb_state (*open_ext)(const char*, duckdb_database*, duckdb_config, char**);
  void (*close)(duckdb_database*);
  duckdb_state (*connect)(duckdb_database, duckdb_connection*);
  void (*disconnect)(duckdb_connection*);
  duckdb_state (*query)(duckdb_connection, const char*, duckdb_result*);
  void (*destroy_result)(duckdb_result*);
  const char* (*result_error)(duckdb_result*);
  idx_t (*column_count)(duckdb_result*);
  const char* (*column_name)(duckdb_result*, idx_t);
  duckdb_type (*column_type)(duckdb_result*, idx_t);
  idx_t (*row_count)(duckdb_result*);
  char* (*value_varchar)(duckdb_result*, idx_t, idx_t);
  bool (*value_is_null)(duckdb_result*, idx_t, idx_t);
  void (*free)(void*);
};

namespace {

Result<const Api*> LoadApi(const std::string& path) {
  static std::mutex mu;
  static std::map<std::string, Api>* apis = new std::map<std::string, Api>();
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = apis->find(path); it != apis->end()) return &it->second;
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* err = dlerror();
    return Status::NotFound("cannot load " + path + ": " + (err ? err : "?"));
  }
  Api api{};
  std::string missing;
  auto get = [&](auto* fn, const char* name) {
    void* sym = dlsym(lib, name);
    if (sym == nullptr) missing += std::string(" ") + name;
    *fn = reinterpret_cast<std::remove_reference_t<decltype(*fn)>>(sym);
  };
  get(&api.library_version, "duckdb_library_version");
  get(&api.create_config, "duckdb_create_config");
  get(&api.set_config, "duckdb_set_config");
  get(&api.destroy_config, "duckdb_destroy_config");
  get(&api.open_ext, "duckdb_open_ext");
  get(&api.close, "duckdb_close");
  get(&api.connect, "duckdb_connect");
  get(&api.disconnect, "duckdb_disconnect");
  get(&api.query, "duckdb_query");
  get(&api.destroy_result, "duckdb_destroy_result");
  get(&api.result_error, "duckdb_result_error");
  get(&api.column_count, "duckdb_column_count");
  get(&api.column_name, "duckdb_column_name");
  get(&api.column_type, "duckdb_column_type");
  get(&api.row_count, "duckdb_row_count");
  get(&api.value_varchar, "duckdb_value_varchar");
  get(&api.value_is_null, "duckdb_value_is_null");
  get(&api.free, "duckdb_free");
  if (!missing.empty()) return Status::NotFound(path + " lacks:" + missing);
  return &apis->emplace(path, api).first->second;
}

const char* TypeName(duckdb_type t) {
  switch (t) {
    case DUCKDB_TYPE_BOOLEAN:
      return "BOOLEAN";
    case DUCKDB_TYPE_TINYINT:
      return "TINYINT";
    case DUCKDB_TYPE_SMALLINT:
      return "SMALLINT";
    case DUCKDB_TYPE_INTEGER:
      return "INTEGER";
    case DUCKDB_TYPE_BIGINT:
      return "BIGINT";
    case DUCKDB_TYPE_HUGEINT:
      return "HUGEINT";
    case DUCKDB_TYPE_UBIGINT:
      return "UBIGINT";
    case DUCKDB_TYPE_FLOAT:
      return "FLOAT";
    case DUCKDB_TYPE_DOUBLE:
      return "DOUBLE";
    case DUCKDB_TYPE_DECIMAL:
      return "DECIMAL";
    case DUCKDB_TYPE_TIMESTAMP:
      return "TIMESTAMP";
    case DUCKDB_TYPE_TIMESTAMP_TZ:
      return "TIMESTAMP WITH TIME ZONE";
    case DUCKDB_TYPE_DATE:
      return "DATE";
    case DUCKDB_TYPE_VARCHAR:
      return "VARCHAR";
    case DUCKDB_TYPE_BLOB:
      return "BLOB";
    case DUCKDB_TYPE_UUID:
      return "UUID";
    case DUCKDB_TYPE_LIST:
      return "LIST";
    case DUCKDB_TYPE_STRUCT:
      return "STRUCT";
    default:
      return "OTHER";
  }
}

}  // namespace

std::string QueryOutput::Cell(size_t row, size_t col) const {
  if (row >= rows.size() || col >= rows[row].size()) return "";
  return rows[row][col].value_or("NULL");
}

Connection::~Connection() {
  auto con = static_cast<duckdb_connection>(con_);
  api_->disconnect(&con);
}

Result<QueryOutput> Connection::Query(const std::string& sql) {
  duckdb_result res;
  duckdb_state st = api_->query(static_cast<duckdb_connection>(con_), sql.c_str(), &res);
  if (st != DuckDBSuccess) {
    const char* err = api_->result_error(&res);
    std::string msg = err ? err : "unknown DuckDB error";
    api_->destroy_result(&res);
    return Status::InvalidArgument(msg);
  }
  QueryOutput out;
  idx_t cols = api_->column_count(&res);
  idx_t rows = api_->row_count(&res);
  for (idx_t c = 0; c < cols; ++c) {
    out.names.push_back(api_->column_name(&res, c));
    out.types.push_back(TypeName(api_->column_type(&res, c)));
  }
  out.rows.resize(rows);
  for (idx_t r = 0; r < rows; ++r) {
    for (idx_t c = 0; c < cols; ++c) {
      if (api_->value_is_null(&res, c, r)) {
        out.rows[r].push_back(std::nullopt);
        continue;
      }
      char* text = api_->value_varchar(&res, c, r);
      out.rows[r].push_back(std::string(text ? text : ""));
      if (text) api_->free(text);
    }
  }
  api_->destroy_result(&res);
  return out;
}

Result<std::unique_ptr<DuckHost>> DuckHost::Open(const std::string& library,
                                                 const std::string& db_path) {
  MENTAT_ASSIGN_OR_RETURN(const Api* api,
                          LoadApi(library.empty() ? DefaultLibraryPath() : library));
  duckdb_config config;
  if (api->create_config(&config) != DuckDBSuccess) return Status::Internal("duckdb config");
  api->set_config(config, "allow_unsigned_extensions", "true");
  duckdb_database db;
  char* err = nullptr;
  duckdb_state st = api->open_ext(db_path.empty() ? nullptr : db_path.c_str(), &db, config, &err);
  api->destroy_config(&config);
  if (st != DuckDBSuccess) {
    std::string msg = err ? err : "cannot open DuckDB";
    if (err) api->free(err);
    return Status::Io(msg);
  }
  return std::unique_ptr<DuckHost>(new DuckHost(api, db));
}

DuckHost::~DuckHost() {
  auto db = static_cast<duckdb_database>(db_);
  api_->close(&db);
}

Result<std::unique_ptr<Connection>> DuckHost::Connect() {
  duckdb_connection con;
  if (api_->connect(static_cast<duckdb_database>(db_), &con) != DuckDBSuccess) {
    return Status::Io("cannot connect to DuckDB");
  }
  return std::unique_ptr<Connection>(new Connection(api_, con));
}

std::string DuckHost::version() const { return api_->library_version(); }

std::string DefaultLibraryPath() {
  const char* env = std::getenv("MENTAT_DUCKDB_LIBRARY");
  return env && *env ? env : MENTAT_DUCKDB_LIBRARY;
}

std::string DefaultExtensionPath() {
  const char* env = std::getenv("MENTAT_DUCKDB_EXTENSION");
  return env && *env ? env : MENTAT_DUCKDB_EXTENSION;
}

std::string Quote(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    out += c;
    if (c == '\'') out += '\'';
  }
  return out + "'";
}

}  // namespace mentat::duckdb_host
