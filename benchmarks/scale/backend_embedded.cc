// The "embedded" backend: mentat's public C++ API on the store file, the way an
// application calls it (Store::q with the query text and QueryOptions on every call).
// "embedded-nocounts" is the same with the optimizer pass value_counts left out (q3 then
// runs as SQL: the figure without the maintained per-value counts); any backend of this
// file named "<name>-without-<pass>[+<pass>...]" leaves out those passes in every query.
#include "mentat/store.h"
#include "scale.h"
#include "variants.h"

namespace mentat::scale {
namespace {

edn::Value Str(const std::string& s) { return edn::Value::String(s); }

Result<Rows> RowsOf(Result<QueryResult> r) {
  if (!r.ok()) return r.status();
  return std::move(r->rows);
}

class EmbeddedSession : public Session {
 public:
  EmbeddedSession(Store* store, std::vector<std::string> disabled)
      : store_(store), disabled_(std::move(disabled)) {}

  Result<Rows> PointLookup(const std::string& email) override {
    QueryOptions o = Defaults();
    o.inputs.emplace_back(Str(email));
    return RowsOf(store_->q(kQ1PointLookup, o));
  }
  Result<Rows> RefTraversal(const std::string& email, std::optional<Entid> as_of) override {
    QueryOptions o = Defaults();
    o.inputs.emplace_back(Str(email));
    if (as_of) o.as_of = TxPoint::Tx(*as_of);
    return RowsOf(store_->q(kQ2RefTraversal, o));
  }
  Result<Rows> Aggregate() override { return RowsOf(store_->q(kQ3Aggregate, Defaults())); }
  Result<Rows> PredicateScan(int64_t min) override {
    QueryOptions o = Defaults();
    o.inputs.emplace_back(edn::Value::Int(min));
    return RowsOf(store_->q(kQ4PredicateScan, o));
  }
  Result<Rows> Since(Entid t) override {
    QueryOptions o = Defaults();
    o.since = TxPoint::Tx(t);
    return RowsOf(store_->q(kQSince, o));
  }
  Result<Rows> InputBindings(const std::vector<std::string>& emails) override {
    edn::Vec v;
    v.reserve(emails.size());
    for (const auto& e : emails) v.push_back(Str(e));
    QueryOptions o = Defaults();
    o.inputs.emplace_back(edn::Value::Vector(std::move(v)));
    return RowsOf(store_->q(kQInputBindings, o));
  }
  Result<edn::Value> Pull(Entid e) override {
    QueryOptions o = Defaults();
    o.inputs.emplace_back(edn::Value::Int(e));
    auto r = store_->q(kQPull, o);
    if (!r.ok()) return r.status();
    if (r->rows.empty() || r->rows[0].empty()) return edn::Value();
    return r->rows[0][0];
  }
  Result<Rows> AllStates() override {
    return RowsOf(store_->q("[:find ?i ?s :where [?i :issue/state ?s]]", Defaults()));
  }
  Status SetState(Entid issue, const std::string& state) override {
    return store_->transact(SetStateTx(issue, state)).status();
  }
  Status AddLabel(Entid issue, const std::string& label) override {
    return store_->transact(AddLabelTx(issue, label)).status();
  }

  // The query text, its options and inputs on every call, as an application calls it: the
  // second source (a Db value), then the rule set as EDN text, then the variant's inputs.
  Result<Rows> RunVariant(const Variant& v, const VariantArgs& args, const Context& ctx,
                          int64_t timeout_ms) override {
    QueryOptions o = Defaults();
    if (timeout_ms > 0) o.timeout_ms = timeout_ms;
    if (v.view == VariantView::kAsOfMid) o.as_of = TxPoint::Tx(ctx.t_mid);
    if (v.view == VariantView::kHistory) o.history = true;
    if (v.source2 == SecondSource::kAsOfMid)
      o.inputs.emplace_back(std::make_shared<const Db>(store_->db().as_of(TxPoint::Tx(ctx.t_mid))));
    if (v.source2 == SecondSource::kSinceT)
      o.inputs.emplace_back(
          std::make_shared<const Db>(store_->db().since(TxPoint::Tx(ctx.t_since))));
    if (!v.rules.empty()) o.inputs.emplace_back(Str(v.rules));
    for (const auto& a : args.values) o.inputs.emplace_back(a);
    return RowsOf(store_->q(v.query, o));
  }

  Result<std::string> Explain(const std::string& scenario, const Context& ctx) override {
    QueryOptions o = Defaults();
    std::string_view q;
    if (scenario == "point_lookup") {
      q = kQ1PointLookup;
      o.inputs.emplace_back(Str(Email(0)));
    } else if (scenario == "ref_traversal" || scenario == "as_of") {
      q = kQ2RefTraversal;
      o.inputs.emplace_back(Str(Email(0)));
      if (scenario == "as_of") o.as_of = TxPoint::Tx(ctx.t_mid);
    } else if (scenario == "aggregate") {
      q = kQ3Aggregate;
    } else if (scenario == "predicate_scan") {
      q = kQ4PredicateScan;
      o.inputs.emplace_back(edn::Value::Int(4));
    } else if (scenario == "since") {
      q = kQSince;
      o.since = TxPoint::Tx(ctx.t_since);
    } else if (scenario == "input_bindings") {
      q = kQInputBindings;
      edn::Vec v;
      for (int64_t u = 0; u < std::min<int64_t>(100, ctx.n_users); ++u) v.push_back(Str(Email(u)));
      o.inputs.emplace_back(edn::Value::Vector(std::move(v)));
    } else if (scenario == "pull") {
      q = kQPull;
      o.inputs.emplace_back(edn::Value::Int(ctx.issue_eids.empty() ? 0 : ctx.issue_eids[0]));
    } else {
      return Status::InvalidArgument("no query for scenario " + scenario);
    }
    auto plan = store_->q_explain(q, o);
    if (!plan.ok()) return plan.status();
    return std::string(q) + "\n\n" + *plan;
  }

 private:
  QueryOptions Defaults() const {
    QueryOptions o;
    o.disabled_passes = disabled_;
    return o;
  }

  Store* store_;
  std::vector<std::string> disabled_;
};

class EmbeddedBackend : public Backend {
 public:
  EmbeddedBackend(std::unique_ptr<Store> store, std::vector<std::string> disabled,
                  std::string label)
      : store_(std::move(store)), disabled_(std::move(disabled)), label_(std::move(label)) {}
  std::string name() const override { return label_; }
  Result<std::unique_ptr<Session>> Connect() override {
    return std::unique_ptr<Session>(new EmbeddedSession(store_.get(), disabled_));
  }

 private:
  std::unique_ptr<Store> store_;
  std::vector<std::string> disabled_;
  std::string label_;
};

}  // namespace

// The attributes "embedded-cache" caches (Store::cache): those the suite's queries read by
// an entity that another pattern found (q1, input_bindings: :user/name; q2: :issue/title
// and :issue/state; q4: :issue/priority and :issue/title).
const char* const kCachedAttributes[] = {":user/name", ":issue/title", ":issue/state",
                                         ":issue/priority"};

Result<std::unique_ptr<Backend>> OpenEmbedded(const std::string& store, bool cached,
                                              std::vector<std::string> disabled,
                                              const std::string& label) {
  Options options;
  options.create = false;
  auto s = Store::open(store, options);
  if (!s.ok()) return s.status();
  if (cached)
    for (const char* a : kCachedAttributes) MENTAT_RETURN_IF_ERROR((*s)->cache(a));
  return std::unique_ptr<Backend>(new EmbeddedBackend(std::move(*s), std::move(disabled), label));
}

}  // namespace mentat::scale
