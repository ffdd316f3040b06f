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
//
// Before it, the pass-through rewrite (PassThroughRewrite) handles right-linear rules,
// also mutually recursive ones: when every recursive clause of the call's strongly
// connected component has one call into the component and hands the head's free
// arguments to that call unchanged (`(anc ?x ?y) :- [?x :parent ?z] (anc ?z ?y)` called
// with ?x bound), the answer is the union of the exit clauses over every bound tuple the
// evaluation reaches:
//   P__mK(b)  seeded with the call's values, for the called rule P
//   Q__mK(c)  :- P__mK(b), <the clause without its call (Q c f)>    (per recursive clause)
//   P__aK(f)  :- Q__mK(b), <an exit clause of Q>                   (per exit clause)
// The magic relations are as large as the set of reachable bound values, where the
// demand rewrite derives a pair for every reachable value and every answer below it
// (quadratic on a chain).
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

// Calls of `scc` rules at the top level of `body` (indexes); -1 in *bad when one is nested.
std::vector<size_t> SccCalls(const Clauses& body, const std::set<std::string>& scc, bool* bad) {
  std::vector<size_t> out;
  for (size_t i = 0; i < body.size(); ++i) {
    const Clause& c = body[i];
    if (c.kind == Clause::Kind::kRule && scc.count(c.fn)) out.push_back(i);
    for (const auto& name : scc)
      if (CallsNested(Clauses{c}, name)) *bad = true;
  }
  return out;
}

}  // namespace

namespace {

// Adds call argument `q` to the head of magic clause `m`: a variable as it is, a constant
// or a repeated variable as a fresh one, grounded or unified. False for a blank.
bool HandOn(RuleDef* m, const Term& q, int* fresh) {
  if (q.is_var() && std::find(m->params.begin(), m->params.end(), q.name) == m->params.end()) {
    m->params.push_back(q.name);
    return true;
  }
  if (!q.is_var() && !q.is_const()) return false;
  std::string v = "?__g" + std::to_string((*fresh)++);
  m->body.push_back(BindingClause(q.is_var() ? "identity" : "ground", q, v, m->form));
  m->params.push_back(v);
  return true;
}

}  // namespace

Clause BindingClause(const std::string& fn, const Term& arg, const std::string& var,
                     const edn::Value& form) {
  Clause c;
  c.kind = Clause::Kind::kFn;
  c.form = form;
  c.fn = fn;
  c.args.push_back(arg);
  c.binding.kind = BindingForm::Kind::kScalar;
  c.binding.vars.push_back(var);
  c.binding.form = form;
  return c;
}

std::optional<std::pair<std::string, std::vector<int>>> Analyzer::PassThroughRewrite(
    const std::string& name, const std::vector<int>& bound, const std::vector<SeedVal>& seed,
    const Clauses* seed_body, const std::vector<std::string>& seed_vars) {
  const std::vector<RuleDef>* defs = env_->FindRule(name);
  if (!defs || defs->empty() || !env_->rules) return std::nullopt;
  size_t arity = (*defs)[0].params.size();
  std::vector<int> free_pos;
  for (int p = 0; p < static_cast<int>(arity); ++p)
    if (std::find(bound.begin(), bound.end(), p) == bound.end()) free_pos.push_back(p);
  if (free_pos.empty()) return std::nullopt;
  // The component: rules reachable from `name` that reach it back.
  std::map<std::string, std::set<std::string>> calls;
  std::vector<std::string> todo{name};
  while (!todo.empty()) {
    std::string r = todo.back();
    todo.pop_back();
    if (calls.count(r)) continue;
    const std::vector<RuleDef>* rd = env_->FindRule(r);
    auto& out = calls[r];
    if (!rd) continue;
    for (const RuleDef& d : *rd) Callees(d.body, &out);
    for (const auto& n : out) todo.push_back(n);
  }
  std::set<std::string> scc;
  for (const auto& [r, _] : calls) {
    // r reaches name?
    std::set<std::string> seen;
    std::vector<std::string> st{r};
    bool back = false;
    while (!st.empty() && !back) {
      std::string x = st.back();
      st.pop_back();
      for (const auto& n : calls[x]) {
        if (n == name) back = true;
        if (seen.insert(n).second) st.push_back(n);
      }
    }
    if (back) scc.insert(r);
  }
  if (!scc.count(name)) return std::nullopt;
  // Free positions of each member, propagated from the call.
  std::map<std::string, std::vector<int>> frees{{name, free_pos}};
  std::vector<std::string> work{name};
  struct Rec {
    std::string head;
    const RuleDef* def;
    size_t call;  // index in body; npos for an exit clause
  };
  std::vector<Rec> recs;
  std::set<std::string> done;
  while (!work.empty()) {
    std::string r = work.back();
    work.pop_back();
    if (!done.insert(r).second) continue;
    const std::vector<RuleDef>* rd = env_->FindRule(r);
    if (!rd || rd->empty()) return std::nullopt;
    const std::vector<int>& fr = frees[r];
    for (const RuleDef& d : *rd) {
      if (d.params.size() != (*rd)[0].params.size()) return std::nullopt;
      std::set<std::string> distinct(d.params.begin(), d.params.end());
      if (distinct.size() != d.params.size()) return std::nullopt;
      bool bad = false;
      std::vector<size_t> at = SccCalls(d.body, scc, &bad);
      if (bad || at.size() > 1) return std::nullopt;
      if (at.empty()) {
        recs.push_back({r, &d, std::string::npos});
        continue;
      }
      const Clause& call = d.body[at[0]];
      const std::vector<RuleDef>* cd = env_->FindRule(call.fn);
      if (!cd || cd->empty() || call.src != "$" || call.args.size() != (*cd)[0].params.size())
        return std::nullopt;
      // The head's free parameters, in order, are the call's free arguments.
      std::vector<int> cf;
      for (int f : fr) {
        const std::string& v = d.params[static_cast<size_t>(f)];
        int pos = -1;
        for (size_t j = 0; j < call.args.size(); ++j)
          if (call.args[j].is_var() && call.args[j].name == v) {
            if (pos >= 0) return std::nullopt;
            pos = static_cast<int>(j);
          }
        if (pos < 0) return std::nullopt;
        cf.push_back(pos);
      }
      if (!std::is_sorted(cf.begin(), cf.end())) return std::nullopt;
      // ... and appear nowhere else in the clause.
      Clauses rest;
      for (size_t i = 0; i < d.body.size(); ++i)
        if (i != at[0]) rest.push_back(d.body[i]);
      std::vector<std::string> used;
      CollectVars(rest, &used);
      for (size_t j = 0; j < call.args.size(); ++j)
        if (std::find(cf.begin(), cf.end(), static_cast<int>(j)) == cf.end() &&
            call.args[j].is_var())
          used.push_back(call.args[j].name);
      for (int f : fr)
        if (std::find(used.begin(), used.end(), d.params[static_cast<size_t>(f)]) != used.end())
          return std::nullopt;
      auto known = frees.find(call.fn);
      if (known != frees.end() && known->second != cf) return std::nullopt;
      frees[call.fn] = cf;
      work.push_back(call.fn);
      recs.push_back({r, &d, at[0]});
    }
  }
  int k = env_->demand_count++;
  auto magic = [&](const std::string& r) { return r + "__m" + std::to_string(k); };
  std::string answer = name + "__a" + std::to_string(k);
  // Seeded by clauses, many bound tuples may start the evaluation: each magic and answer
  // tuple then carries the tuple it started from (its origin) in leading columns.
  std::vector<Term> origin;
  if (seed_body)
    for (size_t j = 0; j < bound.size(); ++j)
      origin.push_back(Term::Var("?__o" + std::to_string(k) + "_" + std::to_string(j)));
  auto with_origin = [&](std::vector<Term> args) {
    args.insert(args.begin(), origin.begin(), origin.end());
    return args;
  };
  auto origin_params = [&]() {
    std::vector<std::string> p;
    for (const Term& t : origin) p.push_back(t.name);
    return p;
  };
  auto bound_of = [&](const std::string& r, const std::vector<Term>& args) {
    std::vector<Term> out;
    const std::vector<int>& fr = frees[r];
    for (size_t j = 0; j < args.size(); ++j)
      if (std::find(fr.begin(), fr.end(), static_cast<int>(j)) == fr.end()) out.push_back(args[j]);
    return out;
  };
  std::map<std::string, std::vector<RuleDef>> made;
  std::vector<RuleDef> answers;
  int fresh = 0;
  for (const Rec& rec : recs) {
    const RuleDef& d = *rec.def;
    std::vector<Term> head;
    for (const auto& p : d.params) head.push_back(Term::Var(p));
    std::vector<Term> hb = bound_of(rec.head, head);
    if (rec.call == std::string::npos) {
      RuleDef a;
      a.name = answer;
      a.form = d.form;
      a.params = origin_params();
      for (int f : frees[rec.head]) a.params.push_back(d.params[static_cast<size_t>(f)]);
      a.body.push_back(Call(magic(rec.head), with_origin(hb), d.form));
      a.body.insert(a.body.end(), d.body.begin(), d.body.end());
      answers.push_back(std::move(a));
      continue;
    }
    const Clause& call = d.body[rec.call];
    RuleDef m;
    m.name = magic(call.fn);
    m.form = d.form;
    m.params = origin_params();
    m.body.push_back(Call(magic(rec.head), with_origin(hb), d.form));
    for (size_t i = 0; i < d.body.size(); ++i)
      if (i != rec.call) m.body.push_back(d.body[i]);
    for (const Term& q : bound_of(call.fn, call.args))
      if (!HandOn(&m, q, &fresh)) return std::nullopt;  // a blank: nothing to hand on
    made[m.name].push_back(std::move(m));
  }
  if (answers.empty()) return std::nullopt;  // no exit clause: nothing is ever derived
  if (seed_body) {
    // The seed clause: each tuple the clauses find starts from itself.
    RuleDef seed_def;
    seed_def.name = magic(name);
    seed_def.form = (*defs)[0].form;
    seed_def.body = *seed_body;
    seed_def.sees_inputs = true;
    seed_def.params = seed_vars;
    seed_def.params.insert(seed_def.params.end(), seed_vars.begin(), seed_vars.end());
    made[magic(name)].push_back(std::move(seed_def));
  }
  for (const auto& r : scc) {
    if (!frees.count(r)) continue;
    env_->extra.rules[magic(r)];  // a member reached only by the seed has no clause
    for (auto& m : made[magic(r)]) env_->extra.rules[magic(r)].push_back(std::move(m));
    env_->recursive.insert(magic(r));
  }
  env_->extra.rules[answer] = std::move(answers);
  if (!seed_body) env_->demand[magic(name)] = AnalyzeEnv::Demand{"", bound, seed};
  std::string members;
  for (const auto& r : scc)
    if (frees.count(r)) members += (members.empty() ? "" : ", ") + magic(r);
  env_->rewrites.push_back({seed_body ? "seed_recursion" : "pass_through",
                            "(" + name + " ...) with bound arguments" +
                                (seed_body ? std::string(" found by other clauses") : "") + ": " +
                                answer + " over the bound values it reaches (" + members + ")"});
  return std::make_pair(answer, frees[name]);
}

std::optional<Clauses> Analyzer::SeedClauses(const Scope& s, const std::string& var,
                                             const std::set<std::string>& others) const {
  if (!conj_) return std::nullopt;
  auto input = [&](const std::string& v) {
    auto it = env_->out->input_var_slot.find(v);
    if (it == env_->out->input_var_slot.end()) return false;
    const VarBind* vb = Lookup(s, v);
    return vb && vb->deps.empty() && vb->slot == it->second &&
           env_->out->slots[static_cast<size_t>(it->second)].rel < 0;
  };
  std::set<std::string> comp{var};
  std::vector<bool> taken(conj_->size(), false);
  Clauses out;
  bool selective = false, binds = false;
  for (bool grew = true; grew;) {
    grew = false;
    for (size_t i = 0; i < conj_->size(); ++i) {
      const Clause& c = *(*conj_)[i];
      if (taken[i] || (c.kind != Clause::Kind::kPattern && c.kind != Clause::Kind::kPred)) continue;
      if (c.src != "$" && c.src != s.src) continue;
      std::vector<std::string> vars;
      CollectClauseVars(c, &vars);
      bool touches = false, ok = true;
      for (const auto& v : vars) {
        if (others.count(v)) ok = false;
        if (comp.count(v)) touches = true;
        // A variable of an enclosing block cannot be read by a rule's clause.
        if (!comp.count(v) && !input(v) && !s.vars.count(v)) ok = false;
      }
      if (!touches || !ok) continue;
      if (c.kind == Clause::Kind::kPred) {
        for (const auto& v : vars)
          if (!comp.count(v) && !input(v)) ok = false;
        if (!ok) continue;
      }
      taken[i] = true;
      grew = true;
      out.push_back(c);
      for (const auto& v : vars)
        if (!input(v)) comp.insert(v);
      if (c.kind == Clause::Kind::kPattern) {
        for (const Term& t : c.places) {
          if (t.is_const() || (t.is_var() && input(t.name))) selective = true;
          if (t.is_var() && t.name == var) binds = true;
        }
      }
    }
  }
  if (!selective || !binds) return std::nullopt;
  return out;
}

const std::vector<RuleDef>* AnalyzeEnv::FindRule(const std::string& name) const {
  auto x = extra.rules.find(name);
  if (x != extra.rules.end()) return &x->second;
  if (!rules) return nullptr;
  auto it = rules->rules.find(name);
  return it == rules->rules.end() ? nullptr : &it->second;
}

std::optional<std::string> Analyzer::DemandRewrite(const std::string& name,
                                                   const std::vector<int>& bound,
                                                   const std::vector<SeedVal>& seed,
                                                   const Clauses* seed_body,
                                                   const std::vector<std::string>& seed_vars) {
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
        if (q.is_var() && std::find(avail.begin(), avail.end(), q.name) == avail.end())
          return std::nullopt;
        if (!HandOn(&m, q, &fresh)) return std::nullopt;
      }
      magic_defs.push_back(std::move(m));
    }
  }
  if (seed_body) {
    RuleDef m;
    m.name = magic;
    m.form = (*defs)[0].form;
    m.body = *seed_body;
    m.sees_inputs = true;
    m.params = seed_vars;
    magic_defs.push_back(std::move(m));
  }
  env_->extra.rules[adorned] = std::move(adorned_defs);
  env_->extra.rules[magic] = std::move(magic_defs);
  env_->recursive.insert(adorned);
  env_->recursive.insert(magic);
  if (!seed_body) env_->demand[magic] = AnalyzeEnv::Demand{adorned, bound, seed};
  // The demand rewrite itself is no pass of the list; seeded by clauses it is seed_recursion's.
  if (seed_body)
    env_->rewrites.push_back(
        {"seed_recursion", "(" + name +
                               " ...) with bound arguments found by other "
                               "clauses: " +
                               adorned + " derives what the call can use (magic " + magic + ")"});
  return adorned;
}

}  // namespace mentat::query
