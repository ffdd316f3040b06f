// Pass 6: rows -> QueryResult. Aggregates that SQL cannot compute (median, variance,
// stddev, distinct, (min n ?x), (max n ?x), sample, rand, the) run here over the distinct
// rows the SQL returned, grouped by the non-aggregate find elements (Datomic's set
// semantics: every aggregate sees the values of its variable across the group's tuples).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <unordered_map>
#include <unordered_set>

#include "query/execute.h"
#include "schema/names.h"
#include "util/decimal.h"

namespace mentat::query {

namespace {

struct VecHash {
  size_t operator()(const std::vector<edn::Value>& v) const {
    size_t h = 0;
    for (const auto& x : v) h = h * 1000003 ^ x.Hash();
    return h;
  }
};

// A value whose type is decoded per row is selected with its attribute (or type) column,
// so SQL's DISTINCT keeps "x" of :a/b and "x" of :a/c apart: the result is a set of the
// decoded rows, the first of equal ones kept (the order is SQL's).
void DistinctDecoded(std::vector<std::vector<edn::Value>>* rows) {
  std::unordered_set<std::vector<edn::Value>, VecHash> seen;
  size_t w = 0;
  for (size_t i = 0; i < rows->size(); ++i) {
    if (!seen.insert((*rows)[i]).second) continue;
    if (w != i) (*rows)[w] = std::move((*rows)[i]);
    ++w;
  }
  rows->resize(w);
}

Result<double> Num(const edn::Value& v, const std::string& fn) {
  if (v.is_int()) return static_cast<double>(v.as_int());
  if (v.is_float()) return v.as_double();
  if (v.kind() == edn::Kind::kBigInt || v.kind() == edn::Kind::kBigDec)
    return std::strtod(v.str().c_str(), nullptr);
  return Status::InvalidArgument(fn + ": " + edn::Print(v) + " is not a number");
}

std::mt19937_64& Rng() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return rng;
}

}  // namespace

Result<edn::Value> Aggregate(const std::string& fn, int64_t n, std::vector<edn::Value> values,
                             const edn::Value& form) {
  (void)form;
  using edn::Value;
  if (fn == "count") return Value::Int(static_cast<int64_t>(values.size()));
  if (fn == "count-distinct" || fn == "distinct") {
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    if (fn == "distinct") return Value::Set(std::move(values));
    return Value::Int(static_cast<int64_t>(values.size()));
  }
  if (fn == "sum" && !values.empty() &&
      (values[0].kind() == edn::Kind::kBigInt || values[0].kind() == edn::Kind::kBigDec)) {
    // Exact sums of bigint and bigdec values (one attribute type: all of one kind).
    decimal::Decimal total;
    for (const auto& v : values) {
      if (v.kind() != values[0].kind()) {
        MENTAT_RETURN_IF_ERROR(Num(v, fn).status());
        return Status::InvalidArgument(fn + ": cannot add " + edn::Print(v) + " to " +
                                       edn::KindName(values[0].kind()) + " values");
      }
      auto next = decimal::Add(total, decimal::Parse(v.str()));
      if (!next) return Status::InvalidArgument(fn + ": the sum needs more than 100,000 digits");
      total = std::move(*next);
    }
    bool integer = values[0].kind() == edn::Kind::kBigInt;
    std::string text = decimal::Format(total, integer);
    return integer ? Value::BigInt(text) : Value::BigDec(text);
  }
  if (fn == "sum") {
    bool any_float = false;
    int64_t isum = 0;
    double dsum = 0;
    for (const auto& v : values) {
      MENTAT_ASSIGN_OR_RETURN(double d, Num(v, fn));
      if (v.is_float()) any_float = true;
      if (v.is_int()) isum += v.as_int();
      dsum += d;
    }
    return any_float ? Value::Float(dsum) : Value::Int(isum);
  }
  if (fn == "avg" || fn == "variance" || fn == "stddev") {
    if (values.empty()) return Value();
    std::vector<double> xs;
    for (const auto& v : values) {
      MENTAT_ASSIGN_OR_RETURN(double d, Num(v, fn));
      xs.push_back(d);
    }
    // Summed in sorted order, so the result does not depend on the order the rows came in
    // (which follows the indexes SQLite chose).
    std::sort(xs.begin(), xs.end());
    double sum = 0;
    for (double d : xs) sum += d;
    double mean = sum / static_cast<double>(xs.size());
    if (fn == "avg") return Value::Float(mean);
    double var = 0;
    for (double d : xs) var += (d - mean) * (d - mean);
    var /= static_cast<double>(xs.size());
    return Value::Float(fn == "variance" ? var : std::sqrt(var));
  }
  if (fn == "median") {
    if (values.empty()) return Value();
    for (const auto& v : values) MENTAT_RETURN_IF_ERROR(Num(v, fn).status());
    std::sort(values.begin(), values.end());
    size_t m = values.size() / 2;
    if (values.size() % 2 == 1) return values[m];
    double a = Num(values[m - 1], fn).value(), b = Num(values[m], fn).value();
    double mid = (a + b) / 2;
    if (values[m - 1].is_int() && values[m].is_int() && mid == std::floor(mid))
      return Value::Int(static_cast<int64_t>(mid));
    return Value::Float(mid);
  }
  if (fn == "min" || fn == "max") {
    std::sort(values.begin(), values.end());
    if (n < 0) {
      if (values.empty()) return Value();
      return fn == "min" ? values.front() : values.back();
    }
    if (fn == "max") std::reverse(values.begin(), values.end());
    if (static_cast<int64_t>(values.size()) > n) values.resize(static_cast<size_t>(n));
    return Value::Vector(std::move(values));
  }
  if (fn == "sample") {
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    std::shuffle(values.begin(), values.end(), Rng());
    if (static_cast<int64_t>(values.size()) > n) values.resize(static_cast<size_t>(n));
    return Value::Vector(std::move(values));
  }
  if (fn == "rand") {
    if (values.empty()) return Value();
    std::uniform_int_distribution<size_t> pick(0, values.size() - 1);
    if (n < 0) return values[pick(Rng())];
    edn::Vec out;
    for (int64_t i = 0; i < n; ++i) out.push_back(values[pick(Rng())]);
    return Value::Vector(std::move(out));
  }
  return Status::InvalidArgument("unknown aggregate " + fn);
}

Status Execution::Pull(std::vector<std::vector<edn::Value>>* rows) {
  for (size_t i = 0; i < c_.find.size(); ++i) {
    const ProjElem& pe = c_.find[i];
    if (pe.kind != FindElem::Kind::kPull) continue;
    if (!ctx_.pull && !ctx_.pull_many) return Status::Unsupported("pull is not supported yet");
    edn::Value pattern = pe.pattern;
    if (pe.pattern_slot >= 0) {
      const edn::Value* p = SlotValue(pe.pattern_slot);
      if (!p) return Status::InvalidArgument("missing pull pattern input");
      pattern = *p;
      if (pattern.is_string()) {
        auto r = edn::Read(pattern.str());
        if (!r.ok()) return r.status();
        pattern = *r;
      }
    }
    const DbView& view = View(pe.pull_src);
    // An entity given as an ident (a keyword input the clauses did not type as a ref) is
    // pulled like its id; an ident that names nothing pulls nil.
    // A lookup ref the same way ([:attr v], or [attr-id v]); one that finds nothing
    // pulls nil too.
    for (auto& row : *rows) {
      if (row[i].is_keyword()) {
        auto e = ctx_.schema->entid(row[i].str());
        row[i] = e ? edn::Value::Int(*e) : edn::Value();
      } else if (schema::IsLookupRefShape(row[i])) {
        MENTAT_ASSIGN_OR_RETURN(auto e, ResolveLookupRef(row[i], pe.pull_src));
        row[i] = e ? edn::Value::Int(*e) : edn::Value();
      }
    }
    if (ctx_.pull_many) {
      std::vector<Entid> eids;
      std::vector<size_t> where;
      for (size_t r = 0; r < rows->size(); ++r) {
        if (!(*rows)[r][i].is_int()) continue;
        eids.push_back((*rows)[r][i].as_int());
        where.push_back(r);
      }
      if (eids.empty()) continue;
      const bool read = pulled_read_ && static_cast<int>(i) == c_.pull_elem;
      MENTAT_ASSIGN_OR_RETURN(
          auto pulled,
          ctx_.pull_many(
              view, pattern, eids, [this] { return intr_.Check(); }, read ? &pulled_ : nullptr));
      if (pulled.size() != eids.size()) return Status::Internal("pull returned the wrong count");
      for (size_t k = 0; k < where.size(); ++k) (*rows)[where[k]][i] = std::move(pulled[k]);
      continue;
    }
    for (auto& row : *rows) {
      MENTAT_RETURN_IF_ERROR(intr_.Check());
      if (!row[i].is_int()) continue;
      MENTAT_ASSIGN_OR_RETURN(row[i], ctx_.pull(view, pattern, row[i].as_int()));
    }
  }
  return Status::OK();
}

Status Execution::OffsetAndLimit(std::vector<std::vector<edn::Value>>* rows) const {
  auto slot_int = [&](int slot, std::optional<int64_t> fixed) -> Result<std::optional<int64_t>> {
    if (fixed) return fixed;
    if (slot < 0) return std::optional<int64_t>();
    const edn::Value* v = SlotValue(slot);
    if (!v || !v->is_int() || v->as_int() < 0)
      return Status::InvalidArgument(":limit/:offset input must be a non-negative integer");
    return std::optional<int64_t>(v->as_int());
  };
  MENTAT_ASSIGN_OR_RETURN(auto offset, slot_int(c_.offset_slot, c_.offset));
  MENTAT_ASSIGN_OR_RETURN(auto limit, slot_int(c_.limit_slot, c_.limit));
  if (offset) {
    size_t o = std::min(rows->size(), static_cast<size_t>(*offset));
    rows->erase(rows->begin(), rows->begin() + static_cast<long>(o));
  }
  if (limit && rows->size() > static_cast<size_t>(*limit))
    rows->resize(static_cast<size_t>(*limit));
  return Status::OK();
}

Result<QueryResult> Execution::Project(std::vector<std::vector<edn::Value>> rows) {
  QueryResult r = Describe(q_);
  {
    bool per_row = false, sql_agg = false;
    for (const ProjElem& pe : c_.find) {
      if (pe.kind == FindElem::Kind::kAgg) sql_agg = !c_.cpp_mode;
      if (!c_.cpp_mode && TypedByAttrColumn(pe.out)) per_row = true;
    }
    for (const OutCol& oc : c_.row_vars)
      if (c_.cpp_mode && TypedByAttrColumn(oc)) per_row = true;
    if (per_row && !sql_agg) DistinctDecoded(&rows);
  }
  if (c_.cpp_mode) {
    // Group.
    std::unordered_map<std::vector<edn::Value>, size_t, VecHash> index;
    std::vector<std::vector<size_t>> groups;
    for (size_t i = 0; i < rows.size(); ++i) {
      std::vector<edn::Value> key;
      for (int e : c_.group_elems) key.push_back(rows[i][c_.find[e].var_index]);
      auto [it, added] = index.emplace(std::move(key), groups.size());
      if (added) groups.emplace_back();
      groups[it->second].push_back(i);
    }
    int minmax = -1;
    for (size_t e = 0; e < c_.find.size(); ++e)
      if (c_.find[e].kind == FindElem::Kind::kAgg && c_.find[e].n < 0 && c_.find[e].n_slot < 0 &&
          (c_.find[e].fn == "min" || c_.find[e].fn == "max"))
        minmax = static_cast<int>(e);
    bool has_the = false;
    for (const auto& pe : c_.find) has_the = has_the || pe.kind == FindElem::Kind::kThe;
    std::vector<std::vector<edn::Value>> out;
    std::unordered_set<std::vector<edn::Value>, VecHash> seen;
    for (const auto& g : groups) {
      MENTAT_RETURN_IF_ERROR(intr_.Check());
      std::vector<edn::Value> agg(c_.find.size());
      for (size_t e = 0; e < c_.find.size(); ++e) {
        const ProjElem& pe = c_.find[e];
        if (pe.kind != FindElem::Kind::kAgg) continue;
        std::vector<edn::Value> vals;
        vals.reserve(g.size());
        for (size_t i : g) vals.push_back(rows[i][pe.var_index]);
        int64_t n = pe.n;
        if (pe.n_slot >= 0) {
          const edn::Value* v = SlotValue(pe.n_slot);
          if (!v || !v->is_int() || v->as_int() < 0)
            return Status::InvalidArgument("(" + pe.fn + " n ?x): the input n must be a " +
                                           "non-negative integer, got " +
                                           (v ? edn::Print(*v) : std::string("nothing")));
          n = v->as_int();
        }
        MENTAT_ASSIGN_OR_RETURN(agg[e], Aggregate(pe.fn, n, std::move(vals), q_.form));
      }
      std::vector<size_t> picks{g.front()};
      if (has_the && minmax >= 0) {
        picks.clear();
        for (size_t i : g)
          if (rows[i][c_.find[minmax].var_index] == agg[minmax]) picks.push_back(i);
      }
      for (size_t i : picks) {
        std::vector<edn::Value> row(c_.find.size());
        for (size_t e = 0; e < c_.find.size(); ++e)
          row[e] = c_.find[e].kind == FindElem::Kind::kAgg ? agg[e] : rows[i][c_.find[e].var_index];
        if (seen.insert(row).second) out.push_back(std::move(row));
      }
    }
    rows = std::move(out);
    if (!c_.order.empty()) {
      std::stable_sort(rows.begin(), rows.end(),
                       [&](const std::vector<edn::Value>& a, const std::vector<edn::Value>& b) {
                         for (const auto& [e, desc] : c_.order) {
                           int c = Compare(a[e], b[e]);
                           if (c != 0) return desc ? c > 0 : c < 0;
                         }
                         return false;
                       });
    }
    MENTAT_RETURN_IF_ERROR(OffsetAndLimit(&rows));
  } else if (c_.limit_after_decode) {
    MENTAT_RETURN_IF_ERROR(OffsetAndLimit(&rows));
  }
  if ((r.shape == QueryResult::Shape::kTuple || r.shape == QueryResult::Shape::kScalar) &&
      rows.size() > 1)
    rows.resize(1);
  MENTAT_RETURN_IF_ERROR(Pull(&rows));
  r.rows = std::move(rows);
  return r;
}

}  // namespace mentat::query

namespace mentat {

edn::Value QueryResult::ToEdn() const {
  using edn::Value;
  auto row_value = [&](const std::vector<Value>& row) {
    if (!map_keys.empty()) {
      edn::MapEntries m;
      for (size_t i = 0; i < row.size() && i < map_keys.size(); ++i)
        m.push_back({map_keys[i], row[i]});
      return Value::Map(std::move(m));
    }
    return Value::Vector(row);
  };
  switch (shape) {
    case Shape::kRelation: {
      edn::Vec out;
      out.reserve(rows.size());
      for (const auto& row : rows) out.push_back(row_value(row));
      return Value::Vector(std::move(out));
    }
    case Shape::kCollection: {
      edn::Vec out;
      out.reserve(rows.size());
      for (const auto& row : rows) out.push_back(row.empty() ? Value() : row[0]);
      return Value::Vector(std::move(out));
    }
    case Shape::kTuple:
      if (rows.empty()) return Value();
      return row_value(rows[0]);
    case Shape::kScalar:
      if (rows.empty() || rows[0].empty()) return Value();
      return rows[0][0];
  }
  return Value();
}

}  // namespace mentat
