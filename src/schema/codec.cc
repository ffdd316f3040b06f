#include "schema/codec.h"

#include <charconv>
#include <cmath>
#include <limits>

#include "schema/tuple.h"
#include "util/decimal.h"
#include "util/json_text.h"
#include "util/utf8.h"

namespace mentat::schema {

const char* TypeNoun(ValueType t) {
  switch (t) {
    case ValueType::kRef:
      return "a ref (entity id, ident, tempid or lookup ref)";
    case ValueType::kKeyword:
      return "a keyword";
    case ValueType::kLong:
      return "a long";
    case ValueType::kDouble:
      return "a double";
    case ValueType::kString:
      return "a string";
    case ValueType::kBoolean:
      return "a boolean";
    case ValueType::kInstant:
      return "an instant (#inst)";
    case ValueType::kUuid:
      return "a uuid (#uuid)";
    case ValueType::kBytes:
      return "bytes (#bytes)";
    case ValueType::kBigInt:
      return "a bigint (e.g. 1N)";
    case ValueType::kBigDec:
      return "a bigdec (e.g. 1.5M)";
    case ValueType::kFloat:
      return "a float";
    case ValueType::kUri:
      return "a uri (#uri \"...\")";
    case ValueType::kSymbol:
      return "a symbol";
    case ValueType::kTuple:
      return "a tuple (a vector of 2 to 8 scalars)";
  }
  return "a value";
}

namespace {

// Strings and keywords are stored as UTF-8 text (doc/format.md "Strings"); other bytes
// belong in a :db.type/bytes attribute.
Status CheckUtf8(std::string_view text, const char* what) {
  size_t bad = utf8::FirstInvalid(text);
  if (bad == std::string_view::npos) return Status::OK();
  static const char kHex[] = "0123456789ABCDEF";
  unsigned char b = static_cast<unsigned char>(text[bad]);
  return Status::InvalidArgument(std::string(what) + " is not valid UTF-8 (byte 0x" + kHex[b >> 4] +
                                 kHex[b & 15] + " at offset " + std::to_string(bad) +
                                 "); store bytes as :db.type/bytes");
}

// A number as a decimal: integers exactly, doubles by their shortest round-trip text.
std::optional<decimal::Decimal> AsDecimal(const edn::Value& v, bool integers_only) {
  switch (v.kind()) {
    case edn::Kind::kInt:
      return decimal::Parse(std::to_string(v.as_int()));
    case edn::Kind::kBigInt:
      return decimal::Parse(v.str());
    case edn::Kind::kBigDec:
    case edn::Kind::kFloat: {
      decimal::Decimal d;
      if (v.kind() == edn::Kind::kBigDec) {
        d = decimal::Parse(v.str());
      } else {
        double x = v.as_double();
        if (!std::isfinite(x)) return std::nullopt;
        char buf[64];
        auto r = std::to_chars(buf, buf + sizeof buf, x);
        d = decimal::Parse(std::string_view(buf, static_cast<size_t>(r.ptr - buf)));
      }
      if (integers_only && !decimal::IsInteger(d)) return std::nullopt;
      if (integers_only && v.kind() == edn::Kind::kFloat) return std::nullopt;
      return d;
    }
    default:
      return std::nullopt;
  }
}

}  // namespace

std::optional<std::string> DecimalKey(const edn::Value& v) {
  auto d = AsDecimal(v, false);
  if (!d) return std::nullopt;
  return decimal::Key(*d);
}

Result<DbVal> Encode(const edn::Value& v, ValueType type) {
  auto mismatch = [&]() {
    return Status::Schema(std::string("expected ") + TypeNoun(type) + ", got " +
                          (v.is_nil()
                               ? std::string("nil")
                               : edn::KindName(v.kind()) + std::string(" ") + edn::Print(v)));
  };
  switch (type) {
    case ValueType::kRef:
    case ValueType::kLong:
      if (v.is_int()) return DbVal::Int(v.as_int());
      return mismatch();
    case ValueType::kBoolean:
      if (v.is_bool()) return DbVal::Int(v.as_bool() ? 1 : 0);
      return mismatch();
    case ValueType::kInstant:
      if (v.is_inst()) return DbVal::Int(v.as_inst_micros());
      return mismatch();
    case ValueType::kDouble:
      // SQLite cannot hold NaN (it would store NULL), and NaN has no place in the value
      // order an index needs: refused. Infinities are stored.
      if (v.is_float() && std::isnan(v.as_double()))
        return Status::InvalidArgument(
            "NaN cannot be stored (a double attribute holds numbers "
            "and infinities)");
      if (v.is_float()) return DbVal::Real(v.as_double());
      if (v.is_int()) return DbVal::Real(static_cast<double>(v.as_int()));
      return mismatch();
    case ValueType::kString:
      if (!v.is_string()) return mismatch();
      MENTAT_RETURN_IF_ERROR(CheckUtf8(v.str(), "the string"));
      return DbVal::Text(v.str());
    case ValueType::kKeyword:
      if (!v.is_keyword()) return mismatch();
      MENTAT_RETURN_IF_ERROR(CheckUtf8(v.str(), "the keyword"));
      return DbVal::Text(":" + v.str());
    case ValueType::kUuid:
      if (v.is_uuid()) {
        const auto& u = v.as_uuid();
        return DbVal::Blob(std::string(reinterpret_cast<const char*>(u.data()), u.size()));
      }
      return mismatch();
    case ValueType::kBytes:
      if (v.kind() == edn::Kind::kBytes) return DbVal::Blob(v.str());
      return mismatch();
    case ValueType::kBigInt:
    case ValueType::kBigDec: {
      // A bigint takes integers (1, 1N, and 1M or 1.0M, whose value is one); a bigdec any
      // number but NaN and the infinities.
      if (v.is_float() && !std::isfinite(v.as_double()))
        return Status::InvalidArgument(std::string("a ") + ValueTypeIdent(type) +
                                       " holds finite numbers, got " + edn::Print(v));
      auto d = AsDecimal(v, type == ValueType::kBigInt);
      if (!d) return mismatch();
      return DbVal::Blob(decimal::Key(*d));
    }
    case ValueType::kFloat: {
      if (!v.is_float() && !v.is_int()) return mismatch();
      double x = v.is_float() ? v.as_double() : static_cast<double>(v.as_int());
      if (std::isnan(x))
        return Status::InvalidArgument(
            "NaN cannot be stored (a float attribute holds numbers and infinities)");
      if (std::isfinite(x) && std::fabs(x) > std::numeric_limits<float>::max())
        return Status::InvalidArgument(edn::Print(v) + " is out of range for a float");
      return DbVal::Real(static_cast<double>(static_cast<float>(x)));
    }
    case ValueType::kUri:
      if (v.kind() != edn::Kind::kUri && !v.is_string()) return mismatch();
      MENTAT_RETURN_IF_ERROR(CheckUtf8(v.str(), "the uri"));
      MENTAT_RETURN_IF_ERROR(edn::CheckUri(v.str()));
      return DbVal::Text(v.str());
    case ValueType::kSymbol:
      if (v.kind() != edn::Kind::kSymbol) return mismatch();
      MENTAT_RETURN_IF_ERROR(CheckUtf8(v.str(), "the symbol"));
      return DbVal::Text(v.str());
    case ValueType::kTuple: {
      MENTAT_ASSIGN_OR_RETURN(std::string blob, EncodeTuple(v));
      return DbVal::Blob(std::move(blob));
    }
  }
  return mismatch();
}

Result<DbVal> EncodeForAttribute(const edn::Value& v, const Attribute& attr, const Schema* schema) {
  if (attr.type != ValueType::kTuple) return Encode(v, attr.type);
  TupleShape shape = ShapeOf(attr);
  if (schema && v.is_vector()) {
    std::optional<edn::Vec> idents;
    for (size_t i = 0; i < v.items().size(); ++i) {
      const edn::Value& x = v.items()[i];
      if (!x.is_keyword()) continue;
      if (!IsRefElement(*schema, attr, i)) continue;
      std::optional<Entid> e = schema->entid(x.str());
      if (!e)
        return Status::NotFound("unknown ident " + edn::Print(x) + " in element " +
                                std::to_string(i) + " of a tuple of :" + attr.ident);
      if (!idents) idents.emplace(v.items());
      (*idents)[i] = edn::Value::Int(*e);
    }
    if (idents) {
      MENTAT_ASSIGN_OR_RETURN(std::string blob,
                              EncodeTuple(edn::Value::Vector(std::move(*idents)), &shape));
      return DbVal::Blob(std::move(blob));
    }
  }
  MENTAT_ASSIGN_OR_RETURN(std::string blob, EncodeTuple(v, &shape));
  return DbVal::Blob(std::move(blob));
}

edn::Value Decode(const DbVal& v, ValueType type) {
  switch (type) {
    case ValueType::kRef:
    case ValueType::kLong:
      return edn::Value::Int(v.tag == DbVal::Tag::kReal ? static_cast<int64_t>(v.d) : v.i);
    case ValueType::kBoolean:
      return edn::Value::Bool(v.i != 0);
    case ValueType::kInstant:
      return edn::Value::Inst(v.i);
    case ValueType::kDouble:
      return edn::Value::Float(v.tag == DbVal::Tag::kInt ? static_cast<double>(v.i) : v.d);
    case ValueType::kString:
      return edn::Value::String(v.s);
    case ValueType::kKeyword: {
      std::string_view s = v.s;
      if (!s.empty() && s[0] == ':') s.remove_prefix(1);
      return edn::Value::Keyword(s);
    }
    case ValueType::kUuid: {
      edn::Uuid u{};
      for (size_t i = 0; i < u.size() && i < v.s.size(); ++i) u[i] = static_cast<uint8_t>(v.s[i]);
      return edn::Value::MakeUuid(u);
    }
    case ValueType::kBytes:
      return edn::Value::Bytes(v.s);
    case ValueType::kBigInt:
    case ValueType::kBigDec: {
      auto d = decimal::FromKey(v.s);
      bool integer = type == ValueType::kBigInt;
      std::string text = d ? decimal::Format(*d, integer) : "0";
      return integer ? edn::Value::BigInt(text) : edn::Value::BigDec(text);
    }
    case ValueType::kFloat:
      return edn::Value::Float(v.tag == DbVal::Tag::kInt ? static_cast<double>(v.i) : v.d);
    case ValueType::kUri:
      return edn::Value::Uri(v.s);
    case ValueType::kSymbol:
      return edn::Value::Symbol(v.s);
    case ValueType::kTuple:
      return DecodeTuple(v.s);
  }
  return edn::Value();
}

void Bind(storage::Statement& s, int index, const DbVal& v) {
  switch (v.tag) {
    case DbVal::Tag::kInt:
      s.BindInt(index, v.i);
      break;
    case DbVal::Tag::kReal:
      s.BindDouble(index, v.d);
      break;
    case DbVal::Tag::kText:
      s.BindText(index, v.s);
      break;
    case DbVal::Tag::kBlob:
      s.BindBlob(index, v.s);
      break;
  }
}

std::string JsonOf(const DbVal& v) {
  switch (v.tag) {
    case DbVal::Tag::kInt:
      return std::to_string(v.i);
    case DbVal::Tag::kReal:
      return JsonDouble(v.d);
    case DbVal::Tag::kText:
      return JsonString(v.s);
    case DbVal::Tag::kBlob:
      return JsonBlob(v.s);
  }
  return "null";
}

DbVal Column(const storage::Statement& s, int col) {
  switch (s.ColumnType(col)) {
    case SQLITE_INTEGER:
      return DbVal::Int(s.ColumnInt(col));
    case SQLITE_FLOAT:
      return DbVal::Real(s.ColumnDouble(col));
    case SQLITE_TEXT:
      return DbVal::Text(std::string(s.ColumnText(col)));
    case SQLITE_BLOB:
      return DbVal::Blob(std::string(s.ColumnBlob(col)));
    default:
      return DbVal::Int(0);
  }
}

edn::Value ColumnValue(const storage::Statement& s, int col, ValueType type) {
  switch (type) {
    case ValueType::kRef:
    case ValueType::kLong:
      return edn::Value::Int(s.ColumnInt(col));
    case ValueType::kBoolean:
      return edn::Value::Bool(s.ColumnInt(col) != 0);
    case ValueType::kInstant:
      return edn::Value::Inst(s.ColumnInt(col));
    case ValueType::kDouble:
    case ValueType::kFloat:
      return edn::Value::Float(s.ColumnDouble(col));
    case ValueType::kString:
      return edn::Value::String(std::string(s.ColumnText(col)));
    default:
      return Decode(Column(s, col), type);
  }
}

}  // namespace mentat::schema
