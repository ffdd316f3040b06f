// JSON text of scalar values, as mentat's PostgreSQL value column holds them
// (doc/postgres.md "Values"): the pg layer's parameters and the query layer's relations.
#pragma once

#include <string>
#include <string_view>

namespace mentat {

// A double as JSON: shortest round-trip digits, with a fraction or exponent always (so it
// reads back as a double); NaN and infinities, which JSON lacks, as {"d": ...}.
std::string JsonDouble(double d);
// A string as a JSON string literal (quotes, backslashes and control characters escaped).
std::string JsonString(std::string_view s);
// Bytes as the JSON object {"b": "<lowercase hex>"}.
std::string JsonBlob(std::string_view bytes);

}  // namespace mentat
