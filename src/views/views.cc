#include "views/views.h"

#include "storage/format.h"

namespace mentat {

namespace views {

std::vector<Branch> Branches(const Shape& s) {
  Branch current{"datoms", {}, true, "tx"};
  if (s.as_of) current.conds.push_back({"tx", "<=", Bound::kAsOf});
  if (s.since) current.conds.push_back({"tx", ">", Bound::kSince});
  std::vector<Branch> out{current};
  if (!s.history) {
    // As of t: also the datoms asserted by t and retracted after it.
    if (s.as_of) {
      Branch h{"history", {{"tx", "<=", Bound::kAsOf}, {"rtx", ">", Bound::kAsOf}}, true, "tx"};
      if (s.since) h.conds.push_back({"tx", ">", Bound::kSince});
      out.push_back(h);
    }
    return out;
  }
  // History: every assertion (current or retracted) and every retraction, within the
  // as-of/since bounds on the transaction of each event.
  Branch asserted{"history", current.conds, true, "tx"};
  Branch retracted{"history", {}, false, "rtx"};
  if (s.as_of) retracted.conds.push_back({"rtx", "<=", Bound::kAsOf});
  if (s.since) retracted.conds.push_back({"rtx", ">", Bound::kSince});
  out.push_back(asserted);
  out.push_back(retracted);
  return out;
}

std::vector<Branch> TxBranches() {
  return {Branch{"datoms", {{"tx", "=", Bound::kTx}}, true, "tx"},
          Branch{"history", {{"tx", "=", Bound::kTx}}, true, "tx"},
          Branch{"history", {{"rtx", "=", Bound::kTx}}, false, "rtx"}};
}

std::string CondTest(const Cond& cond, const BoundSql& bounds) {
  const std::string& b = cond.bound == Bound::kAsOf    ? bounds.as_of
                         : cond.bound == Bound::kSince ? bounds.since
                                                       : bounds.tx;
  return std::string(cond.op) + " " + b;
}

std::string CondSql(const Cond& cond, const std::string& column_sql, const BoundSql& bounds) {
  return column_sql + " " + CondTest(cond, bounds);
}

std::string CondsSql(const Branch& branch, const std::string& qualifier, const BoundSql& bounds) {
  std::string out;
  for (const Cond& c : branch.conds)
    out += (out.empty() ? "" : " AND ") + CondSql(c, qualifier + c.column, bounds);
  return out;
}

}  // namespace views

views::BoundSql ResolvedView::bounds() const {
  views::BoundSql b;
  if (as_of) b.as_of = std::to_string(*as_of);
  if (since) b.since = std::to_string(*since);
  return b;
}

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

Result<ResolvedView> ResolveView(storage::Connection* c, const Db& db,
                                 std::optional<Entid> known_last_tx) {
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
    Entid last = 0;
    if (known_last_tx) {
      last = *known_last_tx;
    } else {
      MENTAT_ASSIGN_OR_RETURN(last, c->QueryInt("SELECT value FROM meta WHERE key = 'last_tx'", 0));
    }
    if (*db.basis() < last && (!v.as_of || *v.as_of > *db.basis())) v.as_of = *db.basis();
  }
  return v;
}

std::string ViewSelect(const views::Shape& shape, const views::BoundSql& bounds,
                       const std::string& where, AttrIndex index, bool with_ix) {
  std::string sql;
  auto select = [&](const views::Branch& b, const char* index_term) {
    std::string w = where.empty() ? "" : "(" + where + ")";
    for (const std::string& part : {views::CondsSql(b, "", bounds), std::string(index_term)})
      if (!part.empty()) w += (w.empty() ? "" : " AND ") + part;
    sql += sql.empty() ? "SELECT e, a, v, " : " UNION ALL SELECT e, a, v, ";
    sql += std::string(b.tx_column) + (b.tx_column[0] == 't' ? "" : " AS tx");
    if (with_ix) sql += b.current() ? ", ix" : ", NULL AS ix";
    sql += std::string(b.added ? ", 1" : ", 0") + " AS added FROM " + b.table;
    if (!w.empty()) sql += " WHERE " + w;
  };
  for (const views::Branch& b : views::Branches(shape)) {
    if (!b.current() || index == AttrIndex::kNone) {
      select(b, "");
      continue;
    }
    const std::string avet = storage::IndexTerm(true), aevt = storage::IndexTerm(false);
    if (index != AttrIndex::kAevt) select(b, avet.c_str());
    if (index != AttrIndex::kAvet) select(b, aevt.c_str());
  }
  return sql;
}

std::string CurrentOfEntities(const std::string& json_param, const std::string& attr_test,
                              const std::string& extra) {
  std::string sql = "SELECT d.e, d.a, d.v" + (extra.empty() ? "" : ", " + extra) +
                    " FROM json_each(" + json_param +
                    ") AS j CROSS JOIN datoms AS d WHERE d.e = j.value";
  if (!attr_test.empty()) sql += " AND d.a" + attr_test;
  return sql;
}

}  // namespace mentat
