// mentat::Entity: a lazily read, map-like view of one entity (Datomic's d/entity).
//
//   auto e = store->entity(mentat::edn::Value::Keyword("user/email")).value();
//   auto name = e.get(":user/name");                  // read on first use, then cached
//   auto issues = e.get_entities(":issue/_assignee"); // reverse navigation
//   auto all = e.touch();                             // {:db/id N :user/name "..." ...}
//
// An Entity belongs to the database value it was taken from (Db::entity, or Store::entity
// for the current database at the time of the call): later transactions never change what
// it reads. Nothing is read when it is created; each attribute is read on its first use
// and cached, and touch() reads all of them.
//
// Values: a cardinality-one attribute gives its value (nil when absent); a
// cardinality-many attribute gives a set (nil when absent); keyword values are keywords.
// A ref value is the ident keyword of the entity it points at when that entity has a
// :db/ident, and {:db/id N} otherwise; get_entities() navigates refs as Entities. A reverse
// attribute ":ns/_attr" gives the set of entities pointing here through :ns/attr (a single
// value when :ns/attr is a component).
//
// Thread safety: an Entity may be copied and shared between threads; copies share one
// cache, guarded by a mutex.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "mentat/edn.h"
#include "mentat/schema.h"
#include "mentat/status.h"

namespace mentat {

class Db;

class Entity {
 public:
  Entity(const Entity&) = default;
  Entity& operator=(const Entity&) = default;
  ~Entity();

  Entid id() const;
  // The database value this entity reads from.
  const Db& db() const;

  // The value of `attr` (":ns/name" or "ns/name"; ":ns/_name" for reverse; ":db/id" for
  // the id), as described above. Errors: kSchema for an unknown attribute.
  Result<edn::Value> get(std::string_view attr) const;
  // The entities `attr` (a ref attribute, forward or reverse) points at, in id order.
  // Errors: kSchema for an unknown or non-ref attribute.
  Result<std::vector<Entity>> get_entities(std::string_view attr) const;
  // The attributes this entity has, as keywords sorted by name (reverse attributes are
  // not listed, as in Datomic).
  Result<std::vector<edn::Value>> keys() const;
  // Reads every attribute and returns the entity as a map {:db/id N attr value ...};
  // component entities are touched too (an entity already on the path comes back as
  // {:db/id N}, so cycles end).
  Result<edn::Value> touch() const;

  struct State;  // internal (src/store/entity.cc)

 private:
  friend class Db;
  explicit Entity(std::shared_ptr<State> s) : s_(std::move(s)) {}
  std::shared_ptr<State> s_;
};

}  // namespace mentat
