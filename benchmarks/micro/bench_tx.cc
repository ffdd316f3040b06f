// Transactor micro-benchmarks:
//   build/benchmarks/bench_tx --benchmark_repetitions=5 --benchmark_report_aggregates_only
// BM_SingleDatom: one [:db/add e a v] per transaction on a file store (default
// durability). BM_IssueBatch: transactions of 500 issues as the scale suite generates
// them (~3,800 datoms: tempids for issues, lookup refs for users and labels).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdlib>
#include <random>
#include <string>

#include "mentat/store.h"

namespace {

const char* kSchema = R"([
 {:db/ident :user/email :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity :db/index true}
 {:db/ident :user/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
 {:db/ident :label/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity :db/index true}
 {:db/ident :issue/title :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
 {:db/ident :issue/state :db/valueType :db.type/keyword :db/cardinality :db.cardinality/one :db/index true}
 {:db/ident :issue/priority :db/valueType :db.type/long :db/cardinality :db.cardinality/one :db/index true}
 {:db/ident :issue/assignee :db/valueType :db.type/ref :db/cardinality :db.cardinality/one :db/index true}
 {:db/ident :issue/reporter :db/valueType :db.type/ref :db/cardinality :db.cardinality/one :db/index true}
 {:db/ident :issue/label :db/valueType :db.type/ref :db/cardinality :db.cardinality/many :db/index true}
 {:db/ident :issue/created-at :db/valueType :db.type/instant :db/cardinality :db.cardinality/one}])";

std::string TempPath(const char* name) {
  std::string p = std::string("/tmp/mentat-bench-") + name + "-" + std::to_string(getpid()) + ".db";
  std::system(("rm -f " + p + "*").c_str());
  return p;
}

std::unique_ptr<mentat::Store> SeededStore(const std::string& path, int users, int labels) {
  auto s = std::move(mentat::Store::open(path)).value();
  (void)s->transact(kSchema);
  std::string tx = "[";
  for (int u = 0; u < users; ++u)
    tx += "{:user/email \"user" + std::to_string(u) + "@example.com\" :user/name \"User " +
          std::to_string(u) + "\"}";
  for (int k = 0; k < labels; ++k) tx += "{:label/name \"label-" + std::to_string(k) + "\"}";
  (void)s->transact(tx + "]");
  return s;
}

std::string IssueBatch(std::mt19937_64& rng, int first, int count, int users, int labels,
                       int* datoms) {
  static const char* kStates[] = {":state/open", ":state/in-progress", ":state/closed",
                                  ":state/resolved", ":state/reopened"};
  static const char* kKinds[] = {"crash", "ui glitch", "perf regression", "typo",
                                 "feature request"};
  std::string tx = "[";
  *datoms = 1;
  for (int k = first; k < first + count; ++k) {
    tx += "{:db/id \"i" + std::to_string(k) + "\" :issue/title \"Issue " + std::to_string(k) +
          ": " + kKinds[rng() % 5] + "\" :issue/state " + kStates[rng() % 5] + " :issue/priority " +
          std::to_string(1 + rng() % 5) + " :issue/assignee [:user/email \"user" +
          std::to_string(rng() % users) + "@example.com\"] :issue/reporter [:user/email \"user" +
          std::to_string(rng() % users) +
          "@example.com\"] :issue/created-at #inst \"2025-03-01T10:00:00Z\"";
    *datoms += 6;
    int n = rng() % 4;
    if (n) {
      tx += " :issue/label [";
      int base = rng() % labels;
      for (int j = 0; j < n; ++j)
        tx += "[:label/name \"label-" + std::to_string((base + j) % labels) + "\"]";
      tx += "]";
      *datoms += n;
    }
    tx += "}";
  }
  return tx + "]";
}

void BM_SingleDatom(benchmark::State& state) {
  std::string path = TempPath("single");
  auto s = SeededStore(path, 100, 10);
  auto r = s->transact(R"([{:db/id "i" :issue/priority 1}])");
  std::string e = std::to_string(r->tempids.at("i"));
  int64_t n = 0;
  for (auto _ : state) {
    auto t =
        s->transact("[[:db/add " + e + " :issue/priority " + std::to_string(++n % 5 + 1) + "]]");
    if (!t.ok()) state.SkipWithError(t.status().ToString().c_str());
  }
  state.SetItemsProcessed(state.iterations());
  s.reset();
  std::system(("rm -f " + path + "*").c_str());
}
BENCHMARK(BM_SingleDatom)->Unit(benchmark::kMicrosecond)->MinTime(2.0)->UseRealTime();

void BM_IssueBatch(benchmark::State& state) {
  std::string path = TempPath("batch");
  constexpr int kUsers = 1600, kLabels = 200;
  auto s = SeededStore(path, kUsers, kLabels);
  std::mt19937_64 rng(20260509);
  int next = 0;
  int64_t datoms = 0;
  for (auto _ : state) {
    state.PauseTiming();
    int n = 0;
    std::string tx = IssueBatch(rng, next, 500, kUsers, kLabels, &n);
    next += 500;
    state.ResumeTiming();
    auto r = s->transact(tx);
    if (!r.ok()) state.SkipWithError(r.status().ToString().c_str());
    datoms += n;
  }
  state.SetItemsProcessed(datoms);
  state.counters["datoms_per_tx"] = static_cast<double>(datoms) / state.iterations();
  s.reset();
  std::system(("rm -f " + path + "*").c_str());
}
BENCHMARK(BM_IssueBatch)->Unit(benchmark::kMillisecond)->MinTime(5.0)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
