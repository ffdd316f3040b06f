#include "mentat/schema.h"

#include <array>

namespace mentat {

namespace {
constexpr std::array<const char*, 15> kTypeIdents = {
    "db.type/ref",     "db.type/keyword", "db.type/long", "db.type/double", "db.type/string",
    "db.type/boolean", "db.type/instant", "db.type/uuid", "db.type/bytes",  "db.type/bigint",
    "db.type/bigdec",  "db.type/float",   "db.type/uri",  "db.type/symbol", "db.type/tuple"};
// The types of format 1 have the ids 13..21 in enum order; later ones live in the system
// block (ids::kSystemStart).
constexpr size_t kFirstSystemType = static_cast<size_t>(ValueType::kBigInt);
}  // namespace

int64_t ValueTypeEntid(ValueType t) {
  size_t i = static_cast<size_t>(t);
  if (i < kFirstSystemType) return ids::kTypeRef + static_cast<int64_t>(i);
  return ids::kTypeBigInt + static_cast<int64_t>(i - kFirstSystemType);
}

std::optional<ValueType> ValueTypeFromEntid(int64_t e) {
  if (e >= ids::kTypeRef && e < ids::kTypeRef + static_cast<int64_t>(kFirstSystemType))
    return static_cast<ValueType>(e - ids::kTypeRef);
  int64_t k = e - ids::kTypeBigInt;
  if (k >= 0 && k < static_cast<int64_t>(kTypeIdents.size() - kFirstSystemType))
    return static_cast<ValueType>(kFirstSystemType + static_cast<size_t>(k));
  return std::nullopt;
}

const char* ValueTypeIdent(ValueType t) { return kTypeIdents[static_cast<size_t>(t)]; }

std::optional<ValueType> ValueTypeFromIdent(std::string_view ident) {
  if (!ident.empty() && ident[0] == ':') ident.remove_prefix(1);
  for (size_t i = 0; i < kTypeIdents.size(); ++i) {
    if (ident == kTypeIdents[i]) return static_cast<ValueType>(i);
  }
  return std::nullopt;
}

std::optional<Entid> Schema::entid(std::string_view ident) const {
  auto it = by_ident_.find(std::string(ident));
  if (it == by_ident_.end()) return std::nullopt;
  return it->second;
}

const std::string* Schema::ident(Entid e) const {
  auto it = idents_.find(e);
  return it == idents_.end() ? nullptr : &it->second;
}

const Attribute* Schema::attribute(Entid a) const {
  auto it = attributes_.find(a);
  return it == attributes_.end() ? nullptr : &it->second;
}

const Attribute* Schema::attribute(std::string_view ident) const {
  auto e = entid(ident);
  return e ? attribute(*e) : nullptr;
}

bool Schema::IsSchemaAttribute(Entid a) {
  return a == ids::kIdent || (a >= ids::kValueType && a <= ids::kDoc) ||
         (a >= ids::kTupleType && a <= ids::kTupleAttrs);
}

void Schema::SetIdent(Entid e, std::string ident) {
  RemoveIdent(e);
  by_ident_[ident] = e;
  auto attr = attributes_.find(e);
  if (attr != attributes_.end()) attr->second.ident = ident;
  idents_[e] = std::move(ident);
}

void Schema::RemoveIdent(Entid e) {
  auto it = idents_.find(e);
  if (it == idents_.end()) return;
  auto b = by_ident_.find(it->second);
  if (b != by_ident_.end() && b->second == e) by_ident_.erase(b);
  idents_.erase(it);
}

void Schema::SetAttribute(Attribute attr) { attributes_[attr.id] = std::move(attr); }

void Schema::RemoveAttribute(Entid a) { attributes_.erase(a); }

Attribute* Schema::mutable_attribute(Entid a) {
  auto it = attributes_.find(a);
  return it == attributes_.end() ? nullptr : &it->second;
}

}  // namespace mentat
