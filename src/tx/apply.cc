#include "tx/apply.h"

#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "schema/tuple.h"
#include "tx/expand.h"

namespace mentat::tx {

using schema::DbVal;

namespace {

struct DatomKey {
  Entid e;
  Entid a;
  DbVal v;
  friend bool operator==(const DatomKey& x, const DatomKey& y) {
    return x.e == y.e && x.a == y.a && x.v == y.v;
  }
};
struct DatomKeyHash {
  size_t operator()(const DatomKey& k) const {
    return (std::hash<int64_t>()(k.e) * 1000003) ^ (std::hash<int64_t>()(k.a) * 7919) ^ k.v.Hash();
  }
};
struct EaHash {
  size_t operator()(const std::pair<Entid, Entid>& k) const {
    return std::hash<int64_t>()(k.first) * 1000003 ^ std::hash<int64_t>()(k.second);
  }
};
struct AvKeyHash {
  size_t operator()(const std::pair<Entid, DbVal>& k) const {
    return std::hash<int64_t>()(k.first) * 1000003 ^ k.second.Hash();
  }
};

std::string DatomText(const Schema& schema, Entid e, Entid a, const DbVal& v) {
  const Attribute* attr = schema.attribute(a);
  std::string out = "[" + std::to_string(e) + " ";
  out += attr ? ":" + attr->ident : std::to_string(a);
  out += " ";
  out += attr ? edn::Print(schema::Decode(v, attr->type)) : "?";
  return out + "]";
}

class Applier {
 public:
  Applier(storage::Connection* c, const Schema& schema, const Resolution& res)
      : c_(c), schema_(schema), res_(res) {}

  Result<Changes> Run(const std::vector<Term>& terms) {
    // 1. Resolve values and sort terms into assertions and retractions.
    adds_.reserve(terms.size());
    add_order_.reserve(terms.size());
    one_first_.reserve(terms.size());
    for (const auto& t : terms) MENTAT_RETURN_IF_ERROR(Collect(t));
    // 1b. Composite tuples, from their attributes' values after this transaction.
    MENTAT_RETURN_IF_ERROR(DeriveComposites(terms));
    // 2. Checks between the terms of this transaction.
    if (!explicit_retracts_.empty()) {
      for (const auto& [key, term] : adds_) {
        if (explicit_retracts_.count(key))
          return ErrorAt(Code::kConflict, FormPos(*term),
                         "the datom " + DatomText(schema_, key.e, key.a, key.v) +
                             " is both added and retracted in one transaction");
      }
    }
    // The first (e, a) in order that was given two values.
    if (!one_conflicts_.empty()) {
      const auto& [ea, vals] = *one_conflicts_.begin();
      const Attribute* attr = schema_.attribute(ea.second);
      std::string list;
      for (const auto& [v, term] : vals) {
        if (!list.empty()) list += " and ";
        list += edn::Print(schema::Decode(v, attr->type));
      }
      return ErrorAt(Code::kConflict, FormPos(*vals.begin()->second),
                     "two values for cardinality-one attribute :" + attr->ident + " of entity " +
                         std::to_string(ea.first) + " in one transaction: " + list);
    }
    // 3. Retractions that exist (others are no-ops).
    for (const auto& key : retract_order_) {
      MENTAT_ASSIGN_OR_RETURN(auto tx, Existing(key));
      if (tx) Retract(key, *tx);
    }
    // 4. Assertions against the current database.
    if (c_->is_pg()) MENTAT_RETURN_IF_ERROR(PrefetchEntities());
    std::unordered_map<std::pair<Entid, DbVal>, Entid, AvKeyHash> unique_in_tx;
    for (const AddEntry* entry : add_order_) {
      const DatomKey& key = entry->first;
      const Term* term = entry->second;
      const Attribute* attr = schema_.attribute(key.a);
      if (attr->unique != Unique::kNone) {
        auto av = std::make_pair(key.a, key.v);
        auto [it, fresh] = unique_in_tx.emplace(av, key.e);
        if (!fresh && it->second != key.e) return UniqueConflict(*attr, key, it->second, term);
        MENTAT_ASSIGN_OR_RETURN(auto holder, LookupUnique(c_, key.a, key.v, &res_.unique_holders));
        if (holder && *holder != key.e && !retracted_.count(DatomKey{*holder, key.a, key.v}))
          return UniqueConflict(*attr, key, *holder, term);
        if (holder && *holder == key.e) continue;  // already asserted
      }
      bool is_new = res_.new_entities.count(key.e) > 0;
      if (!is_new) {
        if (!attr->many) {
          MENTAT_ASSIGN_OR_RETURN(auto current, CurrentValues(key.e, key.a));
          bool same = false;
          for (const auto& [v, tx] : current) {
            if (v == key.v) {
              same = true;
              continue;
            }
            DatomKey old{key.e, key.a, v};
            if (!retracted_.count(old)) Retract(old, tx);
          }
          if (same) continue;
        } else {
          MENTAT_ASSIGN_OR_RETURN(auto tx, Existing(key));
          if (tx && !retracted_.count(key)) continue;
        }
      }
      out_.asserted.push_back(Change{key.e, key.a, key.v, 0});
    }
    return std::move(out_);
  }

 private:
  // Composite tuples (:db/tupleAttrs, doc/transactions.md "Tuples"): for every entity whose
  // parts this transaction asserts or retracts, the composite of the parts' values after
  // it (nil for a part it lacks) is asserted, replacing the old one, or retracted when it
  // has none of them. A composite the transaction gives itself (to upsert by it) must be
  // the one its parts make; an explicit retraction of one whose parts remain is refused.
  Status DeriveComposites(const std::vector<Term>& terms) {
    struct Composite {
      const Attribute* attr;
      std::vector<const Attribute*> parts;
    };
    std::vector<Composite> composites;
    for (const auto& [id, a] : schema_.attributes()) {
      if (a.tuple_attrs.empty()) continue;
      Composite c{&a, {}};
      for (const std::string& n : a.tuple_attrs) c.parts.push_back(schema_.attribute(n));
      composites.push_back(std::move(c));
    }
    if (composites.empty()) return Status::OK();
    // The first term about each entity: where an error about its composite points.
    std::unordered_map<Entid, const Term*> first_term;
    for (const Term& t : terms) first_term.emplace(t.e.id, &t);
    std::set<std::pair<size_t, Entid>> touched;
    auto touch = [&](Entid e, Entid a) {
      for (size_t i = 0; i < composites.size(); ++i) {
        if (composites[i].attr->id == a) touched.insert({i, e});
        for (const Attribute* p : composites[i].parts)
          if (p && p->id == a) touched.insert({i, e});
      }
    };
    for (const AddEntry* entry : add_order_) touch(entry->first.e, entry->first.a);
    // The composites this transaction retracts itself (refused while their parts remain).
    std::set<std::pair<Entid, Entid>> retracted_composites;
    for (const DatomKey& key : retract_order_) {
      touch(key.e, key.a);
      const Attribute* a = schema_.attribute(key.a);
      if (a && !a->tuple_attrs.empty() && explicit_retracts_.count(key))
        retracted_composites.insert({key.e, key.a});
    }
    for (const auto& [i, e] : touched) {
      const Composite& c = composites[i];
      edn::Vec vals;
      bool any = false;
      for (const Attribute* p : c.parts) {
        std::optional<DbVal> v;
        if (p) {
          auto f = one_first_.find({e, p->id});
          if (f != one_first_.end()) {
            v = f->second->first.v;
          } else {
            MENTAT_ASSIGN_OR_RETURN(auto current, CurrentValues(e, p->id));
            for (auto& [cv, tx] : current)
              if (!retract_seen_.count(DatomKey{e, p->id, cv})) v = cv;
          }
        }
        vals.push_back(v ? schema::Decode(*v, p->type) : edn::Value());
        any = any || v.has_value();
      }
      const Attribute& ca = *c.attr;
      // A composite is cardinality one: its first assertion in this transaction, if any.
      const Term* given = nullptr;
      DbVal given_v;
      if (auto g = one_first_.find({e, ca.id}); g != one_first_.end()) {
        given = g->second->second;
        given_v = g->second->first.v;
      }
      std::string parts_text;
      for (const std::string& n : ca.tuple_attrs)
        parts_text += (parts_text.empty() ? ":" : ", :") + n;
      if (!any) {
        if (given)
          return ErrorAt(Code::kSchema, FormPos(*given),
                         "composite tuple :" + ca.ident + " is kept from " + parts_text +
                             ", and entity " + std::to_string(e) + " has none of them");
        MENTAT_ASSIGN_OR_RETURN(auto current, CurrentValues(e, ca.id));
        for (auto& [cv, tx] : current) NoteRetract(DatomKey{e, ca.id, cv}, false);
        continue;
      }
      MENTAT_ASSIGN_OR_RETURN(std::string blob,
                              schema::EncodeTuple(edn::Value::Vector(std::move(vals))));
      DbVal derived = DbVal::Blob(std::move(blob));
      if (given && !(given_v == derived))
        return ErrorAt(Code::kSchema, FormPos(*given),
                       "composite tuple :" + ca.ident + " of entity " + std::to_string(e) +
                           " is kept from " + parts_text + ": they make " +
                           edn::Print(schema::Decode(derived, ValueType::kTuple)) +
                           ", the transaction gives " +
                           edn::Print(schema::Decode(given_v, ValueType::kTuple)));
      if (retracted_composites.count({e, ca.id}))
        return Status::Schema("composite tuple :" + ca.ident + " of entity " + std::to_string(e) +
                              " is kept from " + parts_text + ": retract those instead");
      // (An entity no term names, whose part a retraction elsewhere changed: the first term.)
      auto term = first_term.find(e);
      if (!given && !terms.empty())
        NoteAdd(DatomKey{e, ca.id, derived},
                term != first_term.end() ? term->second : &terms.front());
    }
    return Status::OK();
  }

  Status UniqueConflict(const Attribute& attr, const DatomKey& key, Entid holder,
                        const Term* term) {
    return ErrorAt(Code::kConflict, FormPos(*term),
                   "unique conflict: :" + attr.ident + " " +
                       edn::Print(schema::Decode(key.v, attr.type)) +
                       " is already held by entity " + std::to_string(holder) +
                       ", cannot assert it for entity " + std::to_string(key.e));
  }

  Result<DbVal> ValueOf(const Term& t, const Attribute& attr) {
    if (t.v_is_ref) return DbVal::Int(t.v_ref.id);
    return EncodeFor(attr, t.v, t);
  }

  void NoteAdd(DatomKey key, const Term* t) {
    auto [it, fresh] = adds_.emplace(std::move(key), t);
    if (!fresh) return;
    const AddEntry* entry = &*it;  // unordered_map nodes stay put
    add_order_.push_back(entry);
    const DatomKey& k = entry->first;
    if (schema_.attribute(k.a)->many) return;
    // A second value for a cardinality-one (e, a): both go to the conflicts reported.
    auto [first, is_first] = one_first_.emplace(std::make_pair(k.e, k.a), entry);
    if (is_first) return;
    auto& vals = one_conflicts_[first->first];
    vals.emplace(first->second->first.v, first->second->second);
    vals.emplace(k.v, t);
  }

  void NoteRetract(const DatomKey& key, bool is_explicit) {
    if (is_explicit) explicit_retracts_.insert(key);
    if (retract_seen_.insert(key).second) retract_order_.push_back(key);
  }

  Status Collect(const Term& t) {
    const Attribute* attr = t.a ? schema_.attribute(t.a) : nullptr;
    switch (t.op) {
      case Term::Op::kAdd: {
        MENTAT_ASSIGN_OR_RETURN(DbVal v, ValueOf(t, *attr));
        NoteAdd(DatomKey{t.e.id, t.a, std::move(v)}, &t);
        return Status::OK();
      }
      case Term::Op::kRetract: {
        MENTAT_ASSIGN_OR_RETURN(DbVal v, ValueOf(t, *attr));
        NoteRetract(DatomKey{t.e.id, t.a, std::move(v)}, true);
        return Status::OK();
      }
      case Term::Op::kRetractAttr: {
        MENTAT_ASSIGN_OR_RETURN(auto current, CurrentValues(t.e.id, t.a));
        for (auto& [v, tx] : current) NoteRetract(DatomKey{t.e.id, t.a, v}, true);
        return Status::OK();
      }
      case Term::Op::kRetractEntity:
        return RetractEntity(t.e.id);
      case Term::Op::kCas: {
        if (attr->many)
          return ErrorAt(Code::kSchema, FormPos(t),
                         ":db/cas needs a cardinality-one attribute, :" + attr->ident +
                             " is cardinality many");
        std::optional<DbVal> expected;
        if (t.old_is_ref) {
          expected = DbVal::Int(t.old->ref.id);
        } else if (!t.old->v.is_nil()) {
          MENTAT_ASSIGN_OR_RETURN(DbVal v, EncodeFor(*attr, t.old->v, t));
          expected = std::move(v);
        }
        MENTAT_ASSIGN_OR_RETURN(auto current, CurrentValues(t.e.id, t.a));
        bool match =
            expected ? (current.size() == 1 && current[0].first == *expected) : current.empty();
        if (!match) {
          std::string found = current.empty()
                                  ? "no value"
                                  : edn::Print(schema::Decode(current[0].first, attr->type));
          std::string wanted =
              expected ? edn::Print(schema::Decode(*expected, attr->type)) : "no value";
          return ErrorAt(Code::kCasMismatch, FormPos(t),
                         ":db/cas failed for entity " + std::to_string(t.e.id) + " :" +
                             attr->ident + ": expected " + wanted + ", found " + found);
        }
        MENTAT_ASSIGN_OR_RETURN(DbVal v, ValueOf(t, *attr));
        NoteAdd(DatomKey{t.e.id, t.a, std::move(v)}, &t);
        return Status::OK();
      }
    }
    return Status::OK();
  }

  // The entity's datoms, every datom that refers to it, and its components, recursively.
  Status RetractEntity(Entid root) {
    std::vector<Entid> stack{root};
    while (!stack.empty()) {
      Entid e = stack.back();
      stack.pop_back();
      if (!entity_seen_.insert(e).second) continue;
      {
        MENTAT_ASSIGN_OR_RETURN(auto s, c_->Cached("SELECT a, v FROM datoms WHERE e = ?1"));
        s->BindInt(1, e);
        for (;;) {
          MENTAT_ASSIGN_OR_RETURN(bool row, s->Step());
          if (!row) break;
          Entid a = s->ColumnInt(0);
          DbVal v = schema::Column(*s, 1);
          const Attribute* attr = schema_.attribute(a);
          if (attr && attr->component && v.tag == DbVal::Tag::kInt) stack.push_back(v.i);
          NoteRetract(DatomKey{e, a, std::move(v)}, true);
        }
      }
      for (const auto& [a, attr] : schema_.attributes()) {
        if (attr.type != ValueType::kRef) continue;
        MENTAT_ASSIGN_OR_RETURN(
            auto s, c_->Cached("SELECT e FROM datoms WHERE a = ?1 AND v = ?2 AND ix IS NOT 0"));
        s->BindInt(1, a);
        s->BindInt(2, e);
        for (;;) {
          MENTAT_ASSIGN_OR_RETURN(bool row, s->Step());
          if (!row) break;
          NoteRetract(DatomKey{s->ColumnInt(0), a, DbVal::Int(e)}, true);
        }
      }
    }
    return Status::OK();
  }

  // PostgreSQL, where a statement is a round trip: the current datoms of the existing
  // entities the assertions name, read in one statement per thousand entities, so that
  // CurrentValues and Existing need none for them.
  Status PrefetchEntities() {
    std::vector<Entid> entities;
    std::unordered_set<Entid> seen;
    for (const AddEntry* entry : add_order_) {
      Entid e = entry->first.e;
      if (!res_.new_entities.count(e) && seen.insert(e).second) entities.push_back(e);
    }
    if (entities.size() < 8) return Status::OK();
    MENTAT_ASSIGN_OR_RETURN(
        auto s, c_->Cached("SELECT e, a, v, tx FROM datoms WHERE e IN (SELECT CAST(value AS "
                           "bigint) FROM jsonb_array_elements_text(CAST(CAST(?1 AS text) AS "
                           "jsonb)) AS x)"));
    constexpr size_t kChunk = 1000;
    for (size_t from = 0; from < entities.size(); from += kChunk) {
      std::string json = "[";
      const size_t to = std::min(entities.size(), from + kChunk);
      for (size_t i = from; i < to; ++i) {
        json += (i > from ? "," : "") + std::to_string(entities[i]);
        fetched_.insert(entities[i]);
      }
      s->Reset();
      s->BindText(1, json + "]");
      for (;;) {
        MENTAT_ASSIGN_OR_RETURN(bool row, s->Step());
        if (!row) break;
        current_[std::make_pair(s->ColumnInt(0), s->ColumnInt(1))].emplace_back(
            schema::Column(*s, 2), s->ColumnInt(3));
      }
    }
    return Status::OK();
  }

  Result<std::vector<std::pair<DbVal, Entid>>> CurrentValues(Entid e, Entid a) {
    if (fetched_.count(e)) {
      auto it = current_.find(std::make_pair(e, a));
      return it == current_.end() ? std::vector<std::pair<DbVal, Entid>>() : it->second;
    }
    MENTAT_ASSIGN_OR_RETURN(auto s, c_->Cached("SELECT v, tx FROM datoms WHERE e = ?1 AND a = ?2"));
    s->BindInt(1, e);
    s->BindInt(2, a);
    std::vector<std::pair<DbVal, Entid>> out;
    for (;;) {
      MENTAT_ASSIGN_OR_RETURN(bool row, s->Step());
      if (!row) break;
      out.emplace_back(schema::Column(*s, 0), s->ColumnInt(1));
    }
    return out;
  }

  Result<std::optional<Entid>> Existing(const DatomKey& k) {
    if (fetched_.count(k.e)) {
      auto it = current_.find(std::make_pair(k.e, k.a));
      if (it != current_.end())
        for (const auto& [v, tx] : it->second)
          if (v == k.v) return std::optional<Entid>(tx);
      return std::optional<Entid>();
    }
    MENTAT_ASSIGN_OR_RETURN(auto s,
                            c_->Cached("SELECT tx FROM datoms WHERE e = ?1 AND a = ?2 AND v = ?3"));
    s->BindInt(1, k.e);
    s->BindInt(2, k.a);
    schema::Bind(*s, 3, k.v);
    MENTAT_ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) return std::optional<Entid>();
    return std::optional<Entid>(s->ColumnInt(0));
  }

  void Retract(const DatomKey& key, Entid tx) {
    if (!retracted_.insert(key).second) return;
    out_.retracted.push_back(Change{key.e, key.a, key.v, tx});
  }

  storage::Connection* c_;
  const Schema& schema_;
  const Resolution& res_;
  // PrefetchEntities: the entities read, and their datoms by (e, a).
  std::unordered_set<Entid> fetched_;
  std::map<std::pair<Entid, Entid>, std::vector<std::pair<DbVal, Entid>>> current_;
  std::unordered_map<DatomKey, const Term*, DatomKeyHash> adds_;
  using AddEntry = std::pair<const DatomKey, const Term*>;
  std::vector<const AddEntry*> add_order_;
  // The first value of each cardinality-one (e, a) asserted, and every (e, a) given two.
  std::unordered_map<std::pair<Entid, Entid>, const AddEntry*, EaHash> one_first_;
  std::map<std::pair<Entid, Entid>, std::map<DbVal, const Term*>> one_conflicts_;
  std::unordered_set<DatomKey, DatomKeyHash> explicit_retracts_, retract_seen_, retracted_;
  std::vector<DatomKey> retract_order_;
  std::unordered_set<Entid> entity_seen_;
  Changes out_;
};

}  // namespace

Result<Changes> Apply(storage::Connection* c, const Schema& schema, const std::vector<Term>& terms,
                      const Resolution& res) {
  Applier a(c, schema, res);
  return a.Run(terms);
}

}  // namespace mentat::tx
