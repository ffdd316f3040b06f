// Conversions between edn::Value (the reader's and the store's currency) and Val.
#pragma once

#include "mentat/edn.h"
#include "script/value.h"

namespace mentat::script {

Val FromEdn(const edn::Value& v);

// `strict`: opaque values (functions, atoms, db values...) fail with `what` in the
// message; otherwise they become a symbol holding their printed form.
edn::Value ToEdn(const Val& v, bool strict = false, const char* what = "value");

}  // namespace mentat::script
