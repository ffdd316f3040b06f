// Db::datoms: raw index access over a database view.
#include "mentat/store.h"
#include "schema/codec.h"
#include "store/store_impl.h"
#include "store/views.h"

namespace mentat {

namespace {

struct Bound {
  std::string where;
  std::vector<schema::DbVal> params;
};

Result<Entid> EntityOf(storage::Connection* c, const Schema& schema, const edn::Value& v) {
  if (v.is_int()) return v.as_int();
  if (v.is_keyword()) {
    auto e = schema.entid(v.str());
    if (!e) return Status::NotFound("unknown ident " + edn::Print(v));
    return *e;
  }
  if (v.is_vector() && v.size() == 2 && v.items()[0].is_keyword()) {
    const Attribute* attr = schema.attribute(v.items()[0].str());
    if (!attr) return Status::NotFound("unknown attribute in lookup ref " + edn::Print(v));
    if (attr->unique == Unique::kNone)
      return Status::InvalidArgument("lookup ref attribute is not unique: " + edn::Print(v));
    MENTAT_ASSIGN_OR_RETURN(auto enc, schema::Encode(v.items()[1], attr->type));
    MENTAT_ASSIGN_OR_RETURN(auto s, c->Cached("SELECT e FROM datoms WHERE a = ?1 AND v = ?2"));
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

}  // namespace

Result<std::vector<Datom>> Db::datoms(std::string_view index,
                                      const std::vector<edn::Value>& components) const {
  std::string idx(index);
  if (!idx.empty() && idx[0] == ':') idx.erase(0, 1);
  const char* order = nullptr;
  if (idx == "eavt") order = "eav";
  if (idx == "aevt") order = "aev";
  if (idx == "avet") order = "ave";
  if (idx == "vaet") order = "vae";
  if (!order)
    return Status::InvalidArgument("unknown index :" + idx + " (expected :eavt, :aevt, :avet or :vaet)");
  if (components.size() > 4)
    return Status::InvalidArgument("an index takes at most 4 components");
  return store_->impl()->Read([&](StoreImpl::Conn* c) -> Result<std::vector<Datom>> {
    const Schema& schema = *c->schema;
    MENTAT_ASSIGN_OR_RETURN(ResolvedView view, ResolveView(c->db.get(), *this));
    std::vector<std::string> conds;
    std::vector<schema::DbVal> params;
    const Attribute* attr = nullptr;
    // Find the attribute first: values are typed by it.
    for (size_t i = 0; i < components.size(); ++i) {
      if (order[i] == 'a') {
        MENTAT_ASSIGN_OR_RETURN(attr, AttrOf(schema, components[i]));
      }
    }
    for (size_t i = 0; i < components.size(); ++i) {
      const edn::Value& comp = components[i];
      char which = i < 3 ? order[i] : 't';
      if (which == 'e') {
        MENTAT_ASSIGN_OR_RETURN(Entid e, EntityOf(c->db.get(), schema, comp));
        conds.push_back("e = " + std::to_string(e));
      } else if (which == 'a') {
        conds.push_back("a = " + std::to_string(attr->id));
      } else if (which == 'v') {
        schema::DbVal v;
        if (!attr || attr->type == ValueType::kRef) {
          MENTAT_ASSIGN_OR_RETURN(Entid e, EntityOf(c->db.get(), schema, comp));
          v = schema::DbVal::Int(e);
        } else {
          MENTAT_ASSIGN_OR_RETURN(v, schema::Encode(comp, attr->type));
        }
        params.push_back(v);
        conds.push_back("v = ?" + std::to_string(params.size()));
      } else {
        MENTAT_ASSIGN_OR_RETURN(Entid t, EntityOf(c->db.get(), schema, comp));
        conds.push_back("tx = " + std::to_string(t));
      }
    }
    if (idx == "vaet") {
      std::string refs;
      for (const auto& [id, a] : schema.attributes())
        if (a.type == ValueType::kRef) refs += (refs.empty() ? "" : ", ") + std::to_string(id);
      conds.push_back("a IN (" + refs + ")");
    }
    std::string where;
    for (const auto& cnd : conds) where += (where.empty() ? "" : " AND ") + cnd;
    std::string sql = "SELECT e, a, v, tx, added FROM (" + ViewSql(view, where) + ") ORDER BY ";
    for (int i = 0; i < 3; ++i) sql += std::string(1, order[i]) + ", ";
    sql += "tx, added";
    MENTAT_ASSIGN_OR_RETURN(auto s, c->db->Prepare(sql));
    for (size_t i = 0; i < params.size(); ++i)
      schema::Bind(s, static_cast<int>(i + 1), params[i]);
    std::vector<Datom> out;
    for (;;) {
      MENTAT_ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) break;
      Datom d;
      d.e = s.ColumnInt(0);
      d.a = s.ColumnInt(1);
      const Attribute* at = schema.attribute(d.a);
      d.v = at ? schema::ColumnValue(s, 2, at->type) : schema::Decode(schema::Column(s, 2), ValueType::kLong);
      d.tx = s.ColumnInt(3);
      d.added = s.ColumnInt(4) != 0;
      out.push_back(std::move(d));
    }
    return out;
  });
}

}  // namespace mentat
