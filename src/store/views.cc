#include "store/views.h"

#include "storage/format.h"

namespace mentat {

Result<Entid> ResolveTxPoint(storage::Connection* c, const TxPoint& p) {
  if (p.tx) return *p.tx;
  if (!p.instant_micros) return Status::InvalidArgument("empty time point");
  MENTAT_ASSIGN_OR_RETURN(
      auto s,
      c->Cached(
          "SELECT e FROM datoms WHERE a = 4 AND ix IS NOT 0 AND v <= ?1 ORDER BY v DESC, e DESC "
          "LIMIT 1"));
  s->BindInt(1, *p.instant_micros);
  MENTAT_ASSIGN_OR_RETURN(bool row, s->Step());
  return row ? s->ColumnInt(0) : Entid{0};
}

Result<ResolvedView> ResolveView(storage::Connection* c, const Db& db) {
  ResolvedView v;
  v.history = db.is_history();
  if (db.as_of_point()) {
    MENTAT_ASSIGN_OR_RETURN(Entid t, ResolveTxPoint(c, *db.as_of_point()));
    v.as_of = t;
  }
  if (db.since_point()) {
    MENTAT_ASSIGN_OR_RETURN(Entid t, ResolveTxPoint(c, *db.since_point()));
    v.since = t;
  }
  if (db.basis()) {
    MENTAT_ASSIGN_OR_RETURN(Entid last,
                            c->QueryInt("SELECT value FROM meta WHERE key = 'last_tx'", 0));
    if (*db.basis() < last && (!v.as_of || *v.as_of > *db.basis())) v.as_of = *db.basis();
  }
  return v;
}

std::string ViewSql(const ResolvedView& view, const std::string& where, AttrIndex index) {
  auto conj = [&](std::string cond) {
    std::string w = where;
    if (!cond.empty()) w = w.empty() ? cond : "(" + w + ") AND " + cond;
    return w.empty() ? std::string() : " WHERE " + w;
  };
  std::string tx_filter;
  if (view.as_of) tx_filter = "tx <= " + std::to_string(*view.as_of);
  if (view.since) {
    if (!tx_filter.empty()) tx_filter += " AND ";
    tx_filter += "tx > " + std::to_string(*view.since);
  }
  auto current = [&](const std::string& term) {
    return "SELECT e, a, v, tx, 1 AS added FROM datoms" +
           conj(tx_filter.empty() ? term : tx_filter + " AND " + term);
  };
  std::string sql;
  switch (index) {
    case AttrIndex::kNone:
      sql = "SELECT e, a, v, tx, 1 AS added FROM datoms" + conj(tx_filter);
      break;
    case AttrIndex::kAvet:
      sql = current(storage::IndexTerm(true));
      break;
    case AttrIndex::kAevt:
      sql = current(storage::IndexTerm(false));
      break;
    case AttrIndex::kBoth:
      sql = current(storage::IndexTerm(true)) + " UNION ALL " + current(storage::IndexTerm(false));
      break;
  }
  if (!view.history) {
    if (view.as_of) {
      std::string t = std::to_string(*view.as_of);
      std::string cond = "tx <= " + t + " AND rtx > " + t;
      if (view.since) cond += " AND tx > " + std::to_string(*view.since);
      sql += " UNION ALL SELECT e, a, v, tx, 1 FROM history" + conj(cond);
    }
    return sql;
  }
  // History: every assertion (current or retracted) and every retraction, within the
  // as-of/since bounds on the transaction of each event.
  sql += " UNION ALL SELECT e, a, v, tx, 1 FROM history" + conj(tx_filter);
  std::string rtx_filter;
  if (view.as_of) rtx_filter = "rtx <= " + std::to_string(*view.as_of);
  if (view.since) {
    if (!rtx_filter.empty()) rtx_filter += " AND ";
    rtx_filter += "rtx > " + std::to_string(*view.since);
  }
  sql += " UNION ALL SELECT e, a, v, rtx AS tx, 0 FROM history" + conj(rtx_filter);
  return sql;
}

}  // namespace mentat
