#include "json_shapes.h"

#include "util/json_edn.h"

namespace mentat::sqlite_ext {

namespace {

// edn::FormatInstant prints 3 fraction digits when the microseconds are whole
// milliseconds, else 6; returns the text before the '.', and the fraction digits.
void SplitInstant(int64_t micros, std::string* head, std::string* frac) {
  std::string s = edn::FormatInstant(micros);
  size_t dot = s.rfind('.');
  size_t z = s.rfind('Z');
  if (dot == std::string::npos || z == std::string::npos || z < dot) {
    *head = s;
    frac->clear();
    return;
  }
  *head = s.substr(0, dot);
  *frac = s.substr(dot + 1, z - dot - 1);
}

nlohmann::json MapJson(const edn::Value& m, nlohmann::json (*value)(const edn::Value&)) {
  nlohmann::json obj = nlohmann::json::object();
  for (const auto& [k, v] : m.entries()) {
    std::string key = k.is_string() ? k.str() : edn::Print(k);
    obj[key] = value(v);
  }
  return obj;
}

}  // namespace

std::string Rfc3339(int64_t micros) {
  std::string head, frac;
  SplitInstant(micros, &head, &frac);
  int64_t sub = micros % 1000000;
  if (sub < 0) sub += 1000000;
  if (sub == 0) return head + "+00:00";
  if (frac.size() == 3 && sub % 1000 != 0) frac += "000";  // not expected; be exact
  return head + "." + frac + "+00:00";
}

std::string IsoMicros(int64_t micros) {
  std::string head, frac;
  SplitInstant(micros, &head, &frac);
  while (frac.size() < 6) frac += '0';
  return head + "." + frac + "Z";
}

nlohmann::json QueryValueJson(const edn::Value& v) {
  switch (v.kind()) {
    case edn::Kind::kInst:
      return IsoMicros(v.as_inst_micros());
    case edn::Kind::kMap:
      return MapJson(v, PullValueJson);  // a (pull ...) element
    case edn::Kind::kList:
    case edn::Kind::kVector:
    case edn::Kind::kSet: {
      nlohmann::json arr = nlohmann::json::array();
      for (const auto& x : v.items()) arr.push_back(QueryValueJson(x));
      return arr;
    }
    default:
      return EdnToJson(v);
  }
}

nlohmann::json PullValueJson(const edn::Value& v) {
  switch (v.kind()) {
    case edn::Kind::kInst:
      return v.as_inst_micros();
    case edn::Kind::kMap:
      return MapJson(v, PullValueJson);
    case edn::Kind::kList:
    case edn::Kind::kVector:
    case edn::Kind::kSet: {
      nlohmann::json arr = nlohmann::json::array();
      for (const auto& x : v.items()) arr.push_back(PullValueJson(x));
      return arr;
    }
    default:
      return EdnToJson(v);
  }
}

bool IsAggregateColumn(const std::string& column) {
  return column.size() > 1 && column[0] == '(' && column.rfind("(pull ", 0) != 0 &&
         column.rfind("(the ", 0) != 0;
}

nlohmann::json TxReportJson(const TxReport& report) {
  nlohmann::json tempids = nlohmann::json::object();
  for (const auto& [k, id] : report.tempids) tempids[k] = id;
  return nlohmann::json{{"tx_id", report.tx_id},
                        {"tx_instant", Rfc3339(report.tx_instant)},
                        {"tempids", std::move(tempids)}};
}

nlohmann::json QueryResultJson(const QueryResult& r) {
  auto row_json = [&](const std::vector<edn::Value>& row) {
    if (!r.map_keys.empty()) {
      nlohmann::json obj = nlohmann::json::object();
      for (size_t i = 0; i < row.size() && i < r.map_keys.size(); ++i) {
        const edn::Value& k = r.map_keys[i];
        obj[k.is_string() ? k.str() : edn::Print(k)] = QueryValueJson(row[i]);
      }
      return obj;
    }
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& x : row) arr.push_back(QueryValueJson(x));
    return arr;
  };
  nlohmann::json out = nlohmann::json::object();
  switch (r.shape) {
    case QueryResult::Shape::kRelation: {
      if (r.columns.size() == 1 && IsAggregateColumn(r.columns[0]) && r.rows.size() == 1 &&
          r.map_keys.empty() && !r.rows[0].empty()) {
        out["result"] = QueryValueJson(r.rows[0][0]);
        return out;
      }
      nlohmann::json rows = nlohmann::json::array();
      for (const auto& row : r.rows) rows.push_back(row_json(row));
      out["columns"] = r.columns;
      out["result"] = rows;
      out["results"] = std::move(rows);
      return out;
    }
    case QueryResult::Shape::kCollection: {
      nlohmann::json vals = nlohmann::json::array();
      for (const auto& row : r.rows) vals.push_back(row.empty() ? nullptr : QueryValueJson(row[0]));
      out["result"] = std::move(vals);
      return out;
    }
    case QueryResult::Shape::kTuple:
      out["result"] = r.rows.empty() ? nlohmann::json(nullptr) : row_json(r.rows[0]);
      return out;
    case QueryResult::Shape::kScalar:
      out["result"] = r.rows.empty() || r.rows[0].empty() ? nlohmann::json(nullptr)
                                                          : QueryValueJson(r.rows[0][0]);
      return out;
  }
  return out;
}

std::string Dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace mentat::sqlite_ext
