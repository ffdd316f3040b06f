// Store::pull and Db::pull: the glue to the pull subsystem (src/pull).
#include "mentat/store.h"
#include "pull/pull.h"
#include "store/store_impl.h"
#include "views/views.h"

namespace mentat {

namespace {

Result<std::vector<edn::Value>> PullIn(const Db& db, std::string_view pattern,
                                       const std::vector<edn::Value>& eids) {
  MENTAT_ASSIGN_OR_RETURN(edn::Value p, edn::Read(pattern));
  return ImplOf(db.store())->Read([&](StoreImpl::Conn* c) -> Result<std::vector<edn::Value>> {
    MENTAT_ASSIGN_OR_RETURN(ResolvedView view, StoreImpl::ResolveViewOn(c, db));
    // A pull result has one value per cardinality-one attribute, so on a history database
    // pull reads the entity at the database's time bounds (its as-of/since, else now), as
    // (pull ?e pattern) in :find does on a history database. Datomic refuses pull there;
    // the Rust mentat's scripting asks for it to work (issue 10).
    view.history = false;
    MENTAT_ASSIGN_OR_RETURN(auto parsed, pull::ParsePattern(*c->schema, p));
    // Identifiers that name nothing (an unknown ident, a lookup ref without a match) pull
    // as nil, as in Datomic.
    std::vector<Entid> ids;
    std::vector<int64_t> slot(eids.size(), -1);
    for (size_t i = 0; i < eids.size(); ++i) {
      MENTAT_ASSIGN_OR_RETURN(auto e, pull::ResolveEntity(c->db.get(), *c->schema, view, eids[i]));
      if (!e) continue;
      slot[i] = static_cast<int64_t>(ids.size());
      ids.push_back(*e);
    }
    MENTAT_ASSIGN_OR_RETURN(auto pulled,
                            pull::PullMany(c->db.get(), *c->schema, view, *parsed, ids));
    std::vector<edn::Value> out(eids.size());
    for (size_t i = 0; i < eids.size(); ++i)
      if (slot[i] >= 0) out[i] = std::move(pulled[slot[i]]);
    return out;
  });
}

}  // namespace

// The store's own pulls read the current database directly (no basis to pin: the whole
// pull runs in one read transaction).
Result<edn::Value> Store::pull(std::string_view pattern, const edn::Value& eid) {
  Db d;
  d.store_ = this;
  return d.pull(pattern, eid);
}
Result<std::vector<edn::Value>> Store::pull_many(std::string_view pattern,
                                                 const std::vector<edn::Value>& eids) {
  Db d;
  d.store_ = this;
  return d.pull_many(pattern, eids);
}
Result<edn::Value> Db::pull(std::string_view pattern, const edn::Value& eid) const {
  CheckStoreAlive(store_, "Db::pull");
  MENTAT_ASSIGN_OR_RETURN(auto v, PullIn(*this, pattern, {eid}));
  return std::move(v[0]);
}
Result<std::vector<edn::Value>> Db::pull_many(std::string_view pattern,
                                              const std::vector<edn::Value>& eids) const {
  CheckStoreAlive(store_, "Db::pull_many");
  return PullIn(*this, pattern, eids);
}

}  // namespace mentat
