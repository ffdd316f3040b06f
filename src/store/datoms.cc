// Raw index access over a database view: Db::datoms, Db::seek_datoms, Db::index_range.
//
// The four indexes are orders over the view's datoms: EAVT (e, a, v), AEVT (a, e, v),
// AVET (a, v, e) and VAET (v, a, e, ref attributes only), each then by tx and added (the
// history view has several events per datom). Values order as SQLite orders the stored
// encoding (doc/format.md), which is the order of the covering indexes.
#include "mentat/store.h"
#include "schema/codec.h"
#include "schema/names.h"
#include "store/store_impl.h"
#include "views/views.h"

namespace mentat {

namespace {

Result<Entid> EntityOf(storage::Connection* c, const Schema& schema, const edn::Value& v) {
  if (v.is_int()) return v.as_int();
  if (v.is_keyword()) {
    auto e = schema.entid(v.str());
    if (!e) return Status::NotFound("unknown ident " + edn::Print(v));
    return *e;
  }
  if (schema::IsLookupRefShape(v)) {
    const Attribute* attr = schema::LookupRefAttribute(schema, v.items()[0]);
    if (!attr) return Status::NotFound("unknown attribute in lookup ref " + edn::Print(v));
    if (attr->unique == Unique::kNone)
      return Status::InvalidArgument("lookup ref attribute is not unique: " + edn::Print(v));
    MENTAT_ASSIGN_OR_RETURN(auto enc, schema::EncodeForAttribute(v.items()[1], *attr, &schema));
    MENTAT_ASSIGN_OR_RETURN(
        auto s, c->Cached("SELECT e FROM datoms WHERE a = ?1 AND v = ?2 AND ix IS NOT 0"));
    s->BindInt(1, attr->id);
    schema::Bind(*s, 2, enc);
    MENTAT_ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) return Status::NotFound("lookup ref " + edn::Print(v) + " does not resolve");
    return s->ColumnInt(0);
  }
  return Status::InvalidArgument("expected an entity id, ident or lookup ref, got " +
                                 edn::Print(v));
}

Result<const Attribute*> AttrOf(const Schema& schema, const edn::Value& v) {
  const Attribute* attr = nullptr;
  if (v.is_keyword()) attr = schema.attribute(v.str());
  if (v.is_int()) attr = schema.attribute(v.as_int());
  if (!attr) return Status::NotFound("unknown attribute " + edn::Print(v));
  return attr;
}

// "eav" etc. for an index name (with or without the colon), or an error.
Result<const char*> IndexOrder(std::string_view index) {
  std::string idx(index);
  if (!idx.empty() && idx[0] == ':') idx.erase(0, 1);
  if (idx == "eavt") return "eav";
  if (idx == "aevt") return "aev";
  if (idx == "avet") return "ave";
  if (idx == "vaet") return "vae";
  return Status::InvalidArgument("unknown index :" + idx +
                                 " (expected :eavt, :aevt, :avet or :vaet)");
}

// Index components resolved to SQL: column names and encoded values, in index order.
struct Components {
  std::vector<std::string> cols;  // "e", "a", "v", "tx"
  std::vector<schema::DbVal> vals;
  const Attribute* attr = nullptr;  // the attribute component, if given
};

// The attribute index a read in `order` goes through (format 3): none for EAVT; the value
// index for VAET (ref attributes only); for AEVT and AVET, the given attribute's index, or
// both when the read spans attributes (`within_attr` false: a seek runs on past it).
AttrIndex IndexFor(const char* order, const Components& comps, bool within_attr) {
  if (order[0] == 'v') return AttrIndex::kAvet;
  if (order[0] != 'a') return AttrIndex::kNone;
  return within_attr && comps.attr ? IndexOf(*comps.attr) : AttrIndex::kBoth;
}

Result<Components> ResolveComponents(storage::Connection* c, const Schema& schema,
                                     const char* order, const std::vector<edn::Value>& components) {
  if (components.size() > 4) return Status::InvalidArgument("an index takes at most 4 components");
  const Attribute* attr = nullptr;
  // Find the attribute first: values are typed by it.
  for (size_t i = 0; i < components.size() && i < 3; ++i) {
    if (order[i] == 'a') {
      MENTAT_ASSIGN_OR_RETURN(attr, AttrOf(schema, components[i]));
    }
  }
  Components out;
  out.attr = attr;
  for (size_t i = 0; i < components.size(); ++i) {
    const edn::Value& comp = components[i];
    char which = i < 3 ? order[i] : 't';
    schema::DbVal v;
    if (which == 'e' || which == 't') {
      MENTAT_ASSIGN_OR_RETURN(Entid e, EntityOf(c, schema, comp));
      v = schema::DbVal::Int(e);
    } else if (which == 'a') {
      v = schema::DbVal::Int(attr->id);
    } else if (!attr || attr->type == ValueType::kRef) {
      MENTAT_ASSIGN_OR_RETURN(Entid e, EntityOf(c, schema, comp));
      v = schema::DbVal::Int(e);
    } else {
      MENTAT_ASSIGN_OR_RETURN(v, schema::EncodeForAttribute(comp, *attr, &schema));
    }
    out.cols.push_back(which == 't' ? "tx" : std::string(1, which));
    out.vals.push_back(std::move(v));
  }
  return out;
}

std::string RefAttrsCondition(const Schema& schema) {
  std::string refs;
  for (const auto& [id, a] : schema.attributes())
    if (a.type == ValueType::kRef) refs += (refs.empty() ? "" : ", ") + std::to_string(id);
  return "a IN (" + refs + ")";
}

std::string OrderBy(const char* order) {
  std::string sql = " ORDER BY ";
  for (int i = 0; i < 3; ++i) sql += std::string(1, order[i]) + ", ";
  return sql + "tx, added";
}

Result<std::vector<Datom>> RunDatoms(storage::Connection* c, const Schema& schema,
                                     const std::string& sql,
                                     const std::vector<schema::DbVal>& params) {
  MENTAT_ASSIGN_OR_RETURN(auto s, c->Prepare(sql));
  for (size_t i = 0; i < params.size(); ++i) schema::Bind(s, static_cast<int>(i + 1), params[i]);
  std::vector<Datom> out;
  for (;;) {
    MENTAT_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    Datom d;
    d.e = s.ColumnInt(0);
    d.a = s.ColumnInt(1);
    const Attribute* at = schema.attribute(d.a);
    d.v = at ? schema::ColumnValue(s, 2, at->type)
             : schema::Decode(schema::Column(s, 2), ValueType::kLong);
    d.tx = s.ColumnInt(3);
    d.added = s.ColumnInt(4) != 0;
    out.push_back(std::move(d));
  }
  return out;
}

std::string Join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

std::string Params(size_t from, size_t n) {
  std::vector<std::string> ps;
  for (size_t i = 0; i < n; ++i) ps.push_back("?" + std::to_string(from + i));
  return Join(ps, ", ");
}

std::string LimitSql(std::optional<size_t> limit) {
  return limit ? " LIMIT " + std::to_string(*limit) : "";
}

}  // namespace

Result<std::vector<Datom>> Db::datoms(std::string_view index,
                                      const std::vector<edn::Value>& components) const {
  CheckStoreAlive(store_, "Db::datoms");
  MENTAT_ASSIGN_OR_RETURN(const char* order, IndexOrder(index));
  if (components.size() > 4) return Status::InvalidArgument("an index takes at most 4 components");
  return ImplOf(store_)->Read([&](StoreImpl::Conn* c) -> Result<std::vector<Datom>> {
    const Schema& schema = *c->schema;
    MENTAT_ASSIGN_OR_RETURN(ResolvedView view, StoreImpl::ResolveViewOn(c, *this));
    MENTAT_ASSIGN_OR_RETURN(Components comps,
                            ResolveComponents(c->db.get(), schema, order, components));
    // e, a and v inside each branch of the view; tx outside (in the history view's
    // retraction branch it is another column).
    std::vector<std::string> conds, outer;
    for (size_t i = 0; i < comps.cols.size(); ++i)
      (i < 3 ? conds : outer).push_back(comps.cols[i] + " = ?" + std::to_string(i + 1));
    if (order[0] == 'v') conds.push_back(RefAttrsCondition(schema));
    std::string sql = "SELECT e, a, v, tx, added FROM (" +
                      ViewSql(view, Join(conds, " AND "), IndexFor(order, comps, true)) + ")" +
                      (outer.empty() ? "" : " WHERE " + Join(outer, " AND ")) + OrderBy(order);
    return RunDatoms(c->db.get(), schema, sql, comps.vals);
  });
}

Result<std::vector<Datom>> Db::seek_datoms(std::string_view index,
                                           const std::vector<edn::Value>& components,
                                           std::optional<size_t> limit) const {
  CheckStoreAlive(store_, "Db::seek_datoms");
  MENTAT_ASSIGN_OR_RETURN(const char* order, IndexOrder(index));
  if (components.size() > 4) return Status::InvalidArgument("an index takes at most 4 components");
  return ImplOf(store_)->Read([&](StoreImpl::Conn* c) -> Result<std::vector<Datom>> {
    const Schema& schema = *c->schema;
    MENTAT_ASSIGN_OR_RETURN(ResolvedView view, StoreImpl::ResolveViewOn(c, *this));
    MENTAT_ASSIGN_OR_RETURN(Components comps,
                            ResolveComponents(c->db.get(), schema, order, components));
    // Inside each branch of the view: a row-value bound over the components that are
    // datom columns (e, a, v mean the same in every branch; tx does not, in the history
    // view's retraction branch), led by its first column so an index range serves it.
    // Outside: the full bound, tx included.
    size_t n_inner = std::min<size_t>(comps.cols.size(), 3);
    std::vector<std::string> inner;
    if (n_inner > 0) {
      std::vector<std::string> cols(comps.cols.begin(), comps.cols.begin() + n_inner);
      inner.push_back(cols[0] + " >= ?1");
      if (n_inner > 1)
        inner.push_back("(" + Join(cols, ", ") + ") >= (" + Params(1, n_inner) + ")");
    }
    if (order[0] == 'v') inner.push_back(RefAttrsCondition(schema));
    std::string sql = "SELECT e, a, v, tx, added FROM (" +
                      ViewSql(view, Join(inner, " AND "), IndexFor(order, comps, false)) + ")";
    if (comps.cols.size() == 4)
      sql += " WHERE (" + Join(comps.cols, ", ") + ") >= (" + Params(1, 4) + ")";
    sql += OrderBy(order) + LimitSql(limit);
    return RunDatoms(c->db.get(), schema, sql, comps.vals);
  });
}

Result<std::vector<Datom>> Db::index_range(const edn::Value& attr_id, const edn::Value& start,
                                           const edn::Value& end,
                                           std::optional<size_t> limit) const {
  CheckStoreAlive(store_, "Db::index_range");
  return ImplOf(store_)->Read([&](StoreImpl::Conn* c) -> Result<std::vector<Datom>> {
    const Schema& schema = *c->schema;
    MENTAT_ASSIGN_OR_RETURN(ResolvedView view, StoreImpl::ResolveViewOn(c, *this));
    MENTAT_ASSIGN_OR_RETURN(const Attribute* attr, AttrOf(schema, attr_id));
    std::vector<std::string> conds = {"a = " + std::to_string(attr->id)};
    std::vector<schema::DbVal> params;
    for (const auto* bound : {&start, &end}) {
      if (bound->is_nil()) continue;
      schema::DbVal v;
      if (attr->type == ValueType::kRef) {
        MENTAT_ASSIGN_OR_RETURN(Entid e, EntityOf(c->db.get(), schema, *bound));
        v = schema::DbVal::Int(e);
      } else {
        MENTAT_ASSIGN_OR_RETURN(v, schema::EncodeForAttribute(*bound, *attr));
      }
      params.push_back(std::move(v));
      conds.push_back(std::string(bound == &start ? "v >= ?" : "v < ?") +
                      std::to_string(params.size()));
    }
    std::string sql = "SELECT e, a, v, tx, added FROM (" +
                      ViewSql(view, Join(conds, " AND "), IndexOf(*attr)) + ")" + OrderBy("ave") +
                      LimitSql(limit);
    return RunDatoms(c->db.get(), schema, sql, params);
  });
}

// The store's own index reads see the current database.
Result<std::vector<Datom>> Store::seek_datoms(std::string_view index,
                                              const std::vector<edn::Value>& components,
                                              std::optional<size_t> limit) {
  Db d;
  d.store_ = this;
  return d.seek_datoms(index, components, limit);
}

Result<std::vector<Datom>> Store::index_range(const edn::Value& attr, const edn::Value& start,
                                              const edn::Value& end, std::optional<size_t> limit) {
  Db d;
  d.store_ = this;
  return d.index_range(attr, start, end, limit);
}

}  // namespace mentat
