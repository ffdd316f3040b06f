// The compile driver: inputs, analysis, projection (what the SELECT returns, where
// aggregation happens), planning and SQL for the main query and the rule units.
#include <algorithm>

#include "query/analyze.h"
#include "query/passes.h"
#include "query/relation.h"
#include "storage/sqlite_api.h"

namespace mentat::query {

namespace {

constexpr size_t kMaxCteSelects = 400;  // SELECTs of one WITH RECURSIVE statement
const std::set<std::string> kSqlAggs = {"count", "count-distinct", "sum", "avg", "min", "max"};
const std::set<std::string> kAggs = {
    "count",  "count-distinct", "sum",    "avg",      "min",    "max",
    "median", "variance",       "stddev", "distinct", "sample", "rand"};

// True unless every row of block 0 is provably unique over `projected` (so SELECT
// DISTINCT can be skipped): each pattern's datom key [e a v] is projected or functionally
// determined (cardinality-one e -> v, unique v -> e), each input relation is a set.
bool NeedsDistinct(const Unit& u, const AnalyzeEnv& env, std::set<std::string> f) {
  const Block& b = u.blocks[0];
  f.insert(b.bound_on_entry.begin(), b.bound_on_entry.end());
  for (int id : b.items) {
    const Item& it = u.items[id];
    if (it.kind == Item::Kind::kRel) {
      if (it.plan.binds.size() < static_cast<size_t>(env.out->rels[it.rel].arity)) return true;
      continue;
    }
    if (it.kind == Item::Kind::kComposite && it.exists_filter) continue;  // a test adds no row
    if (it.kind != Item::Kind::kPattern) return true;
    auto sh = env.sources.find(it.plan.src);
    if (sh != env.sources.end() && sh->second.history) return true;
  }
  auto in = [&](PlanInfo::Pos pos, const std::string& v) {
    return pos == PlanInfo::Pos::kConst || (pos == PlanInfo::Pos::kVar && f.count(v));
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (int id : b.items) {
      const PlanInfo& p = u.items[id].plan;
      if (u.items[id].kind != Item::Kind::kPattern || p.attr < 0) continue;
      const Attribute* a = env.schema->attribute(p.attr);
      if (!a) continue;
      if (in(p.e, p.e_var) && !a->many && p.v == PlanInfo::Pos::kVar && !f.count(p.v_var))
        changed = f.insert(p.v_var).second || changed;
      if (in(p.v, p.v_var) && a->unique != Unique::kNone && p.e == PlanInfo::Pos::kVar &&
          !f.count(p.e_var))
        changed = f.insert(p.e_var).second || changed;
    }
  }
  for (int id : b.items) {
    const Item& it = u.items[id];
    const PlanInfo& p = it.plan;
    if (it.kind == Item::Kind::kComposite) continue;  // a test (above)
    if (it.kind == Item::Kind::kRel) {
      for (const auto& v : p.binds)
        if (!f.count(v)) return true;
      continue;
    }
    const Attribute* a = p.attr >= 0 ? env.schema->attribute(p.attr) : nullptr;
    bool e_ok = in(p.e, p.e_var) || (a && a->unique != Unique::kNone && in(p.v, p.v_var));
    bool a_ok = p.attr >= 0 || in(p.a, p.a_var);
    bool v_ok = in(p.v, p.v_var) || (p.v == PlanInfo::Pos::kFree && a && !a->many && e_ok);
    if (!e_ok || !a_ok || !v_ok) return true;
  }
  return false;
}

struct Projector {
  Analyzer& a;
  const Analyzer::Scope& top;
  Compiled* out;
  std::vector<Expr> cols;
  std::map<std::string, OutCol> var_cols;

  OutCol AddBind(const VarBind& b) {
    OutCol oc;
    oc.type = b.type;
    if (b.type == VT::kTuple) {
      for (const VarBind& p : b.parts) oc.parts.push_back(AddBind(p));
      return oc;
    }
    oc.col = static_cast<int>(cols.size());
    cols.push_back(b.sql);
    if (b.type == VT::kDynamic) {
      oc.attr_col = static_cast<int>(cols.size());
      cols.push_back(b.attr);
    }
    if (b.type == VT::kAny) {
      oc.slot = b.slot;
      if (b.slot < 0) oc.type = VT::kNumeric;
    }
    return oc;
  }

  Result<OutCol> AddVar(const std::string& var, const edn::Value& form, const char* where) {
    auto it = var_cols.find(var);
    if (it != var_cols.end()) return it->second;
    const VarBind* b = a.Lookup(top, var);
    if (!b)
      return ClauseError(Code::kInvalidArgument, form, "unbound variable " + var + " in " + where);
    OutCol oc = AddBind(*b);
    var_cols[var] = oc;
    return oc;
  }
};

void CollectCols(const OutCol& oc, std::vector<int>* out) {
  if (oc.col >= 0) out->push_back(oc.col);
  if (oc.attr_col >= 0) out->push_back(oc.attr_col);
  for (const auto& p : oc.parts) CollectCols(p, out);
}

int FirstCol(const OutCol& oc) {
  if (oc.col >= 0) return oc.col;
  return oc.parts.empty() ? 0 : FirstCol(oc.parts[0]);
}

// The rank edn::Compare gives a value of type t (edn/value.cc Rank): numbers (refs
// included) share one, so SQLite's numeric order within it is the EDN order.
int ValueRank(ValueType t) {
  switch (t) {
    case ValueType::kBoolean:
      return 1;
    case ValueType::kString:
      return 6;
    case ValueType::kKeyword:
      return 7;
    case ValueType::kInstant:
      return 12;
    case ValueType::kUuid:
      return 13;
    case ValueType::kBytes:
      return 14;
    case ValueType::kBigInt:
      return 3;
    case ValueType::kBigDec:
      return 4;
    case ValueType::kSymbol:
      return 8;
    case ValueType::kUri:
      return 15;
    case ValueType::kTuple:
      return 9;  // a vector
    default:
      return 2;
  }
}

// ORDER BY terms giving result column `oc` the order of edn::Compare, the one total order
// over values: keywords by namespace then name (COLLATE mentat_named); a value of
// per-row type (kDynamic) by its type's rank first, then within the rank. `wrapped`
// says the terms read the columns by name (c0, c1...) from a subquery; otherwise a
// static column is named by position. Sets *needs_wrap when the terms need names.
std::string OrderTerms(const OutCol& oc, bool desc, const Schema& schema, const Dialect& dialect,
                       bool wrapped, bool* needs_wrap) {
  std::string dir = desc ? " DESC" : "";
  int col = FirstCol(oc);
  std::string name = wrapped ? "c" + std::to_string(col) : std::to_string(col + 1);
  if (oc.type == VT::kKeyword || oc.type == VT::kSymbol) {
    // A position names a column only alone: an expression over it needs the name.
    if (!wrapped && dialect.NamedOrderIsExpression()) {
      *needs_wrap = true;
      return name + dir;
    }
    return dialect.NamedOrder(name) + dir;
  }
  if (oc.type != VT::kDynamic || oc.attr_col < 0 || oc.col < 0) return name + dir;
  *needs_wrap = true;
  if (!wrapped) return name + dir;
  std::string a = "c" + std::to_string(oc.attr_col);
  std::string rank = "(CASE " + a;
  std::string keywords;
  for (const auto& [id, attr] : schema.attributes()) {
    int r = ValueRank(attr.type);
    if (r != 2) rank += " WHEN " + std::to_string(id) + " THEN " + std::to_string(r);
    if (attr.type == ValueType::kKeyword || attr.type == ValueType::kSymbol)
      keywords += (keywords.empty() ? "" : ", ") + std::to_string(id);
  }
  for (ValueType t : {ValueType::kBoolean, ValueType::kString, ValueType::kKeyword,
                      ValueType::kInstant, ValueType::kUuid, ValueType::kBytes, ValueType::kBigInt,
                      ValueType::kBigDec, ValueType::kSymbol, ValueType::kUri})
    rank += " WHEN " + std::to_string(TypeCode(t)) + " THEN " + std::to_string(ValueRank(t));
  rank += " ELSE 2 END)";
  keywords += (keywords.empty() ? "" : ", ") + std::to_string(TypeCode(ValueType::kKeyword)) +
              ", " + std::to_string(TypeCode(ValueType::kSymbol));
  std::string is_kw = a + " IN (" + keywords + ")";
  return rank + dir + ", (CASE WHEN " + is_kw + " THEN NULL ELSE " + name + " END)" + dir + ", " +
         dialect.NamedOrder("(CASE WHEN " + is_kw + " THEN " + name + " END)") + dir;
}

}  // namespace

Status CompileProjection(const ParsedQuery& q, Analyzer& a, const Analyzer::Scope& top,
                         AnalyzeEnv* env, bool pin, std::string* sql);

namespace {

Status Inputs(const ParsedQuery& q, Analyzer& a, Analyzer::Scope* top, AnalyzeEnv* env,
              const std::vector<size_t>& input_sizes) {
  Compiled* out = env->out;
  std::set<std::string> seen;
  int pos = 0;
  auto var_ok = [&](const std::string& v, const edn::Value& form) -> Status {
    if (v == "_") return Status::OK();
    if (!seen.insert(v).second)
      return ClauseError(Code::kInvalidArgument, form, "variable " + v + " appears twice in :in");
    return Status::OK();
  };
  for (size_t i = 0; i < q.in.size(); ++i) {
    const InSpec& in = q.in[i];
    if (in.kind == InSpec::Kind::kSrc && in.name == "$" && i == 0) continue;
    int input = pos++;
    out->input_rel.push_back(-1);
    switch (in.kind) {
      case InSpec::Kind::kSrc:
        if (!env->sources.count(in.name))
          return ClauseError(Code::kInvalidArgument, in.form,
                             "no database given for source " + in.name);
        break;
      case InSpec::Kind::kRules:
      case InSpec::Kind::kBlank:
        break;
      case InSpec::Kind::kScalar:
      case InSpec::Kind::kTuple: {
        std::vector<std::string> vars =
            in.kind == InSpec::Kind::kScalar ? std::vector<std::string>{in.name} : in.vars;
        for (size_t k = 0; k < vars.size(); ++k) {
          MENTAT_RETURN_IF_ERROR(var_ok(vars[k], in.form));
          if (vars[k] == "_") continue;
          Slot slot;
          slot.input = input;
          if (in.kind == InSpec::Kind::kTuple) slot.path.push_back(static_cast<int>(k));
          slot.var = vars[k];
          slot.form = in.form;
          int sid = static_cast<int>(out->slots.size());
          out->slots.push_back(slot);
          out->input_var_slot[vars[k]] = sid;
          VarBind b;
          Param p;
          p.kind = Param::Kind::kInput;
          p.slot = sid;
          b.sql = a.unit()->ParamRef(std::move(p));
          b.type = VT::kAny;
          b.slot = sid;
          top->vars[vars[k]] = b;
          a.unit()->blocks[0].bound_on_entry.insert(vars[k]);
        }
        break;
      }
      case InSpec::Kind::kColl:
      case InSpec::Kind::kRel: {
        RelSpec spec;
        spec.kind = RelSpec::Kind::kInput;
        spec.input = input;
        spec.coll = in.kind == InSpec::Kind::kColl;
        spec.arity = static_cast<int>(in.vars.size());
        if (spec.arity > 32)
          return ClauseError(Code::kUnsupported, in.form,
                             "relation inputs have at most 32 columns");
        spec.size_hint = input < static_cast<int>(input_sizes.size())
                             ? static_cast<double>(input_sizes[input])
                             : 100;
        int rel = static_cast<int>(out->rels.size());
        for (size_t k = 0; k < in.vars.size(); ++k) {
          MENTAT_RETURN_IF_ERROR(var_ok(in.vars[k], in.form));
          Slot slot;
          slot.input = input;
          slot.rel = rel;
          slot.column = static_cast<int>(k);
          slot.var = in.vars[k];
          slot.form = in.form;
          spec.slots.push_back(static_cast<int>(out->slots.size()));
          out->slots.push_back(slot);
        }
        out->rels.push_back(spec);
        out->input_rel.back() = rel;
        MENTAT_RETURN_IF_ERROR(a.RelItem(rel, in.vars, in.form, top));
        break;
      }
    }
  }
  out->input_count = pos;
  return Status::OK();
}

Status CompileOnce(const ParsedQuery& q, AnalyzeEnv* env, const std::vector<size_t>& input_sizes,
                   bool pin, std::string* sql) {
  Analyzer a(env, &env->out->main);
  a.NewBlock(false);
  Analyzer::Scope top;
  top.block = 0;
  MENTAT_RETURN_IF_ERROR(Inputs(q, a, &top, env, input_sizes));
  MENTAT_RETURN_IF_ERROR(a.Conjunction(q.where, &top));
  a.FinishBlock(top);
  return CompileProjection(q, a, top, env, pin, sql);
}

}  // namespace

Status CompileProjection(const ParsedQuery& q, Analyzer& a, const Analyzer::Scope& top,
                         AnalyzeEnv* env, bool pin, std::string* sql) {
  Compiled* out = env->out;
  Projector pr{a, top, out, {}, {}};
  bool has_agg = false, has_the = false, cpp = false;
  int minmax = 0;
  for (const FindElem& f : q.find) {
    if (f.kind == FindElem::Kind::kThe) has_the = true;
    if (f.kind != FindElem::Kind::kAgg) continue;
    has_agg = true;
    if (!kAggs.count(f.fn))
      return ClauseError(Code::kInvalidArgument, f.form, "unknown aggregate " + f.fn);
    bool nform = f.args.size() == 2;
    if (f.args.size() > 2 ||
        (nform && !(f.fn == "min" || f.fn == "max" || f.fn == "sample" || f.fn == "rand")))
      return ClauseError(Code::kInvalidArgument, f.form,
                         "wrong number of arguments to aggregate " + f.fn);
    if ((f.fn == "sample" || f.fn == "rand") && !nform && f.fn == "sample")
      return ClauseError(Code::kInvalidArgument, f.form, "expected (sample n ?x)");
    bool n_input = nform && f.args[0].is_var() && out->input_var_slot.count(f.args[0].name) &&
                   out->slots[static_cast<size_t>(out->input_var_slot.at(f.args[0].name))].rel < 0;
    if (nform && ((!n_input && (!f.args[0].is_const() || !f.args[0].value.is_int() ||
                                f.args[0].value.as_int() < 0)) ||
                  !f.args[1].is_var()))
      return ClauseError(Code::kInvalidArgument, f.form,
                         "expected (" + f.fn +
                             " n ?x) with a non-negative integer n (a number or a scalar input)");
    if (!nform && (f.fn == "min" || f.fn == "max")) ++minmax;
    const VarBind* b = a.Lookup(top, f.var);
    if (!b)
      return ClauseError(Code::kInvalidArgument, f.form, "unbound variable " + f.var + " in :find");
    bool sqlable = kSqlAggs.count(f.fn) && !nform && b->type != VT::kTuple;
    if ((f.fn == "sum" || f.fn == "avg") &&
        !(b->type == VT::kLong || b->type == VT::kDouble || b->type == VT::kFloat))
      sqlable = false;
    if ((f.fn == "min" || f.fn == "max") && (!IsStatic(b->type) || b->type == VT::kBoolean))
      sqlable = false;
    if (!sqlable) cpp = true;
  }
  // A value typed per row is selected with its attribute column, which SQL would group
  // and count apart ("x" of :a/b and "x" of :a/c): such aggregates run over decoded rows.
  for (const FindElem& f : q.find) {
    if (!has_agg || f.var.empty()) continue;
    const VarBind* b = a.Lookup(top, f.var);
    if (b && (b->type == VT::kDynamic || b->type == VT::kAny)) cpp = true;
  }
  if (has_the) {
    if (minmax != 1)
      return ClauseError(Code::kInvalidArgument, q.form,
                         "(the ?x) needs exactly one (min ?x) or (max ?x) in :find");
    cpp = true;
  }
  // Limit and offset from inputs.
  for (auto [var, slot] :
       {std::pair{q.limit_var, &out->limit_slot}, std::pair{q.offset_var, &out->offset_slot}}) {
    if (var.empty()) continue;
    auto it = out->input_var_slot.find(var);
    if (it == out->input_var_slot.end())
      return ClauseError(Code::kInvalidArgument, q.form,
                         var + " in :limit/:offset must be a scalar input");
    *slot = it->second;
  }
  out->limit = q.limit;
  out->offset = q.offset;
  // Find elements.
  std::set<std::string> projected;
  for (const FindElem& f : q.find) {
    ProjElem pe;
    pe.kind = f.kind;
    pe.name = edn::Print(f.form);
    pe.fn = f.fn;
    if (f.kind == FindElem::Kind::kAgg && f.args.size() == 2) {
      if (f.args[0].is_var())
        pe.n_slot = out->input_var_slot.at(f.args[0].name);
      else
        pe.n = f.args[0].value.as_int();
    }
    if (f.kind == FindElem::Kind::kPull) {
      pe.pull_src = f.src;
      pe.pattern = f.pattern;
      if (!f.pattern_var.empty()) {
        auto it = out->input_var_slot.find(f.pattern_var);
        if (it == out->input_var_slot.end())
          return ClauseError(Code::kInvalidArgument, f.form,
                             "pull pattern " + f.pattern_var + " must be a scalar input");
        pe.pattern_slot = it->second;
      }
      if (f.src != "$" && !env->sources.count(f.src))
        return ClauseError(Code::kInvalidArgument, f.form, "unknown source " + f.src);
    }
    MENTAT_ASSIGN_OR_RETURN(pe.out, pr.AddVar(f.var, f.form, ":find"));
    projected.insert(f.var);
    out->find.push_back(std::move(pe));
  }
  for (const auto& w : q.with) {
    MENTAT_RETURN_IF_ERROR(pr.AddVar(w, q.form, ":with").status());
    projected.insert(w);
  }
  // Ordering: find elements, or (without aggregates) other variables.
  std::vector<std::pair<OutCol, bool>> order_cols;
  for (const OrderItem& o : q.order) {
    int idx = o.find_index;
    if (idx < 0)
      for (size_t i = 0; i < q.find.size(); ++i)
        if (q.find[i].kind != FindElem::Kind::kAgg && q.find[i].var == o.var)
          idx = static_cast<int>(i);
    if (idx < 0 && (has_agg || cpp))
      return ClauseError(Code::kInvalidArgument, o.form,
                         ":order variable " + o.var + " must be in :find when aggregating");
    if (idx >= 0) {
      out->order.push_back({idx, o.desc});
      if (!has_agg) order_cols.push_back({out->find[idx].out, o.desc});
    } else {
      MENTAT_ASSIGN_OR_RETURN(OutCol oc, pr.AddVar(o.var, o.form, ":order"));
      projected.insert(o.var);
      order_cols.push_back({oc, o.desc});
    }
  }
  // The SQL removes duplicate rows unless distinct_elimination (after the other passes,
  // which place or / rule calls) finds every row unique.
  out->distinct = true;
  // Aggregates that duplicate rows cannot change (count-distinct, min, max), alone with
  // the grouping elements, need no DISTINCT below them: SQL's own aggregate sees the bag.
  if (has_agg && !cpp && q.with.empty()) {
    bool insensitive = true;
    for (const FindElem& f : q.find)
      if (f.kind == FindElem::Kind::kAgg && f.fn != "count-distinct" && f.fn != "min" &&
          f.fn != "max")
        insensitive = false;
    if (insensitive) out->distinct = false;
  }
  bool single =
      q.find_kind == ParsedQuery::FindKind::kScalar || q.find_kind == ParsedQuery::FindKind::kTuple;
  auto limit_sql = [&](bool force_one) {
    std::string s;
    if (out->limit || out->limit_slot >= 0 || force_one) {
      std::string n =
          out->limit ? std::to_string(*out->limit)
                     : (out->limit_slot >= 0
                            ? "?" + std::to_string(out->main.AddParam(Param{Param::Kind::kInput,
                                                                            {},
                                                                            out->limit_slot,
                                                                            VT::kLong,
                                                                            "$",
                                                                            false,
                                                                            {}}))
                            : "1");
      s += " LIMIT " + n;
    } else if (out->offset || out->offset_slot >= 0) {
      s += " LIMIT -1";
    }
    if (out->offset || out->offset_slot >= 0) {
      std::string n =
          out->offset
              ? std::to_string(*out->offset)
              : "?" + std::to_string(out->main.AddParam(Param{
                          Param::Kind::kInput, {}, out->offset_slot, VT::kLong, "$", false, {}}));
      s += " OFFSET " + n;
    }
    return s;
  };
  // agg_pushdown (agg_pushdown.cc), before the join order so that the planner sees the
  // counted pattern as the small relation it becomes.
  std::string pushed;
  if (has_agg && !cpp && q.with.empty() &&
      PassEnabled("agg_pushdown", env->use_planner, env->disabled_passes)) {
    int aggs = 0, counted = -1;
    bool plain = true;
    for (size_t i = 0; i < q.find.size(); ++i) {
      if (q.find[i].kind == FindElem::Kind::kAgg) {
        ++aggs;
        if (q.find[i].fn == "count" && q.find[i].args.size() == 1) counted = static_cast<int>(i);
      } else if (q.find[i].kind != FindElem::Kind::kVar) {
        plain = false;
      }
    }
    ProjElem* pe = counted >= 0 ? &out->find[static_cast<size_t>(counted)] : nullptr;
    bool own_col = pe && pe->out.col >= 0 && pe->out.attr_col < 0;
    for (size_t i = 0; own_col && i < out->find.size(); ++i)
      if (static_cast<int>(i) != counted && out->find[i].out.col == pe->out.col) own_col = false;
    Expr count_col, extra_col;
    if (aggs == 1 && plain && own_col) {
      if (auto what = PushCountBelowJoin(&out->main, *env, q.find[static_cast<size_t>(counted)].var,
                                         &count_col, &extra_col)) {
        pr.cols[static_cast<size_t>(pe->out.col)] = count_col;
        pr.cols.push_back(extra_col);
        pe->summed = true;
        out->distinct = true;
        pushed = *what;
      }
    }
  }
  // The optimizer (passes.h).
  PassTarget target{&out->main, env, &out->rels, false, &out->cached_attrs};
  out->pass_reports = RunPasses(target, env->use_planner, env->disabled_passes);
  std::string unique;
  if (out->distinct && pushed.empty() &&
      PassEnabled("distinct_elimination", env->use_planner, env->disabled_passes) &&
      !NeedsDistinct(out->main, *env, projected)) {
    out->distinct = false;
    unique = "every row unique by the found variables: no DISTINCT";
  }
  for (PassReport& rep : out->pass_reports) {
    if (rep.name == "agg_pushdown" && !pushed.empty()) rep.changes.push_back(pushed);
    if (rep.name == "distinct_elimination" && !unique.empty()) rep.changes.push_back(unique);
  }
  if (cpp) {
    // C++ aggregates: the SQL returns the distinct rows of the variables involved.
    out->cpp_mode = true;
    std::vector<std::string> needed;
    for (const FindElem& f : q.find) needed.push_back(f.var);
    for (const auto& w : q.with) needed.push_back(w);
    std::map<std::string, int> index;
    for (const auto& v : needed) {
      if (index.count(v)) continue;
      index[v] = static_cast<int>(out->row_vars.size());
      out->row_vars.push_back(pr.var_cols[v]);
    }
    for (size_t i = 0; i < q.find.size(); ++i) {
      out->find[i].var_index = index[q.find[i].var];
      if (q.find[i].kind == FindElem::Kind::kVar || q.find[i].kind == FindElem::Kind::kPull)
        out->group_elems.push_back(static_cast<int>(i));
    }
    *sql = EmitSelect(out->main, 0, SelectSpec{pr.cols, out->distinct, "", ""}, pin);
    return Status::OK();
  }
  std::string inner = EmitSelect(out->main, 0, SelectSpec{pr.cols, out->distinct, "", ""}, pin);
  if (!has_agg) {
    std::string order;
    bool wrap = false;
    for (const auto& [oc, desc] : order_cols)
      order += (order.empty() ? " ORDER BY " : ", ") +
               OrderTerms(oc, desc, *env->schema, *env->dialect, false, &wrap);
    if (wrap) {
      order.clear();
      for (const auto& [oc, desc] : order_cols)
        order += (order.empty() ? " ORDER BY " : ", ") +
                 OrderTerms(oc, desc, *env->schema, *env->dialect, true, &wrap);
      inner = "SELECT * FROM (" + inner + ")";
    }
    // Values typed per row are selected with their attribute columns, so SQL cannot see
    // the duplicates the decoded result drops (project.cc): limit after decoding.
    bool per_row = false;
    for (const ProjElem& pe : out->find) per_row = per_row || TypedByAttrColumn(pe.out);
    if (per_row && !single &&
        (out->limit || out->limit_slot >= 0 || out->offset || out->offset_slot >= 0)) {
      out->limit_after_decode = true;
      *sql = inner + order;
      return Status::OK();
    }
    *sql = inner + order + limit_sql(single);
    return Status::OK();
  }
  // SQL aggregates over the distinct rows.
  std::vector<std::string> outer, group;
  for (size_t i = 0; i < q.find.size(); ++i) {
    ProjElem& pe = out->find[i];
    if (pe.kind != FindElem::Kind::kAgg) {
      std::vector<int> cs;
      CollectCols(pe.out, &cs);
      for (int c : cs) group.push_back("c" + std::to_string(c));
      pe.out = ReadByName(pe.out, "", &outer);
      continue;
    }
    std::string c = "c" + std::to_string(pe.out.col);
    // min/max of keywords by namespace, then name (edn::Compare's order).
    const bool named = pe.out.type == VT::kKeyword || pe.out.type == VT::kSymbol;
    std::string e = pe.summed                          ? "sum(" + c + ")"
                    : pe.fn == "count"                 ? "count(*)"
                    : pe.fn == "count-distinct"        ? "count(DISTINCT " + c + ")"
                    : named                            ? env->dialect->NamedAggregate(pe.fn, c)
                    : pe.fn == "sum" || pe.fn == "avg" ? env->dialect->NumberAggregate(pe.fn, c)
                                                       : pe.fn + "(" + c + ")";
    VT t = pe.out.type;
    pe.out = OutCol();
    pe.out.col = static_cast<int>(outer.size());
    pe.out.type = (pe.fn == "count" || pe.fn == "count-distinct") ? VT::kLong
                  : pe.fn == "avg"                                ? VT::kDouble
                                                                  : t;
    outer.push_back(e);
  }
  std::string list;
  for (size_t i = 0; i < outer.size(); ++i) list += (i ? ", " : "") + outer[i];
  std::string s = "SELECT " + list + " FROM (" + inner + ")";
  if (!group.empty()) {
    s += " GROUP BY ";
    for (size_t i = 0; i < group.size(); ++i) s += (i ? ", " : "") + group[i];
  } else {
    s += " HAVING count(*) > 0";
  }
  std::string order;
  bool wrap_unused = false;
  for (const auto& [idx, desc] : out->order) {
    OutCol oc = out->find[idx].out;
    if (oc.type == VT::kDynamic) oc.type = VT::kAny;  // grouped: not renamed, SQL's order
    order += (order.empty() ? " ORDER BY " : ", ") +
             OrderTerms(oc, desc, *env->schema, *env->dialect, false, &wrap_unused);
  }
  *sql = s + order + limit_sql(single);
  return Status::OK();
}

bool CteEligible(const Compiled& out, const Stratum& st) {
  bool starts = false;
  for (int r : st.rule_rels) starts = starts || out.rule_rels[r].magic;
  for (int u : st.units) {
    const RuleClauseUnit& cu = out.rule_units[u];
    int reads = 0;
    for (const Item& item : cu.unit.items) {
      if (item.kind != Item::Kind::kRel || item.rel < 0) continue;
      const RelSpec& rs = out.rels[item.rel];
      if (rs.kind != RelSpec::Kind::kRule ||
          out.rule_rels[rs.rule_rel].stratum != out.rule_rels[cu.head_rel].stratum)
        continue;
      const auto& top = cu.unit.blocks[0].items;
      if (std::find(top.begin(), top.end(), item.id) == top.end()) return false;
      ++reads;
    }
    // A relation read twice (non-linear) or from a subquery is not a recursive SELECT.
    if (reads > 1) return false;
    // Read elsewhere than through its items (an EXISTS over a branch) it would be found
    // above; a unit whose relation param is used otherwise is not expected.
    if (reads == 0) starts = true;
  }
  return starts;
}

namespace {

// The recursive SELECTs `recursive` (a UNION of SELECTs, each reading the recursive table
// once as `mentat_rec AS t<n>`) as one SELECT that reads it once, for an engine whose
// recursive term may (Dialect::SingleRecursiveReference): each row of the table, as
// `mentat_self`, feeds every SELECT through LATERAL, in which the table's alias becomes
// that one row. Semi-naive still: each SELECT reads one relation of the stratum, so
// joining it with the last step's rows finds every new row.
std::string OneRecursiveTerm(const std::string& recursive, int width) {
  std::string row = "(SELECT mentat_self.k AS k";
  for (int j = 0; j < width; ++j)
    row += ", mentat_self.c" + std::to_string(j) + " AS c" + std::to_string(j);
  row += ")";
  std::string arms;
  const std::string table = "mentat_rec AS t";
  for (size_t at = 0;;) {
    size_t hit = recursive.find(table, at);
    arms += recursive.substr(at, hit == std::string::npos ? std::string::npos : hit - at);
    if (hit == std::string::npos) break;
    arms += row + " AS t";
    at = hit + table.size();
  }
  return "SELECT mentat_step.* FROM mentat_rec AS mentat_self CROSS JOIN LATERAL (" + arms +
         ") AS mentat_step";
}

// Assembles a stratum's WITH RECURSIVE statement from its units' SQL (compile.cc above):
// the SELECTs that read no relation of the stratum and the seeds first, then the others.
void BuildCteImpl(Compiled* out, Stratum* st, int width) {
  const Dialect& dialect = *out->main.dialect;
  std::string initial, recursive;
  int recursive_reads = 0;
  int offset = 0;
  st->unit_offsets.clear();
  st->seeds.clear();
  for (int u : st->units) {
    const RuleClauseUnit& cu = out->rule_units[u];
    st->unit_offsets.push_back(offset);
    std::string sql = ShiftParams(cu.sql, offset);
    offset += static_cast<int>(cu.unit.params.size());
    bool rec = sql.find("mentat_rec AS t") != std::string::npos;
    for (size_t at = 0; (at = sql.find("mentat_rec AS t", at)) != std::string::npos; ++at)
      ++recursive_reads;
    std::string& dst = rec ? recursive : initial;
    dst += (dst.empty() ? "" : " UNION ") + sql;
  }
  for (int r : st->rule_rels) {
    const RuleRel& rr = out->rule_rels[r];
    if (!rr.magic) continue;
    st->seeds.push_back({r, offset + 1});
    std::string sel = "SELECT " + IntLit(r);
    for (int j = 0; j < width; ++j)
      sel += ", " + (j < rr.arity ? dialect.UnionColumn("?" + std::to_string(offset + 1 + j))
                                  : dialect.UnionNull());
    sel += " WHERE ?" + std::to_string(offset + 1 + rr.arity) + " = 1";
    offset += rr.arity + 1;
    initial += (initial.empty() ? "" : " UNION ") + sel;
  }
  std::string cols = "k";
  for (int j = 0; j < width; ++j) cols += ", c" + std::to_string(j);
  if (recursive_reads > 1 && dialect.SingleRecursiveReference())
    recursive = OneRecursiveTerm(recursive, width);
  st->cte_def = "mentat_rec(" + cols + ") AS (" + initial +
                (recursive.empty() ? "" : " UNION " + recursive) + ")";
  st->cte_params = offset;
  st->cte_sql = "WITH RECURSIVE " + st->cte_def + " SELECT " + cols + " FROM mentat_rec";
}

}  // namespace

void BuildCte(Compiled* out, Stratum* st, int width) { BuildCteImpl(out, st, width); }

OutCol ReadByName(const OutCol& oc, const std::string& qualifier, std::vector<std::string>* outer) {
  OutCol r = oc;
  if (oc.col >= 0) {
    r.col = static_cast<int>(outer->size());
    outer->push_back(qualifier + "c" + std::to_string(oc.col));
  }
  if (oc.attr_col >= 0) {
    r.attr_col = static_cast<int>(outer->size());
    outer->push_back(qualifier + "c" + std::to_string(oc.attr_col));
  }
  for (size_t i = 0; i < oc.parts.size(); ++i)
    r.parts[i] = ReadByName(oc.parts[i], qualifier, outer);
  return r;
}

Result<std::unique_ptr<Compiled>> Compile(const ParsedQuery& q, AnalyzeEnv base,
                                          const std::vector<size_t>& input_sizes) {
  std::map<std::string, std::vector<VT>> hints;
  for (int round = 0;; ++round) {
    // Each round starts afresh (generated rules included), with the rule column types
    // settled by the previous round.
    AnalyzeEnv env = base;
    env.rule_types = hints;
    auto out = std::make_unique<Compiled>();
    env.out = out.get();
    std::string sql;
    MENTAT_RETURN_IF_ERROR(CompileOnce(q, &env, input_sizes, true, &sql));
    MENTAT_ASSIGN_OR_RETURN(bool changed, SettleRuleTypes(&env));
    hints = env.rule_types;
    if (changed && round < 4) continue;
    out->sql = std::move(sql);
    out->main.MarkUsed(out->sql);
    MENTAT_RETURN_IF_ERROR(BuildStrata(out.get()));
    // The recursive_cte pass: which strata become one WITH RECURSIVE statement (several
    // recursive SELECTs in one CTE need SQLite 3.34).
    std::vector<bool> cte(out->strata.size(), false);
    bool cte_on = PassEnabled("recursive_cte", env.use_planner, env.disabled_passes) &&
                  sqlite3_libversion_number() >= 3034000;
    int width = 1;
    for (const RuleRel& rr : out->rule_rels) width = std::max(width, rr.arity);
    for (size_t k = 0; k < out->strata.size() && cte_on; ++k)
      cte[k] = CteEligible(*out, out->strata[k]);
    for (RuleClauseUnit& cu : out->rule_units) {
      int stratum = out->rule_rels[cu.head_rel].stratum;
      for (Item& item : cu.unit.items)
        if (item.kind == Item::Kind::kRel && item.rel >= 0 &&
            out->rels[item.rel].kind == RelSpec::Kind::kRule)
          item.plan.fixed_rows = out->rule_rels[out->rels[item.rel].rule_rel].magic ? 1
                                 : out->rule_rels[out->rels[item.rel].rule_rel].stratum == stratum
                                     ? 10
                                     : 1000;
      // The clause's rewrites are shown with the query's, under the rule's name, and the
      // attributes it reads from caches are prepared with the query's.
      std::vector<Entid> cached;
      PassTarget target{&cu.unit, &env, &out->rels, true, &cached};
      const std::string& rule = out->rule_rels[cu.head_rel].rule;
      for (PassReport& r : RunPasses(target, env.use_planner, env.disabled_passes))
        for (PassReport& top : out->pass_reports)
          if (top.name == r.name && r.name != "join_order")
            for (const std::string& line : r.changes)
              top.changes.push_back("rule " + rule + ": " + line);
      for (Entid a : cached)
        if (std::find(out->cached_attrs.begin(), out->cached_attrs.end(), a) ==
            out->cached_attrs.end())
          out->cached_attrs.push_back(a);
      std::sort(out->cached_attrs.begin(), out->cached_attrs.end());
    }
    // SQLite joins at most 500 SELECTs in one compound (SQLITE_MAX_COMPOUND_SELECT's
    // default): a stratum whose clauses have more arms than kMaxCteSelects runs the loop.
    for (size_t k = 0; k < out->strata.size(); ++k) {
      if (!cte[k]) continue;
      size_t selects = 0;
      for (int u : out->strata[k].units)
        selects += static_cast<size_t>(CountArms(out->rule_units[static_cast<size_t>(u)].unit, 0));
      for (int r : out->strata[k].rule_rels) selects += out->rule_rels[r].magic ? 1 : 0;
      if (selects > kMaxCteSelects) cte[k] = false;
    }
    for (RuleClauseUnit& cu : out->rule_units) {
      int stratum = out->rule_rels[cu.head_rel].stratum;
      SelectSpec spec;
      if (cte[stratum]) {
        // A SELECT of the statement: (its relation, its columns, NULL up to the width);
        // a relation of the stratum is read from the statement's own table.
        spec.columns.push_back(IntLit(cu.head_rel));
        for (Item& item : cu.unit.items) {
          if (item.kind != Item::Kind::kRel || item.rel < 0) continue;
          const RelSpec& rs = out->rels[item.rel];
          if (rs.kind != RelSpec::Kind::kRule || out->rule_rels[rs.rule_rel].stratum != stratum)
            continue;
          item.variants[0].table = "mentat_rec";
          item.variants[0].conds.push_back(
              Expr::Call(Fn::kEq, {Col(item.id, "k"), IntLit(rs.rule_rel)}));
        }
      }
      // In the statement a column without affinity (+x), as mentat_rel's are: a column
      // with INTEGER affinity compared with `v` would keep SQLite off the (a, v) index.
      for (const auto& [name, e] : cu.unit.blocks[0].outputs)
        spec.columns.push_back(cte[stratum] ? cu.unit.dialect->NoAffinity(e) : e);
      if (cte[stratum])
        while (static_cast<int>(spec.columns.size()) < width + 1)
          spec.columns.push_back(cu.unit.dialect->UnionNull());
      spec.distinct = true;
      spec.in_union = cte[stratum];
      cu.sql = EmitSelect(cu.unit, 0, spec, true);
      cu.unit.MarkUsed(cu.sql);
    }
    for (size_t k = 0; k < out->strata.size(); ++k) {
      if (!cte[k]) continue;
      BuildCte(out.get(), &out->strata[k], width);
      std::string names;
      for (int r : out->strata[k].rule_rels)
        names += (names.empty() ? "" : ", ") + out->rule_rels[r].rule;
      for (PassReport& rep : out->pass_reports)
        if (rep.name == "recursive_cte")
          rep.changes.push_back(names + ": one WITH RECURSIVE statement");
    }
    if (PassEnabled("rules_in_query", env.use_planner, env.disabled_passes) &&
        env.dialect->RulesInQuery())
      if (auto change = ReadRulesInQuery(out.get()))
        for (PassReport& rep : out->pass_reports)
          if (rep.name == "rules_in_query") rep.changes.push_back(*change);
    if (PassEnabled("pull_in_query", env.use_planner, env.disabled_passes) &&
        env.dialect->PullInQuery())
      if (auto change = ReadPullInQuery(out.get(), q, env))
        for (PassReport& rep : out->pass_reports)
          if (rep.name == "pull_in_query") rep.changes.push_back(*change);
    out->order_text = DescribeOrder(out->main, 0);
    out->built = std::chrono::steady_clock::now();
    return out;
  }
}

}  // namespace mentat::query
