// Cells of imported files as values: CSV and JSON cells typed by their attribute.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "import.h"
#include "mentat/edn.h"
#include "mentat/schema.h"
#include "mentat/status.h"

namespace mentat::cli {

// `s` without surrounding spaces and tabs.
std::string Trim(std::string_view s);
// A decimal integer (optional sign) that fits in 64 bits, exactly.
bool ParseLong(const std::string& s, int64_t* out);
// A :db/id cell: an entity id, an ident (":a/b"), a lookup ref ("[:a/b v]") or a tempid.
Result<edn::Value> EntityRef(const std::string& cell);
// The non-empty cell `cell` as a value of `attr`'s type (a tagged EDN literal such as
// #inst "..." is read as EDN). Errors: kInvalidArgument "expected a long, got \"x\"".
Result<edn::Value> TypedCell(const Attribute& attr, const std::string& cell);
// What `stats` committed: "nothing", or "N transactions (M datoms)".
std::string Committed(const ImportStats& stats);

}  // namespace mentat::cli
