// Internal representation of transaction terms between the transactor's passes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mentat/edn.h"
#include "mentat/schema.h"
#include "schema/codec.h"

namespace mentat::tx {

// Where an entity is named: an id, a tempid, a lookup ref, an ident or the current tx.
struct EntityPlace {
  enum class Kind : uint8_t { kId, kTempid, kLookup, kIdent, kTx };
  Kind kind = Kind::kId;
  Entid id = 0;         // kId; after resolution, the entity for every kind
  std::string name;     // kTempid: the tempid; kIdent: the ident (no colon)
  Entid lookup_a = 0;   // kLookup
  edn::Value lookup_v;  // kLookup
  edn::Pos pos;
  bool internal = false;  // kTempid made up for a map without :db/id (not reported)
};

// :db/cas's expected old value (nil: absent), in the same form as the new value: an entity
// place for a ref attribute (Term::old_is_ref), else a plain value. Held apart from the
// term because most terms are not :db/cas and terms are many.
struct CasOld {
  EntityPlace ref;
  edn::Value v;
};

struct Term {
  enum class Op : uint8_t { kAdd, kRetract, kRetractAttr, kRetractEntity, kCas };
  Op op = Op::kAdd;
  EntityPlace e;
  Entid a = 0;
  // For ref attributes the value is an entity place; otherwise a plain value.
  bool v_is_ref = false;
  EntityPlace v_ref;
  edn::Value v;
  // :db/cas (and only it): the expected old value.
  bool old_is_ref = false;
  std::unique_ptr<CasOld> old;
  // The source, for error messages: a list form in `form`; for a term from an entity map,
  // `form` is nil and the map entry is named instead (pointers into the transaction data,
  // which outlives the terms), to be shown as [:db/add id key value] when needed.
  edn::Value form;
  edn::Pos map_pos;
  const edn::Value* map_id = nullptr;  // the map's :db/id, if any
  const edn::Value* map_key = nullptr;
  const edn::Value* map_value = nullptr;
};

// A fully resolved datom operation.
struct Resolved {
  Entid e;
  Entid a;
  schema::DbVal v;
};

// "[:db/add 65536 :user/name \"x\"]"-style text of a term for error messages.
std::string Describe(const Term& t);
// Where the term's source form starts in the transaction text.
edn::Pos FormPos(const Term& t);

}  // namespace mentat::tx
