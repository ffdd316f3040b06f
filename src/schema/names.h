// Attribute names as queries, pull and transactions write them: :ns/name forward, and
// :ns/_name (or :_name for an attribute without a namespace) for the reverse of a ref.
#pragma once

#include <string>

#include "mentat/edn.h"
#include "mentat/schema.h"

namespace mentat::schema {

// The attribute `kw` names and whether it is read backwards. An attribute of exactly that
// name wins (none can start with '_': installing one is refused); otherwise a name
// starting with '_' is the reverse of the attribute without it. Null when neither
// exists; *forward is then the name looked up last (for the error message).
inline const Attribute* AttributeOrReverse(const Schema& schema, const edn::Value& kw,
                                           bool* reverse, std::string* forward) {
  *reverse = false;
  *forward = kw.str();
  if (const Attribute* a = schema.attribute(*forward)) return a;
  std::string_view ns = kw.ns(), name = kw.name();
  if (name.empty() || name[0] != '_') return nullptr;
  *forward = ns.empty() ? std::string(name.substr(1))
                        : std::string(ns) + "/" + std::string(name.substr(1));
  const Attribute* a = schema.attribute(*forward);
  if (a) *reverse = true;
  return a;
}

// Whether `v` has a lookup ref's shape: [:attr value] or, naming the attribute by its
// entity id, [26 value] (Datomic accepts both).
inline bool IsLookupRefShape(const edn::Value& v) {
  return v.is_vector() && v.size() == 2 && (v.items()[0].is_keyword() || v.items()[0].is_int());
}

// The attribute the first element of a lookup ref names (null when it names none).
inline const Attribute* LookupRefAttribute(const Schema& schema, const edn::Value& name) {
  if (name.is_keyword()) return schema.attribute(name.str());
  if (name.is_int()) return schema.attribute(name.as_int());
  return nullptr;
}

// The first element as messages show it: :ns/name, or the id as written.
inline std::string LookupRefAttributeText(const edn::Value& name) {
  return name.is_keyword() ? ":" + name.str() : edn::Print(name);
}

}  // namespace mentat::schema
