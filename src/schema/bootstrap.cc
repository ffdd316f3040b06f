#include "schema/bootstrap.h"

#include <algorithm>
#include <string>

#include "schema/tuple.h"

namespace mentat::schema {

namespace {

struct Def {
  Entid id;
  const char* ident;
  Entid type;  // 0 when not an attribute
  bool many;
  Entid unique;
  bool index;
  int since = 1;               // the format that added it
  bool keyword_tuple = false;  // a :db.type/tuple attribute of keywords (:db/tupleType)
};

constexpr Entid kRef = ids::kTypeRef;
constexpr Entid kKeyword = ids::kTypeRef + 1;
constexpr Entid kString = ids::kTypeRef + 4;
constexpr Entid kBoolean = ids::kTypeRef + 5;
constexpr Entid kInstant = ids::kTypeRef + 6;
constexpr Entid kTuple = ids::kTypeTuple;

const Def kDefs[] = {
    {ids::kPartDb, "db.part/db", 0, false, 0, false},
    {ids::kIdent, "db/ident", kKeyword, false, ids::kUniqueIdentity, true},
    {ids::kPartUser, "db.part/user", 0, false, 0, false},
    {ids::kPartTx, "db.part/tx", 0, false, 0, false},
    {ids::kTxInstant, "db/txInstant", kInstant, false, 0, true},
    {ids::kValueType, "db/valueType", kRef, false, 0, false},
    {ids::kCardinality, "db/cardinality", kRef, false, 0, false},
    {ids::kUnique, "db/unique", kRef, false, 0, false},
    {ids::kIndex, "db/index", kBoolean, false, 0, false},
    {ids::kIsComponent, "db/isComponent", kBoolean, false, 0, false},
    {ids::kNoHistory, "db/noHistory", kBoolean, false, 0, false},
    {ids::kFulltext, "db/fulltext", kBoolean, false, 0, false},
    {ids::kDoc, "db/doc", kString, false, 0, false},
    {ids::kTypeRef + 0, "db.type/ref", 0, false, 0, false},
    {ids::kTypeRef + 1, "db.type/keyword", 0, false, 0, false},
    {ids::kTypeRef + 2, "db.type/long", 0, false, 0, false},
    {ids::kTypeRef + 3, "db.type/double", 0, false, 0, false},
    {ids::kTypeRef + 4, "db.type/string", 0, false, 0, false},
    {ids::kTypeRef + 5, "db.type/boolean", 0, false, 0, false},
    {ids::kTypeRef + 6, "db.type/instant", 0, false, 0, false},
    {ids::kTypeRef + 7, "db.type/uuid", 0, false, 0, false},
    {ids::kTypeRef + 8, "db.type/bytes", 0, false, 0, false},
    {ids::kCardinalityOne, "db.cardinality/one", 0, false, 0, false},
    {ids::kCardinalityMany, "db.cardinality/many", 0, false, 0, false},
    {ids::kUniqueValue, "db.unique/value", 0, false, 0, false},
    {ids::kUniqueIdentity, "db.unique/identity", 0, false, 0, false},
    // Format 4: the system block (ids::kSystemStart ..).
    {ids::kTypeBigInt, "db.type/bigint", 0, false, 0, false, 4},
    {ids::kTypeBigDec, "db.type/bigdec", 0, false, 0, false, 4},
    {ids::kTypeFloat, "db.type/float", 0, false, 0, false, 4},
    {ids::kTypeUri, "db.type/uri", 0, false, 0, false, 4},
    {ids::kTypeSymbol, "db.type/symbol", 0, false, 0, false, 4},
    {ids::kExcise, "db/excise", kRef, false, 0, false, 4},
    {ids::kExciseAttrs, "db.excise/attrs", kRef, true, 0, false, 4},
    // Format 5: tuples.
    {ids::kTypeTuple, "db.type/tuple", 0, false, 0, false, 5},
    {ids::kTupleType, "db/tupleType", kKeyword, false, 0, false, 5},
    {ids::kTupleTypes, "db/tupleTypes", kTuple, false, 0, false, 5, true},
    {ids::kTupleAttrs, "db/tupleAttrs", kTuple, false, 0, false, 5, true},
    // Format 5: entity specs.
    {ids::kEnsure, "db/ensure", kRef, true, 0, false, 5},
    {ids::kEntityAttrs, "db.entity/attrs", kKeyword, true, 0, false, 5},
    {ids::kEntityPreds, "db.entity/preds", ids::kTypeSymbol, true, 0, false, 5},
    // Format 6: transaction functions and attribute predicates.
    {ids::kFn, "db/fn", kString, false, 0, false, 6},
    {ids::kAttrPreds, "db.attr/preds", ids::kTypeSymbol, true, 0, false, 6},
};

}  // namespace

bool IsSystemEntity(Entid e) {
  if (e < ids::kSystemStart || e >= ids::kSystemEnd) return false;
  for (const Def& d : kDefs)
    if (d.id == e) return true;
  return false;
}

std::vector<BootDatom> BootstrapDatoms(int after_format) {
  std::vector<BootDatom> out;
  for (const Def& d : kDefs) {
    if (d.since <= after_format) continue;
    out.push_back({d.id, ids::kIdent, DbVal::Text(std::string(":") + d.ident)});
    if (d.type == 0) continue;
    out.push_back({d.id, ids::kValueType, DbVal::Int(d.type)});
    out.push_back({d.id, ids::kCardinality,
                   DbVal::Int(d.many ? ids::kCardinalityMany : ids::kCardinalityOne)});
    if (d.unique) out.push_back({d.id, ids::kUnique, DbVal::Int(d.unique)});
    if (d.index) out.push_back({d.id, ids::kIndex, DbVal::Int(1)});
    if (d.keyword_tuple) out.push_back({d.id, ids::kTupleType, DbVal::Text(":db.type/keyword")});
  }
  return out;
}

void ApplySchemaDatom(Schema* schema, Entid e, Entid a, const DbVal& v, bool added) {
  if (a == ids::kIdent) {
    if (added) {
      std::string_view s = v.s;
      if (!s.empty() && s[0] == ':') s.remove_prefix(1);
      schema->SetIdent(e, std::string(s));
    } else {
      const std::string* cur = schema->ident(e);
      std::string_view s = v.s;
      if (!s.empty() && s[0] == ':') s.remove_prefix(1);
      if (cur && *cur == s) schema->RemoveIdent(e);
    }
    return;
  }
  if (a == ids::kValueType) {
    if (!added) {
      schema->RemoveAttribute(e);
      return;
    }
    Attribute* attr = schema->mutable_attribute(e);
    if (!attr) {
      Attribute fresh;
      fresh.id = e;
      if (const std::string* id = schema->ident(e)) fresh.ident = *id;
      schema->SetAttribute(fresh);
      attr = schema->mutable_attribute(e);
    }
    attr->type = ValueTypeFromEntid(v.i).value_or(ValueType::kString);
    return;
  }
  // Properties of entities that are not attributes (e.g. :db/doc on an enum ident) do not
  // change the attribute table. Callers apply :db/valueType datoms first.
  Attribute* attr = schema->mutable_attribute(e);
  if (!attr) return;
  switch (a) {
    case ids::kCardinality:
      attr->many = added && v.i == ids::kCardinalityMany;
      break;
    case ids::kUnique:
      attr->unique = !added                        ? Unique::kNone
                     : v.i == ids::kUniqueIdentity ? Unique::kIdentity
                                                   : Unique::kValue;
      break;
    case ids::kIndex:
      attr->index = added && v.i != 0;
      break;
    case ids::kIsComponent:
      attr->component = added && v.i != 0;
      break;
    case ids::kNoHistory:
      attr->no_history = added && v.i != 0;
      break;
    case ids::kFulltext:
      attr->fulltext = added && v.i != 0;
      break;
    case ids::kDoc:
      attr->doc = added ? v.s : "";
      break;
    case ids::kAttrPreds: {
      // Kept sorted: the order the store's index gives them in.
      auto& p = attr->preds;
      auto it = std::lower_bound(p.begin(), p.end(), v.s);
      const bool present = it != p.end() && *it == v.s;
      if (added && !present) p.insert(it, v.s);
      if (!added && present) p.erase(it);
      break;
    }
    case ids::kTupleType:
      attr->tuple_type.reset();
      if (added) attr->tuple_type = ValueTypeFromIdent(v.s);
      break;
    case ids::kTupleTypes:
    case ids::kTupleAttrs: {
      std::vector<std::string> names;
      if (added) {
        edn::Value parts = DecodeTuple(v.s);
        for (const edn::Value& p : parts.items())
          if (p.is_keyword()) names.push_back(p.str());
      }
      if (a == ids::kTupleAttrs) {
        attr->tuple_attrs = std::move(names);
      } else {
        attr->tuple_types.clear();
        for (const auto& n : names)
          if (auto t = ValueTypeFromIdent(n)) attr->tuple_types.push_back(*t);
      }
      break;
    }
    default:
      break;
  }
}

Schema BuildSchema(const std::vector<BootDatom>& datoms) {
  Schema schema;
  // Idents first, then value types (which create attributes), then the rest.
  for (const auto& d : datoms)
    if (d.a == ids::kIdent) ApplySchemaDatom(&schema, d.e, d.a, d.v, true);
  for (const auto& d : datoms)
    if (d.a == ids::kValueType) ApplySchemaDatom(&schema, d.e, d.a, d.v, true);
  for (const auto& d : datoms)
    if (d.a != ids::kIdent && d.a != ids::kValueType)
      ApplySchemaDatom(&schema, d.e, d.a, d.v, true);
  return schema;
}

namespace {
// What the schema is loaded from, as an SQL list: Schema::IsSchemaAttribute (:db/ident,
// :db/valueType .. :db/doc, the tuple attributes of format 5) and :db.attr/preds (format 6).
constexpr const char* kSchemaAttrList =
    "(1, 5, 6, 7, 8, 9, 10, 11, 12, 65296, 65297, 65298, 65300)";
static_assert(ids::kTupleType == 65296 && ids::kTupleAttrs == 65298 && ids::kAttrPreds == 65300);
}  // namespace

Result<Schema> LoadSchema(storage::Connection* c) {
  // Both attribute indexes: the loader does not know yet which one holds each attribute.
  MENTAT_ASSIGN_OR_RETURN(
      auto stmt, c->Cached("SELECT e, a, v FROM datoms WHERE a IN " + std::string(kSchemaAttrList) +
                           " AND ix IS NOT 0 UNION ALL SELECT e, a, v FROM datoms WHERE a IN " +
                           kSchemaAttrList + " AND ix IS NOT 1"));
  std::vector<BootDatom> datoms;
  for (;;) {
    MENTAT_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) break;
    datoms.push_back({stmt->ColumnInt(0), stmt->ColumnInt(1), Column(*stmt, 2)});
  }
  Schema schema = BuildSchema(datoms);
  MENTAT_ASSIGN_OR_RETURN(auto adaptive, c->Cached("SELECT a FROM auto_indexes"));
  for (;;) {
    MENTAT_ASSIGN_OR_RETURN(bool row, adaptive->Step());
    if (!row) break;
    if (Attribute* a = schema.mutable_attribute(adaptive->ColumnInt(0))) a->auto_index = true;
  }
  return schema;
}

}  // namespace mentat::schema
