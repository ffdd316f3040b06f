#include "export.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <numeric>
#include <queue>
#include <set>
#include <unordered_map>

namespace mentat::cli {

Result<TxPoint> ParseTxPoint(const std::string& text) {
  std::string t = text;
  if (t.empty()) return Status::InvalidArgument("expected a transaction id or an instant");
  if (t.find_first_not_of("0123456789") == std::string::npos) {
    return TxPoint::Tx(std::stoll(t));
  }
  if (t.rfind("#inst", 0) == 0) {
    auto v = edn::Read(t);
    if (!v.ok() || !v->is_inst()) return Status::InvalidArgument("bad instant " + text);
    return TxPoint::Instant(v->as_inst_micros());
  }
  if (t.size() >= 2 && t.front() == '"' && t.back() == '"') t = t.substr(1, t.size() - 2);
  auto micros = edn::ParseInstant(t);
  if (!micros.ok())
    return Status::InvalidArgument(
        "expected a transaction id or an instant (e.g. "
        "2024-01-31T10:00:00Z), got " +
        text);
  return TxPoint::Instant(*micros);
}

namespace {

// Strongly connected components (iterative Tarjan): comp[v] for every node.
std::vector<int> Scc(const std::vector<std::vector<int>>& adj) {
  int n = static_cast<int>(adj.size());
  std::vector<int> index(n, -1), low(n, 0), comp(n, -1), stack;
  std::vector<char> on_stack(n, 0);
  std::vector<std::pair<int, size_t>> calls;
  int next = 0, ncomp = 0;
  auto visit = [&](int v) {
    index[v] = low[v] = next++;
    stack.push_back(v);
    on_stack[v] = 1;
    calls.emplace_back(v, 0);
  };
  for (int s = 0; s < n; ++s) {
    if (index[s] != -1) continue;
    visit(s);
    while (!calls.empty()) {
      int v = calls.back().first;
      size_t i = calls.back().second;
      if (i < adj[v].size()) {
        calls.back().second = i + 1;
        int w = adj[v][i];
        if (index[w] == -1) {
          visit(w);
        } else if (on_stack[w]) {
          low[v] = std::min(low[v], index[w]);
        }
        continue;
      }
      if (low[v] == index[v]) {
        for (;;) {
          int w = stack.back();
          stack.pop_back();
          on_stack[w] = 0;
          comp[w] = ncomp;
          if (w == v) break;
        }
        ++ncomp;
      }
      calls.pop_back();
      if (!calls.empty()) low[calls.back().first] = std::min(low[calls.back().first], low[v]);
    }
  }
  return comp;
}

struct UnionFind {
  std::vector<int> parent;
  explicit UnionFind(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  int Find(int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void Union(int a, int b) {
    a = Find(a);
    b = Find(b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  }
};

// One exported entity: its datoms in the data transactions.
struct Entity {
  Entid e = 0;
  std::vector<const Datom*> datoms;
  std::optional<edn::Value> handle;  // ident keyword or lookup ref usable in any later tx
  bool preexisting = false;          // since mode: the handle was not exported, so the
                                     // entity exists in the target store
  int batch = -1;
};

// A lookup ref naming an entity, from its datoms: a unique identity attribute first, then
// a unique value attribute, ref-typed attributes excepted.
std::optional<edn::Value> UniqueHandle(const Schema& schema, const std::vector<Datom>& datoms) {
  const Datom* best = nullptr;
  int best_rank = 0;
  for (const auto& d : datoms) {
    const Attribute* a = schema.attribute(d.a);
    if (!a || a->unique == Unique::kNone || a->type == ValueType::kRef) continue;
    int rank = a->unique == Unique::kIdentity ? 2 : 1;
    if (rank > best_rank) {
      best = &d;
      best_rank = rank;
    }
  }
  if (!best) return std::nullopt;
  return edn::Value::Vector({edn::Value::Keyword(schema.attribute(best->a)->ident), best->v});
}

class Exporter {
 public:
  Exporter(Store& store, const ExportOptions& options, std::ostream& out, ExportStats* stats)
      : store_(store), options_(options), out_(out), stats_(stats) {}

  Status Run() {
    Db db = store_.db();
    schema_ = store_.schema();
    stats_->basis = db.basis().value_or(0);
    full_ = db;
    Db view = options_.since ? db.since(*options_.since) : db;
    MENTAT_ASSIGN_OR_RETURN(all_, view.datoms(":eavt"));
    Header();
    MENTAT_RETURN_IF_ERROR(SchemaPhase());
    MENTAT_RETURN_IF_ERROR(Plan());
    return DataPhase();
  }

 private:
  void Header() {
    std::string path = store_.path().empty() ? "(in-memory)" : store_.path();
    for (char& c : path)
      if (c == '\n' || c == '\r') c = ' ';
    out_ << ";; mentat export of " << path << " at transaction " << stats_->basis;
    if (options_.since) {
      if (options_.since->tx) out_ << ", datoms asserted after transaction " << *options_.since->tx;
      if (options_.since->instant_micros)
        out_ << ", datoms asserted after " << edn::FormatInstant(*options_.since->instant_micros);
    }
    out_ << "\n;; One transaction per top-level form, the schema first; read it back with "
            ".import FILE.\n";
  }

  bool Skipped(const Datom& d) const { return d.e >= ids::kTxStart || d.tx == ids::kBootstrapTx; }

  edn::Value Ident(Entid e) const {
    const std::string* id = schema_->ident(e);
    return id ? edn::Value::Keyword(*id) : edn::Value::Int(e);
  }

  Status SchemaPhase() {
    edn::Vec maps;
    size_t i = 0;
    while (i < all_.size()) {
      size_t j = i;
      while (j < all_.size() && all_[j].e == all_[i].e) ++j;
      Entid e = all_[i].e;
      const std::string* ident = schema_->ident(e);
      if (ident && e < ids::kTxStart) {
        edn::MapEntries m;
        bool any = false;
        for (size_t k = i; k < j; ++k) {
          const Datom& d = all_[k];
          if (Skipped(d) || !Schema::IsSchemaAttribute(d.a)) continue;
          in_schema_phase_.insert(&d);
          any = true;
          ++stats_->datoms;
          if (d.a == ids::kIdent) continue;
          const Attribute* a = schema_->attribute(d.a);
          m.emplace_back(Ident(d.a), a && a->type == ValueType::kRef ? Ident(d.v.as_int()) : d.v);
        }
        if (any) {
          m.emplace_back(edn::Value::Keyword("db/ident"), edn::Value::Keyword(*ident));
          maps.push_back(edn::Value::Map(std::move(m)));
          ++stats_->entities;
        }
      }
      i = j;
    }
    if (maps.empty()) return Status::OK();
    out_ << ";; schema\n";
    WriteTx(maps, {});
    return Status::OK();
  }

  Result<std::optional<edn::Value>> FullHandle(Entid e) {
    if (const std::string* id = schema_->ident(e)) return std::optional(edn::Value::Keyword(*id));
    MENTAT_ASSIGN_OR_RETURN(auto ds, full_.datoms(":eavt", {edn::Value::Int(e)}));
    return UniqueHandle(*schema_, ds);
  }

  // Groups the remaining datoms into entities and entities into transactions.
  Status Plan() {
    for (const auto& d : all_) {
      if (Skipped(d) || in_schema_phase_.count(&d)) continue;
      if (ents_.empty() || ents_.back().e != d.e) {
        ents_.emplace_back();
        ents_.back().e = d.e;
        index_[d.e] = ents_.size() - 1;
      }
      ents_.back().datoms.push_back(&d);
    }
    for (auto& ent : ents_) {
      if (const std::string* id = schema_->ident(ent.e)) {
        ent.handle = edn::Value::Keyword(*id);
        ent.preexisting = true;  // created by the schema transaction or already there
        continue;
      }
      std::vector<Datom> own;
      for (const Datom* d : ent.datoms) own.push_back(*d);
      ent.handle = UniqueHandle(*schema_, own);
      if (options_.since) {
        MENTAT_ASSIGN_OR_RETURN(auto full, FullHandle(ent.e));
        if (full && (!ent.handle || !(*full == *ent.handle))) {
          ent.handle = full;
          ent.preexisting = true;
        }
      }
    }
    // Entities joined by a tempid reference share a transaction; a reference to an
    // entity with a handle only needs that entity to come first.
    UnionFind uf(ents_.size());
    std::vector<std::pair<int, int>> before;  // (first, second)
    for (size_t i = 0; i < ents_.size(); ++i) {
      for (const Datom* d : ents_[i].datoms) {
        const Attribute* a = schema_->attribute(d->a);
        if (!a || a->type != ValueType::kRef || !d->v.is_int()) continue;
        auto it = index_.find(d->v.as_int());
        if (it == index_.end()) continue;
        const Entity& target = ents_[it->second];
        if (target.preexisting) continue;
        if (target.handle) {
          before.emplace_back(static_cast<int>(it->second), static_cast<int>(i));
        } else {
          uf.Union(static_cast<int>(i), static_cast<int>(it->second));
        }
      }
    }
    // Cycles through handles also force a shared transaction.
    std::vector<int> root_index(ents_.size(), -1), roots;
    for (size_t i = 0; i < ents_.size(); ++i) {
      int r = uf.Find(static_cast<int>(i));
      if (root_index[r] == -1) {
        root_index[r] = static_cast<int>(roots.size());
        roots.push_back(r);
      }
    }
    std::vector<std::vector<int>> adj(roots.size());
    for (auto [a, b] : before) {
      int ca = root_index[uf.Find(a)], cb = root_index[uf.Find(b)];
      if (ca != cb) adj[ca].push_back(cb);
    }
    std::vector<int> scc = Scc(adj);
    for (size_t c = 0; c < roots.size(); ++c) {
      for (int w : adj[c])
        if (scc[c] == scc[w]) uf.Union(roots[c], roots[w]);
    }
    // Groups in dependency order, lowest entity id first among the ready ones.
    std::map<int, std::vector<int>> members;  // root -> entity indexes (ascending)
    for (size_t i = 0; i < ents_.size(); ++i)
      members[uf.Find(static_cast<int>(i))].push_back(static_cast<int>(i));
    std::map<int, std::vector<int>> succ;
    std::map<int, int> indegree;
    for (auto [a, b] : before) {
      int ra = uf.Find(a), rb = uf.Find(b);
      if (ra == rb) continue;
      succ[ra].push_back(rb);
      ++indegree[rb];
    }
    std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
    for (const auto& [r, _] : members)
      if (indegree[r] == 0) ready.push(r);
    size_t batch_datoms = 0;
    int batch = 0;
    while (!ready.empty()) {
      int r = ready.top();
      ready.pop();
      size_t n = 0;
      for (int i : members[r]) n += ents_[i].datoms.size();
      if (batch_datoms > 0 && batch_datoms + n > options_.batch_datoms) {
        ++batch;
        batch_datoms = 0;
      }
      for (int i : members[r]) {
        ents_[i].batch = batch;
        order_.push_back(i);
      }
      batch_datoms += n;
      for (int s : succ[r])
        if (--indegree[s] == 0) ready.push(s);
    }
    if (order_.size() != ents_.size()) return Status::Internal("export: cyclic transaction order");
    return Status::OK();
  }

  edn::Value IdOf(const Entity& ent) const {
    if (ent.handle && ent.preexisting) return *ent.handle;
    return edn::Value::String("e" + std::to_string(ent.e));
  }

  Result<edn::Value> RefOf(const Entity& from, Entid v) {
    if (const std::string* id = schema_->ident(v)) return edn::Value::Keyword(*id);
    auto it = index_.find(v);
    if (it != index_.end()) {
      const Entity& target = ents_[it->second];
      if (target.batch == from.batch || !target.handle) return IdOf(target);
      return *target.handle;
    }
    if (options_.since) {
      MENTAT_ASSIGN_OR_RETURN(auto handle, FullHandle(v));
      if (handle) return *handle;
    }
    return edn::Value::Int(v);  // an entity without datoms: keep its id
  }

  Status DataPhase() {
    edn::Vec maps, lists;
    int current = -1;
    for (int i : order_) {
      const Entity& ent = ents_[i];
      if (ent.batch != current) {
        if (!maps.empty() || !lists.empty()) WriteTx(maps, lists);
        if (current == -1) out_ << ";; entities\n";
        maps.clear();
        lists.clear();
        current = ent.batch;
      }
      edn::Value id = IdOf(ent);
      edn::MapEntries m;
      size_t k = 0;
      while (k < ent.datoms.size()) {
        size_t j = k;
        while (j < ent.datoms.size() && ent.datoms[j]->a == ent.datoms[k]->a) ++j;
        Entid a = ent.datoms[k]->a;
        const Attribute* attr = schema_->attribute(a);
        if (!attr)
          return Status::Internal("export: datom of unknown attribute " + std::to_string(a));
        edn::Value key = edn::Value::Keyword(attr->ident);
        edn::Vec values;
        for (size_t x = k; x < j; ++x) {
          const Datom& d = *ent.datoms[x];
          if (attr->type == ValueType::kRef && d.v.is_int()) {
            MENTAT_ASSIGN_OR_RETURN(edn::Value ref, RefOf(ent, d.v.as_int()));
            values.push_back(std::move(ref));
          } else {
            values.push_back(d.v);
          }
        }
        stats_->datoms += j - k;
        if (attr->many && attr->type == ValueType::kRef) {
          // [:db/add e a v] forms: a vector of refs could read as a lookup ref.
          for (auto& v : values)
            lists.push_back(edn::Value::Vector({edn::Value::Keyword("db/add"), id, key, v}));
        } else if (attr->many) {
          m.emplace_back(key, edn::Value::Vector(std::move(values)));
        } else {
          m.emplace_back(key, values[0]);
        }
        k = j;
      }
      if (!m.empty()) {
        m.emplace_back(edn::Value::Keyword("db/id"), id);
        maps.push_back(edn::Value::Map(std::move(m)));
      }
      ++stats_->entities;
    }
    if (!maps.empty() || !lists.empty()) WriteTx(maps, lists);
    return Status::OK();
  }

  void WriteTx(const edn::Vec& maps, const edn::Vec& lists) {
    std::string text = "[";
    bool first = true;
    for (const auto* group : {&maps, &lists}) {
      for (const auto& v : *group) {
        if (!first) text += "\n ";
        first = false;
        edn::PrintTo(v, &text);
      }
    }
    text += "]\n";
    out_ << text;
    ++stats_->transactions;
  }

  Store& store_;
  const ExportOptions& options_;
  std::ostream& out_;
  ExportStats* stats_;
  std::shared_ptr<const Schema> schema_;
  Db full_;
  std::vector<Datom> all_;
  std::set<const Datom*> in_schema_phase_;
  std::vector<Entity> ents_;
  std::unordered_map<Entid, size_t> index_;
  std::vector<int> order_;
};

}  // namespace

Status Export(Store& store, std::ostream& out, const ExportOptions& options, ExportStats* stats) {
  *stats = ExportStats{};
  Exporter exporter(store, options, out, stats);
  MENTAT_RETURN_IF_ERROR(exporter.Run());
  out.flush();
  if (!out) return Status::Io("export: write failed");
  return Status::OK();
}

Status ExportFile(Store& store, const std::string& path, const ExportOptions& options,
                  ExportStats* stats) {
  std::string tmp = path + ".tmp-" + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Status::Io("cannot write '" + path + "': " + std::strerror(errno));
    Status st = Export(store, out, options, stats);
    out.close();
    if (st.ok() && !out) st = Status::Io("cannot write '" + path + "'");
    if (!st.ok()) {
      std::remove(tmp.c_str());
      return st;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string err = std::strerror(errno);
    std::remove(tmp.c_str());
    return Status::Io("cannot write '" + path + "': " + err);
  }
  return Status::OK();
}

}  // namespace mentat::cli
