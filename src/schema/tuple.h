// Tuple values (:db.type/tuple, format 5; doc/format.md "Tuples"): a vector of 2 to 8
// scalars stored as one BLOB whose byte order is the tuples' order, element by element,
// so unique tuples, range predicates and :order work on the stored value. Each element is
// a tag byte (its kind) and a self-delimiting payload; decoding needs no schema.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mentat/edn.h"
#include "mentat/schema.h"
#include "mentat/status.h"

namespace mentat::schema {

inline constexpr size_t kMinTupleSize = 2;
inline constexpr size_t kMaxTupleSize = 8;

// The element types a tuple attribute takes: `types` per position for :db/tupleTypes, or
// every element `of` for :db/tupleType; nil is allowed in any position.
struct TupleShape {
  std::vector<ValueType> types;
  std::optional<ValueType> of;
  size_t composite = 0;  // :db/tupleAttrs: the number of attributes (its types are dynamic)
};
TupleShape ShapeOf(const Attribute& attr);
// Whether element `i` of a value of tuple attribute `attr` is an entity (a :db.type/ref
// position of :db/tupleType(s), or a ref attribute of :db/tupleAttrs in `schema`).
bool IsRefElement(const Schema& schema, const Attribute& attr, size_t i);

// Encodes `v`, a vector of scalars (nil, booleans, numbers, strings, keywords, symbols,
// instants, uuids, bytes, uris, bigints and bigdecs), by the kind of each element.
// With a shape, the elements must also be of its types (a long where a double is expected
// is stored as the double) and the count must match. Errors: kSchema (not a vector, a
// nested collection, a wrong count or element type), kInvalidArgument (NaN, bad UTF-8).
Result<std::string> EncodeTuple(const edn::Value& v, const TupleShape* shape = nullptr);

// The vector a stored tuple holds (nil for a malformed value, which a store never has).
edn::Value DecodeTuple(std::string_view blob);

// The value type an element of this kind is stored as in a tuple (an integer as a long,
// a float as a double); std::nullopt for nil and collections.
std::optional<ValueType> ElementType(const edn::Value& x);

// "a tuple of 2 to 8 longs", "a tuple of (string, long)": for errors.
std::string TupleNoun(const TupleShape& shape);

}  // namespace mentat::schema
