// Test helpers: run queries through the engine directly (query::ExecContext over a
// store's connection), independent of the Store glue.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mentat/store.h"
#include "query/query.h"
#include "store/store_impl.h"

namespace mentat::query::testing {

class QueryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = Store::open("");
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::shared_ptr<Store>(std::move(*s));
  }

  Entid Tx(std::string_view edn) {
    auto r = store_->transact(edn);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->tx_id : 0;
  }

  std::map<std::string, Entid> TxIds(std::string_view edn) {
    auto r = store_->transact(edn);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->tempids : std::map<std::string, Entid>{};
  }

  // Runs `fn` with a context over a fresh read transaction.
  template <typename T>
  Result<T> With(const std::function<void(ExecContext&)>& tweak,
                 const std::function<Result<T>(const ExecContext&)>& fn) {
    return ImplOf(store_)->Read([&](StoreImpl::Conn* c) -> Result<T> {
      ExecContext ctx;
      ctx.conn = c->db.get();
      ctx.schema = c->schema.get();
      ctx.schema_gen = static_cast<uint64_t>(c->schema_gen);
      ctx.interrupt_gen = &ImplOf(store_)->interrupt_gen();
      ctx.start_gen = ImplOf(store_)->interrupt_gen().load();
      if (tweak) tweak(ctx);
      return fn(ctx);
    });
  }

  Result<QueryResult> Q(std::string_view q, std::vector<Input> inputs = {},
                        const std::function<void(ExecContext&)>& tweak = {}) {
    return With<QueryResult>(tweak,
                             [&](const ExecContext& ctx) { return query::Run(ctx, q, inputs); });
  }

  // The query's result as EDN text, or "error: <message>".
  std::string QE(std::string_view q, std::vector<Input> inputs = {},
                 const std::function<void(ExecContext&)>& tweak = {}) {
    auto r = Q(q, std::move(inputs), tweak);
    if (!r.ok()) return "error: " + r.status().message();
    return edn::Print(r->ToEdn());
  }

  Result<std::string> ExplainQ(std::string_view q, std::vector<Input> inputs = {},
                               const std::function<void(ExecContext&)>& tweak = {}) {
    return With<std::string>(
        tweak, [&](const ExecContext& ctx) { return query::Explain(ctx, q, inputs); });
  }

  static edn::Value V(std::string_view text) {
    auto v = edn::Read(text);
    EXPECT_TRUE(v.ok()) << v.status().ToString();
    return v.ok() ? *v : edn::Value();
  }

  std::shared_ptr<Store> store_;
};

}  // namespace mentat::query::testing
