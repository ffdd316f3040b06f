#include "store/index_advisor.h"

#include <cstdlib>
#include <string>

namespace mentat {

namespace {

// The attribute a constant attribute place names, or nullptr.
const Attribute* ConstAttribute(const query::Term& a, const Schema& schema) {
  if (!a.is_const()) return nullptr;
  if (a.value.is_keyword()) return schema.attribute(a.value.str());
  if (a.value.is_int()) return schema.attribute(a.value.as_int());
  return nullptr;
}

void Collect(const query::Clauses& clauses, const std::set<std::string>& inputs,
             const Schema& schema, std::set<Entid>* out) {
  for (const auto& c : clauses) {
    if (c.kind == query::Clause::Kind::kPattern && c.places.size() >= 3) {
      const Attribute* attr = ConstAttribute(c.places[1], schema);
      const query::Term& v = c.places[2];
      if (attr && (v.is_const() || (v.is_var() && inputs.count(v.name)))) out->insert(attr->id);
    }
    Collect(c.body, inputs, schema, out);
  }
}

}  // namespace

std::vector<Entid> ValueFilteredAttributes(const query::ParsedQuery& q, const Schema& schema) {
  std::set<std::string> inputs;
  for (const auto& in : q.in) {
    if (in.kind == query::InSpec::Kind::kScalar) inputs.insert(in.name);
    for (const auto& v : in.vars) inputs.insert(v);
  }
  std::set<Entid> attrs;
  Collect(q.where, inputs, schema, &attrs);
  return {attrs.begin(), attrs.end()};
}

void IndexAdvisor::set_tuning(int min_uses, std::chrono::seconds idle) {
  std::lock_guard<std::mutex> lock(mu_);
  min_uses_ = min_uses < 1 ? 1 : min_uses;
  idle_s_ = idle.count() < 0 ? 0 : idle.count();
}

bool IndexAdvisor::Record(const std::vector<Entid>& attrs, const Schema& schema) {
  if (mode() != AutoIndex::kAdaptive) return false;
  std::lock_guard<std::mutex> lock(mu_);
  bool due = ++queries_ >= kPeriod;
  for (Entid a : attrs) {
    int64_t n = ++uses_[a];
    const Attribute* attr = schema.attribute(a);
    due |= n == min_uses_ && attr && !attr->value_indexed() && !rejected_.count(a);
  }
  return due;
}

void IndexAdvisor::EndPeriod() {
  std::lock_guard<std::mutex> lock(mu_);
  uses_.clear();
  queries_ = 0;
}

Result<std::vector<IndexAction>> IndexAdvisor::Plan(storage::Connection* c, const Schema& schema,
                                                    int64_t now, std::map<Entid, int64_t>* used) {
  std::vector<IndexAction> actions;
  AutoIndex m = mode();
  if (m == AutoIndex::kOff) return actions;
  std::lock_guard<std::mutex> lock(mu_);
  auto ident = [&](Entid a) {
    const Attribute* attr = schema.attribute(a);
    return attr ? attr->ident : std::to_string(a);
  };
  // Adaptive indexes that exist: kept, or dropped.
  MENTAT_ASSIGN_OR_RETURN(auto rows, c->Cached("SELECT a, last_used FROM auto_indexes ORDER BY a"));
  for (;;) {
    MENTAT_ASSIGN_OR_RETURN(bool row, rows->Step());
    if (!row) break;
    Entid a = rows->ColumnInt(0);
    int64_t last_used = rows->ColumnInt(1);
    const Attribute* attr = schema.attribute(a);
    int64_t n = uses_.count(a) ? uses_.at(a) : 0;
    std::string reason;
    if (m == AutoIndex::kSchema) {
      reason = "mode schema";
    } else if (!attr) {
      reason = "no such attribute";
    } else if (attr->schema_value_indexed()) {
      reason = "in the schema";
    } else if (n == 0 && now - last_used >= idle_s_) {
      reason = "idle";
    }
    if (!reason.empty()) {
      actions.push_back({IndexAction::Kind::kDrop, a, ident(a), 0, reason});
    } else if (n > 0) {
      (*used)[a] = n;
    }
  }
  if (m != AutoIndex::kAdaptive) return actions;
  // Attributes that earned one.
  MENTAT_ASSIGN_OR_RETURN(auto stats,
                          c->Cached("SELECT datoms, distinct_values FROM attr_stats WHERE a = ?1"));
  for (const auto& [a, n] : uses_) {
    const Attribute* attr = schema.attribute(a);
    if (n < min_uses_ || !attr || attr->value_indexed() || attr->fulltext || rejected_.count(a) ||
        Schema::IsSchemaAttribute(a) || a <= ids::kUniqueIdentity)
      continue;
    stats->BindInt(1, a);
    MENTAT_ASSIGN_OR_RETURN(bool row, stats->Step());
    int64_t datoms = row ? stats->ColumnInt(0) : 0;
    int64_t distinct = row ? stats->ColumnInt(1) : 0;
    stats->Reset();
    if (datoms >= kMinDatomsToJudge && distinct * kMinSelectivity < datoms) {
      rejected_.insert(a);
      continue;
    }
    actions.push_back({IndexAction::Kind::kCreate, a, ident(a), n, ""});
  }
  return actions;
}

Result<AutoIndex> AutoIndexFromEnv() {
  const char* v = std::getenv("MENTAT_AUTO_INDEX");
  std::string s = v ? v : "";
  if (s.empty() || s == "schema") return AutoIndex::kSchema;
  if (s == "off") return AutoIndex::kOff;
  if (s == "adaptive") return AutoIndex::kAdaptive;
  return Status::InvalidArgument("MENTAT_AUTO_INDEX is '" + s +
                                 "'; expected off, schema or adaptive");
}

std::string IndexAction::ToString() const {
  if (kind == Kind::kCreate)
    return "create value index on :" + ident + " (" + std::to_string(uses) +
           " value-filtered queries)";
  return "drop value index on :" + ident + " (" + reason + ")";
}

}  // namespace mentat
