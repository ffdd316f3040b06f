#include "edn/json_edn.h"

#include <cmath>

namespace mentat {

nlohmann::json EdnToJson(const edn::Value& v) {
  using edn::Kind;
  switch (v.kind()) {
    case Kind::kNil:
      return nullptr;
    case Kind::kBool:
      return v.as_bool();
    case Kind::kInt:
      return v.as_int();
    case Kind::kFloat: {
      double d = v.as_double();
      if (!std::isfinite(d)) return nullptr;
      return d;
    }
    case Kind::kBigInt:
    case Kind::kBigDec:
    case Kind::kString:
    case Kind::kUri:
      return v.str();
    case Kind::kChar: {
      std::string s = edn::Print(v);
      return s.size() > 1 ? s.substr(1) : s;
    }
    case Kind::kKeyword:
      return ":" + v.str();
    case Kind::kSymbol:
      return v.str();
    case Kind::kInst:
      return edn::FormatInstant(v.as_inst_micros());
    case Kind::kUuid:
      return edn::FormatUuid(v.as_uuid());
    case Kind::kBytes: {
      static const char* kHex = "0123456789abcdef";
      std::string out;
      for (unsigned char c : v.str()) {
        out += kHex[c >> 4];
        out += kHex[c & 15];
      }
      return out;
    }
    case Kind::kList:
    case Kind::kVector:
    case Kind::kSet: {
      nlohmann::json arr = nlohmann::json::array();
      for (const auto& x : v.items()) arr.push_back(EdnToJson(x));
      return arr;
    }
    case Kind::kMap: {
      nlohmann::json obj = nlohmann::json::object();
      for (const auto& [k, x] : v.entries()) {
        std::string key = k.is_string() ? k.str() : edn::Print(k);
        obj[key] = EdnToJson(x);
      }
      return obj;
    }
  }
  return nullptr;
}

}  // namespace mentat
