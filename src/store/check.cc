// Store::check: SQLite's integrity check, then the invariants mentat's own code keeps
// (doc/format.md; doc/reliability.md "Checking a store"). Each check is one or a few
// statements over one snapshot; problems are collected, never fatal, and each kind is
// reported with its count and the first few examples.
#include <algorithm>
#include <map>
#include <set>

#include "storage/format.h"
#include "store/store_impl.h"
#include "util/utf8.h"

namespace mentat {

namespace {

constexpr int kExamples = 5;  // examples shown per kind of problem

class Checker {
 public:
  Checker(storage::Connection* c, const Schema& schema, CheckReport* out)
      : c_(c), schema_(schema), out_(out) {}

  Status Run() {
    // A damaged page can make any statement fail: that is one more problem, and the other
    // checks still run. Other errors (I/O) end the check.
    struct Step {
      const char* name;
      Status (Checker::*run)();
    };
    for (const Step& step :
         {Step{"sqlite", &Checker::Sqlite}, Step{"values", &Checker::Values},
          Step{"partitions", &Checker::Partitions}, Step{"history", &Checker::History},
          Step{"constraints", &Checker::Constraints}, Step{"statistics", &Checker::Statistics}}) {
      Status st = (this->*step.run)();
      if (st.code() == Code::kCorrupt) {
        Problem("damaged", std::string("the ") + step.name + " checks stopped: " + st.message());
      } else if (!st.ok()) {
        return st;
      }
    }
    for (const auto& [kind, n] : counts_)
      if (n > kExamples)
        out_->problems.push_back(kind + ": " + std::to_string(n - kExamples) + " more");
    return Status::OK();
  }

 private:
  // Records a problem of `kind`; only the first few of each kind are kept verbatim.
  void Problem(const std::string& kind, const std::string& what) {
    if (++counts_[kind] <= kExamples) out_->problems.push_back(kind + ": " + what);
  }
  void Checked(const std::string& what, int64_t n) { out_->checked.emplace_back(what, n); }

  std::string Name(Entid a) const {
    const std::string* id = schema_.ident(a);
    return id ? ":" + *id : "attribute " + std::to_string(a);
  }

  // Runs `sql`, calling `row` for each result row.
  template <typename Fn>
  Status Each(const std::string& sql, Fn&& row) {
    MENTAT_ASSIGN_OR_RETURN(storage::Statement st, c_->Prepare(sql));
    for (;;) {
      MENTAT_ASSIGN_OR_RETURN(bool more, st.Step());
      if (!more) return Status::OK();
      row(st);
    }
  }

  Status Sqlite() {
    // PostgreSQL checks its own pages (data checksums, amcheck): not from here.
    if (c_->is_pg()) return Status::OK();
    MENTAT_RETURN_IF_ERROR(Each("PRAGMA integrity_check(100)", [&](storage::Statement& st) {
      std::string msg(st.ColumnText(0));
      if (msg != "ok") Problem("sqlite integrity_check", msg);
    }));
    Checked("sqlite integrity_check", 1);
    return Status::OK();
  }

  // SQLite's storage class for values of `type` (doc/format.md "Value encoding").
  static const char* StorageClass(ValueType type) {
    switch (type) {
      case ValueType::kRef:
      case ValueType::kLong:
      case ValueType::kInstant:
      case ValueType::kBoolean:
        return "integer";
      case ValueType::kDouble:
      case ValueType::kFloat:
        return "real";
      case ValueType::kString:
      case ValueType::kKeyword:
      case ValueType::kUri:
      case ValueType::kSymbol:
        return "text";
      case ValueType::kUuid:
      case ValueType::kBytes:
      case ValueType::kBigInt:
      case ValueType::kBigDec:
      case ValueType::kTuple:
        return "blob";
    }
    return "";
  }

  // What a value of `type` must also be, beyond its storage class ("" for nothing).
  static std::string Finer(ValueType type, bool pg) {
    // PostgreSQL's value column is jsonb: a string's text is v #>> '{}', a blob's hex
    // digits v ->> 'b' (doc/postgres.md "Values").
    if (pg) {
      switch (type) {
        case ValueType::kBoolean:
          return "v IN (0, 1)";
        case ValueType::kKeyword:
          return "left(v #>> '{}', 1) = ':' AND length(v #>> '{}') > 1";
        case ValueType::kUuid:
          return "length(v ->> 'b') = 32";
        case ValueType::kBigInt:
        case ValueType::kBigDec:
          return "(v ->> 'b' = '80' OR (length(v ->> 'b') >= 22 AND left(v ->> 'b', 2) IN "
                 "('81', '7f')))";
        default:
          return "";
      }
    }
    switch (type) {
      case ValueType::kBoolean:
        return "v IN (0, 1)";
      case ValueType::kKeyword:
        return "substr(v, 1, 1) = ':' AND length(v) > 1";
      case ValueType::kUuid:
        return "length(v) = 16";
      case ValueType::kBigInt:
      case ValueType::kBigDec:  // util/decimal.h keys
        return "(v = x'80' OR (length(v) >= 11 AND substr(v, 1, 1) IN (x'81', x'7f')))";
      default:
        return "";
    }
  }

  // One pass over each table: every datom's attribute exists, its value has the storage
  // class of the attribute's type, and (current datoms) it is in the attribute index the
  // attribute's flags name: ix is 1 for value-indexed attributes, else 0, never NULL, so
  // each datom is in exactly one of datoms_avet and datoms_aevt.
  Status Values() {
    for (const char* table : {"datoms", "history"}) {
      const bool current = table == std::string("datoms");
      int64_t total = 0;
      std::string sql = std::string("SELECT a, ") + (current ? "ix" : "NULL") +
                        ", typeof(v), count(*) FROM " + table + " GROUP BY 1, 2, 3";
      MENTAT_RETURN_IF_ERROR(Each(sql, [&](storage::Statement& st) {
        Entid a = st.ColumnInt(0);
        std::string cls(st.ColumnText(2));
        int64_t n = st.ColumnInt(3);
        total += n;
        if (current) current_[a] += n;
        const Attribute* attr = schema_.attribute(a);
        if (!attr) {
          Problem("unknown attribute", std::to_string(n) + " " + table + " rows of entity " +
                                           std::to_string(a) + ", which is not an attribute");
          return;
        }
        if (cls != StorageClass(attr->type))
          Problem("value of the wrong type",
                  std::to_string(n) + " " + table + " values of " + Name(a) + " are " + cls +
                      ", not " + ":" + std::string(ValueTypeIdent(attr->type)) + " values");
        if (current) {
          int want = attr->value_indexed() ? 1 : 0;
          bool null_ix = st.ColumnType(1) == SQLITE_NULL;
          if (null_ix || st.ColumnInt(1) != want)
            Problem("datom in the wrong attribute index",
                    std::to_string(n) + " datoms of " + Name(a) +
                        " have ix = " + (null_ix ? "NULL" : std::to_string(st.ColumnInt(1))) +
                        ", not " + std::to_string(want) + " (" +
                        (want ? "the value" : "the entity") + " index)");
        }
      }));
      Checked(table, total);
    }
    // Finer checks per attribute, through its index: booleans 0 or 1, keywords with their
    // colon, 16-byte uuids, strings and keywords UTF-8.
    for (const auto& [a, attr] : schema_.attributes()) {
      const std::string finer = Finer(attr.type, c_->is_pg());
      const bool text = attr.type == ValueType::kString || attr.type == ValueType::kKeyword;
      if (finer.empty() && !text) continue;
      for (const char* table : {"datoms", "history"}) {
        std::string where =
            std::string(" FROM ") + table + " WHERE a = " + std::to_string(a) +
            (table == std::string("datoms") ? " AND " + storage::IndexTerm(attr.value_indexed())
                                            : "") +
            " AND typeof(v) = '" + StorageClass(attr.type) + "'";
        if (!finer.empty()) {
          MENTAT_ASSIGN_OR_RETURN(
              int64_t bad, c_->QueryInt("SELECT count(*)" + where + " AND NOT (" + finer + ")", 0));
          if (bad > 0)
            Problem("value of the wrong type",
                    std::to_string(bad) + " " + table + " values of " + Name(a) + " are not " +
                        ":" + std::string(ValueTypeIdent(attr.type)) + " values");
        }
        if (text) {
          int64_t invalid = 0;
          MENTAT_RETURN_IF_ERROR(Each("SELECT v" + where, [&](storage::Statement& st) {
            if (utf8::FirstInvalid(st.ColumnText(0)) != std::string_view::npos) ++invalid;
          }));
          if (invalid > 0)
            Problem("string that is not UTF-8",
                    std::to_string(invalid) + " " + table + " values of " + Name(a));
        }
      }
    }
    Checked("attributes", static_cast<int64_t>(schema_.attributes().size()));
    return Status::OK();
  }

  // Partition marks lie above every id in use: entities, refs and transactions.
  Status Partitions() {
    struct Part {
      Entid id, start, end, next;
    };
    std::vector<Part> parts;
    MENTAT_RETURN_IF_ERROR(Each(
        "SELECT part, start, \"end\", next FROM parts ORDER BY start", [&](storage::Statement& st) {
          parts.push_back({st.ColumnInt(0), st.ColumnInt(1), st.ColumnInt(2), st.ColumnInt(3)});
        }));
    if (parts.size() != 3)
      Problem("partitions", std::to_string(parts.size()) + " rows in parts, not 3");
    for (const Part& p : parts) {
      if (p.next < p.start || p.next > p.end)
        Problem("partitions", "partition " + std::to_string(p.id) + " has its next id " +
                                  std::to_string(p.next) + " outside [" + std::to_string(p.start) +
                                  ", " + std::to_string(p.end) + ")");
      std::string range =
          " BETWEEN " + std::to_string(p.start) + " AND " + std::to_string(p.end - 1);
      std::string sql = "SELECT max(x) FROM (SELECT max(e) AS x FROM datoms WHERE e" + range +
                        " UNION ALL SELECT max(e) FROM history WHERE e" + range +
                        " UNION ALL SELECT max(tx) FROM datoms WHERE tx" + range +
                        " UNION ALL SELECT max(tx) FROM history WHERE tx" + range +
                        " UNION ALL SELECT max(rtx) FROM history WHERE rtx" + range;
      // (A ref's value is an integer; PostgreSQL's jsonb column says so by mentat_int.)
      const std::string vmax = c_->is_pg() ? "max(mentat_int(v))" : "max(v)";
      for (const auto& [a, attr] : schema_.attributes())
        if (attr.type == ValueType::kRef)
          sql += " UNION ALL SELECT " + vmax + " FROM datoms WHERE a = " + std::to_string(a) +
                 " AND ix IS NOT 0 AND v" + range + " UNION ALL SELECT " + vmax +
                 " FROM history WHERE a = " + std::to_string(a) + " AND v" + range;
      MENTAT_ASSIGN_OR_RETURN(int64_t top, c_->QueryInt(sql + ")", -1));
      if (top >= p.next)
        Problem("partition mark", "id " + std::to_string(top) + " is in use in partition " +
                                      std::to_string(p.id) + ", whose next id is " +
                                      std::to_string(p.next));
    }
    MENTAT_ASSIGN_OR_RETURN(
        int64_t negative,
        c_->QueryInt("SELECT (SELECT count(*) FROM datoms WHERE e < 0) + (SELECT count(*) FROM "
                     "history WHERE e < 0)",
                     0));
    if (negative > 0)
      Problem("partition mark", std::to_string(negative) + " datoms with a negative entity id");
    // Transactions: in the tx partition, up to meta's last_tx.
    MENTAT_ASSIGN_OR_RETURN(int64_t last_tx,
                            c_->QueryInt("SELECT value FROM meta WHERE key = 'last_tx'", -1));
    MENTAT_ASSIGN_OR_RETURN(
        int64_t top_tx,
        c_->QueryInt("SELECT max(x) FROM (SELECT max(tx) AS x FROM datoms UNION ALL SELECT "
                     "max(tx) FROM history UNION ALL SELECT max(rtx) FROM history)",
                     -1));
    if (top_tx != last_tx)
      Problem("transactions", "meta last_tx is " + std::to_string(last_tx) +
                                  " but the last transaction in use is " + std::to_string(top_tx));
    MENTAT_ASSIGN_OR_RETURN(int64_t outside,
                            c_->QueryInt("SELECT (SELECT count(*) FROM datoms WHERE tx < " +
                                             std::to_string(ids::kTxStart) +
                                             ") + (SELECT count(*) FROM history WHERE tx < " +
                                             std::to_string(ids::kTxStart) + ")",
                                         0));
    if (outside > 0)
      Problem("transactions",
              std::to_string(outside) + " datoms name a transaction outside :db.part/tx");
    Checked("partitions", static_cast<int64_t>(parts.size()));
    return Status::OK();
  }

  // History intervals are ordered (tx < rtx), do not overlap each other, and end before
  // the same datom is current again.
  Status History() {
    MENTAT_ASSIGN_OR_RETURN(int64_t empty,
                            c_->QueryInt("SELECT count(*) FROM history WHERE NOT (tx < rtx)", 0));
    if (empty > 0)
      Problem("history interval", std::to_string(empty) + " history rows do not have tx < rtx");
    MENTAT_ASSIGN_OR_RETURN(
        int64_t overlapping,
        c_->QueryInt("SELECT count(*) FROM (SELECT tx, lag(rtx) OVER (PARTITION BY e, a, v "
                     "ORDER BY tx) AS prev FROM history) WHERE prev > tx",
                     0));
    if (overlapping > 0)
      Problem("history interval",
              std::to_string(overlapping) +
                  " history intervals overlap an earlier one of the same datom");
    MENTAT_RETURN_IF_ERROR(
        Each("SELECT d.e, d.a, d.tx, h.rtx FROM datoms d JOIN history h ON h.e = d.e AND h.a = d.a "
             "AND h.v = d.v WHERE h.rtx > d.tx LIMIT 100",
             [&](storage::Statement& st) {
               Problem("current and history overlap",
                       "[" + std::to_string(st.ColumnInt(0)) + " " + Name(st.ColumnInt(1)) +
                           " ...] is current from tx " + std::to_string(st.ColumnInt(2)) +
                           " but its history interval runs to " + std::to_string(st.ColumnInt(3)));
             }));
    return Status::OK();
  }

  // Cardinality one: one current value per entity; uniqueness: one entity per value.
  Status Constraints() {
    for (const auto& [a, attr] : schema_.attributes()) {
      if (!current_.count(a)) continue;
      std::string ix = storage::IndexTerm(attr.value_indexed());
      if (!attr.many) {
        MENTAT_ASSIGN_OR_RETURN(
            int64_t n,
            c_->QueryInt("SELECT count(*) FROM (SELECT e FROM datoms WHERE a = " +
                             std::to_string(a) + " AND " + ix + " GROUP BY e HAVING count(*) > 1)",
                         0));
        if (n > 0)
          Problem("cardinality", std::to_string(n) + " entities hold more than one value of " +
                                     Name(a) + " (:db.cardinality/one)");
      }
      if (attr.unique != Unique::kNone) {
        MENTAT_ASSIGN_OR_RETURN(
            int64_t n,
            c_->QueryInt("SELECT count(*) FROM (SELECT v FROM datoms WHERE a = " +
                             std::to_string(a) + " AND " + ix + " GROUP BY v HAVING count(*) > 1)",
                         0));
        if (n > 0)
          Problem("uniqueness", std::to_string(n) + " values of " + Name(a) +
                                    " are held by more than one entity (:db/unique)");
      }
    }
    return Status::OK();
  }

  // attr_stats counts every attribute's current datoms exactly; fulltext rows follow the
  // datoms of fulltext attributes; the meta rows are there.
  Status Statistics() {
    std::map<Entid, int64_t> stats;
    MENTAT_RETURN_IF_ERROR(
        Each("SELECT a, datoms, distinct_values FROM attr_stats", [&](storage::Statement& st) {
          stats[st.ColumnInt(0)] = st.ColumnInt(1);
          if (st.ColumnInt(2) < 0 || st.ColumnInt(2) > st.ColumnInt(1))
            Problem("statistics", Name(st.ColumnInt(0)) + " has " +
                                      std::to_string(st.ColumnInt(2)) + " distinct values of " +
                                      std::to_string(st.ColumnInt(1)));
        }));
    std::set<Entid> attrs;
    for (const auto& [a, n] : current_) attrs.insert(a);
    for (const auto& [a, n] : stats) attrs.insert(a);
    for (Entid a : attrs) {
      int64_t have = current_.count(a) ? current_[a] : 0;
      int64_t said = stats.count(a) ? stats[a] : 0;
      if (have != said)
        Problem("statistics", "attr_stats counts " + std::to_string(said) + " datoms of " +
                                  Name(a) + ", the store holds " + std::to_string(have));
    }
    MENTAT_ASSIGN_OR_RETURN(
        int64_t orphans,
        c_->QueryInt("SELECT count(*) FROM fulltext_docs f WHERE NOT EXISTS (SELECT 1 FROM "
                     "datoms d WHERE d.e = f.e AND d.a = f.a AND d.v = f.text)",
                     0));
    if (orphans > 0)
      Problem("fulltext", std::to_string(orphans) + " fulltext rows have no current datom");
    for (const auto& [a, attr] : schema_.attributes()) {
      if (!attr.fulltext) continue;
      MENTAT_ASSIGN_OR_RETURN(
          int64_t missing,
          c_->QueryInt("SELECT count(*) FROM datoms d WHERE a = " + std::to_string(a) + " AND " +
                           storage::IndexTerm(attr.value_indexed()) +
                           " AND NOT EXISTS (SELECT 1 FROM fulltext_docs f WHERE f.e = d.e AND "
                           "f.a = d.a AND f.text = d.v)",
                       0));
      if (missing > 0)
        Problem("fulltext", std::to_string(missing) + " datoms of " + Name(a) +
                                " are missing from the fulltext index");
    }
    // (PostgreSQL's meta keeps the format version as a row too: format_version.)
    for (const char* key :
         {c_->is_pg() ? "format_version" : "format", "last_tx", "last_tx_instant", "schema_gen"}) {
      MENTAT_ASSIGN_OR_RETURN(
          int64_t n,
          c_->QueryInt(std::string("SELECT count(*) FROM meta WHERE key = '") + key + "'", 0));
      if (n != 1) Problem("meta", std::string("no meta row '") + key + "'");
    }
    Checked("statistics", static_cast<int64_t>(attrs.size()));
    return Status::OK();
  }

  storage::Connection* c_;
  const Schema& schema_;
  CheckReport* out_;
  std::map<std::string, int> counts_;
  std::map<Entid, int64_t> current_;  // current datoms per attribute
};

}  // namespace

edn::Value CheckReport::ToEdn() const {
  edn::MapEntries checked_map;
  for (const auto& [what, n] : checked)
    checked_map.emplace_back(edn::Value::String(what), edn::Value::Int(n));
  edn::Vec list;
  for (const auto& p : problems) list.push_back(edn::Value::String(p));
  return edn::Value::Map({{edn::Value::Keyword("ok"), edn::Value::Bool(ok())},
                          {edn::Value::Keyword("checked"), edn::Value::Map(std::move(checked_map))},
                          {edn::Value::Keyword("problems"), edn::Value::Vector(std::move(list))}});
}

Result<CheckReport> Store::check() {
  return ImplOf(this)->Read([&](StoreImpl::Conn* c) -> Result<CheckReport> {
    CheckReport report;
    Checker checker(c->db.get(), *c->schema, &report);
    MENTAT_RETURN_IF_ERROR(checker.Run());
    return report;
  });
}

}  // namespace mentat
