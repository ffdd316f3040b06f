// Pass 1: EDN transaction data -> terms.
#pragma once

#include <vector>

#include "mentat/edn.h"
#include "mentat/schema.h"
#include "mentat/status.h"
#include "tx/terms.h"

namespace mentat::tx {

// Prefixes `msg` with "line:col: " when `at` came from text.
Status ErrorAt(Code code, const edn::Value& at, const std::string& msg);
Status ErrorAt(Code code, edn::Pos pos, const std::string& msg);

// Expands every form of `data` (a vector or list of list forms and entity maps).
Result<std::vector<Term>> Expand(const Schema& schema, const edn::Value& data);

}  // namespace mentat::tx
