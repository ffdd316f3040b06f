// Pull: Datomic-style pull patterns (the one header other subsystems include).
//
// A pattern is parsed once against a schema (ParsePattern) and then run over any number
// of entities (PullMany). Execution is batched by level: every entity pulled with one
// (sub)pattern at one depth of the result shares one SQL statement for its attributes and
// one for its reverse attributes, so a pattern over N entities runs a bounded number of
// statements per level, never one per entity. src/pull/README.md documents the
// semantics (what comes back for missing entities, refs, components, cycles).
//
// Thread safety: a Pattern is immutable and may be shared between threads. PullMany uses
// the caller's connection, which must be used by one thread at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mentat/edn.h"
#include "mentat/schema.h"
#include "mentat/status.h"
#include "storage/sqlite.h"
#include "views/views.h"

namespace mentat::pull {

struct Pattern;

// One element of a pattern: an attribute (forward or reverse) with its options.
struct AttrSpec {
  enum class Dir : uint8_t { kForward, kReverse };
  Dir dir = Dir::kForward;
  Entid a = 0;
  ValueType type = ValueType::kString;
  bool many = false;             // cardinality many (forward); reverse specs: !component
  bool component = false;        // the attribute is :db/isComponent
  edn::Value key;                // the key in the result map (:as, or the name as written)
  std::optional<int64_t> limit;  // at most this many values; nullopt: all
  std::optional<edn::Value> default_value;
  std::shared_ptr<const Pattern> sub;  // nested pattern {:attr [...]}
  int64_t recursion = 0;               // {:attr n}: n; {:attr ...}: -1; otherwise 0
  bool expand = false;  // forward component without a nested pattern: pull it with [*]
};

struct Pattern {
  bool wildcard = false;
  std::optional<edn::Value> db_id_key;  // :db/id requested (or *), under this key
  std::vector<AttrSpec> specs;          // forward and reverse specs, in pattern order
  // Derived by ParsePattern: distinct attribute ids, ascending, for the SQL.
  std::vector<Entid> forward_attrs;
  std::vector<Entid> reverse_attrs;
  // True when what this pattern pulls for an entity does not depend on where the entity
  // sits in the result (no recursion or component expansion below, whose cycle checks
  // look at the path): such results are shared between all parents of one level.
  bool path_independent = true;
};

// Parses and validates `pattern` (a vector of attribute specs, Datomic's grammar) against
// `schema`. Errors name the offending part of the pattern, with line:column when it was
// read from text: kParse for a malformed pattern, kSchema for an unknown attribute, a
// reverse attribute that is not a ref, or a nested pattern or recursion on a non-ref
// attribute.
Result<std::shared_ptr<const Pattern>> ParsePattern(const Schema& schema,
                                                    const edn::Value& pattern);

// The deepest pull result: levels of entities below the one pulled (each a map nested in
// its parent's, through a vector for cardinality-many attributes). A recursion or nesting
// that would go deeper fails with kInvalidArgument naming the attribute, so that every
// result can be printed, converted and compared without exhausting a stack.
inline constexpr int kMaxPullLevels = 2000;

// Called now and then during a long pull (every level, every 1,024 entities); a non-OK
// status stops the pull and is returned (the query engine's interrupt and timeout).
using CheckFn = std::function<Status()>;

// A datom of an entity to pull, read before the pull: (e, a, v), v decoded.
struct ForwardDatom {
  Entid e = 0;
  Entid a = 0;
  edn::Value v;
};

// Pulls `pattern` for each of `eids`, in order (duplicates allowed): one value per entity,
// a map, or nil when the pattern matched nothing. `view` must not be a history view
// (kUnsupported). With `first_level`, every datom of `view` of every one of `eids`
// (already read, in (e, a, v) order: the query's statement read them, query pass
// pull_in_query): the first level reads them instead of a statement of its own.
// REQUIRES: `c` is inside a read transaction and `schema` matches it.
Result<std::vector<edn::Value>> PullMany(storage::Connection* c, const Schema& schema,
                                         const ResolvedView& view, const Pattern& pattern,
                                         const std::vector<Entid>& eids,
                                         const CheckFn& check = nullptr,
                                         const std::vector<ForwardDatom>* first_level = nullptr);
// Same, parsing `pattern` first (the entry point for `(pull ?e pattern)` in :find).
Result<std::vector<edn::Value>> PullMany(storage::Connection* c, const Schema& schema,
                                         const ResolvedView& view, const edn::Value& pattern,
                                         const std::vector<Entid>& eids,
                                         const CheckFn& check = nullptr,
                                         const std::vector<ForwardDatom>* first_level = nullptr);

// Resolves an entity identifier in `view`: an entity id, an ident keyword, or a lookup ref
// [:unique/attr value]. std::nullopt when an ident or lookup ref names nothing.
// Errors: a value that is no entity identifier, a lookup ref on an unknown or non-unique
// attribute, a lookup value of the wrong type.
Result<std::optional<Entid>> ResolveEntity(storage::Connection* c, const Schema& schema,
                                           const ResolvedView& view, const edn::Value& eid);

// One datom of an entity, for the Entity API: attribute and decoded value.
struct AttrValue {
  Entid a = 0;
  edn::Value v;
};

// Reads the current datoms of `eids` in `view`, optionally only of attribute `a` (0: all),
// grouped per entity in (a, v) order. When `reverse` is set, reads instead the datoms
// [x a e] that point at each e (a must be a ref attribute), giving (a, x) pairs.
Result<std::vector<std::vector<AttrValue>>> ReadEntities(storage::Connection* c,
                                                         const Schema& schema,
                                                         const ResolvedView& view,
                                                         const std::vector<Entid>& eids,
                                                         Entid a = 0, bool reverse = false);

}  // namespace mentat::pull
