// The demand (magic sets) rewrite of recursive rules.
//
// Bottom-up evaluation derives a rule's whole relation, although a call like
// (ancestor [:person/name "Ann"] ?a) needs only the tuples whose first argument is Ann.
// When a call's arguments are known before evaluation (constants, inputs), the rule R is
// rewritten, for that call's bound positions B, into
//   R__m(p_B)              seeded with the call's values (no clause: the seed row)
//   R__m(q_B) :- R__m(p_B), <clauses before the recursive call R(q)>     (per call of R)
//   R__d(p)   :- R__m(p_B), <R's body, its recursive calls renamed to R__d>
// and the call reads R__d: the magic relation holds exactly the bound values the
// evaluation can reach from the seed, so R__d derives only what the call can use. The
// rewrite applies to rules that are recursive only through themselves, with their
// recursive calls at the top level of their bodies; other rules evaluate in full.
#include <algorithm>
#include <functional>

#include "query/analyze.h"

namespace mentat::query {

namespace {

// True when `clauses` call `name` anywhere below the top level.
bool CallsNested(const Clauses& clauses, const std::string& name) {
  std::function<bool(const Clauses&)> any = [&](const Clauses& cs) {
    for (const Clause& c : cs) {
      if (c.kind == Clause::Kind::kRule && c.fn == name) return true;
      if (any(c.body)) return true;
    }
    return false;
  };
  for (const Clause& c : clauses)
    if (any(c.body)) return true;
  return false;
}

void Callees(const Clauses& cs, std::set<std::string>* out) {
  for (const Clause& c : cs) {
    if (c.kind == Clause::Kind::kRule) out->insert(c.fn);
    Callees(c.body, out);
  }
}

Clause Call(const std::string& name, std::vector<Term> args, const edn::Value& form) {
  Clause c;
  c.kind = Clause::Kind::kRule;
  c.fn = name;
  c.args = std::move(args);
  c.form = form;
  return c;
}

}  // namespace

const std::vector<RuleDef>* AnalyzeEnv::FindRule(const std::string& name) const {
  auto x = extra.rules.find(name);
  if (x != extra.rules.end()) return &x->second;
  if (!rules) return nullptr;
  auto it = rules->rules.find(name);
  return it == rules->rules.end() ? nullptr : &it->second;
}

std::optional<std::string> Analyzer::DemandRewrite(const std::string& name,
                                                   const std::vector<int>& bound,
                                                   const std::vector<SeedVal>& seed) {
  const std::vector<RuleDef>* defs = env_->FindRule(name);
  if (!defs || defs->empty() || !env_->rules) return std::nullopt;
  // Recursive only through itself: no rule it calls can reach it again.
  std::set<std::string> reach, frontier;
  for (const RuleDef& d : *defs) Callees(d.body, &frontier);
  frontier.erase(name);
  while (!frontier.empty()) {
    std::string r = *frontier.begin();
    frontier.erase(frontier.begin());
    if (!reach.insert(r).second) continue;
    const std::vector<RuleDef>* rd = env_->FindRule(r);
    if (!rd) continue;
    std::set<std::string> next;
    for (const RuleDef& d : *rd) Callees(d.body, &next);
    if (next.count(name)) return std::nullopt;
    for (const auto& n : next)
      if (!reach.count(n)) frontier.insert(n);
  }
  int k = env_->demand_count++;
  std::string adorned = name + "__d" + std::to_string(k);
  std::string magic = name + "__m" + std::to_string(k);
  std::vector<RuleDef> adorned_defs, magic_defs;
  int fresh = 0;
  for (const RuleDef& d : *defs) {
    if (CallsNested(d.body, name)) return std::nullopt;
    std::vector<Term> head_b;
    for (int b : bound) head_b.push_back(Term::Var(d.params[static_cast<size_t>(b)]));
    auto renamed = [&](const Clause& c) {
      Clause x = c;
      if (x.kind == Clause::Kind::kRule && x.fn == name) x.fn = adorned;
      return x;
    };
    RuleDef a;
    a.name = adorned;
    a.params = d.params;
    a.form = d.form;
    a.body.push_back(Call(magic, head_b, d.form));
    for (const Clause& c : d.body) a.body.push_back(renamed(c));
    adorned_defs.push_back(std::move(a));
    // One magic rule per recursive call: the bound values it passes on.
    for (size_t idx = 0; idx < d.body.size(); ++idx) {
      const Clause& occ = d.body[idx];
      if (occ.kind != Clause::Kind::kRule || occ.fn != name) continue;
      if (occ.src != "$" || occ.args.size() != d.params.size()) return std::nullopt;
      bool trivial = true;
      for (size_t j = 0; j < bound.size(); ++j) {
        const Term& q = occ.args[static_cast<size_t>(bound[j])];
        if (!q.is_var() || q.name != head_b[j].name) trivial = false;
      }
      if (trivial) continue;
      Clauses prefix(d.body.begin(), d.body.begin() + static_cast<long>(idx));
      std::vector<std::string> avail;
      CollectVars(prefix, &avail);
      for (const Term& t : head_b) avail.push_back(t.name);
      RuleDef m;
      m.name = magic;
      m.form = d.form;
      m.body.push_back(Call(magic, head_b, d.form));
      for (const Clause& c : prefix) m.body.push_back(renamed(c));
      for (int b : bound) {
        const Term& q = occ.args[static_cast<size_t>(b)];
        if (q.is_var()) {
          if (std::find(avail.begin(), avail.end(), q.name) == avail.end()) return std::nullopt;
          m.params.push_back(q.name);
        } else if (q.is_const()) {
          std::string v = "?__g" + std::to_string(fresh++);
          Clause g;
          g.kind = Clause::Kind::kFn;
          g.form = d.form;
          g.fn = "ground";
          g.args.push_back(q);
          g.binding.kind = BindingForm::Kind::kScalar;
          g.binding.vars.push_back(v);
          g.binding.form = d.form;
          m.body.push_back(std::move(g));
          m.params.push_back(v);
        } else {
          return std::nullopt;
        }
      }
      magic_defs.push_back(std::move(m));
    }
  }
  env_->extra.rules[adorned] = std::move(adorned_defs);
  env_->extra.rules[magic] = std::move(magic_defs);
  env_->recursive.insert(adorned);
  env_->recursive.insert(magic);
  env_->demand[magic] = AnalyzeEnv::Demand{adorned, bound, seed};
  return adorned;
}

}  // namespace mentat::query
