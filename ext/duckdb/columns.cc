#include "columns.h"

#include <map>
#include <optional>
#include <set>

namespace mentat::duckdb_ext {

const char* ColumnTypeName(ColumnType t) {
  switch (t) {
    case ColumnType::kBigInt:
      return "BIGINT";
    case ColumnType::kDouble:
      return "DOUBLE";
    case ColumnType::kVarchar:
    case ColumnType::kKeyword:
    case ColumnType::kJson:
      return "VARCHAR";
    case ColumnType::kBoolean:
      return "BOOLEAN";
    case ColumnType::kTimestamp:
      return "TIMESTAMP";
    case ColumnType::kUuid:
      return "UUID";
    case ColumnType::kBlob:
      return "BLOB";
  }
  return "VARCHAR";
}

ColumnType ColumnTypeOf(ValueType t) {
  switch (t) {
    case ValueType::kRef:
    case ValueType::kLong:
      return ColumnType::kBigInt;
    case ValueType::kDouble:
      return ColumnType::kDouble;
    case ValueType::kBoolean:
      return ColumnType::kBoolean;
    case ValueType::kInstant:
      return ColumnType::kTimestamp;
    case ValueType::kUuid:
      return ColumnType::kUuid;
    case ValueType::kBytes:
      return ColumnType::kBlob;
    case ValueType::kKeyword:
      return ColumnType::kKeyword;
    case ValueType::kFloat:
      return ColumnType::kDouble;
    case ValueType::kString:
    case ValueType::kBigInt:  // arbitrary precision: as text ("123456789012345678901")
    case ValueType::kBigDec:
    case ValueType::kUri:
    case ValueType::kSymbol:
      return ColumnType::kVarchar;
    case ValueType::kTuple:  // a JSON array (or EDN vector) as text
      return ColumnType::kJson;
  }
  return ColumnType::kVarchar;
}

namespace {

using edn::Kind;
using edn::Value;

// The natural column type of a constant (inputs, ground), or nullopt.
std::optional<ColumnType> TypeOfConstant(const Value& v) {
  switch (v.kind()) {
    case Kind::kInt:
      return ColumnType::kBigInt;
    case Kind::kFloat:
      return ColumnType::kDouble;
    case Kind::kString:
      return ColumnType::kVarchar;
    case Kind::kKeyword:
      return ColumnType::kKeyword;
    case Kind::kBool:
      return ColumnType::kBoolean;
    case Kind::kInst:
      return ColumnType::kTimestamp;
    case Kind::kUuid:
      return ColumnType::kUuid;
    case Kind::kBytes:
      return ColumnType::kBlob;
    default:
      return std::nullopt;
  }
}

// What one place of a binding says: a type, nothing, or that its values disagree.
struct Fact {
  Fact() = default;
  Fact(ColumnType t) : type(t) {}                 // NOLINT: implicit by design
  Fact(std::optional<ColumnType> t) : type(t) {}  // NOLINT
  static Fact Conflict() {
    Fact f;
    f.conflict = true;
    return f;
  }
  std::optional<ColumnType> type;
  bool conflict = false;
};

// The column type shared by `values`: their common type (longs mixed with doubles are
// DOUBLE), a conflict when they disagree, nothing when there are none.
Fact CommonType(const std::vector<Value>& values) {
  std::optional<ColumnType> common;
  for (const auto& v : values) {
    std::optional<ColumnType> t = TypeOfConstant(v);
    if (!t) return Fact::Conflict();
    if (!common || *common == *t) {
      common = t;
    } else if ((*common == ColumnType::kBigInt || *common == ColumnType::kDouble) &&
               (*t == ColumnType::kBigInt || *t == ColumnType::kDouble)) {
      common = ColumnType::kDouble;
    } else {
      return Fact::Conflict();
    }
  }
  return Fact(common);
}

// The common type of column `i` of the tuples in `rows`.
Fact ColumnOf(const edn::Vec& rows, size_t i) {
  std::vector<Value> col;
  for (const auto& row : rows) {
    if (!row.is_seq() || i >= row.size()) return Fact::Conflict();
    col.push_back(row.items()[i]);
  }
  return CommonType(col);
}

bool IsVar(const Value& v) { return v.is_symbol() && !v.str().empty() && v.str()[0] == '?'; }
bool IsSrc(const Value& v) { return v.is_symbol() && !v.str().empty() && v.str()[0] == '$'; }

// What the clauses say about each variable's type. Strong facts come from the schema
// and the query text; weak ones from input values (used only when nothing strong is
// known). Two different strong facts make the variable untyped.
class TypeFacts {
 public:
  explicit TypeFacts(const Schema& schema) : schema_(schema) {}

  void Strong(const Value& var, ColumnType t) {
    if (!IsVar(var)) return;
    auto [it, inserted] = strong_.emplace(var.str(), t);
    if (!inserted && it->second != t) conflict_.insert(var.str());
  }
  void Weak(const Value& var, ColumnType t) {
    if (IsVar(var)) weak_.emplace(var.str(), t);
  }
  void Weak(const Value& var, const Fact& f) {
    if (f.type) Weak(var, *f.type);
    if (f.conflict) Untyped(var);
  }
  // Values of several types reach `var`: no column type.
  void Untyped(const Value& var) {
    if (IsVar(var)) conflict_.insert(var.str());
  }
  std::optional<ColumnType> Get(const std::string& var) const {
    if (conflict_.count(var)) return std::nullopt;
    if (auto it = strong_.find(var); it != strong_.end()) return it->second;
    if (auto it = weak_.find(var); it != weak_.end()) return it->second;
    return std::nullopt;
  }
  std::optional<ColumnType> Get(const Value& v) const {
    if (IsVar(v)) return Get(v.str());
    return TypeOfConstant(v);
  }

  void Clauses(const edn::Vec& clauses, size_t from = 0) {
    for (size_t i = from; i < clauses.size(); ++i) Clause(clauses[i]);
  }

  void Clause(const Value& c) {
    if (c.is_vector()) {
      const edn::Vec& items = c.items();
      if (!items.empty() && items[0].is_list()) {
        Function(items);
      } else {
        Pattern(items);
      }
      return;
    }
    if (!c.is_list() || c.items().empty()) return;
    const edn::Vec& items = c.items();
    size_t head = 0;
    if (IsSrc(items[0])) head = 1;  // ($src or ...), ($src rule ...)
    if (head >= items.size() || !items[head].is_symbol()) return;
    const std::string& op = items[head].str();
    if (op == "not" || op == "or" || op == "and") {
      Clauses(items, head + 1);
    } else if (op == "not-join" || op == "or-join") {
      Clauses(items, head + 2);  // skip the join variables
    }
    // Anything else is a rule call: its outputs stay untyped unless used elsewhere.
  }

 private:
  const Attribute* AttributeOf(const Value& a) const {
    if (!a.is_keyword()) return nullptr;
    return schema_.attribute(a.str());
  }

  void Pattern(const edn::Vec& items) {
    size_t i = 0;
    if (!items.empty() && IsSrc(items[0])) i = 1;
    const Value* place[5] = {nullptr, nullptr, nullptr, nullptr, nullptr};
    for (size_t k = 0; k < 5 && i + k < items.size(); ++k) place[k] = &items[i + k];
    if (place[0]) Strong(*place[0], ColumnType::kBigInt);
    if (place[1]) Strong(*place[1], ColumnType::kBigInt);
    if (place[2] && place[1]) {
      if (const Attribute* attr = AttributeOf(*place[1]))
        Strong(*place[2], ColumnTypeOf(attr->type));
    }
    if (place[3]) Strong(*place[3], ColumnType::kBigInt);
    if (place[4]) Strong(*place[4], ColumnType::kBoolean);
  }

  // Binds the parts of a binding form (scalar, [?x ...], [?a ?b], [[?a ?b]]) to `types`.
  void Bind(const Value& binding, const std::vector<Fact>& types) {
    auto bind_one = [&](const Value& var, size_t i) {
      if (i >= types.size()) return;
      if (types[i].type) Strong(var, *types[i].type);
      if (types[i].conflict) Untyped(var);
    };
    if (IsVar(binding)) {
      bind_one(binding, 0);
      return;
    }
    if (!binding.is_vector()) return;
    const edn::Vec& b = binding.items();
    if (b.size() == 2 && b[1].is_symbol("...")) {  // collection
      bind_one(b[0], 0);
    } else if (b.size() == 1 && b[0].is_vector()) {  // relation
      const edn::Vec& cols = b[0].items();
      for (size_t i = 0; i < cols.size(); ++i) bind_one(cols[i], i);
    } else {  // tuple
      for (size_t i = 0; i < b.size(); ++i) bind_one(b[i], i);
    }
  }

  void Function(const edn::Vec& items) {
    const edn::Vec& call = items[0].items();
    if (items.size() < 2 || call.empty() || !call[0].is_symbol()) return;  // predicate
    const std::string& fn = call[0].str();
    const Value& binding = items[1];
    std::vector<std::optional<ColumnType>> one;
    if (fn == "ground" && call.size() == 2) {
      const Value& v = call[1];
      if (IsVar(binding)) {
        Bind(binding, {TypeOfConstant(v)});
      } else if (v.is_seq() && !v.items().empty()) {
        const edn::Vec& items = v.items();
        std::vector<Fact> types;
        if (items[0].is_seq()) {  // relation: each column over every tuple
          for (size_t i = 0; i < items[0].size(); ++i) types.push_back(ColumnOf(items, i));
        } else if (binding.is_vector() && binding.size() == 2 &&
                   binding.items()[1].is_symbol("...")) {
          types.push_back(CommonType(items));
        } else {
          for (const auto& part : items) types.push_back(TypeOfConstant(part));
        }
        Bind(binding, types);
      }
    } else if ((fn == "get-else") && call.size() == 5) {
      // The attribute's values or the default: a default of another type leaves the
      // result untyped.
      if (const Attribute* attr = AttributeOf(call[3])) Bind(binding, {ColumnTypeOf(attr->type)});
      Bind(binding, {Get(call[4])});
    } else if (fn == "get-some" && call.size() >= 4) {
      std::optional<ColumnType> common;
      bool same = true;
      for (size_t i = 3; i < call.size(); ++i) {
        const Attribute* attr = AttributeOf(call[i]);
        std::optional<ColumnType> t = attr ? std::optional(ColumnTypeOf(attr->type)) : std::nullopt;
        if (!t || (common && *common != *t)) same = false;
        common = t;
      }
      Bind(binding, {ColumnType::kBigInt, same ? Fact(common) : Fact()});
    } else if (fn == "fulltext") {
      Bind(binding,
           {ColumnType::kBigInt, ColumnType::kVarchar, ColumnType::kBigInt, ColumnType::kDouble});
    } else if (fn == "tx-ids") {
      Bind(binding, {ColumnType::kBigInt});
    } else if (fn == "tx-data") {
      Bind(binding, {ColumnType::kBigInt, ColumnType::kBigInt, Fact(), ColumnType::kBigInt,
                     ColumnType::kBoolean});
    } else if (fn == "str" || fn == "subs" || fn == "upper-case" || fn == "lower-case" ||
               fn == "name" || fn == "namespace" || fn == "trim") {
      Bind(binding, {ColumnType::kVarchar});
    } else if (fn == "+" || fn == "-" || fn == "*" || fn == "inc" || fn == "dec" || fn == "quot" ||
               fn == "rem" || fn == "mod" || fn == "/") {
      // Longs stay longs (division included: the engine divides integers in SQL); any
      // double makes a double. Unknown arguments leave the result untyped.
      bool all_long = true, known = true;
      for (size_t i = 1; i < call.size(); ++i) {
        std::optional<ColumnType> t = Get(call[i]);
        if (!t || (*t != ColumnType::kBigInt && *t != ColumnType::kDouble))
          known = false;
        else if (*t != ColumnType::kBigInt)
          all_long = false;
      }
      if (known && fn != "/") Bind(binding, {all_long ? ColumnType::kBigInt : ColumnType::kDouble});
      if (known && fn == "/" && !all_long) Bind(binding, {ColumnType::kDouble});
    }
  }

  const Schema& schema_;
  std::map<std::string, ColumnType> strong_;
  std::map<std::string, ColumnType> weak_;
  std::set<std::string> conflict_;
};

struct Sections {
  edn::Vec find, keys, in, where;
  std::string keys_kind;  // "keys", "strs", "syms"
};

Result<Sections> SplitQuery(const Value& q) {
  Sections s;
  auto put = [&s](const std::string& key, edn::Vec items) {
    if (key == "find")
      s.find = std::move(items);
    else if (key == "in")
      s.in = std::move(items);
    else if (key == "where")
      s.where = std::move(items);
    else if (key == "keys" || key == "strs" || key == "syms") {
      s.keys = std::move(items);
      s.keys_kind = key;
    }
  };
  if (q.is_map()) {
    for (const auto& [k, v] : q.entries()) {
      if (k.is_keyword()) put(k.str(), v.is_seq() ? v.items() : edn::Vec{v});
    }
  } else if (q.is_vector()) {
    std::string key;
    edn::Vec cur;
    for (const auto& item : q.items()) {
      if (item.is_keyword()) {
        if (!key.empty()) put(key, std::move(cur));
        key = item.str();
        cur.clear();
      } else {
        cur.push_back(item);
      }
    }
    if (!key.empty()) put(key, std::move(cur));
  } else {
    return Status::InvalidArgument("a query is a vector or a map, got " + Print(q));
  }
  if (s.find.empty()) return Status::InvalidArgument("the query has no :find");
  return s;
}

std::string VarName(const std::string& var) {
  return var.size() > 1 && var[0] == '?' ? var.substr(1) : var;
}

std::string Sanitize(std::string s) {
  for (char& c : s) {
    if (c == '-' || c == '/' || c == '.' || c == ' ') c = '_';
  }
  return s;
}

// One find element's column.
Column ElementColumn(const Value& e, const TypeFacts& facts) {
  if (IsVar(e)) return Column{VarName(e.str()), facts.Get(e.str()).value_or(ColumnType::kJson)};
  if (!e.is_list() || e.items().empty() || !e.items()[0].is_symbol()) {
    return Column{Sanitize(Print(e)), ColumnType::kJson};
  }
  const edn::Vec& parts = e.items();
  const std::string& fn = parts[0].str();
  // The pulled variable: the first ?var argument; the aggregated one: the last (in
  // (max ?n ?x) ?n is the count).
  std::string var;
  size_t var_at = 0;
  for (size_t k = 1; k < parts.size(); ++k) {
    size_t i = fn == "pull" ? k : parts.size() - k;
    if (IsVar(parts[i])) {
      var = parts[i].str();
      var_at = i;
      break;
    }
  }
  if (fn == "pull") return Column{var.empty() ? "pull" : VarName(var), ColumnType::kJson};
  std::optional<ColumnType> vt = var.empty() ? std::nullopt : facts.Get(var);
  if (fn == "the") return Column{VarName(var), vt.value_or(ColumnType::kJson)};
  std::string name = Sanitize(fn) + (var.empty() ? "" : "_" + VarName(var));
  ColumnType t = ColumnType::kJson;
  bool has_n = var_at > 1;  // (min 3 ?x), (sample ?n ?x): a collection
  if (fn == "count" || fn == "count-distinct") {
    t = ColumnType::kBigInt;
  } else if (fn == "avg" || fn == "median" || fn == "variance" || fn == "stddev") {
    t = ColumnType::kDouble;
  } else if (fn == "sum") {
    // A VARCHAR of numbers is a bigint or bigdec column, whose sums are exact: as text.
    t = vt == ColumnType::kBigInt    ? ColumnType::kBigInt
        : vt == ColumnType::kVarchar ? ColumnType::kVarchar
                                     : ColumnType::kDouble;
  } else if ((fn == "min" || fn == "max") && !has_n) {
    t = vt.value_or(ColumnType::kJson);
  }
  return Column{name, t};
}

// Input values bound to :in variables give weak facts.
void InputFacts(const edn::Vec& in, const std::vector<Value>& inputs, TypeFacts* facts) {
  size_t next = 0;
  for (const auto& spec : in) {
    if (IsSrc(spec) || spec.is_symbol("%")) continue;
    if (next >= inputs.size()) return;
    const Value& v = inputs[next++];
    if (IsVar(spec)) {
      if (auto t = TypeOfConstant(v)) facts->Weak(spec, *t);
      continue;
    }
    if (!spec.is_vector() || !v.is_seq() || v.items().empty()) continue;
    const edn::Vec& b = spec.items();
    if (b.size() == 2 && b[1].is_symbol("...")) {
      facts->Weak(b[0], CommonType(v.items()));
    } else if (b.size() == 1 && b[0].is_vector() && v.items()[0].is_seq()) {
      for (size_t i = 0; i < b[0].size(); ++i) {
        facts->Weak(b[0].items()[i], ColumnOf(v.items(), i));
      }
    } else {
      for (size_t i = 0; i < b.size() && i < v.size(); ++i) {
        if (auto t = TypeOfConstant(v.items()[i])) facts->Weak(b[i], *t);
      }
    }
  }
}

}  // namespace

// Query text as the engine reads it: EDN plus Clojure's regex literal #"re".
static edn::ReadOptions QueryText() {
  edn::ReadOptions o;
  o.script_syntax = true;
  return o;
}

Result<QueryColumns> InferColumns(std::string_view query, const Schema& schema,
                                  const std::vector<edn::Value>& inputs) {
  MENTAT_ASSIGN_OR_RETURN(Value q, edn::Read(query, QueryText()));
  return InferColumns(q, schema, inputs);
}

Result<QueryColumns> InferColumns(const edn::Value& query_value, const Schema& schema,
                                  const std::vector<edn::Value>& inputs) {
  Value query = query_value;
  if (query.is_string()) {
    MENTAT_ASSIGN_OR_RETURN(query, edn::Read(query.str(), QueryText()));
  }
  MENTAT_ASSIGN_OR_RETURN(Sections s, SplitQuery(query));

  TypeFacts facts(schema);
  InputFacts(s.in, inputs, &facts);
  // Twice, so that arithmetic sees argument types bound by later clauses.
  for (int pass = 0; pass < 2; ++pass) facts.Clauses(s.where);

  QueryColumns out;
  edn::Vec elems = s.find;
  if (elems.size() == 1 && elems[0].is_vector()) {
    const edn::Vec& inner = elems[0].items();
    if (inner.size() == 2 && inner[1].is_symbol("...")) {
      out.shape = QueryColumns::Shape::kCollection;
      elems = {inner[0]};
    } else {
      out.shape = QueryColumns::Shape::kTuple;
      elems = inner;
    }
  } else if (elems.size() == 2 && elems[1].is_symbol(".")) {
    out.shape = QueryColumns::Shape::kScalar;
    elems = {elems[0]};
  }

  std::map<std::string, int> seen;
  for (size_t i = 0; i < elems.size(); ++i) {
    Column c = ElementColumn(elems[i], facts);
    if (i < s.keys.size()) {
      const Value& k = s.keys[i];
      c.name = k.is_string() ? k.str() : (k.is_symbol() || k.is_keyword()) ? k.str() : Print(k);
    }
    if (i < s.keys.size()) {
      const Value& k = s.keys[i];
      std::string text = k.is_string() || k.is_symbol() || k.is_keyword() ? k.str() : Print(k);
      out.map_keys.push_back(s.keys_kind == "keys"   ? Value::Keyword(text)
                             : s.keys_kind == "strs" ? Value::String(text)
                                                     : Value::Symbol(text));
    }
    int n = ++seen[c.name];
    if (n > 1) c.name += "_" + std::to_string(n);
    out.columns.push_back(std::move(c));
  }
  return out;
}

}  // namespace mentat::duckdb_ext
