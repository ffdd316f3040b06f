// mentat::options_from_json: the one parser of query options for the CLI and the SQLite
// and DuckDB extensions.
//
//   {"inputs": [...], "asOf": t, "since": t, "history": true, "timeout": ms, "planner": false}
//
// Inputs are positional for the query's :in items after a leading `$`, shaped by them:
// numbers are longs (entity ids in entity places), strings starting with ':' are
// keywords, "#inst \"...\"", "#uuid \"...\"" and "#uri \"...\"" strings are instants, uuids and
// uris, other strings are strings, arrays are tuples, collections or relations (or lookup refs),
// and a `%` input is the rule set as EDN text in a string. asOf and since take a tx id (a number)
// or an instant (an RFC 3339 string, or "#inst ...").
#include <nlohmann/json.hpp>

#include "query/ast.h"
#include "query/passes.h"
#include "query/query.h"

namespace mentat {

namespace {

using nlohmann::json;

Status Bad(const std::string& msg) { return Status::InvalidArgument("options: " + msg); }

Result<edn::Value> ToEdn(const json& j, const std::string& where) {
  switch (j.type()) {
    case json::value_t::boolean:
      return edn::Value::Bool(j.get<bool>());
    case json::value_t::number_integer:
      return edn::Value::Int(j.get<int64_t>());
    case json::value_t::number_unsigned: {
      uint64_t u = j.get<uint64_t>();
      if (u > static_cast<uint64_t>(INT64_MAX)) return Bad(where + ": integer out of range");
      return edn::Value::Int(static_cast<int64_t>(u));
    }
    case json::value_t::number_float:
      return edn::Value::Float(j.get<double>());
    case json::value_t::string: {
      const std::string& s = j.get_ref<const std::string&>();
      if (s.size() > 1 && s[0] == ':') return edn::Value::Keyword(s.substr(1));
      if (s.rfind("#inst ", 0) == 0 || s.rfind("#uuid ", 0) == 0 || s.rfind("#uri ", 0) == 0) {
        auto v = edn::Read(s);
        if (!v.ok()) return Bad(where + ": " + v.status().message());
        return *v;
      }
      return edn::Value::String(s);
    }
    case json::value_t::array: {
      edn::Vec items;
      for (size_t i = 0; i < j.size(); ++i) {
        MENTAT_ASSIGN_OR_RETURN(edn::Value x, ToEdn(j[i], where));
        items.push_back(std::move(x));
      }
      return edn::Value::Vector(std::move(items));
    }
    case json::value_t::null:
      return Bad(where + ": null is not a value");
    default:
      return Bad(where + ": objects are not values (use an array)");
  }
}

Result<TxPoint> ToPoint(const json& j, const char* key) {
  if (j.is_number_integer() || j.is_number_unsigned()) return TxPoint::Tx(j.get<int64_t>());
  if (j.is_string()) {
    std::string s = j.get<std::string>();
    if (s.rfind("#inst", 0) == 0) {
      auto v = edn::Read(s);
      if (!v.ok() || !v->is_inst()) return Bad(std::string(key) + ": invalid instant " + s);
      return TxPoint::Instant(v->as_inst_micros());
    }
    auto t = edn::ParseInstant(s);
    if (!t.ok()) return Bad(std::string(key) + ": " + t.status().message());
    return TxPoint::Instant(*t);
  }
  return Bad(std::string(key) + " must be a tx id (number) or an instant (string)");
}

}  // namespace

Result<QueryOptions> options_from_json(std::string_view query, std::string_view text) {
  QueryOptions opts;
  json j;
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return opts;
  try {
    j = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {  // parse errors and number overflow (1e616)
    return Bad(std::string("invalid JSON: ") + e.what());
  }
  if (!j.is_object()) return Bad("expected a JSON object");
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    const json& v = it.value();
    if (key == "inputs") {
      if (!v.is_array()) return Bad("inputs must be an array");
    } else if (key == "asOf") {
      MENTAT_ASSIGN_OR_RETURN(TxPoint p, ToPoint(v, "asOf"));
      opts.as_of = p;
    } else if (key == "since") {
      MENTAT_ASSIGN_OR_RETURN(TxPoint p, ToPoint(v, "since"));
      opts.since = p;
    } else if (key == "history") {
      if (!v.is_boolean()) return Bad("history must be true or false");
      opts.history = v.get<bool>();
    } else if (key == "timeout") {
      if (!(v.is_number_integer() || v.is_number_unsigned()) || v.get<int64_t>() < 0)
        return Bad("timeout must be a non-negative number of milliseconds");
      opts.timeout_ms = v.get<int64_t>();
    } else if (key == "planner") {
      if (!v.is_boolean()) return Bad("planner must be true or false");
      opts.use_planner = v.get<bool>();
    } else if (key == "analyze") {
      if (!v.is_boolean()) return Bad("analyze must be true or false");
      opts.analyze = v.get<bool>();
    } else if (key == "disabledPasses") {
      if (!v.is_array()) return Bad("disabledPasses must be an array of pass names");
      for (const json& n : v) {
        if (!n.is_string()) return Bad("disabledPasses must be an array of pass names");
        opts.disabled_passes.push_back(n.get<std::string>());
      }
      auto known = query::CheckPassNames(opts.disabled_passes);
      if (!known.ok()) return Bad("disabledPasses: " + known.message());
    } else {
      return Bad("unknown option \"" + key +
                 "\" (expected inputs, asOf, since, history, timeout, planner, disabledPasses)");
    }
  }
  auto in = j.find("inputs");
  if (in == j.end()) return opts;
  MENTAT_ASSIGN_OR_RETURN(auto prepared, query::Prepared::Parse(query));
  const query::ParsedQuery& q = prepared->parsed();
  std::vector<const query::InSpec*> specs;
  // JSON cannot give a database: a leading source is the store's.
  for (size_t i = query::ImplicitSources(q, false); i < q.in.size(); ++i) specs.push_back(&q.in[i]);
  if (in->size() != specs.size()) {
    std::string msg = "the query takes " + std::to_string(specs.size()) + " input" +
                      (specs.size() == 1 ? "" : "s") + " after $, inputs has " +
                      std::to_string(in->size());
    // Name the first :in element without a value (or the last one, for extra inputs).
    const query::InSpec* at = in->size() < specs.size() ? specs[in->size()]
                              : specs.empty()           ? nullptr
                                                        : specs.back();
    if (at) {
      std::string pos = query::PosText(at->form);
      msg += std::string(in->size() < specs.size() ? ": no value for " : ": the last is ") +
             edn::Print(at->form) + (pos.empty() ? "" : " at " + pos);
    }
    return Bad(msg);
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    const query::InSpec& s = *specs[i];
    const json& x = (*in)[i];
    std::string pos = query::PosText(s.form);
    std::string where = "input " + std::to_string(i + 1) + " (" + edn::Print(s.form) +
                        (pos.empty() ? "" : " at " + pos) + ")";
    using K = query::InSpec::Kind;
    switch (s.kind) {
      case K::kSrc:
        return Bad(where + ": a database cannot be given in JSON");
      case K::kRules: {
        if (!x.is_string()) return Bad(where + ": rules must be EDN text in a string");
        auto r = edn::Read(x.get<std::string>(), query::QueryReadOptions());
        if (!r.ok()) return Bad(where + ": " + r.status().message());
        if (!r->is_vector()) return Bad(where + ": rules must be a vector of rules");
        opts.inputs.emplace_back(*r);
        break;
      }
      case K::kBlank:
      case K::kScalar: {
        MENTAT_ASSIGN_OR_RETURN(edn::Value v, ToEdn(x, where));
        opts.inputs.emplace_back(std::move(v));
        break;
      }
      case K::kTuple:
        if (!x.is_array() || x.size() != s.vars.size())
          return Bad(where + ": expected an array of " + std::to_string(s.vars.size()) + " values");
        [[fallthrough]];
      case K::kColl: {
        if (!x.is_array()) return Bad(where + ": expected an array");
        MENTAT_ASSIGN_OR_RETURN(edn::Value v, ToEdn(x, where));
        opts.inputs.emplace_back(std::move(v));
        break;
      }
      case K::kRel: {
        if (!x.is_array()) return Bad(where + ": expected an array of arrays");
        for (const json& row : x)
          if (!row.is_array() || row.size() != s.vars.size())
            return Bad(where + ": every row must be an array of " + std::to_string(s.vars.size()) +
                       " values");
        MENTAT_ASSIGN_OR_RETURN(edn::Value v, ToEdn(x, where));
        opts.inputs.emplace_back(std::move(v));
        break;
      }
    }
  }
  return opts;
}

}  // namespace mentat
