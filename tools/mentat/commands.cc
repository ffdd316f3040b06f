// The data commands: .transact, .query, .explain, .pull, .entity, .datoms, .schema,
// and .stats.
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <unordered_set>

#include "input.h"
#include "mentat/log.h"
#include "session.h"

namespace mentat::cli {

namespace {

// Splits "FORM REST" where FORM is one EDN form: returns the form's text and the rest.
// Read with Clojure's reader forms so that a query's regex literal #"re" ends where it
// should; the command reads FORM again with its own options.
Status SplitForm(const std::string& text, std::string* form, std::string* rest) {
  edn::ReadOptions options;
  options.script_syntax = true;
  edn::Reader reader(text, options);
  auto v = reader.Next();
  if (!v.ok()) return v.status();
  if (!v->has_value()) return Status::InvalidArgument("expected an EDN form");
  *form = text.substr(0, reader.offset());
  *rest = text.substr(reader.offset());
  size_t b = rest->find_first_not_of(" \t\r\n,");
  *rest = b == std::string::npos ? std::string() : rest->substr(b);
  return Status::OK();
}

edn::Value Kw(const char* s) { return edn::Value::Keyword(s); }

edn::Value UniqueKw(Unique u) {
  if (u == Unique::kNone) return edn::Value();
  return Kw(u == Unique::kIdentity ? "db.unique/identity" : "db.unique/value");
}

edn::Value AttributeEdn(const Attribute& a) {
  edn::MapEntries m;
  m.emplace_back(Kw("db/ident"), edn::Value::Keyword(a.ident));
  m.emplace_back(Kw("db/id"), edn::Value::Int(a.id));
  m.emplace_back(Kw("db/valueType"), edn::Value::Keyword(ValueTypeIdent(a.type)));
  m.emplace_back(Kw("db/cardinality"), Kw(a.many ? "db.cardinality/many" : "db.cardinality/one"));
  if (a.unique != Unique::kNone) m.emplace_back(Kw("db/unique"), UniqueKw(a.unique));
  if (a.index) m.emplace_back(Kw("db/index"), edn::Value::Bool(true));
  if (a.component) m.emplace_back(Kw("db/isComponent"), edn::Value::Bool(true));
  if (a.no_history) m.emplace_back(Kw("db/noHistory"), edn::Value::Bool(true));
  if (a.fulltext) m.emplace_back(Kw("db/fulltext"), edn::Value::Bool(true));
  if (!a.doc.empty()) m.emplace_back(Kw("db/doc"), edn::Value::String(a.doc));
  return edn::Value::Map(std::move(m));
}

bool IsBootstrapIdent(const std::string& ident) {
  return ident.size() > 2 && ident.rfind("db", 0) == 0 && (ident[2] == '/' || ident[2] == '.');
}

std::string HumanBytes(uint64_t n) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

uint64_t SizeOf(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

}  // namespace

namespace {

// The report with each ref value that names an entity with an ident printed as that
// ident (EDN and JSON formats).
edn::Value ReportWithRefIdents(const TxReport& r, const Schema& schema) {
  edn::Value report = r.ToEdn(&schema);
  edn::MapEntries entries;
  for (const auto& [k, v] : report.entries()) {
    if (!k.is_keyword("tx-data")) {
      entries.emplace_back(k, v);
      continue;
    }
    edn::Vec data;
    for (const auto& d : r.tx_data) {
      const std::string* attr = schema.ident(d.a);
      const Attribute* a = schema.attribute(d.a);
      edn::Value value = d.v;
      if (a && a->type == ValueType::kRef && d.v.is_int()) {
        const std::string* ident = schema.ident(d.v.as_int());
        if (ident) value = edn::Value::Keyword(*ident);
      }
      data.push_back(edn::Value::Vector(
          {edn::Value::Int(d.e), attr ? edn::Value::Keyword(*attr) : edn::Value::Int(d.a),
           std::move(value), edn::Value::Int(d.tx), edn::Value::Bool(d.added)}));
    }
    entries.emplace_back(k, edn::Value::Vector(std::move(data)));
  }
  return edn::Value::Map(std::move(entries));
}

}  // namespace

// .t: in table format (and markdown, line) a summary: the transaction, its tempids and
// the datoms added and retracted per attribute; in EDN, JSON and the others the whole
// report, refs with their idents.
void Session::PrintTxReport(const TxReport& r) {
  auto schema = store_->schema();
  if (style_.format != Format::kTable && style_.format != Format::kMarkdown &&
      style_.format != Format::kLine) {
    PrintValue(out_, style_, ReportWithRefIdents(r, *schema));
    return;
  }
  std::map<std::string, std::pair<int64_t, int64_t>> per_attr;
  int64_t added = 0, retracted = 0;
  for (const auto& d : r.tx_data) {
    if (d.e == r.tx_id && d.a == ids::kTxInstant) continue;  // shown on the first line
    const std::string* ident = schema->ident(d.a);
    auto& counts = per_attr[ident ? ":" + *ident : std::to_string(d.a)];
    (d.added ? counts.first : counts.second)++;
    (d.added ? added : retracted)++;
  }
  out_ << "tx " << r.tx_id << " (t " << tx_to_t(r.tx_id) << ") at "
       << edn::FormatInstant(r.tx_instant) << ": " << added << " datom" << (added == 1 ? "" : "s")
       << " added, " << retracted << " retracted\n";
  if (!r.tempids.empty()) {
    out_ << "tempids:";
    size_t shown = 0;
    for (const auto& [name, id] : r.tempids) {
      if (shown++ == 10) {
        out_ << " ... and " << (r.tempids.size() - 10) << " more";
        break;
      }
      out_ << " " << edn::Print(edn::Value::String(name)) << " " << id;
    }
    out_ << "\n";
  }
  std::vector<std::vector<edn::Value>> rows;
  for (const auto& [attr, counts] : per_attr)
    rows.push_back(
        {edn::Value::String(attr), edn::Value::Int(counts.first), edn::Value::Int(counts.second)});
  if (!rows.empty()) PrintRows(out_, style_, {"attribute", "added", "retracted"}, rows, {});
}

Status Session::Transact(const std::string& rest) {
  MENTAT_RETURN_IF_ERROR(RequireStore());
  if (rest.empty()) return Status::InvalidArgument("usage: .transact EDN");
  MENTAT_ASSIGN_OR_RETURN(TxReport r, store_->transact(rest));
  PrintTxReport(r);
  return Status::OK();
}

Status Session::Query(const std::string& rest, bool explain) {
  MENTAT_RETURN_IF_ERROR(RequireStore());
  if (rest.empty())
    return Status::InvalidArgument(std::string("usage: ") + (explain ? ".explain" : ".query") +
                                   " QUERY [OPTIONS_JSON]");
  std::string form, json;
  MENTAT_RETURN_IF_ERROR(SplitForm(rest, &form, &json));
  QueryOptions options;
  if (!json.empty()) {
    MENTAT_ASSIGN_OR_RETURN(options, options_from_json(form, json));
  }
  if (explain) {
    MENTAT_ASSIGN_OR_RETURN(std::string text, store_->q_explain(form, options));
    out_ << text;
    if (!text.empty() && text.back() != '\n') out_ << "\n";
    return Status::OK();
  }
  MENTAT_ASSIGN_OR_RETURN(QueryResult r, store_->q(form, options));
  PrintQueryResult(out_, style_, r);
  return Status::OK();
}

Status Session::Pull(const std::string& rest) {
  MENTAT_RETURN_IF_ERROR(RequireStore());
  std::string pattern, eid_text;
  if (rest.empty()) return Status::InvalidArgument("usage: .pull PATTERN EID");
  MENTAT_RETURN_IF_ERROR(SplitForm(rest, &pattern, &eid_text));
  if (eid_text.empty()) return Status::InvalidArgument("usage: .pull PATTERN EID");
  auto eid = edn::Read(eid_text);
  if (!eid.ok())
    return Status::InvalidArgument("bad EID '" + eid_text + "': " + eid.status().message());
  MENTAT_ASSIGN_OR_RETURN(edn::Value v, store_->pull(pattern, *eid));
  PrintMap(out_, style_, v);
  return Status::OK();
}

Status Session::Entity(const std::string& rest) {
  MENTAT_RETURN_IF_ERROR(RequireStore());
  if (rest.empty()) return Status::InvalidArgument("usage: .entity EID");
  MENTAT_ASSIGN_OR_RETURN(edn::Value eid, edn::Read(rest));
  MENTAT_ASSIGN_OR_RETURN(mentat::Entity entity, store_->entity(eid));
  MENTAT_ASSIGN_OR_RETURN(edn::Value map, entity.touch());
  PrintMap(out_, style_, map);
  return Status::OK();
}

Status Session::Datoms(const std::string& rest) {
  MENTAT_RETURN_IF_ERROR(RequireStore());
  MENTAT_ASSIGN_OR_RETURN(edn::Vec parts, edn::ReadAll(rest));
  if (parts.empty() || !parts[0].is_keyword())
    return Status::InvalidArgument("usage: .datoms :eavt|:aevt|:avet|:vaet [COMPONENTS...]");
  std::vector<edn::Value> comps(parts.begin() + 1, parts.end());
  MENTAT_ASSIGN_OR_RETURN(auto datoms, store_->datoms(parts[0].str(), comps));
  auto schema = store_->schema();
  std::vector<std::vector<edn::Value>> rows;
  edn::Vec all;
  for (const auto& d : datoms) {
    edn::Value a = edn::Value::Int(d.a);
    if (const std::string* id = schema->ident(d.a)) a = edn::Value::Keyword(*id);
    std::vector<edn::Value> row = {edn::Value::Int(d.e), a, d.v, edn::Value::Int(d.tx),
                                   edn::Value::Bool(d.added)};
    all.push_back(edn::Value::Vector(row));
    rows.push_back(std::move(row));
  }
  PrintRows(out_, style_, {"e", "a", "v", "tx", "added"}, rows, edn::Value::Vector(std::move(all)));
  return Status::OK();
}

Status Session::Log(const std::string& rest) {
  MENTAT_RETURN_IF_ERROR(RequireStore());
  MENTAT_ASSIGN_OR_RETURN(edn::Vec parts, edn::ReadAll(rest));
  if (parts.size() > 2) return Status::InvalidArgument("usage: .log [FROM [TO]]");
  std::optional<TxPoint> bounds[2];
  for (size_t i = 0; i < parts.size(); ++i) {
    const edn::Value& p = parts[i];
    if (p.is_nil()) continue;
    if (p.is_int() && p.as_int() >= 0) {
      bounds[i] = TxPoint::Tx(p.as_int());
    } else if (p.is_inst()) {
      bounds[i] = TxPoint::Instant(p.as_inst_micros());
    } else {
      return Status::InvalidArgument("expected a tx id, a t, an #inst or nil, got " +
                                     edn::Print(p));
    }
  }
  MENTAT_ASSIGN_OR_RETURN(auto txs, store_->tx_range(bounds[0], bounds[1]));
  auto schema = store_->schema();
  edn::Value log = LogToEdn(txs, *schema);
  std::vector<std::vector<edn::Value>> rows;
  for (const edn::Value& tx : log.items()) {
    const edn::Value& t = *tx.get(Kw("t"));
    for (const edn::Value& d : tx.get(Kw("data"))->items()) {
      std::vector<edn::Value> row = {t};
      row.insert(row.end(), d.items().begin(), d.items().end());
      rows.push_back(std::move(row));
    }
  }
  PrintRows(out_, style_, {"t", "e", "a", "v", "tx", "added"}, rows, log);
  return Status::OK();
}

Status Session::Schema(const std::string& rest) {
  MENTAT_RETURN_IF_ERROR(RequireStore());
  auto schema = store_->schema();
  std::string want = rest;
  if (!want.empty() && want[0] == ':') want.erase(0, 1);
  std::vector<const Attribute*> attrs;
  for (const auto& [id, attr] : schema->attributes()) {
    if (want.empty() ? IsBootstrapIdent(attr.ident) : attr.ident != want) continue;
    attrs.push_back(&attr);
  }
  if (!want.empty() && attrs.empty()) return Status::NotFound("unknown attribute :" + want);
  edn::Vec whole;
  bool any_flag = false, any_doc = false;
  for (const Attribute* a : attrs) {
    whole.push_back(AttributeEdn(*a));
    any_flag |= a->component || a->no_history || a->fulltext;
    any_doc |= !a->doc.empty();
  }
  std::vector<std::string> headers = {"ident", "valueType", "cardinality", "unique", "index"};
  if (any_flag) headers.push_back("flags");
  if (any_doc) headers.push_back("doc");
  std::vector<std::vector<edn::Value>> rows;
  for (const Attribute* a : attrs) {
    std::vector<edn::Value> row = {edn::Value::Keyword(a->ident),
                                   edn::Value::Keyword(ValueTypeIdent(a->type)),
                                   Kw(a->many ? "db.cardinality/many" : "db.cardinality/one"),
                                   UniqueKw(a->unique), edn::Value::Bool(a->index)};
    if (any_flag) {
      std::string flags;
      auto add = [&](bool on, const char* f) {
        if (on) flags += (flags.empty() ? "" : " ") + std::string(f);
      };
      add(a->component, "isComponent");
      add(a->no_history, "noHistory");
      add(a->fulltext, "fulltext");
      row.push_back(edn::Value::String(flags));
    }
    if (any_doc) row.push_back(edn::Value::String(a->doc));
    rows.push_back(std::move(row));
  }
  PrintRows(out_, style_, headers, rows, edn::Value::Vector(std::move(whole)));
  return Status::OK();
}

namespace {

struct StoreStats {
  int64_t datoms = 0;
  int64_t user_datoms = 0;  // outside the bootstrap and the transaction entities
  int64_t entities = 0;     // in the user partition
  int64_t transactions = 0;
  std::map<std::string, int64_t> per_attribute;  // of the user datoms
};

Result<int64_t> CountQuery(Store& store, const char* query) {
  MENTAT_ASSIGN_OR_RETURN(QueryResult r, store.q(query));
  if (r.rows.empty() || r.rows[0].empty() || !r.rows[0][0].is_int()) return int64_t{0};
  return r.rows[0][0].as_int();
}

// Counts with aggregate queries: the counting happens in SQLite, without holding every
// datom in memory.
Result<StoreStats> StatsByQuery(Store& store) {
  StoreStats s;
  auto schema = store.schema();
  MENTAT_ASSIGN_OR_RETURN(
      QueryResult per_attr,
      store.q("[:find ?a (count ?v) :with ?e :where [?e ?a ?v ?tx] [(< ?e 268435456)] "
              "[(!= ?tx 268435456)]]"));
  for (const auto& row : per_attr.rows) {
    if (row.size() != 2 || !row[0].is_int() || !row[1].is_int()) continue;
    const std::string* ident = schema->ident(row[0].as_int());
    s.per_attribute[ident ? *ident : std::to_string(row[0].as_int())] = row[1].as_int();
    s.user_datoms += row[1].as_int();
  }
  MENTAT_ASSIGN_OR_RETURN(s.datoms,
                          CountQuery(store, "[:find (count ?v) . :with ?e ?a :where [?e ?a ?v]]"));
  MENTAT_ASSIGN_OR_RETURN(s.entities, CountQuery(store,
                                                 "[:find (count-distinct ?e) . :where [?e ?a _] "
                                                 "[(>= ?e 65536)] [(< ?e 268435456)]]"));
  MENTAT_ASSIGN_OR_RETURN(s.transactions,
                          CountQuery(store, "[:find (count ?t) . :where [?t :db/txInstant]]"));
  return s;
}

// The same from a scan of every datom (when queries are not available).
Result<StoreStats> StatsByScan(Store& store) {
  StoreStats s;
  MENTAT_ASSIGN_OR_RETURN(auto datoms, store.datoms(":aevt"));
  auto schema = store.schema();
  std::unordered_set<Entid> entities;
  for (const auto& d : datoms) {
    if (d.a == ids::kTxInstant) ++s.transactions;
    if (d.e >= ids::kTxStart || d.tx == ids::kBootstrapTx) continue;
    const std::string* ident = schema->ident(d.a);
    ++s.user_datoms;
    ++s.per_attribute[ident ? *ident : std::to_string(d.a)];
    if (d.e >= ids::kUserStart) entities.insert(d.e);
  }
  s.datoms = static_cast<int64_t>(datoms.size());
  s.entities = static_cast<int64_t>(entities.size());
  return s;
}

}  // namespace

Status Session::Vacuum(const std::string& rest) {
  MENTAT_RETURN_IF_ERROR(RequireStore());
  if (!rest.empty()) return Status::InvalidArgument("usage: .vacuum");
  MENTAT_RETURN_IF_ERROR(store_->vacuum());
  if (style_.format == Format::kTable) out_ << "ok\n";
  return Status::OK();
}

Status Session::Check(const std::string& rest) {
  MENTAT_RETURN_IF_ERROR(RequireStore());
  if (!rest.empty()) return Status::InvalidArgument("usage: .check");
  MENTAT_ASSIGN_OR_RETURN(CheckReport report, store_->check());
  if (style_.format == Format::kTable) {
    for (const auto& [what, n] : report.checked) out_ << "checked " << what << ": " << n << "\n";
    for (const auto& p : report.problems) out_ << "problem: " << p << "\n";
    out_ << (report.ok() ? "ok\n" : "");
  } else {
    PrintValue(out_, style_, report.ToEdn());
  }
  if (report.ok()) return Status::OK();
  return Status::Corrupt(std::to_string(report.problems.size()) +
                         " problems found in the store (listed above)");
}

Status Session::Stats(const std::string& rest) {
  MENTAT_RETURN_IF_ERROR(RequireStore());
  if (!rest.empty()) return Status::InvalidArgument("usage: .stats");
  auto by_query = StatsByQuery(*store_);
  if (!by_query.ok() && by_query.status().code() != Code::kUnsupported) return by_query.status();
  StoreStats stats;
  if (by_query.ok()) {
    stats = std::move(*by_query);
  } else {
    MENTAT_ASSIGN_OR_RETURN(stats, StatsByScan(*store_));
  }
  MENTAT_ASSIGN_OR_RETURN(Entid last_tx, store_->last_tx());
  uint64_t file = path_.empty() ? 0 : SizeOf(path_);
  uint64_t wal = path_.empty() ? 0 : SizeOf(path_ + "-wal");
  std::vector<std::vector<edn::Value>> rows;
  edn::MapEntries attrs;
  for (const auto& [name, n] : stats.per_attribute) {
    rows.push_back({edn::Value::Keyword(name), edn::Value::Int(n)});
    attrs.emplace_back(edn::Value::Keyword(name), edn::Value::Int(n));
  }
  if (style_.format == Format::kTable) {
    out_ << "store:        " << (path_.empty() ? "(in-memory)" : path_) << "\n";
    if (!path_.empty())
      out_ << "size:         " << HumanBytes(file + wal) << " (" << file << " bytes + " << wal
           << " bytes of WAL)\n";
    out_ << "datoms:       " << stats.datoms << " (" << stats.user_datoms
         << " outside the bootstrap and transaction entities)\n"
         << "entities:     " << stats.entities << " (user partition)\n"
         << "transactions: " << stats.transactions << " (last " << last_tx << ")\n";
  }
  if (style_.format == Format::kTable || style_.format == Format::kCsv) {
    PrintRows(out_, style_, {"attribute", "datoms"}, rows, edn::Value());
    return Status::OK();
  }
  edn::MapEntries m;
  m.emplace_back(Kw("path"), path_.empty() ? edn::Value() : edn::Value::String(path_));
  m.emplace_back(Kw("size-bytes"), edn::Value::Int(static_cast<int64_t>(file + wal)));
  m.emplace_back(Kw("datoms"), edn::Value::Int(stats.datoms));
  m.emplace_back(Kw("user-datoms"), edn::Value::Int(stats.user_datoms));
  m.emplace_back(Kw("entities"), edn::Value::Int(stats.entities));
  m.emplace_back(Kw("transactions"), edn::Value::Int(stats.transactions));
  m.emplace_back(Kw("last-tx"), edn::Value::Int(last_tx));
  m.emplace_back(Kw("attributes"), edn::Value::Map(std::move(attrs)));
  PrintValue(out_, style_, edn::Value::Map(std::move(m)));
  return Status::OK();
}

}  // namespace mentat::cli
