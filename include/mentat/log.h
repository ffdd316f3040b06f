// The log (Store::tx_range) as data: what the CLI's .log, the scripts' tx-range and both
// extensions' edn_log print.
#pragma once

#include <vector>

#include "mentat/edn.h"
#include "mentat/schema.h"
#include "mentat/store.h"

namespace mentat {

// [{:t 1 :tx-id 268435457 :tx-instant #inst "..." :data [[e :attr v tx added] ...]} ...]:
// attributes as idents (ids when they have none), as Datomic's tx-range gives them.
edn::Value LogToEdn(const std::vector<TxReport>& txs, const Schema& schema);

}  // namespace mentat
