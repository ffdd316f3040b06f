#include "tx/functions.h"

#include <map>
#include <string>
#include <vector>

#include "schema/codec.h"
#include "storage/format.h"
#include "tx/expand.h"

namespace mentat::tx {

namespace {

constexpr int kMaxCallDepth = 64;
constexpr int64_t kMaxCalls = 1'000'000;

std::string Name(const Schema& schema, Entid e) {
  const std::string* id = schema.ident(e);
  return id ? ":" + *id : std::to_string(e);
}

// The :db/fn source of entity `e`, or std::nullopt when it has none.
Result<std::optional<std::string>> FnOf(storage::Connection* c, Entid e) {
  MENTAT_ASSIGN_OR_RETURN(
      auto st, c->Cached("SELECT v FROM datoms WHERE e = ?1 AND a = " + std::to_string(ids::kFn) +
                         " AND " + storage::IndexTerm(false)));
  st->BindInt(1, e);
  MENTAT_ASSIGN_OR_RETURN(bool row, st->Step());
  std::optional<std::string> out;
  if (row) out = std::string(st->ColumnText(0));
  st->Reset();
  return out;
}

bool IsBuiltinOp(std::string_view op) {
  return op == "db/add" || op == "db/retract" || op == "db/retractEntity" ||
         op == "db.fn/retractEntity" || op == "db/cas" || op == "db.fn/cas";
}

class CallExpander {
 public:
  CallExpander(storage::Connection* c, const Schema& schema, Functions* fns)
      : c_(c), schema_(schema), fns_(fns) {}

  // Appends the forms of `data` to `out`, calls replaced by what they return.
  Status Splice(const edn::Value& data, int depth, edn::Vec* out) {
    for (const edn::Value& form : data.items()) {
      if (!IsCall(form)) {
        out->push_back(form);
        continue;
      }
      MENTAT_ASSIGN_OR_RETURN(edn::Value returned, Call(form, depth));
      MENTAT_RETURN_IF_ERROR(Splice(returned, depth + 1, out));
    }
    return Status::OK();
  }

 private:
  Result<edn::Value> Call(const edn::Value& form, int depth) {
    const edn::Value& op = form.items()[0];
    const std::string name = (op.is_symbol() ? "" : ":") + op.str();
    if (depth >= kMaxCallDepth)
      return ErrorAt(Code::kInvalidArgument, form,
                     "transaction function " + name + ": calls nested deeper than " +
                         std::to_string(kMaxCallDepth) + " (a function that calls itself?)");
    if (++calls_ > kMaxCalls)
      return ErrorAt(Code::kInvalidArgument, form,
                     "more than " + std::to_string(kMaxCalls) +
                         " transaction function calls in one transaction");
    std::optional<Entid> e = schema_.entid(op.str());
    std::optional<std::string> source;
    if (e) {
      MENTAT_ASSIGN_OR_RETURN(source, FnOf(c_, *e));
    }
    if (!source)
      return ErrorAt(Code::kInvalidArgument, op,
                     "unknown operation " + name +
                         " (expected :db/add, :db/retract, :db/retractEntity, :db/cas, or the "
                         "ident of a transaction function: an entity with :db/fn)");
    if (!fns_)
      return ErrorAt(Code::kUnsupported, op,
                     "transaction function " + name + ": functions cannot run here");
    std::vector<edn::Value> args(form.items().begin() + 1, form.items().end());
    Result<edn::Value> r = fns_->Apply(*source, true, args);
    if (!r.ok())
      return ErrorAt(r.status().code(), form,
                     "transaction function " + name + ": " + r.status().message());
    if (r->is_nil()) return edn::Value::Vector({});
    if (!r->is_vector() && !r->is_list())
      return ErrorAt(Code::kInvalidArgument, form,
                     "transaction function " + name +
                         " must return transaction data (a vector of forms), got " +
                         edn::Print(*r));
    return std::move(*r);
  }

  storage::Connection* c_;
  const Schema& schema_;
  Functions* fns_;
  int64_t calls_ = 0;
};

// The symbols of `params`, printed, for a function map's :params.
Result<std::string> Params(const edn::Value& params) {
  if (!params.is_vector())
    return Status::Schema(":db/fn :params must be a vector of symbols, got " + edn::Print(params));
  std::string out = "[";
  for (const edn::Value& p : params.items()) {
    if (!p.is_symbol())
      return Status::Schema(":db/fn :params must be a vector of symbols, got " + edn::Print(p));
    if (out.size() > 1) out += ' ';
    out += p.str();
  }
  return out + "]";
}

}  // namespace

bool IsCall(const edn::Value& form) {
  if (!form.is_vector() && !form.is_list()) return false;
  if (form.items().empty()) return false;
  const edn::Value& op = form.items()[0];
  if (op.is_symbol()) return true;
  return op.is_keyword() && !IsBuiltinOp(op.str());
}

Result<edn::Value> FunctionSource(const edn::Value& v) {
  if (!v.is_map()) return v;  // a string (or a wrong type, which the value check names)
  const edn::Value* lang = nullptr;
  const edn::Value* params = nullptr;
  const edn::Value* code = nullptr;
  const edn::Value* requires_ = nullptr;
  for (const auto& [k, x] : v.entries()) {
    if (k.is_keyword("lang")) {
      lang = &x;
    } else if (k.is_keyword("params")) {
      params = &x;
    } else if (k.is_keyword("code")) {
      code = &x;
    } else if (k.is_keyword("requires")) {
      requires_ = &x;
    } else if (k.is_keyword("imports")) {
      if (!x.is_seq() || !x.items().empty())
        return Status::Schema(":db/fn :imports names Java classes, which scripts cannot use");
    } else {
      return Status::Schema(":db/fn map has an unknown key " + edn::Print(k) +
                            " (expected :lang, :params, :code, :requires)");
    }
  }
  if (lang) {
    std::string l = lang->is_string() || lang->is_keyword() || lang->is_symbol() ? lang->str() : "";
    if (l != "clojure" && l != "mentat")
      return Status::Schema(":db/fn :lang must be \"clojure\" (the script language), got " +
                            edn::Print(*lang));
  }
  if (!params) return Status::Schema(":db/fn map needs :params, a vector of symbols");
  if (!code) return Status::Schema(":db/fn map needs :code, the function's body");
  MENTAT_ASSIGN_OR_RETURN(std::string ps, Params(*params));
  std::string body = code->is_string() ? code->str() : edn::Print(*code);
  std::string out;
  if (requires_) {
    if (!requires_->is_seq())
      return Status::Schema(":db/fn :requires must be a vector, got " + edn::Print(*requires_));
    for (const edn::Value& r : requires_->items()) out += "(require '" + edn::Print(r) + ") ";
  }
  // The body keeps its lines (an error's line:column counts within :code).
  out += "(fn " + ps + " " + body + "\n)";
  if (requires_) out = "(do " + out + ")";
  edn::Value s = edn::Value::String(out);
  s.set_pos(v.pos());
  return s;
}

Result<std::optional<edn::Value>> ExpandCalls(storage::Connection* c, const Schema& schema,
                                              Functions* fns, const edn::Value& data) {
  if (!data.is_vector() && !data.is_list()) return std::optional<edn::Value>();
  bool any = false;
  for (const edn::Value& form : data.items()) any = any || IsCall(form);
  if (!any) return std::optional<edn::Value>();
  CallExpander x(c, schema, fns);
  edn::Vec out;
  out.reserve(data.size());
  MENTAT_RETURN_IF_ERROR(x.Splice(data, 0, &out));
  edn::Value v = edn::Value::Vector(std::move(out));
  v.set_pos(data.pos());
  return std::optional<edn::Value>(std::move(v));
}

Result<std::string> PredicateSource(storage::Connection* c, const Schema& schema,
                                    const edn::Value& symbol) {
  if (std::optional<Entid> e = schema.entid(symbol.str())) {
    MENTAT_ASSIGN_OR_RETURN(std::optional<std::string> source, FnOf(c, *e));
    if (source) return *source;
  }
  return symbol.str();
}

Status CheckAttributePredicates(storage::Connection* c, const Schema& schema,
                                const Changes& changes, Functions* fns) {
  // The predicates are the schema's (Attribute::preds, kept current by the schema
  // generation), so a transaction reads nothing for them.
  std::map<std::string, std::string> sources;  // symbol -> script source
  for (const Change& ch : changes.asserted) {
    const Attribute* attr = schema.attribute(ch.a);
    if (!attr || attr->preds.empty()) continue;
    edn::Value value = schema::Decode(ch.v, attr->type);
    for (const std::string& name : attr->preds) {
      const edn::Value pred = edn::Value::Symbol(name);
      auto [src, fresh] = sources.try_emplace(pred.str());
      if (fresh) {
        MENTAT_ASSIGN_OR_RETURN(src->second, PredicateSource(c, schema, pred));
      }
      if (!fns)
        return Status::Unsupported(":db.attr/preds of " + Name(schema, ch.a) +
                                   ": predicates cannot run here");
      Result<edn::Value> r = fns->Apply(src->second, false, {value});
      if (!r.ok())
        return Status(r.status().code(), ":db.attr/preds " + pred.str() + " of " +
                                             Name(schema, ch.a) + ": " + r.status().message());
      if (r->is_nil() || (r->is_bool() && !r->as_bool()))
        return Status::Schema("entity " + std::to_string(ch.e) + ": value " + edn::Print(value) +
                              " of " + Name(schema, ch.a) + " fails its predicate " + pred.str() +
                              " (:db.attr/preds)");
    }
  }
  return Status::OK();
}

}  // namespace mentat::tx
