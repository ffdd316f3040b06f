#include "tx/ensure.h"

#include <string>
#include <vector>

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
                    const std::vector<std::pair<Entid, Entid>>& ensures) {
  if (ensures.empty()) return Status::OK();
  MENTAT_ASSIGN_OR_RETURN(auto spec_datoms,
                          c->Cached("SELECT a, v FROM datoms WHERE e = ?1 AND a IN (" +
                                    std::to_string(ids::kEntityAttrs) + ", " +
                                    std::to_string(ids::kEntityPreds) + ")"));
  MENTAT_ASSIGN_OR_RETURN(auto has,
                          c->Cached("SELECT 1 FROM datoms WHERE e = ?1 AND a = ?2 LIMIT 1"));
  for (const auto& [e, spec] : ensures) {
    std::vector<std::string> required;
    bool preds = false;
    spec_datoms->BindInt(1, spec);
    for (;;) {
      MENTAT_ASSIGN_OR_RETURN(bool row, spec_datoms->Step());
      if (!row) break;
      if (spec_datoms->ColumnInt(0) == ids::kEntityPreds) {
        preds = true;
      } else {
        std::string kw(spec_datoms->ColumnText(1));
        required.push_back(kw.size() > 1 && kw[0] == ':' ? kw.substr(1) : kw);
      }
    }
    spec_datoms->Reset();
    if (preds)
      return Status::Unsupported("entity spec " + Name(schema, spec) +
                                 " has :db.entity/preds, which need transaction functions: "
                                 "this mentat checks :db.entity/attrs only");
    if (required.empty())
      return Status::Schema(":db/ensure " + Name(schema, spec) + " on entity " + std::to_string(e) +
                            ": not an entity spec (no :db.entity/attrs)");
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
  }
  return Status::OK();
}

}  // namespace mentat::tx
