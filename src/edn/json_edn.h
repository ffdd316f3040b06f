// EDN -> JSON for the CLI's JSON output and the extensions' JSON results.
//
// Mapping: nil -> null; booleans, integers and floats -> JSON numbers/booleans (non-finite
// floats -> null); strings -> strings; keywords -> ":ns/name" strings; symbols -> names;
// big numbers -> strings; #inst -> RFC 3339 string; #uuid -> string; bytes -> hex string;
// lists, vectors and sets -> arrays; maps -> objects (non-string keys printed as EDN, so
// keyword keys become ":ns/name").
#pragma once

#include <nlohmann/json.hpp>

#include "mentat/edn.h"

namespace mentat {

nlohmann::json EdnToJson(const edn::Value& v);

}  // namespace mentat
