#include "results.h"

#include <nlohmann/json.hpp>

#include "edn/json_edn.h"

namespace mentat::duckdb_ext {

namespace {

// Serializes compactly; invalid UTF-8 is replaced rather than thrown.
template <typename Json>
std::string Dump(const Json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// edn::FormatInstant's text before the '.', and its fraction digits.
void SplitInstant(int64_t micros, std::string* head, std::string* frac) {
  std::string s = edn::FormatInstant(micros);
  size_t dot = s.rfind('.'), z = s.rfind('Z');
  if (dot == std::string::npos || z == std::string::npos || z < dot) {
    *head = s.substr(0, z == std::string::npos ? s.size() : z);
    frac->clear();
    return;
  }
  *head = s.substr(0, dot);
  *frac = s.substr(dot + 1, z - dot - 1);
}

std::string IsoMicros(int64_t micros) {
  std::string head, frac;
  SplitInstant(micros, &head, &frac);
  frac.resize(6, '0');
  return head + "." + frac + "Z";
}

enum class InstantAs { kMicros, kIso };

nlohmann::json ToJson(const edn::Value& v, InstantAs inst) {
  switch (v.kind()) {
    case edn::Kind::kInst:
      if (inst == InstantAs::kMicros) return v.as_inst_micros();
      return IsoMicros(v.as_inst_micros());
    case edn::Kind::kMap: {
      // A map is a pulled entity (pull in :find included): pull's conventions inside.
      nlohmann::json obj = nlohmann::json::object();
      for (const auto& [k, x] : v.entries()) {
        obj[k.is_string() ? k.str() : edn::Print(k)] = ToJson(x, InstantAs::kMicros);
      }
      return obj;
    }
    case edn::Kind::kList:
    case edn::Kind::kVector:
    case edn::Kind::kSet: {
      nlohmann::json arr = nlohmann::json::array();
      for (const auto& x : v.items()) arr.push_back(ToJson(x, inst));
      return arr;
    }
    default:
      return EdnToJson(v);
  }
}

}  // namespace

std::string Rfc3339(int64_t micros) {
  std::string head, frac;
  SplitInstant(micros, &head, &frac);
  int64_t sub = micros % 1000000;
  if (sub < 0) sub += 1000000;
  if (sub == 0) return head + "+00:00";
  if (sub % 1000 == 0)
    frac.resize(3, '0');
  else
    frac.resize(6, '0');
  return head + "." + frac + "+00:00";
}

std::string TxReportJson(const TxReport& report) {
  // ordered_json keeps the keys in the documented order.
  nlohmann::ordered_json tempids = nlohmann::ordered_json::object();
  for (const auto& [name, id] : report.tempids) tempids[name] = id;
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  out["tx_id"] = report.tx_id;
  out["tx_instant"] = Rfc3339(report.tx_instant);
  out["tempids"] = std::move(tempids);
  return Dump(out);
}

std::string TxReportEdn(const TxReport& report, const Schema* schema) {
  return edn::Print(report.ToEdn(schema));
}

std::string PullJson(const edn::Value& pulled) { return Dump(ToJson(pulled, InstantAs::kMicros)); }

std::string QueryCellJson(const edn::Value& v) { return Dump(ToJson(v, InstantAs::kIso)); }

std::string CellText(const edn::Value& v) {
  if (v.is_string() || v.kind() == edn::Kind::kUri || v.kind() == edn::Kind::kSymbol ||
      v.kind() == edn::Kind::kBigInt || v.kind() == edn::Kind::kBigDec)
    return v.str();
  if (v.is_keyword()) return ":" + v.str();
  return QueryCellJson(v);
}

}  // namespace mentat::duckdb_ext
