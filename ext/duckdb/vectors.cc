#include "vectors.h"

#include <cmath>

#include "results.h"
#include "util/utf8.h"

namespace mentat::duckdb_ext {

duckdb_logical_type MakeLogicalType(ColumnType t) {
  switch (t) {
    case ColumnType::kBigInt:
      return duckdb_create_logical_type(DUCKDB_TYPE_BIGINT);
    case ColumnType::kDouble:
      return duckdb_create_logical_type(DUCKDB_TYPE_DOUBLE);
    case ColumnType::kBoolean:
      return duckdb_create_logical_type(DUCKDB_TYPE_BOOLEAN);
    case ColumnType::kTimestamp:
      return duckdb_create_logical_type(DUCKDB_TYPE_TIMESTAMP);
    case ColumnType::kUuid:
      return duckdb_create_logical_type(DUCKDB_TYPE_UUID);
    case ColumnType::kBlob:
      return duckdb_create_logical_type(DUCKDB_TYPE_BLOB);
    case ColumnType::kVarchar:
    case ColumnType::kKeyword:
    case ColumnType::kJson:
      break;
  }
  return duckdb_create_logical_type(DUCKDB_TYPE_VARCHAR);
}

void SetNull(duckdb_vector vec, idx_t row) {
  duckdb_vector_ensure_validity_writable(vec);
  duckdb_validity_set_row_invalid(duckdb_vector_get_validity(vec), row);
}

void SetText(duckdb_vector vec, idx_t row, std::string_view text) {
  // DuckDB trusts a VARCHAR to be UTF-8 and fails (INTERNAL, invalidating the database)
  // when it is not. Transactions refuse such strings, but a store written before that, or
  // by another program, may hold some.
  if (utf8::FirstInvalid(text) != std::string_view::npos) {
    std::string repaired = utf8::Repaired(text);
    duckdb_vector_assign_string_element_len(vec, row, repaired.data(), repaired.size());
    return;
  }
  duckdb_vector_assign_string_element_len(vec, row, text.data(), text.size());
}

void SetBlob(duckdb_vector vec, idx_t row, std::string_view bytes) {
  duckdb_vector_assign_string_element_len(vec, row, bytes.data(), bytes.size());
}

namespace {

Status Mismatch(ColumnType t, const edn::Value& v, const std::string& column) {
  return Status::InvalidArgument("edn_q: column '" + column + "' is " + ColumnTypeName(t) +
                                 " (typed from the schema before the query ran) but the query" +
                                 " returned " + edn::KindName(v.kind()) + " " + edn::Print(v));
}

// DuckDB stores a UUID as a 128-bit integer, big-endian bytes, with the top bit flipped
// so that signed comparison orders UUIDs as unsigned bytes.
duckdb_hugeint UuidToHugeint(const edn::Uuid& u) {
  uint64_t hi = 0, lo = 0;
  for (int i = 0; i < 8; ++i) hi = (hi << 8) | u[i];
  for (int i = 8; i < 16; ++i) lo = (lo << 8) | u[i];
  duckdb_hugeint h;
  h.lower = lo;
  h.upper = static_cast<int64_t>(hi ^ (uint64_t{1} << 63));
  return h;
}

}  // namespace

Status WriteCell(duckdb_vector vec, ColumnType t, idx_t row, const edn::Value& v,
                 const std::string& column) {
  if (v.is_nil()) {
    SetNull(vec, row);
    return Status::OK();
  }
  void* data = duckdb_vector_get_data(vec);
  switch (t) {
    case ColumnType::kBigInt: {
      int64_t x = 0;
      if (v.is_int()) {
        x = v.as_int();
      } else if (v.is_float() && std::nearbyint(v.as_double()) == v.as_double() &&
                 std::fabs(v.as_double()) < 9.2e18) {
        x = static_cast<int64_t>(v.as_double());
      } else {
        return Mismatch(t, v, column);
      }
      static_cast<int64_t*>(data)[row] = x;
      return Status::OK();
    }
    case ColumnType::kDouble:
      if (v.is_float())
        static_cast<double*>(data)[row] = v.as_double();
      else if (v.is_int())
        static_cast<double*>(data)[row] = static_cast<double>(v.as_int());
      else
        return Mismatch(t, v, column);
      return Status::OK();
    case ColumnType::kBoolean:
      if (!v.is_bool()) return Mismatch(t, v, column);
      static_cast<bool*>(data)[row] = v.as_bool();
      return Status::OK();
    case ColumnType::kTimestamp:
      if (!v.is_inst()) return Mismatch(t, v, column);
      static_cast<duckdb_timestamp*>(data)[row] = duckdb_timestamp{v.as_inst_micros()};
      return Status::OK();
    case ColumnType::kUuid:
      if (!v.is_uuid()) return Mismatch(t, v, column);
      static_cast<duckdb_hugeint*>(data)[row] = UuidToHugeint(v.as_uuid());
      return Status::OK();
    case ColumnType::kBlob:
      if (v.kind() != edn::Kind::kBytes) return Mismatch(t, v, column);
      SetBlob(vec, row, v.str());
      return Status::OK();
    case ColumnType::kVarchar:
    case ColumnType::kKeyword:
      SetText(vec, row, CellText(v));
      return Status::OK();
    case ColumnType::kJson:
      SetText(vec, row, QueryCellJson(v));
      return Status::OK();
  }
  return Mismatch(t, v, column);
}

bool InputText(duckdb_vector vec, idx_t row, std::string_view* out) {
  uint64_t* validity = duckdb_vector_get_validity(vec);
  if (validity != nullptr && !duckdb_validity_row_is_valid(validity, row)) return false;
  auto* strings = static_cast<duckdb_string_t*>(duckdb_vector_get_data(vec));
  duckdb_string_t* s = &strings[row];
  *out = std::string_view(duckdb_string_t_data(s), duckdb_string_t_length(*s));
  return true;
}

bool InputInt(duckdb_vector vec, idx_t row, int64_t* out) {
  uint64_t* validity = duckdb_vector_get_validity(vec);
  if (validity != nullptr && !duckdb_validity_row_is_valid(validity, row)) return false;
  *out = static_cast<int64_t*>(duckdb_vector_get_data(vec))[row];
  return true;
}

}  // namespace mentat::duckdb_ext
