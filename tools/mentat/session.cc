#include "session.h"

#include <chrono>
#include <cstdio>

#include "input.h"

namespace mentat::cli {

const std::vector<CommandInfo>& Commands() {
  static const std::vector<CommandInfo> kCommands = {
      {".open", nullptr, "PATH", "open (or create) the store at PATH"},
      {".transact", ".t", "EDN", "transact EDN transaction data and print the report"},
      {".query", ".q", "QUERY [OPTIONS_JSON]", "run a Datalog query"},
      {".explain", nullptr, "QUERY [OPTIONS_JSON]", "show how a query is planned and run"},
      {".datoms", nullptr, "INDEX [COMPONENTS...]",
       "print datoms of :eavt, :aevt, :avet or :vaet whose leading components match"},
      {".schema", nullptr, "[ATTR]", "print the schema (or one attribute)"},
      {".format", nullptr, "table|edn|json|csv", "set the output format"},
      {".timer", nullptr, "on|off", "print how long each command took"},
      {".help", nullptr, "[COMMAND]", "list the commands, or describe one"},
      {".exit", ".quit", "", "leave"},
  };
  return kCommands;
}

namespace {

const CommandInfo* FindCommand(const std::string& name) {
  for (const auto& c : Commands()) {
    if (name == c.name || (c.alias && name == c.alias)) return &c;
  }
  return nullptr;
}

// Splits "FORM REST" where FORM is one EDN form: returns the form's text and the rest.
Status SplitForm(const std::string& text, std::string* form, std::string* rest) {
  edn::Reader reader(text);
  auto v = reader.Next();
  if (!v.ok()) return v.status();
  if (!v->has_value()) return Status::InvalidArgument("expected an EDN form");
  *form = text.substr(0, reader.offset());
  *rest = text.substr(reader.offset());
  size_t b = rest->find_first_not_of(" \t\r\n");
  *rest = b == std::string::npos ? std::string() : rest->substr(b);
  return Status::OK();
}

edn::Value AttributeEdn(const Attribute& a) {
  edn::MapEntries m;
  auto kw = [](const char* s) { return edn::Value::Keyword(s); };
  m.emplace_back(kw("db/ident"), edn::Value::Keyword(a.ident));
  m.emplace_back(kw("db/id"), edn::Value::Int(a.id));
  m.emplace_back(kw("db/valueType"), edn::Value::Keyword(ValueTypeIdent(a.type)));
  m.emplace_back(kw("db/cardinality"),
                 kw(a.many ? "db.cardinality/many" : "db.cardinality/one"));
  if (a.unique != Unique::kNone)
    m.emplace_back(kw("db/unique"), kw(a.unique == Unique::kIdentity ? "db.unique/identity"
                                                                     : "db.unique/value"));
  if (a.index) m.emplace_back(kw("db/index"), edn::Value::Bool(true));
  if (a.component) m.emplace_back(kw("db/isComponent"), edn::Value::Bool(true));
  if (a.no_history) m.emplace_back(kw("db/noHistory"), edn::Value::Bool(true));
  if (a.fulltext) m.emplace_back(kw("db/fulltext"), edn::Value::Bool(true));
  if (!a.doc.empty()) m.emplace_back(kw("db/doc"), edn::Value::String(a.doc));
  return edn::Value::Map(std::move(m));
}

}  // namespace

std::string FormatError(const std::string& command_name, const std::string& text,
                        const Status& st) {
  std::string msg = "error: ";
  if (!command_name.empty()) msg += command_name + ": ";
  msg += st.message().empty() ? st.ToString() : st.message();
  // "L:C: ..." messages about `text` get the line and a caret.
  unsigned line = 0, col = 0;
  if (std::sscanf(st.message().c_str(), "%u:%u:", &line, &col) == 2 && line > 0 && col > 0) {
    size_t start = 0;
    for (unsigned l = 1; l < line && start != std::string::npos; ++l) {
      start = text.find('\n', start);
      if (start != std::string::npos) ++start;
    }
    if (start != std::string::npos && start <= text.size()) {
      size_t end = text.find('\n', start);
      std::string src = text.substr(start, end == std::string::npos ? end : end - start);
      if (col <= src.size() + 1) {
        msg += "\n  " + src + "\n  " + std::string(col - 1, ' ') + "^";
      }
    }
  }
  return msg;
}

Status Session::Open(const std::string& path) {
  auto s = Store::open(path);
  if (!s.ok()) return s.status();
  store_ = std::move(*s);
  path_ = path;
  return Status::OK();
}

Status Session::RequireStore() {
  if (!store_) return Status::InvalidArgument("no store is open (use .open PATH)");
  return Status::OK();
}

Status Session::Execute(const std::string& command) {
  std::string name, rest;
  SplitCommand(command, &name, &rest);
  if (name.empty()) return Status::OK();
  const CommandInfo* info = FindCommand(name);
  if (!info) {
    if (name[0] == '[' || name[0] == '{')
      return Status::InvalidArgument("unknown command '" + name +
                                     "' (queries go after .q, transactions after .t)");
    return Status::InvalidArgument("unknown command '" + name + "' (try .help)");
  }
  std::string cmd = info->name;
  auto start = std::chrono::steady_clock::now();
  Status st;
  if (cmd == ".help") st = Help(rest);
  else if (cmd == ".exit") exit_ = true;
  else if (cmd == ".open") st = rest.empty() ? Status::InvalidArgument("usage: .open PATH") : Open(rest);
  else if (cmd == ".transact") st = Transact(rest);
  else if (cmd == ".query") st = Query(rest, false);
  else if (cmd == ".explain") st = Query(rest, true);
  else if (cmd == ".datoms") st = Datoms(rest);
  else if (cmd == ".schema") st = Schema(rest);
  else if (cmd == ".format") {
    Format f;
    if (!ParseFormat(rest, &f))
      st = Status::InvalidArgument("unknown format '" + rest + "' (table, edn, json or csv)");
    else
      format_ = f;
  } else if (cmd == ".timer") {
    if (rest == "on") timer_ = true;
    else if (rest == "off") timer_ = false;
    else st = Status::InvalidArgument("usage: .timer on|off");
  }
  if (timer_ && cmd != ".timer") {
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                    .count();
    char buf[64];
    std::snprintf(buf, sizeof buf, "time: %.3f ms\n", ms);
    err_ << buf;
  }
  return st;
}

Status Session::Help(const std::string& rest) {
  if (!rest.empty()) {
    std::string n = rest[0] == '.' ? rest : "." + rest;
    const CommandInfo* c = FindCommand(n);
    if (!c) return Status::InvalidArgument("no command '" + rest + "'");
    out_ << c->name << (c->alias ? std::string(" (") + c->alias + ")" : "") << " " << c->args
         << "\n  " << c->help << "\n";
    return Status::OK();
  }
  for (const auto& c : Commands()) {
    std::string head = std::string(c.name) + (c.alias ? std::string(", ") + c.alias : "") + " " +
                       c.args;
    out_ << head << std::string(head.size() < 36 ? 36 - head.size() : 1, ' ') << c.help << "\n";
  }
  return Status::OK();
}

Status Session::Transact(const std::string& rest) {
  MENTAT_RETURN_IF_ERROR(RequireStore());
  if (rest.empty()) return Status::InvalidArgument("usage: .transact EDN");
  MENTAT_ASSIGN_OR_RETURN(TxReport r, store_->transact(rest));
  auto schema = store_->schema();
  PrintValue(out_, format_ == Format::kJson ? Format::kJson : Format::kEdn, r.ToEdn(schema.get()));
  return Status::OK();
}

Status Session::Query(const std::string& rest, bool explain) {
  MENTAT_RETURN_IF_ERROR(RequireStore());
  if (rest.empty()) return Status::InvalidArgument("usage: .query QUERY [OPTIONS_JSON]");
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
  PrintQueryResult(out_, format_, r);
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
  PrintRows(out_, format_, {"e", "a", "v", "tx", "added"}, rows, edn::Value::Vector(std::move(all)));
  return Status::OK();
}

Status Session::Schema(const std::string& rest) {
  MENTAT_RETURN_IF_ERROR(RequireStore());
  auto schema = store_->schema();
  edn::Vec out;
  std::vector<std::vector<edn::Value>> rows;
  std::string want = rest;
  if (!want.empty() && want[0] == ':') want.erase(0, 1);
  for (const auto& [id, attr] : schema->attributes()) {
    if (want.empty() && attr.ident.rfind("db", 0) == 0 &&
        (attr.ident.size() > 2 && (attr.ident[2] == '/' || attr.ident[2] == '.')))
      continue;  // the bootstrap vocabulary
    if (!want.empty() && attr.ident != want) continue;
    out.push_back(AttributeEdn(attr));
    rows.push_back({edn::Value::Keyword(attr.ident), edn::Value::Keyword(ValueTypeIdent(attr.type)),
                    edn::Value::Keyword(attr.many ? "db.cardinality/many" : "db.cardinality/one"),
                    attr.unique == Unique::kNone       ? edn::Value()
                    : attr.unique == Unique::kIdentity ? edn::Value::Keyword("db.unique/identity")
                                                       : edn::Value::Keyword("db.unique/value"),
                    edn::Value::Bool(attr.index)});
  }
  if (!want.empty() && out.empty()) return Status::NotFound("unknown attribute :" + want);
  PrintRows(out_, format_, {"ident", "valueType", "cardinality", "unique", "index"}, rows,
            edn::Value::Vector(std::move(out)));
  return Status::OK();
}

}  // namespace mentat::cli
