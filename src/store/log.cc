#include "store/log.h"

#include <algorithm>

#include "mentat/log.h"
#include "schema/codec.h"
#include "store/store_impl.h"
#include "views/views.h"

namespace mentat {

Result<std::optional<Entid>> ResolveLogBound(storage::Connection* c, const TxPoint& p) {
  if (p.tx) return std::optional<Entid>(*p.tx < ids::kTxStart ? t_to_tx(*p.tx) : *p.tx);
  if (!p.instant_micros) return Status::InvalidArgument("empty time point");
  MENTAT_ASSIGN_OR_RETURN(auto s,
                          c->Cached("SELECT e FROM datoms WHERE a = 4 AND ix IS NOT 0 AND v >= ?1 "
                                    "ORDER BY v, e LIMIT 1"));
  s->BindInt(1, *p.instant_micros);
  MENTAT_ASSIGN_OR_RETURN(bool row, s->Step());
  std::optional<Entid> out;
  if (row) out = s->ColumnInt(0);
  s->Reset();
  return out;
}

Result<std::vector<TxReport>> ReadLog(storage::Connection* c, const Schema& schema, Entid from,
                                      std::optional<Entid> to, std::optional<size_t> limit) {
  std::vector<TxReport> out;
  // Every transaction has its :db/txInstant datom (e = tx = the transaction).
  MENTAT_ASSIGN_OR_RETURN(auto txs,
                          c->Cached("SELECT tx, v FROM datoms WHERE tx >= ?1 AND tx < ?2 AND a = 4 "
                                    "AND e = tx ORDER BY tx"));
  txs->BindInt(1, from);
  txs->BindInt(2, to ? *to : INT64_MAX);
  for (;;) {
    if (limit && out.size() >= *limit) break;
    MENTAT_ASSIGN_OR_RETURN(bool row, txs->Step());
    if (!row) break;
    TxReport r;
    r.tx_id = txs->ColumnInt(0);
    r.tx_instant = txs->ColumnInt(1);
    out.push_back(std::move(r));
  }
  txs->Reset();
  std::string log_sql;
  views::BoundSql bounds;
  bounds.tx = "?1";
  for (const views::Branch& b : views::TxBranches())
    log_sql += std::string(log_sql.empty() ? "" : " UNION ALL ") + "SELECT e, a, v, " +
               b.tx_column + (b.added ? ", 1" : ", 0") + " FROM " + b.table + " WHERE " +
               views::CondsSql(b, "", bounds);
  MENTAT_ASSIGN_OR_RETURN(auto d, c->Cached(log_sql + " ORDER BY 1, 2, 5, 3"));
  for (TxReport& r : out) {
    d->BindInt(1, r.tx_id);
    for (;;) {
      MENTAT_ASSIGN_OR_RETURN(bool row, d->Step());
      if (!row) break;
      Datom x;
      x.e = d->ColumnInt(0);
      x.a = d->ColumnInt(1);
      const Attribute* at = schema.attribute(x.a);
      x.v = at ? schema::ColumnValue(*d, 2, at->type)
               : schema::Decode(schema::Column(*d, 2), ValueType::kLong);
      x.tx = d->ColumnInt(3);
      x.added = d->ColumnInt(4) != 0;
      r.tx_data.push_back(std::move(x));
    }
    d->Reset();
  }
  return out;
}

Result<std::vector<TxReport>> Store::tx_range(std::optional<TxPoint> from,
                                              std::optional<TxPoint> to,
                                              std::optional<size_t> limit) {
  return ImplOf(this)->Read([&](StoreImpl::Conn* c) -> Result<std::vector<TxReport>> {
    // An open start is the first transaction after the bootstrap's.
    Entid lo = ids::kBootstrapTx + 1;
    if (from) {
      MENTAT_ASSIGN_OR_RETURN(auto b, ResolveLogBound(c->db.get(), *from));
      if (!b) return std::vector<TxReport>();
      // An instant before the first transaction starts at it, not at the bootstrap.
      lo = from->tx ? *b : std::max(*b, lo);
    }
    std::optional<Entid> hi;
    if (to) {
      MENTAT_ASSIGN_OR_RETURN(hi, ResolveLogBound(c->db.get(), *to));
    }
    return ReadLog(c->db.get(), *c->schema, lo, hi, limit);
  });
}

edn::Value LogToEdn(const std::vector<TxReport>& txs, const Schema& schema) {
  edn::Vec all;
  all.reserve(txs.size());
  for (const TxReport& r : txs) {
    edn::Vec data;
    data.reserve(r.tx_data.size());
    for (const Datom& d : r.tx_data) {
      edn::Value a = edn::Value::Int(d.a);
      if (const std::string* id = schema.ident(d.a)) a = edn::Value::Keyword(*id);
      data.push_back(edn::Value::Vector(
          {edn::Value::Int(d.e), a, d.v, edn::Value::Int(d.tx), edn::Value::Bool(d.added)}));
    }
    all.push_back(
        edn::Value::Map({{edn::Value::Keyword("t"), edn::Value::Int(tx_to_t(r.tx_id))},
                         {edn::Value::Keyword("tx-id"), edn::Value::Int(r.tx_id)},
                         {edn::Value::Keyword("tx-instant"), edn::Value::Inst(r.tx_instant)},
                         {edn::Value::Keyword("data"), edn::Value::Vector(std::move(data))}}));
  }
  return edn::Value::Vector(std::move(all));
}

}  // namespace mentat
