// The correctness checks (SCALE_SUITE.md "Correctness checks"): every result is compared
// with the truth the generator wrote to meta.json, and every check is one line of
// checks.txt with PASS/FAIL (or SKIP when the backend says the feature is not available),
// the expected and the actual value.
//
// Before any write (18): point_lookup x3, aggregate.sum, aggregate.by_state, as_of x3,
// ref_traversal x3, input_bindings, predicate_scan, since, pull x4.
// After write_mixed (8): point_lookup x3, aggregate.sum, as_of x3, input_bindings.
// Variants (phase "variants", variants.h): for each variant and each of its check inputs,
// the backend's rows against sqlite-sql's hand-written SQL as sets of rows (the reference
// itself is not compared with itself), and the row count against meta.json's truth where
// the generator knows it.
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "commands.h"
#include "variants.h"

namespace mentat::scale {
namespace {

using Pairs = std::vector<std::pair<int64_t, std::string>>;

std::string Text(const edn::Value& v) { return v.is_string() ? v.str() : edn::Print(v); }

std::string Describe(const Pairs& p) { return std::to_string(p.size()) + " (issue,state) pairs"; }

// The first difference between two sorted pair lists, for the FAIL line.
std::string Diff(const Pairs& expected, const Pairs& actual) {
  Pairs missing, extra;
  std::set_difference(expected.begin(), expected.end(), actual.begin(), actual.end(),
                      std::back_inserter(missing));
  std::set_difference(actual.begin(), actual.end(), expected.begin(), expected.end(),
                      std::back_inserter(extra));
  std::string out;
  for (size_t i = 0; i < std::min<size_t>(3, missing.size()); ++i)
    out += " missing [" + std::to_string(missing[i].first) + " " + missing[i].second + "]";
  for (size_t i = 0; i < std::min<size_t>(3, extra.size()); ++i)
    out += " extra [" + std::to_string(extra[i].first) + " " + extra[i].second + "]";
  return out;
}

class Checker {
 public:
  Checker(const Context& ctx, const RunInfo& run, std::string phase, bool allow_unavailable)
      : ctx_(ctx), run_(run), phase_(std::move(phase)), allow_unavailable_(allow_unavailable) {}

  Status Record(const std::string& name, bool ok, const std::string& expected,
                const std::string& actual) {
    (ok ? pass_ : fail_)++;
    return Write(name, ok ? "PASS" : "FAIL", expected, actual);
  }
  // A check whose call failed: FAIL, or SKIP when the feature is not available yet.
  Status Errored(const std::string& name, const std::string& expected, const Status& st) {
    bool unavailable = st.code() == Code::kUnsupported;
    if (unavailable) {
      (allow_unavailable_ ? skip_ : fail_)++;
      return Write(name, allow_unavailable_ ? "SKIP" : "FAIL", expected,
                   "unavailable: " + st.ToString());
    }
    fail_++;
    return Write(name, "FAIL", expected, "error: " + st.ToString());
  }

  // A check whose query ran past the check's time limit: SKIP (a measurement of a slow
  // query, not a wrong answer), with the limit.
  Status TimedOut(const std::string& name, const std::string& expected, const Status& st) {
    skip_++;
    return Write(name, "SKIP", expected, "timeout: " + st.ToString());
  }

  int pass() const { return pass_; }
  int fail() const { return fail_; }
  int skip() const { return skip_; }

 private:
  Status Write(const std::string& name, const char* verdict, const std::string& expected,
               std::string actual) {
    std::replace(actual.begin(), actual.end(), '\n', ' ');
    std::string line = "check " + run_.backend + " " + ctx_.scale + " " + phase_ + " " + name +
                       ": " + verdict + " expected=" + expected + " actual=" + actual;
    std::fprintf(stderr, "%s\n", line.c_str());
    return AppendLine(run_.out_dir + "/checks.txt", "", line);
  }

  const Context& ctx_;
  const RunInfo& run_;
  std::string phase_;
  bool allow_unavailable_;
  int pass_ = 0, fail_ = 0, skip_ = 0;
};

Status CheckPointLookups(const Context& ctx, Session& s, Checker& c) {
  for (const auto& u : ctx.meta["truth"]["point_lookup_users"]) {
    int64_t user = u.get<int64_t>();
    std::string name = "point_lookup[" + std::to_string(user) + "]";
    std::string expected = "1 row \"" + UserName(user) + "\"";
    auto rows = s.PointLookup(Email(user));
    if (!rows.ok()) {
      MENTAT_RETURN_IF_ERROR(c.Errored(name, expected, rows.status()));
      continue;
    }
    std::string actual = std::to_string(rows->size()) + " row" + (rows->size() == 1 ? "" : "s");
    if (!rows->empty() && (*rows)[0].size() >= 2) actual += " \"" + Text((*rows)[0][1]) + "\"";
    MENTAT_RETURN_IF_ERROR(c.Record(name, actual == expected, expected, actual));
  }
  return Status::OK();
}

Status CheckAggregate(const Context& ctx, Session& s, Checker& c, bool by_state) {
  const auto& truth = ctx.meta["truth"]["states_after"];
  auto rows = s.Aggregate();
  std::string expected_sum = std::to_string(ctx.n_issues);
  if (!rows.ok()) {
    MENTAT_RETURN_IF_ERROR(c.Errored("aggregate.sum", expected_sum, rows.status()));
    if (by_state)
      MENTAT_RETURN_IF_ERROR(c.Errored("aggregate.by_state", truth.dump(), rows.status()));
    return Status::OK();
  }
  int64_t sum = 0;
  nlohmann::json counts = nlohmann::json::object();
  for (const auto& row : *rows) {
    if (row.size() != 2 || !row[1].is_int()) continue;
    sum += row[1].as_int();
    counts[Text(row[0])] = row[1].as_int();
  }
  MENTAT_RETURN_IF_ERROR(
      c.Record("aggregate.sum", sum == ctx.n_issues, expected_sum, std::to_string(sum)));
  if (by_state)
    MENTAT_RETURN_IF_ERROR(
        c.Record("aggregate.by_state", counts == truth, truth.dump(), counts.dump()));
  return Status::OK();
}

Pairs TruthPairs(const nlohmann::json& list) {
  Pairs p;
  for (const auto& e : list) p.emplace_back(e[0].get<int64_t>(), e[1].get<std::string>());
  std::sort(p.begin(), p.end());
  return p;
}

// q2 for the probe users, as of t_mid (`as_of`) or now.
Status CheckRefTraversal(const Context& ctx, Session& s, Checker& c, int i, bool as_of) {
  int64_t user = ctx.meta["truth"]["probe_users"][i].get<int64_t>();
  Pairs expected = TruthPairs(
      ctx.meta["truth"][as_of ? "assigned_before" : "assigned_after"][std::to_string(user)]);
  std::string name = std::string(as_of ? "as_of" : "ref_traversal") + "[" + std::to_string(i) +
                     "] user " + std::to_string(user);
  auto rows = s.RefTraversal(Email(user), as_of ? std::optional<Entid>(ctx.t_mid) : std::nullopt);
  if (!rows.ok()) return c.Errored(name, Describe(expected), rows.status());
  Pairs actual;
  for (const auto& row : *rows) {
    if (row.size() != 3) continue;
    actual.emplace_back(IssueIndexFromTitle(Text(row[1])), Text(row[2]));
  }
  std::sort(actual.begin(), actual.end());
  bool ok = actual == expected && actual.size() == rows->size();
  return c.Record(name, ok, Describe(expected),
                  std::to_string(rows->size()) + " rows, " + Describe(actual) +
                      (ok ? "" : Diff(expected, actual)));
}

Status CheckInputBindings(const Context& ctx, Session& s, Checker& c) {
  std::vector<std::string> emails;
  std::set<std::string> expected;
  for (const auto& u : ctx.meta["truth"]["input_binding_users"]) {
    emails.push_back(Email(u.get<int64_t>()));
    expected.insert(UserName(u.get<int64_t>()));
  }
  std::string exp_text;
  for (const auto& n : expected) exp_text += (exp_text.empty() ? "" : "|") + n;
  auto rows = s.InputBindings(emails);
  if (!rows.ok()) return c.Errored("input_bindings", exp_text, rows.status());
  std::set<std::string> actual;
  for (const auto& row : *rows)
    if (row.size() == 2) actual.insert(Text(row[1]));
  std::string act_text;
  for (const auto& n : actual) act_text += (act_text.empty() ? "" : "|") + n;
  bool ok = actual == expected && rows->size() == expected.size();
  return c.Record("input_bindings", ok, exp_text,
                  act_text + " (" + std::to_string(rows->size()) + " rows)");
}

Status CheckPredicateScan(const Context& ctx, Session& s, Checker& c) {
  int64_t expected = ctx.meta["truth"]["open_priority_ge_4"].get<int64_t>();
  auto rows = s.PredicateScan(4);
  if (!rows.ok()) return c.Errored("predicate_scan", std::to_string(expected), rows.status());
  int64_t below = 0;
  for (const auto& row : *rows) below += row.size() != 3 || !row[2].is_int() || row[2].as_int() < 4;
  std::string actual = std::to_string(rows->size());
  if (below) actual += " (" + std::to_string(below) + " rows with priority < 4)";
  return c.Record("predicate_scan", static_cast<int64_t>(rows->size()) == expected && !below,
                  std::to_string(expected) + " rows", actual + " rows");
}

Status CheckSince(const Context& ctx, Session& s, Checker& c) {
  int64_t expected = ctx.meta["truth"]["since_distinct_issues"].get<int64_t>();
  auto rows = s.Since(ctx.t_since);
  if (!rows.ok()) return c.Errored("since", std::to_string(expected), rows.status());
  std::set<int64_t> distinct;
  for (const auto& row : *rows)
    if (!row.empty() && row[0].is_int()) distinct.insert(row[0].as_int());
  return c.Record("since", static_cast<int64_t>(distinct.size()) == expected,
                  std::to_string(expected) + " distinct ?i",
                  std::to_string(distinct.size()) + " distinct ?i");
}

Status CheckPulls(const Context& ctx, Session& s, Checker& c) {
  for (const auto& [key, truth] : ctx.meta["truth"]["probe_issues"].items()) {
    int64_t k = std::stoll(key);
    std::string name = "pull[" + key + "]";
    std::string expected = truth["title"].get<std::string>() + " | " +
                           truth["state"].get<std::string>() + " | " +
                           std::to_string(truth["priority"].get<int64_t>());
    auto v = s.Pull(ctx.issue_eids.at(k));
    if (!v.ok()) {
      MENTAT_RETURN_IF_ERROR(c.Errored(name, expected, v.status()));
      continue;
    }
    std::string actual = "nil";
    if (v->is_map()) {
      const edn::Value* t = v->get_keyword("issue/title");
      const edn::Value* st = v->get_keyword("issue/state");
      const edn::Value* p = v->get_keyword("issue/priority");
      actual = (t ? Text(*t) : "-") + " | " + (st ? Text(*st) : "-") + " | " + (p ? Text(*p) : "-");
    } else if (!v->is_nil()) {
      actual = edn::Print(*v);
    }
    MENTAT_RETURN_IF_ERROR(c.Record(name, actual == expected, expected, actual));
  }
  return Status::OK();
}

// "N rows" and, when the answer is short, the rows.
std::string Summary(const std::vector<std::string>& rows) {
  std::string out = std::to_string(rows.size()) + " rows";
  if (rows.size() <= 3)
    for (const auto& r : rows) out += " " + r;
  return out;
}

// The first rows in one sorted list and not in the other, for a FAIL line.
std::string RowDiff(const std::vector<std::string>& expected,
                    const std::vector<std::string>& actual) {
  std::vector<std::string> missing, extra;
  std::set_difference(expected.begin(), expected.end(), actual.begin(), actual.end(),
                      std::back_inserter(missing));
  std::set_difference(actual.begin(), actual.end(), expected.begin(), expected.end(),
                      std::back_inserter(extra));
  std::string out = "; " + std::to_string(missing.size()) + " missing, " +
                    std::to_string(extra.size()) + " extra";
  for (size_t i = 0; i < std::min<size_t>(3, missing.size()); ++i) out += " missing " + missing[i];
  for (size_t i = 0; i < std::min<size_t>(3, extra.size()); ++i) out += " extra " + extra[i];
  return out;
}

Status CheckVariants(const Context& ctx, const RunInfo& run, Session& s, Session* reference,
                     const std::vector<const Variant*>& variants, int64_t timeout_ms, Checker& c) {
  for (const Variant* v : variants) {
    const std::vector<VariantArgs> all_args = v->check_args(ctx);
    for (size_t k = 0; k < all_args.size(); ++k) {
      const VariantArgs& args = all_args[k];
      const std::string name = std::string(kVariantPrefix) + v->name + "[" + args.label + "]";
      std::optional<int64_t> truth = v->truth_rows ? v->truth_rows(ctx, args) : std::nullopt;
      auto rows = s.RunVariant(*v, args, ctx, timeout_ms);
      std::vector<std::string> actual;
      if (rows.ok()) {
        for (const auto& row : *rows)
          actual.push_back(CanonicalRow(reference && v->normalize ? v->normalize(row) : row));
        std::sort(actual.begin(), actual.end());
      }
      if (reference) {
        auto ref = reference->RunVariant(*v, args, ctx, 0);
        std::vector<std::string> expected;
        if (ref.ok()) {
          for (const auto& row : *ref) expected.push_back(CanonicalRow(row));
          std::sort(expected.begin(), expected.end());
        }
        const std::string exp_text = ref.ok() ? "sqlite-sql " + Summary(expected)
                                              : "sqlite-sql error " + ref.status().ToString();
        if (!rows.ok()) {
          if (rows.status().code() == Code::kInterrupted) {
            MENTAT_RETURN_IF_ERROR(c.TimedOut(name, exp_text, rows.status()));
          } else {
            MENTAT_RETURN_IF_ERROR(c.Errored(name, exp_text, rows.status()));
          }
        } else {
          MENTAT_RETURN_IF_ERROR(c.Record(
              name, ref.ok() && actual == expected, exp_text,
              Summary(actual) + (ref.ok() && actual != expected ? RowDiff(expected, actual) : "")));
        }
      }
      if (!truth) continue;
      const std::string tname = name + ".truth";
      const std::string texp = std::to_string(*truth) + " rows (meta.json)";
      if (!rows.ok()) {
        if (rows.status().code() == Code::kInterrupted) {
          MENTAT_RETURN_IF_ERROR(c.TimedOut(tname, texp, rows.status()));
        } else {
          MENTAT_RETURN_IF_ERROR(c.Errored(tname, texp, rows.status()));
        }
        continue;
      }
      MENTAT_RETURN_IF_ERROR(c.Record(tname, static_cast<int64_t>(actual.size()) == *truth, texp,
                                      std::to_string(actual.size()) + " rows"));
    }
  }
  (void)run;
  return Status::OK();
}

}  // namespace

Status CheckVariantsPhase(const Context& ctx, const RunInfo& run,
                          const std::vector<std::string>& names, double timeout_s,
                          bool allow_unavailable, bool* failed) {
  std::vector<const Variant*> variants;
  for (const auto& n : names) {
    const Variant* v = FindVariant(n);
    if (!v) return Status::InvalidArgument("unknown variant '" + n + "'");
    variants.push_back(v);
  }
  MENTAT_ASSIGN_OR_RETURN(auto backend, OpenBackend(run.backend, ctx.store));
  MENTAT_ASSIGN_OR_RETURN(auto session, backend->Connect());
  std::unique_ptr<Backend> ref_backend;
  std::unique_ptr<Session> ref_session;
  if (run.backend != "sqlite-sql") {
    MENTAT_ASSIGN_OR_RETURN(ref_backend, OpenBackend("sqlite-sql", ctx.store));
    MENTAT_ASSIGN_OR_RETURN(ref_session, ref_backend->Connect());
  }
  Checker c(ctx, run, "variants", allow_unavailable);
  MENTAT_RETURN_IF_ERROR(CheckVariants(ctx, run, *session, ref_session.get(), variants,
                                       static_cast<int64_t>(timeout_s * 1000), c));
  std::fprintf(stderr, "checks %s %s variants: %d PASS, %d FAIL, %d SKIP\n", run.backend.c_str(),
               ctx.scale.c_str(), c.pass(), c.fail(), c.skip());
  *failed = c.fail() > 0;
  return Status::OK();
}

Status Check(const Context& ctx, const RunInfo& run, const std::string& phase,
             bool allow_unavailable, bool* failed) {
  if (phase != "before" && phase != "after")
    return Status::InvalidArgument("--phase is before or after, not '" + phase + "'");
  MENTAT_ASSIGN_OR_RETURN(auto backend, OpenBackend(run.backend, ctx.store));
  MENTAT_ASSIGN_OR_RETURN(auto session, backend->Connect());
  Session& s = *session;
  Checker c(ctx, run, phase, allow_unavailable);
  const bool before = phase == "before";
  MENTAT_RETURN_IF_ERROR(CheckPointLookups(ctx, s, c));
  MENTAT_RETURN_IF_ERROR(CheckAggregate(ctx, s, c, before));
  for (int i = 0; i < 3; ++i) {
    MENTAT_RETURN_IF_ERROR(CheckRefTraversal(ctx, s, c, i, /*as_of=*/true));
    if (before) MENTAT_RETURN_IF_ERROR(CheckRefTraversal(ctx, s, c, i, /*as_of=*/false));
  }
  MENTAT_RETURN_IF_ERROR(CheckInputBindings(ctx, s, c));
  if (before) {
    MENTAT_RETURN_IF_ERROR(CheckPredicateScan(ctx, s, c));
    MENTAT_RETURN_IF_ERROR(CheckSince(ctx, s, c));
    MENTAT_RETURN_IF_ERROR(CheckPulls(ctx, s, c));
  }
  int expected_checks = before ? 18 : 8;
  int total = c.pass() + c.fail() + c.skip();
  std::fprintf(stderr, "checks %s %s %s: %d PASS, %d FAIL, %d SKIP\n", run.backend.c_str(),
               ctx.scale.c_str(), phase.c_str(), c.pass(), c.fail(), c.skip());
  if (total != expected_checks)
    return Status::Internal("ran " + std::to_string(total) + " checks, expected " +
                            std::to_string(expected_checks));
  *failed = c.fail() > 0;
  return Status::OK();
}

}  // namespace mentat::scale
