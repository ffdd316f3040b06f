#include "tx/schema_change.h"

#include <set>

#include "schema/bootstrap.h"
#include "schema/tuple.h"
#include "storage/format.h"

namespace mentat::tx {

using schema::DbVal;

namespace {

Status CheckValue(const Schema& schema, Entid e, Entid a, const DbVal& v) {
  auto name = [&]() {
    const std::string* id = schema.ident(e);
    return id ? ":" + *id : std::to_string(e);
  };
  switch (a) {
    case ids::kValueType:
      if (!ValueTypeFromEntid(v.i))
        return Status::Schema("invalid :db/valueType for " + name() +
                              ": expected a value type such as :db.type/string (doc/format.md "
                              "\"Value encoding\" lists them)");
      break;
    case ids::kCardinality:
      if (v.i != ids::kCardinalityOne && v.i != ids::kCardinalityMany)
        return Status::Schema("invalid :db/cardinality for " + name() +
                              ": expected :db.cardinality/one or :db.cardinality/many");
      break;
    case ids::kUnique:
      if (v.i != ids::kUniqueValue && v.i != ids::kUniqueIdentity)
        return Status::Schema("invalid :db/unique for " + name() +
                              ": expected :db.unique/value or :db.unique/identity");
      break;
    case ids::kIdent:
      if (v.s.size() < 2 || v.s[0] != ':')
        return Status::Schema("invalid :db/ident for entity " + std::to_string(e));
      break;
    default:
      break;
  }
  return Status::OK();
}

// The bootstrap entities (ids 0 .. 25: the partitions, the schema attributes, the value
// types, cardinalities and uniqueness values) hold every store together: renaming or
// retracting one, or changing a built-in attribute, would leave a store where no schema
// can be installed. Only their :db/doc may change.
Status CheckNotBuiltIn(const Schema& schema, const Change& ch, bool added) {
  bool built_in =
      (ch.e >= ids::kPartDb && ch.e <= ids::kUniqueIdentity) || schema::IsSystemEntity(ch.e);
  if (!built_in || ch.a == ids::kDoc) return Status::OK();
  const std::string* id = schema.ident(ch.e);
  const std::string* attr = schema.ident(ch.a);
  return Status::Schema(std::string("cannot ") + (added ? "assert " : "retract ") +
                        (attr ? ":" + *attr : std::to_string(ch.a)) + " of built-in entity " +
                        (id ? ":" + *id : std::to_string(ch.e)) +
                        ": the bootstrap vocabulary cannot be changed");
}

// A tuple attribute (doc/format.md "Tuples") names its element types exactly one way:
// :db/tupleType (2 to 8 of one scalar type), :db/tupleTypes (2 to 8 scalar types) or
// :db/tupleAttrs (2 to 8 cardinality-one, non-tuple attributes, kept by the transactor),
// and keeps it once created. Only tuple attributes have them.
Status CheckTupleDefinition(const Schema& next, const Attribute* before, const Attribute& now,
                            const std::string& name, const Changes& changes) {
  int ways = (now.tuple_type ? 1 : 0) + (now.tuple_types.empty() ? 0 : 1) +
             (now.tuple_attrs.empty() ? 0 : 1);
  // The raw assertions: a name ApplySchemaDatom could not read is an error here.
  for (const auto& ch : changes.asserted) {
    if (ch.e != now.id) continue;
    if (ch.a == ids::kTupleType && !now.tuple_type)
      return Status::Schema("invalid :db/tupleType for " + name + ": " + ch.v.s +
                            " is not a value type");
    if (ch.a == ids::kTupleTypes) {
      edn::Value parts = schema::DecodeTuple(ch.v.s);
      for (const edn::Value& p : parts.items())
        if (!p.is_keyword() || !ValueTypeFromIdent(p.str()))
          return Status::Schema("invalid :db/tupleTypes for " + name + ": " + edn::Print(p) +
                                " is not a value type");
    }
  }
  if (now.type != ValueType::kTuple) {
    if (ways)
      return Status::Schema(
          ":db/tupleType, :db/tupleTypes and :db/tupleAttrs need a "
          ":db.type/tuple attribute, " +
          name + " is " + ValueTypeIdent(now.type));
    return Status::OK();
  }
  if (ways != 1)
    return Status::Schema("tuple attribute " + name +
                          " needs exactly one of :db/tupleType, :db/tupleTypes or :db/tupleAttrs");
  if (now.tuple_type && *now.tuple_type == ValueType::kTuple)
    return Status::Schema(":db/tupleType of " + name + " must be a scalar type, not a tuple");
  for (ValueType t : now.tuple_types)
    if (t == ValueType::kTuple)
      return Status::Schema(":db/tupleTypes of " + name + " must be scalar types, not tuples");
  size_t n = now.tuple_types.empty() ? now.tuple_attrs.size() : now.tuple_types.size();
  if (!now.tuple_type && (n < schema::kMinTupleSize || n > schema::kMaxTupleSize))
    return Status::Schema("tuple attribute " + name + " must have 2 to 8 elements, has " +
                          std::to_string(n));
  for (const std::string& ident : now.tuple_attrs) {
    const Attribute* part = next.attribute(ident);
    if (!part)
      return Status::Schema(":db/tupleAttrs of " + name + ": :" + ident + " is not an attribute");
    if (part->id == now.id || part->type == ValueType::kTuple || part->many)
      return Status::Schema(":db/tupleAttrs of " + name + ": :" + ident +
                            " must be a cardinality-one attribute that is not a tuple");
  }
  if (!now.tuple_attrs.empty() && now.many)
    return Status::Schema("composite tuple " + name + " must be :db.cardinality/one");
  if (before && before->type == ValueType::kTuple &&
      (before->tuple_type != now.tuple_type || before->tuple_types != now.tuple_types ||
       before->tuple_attrs != now.tuple_attrs))
    return Status::Schema("cannot change the element types of tuple attribute " + name);
  return Status::OK();
}

}  // namespace

Result<std::shared_ptr<Schema>> ApplySchemaChanges(storage::Connection* c, const Schema& schema,
                                                   const Changes& changes) {
  bool touched = false;
  for (const auto* list : {&changes.retracted, &changes.asserted})
    for (const auto& ch : *list) {
      // An attribute's :db.attr/preds are kept in the schema, so a change of them is one
      // (the schema generation moves and other connections reload), checked by nothing.
      if (ch.a == ids::kAttrPreds) touched = true;
      if (Schema::IsSchemaAttribute(ch.a)) {
        touched = true;
        MENTAT_RETURN_IF_ERROR(CheckNotBuiltIn(schema, ch, list == &changes.asserted));
      }
    }
  if (!touched) return std::shared_ptr<Schema>();

  auto next = std::make_shared<Schema>(schema);
  std::set<Entid> entities;
  // Retractions first, then assertions in attribute order (:db/ident, then :db/valueType,
  // then the other properties), so that a new attribute exists before its properties.
  for (const auto& ch : changes.retracted) {
    if (!Schema::IsSchemaAttribute(ch.a)) continue;
    entities.insert(ch.e);
    if (ch.a == ids::kValueType) {
      const Attribute* attr = schema.attribute(ch.e);
      bool replaced = false;
      for (const auto& add : changes.asserted)
        if (add.e == ch.e && add.a == ids::kValueType) replaced = true;
      if (attr && !replaced)
        return Status::Schema("cannot retract :db/valueType of attribute :" + attr->ident);
      continue;  // a replacement is checked below
    }
    if (ch.a == ids::kCardinality) continue;  // replaced by the new value below
    schema::ApplySchemaDatom(next.get(), ch.e, ch.a, ch.v, false);
  }
  std::vector<const Change*> adds;
  for (const auto& ch : changes.asserted)
    if (Schema::IsSchemaAttribute(ch.a)) adds.push_back(&ch);
  std::stable_sort(adds.begin(), adds.end(),
                   [](const Change* x, const Change* y) { return x->a < y->a; });
  for (const Change* ch : adds) {
    entities.insert(ch->e);
    MENTAT_RETURN_IF_ERROR(CheckValue(*next, ch->e, ch->a, ch->v));
    if (ch->a == ids::kValueType) {
      const Attribute* old = schema.attribute(ch->e);
      if (old && ValueTypeEntid(old->type) != ch->v.i)
        return Status::Schema("cannot change :db/valueType of attribute :" + old->ident + " from " +
                              ValueTypeIdent(old->type) + " to " +
                              ValueTypeIdent(*ValueTypeFromEntid(ch->v.i)));
    }
    schema::ApplySchemaDatom(next.get(), ch->e, ch->a, ch->v, true);
  }
  // Predicates last: the attribute they are asserted on may be new in this transaction.
  for (const auto* list : {&changes.retracted, &changes.asserted})
    for (const auto& ch : *list)
      if (ch.a == ids::kAttrPreds)
        schema::ApplySchemaDatom(next.get(), ch.e, ch.a, ch.v, list == &changes.asserted);

  for (Entid e : entities) {
    const Attribute* now = next->attribute(e);
    const Attribute* before = schema.attribute(e);
    bool has_type = false, has_card = false, has_props = false;
    for (const auto& ch : changes.asserted) {
      if (ch.e != e) continue;
      if (ch.a == ids::kValueType) has_type = true;
      if (ch.a == ids::kCardinality) has_card = true;
      if (ch.a >= ids::kCardinality && ch.a <= ids::kFulltext) has_props = true;
    }
    std::string name = next->ident(e) ? ":" + *next->ident(e) : std::to_string(e);
    if (!before && (has_type || has_props)) {
      if (!has_type || !has_card)
        return Status::Schema("attribute " + name +
                              " must have both :db/valueType and :db/cardinality");
      if (!next->ident(e))
        return Status::Schema("attribute entity " + std::to_string(e) + " must have a :db/ident");
    }
    if (!now) continue;
    // :ns/_name is how queries, pull and transactions write the reverse of :ns/name, so an
    // attribute with such a name could never be read forward (Datomic refuses it too).
    std::string_view local = now->ident;
    if (auto slash = local.rfind('/'); slash != std::string_view::npos)
      local.remove_prefix(slash + 1);
    if (!local.empty() && local[0] == '_')
      return Status::Schema("invalid attribute name " + name +
                            ": a name starting with '_' reads as a reverse reference (:" +
                            std::string(now->ident.substr(0, now->ident.size() - local.size())) +
                            std::string(local.substr(1)) + " backwards)");
    // A component is an entity the attribute's value refers to (Datomic refuses it on
    // another type): retractEntity and pull follow it.
    if (now->component && now->type != ValueType::kRef)
      return Status::Schema(":db/isComponent needs a ref attribute, " + name +
                            " is :" + ValueTypeIdent(now->type));
    MENTAT_RETURN_IF_ERROR(CheckTupleDefinition(*next, before, *now, name, changes));
    if (now->fulltext && now->type != ValueType::kString)
      return Status::Schema(":db/fulltext needs a string attribute, " + name + " is " +
                            ValueTypeIdent(now->type));
    if (before && before->many && !now->many) {
      MENTAT_ASSIGN_OR_RETURN(
          int64_t dup,
          c->QueryInt("SELECT 1 FROM (SELECT e FROM datoms WHERE a = " + std::to_string(e) +
                          " AND " + storage::IndexTerm(before->value_indexed()) +
                          " GROUP BY e HAVING count(*) > 1) LIMIT 1",
                      0));
      if (dup)
        return Status::Schema("cannot change " + name +
                              " to :db.cardinality/one: some entity has more than one value");
    }
    if (before && before->unique == Unique::kNone && now->unique != Unique::kNone) {
      MENTAT_ASSIGN_OR_RETURN(
          int64_t dup,
          c->QueryInt("SELECT 1 FROM (SELECT v FROM datoms WHERE a = " + std::to_string(e) +
                          " AND " + storage::IndexTerm(before->value_indexed()) +
                          " GROUP BY v HAVING count(*) > 1) LIMIT 1",
                      0));
      if (dup)
        return Status::Schema("cannot make " + name +
                              " unique: some value is held by more than one entity");
    }
  }
  return next;
}

}  // namespace mentat::tx
