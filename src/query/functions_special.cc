// Pass 2 (functions that read the store or make relations): get-else, get-some, ground,
// tx-ids, tx-data and fulltext.
#include <algorithm>

#include "query/analyze.h"

namespace mentat::query {

namespace {

bool IsSource(const Term& t) { return t.kind == Term::Kind::kSrc; }

}  // namespace

Status Analyzer::RelItem(int rel, const std::vector<std::string>& vars, const edn::Value& form,
                         Scope* s) {
  int id = NewItem(Item::Kind::kRel, form, s);
  Param p;
  p.kind = Param::Kind::kRel;
  p.slot = rel;
  std::string ref = unit_->ParamRef(std::move(p));
  const RelSpec& spec = env_->out->rels[rel];
  {
    Item& item = unit_->items[id];
    item.variants.push_back(Variant{unit_->dialect->RelationTable(ref), {}, {}, -1});
    item.rel = rel;
    item.plan.fixed_rows = std::max(1.0, spec.size_hint);
    for (const auto& v : vars)
      if (v != "_") item.plan.binds.push_back(v);
  }
  for (size_t i = 0; i < vars.size(); ++i) {
    if (vars[i] == "_") continue;
    VarBind b = ViewColumn(id, "c" + std::to_string(i), VT::kAny);
    if (spec.kind == RelSpec::Kind::kRule) {
      b.type = env_->out->rule_rels[spec.rule_rel].types[i];
      if (b.type == VT::kAny) b.type = VT::kNumeric;
    } else {
      b.slot = spec.slots[i];
    }
    MENTAT_RETURN_IF_ERROR(BindOrConstrain(s, vars[i], std::move(b), id, form));
  }
  return Status::OK();
}

Status Analyzer::ConstRelation(const Clause& c, Scope* s, const edn::Value& value) {
  const BindingForm& b = c.binding;
  if (!value.is_seq())
    return ClauseError(Code::kInvalidArgument, c.form,
                       "ground with a collection binding needs a collection");
  RelSpec spec;
  spec.kind = RelSpec::Kind::kConst;
  spec.arity = static_cast<int>(b.vars.size());
  for (const edn::Value& row : value.items()) {
    if (b.kind == BindingForm::Kind::kColl) {
      spec.const_rows.push_back(edn::Value::Vector({row}));
      continue;
    }
    if (!row.is_seq() || row.size() != b.vars.size())
      return ClauseError(Code::kInvalidArgument, c.form,
                         "ground relation rows must have " + std::to_string(b.vars.size()) +
                             " values, got " + edn::Print(row));
    spec.const_rows.push_back(edn::Value::Vector(row.items()));
  }
  spec.size_hint = static_cast<double>(spec.const_rows.size());
  int rel = static_cast<int>(env_->out->rels.size());
  for (size_t i = 0; i < b.vars.size(); ++i) {
    Slot slot;
    slot.rel = rel;
    slot.column = static_cast<int>(i);
    slot.var = b.vars[i];
    slot.form = c.form;
    spec.slots.push_back(static_cast<int>(env_->out->slots.size()));
    env_->out->slots.push_back(std::move(slot));
  }
  env_->out->rels.push_back(std::move(spec));
  return RelItem(rel, b.vars, c.form, s);
}

Status Analyzer::Ground(const Clause& c, Scope* s) {
  if (c.args.size() != 1)
    return ClauseError(
        Code::kInvalidArgument, c.form,
        "wrong number of arguments to ground: expected 1, got " + std::to_string(c.args.size()));
  const Term& arg = c.args[0];
  edn::Value value;
  if (arg.is_const()) {
    value = arg.value;
  } else if (arg.is_var()) {
    const VarBind* vb = Lookup(*s, arg.name);
    if (vb && !vb->constant && vb->slot >= 0 && c.binding.kind != BindingForm::Kind::kScalar &&
        c.binding.kind != BindingForm::Kind::kBlank)
      return GroundInput(c, s, vb->slot);
    if (!vb || !vb->constant) {
      MENTAT_ASSIGN_OR_RETURN(VarBind x, ArgBind(*s, arg, VT::kAny, c.form));
      return BindResult(c, s, c.binding, {x}, false);
    }
    value = *vb->constant;
  } else {
    return ClauseError(Code::kInvalidArgument, c.form, "ground takes a constant");
  }
  const BindingForm& b = c.binding;
  if (b.kind == BindingForm::Kind::kColl || b.kind == BindingForm::Kind::kRel)
    return ConstRelation(c, s, value);
  auto one = [&](const edn::Value& v) -> Result<VarBind> {
    VarBind x;
    auto nt = NaturalType(v);
    if (!nt)
      return ClauseError(Code::kInvalidArgument, c.form,
                         "ground value " + edn::Print(v) + " is not a scalar");
    MENTAT_ASSIGN_OR_RETURN(x.sql, ConstExpr(v, VT::kAny, s->src, c.form));
    x.type = *nt;
    x.constant = v;
    return x;
  };
  std::vector<VarBind> vals;
  if (b.kind == BindingForm::Kind::kTuple) {
    if (!value.is_seq() || value.size() != b.vars.size())
      return ClauseError(Code::kInvalidArgument, c.form,
                         "ground value does not match the tuple binding");
    for (const auto& v : value.items()) {
      MENTAT_ASSIGN_OR_RETURN(VarBind x, one(v));
      vals.push_back(std::move(x));
    }
  } else if (value.is_vector() && !NaturalType(value)) {
    // [(ground [1 2]) ?v]: ?v is the vector, a tuple of its elements.
    VarBind t;
    t.type = VT::kTuple;
    t.constant = value;
    for (const auto& v : value.items()) {
      MENTAT_ASSIGN_OR_RETURN(VarBind x, one(v));
      t.parts.push_back(std::move(x));
    }
    vals.push_back(std::move(t));
  } else {
    MENTAT_ASSIGN_OR_RETURN(VarBind x, one(value));
    vals.push_back(std::move(x));
  }
  return BindResult(c, s, b, std::move(vals), false);
}

Status Analyzer::GroundInput(const Clause& c, Scope* s, int slot) {
  const BindingForm& b = c.binding;
  std::vector<Slot>& slots = env_->out->slots;
  const Slot base = slots[static_cast<size_t>(slot)];
  if (b.kind == BindingForm::Kind::kTuple) {
    // [(ground ?in) [?a _ ?c]]: each variable a component of the input, as :in [?a _ ?c].
    std::vector<VarBind> vals;
    for (size_t k = 0; k < b.vars.size(); ++k) {
      Slot part = base;
      part.path.push_back(static_cast<int>(k));
      part.var = b.vars[k];
      int sid = static_cast<int>(slots.size());
      slots.push_back(part);
      VarBind x;
      Param p;
      p.kind = Param::Kind::kInput;
      p.slot = sid;
      x.sql = unit_->ParamRef(std::move(p));
      x.type = VT::kAny;
      x.slot = sid;
      vals.push_back(std::move(x));
    }
    return BindResult(c, s, b, std::move(vals), false);
  }
  // [(ground ?in) [?x ...]] or [[?x _ ?z]]: the input is the collection or relation, as
  // :in [?x ...] would take it.
  if (!base.path.empty() || base.rel >= 0)
    return ClauseError(Code::kUnsupported, c.form,
                       "ground binds a collection of a whole scalar input only");
  RelSpec spec;
  spec.kind = RelSpec::Kind::kInput;
  spec.input = base.input;
  spec.coll = b.kind == BindingForm::Kind::kColl;
  spec.arity = static_cast<int>(b.vars.size());
  int rel = static_cast<int>(env_->out->rels.size());
  for (size_t k = 0; k < b.vars.size(); ++k) {
    Slot col;
    col.input = base.input;
    col.rel = rel;
    col.column = static_cast<int>(k);
    col.var = b.vars[k];
    col.form = c.form;
    spec.slots.push_back(static_cast<int>(slots.size()));
    slots.push_back(col);
  }
  env_->out->rels.push_back(spec);
  return RelItem(rel, b.vars, c.form, s);
}

Status Analyzer::TxIds(const Clause& c, Scope* s) {
  if (c.args.size() != 3 || !IsSource(c.args[0]))
    return ClauseError(Code::kInvalidArgument, c.form, "expected [(tx-ids $ ?from ?to) [?tx ...]]");
  const BindingForm& b = c.binding;
  if (b.kind != BindingForm::Kind::kColl && b.kind != BindingForm::Kind::kRel &&
      b.kind != BindingForm::Kind::kScalar)
    return ClauseError(Code::kInvalidArgument, c.form, "tx-ids binds a collection [?tx ...]");
  int id = NewItem(Item::Kind::kPattern, c.form, s);
  {
    Item& item = unit_->items[id];
    item.variants.push_back(Variant{"datoms", {}, {}, -1});
    item.plan.attr = ids::kTxInstant;
    item.plan.a = PlanInfo::Pos::kConst;
    item.plan.v_range = true;
    item.conds.push_back(Expr::Call(Fn::kEq, {Col(id, "a"), IntLit(ids::kTxInstant)}));
    if (!c.binding.vars.empty() && c.binding.vars[0] != "_") {
      item.plan.e = PlanInfo::Pos::kVar;
      item.plan.e_var = c.binding.vars[0];
    }
  }
  for (int k = 1; k <= 2; ++k) {
    const Term& t = c.args[static_cast<size_t>(k)];
    if (t.is_const() && t.value.is_nil()) continue;
    if (t.is_blank()) continue;
    MENTAT_ASSIGN_OR_RETURN(VarBind x, ArgBind(*s, t, VT::kAny, c.form));
    if (IsStatic(x.type) && x.type != VT::kInstant && x.type != VT::kLong && x.type != VT::kRef)
      return ClauseError(Code::kSchema, c.form, "tx-ids takes tx ids or instants");
    std::string col = x.type == VT::kInstant ? "v" : "e";
    unit_->items[id].conds.push_back(Expr::Call(k == 1 ? Fn::kGe : Fn::kLt, {Col(id, col), x.sql}));
  }
  const std::string& var = b.vars.empty() ? std::string("_") : b.vars[0];
  if (var != "_") unit_->items[id].plan.binds.push_back(var);
  return BindOrConstrain(s, var, ViewColumn(id, "e", VT::kRef), id, c.form);
}

Status Analyzer::TxData(const Clause& c, Scope* s) {
  if (c.args.size() != 2 || !IsSource(c.args[0]))
    return ClauseError(Code::kInvalidArgument, c.form,
                       "expected [(tx-data $ ?tx) [[?e ?a ?v ?tx ?added]]]");
  const BindingForm& b = c.binding;
  if (b.kind != BindingForm::Kind::kRel || b.vars.size() > 5)
    return ClauseError(Code::kInvalidArgument, c.form,
                       "tx-data binds a relation [[?e ?a ?v ?tx ?added]]");
  MENTAT_ASSIGN_OR_RETURN(VarBind tx, ArgBind(*s, c.args[1], VT::kRef, c.form));
  int id = NewItem(Item::Kind::kOther, c.form, s);
  {
    const std::string t = "t" + std::to_string(id);
    Item& item = unit_->items[id];
    for (const views::Branch& b : views::TxBranches()) {
      // Each of its conds is on the transaction (Bound::kTx): an expression here.
      std::vector<Expr> conds;
      for (const views::Cond& cd : b.conds)
        conds.push_back(Expr::Call(CompareFn(cd.op), {t + "." + cd.column, tx.sql}));
      Variant v{
          b.table, {Expr::Call(Fn::kAnd, std::move(conds))}, {{"added", b.added ? "1" : "0"}}, -1};
      if (b.tx_column != std::string("tx")) v.cols["tx"] = t + "." + b.tx_column;
      item.variants.push_back(std::move(v));
    }
    item.plan.fixed_rows = 20;
    for (const auto& v : b.vars)
      if (v != "_") item.plan.binds.push_back(v);
  }
  static const char* const kCols[] = {"e", "a", "v", "tx", "added"};
  for (size_t i = 0; i < b.vars.size(); ++i) {
    VT t = i == 2 ? VT::kDynamic : (i == 4 ? VT::kBoolean : VT::kRef);
    VarBind x = ViewColumn(id, kCols[i], t);
    if (i == 2) x.attr = Col(id, "a");
    MENTAT_RETURN_IF_ERROR(BindOrConstrain(s, b.vars[i], std::move(x), id, c.form));
  }
  return Status::OK();
}

Status Analyzer::Fulltext(const Clause& c, Scope* s) {
  if (c.args.size() != 3 || !IsSource(c.args[0]) || !c.args[1].is_const() ||
      !c.args[1].value.is_keyword())
    return ClauseError(Code::kInvalidArgument, c.form,
                       "expected [(fulltext $ :attr ?search) [[?e ?value ?tx ?score]]]");
  const BindingForm& b = c.binding;
  if (b.kind != BindingForm::Kind::kRel || b.vars.size() > 4)
    return ClauseError(Code::kInvalidArgument, c.form,
                       "fulltext binds a relation [[?e ?value ?tx ?score]]");
  const Attribute* attr = env_->schema->attribute(c.args[1].value.str());
  if (!attr)
    return ClauseError(Code::kSchema, c.form, "unknown attribute :" + c.args[1].value.str());
  if (!attr->fulltext)
    return ClauseError(Code::kSchema, c.form, "attribute :" + attr->ident + " is not :db/fulltext");
  std::string src = c.args[0].name == "$" ? s->src : c.args[0].name;
  MENTAT_ASSIGN_OR_RETURN(ViewShape shape, SourceShape(src, c.form));
  MENTAT_ASSIGN_OR_RETURN(VarBind q, ArgBind(*s, c.args[2], VT::kString, c.form));
  if (IsStatic(q.type) && q.type != VT::kString)
    return ClauseError(
        Code::kSchema, c.form,
        std::string("type mismatch: fulltext searches for a string, got a ") + VTName(q.type));
  int f = NewItem(Item::Kind::kFts, c.form, s);
  {
    Item& item = unit_->items[f];
    item.variants.push_back(
        Variant{"fulltext",
                {Expr::Call(Fn::kMatch, {"t" + std::to_string(f) + ".fulltext", q.sql})},
                {},
                -1});
    item.plan.fixed_rows = 50;
    if (c.args[2].is_var()) item.plan.needs.push_back(c.args[2].name);
  }
  int d = NewItem(Item::Kind::kOther, c.form, s);
  {
    Item& item = unit_->items[d];
    item.variants.push_back(Variant{"fulltext_docs", {}, {}, -1});
    item.conds.push_back(Expr::Call(Fn::kEq, {Col(d, "id"), Col(f, "rowid")}));
    item.conds.push_back(Expr::Call(Fn::kEq, {Col(d, "a"), IntLit(attr->id)}));
    item.plan.fixed_rows = 1;
    item.plan.after.push_back(f);
  }
  int p = ViewItem(src, shape, c.form, s);
  {
    Item& item = unit_->items[p];
    item.conds.push_back(Expr::Call(Fn::kEq, {Col(p, "e"), Col(d, "e")}));
    item.conds.push_back(Expr::Call(Fn::kEq, {Col(p, "a"), IntLit(attr->id)}));
    item.conds.push_back(EqCond(*unit_->dialect, Col(p, "v"), Col(d, "text")));
    item.plan.fixed_rows = 1;
    item.plan.after.push_back(d);
  }
  for (size_t i = 0; i < b.vars.size(); ++i) {
    const std::string& var = b.vars[i];
    if (var == "_") continue;
    VarBind x;
    int item = -1;
    switch (i) {
      case 0:
        x = ViewColumn(d, "e", VT::kRef);
        item = d;
        break;
      case 1:
        x = ViewColumn(d, "text", VT::kString);
        item = d;
        break;
      case 2:
        x = ViewColumn(p, "tx", VT::kRef);
        item = p;
        break;
      default:
        x = ViewColumn(f, "rowid", VT::kDouble);
        x.sql = Expr::Call(Fn::kRank, {Col(f, "fulltext"), q.sql});
        item = f;
        break;
    }
    unit_->items[item].plan.binds.push_back(var);
    MENTAT_RETURN_IF_ERROR(BindOrConstrain(s, var, std::move(x), item, c.form));
  }
  return Status::OK();
}

Status Analyzer::SpecialFunction(const Clause& c, Scope* s, bool* handled) {
  *handled = true;
  const std::string& fn = c.fn;
  if (fn == "ground") return Ground(c, s);
  if (fn == "tx-ids") return TxIds(c, s);
  if (fn == "tx-data") return TxData(c, s);
  if (fn == "fulltext") return Fulltext(c, s);
  if (fn == "get-else") {
    if (c.args.size() != 4 || !IsSource(c.args[0]) || !c.args[2].is_const() ||
        !c.args[2].value.is_keyword())
      return ClauseError(Code::kInvalidArgument, c.form,
                         "expected [(get-else $ ?e :attr default) ?v]");
    const Attribute* a = env_->schema->attribute(c.args[2].value.str());
    if (!a)
      return ClauseError(Code::kSchema, c.form, "unknown attribute :" + c.args[2].value.str());
    if (a->many)
      return ClauseError(
          Code::kSchema, c.form,
          "get-else needs a cardinality-one attribute, :" + a->ident + " is cardinality many");
    if (c.args[3].is_const() && c.args[3].value.is_nil())
      return ClauseError(Code::kInvalidArgument, c.form, "get-else default cannot be nil");
    std::string src = c.args[0].name == "$" ? s->src : c.args[0].name;
    MENTAT_RETURN_IF_ERROR(SourceShape(src, c.form).status());
    MENTAT_ASSIGN_OR_RETURN(VarBind e, ArgBind(*s, c.args[1], VT::kRef, c.form));
    VT t = FromValueType(a->type);
    MENTAT_ASSIGN_OR_RETURN(VarBind def, ArgBind(*s, c.args[3], t, c.form));
    if (IsStatic(def.type) && def.type != t && !(t == VT::kDouble && def.type == VT::kLong))
      return ClauseError(Code::kSchema, c.form,
                         "type mismatch: get-else default must be a " + std::string(VTName(t)));
    VarBind out;
    out.sql = Expr::Call(Fn::kCoalesce,
                         {"(SELECT v FROM " + ViewTable(src, false) + " WHERE " +
                              Expr::Call(Fn::kAnd, {Expr::Call(Fn::kEq, {"e", e.sql}),
                                                    Expr::Call(Fn::kEq, {"a", IntLit(a->id)})}) +
                              " LIMIT 1)",
                          def.sql});
    out.type = t;
    out.deps = e.deps;
    out.deps.insert(def.deps.begin(), def.deps.end());
    // Never NULL: a nil default is refused, and a datom has a value.
    return BindResult(c, s, c.binding, {out}, def.sql == "NULL");
  }
  if (fn == "get-some") {
    if (c.args.size() < 3 || !IsSource(c.args[0]))
      return ClauseError(Code::kInvalidArgument, c.form,
                         "expected [(get-some $ ?e :attr...) [?attr ?v]]");
    std::string src = c.args[0].name == "$" ? s->src : c.args[0].name;
    MENTAT_ASSIGN_OR_RETURN(ViewShape shape, SourceShape(src, c.form));
    MENTAT_ASSIGN_OR_RETURN(VarBind e, ArgBind(*s, c.args[1], VT::kRef, c.form));
    std::vector<Entid> attrs;
    std::optional<VT> common;
    bool same = true;
    for (size_t i = 2; i < c.args.size(); ++i) {
      if (!c.args[i].is_const() || !c.args[i].value.is_keyword())
        return ClauseError(Code::kInvalidArgument, c.form, "get-some takes attribute keywords");
      const Attribute* a = env_->schema->attribute(c.args[i].value.str());
      if (!a)
        return ClauseError(Code::kSchema, c.form, "unknown attribute :" + c.args[i].value.str());
      if (a->many)
        return ClauseError(
            Code::kSchema, c.form,
            "get-some needs cardinality-one attributes, :" + a->ident + " is cardinality many");
      VT t = FromValueType(a->type);
      if (common && *common != t) same = false;
      common = t;
      attrs.push_back(a->id);
    }
    // A join with the entity's datom of the first of the attributes it has: one datom per
    // row, each column read once (not a scalar subquery per use of ?a and ?v).
    std::string view = ViewTable(src, false);
    int id = ViewItem(src, shape, c.form, s);
    Item& item = unit_->items[id];
    item.kind = Item::Kind::kOther;
    item.conds.push_back(Expr::Call(Fn::kEq, {Col(id, "e"), e.sql}));
    // Its attribute is one of them, and the entity has none of those before it.
    std::vector<Expr> firsts;
    std::vector<Expr> in = {Col(id, "a")}, earlier = {"g.a"};
    for (Entid a : attrs) {
      Expr is_a = Expr::Call(Fn::kEq, {Col(id, "a"), IntLit(a)});
      if (earlier.size() > 1)
        is_a = Expr::Call(Fn::kAnd,
                          {is_a, "NOT EXISTS (SELECT 1 FROM " + view + " AS g WHERE " +
                                     Expr::Call(Fn::kAnd, {Expr::Call(Fn::kEq, {"g.e", e.sql}),
                                                           Expr::Call(Fn::kIn, earlier)}) +
                                     ")"});
      firsts.push_back("(" + is_a + ")");
      in.push_back(IntLit(a));
      earlier.push_back(IntLit(a));
    }
    item.conds.push_back(Expr::Call(Fn::kIn, std::move(in)));
    item.conds.push_back("(" + Expr::Call(Fn::kOr, std::move(firsts)) + ")");
    item.plan.fixed_rows = 1;
    if (c.args[1].is_var()) item.plan.needs.push_back(c.args[1].name);
    for (int d : e.deps) item.plan.after.push_back(d);
    VarBind attr = ViewColumn(id, "a", VT::kRef);
    VarBind val = ViewColumn(id, "v", same ? *common : VT::kDynamic);
    if (!same) val.attr = Col(id, "a");
    for (const auto& v : c.binding.vars)
      if (v != "_") item.plan.binds.push_back(v);
    return BindResult(c, s, c.binding, {attr, val}, false);
  }
  *handled = false;
  return Status::OK();
}

}  // namespace mentat::query
