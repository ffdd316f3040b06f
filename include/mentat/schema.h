// The schema: idents, attributes and their properties, as read from the store.
//
// A Schema is an immutable snapshot; the store swaps in a new one when a transaction
// (of this or another connection) changes the schema. Safe to share between threads.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace mentat {

using Entid = int64_t;

enum class ValueType : uint8_t {
  kRef,
  kKeyword,
  kLong,
  kDouble,
  kString,
  kBoolean,
  kInstant,
  kUuid,
  kBytes,
  // Format 4 (doc/format.md "Value encoding"):
  kBigInt,  // arbitrary-precision integer (EDN 1N)
  kBigDec,  // arbitrary-precision decimal (EDN 1.5M)
  kFloat,   // 32-bit float, read back as a double
  kUri,     // #uri "..."
  kSymbol,  // EDN symbol
  // Format 5 (doc/format.md "Tuples"): a vector of 2 to 8 scalars, typed by the
  // attribute's :db/tupleType, :db/tupleTypes or :db/tupleAttrs.
  kTuple,
};

// ":db.type/string" etc.
const char* ValueTypeIdent(ValueType t);
std::optional<ValueType> ValueTypeFromIdent(std::string_view ident);
// The entity id of a value type's ident (:db.type/long is 15), and back.
int64_t ValueTypeEntid(ValueType t);
std::optional<ValueType> ValueTypeFromEntid(int64_t e);

enum class Unique : uint8_t { kNone, kValue, kIdentity };

struct Attribute {
  Entid id = 0;
  std::string ident;  // without the leading ':', e.g. "user/email"
  ValueType type = ValueType::kString;
  bool many = false;  // :db.cardinality/many
  Unique unique = Unique::kNone;
  bool index = false;
  bool component = false;
  bool no_history = false;
  bool fulltext = false;
  std::string doc;
  // An adaptive value index is on (AutoIndex::kAdaptive; the store's auto_indexes table).
  bool auto_index = false;
  // :db.type/tuple attributes, one of: every element of one type (:db/tupleType), a type
  // per position (:db/tupleTypes), or a composite of other attributes' values kept by the
  // transactor (:db/tupleAttrs, their idents without ':').
  std::optional<ValueType> tuple_type;
  std::vector<ValueType> tuple_types;
  std::vector<std::string> tuple_attrs;
  // :db.attr/preds: the predicates (function symbols, e.g. "clojure.core/even?", sorted)
  // that every value asserted for it must satisfy.
  std::vector<std::string> preds;

  // True when the attribute's values are indexed (AVET): unique, :db/index, a ref (so
  // reverse references are an index range, as Datomic's VAET), or an adaptive index.
  // Otherwise its datoms are indexed by entity only (AEVT), and a query that filters it
  // by value reads all of them. doc/format.md "Attribute indexes".
  bool value_indexed() const { return schema_value_indexed() || auto_index; }
  // The same without adaptive indexes: what the schema alone asks for.
  bool schema_value_indexed() const {
    return unique != Unique::kNone || index || type == ValueType::kRef;
  }
};

// Well-known entity ids of the bootstrap vocabulary (fixed in every store).
namespace ids {
inline constexpr Entid kPartDb = 0;
inline constexpr Entid kIdent = 1;
inline constexpr Entid kPartUser = 2;
inline constexpr Entid kPartTx = 3;
inline constexpr Entid kTxInstant = 4;
inline constexpr Entid kValueType = 5;
inline constexpr Entid kCardinality = 6;
inline constexpr Entid kUnique = 7;
inline constexpr Entid kIndex = 8;
inline constexpr Entid kIsComponent = 9;
inline constexpr Entid kNoHistory = 10;
inline constexpr Entid kFulltext = 11;
inline constexpr Entid kDoc = 12;
inline constexpr Entid kTypeRef = 13;  // :db.type/ref .. :db.type/bytes are 13..21
inline constexpr Entid kCardinalityOne = 22;
inline constexpr Entid kCardinalityMany = 23;
inline constexpr Entid kUniqueValue = 24;
inline constexpr Entid kUniqueIdentity = 25;
// Format 4 and later put the system entities they add in a reserved block at the top of
// :db.part/db, [kSystemStart, kUserStart): user idents are allocated below it.
inline constexpr Entid kSystemStart = 0xFF00;
inline constexpr Entid kTypeBigInt = kSystemStart;  // :db.type/bigint .. :db.type/symbol
inline constexpr Entid kTypeBigDec = kSystemStart + 1;
inline constexpr Entid kTypeFloat = kSystemStart + 2;
inline constexpr Entid kTypeUri = kSystemStart + 3;
inline constexpr Entid kTypeSymbol = kSystemStart + 4;
inline constexpr Entid kTypeTuple = kSystemStart + 5;  // format 5
// Tuple attributes (format 5): :db/tupleType (keyword), :db/tupleTypes and :db/tupleAttrs
// (tuples of keywords).
inline constexpr Entid kTupleType = kSystemStart + 0x10;
inline constexpr Entid kTupleTypes = kSystemStart + 0x11;
inline constexpr Entid kTupleAttrs = kSystemStart + 0x12;
// Attribute predicates (format 6; doc/transactions.md "Predicates"): :db.attr/preds
// (symbol, many), functions every asserted value of the attribute must satisfy.
inline constexpr Entid kAttrPreds = kSystemStart + 0x14;
// Entity specs (format 5; doc/transactions.md "Entity specs"): :db/ensure (ref, many;
// checked, never stored), :db.entity/attrs (keyword, many), :db.entity/preds (symbol,
// many).
inline constexpr Entid kEnsure = kSystemStart + 0x15;
inline constexpr Entid kEntityAttrs = kSystemStart + 0x16;
inline constexpr Entid kEntityPreds = kSystemStart + 0x17;
// Attributes of the system block (0xFF10 ..): excision (Store: {:db/excise e}).
inline constexpr Entid kExcise = kSystemStart + 0x18;       // :db/excise, ref
inline constexpr Entid kExciseAttrs = kSystemStart + 0x19;  // :db.excise/attrs, ref, many
// Transaction functions (format 6; doc/transactions.md "Transaction functions"): :db/fn
// (string, one), the script source of the function an entity's ident names.
inline constexpr Entid kFn = kSystemStart + 0x1A;
// One past the last system entity id this build uses; not every id below it is defined
// (schema::IsSystemEntity says which are).
inline constexpr Entid kSystemEnd = kSystemStart + 0x1B;
// Partition starts (as Mozilla Mentat): schema, user entities, transactions.
inline constexpr Entid kDbStart = 0;
inline constexpr Entid kUserStart = 0x10000;
inline constexpr Entid kTxStart = 0x10000000;
inline constexpr Entid kBootstrapTx = kTxStart;
}  // namespace ids

class Schema {
 public:
  // Ident lookups; idents are written without the leading ':'.
  std::optional<Entid> entid(std::string_view ident) const;
  const std::string* ident(Entid e) const;
  const Attribute* attribute(Entid a) const;
  const Attribute* attribute(std::string_view ident) const;
  const std::map<Entid, Attribute>& attributes() const { return attributes_; }
  const std::map<Entid, std::string>& idents() const { return idents_; }
  // True when `a` is one of the bootstrap schema attributes (:db/ident ... :db/doc).
  static bool IsSchemaAttribute(Entid a);

  // Building (used by the loader and the transactor on a private copy).
  void SetIdent(Entid e, std::string ident);
  void RemoveIdent(Entid e);
  void SetAttribute(Attribute attr);  // attr.ident must already be set
  void RemoveAttribute(Entid a);
  Attribute* mutable_attribute(Entid a);

 private:
  std::map<Entid, std::string> idents_;
  std::unordered_map<std::string, Entid> by_ident_;
  std::map<Entid, Attribute> attributes_;
};

}  // namespace mentat
