#include "tx/resolve.h"

#include <map>

#include "schema/bootstrap.h"
#include "schema/tuple.h"
#include "tx/expand.h"

namespace mentat::tx {

using schema::DbVal;

Result<Partitions> Partitions::Read(storage::Connection* c) {
  MENTAT_ASSIGN_OR_RETURN(auto s, c->Cached("SELECT part, start, \"end\", next FROM parts "
                                            "UNION ALL SELECT -1, value, 0, 0 FROM meta "
                                            "WHERE key = 'last_tx_instant'"));
  Partitions p;
  int seen = 0;
  for (;;) {
    MENTAT_ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) break;
    Part part{s->ColumnInt(1), s->ColumnInt(2), s->ColumnInt(3)};
    switch (s->ColumnInt(0)) {
      case -1:
        p.last_instant = s->ColumnInt(1);
        break;
      case ids::kPartDb:
        p.db = part;
        ++seen;
        break;
      case ids::kPartUser:
        p.user = part;
        ++seen;
        break;
      case ids::kPartTx:
        p.tx = part;
        ++seen;
        break;
      default:
        break;
    }
  }
  if (seen != 3) return Status::Corrupt("the parts table is missing a partition");
  return p;
}

Status Partitions::Write(storage::Connection* c) const {
  // The three in one statement (on PostgreSQL, one round trip instead of three).
  MENTAT_ASSIGN_OR_RETURN(
      auto s, c->Cached("UPDATE parts SET next = CASE part WHEN ?1 THEN CAST(?2 AS bigint) "
                        "WHEN ?3 THEN CAST(?4 AS bigint) ELSE CAST(?6 AS bigint) END "
                        "WHERE part IN (?1, ?3, ?5)"));
  int i = 0;
  for (auto [id, part] : {std::pair{ids::kPartDb, &db}, std::pair{ids::kPartUser, &user},
                          std::pair{ids::kPartTx, &tx}}) {
    s->BindInt(++i, id);
    s->BindInt(++i, part->next);
  }
  return s->RunLater();
}

bool Partitions::Allocated(Entid id) const {
  if (id >= ids::kSystemStart && id < ids::kUserStart) return schema::IsSystemEntity(id);
  for (const Part* p : {&db, &user, &tx}) {
    if (id >= p->start && id < p->end) return id < p->next;
  }
  return false;
}

Result<std::optional<Entid>> LookupUnique(storage::Connection* c, Entid a, const DbVal& v,
                                          const UniqueHolders* known) {
  if (known) {
    auto it = known->find(std::make_pair(a, v));
    if (it != known->end())
      return it->second < 0 ? std::optional<Entid>() : std::optional<Entid>(it->second);
  }
  MENTAT_ASSIGN_OR_RETURN(
      auto s, c->Cached("SELECT e FROM datoms WHERE a = ?1 AND v = ?2 AND ix IS NOT 0 UNION ALL "
                        "SELECT e FROM datoms WHERE a = ?1 AND v = ?2 AND ix IS NOT 1 "
                        "LIMIT 1"));
  s->BindInt(1, a);
  schema::Bind(*s, 2, v);
  MENTAT_ASSIGN_OR_RETURN(bool row, s->Step());
  if (!row) return std::optional<Entid>();
  return std::optional<Entid>(s->ColumnInt(0));
}

Status PrefetchUnique(storage::Connection* c, Entid a, const std::vector<DbVal>& values,
                      UniqueHolders* out) {
  constexpr size_t kChunk = 1000;
  // Both attribute indexes, as LookupUnique reads them.
  MENTAT_ASSIGN_OR_RETURN(
      auto s, c->Cached("SELECT v, e FROM datoms WHERE a = ?1 AND ix IS NOT 0 AND v IN (SELECT "
                        "value FROM jsonb_array_elements(CAST(CAST(?2 AS text) AS jsonb)) AS x) "
                        "UNION ALL SELECT v, e FROM datoms WHERE a = ?1 AND ix IS NOT 1 AND v "
                        "IN (SELECT value FROM jsonb_array_elements(CAST(CAST(?2 AS text) AS "
                        "jsonb)) AS y)"));
  for (size_t from = 0; from < values.size(); from += kChunk) {
    std::string json = "[";
    const size_t to = std::min(values.size(), from + kChunk);
    for (size_t i = from; i < to; ++i) {
      json += (i > from ? "," : "") + schema::JsonOf(values[i]);
      out->emplace(std::make_pair(a, values[i]), -1);
    }
    s->Reset();
    s->BindInt(1, a);
    s->BindText(2, json + "]");
    for (;;) {
      MENTAT_ASSIGN_OR_RETURN(bool row, s->Step());
      if (!row) break;
      (*out)[std::make_pair(a, schema::Column(*s, 0))] = s->ColumnInt(1);
    }
  }
  return Status::OK();
}

Result<DbVal> EncodeFor(const Attribute& attr, const edn::Value& v, const Term& t) {
  auto r = schema::EncodeForAttribute(v, attr);
  if (r.ok()) return r;
  // kSchema: a value of another type; kInvalidArgument: a value of the type that cannot be
  // stored (NaN, a string that is not UTF-8).
  bool mismatch = r.status().code() == Code::kSchema;
  return ErrorAt(r.status().code(), v.pos().known() ? v.pos() : FormPos(t),
                 (mismatch ? "value type mismatch for :" : "invalid value for :") + attr.ident +
                     ": " + r.status().message() + " in " + Describe(t));
}

namespace {

using KeyHash = UniqueKeyHash;

class Resolver {
 public:
  Resolver(storage::Connection* c, const Schema& schema, Partitions* parts, Resolution* out)
      : c_(c), schema_(schema), parts_(parts), out_(out) {}

  Status Run(std::vector<Term>* terms) {
    // Idents, lookup refs and explicit ids first.
    for (auto& t : *terms) {
      MENTAT_RETURN_IF_ERROR(Fixed(&t.e));
      if (t.v_is_ref) MENTAT_RETURN_IF_ERROR(Fixed(&t.v_ref));
      if (t.old_is_ref) MENTAT_RETURN_IF_ERROR(Fixed(&t.old->ref));
    }
    for (auto& t : *terms) MENTAT_RETURN_IF_ERROR(TupleRefs(&t, false));
    if (c_->is_pg()) MENTAT_RETURN_IF_ERROR(Prefetch(*terms));
    MENTAT_RETURN_IF_ERROR(Upsert(*terms));
    MENTAT_RETURN_IF_ERROR(Allocate(*terms));
    for (auto& t : *terms) {
      Final(&t.e);
      if (t.v_is_ref) Final(&t.v_ref);
      if (t.old_is_ref) Final(&t.old->ref);
    }
    if (!pending_tuples_.empty())
      for (auto& t : *terms) MENTAT_RETURN_IF_ERROR(TupleRefs(&t, true));
    return Status::OK();
  }

 private:
  // Resolves the places that do not depend on tempids.
  Status Fixed(EntityPlace* p) {
    switch (p->kind) {
      case EntityPlace::Kind::kId:
        // Datomic refuses an id nobody allocated (:db.error/not-an-entity): accepting one
        // would have to move the partition's mark past it, and a single large number would
        // fill the partition for good.
        if (!parts_->Allocated(p->id))
          return ErrorAt(Code::kNotFound, p->pos,
                         "entity " + std::to_string(p->id) +
                             " does not exist: an entity id must name an existing entity "
                             "(to create one, use a tempid such as \"new\")");
        return Status::OK();
      case EntityPlace::Kind::kTx:
        p->id = out_->tx_id;
        if (!p->name.empty()) out_->tempids[p->name] = out_->tx_id;  // "datomic.tx"
        return Status::OK();
      case EntityPlace::Kind::kIdent: {
        auto e = schema_.entid(p->name);
        if (!e) return ErrorAt(Code::kNotFound, p->pos, "unknown ident :" + p->name);
        p->id = *e;
        return Status::OK();
      }
      case EntityPlace::Kind::kLookup: {
        const Attribute* attr = schema_.attribute(p->lookup_a);
        DbVal v;
        if (attr->type == ValueType::kRef) {
          EntityPlace inner;
          if (p->lookup_v.is_keyword()) {
            auto e = schema_.entid(p->lookup_v.str());
            if (!e)
              return ErrorAt(Code::kNotFound, p->lookup_v,
                             "unknown ident " + edn::Print(p->lookup_v));
            v = DbVal::Int(*e);
          } else if (p->lookup_v.is_int()) {
            v = DbVal::Int(p->lookup_v.as_int());
          } else {
            return ErrorAt(Code::kInvalidArgument, p->pos,
                           "lookup ref on ref attribute :" + attr->ident +
                               " needs an entity id or ident value");
          }
        } else {
          auto enc = schema::EncodeForAttribute(p->lookup_v, *attr, &schema_);
          if (!enc.ok())
            return ErrorAt(Code::kSchema, p->pos,
                           "lookup ref [:" + attr->ident + " " + edn::Print(p->lookup_v) +
                               "]: " + enc.status().message());
          v = std::move(*enc);
        }
        auto key = std::make_pair(p->lookup_a, v);
        auto it = out_->unique_holders.find(key);
        if (it == out_->unique_holders.end()) {
          MENTAT_ASSIGN_OR_RETURN(auto e, LookupUnique(c_, p->lookup_a, v));
          it = out_->unique_holders.emplace(key, e ? *e : -1).first;
        }
        if (it->second < 0)
          return ErrorAt(Code::kNotFound, p->pos,
                         "lookup ref [:" + attr->ident + " " + edn::Print(p->lookup_v) +
                             "] does not resolve to an entity");
        p->id = it->second;
        return Status::OK();
      }
      case EntityPlace::Kind::kTempid:
        return Status::OK();
    }
    return Status::OK();
  }

  // The ref elements of a tuple value (a :db.type/ref position of :db/tupleType or
  // :db/tupleTypes, or a ref attribute of :db/tupleAttrs) given as an ident, a lookup ref
  // or an entity id become the entity's id, checked as a ref attribute's value is; a
  // tempid becomes its id once tempids are allocated (`allocated`), and must name an
  // entity of the transaction.
  Status TupleRefs(Term* t, bool allocated) {
    if (t->v_is_ref || t->op == Term::Op::kRetractAttr || t->op == Term::Op::kRetractEntity)
      return Status::OK();
    const Attribute* attr = schema_.attribute(t->a);
    if (!attr || attr->type != ValueType::kTuple) return Status::OK();
    MENTAT_RETURN_IF_ERROR(TupleValueRefs(*attr, &t->v, *t, allocated));
    if (t->op == Term::Op::kCas)
      MENTAT_RETURN_IF_ERROR(TupleValueRefs(*attr, &t->old->v, *t, allocated));
    return Status::OK();
  }

  Status TupleValueRefs(const Attribute& attr, edn::Value* v, const Term& t, bool allocated) {
    if (!v->is_vector()) return Status::OK();
    const edn::Vec& items = v->items();
    std::optional<edn::Vec> out;
    for (size_t i = 0; i < items.size(); ++i) {
      const edn::Value& x = items[i];
      if (!schema::IsRefElement(schema_, attr, i) || x.is_nil()) continue;
      EntityPlace p;
      p.pos = x.pos().known() ? x.pos() : FormPos(t);
      if (x.is_int()) {
        p.kind = EntityPlace::Kind::kId;
        p.id = x.as_int();
      } else if (x.is_keyword()) {
        p.kind = EntityPlace::Kind::kIdent;
        p.name = x.str();
      } else if (x.is_string()) {
        if (!allocated) {
          pending_tuples_.insert(&t);
          continue;
        }
        auto it = out_->tempids.find(Find(x.str()));
        if (it == out_->tempids.end())
          return ErrorAt(Code::kInvalidArgument, p.pos,
                         ":db.error/tempid-not-an-entity: tempid \"" + x.str() +
                             "\" in a tuple of :" + attr.ident +
                             " names no entity of the transaction, in " + Describe(t));
        p.id = it->second;
      } else if (x.is_vector() && x.size() == 2 && x.items()[0].is_keyword()) {
        const Attribute* la = schema_.attribute(x.items()[0].str());
        if (!la || la->unique == Unique::kNone)
          return ErrorAt(Code::kSchema, p.pos,
                         "lookup ref " + edn::Print(x) + " in a tuple of :" + attr.ident +
                             " needs a unique attribute");
        p.kind = EntityPlace::Kind::kLookup;
        p.lookup_a = la->id;
        p.lookup_v = x.items()[1];
      } else {
        continue;  // the value check names what is wrong
      }
      if (!x.is_string()) MENTAT_RETURN_IF_ERROR(Fixed(&p));
      if (!out) out.emplace(items);
      (*out)[i] = edn::Value::Int(p.id);
    }
    if (out) {
      edn::Pos pos = v->pos();
      *v = edn::Value::Vector(std::move(*out));
      v->set_pos(pos);
    }
    if (allocated) pending_tuples_.erase(&t);
    return Status::OK();
  }

  // The encoded value of a term if it is known before allocation.
  Result<std::optional<DbVal>> KnownValue(const Term& t, const Attribute& attr) {
    if (pending_tuples_.count(&t)) return std::optional<DbVal>();
    if (!t.v_is_ref) {
      MENTAT_ASSIGN_OR_RETURN(DbVal v, EncodeFor(attr, t.v, t));
      return std::optional<DbVal>(std::move(v));
    }
    if (t.v_ref.kind != EntityPlace::Kind::kTempid)
      return std::optional<DbVal>(DbVal::Int(t.v_ref.id));
    auto it = out_->tempids.find(Find(t.v_ref.name));
    if (it != out_->tempids.end()) return std::optional<DbVal>(DbVal::Int(it->second));
    return std::optional<DbVal>();
  }

  // The holders of the unique plain values the terms assert, looked up in one batch per
  // attribute (Holder and the apply pass then find them in out_->unique_holders).
  Status Prefetch(const std::vector<Term>& terms) {
    std::map<Entid, std::vector<DbVal>> by_attr;
    size_t n = 0;
    for (const auto& t : terms) {
      if (t.op != Term::Op::kAdd || t.v_is_ref || pending_tuples_.count(&t)) continue;
      const Attribute* attr = schema_.attribute(t.a);
      if (!attr || attr->unique == Unique::kNone) continue;
      auto v = EncodeFor(*attr, t.v, t);
      if (!v.ok()) continue;  // the term's own error comes later, where it always does
      by_attr[t.a].push_back(std::move(*v));
      ++n;
    }
    if (n < 8) return Status::OK();
    for (const auto& [a, values] : by_attr)
      MENTAT_RETURN_IF_ERROR(PrefetchUnique(c_, a, values, &out_->unique_holders));
    return Status::OK();
  }

  // Upserts and unification, iterated to a fixpoint. A tempid asserting an identity value
  // that an entity holds resolves to it; tempids asserting the same identity value are
  // one entity, also when the value is itself a tempid (two [:p/owner "x"] assertions
  // unify once "x" is known to be one entity, and resolving "x" may resolve them). Each
  // round only merges classes or binds a class to an id, so it ends.
  Status Upsert(const std::vector<Term>& terms) {
    bool changed = true;
    while (changed) {
      changed = false;
      std::unordered_map<std::pair<Entid, DbVal>, std::string, KeyHash> by_value;
      std::map<std::pair<Entid, std::string>, std::string> by_tempid;
      for (const auto& t : terms) {
        if (t.op != Term::Op::kAdd || t.e.kind != EntityPlace::Kind::kTempid) continue;
        const Attribute* attr = schema_.attribute(t.a);
        if (attr->unique != Unique::kIdentity) continue;
        std::optional<DbVal> v;
        std::string value_class;
        if (t.v_is_ref && t.v_ref.kind == EntityPlace::Kind::kTempid) {
          value_class = Find(t.v_ref.name);
          auto id = out_->tempids.find(value_class);
          if (id != out_->tempids.end()) v = DbVal::Int(id->second);
        } else {
          MENTAT_ASSIGN_OR_RETURN(v, KnownValue(t, *attr));
        }
        std::string other;
        if (v) {
          MENTAT_ASSIGN_OR_RETURN(auto holder, Holder(t.a, *v));
          if (holder) MENTAT_RETURN_IF_ERROR(Bind(t, *attr, *holder, &changed));
          auto [it, fresh] = by_value.emplace(std::make_pair(t.a, *v), t.e.name);
          if (!fresh) other = it->second;
        } else {
          auto [it, fresh] = by_tempid.emplace(std::make_pair(t.a, value_class), t.e.name);
          if (!fresh) other = it->second;
        }
        if (!other.empty()) MENTAT_RETURN_IF_ERROR(Union(t, *attr, other, &changed));
      }
    }
    return Status::OK();
  }

  // The class of t's tempid resolves to `id`.
  Status Bind(const Term& t, const Attribute& attr, Entid id, bool* changed) {
    std::string root = Find(t.e.name);
    auto it = out_->tempids.find(root);
    if (it == out_->tempids.end()) {
      out_->tempids[root] = id;
      *changed = true;
      return Status::OK();
    }
    if (it->second == id) return Status::OK();
    return ErrorAt(Code::kConflict, FormPos(t),
                   "conflicting upsert: tempid " + TempidName(t.e) + " resolves to both " +
                       std::to_string(it->second) + " and " + std::to_string(id) +
                       " (through :" + attr.ident + ") in " + Describe(t));
  }

  // t's tempid and `other` are one entity: their classes merge, keeping an id one has.
  Status Union(const Term& t, const Attribute& attr, const std::string& other, bool* changed) {
    std::string a = Find(other), b = Find(t.e.name);
    if (a == b) return Status::OK();
    auto ia = out_->tempids.find(a), ib = out_->tempids.find(b);
    bool has_a = ia != out_->tempids.end(), has_b = ib != out_->tempids.end();
    if (has_a && has_b && ia->second != ib->second)
      return ErrorAt(Code::kConflict, FormPos(t),
                     "conflicting upsert: tempid " + TempidName(t.e) + " resolves to both " +
                         std::to_string(ib->second) + " and " + std::to_string(ia->second) +
                         " (through :" + attr.ident + ") in " + Describe(t));
    if (has_b && !has_a) std::swap(a, b);
    parent_[b] = a;
    *changed = true;
    return Status::OK();
  }

  Result<std::optional<Entid>> Holder(Entid a, const DbVal& v) {
    auto key = std::make_pair(a, v);
    auto it = out_->unique_holders.find(key);
    if (it == out_->unique_holders.end()) {
      MENTAT_ASSIGN_OR_RETURN(auto e, LookupUnique(c_, a, v));
      it = out_->unique_holders.emplace(key, e ? *e : -1).first;
    }
    if (it->second < 0) return std::optional<Entid>();
    return std::optional<Entid>(it->second);
  }

  static std::string TempidName(const EntityPlace& p) {
    return p.internal ? std::string("(entity map)") : "\"" + p.name + "\"";
  }

  std::string Find(const std::string& n) {
    auto it = parent_.find(n);
    if (it == parent_.end() || it->second == n) return n;
    std::string root = Find(it->second);
    parent_[n] = root;
    return root;
  }

  Status Allocate(const std::vector<Term>& terms) {
    // Tempids unified by Upsert share the id of their class (allocated here for a class
    // that resolved to no existing entity).
    std::vector<std::string> order;
    std::unordered_set<std::string> seen, in_db_part;
    auto note = [&](const EntityPlace& p) {
      if (p.kind == EntityPlace::Kind::kTempid && !out_->tempids.count(p.name) &&
          seen.insert(p.name).second)
        order.push_back(p.name);
    };
    for (const auto& t : terms) {
      note(t.e);
      if (t.v_is_ref) note(t.v_ref);
      if (t.old_is_ref) note(t.old->ref);
    }
    for (const auto& t : terms)
      if (t.op == Term::Op::kAdd && t.e.kind == EntityPlace::Kind::kTempid && t.a == ids::kIdent)
        in_db_part.insert(t.e.name);
    // A new entity needs a datom of its own: a tempid that no assertion has as its entity
    // (one used only as a value, or only retracted) names nothing (Datomic:
    // :db.error/tempid-not-an-entity), also through the tempids it unifies with.
    std::unordered_set<std::string> asserted;
    for (const auto& t : terms)
      if (t.op == Term::Op::kAdd && t.e.kind == EntityPlace::Kind::kTempid)
        asserted.insert(Find(t.e.name));
    for (const auto& name : order) {
      if (asserted.count(Find(name))) continue;
      for (const auto& t : terms)
        if (t.op == Term::Op::kCas && t.e.kind == EntityPlace::Kind::kTempid && t.e.name == name)
          return Status::InvalidArgument(
              ":db.error/tempid-not-an-entity: :db/cas compares an existing entity's value, but "
              "tempid \"" +
              name +
              "\" names no entity (no assertion of the transaction has it "
              "as its entity), in " +
              Describe(t));
      for (const auto& t : terms)
        if (t.e.kind == EntityPlace::Kind::kTempid && t.e.name == name)
          return Status::InvalidArgument(
              ":db.error/tempid-not-an-entity: tempid \"" + name +
              "\" is retracted but never asserted, so it names no entity, in " + Describe(t));
      for (const auto& t : terms)
        if ((t.v_is_ref && t.v_ref.kind == EntityPlace::Kind::kTempid && t.v_ref.name == name) ||
            (t.old_is_ref && t.old->ref.kind == EntityPlace::Kind::kTempid &&
             t.old->ref.name == name))
          return Status::InvalidArgument(
              ":db.error/tempid-not-an-entity: tempid \"" + name +
              "\" is used only as a value; a new entity needs a datom of its own, in " +
              Describe(t));
    }
    for (const auto& name : order) {
      std::string root = Find(name);
      auto it = out_->tempids.find(root);
      Entid id;
      if (it != out_->tempids.end()) {
        id = it->second;
      } else {
        bool db = in_db_part.count(root) > 0;
        for (const auto& [n, p] : parent_)
          if (Find(n) == root && in_db_part.count(n)) db = true;
        Partitions::Part& part = db ? parts_->db : parts_->user;
        if (part.next >= part.end)
          return Status::Conflict(std::string("partition ") +
                                  (db ? ":db.part/db" : ":db.part/user") + " is full");
        id = part.next++;
        out_->tempids[root] = id;
        out_->new_entities.insert(id);
      }
      out_->tempids[name] = id;
    }
    return Status::OK();
  }

  void Final(EntityPlace* p) {
    if (p->kind == EntityPlace::Kind::kTempid) p->id = out_->tempids.at(p->name);
  }

  storage::Connection* c_;
  const Schema& schema_;
  Partitions* parts_;
  Resolution* out_;
  std::unordered_map<std::string, std::string> parent_;
  std::unordered_set<const Term*> pending_tuples_;  // tuples with tempids to resolve
};

}  // namespace

Status Resolve(storage::Connection* c, const Schema& schema, std::vector<Term>* terms,
               Partitions* parts, Resolution* out) {
  Resolver r(c, schema, parts, out);
  return r.Run(terms);
}

}  // namespace mentat::tx
