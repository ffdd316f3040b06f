// Pull latency on the scale suite's issue tracker (/work/shared/bench/SCALE_SUITE.md).
//
// PullScale.StarOnIssue builds a small store (600 issues) and checks what `[*]` returns.
// PullScale.DISABLED_StarOnIssueLatency builds the s dataset (130,000 issues, about 1M
// datoms; MENTAT_PULL_BENCH_ISSUES overrides) in a temporary file and prints p50/p95/p99
// of Store::pull("[*]", issue) over many calls. Run it from a Release build:
//   unit_tests --gtest_also_run_disabled_tests --gtest_filter='PullScale.*'
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "mentat/store.h"

namespace mentat {
namespace {

using edn::Value;

const char* kScaleSchema = R"([
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

struct Dataset {
  std::vector<Entid> issues;
};

// Loads users, labels and issues as the scale suite does (values from a fixed seed; refs
// by lookup ref, issues in transactions of 500).
Dataset Load(Store* s, int users, int labels, int issues) {
  Dataset d;
  EXPECT_TRUE(s->transact(kScaleSchema).ok());
  std::mt19937_64 rng(20260509);
  for (int base = 0; base < users; base += 2000) {
    std::string tx = "[";
    for (int u = base; u < std::min(users, base + 2000); ++u)
      tx += "{:user/email \"user" + std::to_string(u) + "@example.com\" :user/name \"User " +
            std::to_string(u) + "\"}";
    EXPECT_TRUE(s->transact(tx + "]").ok());
  }
  std::string ltx = "[";
  for (int k = 0; k < labels; ++k) ltx += "{:label/name \"label-" + std::to_string(k) + "\"}";
  EXPECT_TRUE(s->transact(ltx + "]").ok());
  const char* kinds[] = {"crash", "ui glitch", "perf regression", "typo", "feature request"};
  const char* states[] = {":state/open", ":state/in-progress", ":state/closed", ":state/resolved",
                          ":state/reopened"};
  const int64_t kStart = 1735689600000000;  // 2025-01-01T00:00Z
  for (int base = 0; base < issues; base += 500) {
    std::string tx = "[";
    int end = std::min(issues, base + 500);
    for (int k = base; k < end; ++k) {
      tx += "{:db/id \"i" + std::to_string(k) + "\" :issue/title \"Issue " + std::to_string(k) +
            ": " + kinds[rng() % 5] + "\" :issue/state " + states[rng() % 5] + " :issue/priority " +
            std::to_string(1 + rng() % 5) + " :issue/assignee [:user/email \"user" +
            std::to_string(rng() % users) + "@example.com\"] :issue/reporter [:user/email \"user" +
            std::to_string(rng() % users) + "@example.com\"] :issue/created-at #inst \"" +
            edn::FormatInstant(kStart + static_cast<int64_t>(rng() % 525601) * 60000000) + "\"";
      int nlabels = static_cast<int>(rng() % 4);
      if (nlabels) {
        tx += " :issue/label [";
        std::vector<int> picked;
        while (static_cast<int>(picked.size()) < nlabels) {
          int l = static_cast<int>(rng() % labels);
          if (std::find(picked.begin(), picked.end(), l) == picked.end()) picked.push_back(l);
        }
        for (int l : picked) tx += "[:label/name \"label-" + std::to_string(l) + "\"] ";
        tx += "]";
      }
      tx += "}";
    }
    auto r = s->transact(tx + "]");
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return d;
    for (int k = base; k < end; ++k) d.issues.push_back(r->tempids.at("i" + std::to_string(k)));
  }
  return d;
}

void CheckIssue(const Value& v, Entid e) {
  ASSERT_TRUE(v.is_map()) << edn::Print(v);
  EXPECT_EQ(*v.get_keyword("db/id"), Value::Int(e));
  EXPECT_EQ(v.get_keyword("issue/title")->str().rfind("Issue ", 0), 0u);
  EXPECT_TRUE(v.get_keyword("issue/state")->is_keyword());
  int64_t p = v.get_keyword("issue/priority")->as_int();
  EXPECT_TRUE(p >= 1 && p <= 5);
  EXPECT_TRUE(v.get_keyword("issue/assignee")->get_keyword("db/id"));
  EXPECT_TRUE(v.get_keyword("issue/created-at")->is_inst());
}

TEST(PullScale, StarOnIssue) {
  auto s = Store::open("");
  ASSERT_TRUE(s.ok());
  Dataset d = Load(s->get(), 50, 20, 600);
  ASSERT_EQ(d.issues.size(), 600u);
  for (Entid e : {d.issues[0], d.issues[299], d.issues[599]}) {
    auto v = (*s)->pull("[*]", Value::Int(e));
    ASSERT_TRUE(v.ok()) << v.status().ToString();
    CheckIssue(*v, e);
  }
  std::vector<Value> ids;
  for (size_t i = 0; i < d.issues.size(); i += 7) ids.push_back(Value::Int(d.issues[i]));
  auto many = (*s)->pull_many("[* {:issue/assignee [:user/name]}]", ids);
  ASSERT_TRUE(many.ok());
  ASSERT_EQ(many->size(), ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ(*(*many)[i].get_keyword("db/id"), ids[i]);
    EXPECT_EQ(
        (*many)[i].get_keyword("issue/assignee")->get_keyword("user/name")->str().rfind("User ", 0),
        0u);
  }
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * v.size()))];
}

TEST(PullScale, DISABLED_StarOnIssueLatency) {
  int n_issues = 130000;
  if (const char* env = std::getenv("MENTAT_PULL_BENCH_ISSUES")) n_issues = std::atoi(env);
  // MENTAT_PULL_BENCH_DB: load into (and keep) this file, or reuse it when it has data.
  const char* keep = std::getenv("MENTAT_PULL_BENCH_DB");
  char dir_tmpl[] = "/tmp/mentat-pull-scale-XXXXXX";
  std::string dir = keep ? "" : mkdtemp(dir_tmpl);
  std::string path = keep ? keep : dir + "/s.db";
  auto s = Store::open(path);
  ASSERT_TRUE(s.ok());
  Dataset d;
  if (auto existing = (*s)->datoms(":aevt", {Value::Keyword("issue/title")});
      existing.ok() && !existing->empty()) {
    for (const auto& x : *existing) d.issues.push_back(x.e);
    n_issues = static_cast<int>(d.issues.size());
  } else {
    auto t0 = std::chrono::steady_clock::now();
    d = Load(s->get(), 1600, 200, n_issues);
    double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("loaded %d issues in %.1f s\n", n_issues, load_s);
  }
  ASSERT_EQ(static_cast<int>(d.issues.size()), n_issues);
  std::mt19937_64 rng(7);
  auto measure = [&](const char* name, auto&& call) {
    for (int i = 0; i < 3; ++i) call(d.issues[rng() % d.issues.size()]);
    std::vector<double> us;
    auto start = std::chrono::steady_clock::now();
    while (us.size() < 20000 && (us.size() < 2000 || std::chrono::steady_clock::now() - start <
                                                         std::chrono::seconds(3))) {
      Entid e = d.issues[rng() % d.issues.size()];
      auto a = std::chrono::steady_clock::now();
      call(e);
      us.push_back(
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - a).count());
    }
    std::printf("%-40s n=%zu p50=%.1f us p95=%.1f us p99=%.1f us\n", name, us.size(),
                Percentile(us, 0.5), Percentile(us, 0.95), Percentile(us, 0.99));
  };
  measure("Store::pull [*] issue", [&](Entid e) {
    auto v = (*s)->pull("[*]", Value::Int(e));
    ASSERT_TRUE(v.ok());
    CheckIssue(*v, e);
  });
  Db db = (*s)->db();
  measure("Db::pull [*] issue", [&](Entid e) {
    auto v = db.pull("[*]", Value::Int(e));
    ASSERT_TRUE(v.ok());
  });
  measure("Store::pull [* {:issue/assignee [*]}]", [&](Entid e) {
    auto v = (*s)->pull("[* {:issue/assignee [*]}]", Value::Int(e));
    ASSERT_TRUE(v.ok());
  });
  measure("Store::pull_many [*] x100 random issues", [&](Entid) {
    std::vector<Value> ids;
    for (int i = 0; i < 100; ++i) ids.push_back(Value::Int(d.issues[rng() % d.issues.size()]));
    auto v = (*s)->pull_many("[*]", ids);
    ASSERT_TRUE(v.ok());
    ASSERT_EQ(v->size(), 100u);
  });
  s->reset();
  if (!keep) std::system(("rm -rf " + dir).c_str());
}

}  // namespace
}  // namespace mentat
