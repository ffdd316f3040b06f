#include "tx/excise.h"

#include <set>
#include <string>

namespace mentat::tx {

Result<std::vector<Excision>> FindExcisions(const Schema& schema, const Changes& changes) {
  std::vector<Excision> out;
  for (const Change& ch : changes.asserted)
    if (ch.a == ids::kExcise) out.push_back(Excision{ch.e, ch.v.i, {}});
  if (out.empty()) return out;
  auto name = [&](Entid e) {
    const std::string* id = schema.ident(e);
    return id ? ":" + *id : std::to_string(e);
  };
  std::set<Entid> targets;
  for (Excision& x : out) {
    if (x.target < ids::kUserStart || x.target >= ids::kTxStart)
      return Status::Schema("cannot excise entity " + name(x.target) +
                            ": only entities of :db.part/user can be excised (schema entities "
                            "and transactions cannot)");
    if (x.target == x.record)
      return Status::Schema("an excision cannot excise itself (entity " + name(x.target) + ")");
    if (!targets.insert(x.target).second)
      return Status::Schema("entity " + name(x.target) + " is excised twice in one transaction");
    for (const Change& ch : changes.asserted)
      if (ch.e == x.record && ch.a == ids::kExciseAttrs) {
        const Attribute* attr = schema.attribute(ch.v.i);
        if (!attr) return Status::Schema(":db.excise/attrs takes attributes, got " + name(ch.v.i));
        x.attrs.push_back(ch.v.i);
      }
  }
  for (const auto* list : {&changes.asserted, &changes.retracted})
    for (const Change& ch : *list)
      if (targets.count(ch.e))
        return Status::Schema("entity " + name(ch.e) +
                              " cannot be changed in the transaction that excises it");
  return out;
}

namespace {

Status Run(storage::Connection* c, const std::string& sql, Entid e) {
  MENTAT_ASSIGN_OR_RETURN(auto s, c->Prepare(sql));
  s.BindInt(1, e);
  return s.Run();
}

}  // namespace

Status Excise(storage::Connection* c, const Schema& schema, const std::vector<Excision>& ex) {
  if (ex.empty()) return Status::OK();
  (void)schema;
  // SQLite overwrites the freed pages (secure_delete); PostgreSQL keeps dead rows until
  // VACUUM reclaims them (doc/postgres.md "Excision").
  const bool pg = c->is_pg();
  int64_t secure = 0;
  if (!pg) {
    MENTAT_ASSIGN_OR_RETURN(secure, c->QueryInt("PRAGMA secure_delete", 0));
    MENTAT_RETURN_IF_ERROR(c->Exec("PRAGMA secure_delete = ON"));
  }
  Status st = [&]() -> Status {
    for (const Excision& x : ex) {
      std::string only;
      if (!x.attrs.empty()) {
        only = " AND a IN (";
        for (size_t i = 0; i < x.attrs.size(); ++i)
          only += (i ? ", " : "") + std::to_string(x.attrs[i]);
        only += ")";
      }
      if (!pg)
        MENTAT_RETURN_IF_ERROR(
            Run(c,
                "INSERT INTO fulltext (fulltext, rowid, text) SELECT 'delete', id, text FROM "
                "fulltext_docs WHERE e = ?1" +
                    only,
                x.target));
      MENTAT_RETURN_IF_ERROR(Run(c, "DELETE FROM fulltext_docs WHERE e = ?1" + only, x.target));
      MENTAT_RETURN_IF_ERROR(Run(c,
                                 "UPDATE attr_stats SET datoms = datoms - (SELECT count(*) FROM "
                                 "datoms d WHERE d.e = ?1 AND d.a = attr_stats.a) WHERE a IN "
                                 "(SELECT a FROM datoms WHERE e = ?1" +
                                     only + ")",
                                 x.target));
      // The planner's common values must not keep a copy of an excised value either.
      MENTAT_RETURN_IF_ERROR(Run(c,
                                 "DELETE FROM attr_values WHERE (a, v) IN (SELECT a, v FROM "
                                 "datoms WHERE e = ?1" +
                                     only + " UNION SELECT a, v FROM history WHERE e = ?1" + only +
                                     ")",
                                 x.target));
      MENTAT_RETURN_IF_ERROR(Run(c, "DELETE FROM datoms WHERE e = ?1" + only, x.target));
      MENTAT_RETURN_IF_ERROR(Run(c, "DELETE FROM history WHERE e = ?1" + only, x.target));
    }
    return c->Exec("UPDATE meta SET value = value + 1 WHERE key = 'schema_gen'");
  }();
  if (pg) return st;
  Status restore = c->Exec("PRAGMA secure_delete = " + std::to_string(secure));
  return st.ok() ? restore : st;
}

}  // namespace mentat::tx
