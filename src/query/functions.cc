// Pass 2 (functions): predicates and functions with bindings, compiled to SQL
// expressions. Functions whose result can be nil (division by zero, no regex match)
// drop the row, as Datomic does when a function returns nil.
#include <algorithm>

#include "query/analyze.h"
#include "schema/names.h"
#include "storage/format.h"
#include "util/regex.h"

namespace mentat::query {

namespace {
// Constant conditions, written so that every engine takes them as booleans (SQLite's 0 and
// 1 are not PostgreSQL's).
constexpr const char* kTrue = "(1 = 1)";
constexpr const char* kFalse = "(1 = 0)";
}  // namespace

namespace {

// "clojure.string/starts-with?" and "str/starts-with?" are "starts-with?".
std::string BaseName(const std::string& fn) {
  auto slash = fn.rfind('/');
  if (slash == std::string::npos || slash + 1 >= fn.size()) return fn;
  std::string ns = fn.substr(0, slash);
  if (ns == "clojure.string" || ns == "str" || ns == "string" || ns == "clojure.core")
    return fn.substr(slash + 1);
  return fn;
}

bool IsNumericType(VT t) {
  return t == VT::kLong || t == VT::kDouble || t == VT::kFloat || t == VT::kNumeric ||
         t == VT::kRef || !IsStatic(t);
}

// bigint and bigdec values are stored as order-preserving keys (util/decimal.h): they
// compare with each other as they are, and with other numbers through mentat_decimal_key.
bool IsDecimalType(VT t) { return t == VT::kBigInt || t == VT::kBigDec; }

bool IsComparison(const std::string& f) {
  return f == "=" || f == "==" || f == "!=" || f == "not=" || f == "<" || f == "<=" || f == ">" ||
         f == ">=";
}

// SQL text of `b` as a Clojure `str` would print it.
Expr StrOf(const VarBind& b) {
  switch (b.type) {
    case VT::kString:
    case VT::kKeyword:
      return b.sql;
    case VT::kLong:
    case VT::kRef:
      return Expr::Call(Fn::kCastText, {b.sql});
    case VT::kBoolean:
      return Expr::Call(Fn::kBoolText, {b.sql});
    case VT::kInstant:
      return Expr::Call(Fn::kFmtInst, {b.sql});
    case VT::kUuid:
      return Expr::Call(Fn::kFmtUuid, {b.sql});
    case VT::kBigInt:
    case VT::kBigDec:
      return Expr::Call(Fn::kFmtDecimal, {b.sql, b.type == VT::kBigInt ? "1" : "0"});
    case VT::kUri:
    case VT::kSymbol:
      return b.sql;
    default:
      return Expr::Call(Fn::kStr, {b.sql});
  }
}

// Every one of `terms` (one or more): a AND b AND ...
Expr AllOf(std::vector<Expr> terms) {
  return terms.size() == 1 ? std::move(terms[0]) : Expr::Call(Fn::kAnd, std::move(terms));
}

}  // namespace

Status Analyzer::BindResult(const Clause& c, Scope* s, const BindingForm& b,
                            std::vector<VarBind> vals, bool nullable) {
  auto bind_one = [&](const std::string& var, VarBind v) -> Status {
    if (var == "_") return Status::OK();
    if (nullable && !v.sql.empty()) AddWhere(s, Expr::Call(Fn::kIsNotNull, {v.sql}));
    bool was_bound = Lookup(*s, var) != nullptr;
    std::set<int> deps = v.deps;
    bool constant = v.deps.empty() && (v.constant || v.slot >= 0);
    MENTAT_RETURN_IF_ERROR(BindOrConstrain(s, var, std::move(v), -1, c.form));
    if (!was_bound) {
      Block& blk = unit_->blocks[s->block];
      if (constant) {
        blk.bound_on_entry.insert(var);
      } else {
        blk.expr_deps[var] = deps;
      }
    }
    return Status::OK();
  };
  switch (b.kind) {
    case BindingForm::Kind::kBlank:
      return Status::OK();
    case BindingForm::Kind::kScalar:
      if (vals.size() != 1) {
        VarBind t;
        t.type = VT::kTuple;
        t.parts = std::move(vals);
        for (const auto& p : t.parts) t.deps.insert(p.deps.begin(), p.deps.end());
        return bind_one(b.vars[0], std::move(t));
      }
      return bind_one(b.vars[0], std::move(vals[0]));
    case BindingForm::Kind::kTuple: {
      if (vals.size() == 1 && vals[0].type == VT::kTuple) vals = vals[0].parts;
      if (vals.size() != b.vars.size())
        return ClauseError(Code::kInvalidArgument, c.form,
                           "the tuple binding has " + std::to_string(b.vars.size()) +
                               " variables but " + c.fn + " returns " +
                               std::to_string(vals.size()) + " values");
      for (size_t i = 0; i < vals.size(); ++i)
        MENTAT_RETURN_IF_ERROR(bind_one(b.vars[i], std::move(vals[i])));
      return Status::OK();
    }
    case BindingForm::Kind::kColl:
    case BindingForm::Kind::kRel:
      return ClauseError(Code::kInvalidArgument, c.form,
                         c.fn + " returns a single value; use a scalar or tuple binding");
  }
  return Status::OK();
}

Status Analyzer::Function(const Clause& c, Scope* s, bool* done) {
  *done = false;
  for (const Term& t : c.args)
    if (t.is_var() && !Lookup(*s, t.name)) return Status::OK();  // wait for bindings
  *done = true;
  bool handled = false;
  MENTAT_RETURN_IF_ERROR(SpecialFunction(c, s, &handled));
  if (handled) return Status::OK();
  MENTAT_ASSIGN_OR_RETURN(FnValue fv, ScalarFunction(c, *s));
  if (fv.required_part >= 0)
    AddWhere(s, Expr::Call(Fn::kIsNotNull, {fv.values[static_cast<size_t>(fv.required_part)].sql}));
  return BindResult(c, s, c.binding, std::move(fv.values), fv.nullable);
}

Status Analyzer::Predicate(const Clause& c, Scope* s) {
  for (const Term& t : c.args)
    if (t.is_var() && !Lookup(*s, t.name))
      return ClauseError(Code::kInvalidArgument, c.form,
                         "insufficient binding: " + t.name + " is not bound");
  std::string fn = BaseName(c.fn);
  if (fn == "missing?") {
    if (c.args.size() != 3 || c.args[0].kind != Term::Kind::kSrc || !c.args[2].is_const() ||
        !c.args[2].value.is_keyword())
      return ClauseError(Code::kInvalidArgument, c.form, "expected (missing? $ ?e :attr)");
    bool reverse = false;
    std::string fwd;
    const Attribute* a = schema::AttributeOrReverse(*env_->schema, c.args[2].value, &reverse, &fwd);
    if (!a) return ClauseError(Code::kSchema, c.form, "unknown attribute :" + fwd);
    if (reverse && a->type != ValueType::kRef)
      return ClauseError(Code::kSchema, c.form,
                         "reverse attribute :" + c.args[2].value.str() + " needs a ref attribute");
    std::string src = c.args[0].name == "$" ? s->src : c.args[0].name;
    MENTAT_RETURN_IF_ERROR(SourceShape(src, c.form).status());
    MENTAT_ASSIGN_OR_RETURN(VarBind e, ArgBind(*s, c.args[1], VT::kRef, c.form));
    // Reverse: no entity refers to ?e through the attribute (its (a, v) index).
    Expr where = reverse
                     ? Expr::Call(Fn::kAnd, {Expr::Call(Fn::kEq, {"a", IntLit(a->id)}),
                                             Expr::Call(Fn::kEq, {"v", e.sql}),
                                             "ix " + unit_->dialect->IndexTest(a->value_indexed())})
                     : Expr::Call(Fn::kAnd, {Expr::Call(Fn::kEq, {"e", e.sql}),
                                             Expr::Call(Fn::kEq, {"a", IntLit(a->id)})});
    AddWhere(s, "NOT EXISTS (SELECT 1 FROM " + ViewTable(src, false) + " WHERE " + where + ")");
    return Status::OK();
  }
  if (fn == "type") {
    // Mozilla mentat's type predicate: [(type ?v :db.type/long)] keeps the rows whose ?v
    // has that value type (a pattern's value typed by its attribute, per row).
    if (c.args.size() != 2 || !c.args[0].is_var() || !c.args[1].is_const() ||
        !c.args[1].value.is_keyword())
      return ClauseError(Code::kInvalidArgument, c.form, "expected [(type ?x :db.type/name)]");
    auto want = ValueTypeFromIdent(c.args[1].value.str());
    if (!want)
      return ClauseError(Code::kInvalidArgument, c.form,
                         "unknown value type :" + c.args[1].value.str());
    MENTAT_ASSIGN_OR_RETURN(VarBind x, ArgBind(*s, c.args[0], VT::kAny, c.form));
    if (IsStatic(x.type)) {
      if (x.type != FromValueType(*want)) AddWhere(s, kFalse);
      return Status::OK();
    }
    if (x.type == VT::kNumeric) {
      AddWhere(s, *want == ValueType::kLong     ? Expr::Call(Fn::kIsInteger, {x.sql})
                  : *want == ValueType::kDouble ? Expr::Call(Fn::kIsReal, {x.sql})
                                                : Expr(kFalse));
      return Status::OK();
    }
    if (x.type == VT::kDynamic && !x.attr.empty()) {
      std::vector<Expr> in = {"(" + x.attr + ")", std::to_string(TypeCode(*want))};
      for (const auto& [id, attr] : env_->schema->attributes())
        if (attr.type == *want) in.push_back(std::to_string(id));
      AddWhere(s, Expr::Call(Fn::kIn, std::move(in)));
      return Status::OK();
    }
    return ClauseError(Code::kUnsupported, c.form,
                       "type needs a variable a pattern or function binds, " + c.args[0].name +
                           " is typed only when the query runs");
  }
  if (IsComparison(fn)) {
    // Remember range predicates on pattern values for the planner.
    if (fn != "=" && fn != "!=" && fn != "not=" && fn != "==" && c.args.size() == 2) {
      for (const Term& t : c.args) {
        if (!t.is_var()) continue;
        auto it = s->providers.find(t.name);
        if (it == s->providers.end()) continue;
        for (int item : it->second)
          if (unit_->items[item].plan.v_var == t.name) unit_->items[item].plan.v_range = true;
      }
    }
  }
  MENTAT_ASSIGN_OR_RETURN(FnValue fv, ScalarFunction(c, *s));
  if (!fv.test.empty()) {  // its own predicate form (re-find: whether it matches)
    AddWhere(s, "(" + fv.test + ")");
    return Status::OK();
  }
  if (fv.required_part >= 0) {  // re-find with groups: true when it matches
    AddWhere(s, Expr::Call(Fn::kIsNotNull, {fv.values[static_cast<size_t>(fv.required_part)].sql}));
    return Status::OK();
  }
  if (fv.values.size() != 1)
    return ClauseError(Code::kInvalidArgument, c.form, c.fn + " is not a predicate");
  const VarBind& v = fv.values[0];
  if (v.type == VT::kBoolean) {
    AddWhere(s, "(" + v.sql + ")");
  } else if (v.type == VT::kString) {
    // A string is true unless nil (one evaluation: a string is never 0).
    AddWhere(s, Expr::Call(Fn::kIsNotNull, {"(" + v.sql + ")"}));
  } else {
    AddWhere(s, Expr::Call(Fn::kAnd, {Expr::Call(Fn::kIsNotNull, {"(" + v.sql + ")"}),
                                      Expr::Call(Fn::kIsNot, {"(" + v.sql + ")", "0"})}));
  }
  return Status::OK();
}

Result<Analyzer::FnValue> Analyzer::ScalarFunction(const Clause& c, const Scope& s) {
  const std::string fn = BaseName(c.fn);
  const size_t n = c.args.size();
  // A source argument: an unknown one is named as such; a known one is not for this function.
  for (const Term& t : c.args) {
    if (t.kind != Term::Kind::kSrc) continue;
    if (!env_->sources.count(t.name))
      return ClauseError(Code::kInvalidArgument, c.form,
                         "unknown source " + t.name + " (declare it in :in)");
    return ClauseError(Code::kInvalidArgument, c.form, c.fn + " takes no source");
  }
  auto arity = [&](size_t lo, size_t hi) -> Status {
    if (n < lo || n > hi) {
      std::string want = lo == hi
                             ? std::to_string(lo)
                             : (hi == SIZE_MAX ? "at least " + std::to_string(lo)
                                               : std::to_string(lo) + " to " + std::to_string(hi));
      return ClauseError(Code::kInvalidArgument, c.form,
                         "wrong number of arguments to " + c.fn + ": expected " + want + ", got " +
                             std::to_string(n));
    }
    return Status::OK();
  };
  // Arguments: variables first (their types decide how constants are encoded).
  auto args = [&](VT want) -> Result<std::vector<VarBind>> {
    std::vector<VarBind> out(n);
    VT peer = want;
    for (size_t i = 0; i < n; ++i) {
      if (c.args[i].kind == Term::Kind::kSrc)
        return ClauseError(Code::kInvalidArgument, c.form, c.fn + " takes no source");
      if (!c.args[i].is_var()) continue;
      MENTAT_ASSIGN_OR_RETURN(out[i], ArgBind(s, c.args[i], want, c.form));
      if (!IsStatic(peer) && IsStatic(out[i].type)) peer = out[i].type;
    }
    for (size_t i = 0; i < n; ++i) {
      if (c.args[i].is_var()) continue;
      if (c.args[i].value.is_nil()) {
        out[i].sql = "NULL";
        out[i].type = VT::kAny;
        continue;
      }
      // A vector literal that is not a lookup ref is a tuple of its elements.
      const edn::Value& cv = c.args[i].value;
      if (cv.is_vector() && !(peer == VT::kRef && NaturalType(cv) == VT::kRef)) {
        VarBind t;
        t.type = VT::kTuple;
        t.constant = cv;
        for (const edn::Value& x : cv.items()) {
          if (x.is_vector() || x.is_nil())
            return ClauseError(Code::kInvalidArgument, c.form,
                               "a vector argument holds scalar values, got " + edn::Print(x));
          MENTAT_ASSIGN_OR_RETURN(VarBind p, ArgBind(s, Term::Const(x), VT::kAny, c.form));
          t.parts.push_back(std::move(p));
        }
        out[i] = std::move(t);
        continue;
      }
      VT w = peer;
      if (IsStatic(w) && NaturalType(c.args[i].value) != w &&
          !(w == VT::kRef && NaturalType(c.args[i].value) == VT::kKeyword) &&
          !(w == VT::kDouble && NaturalType(c.args[i].value) == VT::kLong) &&
          !(w == VT::kFloat && (NaturalType(c.args[i].value) == VT::kLong ||
                                NaturalType(c.args[i].value) == VT::kDouble)) &&
          !(w == VT::kRef && NaturalType(c.args[i].value) == VT::kLong))
        w = VT::kAny;
      MENTAT_ASSIGN_OR_RETURN(out[i], ArgBind(s, c.args[i], w, c.form));
    }
    return out;
  };
  auto deps_of = [](const std::vector<VarBind>& xs) {
    std::set<int> d;
    for (const auto& x : xs) d.insert(x.deps.begin(), x.deps.end());
    return d;
  };
  auto result = [&](Expr sql, VT type, const std::vector<VarBind>& from, bool nullable) {
    FnValue fv;
    VarBind b;
    b.sql = "(" + sql + ")";
    b.type = type;
    b.deps = deps_of(from);
    fv.values.push_back(std::move(b));
    fv.nullable = nullable;
    return fv;
  };
  auto require_numbers = [&](const std::vector<VarBind>& xs) -> Status {
    for (const auto& x : xs)
      if (IsDecimalType(x.type))
        return ClauseError(Code::kUnsupported, c.form,
                           c.fn + " on " + VTName(x.type) +
                               " values is not supported in queries (they compare, sort and "
                               "aggregate with min, max, count, sum and avg)");
    for (const auto& x : xs)
      if (!IsNumericType(x.type))
        return ClauseError(Code::kSchema, c.form,
                           "type mismatch: " + c.fn + " expects numbers, got a " + VTName(x.type));
    return Status::OK();
  };
  auto num_type = [](const std::vector<VarBind>& xs) {
    bool any_double = false, all_long = true;
    for (const auto& x : xs) {
      if (x.type == VT::kDouble) any_double = true;
      if (x.type != VT::kLong && x.type != VT::kRef) all_long = false;
    }
    return any_double ? VT::kDouble : (all_long ? VT::kLong : VT::kNumeric);
  };

  if (IsComparison(fn)) {
    MENTAT_RETURN_IF_ERROR(arity(2, SIZE_MAX));
    MENTAT_ASSIGN_OR_RETURN(auto xs, args(VT::kAny));
    bool decimals = false;
    for (const auto& x : xs) decimals = decimals || IsDecimalType(x.type);
    auto num = [&](VT t) {
      return t == VT::kLong || t == VT::kDouble || t == VT::kFloat || t == VT::kRef ||
             (decimals && IsDecimalType(t));
    };
    for (size_t i = 0; i + 1 < n; ++i) {
      VT a = xs[i].type, b = xs[i + 1].type;
      bool num_a = num(a), num_b = num(b);
      if (IsStatic(a) && IsStatic(b) && a != b && !(num_a && num_b))
        return ClauseError(
            Code::kSchema, c.form,
            std::string("type mismatch: cannot compare a ") + VTName(a) + " with a " + VTName(b));
    }
    // Beside a bigint or bigdec, other numbers compare by their decimal keys.
    if (decimals)
      for (auto& x : xs)
        if (!IsDecimalType(x.type) && x.type != VT::kTuple)
          x.sql = Expr::Call(Fn::kDecimalKey, {x.sql});
    std::string op = fn == "==" ? "=" : (fn == "not=" || fn == "!=" ? "<>" : fn);
    const Fn cmp = CompareFn(op);
    // Beside a stored tuple, a tuple of parts compares as the stored tuple it makes (tuple
    // keys sort as tuples do).
    bool stored = false;
    for (const auto& x : xs) stored = stored || x.type == VT::kTupleValue;
    if (stored)
      for (auto& x : xs)
        if (x.type == VT::kTuple) {
          MENTAT_ASSIGN_OR_RETURN(Expr sql, StoredTupleSql(x, c.form, "a tuple"));
          VarBind t;
          t.sql = std::move(sql);
          t.type = VT::kTupleValue;
          t.deps = x.deps;
          x = std::move(t);
        }
    // Tuples compare elementwise (SQL row values), the shorter first when one is a prefix.
    bool tuples = false;
    for (const auto& x : xs) tuples = tuples || x.type == VT::kTuple;
    if (tuples) {
      std::vector<Expr> terms;
      for (size_t i = 0; i + 1 < n; ++i) {
        const VarBind &a = xs[i], &b = xs[i + 1];
        if (a.type != VT::kTuple || b.type != VT::kTuple)
          return ClauseError(Code::kSchema, c.form,
                             "type mismatch: cannot compare a tuple with a " +
                                 std::string(VTName(a.type == VT::kTuple ? b.type : a.type)));
        auto row = [&](const VarBind& t, size_t k) {
          Expr r;
          for (size_t j = 0; j < k; ++j) {
            if (t.parts[j].type == VT::kTuple) return Expr();
            r += (j ? ", " : "") + unit_->dialect->RowElement(t.parts[j].sql);
          }
          return "(" + r + ")";
        };
        size_t k = std::min(a.parts.size(), b.parts.size());
        Expr ra = row(a, k), rb = row(b, k);
        if (ra.empty() || rb.empty())
          return ClauseError(Code::kUnsupported, c.form, "nested tuples cannot be compared");
        Expr term;
        int len = a.parts.size() < b.parts.size() ? -1 : (a.parts.size() > b.parts.size() ? 1 : 0);
        if (k == 0) {
          term = len == 0 ? (op == "=" || op == "<=" || op == ">=" ? kTrue : kFalse)
                          : ((op == "<" || op == "<=") == (len < 0) || op == "<>" ? kTrue : kFalse);
        } else if (len == 0) {
          term = Expr::Call(cmp, {ra, rb});
        } else if (op == "=") {
          term = kFalse;
        } else if (op == "<>") {
          term = kTrue;
        } else {
          // Equal prefixes order by length: a is before b when it is the shorter.
          bool less = op == "<" || op == "<=";
          Expr strict = Expr::Call(less ? Fn::kLt : Fn::kGt, {ra, rb});
          bool prefix_true = less == (len < 0);
          term = "(" +
                 (prefix_true ? Expr::Call(Fn::kOr, {strict, Expr::Call(Fn::kEq, {ra, rb})})
                              : strict) +
                 ")";
        }
        terms.push_back(std::move(term));
      }
      return result(AllOf(std::move(terms)), VT::kBoolean, xs, false);
    }
    std::vector<Expr> terms;
    bool negated = op == "<>" && n > 2;  // not all equal
    for (size_t i = 0; i + 1 < n; ++i)
      terms.push_back(Expr::Call(negated ? Fn::kEq : cmp, {xs[i].sql, xs[i + 1].sql}));
    Expr sql = AllOf(std::move(terms));
    if (negated) sql = Expr::Call(Fn::kNot, {sql});
    return result(sql, VT::kBoolean, xs, false);
  }
  if (fn == "zero?" || fn == "pos?" || fn == "neg?" || fn == "even?" || fn == "odd?") {
    MENTAT_RETURN_IF_ERROR(arity(1, 1));
    MENTAT_ASSIGN_OR_RETURN(auto xs, args(VT::kAny));
    MENTAT_RETURN_IF_ERROR(require_numbers(xs));
    const Expr& x = xs[0].sql;
    Expr sql = fn == "zero?"   ? Expr::Call(Fn::kEq, {x, "0"})
               : fn == "pos?"  ? Expr::Call(Fn::kGt, {x, "0"})
               : fn == "neg?"  ? Expr::Call(Fn::kLt, {x, "0"})
               : fn == "even?" ? Expr::Call(Fn::kEq, {Expr::Call(Fn::kMod, {x, "2"}), "0"})
                               : Expr::Call(Fn::kNe, {Expr::Call(Fn::kMod, {x, "2"}), "0"});
    return result(sql, VT::kBoolean, xs, false);
  }
  if (fn == "nil?" || fn == "some?") {
    MENTAT_RETURN_IF_ERROR(arity(1, 1));
    MENTAT_ASSIGN_OR_RETURN(auto xs, args(VT::kAny));
    return result(Expr::Call(fn == "nil?" ? Fn::kIsNull : Fn::kIsNotNull, {xs[0].sql}),
                  VT::kBoolean, xs, false);
  }
  if (fn == "starts-with?" || fn == "ends-with?" || fn == "includes?") {
    MENTAT_RETURN_IF_ERROR(arity(2, 2));
    MENTAT_ASSIGN_OR_RETURN(auto xs, args(VT::kString));
    for (const auto& x : xs)
      if (IsStatic(x.type) && x.type != VT::kString && x.type != VT::kKeyword)
        return ClauseError(Code::kSchema, c.form,
                           "type mismatch: " + c.fn + " expects strings, got a " + VTName(x.type));
    const Expr &a = xs[0].sql, &b = xs[1].sql;
    if (fn != "includes?" && c.args[1].is_const() && c.args[1].value.is_string()) {
      // A constant suffix or prefix: its length is known, so one substr compares.
      const std::string& lit = c.args[1].value.str();
      int64_t chars = 0;  // characters, as SQL's length counts them
      for (unsigned char ch : lit) chars += (ch & 0xC0) != 0x80;
      if (chars == 0) return result(kTrue, VT::kBoolean, xs, false);
      if (fn == "starts-with?")
        return result(Expr::Call(Fn::kStartsWith, {a, b, std::to_string(chars)}), VT::kBoolean, xs,
                      false);
      Expr part = Expr::Call(Fn::kSubstr, {a, std::to_string(-chars)});
      return result(Expr::Call(Fn::kEq, {part, b}), VT::kBoolean, xs, false);
    }
    const Expr len_a = Expr::Call(Fn::kLength, {a}), len_b = Expr::Call(Fn::kLength, {b});
    Expr sql =
        fn == "starts-with?" ? Expr::Call(Fn::kStartsWith, {a, b})
        : fn == "ends-with?"
            ? "(" +
                  Expr::Call(
                      Fn::kOr,
                      {Expr::Call(Fn::kEq, {len_b, "0"}),
                       "(" +
                           Expr::Call(
                               Fn::kAnd,
                               {Expr::Call(Fn::kGe, {len_a, len_b}),
                                Expr::Call(Fn::kEq,
                                           {Expr::Call(Fn::kSubstr, {a, "-" + len_b}), b})}) +
                           ")"}) +
                  ")"
            : Expr::Call(Fn::kGt, {Expr::Call(Fn::kInstr, {a, b}), "0"});
    return result(sql, VT::kBoolean, xs, false);
  }
  if (fn == "re-find" || fn == "re-matches") {
    MENTAT_RETURN_IF_ERROR(arity(2, 2));
    MENTAT_ASSIGN_OR_RETURN(auto xs, args(VT::kString));
    if (c.args[0].is_const() && !c.args[0].value.is_string())
      return ClauseError(Code::kInvalidArgument, c.form,
                         c.fn + " takes a regular expression string");
    if (c.args[0].is_const()) {
      auto check = regex::Regex::Compile(c.args[0].value.str());
      if (!check.ok()) return ClauseError(Code::kInvalidArgument, c.form, check.status().message());
    }
    const bool find = fn == "re-find";
    // With capturing groups (a constant pattern), Clojure's [match g1 g2 ...]: a tuple
    // of the groups, nil for one that took no part; no match drops the row.
    int groups = 0;
    if (c.args[0].is_const()) groups = (*regex::Regex::Compile(c.args[0].value.str()))->groups();
    if (groups > 0) {
      FnValue fv;
      for (int g = 0; g <= groups; ++g) {
        VarBind b;
        b.sql = Expr::Call(find ? Fn::kReFindGroup : Fn::kReMatchesGroup,
                           {xs[0].sql, xs[1].sql, std::to_string(g)});
        b.type = VT::kString;
        b.deps = deps_of(xs);
        fv.values.push_back(std::move(b));
      }
      fv.required_part = 0;
      if (find) fv.test = Expr::Call(Fn::kReTest, {xs[0].sql, xs[1].sql});
      return fv;
    }
    FnValue fv = result(Expr::Call(find ? Fn::kReFind : Fn::kReMatches, {xs[0].sql, xs[1].sql}),
                        VT::kString, xs, true);
    if (find) fv.test = Expr::Call(Fn::kReTest, {xs[0].sql, xs[1].sql});
    return fv;
  }
  if (fn == "re-pattern") {  // patterns are strings: (re-find ?re ?s) takes either
    MENTAT_RETURN_IF_ERROR(arity(1, 1));
    MENTAT_ASSIGN_OR_RETURN(auto xs, args(VT::kString));
    if (IsStatic(xs[0].type) && xs[0].type != VT::kString)
      return ClauseError(
          Code::kSchema, c.form,
          std::string("type mismatch: re-pattern expects a string, got a ") + VTName(xs[0].type));
    FnValue fv;
    fv.values.push_back(xs[0]);
    return fv;
  }
  if (fn == "identity") {
    MENTAT_RETURN_IF_ERROR(arity(1, 1));
    MENTAT_ASSIGN_OR_RETURN(auto xs, args(VT::kAny));
    FnValue fv;
    fv.values.push_back(xs[0]);
    return fv;
  }
  if (fn == "+" || fn == "*" || fn == "-" || fn == "/" || fn == "quot" || fn == "rem" ||
      fn == "mod" || fn == "inc" || fn == "dec" || fn == "max" || fn == "min" || fn == "abs") {
    if (fn == "inc" || fn == "dec" || fn == "abs") {
      MENTAT_RETURN_IF_ERROR(arity(1, 1));
    } else if (fn == "quot" || fn == "rem" || fn == "mod") {
      MENTAT_RETURN_IF_ERROR(arity(2, 2));
    } else if (fn == "-" || fn == "/" || fn == "max" || fn == "min") {
      MENTAT_RETURN_IF_ERROR(arity(1, SIZE_MAX));
    }
    MENTAT_ASSIGN_OR_RETURN(auto xs, args(VT::kAny));
    MENTAT_RETURN_IF_ERROR(require_numbers(xs));
    VT t = num_type(xs);
    if (t == VT::kNumeric && xs.empty()) t = VT::kLong;
    std::vector<Expr> operands;
    for (const VarBind& x : xs) operands.push_back(x.sql);
    if (fn == "+" || fn == "*") {
      if (xs.empty()) return result(fn == "+" ? "0" : "1", VT::kLong, xs, false);
      return result(Expr::Call(fn == "+" ? Fn::kAdd : Fn::kMul, operands), t, xs, true);
    }
    if (fn == "-") {
      if (n == 1) return result(Expr::Call(Fn::kNeg, operands), t, xs, false);
      return result(Expr::Call(Fn::kSub, operands), t, xs, true);
    }
    if (fn == "/") {
      if (n == 1) return result(Expr::Call(Fn::kDiv, {"1.0", xs[0].sql}), VT::kDouble, xs, true);
      if (t == VT::kDouble) {
        operands[0] = Expr::Call(Fn::kCastReal, {operands[0]});
        return result(Expr::Call(Fn::kDiv, operands), VT::kDouble, xs, true);
      }
      // Clojure's (/ 7 2) is a ratio; mentat gives a long when exact, else a double.
      Expr sql = xs[0].sql;
      for (size_t i = 1; i < n; ++i) sql = Expr::Call(Fn::kExactDiv, {sql, xs[i].sql});
      return result(sql, VT::kNumeric, xs, true);
    }
    if (fn == "quot") return result(Expr::Call(Fn::kDiv, operands), t, xs, true);
    if (fn == "rem") return result(Expr::Call(Fn::kMod, operands), t, xs, true);
    if (fn == "mod") {
      // Clojure's mod takes the divisor's sign: ((a % b) + b) % b.
      Expr rem = "(" + Expr::Call(Fn::kMod, operands) + ")";
      return result(
          Expr::Call(Fn::kMod, {"(" + Expr::Call(Fn::kAdd, {rem, xs[1].sql}) + ")", xs[1].sql}), t,
          xs, true);
    }
    if (fn == "inc") return result(Expr::Call(Fn::kAdd, {xs[0].sql, "1"}), t, xs, true);
    if (fn == "dec") return result(Expr::Call(Fn::kSub, {xs[0].sql, "1"}), t, xs, true);
    if (fn == "abs") return result(Expr::Call(Fn::kAbs, operands), t, xs, true);
    if (n == 1) return result(xs[0].sql, t, xs, false);
    return result(Expr::Call(fn == "max" ? Fn::kMax : Fn::kMin, operands), t, xs, false);
  }
  if (fn == "str") {
    MENTAT_ASSIGN_OR_RETURN(auto xs, args(VT::kAny));
    if (xs.empty()) return result("''", VT::kString, xs, false);
    std::vector<Expr> parts;
    for (size_t i = 0; i < n; ++i) parts.push_back(xs[i].sql == "NULL" ? "''" : StrOf(xs[i]));
    return result(Expr::Call(Fn::kConcat, std::move(parts)), VT::kString, xs, false);
  }
  if (fn == "subs") {
    MENTAT_RETURN_IF_ERROR(arity(2, 3));
    MENTAT_ASSIGN_OR_RETURN(auto xs, args(VT::kAny));
    if (IsStatic(xs[0].type) && xs[0].type != VT::kString)
      return ClauseError(Code::kSchema, c.form, "type mismatch: subs expects a string");
    std::vector<Expr> operands;
    for (const VarBind& x : xs) operands.push_back(x.sql);
    return result(Expr::Call(Fn::kSubs, std::move(operands)), VT::kString, xs, true);
  }
  if (fn == "lower-case" || fn == "upper-case" || fn == "trim") {
    MENTAT_RETURN_IF_ERROR(arity(1, 1));
    MENTAT_ASSIGN_OR_RETURN(auto xs, args(VT::kString));
    if (IsStatic(xs[0].type) && xs[0].type != VT::kString)
      return ClauseError(Code::kSchema, c.form, "type mismatch: " + c.fn + " expects a string");
    Fn f = fn == "lower-case" ? Fn::kLower : (fn == "upper-case" ? Fn::kUpper : Fn::kTrim);
    return result(Expr::Call(f, {xs[0].sql}), VT::kString, xs, false);
  }
  if (fn == "count") {
    MENTAT_RETURN_IF_ERROR(arity(1, 1));
    MENTAT_ASSIGN_OR_RETURN(auto xs, args(VT::kAny));
    if (xs[0].type == VT::kTuple)
      return result(IntLit(static_cast<int64_t>(xs[0].parts.size())), VT::kLong, xs, false);
    if (IsStatic(xs[0].type) && xs[0].type != VT::kString)
      return ClauseError(Code::kSchema, c.form,
                         "type mismatch: count expects a string or a tuple, got a " +
                             std::string(VTName(xs[0].type)));
    return result(Expr::Call(Fn::kLength, {xs[0].sql}), VT::kLong, xs, false);
  }
  if (fn == "contains?" && n == 2 && c.args[0].is_const() &&
      (c.args[0].value.is_set() || c.args[0].value.is_vector())) {
    // (contains? #{"a" "b"} ?x): ?x is one of the set's values (a vector's indexes, as
    // Clojure's contains? has it, are not supported: only sets).
    if (!c.args[0].value.is_set())
      return ClauseError(Code::kUnsupported, c.form,
                         "contains? takes a set literal here, as in (contains? #{1 2} ?x)");
    if (!c.args[1].is_var() && !c.args[1].is_const())
      return ClauseError(Code::kInvalidArgument, c.form, "contains? needs a value to look for");
    MENTAT_ASSIGN_OR_RETURN(VarBind x, ArgBind(s, c.args[1], VT::kAny, c.form));
    std::vector<Expr> in = {x.sql};
    for (const edn::Value& v : c.args[0].value.items()) {
      if (v.is_nil() || v.is_seq() || v.is_map()) continue;
      VT w = IsStatic(x.type) ? x.type : VT::kAny;
      if (IsStatic(w) && NaturalType(v) != w &&
          !((w == VT::kRef && (NaturalType(v) == VT::kKeyword || NaturalType(v) == VT::kLong)) ||
            (w == VT::kDouble && NaturalType(v) == VT::kLong)))
        continue;  // a value of another type is never equal
      MENTAT_ASSIGN_OR_RETURN(VarBind lit, ArgBind(s, Term::Const(v), w, c.form));
      in.push_back(lit.sql);
    }
    return result(in.size() == 1 ? Expr("0") : Expr::Call(Fn::kIn, std::move(in)), VT::kBoolean,
                  {x}, false);
  }
  if (fn == "tuple" || fn == "vector") {  // vector: DataScript's name
    MENTAT_RETURN_IF_ERROR(arity(1, SIZE_MAX));
    MENTAT_ASSIGN_OR_RETURN(auto xs, args(VT::kAny));
    FnValue fv;
    VarBind t;
    t.type = VT::kTuple;
    t.deps = deps_of(xs);
    t.parts = std::move(xs);
    fv.values.push_back(std::move(t));
    return fv;
  }
  if (fn == "untuple") {
    MENTAT_RETURN_IF_ERROR(arity(1, 1));
    MENTAT_ASSIGN_OR_RETURN(auto xs, args(VT::kAny));
    if (xs[0].type == VT::kTupleValue) return UntupleStored(c, xs[0]);
    if (xs[0].type != VT::kTuple)
      return ClauseError(Code::kSchema, c.form, "untuple expects a tuple");
    FnValue fv;
    fv.values = xs[0].parts;
    return fv;
  }
  static const char* const kSpecial[] = {"get-else", "get-some", "ground",  "fulltext",
                                         "tx-ids",   "tx-data",  "missing?"};
  for (const char* sp : kSpecial)
    if (fn == sp)
      return ClauseError(Code::kInvalidArgument, c.form,
                         c.fn + (fn == "missing?" ? " is a predicate; use [(missing? $ ?e :a)]"
                                                  : " needs a binding"));
  return ClauseError(Code::kInvalidArgument, c.form, "unknown function " + c.fn);
}

// untuple of a stored tuple: one part per element, read by mentat_tuple_get, typed by the
// attribute's :db/tupleTypes or :db/tupleAttrs, else (a :db/tupleType, or a tuple of no
// known attribute) as many parts as the binding names, each decoded by its element's kind
// (mentat_tuple_type) or of the one :db/tupleType.
Result<Analyzer::FnValue> Analyzer::UntupleStored(const Clause& c, const VarBind& t) {
  const Attribute* attr = t.tuple_attr >= 0 ? env_->schema->attribute(t.tuple_attr) : nullptr;
  std::vector<std::optional<ValueType>> types;
  if (attr && !attr->tuple_types.empty()) {
    types.assign(attr->tuple_types.begin(), attr->tuple_types.end());
  } else if (attr && !attr->tuple_attrs.empty()) {
    for (const std::string& n : attr->tuple_attrs) {
      const Attribute* p = env_->schema->attribute(n);
      types.push_back(p ? std::optional<ValueType>(p->type) : std::nullopt);
    }
  } else {
    size_t n = c.binding.kind == BindingForm::Kind::kTuple ? c.binding.vars.size() : 0;
    if (n == 0)
      return ClauseError(Code::kInvalidArgument, c.form,
                         "untuple of a stored tuple binds a tuple: [(untuple ?t) [?a ?b]]");
    types.assign(n, attr ? attr->tuple_type : std::nullopt);
  }
  FnValue fv;
  for (size_t i = 0; i < types.size(); ++i) {
    VarBind p;
    p.sql = Expr::Call(Fn::kTupleGet, {t.sql, std::to_string(i)});
    p.deps = t.deps;
    if (types[i]) {
      p.type = FromValueType(*types[i]);
    } else {
      p.type = VT::kDynamic;
      p.attr = Expr::Call(Fn::kTupleType, {t.sql, std::to_string(i)});
    }
    fv.values.push_back(std::move(p));
  }
  return fv;
}

}  // namespace mentat::query
