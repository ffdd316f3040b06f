// mentat::Entity (include/mentat/entity.h): lazy, cached reads through the pull
// subsystem's ReadEntities, one read transaction per read.
#include "mentat/entity.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <set>

#include "mentat/store.h"
#include "pull/pull.h"
#include "store/store_impl.h"
#include "views/views.h"

namespace mentat {

struct Entity::State {
  Db db;
  Entid id = 0;
  std::shared_ptr<const Schema> schema;  // as of when the entity was taken
  std::mutex mu;
  bool all_loaded = false;
  std::map<Entid, std::vector<edn::Value>> forward;  // attribute -> values, when read
  std::map<Entid, std::vector<Entid>> reverse;       // attribute -> entities pointing here
};

namespace {

struct AttrName {
  const Attribute* attr = nullptr;
  bool reverse = false;
  bool db_id = false;
};

Result<AttrName> ParseAttr(const Schema& schema, std::string_view text) {
  if (!text.empty() && text[0] == ':') text.remove_prefix(1);
  AttrName n;
  if (text == "db/id") {
    n.db_id = true;
    return n;
  }
  if ((n.attr = schema.attribute(text))) return n;
  size_t slash = text.find('/');
  size_t name_at = slash == std::string_view::npos ? 0 : slash + 1;
  if (name_at < text.size() && text[name_at] == '_') {
    std::string fwd = std::string(text.substr(0, name_at)) + std::string(text.substr(name_at + 1));
    const Attribute* a = schema.attribute(fwd);
    if (a && a->type == ValueType::kRef) {
      n.attr = a;
      n.reverse = true;
      return n;
    }
    if (a)
      return Status::Schema("reverse attribute :" + std::string(text) + " needs a ref attribute");
  }
  return Status::Schema("unknown attribute :" + std::string(text));
}

edn::Value RefValue(const Schema& schema, Entid e) {
  if (const std::string* ident = schema.ident(e)) return edn::Value::Keyword(*ident);
  return edn::Value::Map({{edn::Value::Keyword("db/id"), edn::Value::Int(e)}});
}

// Runs `fn(conn, schema (shared_ptr), view)` in a read transaction on `db`'s view.
template <typename T, typename Fn>
Result<T> ReadIn(const Db& db, Fn&& fn) {
  return ImplOf(db.store())->Read([&](StoreImpl::Conn* c) -> Result<T> {
    MENTAT_ASSIGN_OR_RETURN(ResolvedView view, StoreImpl::ResolveViewOn(c, db));
    if (view.history)
      return Status::Unsupported("entities are not available on a history database");
    return fn(c->db.get(), c->schema, view);
  });
}

}  // namespace

Entity::~Entity() = default;
Entid Entity::id() const { return s_->id; }
const Db& Entity::db() const { return s_->db; }

namespace {

// Loads attribute `a` (0: every attribute) of `s` into its cache. REQUIRES: s->mu held.
Status Load(Entity::State* s, const AttrName& n) {
  if (s->all_loaded && !n.reverse) return Status::OK();
  if (n.attr && !n.reverse && s->forward.count(n.attr->id)) return Status::OK();
  if (n.attr && n.reverse && s->reverse.count(n.attr->id)) return Status::OK();
  Entid a = n.attr ? n.attr->id : 0;
  MENTAT_ASSIGN_OR_RETURN(
      auto rows, ReadIn<std::vector<std::vector<pull::AttrValue>>>(
                     s->db, [&](storage::Connection* c, const std::shared_ptr<const Schema>& schema,
                                const ResolvedView& view) {
                       return pull::ReadEntities(c, *schema, view, {s->id}, a, n.reverse);
                     }));
  if (n.reverse) {
    auto& list = s->reverse[a];
    for (const auto& r : rows[0]) list.push_back(r.v.as_int());
    std::sort(list.begin(), list.end());
    return Status::OK();
  }
  if (a == 0) {
    s->forward.clear();
    s->all_loaded = true;
  } else {
    s->forward[a];  // read, possibly empty
  }
  for (auto& r : rows[0]) s->forward[r.a].push_back(std::move(r.v));
  return Status::OK();
}

}  // namespace

Result<edn::Value> Entity::get(std::string_view attr) const {
  const auto& schema = s_->schema;
  MENTAT_ASSIGN_OR_RETURN(AttrName n, ParseAttr(*schema, attr));
  if (n.db_id) return edn::Value::Int(s_->id);
  std::lock_guard<std::mutex> lock(s_->mu);
  MENTAT_RETURN_IF_ERROR(Load(s_.get(), n));
  if (n.reverse) {
    const auto& ids = s_->reverse[n.attr->id];
    if (ids.empty()) return edn::Value();
    if (n.attr->component) return RefValue(*schema, ids[0]);
    edn::Vec out;
    for (Entid e : ids) out.push_back(RefValue(*schema, e));
    return edn::Value::Set(std::move(out));
  }
  auto it = s_->forward.find(n.attr->id);
  if (it == s_->forward.end() || it->second.empty()) return edn::Value();
  bool ref = n.attr->type == ValueType::kRef;
  auto conv = [&](const edn::Value& v) { return ref ? RefValue(*schema, v.as_int()) : v; };
  if (!n.attr->many) return conv(it->second[0]);
  edn::Vec out;
  for (const auto& v : it->second) out.push_back(conv(v));
  return edn::Value::Set(std::move(out));
}

Result<std::vector<Entity>> Entity::get_entities(std::string_view attr) const {
  const auto& schema = s_->schema;
  MENTAT_ASSIGN_OR_RETURN(AttrName n, ParseAttr(*schema, attr));
  if (n.db_id || n.attr->type != ValueType::kRef)
    return Status::Schema(std::string(attr) + " is not a ref attribute");
  std::vector<Entid> ids;
  {
    std::lock_guard<std::mutex> lock(s_->mu);
    MENTAT_RETURN_IF_ERROR(Load(s_.get(), n));
    if (n.reverse) {
      ids = s_->reverse[n.attr->id];
    } else if (auto it = s_->forward.find(n.attr->id); it != s_->forward.end()) {
      for (const auto& v : it->second) ids.push_back(v.as_int());
    }
  }
  std::vector<Entity> out;
  for (Entid e : ids) {
    auto st = std::make_shared<State>();
    st->db = s_->db;
    st->id = e;
    st->schema = s_->schema;
    out.push_back(Entity(std::move(st)));
  }
  return out;
}

Result<std::vector<edn::Value>> Entity::keys() const {
  const auto& schema = s_->schema;
  std::vector<edn::Value> out;
  {
    std::lock_guard<std::mutex> lock(s_->mu);
    MENTAT_RETURN_IF_ERROR(Load(s_.get(), AttrName{}));
    for (const auto& [a, vals] : s_->forward) {
      if (vals.empty()) continue;
      const Attribute* attr = schema->attribute(a);
      out.push_back(attr ? edn::Value::Keyword(attr->ident) : edn::Value::Int(a));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

Result<edn::Value> Touch(const Entity& e, const Schema& schema, std::set<Entid>* path) {
  MENTAT_ASSIGN_OR_RETURN(auto keys, e.keys());
  edn::MapEntries entries;
  entries.emplace_back(edn::Value::Keyword("db/id"), edn::Value::Int(e.id()));
  path->insert(e.id());
  for (const auto& k : keys) {
    const Attribute* attr = k.is_keyword() ? schema.attribute(k.str()) : nullptr;
    if (!attr || !attr->component || attr->type != ValueType::kRef) {
      MENTAT_ASSIGN_OR_RETURN(edn::Value v, e.get(k.is_keyword() ? k.str() : ""));
      entries.emplace_back(k, std::move(v));
      continue;
    }
    MENTAT_ASSIGN_OR_RETURN(auto parts, e.get_entities(k.str()));
    edn::Vec vals;
    for (const auto& p : parts) {
      if (path->count(p.id())) {
        vals.push_back(edn::Value::Map({{edn::Value::Keyword("db/id"), edn::Value::Int(p.id())}}));
        continue;
      }
      MENTAT_ASSIGN_OR_RETURN(edn::Value t, Touch(p, schema, path));
      vals.push_back(std::move(t));
    }
    if (vals.empty()) continue;
    entries.emplace_back(k, attr->many ? edn::Value::Set(std::move(vals)) : vals[0]);
  }
  path->erase(e.id());
  return edn::Value::Map(std::move(entries));
}

}  // namespace

Result<edn::Value> Entity::touch() const {
  const auto& schema = s_->schema;
  std::set<Entid> path;
  return Touch(*this, *schema, &path);
}

Result<Entity> Db::entity(const edn::Value& eid) const {
  CheckStoreAlive(store_, "Db::entity");
  auto st = std::make_shared<Entity::State>();
  MENTAT_ASSIGN_OR_RETURN(
      auto e, ReadIn<std::optional<Entid>>(
                  *this, [&](storage::Connection* c, const std::shared_ptr<const Schema>& schema,
                             const ResolvedView& view) {
                    st->schema = schema;
                    return pull::ResolveEntity(c, *schema, view, eid);
                  }));
  if (!e) return Status::NotFound("no entity " + edn::Print(eid));
  st->db = *this;
  st->id = *e;
  return Entity(std::move(st));
}

Result<Entity> Store::entity(const edn::Value& eid) { return db().entity(eid); }

}  // namespace mentat
