// Pass 2 (or, not, rules): sub-blocks.
//
// `not`/`not-join` become NOT EXISTS over a correlated block. An `or` whose variables are
// all bound becomes EXISTS over its branches. An `or` that binds new variables is
// distributed over the enclosing block (one UNION arm per branch, so every branch still
// reads index ranges driven by the bindings around it); when that would make too many
// arms it becomes a self-contained UNION subquery joined on its variables. Rules that
// are not recursive are expanded into an or-join of their bodies; recursive rules read
// their derived relation (rules.cc).
#include <algorithm>
#include <functional>

#include "query/analyze.h"

namespace mentat::query {

namespace {

constexpr int kMaxBranchArms = 16;
constexpr int kMaxArms = 64;  // of the enclosing block, with the branches distributed

}  // namespace

std::vector<std::string> Analyzer::OrJoinVars(const Clause& c) const {
  std::vector<std::string> vars;
  if (c.kind == Clause::Kind::kOrJoin) return c.join_vars;
  if (c.kind == Clause::Kind::kRule) {
    for (const Term& t : c.args)
      if (t.is_var() && std::find(vars.begin(), vars.end(), t.name) == vars.end())
        vars.push_back(t.name);
    return vars;
  }
  CollectClauseVars(c, &vars);
  return vars;
}

std::vector<std::string> Analyzer::RequiredVars(const Clause& c) const {
  if (c.kind == Clause::Kind::kOrJoin) return c.required_vars;
  std::vector<std::string> out;
  if (c.kind != Clause::Kind::kRule) return out;
  const std::vector<RuleDef>* defs = env_->FindRule(c.fn);
  if (!defs || defs->empty()) return out;
  size_t required = 0;
  for (const RuleDef& d : *defs) required = std::max(required, d.required);
  for (size_t k = 0; k < required && k < c.args.size(); ++k)
    if (c.args[k].is_var()) out.push_back(c.args[k].name);
  return out;
}

int Analyzer::ArmCount(int block) const {
  int n = 1;
  for (int id : unit_->blocks[block].items) {
    const Item& item = unit_->items[id];
    int k = 0;
    if (item.kind == Item::Kind::kComposite) {
      for (const Variant& v : item.variants) k += ArmCount(v.branch);
    } else {
      k = static_cast<int>(item.variants.size());
    }
    n *= std::max(1, k);
    if (n > 1 << 20) return n;
  }
  return n;
}

void Analyzer::FinishBlock(const Scope& sub) {
  Block& b = unit_->blocks[sub.block];
  for (const auto& [var, items] : sub.providers) {
    auto& dst = b.providers[var];
    dst.insert(dst.end(), items.begin(), items.end());
  }
}

Status Analyzer::NotClause(const Clause& c, Scope* s) {
  std::vector<std::string> join;
  if (c.kind == Clause::Kind::kNotJoin) {
    for (const auto& v : c.join_vars)
      if (!Lookup(*s, v))
        return ClauseError(Code::kInvalidArgument, c.form,
                           "insufficient binding: not-join variable " + v + " is not bound");
    join = c.join_vars;
  } else {
    std::vector<std::string> vars;
    CollectVars(c.body, &vars);
    for (const auto& v : vars)
      if (Lookup(*s, v)) join.push_back(v);
    if (join.empty())
      return ClauseError(Code::kInvalidArgument, c.form,
                         "not with no bound variable (none of its variables is bound)");
  }
  int block = NewBlock(true);
  Scope sub;
  sub.block = block;
  sub.parent = s;
  sub.correlated = true;
  sub.import = std::set<std::string>(join.begin(), join.end());
  sub.src = c.src == "$" ? s->src : c.src;
  for (const auto& v : join) unit_->blocks[block].bound_on_entry.insert(v);
  ++negation_;
  Status st = Conjunction(c.body, &sub);
  --negation_;
  MENTAT_RETURN_IF_ERROR(st);
  FinishBlock(sub);
  AddWhere(s, "NOT EXISTS " + ExistsOf(block));
  return Status::OK();
}

Status Analyzer::OrBranch(const Clause& branch, const std::vector<std::string>& join_vars,
                          Scope* sub) {
  (void)join_vars;
  if (branch.kind == Clause::Kind::kAnd) return Conjunction(branch.body, sub);
  return Conjunction(Clauses{branch}, sub);
}

Status Analyzer::OrClause(const Clause& c, Scope* s, bool as_filter) {
  std::vector<std::string> join = OrJoinVars(c);
  if (as_filter) {
    // Every variable is bound already. When items of this block bind some of them, a
    // composite the planner places either before those items (a producer) or after them
    // (a filter); else, or past the arm budget, a filter.
    bool local = false;
    for (const auto& v : join) local = local || !BoundOutside(*s, v);
    if (local) {
      MENTAT_ASSIGN_OR_RETURN(bool made, OrComposite(c, s, join, true));
      if (made) return Status::OK();
    }
    return OrExists(c, s, join);
  }
  MENTAT_ASSIGN_OR_RETURN(bool made, OrComposite(c, s, join, false));
  if (made) return Status::OK();
  // A self-contained UNION subquery, its branches analyzed again, uncorrelated.
  return OrGenerator(c, s, join);
}

bool Analyzer::BoundOutside(const Scope& s, const std::string& v) const {
  const VarBind* vb = Lookup(s, v);
  if (!vb) return false;
  const std::vector<int>& mine = unit_->blocks[s.block].items;
  for (int d : vb->deps)
    if (std::find(mine.begin(), mine.end(), d) != mine.end()) return false;
  return true;
}

Analyzer::Scope Analyzer::BranchScope(Scope* s, int block, const std::vector<std::string>& join,
                                      const std::string& src, BranchKind kind) {
  Scope sub;
  sub.block = block;
  sub.parent = s;
  sub.correlated = kind != BranchKind::kUnion;
  sub.import = std::set<std::string>(join.begin(), join.end());
  sub.src = src;
  // A spliced branch sees as bound on entry only what is bound outside the enclosing
  // block (the planner adds the variables of the items it places before the composite);
  // an EXISTS test everything bound; a self-contained UNION only constants and inputs.
  for (const auto& v : join) {
    const VarBind* vb = Lookup(*s, v);
    bool entry = kind == BranchKind::kSpliced  ? BoundOutside(*s, v)
                 : kind == BranchKind::kExists ? vb != nullptr
                                               : vb && vb->deps.empty();
    if (entry) unit_->blocks[block].bound_on_entry.insert(v);
  }
  return sub;
}

Status Analyzer::OrExists(const Clause& c, Scope* s, const std::vector<std::string>& join) {
  std::string src = c.src == "$" ? s->src : c.src;
  std::vector<Expr> any;
  for (const Clause& branch : c.body) {
    int block = NewBlock(true);
    Scope sub = BranchScope(s, block, join, src, BranchKind::kExists);
    MENTAT_RETURN_IF_ERROR(OrBranch(branch, join, &sub));
    FinishBlock(sub);
    any.push_back("EXISTS " + ExistsOf(block));
  }
  AddWhere(s, "(" + Expr::Call(Fn::kOr, std::move(any)) + ")");
  return Status::OK();
}

Result<bool> Analyzer::OrComposite(const Clause& c, Scope* s, const std::vector<std::string>& join,
                                   bool all_bound) {
  std::string src = c.src == "$" ? s->src : c.src;
  std::vector<std::string> unbound;
  for (const auto& v : join)
    if (!Lookup(*s, v)) unbound.push_back(v);
  size_t items_before = unit_->items.size(), blocks_before = unit_->blocks.size();
  size_t params_before = unit_->params.size();
  size_t rels_before = env_->out->rels.size(), slots_before = env_->out->slots.size();
  size_t used_before = rule_rels_used_.size();
  auto roll_back = [&]() {
    unit_->items.resize(items_before);
    unit_->blocks.resize(blocks_before);
    unit_->params.resize(params_before);
    env_->out->rels.resize(rels_before);
    env_->out->slots.resize(slots_before);
    rule_rels_used_.resize(used_before);
  };
  std::vector<Scope> subs;
  int arms = 0;
  for (const Clause& branch : c.body) {
    int block = NewBlock(true);
    subs.push_back(BranchScope(s, block, join, src, BranchKind::kSpliced));
    MENTAT_RETURN_IF_ERROR(OrBranch(branch, join, &subs.back()));
    FinishBlock(subs.back());
    arms += ArmCount(block);
    for (const auto& v : unbound)
      if (!subs.back().vars.count(v))
        return ClauseError(
            Code::kInvalidArgument, c.form,
            (c.fn.empty() ? "insufficient binding: an or branch does not bind "
                          : "insufficient binding: rule " + c.fn + " does not bind ") +
                v);
  }
  // Branch types must agree for each new variable.
  std::vector<VT> types(unbound.size());
  bool consistent = true;
  for (size_t i = 0; i < unbound.size(); ++i) {
    types[i] = subs[0].vars[unbound[i]].type;
    for (auto& sub : subs) {
      VT t = sub.vars[unbound[i]].type;
      if (t == VT::kTuple) consistent = false;
      if (t != types[i]) {
        // Different types per branch: decode per row (static types as type codes).
        if (!IsStatic(t) && t != VT::kDynamic) consistent = false;
        if (!IsStatic(types[i]) && types[i] != VT::kDynamic) consistent = false;
        types[i] = VT::kDynamic;
      }
    }
  }
  if (!consistent || arms > kMaxBranchArms || ArmCount(s->block) * arms > kMaxArms) {
    roll_back();
    return false;
  }
  int id = NewItem(Item::Kind::kComposite, c.form, s);
  Item& item = unit_->items[id];
  for (size_t b = 0; b < subs.size(); ++b) {
    Variant v;
    v.branch = subs[b].block;
    for (size_t i = 0; i < unbound.size(); ++i) {
      const VarBind& vb = subs[b].vars[unbound[i]];
      v.cols["j" + std::to_string(i)] = vb.sql;
      if (types[i] == VT::kDynamic) {
        // A static type in this branch: its attribute is any attribute of that type.
        v.cols["j" + std::to_string(i) + "a"] =
            vb.type == VT::kDynamic ? vb.attr : IntLit(TypeCode(ToValueType(vb.type)));
      }
    }
    item.variants.push_back(std::move(v));
  }
  // What the composite needs placed before it: what a branch item needs that its branch
  // does not bind, and the enclosing block's variables that some branch only tests.
  std::set<int> branch_items;
  for (const Scope& sub : subs)
    for (int i : unit_->blocks[sub.block].items) branch_items.insert(i);
  auto add_need = [&](const std::string& v) {
    if (std::find(item.plan.needs.begin(), item.plan.needs.end(), v) == item.plan.needs.end())
      item.plan.needs.push_back(v);
  };
  for (const Scope& sub : subs) {
    const Block& blk = unit_->blocks[sub.block];
    for (int i : blk.items) {
      const PlanInfo& p = unit_->items[i].plan;
      for (const auto& v : p.needs)
        if (!blk.providers.count(v) && !blk.bound_on_entry.count(v) && Lookup(*s, v)) add_need(v);
      for (int a : p.after)
        if (!branch_items.count(a) &&
            std::find(item.plan.after.begin(), item.plan.after.end(), a) == item.plan.after.end())
          item.plan.after.push_back(a);
    }
  }
  // A variable bound by an item of this block: the composite binds it too when every
  // branch has an item binding it (it may then be placed before that item).
  for (const auto& v : join) {
    if (!Lookup(*s, v) || BoundOutside(*s, v)) continue;
    bool everywhere = true;
    for (const Scope& sub : subs)
      everywhere = everywhere && unit_->blocks[sub.block].providers.count(v) > 0;
    if (everywhere) {
      item.plan.binds.push_back(v);
    } else {
      add_need(v);
    }
  }
  if (all_bound) {
    // Until the or_joins pass lets it produce rows, it waits for its variables.
    item.filter_ok = true;
    for (const auto& v : item.plan.binds) {
      item.filter_needs.push_back(v);
      add_need(v);
    }
    return true;
  }
  for (size_t i = 0; i < unbound.size(); ++i) {
    unit_->items[id].plan.binds.push_back(unbound[i]);
    VarBind vb = ViewColumn(id, "j" + std::to_string(i), types[i]);
    if (types[i] == VT::kDynamic) vb.attr = Col(id, "j" + std::to_string(i) + "a");
    MENTAT_RETURN_IF_ERROR(BindOrConstrain(s, unbound[i], std::move(vb), id, c.form));
  }
  return true;
}

Status Analyzer::OrGenerator(const Clause& c, Scope* s, const std::vector<std::string>& join) {
  std::string src = c.src == "$" ? s->src : c.src;
  std::vector<Scope> subs;
  for (size_t b = 0; b < c.body.size(); ++b) {
    int block = NewBlock(false);
    Scope sub = BranchScope(s, block, join, src, BranchKind::kUnion);
    MENTAT_RETURN_IF_ERROR(OrBranch(c.body[b], join, &sub));
    FinishBlock(sub);
    for (const auto& v : join) {
      const VarBind* vb = Lookup(sub, v);
      if (!vb)
        return ClauseError(
            Code::kInvalidArgument, c.form,
            (c.fn.empty() ? "insufficient binding: an or branch does not bind "
                          : "insufficient binding: rule " + c.fn + " does not bind ") +
                v);
      if (vb->type == VT::kTuple)
        return ClauseError(Code::kInvalidArgument, c.form,
                           "tuple variable " + v + " cannot leave an or");
    }
    subs.push_back(std::move(sub));
  }
  // Output types: one static type, or per-row types (an attribute or type code column).
  std::vector<VT> types;
  for (const auto& v : join) {
    VT t = Lookup(subs[0], v)->type;
    for (auto& sub : subs) {
      VT u = Lookup(sub, v)->type;
      if (u == t) continue;
      bool known_t = IsStatic(t) || t == VT::kDynamic, known_u = IsStatic(u) || u == VT::kDynamic;
      t = known_t && known_u ? VT::kDynamic : VT::kNumeric;
    }
    types.push_back(t == VT::kAny ? VT::kNumeric : t);
  }
  Expr table = "(";
  for (size_t b = 0; b < subs.size(); ++b) {
    Block& blk = unit_->blocks[subs[b].block];
    for (size_t i = 0; i < join.size(); ++i) {
      const VarBind* vb = Lookup(subs[b], join[i]);
      blk.outputs.push_back({"j" + std::to_string(i), vb->sql});
      if (types[i] == VT::kDynamic)
        blk.outputs.push_back(
            {"j" + std::to_string(i) + "a",
             vb->type == VT::kDynamic ? vb->attr : IntLit(TypeCode(ToValueType(vb->type)))});
    }
    table += (b ? " UNION " : "") + GeneratorOf(subs[b].block);
  }
  table += ")";
  int id = NewItem(Item::Kind::kGenerator, c.form, s);
  unit_->items[id].variants.push_back(Variant{table, {}, {}, -1});
  unit_->items[id].plan.fixed_rows = 1000;
  for (size_t i = 0; i < join.size(); ++i) {
    unit_->items[id].plan.binds.push_back(join[i]);
    VarBind vb = ViewColumn(id, "j" + std::to_string(i), types[i]);
    if (types[i] == VT::kDynamic) vb.attr = Col(id, "j" + std::to_string(i) + "a");
    MENTAT_RETURN_IF_ERROR(BindOrConstrain(s, join[i], std::move(vb), id, c.form));
  }
  return Status::OK();
}

Result<Clause> Analyzer::ExpandRule(const Clause& call, const Scope& s) {
  (void)s;
  if (!env_->rules)
    return ClauseError(Code::kInvalidArgument, call.form,
                       "unknown rule " + call.fn + " (no rules given with %)");
  const std::vector<RuleDef>* found = env_->FindRule(call.fn);
  if (!found || found->empty())
    return ClauseError(Code::kInvalidArgument, call.form, "unknown rule " + call.fn);
  const auto& defs = *found;
  if (defs[0].params.size() != call.args.size())
    return ClauseError(Code::kInvalidArgument, call.form,
                       "wrong number of arguments to rule " + call.fn + ": expected " +
                           std::to_string(defs[0].params.size()) + ", got " +
                           std::to_string(call.args.size()));
  Clause out;
  out.kind = Clause::Kind::kOrJoin;
  out.form = call.form;
  out.fn = call.fn;  // marks an expanded rule (for messages)
  out.src = call.src;
  std::vector<Term> args = call.args;
  Clauses grounds;
  for (Term& t : args) {
    if (t.is_var()) {
      if (std::find(out.join_vars.begin(), out.join_vars.end(), t.name) == out.join_vars.end())
        out.join_vars.push_back(t.name);
      continue;
    }
    // Constants and blanks become fresh variables (grounded for constants).
    std::string fresh = "?__c" + std::to_string(fresh_++);
    if (t.is_const()) {
      grounds.push_back(BindingClause("ground", t, fresh, call.form));
      out.join_vars.push_back(fresh);
    }
    t = Term::Var(fresh);
  }
  for (const RuleDef& def : defs) {
    std::map<std::string, std::string> rename;
    Clauses unify;  // a parameter written twice in the head: its arguments are equal
    for (size_t i = 0; i < def.params.size(); ++i) {
      auto [it, fresh_param] = rename.emplace(def.params[i], args[i].name);
      if (fresh_param || it->second == args[i].name) continue;
      unify.push_back(BindingClause("identity", Term::Var(it->second), args[i].name, def.form));
    }
    int tag = fresh_++;
    std::function<void(Clause&)> fix = [&](Clause& c) {
      auto ren = [&](std::string& v) {
        if (v.empty() || v[0] != '?') return;
        auto r = rename.find(v);
        if (r == rename.end())
          r = rename.emplace(v, "?__r" + std::to_string(tag) + "_" + v.substr(1)).first;
        v = r->second;
      };
      for (Term& t : c.places)
        if (t.is_var()) ren(t.name);
      for (Term& t : c.args)
        if (t.is_var()) ren(t.name);
      for (auto& v : c.binding.vars) ren(v);
      for (auto& v : c.join_vars) ren(v);
      for (Clause& b : c.body) fix(b);
    };
    Clause branch;
    branch.kind = Clause::Kind::kAnd;
    branch.form = def.form;
    branch.body = grounds;
    for (const Clause& c : def.body) {
      Clause copy = c;
      fix(copy);
      branch.body.push_back(std::move(copy));
    }
    branch.body.insert(branch.body.end(), unify.begin(), unify.end());
    out.body.push_back(std::move(branch));
  }
  return out;
}

Status Analyzer::RuleCall(const Clause& c, Scope* s, bool as_filter) {
  if (env_->recursive.count(c.fn)) return RecursiveRuleCall(c, s);
  if (++rule_depth_ > 64) {
    --rule_depth_;
    return ClauseError(Code::kInvalidArgument, c.form, "rules nest too deeply");
  }
  auto expanded = ExpandRule(c, *s);
  Status st = expanded.ok() ? OrClause(*expanded, s, as_filter && AllBound(*s, expanded->join_vars))
                            : expanded.status();
  --rule_depth_;
  return st;
}

Status Analyzer::RecursiveRuleCall(const Clause& c, Scope* s) {
  const std::vector<RuleDef>* defs = env_->FindRule(c.fn);
  size_t arity =
      defs && !defs->empty() ? (*defs)[0].params.size() : env_->demand.at(c.fn).bound.size();
  if (arity != c.args.size())
    return ClauseError(Code::kInvalidArgument, c.form,
                       "wrong number of arguments to rule " + c.fn + ": expected " +
                           std::to_string(arity) + ", got " + std::to_string(c.args.size()));
  std::string name = c.fn;
  if (!env_->extra.rules.count(c.fn) && (c.src == "$" || c.src == s->src)) {
    // Arguments known before evaluation (constants, inputs) seed a demand rewrite.
    std::vector<int> bound;
    std::vector<SeedVal> seed;
    for (size_t i = 0; i < c.args.size(); ++i) {
      const Term& t = c.args[i];
      SeedVal v;
      if (t.is_const()) {
        v.constant = t.value;
      } else if (const VarBind* vb = t.is_var() ? Lookup(*s, t.name) : nullptr;
                 vb && vb->deps.empty()) {
        if (vb->constant) {
          v.constant = vb->constant;
        } else if (vb->slot >= 0 && env_->out->slots[vb->slot].rel < 0) {
          v.slot = vb->slot;
        }
      }
      if (!v.constant && v.slot < 0) continue;
      bound.push_back(static_cast<int>(i));
      seed.push_back(std::move(v));
    }
    if (!bound.empty() && env_->pass_through) {
      if (auto answer = PassThroughRewrite(c.fn, bound, seed)) {
        Clause call = c;
        call.fn = answer->first;
        call.args.clear();
        for (int f : answer->second) call.args.push_back(c.args[static_cast<size_t>(f)]);
        return RuleCall(call, s, true);
      }
    }
    if (!bound.empty())
      if (auto adorned = DemandRewrite(c.fn, bound, seed)) name = *adorned;
    // Sideways information passing: an argument that clauses of this conjunction find (not
    // known before evaluation) seeds the rewrite with the values those clauses find. Only
    // in the query's own clauses: inside a rule's clause it would rewrite the recursion.
    if (bound.empty() && env_->seed_recursion && unit_ == &env_->out->main) {
      for (size_t i = 0; i < c.args.size() && name == c.fn; ++i) {
        if (!c.args[i].is_var()) continue;
        std::set<std::string> others;
        for (size_t j = 0; j < c.args.size(); ++j)
          if (j != i && c.args[j].is_var()) others.insert(c.args[j].name);
        if (others.count(c.args[i].name)) continue;
        auto seed_body = SeedClauses(*s, c.args[i].name, others);
        if (!seed_body) continue;
        std::vector<int> b{static_cast<int>(i)};
        std::vector<std::string> vars{c.args[i].name};
        if (env_->pass_through) {
          if (auto answer = PassThroughRewrite(c.fn, b, {}, &*seed_body, vars)) {
            Clause call = c;
            call.fn = answer->first;
            call.args = {c.args[i]};
            for (int f : answer->second) call.args.push_back(c.args[static_cast<size_t>(f)]);
            return RuleCall(call, s, true);
          }
        }
        if (auto adorned = DemandRewrite(c.fn, b, {}, &*seed_body, vars)) name = *adorned;
      }
    }
  }
  std::string src = c.src == "$" ? s->src : c.src;
  MENTAT_RETURN_IF_ERROR(SourceShape(src, c.form).status());
  MENTAT_ASSIGN_OR_RETURN(int rr, EnsureRuleRel(name, src));
  RelSpec spec;
  spec.kind = RelSpec::Kind::kRule;
  spec.rule_rel = rr;
  spec.arity = env_->out->rule_rels[rr].arity;
  spec.size_hint = 1000;
  spec.negated = negation_ > 0;
  int rel = static_cast<int>(env_->out->rels.size());
  env_->out->rels.push_back(spec);
  rule_rels_used_.push_back(rel);
  std::vector<std::string> vars;
  for (const Term& t : c.args) vars.push_back(t.is_var() ? t.name : "_");
  size_t first_item = unit_->items.size();
  MENTAT_RETURN_IF_ERROR(RelItem(rel, vars, c.form, s));
  int id = static_cast<int>(first_item);
  for (size_t i = 0; i < c.args.size(); ++i) {
    if (!c.args[i].is_const()) continue;
    VT t = env_->out->rule_rels[rr].types[i];
    MENTAT_ASSIGN_OR_RETURN(Expr x,
                            ConstExpr(c.args[i].value, IsStatic(t) ? t : VT::kAny, src, c.form));
    unit_->items[id].conds.push_back(Expr::Call(Fn::kEq, {Col(id, "c" + std::to_string(i)), x}));
  }
  return Status::OK();
}

}  // namespace mentat::query
