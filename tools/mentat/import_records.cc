#include "import_records.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "csv.h"
#include "import_values.h"

namespace mentat::cli {

namespace {

using nlohmann::json;

// One record: its 1-based line in the file and its fields, in order. CSV cells are JSON
// strings with `csv` set (their type is inferred from the text).
struct Record {
  size_t line = 0;
  std::vector<std::pair<std::string, json>> fields;
};

// What the values of one new attribute looked like, for inference.
struct Seen {
  bool any = false, all_bool = true, all_int = true, all_number = true, all_instant = true,
       all_uuid = true, object = false, many = false;
};

struct Column {
  std::string ident;       // without ':'
  std::string ref_target;  // --ref COL=ATTR: ATTR
  bool unique = false;     // --unique COL
};

struct Plan {
  std::map<std::string, Seen> fresh;  // attributes to create, by ident
  std::map<std::string, Attribute> dry_attrs;
  bool csv = false;
};

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool LooksLikeDate(const std::string& s) {
  return s.size() >= 10 && std::isdigit(static_cast<unsigned char>(s[0])) && s[4] == '-' &&
         s[7] == '-' && edn::ParseInstant(s).ok();
}

bool IsBoolText(const std::string& s) {
  std::string l = Lower(s);
  return l == "true" || l == "false";
}

bool IsNumberText(const std::string& s, bool* integer) {
  if (s.empty()) return false;
  int64_t n = 0;
  if (ParseLong(s, &n)) {
    *integer = true;
    return true;
  }
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  *integer = false;
  return end == s.c_str() + s.size() && s.find_first_of("0123456789") != std::string::npos &&
         s.find_first_of("xXpP") == std::string::npos &&
         Lower(s).find("inf") == std::string::npos && Lower(s).find("nan") == std::string::npos;
}

void See(Seen* s, const json& v, bool csv) {
  if (v.is_array()) {
    s->many = true;
    for (const auto& x : v) See(s, x, csv);
    return;
  }
  s->any = true;
  if (v.is_object()) {
    s->object = true;
    s->all_bool = s->all_int = s->all_number = s->all_instant = s->all_uuid = false;
    return;
  }
  bool is_bool = v.is_boolean(), is_int = v.is_number_integer() || v.is_number_unsigned(),
       is_number = v.is_number(), is_instant = false, is_uuid = false;
  if (v.is_string()) {
    const std::string& t = v.get_ref<const std::string&>();
    if (csv) {
      is_bool = IsBoolText(t);
      bool integer = false;
      is_number = IsNumberText(t, &integer);
      is_int = is_number && integer;
    }
    is_instant = LooksLikeDate(t);
    is_uuid = t.size() == 36 && edn::ParseUuid(t).ok();
  }
  s->all_bool = s->all_bool && is_bool;
  s->all_int = s->all_int && is_int;
  s->all_number = s->all_number && is_number;
  s->all_instant = s->all_instant && is_instant;
  s->all_uuid = s->all_uuid && is_uuid;
}

ValueType Inferred(const Seen& s, const Column& c) {
  if (s.object || !c.ref_target.empty()) return ValueType::kRef;
  if (!s.any) return ValueType::kString;
  if (s.all_bool) return ValueType::kBoolean;
  if (s.all_int) return ValueType::kLong;
  if (s.all_number) return ValueType::kDouble;
  if (s.all_instant) return ValueType::kInstant;
  if (s.all_uuid) return ValueType::kUuid;
  return ValueType::kString;
}

// The line of each top-level element of a JSON array (for error positions).
std::vector<size_t> ArrayElementLines(std::string_view text) {
  std::vector<size_t> lines;
  size_t line = 1;
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\n') ++line;
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      if (depth == 1) lines.push_back(line);
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (depth == 1) lines.push_back(line);
      ++depth;
    } else if (c == '}' || c == ']') {
      --depth;
    } else if (depth == 1 && c != ',' && c != ' ' && c != '\t' && c != '\r' && c != '\n') {
      lines.push_back(line);
      while (i + 1 < text.size() && text[i + 1] != ',' && text[i + 1] != ']' && text[i + 1] != '\n')
        ++i;
    }
  }
  return lines;
}

Status ReadRecords(std::string_view text, const std::string& name, RecordFormat format,
                   std::vector<Record>* out) {
  if (format == RecordFormat::kCsv) {
    CsvReader reader(text);
    std::vector<std::string> header, fields;
    auto first = reader.Next(&header);
    if (!first.ok()) return first.status();
    if (!*first) return Status::OK();
    for (auto& h : header) h = Trim(h);
    for (;;) {
      auto more = reader.Next(&fields);
      if (!more.ok()) return more.status();
      if (!*more) break;
      Record r;
      r.line = reader.record_line();
      if (fields.size() > header.size())
        return Status::InvalidArgument(
            std::to_string(r.line) + ": the row has " + std::to_string(fields.size()) +
            " fields but the header names " + std::to_string(header.size()) + " columns");
      for (size_t i = 0; i < fields.size(); ++i) {
        std::string cell = Trim(fields[i]);
        if (!cell.empty()) r.fields.emplace_back(header[i], json(cell));
      }
      out->push_back(std::move(r));
    }
    return Status::OK();
  }
  auto object_record = [&](const json& j, size_t line) -> Status {
    if (!j.is_object())
      return Status::InvalidArgument(std::to_string(line) + ":1: expected a JSON object, got " +
                                     std::string(j.type_name()));
    Record r;
    r.line = line;
    for (auto it = j.begin(); it != j.end(); ++it)
      if (!it.value().is_null()) r.fields.emplace_back(it.key(), it.value());
    out->push_back(std::move(r));
    return Status::OK();
  };
  if (format == RecordFormat::kJsonl) {
    size_t line = 0, start = 0;
    while (start <= text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      ++line;
      std::string_view l = text.substr(start, end - start);
      start = end + 1;
      if (l.find_first_not_of(" \t\r") == std::string_view::npos) {
        if (end == text.size()) break;
        continue;
      }
      json j = json::parse(l.begin(), l.end(), nullptr, false);
      if (j.is_discarded()) return Status::Parse(std::to_string(line) + ":1: not a JSON value");
      MENTAT_RETURN_IF_ERROR(object_record(j, line));
      if (end == text.size()) break;
    }
    return Status::OK();
  }
  json j;
  try {
    j = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    // "parse error at line L, column C: ..."
    std::string what = e.what();
    size_t at = what.find("line ");
    if (at != std::string::npos) {
      unsigned line = 0, col = 0;
      if (std::sscanf(what.c_str() + at, "line %u, column %u", &line, &col) == 2)
        return Status::Parse(std::to_string(line) + ":" + std::to_string(col) +
                             ": invalid JSON: " + what.substr(what.find(':', at) + 2));
    }
    return Status::Parse("1:1: invalid JSON: " + what);
  } catch (const json::exception& e) {
    return Status::Parse(std::string("1:1: invalid JSON: ") + e.what());
  }
  if (j.is_object()) return object_record(j, 1);
  if (!j.is_array())
    return Status::InvalidArgument(
        "1:1: expected a JSON array of objects (or JSON Lines: --jsonl)");
  std::vector<size_t> lines = ArrayElementLines(text);
  for (size_t i = 0; i < j.size(); ++i)
    MENTAT_RETURN_IF_ERROR(object_record(j[i], i < lines.size() ? lines[i] : 1));
  (void)name;
  return Status::OK();
}

class Importer {
 public:
  Importer(Store& store, const std::string& name, const ImportOptions& o, std::ostream& report,
           ImportStats* stats, bool csv)
      : store_(store), name_(name), o_(o), report_(report), stats_(stats), csv_(csv) {}

  Status Run(std::vector<Record> records) {
    schema_ = store_.schema();
    // Plan: every column's attribute, and what the values of new ones look like.
    for (const auto& r : records)
      for (const auto& [key, v] : r.fields) {
        auto col = CachedColumnOf(key, o_.as_ns, r.line);
        if (!col.ok()) return col.status();
        if ((*col)->col.ident == "db/id") continue;
        MENTAT_RETURN_IF_ERROR(Observe((*col)->col, v, r.line));
      }
    for (const auto& [col, target] : o_.ref_columns) {
      const Attribute* t = schema_->attribute(Unprefixed(target));
      if (!t || t->unique == Unique::kNone)
        return Status::Schema(
            "--ref " + col + "=" + target + ": :" + Unprefixed(target) +
            (t ? " is not a unique attribute (a lookup ref needs one)" : " is not an attribute"));
    }
    MENTAT_RETURN_IF_ERROR(CreateSchema());
    // The entities, in batches.
    edn::Vec batch;
    std::vector<const Record*> in_batch;
    size_t shown = 0;
    for (const auto& r : records) {
      auto entity = Entity(r.fields, o_.as_ns, r.line);
      if (!entity.ok()) {
        MENTAT_RETURN_IF_ERROR(Failed(r.line, r.line, 1, entity.status()));
        continue;
      }
      if (o_.dry_run) {
        if (shown++ < 5) report_ << edn::Print(*entity) << "\n";
        ++stats_->entities;
        continue;
      }
      batch.push_back(std::move(*entity));
      in_batch.push_back(&r);
      if (batch.size() >= std::max<size_t>(1, o_.csv_batch_rows)) {
        MENTAT_RETURN_IF_ERROR(Flush(&batch, &in_batch));
      }
    }
    if (o_.dry_run) {
      if (shown > 5) report_ << ";; ... and " << (shown - 5) << " more entities\n";
      return Status::OK();
    }
    return Flush(&batch, &in_batch);
  }

 private:
  static std::string Unprefixed(const std::string& s) {
    return !s.empty() && s[0] == ':' ? s.substr(1) : s;
  }

  // A column, and its attribute once the schema has it (Entity): what ColumnOf and
  // AttributeOf say, remembered by namespace and key, as every record names the same
  // columns (an import of many rows spends no time on them per cell).
  struct KnownColumn {
    Column col;
    const Attribute* attr = nullptr;
  };
  Result<KnownColumn*> CachedColumnOf(const std::string& key, const std::string& ns, size_t line) {
    auto& by_key = known_[ns];
    auto it = by_key.find(key);
    if (it != by_key.end()) return &it->second;
    MENTAT_ASSIGN_OR_RETURN(Column c, ColumnOf(key, ns, line));
    return &by_key.emplace(key, KnownColumn{std::move(c), nullptr}).first->second;
  }

  Result<Column> ColumnOf(const std::string& key, const std::string& ns, size_t line) const {
    Column c;
    auto mapped = o_.column_map.find(key);
    std::string name = mapped != o_.column_map.end() ? Unprefixed(mapped->second) : Unprefixed(key);
    if (mapped == o_.column_map.end() && name.find('/') == std::string::npos) {
      if (ns.empty())
        return Status::InvalidArgument(std::to_string(line) + ":1: column '" + key +
                                       "' names no attribute: qualify it (person/" + key +
                                       "), or give --as NS or --map " + key + "=ATTR");
      name = ns + "/" + name;
    }
    if (name.empty() || name.front() == '/' || name.back() == '/')
      return Status::InvalidArgument(std::to_string(line) + ":1: column '" + key +
                                     "' is not an attribute name");
    c.ident = name;
    c.unique = o_.unique_columns.count(key) > 0;
    auto ref = o_.ref_columns.find(key);
    if (ref != o_.ref_columns.end()) c.ref_target = Unprefixed(ref->second);
    return c;
  }

  Status Observe(const Column& c, const json& v, size_t line) {
    if (!schema_->attribute(c.ident)) {
      if (schema_->entid(c.ident))
        return Status::Schema(std::to_string(line) + ":1: :" + c.ident + " is not an attribute");
      Seen& s = fresh_[c.ident];
      See(&s, v, csv_);
      columns_[c.ident] = c;
    } else if (c.unique) {
      const Attribute* a = schema_->attribute(c.ident);
      if (a->unique == Unique::kNone)
        return Status::Schema("--unique: :" + c.ident + " exists and is not unique");
    }
    // Nested objects: their keys are attributes of namespace `key name`.
    std::string inner_ns(c.ident.substr(c.ident.find('/') + 1));
    auto nested = [&](const json& obj) -> Status {
      for (auto it = obj.begin(); it != obj.end(); ++it) {
        if (it.value().is_null()) continue;
        MENTAT_ASSIGN_OR_RETURN(Column inner, ColumnOf(it.key(), inner_ns, line));
        if (inner.ident == "db/id") continue;
        MENTAT_RETURN_IF_ERROR(Observe(inner, it.value(), line));
      }
      return Status::OK();
    };
    if (v.is_object()) return nested(v);
    if (v.is_array())
      for (const auto& x : v)
        if (x.is_object()) MENTAT_RETURN_IF_ERROR(nested(x));
    return Status::OK();
  }

  Status CreateSchema() {
    if (fresh_.empty()) return Status::OK();
    edn::Vec tx;
    for (const auto& [ident, seen] : fresh_) {
      const Column& c = columns_[ident];
      ValueType type = Inferred(seen, c);
      edn::MapEntries m = {
          {edn::Value::Keyword("db/ident"), edn::Value::Keyword(ident)},
          {edn::Value::Keyword("db/valueType"),
           edn::Value::Keyword(Unprefixed(ValueTypeIdent(type)))},
          {edn::Value::Keyword("db/cardinality"),
           edn::Value::Keyword(seen.many ? "db.cardinality/many" : "db.cardinality/one")}};
      if (c.unique)
        m.emplace_back(edn::Value::Keyword("db/unique"), edn::Value::Keyword("db.unique/identity"));
      if (seen.object)
        m.emplace_back(edn::Value::Keyword("db/isComponent"), edn::Value::Bool(true));
      tx.push_back(edn::Value::Map(std::move(m)));
      stats_->created.push_back(":" + ident);
      Attribute a;
      a.ident = ident;
      a.type = type;
      a.many = seen.many;
      a.component = seen.object;
      dry_attrs_[ident] = a;
    }
    edn::Value schema_tx = edn::Value::Vector(std::move(tx));
    if (o_.dry_run) {
      report_ << ";; the schema it would create\n" << edn::Print(schema_tx) << "\n";
      report_ << ";; the first entities\n";
      return Status::OK();
    }
    auto r = store_.transact(schema_tx);
    if (!r.ok()) return Status(r.status().code(), "the inferred schema: " + r.status().message());
    ++stats_->transactions;
    schema_ = store_.schema();
    for (auto& [ns, by_key] : known_)
      for (auto& [key, k] : by_key) k.attr = nullptr;  // of the schema before
    return Status::OK();
  }

  const Attribute* AttributeOf(const std::string& ident) const {
    if (const Attribute* a = schema_->attribute(ident)) return a;
    auto it = dry_attrs_.find(ident);
    return it == dry_attrs_.end() ? nullptr : &it->second;
  }

  // One value of column `c` (attribute `a`) as EDN.
  Result<edn::Value> Value(const Column& c, const Attribute& a, const json& v, size_t line) {
    if (v.is_array()) {
      edn::Vec items;
      for (const auto& x : v) {
        MENTAT_ASSIGN_OR_RETURN(edn::Value item, Value(c, a, x, line));
        items.push_back(std::move(item));
      }
      return edn::Value::Vector(std::move(items));
    }
    if (v.is_object()) {
      if (a.type != ValueType::kRef)
        return Status::InvalidArgument("an object for :" + a.ident + ", which is not a ref");
      std::vector<std::pair<std::string, json>> fields;
      for (auto it = v.begin(); it != v.end(); ++it) fields.emplace_back(it.key(), it.value());
      return Entity(fields, std::string(c.ident.substr(c.ident.find('/') + 1)), line);
    }
    if (!c.ref_target.empty()) {
      const Attribute* t = schema_->attribute(c.ref_target);
      Column target;
      target.ident = c.ref_target;
      MENTAT_ASSIGN_OR_RETURN(edn::Value key, Value(target, *t, v, line));
      return edn::Value::Vector({edn::Value::Keyword(c.ref_target), std::move(key)});
    }
    if (v.is_string()) return TypedCell(a, v.get_ref<const std::string&>());
    if (v.is_boolean()) {
      if (a.type != ValueType::kBoolean)
        return Status::InvalidArgument("expected " + Expected(a) + ", got a boolean");
      return edn::Value::Bool(v.get<bool>());
    }
    if (v.is_number_integer() || v.is_number_unsigned()) {
      if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
        return Status::InvalidArgument("integer out of range");
      int64_t n = v.get<int64_t>();
      if (a.type == ValueType::kLong || a.type == ValueType::kRef) return edn::Value::Int(n);
      if (a.type == ValueType::kDouble || a.type == ValueType::kFloat)
        return edn::Value::Float(static_cast<double>(n));
      return TypedCell(a, std::to_string(n));
    }
    if (v.is_number_float()) {
      if (a.type == ValueType::kDouble || a.type == ValueType::kFloat)
        return edn::Value::Float(v.get<double>());
      return Status::InvalidArgument("expected " + Expected(a) + ", got the number " + v.dump());
    }
    return Status::InvalidArgument("unsupported JSON value " + v.dump());
  }

  static std::string Expected(const Attribute& a) {
    return std::string("a value of type ") + ValueTypeIdent(a.type);
  }

  Result<edn::Value> Entity(const std::vector<std::pair<std::string, json>>& fields,
                            const std::string& ns, size_t line) {
    edn::MapEntries entries;
    // Values by attribute, in column order: a column may repeat (cardinality many).
    std::vector<std::pair<const Attribute*, edn::Vec>> values;
    for (const auto& [key, v] : fields) {
      if (v.is_null()) continue;
      MENTAT_ASSIGN_OR_RETURN(KnownColumn * known, CachedColumnOf(key, ns, line));
      const Column& c = known->col;
      if (c.ident == "db/id") {
        if (!v.is_string() && !v.is_number_integer())
          return Status::InvalidArgument("column " + key +
                                         ": expected an id, ident, lookup ref or tempid");
        MENTAT_ASSIGN_OR_RETURN(
            edn::Value id, v.is_string() ? EntityRef(v.get<std::string>())
                                         : Result<edn::Value>(edn::Value::Int(v.get<int64_t>())));
        entries.emplace_back(edn::Value::Keyword("db/id"), std::move(id));
        continue;
      }
      if (!known->attr) known->attr = AttributeOf(c.ident);
      const Attribute* a = known->attr;
      if (!a) return Status::Schema("unknown attribute :" + c.ident);
      auto value = Value(c, *a, v, line);
      if (!value.ok())
        return Status(value.status().code(), "column " + key + ": " + value.status().message());
      auto at = std::find_if(values.begin(), values.end(), [&](const auto& p) {
        return p.first == a || p.first->ident == a->ident;
      });
      if (at == values.end()) {
        values.emplace_back(a, edn::Vec());
        at = values.end() - 1;
      }
      if (v.is_array() && value->is_vector()) {
        for (const auto& x : value->items()) at->second.push_back(x);
      } else {
        at->second.push_back(std::move(*value));
      }
    }
    for (auto& [a, vs] : values) {
      // One value as itself, except for a cardinality-many ref, whose one value may be a
      // lookup ref (a vector) that must not read as a list of values.
      edn::Value key = edn::Value::Keyword(a->ident);
      if (vs.size() == 1 && !(a->many && a->type == ValueType::kRef)) {
        entries.emplace_back(key, std::move(vs[0]));
      } else {
        entries.emplace_back(key, edn::Value::Vector(std::move(vs)));
      }
    }
    return edn::Value::Map(std::move(entries));
  }

  // A record (or the records of a batch, lines first..last) that failed: the error, or with
  // skip a report and a count.
  Status Failed(size_t first, size_t last, size_t n, const Status& st) {
    std::string where = first == last
                            ? std::to_string(first)
                            : "lines " + std::to_string(first) + "-" + std::to_string(last);
    std::string msg = name_ + ":" + where + ": " + st.message();
    if (!o_.skip_errors)
      return Status(st.code(), msg + "\ncommitted before the error: " + Committed(*stats_));
    stats_->skipped += n;
    report_ << "skipped " << msg << "\n";
    return Status::OK();
  }

  Status Commit(const edn::Vec& entities) {
    if (o_.cancel && o_.cancel->load())
      return Status::Interrupted("interrupted: " + name_ + ": the rest was not imported");
    auto report = store_.transact(edn::Value::Vector(entities));
    if (!report.ok()) return report.status();
    ++stats_->transactions;
    for (const auto& d : report->tx_data)
      if (d.e != report->tx_id) ++stats_->datoms;
    if (o_.collect_tempids)
      for (const auto& [k, v] : report->tempids) stats_->tempids[k] = v;
    stats_->entities += entities.size();
    if (o_.progress) o_.progress(0, stats_->datoms);
    return Status::OK();
  }

  // Commits the batch. A batch that fails is one error naming its lines (its records may
  // name each other's tempids, so they are not retried one by one; --batch 1 names the
  // record); with skip the whole batch is left out.
  Status Flush(edn::Vec* batch, std::vector<const Record*>* records) {
    if (batch->empty()) return Status::OK();
    Status st = Commit(*batch);
    if (st.code() == Code::kInterrupted) return st;
    if (!st.ok())
      MENTAT_RETURN_IF_ERROR(
          Failed(records->front()->line, records->back()->line, batch->size(), st));
    batch->clear();
    records->clear();
    return Status::OK();
  }

  Store& store_;
  const std::string& name_;
  const ImportOptions& o_;
  std::ostream& report_;
  ImportStats* stats_;
  bool csv_;
  std::shared_ptr<const Schema> schema_;
  std::map<std::string, Seen> fresh_;
  std::map<std::string, Column> columns_;
  std::map<std::string, Attribute> dry_attrs_;
  std::unordered_map<std::string, std::unordered_map<std::string, KnownColumn>> known_;
};

}  // namespace

Status ImportRecords(Store& store, std::string_view text, const std::string& name,
                     RecordFormat format, const ImportOptions& options, std::ostream& report,
                     ImportStats* stats) {
  std::vector<Record> records;
  Status read = ReadRecords(text, name, format, &records);
  if (!read.ok())
    return Status(read.code(),
                  name + ":" + read.message() + "\ncommitted before the error: nothing");
  Importer importer(store, name, options, report, stats, format == RecordFormat::kCsv);
  Status st = importer.Run(std::move(records));
  if (!st.ok() && st.message().rfind(name, 0) != 0)
    return Status(st.code(),
                  name + ":" + st.message() + "\ncommitted before the error: " + Committed(*stats));
  return st;
}

}  // namespace mentat::cli
