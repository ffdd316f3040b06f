// mentat-inproc-q1: q1 (point_lookup, SCALE_SUITE.md) in this process, from THREADS threads
// for SECONDS, each query with a random user's email: the in-process figure beside which
// benchmarks/server/run.sh puts the HTTP server's (wrk).
//
//   mentat-inproc-q1 STORE USERS THREADS SECONDS
//
// Prints one line: threads=N requests=N rps=X p50_ms=X p99_ms=X errors=N
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "mentat/store.h"

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: mentat-inproc-q1 STORE USERS THREADS SECONDS\n");
    return 2;
  }
  const std::string path = argv[1];
  const int64_t users = std::atoll(argv[2]);
  const int threads = std::atoi(argv[3]);
  const double seconds = std::atof(argv[4]);
  mentat::Options o;
  o.read_only = true;
  o.create = false;
  auto store = mentat::Store::open(path, o);
  if (!store.ok()) {
    std::fprintf(stderr, "open: %s\n", store.status().ToString().c_str());
    return 1;
  }
  const char* q1 =
      "[:find ?e ?name :in $ ?email :where [?e :user/email ?email] [?e :user/name ?name]]";
  auto prepared = (*store)->q_prepare(q1);
  if (!prepared.ok()) {
    std::fprintf(stderr, "prepare: %s\n", prepared.status().ToString().c_str());
    return 1;
  }
  std::atomic<bool> stop{false};
  std::atomic<int64_t> errors{0};
  std::vector<std::vector<double>> lat(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      std::mt19937_64 rng(1234 + t);
      std::uniform_int_distribution<int64_t> pick(0, users - 1);
      while (!stop.load(std::memory_order_relaxed)) {
        std::string email = "user" + std::to_string(pick(rng)) + "@example.com";
        auto t0 = std::chrono::steady_clock::now();
        auto r = prepared->run({mentat::edn::Value::String(email)});
        auto t1 = std::chrono::steady_clock::now();
        if (!r.ok() || r->rows.size() != 1) errors.fetch_add(1);
        lat[t].push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      }
    });
  }
  auto start = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop.store(true);
  for (auto& th : pool) th.join();
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<double> all;
  for (auto& v : lat) all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end());
  auto pct = [&](double p) {
    return all.empty() ? 0.0 : all[std::min(all.size() - 1, static_cast<size_t>(p * all.size()))];
  };
  std::printf("threads=%d requests=%zu rps=%.0f p50_ms=%.3f p99_ms=%.3f errors=%lld\n", threads,
              all.size(), all.size() / elapsed, pct(0.50), pct(0.99),
              static_cast<long long>(errors.load()));
  return errors.load() == 0 ? 0 : 1;
}
