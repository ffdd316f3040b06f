#include "query/dialect.h"

#include "storage/format.h"

namespace mentat::query {

std::string Dialect::Infix(const char* op, const std::vector<std::string>& args) {
  std::string out;
  for (size_t i = 0; i < args.size(); ++i) out += (i ? std::string(" ") + op + " " : "") + args[i];
  return out;
}

std::string Dialect::Function(const char* name, const std::vector<std::string>& args) {
  std::string out = std::string(name) + "(";
  for (size_t i = 0; i < args.size(); ++i) out += (i ? ", " : "") + args[i];
  return out + ")";
}

namespace {

// v compared with x twice: with x's affinity (x's index can find v's item's partner) and
// without (+x: exact, and v's index can drive it).
// (For Expr operands, and for the argument text of Call.)
template <typename T>
T BothForms(const T& v, const T& x) {
  return "(" + v + " = " + x + " AND " + v + " = +" + x + ")";
}

class Sqlite : public Dialect {
 public:
  const char* name() const override { return "sqlite"; }
  std::string IndexTest(bool value_indexed) const override {
    return storage::IndexTest(value_indexed);
  }
  Expr EqValue(const Expr& v, const Expr& x) const override {
    // `v` has no affinity; comparing it with an INTEGER (or TEXT) column applies that
    // affinity to v, which keeps SQLite from using an index on v. The second,
    // affinity-free form (+x) lets the index on v drive the lookup; together they keep
    // exact typing.
    return BothForms(v, x);
  }
  // An integer-typed value (ref, long, instant) met with an integer column: as EqValue,
  // unless the emitter knows the planned order finds v's item by its value (Fn::kEqIntValue
  // ByValue): then `v = +x` alone, exact and the lookup on v's index. (Every statement is
  // pinned on SQLite, so the other form could only be a filter evaluated again per row.)
  Expr EqIntegerValue(const Expr& v, const Expr& x) const override {
    return Expr::Call(Fn::kEqIntValue, {v, x});
  }
  Expr NoAffinity(const Expr& x) const override { return "+(" + x + ")"; }
  const char* PinnedJoin() const override { return " CROSS JOIN "; }
  std::string IndexHint(const std::string& index) const override { return "INDEXED BY " + index; }
  std::string RelationTable(const std::string& param) const override {
    return "mentat_rel(" + param + ")";
  }
  std::string NamedOrder(const std::string& x) const override {
    return x + " COLLATE mentat_named";
  }
  std::string Call(Fn fn, const std::vector<std::string>& a) const override {
    auto arg = [&](size_t i) -> const std::string& {
      static const std::string kNone;
      return i < a.size() ? a[i] : kNone;
    };
    switch (fn) {
      case Fn::kEq:
        return Infix("=", a);
      case Fn::kNe:
        return Infix("<>", a);
      case Fn::kLt:
        return Infix("<", a);
      case Fn::kLe:
        return Infix("<=", a);
      case Fn::kGt:
        return Infix(">", a);
      case Fn::kGe:
        return Infix(">=", a);
      case Fn::kIsNot:
        return Infix("IS NOT", a);
      case Fn::kAnd:
        return Infix("AND", a);
      case Fn::kOr:
        return Infix("OR", a);
      case Fn::kNot:
        return "NOT (" + arg(0) + ")";
      case Fn::kIsNull:
        return arg(0) + " IS NULL";
      case Fn::kIsNotNull:
        return arg(0) + " IS NOT NULL";
      case Fn::kIn: {
        std::vector<std::string> list(a.begin() + (a.empty() ? 0 : 1), a.end());
        return arg(0) + " IN " + Function("", list);
      }
      case Fn::kAdd:
        return Infix("+", a);
      case Fn::kSub:
        return Infix("-", a);
      case Fn::kMul:
        return Infix("*", a);
      case Fn::kDiv:
        return Infix("/", a);
      case Fn::kMod:
        return Infix("%", a);
      case Fn::kNeg:
        return "- " + arg(0);
      case Fn::kConcat:
        return Infix("||", a);
      case Fn::kCastText:
        return "CAST(" + arg(0) + " AS TEXT)";
      case Fn::kCastReal:
        return "CAST(" + arg(0) + " AS REAL)";
      case Fn::kBoolText:
        return "(CASE WHEN " + arg(0) + " THEN 'true' ELSE 'false' END)";
      case Fn::kIsInteger:
        return "typeof(" + arg(0) + ") = 'integer'";
      case Fn::kIsReal:
        return "typeof(" + arg(0) + ") = 'real'";
      case Fn::kAbs:
        return Function("abs", a);
      case Fn::kMax:
        return Function("max", a);
      case Fn::kMin:
        return Function("min", a);
      case Fn::kLength:
        return Function("length", a);
      case Fn::kSubstr:
        return Function("substr", a);
      case Fn::kInstr:
        return Function("instr", a);
      case Fn::kReTest:  // the match re-find gives, not nil
        return Call(Fn::kIsNotNull, {Call(Fn::kReFind, {arg(0), arg(1)})});
      case Fn::kStartsWith:  // the prefix as long as b, compared with it
        return Call(
            Fn::kEq,
            {Call(Fn::kSubstr, {arg(0), "1", a.size() > 2 ? arg(2) : Call(Fn::kLength, {arg(1)})}),
             arg(1)});
      case Fn::kTrim:
        return Function("trim", a);
      case Fn::kCoalesce:
        return Function("COALESCE", a);
      case Fn::kStr:
        return Function("mentat_str", a);
      case Fn::kFmtInst:
        return Function("mentat_fmt_inst", a);
      case Fn::kFmtUuid:
        return Function("mentat_fmt_uuid", a);
      case Fn::kFmtDecimal:
        return Function("mentat_fmt_decimal", a);
      case Fn::kDecimalKey:
        return Function("mentat_decimal_key", a);
      case Fn::kReFind:
        return Function("mentat_re_find", a);
      case Fn::kReMatches:
        return Function("mentat_re_matches", a);
      case Fn::kReFindGroup:
        return Function("mentat_re_find_group", a);
      case Fn::kReMatchesGroup:
        return Function("mentat_re_matches_group", a);
      case Fn::kSubs:
        return Function("mentat_subs", a);
      case Fn::kLower:
        return Function("mentat_lower", a);
      case Fn::kUpper:
        return Function("mentat_upper", a);
      case Fn::kExactDiv:
        return Function("mentat_div", a);
      case Fn::kTuple:
        return Function("mentat_tuple", a);
      case Fn::kTupleGet:
        return Function("mentat_tuple_get", a);
      case Fn::kTupleType:
        return Function("mentat_tuple_type", a);
      case Fn::kCached:
        return Function("mentat_cached", a);
      case Fn::kEntitySet:
        return Function("mentat_eset", a);
      case Fn::kInEntitySet:
        return Function("mentat_in_eset", a);
      case Fn::kMatch:
        return arg(0) + " MATCH " + arg(1);
      case Fn::kRank:
        return "(-bm25(" + arg(0) + "))";
      case Fn::kEqIntValueByValue:
        return "(" + arg(0) + " = +" + arg(1) + ")";
      case Fn::kEqIntValue:
      case Fn::kEqIntValueByB:
        return BothForms(arg(0), arg(1));
    }
    return "NULL";
  }
};

}  // namespace

const Dialect& SqliteDialect() {
  static const Sqlite kSqlite;
  return kSqlite;
}

}  // namespace mentat::query
