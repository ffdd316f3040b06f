#include "tx/write.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "storage/format.h"
#include "util/copy_rows.h"

namespace mentat::tx {

using schema::DbVal;

namespace {

// PostgreSQL's documents carry their own search vector (a generated column): a document is
// its fulltext_docs row.
Status FulltextPg(storage::Connection* c, const Change& ch, bool insert) {
  MENTAT_ASSIGN_OR_RETURN(
      auto s, c->Cached(insert ? "INSERT INTO fulltext_docs (e, a, text) VALUES (?1, ?2, ?3)"
                               : "DELETE FROM fulltext_docs WHERE e = ?1 AND a = ?2 AND "
                                 "text = ?3"));
  s->BindInt(1, ch.e);
  s->BindInt(2, ch.a);
  s->BindText(3, ch.v.s);
  return s->Run();
}

Status Fulltext(storage::Connection* c, const Change& ch, bool insert) {
  if (c->is_pg()) return FulltextPg(c, ch, insert);
  if (insert) {
    MENTAT_ASSIGN_OR_RETURN(
        auto s, c->Cached("INSERT INTO fulltext_docs (e, a, text) VALUES (?1, ?2, ?3)"));
    s->BindInt(1, ch.e);
    s->BindInt(2, ch.a);
    s->BindText(3, ch.v.s);
    MENTAT_RETURN_IF_ERROR(s->Run());
    MENTAT_ASSIGN_OR_RETURN(
        auto f, c->Cached("INSERT INTO fulltext (rowid, text) VALUES (last_insert_rowid(), ?1)"));
    f->BindText(1, ch.v.s);
    return f->Run();
  }
  MENTAT_ASSIGN_OR_RETURN(
      auto q, c->Cached("SELECT id FROM fulltext_docs WHERE e = ?1 AND a = ?2 AND text = ?3"));
  q->BindInt(1, ch.e);
  q->BindInt(2, ch.a);
  q->BindText(3, ch.v.s);
  MENTAT_ASSIGN_OR_RETURN(bool row, q->Step());
  if (!row) return Status::OK();
  int64_t id = q->ColumnInt(0);
  MENTAT_ASSIGN_OR_RETURN(
      auto f, c->Cached("INSERT INTO fulltext (fulltext, rowid, text) VALUES ('delete', ?1, ?2)"));
  f->BindInt(1, id);
  f->BindText(2, ch.v.s);
  MENTAT_RETURN_IF_ERROR(f->Run());
  MENTAT_ASSIGN_OR_RETURN(auto d, c->Cached("DELETE FROM fulltext_docs WHERE id = ?1"));
  d->BindInt(1, id);
  return d->Run();
}

// "INSERT INTO attr_stats ... VALUES (?1, ?2, 0, 0), ... ON CONFLICT ... RETURNING" for
// `rows` attributes: each attribute's datom count moved by its delta, returned with the
// count at its last recount.
std::string StatsUpsert(size_t rows) {
  std::string sql = "INSERT INTO attr_stats (a, datoms, distinct_values, distinct_at) VALUES ";
  for (size_t r = 0; r < rows; ++r) {
    if (r) sql += ", ";
    sql += "(?" + std::to_string(2 * r + 1) + ", ?" + std::to_string(2 * r + 2) + ", 0, 0)";
  }
  return sql +
         " ON CONFLICT(a) DO UPDATE SET datoms = attr_stats.datoms + excluded.datoms "
         "RETURNING a, datoms, distinct_at";
}

// Attributes per StatsUpsert statement.
constexpr size_t kStatsRows = 32;

Status UpdateStats(storage::Connection* c, const Schema& schema,
                   const std::map<Entid, int64_t>& delta) {
  std::vector<std::pair<Entid, int64_t>> moved;
  for (const auto& [a, d] : delta)
    if (d != 0) moved.emplace_back(a, d);
  // Recount distinct values and entities and the common values when an attribute's datom
  // count has doubled or halved since its last count: amortized O(1) per datom.
  std::vector<Entid> recount;
  for (size_t i = 0; i < moved.size(); i += kStatsRows) {
    const size_t n = std::min(kStatsRows, moved.size() - i);
    MENTAT_ASSIGN_OR_RETURN(auto s, c->Cached(StatsUpsert(n)));
    for (size_t k = 0; k < n; ++k) {
      s->BindInt(static_cast<int>(2 * k + 1), moved[i + k].first);
      s->BindInt(static_cast<int>(2 * k + 2), moved[i + k].second);
    }
    for (;;) {
      MENTAT_ASSIGN_OR_RETURN(bool row, s->Step());
      if (!row) break;
      const int64_t datoms = s->ColumnInt(1), at = s->ColumnInt(2);
      if (datoms > 2 * at || datoms < at / 2) recount.push_back(s->ColumnInt(0));
    }
    s->Reset();
  }
  for (Entid a : recount) {
    const Attribute* attr = schema.attribute(a);
    MENTAT_RETURN_IF_ERROR(
        storage::RecountAttrStats(c, a, attr && attr->value_indexed(), !attr || attr->many));
  }
  return Status::OK();
}

}  // namespace

Status MoveAttributeIndex(storage::Connection* c, Entid a, bool value_indexed) {
  // Each statement reads the attribute's datoms through the index they leave.
  MENTAT_ASSIGN_OR_RETURN(auto s,
                          c->Cached(value_indexed ? "UPDATE datoms SET ix = 1 WHERE a = ?1 AND "
                                                    "ix IS NOT 1"
                                                  : "UPDATE datoms SET ix = 0 WHERE a = ?1 AND "
                                                    "ix IS NOT 0"));
  s->BindInt(1, a);
  return s->Run();
}

namespace {

// An attribute that became :db/fulltext has its current values indexed (rebuilt from the
// datoms, so documents a store may hold from earlier do not count twice); one that
// stopped being has its documents dropped, so the index only holds fulltext attributes.
Status ReindexFulltext(storage::Connection* c, Entid a, bool now, bool value_indexed) {
  if (c->is_pg()) {
    MENTAT_ASSIGN_OR_RETURN(auto d, c->Cached("DELETE FROM fulltext_docs WHERE a = ?1"));
    d->BindInt(1, a);
    MENTAT_RETURN_IF_ERROR(d->Run());
    if (!now) return Status::OK();
    MENTAT_ASSIGN_OR_RETURN(
        auto s, c->Cached("INSERT INTO fulltext_docs (e, a, text) SELECT e, a, v #>> '{}' FROM "
                          "datoms WHERE a = ?1 AND " +
                          storage::IndexTerm(value_indexed) + " AND jsonb_typeof(v) = 'string'"));
    s->BindInt(1, a);
    return s->Run();
  }
  MENTAT_ASSIGN_OR_RETURN(
      auto f, c->Cached("INSERT INTO fulltext (fulltext, rowid, text) SELECT 'delete', id, text "
                        "FROM fulltext_docs WHERE a = ?1"));
  f->BindInt(1, a);
  MENTAT_RETURN_IF_ERROR(f->Run());
  MENTAT_ASSIGN_OR_RETURN(auto d, c->Cached("DELETE FROM fulltext_docs WHERE a = ?1"));
  d->BindInt(1, a);
  MENTAT_RETURN_IF_ERROR(d->Run());
  if (!now) return Status::OK();
  MENTAT_ASSIGN_OR_RETURN(
      auto s, c->Cached("INSERT INTO fulltext_docs (e, a, text) SELECT e, a, v FROM datoms "
                        "WHERE a = ?1 AND " +
                        storage::IndexTerm(value_indexed) + " AND typeof(v) = 'text'"));
  s->BindInt(1, a);
  MENTAT_RETURN_IF_ERROR(s->Run());
  MENTAT_ASSIGN_OR_RETURN(auto x, c->Cached("INSERT INTO fulltext (rowid, text) SELECT id, text "
                                            "FROM fulltext_docs WHERE a = ?1"));
  x->BindInt(1, a);
  return x->Run();
}

// After a schema change: attributes whose values became indexed (or stopped being) move
// their datoms between datoms_aevt and datoms_avet, and fulltext follows :db/fulltext.
// Datoms asserted by this transaction were written for the new schema already.
Status MoveIndexedAttributes(storage::Connection* c, const Schema& before, const Schema& after) {
  for (const auto& [a, attr] : after.attributes()) {
    const Attribute* old = before.attribute(a);
    bool was = old && old->value_indexed();
    if (old && was != attr.value_indexed())
      MENTAT_RETURN_IF_ERROR(MoveAttributeIndex(c, a, attr.value_indexed()));
    if (old && old->fulltext != attr.fulltext)
      MENTAT_RETURN_IF_ERROR(ReindexFulltext(c, a, attr.fulltext, attr.value_indexed()));
  }
  return Status::OK();
}

// PostgreSQL: a transaction asserting this many datoms writes them by COPY.
constexpr size_t kCopyAtLeast = 64;

// meta's last_tx and last_tx_instant, in one statement.
Status SetLastTx(storage::Connection* c, Entid tx_id, int64_t tx_instant) {
  MENTAT_ASSIGN_OR_RETURN(auto s,
                          c->Cached("INSERT INTO meta (key, value) VALUES ('last_tx', ?1), "
                                    "('last_tx_instant', ?2) "
                                    "ON CONFLICT(key) DO UPDATE SET value = excluded.value"));
  s->BindInt(1, tx_id);
  s->BindInt(2, tx_instant);
  return s->RunLater();
}

// Datoms per multi-row INSERT (5 parameters each, far below SQLite's limit).
constexpr size_t kInsertRows = 32;

// "INSERT INTO datoms ... VALUES (?1, ..., ?5), ..." for `rows` datoms. On SQLite, OR FAIL:
// a statement of several rows that may abort needs a statement journal (a temporary file
// that holds every page it changes, to undo its own rows), which doubles the cost of a
// bulk insert. A failed row fails the transaction, which undoes all of them anyway.
std::string MultiRowInsert(const storage::Connection* c, size_t rows) {
  std::string sql = c->is_pg() ? "INSERT INTO datoms (e, a, v, tx, ix) VALUES "
                               : "INSERT OR FAIL INTO datoms (e, a, v, tx, ix) VALUES ";
  for (size_t r = 0; r < rows; ++r) {
    sql += r ? ", (" : "(";
    for (size_t k = 1; k <= 5; ++k) sql += (k > 1 ? ", ?" : "?") + std::to_string(5 * r + k);
    sql += ")";
  }
  return sql;
}

// Binds datom `ch` to the parameters after `base` of a MultiRowInsert statement.
void BindDatom(storage::Statement& s, int base, const Change& ch, const Schema& after,
               Entid tx_id) {
  const Attribute* attr = after.attribute(ch.a);
  s.BindInt(base + 1, ch.e);
  s.BindInt(base + 2, ch.a);
  schema::Bind(s, base + 3, ch.v);
  s.BindInt(base + 4, tx_id);
  s.BindInt(base + 5, attr && attr->value_indexed() ? 1 : 0);
}

}  // namespace

Status Write(storage::Connection* c, const Schema& before, const Schema& after,
             const Changes& changes, Entid tx_id, int64_t tx_instant, bool schema_changed,
             const Partitions& parts) {
  std::map<Entid, int64_t> delta;
  {
    MENTAT_ASSIGN_OR_RETURN(auto del,
                            c->Cached("DELETE FROM datoms WHERE e = ?1 AND a = ?2 AND v = ?3"));
    MENTAT_ASSIGN_OR_RETURN(auto hist,
                            c->Cached("INSERT OR REPLACE INTO history (e, a, v, tx, rtx) "
                                      "VALUES (?1, ?2, ?3, ?4, ?5)"));
    for (const auto& ch : changes.retracted) {
      del->BindInt(1, ch.e);
      del->BindInt(2, ch.a);
      schema::Bind(*del, 3, ch.v);
      MENTAT_RETURN_IF_ERROR(del->RunLater());
      del->Reset();
      delta[ch.a]--;
      // History keeps the interval unless either the old or the new schema says
      // :db/noHistory.
      const Attribute* a_old = before.attribute(ch.a);
      const Attribute* a_new = after.attribute(ch.a);
      bool no_history = (a_old && a_old->no_history) || (a_new && a_new->no_history);
      if (!no_history) {
        hist->BindInt(1, ch.e);
        hist->BindInt(2, ch.a);
        schema::Bind(*hist, 3, ch.v);
        hist->BindInt(4, ch.tx);
        hist->BindInt(5, tx_id);
        MENTAT_RETURN_IF_ERROR(hist->RunLater());
        hist->Reset();
      }
      if (a_old && a_old->fulltext) MENTAT_RETURN_IF_ERROR(Fulltext(c, ch, false));
    }
  }
  if (c->is_pg() && changes.asserted.size() >= kCopyAtLeast) {
    // Many datoms: one COPY instead of a statement each (a round trip to the server).
    CopyRows rows;
    for (const auto& ch : changes.asserted) {
      const Attribute* attr = after.attribute(ch.a);
      rows.Int(ch.e);
      rows.Int(ch.a);
      rows.Text(schema::JsonOf(ch.v));
      rows.Int(tx_id);
      rows.Int(attr && attr->value_indexed() ? 1 : 0);
      rows.EndRow();
      delta[ch.a]++;
      if (attr && attr->fulltext) MENTAT_RETURN_IF_ERROR(Fulltext(c, ch, true));
    }
    MENTAT_RETURN_IF_ERROR(
        c->CopyIn("COPY datoms (e, a, v, tx, ix) FROM STDIN", rows.data()).status());
  } else {
    // Many datoms go kInsertRows to a statement: one statement's setup and end (most of
    // a single-row INSERT's cost besides the b-tree insert) for each group.
    const auto& asserted = changes.asserted;
    size_t i = 0;
    if (asserted.size() >= kInsertRows) {
      MENTAT_ASSIGN_OR_RETURN(auto many, c->Cached(MultiRowInsert(c, kInsertRows)));
      for (; i + kInsertRows <= asserted.size(); i += kInsertRows) {
        for (size_t k = 0; k < kInsertRows; ++k)
          BindDatom(*many, static_cast<int>(5 * k), asserted[i + k], after, tx_id);
        MENTAT_RETURN_IF_ERROR(many->RunLater());
        many->Reset();
      }
    }
    if (i < asserted.size() && c->is_pg()) {
      // PostgreSQL: the rest as one statement of their number (a round trip each
      // otherwise).
      const size_t rest = asserted.size() - i;
      MENTAT_ASSIGN_OR_RETURN(auto ins, c->Cached(MultiRowInsert(c, rest)));
      for (size_t k = 0; k < rest; ++k)
        BindDatom(*ins, static_cast<int>(5 * k), asserted[i + k], after, tx_id);
      MENTAT_RETURN_IF_ERROR(ins->RunLater());
    } else if (i < asserted.size()) {
      MENTAT_ASSIGN_OR_RETURN(auto ins, c->Cached(MultiRowInsert(c, 1)));
      for (size_t k = i; k < asserted.size(); ++k) {
        BindDatom(*ins, 0, asserted[k], after, tx_id);
        MENTAT_RETURN_IF_ERROR(ins->RunLater());
        ins->Reset();
      }
    }
    for (const auto& ch : asserted) {
      delta[ch.a]++;
      const Attribute* attr = after.attribute(ch.a);
      if (attr && attr->fulltext) MENTAT_RETURN_IF_ERROR(Fulltext(c, ch, true));
    }
  }
  if (schema_changed) MENTAT_RETURN_IF_ERROR(MoveIndexedAttributes(c, before, after));
  MENTAT_RETURN_IF_ERROR(UpdateStats(c, after, delta));
  MENTAT_RETURN_IF_ERROR(parts.Write(c));
  MENTAT_RETURN_IF_ERROR(SetLastTx(c, tx_id, tx_instant));
  if (schema_changed) {
    MENTAT_RETURN_IF_ERROR(c->Exec("UPDATE meta SET value = value + 1 WHERE key = 'schema_gen'"));
  }
  return Status::OK();
}

}  // namespace mentat::tx
