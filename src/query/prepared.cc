// Prepared queries: parse once, cache plans, run; Run/Explain entry points.
#include <algorithm>
#include <array>
#include <cmath>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "query/execute.h"
#include "query/query.h"

namespace mentat::query {

namespace {

constexpr auto kPlanMaxAge = std::chrono::seconds(1);

struct CachedPlan {
  std::unique_ptr<Compiled> compiled;
};

// Positional inputs matched against :in, with the rule set when one is given.
struct BoundInputs {
  std::vector<const edn::Value*> values;  // per positional input (nullptr for sources)
  std::vector<size_t> sizes;              // collection sizes (planner hints)
  const edn::Value* rules = nullptr;
};

Result<BoundInputs> MatchInputs(const ParsedQuery& q, const ExecContext& ctx,
                                const std::vector<Input>& inputs) {
  BoundInputs out;
  // The :in elements that take a value: all but a leading $.
  const size_t first = ImplicitSources(q, !inputs.empty() && inputs[0].db);
  struct Specs {
    const std::vector<InSpec>& in;
    size_t first;
    size_t size() const { return in.size() - first; }
    bool empty() const { return size() == 0; }
    const InSpec* operator[](size_t i) const { return &in[first + i]; }
    const InSpec* back() const { return &in.back(); }
  } specs{q.in, first};
  out.values.reserve(specs.size() + 1);
  out.sizes.reserve(specs.size() + 1);
  // A leading source of another name than $ bound to the store keeps its position (the
  // compiler counts it as an input, as it does a database given for it).
  if (first == 1 && q.in[0].name != "$") {
    out.values.push_back(nullptr);
    out.sizes.push_back(1);
  }
  if (inputs.size() != specs.size()) {
    std::string names;
    for (size_t i = 0; i < specs.size(); ++i)
      names += (names.empty() ? "" : " ") + edn::Print(specs[i]->form);
    std::string msg = "query expects " + std::to_string(specs.size()) + " input" +
                      (specs.size() == 1 ? "" : "s") + (names.empty() ? "" : " (" + names + ")") +
                      ", got " + std::to_string(inputs.size());
    // Point at the first :in element without a value, or for extra inputs at the last
    // :in element (the query itself when it declares none).
    if (inputs.size() < specs.size())
      return ClauseError(Code::kInvalidArgument, specs[inputs.size()]->form,
                         msg + ": no value for " + edn::Print(specs[inputs.size()]->form));
    if (!specs.empty())
      return ClauseError(Code::kInvalidArgument, specs.back()->form,
                         msg + ": " + std::to_string(inputs.size() - specs.size()) +
                             " more than declared by :in, which ends");
    return ClauseError(Code::kInvalidArgument, q.form, msg + " (the query has no :in inputs)");
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    const InSpec& s = *specs[i];
    const Input& in = inputs[i];
    const edn::Value& v = in.value;
    out.values.push_back(&v);
    out.sizes.push_back(v.is_seq() ? v.size() : 1);
    auto bad = [&](const std::string& what) {
      return ClauseError(Code::kInvalidArgument, s.form,
                         "input " + std::to_string(i + 1) + " must be " + what + ", got " +
                             (in.db ? std::string("a database") : edn::Print(v)));
    };
    switch (s.kind) {
      case InSpec::Kind::kSrc:
        if (!ctx.sources.count(s.name) && !in.db) return bad("a database");
        out.values.back() = nullptr;
        break;
      case InSpec::Kind::kRules:
        if (in.db || !(v.is_vector() || v.is_list() || v.is_string()))
          return bad("a rule set (a vector of rules)");
        out.rules = &v;
        break;
      case InSpec::Kind::kBlank:
        break;
      case InSpec::Kind::kScalar:
        if (in.db || v.is_nil()) return bad("a value");
        break;
      case InSpec::Kind::kTuple:
        if (in.db || !v.is_seq() || v.is_set() || v.size() != s.vars.size())
          return bad("a tuple of " + std::to_string(s.vars.size()) + " values");
        break;
      case InSpec::Kind::kColl:
        if (in.db || !v.is_seq()) return bad("a collection");
        break;
      case InSpec::Kind::kRel:
        if (in.db || !v.is_seq()) return bad("a relation (a collection of tuples)");
        for (const edn::Value& row : v.items())
          if (!row.is_seq() || row.is_set() || row.size() != s.vars.size())
            return bad("a relation of " + std::to_string(s.vars.size()) + "-tuples");
        break;
    }
  }
  return out;
}

// Errors about one input's value ("input ?x ...", "missing input ?x") get the position
// of the :in element that declares the variable.
Status WithInputPos(const ParsedQuery& q, Status st) {
  if (st.ok()) return st;
  const std::string& m = st.message();
  size_t at = m.rfind("input ?", 0) == 0 ? 6 : m.rfind("missing input ?", 0) == 0 ? 14 : 0;
  if (at == 0 || m.find(" at ") != std::string::npos) return st;
  size_t end = m.find_first_of(" :", at);
  std::string var = m.substr(at, end == std::string::npos ? std::string::npos : end - at);
  for (const InSpec& in : q.in) {
    bool declares =
        in.name == var || std::find(in.vars.begin(), in.vars.end(), var) != in.vars.end();
    if (declares && in.form.pos().known()) return ClauseError(st.code(), in.form, m);
  }
  return st;
}

std::string ShapeKey(const DbView& v) {
  std::string k;
  if (v.as_of) k += "a";
  if (v.since) k += "s" + std::to_string(*v.since);
  if (v.history) k += "h";
  return k.empty() ? "c" : k;
}

}  // namespace

namespace {

// The plan key of the common case (the `$` database alone, no rule set), compared field by
// field: a repeated query finds its plan without building the string key or copying the
// views.
struct FastKey {
  uint64_t schema_gen = 0;
  uint64_t cache_gen = 0;
  const Schema* schema = nullptr;
  const Dialect* dialect = nullptr;
  bool planner = false, as_of = false, history = false;
  std::optional<Entid> since;
  std::array<int8_t, 8> sizes{};  // per input: log2 size class of a collection, else -1
  bool operator==(const FastKey&) const = default;
};

// Fills `k`; false when the query is not the common case.
bool MakeFastKey(const ExecContext& ctx, const BoundInputs& in, FastKey* k) {
  if (!ctx.sources.empty() || in.rules || in.sizes.size() > k->sizes.size() ||
      !ctx.disabled_passes.empty())
    return false;
  k->schema_gen = ctx.schema_gen;
  k->cache_gen = ctx.cache_gen;
  k->schema = ctx.schema;
  k->dialect = ctx.dialect;
  k->planner = ctx.use_planner;
  k->as_of = ctx.view.as_of.has_value();
  k->since = ctx.view.since;
  k->history = ctx.view.history;
  k->sizes.fill(-1);
  for (size_t i = 0; i < in.sizes.size(); ++i)
    if (in.values[i] && in.values[i]->is_seq())
      k->sizes[i] = static_cast<int8_t>(std::log2(1.0 + static_cast<double>(in.sizes[i])));
  return true;
}

}  // namespace

class PlanCache {
 public:
  std::mutex mu;
  std::unordered_map<std::string, std::shared_ptr<const CachedPlan>> plans;
  // The plan the last common-case run used, and its key.
  FastKey last_key;
  std::shared_ptr<const CachedPlan> last;
};

Prepared::Prepared() = default;
Prepared::~Prepared() = default;

Result<std::shared_ptr<const Prepared>> Prepared::FromValue(const edn::Value& query) {
  MENTAT_ASSIGN_OR_RETURN(ParsedQuery q, ParseQuery(query));
  for (const FindElem& f : q.find) q.find_names.push_back(edn::Print(f.form));
  std::shared_ptr<Prepared> p(new Prepared());
  p->parsed_ = std::make_unique<ParsedQuery>(std::move(q));
  p->cache_ = std::make_unique<PlanCache>();
  return std::shared_ptr<const Prepared>(std::move(p));
}

Result<std::shared_ptr<const Prepared>> Prepared::Parse(std::string_view query) {
  auto v = edn::Read(query, QueryReadOptions());
  if (!v.ok()) return Status::Parse("query: " + v.status().message());
  return FromValue(*v);
}

namespace {

struct Setup {
  BoundInputs inputs;
  std::shared_ptr<const CachedPlan> plan;
};

Result<Setup> GetPlan(const ParsedQuery& q, PlanCache* cache, const ExecContext& ctx,
                      const std::vector<Input>& inputs) {
  if (!ctx.conn || !ctx.schema) return Status::Internal("query without a connection or schema");
  if (!ctx.conn->is_pg()) MENTAT_RETURN_IF_ERROR(EnsureRegistered(ctx.conn->raw()));
  MENTAT_RETURN_IF_ERROR(CheckPassNames(ctx.disabled_passes));
  Setup s;
  MENTAT_ASSIGN_OR_RETURN(s.inputs, MatchInputs(q, ctx, inputs));
  auto now = std::chrono::steady_clock::now();
  FastKey fast_key;
  bool fast = MakeFastKey(ctx, s.inputs, &fast_key);
  auto remember = [&](const std::shared_ptr<const CachedPlan>& plan) {
    if (!fast) return;
    std::lock_guard<std::mutex> lock(cache->mu);
    cache->last_key = fast_key;
    cache->last = plan;
  };
  if (fast) {
    std::lock_guard<std::mutex> lock(cache->mu);
    if (cache->last && cache->last_key == fast_key &&
        now - cache->last->compiled->built < kPlanMaxAge) {
      s.plan = cache->last;
      return s;
    }
  }
  std::map<std::string, DbView> views = ctx.sources;
  views["$"] = ctx.view;
  std::string key = std::to_string(ctx.schema_gen) + "|" +
                    std::to_string(reinterpret_cast<uintptr_t>(ctx.schema)) +
                    (ctx.use_planner ? "|p" : "|n") + "|c" + std::to_string(ctx.cache_gen);
  if (ctx.dialect) key += std::string("|d") + ctx.dialect->name();
  for (const auto& name : ctx.disabled_passes) key += "|-" + name;
  for (const auto& [name, v] : views) key += "|" + name + ":" + ShapeKey(v);
  if (s.inputs.rules) key += "|r" + edn::Print(*s.inputs.rules);
  for (size_t i = 0; i < s.inputs.sizes.size(); ++i)
    if (s.inputs.values[i] && s.inputs.values[i]->is_seq())
      key += "|n" + std::to_string(static_cast<int>(std::log2(1.0 + s.inputs.sizes[i])));
  std::shared_ptr<const CachedPlan> hit;
  {
    std::lock_guard<std::mutex> lock(cache->mu);
    auto it = cache->plans.find(key);
    if (it != cache->plans.end() && now - it->second->compiled->built < kPlanMaxAge)
      hit = it->second;
  }
  if (hit) {
    remember(hit);
    s.plan = std::move(hit);
    return s;
  }
  RuleSet rules;
  AnalyzeEnv env;
  if (ctx.dialect) env.dialect = ctx.dialect;
  env.schema = ctx.schema;
  env.cached_attrs = ctx.cached_attrs.get();
  for (const auto& [name, v] : views)
    env.sources[name] = ViewShape{v.as_of.has_value(), v.since.has_value(), v.history};
  if (s.inputs.rules) {
    MENTAT_ASSIGN_OR_RETURN(rules, ParseRules(*s.inputs.rules));
    env.rules = &rules;
    env.recursive = RecursiveRules(rules);
  }
  MENTAT_ASSIGN_OR_RETURN(Stats stats, ReadStats(ctx.conn, views));
  env.stats = &stats;
  env.views = &views;
  env.use_planner = ctx.use_planner;
  env.disabled_passes = ctx.disabled_passes;
  env.pass_through = PassEnabled("pass_through", ctx.use_planner, ctx.disabled_passes);
  env.seed_recursion = PassEnabled("seed_recursion", ctx.use_planner, ctx.disabled_passes);
  std::vector<size_t> sizes;
  for (size_t i = 0; i < s.inputs.sizes.size(); ++i) sizes.push_back(s.inputs.sizes[i]);
  MENTAT_ASSIGN_OR_RETURN(auto compiled, Compile(q, env, sizes));
  auto plan = std::make_shared<CachedPlan>();
  plan->compiled = std::move(compiled);
  {
    std::lock_guard<std::mutex> lock(cache->mu);
    if (cache->plans.size() > 64) cache->plans.clear();
    cache->plans[key] = plan;
  }
  remember(plan);
  s.plan = std::move(plan);
  return s;
}

std::optional<int64_t> Timeout(const ExecContext& ctx, const ParsedQuery& q) {
  std::optional<int64_t> t = ctx.timeout_ms;
  if (q.timeout_ms && (!t || *q.timeout_ms < *t)) t = q.timeout_ms;
  return t;
}

}  // namespace

Result<QueryResult> Prepared::Execute(const ExecContext& ctx,
                                      const std::vector<Input>& inputs) const {
  Interrupter intr(ctx, Timeout(ctx, *parsed_));
  MENTAT_RETURN_IF_ERROR(intr.Check());
  MENTAT_ASSIGN_OR_RETURN(Setup s, GetPlan(*parsed_, cache_.get(), ctx, inputs));
  const Compiled& c = *s.plan->compiled;
  for (const ProjElem& pe : c.find)
    if (pe.kind == FindElem::Kind::kPull && !ctx.pull && !ctx.pull_many)
      return Status::Unsupported("pull is not supported yet");
  if (!c.cached_attrs.empty()) {
    if (!ctx.prepare_cache) return Status::Internal("a plan reads the attribute cache without one");
    MENTAT_RETURN_IF_ERROR(ctx.prepare_cache(c.cached_attrs));
  }
  Execution ex(ctx, *parsed_, c, std::move(s.inputs.values), intr);
  MENTAT_RETURN_IF_ERROR(WithInputPos(*parsed_, intr.Translate(ex.Prepare())));
  MENTAT_RETURN_IF_ERROR(intr.Translate(ex.EvalRules()));
  auto r = ex.Run();
  if (!r.ok()) return WithInputPos(*parsed_, r.status());
  return r;
}

Result<std::string> Prepared::Analyze(const ExecContext& ctx, const Compiled& c,
                                      std::vector<const edn::Value*> inputs) const {
  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::duration d) {
    char b[32];
    snprintf(b, sizeof b, "%.3f", std::chrono::duration<double, std::milli>(d).count());
    return std::string(b);
  };
  Interrupter intr(ctx, Timeout(ctx, *parsed_));
  Execution ex(ctx, *parsed_, c, std::move(inputs), intr);
  auto t0 = Clock::now();
  MENTAT_RETURN_IF_ERROR(WithInputPos(*parsed_, intr.Translate(ex.Prepare())));
  // Every stratum, also one the query's statement reads itself: the prefix counts read
  // the relations.
  MENTAT_RETURN_IF_ERROR(intr.Translate(ex.EvalRules(true)));
  auto t1 = Clock::now();
  auto r = ex.Run();
  if (!r.ok()) return WithInputPos(*parsed_, r.status());
  auto t2 = Clock::now();
  std::string out = "analyze (the query run once):\n";
  if (!c.strata.empty()) out += "  rules: " + ms(t1 - t0) + " ms\n";
  out += "  query: " + std::to_string(r->rows.size()) + " rows in " + ms(t2 - t1) + " ms\n";
  // Per step of the top block's join order: the rows after it, counted by a statement
  // that joins the items up to it (the conditions on later items left out).
  const Block& top = c.main.blocks[0];
  double est = 1;
  for (size_t k = 1; k <= top.order.size(); ++k) {
    const Item& item = c.main.items[static_cast<size_t>(top.order[k - 1])];
    est = std::min(1e18, est * item.est);
    char e[32];
    snprintf(e, sizeof e, est >= 1 ? "%.0f" : "%.2g", est);
    std::string line = "  " + std::to_string(k) + ". t" + std::to_string(item.id) + "  est. " + e +
                       " rows, actual ";
    auto sql = EmitPrefixCount(c.main, k);
    if (!sql) {
      out += line + "(not counted alone: it reads a later item)\n";
      continue;
    }
    auto s0 = Clock::now();
    MENTAT_ASSIGN_OR_RETURN(int64_t n, ex.CountWithMainParams(*sql));
    out += line + std::to_string(n) + " rows, " + ms(Clock::now() - s0) + " ms\n";
  }
  return out;
}

Result<std::string> Prepared::Explain(const ExecContext& ctx,
                                      const std::vector<Input>& inputs) const {
  MENTAT_ASSIGN_OR_RETURN(Setup s, GetPlan(*parsed_, cache_.get(), ctx, inputs));
  const Compiled& c = *s.plan->compiled;
  std::string out = "query:\n  " + edn::Print(parsed_->form) + "\n";
  out += std::string("join order") + (ctx.use_planner ? "" : " (planner off: as written)") + ":\n";
  int k = 0;
  for (const auto& line : c.order_text) out += "  " + std::to_string(++k) + ". " + line + "\n";
  if (c.order_text.empty()) out += "  (no patterns)\n";
  out += "optimizer passes:\n";
  for (const PassReport& r : c.pass_reports) {
    out += "  " + r.name + (r.ran ? "" : ": off") +
           (r.ran && r.changes.empty() ? ": no change" : "") + "\n";
    for (const auto& line : r.changes) out += "    " + line + "\n";
  }
  for (const RuleClauseUnit& cu : c.rule_units)
    out += "rule " + c.rule_rels[cu.head_rel].rule + " clause:\n  " + cu.sql + "\n";
  for (const Stratum& st : c.strata) {
    if (st.cte_sql.empty()) continue;
    std::string names;
    for (int r : st.rule_rels) names += (names.empty() ? "" : ", ") + c.rule_rels[r].rule;
    out += "rules " + names + " as one statement:\n  " + st.cte_sql + "\n";
  }
  out += "sql:\n  " + c.sql + "\n";
  if (ctx.analyze) {
    MENTAT_ASSIGN_OR_RETURN(std::string report, Analyze(ctx, c, s.inputs.values));
    out += report;
  }
  if (ctx.conn->is_pg()) {
    // PostgreSQL 15 plans a statement with parameters only for their values (EXPLAIN
    // (GENERIC_PLAN) is 16's): .explain analyze shows what ran.
    out += "postgresql plan: chosen per execution, for the parameters' values\n";
    return out;
  }
  out += "sqlite plan:\n";
  MENTAT_ASSIGN_OR_RETURN(auto st, ctx.conn->Prepare("EXPLAIN QUERY PLAN " + c.sql));
  std::map<int, int> depth;
  for (;;) {
    MENTAT_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    int id = static_cast<int>(st.ColumnInt(0)), parent = static_cast<int>(st.ColumnInt(1));
    int d = depth.count(parent) ? depth[parent] + 1 : 1;
    depth[id] = d;
    out += std::string(static_cast<size_t>(2 * d), ' ') + std::string(st.ColumnText(3)) + "\n";
  }
  return out;
}

Result<QueryResult> Run(const ExecContext& ctx, std::string_view query,
                        const std::vector<Input>& inputs) {
  MENTAT_ASSIGN_OR_RETURN(auto p, Prepared::Parse(query));
  return p->Execute(ctx, inputs);
}

Result<QueryResult> Run(const ExecContext& ctx, const edn::Value& query,
                        const std::vector<Input>& inputs) {
  MENTAT_ASSIGN_OR_RETURN(auto p, Prepared::FromValue(query));
  return p->Execute(ctx, inputs);
}

Result<std::string> Explain(const ExecContext& ctx, std::string_view query,
                            const std::vector<Input>& inputs) {
  MENTAT_ASSIGN_OR_RETURN(auto p, Prepared::Parse(query));
  return p->Explain(ctx, inputs);
}

}  // namespace mentat::query
