// Rules: which rules are recursive, compiling the clauses of recursive rules into their
// own SQL units, column types, and strata (evaluation order, checked for negation).
//
// Rules that are not recursive are expanded where they are called (clauses.cc).
// Recursive rules are evaluated bottom-up, semi-naively, to a fixpoint (execute_rules.cc):
// every derived relation is a set of finite tuples of values already in the store (or
// constants of the query), so evaluation terminates for any rule set whose rules do not
// compute new values; rules that do (arithmetic in a recursive rule) are stopped by
// interrupt() and :timeout like any query.
#include <algorithm>
#include <functional>

#include "query/analyze.h"

namespace mentat::query {

namespace {

void CallsOf(const Clauses& cs, std::set<std::string>* out) {
  for (const Clause& c : cs) {
    if (c.kind == Clause::Kind::kRule) out->insert(c.fn);
    CallsOf(c.body, out);
  }
}

// Tarjan's strongly connected components over nodes 0..n-1; components come out with
// their dependencies first.
std::vector<std::vector<int>> Components(int n, const std::vector<std::vector<int>>& edges) {
  std::vector<int> index(n, -1), low(n, 0), stack;
  std::vector<bool> on(n, false);
  std::vector<std::vector<int>> out;
  int next = 0;
  std::function<void(int)> visit = [&](int v) {
    index[v] = low[v] = next++;
    stack.push_back(v);
    on[v] = true;
    for (int w : edges[v]) {
      if (index[w] < 0) {
        visit(w);
        low[v] = std::min(low[v], low[w]);
      } else if (on[w]) {
        low[v] = std::min(low[v], index[w]);
      }
    }
    if (low[v] == index[v]) {
      std::vector<int> comp;
      for (;;) {
        int w = stack.back();
        stack.pop_back();
        on[w] = false;
        comp.push_back(w);
        if (w == v) break;
      }
      out.push_back(std::move(comp));
    }
  };
  for (int v = 0; v < n; ++v)
    if (index[v] < 0) visit(v);
  return out;
}

}  // namespace

std::set<std::string> RecursiveRules(const RuleSet& rules) {
  std::vector<std::string> names;
  std::map<std::string, int> id;
  for (const auto& [name, defs] : rules.rules) {
    id[name] = static_cast<int>(names.size());
    names.push_back(name);
  }
  std::vector<std::vector<int>> edges(names.size());
  std::vector<bool> self(names.size(), false);
  for (const auto& [name, defs] : rules.rules) {
    std::set<std::string> calls;
    for (const RuleDef& d : defs) CallsOf(d.body, &calls);
    for (const auto& callee : calls) {
      auto it = id.find(callee);
      if (it == id.end()) continue;
      edges[id[name]].push_back(it->second);
      if (callee == name) self[id[name]] = true;
    }
  }
  std::set<std::string> out;
  for (const auto& comp : Components(static_cast<int>(names.size()), edges))
    if (comp.size() > 1 || self[comp[0]])
      for (int v : comp) out.insert(names[v]);
  return out;
}

Result<int> Analyzer::EnsureRuleRel(const std::string& name, const std::string& src) {
  auto& rrs = env_->out->rule_rels;
  for (size_t i = 0; i < rrs.size(); ++i)
    if (rrs[i].rule == name && rrs[i].source == src) return static_cast<int>(i);
  static const std::vector<RuleDef> kNone;
  const std::vector<RuleDef>* found = env_->FindRule(name);
  const auto& defs = found ? *found : kNone;
  RuleRel rr;
  rr.rule = name;
  rr.source = src;
  auto demand = env_->demand.find(name);
  if (demand != env_->demand.end()) {
    rr.magic = true;
    rr.seed = demand->second.seed;
    rr.arity = static_cast<int>(demand->second.bound.size());
  } else {
    rr.arity = static_cast<int>(defs[0].params.size());
  }
  auto hint = env_->rule_types.find(src + " " + name);
  rr.types = hint != env_->rule_types.end() ? hint->second : std::vector<VT>(rr.arity, VT::kAny);
  rrs.push_back(rr);
  int idx = static_cast<int>(rrs.size()) - 1;
  for (const RuleDef& def : defs) {
    RuleClauseUnit cu;
    cu.head_rel = idx;
    cu.form = def.form;
    Analyzer a(env_, &cu.unit);
    a.NewBlock(false);
    Scope top;
    top.block = 0;
    top.src = src;
    if (def.sees_inputs) {
      // A seed clause (demand.cc) reads the query's scalar inputs.
      for (const auto& [var, slot] : env_->out->input_var_slot) {
        if (env_->out->slots[static_cast<size_t>(slot)].rel >= 0) continue;
        VarBind b;
        Param p;
        p.kind = Param::Kind::kInput;
        p.slot = slot;
        b.sql = cu.unit.ParamRef(std::move(p));
        b.type = VT::kAny;
        b.slot = slot;
        top.vars[var] = b;
        cu.unit.blocks[0].bound_on_entry.insert(var);
      }
    }
    MENTAT_RETURN_IF_ERROR(a.Conjunction(def.body, &top));
    a.FinishBlock(top);
    for (size_t i = 0; i < def.params.size(); ++i) {
      const VarBind* vb = a.Lookup(top, def.params[i]);
      if (!vb)
        return ClauseError(Code::kInvalidArgument, def.form,
                           "rule " + name + ": " + def.params[i] + " is not bound by its body");
      if (vb->type == VT::kTuple || vb->type == VT::kDynamic)
        return ClauseError(
            Code::kUnsupported, def.form,
            "recursive rule " + name + ": " + def.params[i] +
                (vb->type == VT::kTuple ? " is a tuple"
                                        : " has a per-row type (variable attribute)"));
      cu.unit.blocks[0].outputs.push_back({"c" + std::to_string(i), vb->sql});
      OutCol oc;
      oc.col = static_cast<int>(i);
      oc.type = vb->type;
      oc.slot = vb->slot;
      cu.cols.push_back(oc);
    }
    cu.rels = a.rule_rels_used();
    env_->out->rule_units.push_back(std::move(cu));
  }
  return idx;
}

// Column types of every rule relation from its clauses; true when they changed from
// the hints (the caller then compiles again with the new hints).
Result<bool> SettleRuleTypes(AnalyzeEnv* env) {
  bool changed = false;
  Compiled* out = env->out;
  for (size_t r = 0; r < out->rule_rels.size(); ++r) {
    RuleRel& rr = out->rule_rels[r];
    std::vector<VT> types(rr.arity, VT::kAny);
    for (const RuleClauseUnit& cu : out->rule_units) {
      if (cu.head_rel != static_cast<int>(r)) continue;
      for (int i = 0; i < rr.arity; ++i) {
        VT t = cu.cols[i].type;
        if (!IsStatic(t)) continue;
        if (IsStatic(types[i]) && types[i] != t)
          return ClauseError(Code::kSchema, cu.form,
                             "type mismatch: rule " + rr.rule + " binds its argument " +
                                 std::to_string(i + 1) + " as a " + VTName(types[i]) +
                                 " and as a " + VTName(t));
        types[i] = t;
      }
    }
    // A magic relation's columns feed the bound arguments of its adorned rule.
    auto demand = env->demand.find(rr.rule);
    if (demand != env->demand.end()) {
      for (size_t j = 0; j < out->rule_rels.size(); ++j) {
        const RuleRel& a = out->rule_rels[j];
        if (a.rule != demand->second.adorned || a.source != rr.source) continue;
        for (int i = 0; i < rr.arity; ++i)
          if (!IsStatic(types[i]) && IsStatic(a.types[demand->second.bound[i]]))
            types[i] = a.types[demand->second.bound[i]];
      }
    }
    for (VT& t : types)
      if (t == VT::kAny) t = VT::kNumeric;
    std::string key = rr.source + " " + rr.rule;
    if (types != rr.types) {
      changed = true;
      env->rule_types[key] = types;
    }
  }
  return changed;
}

Status BuildStrata(Compiled* out) {
  int n = static_cast<int>(out->rule_rels.size());
  std::vector<std::vector<int>> edges(n);
  for (const RuleClauseUnit& cu : out->rule_units)
    for (int rel : cu.rels) edges[cu.head_rel].push_back(out->rels[rel].rule_rel);
  auto comps = Components(n, edges);
  std::vector<int> comp_of(n, -1);
  for (size_t k = 0; k < comps.size(); ++k)
    for (int v : comps[k]) comp_of[v] = static_cast<int>(k);
  for (const RuleClauseUnit& cu : out->rule_units)
    for (int rel : cu.rels)
      if (out->rels[rel].negated && comp_of[out->rels[rel].rule_rel] == comp_of[cu.head_rel])
        return ClauseError(Code::kInvalidArgument, cu.form,
                           "rules are not stratifiable: " + out->rule_rels[cu.head_rel].rule +
                               " depends on itself through not");
  out->strata.clear();
  for (size_t k = 0; k < comps.size(); ++k) {
    Stratum st;
    st.rule_rels = comps[k];
    for (size_t u = 0; u < out->rule_units.size(); ++u)
      if (comp_of[out->rule_units[u].head_rel] == static_cast<int>(k))
        st.units.push_back(static_cast<int>(u));
    for (int r : st.rule_rels) out->rule_rels[r].stratum = static_cast<int>(k);
    out->strata.push_back(std::move(st));
  }
  return Status::OK();
}

}  // namespace mentat::query
