// A small in-memory store shared by the fuzz targets: a schema with every value type,
// uniqueness, cardinality many, components, full text and no-history, and a few entities.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "mentat/store.h"

namespace mentat::fuzz {

inline const char* kFuzzSchema = R"([
 {:db/ident :f/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
 {:db/ident :f/code :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/value}
 {:db/ident :f/n :db/valueType :db.type/long :db/cardinality :db.cardinality/one :db/index true}
 {:db/ident :f/d :db/valueType :db.type/double :db/cardinality :db.cardinality/one}
 {:db/ident :f/b :db/valueType :db.type/boolean :db/cardinality :db.cardinality/one}
 {:db/ident :f/k :db/valueType :db.type/keyword :db/cardinality :db.cardinality/one}
 {:db/ident :f/i :db/valueType :db.type/instant :db/cardinality :db.cardinality/one}
 {:db/ident :f/u :db/valueType :db.type/uuid :db/cardinality :db.cardinality/one}
 {:db/ident :f/bytes :db/valueType :db.type/bytes :db/cardinality :db.cardinality/one}
 {:db/ident :f/tags :db/valueType :db.type/long :db/cardinality :db.cardinality/many}
 {:db/ident :f/friend :db/valueType :db.type/ref :db/cardinality :db.cardinality/many}
 {:db/ident :f/parent :db/valueType :db.type/ref :db/cardinality :db.cardinality/one}
 {:db/ident :f/part :db/valueType :db.type/ref :db/cardinality :db.cardinality/many :db/isComponent true}
 {:db/ident :f/text :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/fulltext true}
 {:db/ident :f/seen :db/valueType :db.type/long :db/cardinality :db.cardinality/one :db/noHistory true}])";

inline const char* kFuzzData = R"([
 {:db/id "a" :f/name "alice" :f/code "A" :f/n 1 :f/d 1.5 :f/b true :f/k :k/a
  :f/i #inst "2020-01-01T00:00:00Z" :f/u #uuid "550e8400-e29b-41d4-a716-446655440000"
  :f/bytes #bytes "00ff" :f/tags [1 2 3] :f/text "green tea and biscuits" :f/seen 1
  :f/part [{:f/name "alice-part" :f/n 10}]}
 {:db/id "b" :f/name "bob" :f/code "B" :f/n 2 :f/parent "a" :f/friend ["a"] :f/text "black coffee"}
 {:db/id "c" :f/name "carol" :f/n 3 :f/parent "b" :f/friend ["a" "b"] :f/tags [3 4]}])";

// Opens the in-memory store with the schema and data, aborting when that fails (a broken
// fixture would make every input look uninteresting).
inline std::unique_ptr<Store> MakeFuzzStore() {
  auto s = Store::open("");
  if (!s.ok()) {
    std::fprintf(stderr, "fuzz store: %s\n", s.status().ToString().c_str());
    std::abort();
  }
  for (const char* tx : {kFuzzSchema, kFuzzData}) {
    auto r = (*s)->transact(tx);
    if (!r.ok()) {
      std::fprintf(stderr, "fuzz store: %s\n", r.status().ToString().c_str());
      std::abort();
    }
  }
  // A second transaction, so that history, as-of and since have something to show.
  (void)(*s)->transact(
      R"([[:db/add [:f/name "alice"] :f/n 11] [:db/retract [:f/name "bob"] :f/friend [:f/name "alice"]]])");
  return std::move(*s);
}

// Aborts with a message: a broken invariant is a finding.
[[noreturn]] inline void Fail(const std::string& what) {
  std::fprintf(stderr, "invariant broken: %s\n", what.c_str());
  std::abort();
}

}  // namespace mentat::fuzz
