// mentat-duckdb-bench: latency of the scale suite's point_lookup (q1) and aggregate (q3)
// through DuckDB (SELECT * FROM edn_q(...), parse and bind included, as a SQL user runs
// it) next to the same queries through mentat's C++ API on the same store.
//
//   mentat-duckdb-bench [--users 1600] [--issues 130000] [--calls 2000] [--store PATH]
//                       [--library libduckdb.so] [--extension mentat.duckdb_extension]
//
// Without --store (or when the file is missing) it first writes a store with the suite's
// user and issue shapes (SCALE_SUITE.md; the defaults are scale "s"). The C API baseline
// runs first and closes the store before DuckDB opens it, so the process never has the
// file open through two SQLite copies (mentat's and the extension's) at once.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "duckdb_host.h"
#include "mentat/store.h"

namespace {

using mentat::Status;

constexpr char kQ1[] =
    "[:find ?e ?name :in $ ?email :where [?e :user/email ?email] [?e :user/name ?name]]";
constexpr char kQ3[] = "[:find ?state (count ?i) :where [?i :issue/state ?state]]";
const char* const kStates[] = {":state/open", ":state/in-progress", ":state/closed",
                               ":state/resolved", ":state/reopened"};

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string Email(int64_t u) { return "user" + std::to_string(u) + "@example.com"; }

Status Load(const std::string& path, int64_t users, int64_t issues) {
  auto opened = mentat::Store::open(path);
  if (!opened.ok()) return opened.status();
  auto& store = *opened;
  auto tx = store->transact(
      "[{:db/ident :user/email :db/valueType :db.type/string :db/cardinality "
      ":db.cardinality/one :db/unique :db.unique/identity}"
      " {:db/ident :user/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one}"
      " {:db/ident :issue/title :db/valueType :db.type/string :db/cardinality "
      ":db.cardinality/one}"
      " {:db/ident :issue/state :db/valueType :db.type/keyword :db/cardinality "
      ":db.cardinality/one :db/index true}"
      " {:db/ident :issue/priority :db/valueType :db.type/long :db/cardinality "
      ":db.cardinality/one :db/index true}"
      " {:db/ident :issue/assignee :db/valueType :db.type/ref :db/cardinality "
      ":db.cardinality/one :db/index true}]");
  if (!tx.ok()) return tx.status();
  std::mt19937_64 rng(20260509);
  for (int64_t u = 0; u < users; u += 2000) {
    std::string batch = "[";
    for (int64_t k = u; k < std::min(users, u + 2000); ++k) {
      batch += "{:user/email \"" + Email(k) + "\" :user/name \"User " + std::to_string(k) + "\"}";
    }
    MENTAT_RETURN_IF_ERROR(store->transact(batch + "]").status());
  }
  for (int64_t i = 0; i < issues; i += 500) {
    std::string batch = "[";
    for (int64_t k = i; k < std::min(issues, i + 500); ++k) {
      batch += "{:issue/title \"Issue " + std::to_string(k) + ": crash\" :issue/state " +
               kStates[rng() % 5] + " :issue/priority " + std::to_string(1 + rng() % 5) +
               " :issue/assignee [:user/email \"" + Email(static_cast<int64_t>(rng() % users)) +
               "\"]}";
    }
    MENTAT_RETURN_IF_ERROR(store->transact(batch + "]").status());
  }
  return Status::OK();
}

struct Stats {
  double p50 = 0, p95 = 0;
  size_t n = 0;
};

Stats Summarize(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  Stats s;
  s.n = ms.size();
  if (ms.empty()) return s;
  s.p50 = ms[ms.size() / 2];
  s.p95 = ms[std::min(ms.size() - 1, ms.size() * 95 / 100)];
  return s;
}

// Times `fn` `calls` times after 3 warm-up calls; milliseconds.
template <typename Fn>
mentat::Result<Stats> Time(int calls, Fn fn) {
  std::vector<double> ms;
  for (int i = -3; i < calls; ++i) {
    double t0 = Now();
    MENTAT_RETURN_IF_ERROR(fn(i));
    if (i >= 0) ms.push_back((Now() - t0) * 1000);
  }
  return Summarize(std::move(ms));
}

void Print(const std::string& scenario, const std::string& via, const Stats& s) {
  std::printf("%-13s %-8s p50 %8.3f ms   p95 %8.3f ms   (%zu calls)\n", scenario.c_str(),
              via.c_str(), s.p50, s.p95, s.n);
}

int Fail(const Status& s) {
  std::cerr << "mentat-duckdb-bench: " << s.ToString() << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t users = 1600, issues = 130000;
  int calls = 2000;
  std::string store_path, library, extension;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i], v = argv[i + 1];
    if (a == "--users")
      users = std::stoll(v);
    else if (a == "--issues")
      issues = std::stoll(v);
    else if (a == "--calls")
      calls = std::stoi(v);
    else if (a == "--store")
      store_path = v;
    else if (a == "--library")
      library = v;
    else if (a == "--extension")
      extension = v;
  }
  if (store_path.empty()) {
    store_path =
        (std::filesystem::temp_directory_path() /
         ("mentat-duckdb-bench-" + std::to_string(users) + "-" + std::to_string(issues) + ".db"))
            .string();
  }
  if (!std::filesystem::exists(store_path)) {
    double t0 = Now();
    Status st = Load(store_path, users, issues);
    if (!st.ok()) return Fail(st);
    std::printf("loaded %lld users, %lld issues into %s in %.1f s\n", static_cast<long long>(users),
                static_cast<long long>(issues), store_path.c_str(), Now() - t0);
  }
  std::mt19937_64 rng(7);
  std::vector<std::string> emails;
  for (int i = 0; i < calls; ++i) emails.push_back(Email(static_cast<int64_t>(rng() % users)));
  auto email_at = [&](int i) { return emails[static_cast<size_t>(std::max(i, 0))]; };

  {  // mentat's C++ API
    auto opened = mentat::Store::open(store_path);
    if (!opened.ok()) return Fail(opened.status());
    auto& store = *opened;
    auto q1 = Time(calls, [&](int i) -> Status {
      auto r = store->q(kQ1, {mentat::edn::Value::String(email_at(i))});
      if (!r.ok()) return r.status();
      return r->rows.size() == 1 ? Status::OK() : Status::Internal("q1: not one row");
    });
    if (!q1.ok()) return Fail(q1.status());
    Print("point_lookup", "c++ api", *q1);
    auto q3 = Time(std::max(calls / 10, 30), [&](int) -> Status { return store->q(kQ3).status(); });
    if (!q3.ok()) return Fail(q3.status());
    Print("aggregate", "c++ api", *q3);
  }

  auto db = mentat::duckdb_host::DuckHost::Open(library);
  if (!db.ok()) return Fail(db.status());
  auto con = (*db)->Connect();
  if (!con.ok()) return Fail(con.status());
  std::string ext = extension.empty() ? mentat::duckdb_host::DefaultExtensionPath() : extension;
  if (auto l = (*con)->Query("LOAD " + mentat::duckdb_host::Quote(ext)); !l.ok()) {
    return Fail(l.status());
  }
  std::string path = mentat::duckdb_host::Quote(store_path);
  auto q1 = Time(calls, [&](int i) -> Status {
    auto r = (*con)->Query("SELECT * FROM edn_q(" + path + ", " + mentat::duckdb_host::Quote(kQ1) +
                           ", '{\"inputs\": [\"" + email_at(i) + "\"]}')");
    if (!r.ok()) return r.status();
    return r->rows.size() == 1 ? Status::OK() : Status::Internal("q1: not one row");
  });
  if (!q1.ok()) return Fail(q1.status());
  Print("point_lookup", "duckdb", *q1);
  auto q3 = Time(std::max(calls / 10, 30), [&](int) -> Status {
    return (*con)
        ->Query("SELECT * FROM edn_q(" + path + ", " + mentat::duckdb_host::Quote(kQ3) + ", '{}')")
        .status();
  });
  if (!q3.ok()) return Fail(q3.status());
  Print("aggregate", "duckdb", *q3);
  std::printf("duckdb %s, store %s\n", (*db)->version().c_str(), store_path.c_str());
  return 0;
}
