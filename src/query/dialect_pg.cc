// PostgreSQL's dialect of the query compiler (doc/postgres.md "Queries"). The value column
// `v` is jsonb; entity, attribute and transaction columns are bigint. The store's schema
// defines what makes the two meet (storage/format_pg.cc): cross-type comparison operators
// between jsonb and bigint (inlinable SQL functions, so an index on either side still drives
// a join), and `mentat_num`, overloaded for every number type and jsonb, which arithmetic
// and numeric functions read their operands through.
#include <string>
#include <vector>

#include "query/dialect.h"
#include "query/relation.h"
#include "storage/format.h"

namespace mentat::query {

namespace {

class Pg : public Dialect {
 public:
  const char* name() const override { return "postgresql"; }
  std::string IndexTest(bool value_indexed) const override {
    return value_indexed ? "IS DISTINCT FROM 0" : "IS DISTINCT FROM 1";
  }
  Expr EqValue(const Expr& v, const Expr& x) const override {
    // The store's cross-type `=` (storage/format_pg.cc) compares as jsonb and, with a
    // bigint, also states x = mentat_int(v) for an index on x.
    return "(" + v + " = " + x + ")";
  }
  // Each side's index can drive it: `v = x` as jsonb (v's), `x = v` as bigint (x's), both
  // stated unless the emitter knows which side its order finds by index (Fn::kEqIntValue
  // and its two forms; PostgreSQL's planner would count both conditions' selectivity, then
  // misplace the patterns after it). The cast of an integer jsonb to bigint is exact;
  // EqValue's operator checks the value's kind and range first, for a `v` that may hold
  // anything.
  Expr EqIntegerValue(const Expr& v, const Expr& x) const override {
    return Expr::Call(Fn::kEqIntValue, {v, x});
  }
  // (The columns of a recursive rule's relation: one type, jsonb, whatever each arm reads.)
  Expr NoAffinity(const Expr& x) const override { return "mentat_json(" + x + ")"; }
  std::string UnionColumn(const std::string& x) const override { return "mentat_json(" + x + ")"; }
  // jsonb against jsonb: the cross-type operators (jsonb < text...) are in no btree
  // operator family, which a row comparison needs.
  Expr RowElement(const Expr& x) const override { return "mentat_json(" + x + ")"; }
  std::string UnionNull() const override { return "CAST(NULL AS jsonb)"; }
  const char* PinnedJoin() const override { return " CROSS JOIN "; }
  std::string IndexHint(const std::string&) const override { return ""; }
  std::string RelationTable(const std::string& param) const override {
    // The relation's rows as a JSON array of arrays (Execution binds it as text). The
    // LIMIT of its length cuts no row; it tells the planner how many there are (a custom
    // plan folds it from the parameter's value), which it would otherwise take for 100
    // (jsonb_array_elements' estimate): a relation of one row joined with a whole
    // attribute's datoms then hashes them all instead of probing the index once.
    const std::string json = "CAST(CAST(" + param + " AS text) AS jsonb)";
    std::string cols;
    for (int i = 0; i < kMaxRelArity; ++i)
      cols += (i ? ", r -> " : "r -> ") + std::to_string(i) + " AS c" + std::to_string(i);
    return "(SELECT " + cols + " FROM jsonb_array_elements(" + json +
           ") AS r LIMIT jsonb_array_length(" + json + "))";
  }
  // mentat_named_key (storage/format_pg.cc): the namespace, a separator below every
  // character, then the name.
  std::string NamedOrder(const std::string& x) const override {
    return "(mentat_named_key(" + x + ") COLLATE \"C\")";
  }
  bool NamedOrderIsExpression() const override { return true; }
  bool SingleRecursiveReference() const override { return true; }
  bool RulesInQuery() const override { return true; }
  bool PullInQuery() const override { return true; }
  // The built-in aggregates over mentat_num (inlined: a jsonb number as numeric, anything
  // else NULL), not the store's sum(jsonb) and avg(jsonb), SQL functions called per row
  // that keep the plan serial: the same numbers, a parallel plan. avg is the exact sum as
  // a double over the count (one rounding, as SQLite's and Clojure's quotient; numeric's
  // own avg rounds to 16 digits first).
  std::string NumberAggregate(const std::string& fn, const std::string& x) const override {
    const std::string n = "mentat_num(" + x + ")";
    if (fn == "avg")
      return "(CAST(sum(" + n + ") AS double precision) / NULLIF(count(" + n + "), 0))";
    return fn + "(" + n + ")";
  }
  std::string NamedAggregate(const std::string& fn, const std::string& x) const override {
    return "mentat_named_" + fn + "(" + x + ")";
  }
  std::string Call(Fn fn, const std::vector<std::string>& a) const override {
    auto arg = [&](size_t i) -> const std::string& {
      static const std::string kNone;
      return i < a.size() ? a[i] : kNone;
    };
    auto nums = [&](const char* op) {
      std::string out = "(";
      for (size_t i = 0; i < a.size(); ++i)
        out += (i ? std::string(" ") + op + " " : "") + "mentat_num(" + a[i] + ")";
      return out + ")";
    };
    auto text = [&](size_t i) { return "mentat_text(" + arg(i) + ")"; };
    // name(text, from [, to]): a string and its bounds as numbers.
    auto slice = [&](const char* name) {
      return std::string(name) + "(" + text(0) + ", mentat_num(" + arg(1) + ")" +
             (a.size() > 2 ? ", mentat_num(" + arg(2) + ")" : std::string()) + ")";
    };
    switch (fn) {
      // Comparison and logic: SQLite's spelling is standard SQL (the store's cross-type
      // operators make jsonb meet the typed columns).
      case Fn::kEq:
      case Fn::kNe:
      case Fn::kLt:
      case Fn::kLe:
      case Fn::kGt:
      case Fn::kGe:
      case Fn::kAnd:
      case Fn::kOr:
      case Fn::kNot:
      case Fn::kIsNull:
      case Fn::kIsNotNull:
      case Fn::kIn:
        return SqliteDialect().Call(fn, a);
      case Fn::kIsNot:
        return Infix("IS DISTINCT FROM", a);
      case Fn::kAdd:
        return nums("+");
      case Fn::kSub:
        return nums("-");
      case Fn::kMul:
        return nums("*");
      case Fn::kDiv:
        return "mentat_div(mentat_num(" + arg(0) + "), mentat_num(" + arg(1) + "))";
      case Fn::kMod:
        return nums("%");
      case Fn::kNeg:
        return "(- mentat_num(" + arg(0) + "))";
      case Fn::kConcat: {
        std::string out = "(";
        for (size_t i = 0; i < a.size(); ++i) out += (i ? " || " : "") + text(i);
        return out + ")";
      }
      case Fn::kCastText:
        return text(0);
      case Fn::kCastReal:
        return "CAST(mentat_num(" + arg(0) + ") AS double precision)";
      case Fn::kBoolText:
        return "(CASE WHEN mentat_bool(" + arg(0) + ") THEN 'true' ELSE 'false' END)";
      case Fn::kIsInteger:
        return "mentat_is_integer(" + arg(0) + ")";
      case Fn::kIsReal:
        return "mentat_is_real(" + arg(0) + ")";
      case Fn::kAbs:
        return "abs(mentat_num(" + arg(0) + "))";
      case Fn::kMax:
      case Fn::kMin: {
        std::string out = fn == Fn::kMax ? "GREATEST(" : "LEAST(";
        for (size_t i = 0; i < a.size(); ++i) out += (i ? ", " : "") + a[i];
        return out + ")";
      }
      case Fn::kLength:
        return "length(" + text(0) + ")";
      case Fn::kSubstr:
        return slice("mentat_substr");
      case Fn::kInstr:
        return "strpos(" + text(0) + ", " + text(1) + ")";
      case Fn::kReTest:  // the engine's own match operator: no substring, no array
        return "(" + text(1) + " ~ " + text(0) + ")";
      case Fn::kStartsWith:  // (the length is of no use here)
        return "starts_with(" + text(0) + ", " + text(1) + ")";
      case Fn::kTrim:
        return "btrim(" + text(0) + ", ' ')";
      case Fn::kCoalesce: {
        std::string out = "COALESCE(";
        for (size_t i = 0; i < a.size(); ++i)
          out += (i ? ", mentat_json(" : "mentat_json(") + a[i] + ")";
        return out + ")";
      }
      // Unicode's full case mapping (ß -> SS, a final sigma), as ICU does it.
      case Fn::kLower:
        return "lower(" + text(0) + " COLLATE \"und-x-icu\")";
      case Fn::kUpper:
        return "upper(" + text(0) + " COLLATE \"und-x-icu\")";
      case Fn::kExactDiv:
        return "mentat_exact_div(mentat_num(" + arg(0) + "), mentat_num(" + arg(1) + "))";
      case Fn::kMatch:
        return "(" + arg(0) + " @@ websearch_to_tsquery('simple', " + text(1) + "))";
      case Fn::kRank:
        return "ts_rank(" + arg(0) + ", websearch_to_tsquery('simple', " + text(1) + "))";
      case Fn::kEqIntValue:
        return "(" + arg(0) + " = CAST(CAST(" + arg(1) + " AS text) AS jsonb) AND " + arg(1) +
               " = CAST(" + arg(0) + " AS bigint))";
      case Fn::kEqIntValueByValue:
        return "(" + arg(0) + " = CAST(CAST(" + arg(1) + " AS text) AS jsonb))";
      case Fn::kEqIntValueByB:
        return "(" + arg(1) + " = CAST(" + arg(0) + " AS bigint))";
      case Fn::kStr:
        return "mentat_str(" + arg(0) + ")";
      case Fn::kSubs:
        return slice("mentat_subs");
      case Fn::kReFindGroup:
        return "mentat_re_find_group(" + text(0) + ", " + text(1) + ", mentat_num(" + arg(2) + "))";
      case Fn::kReMatchesGroup:
        return "mentat_re_matches_group(" + text(0) + ", " + text(1) + ", mentat_num(" + arg(2) +
               "))";
      case Fn::kReFind:
        return "mentat_re_find(" + text(0) + ", " + text(1) + ")";
      case Fn::kReMatches:
        return "mentat_re_matches(" + text(0) + ", " + text(1) + ")";
      // The value functions of storage/format_pg_values.cc: jsonb in, as the value column
      // holds it.
      case Fn::kFmtInst:
        return "mentat_fmt_inst(" + arg(0) + ")";
      case Fn::kFmtUuid:
        return "mentat_fmt_uuid(" + arg(0) + ")";
      case Fn::kFmtDecimal:
        return "mentat_fmt_decimal(" + arg(0) + ", " + arg(1) + ")";
      case Fn::kDecimalKey:
        return "mentat_decimal_key(" + arg(0) + ")";
      case Fn::kTupleGet:
        return "mentat_tuple_get(" + arg(0) + ", " + arg(1) + ")";
      case Fn::kTupleType:
        return "mentat_tuple_type(" + arg(0) + ", " + arg(1) + ")";
      case Fn::kTuple: {
        // (ValueType code, value) pairs, every one as jsonb.
        std::string out = "mentat_tuple(VARIADIC ARRAY[";
        for (size_t i = 0; i < a.size(); ++i)
          out += (i ? ", mentat_json(" : "mentat_json(") + a[i] + ")";
        return out + "]::jsonb[])";
      }
      default: {
        // Not spelled for PostgreSQL yet: the statement fails when it is planned, naming
        // the function SQLite's dialect calls.
        std::string sqlite = SqliteDialect().Call(fn, {});
        return "mentat_not_on_postgresql('" + sqlite.substr(0, sqlite.find('(')) + "')";
      }
    }
  }
};

}  // namespace

const Dialect& PgDialect() {
  static const Pg kPg;
  return kPg;
}

}  // namespace mentat::query
