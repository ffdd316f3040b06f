// The evaluator and function application.
#include "script/eval.h"

#include "script/analyze.h"
#include "script/coll.h"
#include "script/print.h"

namespace mentat::script {

namespace {

constexpr size_t kInlineArgs = 8;
constexpr int kInlineSlots = 8;

// Counts nested closure calls.
class DepthGuard {
 public:
  DepthGuard(int* depth, int max) : depth_(depth) {
    if (max > 0 && *depth >= max) {
      throw LimitError{Status::Interrupted("script depth limit exceeded (" + std::to_string(max) +
                                           " nested calls)")};
    }
    ++*depth_;
    CheckStack();
  }
  ~DepthGuard() { --*depth_; }

 private:
  int* depth_;
};

ErrorObj* ErrorOf(const ScriptError& e) { return e.error.as<ErrorObj>(); }

}  // namespace

Interp::Interp(Limits limits) : limits_(limits) {}

Interp::~Interp() {
  // Values may reference each other through vars; free them while this heap is current.
  HeapScope scope(&heap_);
  vars_.clear();
  core_.clear();
  arena_.nodes.clear();
  arena_.fns.clear();
  store_state.reset();
}

Var* Interp::Intern(const std::string& name) {
  auto& slot = vars_[name];
  if (!slot) {
    slot = std::make_unique<Var>();
    slot->name = name;
  }
  return slot.get();
}

Var* Interp::FindVar(const std::string& name) const {
  auto it = vars_.find(name);
  return it == vars_.end() ? nullptr : it->second.get();
}

void Interp::DefNative(const std::string& name, NativeFn fn, int min_args, int max_args,
                       bool core) {
  Ref<FnObj> fo = Make<FnObj>(0);
  fo->native = fn;
  fo->name = name;
  fo->min_args = min_args;
  fo->max_args = max_args;
  Val v = Val::Object(Type::kFn, fo.get());
  builtins_.push_back(name);
  Var* var = Intern(name);
  var->value = v;
  var->bound = true;
  if (core) core_[name] = v;
}

const Val* Interp::CoreFn(const std::string& name) const {
  auto it = core_.find(name);
  return it == core_.end() ? nullptr : &it->second;
}

void Interp::Write(std::string_view text) {
  if (output_) output_(text);
}

void Interp::BeginRun() {
  meter_.Begin(limits_.max_steps);
  depth_ = 0;
  recur_ = false;
  SetStackBounds();
}

Val Interp::EvalForm(const edn::Value& form) {
  Analyzer analyzer(*this);
  int nslots = 0;
  Node* node = analyzer.AnalyzeTop(form, &nslots);
  std::vector<Val> slots(static_cast<size_t>(nslots));
  Frame frame{slots.data(), nullptr};
  return Eval(node, frame);
}

Val Interp::Eval(const Node* n, Frame& f) {
  Step();
  switch (n->op) {
    case Op::kConst:
      return n->value;
    case Op::kLocal:
      return f.slots[n->slot];
    case Op::kCaptured:
      return f.self->captured[static_cast<size_t>(n->slot)];
    case Op::kSelf:
      return Val::Object(Type::kFn, const_cast<FnObj*>(f.self));
    case Op::kGlobal:
      if (!n->var->bound) Fail("var " + n->var->name + " is unbound");
      return n->var->value;
    case Op::kIf:
      return Eval(n->kids[Eval(n->kids[0], f).truthy() ? 1 : 2], f);
    case Op::kDo: {
      size_t last = n->kids.size() - 1;
      for (size_t i = 0; i < last; ++i) Eval(n->kids[i], f);
      return Eval(n->kids[last], f);
    }
    case Op::kLet: {
      size_t nb = n->slots.size();
      for (size_t i = 0; i < nb; ++i) f.slots[n->slots[i]] = Eval(n->kids[i], f);
      return Eval(n->kids[nb], f);
    }
    case Op::kLoop: {
      size_t nb = n->slots.size();
      for (size_t i = 0; i < nb; ++i) f.slots[n->slots[i]] = Eval(n->kids[i], f);
      for (;;) {
        Val v = Eval(n->kids[nb], f);
        if (!recur_) return v;
        recur_ = false;
      }
    }
    case Op::kRecur:
      EvalRecur(n, f);
      return Val();
    case Op::kFn:
      return MakeClosure(n, f);
    case Op::kCall:
      return EvalCall(n, f);
    case Op::kDef:
      return EvalDef(n, f);
    case Op::kTry:
      return EvalTry(n, f);
    case Op::kThrow:
      EvalThrow(n, f);
    case Op::kVector:
    case Op::kMap:
    case Op::kSet:
      return EvalCollection(n, f);
  }
  return Val();
}

// The cases with large locals live in their own frames, so that Eval's frame (which every
// nested expression and call adds to the C++ stack) stays small.

void Interp::EvalRecur(const Node* n, Frame& f) {
  size_t nb = n->kids.size();
  if (nb <= kInlineArgs) {
    Val tmp[kInlineArgs];
    for (size_t i = 0; i < nb; ++i) tmp[i] = Eval(n->kids[i], f);
    for (size_t i = 0; i < nb; ++i) f.slots[n->slots[i]] = std::move(tmp[i]);
  } else {
    std::vector<Val> tmp(nb);
    for (size_t i = 0; i < nb; ++i) tmp[i] = Eval(n->kids[i], f);
    for (size_t i = 0; i < nb; ++i) f.slots[n->slots[i]] = std::move(tmp[i]);
  }
  recur_ = true;
}

Val Interp::MakeClosure(const Node* n, Frame& f) {
  Ref<FnObj> fo = Make<FnObj>(n->kids.size() * sizeof(Val));
  fo->tmpl = n->fn;
  fo->name = n->fn->name;
  fo->captured.reserve(n->kids.size());
  for (const Node* src : n->kids) fo->captured.push_back(Eval(src, f));
  return Val::Object(Type::kFn, fo.get());
}

Val Interp::EvalCall(const Node* n, Frame& f) {
  size_t nargs = n->kids.size() - 1;
  try {
    Val fn = Eval(n->kids[0], f);
    if (nargs <= kInlineArgs) {
      Val args[kInlineArgs];
      for (size_t i = 0; i < nargs; ++i) args[i] = Eval(n->kids[i + 1], f);
      return Apply(fn, args, nargs);
    }
    std::vector<Val> args(nargs);
    for (size_t i = 0; i < nargs; ++i) args[i] = Eval(n->kids[i + 1], f);
    return Apply(fn, args.data(), nargs);
  } catch (ScriptError& e) {
    ErrorObj* err = ErrorOf(e);
    if (!err->pos.known()) err->pos = n->pos;
    throw;
  }
}

Val Interp::EvalDef(const Node* n, Frame& f) {
  if (!n->kids.empty()) {
    n->var->value = Eval(n->kids[0], f);
    n->var->bound = true;
  }
  return Val::Symbol("#'user/" + n->var->name);
}

void Interp::EvalThrow(const Node* n, Frame& f) {
  Val e = Eval(n->kids[0], f);
  if (!e.is(Type::kError)) {
    Fail("throw needs an exception (from ex-info), got a " + std::string(TypeName(e.type())));
  }
  if (!e.as<ErrorObj>()->pos.known()) e.as<ErrorObj>()->pos = n->pos;
  throw ScriptError{e};
}

Val Interp::EvalCollection(const Node* n, Frame& f) {
  if (n->op == Op::kVector) {
    VecBuilder b;
    for (const Node* k : n->kids) b.Add(Eval(k, f));
    return b.Build();
  }
  MapBuilder b(n->op == Op::kSet);
  if (n->op == Op::kSet) {
    for (const Node* k : n->kids) b.Add(Eval(k, f));
    return b.Build();
  }
  for (size_t i = 0; i + 1 < n->kids.size(); i += 2) {
    Val k = Eval(n->kids[i], f);
    b.Add(k, Eval(n->kids[i + 1], f));
  }
  return b.Build();
}

Val Interp::EvalTry(const Node* n, Frame& f) {
  Val result;
  bool pending = false;
  ScriptError saved;
  try {
    result = Eval(n->kids[0], f);
  } catch (ScriptError& e) {
    const CatchClause* clause = nullptr;
    for (const CatchClause& c : n->catches) {
      if (!c.info_only || ErrorOf(e)->info) {
        clause = &c;
        break;
      }
    }
    if (!clause) {
      if (!n->finally_node) throw;
      pending = true;
      saved = e;
    } else {
      f.slots[clause->slot] = e.error;
      if (!n->finally_node) return Eval(clause->body, f);
      try {
        result = Eval(clause->body, f);
      } catch (ScriptError& e2) {
        pending = true;
        saved = e2;
      }
    }
  }
  if (n->finally_node) Eval(n->finally_node, f);
  if (pending) throw saved;
  return result;
}

// Keywords, symbols, maps, sets and vectors called as functions (and the error for
// everything else); out of Apply's frame, like the Eval cases above.
Val Interp::ApplyData(const Val& f, const Val* args, size_t n) {
  switch (f.type()) {
    case Type::kKeyword:
    case Type::kSymbol:
      if (n == 0 || n > 2) Fail("a keyword called as a function takes 1 or 2 arguments");
      return Get(args[0], f, n == 2 ? args[1] : Val());
    case Type::kMap:
    case Type::kSet:
      if (n == 0 || n > 2) Fail("a map or set called as a function takes 1 or 2 arguments");
      return Get(f, args[0], n == 2 ? args[1] : Val());
    case Type::kVector:
      if (n != 1 || !args[0].is(Type::kInt)) Fail("a vector called as a function takes an index");
      return Nth(f, args[0].as_int(), nullptr);
    default:
      Fail(std::string("a ") + TypeName(f.type()) + " is not a function: " + PrBrief(f));
  }
}

Val Interp::Apply(const Val& f, const Val* args, size_t n) {
  // Calls written in the source have a handful of arguments; many arguments come from
  // apply or partial and cost a step each, so builtins may walk their arguments freely.
  if (n > kInlineArgs) Steps(static_cast<int64_t>(n));
  switch (f.type()) {
    case Type::kFn: {
      const FnObj* fo = f.as<FnObj>();
      if (fo->native) {
        if (static_cast<int>(n) < fo->min_args ||
            (fo->max_args >= 0 && static_cast<int>(n) > fo->max_args)) {
          ArityError(*fo, n);
        }
        return fo->native(*this, args, n, *fo);
      }
      return Invoke(fo, args, n);
    }
    default:
      return ApplyData(f, args, n);
  }
}

Val Interp::Invoke(const FnObj* fo, const Val* args, size_t n) {
  const FnTemplate* t = fo->tmpl;
  const Arity* arity = nullptr;
  for (const Arity& a : t->arities) {
    if (!a.variadic && static_cast<size_t>(a.nparams) == n) {
      arity = &a;
      break;
    }
  }
  if (!arity) {
    for (const Arity& a : t->arities) {
      if (a.variadic && n >= static_cast<size_t>(a.nparams)) arity = &a;
    }
  }
  if (!arity) ArityError(*fo, n);
  DepthGuard depth(&depth_, limits_.max_depth);
  Val inline_slots[kInlineSlots];
  std::vector<Val> heap_slots;
  Val* slots = inline_slots;
  if (arity->nslots > kInlineSlots) {
    heap_slots.resize(static_cast<size_t>(arity->nslots));
    slots = heap_slots.data();
  }
  size_t np = static_cast<size_t>(arity->nparams);
  for (size_t i = 0; i < np; ++i) slots[i] = args[i];
  if (arity->variadic) {
    ListBuilder rest;
    for (size_t i = np; i < n; ++i) rest.Add(args[i]);
    slots[np] = n > np ? rest.Build() : Val();
  }
  // Keep the closure alive while it runs, even if the caller drops it.
  Val keep = Val::Object(Type::kFn, const_cast<FnObj*>(fo));
  Frame frame{slots, fo};
  for (;;) {
    Val v = Eval(arity->body, frame);
    if (!recur_) return v;
    recur_ = false;
  }
}

void ArityError(const FnObj& self, size_t n) {
  Fail("wrong number of arguments (" + std::to_string(n) + ") passed to " +
       (self.name.empty() ? std::string("fn") : self.name));
}

int64_t IntArg(const FnObj& self, const Val& v, const char* what) {
  if (!v.is(Type::kInt)) {
    Fail(self.name + " expects " + what + ", got " + (v.is_nil() ? "nil" : PrBrief(v)));
  }
  return v.as_int();
}

double NumArg(const FnObj& self, const Val& v) {
  if (!v.is_number()) {
    Fail(self.name + " expects a number, got " + (v.is_nil() ? "nil" : PrBrief(v)));
  }
  return v.as_number();
}

const std::string& StrArg(const FnObj& self, const Val& v) {
  if (!v.is(Type::kString)) {
    Fail(self.name + " expects a string, got " + (v.is_nil() ? "nil" : PrBrief(v)));
  }
  return v.str();
}

}  // namespace mentat::script
