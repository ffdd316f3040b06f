// The analyzer: special forms, symbol resolution and closures' captures.
#include "script/analyze.h"

#include <atomic>

#include "script/coll.h"
#include "script/convert.h"

namespace mentat::script {

struct Analyzer::Scope {
  Scope* parent = nullptr;  // the enclosing function's scope
  std::vector<std::pair<std::string, int>> locals;
  int next_slot = 0;
  std::string self_name;
  std::vector<Node*> captures;  // sources, as nodes of the parent scope
  std::vector<std::pair<Op, int>> capture_keys;
};

namespace {

const edn::Value kNilForm;

bool IsSym(const edn::Value& v, std::string_view name) { return v.is_symbol(name); }

// Literal data: nothing to evaluate inside.
bool IsLiteral(const edn::Value& v) {
  switch (v.kind()) {
    case edn::Kind::kSymbol:
    case edn::Kind::kList:
      return false;
    case edn::Kind::kVector:
    case edn::Kind::kSet:
      for (const edn::Value& x : v.items()) {
        if (!IsLiteral(x)) return false;
      }
      return true;
    case edn::Kind::kMap:
      for (const auto& [k, x] : v.entries()) {
        if (!IsLiteral(k) || !IsLiteral(x)) return false;
      }
      return true;
    default:
      return true;
  }
}

bool IsSpecial(const std::string& name) {
  static const char* const kSpecial[] = {"quote", "if", "do",  "def", "let",   "let*",  "loop",
                                         "recur", "fn", "fn*", "try", "throw", "catch", "finally"};
  for (const char* s : kSpecial) {
    if (name == s) return true;
  }
  return false;
}

}  // namespace

void SyntaxError(edn::Pos pos, std::string message) {
  Ref<ErrorObj> e = Make<ErrorObj>(message.size());
  e->message = std::move(message);
  e->pos = pos;
  throw ScriptError{Val::Object(Type::kError, e.get())};
}

bool IsLocalName(const edn::Value& v) { return v.is_symbol() && v.ns().empty() && v.str() != "&"; }

edn::Value Analyzer::Gensym(std::string_view prefix) {
  static std::atomic<uint64_t> counter{0};
  return edn::Value::Symbol(std::string(prefix) + "__" + std::to_string(++counter));
}

Node* Analyzer::AnalyzeTop(const edn::Value& form, int* nslots) {
  Scope top;
  Node* n = Analyze(form, &top, Ctx{});
  *nslots = top.next_slot;
  return n;
}

int Analyzer::NewSlot(Scope* s) { return s->next_slot++; }

Node* Analyzer::Const(Val v, edn::Pos pos) {
  Node* n = in_.arena().NewNode(Op::kConst, pos);
  n->value = std::move(v);
  return n;
}

Node* Analyzer::Analyze(const edn::Value& form, Scope* s, const Ctx& ctx) {
  switch (form.kind()) {
    case edn::Kind::kSymbol:
      return AnalyzeSymbol(form, s);
    case edn::Kind::kList:
      return AnalyzeList(form, s, ctx);
    case edn::Kind::kVector:
    case edn::Kind::kMap:
    case edn::Kind::kSet:
      if (IsLiteral(form)) return Const(FromEdn(form), form.pos());
      return AnalyzeCollection(form, s);
    default:
      return Const(FromEdn(form), form.pos());
  }
}

Node* Analyzer::ResolveLocal(const std::string& name, Scope* s, edn::Pos pos) {
  for (size_t i = s->locals.size(); i-- > 0;) {
    if (s->locals[i].first == name) {
      Node* n = in_.arena().NewNode(Op::kLocal, pos);
      n->slot = s->locals[i].second;
      return n;
    }
  }
  if (!s->self_name.empty() && s->self_name == name) return in_.arena().NewNode(Op::kSelf, pos);
  if (!s->parent) return nullptr;
  Node* outer = ResolveLocal(name, s->parent, pos);
  if (!outer) return nullptr;
  std::pair<Op, int> key{outer->op, outer->slot};
  size_t idx = 0;
  while (idx < s->capture_keys.size() && s->capture_keys[idx] != key) ++idx;
  if (idx == s->capture_keys.size()) {
    s->capture_keys.push_back(key);
    s->captures.push_back(outer);
  }
  Node* n = in_.arena().NewNode(Op::kCaptured, pos);
  n->slot = static_cast<int>(idx);
  return n;
}

Node* Analyzer::AnalyzeSymbol(const edn::Value& sym, Scope* s) {
  std::string ns(sym.ns()), name(sym.name());
  if (ns.empty()) {
    if (Node* local = ResolveLocal(name, s, sym.pos())) return local;
  }
  if (!ns.empty()) {
    if (auto it = in_.aliases().find(ns); it != in_.aliases().end()) ns = it->second;
    if (ns == "clojure.core") {
      if (const Val* f = in_.CoreFn(name)) return Const(*f, sym.pos());
      ns.clear();
    } else if (ns == "user") {
      ns.clear();
    }
  }
  std::string full = ns.empty() ? name : ns + "/" + name;
  Var* var = in_.FindVar(full);
  if (!var) {
    if (IsSpecial(full)) SyntaxError(sym.pos(), "special form " + full + " used as a value");
    SyntaxError(sym.pos(), "unable to resolve symbol: " + full);
  }
  Node* n = in_.arena().NewNode(Op::kGlobal, sym.pos());
  n->var = var;
  return n;
}

Node* Analyzer::AnalyzeCollection(const edn::Value& form, Scope* s) {
  Op op = form.is_vector() ? Op::kVector : form.is_map() ? Op::kMap : Op::kSet;
  Node* n = in_.arena().NewNode(op, form.pos());
  if (form.is_map()) {
    for (const auto& [k, v] : form.entries()) {
      n->kids.push_back(Analyze(k, s, Ctx{}));
      n->kids.push_back(Analyze(v, s, Ctx{}));
    }
  } else {
    for (const edn::Value& x : form.items()) n->kids.push_back(Analyze(x, s, Ctx{}));
  }
  return n;
}

Node* Analyzer::AnalyzeBody(const edn::Vec& forms, size_t from, edn::Pos pos, Scope* s,
                            const Ctx& ctx) {
  if (from >= forms.size()) return Const(Val(), pos);
  if (from + 1 == forms.size()) return Analyze(forms[from], s, ctx);
  Node* n = in_.arena().NewNode(Op::kDo, pos);
  for (size_t i = from; i < forms.size(); ++i) {
    n->kids.push_back(Analyze(forms[i], s, i + 1 == forms.size() ? ctx : Ctx{}));
  }
  return n;
}

Node* Analyzer::AnalyzeList(const edn::Value& form, Scope* s, const Ctx& ctx) {
  const edn::Vec& items = form.items();
  if (items.empty()) return Const(Val::EmptyList(), form.pos());
  const edn::Value& head = items[0];
  if (head.is_symbol()) {
    std::string name = head.str();
    if (name.rfind("clojure.core/", 0) == 0) name = name.substr(13);
    bool shadowed = IsLocalName(head) && ResolveLocal(name, s, head.pos()) != nullptr;
    if (!shadowed) {
      if (name == "quote") {
        if (items.size() != 2) SyntaxError(form.pos(), "quote takes one form");
        return Const(FromEdn(items[1]), form.pos());
      }
      if (name == "if") return AnalyzeIf(form, s, ctx);
      if (name == "do") return AnalyzeBody(items, 1, form.pos(), s, ctx);
      if (name == "def") return AnalyzeDef(form, s);
      if (name == "let" || name == "let*") return AnalyzeLet(form, s, ctx, false);
      if (name == "loop") return AnalyzeLet(form, s, ctx, true);
      if (name == "recur") return AnalyzeRecur(form, s, ctx);
      if (name == "fn" || name == "fn*") return AnalyzeFn(form, s);
      if (name == "try") return AnalyzeTry(form, s, ctx);
      if (name == "throw") {
        if (items.size() != 2) SyntaxError(form.pos(), "throw takes one expression");
        Node* n = in_.arena().NewNode(Op::kThrow, form.pos());
        n->kids.push_back(Analyze(items[1], s, Ctx{}));
        return n;
      }
      if (name == "catch" || name == "finally") {
        SyntaxError(form.pos(), name + " is only allowed at the end of a try");
      }
      if (std::optional<edn::Value> expanded = ExpandMacro(name, form)) {
        return Analyze(*expanded, s, ctx);
      }
    }
  }
  return AnalyzeCall(form, s);
}

Node* Analyzer::AnalyzeCall(const edn::Value& form, Scope* s) {
  Node* n = in_.arena().NewNode(Op::kCall, form.pos());
  for (const edn::Value& x : form.items()) n->kids.push_back(Analyze(x, s, Ctx{}));
  return n;
}

Node* Analyzer::AnalyzeIf(const edn::Value& form, Scope* s, const Ctx& ctx) {
  const edn::Vec& items = form.items();
  if (items.size() < 3 || items.size() > 4) {
    SyntaxError(form.pos(), "if takes a test, a then form and an optional else form");
  }
  Node* n = in_.arena().NewNode(Op::kIf, form.pos());
  n->kids.push_back(Analyze(items[1], s, Ctx{}));
  n->kids.push_back(Analyze(items[2], s, ctx));
  n->kids.push_back(items.size() == 4 ? Analyze(items[3], s, ctx) : Const(Val(), form.pos()));
  return n;
}

Node* Analyzer::AnalyzeDef(const edn::Value& form, Scope* s) {
  const edn::Vec& items = form.items();
  if (items.size() < 2 || items.size() > 4 || !items[1].is_symbol()) {
    SyntaxError(form.pos(), "def takes a symbol, an optional docstring and a value");
  }
  const edn::Value& sym = items[1];
  if (!sym.ns().empty() && sym.ns() != "user") {
    SyntaxError(sym.pos(), "cannot def a namespaced symbol: " + sym.str());
  }
  if (IsSpecial(std::string(sym.name()))) {
    SyntaxError(sym.pos(), "cannot redefine special form " + std::string(sym.name()));
  }
  Node* n = in_.arena().NewNode(Op::kDef, form.pos());
  n->var = in_.Intern(std::string(sym.name()));
  if (items.size() == 4 && !items[2].is_string()) {
    SyntaxError(items[2].pos(), "the docstring of def must be a string");
  }
  if (items.size() >= 3) n->kids.push_back(Analyze(items.back(), s, Ctx{}));
  return n;
}

Node* Analyzer::AnalyzeLet(const edn::Value& form, Scope* s, const Ctx& ctx, bool loop) {
  const edn::Vec& items = form.items();
  const char* what = loop ? "loop" : "let";
  if (items.size() < 2 || !items[1].is_vector()) {
    SyntaxError(form.pos(), std::string(what) + " needs a vector of bindings");
  }
  const edn::Vec& bindings = items[1].items();
  if (bindings.size() % 2 != 0) {
    SyntaxError(items[1].pos(), std::string(what) + " needs an even number of binding forms");
  }
  edn::Vec pairs;
  edn::Vec inner;  // loop: destructuring done inside the loop body
  for (size_t i = 0; i < bindings.size(); i += 2) {
    if (loop && !IsLocalName(bindings[i])) {
      edn::Value g = Gensym("loop");
      pairs.push_back(g);
      pairs.push_back(bindings[i + 1]);
      inner.push_back(bindings[i]);
      inner.push_back(g);
    } else {
      Destructure(bindings[i], bindings[i + 1], &pairs);
    }
  }
  size_t saved_locals = s->locals.size();
  Node* n = in_.arena().NewNode(loop ? Op::kLoop : Op::kLet, form.pos());
  for (size_t i = 0; i < pairs.size(); i += 2) {
    if (!IsLocalName(pairs[i])) SyntaxError(pairs[i].pos(), "bad binding form: " + Print(pairs[i]));
    n->kids.push_back(Analyze(pairs[i + 1], s, Ctx{}));
    int slot = NewSlot(s);
    n->slots.push_back(slot);
    s->locals.emplace_back(pairs[i].str(), slot);
  }
  Ctx body_ctx = ctx;
  if (loop) {
    body_ctx.tail = true;
    body_ctx.recur = &n->slots;
  }
  if (loop && !inner.empty()) {
    edn::Vec let_form{edn::Value::Symbol("let"), edn::Value::Vector(inner)};
    for (size_t i = 2; i < items.size(); ++i) let_form.push_back(items[i]);
    edn::Value wrapped = edn::Value::List(std::move(let_form));
    wrapped.set_pos(form.pos());
    n->kids.push_back(Analyze(wrapped, s, body_ctx));
  } else {
    n->kids.push_back(AnalyzeBody(items, 2, form.pos(), s, body_ctx));
  }
  s->locals.resize(saved_locals);
  return n;
}

Node* Analyzer::AnalyzeRecur(const edn::Value& form, Scope* s, const Ctx& ctx) {
  if (!ctx.tail || !ctx.recur) {
    SyntaxError(form.pos(), "recur can only be used in a tail position of a loop or fn");
  }
  size_t nargs = form.size() - 1;
  if (nargs != ctx.recur->size()) {
    SyntaxError(form.pos(), "recur expects " + std::to_string(ctx.recur->size()) +
                                " arguments, got " + std::to_string(nargs));
  }
  Node* n = in_.arena().NewNode(Op::kRecur, form.pos());
  for (size_t i = 1; i < form.size(); ++i) n->kids.push_back(Analyze(form.items()[i], s, Ctx{}));
  n->slots = *ctx.recur;
  return n;
}

Node* Analyzer::AnalyzeFn(const edn::Value& form, Scope* s) {
  const edn::Vec& items = form.items();
  size_t i = 1;
  Scope scope;
  scope.parent = s;
  FnTemplate* t = in_.arena().NewFn();
  if (i < items.size() && items[i].is_symbol()) {
    if (!IsLocalName(items[i])) SyntaxError(items[i].pos(), "bad fn name " + items[i].str());
    scope.self_name = items[i].str();
    t->name = scope.self_name;
    ++i;
  }
  std::vector<edn::Value> arity_forms;
  if (i < items.size() && items[i].is_vector()) {
    edn::Vec one(items.begin() + static_cast<long>(i), items.end());
    arity_forms.push_back(edn::Value::List(std::move(one)));
  } else {
    for (; i < items.size(); ++i) {
      if (!items[i].is_list() || items[i].size() == 0 || !items[i].items()[0].is_vector()) {
        SyntaxError(items[i].pos(), "fn needs a parameter vector or ([params] body) arities");
      }
      arity_forms.push_back(items[i]);
    }
  }
  if (arity_forms.empty()) SyntaxError(form.pos(), "fn needs a parameter vector");
  for (const edn::Value& af : arity_forms) {
    const edn::Vec& params = af.items()[0].items();
    Arity arity;
    scope.locals.clear();
    scope.next_slot = 0;
    edn::Vec destructure;  // pattern, param symbol pairs
    std::vector<edn::Value> names;
    for (size_t p = 0; p < params.size(); ++p) {
      if (IsSym(params[p], "&")) {
        if (p + 2 != params.size()) {
          SyntaxError(params[p].pos(), "& must be followed by exactly one parameter");
        }
        arity.variadic = true;
        continue;
      }
      edn::Value name = params[p];
      if (!IsLocalName(name)) {
        if (name.is_symbol()) SyntaxError(name.pos(), "bad parameter name " + name.str());
        name = Gensym("p");
        destructure.push_back(params[p]);
        destructure.push_back(name);
      }
      names.push_back(name);
    }
    arity.nparams = static_cast<int>(names.size()) - (arity.variadic ? 1 : 0);
    for (const Arity& other : t->arities) {
      if (other.nparams == arity.nparams && other.variadic == arity.variadic) {
        SyntaxError(af.pos(),
                    "fn has two arities with " + std::to_string(arity.nparams) + " parameters");
      }
      if (other.variadic && arity.variadic) {
        SyntaxError(af.pos(), "fn can have only one variadic arity");
      }
    }
    std::vector<int> param_slots;
    for (const edn::Value& name : names) {
      int slot = NewSlot(&scope);
      param_slots.push_back(slot);
      scope.locals.emplace_back(name.str(), slot);
    }
    Ctx ctx{true, &param_slots};
    if (destructure.empty()) {
      arity.body = AnalyzeBody(af.items(), 1, af.pos(), &scope, ctx);
    } else {
      edn::Vec let_form{edn::Value::Symbol("let"), edn::Value::Vector(destructure)};
      for (size_t b = 1; b < af.size(); ++b) let_form.push_back(af.items()[b]);
      edn::Value wrapped = edn::Value::List(std::move(let_form));
      wrapped.set_pos(af.pos());
      arity.body = Analyze(wrapped, &scope, ctx);
    }
    arity.nslots = scope.next_slot;
    t->arities.push_back(arity);
  }
  t->ncaptures = static_cast<int>(scope.captures.size());
  Node* n = in_.arena().NewNode(Op::kFn, form.pos());
  n->fn = t;
  n->kids = scope.captures;
  return n;
}

Node* Analyzer::AnalyzeTry(const edn::Value& form, Scope* s, const Ctx&) {
  const edn::Vec& items = form.items();
  Node* n = in_.arena().NewNode(Op::kTry, form.pos());
  size_t body_end = items.size();
  for (size_t i = 1; i < items.size(); ++i) {
    const edn::Value& x = items[i];
    bool clause = x.is_list() && x.size() > 0 &&
                  (IsSym(x.items()[0], "catch") || IsSym(x.items()[0], "finally"));
    if (clause && body_end == items.size()) body_end = i;
    if (!clause && body_end != items.size()) {
      SyntaxError(x.pos(), "only catch and finally clauses may follow them in a try");
    }
  }
  edn::Vec body(items.begin(), items.begin() + static_cast<long>(body_end));
  n->kids.push_back(AnalyzeBody(body, 1, form.pos(), s, Ctx{}));
  for (size_t i = body_end; i < items.size(); ++i) {
    const edn::Vec& c = items[i].items();
    if (IsSym(c[0], "finally")) {
      if (i + 1 != items.size()) SyntaxError(items[i].pos(), "finally must be the last clause");
      n->finally_node = AnalyzeBody(c, 1, items[i].pos(), s, Ctx{});
      continue;
    }
    if (c.size() < 3 || !IsLocalName(c[2])) {
      SyntaxError(items[i].pos(),
                  "catch needs a class and a binding symbol: (catch Exception e ...)");
    }
    CatchClause clause;
    const edn::Value& cls = c[1];
    std::string cname = cls.is_symbol() ? cls.str() : cls.is_keyword() ? ":" + cls.str() : "";
    static const char* const kAny[] = {"Exception",
                                       "Throwable",
                                       "Error",
                                       "RuntimeException",
                                       "Object",
                                       ":default",
                                       "java.lang.Exception",
                                       "java.lang.Throwable",
                                       "java.lang.Error",
                                       "java.lang.RuntimeException"};
    bool known = false;
    for (const char* k : kAny) known = known || cname == k;
    if (cname == "ExceptionInfo" || cname == "clojure.lang.ExceptionInfo") {
      known = true;
      clause.info_only = true;
    }
    if (!known) SyntaxError(cls.pos(), "unknown exception class " + Print(cls));
    size_t saved = s->locals.size();
    clause.slot = NewSlot(s);
    s->locals.emplace_back(c[2].str(), clause.slot);
    clause.body = AnalyzeBody(c, 3, items[i].pos(), s, Ctx{});
    s->locals.resize(saved);
    n->catches.push_back(clause);
  }
  return n;
}

}  // namespace mentat::script
