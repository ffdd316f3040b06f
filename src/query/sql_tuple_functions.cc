// The SQL functions of stored tuples (:db.type/tuple, schema/tuple.h), registered on every
// connection with the others (sql_functions.cc):
//
//   mentat_tuple_get(t, i)    element i of tuple t as datoms.v stores a value of its type
//                             (a string as TEXT, a keyword as ':ns/name', a bigint as its
//                             decimal key...); NULL for nil, past the end or not a tuple
//   mentat_tuple_type(t, i)   the element's type as TypeCode (compile.h), for per-row
//                             decoding; NULL for nil
//   mentat_tuple(c0, x0, ...) the stored tuple of the values x_k, each given as datoms.v
//                             stores a value of ValueType c_k (NULL: nil)
#include <optional>
#include <string>

#include "mentat/edn.h"
#include "mentat/status.h"
#include "query/compile.h"
#include "schema/codec.h"
#include "schema/tuple.h"
#include "storage/sqlite_api.h"

namespace mentat::query {

namespace {

std::optional<edn::Value> Element(sqlite3_value** argv) {
  if (sqlite3_value_type(argv[0]) != SQLITE_BLOB) return std::nullopt;
  std::string_view blob(static_cast<const char*>(sqlite3_value_blob(argv[0])),
                        static_cast<size_t>(sqlite3_value_bytes(argv[0])));
  edn::Value t = schema::DecodeTuple(blob);
  int64_t i = sqlite3_value_int64(argv[1]);
  if (!t.is_vector() || i < 0 || static_cast<size_t>(i) >= t.items().size()) return std::nullopt;
  return t.items()[static_cast<size_t>(i)];
}

void ResultDbVal(sqlite3_context* ctx, const schema::DbVal& v) {
  switch (v.tag) {
    case schema::DbVal::Tag::kInt:
      return sqlite3_result_int64(ctx, v.i);
    case schema::DbVal::Tag::kReal:
      return sqlite3_result_double(ctx, v.d);
    case schema::DbVal::Tag::kText:
      return sqlite3_result_text(ctx, v.s.data(), static_cast<int>(v.s.size()), SQLITE_TRANSIENT);
    case schema::DbVal::Tag::kBlob:
      return sqlite3_result_blob(ctx, v.s.data(), static_cast<int>(v.s.size()), SQLITE_TRANSIENT);
  }
}

void TupleGetFn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  auto x = Element(argv);
  if (!x) return sqlite3_result_null(ctx);
  auto t = schema::ElementType(*x);
  if (!t) return sqlite3_result_null(ctx);
  auto enc = schema::Encode(*x, *t);
  if (!enc.ok()) return sqlite3_result_null(ctx);
  ResultDbVal(ctx, *enc);
}

void TupleTypeFn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  auto x = Element(argv);
  auto t = x ? schema::ElementType(*x) : std::nullopt;
  if (!t) return sqlite3_result_null(ctx);
  sqlite3_result_int64(ctx, TypeCode(*t));
}

void TupleFn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  edn::Vec parts;
  for (int k = 0; k + 1 < argc; k += 2) {
    sqlite3_value* v = argv[k + 1];
    if (sqlite3_value_type(v) == SQLITE_NULL) {
      parts.push_back(edn::Value());
      continue;
    }
    schema::DbVal d;
    switch (sqlite3_value_type(v)) {
      case SQLITE_INTEGER:
        d = schema::DbVal::Int(sqlite3_value_int64(v));
        break;
      case SQLITE_FLOAT:
        d = schema::DbVal::Real(sqlite3_value_double(v));
        break;
      case SQLITE_TEXT:
        d = schema::DbVal::Text(std::string(reinterpret_cast<const char*>(sqlite3_value_text(v)),
                                            static_cast<size_t>(sqlite3_value_bytes(v))));
        break;
      default:
        d = schema::DbVal::Blob(std::string(static_cast<const char*>(sqlite3_value_blob(v)),
                                            static_cast<size_t>(sqlite3_value_bytes(v))));
        break;
    }
    int64_t code = sqlite3_value_int64(argv[k]);
    if (code < 0 || code >= static_cast<int64_t>(ValueType::kTuple))
      return sqlite3_result_error(ctx, "mentat_tuple: bad element type", -1);
    parts.push_back(schema::Decode(d, static_cast<ValueType>(code)));
  }
  auto blob = schema::EncodeTuple(edn::Value::Vector(std::move(parts)));
  if (!blob.ok()) return sqlite3_result_null(ctx);  // not a storable tuple: equals none
  sqlite3_result_blob(ctx, blob->data(), static_cast<int>(blob->size()), SQLITE_TRANSIENT);
}

}  // namespace

Status RegisterTupleFunctions(sqlite3* db) {
  const int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
  int rc = sqlite3_create_function_v2(db, "mentat_tuple_get", 2, flags, nullptr, TupleGetFn,
                                      nullptr, nullptr, nullptr);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_function_v2(db, "mentat_tuple_type", 2, flags, nullptr, TupleTypeFn,
                                    nullptr, nullptr, nullptr);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_function_v2(db, "mentat_tuple", -1, flags, nullptr, TupleFn, nullptr,
                                    nullptr, nullptr);
  if (rc != SQLITE_OK)
    return Status::Internal(std::string("cannot register the tuple functions: ") +
                            sqlite3_errstr(rc));
  return Status::OK();
}

}  // namespace mentat::query
