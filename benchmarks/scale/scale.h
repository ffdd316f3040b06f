// The scale suite's driver (`mentat-scale`): shared types.
//
// The workload is defined in shared/bench/SCALE_SUITE.md: an issue tracker (users, labels,
// issues, a history of state changes), seven queries, timed scenarios and correctness
// checks. This header holds what every part of the driver shares: the dataset context
// (meta.json, the load's tx ids and issue entity ids), the query texts and the Backend /
// Session interface that each system under test implements.
//
// A backend is a small class: it opens sessions (one per client thread or process), and a
// session answers the suite's operations. Results come back as EDN values so the checks
// are written once for every backend.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mentat/edn.h"
#include "mentat/schema.h"
#include "mentat/status.h"

namespace mentat::scale {

// The generator's version: bump it when the dataset changes, so cached data is rebuilt.
constexpr int kGenVersion = 2;
constexpr uint64_t kDefaultSeed = 20260509;

// ---- Queries (SCALE_SUITE.md, verbatim) ----

inline constexpr std::string_view kQ1PointLookup =
    "[:find ?e ?name :in $ ?email :where [?e :user/email ?email] [?e :user/name ?name]]";
inline constexpr std::string_view kQ2RefTraversal =
    "[:find ?i ?title ?state :in $ ?email :where [?u :user/email ?email] "
    "[?i :issue/assignee ?u] [?i :issue/title ?title] [?i :issue/state ?state]]";
inline constexpr std::string_view kQ3Aggregate =
    "[:find ?state (count ?i) :where [?i :issue/state ?state]]";
inline constexpr std::string_view kQ4PredicateScan =
    "[:find ?i ?title ?priority :in $ ?min :where [?i :issue/state :state/open] "
    "[?i :issue/priority ?priority] [?i :issue/title ?title] [(>= ?priority ?min)]]";
inline constexpr std::string_view kQSince = "[:find ?i :where [?i :issue/state _]]";
inline constexpr std::string_view kQInputBindings =
    "[:find ?e ?name :in $ [?email ...] :where [?e :user/email ?email] [?e :user/name ?name]]";
inline constexpr std::string_view kQPull =
    "[:find (pull ?e [*]) . :in $ ?e :where [?e :issue/title _]]";

// The timed read scenarios, in the suite's order.
inline const std::vector<std::string> kReadScenarios = {
    "point_lookup", "ref_traversal", "aggregate", "predicate_scan",
    "pull",         "as_of",         "since",     "input_bindings"};

inline const std::vector<std::string> kStates = {
    ":state/open", ":state/in-progress", ":state/closed", ":state/resolved", ":state/reopened"};

std::string Email(int64_t user);     // "user<u>@example.com"
std::string UserName(int64_t user);  // "User <u>"
std::string LabelName(int64_t k);    // "label-<k>"
// write_mixed's two one-datom transactions, as EDN: a state change and a label add.
std::string SetStateTx(Entid issue, const std::string& state);
std::string AddLabelTx(Entid issue, const std::string& label);

// ---- The dataset ----

// Everything a driver run knows about one loaded dataset.
struct Context {
  std::string data_dir;  // the generator's output: meta.json and the .edn files
  std::string store;     // the store file loaded from it
  nlohmann::json meta;   // meta.json
  std::string scale;
  int64_t n_users = 0, n_issues = 0, n_labels = 0, n_datoms = 0;
  Entid t_mid = 0;                // tx id of the last transaction of the initial load
  Entid t_since = 0;              // tx id of the last transaction before the final tenth of history
  std::vector<Entid> issue_eids;  // issue index -> entity id, recorded by the load
  bool graph = false;  // the store has the graph phase (load-graph); n_datoms counts it then
};

// The query and the options_from_json object of a read scenario's representative call
// (user 0, issue 0, as-of t_mid, since t_since), which the extension backends explain.
// An empty query for an unknown scenario.
struct ScenarioCall {
  std::string_view query;
  nlohmann::json options;
};
ScenarioCall ExplainCall(const std::string& scenario, const Context& ctx);

// Reads meta.json from `data_dir` and, unless `meta_only`, the load record beside `store`
// (`<store>.load.json` and `<store>.issues`).
Result<Context> LoadContext(const std::string& data_dir, const std::string& store,
                            bool meta_only = false);

// Parses "Issue <k>: ..." into k; -1 when the title has another shape.
int64_t IssueIndexFromTitle(std::string_view title);

// ---- Backends ----

using Row = std::vector<edn::Value>;
using Rows = std::vector<Row>;

struct Variant;
struct VariantArgs;

// One client's connection to the system under test. Not thread-safe: one per thread.
class Session {
 public:
  virtual ~Session() = default;
  // q1: [?e ?name] rows for `email`.
  virtual Result<Rows> PointLookup(const std::string& email) = 0;
  // q2: [?i ?title ?state] rows for `email`, as of `as_of` (a tx id) when given.
  virtual Result<Rows> RefTraversal(const std::string& email, std::optional<Entid> as_of) = 0;
  // q3: [?state count] rows.
  virtual Result<Rows> Aggregate() = 0;
  // q4: [?i ?title ?priority] rows with priority >= `min`.
  virtual Result<Rows> PredicateScan(int64_t min) = 0;
  // [?i] rows of the database since tx `t`.
  virtual Result<Rows> Since(Entid t) = 0;
  // q1 with a collection input: [?e ?name] rows.
  virtual Result<Rows> InputBindings(const std::vector<std::string>& emails) = 0;
  // (pull ?e [*]) of an issue: a map, or nil when `e` has no title.
  virtual Result<edn::Value> Pull(Entid e) = 0;
  // Every issue's current state, as [e state] rows (the writer's starting point).
  virtual Result<Rows> AllStates() = 0;
  // One-datom transactions: set an issue's state; add a label (by name) to an issue.
  virtual Status SetState(Entid issue, const std::string& state) = 0;
  virtual Status AddLabel(Entid issue, const std::string& label) = 0;
  // The plan of a named read scenario (kReadScenarios), with representative inputs.
  virtual Result<std::string> Explain(const std::string& scenario, const Context& ctx) = 0;
  // A variant (variants.h) with inputs `args`: its rows as the query's find spec gives them
  // (the sqlite-sql backend: in the shape Variant::normalize maps mentat's rows to). A query
  // still running after `timeout_ms` (when > 0) may be stopped with kInterrupted.
  // kUnsupported for a backend that does not run variants.
  virtual Result<Rows> RunVariant(const Variant& v, const VariantArgs& args, const Context& ctx,
                                  int64_t timeout_ms);
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // Opens a session. Thread-safe; sessions of one backend may run on many threads.
  virtual Result<std::unique_ptr<Session>> Connect() = 0;
};

// The backends by name: "embedded", "sqlite-sql", "sqlite-ext", "duckdb". Opens `store`
// (which must exist).
Result<std::unique_ptr<Backend>> OpenBackend(const std::string& name, const std::string& store);
std::vector<std::string> BackendNames();

// Concrete factories (backend_*.cc).
// `cached`: the "embedded-cache" backend, with Store::cache on the attributes the queries read by
// entity.
// `disabled`: optimizer passes left out of every query (QueryOptions::disabled_passes).
// `label`: the backend's name (the "pg" backend is this one on a PostgreSQL store).
Result<std::unique_ptr<Backend>> OpenEmbedded(const std::string& store, bool cached,
                                              std::vector<std::string> disabled,
                                              const std::string& label);
Result<std::unique_ptr<Backend>> OpenSqliteSql(const std::string& store);
// Hand-written SQL over the PostgreSQL schema `conninfo` names (libpq's string plus
// mentat's `schema=NAME`).
Result<std::unique_ptr<Backend>> OpenPgSql(const std::string& conninfo);
Result<std::unique_ptr<Backend>> OpenSqliteExt(const std::string& store);
Result<std::unique_ptr<Backend>> OpenDuckdb(const std::string& store);  // kUnsupported if not built

// "" when the backend can run here, else why not (not built, a library or extension missing).
std::string BackendAvailability(const std::string& name);
std::string DuckdbAvailability();
// DuckDB's version and library path, for env.txt ("not built in" without the backend).
std::string DuckdbVersion();

// ---- Small utilities ----

// Seconds on the monotonic clock.
double Now();
// Appends `line` (and a newline) to `path`, writing `header` first when the file is new.
Status AppendLine(const std::string& path, const std::string& header, const std::string& line);
Result<std::string> ReadFile(const std::string& path);
// "1.234" with `digits` decimals.
std::string Fixed(double v, int digits);

}  // namespace mentat::scale
