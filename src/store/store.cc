// The public Store and Db API (include/mentat/store.h), over StoreImpl.
#include "mentat/store.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>

#include "schema/codec.h"
#include "store/store_impl.h"
#include "views/views.h"

namespace mentat {

#ifndef NDEBUG
namespace {
// Never destroyed: a Store held by a static object may be destroyed after every other
// static (at exit), and must still find these.
std::mutex& LiveMutex() {
  static auto* mu = new std::mutex;
  return *mu;
}
std::set<const Store*>& LiveStores() {
  static auto* live = new std::set<const Store*>;
  return *live;
}
}  // namespace

Store::Store() {
  std::lock_guard<std::mutex> lock(LiveMutex());
  LiveStores().insert(this);
}
Store::~Store() {
  std::lock_guard<std::mutex> lock(LiveMutex());
  LiveStores().erase(this);
}
void CheckStoreAlive(const Store* store, const char* call) {
  std::lock_guard<std::mutex> lock(LiveMutex());
  if (store && LiveStores().count(store)) return;
  std::fprintf(stderr,
               "mentat: %s on a database value whose Store was destroyed (a Db, prepared query "
               "or entity must not outlive its Store)\n",
               call);
  std::abort();
}
#else
Store::Store() = default;
Store::~Store() = default;
void CheckStoreAlive(const Store*, const char*) {}
#endif

Result<std::unique_ptr<Store>> Store::open(const std::string& path, const Options& options) {
  MENTAT_ASSIGN_OR_RETURN(std::unique_ptr<StoreImpl> impl, StoreImpl::Open(path, options));
  impl->set_owner(impl.get());
  return std::unique_ptr<Store>(std::move(impl));
}

Result<TxReport> Store::transact(std::string_view text) {
  MENTAT_ASSIGN_OR_RETURN(edn::Value data, edn::Read(text));
  return ImplOf(this)->Transact(data, false);
}
Result<TxReport> Store::transact(const edn::Value& data) {
  return ImplOf(this)->Transact(data, false);
}
Result<TxReport> Store::with(std::string_view text) {
  MENTAT_ASSIGN_OR_RETURN(edn::Value data, edn::Read(text));
  return ImplOf(this)->Transact(data, true);
}
Result<TxReport> Store::with(const edn::Value& data) { return ImplOf(this)->Transact(data, true); }

Db Store::db() {
  Db d;
  d.store_ = this;
  auto last = last_tx();
  if (last.ok()) d.basis_ = *last;
  return d;
}

void Store::interrupt() { ImplOf(this)->Interrupt(); }

void Store::set_auto_index(AutoIndex mode) { ImplOf(this)->advisor().set_mode(mode); }
AutoIndex Store::auto_index() const { return ImplOf(const_cast<Store*>(this))->advisor().mode(); }
void Store::set_index_tuning(int min_uses, std::chrono::seconds idle) {
  ImplOf(this)->advisor().set_tuning(min_uses, idle);
}
Result<std::vector<IndexAction>> Store::tune_indexes(bool dry_run) {
  return ImplOf(this)->TuneIndexes(dry_run);
}

namespace {

// The attribute `ident` names (":ns/name" or "ns/name") in `schema`, for Store::cache.
Result<const Attribute*> CacheableAttribute(const Schema& schema, std::string_view ident) {
  std::string name(ident.substr(!ident.empty() && ident[0] == ':' ? 1 : 0));
  const Attribute* attr = schema.attribute(name);
  if (!attr) {
    if (schema.entid(name)) return Status::Schema(":" + name + " is not an attribute");
    return Status::Schema("unknown attribute :" + name);
  }
  return attr;
}

}  // namespace

Status Store::cache(std::string_view attribute, CacheDirection direction) {
  if (direction != CacheDirection::kForward)
    return Status::Unsupported(
        "only forward attribute caches (entity -> value) are supported: the value index "
        "serves lookups by value");
  auto s = schema();
  MENTAT_ASSIGN_OR_RETURN(const Attribute* attr, CacheableAttribute(*s, attribute));
  if (attr->many)
    return Status::Schema("cannot cache :" + attr->ident +
                          ": the attribute cache holds cardinality-one attributes");
  ImplOf(this)->SetCached(attr->id, true);
  return Status::OK();
}

Status Store::uncache(std::string_view attribute) {
  auto s = schema();
  MENTAT_ASSIGN_OR_RETURN(const Attribute* attr, CacheableAttribute(*s, attribute));
  if (!ImplOf(this)->SetCached(attr->id, false))
    return Status::NotFound(":" + attr->ident + " is not cached");
  return Status::OK();
}

std::vector<std::string> Store::cached_attributes() {
  auto attrs = ImplOf(this)->CachedAttrs().first;
  std::vector<std::string> out;
  if (!attrs) return out;
  auto s = schema();
  for (Entid a : *attrs) {
    const Attribute* attr = s->attribute(a);
    out.push_back(attr ? attr->ident : std::to_string(a));
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::shared_ptr<const Schema> Store::schema() {
  auto s = ImplOf(this)->Read(
      [&](StoreImpl::Conn* c) -> Result<std::shared_ptr<const Schema>> { return c->schema; });
  return s.ok() ? *s : ImplOf(this)->CurrentSchema();
}

Status Store::vacuum() { return ImplOf(this)->Vacuum(); }

Result<Entid> Store::last_tx() {
  return ImplOf(this)->Read([&](StoreImpl::Conn* c) -> Result<Entid> {
    return c->db->QueryInt("SELECT value FROM meta WHERE key = 'last_tx'", 0);
  });
}

const std::string& Store::path() const { return ImplOf(this)->path(); }

Result<std::vector<Datom>> Store::datoms(std::string_view index,
                                         const std::vector<edn::Value>& components) {
  Db d;
  d.store_ = this;
  return d.datoms(index, components);
}

Db Db::as_of(TxPoint t) const {
  Db d = *this;
  d.as_of_ = t;
  return d;
}
Db Db::since(TxPoint t) const {
  Db d = *this;
  d.since_ = t;
  return d;
}
Db Db::history() const {
  Db d = *this;
  d.history_ = true;
  return d;
}

edn::Value TxReport::ToEdn(const Schema* schema) const {
  edn::MapEntries tempid_entries;
  for (const auto& [k, v] : tempids)
    tempid_entries.emplace_back(edn::Value::String(k), edn::Value::Int(v));
  edn::Vec data;
  data.reserve(tx_data.size());
  for (const auto& d : tx_data) {
    edn::Value a = edn::Value::Int(d.a);
    if (schema) {
      if (const std::string* id = schema->ident(d.a)) a = edn::Value::Keyword(*id);
    }
    data.push_back(edn::Value::Vector(
        {edn::Value::Int(d.e), a, d.v, edn::Value::Int(d.tx), edn::Value::Bool(d.added)}));
  }
  return edn::Value::Map({
      {edn::Value::Keyword("tx-id"), edn::Value::Int(tx_id)},
      {edn::Value::Keyword("tx-instant"), edn::Value::Inst(tx_instant)},
      {edn::Value::Keyword("tempids"), edn::Value::Map(std::move(tempid_entries))},
      {edn::Value::Keyword("tx-data"), edn::Value::Vector(std::move(data))},
  });
}

}  // namespace mentat
