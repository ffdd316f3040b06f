// Pass 1: EDN -> ParsedQuery. Only the shape of the query is checked here; names,
// types and bindings are checked by analyze.cc.
#include <algorithm>
#include <functional>
#include <set>
#include <utility>

#include "query/ast.h"

namespace mentat::query {

namespace {

using edn::Value;
using edn::Vec;

bool IsVarSym(const Value& v) { return v.is_symbol() && v.str().size() > 1 && v.str()[0] == '?'; }
bool IsSrcSym(const Value& v) { return v.is_symbol() && !v.str().empty() && v.str()[0] == '$'; }
bool IsBlankSym(const Value& v) { return v.is_symbol("_"); }

Status Err(const Value& form, const std::string& msg) {
  return ClauseError(Code::kParse, form, msg);
}

Result<Term> ParseTerm(const Value& v, bool allow_src) {
  if (IsVarSym(v)) {
    Term t = Term::Var(v.str());
    t.value = v;
    return t;
  }
  if (IsBlankSym(v)) {
    Term t = Term::Blank();
    t.value = v;
    return t;
  }
  if (IsSrcSym(v)) {
    if (!allow_src) return Err(v, "a source variable is not allowed here");
    Term t{Term::Kind::kSrc, v.str(), v};
    return t;
  }
  if (v.is_symbol()) return Err(v, "unexpected symbol " + v.str() + " (variables start with ?)");
  // A regex literal #"re" (read as (clojure.core/re-pattern "re")) is its pattern string.
  if (v.is_list() && v.size() == 2 && v.items()[1].is_string() &&
      (v.items()[0].is_symbol("clojure.core/re-pattern") || v.items()[0].is_symbol("re-pattern"))) {
    Term t = Term::Const(v.items()[1]);
    return t;
  }
  return Term::Const(v);
}

Result<BindingForm> ParseBinding(const Value& v) {
  BindingForm b;
  b.form = v;
  if (IsVarSym(v)) {
    b.kind = BindingForm::Kind::kScalar;
    b.vars.push_back(v.str());
    return b;
  }
  if (IsBlankSym(v)) {
    b.kind = BindingForm::Kind::kBlank;
    return b;
  }
  if (!v.is_vector() || v.items().empty()) return Err(v, "invalid binding form");
  const auto& items = v.items();
  if (items.size() == 2 && items[1].is_symbol("...")) {
    if (!IsVarSym(items[0]) && !IsBlankSym(items[0]))
      return Err(v, "a collection binding takes one variable");
    b.kind = BindingForm::Kind::kColl;
    b.vars.push_back(items[0].str());
    return b;
  }
  if (items.size() == 1 && items[0].is_vector()) {
    b.kind = BindingForm::Kind::kRel;
    for (const Value& x : items[0].items()) {
      if (!IsVarSym(x) && !IsBlankSym(x)) return Err(v, "a relation binding takes variables");
      b.vars.push_back(x.str());
    }
    if (b.vars.empty()) return Err(v, "empty relation binding");
    return b;
  }
  b.kind = BindingForm::Kind::kTuple;
  for (const Value& x : items) {
    if (!IsVarSym(x) && !IsBlankSym(x)) return Err(v, "a tuple binding takes variables");
    b.vars.push_back(x.str());
  }
  return b;
}

Result<Clause> ParseClause(const Value& v);

// How deeply ParseClauses is nested on this thread (not, or and and bodies).
thread_local int tls_clause_depth = 0;

Result<Clauses> ParseClauses(const Vec& items, size_t from) {
  struct Depth {
    Depth() { ++tls_clause_depth; }
    ~Depth() { --tls_clause_depth; }
  } depth;
  if (tls_clause_depth > kMaxClauseNesting && from < items.size())
    return ClauseError(Code::kInvalidArgument, items[from],
                       "clauses nested deeper than " + std::to_string(kMaxClauseNesting) +
                           " levels (not, or, and)");
  Clauses out;
  for (size_t i = from; i < items.size(); ++i) {
    MENTAT_ASSIGN_OR_RETURN(Clause c, ParseClause(items[i]));
    out.push_back(std::move(c));
  }
  return out;
}

// Counts `clauses` (every level) into `*total`, and fails past the limits above. `what`
// names the clauses' place in messages (":where", "rule r").
Status CheckSize(const Clauses& clauses, const std::string& what, size_t* total) {
  size_t patterns = 0;
  std::function<Status(const Clauses&, bool)> walk = [&](const Clauses& cs,
                                                         bool same_conjunction) -> Status {
    for (const Clause& c : cs) {
      if (++*total > kMaxClauses)
        return ClauseError(Code::kInvalidArgument, c.form,
                           "the query has more than " + std::to_string(kMaxClauses) +
                               " clauses (counting those of " + what + " at every level)");
      switch (c.kind) {
        case Clause::Kind::kPattern:
          if (same_conjunction && ++patterns > kMaxPatternsPerConjunction)
            return ClauseError(Code::kInvalidArgument, c.form,
                               "more than " + std::to_string(kMaxPatternsPerConjunction) +
                                   " data patterns joined in one conjunction of " + what +
                                   " (SQLite joins at most 64 tables in one SELECT)");
          break;
        case Clause::Kind::kAnd:
          MENTAT_RETURN_IF_ERROR(walk(c.body, same_conjunction));
          break;
        case Clause::Kind::kNot:
        case Clause::Kind::kNotJoin: {
          // A not's body is a conjunction of its own; so is each branch of an or.
          size_t outer = std::exchange(patterns, 0);
          MENTAT_RETURN_IF_ERROR(walk(c.body, true));
          patterns = outer;
          break;
        }
        case Clause::Kind::kOr:
        case Clause::Kind::kOrJoin: {
          size_t outer = patterns;
          for (const Clause& branch : c.body) {
            patterns = 0;
            if (branch.kind == Clause::Kind::kAnd) {
              MENTAT_RETURN_IF_ERROR(walk(branch.body, true));
            } else {
              MENTAT_RETURN_IF_ERROR(walk(Clauses{branch}, true));
            }
          }
          patterns = outer;
          break;
        }
        default:
          break;
      }
    }
    return Status::OK();
  };
  return walk(clauses, true);
}

Result<std::vector<std::string>> ParseVarList(const Value& form, const Value& v,
                                              bool allow_required,
                                              std::vector<std::string>* required = nullptr) {
  std::vector<std::string> out;
  if (!v.is_vector()) return Err(form, "expected a vector of variables");
  for (const Value& x : v.items()) {
    if (allow_required && x.is_vector()) {
      for (const Value& y : x.items()) {
        if (!IsVarSym(y)) return Err(form, "expected variables in [...]");
        out.push_back(y.str());
        if (required) required->push_back(y.str());
      }
      continue;
    }
    if (!IsVarSym(x)) return Err(form, "expected a variable, got " + edn::Print(x));
    out.push_back(x.str());
  }
  if (out.empty()) return Err(form, "expected at least one variable");
  return out;
}

// Sorted, de-duplicated variables of a clause list.
std::set<std::string> VarSet(const Clauses& cs) {
  std::vector<std::string> vars;
  CollectVars(cs, &vars);
  return std::set<std::string>(vars.begin(), vars.end());
}

Result<Clause> ParseListClause(const Value& v) {
  const auto& items = v.items();
  Clause c;
  c.form = v;
  size_t i = 0;
  if (!items.empty() && IsSrcSym(items[0])) {
    c.src = items[0].str();
    i = 1;
  }
  if (i >= items.size() || !items[i].is_symbol()) return Err(v, "invalid clause");
  const std::string& head = items[i].str();
  if (head == "not" || head == "and") {
    c.kind = head == "not" ? Clause::Kind::kNot : Clause::Kind::kAnd;
    if (items.size() <= i + 1) return Err(v, "(" + head + ") needs at least one clause");
    MENTAT_ASSIGN_OR_RETURN(c.body, ParseClauses(items, i + 1));
    return c;
  }
  if (head == "not-join" || head == "or-join") {
    c.kind = head == "not-join" ? Clause::Kind::kNotJoin : Clause::Kind::kOrJoin;
    if (items.size() <= i + 2) return Err(v, "(" + head + " [vars] clause...) needs clauses");
    MENTAT_ASSIGN_OR_RETURN(
        c.join_vars,
        ParseVarList(v, items[i + 1], c.kind == Clause::Kind::kOrJoin, &c.required_vars));
    MENTAT_ASSIGN_OR_RETURN(c.body, ParseClauses(items, i + 2));
  } else if (head == "or") {
    c.kind = Clause::Kind::kOr;
    if (items.size() <= i + 1) return Err(v, "(or) needs at least one clause");
    MENTAT_ASSIGN_OR_RETURN(c.body, ParseClauses(items, i + 1));
  } else {
    c.kind = Clause::Kind::kRule;
    c.fn = head;
    for (size_t k = i + 1; k < items.size(); ++k) {
      MENTAT_ASSIGN_OR_RETURN(Term t, ParseTerm(items[k], false));
      c.args.push_back(std::move(t));
    }
    return c;
  }
  if (c.kind == Clause::Kind::kOr) {
    // Every branch of a plain `or` must use the same variables.
    std::optional<std::set<std::string>> first;
    for (const Clause& b : c.body) {
      std::set<std::string> vars = VarSet(Clauses{b});
      if (!first) {
        first = vars;
      } else if (vars != *first) {
        return ClauseError(Code::kInvalidArgument, v,
                           "or branches use different variables (use or-join)");
      }
    }
  }
  return c;
}

Result<Clause> ParseClause(const Value& v) {
  if (v.is_list()) return ParseListClause(v);
  if (!v.is_vector()) return Err(v, "a clause must be a vector or a list");
  const auto& items = v.items();
  if (items.empty()) return Err(v, "empty clause");
  Clause c;
  c.form = v;
  if (items[0].is_list()) {
    // [(f args...) binding?]
    const auto& call = items[0].items();
    if (call.empty() || !call[0].is_symbol()) return Err(v, "expected (function args...)");
    if (items.size() > 2) return Err(v, "expected [(function args...) binding]");
    c.fn = call[0].str();
    for (size_t k = 1; k < call.size(); ++k) {
      MENTAT_ASSIGN_OR_RETURN(Term t, ParseTerm(call[k], true));
      c.args.push_back(std::move(t));
    }
    if (items.size() == 2) {
      c.kind = Clause::Kind::kFn;
      MENTAT_ASSIGN_OR_RETURN(c.binding, ParseBinding(items[1]));
    } else {
      c.kind = Clause::Kind::kPred;
    }
    return c;
  }
  c.kind = Clause::Kind::kPattern;
  size_t i = 0;
  if (IsSrcSym(items[0])) {
    c.src = items[0].str();
    i = 1;
  }
  size_t n = items.size() - i;
  // [?e] alone (DataScript, Datomic) matches the entities that have any datom.
  if (n < 1 || n > 5)
    return Err(v, "a pattern has 1 to 5 places [e a v tx added], got " + std::to_string(n));
  for (size_t start = i; i < items.size(); ++i) {
    // In the value place a plain symbol is a constant (a :db.type/symbol value), as any
    // data literal that is not a variable is (Datomic's grammar, DataScript).
    if (i - start == 2 && items[i].is_symbol() && !IsVarSym(items[i]) && !IsBlankSym(items[i]) &&
        !IsSrcSym(items[i])) {
      c.places.push_back(Term::Const(items[i]));
      continue;
    }
    MENTAT_ASSIGN_OR_RETURN(Term t, ParseTerm(items[i], false));
    c.places.push_back(std::move(t));
  }
  while (c.places.size() < 5) c.places.push_back(Term::Blank());
  return c;
}

Result<FindElem> ParseFindElem(const Value& v) {
  FindElem f;
  f.form = v;
  if (IsVarSym(v)) {
    f.kind = FindElem::Kind::kVar;
    f.var = v.str();
    return f;
  }
  if (!v.is_list() || v.items().empty() || !v.items()[0].is_symbol())
    return Err(v, "invalid :find element");
  const auto& items = v.items();
  const std::string& head = items[0].str();
  if (head == "pull") {
    f.kind = FindElem::Kind::kPull;
    size_t i = 1;
    if (items.size() == 4 && IsSrcSym(items[1])) {
      f.src = items[1].str();
      i = 2;
    }
    if (items.size() != i + 2 || !IsVarSym(items[i])) return Err(v, "expected (pull ?e pattern)");
    f.var = items[i].str();
    const Value& p = items[i + 1];
    // A pattern from :in: ?pattern, or a plain symbol as Datomic writes it (pattern).
    if (IsVarSym(p) || (p.is_symbol() && !IsSrcSym(p) && !IsBlankSym(p) && !p.is_symbol("%"))) {
      f.pattern_var = p.str();
    } else if (p.is_vector()) {
      f.pattern = p;
    } else {
      return Err(v, "a pull pattern must be a vector");
    }
    return f;
  }
  if (head == "the") {
    if (items.size() != 2 || !IsVarSym(items[1])) return Err(v, "expected (the ?x)");
    f.kind = FindElem::Kind::kThe;
    f.var = items[1].str();
    return f;
  }
  f.kind = FindElem::Kind::kAgg;
  f.fn = head;
  for (size_t k = 1; k < items.size(); ++k) {
    MENTAT_ASSIGN_OR_RETURN(Term t, ParseTerm(items[k], false));
    f.args.push_back(std::move(t));
  }
  // The aggregated variable is the last argument; (max ?n ?x) may take n from an input.
  for (size_t k = 0; k < f.args.size(); ++k) {
    if (!f.args[k].is_var()) continue;
    bool n_var = k == 0 && f.args.size() == 2 && f.args[1].is_var();
    if (n_var) continue;
    if (!f.var.empty()) return Err(v, "an aggregate takes one variable");
    f.var = f.args[k].name;
  }
  if (f.var.empty()) return Err(v, "an aggregate needs a variable");
  return f;
}

Status ParseFind(const Value& form, const Vec& items, ParsedQuery* q) {
  if (items.empty()) return Err(form, ":find needs at least one element");
  if (items.size() == 1 && items[0].is_vector()) {
    const auto& inner = items[0].items();
    if (inner.size() == 2 && inner[1].is_symbol("...")) {
      q->find_kind = ParsedQuery::FindKind::kColl;
      MENTAT_ASSIGN_OR_RETURN(FindElem f, ParseFindElem(inner[0]));
      q->find.push_back(std::move(f));
      return Status::OK();
    }
    if (inner.empty()) return Err(items[0], "empty tuple find");
    q->find_kind = ParsedQuery::FindKind::kTuple;
    for (const Value& x : inner) {
      MENTAT_ASSIGN_OR_RETURN(FindElem f, ParseFindElem(x));
      q->find.push_back(std::move(f));
    }
    return Status::OK();
  }
  if (items.size() == 2 && items[1].is_symbol(".")) {
    q->find_kind = ParsedQuery::FindKind::kScalar;
    MENTAT_ASSIGN_OR_RETURN(FindElem f, ParseFindElem(items[0]));
    q->find.push_back(std::move(f));
    return Status::OK();
  }
  q->find_kind = ParsedQuery::FindKind::kRel;
  for (const Value& x : items) {
    if (x.is_symbol(".") || x.is_symbol("...")) return Err(x, "misplaced " + x.str() + " in :find");
    MENTAT_ASSIGN_OR_RETURN(FindElem f, ParseFindElem(x));
    q->find.push_back(std::move(f));
  }
  return Status::OK();
}

Status ParseIn(const Vec& items, ParsedQuery* q) {
  for (const Value& x : items) {
    InSpec in;
    in.form = x;
    if (IsSrcSym(x)) {
      in.kind = InSpec::Kind::kSrc;
      in.name = x.str();
    } else if (x.is_symbol("%")) {
      in.kind = InSpec::Kind::kRules;
      in.name = "%";
    } else if (IsBlankSym(x)) {
      in.kind = InSpec::Kind::kBlank;
    } else {
      // A plain symbol names a pull pattern ((pull ?e pattern) in :find; checked below).
      if (x.is_symbol() && !IsVarSym(x)) {
        in.kind = InSpec::Kind::kScalar;
        in.name = x.str();
        in.vars = {in.name};
        q->in.push_back(std::move(in));
        continue;
      }
      MENTAT_ASSIGN_OR_RETURN(BindingForm b, ParseBinding(x));
      switch (b.kind) {
        case BindingForm::Kind::kScalar:
          in.kind = InSpec::Kind::kScalar;
          in.name = b.vars[0];
          break;
        case BindingForm::Kind::kTuple:
          in.kind = InSpec::Kind::kTuple;
          break;
        case BindingForm::Kind::kColl:
          in.kind = InSpec::Kind::kColl;
          break;
        case BindingForm::Kind::kRel:
          in.kind = InSpec::Kind::kRel;
          break;
        case BindingForm::Kind::kBlank:
          in.kind = InSpec::Kind::kBlank;
          break;
      }
      in.vars = b.vars;
    }
    q->in.push_back(std::move(in));
  }
  return Status::OK();
}

Status ParseOrder(const Vec& items, ParsedQuery* q) {
  for (const Value& x : items) {
    OrderItem o;
    o.form = x;
    Value target = x;
    if (x.is_list() && x.size() == 2 && x.items()[0].is_symbol() &&
        (x.items()[0].str() == "asc" || x.items()[0].str() == "desc")) {
      o.desc = x.items()[0].str() == "desc";
      target = x.items()[1];
    } else if (x.is_vector()) {
      MENTAT_RETURN_IF_ERROR(ParseOrder(x.items(), q));
      continue;
    }
    if (IsVarSym(target)) {
      o.var = target.str();
    } else if (target.is_list()) {
      for (size_t i = 0; i < q->find.size(); ++i)
        if (q->find[i].form == target) o.find_index = static_cast<int>(i);
      if (o.find_index < 0) return Err(x, ":order over an expression that is not in :find");
    } else {
      return Err(x, "invalid :order item (expected ?var, (asc ?var) or (desc ?var))");
    }
    q->order.push_back(std::move(o));
  }
  return Status::OK();
}

Status ParseLimitLike(const Value& form, const Vec& items, std::optional<int64_t>* n,
                      std::string* var, const char* what) {
  if (items.size() != 1) return Err(form, std::string(what) + " takes one value");
  const Value& x = items[0];
  if (x.is_int() && x.as_int() >= 0) {
    *n = x.as_int();
    return Status::OK();
  }
  if (IsVarSym(x) && var) {
    *var = x.str();
    return Status::OK();
  }
  if (x.is_nil()) return Status::OK();
  return Err(x, std::string(what) + " must be a non-negative integer");
}

Status ParseKeys(const Value& kw, const Vec& items, ParsedQuery* q) {
  if (!q->keys.empty()) return Err(kw, "only one of :keys, :strs, :syms");
  q->keys_form = kw;
  for (const Value& x : items) {
    if (!x.is_symbol() && !x.is_keyword() && !x.is_string())
      return Err(x, "return map keys must be symbols");
    std::string name = x.str();
    if (kw.is_keyword("keys")) {
      q->keys.push_back(Value::Keyword(name));
    } else if (kw.is_keyword("strs")) {
      q->keys.push_back(Value::String(name));
    } else {
      q->keys.push_back(Value::Symbol(name));
    }
  }
  if (q->keys.empty()) return Err(kw, "empty return map keys");
  return Status::OK();
}

// Splits [:find a b :in c :where d ...] into sections.
Result<std::vector<std::pair<Value, Vec>>> Sections(const Value& query) {
  std::vector<std::pair<Value, Vec>> out;
  if (query.is_map()) {
    for (const auto& [k, v] : query.entries()) {
      if (!k.is_keyword()) return Err(k, "query map keys must be keywords");
      if (v.is_vector() || v.is_list()) {
        out.push_back({k, v.items()});
      } else {
        out.push_back({k, Vec{v}});
      }
    }
    return out;
  }
  for (const Value& x : query.items()) {
    if (x.is_keyword()) {
      for (const auto& s : out)
        if (s.first == x) return Err(x, "duplicate section :" + x.str());
      out.push_back({x, {}});
    } else {
      if (out.empty()) return Err(x, "a query starts with :find");
      out.back().second.push_back(x);
    }
  }
  return out;
}

}  // namespace

std::string PosText(const edn::Value& form) {
  if (!form.pos().known()) return "";
  return std::to_string(form.pos().line) + ":" + std::to_string(form.pos().col);
}

Status ClauseError(Code code, const edn::Value& form, const std::string& message) {
  std::string text = edn::Print(form);
  if (text.size() > 120) text = text.substr(0, 117) + "...";
  std::string msg = message + " in " + text;
  std::string pos = PosText(form);
  if (!pos.empty()) msg += " at " + pos;
  return Status(code, msg);
}

void CollectClauseVars(const Clause& c, std::vector<std::string>* out) {
  auto add = [&](const std::string& v) {
    if (v.empty() || v == "_" || v[0] != '?') return;
    if (std::find(out->begin(), out->end(), v) == out->end()) out->push_back(v);
  };
  switch (c.kind) {
    case Clause::Kind::kPattern:
      for (const Term& t : c.places)
        if (t.is_var()) add(t.name);
      break;
    case Clause::Kind::kPred:
    case Clause::Kind::kFn:
    case Clause::Kind::kRule:
      for (const Term& t : c.args)
        if (t.is_var()) add(t.name);
      for (const auto& v : c.binding.vars) add(v);
      break;
    case Clause::Kind::kNotJoin:
    case Clause::Kind::kOrJoin:
      for (const auto& v : c.join_vars) add(v);
      break;
    case Clause::Kind::kNot:
    case Clause::Kind::kOr:
    case Clause::Kind::kAnd:
      for (const Clause& b : c.body) CollectClauseVars(b, out);
      break;
  }
}

void CollectVars(const Clauses& clauses, std::vector<std::string>* out) {
  for (const Clause& c : clauses) CollectClauseVars(c, out);
}

// A variable bound by two :in elements joins them (Datomic: `:in [[?a ?b]] [[?b ?c]]`
// keeps the pairs that agree on ?b): its later occurrences are renamed and a clause
// [(= ?b ?b__inN)] added to :where.
Status JoinRepeatedInputs(ParsedQuery* q) {
  std::set<std::string> seen;
  int fresh = 0;
  for (InSpec& in : q->in) {
    std::set<std::string> here;  // twice within one element stays an error (analysis)
    auto visit = [&](std::string* v) -> Status {
      if (*v == "_" || !here.insert(*v).second) return Status::OK();
      if (seen.insert(*v).second) return Status::OK();
      std::string renamed = *v + "__in" + std::to_string(++fresh);
      edn::Value form = Value::Vector(
          {Value::List({Value::Symbol("="), Value::Symbol(*v), Value::Symbol(renamed)})});
      MENTAT_ASSIGN_OR_RETURN(Clause c, ParseClause(form));
      q->where.push_back(std::move(c));
      *v = renamed;
      return Status::OK();
    };
    if (in.kind == InSpec::Kind::kScalar) {
      MENTAT_RETURN_IF_ERROR(visit(&in.name));
      if (!in.vars.empty()) in.vars[0] = in.name;
    } else if (in.kind == InSpec::Kind::kTuple || in.kind == InSpec::Kind::kColl ||
               in.kind == InSpec::Kind::kRel) {
      for (std::string& v : in.vars) MENTAT_RETURN_IF_ERROR(visit(&v));
    }
  }
  return Status::OK();
}

Result<ParsedQuery> ParseQuery(const edn::Value& query_in) {
  edn::Value query = query_in;
  if (query.is_string()) {
    auto r = edn::Read(query.str(), QueryReadOptions());
    if (!r.ok()) return r.status();
    query = *r;
  }
  if (!query.is_vector() && !query.is_map())
    return Status::Parse("a query must be a vector or a map, got " +
                         std::string(edn::KindName(query.kind())));
  ParsedQuery q;
  q.form = query;
  MENTAT_ASSIGN_OR_RETURN(auto sections, Sections(query));
  bool have_find = false, have_where = false;
  std::vector<Value> with_forms;
  for (auto& [kw, items] : sections) {
    const std::string& k = kw.str();
    if (k == "find") {
      have_find = true;
      MENTAT_RETURN_IF_ERROR(ParseFind(kw, items, &q));
    } else if (k == "keys" || k == "strs" || k == "syms") {
      MENTAT_RETURN_IF_ERROR(ParseKeys(kw, items, &q));
    } else if (k == "with") {
      for (const Value& x : items) {
        if (!IsVarSym(x)) return Err(x, ":with takes variables");
        q.with.push_back(x.str());
        with_forms.push_back(x);
      }
    } else if (k == "in") {
      MENTAT_RETURN_IF_ERROR(ParseIn(items, &q));
    } else if (k == "where") {
      have_where = true;
      MENTAT_ASSIGN_OR_RETURN(q.where, ParseClauses(items, 0));
      size_t clauses = 0;
      MENTAT_RETURN_IF_ERROR(CheckSize(q.where, ":where", &clauses));
    } else if (k == "order") {
      // Parsed after :find (the map form is sorted by key, so :find may come later).
    } else if (k == "limit") {
      MENTAT_RETURN_IF_ERROR(ParseLimitLike(kw, items, &q.limit, &q.limit_var, ":limit"));
    } else if (k == "offset") {
      MENTAT_RETURN_IF_ERROR(ParseLimitLike(kw, items, &q.offset, &q.offset_var, ":offset"));
    } else if (k == "timeout") {
      std::optional<int64_t> t;
      MENTAT_RETURN_IF_ERROR(ParseLimitLike(kw, items, &t, nullptr, ":timeout"));
      q.timeout_ms = t;
    } else {
      return Err(kw, "unknown query section :" + k);
    }
  }
  if (!have_find) return ClauseError(Code::kParse, query, "the query has no :find");
  for (const InSpec& in : q.in) {
    if (in.kind != InSpec::Kind::kScalar || IsVarSym(in.form)) continue;
    if (!in.form.is_symbol()) continue;
    bool pattern = false;
    for (const FindElem& f : q.find) pattern = pattern || f.pattern_var == in.name;
    if (!pattern)
      return Err(in.form,
                 "invalid :in element (expected $src, %, ?var, a binding form, or the plain "
                 "symbol of a pull pattern used in :find)");
  }
  MENTAT_RETURN_IF_ERROR(JoinRepeatedInputs(&q));
  (void)have_where;
  // Datomic: ":find and :with should not use same variables" (aggregated and pulled
  // variables included: :with adds variables to the rows, it cannot repeat one).
  for (const Value& w : with_forms)
    for (const FindElem& f : q.find)
      if (f.var == w.str())
        return Err(w, ":with variable " + w.str() + " also appears in :find (" +
                          edn::Print(f.form) + "); :find and :with cannot share variables");
  for (auto& [kw, items] : sections)
    if (kw.str() == "order") MENTAT_RETURN_IF_ERROR(ParseOrder(items, &q));
  if (!q.keys.empty()) {
    if (q.find_kind == ParsedQuery::FindKind::kColl ||
        q.find_kind == ParsedQuery::FindKind::kScalar)
      return Err(q.keys_form, "return maps need a relation or tuple :find");
    if (q.keys.size() != q.find.size())
      return Err(q.keys_form, "expected " + std::to_string(q.find.size()) +
                                  " return map keys (one per :find element), got " +
                                  std::to_string(q.keys.size()));
  }
  return q;
}

Result<RuleSet> ParseRules(const edn::Value& rules_in) {
  edn::Value rules = rules_in;
  if (rules.is_string()) {
    auto r = edn::Read(rules.str(), QueryReadOptions());
    if (!r.ok()) return r.status();
    rules = *r;
  }
  if (!rules.is_vector() && !rules.is_list())
    return Status::InvalidArgument("rules (%) must be a vector of rules, got " +
                                   std::string(edn::KindName(rules.kind())));
  RuleSet out;
  size_t rule_clauses = 0;  // all rules together
  for (const Value& r : rules.items()) {
    if (!r.is_vector() || r.items().size() < 2 || !r.items()[0].is_list())
      return Err(r, "a rule is [(name ?args...) clause...]");
    const auto& head = r.items()[0].items();
    if (head.empty() || !head[0].is_symbol() || IsVarSym(head[0]))
      return Err(r, "a rule head is (name ?args...)");
    RuleDef def;
    def.form = r;
    def.name = head[0].str();
    for (size_t i = 1; i < head.size(); ++i) {
      if (head[i].is_vector() && i == 1) {
        for (const Value& x : head[i].items()) {
          if (!IsVarSym(x)) return Err(r, "rule parameters must be variables");
          def.params.push_back(x.str());
        }
        def.required = def.params.size();
        continue;
      }
      if (!IsVarSym(head[i])) return Err(r, "rule parameters must be variables");
      def.params.push_back(head[i].str());
    }
    if (def.params.empty()) return Err(r, "a rule needs at least one parameter");
    MENTAT_ASSIGN_OR_RETURN(def.body, ParseClauses(r.items(), 1));
    MENTAT_RETURN_IF_ERROR(CheckSize(def.body, "rule " + def.name, &rule_clauses));
    auto& defs = out.rules[def.name];
    if (!defs.empty() && defs[0].params.size() != def.params.size())
      return Err(r, "rule " + def.name + " is defined with different arities");
    defs.push_back(std::move(def));
  }
  return out;
}

}  // namespace mentat::query
