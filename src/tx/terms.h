// Internal representation of transaction terms between the transactor's passes.
#pragma once

#include <cstdint>
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
  Entid id = 0;          // kId; after resolution, the entity for every kind
  std::string name;      // kTempid: the tempid; kIdent: the ident (no colon)
  Entid lookup_a = 0;    // kLookup
  edn::Value lookup_v;   // kLookup
  edn::Pos pos;
  bool internal = false;  // kTempid made up for a map without :db/id (not reported)
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
  // :db/cas: the expected old value (nil: absent), in the same form as the new value.
  bool old_is_ref = false;
  EntityPlace old_ref;
  edn::Value old_v;
  edn::Value form;  // the source form, for error messages
};

// A fully resolved datom operation.
struct Resolved {
  Entid e;
  Entid a;
  schema::DbVal v;
};

// "[:db/add 65536 :user/name \"x\"]"-style text of a term for error messages.
std::string Describe(const Term& t);

}  // namespace mentat::tx
