// Pass 5: binding inputs and parameters, running the SQL, interrupts and timeouts.
#include "query/execute.h"

#include "schema/names.h"
#include "schema/tuple.h"

namespace mentat::query {

using schema::DbVal;

namespace {

int Progress(void* arg) { return static_cast<const Interrupter*>(arg)->Fired() ? 1 : 0; }

}  // namespace

Interrupter::Interrupter(const ExecContext& ctx, std::optional<int64_t> timeout_ms) : ctx_(ctx) {
  if (timeout_ms) {
    timeout_ms_ = *timeout_ms;
    deadline_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(*timeout_ms);
  }
  if (!ctx_.conn) return;
  if (ctx_.conn->is_pg()) {
    // PostgreSQL stops a statement at its statement_timeout (set with the query's first
    // statement, in its round trip); Store::interrupt and the stop callback are checked
    // between statements (Interrupted).
    if (deadline_) {
      ctx_.conn->SetStatementTimeout(std::max<int64_t>(1, timeout_ms_));
      pg_timeout_ = true;
    }
    return;
  }
  if (ctx_.conn->borrowed()) {
    if (deadline_) watch_ = std::make_unique<storage::DeadlineWatch>(ctx_.conn->raw(), *deadline_);
    return;
  }
  if (ctx_.interrupt_gen || deadline_ || ctx_.stop) {
    sqlite3_progress_handler(ctx_.conn->raw(), 1000, Progress, const_cast<Interrupter*>(this));
    handler_ = true;
  }
}

Interrupter::~Interrupter() {
  if (pg_timeout_) ctx_.conn->SetStatementTimeout(std::nullopt);
  if (handler_) sqlite3_progress_handler(ctx_.conn->raw(), 0, nullptr, nullptr);
}

bool Interrupter::Interrupted() const {
  if (ctx_.interrupt_gen && ctx_.interrupt_gen->load(std::memory_order_relaxed) != ctx_.start_gen)
    return true;
  if (!stopped_ && ctx_.stop && ctx_.stop()) stopped_ = true;
  return stopped_;
}

bool Interrupter::TimedOut() const {
  return deadline_ && std::chrono::steady_clock::now() > *deadline_;
}

bool Interrupter::Fired() const { return Interrupted() || TimedOut(); }

Status Interrupter::Check() const {
  if (Interrupted()) return Status::Interrupted("interrupted");
  if (TimedOut())
    return Status::Interrupted("interrupted: query timed out after " + std::to_string(timeout_ms_) +
                               " ms");
  return Status::OK();
}

Status Interrupter::Translate(Status st) const {
  if (st.ok()) return st;
  if (st.code() == Code::kInterrupted || Fired()) {
    Status c = Check();
    return c.ok() ? Status::Interrupted("interrupted") : c;
  }
  return st;
}

const DbView& Execution::View(const std::string& src) const {
  if (src == "$") return ctx_.view;
  auto it = ctx_.sources.find(src);
  return it == ctx_.sources.end() ? ctx_.view : it->second;
}

const edn::Value* Execution::SlotValue(int slot) const {
  const Slot& s = c_.slots[slot];
  if (s.input < 0 || s.input >= static_cast<int>(inputs_.size())) return nullptr;
  const edn::Value* v = inputs_[s.input];
  for (int k : s.path) {
    if (!v || !v->is_seq() || k >= static_cast<int>(v->size())) return nullptr;
    v = &v->items()[k];
  }
  return v;
}

VT Execution::SlotType(int slot) const {
  const Slot& s = c_.slots[slot];
  if (IsStatic(s.encode)) return s.encode;
  return slot_types_[slot];
}

Result<std::optional<Entid>> Execution::ResolveLookupRef(const edn::Value& ref,
                                                         const std::string& src) {
  const Attribute* a = schema::LookupRefAttribute(*ctx_.schema, ref.items()[0]);
  if (!a)
    return Status::Schema("unknown attribute " + schema::LookupRefAttributeText(ref.items()[0]) +
                          " in lookup ref");
  if (a->unique == Unique::kNone)
    return Status::Schema("lookup ref attribute :" + a->ident + " is not unique");
  auto enc = schema::EncodeForAttribute(ref.items()[1], *a, ctx_.schema);
  if (!enc.ok())
    return Status::Schema("lookup ref " + edn::Print(ref) + ": " + enc.status().message());
  const DbView& view = View(src);
  // The entity holding the value in the database as of the view's point (a history
  // database included), or now.
  views::BoundSql bounds;
  bounds.as_of = "?3";
  std::string sql = "SELECT e FROM (" +
                    ViewSelect(views::Shape{view.as_of.has_value(), false, false}, bounds,
                               "a = ?1 AND v = ?2", AttrIndex::kAvet) +
                    ") LIMIT 1";
  MENTAT_ASSIGN_OR_RETURN(auto st, ctx_.conn->Cached(sql));
  st->BindInt(1, a->id);
  schema::Bind(*st, 2, *enc);
  if (view.as_of) st->BindInt(3, *view.as_of);
  MENTAT_ASSIGN_OR_RETURN(bool row, st->Step());
  if (!row) return std::optional<Entid>();
  return std::optional<Entid>(st->ColumnInt(0));
}

Result<std::optional<DbVal>> Execution::Encode(const edn::Value& v, VT t, const std::string& src,
                                               const std::string& what) {
  auto nt = NaturalType(v);
  if (t == VT::kRef || (!IsStatic(t) && nt == VT::kRef)) {
    if (v.is_int()) return std::optional<DbVal>(DbVal::Int(v.as_int()));
    if (v.is_keyword()) {
      auto e = ctx_.schema->entid(v.str());
      return e ? std::optional<DbVal>(DbVal::Int(*e)) : std::optional<DbVal>();
    }
    if (nt == VT::kRef || (t == VT::kRef && schema::IsLookupRefShape(v))) {
      MENTAT_ASSIGN_OR_RETURN(auto e, ResolveLookupRef(v, src));
      return e ? std::optional<DbVal>(DbVal::Int(*e)) : std::optional<DbVal>();
    }
    return Status::Schema("input " + what + ": expected an entity id, ident or lookup ref, got " +
                          edn::Print(v));
  }
  VT et = IsStatic(t) ? t : nt.value_or(VT::kAny);
  // A vector or list where any value may go (a scalar input only projected or compared):
  // its canonical EDN text, which Decode gives back as the input itself.
  if (!IsStatic(et) && !IsStatic(t) && (v.is_vector() || v.is_list()))
    return std::optional<DbVal>(DbVal::Text(edn::Print(v)));
  if (!IsStatic(et))
    return Status::InvalidArgument("input " + what + ": " + edn::Print(v) +
                                   " is not a scalar value");
  auto enc = schema::Encode(v, ToValueType(et));
  if (!enc.ok()) return Status::Schema("input " + what + ": " + enc.status().message());
  return std::optional<DbVal>(*enc);
}

Status Execution::Prepare() {
  slot_types_.assign(c_.slots.size(), VT::kAny);
  for (size_t s = 0; s < c_.slots.size(); ++s) {
    const Slot& slot = c_.slots[s];
    if (slot.rel >= 0) continue;
    const edn::Value* v = SlotValue(static_cast<int>(s));
    if (!v) return Status::InvalidArgument("input " + slot.var + " is missing");
    if (v->is_nil()) return Status::InvalidArgument("input " + slot.var + " is nil");
    slot_types_[s] = NaturalType(*v).value_or(VT::kAny);
  }
  input_rels_.resize(c_.rels.size());
  for (size_t r = 0; r < c_.rels.size(); ++r) {
    const RelSpec& spec = c_.rels[r];
    if (spec.kind == RelSpec::Kind::kRule) continue;
    auto rel = std::make_unique<Relation>(spec.arity);
    // The rows, read in place: a constant relation's, or the input's items (each a row of
    // `arity` cells, or for a collection binding a cell of its own).
    const std::vector<edn::Value>* rows = &spec.const_rows;
    bool coll = false;
    if (spec.kind != RelSpec::Kind::kConst) {
      const edn::Value* in = inputs_[spec.input];
      // :in collections and relations are checked when inputs are matched; a scalar input
      // that ground binds as one is checked here.
      if (!in->is_seq())
        return Status::InvalidArgument("input " + c_.slots[spec.slots[0]].var +
                                       ": expected a collection, got " + edn::Print(*in));
      rows = &in->items();
      coll = spec.coll;
      if (!coll)
        for (const edn::Value& item : *rows)
          if (!item.is_seq() || item.size() != static_cast<size_t>(spec.arity))
            return Status::InvalidArgument("input " + c_.slots[spec.slots[0]].var + ": expected " +
                                           std::to_string(spec.arity) + "-element rows, got " +
                                           edn::Print(item));
    }
    std::vector<std::optional<VT>> kinds(spec.arity);
    std::vector<DbVal> cells(spec.arity);
    for (const edn::Value& row : *rows) {
      MENTAT_RETURN_IF_ERROR(intr_.Check());
      bool keep = true;
      for (int k = 0; k < spec.arity; ++k) {
        const Slot& slot = c_.slots[spec.slots[k]];
        const edn::Value& x = coll ? row : row.items()[k];
        if (slot.var == "_") {
          cells[k] = DbVal::Int(0);
          continue;
        }
        if (x.is_nil()) return Status::InvalidArgument("input " + slot.var + " contains nil");
        if (!IsStatic(slot.encode)) {
          auto nt = NaturalType(x);
          if (!nt)
            return Status::InvalidArgument("input " + slot.var + ": " + edn::Print(x) +
                                           " is not a scalar value");
          auto num = [](VT t) { return t == VT::kLong || t == VT::kDouble || t == VT::kNumeric; };
          if (kinds[k] && *kinds[k] != *nt) {
            if (!num(*kinds[k]) || !num(*nt))
              return Status::InvalidArgument("input " + slot.var + " mixes values of types " +
                                             VTName(*kinds[k]) + " and " + VTName(*nt));
            kinds[k] = VT::kNumeric;  // longs and doubles: decoded by storage class
          } else {
            kinds[k] = nt;
          }
        }
        MENTAT_ASSIGN_OR_RETURN(auto enc, Encode(x, slot.encode, "$", slot.var));
        if (!enc) {
          keep = false;
          break;
        }
        cells[k] = std::move(*enc);
      }
      if (keep) rel->Insert(cells.data());
    }
    for (int k = 0; k < spec.arity; ++k)
      if (kinds[k]) slot_types_[spec.slots[k]] = *kinds[k];
    input_rels_[r] = std::move(rel);
  }
  rule_full_.resize(c_.rule_rels.size());
  for (size_t r = 0; r < c_.rule_rels.size(); ++r)
    rule_full_[r] = std::make_unique<Relation>(c_.rule_rels[r].arity);
  main_rels_.assign(c_.rels.size(), nullptr);
  for (size_t r = 0; r < c_.rels.size(); ++r)
    main_rels_[r] = c_.rels[r].kind == RelSpec::Kind::kRule ? rule_full_[c_.rels[r].rule_rel].get()
                                                            : input_rels_[r].get();
  return Status::OK();
}

Result<int64_t> Execution::CountWithMainParams(const std::string& sql) {
  MENTAT_ASSIGN_OR_RETURN(auto st, ctx_.conn->Cached(sql));
  // The parameters `sql` uses, which may be ones c_.sql does not (a relation the query's
  // statement reads from its WITH clause: rules_in_query).
  Unit unit = c_.main;
  unit.MarkUsed(sql);
  MENTAT_RETURN_IF_ERROR(Bind(*st, unit, main_rels_));
  auto row = st->Step();
  if (!row.ok()) return intr_.Translate(row.status());
  int64_t n = *row ? st->ColumnInt(0) : 0;
  st->Reset();
  return n;
}

Status Execution::Bind(storage::Statement& st, const Unit& unit,
                       const std::vector<const Relation*>& rels, int offset,
                       const std::vector<bool>* used) {
  if (!used) used = &unit.used;
  for (size_t i = 0; i < unit.params.size(); ++i) {
    if (i < used->size() && !(*used)[i]) continue;
    const Param& p = unit.params[i];
    int n = offset + static_cast<int>(i) + 1;
    switch (p.kind) {
      case Param::Kind::kValue:
        schema::Bind(st, n, p.value);
        break;
      case Param::Kind::kNull:
        st.BindNull(n);
        break;
      case Param::Kind::kViewTx: {
        const DbView& v = View(p.source);
        auto t = p.since ? v.since : v.as_of;
        if (t) {
          st.BindInt(n, *t);
        } else {
          st.BindInt(n, p.since ? 0 : INT64_MAX);
        }
        break;
      }
      case Param::Kind::kRel:
        if (st.is_pg()) {
          st.BindText(n, RelationJson(*rels[p.slot]));
        } else {
          sqlite3_bind_pointer(st.get(), n, const_cast<Relation*>(rels[p.slot]), kRelPointerType,
                               nullptr);
        }
        break;
      case Param::Kind::kLookupRef: {
        MENTAT_ASSIGN_OR_RETURN(auto e, ResolveLookupRef(p.edn, p.source));
        if (e) {
          st.BindInt(n, *e);
        } else {
          st.BindNull(n);
        }
        break;
      }
      case Param::Kind::kTupleLookups: {
        const Attribute* attr = ctx_.schema->attribute(p.value.i);
        if (!attr) return Status::Internal("tuple constant of an unknown attribute");
        edn::Vec items = p.edn.items();
        bool missing = false;
        for (size_t k = 0; k < items.size(); ++k) {
          edn::Value& x = items[k];
          if (!schema::IsRefElement(*ctx_.schema, *attr, k) || !x.is_vector() || x.size() != 2)
            continue;
          MENTAT_ASSIGN_OR_RETURN(auto e, ResolveLookupRef(x, p.source));
          if (!e) {
            missing = true;  // names nothing: no datom holds the tuple
            break;
          }
          x = edn::Value::Int(*e);
        }
        if (missing) {
          st.BindNull(n);
          break;
        }
        auto enc =
            schema::EncodeForAttribute(edn::Value::Vector(std::move(items)), *attr, ctx_.schema);
        if (!enc.ok())
          return Status::Schema("value for :" + attr->ident + ": " + enc.status().message());
        schema::Bind(st, n, *enc);
        break;
      }
      case Param::Kind::kInput: {
        const edn::Value* v = SlotValue(p.slot);
        if (!v) return Status::InvalidArgument("missing input " + c_.slots[p.slot].var);
        if (p.encode == VT::kLong && !v->is_int())
          return Status::InvalidArgument("input " + c_.slots[p.slot].var +
                                         " must be an integer, got " + edn::Print(*v));
        MENTAT_ASSIGN_OR_RETURN(auto enc, Encode(*v, p.encode, "$", c_.slots[p.slot].var));
        if (enc) {
          schema::Bind(st, n, *enc);
        } else {
          st.BindNull(n);
        }
        break;
      }
    }
  }
  return Status::OK();
}

edn::Value Execution::Decode(const storage::Statement& st, const OutCol& oc) const {
  if (oc.type == VT::kTuple) {
    edn::Vec parts;
    for (const OutCol& p : oc.parts) parts.push_back(Decode(st, p));
    return edn::Value::Vector(std::move(parts));
  }
  int ct = st.ColumnType(oc.col);
  if (ct == SQLITE_NULL) return edn::Value();
  if (oc.type == VT::kAny && oc.slot >= 0 && c_.slots[static_cast<size_t>(oc.slot)].rel < 0) {
    const edn::Value* in = SlotValue(oc.slot);
    if (in && (in->is_vector() || in->is_list()) && !NaturalType(*in)) return *in;
  }
  VT t = oc.type;
  if (t == VT::kAny) t = oc.slot >= 0 ? SlotType(oc.slot) : VT::kNumeric;
  if (t == VT::kDynamic) {
    int64_t a = oc.attr_col >= 0 ? st.ColumnInt(oc.attr_col) : 0;
    if (a < 0) {
      t = static_cast<VT>(-1 - a);
    } else if (const Attribute* attr = ctx_.schema->attribute(a)) {
      t = FromValueType(attr->type);
    } else {
      t = VT::kNumeric;
    }
  }
  if (IsStatic(t)) {
    if (t == VT::kRef || t == VT::kLong) {
      if (ct == SQLITE_FLOAT) return edn::Value::Float(st.ColumnDouble(oc.col));
      return edn::Value::Int(st.ColumnInt(oc.col));
    }
    if (t == VT::kDouble) return edn::Value::Float(st.ColumnDouble(oc.col));
    if (t == VT::kString && ct == SQLITE_TEXT)
      return edn::Value::String(std::string(st.ColumnText(oc.col)));
    if (t == VT::kKeyword && ct == SQLITE_TEXT) {
      std::string_view k = st.ColumnText(oc.col);  // stored as ":ns/name"
      if (!k.empty() && k[0] == ':') k.remove_prefix(1);
      return edn::Value::Keyword(k);
    }
    return schema::Decode(schema::Column(st, oc.col), ToValueType(t));
  }
  switch (ct) {
    case SQLITE_INTEGER:
      return edn::Value::Int(st.ColumnInt(oc.col));
    case SQLITE_FLOAT:
      return edn::Value::Float(st.ColumnDouble(oc.col));
    case SQLITE_TEXT:
      return edn::Value::String(std::string(st.ColumnText(oc.col)));
    default:
      return edn::Value::Bytes(std::string(st.ColumnBlob(oc.col)));
  }
}

Result<QueryResult> Execution::Run() {
  MENTAT_ASSIGN_OR_RETURN(auto st, ctx_.conn->Cached(c_.sql));
  MENTAT_RETURN_IF_ERROR(Bind(*st, c_.main, main_rels_));
  for (const Stratum& s : c_.strata)
    if (s.in_query) MENTAT_RETURN_IF_ERROR(BindCte(*st, s, true));
  std::vector<std::vector<edn::Value>> rows;
  const bool cpp = c_.cpp_mode;
  // A scalar or tuple find keeps the first row of the SQL (which orders and limits): no
  // step after it. The statement then stays active until Run returns, and with it its read
  // transaction, which the pulls of Project share (StoreImpl::Read, ReadKind::kAutocommit).
  const bool first_row = !cpp && (q_.find_kind == ParsedQuery::FindKind::kScalar ||
                                  q_.find_kind == ParsedQuery::FindKind::kTuple);
  // pull_in_query: each row of the one result is a datom of its pulled entity.
  const bool pulled = first_row && c_.pull_elem >= 0;
  pulled_.clear();
  pulled_read_ = pulled;
  Entid last_a = -1;
  ValueType last_type = ValueType::kLong;
  const int entity_col = pulled ? c_.find[static_cast<size_t>(c_.pull_elem)].out.col : -1;
  for (;;) {
    auto step = st->Step();
    if (!step.ok()) return intr_.Translate(step.status());
    if (!*step) break;
    if (pulled && st->ColumnType(c_.pull_col) != SQLITE_NULL) {
      const Entid a = st->ColumnInt(c_.pull_col);
      if (a != last_a) {
        const Attribute* attr = ctx_.schema->attribute(a);
        last_type = attr ? attr->type : ValueType::kLong;
        last_a = a;
      }
      pulled_.push_back(PulledDatom{st->ColumnInt(entity_col), a,
                                    schema::ColumnValue(*st, c_.pull_col + 1, last_type)});
    }
    if (pulled && !rows.empty()) {
      if ((pulled_.size() & 4095) == 0) MENTAT_RETURN_IF_ERROR(intr_.Check());
      continue;
    }
    std::vector<edn::Value> row;
    if (cpp) {
      row.reserve(c_.row_vars.size());
      for (const OutCol& oc : c_.row_vars) row.push_back(Decode(*st, oc));
    } else {
      row.reserve(c_.find.size());
      for (const ProjElem& pe : c_.find) row.push_back(Decode(*st, pe.out));
    }
    rows.push_back(std::move(row));
    if (first_row && !pulled) break;
    if ((rows.size() & 4095) == 0) MENTAT_RETURN_IF_ERROR(intr_.Check());
  }
  return Project(std::move(rows));
}

}  // namespace mentat::query
