// Value encoding: EDN values <-> the SQLite form stored in the `v` column.
//
// The attribute's value type decides the encoding (doc/format.md, "Value encoding"):
// ref, long, boolean and instant are INTEGER; double is REAL; string is TEXT; keyword is
// TEXT with the leading ':'; uuid is a 16-byte BLOB; bytes is a BLOB. Format 4: bigint and
// bigdec are order-preserving BLOBs (util/decimal.h); float is REAL rounded to 32 bits;
// uri and symbol are TEXT.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "mentat/edn.h"
#include "mentat/schema.h"
#include "mentat/status.h"
#include "storage/sqlite.h"

namespace mentat::schema {

struct DbVal {
  enum class Tag : uint8_t { kInt, kReal, kText, kBlob };
  Tag tag = Tag::kInt;
  int64_t i = 0;
  double d = 0;
  std::string s;

  static DbVal Int(int64_t v) { return DbVal{Tag::kInt, v, 0, {}}; }
  static DbVal Real(double v) { return DbVal{Tag::kReal, 0, v, {}}; }
  static DbVal Text(std::string v) { return DbVal{Tag::kText, 0, 0, std::move(v)}; }
  static DbVal Blob(std::string v) { return DbVal{Tag::kBlob, 0, 0, std::move(v)}; }

  friend bool operator==(const DbVal& a, const DbVal& b) {
    if (a.tag != b.tag) return false;
    switch (a.tag) {
      case Tag::kInt:
        return a.i == b.i;
      case Tag::kReal:
        return a.d == b.d || (a.d != a.d && b.d != b.d);
      default:
        return a.s == b.s;
    }
  }
  friend bool operator<(const DbVal& a, const DbVal& b) {
    if (a.tag != b.tag) return a.tag < b.tag;
    switch (a.tag) {
      case Tag::kInt:
        return a.i < b.i;
      case Tag::kReal:
        return a.d < b.d;
      default:
        return a.s < b.s;
    }
  }
  size_t Hash() const {
    switch (tag) {
      case Tag::kInt:
        return std::hash<int64_t>()(i) * 31;
      case Tag::kReal:
        return std::hash<double>()(d) * 37;
      default:
        return std::hash<std::string>()(s) * (tag == Tag::kText ? 41 : 43);
    }
  }
};

struct DbValHash {
  size_t operator()(const DbVal& v) const { return v.Hash(); }
};

// Encodes `v` for an attribute of type `type`. For refs, `v` must already be an entity id
// (an integer). Errors (kSchema) say which type was expected and what was given.
Result<DbVal> Encode(const edn::Value& v, ValueType type);
// Encodes `v` for attribute `attr`: as Encode for its type, and a tuple by the attribute's
// element types (schema/tuple.h: counts and types checked, a long stored as a double
// where a double is expected), so that a value given anywhere matches the stored one.
// With `schema`, an ident keyword at a ref position of a tuple stands for its entity id,
// as the transactor stores it (an unknown ident is kNotFound).
Result<DbVal> EncodeForAttribute(const edn::Value& v, const Attribute& attr,
                                 const Schema* schema = nullptr);
// The stored form of a number where a bigint or bigdec is compared with it (the key of
// util/decimal.h); nullopt for other values and non-finite doubles.
std::optional<std::string> DecimalKey(const edn::Value& v);
// Decodes a stored value; `schema` turns nothing into idents (refs stay integers).
edn::Value Decode(const DbVal& v, ValueType type);

void Bind(storage::Statement& s, int index, const DbVal& v);
// `v` as the JSON text PostgreSQL's value column holds (doc/postgres.md "Values"): a number,
// a string, {"b": hex} for bytes, {"d": "NaN"} for a double JSON cannot write.
std::string JsonOf(const DbVal& v);
DbVal Column(const storage::Statement& s, int col);
// Reads column `col` and decodes it as `type`.
edn::Value ColumnValue(const storage::Statement& s, int col, ValueType type);

// "a string", "a long" ... for error messages.
const char* TypeNoun(ValueType t);

}  // namespace mentat::schema
