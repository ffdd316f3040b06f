// Conversions between edn::Value (the reader's and the store's currency) and Val.
#pragma once

#include "mentat/edn.h"
#include "script/value.h"

namespace mentat::script {

// Script values are charged as they are made (Make, Val::Text and the collection
// builders charge the heap and the meter).
Val FromEdn(const edn::Value& v);

// `strict`: opaque values (functions, atoms, db values...) fail with `what` in the
// message; otherwise they become a symbol holding their printed form. A step per element
// and per kBytesPerStep bytes of text; the edn tree counts against the memory limit
// while it is built (LimitError past it), and for as long as `charge` lives when given.
edn::Value ToEdn(const Val& v, bool strict = false, const char* what = "value",
                 ScopedCharge* charge = nullptr);

// edn::Read under the memory limit: `charge` takes the worst case of the tree the text
// can become (a value per two bytes) before reading, so a huge text fails up front.
Result<edn::Value> ReadCharged(std::string_view text, const edn::ReadOptions& options,
                               ScopedCharge* charge);

}  // namespace mentat::script
