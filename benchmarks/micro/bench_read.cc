// Read-side micro-benchmarks on an existing store (the scale suite's s store is the
// intended one):
//   MENTAT_BENCH_STORE=/tmp/mentat-scale-data/s/embedded.db build/benchmarks/bench_read
//     --benchmark_repetitions=5 --benchmark_report_aggregates_only
// The store is copied first, so the benchmarks never change it.
// BM_OpenWarm: Store::open of a warm (OS-cached) file, a first query, and close.
// BM_CountByState: q3 ([:find ?state (count ?i) ...]) with maintained counts (arg 1) and
// through SQL with the planner off (arg 0).
// BM_PredicateScan/min: q4, open issues with priority >= min; 4 is the suite's (40% of the
// priorities), 5 keeps 20%, 6 none: the planner cannot tell these apart before running.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "mentat/store.h"

namespace {

std::string StoreCopy() {
  static std::string path;
  if (!path.empty()) return path;
  const char* src = std::getenv("MENTAT_BENCH_STORE");
  if (!src) return "";
  path = "/tmp/mentat-bench-read-" + std::to_string(getpid()) + ".db";
  std::string cmd = "cp '" + std::string(src) + "' '" + path + "'";
  if (std::system(cmd.c_str()) != 0) path.clear();
  return path;
}

void BM_OpenWarm(benchmark::State& state) {
  std::string path = StoreCopy();
  if (path.empty()) return state.SkipWithError("set MENTAT_BENCH_STORE to a store file");
  for (auto _ : state) {
    auto s = mentat::Store::open(path);
    if (!s.ok()) return state.SkipWithError(s.status().ToString().c_str());
    auto r = (*s)->q("[:find ?e . :where [?e :db/ident :db/ident]]");
    if (!r.ok()) return state.SkipWithError(r.status().ToString().c_str());
  }
}
BENCHMARK(BM_OpenWarm)->Unit(benchmark::kMillisecond)->MinTime(2.0)->UseRealTime();

void BM_CountByState(benchmark::State& state) {
  std::string path = StoreCopy();
  if (path.empty()) return state.SkipWithError("set MENTAT_BENCH_STORE to a store file");
  auto s = mentat::Store::open(path);
  if (!s.ok()) return state.SkipWithError(s.status().ToString().c_str());
  mentat::QueryOptions o;
  o.use_planner = state.range(0) != 0;
  for (auto _ : state) {
    auto r = (*s)->q("[:find ?state (count ?i) :where [?i :issue/state ?state]]", o);
    if (!r.ok() || r->rows.empty()) return state.SkipWithError("q3 failed");
  }
}
BENCHMARK(BM_CountByState)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_PredicateScan(benchmark::State& state) {
  std::string path = StoreCopy();
  if (path.empty()) return state.SkipWithError("set MENTAT_BENCH_STORE to a store file");
  auto s = mentat::Store::open(path);
  if (!s.ok()) return state.SkipWithError(s.status().ToString().c_str());
  const char* q =
      "[:find ?i ?title ?priority :in $ ?min :where [?i :issue/state :state/open] "
      "[?i :issue/priority ?priority] [?i :issue/title ?title] [(>= ?priority ?min)]]";
  size_t rows = 0;
  for (auto _ : state) {
    auto r = (*s)->q(q, {mentat::edn::Value::Int(state.range(0))});
    if (!r.ok()) return state.SkipWithError(r.status().ToString().c_str());
    rows = r->rows.size();
  }
  state.counters["rows"] = static_cast<double>(rows);
}
BENCHMARK(BM_PredicateScan)->Arg(4)->Arg(5)->Arg(6)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::string path = StoreCopy();
  if (!path.empty()) std::system(("rm -f '" + path + "'*").c_str());
  return 0;
}
