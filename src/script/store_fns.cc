// mentat.store/*: connections, db values and their reads, transact and with.
//
// A connection (ConnObj) owns the Store it opened, or points at the host's. A db value
// (DbObj) is a mentat::Db (a pinned basis, optionally as-of/since/history) plus its
// connection; a speculative db (the :db-after of with) is its db-before plus the
// speculative datoms, merged on read by entity, read, datoms and entities.
//
// Values read from the store: attributes print as their ident keywords; a ref value whose
// target has an ident becomes that keyword, other refs stay entity ids.
#include "script/store_fns.h"

#include <algorithm>

#include "script/convert.h"
#include "script/core.h"
#include "script/print.h"

namespace mentat::script {

namespace {

using Args = const Val*;

// What opening a store costs, charged up front: about its time in steps (a few
// milliseconds), and its memory (SQLite's page cache and schema) while it is open.
constexpr int64_t kOpenSteps = 100'000;
constexpr size_t kStoreBytes = 256 * 1024;
// An in-memory store the script opened keeps what it is given: about this much per
// datom transacted, charged until the store is closed.
constexpr int64_t kDatomBytes = 256;

}  // namespace

struct ConnObj : OpaqueObj {
  std::unique_ptr<Store> owned;
  Store* store = nullptr;  // null once closed
  std::string path;
  StoreState* state = nullptr;
  ScopedCharge data;  // the datoms of an owned in-memory store
  void Register(StoreState* s) {
    state = s;
    s->conns.insert(this);
    s->Add(store);
  }
  ~ConnObj() override {
    Close();
    if (state) state->conns.erase(this);
  }
  void Close() {
    if (store && state) state->Remove(store);
    store = nullptr;
    owned.reset();
    data.Release();
  }
  std::string Describe() const override {
    std::string out = "#mentat/conn {:path ";
    out += PrStr(Val::String(path.empty() ? ":memory:" : path));
    if (!store) out += ", :closed true";
    return out + "}";
  }
};

StoreState::~StoreState() {
  default_conn = Val();
  for (ConnObj* c : conns) c->Close();
}

namespace {

struct DbObj : OpaqueObj {
  Val conn;  // ConnObj
  Db db;
  // Speculative (from with): db is the db-before; these datoms were transacted on it.
  bool speculative = false;
  std::vector<Datom> spec;
  Entid spec_tx = 0;
  std::string Describe() const override {
    std::string out = "#mentat/db {:basis-t ";
    out += std::to_string(speculative ? spec_tx : db.basis().value_or(0));
    auto point = [&](const char* key, const std::optional<TxPoint>& p) {
      if (!p) return;
      out += std::string(", ") + key + " ";
      if (p->tx) {
        out += std::to_string(*p->tx);
      } else {
        out += PrStr(Val::Inst(*p->instant_micros));
      }
    };
    point(":as-of", db.as_of_point());
    point(":since", db.since_point());
    if (db.is_history()) out += ", :history true";
    if (speculative) out += ", :speculative true";
    return out + "}";
  }
};

[[noreturn]] void StoreFail(const FnObj& self, const Status& st) {
  if (st.code() == Code::kInterrupted) throw LimitError{st};
  Fail(self.name + ": " + st.message(), st.code());
}

template <typename T>
T Must(const FnObj& self, Result<T> r) {
  if (!r.ok()) StoreFail(self, r.status());
  return std::move(r).value();
}

ConnObj* ConnArg(const FnObj& self, const Val& v) {
  if (!v.is(Type::kConn)) {
    Fail(self.name + " expects a connection (from mentat.store/open), got " + PrBrief(v));
  }
  ConnObj* c = v.as<ConnObj>();
  if (!c->store) Fail(self.name + ": the connection is closed");
  return c;
}

Val MakeDb(const Val& conn, Db db) {
  Ref<DbObj> d = Make<DbObj>(0);
  d->conn = conn;
  d->db = std::move(db);
  return Val::Object(Type::kDb, d.get());
}

// A db value, or the current db of a connection.
Val DbArg(const FnObj& self, const Val& v) {
  if (v.is(Type::kConn)) return MakeDb(v, ConnArg(self, v)->store->db());
  if (!v.is(Type::kDb))
    Fail(self.name + " expects a db value (from mentat.store/db), got " + PrBrief(v));
  ConnArg(self, v.as<DbObj>()->conn);
  return v;
}

DbObj* D(const Val& db) { return db.as<DbObj>(); }
Store* StoreOf(const Val& db) { return D(db)->conn.as<ConnObj>()->store; }

void NotSpeculative(const FnObj& self, const Val& db) {
  if (D(db)->speculative) {
    Fail(self.name +
             " is not supported on a speculative db (the :db-after of with); use "
             "entity, read, datoms or entities, or the report's :tx-data",
         Code::kUnsupported);
  }
}

TxPoint PointArg(const FnObj& self, const Val& t) {
  if (t.is(Type::kInt)) return TxPoint::Tx(t.as_int());
  if (t.is(Type::kInst)) return TxPoint::Instant(t.as_int());
  Fail(self.name + " expects a transaction id or an #inst, got " + PrBrief(t));
}

Val RefOrIdent(const Schema& schema, Entid e) {
  if (const std::string* ident = schema.ident(e)) return Val::Keyword(*ident);
  return Val::Int(e);
}

Val AttrVal(const Schema& schema, Entid a) { return RefOrIdent(schema, a); }

Val DatomValue(const Schema& schema, const Datom& d) {
  const Attribute* attr = schema.attribute(d.a);
  if (attr && attr->type == ValueType::kRef && d.v.is_int())
    return RefOrIdent(schema, d.v.as_int());
  return FromEdn(d.v);
}

Val DatomVec(const Schema& schema, const Datom& d) {
  return VecFrom({Val::Int(d.e), AttrVal(schema, d.a), DatomValue(schema, d), Val::Int(d.tx),
                  Val::Bool(d.added)});
}

// ---- Speculative reads ----

// Resolves an entity component against the speculative datoms, then the base db.
std::optional<Entid> ResolveEntity(const FnObj& self, const Val& db, const Schema& schema,
                                   const edn::Value& v) {
  if (v.is_int()) return v.as_int();
  if (v.is_keyword()) return schema.entid(v.str());
  if (v.is_vector() && v.size() == 2 && v.items()[0].is_keyword()) {
    const Attribute* attr = schema.attribute(v.items()[0].str());
    if (!attr) return std::nullopt;
    for (const Datom& d : D(db)->spec) {
      if (d.added && d.a == attr->id && d.v == v.items()[1]) return d.e;
    }
    Result<std::vector<Datom>> base = D(db)->db.datoms(":avet", {v.items()[0], v.items()[1]});
    if (base.ok() && !base->empty()) return base->front().e;
    return std::nullopt;
  }
  Fail(self.name + ": expected an entity id, ident or lookup ref, got " + edn::Print(v));
}

std::vector<Datom> SpecDatoms(const FnObj& self, const Val& db, const std::string& index,
                              const std::vector<edn::Value>& comps, const Schema& schema) {
  DbObj* d = D(db);
  std::string idx = index[0] == ':' ? index.substr(1) : index;
  if (idx != "eavt" && idx != "aevt" && idx != "avet" && idx != "vaet") {
    return Must(self, d->db.datoms(index, comps));  // the store's error for a bad index
  }
  const char* order = idx == "eavt" ? "eav" : idx == "aevt" ? "aev" : idx == "avet" ? "ave" : "vae";
  // The components, resolved (entities may exist only in the speculative datoms): e, a,
  // v, tx; `resolved` is what the base db is asked for.
  std::optional<Entid> e, a, tx;
  std::optional<edn::Value> v;
  bool unresolved = false;
  std::vector<edn::Value> resolved = comps;
  for (size_t i = 0; i < comps.size(); ++i) {
    if (order[std::min<size_t>(i, 2)] == 'a' && i < 3) {
      const Attribute* attr = comps[i].is_int() ? schema.attribute(comps[i].as_int())
                                                : schema.attribute(comps[i].str());
      if (attr) a = attr->id;
    }
  }
  const Attribute* attr = a ? schema.attribute(*a) : nullptr;
  for (size_t i = 0; i < comps.size(); ++i) {
    char which = i < 3 ? order[i] : 't';
    if (which == 'e') {
      e = ResolveEntity(self, db, schema, comps[i]);
      unresolved = unresolved || !e;
      if (e) resolved[i] = edn::Value::Int(*e);
    } else if (which == 'v') {
      if (!attr || attr->type == ValueType::kRef) {
        auto r = ResolveEntity(self, db, schema, comps[i]);
        unresolved = unresolved || !r;
        if (r) v = resolved[i] = edn::Value::Int(*r);
      } else {
        v = comps[i];
      }
    } else if (which == 't') {
      tx = comps[i].as_int();
    }
  }
  if (unresolved) return {};  // an entity that exists nowhere has no datoms
  std::vector<Datom> base = Must(self, d->db.datoms(index, resolved));
  auto matches = [&](const Datom& x) {
    return (!e || x.e == *e) && (!a || x.a == *a) && (!v || x.v == *v) && (!tx || x.tx == *tx);
  };
  std::vector<Datom> out;
  for (const Datom& b : base) {
    bool retracted = std::any_of(d->spec.begin(), d->spec.end(), [&](const Datom& s) {
      return !s.added && s.e == b.e && s.a == b.a && s.v == b.v;
    });
    if (!retracted) out.push_back(b);
  }
  for (const Datom& s : d->spec) {
    if (s.added && matches(s)) out.push_back(s);
  }
  auto key = [&](const Datom& x, char c) {
    return c == 'e' ? edn::Value::Int(x.e) : c == 'a' ? edn::Value::Int(x.a) : x.v;
  };
  std::stable_sort(out.begin(), out.end(), [&](const Datom& x, const Datom& y) {
    for (int i = 0; i < 3; ++i) {
      int c = Compare(key(x, order[i]), key(y, order[i]));
      if (c != 0) return c < 0;
    }
    return x.tx < y.tx;
  });
  return out;
}

std::vector<Datom> ReadDatoms(const FnObj& self, const Val& db, const std::string& index,
                              const std::vector<edn::Value>& comps, const Schema& schema) {
  if (D(db)->speculative) return SpecDatoms(self, db, index, comps, schema);
  return Must(self, D(db)->db.datoms(index, comps));
}

// `charge`, when given, holds the converted id's memory.
edn::Value EidArg(const FnObj& self, const Val& v, ScopedCharge* charge = nullptr) {
  edn::Value e = ToEdn(v, true, "an entity id", charge);
  if (!(e.is_int() || e.is_keyword() || (e.is_vector() && e.size() == 2))) {
    Fail(self.name + ": expected an entity id, ident or [attribute value] lookup ref, got " +
         PrBrief(v));
  }
  return e;
}

Val EntityMap(const FnObj& self, const Val& db, const Val& eid) {
  if (D(db)->db.is_history()) Fail(self.name + " needs a db that is not a history db");
  std::shared_ptr<const Schema> schema = StoreOf(db)->schema();
  edn::Value e = EidArg(self, eid);
  std::vector<Datom> ds;
  if (D(db)->speculative) {
    auto id = ResolveEntity(self, db, *schema, e);
    if (!id) return Val();
    ds = SpecDatoms(self, db, ":eavt", {edn::Value::Int(*id)}, *schema);
  } else {
    Result<std::vector<Datom>> r = D(db)->db.datoms(":eavt", {e});
    if (!r.ok() && r.status().code() == Code::kNotFound) return Val();
    ds = Must(self, std::move(r));
  }
  if (ds.empty()) return Val();
  Val m = MapAssoc(Val::EmptyMap(), Val::Keyword("db/id"), Val::Int(ds[0].e));
  for (const Datom& d : ds) {
    const Attribute* attr = schema->attribute(d.a);
    Val k = AttrVal(*schema, d.a);
    Val x = DatomValue(*schema, d);
    if (attr && attr->many) {
      const Val* old = MapFind(m, k);
      m = MapAssoc(m, k, SetConj(old ? *old : Val::EmptySet(), x));
    } else {
      m = MapAssoc(m, k, x);
    }
  }
  return m;
}

Val ReportVal(const Schema& schema, const TxReport& r, Val before, Val after) {
  MapBuilder tempids;
  for (const auto& [k, v] : r.tempids) tempids.Add(Val::String(k), Val::Int(v));
  VecBuilder data;
  for (const Datom& d : r.tx_data) data.Add(DatomVec(schema, d));
  MapBuilder m;
  m.Add(Val::Keyword("tx-id"), Val::Int(r.tx_id));
  m.Add(Val::Keyword("tx-instant"), Val::Inst(r.tx_instant));
  m.Add(Val::Keyword("tempids"), tempids.Build());
  m.Add(Val::Keyword("tx-data"), data.Build());
  m.Add(Val::Keyword("db-before"), before);
  m.Add(Val::Keyword("db-after"), after);
  return m.Build();
}

// `charge` holds the tree's memory while the store uses it.
edn::Value TxData(const FnObj& self, const Val& v, ScopedCharge* charge) {
  if (v.is(Type::kString)) {
    Result<edn::Value> r = ReadCharged(v.str(), edn::ReadOptions{}, charge);
    if (!r.ok()) Fail(self.name + ": " + r.status().message(), Code::kParse);
    return *r;
  }
  // Datomic's client API: (transact conn {:tx-data [...]}).
  if (v.is(Type::kMap)) {
    Val data = Get(v, Val::Keyword("tx-data"));
    if (!data.is_nil()) return TxData(self, data, charge);
  }
  if (!v.is_sequential())
    Fail(self.name + " expects transaction data (a vector), got " + PrBrief(v));
  return ToEdn(v, true, "transaction data", charge);
}

std::string TextArg(const Val& v, const char* what) {
  if (v.is(Type::kString)) return v.str();
  return edn::Print(ToEdn(v, true, what));
}

Val QueryVal(const QueryResult& r) {
  auto row_val = [&](const std::vector<edn::Value>& row) {
    if (!r.map_keys.empty()) {
      MapBuilder m;
      for (size_t i = 0; i < row.size() && i < r.map_keys.size(); ++i) {
        m.Add(FromEdn(r.map_keys[i]), FromEdn(row[i]));
      }
      return m.Build();
    }
    VecBuilder b;
    for (const edn::Value& x : row) b.Add(FromEdn(x));
    return b.Build();
  };
  switch (r.shape) {
    case QueryResult::Shape::kRelation: {
      MapBuilder set(true);
      for (const auto& row : r.rows) set.Add(row_val(row));
      return set.Build();
    }
    case QueryResult::Shape::kCollection: {
      VecBuilder b;
      for (const auto& row : r.rows) b.Add(row.empty() ? Val() : FromEdn(row[0]));
      return b.Build();
    }
    case QueryResult::Shape::kTuple:
      return r.rows.empty() ? Val() : row_val(r.rows[0]);
    case QueryResult::Shape::kScalar:
      return r.rows.empty() || r.rows[0].empty() ? Val() : FromEdn(r.rows[0][0]);
  }
  return Val();
}

bool IsQueryForm(const Val& v) {
  return v.is(Type::kString) || v.is(Type::kVector) || v.is(Type::kMap) || v.is(Type::kList);
}

Val Open(Interp& in, Args a, size_t n, const FnObj& self) {
  StoreState& st = StateOf(in);
  if (n == 0 || a[0].is_nil()) {
    if (st.default_store) return HostConn(in, st.default_store);
  }
  std::string path = n == 0 || a[0].is_nil() ? "" : StrArg(self, a[0]);
  bool memory = path.empty() || path == ":memory:";
  if (!memory && !(st.allow_open && st.allow_open(path))) {
    Fail(self.name + ": opening files is not allowed in this sandbox: " + path, Code::kUnsupported);
  }
  in.Steps(kOpenSteps);
  Ref<ConnObj> c = Make<ConnObj>(kStoreBytes);
  Options options;
  options.read_only = st.read_only && !memory;
  options.create = !options.read_only;
  std::unique_ptr<Store> store = Must(self, Store::open(memory ? "" : path, options));
  c->store = store.get();
  c->owned = std::move(store);
  c->path = memory ? "" : path;
  c->Register(&st);
  return Val::Object(Type::kConn, c.get());
}

}  // namespace

StoreState& StateOf(Interp& in) { return *static_cast<StoreState*>(in.store_state.get()); }

Val HostConn(Interp& in, Store* store) {
  StoreState& st = StateOf(in);
  if (st.default_conn.is(Type::kConn) && st.default_conn.as<ConnObj>()->store == store) {
    return st.default_conn;
  }
  Ref<ConnObj> c = Make<ConnObj>(0);
  c->store = store;
  c->path = store->path();
  c->Register(&st);
  st.default_conn = Val::Object(Type::kConn, c.get());
  return st.default_conn;
}

Val HostDb(Interp& in, const Db& db) {
  Ref<ConnObj> c = Make<ConnObj>(0);
  c->store = db.store();
  c->path = db.store()->path();
  c->Register(&StateOf(in));
  return MakeDb(Val::Object(Type::kConn, c.get()), db);
}

void RegisterStore(Interp& in) {
  if (!in.store_state) in.store_state = std::make_shared<StoreState>();
  in.DefNative("mentat.store/open", Open, 0, 1, false);
  in.DefNative(
      "mentat.store/close",
      [](Interp&, Args a, size_t, const FnObj& s) {
        if (!a[0].is(Type::kConn)) Fail(s.name + " expects a connection, got " + PrBrief(a[0]));
        a[0].as<ConnObj>()->Close();
        return Val();
      },
      1, 1, false);
  in.DefNative(
      "mentat.store/db",
      [](Interp&, Args a, size_t, const FnObj& s) {
        return MakeDb(a[0], ConnArg(s, a[0])->store->db());
      },
      1, 1, false);
  in.DefNative(
      "mentat.store/basis-t",
      [](Interp&, Args a, size_t, const FnObj& s) {
        Val db = DbArg(s, a[0]);
        if (D(db)->speculative) return Val::Int(D(db)->spec_tx);
        return D(db)->db.basis() ? Val::Int(*D(db)->db.basis()) : Val();
      },
      1, 1, false);
  in.DefNative(
      "mentat.store/as-of",
      [](Interp&, Args a, size_t, const FnObj& s) {
        Val db = DbArg(s, a[0]);
        NotSpeculative(s, db);
        return MakeDb(D(db)->conn, D(db)->db.as_of(PointArg(s, a[1])));
      },
      2, 2, false);
  in.DefNative(
      "mentat.store/since",
      [](Interp&, Args a, size_t, const FnObj& s) {
        Val db = DbArg(s, a[0]);
        NotSpeculative(s, db);
        return MakeDb(D(db)->conn, D(db)->db.since(PointArg(s, a[1])));
      },
      2, 2, false);
  in.DefNative(
      "mentat.store/history",
      [](Interp&, Args a, size_t, const FnObj& s) {
        Val db = DbArg(s, a[0]);
        NotSpeculative(s, db);
        return MakeDb(D(db)->conn, D(db)->db.history());
      },
      1, 1, false);
  in.DefNative(
      "mentat.store/transact",
      [](Interp&, Args a, size_t, const FnObj& s) {
        ConnObj* c = ConnArg(s, a[0]);
        Db before = c->store->db();
        TxReport r;
        {
          ScopedCharge charge;  // the tree, until the store has it
          edn::Value data = TxData(s, a[1], &charge);
          r = Must(s, c->store->transact(data));
        }
        if (c->owned && c->path.empty()) {
          c->data.Add(kDatomBytes * static_cast<int64_t>(r.tx_data.size()));
        }
        Db after = c->store->db();
        if (after.basis() != r.tx_id) after = after.as_of(TxPoint::Tx(r.tx_id));
        return ReportVal(*c->store->schema(), r, MakeDb(a[0], before), MakeDb(a[0], after));
      },
      2, 2, false);
  in.DefNative(
      "mentat.store/with",
      [](Interp&, Args a, size_t, const FnObj& s) {
        Val db = DbArg(s, a[0]);
        NotSpeculative(s, db);
        Store* store = StoreOf(db);
        const Db& base = D(db)->db;
        if (base.as_of_point() || base.since_point() || base.is_history() ||
            base.basis() != Must(s, store->last_tx())) {
          Fail(s.name +
               " needs the current db of its connection (not an older, as-of, since or "
               "history db)");
        }
        TxReport r;
        {
          ScopedCharge charge;  // the tree, until the store has it
          r = Must(s, store->with(TxData(s, a[1], &charge)));
        }
        Ref<DbObj> after = Make<DbObj>(r.tx_data.size() * sizeof(Datom));
        after->conn = D(db)->conn;
        after->db = base;
        after->speculative = true;
        after->spec = r.tx_data;
        after->spec_tx = r.tx_id;
        return ReportVal(*store->schema(), r, db, Val::Object(Type::kDb, after.get()));
      },
      2, 2, false);
  in.DefNative(
      "mentat.store/q",
      [](Interp& in, Args a, size_t n, const FnObj& s) -> Val {
        // Datomic's client API: (q {:query query :args [db & inputs]}).
        if (n == 1) {
          if (!a[0].is(Type::kMap) || Get(a[0], Val::Keyword("query")).is_nil()) {
            Fail(s.name + " expects (q db query & inputs), (q query db & inputs) or " +
                 "(q {:query query :args [db & inputs]}), got " + PrBrief(a[0]));
          }
          Val args = Get(a[0], Val::Keyword("args"));
          if (!args.is_nil() && !args.is_sequential()) {
            Fail(s.name + ": :args must be a vector [db & inputs], got " + PrBrief(args));
          }
          ValVec call = {Get(a[0], Val::Keyword("query"))};
          for (Val it = Seq(args); !it.is_nil(); it = Next(it)) call.push_back(First(it));
          if (call.size() < 2) Fail(s.name + ": :args needs at least the db");
          return s.native(in, call.data(), call.size(), s);
        }
        // (q db query & inputs), or Datomic's (q query db & inputs).
        bool datomic_order = IsQueryForm(a[0]) && (a[1].is(Type::kDb) || a[1].is(Type::kConn));
        Val db = DbArg(s, datomic_order ? a[1] : a[0]);
        NotSpeculative(s, db);
        std::string query = TextArg(datomic_order ? a[0] : a[1], "a query");
        std::vector<Input> inputs;
        ScopedCharge charge;  // the inputs' trees, while the query runs
        for (size_t i = 2; i < n; ++i) {
          if (a[i].is(Type::kDb) || a[i].is(Type::kConn)) {
            Val other = DbArg(s, a[i]);
            NotSpeculative(s, other);
            inputs.emplace_back(std::make_shared<const Db>(D(other)->db));
          } else {
            inputs.emplace_back(ToEdn(a[i], true, "a query input", &charge));
          }
        }
        return QueryVal(Must(s, D(db)->db.q(query, std::move(inputs))));
      },
      1, -1, false);
  in.DefNative(
      "mentat.store/pull",
      [](Interp&, Args a, size_t, const FnObj& s) {
        // (pull db eid pattern), or Datomic's (pull db pattern eid).
        Val db = DbArg(s, a[0]);
        NotSpeculative(s, db);
        bool datomic_order =
            (a[1].is(Type::kVector) || a[1].is(Type::kString)) &&
            (a[2].is(Type::kInt) || a[2].is(Type::kKeyword) ||
             (a[2].is(Type::kVector) && VecCount(a[2]) == 2 && VecNth(a[2], 0).is(Type::kKeyword) &&
              !(VecNth(a[2], 1).is(Type::kKeyword) || VecNth(a[2], 1).is(Type::kSymbol))));
        const Val& eid = datomic_order ? a[2] : a[1];
        const Val& pattern = datomic_order ? a[1] : a[2];
        return FromEdn(Must(s, D(db)->db.pull(TextArg(pattern, "a pull pattern"), EidArg(s, eid))));
      },
      3, 3, false);
  in.DefNative(
      "mentat.store/pull-many",
      [](Interp&, Args a, size_t, const FnObj& s) {
        Val db = DbArg(s, a[0]);
        NotSpeculative(s, db);
        std::vector<edn::Value> eids;
        ScopedCharge charge;  // the ids, while the store pulls them
        ForEach(a[2], [&](const Val& e) {
          eids.push_back(EidArg(s, e, &charge));
          return true;
        });
        VecBuilder b;
        for (const edn::Value& v :
             Must(s, D(db)->db.pull_many(TextArg(a[1], "a pull pattern"), eids))) {
          b.Add(FromEdn(v));
        }
        return b.Build();
      },
      3, 3, false);
  in.DefNative(
      "mentat.store/entity",
      [](Interp&, Args a, size_t, const FnObj& s) { return EntityMap(s, DbArg(s, a[0]), a[1]); }, 2,
      2, false);
  in.DefNative(
      "mentat.store/read",
      [](Interp&, Args a, size_t, const FnObj& s) {
        Val db = DbArg(s, a[0]);
        if (!a[2].is(Type::kKeyword))
          Fail(s.name + " expects an attribute keyword, got " + PrBrief(a[2]));
        const Attribute* attr = StoreOf(db)->schema()->attribute(a[2].str());
        if (!attr) Fail(s.name + ": unknown attribute :" + a[2].str(), Code::kSchema);
        Val m = EntityMap(s, db, a[1]);
        Val v = m.is(Type::kMap) ? Get(m, a[2]) : Val();
        return attr->many && v.is_nil() ? Val::EmptySet() : v;
      },
      3, 3, false);
  in.DefNative(
      "mentat.store/datoms",
      [](Interp&, Args a, size_t n, const FnObj& s) {
        Val db = DbArg(s, a[0]);
        std::string index = ":eavt";
        if (n >= 2) {
          if (!a[1].is(Type::kKeyword))
            Fail(s.name + " expects an index keyword (:eavt :aevt :avet :vaet)");
          index = ":" + a[1].str();
        }
        std::vector<edn::Value> comps;
        for (size_t i = 2; i < n; ++i) comps.push_back(ToEdn(a[i], true, "a datoms component"));
        std::shared_ptr<const Schema> schema = StoreOf(db)->schema();
        VecBuilder b;
        for (const Datom& d : ReadDatoms(s, db, index, comps, *schema)) b.Add(DatomVec(*schema, d));
        return b.Build();
      },
      1, 6, false);
  in.DefNative(
      "mentat.store/tx-range",
      [](Interp&, Args a, size_t, const FnObj& s) {
        // Datomic's (tx-range log from to): from included, to not, nil open; each
        // transaction a map {:t :tx-id :tx-instant :data [[e a v tx added] ...]}.
        Val db = DbArg(s, a[0]);
        std::optional<TxPoint> bounds[2];
        for (int i = 0; i < 2; ++i)
          if (!a[1 + i].is_nil()) bounds[i] = PointArg(s, a[1 + i]);
        auto r = StoreOf(db)->tx_range(bounds[0], bounds[1]);
        if (!r.ok()) StoreFail(s, r.status());
        std::shared_ptr<const Schema> schema = StoreOf(db)->schema();
        VecBuilder out;
        for (const TxReport& t : *r) {
          VecBuilder data;
          for (const Datom& d : t.tx_data) data.Add(DatomVec(*schema, d));
          MapBuilder m;
          m.Add(Val::Keyword("t"), Val::Int(tx_to_t(t.tx_id)));
          m.Add(Val::Keyword("tx-id"), Val::Int(t.tx_id));
          m.Add(Val::Keyword("tx-instant"), Val::Inst(t.tx_instant));
          m.Add(Val::Keyword("data"), data.Build());
          out.Add(m.Build());
        }
        return out.Build();
      },
      3, 3, false);
  in.DefNative(
      "mentat.store/t->tx",
      [](Interp&, Args a, size_t, const FnObj& s) {
        if (!a[0].is(Type::kInt)) Fail(s.name + " expects an integer t, got " + PrBrief(a[0]));
        return Val::Int(t_to_tx(a[0].as_int()));
      },
      1, 1, false);
  in.DefNative(
      "mentat.store/tx->t",
      [](Interp&, Args a, size_t, const FnObj& s) {
        if (!a[0].is(Type::kInt)) Fail(s.name + " expects a transaction id, got " + PrBrief(a[0]));
        return Val::Int(tx_to_t(a[0].as_int()));
      },
      1, 1, false);
  in.DefNative(
      "mentat.store/entities",
      [](Interp&, Args a, size_t, const FnObj& s) {
        Val db = DbArg(s, a[0]);
        if (!a[1].is(Type::kKeyword))
          Fail(s.name + " expects an attribute keyword, got " + PrBrief(a[1]));
        std::shared_ptr<const Schema> schema = StoreOf(db)->schema();
        MapBuilder set(true);
        for (const Datom& d : ReadDatoms(s, db, ":aevt", {ToEdn(a[1])}, *schema)) {
          if (d.added) set.Add(Val::Int(d.e));
        }
        return set.Build();
      },
      2, 2, false);
}

}  // namespace mentat::script
