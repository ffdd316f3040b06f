// The subcommands of `mentat-scale` (main.cc parses the flags and calls these).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scale.h"

namespace mentat::scale {

// Timing rules of one point (SCALE_SUITE.md "Scenarios").
struct Rules {
  double min_s = 10;    // each point runs at least this long...
  int64_t min_n = 30;   // ...and takes at least this many samples...
  double max_s = 60;    // ...but stops after this long
  double probe_s = 20;  // a first call slower than this marks the point "ceiling"
  int warmups = 3;      // discarded calls before timing
};

// Where a driver run writes and what it labels its rows with.
struct RunInfo {
  std::string backend;
  std::string out_dir;  // raw.csv, checks.txt, loads.csv, plans/ go here
  int rep = 1;
  bool processes = true;  // multi-client points: processes (true) or threads
  uint64_t seed = kDefaultSeed;
};

// gen: writes schema.edn, base.edn, issues.edn, history.edn and meta.json to `out_dir`.
Status Generate(const std::string& scale, const std::string& out_dir, uint64_t seed);

// load: loads the dataset into a new embedded store at `store` (replacing any), writes
// `<store>.load.json` and `<store>.issues`, and appends a bulk_load row to loads.csv.
Status Load(const std::string& data_dir, const std::string& store, const std::string& out_dir);
// load-graph: the graph phase (meta.json "graph", graph.edn) on a store `Load` made, after
// which its load record says so (Context::graph). The store must not have it yet.
Status LoadGraph(const std::string& data_dir, const std::string& store);

// bench: the timed read scenarios (a subset of kReadScenarios) with `clients` clients.
Status Bench(const Context& ctx, const RunInfo& run, const Rules& rules,
             const std::vector<std::string>& scenarios, int clients);

// concurrency_sweep: q1, q2 and pull in equal parts, for each client count; each point's
// window in `slices` parts taken in turn over the counts.
Status Sweep(const Context& ctx, const RunInfo& run, const Rules& rules,
             const std::vector<int>& clients, int slices);

// write_mixed: one writer and `readers` readers (q1 and q2) for `seconds`.
Status Mixed(const Context& ctx, const RunInfo& run, double seconds, int readers);

// cold_vs_warm: drops the store's pages from the OS cache (`drop`: "all" caches where the
// kernel allows, the store "file"s' pages, or "none"), opens, first call then 30 warm
// calls of point_lookup, ref_traversal, pull and aggregate.
Status ColdWarm(const Context& ctx, const RunInfo& run, const std::string& drop);

// check: the correctness checks of `phase` ("before": 18 checks, "after" write_mixed: 8),
// appended to checks.txt. Sets *failed when any check fails (or is unavailable, unless
// `allow_unavailable`).
Status Check(const Context& ctx, const RunInfo& run, const std::string& phase,
             bool allow_unavailable, bool* failed);

// check --phase variants: the checks of the variants named in `names` ("variant/<name>" or
// "<name>"), appended to checks.txt; a query of the backend still running after
// `timeout_s` is stopped and its check is SKIP. Sets *failed when any check fails (or is
// unavailable, unless `allow_unavailable`).
Status CheckVariantsPhase(const Context& ctx, const RunInfo& run,
                          const std::vector<std::string>& names, double timeout_s,
                          bool allow_unavailable, bool* failed);

// The names of every variant ("variant/<name>"), in the table's order.
std::vector<std::string> VariantScenarioNames();

// explain: writes plans/<backend>-<scale>-<scenario>.txt for every read scenario.
Status Explain(const Context& ctx, const RunInfo& run);

// query: runs one read scenario once and prints its result as EDN (for debugging).
Status QueryOnce(const Context& ctx, const RunInfo& run, const std::string& scenario,
                 const std::string& arg);

// The header and one row of raw.csv.
extern const char* kRawHeader;

}  // namespace mentat::scale
