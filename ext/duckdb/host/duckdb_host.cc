#include "duckdb_host.h"

#include <dlfcn.h>

#include <charconv>
#include <climits>
#include <cstdint>
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
  duckdb_logical_type (*column_logical_type)(duckdb_result*, idx_t);
  duckdb_type (*get_type_id)(duckdb_logical_type);
  uint8_t (*decimal_scale)(duckdb_logical_type);
  duckdb_type (*decimal_internal_type)(duckdb_logical_type);
  void (*destroy_logical_type)(duckdb_logical_type*);
  duckdb_data_chunk (*fetch_chunk)(duckdb_result);
  idx_t (*chunk_size)(duckdb_data_chunk);
  duckdb_vector (*chunk_vector)(duckdb_data_chunk, idx_t);
  void (*destroy_chunk)(duckdb_data_chunk*);
  void* (*vector_data)(duckdb_vector);
  uint64_t* (*vector_validity)(duckdb_vector);
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
  get(&api.column_logical_type, "duckdb_column_logical_type");
  get(&api.get_type_id, "duckdb_get_type_id");
  get(&api.decimal_scale, "duckdb_decimal_scale");
  get(&api.decimal_internal_type, "duckdb_decimal_internal_type");
  get(&api.destroy_logical_type, "duckdb_destroy_logical_type");
  get(&api.fetch_chunk, "duckdb_fetch_chunk");
  get(&api.chunk_size, "duckdb_data_chunk_get_size");
  get(&api.chunk_vector, "duckdb_data_chunk_get_vector");
  get(&api.destroy_chunk, "duckdb_destroy_data_chunk");
  get(&api.vector_data, "duckdb_vector_get_data");
  get(&api.vector_validity, "duckdb_vector_get_validity");
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

struct ColumnFormat {
  duckdb_type type = DUCKDB_TYPE_INVALID;
  uint8_t scale = 0;
  duckdb_type internal = DUCKDB_TYPE_INVALID;
};

std::string Two(int v) { return (v < 10 ? "0" : "") + std::to_string(v); }

// Days since 1970-01-01 -> civil date (Howard Hinnant's algorithm).
std::string FormatDate(int64_t days) {
  days += 719468;
  int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  int64_t doe = days - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t y = yoe + era * 400;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  int64_t d = doy - (153 * mp + 2) / 5 + 1;
  int64_t m = mp < 10 ? mp + 3 : mp - 9;
  if (m <= 2) ++y;
  std::string year = std::to_string(y);
  while (year.size() < 4) year = "0" + year;
  return year + "-" + Two(static_cast<int>(m)) + "-" + Two(static_cast<int>(d));
}

// As DuckDB prints a TIMESTAMP: "YYYY-MM-DD HH:MM:SS[.fraction without trailing zeros]".
std::string FormatTimestamp(int64_t micros) {
  constexpr int64_t kDay = 86400LL * 1000000;
  int64_t days = micros / kDay, rest = micros % kDay;
  if (rest < 0) {
    rest += kDay;
    --days;
  }
  int64_t secs = rest / 1000000, frac = rest % 1000000;
  std::string out = FormatDate(days) + " " + Two(static_cast<int>(secs / 3600)) + ":" +
                    Two(static_cast<int>(secs / 60 % 60)) + ":" + Two(static_cast<int>(secs % 60));
  if (frac != 0) {
    std::string f = std::to_string(frac);
    f = std::string(6 - f.size(), '0') + f;
    while (!f.empty() && f.back() == '0') f.pop_back();
    out += "." + f;
  }
  return out;
}

// As DuckDB prints a DOUBLE: the shortest text that reads back, with ".0" on integers.
std::string FormatDouble(double d) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), d);
  std::string s(buf, ec == std::errc() ? end : buf);
  if (s == "inf") return "inf";
  if (s == "-inf") return "-inf";
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

std::string FormatUuid(const duckdb_hugeint& h) {
  uint64_t hi = static_cast<uint64_t>(h.upper) ^ (uint64_t{1} << 63), lo = h.lower;
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 16; ++i) {
    uint64_t word = i < 8 ? hi : lo;
    int shift = (7 - i % 8) * 8;
    uint8_t b = static_cast<uint8_t>(word >> shift);
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

std::string StringOf(const duckdb_string_t& s) {
  uint32_t len = s.value.inlined.length;
  if (len <= 12) return std::string(s.value.inlined.inlined, len);
  return std::string(s.value.pointer.ptr, len);
}

// As DuckDB prints a BLOB: printable ASCII as is, other bytes as \xHH.
std::string FormatBlob(const std::string& bytes) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : bytes) {
    if (c >= 32 && c <= 126 && c != '\\' && c != '\'' && c != '"') {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string FormatDecimal(int64_t v, uint8_t scale) {
  bool neg = v < 0;
  std::string digits = std::to_string(neg ? -v : v);
  if (scale > 0) {
    if (digits.size() <= scale) digits = std::string(scale + 1 - digits.size(), '0') + digits;
    digits.insert(digits.size() - scale, ".");
  }
  return (neg ? "-" : "") + digits;
}

std::string FormatCell(const ColumnFormat& f, const void* data, idx_t r) {
  switch (f.type) {
    case DUCKDB_TYPE_BOOLEAN:
      return static_cast<const bool*>(data)[r] ? "true" : "false";
    case DUCKDB_TYPE_TINYINT:
      return std::to_string(static_cast<const int8_t*>(data)[r]);
    case DUCKDB_TYPE_SMALLINT:
      return std::to_string(static_cast<const int16_t*>(data)[r]);
    case DUCKDB_TYPE_INTEGER:
      return std::to_string(static_cast<const int32_t*>(data)[r]);
    case DUCKDB_TYPE_BIGINT:
      return std::to_string(static_cast<const int64_t*>(data)[r]);
    case DUCKDB_TYPE_UTINYINT:
      return std::to_string(static_cast<const uint8_t*>(data)[r]);
    case DUCKDB_TYPE_USMALLINT:
      return std::to_string(static_cast<const uint16_t*>(data)[r]);
    case DUCKDB_TYPE_UINTEGER:
      return std::to_string(static_cast<const uint32_t*>(data)[r]);
    case DUCKDB_TYPE_UBIGINT:
      return std::to_string(static_cast<const uint64_t*>(data)[r]);
    case DUCKDB_TYPE_FLOAT:
      return FormatDouble(static_cast<const float*>(data)[r]);
    case DUCKDB_TYPE_DOUBLE:
      return FormatDouble(static_cast<const double*>(data)[r]);
    case DUCKDB_TYPE_DATE:
      return FormatDate(static_cast<const int32_t*>(data)[r]);
    case DUCKDB_TYPE_TIMESTAMP:
    case DUCKDB_TYPE_TIMESTAMP_TZ:
      return FormatTimestamp(static_cast<const int64_t*>(data)[r]);
    case DUCKDB_TYPE_UUID:
      return FormatUuid(static_cast<const duckdb_hugeint*>(data)[r]);
    case DUCKDB_TYPE_VARCHAR:
      return StringOf(static_cast<const duckdb_string_t*>(data)[r]);
    case DUCKDB_TYPE_BLOB:
      return FormatBlob(StringOf(static_cast<const duckdb_string_t*>(data)[r]));
    case DUCKDB_TYPE_HUGEINT: {
      const duckdb_hugeint& h = static_cast<const duckdb_hugeint*>(data)[r];
      if ((h.upper == 0 && h.lower <= INT64_MAX) || (h.upper == -1 && h.lower > INT64_MAX)) {
        return std::to_string(static_cast<int64_t>(h.lower));
      }
      return "<HUGEINT>";
    }
    case DUCKDB_TYPE_DECIMAL:
      switch (f.internal) {
        case DUCKDB_TYPE_SMALLINT:
          return FormatDecimal(static_cast<const int16_t*>(data)[r], f.scale);
        case DUCKDB_TYPE_INTEGER:
          return FormatDecimal(static_cast<const int32_t*>(data)[r], f.scale);
        case DUCKDB_TYPE_BIGINT:
          return FormatDecimal(static_cast<const int64_t*>(data)[r], f.scale);
        default:
          return "<DECIMAL>";
      }
    default:
      return std::string("<") + TypeName(f.type) + ">";
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
  std::vector<ColumnFormat> formats(cols);
  for (idx_t c = 0; c < cols; ++c) {
    out.names.push_back(api_->column_name(&res, c));
    out.types.push_back(TypeName(api_->column_type(&res, c)));
    duckdb_logical_type lt = api_->column_logical_type(&res, c);
    formats[c].type = api_->get_type_id(lt);
    if (formats[c].type == DUCKDB_TYPE_DECIMAL) {
      formats[c].scale = api_->decimal_scale(lt);
      formats[c].internal = api_->decimal_internal_type(lt);
    }
    api_->destroy_logical_type(&lt);
  }
  while (true) {
    duckdb_data_chunk chunk = api_->fetch_chunk(res);
    if (chunk == nullptr) break;
    idx_t n = api_->chunk_size(chunk);
    size_t base = out.rows.size();
    out.rows.resize(base + n);
    for (idx_t c = 0; c < cols; ++c) {
      duckdb_vector vec = api_->chunk_vector(chunk, c);
      const void* data = api_->vector_data(vec);
      const uint64_t* validity = api_->vector_validity(vec);
      for (idx_t r = 0; r < n; ++r) {
        bool valid = validity == nullptr || (validity[r / 64] >> (r % 64)) & 1;
        if (!valid) {
          out.rows[base + r].push_back(std::nullopt);
        } else {
          out.rows[base + r].push_back(FormatCell(formats[c], data, r));
        }
      }
    }
    api_->destroy_chunk(&chunk);
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
