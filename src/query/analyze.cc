// Pass 2 (core): conjunctions, patterns, bindings, constants and views.
#include "query/analyze.h"

#include <algorithm>
#include <functional>

#include "schema/names.h"
#include "schema/tuple.h"
#include "storage/format.h"

namespace mentat::query {

namespace {

bool Compatible(VT a, VT b) {
  if (a == b || !IsStatic(a) || !IsStatic(b)) return true;
  auto num = [](VT t) {
    return t == VT::kRef || t == VT::kLong || t == VT::kDouble || t == VT::kFloat;
  };
  auto dec = [](VT t) { return t == VT::kBigInt || t == VT::kBigDec; };
  return (num(a) && num(b)) || (dec(a) && dec(b));
}

}  // namespace

const char* VTName(VT t) {
  switch (t) {
    case VT::kRef:
      return "ref";
    case VT::kKeyword:
      return "keyword";
    case VT::kLong:
      return "long";
    case VT::kDouble:
      return "double";
    case VT::kString:
      return "string";
    case VT::kBoolean:
      return "boolean";
    case VT::kInstant:
      return "instant";
    case VT::kUuid:
      return "uuid";
    case VT::kBytes:
      return "bytes";
    case VT::kBigInt:
      return "bigint";
    case VT::kBigDec:
      return "bigdec";
    case VT::kFloat:
      return "float";
    case VT::kUri:
      return "uri";
    case VT::kSymbol:
      return "symbol";
    case VT::kTupleValue:
      return "tuple";
    case VT::kDynamic:
      return "value";
    case VT::kNumeric:
      return "number";
    case VT::kAny:
      return "value";
    case VT::kTuple:
      return "tuple";
  }
  return "value";
}

std::optional<VT> NaturalType(const edn::Value& v) {
  switch (v.kind()) {
    case edn::Kind::kInt:
      return VT::kLong;
    case edn::Kind::kFloat:
      return VT::kDouble;
    case edn::Kind::kString:
      return VT::kString;
    case edn::Kind::kKeyword:
      return VT::kKeyword;
    case edn::Kind::kBool:
      return VT::kBoolean;
    case edn::Kind::kInst:
      return VT::kInstant;
    case edn::Kind::kUuid:
      return VT::kUuid;
    case edn::Kind::kBytes:
      return VT::kBytes;
    case edn::Kind::kBigInt:
      return VT::kBigInt;
    case edn::Kind::kBigDec:
      return VT::kBigDec;
    case edn::Kind::kUri:
      return VT::kUri;
    case edn::Kind::kSymbol:
      return VT::kSymbol;
    case edn::Kind::kVector:
      if (v.size() == 2 && v.items()[0].is_keyword()) return VT::kRef;  // a lookup ref
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

Result<Expr> StoredTupleSql(const VarBind& parts, const edn::Value& form, const std::string& what) {
  std::vector<Expr> built;  // (kind, value) pairs
  for (size_t i = 0; i < parts.parts.size(); ++i) {
    const VarBind& p = parts.parts[i];
    VT pt = p.type;
    if (!IsStatic(pt) && p.constant)
      if (auto nt = NaturalType(*p.constant)) pt = *nt;
    if (p.sql == "NULL") {
      built.insert(built.end(), {"0", "NULL"});
      continue;
    }
    if (!IsStatic(pt) || pt == VT::kTupleValue)
      return ClauseError(Code::kInvalidArgument, form,
                         what + " meets a stored tuple, but its part " + std::to_string(i) +
                             " has no known type (" + VTName(p.type) + ")");
    built.insert(built.end(), {std::to_string(static_cast<int>(pt)), p.sql});
  }
  return Expr::Call(Fn::kTuple, std::move(built));
}

Expr Col(int item, const std::string& col) { return Expr::Column(item, col); }
namespace {

// The column name of an expression that is exactly one column, else "".
std::string TokenColumn(const Expr& x) {
  const Expr::Part* c = x.AsColumn();
  return c ? c->text : "";
}

bool HasAffinity(const std::string& col) {
  return col == "e" || col == "a" || col == "tx" || col == "rtx" || col == "id" || col == "rowid" ||
         col == "text";
}

}  // namespace

Expr EqCond(const Dialect& d, const Expr& a, const Expr& b, VT ta, VT tb) {
  std::string ca = TokenColumn(a), cb = TokenColumn(b);
  auto integers = [](VT t) { return t == VT::kRef || t == VT::kLong || t == VT::kInstant; };
  if (ca == "v" && HasAffinity(cb))
    return integers(ta) && cb != "text" ? d.EqIntegerValue(a, b) : d.EqValue(a, b);
  if (cb == "v" && HasAffinity(ca))
    return integers(tb) && ca != "text" ? d.EqIntegerValue(b, a) : d.EqValue(b, a);
  return Expr::Call(Fn::kEq, {a, b});
}

Expr ExistsOf(int block) { return Expr::Exists(block); }
Expr GeneratorOf(int block) { return Expr::Generator(block); }
std::string IntLit(int64_t i) {
  if (i == INT64_MIN) return "(-9223372036854775807 - 1)";
  return std::to_string(i);
}

void Unit::MarkUsed(const std::string& sql) {
  used.assign(params.size(), false);
  for (size_t i = 0; i < sql.size(); ++i) {
    if (sql[i] != '?') continue;
    size_t n = 0, j = i + 1;
    while (j < sql.size() && sql[j] >= '0' && sql[j] <= '9') n = n * 10 + (sql[j++] - '0');
    if (n >= 1 && n <= used.size()) used[n - 1] = true;
  }
}

int Unit::AddParam(Param p) {
  // Share identical constant parameters.
  if (p.kind == Param::Kind::kValue) {
    for (size_t i = 0; i < params.size(); ++i)
      if (params[i].kind == Param::Kind::kValue && params[i].value == p.value)
        return static_cast<int>(i) + 1;
  }
  if (p.kind == Param::Kind::kViewTx) {
    for (size_t i = 0; i < params.size(); ++i)
      if (params[i].kind == Param::Kind::kViewTx && params[i].source == p.source &&
          params[i].since == p.since)
        return static_cast<int>(i) + 1;
  }
  params.push_back(std::move(p));
  return static_cast<int>(params.size());
}

int Analyzer::NewItem(Item::Kind kind, const edn::Value& form, Scope* s) {
  Item item;
  item.id = static_cast<int>(unit_->items.size());
  item.kind = kind;
  item.form = form;
  unit_->items.push_back(std::move(item));
  unit_->blocks[s->block].items.push_back(unit_->items.back().id);
  return unit_->items.back().id;
}

int Analyzer::NewBlock(bool correlated) {
  Block b;
  b.correlated = correlated;
  unit_->blocks.push_back(std::move(b));
  return static_cast<int>(unit_->blocks.size()) - 1;
}

Result<ViewShape> Analyzer::SourceShape(const std::string& src, const edn::Value& form) const {
  auto it = env_->sources.find(src);
  if (it == env_->sources.end())
    return ClauseError(Code::kInvalidArgument, form,
                       "unknown source " + src + " (declare it in :in)");
  return it->second;
}

namespace {

// A pattern's variants: one per branch of its source's view, read under the item's alias.
std::vector<Variant> MakeVariants(const ViewShape& shape, int id, const views::BoundSql& p) {
  const std::string t = "t" + std::to_string(id);
  std::vector<Variant> out;
  for (const views::Branch& b : views::Branches(shape)) {
    Variant v{b.table, {}, {{"added", b.added ? "1" : "0"}}, -1};
    // The current datoms' columns as tokens (passes may read them from another table).
    for (const views::Cond& c : b.conds)
      v.conds.push_back((b.current() ? Col(id, c.column) : Expr(t + "." + c.column)) + " " +
                        views::CondTest(c, p));
    if (!b.current()) v.cols["ix"] = "NULL";
    if (b.tx_column != std::string("tx")) v.cols["tx"] = t + "." + b.tx_column;
    out.push_back(std::move(v));
  }
  return out;
}

// The whole view as one table expression with columns e, a, v, tx, ix, added.
std::string CollapsedTable(const ViewShape& shape, const views::BoundSql& p) {
  if (!shape.filtered()) return "datoms";
  return "(" + ViewSelect(shape, p, "", AttrIndex::kNone, true) + ")";
}

}  // namespace

std::string Analyzer::ViewTable(const std::string& src, bool /*with_added*/) {
  auto it = env_->sources.find(src);
  ViewShape shape = it == env_->sources.end() ? ViewShape{} : it->second;
  views::BoundSql p;
  if (shape.as_of)
    p.as_of = unit_->ParamRef(Param{Param::Kind::kViewTx, {}, -1, VT::kAny, src, false, {}});
  if (shape.since)
    p.since = unit_->ParamRef(Param{Param::Kind::kViewTx, {}, -1, VT::kAny, src, true, {}});
  return CollapsedTable(shape, p);
}

const VarBind* Analyzer::Lookup(const Scope& s, const std::string& var) const {
  bool crossed = false;
  for (const Scope* p = &s; p; p = p->parent) {
    auto it = p->vars.find(var);
    if (it != p->vars.end()) {
      if (!crossed || it->second.deps.empty()) return &it->second;
      return nullptr;
    }
    if (p->import && !p->import->count(var)) return nullptr;
    if (!p->correlated) crossed = true;
  }
  return nullptr;
}

Result<Expr> Analyzer::ConstExpr(const edn::Value& v, VT t, const std::string& src,
                                 const edn::Value& form) {
  auto mismatch = [&](const std::string& what) -> Status {
    return ClauseError(Code::kSchema, form,
                       "type mismatch: expected " + what + ", got " + edn::Print(v));
  };
  if (t == VT::kRef || (!IsStatic(t) && NaturalType(v) == VT::kRef)) {
    if (v.is_int()) return Expr(IntLit(v.as_int()));
    if (v.is_keyword()) {
      auto e = env_->schema->entid(v.str());
      return Expr(e ? IntLit(*e) : std::string("NULL"));
    }
    if (v.is_vector()) {
      if (!schema::IsLookupRefShape(v))
        return mismatch("an entity (id, ident or lookup ref [:attr value])");
      const Attribute* a = schema::LookupRefAttribute(*env_->schema, v.items()[0]);
      if (!a)
        return ClauseError(
            Code::kSchema, form,
            "unknown attribute " + schema::LookupRefAttributeText(v.items()[0]) + " in lookup ref");
      if (a->unique == Unique::kNone)
        return ClauseError(Code::kSchema, form,
                           "lookup ref attribute :" + a->ident + " is not unique");
      auto enc = schema::EncodeForAttribute(v.items()[1], *a, env_->schema);
      if (!enc.ok()) return ClauseError(Code::kSchema, form, enc.status().message());
      Param p;
      p.kind = Param::Kind::kLookupRef;
      p.edn = v;
      p.source = src;
      return Expr(unit_->ParamRef(std::move(p)));
    }
    if (t == VT::kRef) return mismatch("an entity (id, ident or lookup ref [:attr value])");
  }
  VT enc_type = IsStatic(t) ? t : NaturalType(v).value_or(VT::kAny);
  if (enc_type == VT::kAny || enc_type == VT::kRef) {
    if (v.is_nil()) return ClauseError(Code::kInvalidArgument, form, "nil is not a value here");
    return mismatch("a scalar value");
  }
  auto enc = schema::Encode(v, ToValueType(enc_type));
  if (!enc.ok()) return mismatch(schema::TypeNoun(ToValueType(enc_type)));
  if (enc->tag == schema::DbVal::Tag::kInt) return Expr(IntLit(enc->i));
  return Expr(unit_->ParamRef(Param{Param::Kind::kValue, *enc, -1, VT::kAny, "$", false, {}}));
}

Result<VarBind> Analyzer::ArgBind(const Scope& s, const Term& t, VT want, const edn::Value& form) {
  VarBind out;
  if (t.is_var()) {
    const VarBind* b = Lookup(s, t.name);
    if (!b)
      return ClauseError(Code::kInvalidArgument, form,
                         "insufficient binding: " + t.name + " is not bound");
    if (b->constant && b->type == VT::kTuple) return *b;  // [(ground [1 2]) ?v]
    if (b->constant) {
      MENTAT_ASSIGN_OR_RETURN(out.sql, ConstExpr(*b->constant, want, s.src, form));
      out.type = IsStatic(want) ? want : NaturalType(*b->constant).value_or(VT::kAny);
      out.constant = b->constant;
      return out;
    }
    if (b->slot >= 0 && env_->out->slots[b->slot].rel < 0) {
      Param p;
      p.kind = Param::Kind::kInput;
      p.slot = b->slot;
      p.encode = IsStatic(want) ? want : VT::kAny;
      out.sql = unit_->ParamRef(std::move(p));
      out.type = IsStatic(want) ? want : VT::kAny;
      out.slot = IsStatic(want) ? -1 : b->slot;
      return out;
    }
    return *b;
  }
  if (t.is_const()) {
    MENTAT_ASSIGN_OR_RETURN(out.sql, ConstExpr(t.value, want, s.src, form));
    out.type = IsStatic(want) ? want : NaturalType(t.value).value_or(VT::kAny);
    out.constant = t.value;
    return out;
  }
  return ClauseError(Code::kInvalidArgument, form, "a value or a bound variable is needed here");
}

Status Analyzer::BindOrConstrain(Scope* s, const std::string& var, VarBind b, int item,
                                 const edn::Value& form) {
  if (var.empty() || var == "_") return Status::OK();
  auto own = s->vars.find(var);
  const VarBind* existing = own != s->vars.end() ? &own->second : Lookup(*s, var);
  auto record = [&](VarBind nb) {
    s->vars[var] = std::move(nb);
    if (item >= 0) s->providers[var].push_back(item);
  };
  if (!existing) {
    record(std::move(b));
    return Status::OK();
  }
  VarBind e = *existing;
  // A tuple of parts (tuple, a vector) meets a stored tuple: equal when the parts, encoded
  // as a tuple, are its value.
  if ((e.type == VT::kTuple && b.type == VT::kTupleValue) ||
      (e.type == VT::kTupleValue && b.type == VT::kTuple)) {
    const VarBind& parts = e.type == VT::kTuple ? e : b;
    const VarBind& stored = e.type == VT::kTuple ? b : e;
    MENTAT_ASSIGN_OR_RETURN(Expr built, StoredTupleSql(parts, form, "tuple variable " + var));
    AddWhere(s, Expr::Call(Fn::kEq, {stored.sql, built}));
    if (e.type == VT::kTuple) record(std::move(b));
    return Status::OK();
  }
  if (e.type == VT::kTuple || b.type == VT::kTuple)
    return ClauseError(Code::kInvalidArgument, form,
                       "tuple variable " + var + " cannot be unified here");
  if (b.constant && !e.constant) {
    // A constant meets a binding: encode it for that binding's type.
    MENTAT_ASSIGN_OR_RETURN(
        Expr lit, ConstExpr(*b.constant, IsStatic(e.type) ? e.type : VT::kAny, s->src, form));
    AddWhere(s, Expr::Call(Fn::kEq, {e.sql, lit}));
    return Status::OK();
  }
  if (e.constant) {
    MENTAT_ASSIGN_OR_RETURN(Expr lit, ConstExpr(*e.constant, b.type, s->src, form));
    AddWhere(s, Expr::Call(Fn::kEq, {b.sql, lit}));
    record(std::move(b));
    return Status::OK();
  }
  if (e.slot >= 0 && env_->out->slots[e.slot].rel < 0) {
    Param p;
    p.kind = Param::Kind::kInput;
    p.slot = e.slot;
    p.encode = IsStatic(b.type) ? b.type : VT::kAny;
    AddWhere(s, Expr::Call(Fn::kEq, {b.sql, unit_->ParamRef(std::move(p))}));
    if (!IsStatic(b.type) && b.type != VT::kDynamic) b.slot = e.slot;
    record(std::move(b));
    return Status::OK();
  }
  if (e.slot >= 0) {
    // A column of an input relation: its values get encoded for this use.
    Slot& slot = env_->out->slots[e.slot];
    if (IsStatic(b.type)) {
      if (IsStatic(slot.encode) && slot.encode != b.type &&
          !(slot.encode == VT::kLong && b.type == VT::kRef))
        return ClauseError(Code::kSchema, form,
                           "type mismatch: input " + var + " is used as a " + VTName(slot.encode) +
                               " and as a " + VTName(b.type));
      slot.encode = b.type;
    }
    AddWhere(s, EqCond(*unit_->dialect, b.sql, e.sql));
    if (own != s->vars.end() && IsStatic(b.type)) {
      own->second.type = b.type;
      own->second.slot = -1;
    }
    if (item >= 0) s->providers[var].push_back(item);
    return Status::OK();
  }
  if (b.slot >= 0 && env_->out->slots[b.slot].rel >= 0 && IsStatic(e.type)) {
    // A new input relation column meets a typed binding: encode the input for it.
    Slot& slot = env_->out->slots[b.slot];
    if (IsStatic(slot.encode) && slot.encode != e.type)
      return ClauseError(Code::kSchema, form,
                         "type mismatch: input " + var + " is used as a " + VTName(slot.encode) +
                             " and as a " + VTName(e.type));
    slot.encode = e.type;
  }
  if (!Compatible(e.type, b.type))
    return ClauseError(Code::kSchema, form,
                       "type mismatch: " + var + " is a " + VTName(e.type) + " elsewhere but a " +
                           VTName(b.type) + " here");
  if (b.sql != e.sql) AddWhere(s, EqCond(*unit_->dialect, b.sql, e.sql, b.type, e.type));
  if (own != s->vars.end() && !IsStatic(e.type) && IsStatic(b.type)) {
    // A more precise type: decode with it (and keep the first producer's column).
    own->second.type = b.type;
    own->second.attr.clear();
    own->second.slot = -1;
  }
  if (item >= 0) s->providers[var].push_back(item);
  return Status::OK();
}

VarBind Analyzer::ViewColumn(int item, const std::string& col, VT t) {
  VarBind b;
  b.sql = Col(item, col);
  b.type = t;
  b.deps.insert(item);
  return b;
}

int Analyzer::ViewItem(const std::string& src, const ViewShape& shape, const edn::Value& form,
                       Scope* s) {
  int id = NewItem(Item::Kind::kPattern, form, s);
  views::BoundSql p;
  if (shape.as_of)
    p.as_of = unit_->ParamRef(Param{Param::Kind::kViewTx, {}, -1, VT::kAny, src, false, {}});
  if (shape.since)
    p.since = unit_->ParamRef(Param{Param::Kind::kViewTx, {}, -1, VT::kAny, src, true, {}});
  Item& item = unit_->items[id];
  item.variants = MakeVariants(shape, id, p);
  if (shape.as_of && !shape.since && !shape.history) item.as_of_param = p.as_of;
  if (item.variants.size() > 1) item.collapsed = Variant{CollapsedTable(shape, p), {}, {}, -1};
  item.plan.src = src;
  return id;
}

Status Analyzer::Pattern(const Clause& c, Scope* s) {
  const std::string src = c.src == "$" ? s->src : c.src;
  MENTAT_ASSIGN_OR_RETURN(ViewShape shape, SourceShape(src, c.form));
  Term e = c.places[0], a = c.places[1], v = c.places[2];
  const Term& tx = c.places[3];
  const Term& added = c.places[4];
  const Schema& schema = *env_->schema;
  const Attribute* attr = nullptr;
  if (a.is_const()) {
    if (a.value.is_keyword()) {
      bool reverse = false;
      std::string fwd;
      attr = schema::AttributeOrReverse(schema, a.value, &reverse, &fwd);
      if (!attr) {
        if (schema.entid(a.value.str()))
          return ClauseError(Code::kSchema, c.form, ":" + a.value.str() + " is not an attribute");
        return ClauseError(Code::kSchema, c.form, "unknown attribute :" + fwd);
      }
      if (reverse) {
        if (attr->type != ValueType::kRef)
          return ClauseError(Code::kSchema, c.form,
                             "reverse attribute :" + a.value.str() + " needs a ref attribute");
        std::swap(e, v);
      }
    } else if (a.value.is_int()) {
      attr = schema.attribute(a.value.as_int());
      if (!attr)
        return ClauseError(Code::kSchema, c.form,
                           "unknown attribute " + std::to_string(a.value.as_int()));
    } else {
      return ClauseError(Code::kParse, c.form,
                         "the attribute place takes a keyword, an entity id or a variable");
    }
  }
  int id = ViewItem(src, shape, c.form, s);
  if (attr) {
    Item& item = unit_->items[id];
    item.plan.attr = attr->id;
    item.plan.a = PlanInfo::Pos::kConst;
    item.conds.push_back(Expr::Call(Fn::kEq, {Col(id, "a"), IntLit(attr->id)}));
    // The attribute's index (format 3): the term SQLite needs to use datoms_avet or
    // datoms_aevt. History rows have no ix (NULL), which passes either term.
    item.index_term = Col(id, "ix") + " " + unit_->dialect->IndexTest(attr->value_indexed());
    item.index_term_written = item.index_term;
    const auto* cached = env_->cached_attrs;
    if (cached && !attr->many && e.is_var() && tx.is_blank() && added.is_blank() && !shape.as_of &&
        !shape.since && !shape.history &&
        std::binary_search(cached->begin(), cached->end(), attr->id))
      item.cache_attr = attr->id;
  }
  auto set_pos = [&](PlanInfo::Pos PlanInfo::*pos, std::string PlanInfo::*name, const Term& t) {
    Item& item = unit_->items[id];
    if (t.is_const()) item.plan.*pos = PlanInfo::Pos::kConst;
    if (t.is_var()) {
      item.plan.*pos = PlanInfo::Pos::kVar;
      item.plan.*name = t.name;
      item.plan.binds.push_back(t.name);
    }
  };
  set_pos(&PlanInfo::e, &PlanInfo::e_var, e);
  set_pos(&PlanInfo::v, &PlanInfo::v_var, v);
  if (!attr) set_pos(&PlanInfo::a, &PlanInfo::a_var, a);
  if (tx.is_var()) unit_->items[id].plan.binds.push_back(tx.name);
  if (added.is_var()) unit_->items[id].plan.binds.push_back(added.name);

  auto cond = [&](Expr x) { unit_->items[id].conds.push_back(std::move(x)); };
  // Entity.
  if (e.is_const()) {
    MENTAT_ASSIGN_OR_RETURN(Expr x, ConstExpr(e.value, VT::kRef, src, c.form));
    cond(x == "NULL" ? Expr::Call(Fn::kIsNull, {Col(id, "e")})
                     : Expr::Call(Fn::kEq, {Col(id, "e"), x}));
  } else if (e.is_var()) {
    MENTAT_RETURN_IF_ERROR(BindOrConstrain(s, e.name, ViewColumn(id, "e", VT::kRef), id, c.form));
  }
  // Attribute variable.
  if (a.is_var()) {
    MENTAT_RETURN_IF_ERROR(BindOrConstrain(s, a.name, ViewColumn(id, "a", VT::kRef), id, c.form));
  }
  // Value.
  VT vt = attr ? FromValueType(attr->type) : VT::kDynamic;
  bool tuple_lookups = false;
  if (v.is_const() && attr && attr->type == ValueType::kTuple && v.value.is_vector())
    for (size_t i = 0; i < v.value.size(); ++i) {
      const edn::Value& x = v.value.items()[i];
      tuple_lookups |= schema::IsRefElement(*env_->schema, *attr, i) && x.is_vector() &&
                       x.size() == 2 && x.items()[0].is_keyword();
    }
  if (tuple_lookups) {
    // Its lookup refs name entities when the query runs (as a lookup ref constant does).
    Param p;
    p.kind = Param::Kind::kTupleLookups;
    p.value = schema::DbVal::Int(attr->id);
    p.edn = v.value;
    p.source = src;
    cond(Expr::Call(Fn::kEq, {Col(id, "v"), unit_->ParamRef(std::move(p))}));
  } else if (v.is_const() && attr && attr->type == ValueType::kTuple) {
    // A tuple by the attribute's element types, as the transactor stored it.
    auto enc = schema::EncodeForAttribute(v.value, *attr, env_->schema);
    if (!enc.ok())
      return ClauseError(enc.status().code() == Code::kNotFound ? Code::kNotFound : Code::kSchema,
                         c.form, "value for :" + attr->ident + ": " + enc.status().message());
    cond(Expr::Call(Fn::kEq,
                    {Col(id, "v"), unit_->ParamRef(Param{
                                       Param::Kind::kValue, *enc, -1, VT::kAny, "$", false, {}})}));
    unit_->items[id].plan.v_value = *enc;
  } else if (v.is_const()) {
    MENTAT_ASSIGN_OR_RETURN(Expr x, ConstExpr(v.value, attr ? vt : VT::kAny, src, c.form));
    cond(x == "NULL" ? Expr::Call(Fn::kIsNull, {Col(id, "v")})
                     : Expr::Call(Fn::kEq, {Col(id, "v"), x}));
    if (attr) unit_->items[id].plan.v_value = StoredConstant(v.value, *attr);
  } else if (v.is_var()) {
    VarBind b = ViewColumn(id, "v", vt);
    if (!attr) b.attr = Col(id, "a");
    if (attr && attr->type == ValueType::kTuple) b.tuple_attr = attr->id;
    MENTAT_RETURN_IF_ERROR(BindOrConstrain(s, v.name, std::move(b), id, c.form));
  }
  // Transaction.
  if (tx.is_const()) {
    MENTAT_ASSIGN_OR_RETURN(Expr x, ConstExpr(tx.value, VT::kRef, src, c.form));
    cond(Expr::Call(Fn::kEq, {Col(id, "tx"), x}));
  } else if (tx.is_var()) {
    MENTAT_RETURN_IF_ERROR(BindOrConstrain(s, tx.name, ViewColumn(id, "tx", VT::kRef), id, c.form));
  }
  // Added.
  if (added.is_const()) {
    if (!added.value.is_bool())
      return ClauseError(Code::kSchema, c.form, "the added place takes true or false");
    cond(Expr::Call(Fn::kEq, {Col(id, "added"), added.value.as_bool() ? "1" : "0"}));
  } else if (added.is_var()) {
    MENTAT_RETURN_IF_ERROR(
        BindOrConstrain(s, added.name, ViewColumn(id, "added", VT::kBoolean), id, c.form));
  }
  return Status::OK();
}

std::optional<schema::DbVal> Analyzer::StoredConstant(const edn::Value& v,
                                                      const Attribute& attr) const {
  if (attr.type == ValueType::kRef) {
    if (v.is_int()) return schema::DbVal::Int(v.as_int());
    if (v.is_keyword()) {
      auto e = env_->schema->entid(v.str());
      if (e) return schema::DbVal::Int(*e);
    }
    return std::nullopt;  // a lookup ref: resolved when the query runs
  }
  auto enc = schema::EncodeForAttribute(v, attr, env_->schema);
  if (!enc.ok()) return std::nullopt;
  return *enc;
}

bool Analyzer::AllBound(const Scope& s, const std::vector<std::string>& vars) const {
  for (const auto& v : vars)
    if (!Lookup(s, v)) return false;
  return true;
}

Status Analyzer::Conjunction(const Clauses& clauses, Scope* s) {
  if (unit_->items.size() > kMaxExpandedItems && !clauses.empty())
    return ClauseError(Code::kInvalidArgument, clauses.front().form,
                       "the query expands to more than " + std::to_string(kMaxExpandedItems) +
                           " clauses (rules are expanded at every call)");
  std::vector<const Clause*> fns, preds, ors, nots;
  std::vector<const Clause*> flat;
  // Flatten nested `and`s.
  std::function<void(const Clauses&)> flatten = [&](const Clauses& cs) {
    for (const Clause& c : cs) {
      if (c.kind == Clause::Kind::kAnd) {
        flatten(c.body);
      } else {
        flat.push_back(&c);
      }
    }
  };
  flatten(clauses);
  // Seeds of recursive calls are read from this conjunction (SeedClauses).
  struct Restore {
    const std::vector<const Clause*>** at;
    const std::vector<const Clause*>* was;
    ~Restore() { *at = was; }
  } restore{&conj_, conj_};
  conj_ = &flat;
  for (const Clause* c : flat) {
    switch (c->kind) {
      case Clause::Kind::kPattern:
        MENTAT_RETURN_IF_ERROR(Pattern(*c, s));
        break;
      case Clause::Kind::kFn:
        fns.push_back(c);
        break;
      case Clause::Kind::kPred:
        preds.push_back(c);
        break;
      case Clause::Kind::kRule:
      case Clause::Kind::kOr:
      case Clause::Kind::kOrJoin:
        ors.push_back(c);
        break;
      case Clause::Kind::kNot:
      case Clause::Kind::kNotJoin:
        nots.push_back(c);
        break;
      case Clause::Kind::kAnd:
        break;
    }
  }
  for (;;) {
    bool progress = false;
    for (size_t i = 0; i < fns.size();) {
      bool done = false;
      MENTAT_RETURN_IF_ERROR(Function(*fns[i], s, &done));
      if (done) {
        fns.erase(fns.begin() + static_cast<long>(i));
        progress = true;
      } else {
        ++i;
      }
    }
    if (progress) continue;
    for (size_t i = 0; i < ors.size(); ++i) {
      std::vector<std::string> vars = OrJoinVars(*ors[i]);
      if (AllBound(*s, vars)) continue;
      // Required variables ([[?a]] of an or-join or a rule head) come from other clauses.
      if (!AllBound(*s, RequiredVars(*ors[i]))) continue;
      const Clause* c = ors[i];
      ors.erase(ors.begin() + static_cast<long>(i));
      if (c->kind == Clause::Kind::kRule) {
        MENTAT_RETURN_IF_ERROR(RuleCall(*c, s, false));
      } else {
        MENTAT_RETURN_IF_ERROR(OrClause(*c, s, false));
      }
      progress = true;
      break;
    }
    if (!progress) break;
  }
  for (const Clause* c : ors) {
    for (const std::string& v : RequiredVars(*c))
      if (!Lookup(*s, v))
        return ClauseError(Code::kInvalidArgument, c->form,
                           "insufficient binding: " + v + " is required ([" + v +
                               "]) but no other clause binds it");
  }
  for (const Clause* c : ors) {
    if (c->kind == Clause::Kind::kRule) {
      MENTAT_RETURN_IF_ERROR(RuleCall(*c, s, true));
    } else {
      MENTAT_RETURN_IF_ERROR(OrClause(*c, s, true));
    }
  }
  for (const Clause* c : fns) {
    for (const Term& t : c->args)
      if (t.is_var() && !Lookup(*s, t.name))
        return ClauseError(Code::kInvalidArgument, c->form,
                           "insufficient binding: " + t.name + " is not bound");
    return ClauseError(Code::kInvalidArgument, c->form, "insufficient binding");
  }
  for (const Clause* c : preds) MENTAT_RETURN_IF_ERROR(Predicate(*c, s));
  for (const Clause* c : nots) MENTAT_RETURN_IF_ERROR(NotClause(*c, s));
  return Status::OK();
}

}  // namespace mentat::query
