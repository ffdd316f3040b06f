// The DuckDB extension backend of the data-driven runner: every record runs as SQL in a
// real DuckDB (libduckdb.so through the C API test host, ext/duckdb/host) with
// build/mentat.duckdb_extension loaded, on a store file:
//
//   transact  SELECT edn_t(path, body, 'edn')
//   query     SELECT * FROM edn_q(path, body, options)   typed rows, read back into EDN,
//             must agree with SELECT * FROM edn_q(..., format := 'edn'), which is returned
//   explain   SELECT edn_explain(path, body, options)
//   pull      SELECT edn_pull(path, pattern, eid, 'edn')
//   datoms    SELECT edn_datoms(path, index, components, 'edn')
//
// Query rows come back as DuckDB values; they are turned back into EDN by the column
// kinds the extension declared (ext/duckdb/columns.h, computed here the same way from
// the store's schema, itself read through edn_q), then shaped by QueryResult::ToEdn.
// That typed result must equal the exact EDN result up to what SQL types cannot say
// (1 = 1.0, a set read as a list, JSON's keywords, instants and bytes as text or
// numbers); any other difference fails the record.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "backend.h"
#include "columns.h"
#include "duckdb_host.h"
#include "mentat/store.h"

namespace mentat::testing {

std::unique_ptr<Backend> MakeDuckdbBackend(const std::string& extension,
                                           const std::string& library);

namespace {

using duckdb_ext::ColumnType;
using duckdb_host::Quote;

edn::Value FromJson(const nlohmann::json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::null:
      return edn::Value::Nil();
    case nlohmann::json::value_t::boolean:
      return edn::Value::Bool(j.get<bool>());
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
      return edn::Value::Int(j.get<int64_t>());
    case nlohmann::json::value_t::number_float:
      return edn::Value::Float(j.get<double>());
    case nlohmann::json::value_t::string: {
      const std::string& s = j.get_ref<const std::string&>();
      if (s.size() > 1 && s[0] == ':') return edn::Value::Keyword(s.substr(1));
      if (s.size() == 27 && s[10] == 'T' && s.back() == 'Z') {
        if (auto t = edn::ParseInstant(s); t.ok()) return edn::Value::Inst(*t);
      }
      if (s.size() == 36 && s[8] == '-') {
        if (auto u = edn::ParseUuid(s); u.ok()) return edn::Value::MakeUuid(*u);
      }
      return edn::Value::String(s);
    }
    case nlohmann::json::value_t::array: {
      edn::Vec items;
      for (const auto& x : j) items.push_back(FromJson(x));
      return edn::Value::Vector(std::move(items));
    }
    case nlohmann::json::value_t::object: {
      edn::MapEntries entries;
      for (const auto& [k, v] : j.items()) {
        edn::Value key =
            k.size() > 1 && k[0] == ':' ? edn::Value::Keyword(k.substr(1)) : edn::Value::String(k);
        entries.emplace_back(std::move(key), FromJson(v));
      }
      return edn::Value::Map(std::move(entries));
    }
    default:
      return edn::Value::Nil();
  }
}

// "\x0A\xFF" (DuckDB's BLOB text) -> bytes.
std::string Unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() + 0 && s[i + 1] == 'x') {
      out += static_cast<char>(std::stoi(s.substr(i + 2, 2), nullptr, 16));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

Result<edn::Value> FromCell(const std::optional<std::string>& cell, ColumnType t) {
  if (!cell) return edn::Value::Nil();
  const std::string& s = *cell;
  switch (t) {
    case ColumnType::kBigInt:
      return edn::Value::Int(std::stoll(s));
    case ColumnType::kDouble:
      return edn::Value::Float(std::strtod(s.c_str(), nullptr));
    case ColumnType::kBoolean:
      return edn::Value::Bool(s == "true");
    case ColumnType::kVarchar:
      return edn::Value::String(s);
    case ColumnType::kKeyword:
      if (s.size() > 1 && s[0] == ':') return edn::Value::Keyword(s.substr(1));
      return edn::Value::String(s);
    case ColumnType::kTimestamp: {
      std::string iso = s;
      if (iso.size() > 10) iso[10] = 'T';
      MENTAT_ASSIGN_OR_RETURN(int64_t micros, edn::ParseInstant(iso + "Z"));
      return edn::Value::Inst(micros);
    }
    case ColumnType::kUuid: {
      MENTAT_ASSIGN_OR_RETURN(edn::Uuid u, edn::ParseUuid(s));
      return edn::Value::MakeUuid(u);
    }
    case ColumnType::kBlob:
      return edn::Value::Bytes(Unescape(s));
    case ColumnType::kJson: {
      auto j = nlohmann::json::parse(s, nullptr, false);
      if (j.is_discarded()) return Status::Internal("not JSON: " + s);
      return FromJson(j);
    }
  }
  return Status::Internal("unknown column type");
}

double AsDouble(const edn::Value& v) {
  return v.is_int() ? static_cast<double>(v.as_int()) : v.as_double();
}

// Equality up to what a typed DuckDB row cannot carry (see the file comment).
bool Loose(const edn::Value& a, const edn::Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_int() && b.is_int()) return a.as_int() == b.as_int();
    double x = AsDouble(a), y = AsDouble(b);
    return x == y || std::fabs(x - y) <= 1e-9 * std::max(std::fabs(x), std::fabs(y));
  }
  if (a.is_seq() && b.is_seq()) {  // as multisets: sets read back as lists
    if (a.size() != b.size()) return false;
    std::vector<bool> used(b.size(), false);
    for (const auto& x : a.items()) {
      bool found = false;
      for (size_t i = 0; i < b.size() && !found; ++i) {
        if (!used[i] && Loose(x, b.items()[i])) used[i] = found = true;
      }
      if (!found) return false;
    }
    return true;
  }
  if (a.is_map() && b.is_map()) {
    if (a.size() != b.size()) return false;
    for (const auto& [k, v] : a.entries()) {
      const edn::Value* w = b.get(k);
      if (w == nullptr || !Loose(v, *w)) return false;
    }
    return true;
  }
  // JSON text forms: ":kw" strings, instants as micros, bytes as hex, uuids as text.
  auto text = [](const edn::Value& v) -> std::optional<std::string> {
    if (v.is_string()) return v.str();
    if (v.is_keyword()) return ":" + v.str();
    // VARCHAR columns of symbols, uris, bigints and bigdecs hold their text.
    if (v.is_symbol() || v.kind() == edn::Kind::kUri || v.kind() == edn::Kind::kBigInt ||
        v.kind() == edn::Kind::kBigDec)
      return v.str();
    if (v.is_uuid()) return edn::FormatUuid(v.as_uuid());
    if (v.kind() == edn::Kind::kBytes) {
      static const char* kHex = "0123456789abcdef";
      std::string hex;
      for (unsigned char c : v.str()) hex += std::string{kHex[c >> 4], kHex[c & 15]};
      return hex;
    }
    return std::nullopt;
  };
  if (a.is_inst() && b.is_int()) return a.as_inst_micros() == b.as_int();
  if (b.is_inst() && a.is_int()) return b.as_inst_micros() == a.as_int();
  if (a == b) return true;
  auto ta = text(a), tb = text(b);
  return ta && tb && *ta == *tb;
}

class DuckdbBackend : public Backend {
 public:
  DuckdbBackend(std::string extension, std::string library)
      : extension_(std::move(extension)), library_(std::move(library)) {
    char tmpl[] = "/tmp/mentat-duckdb-test-XXXXXX";
    char* dir = mkdtemp(tmpl);
    dir_ = dir ? dir : "/tmp";
  }
  ~DuckdbBackend() override {
    con_.reset();
    db_.reset();
    std::error_code ec;
    if (dir_ != "/tmp") std::filesystem::remove_all(dir_, ec);
  }

  Status Reset() override {
    if (!db_) {
      MENTAT_ASSIGN_OR_RETURN(db_, duckdb_host::DuckHost::Open(library_));
      MENTAT_ASSIGN_OR_RETURN(con_, db_->Connect());
      std::string ext = extension_.empty() ? duckdb_host::DefaultExtensionPath() : extension_;
      MENTAT_RETURN_IF_ERROR(con_->Query("LOAD " + Quote(ext)).status());
    }
    path_ = Quote(dir_ + "/store" + std::to_string(++n_) + ".db");
    // Create the store without a transaction (edn_t '[]' would record one), so that a
    // file may start with a query; without scripting the first transact creates it.
    (void)con_->Query("SELECT edn_eval(" + path_ + ", 'nil')");
    return Status::OK();
  }

  Result<edn::Value> Transact(const std::string& edn) override {
    return ReadScalar("SELECT edn_t(" + path_ + ", " + Quote(edn) + ", 'edn')");
  }

  Result<edn::Value> Query(const std::string& q, const std::string& json) override {
    std::string args = path_ + ", " + Quote(q) + ", " + Quote(json.empty() ? "{}" : json);
    MENTAT_ASSIGN_OR_RETURN(auto out, con_->Query("SELECT * FROM edn_q(" + args + ")"));
    MENTAT_ASSIGN_OR_RETURN(edn::Value typed, TypedResult(q, json, out));
    MENTAT_ASSIGN_OR_RETURN(edn::Value exact,
                            ReadScalar("SELECT * FROM edn_q(" + args + ", format := 'edn')"));
    if (!Loose(typed, exact)) {
      return Status::Internal("edn_q's typed rows disagree with its EDN result:\n  typed: " +
                              edn::Print(typed) + "\n  edn:   " + edn::Print(exact));
    }
    return exact;
  }

  // The typed rows of `out` read back into EDN.
  Result<edn::Value> TypedResult(const std::string& q, const std::string& json,
                                 const duckdb_host::QueryOutput& out) {
    // The column kinds, as the extension derived them.
    MENTAT_ASSIGN_OR_RETURN(Schema schema, ReadSchema());
    std::vector<edn::Value> inputs;
    if (!json.empty()) {
      MENTAT_ASSIGN_OR_RETURN(QueryOptions o, options_from_json(q, json));
      for (const auto& in : o.inputs) {
        if (!in.db) inputs.push_back(in.value);
      }
    }
    MENTAT_ASSIGN_OR_RETURN(auto cols, duckdb_ext::InferColumns(q, schema, inputs));
    if (cols.columns.size() != out.names.size()) {
      return Status::Internal("edn_q returned " + std::to_string(out.names.size()) +
                              " columns, expected " + std::to_string(cols.columns.size()));
    }
    QueryResult r;
    r.shape = static_cast<QueryResult::Shape>(cols.shape);
    r.columns = out.names;
    r.map_keys = cols.map_keys;
    for (const auto& row : out.rows) {
      std::vector<edn::Value> values;
      for (size_t c = 0; c < row.size(); ++c) {
        MENTAT_ASSIGN_OR_RETURN(edn::Value v, FromCell(row[c], cols.columns[c].type));
        values.push_back(std::move(v));
      }
      r.rows.push_back(std::move(values));
    }
    return r.ToEdn();
  }

  Result<std::string> Explain(const std::string& q, const std::string& json) override {
    MENTAT_ASSIGN_OR_RETURN(auto out, con_->Query("SELECT edn_explain(" + path_ + ", " + Quote(q) +
                                                  ", " + Quote(json.empty() ? "{}" : json) + ")"));
    return out.Cell(0, 0);
  }

  Result<edn::Value> Pull(const std::string& pattern, const std::string& eid) override {
    return ReadScalar("SELECT edn_pull(" + path_ + ", " + Quote(pattern) + ", " + Quote(eid) +
                      ", 'edn')");
  }

  Result<edn::Value> Entity(const std::string& eid) override {
    return ReadScalar("SELECT edn_entity(" + path_ + ", " + Quote(eid) + ", 'edn')");
  }

  Result<edn::Value> Datoms(const std::string& args) override {
    size_t space = args.find_first_of(" \t\n");
    std::string index = args.substr(0, space);
    std::string rest = space == std::string::npos ? "" : args.substr(space + 1);
    return ReadScalar("SELECT edn_datoms(" + path_ + ", " + Quote(index) + ", " + Quote(rest) +
                      ", 'edn')");
  }

 private:
  // Runs `sql` (one VARCHAR cell of EDN text, or NULL for nil) and reads the cell.
  Result<edn::Value> ReadScalar(const std::string& sql) {
    MENTAT_ASSIGN_OR_RETURN(auto out, con_->Query(sql));
    if (out.rows.empty() || !out.rows[0][0]) return edn::Value::Nil();
    return edn::Read(*out.rows[0][0]);
  }

  // The store's attributes, read through edn_q.
  Result<Schema> ReadSchema() {
    Schema schema;
    auto out = con_->Query("SELECT * FROM edn_q(" + path_ +
                           ", '[:find ?a ?ident ?type :where [?a :db/ident ?ident]"
                           " [?a :db/valueType ?t] [?t :db/ident ?type]]', '{}')");
    if (!out.ok()) return schema;  // an empty store: no attributes
    for (size_t r = 0; r < out->rows.size(); ++r) {
      std::string ident = out->Cell(r, 1), type = out->Cell(r, 2);
      if (ident.empty() || ident[0] != ':' || type.empty() || type[0] != ':') continue;
      auto vt = ValueTypeFromIdent(type.substr(1));
      if (!vt) vt = ValueTypeFromIdent(type);
      if (!vt) continue;
      Attribute a;
      a.id = std::stoll(out->Cell(r, 0));
      a.ident = ident.substr(1);
      a.type = *vt;
      schema.SetIdent(a.id, a.ident);
      schema.SetAttribute(a);
    }
    return schema;
  }

  std::string extension_, library_;
  std::string dir_;
  std::string path_;
  int n_ = 0;
  std::unique_ptr<duckdb_host::DuckHost> db_;
  std::unique_ptr<duckdb_host::Connection> con_;
};

}  // namespace

std::unique_ptr<Backend> MakeDuckdbBackend(const std::string& extension,
                                           const std::string& library) {
  return std::make_unique<DuckdbBackend>(extension, library);
}

#ifdef MENTAT_DUCKDB_RUNNER_SHIM
// runner.cc built with its factories renamed (test/duckdb_ext/CMakeLists.txt), until it
// selects this backend itself: `--backend cli --mentat EXT` runs through the extension
// file EXT in the default DuckDB; `--backend lib` through the default extension in the
// newer DuckDB release (MENTAT_DUCKDB_LIBRARY_NEXT).
std::unique_ptr<Backend> MakeDuckdbPathShim(const std::string& extension) {
  return MakeDuckdbBackend(extension, "");
}
std::unique_ptr<Backend> MakeDuckdbLibraryShim() {
  return MakeDuckdbBackend("", MENTAT_DUCKDB_LIBRARY_NEXT);
}
#endif

}  // namespace mentat::testing
