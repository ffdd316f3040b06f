// Fuzz target: the query parser, analyzer, planner, SQL generation and execution, on a
// small store (fuzz_store.h).
//
// The input is a query; the first byte picks the database (current, as-of, since,
// history) and whether the planner runs. Every query runs with a short timeout so that
// expensive (but legal) queries end. Invariants: never a crash or an internal error;
// errors have messages; explain agrees with the query on whether it is valid.
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_store.h"

namespace {
std::unique_ptr<mentat::Store> g_store;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using mentat::Code;
  using mentat::fuzz::Fail;
  if (size < 1 || size > 8 * 1024) return 0;
  if (!g_store) g_store = mentat::fuzz::MakeFuzzStore();
  uint8_t mode = data[0];
  std::string_view query(reinterpret_cast<const char*>(data + 1), size - 1);
  mentat::QueryOptions o;
  o.timeout_ms = 200;
  o.use_planner = (mode & 0x10) == 0;
  auto last = g_store->last_tx();
  if (!last.ok()) Fail("last_tx: " + last.status().ToString());
  switch (mode & 3) {
    case 1:
      o.as_of = mentat::TxPoint::Tx(*last - 1);
      break;
    case 2:
      o.since = mentat::TxPoint::Tx(*last - 1);
      break;
    case 3:
      o.history = true;
      break;
    default:
      break;
  }
  auto r = g_store->q(query, o);
  if (!r.ok()) {
    if (r.status().code() == Code::kInternal) Fail("internal error: " + r.status().ToString());
    if (r.status().message().empty()) Fail("an error without a message");
  } else {
    (void)r->ToEdn();
  }
  auto e = g_store->q_explain(query, o);
  if (!e.ok() && e.status().code() == Code::kInternal)
    Fail("internal error in explain: " + e.status().ToString());
  if (r.ok() && !e.ok() && e.status().code() != Code::kInterrupted &&
      e.status().code() != Code::kUnsupported)
    Fail("the query ran but explain refused it: " + e.status().ToString());
  return 0;
}
