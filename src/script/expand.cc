// The built-in macros, expanded into special forms: defn when when-not if-not when-let
// if-let when-some if-some when-first cond condp case and or -> ->> as-> some-> some->>
// cond-> cond->> dotimes doseq for while declare comment assert ns with-out-str.
#include "script/analyze.h"

namespace mentat::script {

namespace {

using edn::Value;
using edn::Vec;

Value S(const std::string& name) { return Value::Symbol(name); }
Value Core(const std::string& name) { return Value::Symbol("clojure.core/" + name); }

class Expander {
 public:
  explicit Expander(const Value& form) : form_(form), it_(form.items()), pos_(form.pos()) {}

  Value L(Vec items) const {
    Value v = Value::List(std::move(items));
    v.set_pos(pos_);
    return v;
  }
  Value Vector(Vec items) const {
    Value v = Value::Vector(std::move(items));
    v.set_pos(pos_);
    return v;
  }
  Vec From(size_t i) const {
    return i < it_.size() ? Vec(it_.begin() + static_cast<long>(i), it_.end()) : Vec();
  }
  Value Do(Vec body) const {
    body.insert(body.begin(), S("do"));
    return L(std::move(body));
  }
  [[noreturn]] void Error(const std::string& message) const { SyntaxError(pos_, message); }
  void Need(size_t n, const char* usage) const {
    if (it_.size() < n) Error(std::string("usage: ") + usage);
  }
  // The binding vector of if-let and friends: exactly [pattern init].
  const Vec& Pair(const char* what) const {
    if (it_.size() < 2 || !it_[1].is_vector() || it_[1].size() != 2) {
      Error(std::string(what) + " needs a binding vector of one pattern and one value");
    }
    return it_[1].items();
  }

  Value Defn() const {
    Need(3, "(defn name [params] body...)");
    if (!it_[1].is_symbol()) Error("defn needs a name");
    size_t i = 2;
    if (i < it_.size() && it_[i].is_string()) ++i;
    if (i < it_.size() && it_[i].is_map()) ++i;
    Vec fn{S("fn"), it_[1]};
    for (; i < it_.size(); ++i) fn.push_back(it_[i]);
    return L({S("def"), it_[1], L(std::move(fn))});
  }

  Value IfLet(bool when, bool some) const {
    const Vec& b = Pair(when ? "when-let" : "if-let");
    Value g = Analyzer::Gensym("test");
    Value test = some ? L({Core("some?"), g}) : g;
    Value then = when ? L({S("let"), Vector({b[0], g}), Do(From(2))})
                      : L({S("let"), Vector({b[0], g}), it_.size() > 2 ? it_[2] : Value()});
    if (!when && (it_.size() < 3 || it_.size() > 4)) Error("if-let takes a then and an else form");
    Value otherwise = !when && it_.size() == 4 ? it_[3] : Value();
    return L({S("let"), Vector({g, b[1]}), L({S("if"), test, then, otherwise})});
  }

  Value Cond(size_t i) const {
    if (i >= it_.size()) return Value();
    if (i + 1 >= it_.size()) Error("cond needs an even number of forms");
    return L({S("if"), it_[i], it_[i + 1], Cond(i + 2)});
  }

  Value NoMatch(const Value& v) const {
    return L({S("throw"),
              L({Core("ex-info"),
                 L({Core("str"), Value::String("no matching clause: "), L({Core("pr-str"), v})}),
                 Value::Map({})})});
  }

  Value Condp() const {
    Need(3, "(condp pred expr test result ... default?)");
    Value p = Analyzer::Gensym("pred"), e = Analyzer::Gensym("expr");
    Value body = NoMatch(e);
    size_t n = it_.size() - 3;
    size_t pairs_end = 3 + (n / 2) * 2;
    if (n % 2 == 1) body = it_.back();
    for (size_t i = pairs_end; i > 3; i -= 2) {
      body = L({S("if"), L({p, it_[i - 2], e}), it_[i - 1], body});
    }
    return L({S("let"), Vector({p, it_[1], e, it_[2]}), body});
  }

  Value Case() const {
    Need(2, "(case expr constant result ... default?)");
    Value g = Analyzer::Gensym("case");
    size_t n = it_.size() - 2;
    size_t pairs_end = 2 + (n / 2) * 2;
    Value body = n % 2 == 1 ? it_.back() : NoMatch(g);
    for (size_t i = pairs_end; i > 2; i -= 2) {
      const Value& k = it_[i - 2];
      Value test = k.is_list() ? L({Core("contains?"), L({S("quote"), Value::Set(k.items())}), g})
                               : L({Core("="), g, L({S("quote"), k})});
      body = L({S("if"), test, it_[i - 1], body});
    }
    return L({S("let"), Vector({g, it_[1]}), body});
  }

  Value AndOr(bool is_and, size_t i) const {
    if (i >= it_.size()) return is_and ? Value::Bool(true) : Value();
    if (i + 1 == it_.size()) return it_[i];
    Value g = Analyzer::Gensym(is_and ? "and" : "or");
    Value rest = AndOr(is_and, i + 1);
    return L({S("let"), Vector({g, it_[i]}),
              is_and ? L({S("if"), g, rest, g}) : L({S("if"), g, g, rest})});
  }

  Value Thread(const Value& x, const Value& step, bool last) const {
    if (step.is_list() && step.size() > 0) {
      Vec items = step.items();
      if (last) {
        items.push_back(x);
      } else {
        items.insert(items.begin() + 1, x);
      }
      Value v = Value::List(std::move(items));
      v.set_pos(step.pos());
      return v;
    }
    return L({step, x});
  }

  Value Arrow(bool last) const {
    Need(2, "(-> x forms...)");
    Value x = it_[1];
    for (size_t i = 2; i < it_.size(); ++i) x = Thread(x, it_[i], last);
    return x;
  }

  Value AsArrow() const {
    Need(3, "(as-> expr name forms...)");
    Vec b{it_[2], it_[1]};
    for (size_t i = 3; i < it_.size(); ++i) {
      b.push_back(it_[2]);
      b.push_back(it_[i]);
    }
    return L({S("let"), Vector(std::move(b)), it_[2]});
  }

  Value SomeArrow(bool last, const Value& x, size_t i) const {
    if (i >= it_.size()) return x;
    Value g = Analyzer::Gensym("some");
    return L({S("let"), Vector({g, x}),
              L({S("if"), L({Core("nil?"), g}), Value(),
                 SomeArrow(last, Thread(g, it_[i], last), i + 1)})});
  }

  Value CondArrow(bool last) const {
    Need(2, "(cond-> x test form ...)");
    if ((it_.size() - 2) % 2 != 0) Error("cond-> needs pairs of test and form");
    Value g = Analyzer::Gensym("cond");
    Vec b{g, it_[1]};
    for (size_t i = 2; i < it_.size(); i += 2) {
      b.push_back(g);
      b.push_back(L({S("if"), it_[i], Thread(g, it_[i + 1], last), g}));
    }
    return L({S("let"), Vector(std::move(b)), g});
  }

  Value Dotimes() const {
    if (it_.size() < 2 || !it_[1].is_vector() || it_[1].size() != 2 ||
        !IsLocalName(it_[1].items()[0])) {
      Error("dotimes needs a binding vector [name count]");
    }
    Value i = it_[1].items()[0], n = Analyzer::Gensym("n");
    Vec body = From(2);
    body.push_back(L({S("recur"), L({Core("inc"), i})}));
    return L({S("let"), Vector({n, it_[1].items()[1]}),
              L({S("loop"), Vector({i, Value::Int(0)}),
                 L({S("if"), L({Core("<"), i, n}), Do(std::move(body)), Value()})})});
  }

  // One element's step of a doseq/for binding: modifiers, then the inner body and the
  // recur to the next element.
  Value Step(const std::vector<std::pair<Value, Value>>& mods, size_t k, const Value& inner,
             const Value& recur) const {
    if (k == mods.size()) return Do({inner, recur});
    const Value& kw = mods[k].first;
    const Value& arg = mods[k].second;
    Value rest = Step(mods, k + 1, inner, recur);
    if (kw.is_keyword("let")) return L({S("let"), arg, rest});
    if (kw.is_keyword("when")) return L({S("if"), arg, rest, recur});
    if (kw.is_keyword("while")) return L({S("if"), arg, rest, Value()});
    Error("unknown modifier " + Print(kw) + " (expected :let, :when or :while)");
  }

  Value Loops(const Vec& b, size_t i, const Value& body) const {
    const Value& pattern = b[i];
    const Value& coll = b[i + 1];
    size_t j = i + 2;
    std::vector<std::pair<Value, Value>> mods;
    while (j + 1 < b.size() && b[j].is_keyword()) {
      mods.emplace_back(b[j], b[j + 1]);
      j += 2;
    }
    if (j < b.size() && b[j].is_keyword()) Error("modifier " + Print(b[j]) + " needs a value");
    Value inner = j < b.size() ? Loops(b, j, body) : body;
    Value s = Analyzer::Gensym("seq");
    Value recur = L({S("recur"), L({Core("next"), s})});
    Value step = Step(mods, 0, inner, recur);
    return L(
        {S("loop"), Vector({s, L({Core("seq"), coll})}),
         L({S("if"), s, L({S("let"), Vector({pattern, L({Core("first"), s})}), step}), Value()})});
  }

  const Vec& SeqBindings(const char* what) const {
    if (it_.size() < 2 || !it_[1].is_vector() || it_[1].size() < 2 || it_[1].size() % 2 != 0) {
      Error(std::string(what) + " needs a binding vector [name coll ...]");
    }
    return it_[1].items();
  }

  Value Doseq() const {
    const Vec& b = SeqBindings("doseq");
    return Loops(b, 0, Do(From(2)));
  }

  Value For() const {
    const Vec& b = SeqBindings("for");
    if (it_.size() != 3) Error("for takes a binding vector and one body expression");
    Value acc = Analyzer::Gensym("acc");
    Value push = L({Core("swap!"), acc, Core("conj"), it_[2]});
    return L({S("let"), Vector({acc, L({Core("atom"), Vector({})})}), Loops(b, 0, push),
              L({Core("apply"), Core("list"), L({Core("deref"), acc})})});
  }

  Value Assert() const {
    Need(2, "(assert expr message?)");
    Value msg = Value::String("Assert failed: ");
    Vec text{Core("str"), msg};
    if (it_.size() > 2) {
      text.push_back(it_[2]);
      text.push_back(Value::String("\n"));
    }
    text.push_back(L({Core("pr-str"), L({S("quote"), it_[1]})}));
    return L({S("if"), it_[1], Value(),
              L({S("throw"), L({Core("ex-info"), L(std::move(text)), Value::Map({})})})});
  }

 private:
  const Value& form_;
  const Vec& it_;
  edn::Pos pos_;
};

}  // namespace

std::optional<edn::Value> ExpandMacro(const std::string& head, const edn::Value& form) {
  Expander x(form);
  if (head == "defn" || head == "defn-") return x.Defn();
  if (head == "when") {
    x.Need(2, "(when test body...)");
    return x.L({S("if"), form.items()[1], x.Do(x.From(2)), Value()});
  }
  if (head == "when-not") {
    x.Need(2, "(when-not test body...)");
    return x.L({S("if"), form.items()[1], Value(), x.Do(x.From(2))});
  }
  if (head == "if-not") {
    if (form.size() < 3 || form.size() > 4) x.Error("usage: (if-not test then else?)");
    return x.L(
        {S("if"), form.items()[1], form.size() == 4 ? form.items()[3] : Value(), form.items()[2]});
  }
  if (head == "when-let") return x.IfLet(true, false);
  if (head == "if-let") return x.IfLet(false, false);
  if (head == "when-some") return x.IfLet(true, true);
  if (head == "if-some") return x.IfLet(false, true);
  if (head == "when-first") {
    const Vec& b = x.Pair("when-first");
    Value g = Analyzer::Gensym("seq");
    return x.L({S("let"), x.Vector({g, x.L({Core("seq"), b[1]})}),
                x.L({S("if"), g,
                     x.L({S("let"), x.Vector({b[0], x.L({Core("first"), g})}), x.Do(x.From(2))}),
                     Value()})});
  }
  if (head == "cond") return x.Cond(1);
  if (head == "condp") return x.Condp();
  if (head == "case") return x.Case();
  if (head == "and") return x.AndOr(true, 1);
  if (head == "or") return x.AndOr(false, 1);
  if (head == "->") return x.Arrow(false);
  if (head == "->>") return x.Arrow(true);
  if (head == "as->") return x.AsArrow();
  if (head == "some->" || head == "some->>") {
    x.Need(2, "(some-> x forms...)");
    return x.SomeArrow(head == "some->>", form.items()[1], 2);
  }
  if (head == "cond->") return x.CondArrow(false);
  if (head == "cond->>") return x.CondArrow(true);
  if (head == "dotimes") return x.Dotimes();
  if (head == "doseq") return x.Doseq();
  if (head == "for") return x.For();
  if (head == "while") {
    x.Need(2, "(while test body...)");
    Vec body = x.From(2);
    body.push_back(x.L({S("recur")}));
    return x.L(
        {S("loop"), x.Vector({}), x.L({S("if"), form.items()[1], x.Do(std::move(body)), Value()})});
  }
  if (head == "declare") {
    Vec defs{S("do")};
    for (const Value& sym : x.From(1)) defs.push_back(x.L({S("def"), sym}));
    return x.L(std::move(defs));
  }
  if (head == "comment" || head == "ns") return Value();
  if (head == "assert") return x.Assert();
  if (head == "with-out-str") {
    Vec fn{S("fn"), x.Vector({})};
    for (const Value& f : x.From(1)) fn.push_back(f);
    return x.L({Core("with-out-str*"), x.L(std::move(fn))});
  }
  return std::nullopt;
}

}  // namespace mentat::script
