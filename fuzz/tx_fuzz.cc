// Fuzz target: transaction data against a small schema (fuzz_store.h).
//
// The input is EDN transaction data. Even-first-byte inputs run speculatively (with);
// the others commit, on a store that is rebuilt every few hundred commits so it stays
// small. Invariants: a failed transaction writes nothing (last_tx and the datom count do
// not move) and says why; a committed one reports a new tx id with its :db/txInstant.
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_store.h"

namespace {

using mentat::Code;
using mentat::fuzz::Fail;

std::unique_ptr<mentat::Store> g_store;
int g_commits = 0;

size_t DatomCount(mentat::Store* s) {
  auto d = s->datoms(":eavt", {});
  if (!d.ok()) Fail("datoms failed: " + d.status().ToString());
  return d->size();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > 16 * 1024) return 0;
  if (!g_store || g_commits > 300) {
    g_store = mentat::fuzz::MakeFuzzStore();
    g_commits = 0;
  }
  bool commit = data[0] & 1;
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  auto before_tx = g_store->last_tx();
  if (!before_tx.ok()) Fail("last_tx: " + before_tx.status().ToString());
  size_t before_count = DatomCount(g_store.get());
  auto r = commit ? g_store->transact(text) : g_store->with(text);
  if (!r.ok()) {
    if (r.status().code() == Code::kInternal) Fail("internal error: " + r.status().ToString());
    if (r.status().message().empty()) Fail("an error without a message");
  } else {
    if (r->tx_id <= *before_tx) Fail("tx id did not advance");
    bool has_instant = false;
    for (const auto& d : r->tx_data)
      if (d.e == r->tx_id && d.a == 4 /* :db/txInstant */ && d.added) has_instant = true;
    if (!has_instant) Fail("the report has no :db/txInstant datom");
  }
  auto after_tx = g_store->last_tx();
  if (!after_tx.ok()) Fail("last_tx: " + after_tx.status().ToString());
  if (!commit || !r.ok()) {
    if (*after_tx != *before_tx) Fail("a failed or speculative transaction moved last_tx");
    if (DatomCount(g_store.get()) != before_count)
      Fail("a failed or speculative transaction changed the datoms");
  } else {
    if (*after_tx != r->tx_id) Fail("last_tx is not the committed tx");
    ++g_commits;
  }
  return 0;
}
