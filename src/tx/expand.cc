#include "tx/expand.h"

#include <string>

#include "schema/codec.h"
#include "schema/names.h"
#include "tx/functions.h"

namespace mentat::tx {

Status ErrorAt(Code code, edn::Pos pos, const std::string& msg) {
  if (!pos.known()) return Status(code, msg);
  return Status(code, std::to_string(pos.line) + ":" + std::to_string(pos.col) + ": " + msg);
}

Status ErrorAt(Code code, const edn::Value& at, const std::string& msg) {
  return ErrorAt(code, at.pos(), msg);
}

std::string Describe(const Term& t) {
  if (!t.form.is_nil()) return edn::Print(t.form);
  if (t.map_key)
    return edn::Print(edn::Value::Vector({edn::Value::Keyword("db/add"),
                                          t.map_id ? *t.map_id : edn::Value::Symbol("_"),
                                          *t.map_key, *t.map_value}));
  return "datom";
}

edn::Pos FormPos(const Term& t) { return t.map_key ? t.map_pos : t.form.pos(); }

namespace {

bool IsSym(const edn::Value& v, std::string_view s) { return v.is_symbol(s); }

class Expander {
 public:
  explicit Expander(const Schema& schema) : schema_(schema) {}

  Status ExpandTop(const edn::Value& data) {
    if (!data.is_vector() && !data.is_list())
      return ErrorAt(Code::kInvalidArgument, data,
                     "transaction data must be a vector of forms, got " +
                         std::string(edn::KindName(data.kind())));
    // Terms are large: room for about all of them up front, so the vector rarely moves them.
    size_t expected = 0;
    for (const auto& form : data.items()) {
      if (!form.is_map()) {
        ++expected;
        continue;
      }
      for (const auto& [k, v] : form.entries()) expected += v.is_seq() ? v.size() : 1;
    }
    terms_.reserve(expected);
    for (const auto& form : data.items()) {
      if (form.is_map()) {
        EntityPlace ignored;
        MENTAT_RETURN_IF_ERROR(ExpandMap(form, &ignored, false));
      } else if (form.is_vector() || form.is_list()) {
        MENTAT_RETURN_IF_ERROR(ExpandList(form));
      } else {
        return ErrorAt(
            Code::kInvalidArgument, form,
            "expected a list form [:db/add ...] or an entity map, got " + edn::Print(form));
      }
    }
    return Status::OK();
  }

  std::vector<Term> take() { return std::move(terms_); }

 private:
  // An attribute keyword (possibly reverse, :ns/_name) or attribute id.
  Result<const Attribute*> ParseAttr(const edn::Value& v, bool* reverse) {
    *reverse = false;
    if (v.is_int()) {
      const Attribute* attr = schema_.attribute(v.as_int());
      if (!attr) return ErrorAt(Code::kSchema, v, "unknown attribute " + edn::Print(v));
      return attr;
    }
    if (!v.is_keyword())
      return ErrorAt(Code::kInvalidArgument, v,
                     "expected an attribute keyword, got " + edn::Print(v));
    std::string ident;
    const Attribute* attr = schema::AttributeOrReverse(schema_, v, reverse, &ident);
    if (!attr) return ErrorAt(Code::kSchema, v, "unknown attribute :" + ident);
    if (*reverse && attr->type != ValueType::kRef)
      return ErrorAt(Code::kSchema, v,
                     "reverse attribute " + edn::Print(v) + " requires a ref attribute, :" + ident +
                         " is " + ValueTypeIdent(attr->type));
    return attr;
  }

  // The attribute of a lookup ref: its ident, or its entity id ([26 "x"], as Datomic).
  const Attribute* LookupAttr(const edn::Value& a) const {
    if (a.is_keyword()) return schema_.attribute(a.str());
    if (a.is_int()) return schema_.attribute(a.as_int());
    return nullptr;
  }

  // [:attr value] or [attr-id value] (an entity position), or (lookup-ref :attr value). A
  // value of a cardinality-many ref attribute (require_unique) that is a vector of two is
  // a lookup ref only when it names a unique attribute, by id only when the value has the
  // attribute's type and is not itself an entity id: [26 65537] stays two refs.
  bool IsLookupRefForm(const edn::Value& v, bool require_unique) const {
    if (v.is_vector() && v.size() == 2 && v.items()[0].is_keyword()) {
      if (!require_unique) return true;
      const Attribute* a = schema_.attribute(v.items()[0].str());
      return a && a->unique != Unique::kNone;
    }
    if (v.is_vector() && v.size() == 2 && v.items()[0].is_int()) {
      if (!require_unique) return true;  // an entity position: ParseLookup names the problem
      const Attribute* a = LookupAttr(v.items()[0]);
      return a && a->unique != Unique::kNone && a->type != ValueType::kRef &&
             a->type != ValueType::kLong && schema::Encode(v.items()[1], a->type).ok();
    }
    if (v.is_list() && v.size() == 3 && IsSym(v.items()[0], "lookup-ref")) return true;
    return false;
  }

  Result<EntityPlace> ParseLookup(const edn::Value& v) {
    const edn::Value& a = v.is_list() ? v.items()[1] : v.items()[0];
    const edn::Value& val = v.is_list() ? v.items()[2] : v.items()[1];
    if (!a.is_keyword() && !a.is_int())
      return ErrorAt(Code::kInvalidArgument, v,
                     "lookup ref attribute must be a keyword or an attribute id: " + edn::Print(v));
    const Attribute* attr = LookupAttr(a);
    if (!attr)
      return ErrorAt(Code::kSchema, a,
                     "unknown attribute " + schema::LookupRefAttributeText(a) + " in lookup ref " +
                         edn::Print(v));
    if (attr->unique == Unique::kNone)
      return ErrorAt(
          Code::kSchema, v,
          "lookup ref " + edn::Print(v) + " uses " + edn::Print(a) + ", which is not :db/unique");
    EntityPlace p;
    p.kind = EntityPlace::Kind::kLookup;
    p.lookup_a = attr->id;
    p.lookup_v = val;
    p.pos = v.pos();
    return p;
  }

  // An entity position: id, tempid, ident, lookup ref, or the current transaction.
  Result<EntityPlace> ParseEntity(const edn::Value& v) {
    EntityPlace p;
    p.pos = v.pos();
    if (v.is_int()) {
      if (v.as_int() < 0)
        return ErrorAt(Code::kInvalidArgument, v,
                       "entity id must not be negative: " + edn::Print(v));
      p.kind = EntityPlace::Kind::kId;
      p.id = v.as_int();
      return p;
    }
    if (v.is_string()) {
      if (v.str() == "datomic.tx") {
        p.kind = EntityPlace::Kind::kTx;
        p.name = v.str();  // reported in :tempids, as Datomic does
      } else {
        p.kind = EntityPlace::Kind::kTempid;
        p.name = v.str();
      }
      return p;
    }
    if (v.is_keyword()) {
      p.kind = EntityPlace::Kind::kIdent;
      p.name = v.str();
      return p;
    }
    if (v.is_list() && v.size() == 1 && IsSym(v.items()[0], "transaction-tx")) {
      p.kind = EntityPlace::Kind::kTx;
      return p;
    }
    if (IsLookupRefForm(v, false)) return ParseLookup(v);
    return ErrorAt(Code::kInvalidArgument, v,
                   "expected an entity id, tempid, ident or lookup ref, got " + edn::Print(v));
  }

  EntityPlace FreshTempid(edn::Pos pos) {
    EntityPlace p;
    p.kind = EntityPlace::Kind::kTempid;
    p.name = "\x01map-" + std::to_string(++internal_);
    p.internal = true;
    p.pos = pos;
    return p;
  }

  // The entity-map entry a term comes from (see Term::map_key).
  struct MapEntry {
    edn::Pos pos;
    const edn::Value* id;
    const edn::Value* key;
    const edn::Value* value;
    void Note(Term* t) const {
      t->map_pos = pos;
      t->map_id = id;
      t->map_key = key;
      t->map_value = value;
    }
  };

  // Appends the assertion of `value` for forward attribute `attr` on entity `e`.
  Status AddValue(const EntityPlace& e, const Attribute* attr, const edn::Value& value,
                  const MapEntry& source) {
    Term t;
    t.op = Term::Op::kAdd;
    t.e = e;
    t.a = attr->id;
    source.Note(&t);
    if (attr->type == ValueType::kRef) {
      t.v_is_ref = true;
      if (value.is_map()) {
        MENTAT_RETURN_IF_ERROR(ExpandMap(value, &t.v_ref, true, attr));
      } else {
        MENTAT_ASSIGN_OR_RETURN(t.v_ref, ParseEntity(value));
      }
    } else {
      t.v = value;
    }
    terms_.push_back(std::move(t));
    return Status::OK();
  }

  // Values of a map entry: a collection for cardinality-many, else the value itself.
  // A tuple attribute's value is itself a vector: of cardinality many, a collection of
  // vectors is its values, and one vector of scalars one value.
  std::vector<edn::Value> Values(const Attribute* attr, const edn::Value& v) const {
    if (attr->type == ValueType::kTuple && attr->many && v.is_seq()) {
      bool all_vectors = !v.items().empty();
      for (const edn::Value& x : v.items()) all_vectors = all_vectors && x.is_vector();
      if (!all_vectors && v.is_vector()) return {v};
      return v.items();
    }
    if (attr->many && v.is_seq() && !(attr->type == ValueType::kRef && IsLookupRefForm(v, true)))
      return v.items();
    return {v};
  }

  Status ExpandMap(const edn::Value& m, EntityPlace* out, bool nested,
                   const Attribute* via = nullptr) {
    if (++depth_ > 256) return ErrorAt(Code::kInvalidArgument, m, "entity maps nested too deeply");
    const edn::Value* id = m.get_keyword("db/id");
    EntityPlace e;
    if (id) {
      MENTAT_ASSIGN_OR_RETURN(e, ParseEntity(*id));
    } else {
      if (nested && !(via && via->component)) {
        // A nested map that is not a component must name an entity through a unique
        // identity attribute (it upserts), as Datomic requires.
        bool has_identity = false;
        for (const auto& [k, v] : m.entries()) {
          if (!k.is_keyword()) continue;
          const Attribute* a = schema_.attribute(k.str());
          if (a && a->unique == Unique::kIdentity) has_identity = true;
        }
        if (!has_identity)
          return ErrorAt(Code::kInvalidArgument, m,
                         "nested entity map under :" + via->ident +
                             " must be a component, have :db/id, or have a "
                             ":db.unique/identity attribute: " +
                             edn::Print(m));
      }
      e = FreshTempid(m.pos());
    }
    *out = e;
    bool any = false;
    for (const auto& [k, v] : m.entries()) {
      if (k.is_keyword("db/id")) continue;
      any = true;
      bool reverse = false;
      MENTAT_ASSIGN_OR_RETURN(const Attribute* attr, ParseAttr(k, &reverse));
      MapEntry source{m.pos(), id, &k, &v};
      if (!reverse) {
        for (const auto& one : Values(attr, v)) {
          if (attr->id == ids::kFn) {
            MENTAT_ASSIGN_OR_RETURN(edn::Value fn, FunctionSourceAt(one));
            MENTAT_RETURN_IF_ERROR(AddValue(e, attr, fn, source));
            continue;
          }
          MENTAT_RETURN_IF_ERROR(AddValue(e, attr, one, source));
        }
        continue;
      }
      // Reverse: each value names an entity that refers to this one.
      std::vector<edn::Value> sources =
          (v.is_seq() && !IsLookupRefForm(v, true)) ? v.items() : std::vector<edn::Value>{v};
      for (const auto& src : sources) {
        Term t;
        t.op = Term::Op::kAdd;
        t.a = attr->id;
        source.Note(&t);
        if (src.is_map()) {
          MENTAT_RETURN_IF_ERROR(ExpandMap(src, &t.e, true, attr));
        } else {
          MENTAT_ASSIGN_OR_RETURN(t.e, ParseEntity(src));
        }
        t.v_is_ref = true;
        t.v_ref = e;
        terms_.push_back(std::move(t));
      }
    }
    if (!any && nested)
      return ErrorAt(Code::kInvalidArgument, m, "nested entity map has no attributes");
    --depth_;
    return Status::OK();
  }

  Status ExpandList(const edn::Value& form) {
    const auto& it = form.items();
    if (it.empty() || !it[0].is_keyword())
      return ErrorAt(Code::kInvalidArgument, form,
                     "expected an operation keyword such as :db/add, got " + edn::Print(form));
    std::string op = it[0].str();
    auto arity = [&](size_t n) -> Status {
      if (it.size() != n)
        return ErrorAt(
            Code::kInvalidArgument, form,
            ":" + op + " takes " + std::to_string(n - 1) + " arguments: " + edn::Print(form));
      return Status::OK();
    };
    Term t;
    t.form = form;
    if (op == "db/retractEntity" || op == "db.fn/retractEntity") {
      MENTAT_RETURN_IF_ERROR(arity(2));
      t.op = Term::Op::kRetractEntity;
      MENTAT_ASSIGN_OR_RETURN(t.e, ParseEntity(it[1]));
      terms_.push_back(std::move(t));
      return Status::OK();
    }
    bool cas = op == "db/cas" || op == "db.fn/cas";
    if (op == "db/add") {
      MENTAT_RETURN_IF_ERROR(arity(4));
      t.op = Term::Op::kAdd;
    } else if (op == "db/retract") {
      if (it.size() == 3) {
        t.op = Term::Op::kRetractAttr;
      } else {
        MENTAT_RETURN_IF_ERROR(arity(4));
        t.op = Term::Op::kRetract;
      }
    } else if (cas) {
      MENTAT_RETURN_IF_ERROR(arity(5));
      t.op = Term::Op::kCas;
      t.old = std::make_unique<CasOld>();
    } else {
      return ErrorAt(Code::kInvalidArgument, it[0],
                     "unknown operation :" + op +
                         " (expected :db/add, :db/retract, :db/retractEntity or :db/cas)");
    }
    bool reverse = false;
    MENTAT_ASSIGN_OR_RETURN(const Attribute* attr, ParseAttr(it[2], &reverse));
    t.a = attr->id;
    if (t.op == Term::Op::kRetractAttr) {
      if (reverse)
        return ErrorAt(Code::kInvalidArgument, it[2],
                       "a reverse attribute needs a value: " + edn::Print(form));
      MENTAT_ASSIGN_OR_RETURN(t.e, ParseEntity(it[1]));
      terms_.push_back(std::move(t));
      return Status::OK();
    }
    const edn::Value& value = cas ? it[4] : it[3];
    if (reverse) {
      if (cas) return ErrorAt(Code::kInvalidArgument, it[2], ":db/cas takes a forward attribute");
      // [:db/add e :ns/_attr v] means [:db/add v :ns/attr e].
      MENTAT_ASSIGN_OR_RETURN(t.e, ParseEntity(value));
      t.v_is_ref = true;
      MENTAT_ASSIGN_OR_RETURN(t.v_ref, ParseEntity(it[1]));
      terms_.push_back(std::move(t));
      return Status::OK();
    }
    MENTAT_ASSIGN_OR_RETURN(t.e, ParseEntity(it[1]));
    if (attr->type == ValueType::kRef) {
      t.v_is_ref = true;
      MENTAT_ASSIGN_OR_RETURN(t.v_ref, ParseEntity(value));
      if (cas && !it[3].is_nil()) {
        t.old_is_ref = true;
        MENTAT_ASSIGN_OR_RETURN(t.old->ref, ParseEntity(it[3]));
      }
    } else if (attr->id == ids::kFn) {
      MENTAT_ASSIGN_OR_RETURN(t.v, FunctionSourceAt(value));
      if (cas) {
        MENTAT_ASSIGN_OR_RETURN(t.old->v, FunctionSourceAt(it[3]));
      }
    } else {
      t.v = value;
      if (cas) t.old->v = it[3];
    }
    terms_.push_back(std::move(t));
    return Status::OK();
  }

  // A :db/fn value: Datomic's function map becomes its script source (tx/functions.h).
  static Result<edn::Value> FunctionSourceAt(const edn::Value& v) {
    Result<edn::Value> fn = FunctionSource(v);
    if (!fn.ok()) return ErrorAt(fn.status().code(), v, fn.status().message());
    if (fn->is_string()) {
      // Read now, so that a function that cannot even be read is never stored.
      edn::ReadOptions script;
      script.allow_quote = true;
      script.script_syntax = true;
      Result<edn::Vec> forms = edn::ReadAll(fn->str(), script);
      if (!forms.ok())
        return ErrorAt(Code::kSchema, v,
                       ":db/fn source does not read: " + forms.status().message());
      if (forms->empty()) return ErrorAt(Code::kSchema, v, ":db/fn source is empty");
    }
    return fn;
  }

  const Schema& schema_;
  std::vector<Term> terms_;
  int internal_ = 0;
  int depth_ = 0;
};

}  // namespace

Result<std::vector<Term>> Expand(const Schema& schema, const edn::Value& data) {
  Expander x(schema);
  MENTAT_RETURN_IF_ERROR(x.ExpandTop(data));
  return x.take();
}

}  // namespace mentat::tx
