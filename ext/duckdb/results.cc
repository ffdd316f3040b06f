#include "results.h"

#include <nlohmann/json.hpp>

#include "util/json_edn.h"

namespace mentat::duckdb_ext {

std::string TxReportJson(const TxReport& report) {
  // ordered_json keeps the keys in the documented order.
  nlohmann::ordered_json tempids = nlohmann::ordered_json::object();
  for (const auto& [name, id] : report.tempids) tempids[name] = id;
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  out["tx_id"] = report.tx_id;
  out["tx_instant"] = edn::FormatInstant(report.tx_instant);
  out["tempids"] = std::move(tempids);
  return out.dump();
}

std::string ValueJson(const edn::Value& v) { return EdnToJson(v).dump(); }

std::string CellText(const edn::Value& v) {
  if (v.is_string()) return v.str();
  if (v.is_keyword()) return ":" + v.str();
  return ValueJson(v);
}

}  // namespace mentat::duckdb_ext
