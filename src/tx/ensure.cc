#include "tx/ensure.h"

#include <string>
#include <vector>

#include "schema/codec.h"
#include "tx/functions.h"

namespace mentat::tx {

namespace {

std::string Name(const Schema& schema, Entid e) {
  const std::string* id = schema.ident(e);
  return id ? ":" + *id : std::to_string(e);
}

}  // namespace

std::vector<std::pair<Entid, Entid>> TakeEnsures(Changes* changes) {
  std::vector<std::pair<Entid, Entid>> out;
  for (const Change& ch : changes->asserted)
    if (ch.a == ids::kEnsure) out.emplace_back(ch.e, ch.v.i);
  if (out.empty()) return out;
  std::erase_if(changes->asserted, [](const Change& ch) { return ch.a == ids::kEnsure; });
  return out;
}

Status CheckEnsures(storage::Connection* c, const Schema& schema,
                    const std::vector<std::pair<Entid, Entid>>& ensures, Functions* fns) {
  if (ensures.empty()) return Status::OK();
  MENTAT_ASSIGN_OR_RETURN(auto spec_datoms,
                          c->Cached("SELECT a, v FROM datoms WHERE e = ?1 AND a IN (" +
                                    std::to_string(ids::kEntityAttrs) + ", " +
                                    std::to_string(ids::kEntityPreds) + ")"));
  MENTAT_ASSIGN_OR_RETURN(auto has,
                          c->Cached("SELECT 1 FROM datoms WHERE e = ?1 AND a = ?2 LIMIT 1"));
  for (const auto& [e, spec] : ensures) {
    std::vector<std::string> required;
    std::vector<edn::Value> preds;
    spec_datoms->BindInt(1, spec);
    for (;;) {
      MENTAT_ASSIGN_OR_RETURN(bool row, spec_datoms->Step());
      if (!row) break;
      if (spec_datoms->ColumnInt(0) == ids::kEntityPreds) {
        preds.push_back(edn::Value::Symbol(std::string(spec_datoms->ColumnText(1))));
      } else {
        std::string kw(spec_datoms->ColumnText(1));
        required.push_back(kw.size() > 1 && kw[0] == ':' ? kw.substr(1) : kw);
      }
    }
    spec_datoms->Reset();
    if (required.empty() && preds.empty())
      return Status::Schema(":db/ensure " + Name(schema, spec) + " on entity " + std::to_string(e) +
                            ": not an entity spec (no :db.entity/attrs or :db.entity/preds)");
    std::string missing;
    for (const std::string& ident : required) {
      const Attribute* attr = schema.attribute(ident);
      bool present = false;
      if (attr) {
        has->BindInt(1, e);
        has->BindInt(2, attr->id);
        MENTAT_ASSIGN_OR_RETURN(present, has->Step());
        has->Reset();
      }
      if (!present) missing += (missing.empty() ? ":" : ", :") + ident;
    }
    if (!missing.empty())
      return Status::Schema("entity " + std::to_string(e) + " does not satisfy the spec " +
                            Name(schema, spec) + ": it lacks " + missing + " (:db.entity/attrs)");
    for (const edn::Value& pred : preds) {
      if (!fns)
        return Status::Unsupported("entity spec " + Name(schema, spec) +
                                   ": :db.entity/preds cannot run here");
      MENTAT_ASSIGN_OR_RETURN(std::string source, PredicateSource(c, schema, pred));
      Result<edn::Value> r = fns->Apply(source, true, {edn::Value::Int(e)});
      if (!r.ok())
        return Status(r.status().code(), "entity spec " + Name(schema, spec) + ", predicate " +
                                             pred.str() + " on entity " + std::to_string(e) + ": " +
                                             r.status().message());
      if (r->is_nil() || (r->is_bool() && !r->as_bool()))
        return Status::Schema("entity " + std::to_string(e) + " does not satisfy the spec " +
                              Name(schema, spec) + ": its predicate " + pred.str() + " returned " +
                              edn::Print(*r) + " (:db.entity/preds)");
    }
  }
  return Status::OK();
}

}  // namespace mentat::tx
