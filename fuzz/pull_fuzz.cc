// Fuzz target: pull patterns on a small store (fuzz_store.h).
//
// The input is a pull pattern; the first byte picks the entity (an id, an ident, a lookup
// ref, a missing entity) and pull or pull_many. Invariants: never a crash or an internal
// error; errors have messages.
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_store.h"

namespace {
std::unique_ptr<mentat::Store> g_store;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace edn = mentat::edn;
  using mentat::Code;
  using mentat::fuzz::Fail;
  if (size < 1 || size > 8 * 1024) return 0;
  if (!g_store) g_store = mentat::fuzz::MakeFuzzStore();
  std::string_view pattern(reinterpret_cast<const char*>(data + 1), size - 1);
  const edn::Value eids[] = {
      edn::Value::Int(65536),
      edn::Value::Int(65537),
      edn::Value::Keyword("f/name"),
      edn::Value::Vector({edn::Value::Keyword("f/name"), edn::Value::String("carol")}),
      edn::Value::Vector({edn::Value::Keyword("f/name"), edn::Value::String("nobody")}),
      edn::Value::Int(987654321),
      edn::Value::Int(-1),
      edn::Value::String("not an entity"),
  };
  const edn::Value& eid = eids[data[0] % 8];
  if (data[0] & 0x80) {
    auto r = g_store->pull_many(pattern, {eids[0], eids[1], eid});
    if (!r.ok() && r.status().code() == Code::kInternal) Fail("internal: " + r.status().ToString());
    if (!r.ok() && r.status().message().empty()) Fail("an error without a message");
  } else {
    auto r = g_store->pull(pattern, eid);
    if (!r.ok() && r.status().code() == Code::kInternal) Fail("internal: " + r.status().ToString());
    if (!r.ok() && r.status().message().empty()) Fail("an error without a message");
    if (r.ok()) (void)edn::Print(*r);
  }
  return 0;
}
