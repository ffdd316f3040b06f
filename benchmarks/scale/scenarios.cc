// The timed scenarios: the read scenarios, concurrency_sweep, write_mixed, cold_vs_warm;
// and explain / query for looking at one query.
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <unordered_map>

#include "timing.h"
#include "variants.h"

namespace mentat::scale {
namespace {

std::string RandomEmail(const Context& ctx, Rng& rng) {
  return Email(static_cast<int64_t>(rng.Below(ctx.n_users)));
}

// `n` distinct random existing emails.
std::vector<std::string> RandomEmails(const Context& ctx, Rng& rng, int64_t n) {
  n = std::min(n, ctx.n_users);
  std::set<int64_t> users;
  while (static_cast<int64_t>(users.size()) < n) users.insert(rng.Below(ctx.n_users));
  std::vector<std::string> out;
  for (int64_t u : users) out.push_back(Email(u));
  return out;
}

// The call of read scenario `scenario` for one client (inputs drawn from `rng`); a variant
// ("variant/<name>") is stopped after `variant_timeout_ms` when that is > 0.
Result<Call> ReadCall(const std::string& scenario, const Context& ctx, Session& s, Rng& rng,
                      int64_t variant_timeout_ms = 0) {
  if (const Variant* v = scenario.rfind(kVariantPrefix, 0) == 0 ? FindVariant(scenario) : nullptr)
    return Call([&, v, variant_timeout_ms](Sample* sample) {
      VariantArgs args = v->args(ctx, rng);
      return Timed(sample,
                   [&] { return s.RunVariant(*v, args, ctx, variant_timeout_ms).status(); });
    });
  if (scenario == "point_lookup")
    return Call([&](Sample* sample) {
      std::string e = RandomEmail(ctx, rng);
      return Timed(sample, [&] { return s.PointLookup(e).status(); });
    });
  if (scenario == "ref_traversal" || scenario == "as_of") {
    std::optional<Entid> as_of;
    if (scenario == "as_of") as_of = ctx.t_mid;
    return Call([&, as_of](Sample* sample) {
      std::string e = RandomEmail(ctx, rng);
      return Timed(sample, [&] { return s.RefTraversal(e, as_of).status(); });
    });
  }
  if (scenario == "aggregate")
    return Call(
        [&](Sample* sample) { return Timed(sample, [&] { return s.Aggregate().status(); }); });
  if (scenario == "predicate_scan")
    return Call(
        [&](Sample* sample) { return Timed(sample, [&] { return s.PredicateScan(4).status(); }); });
  if (scenario == "since")
    return Call([&](Sample* sample) {
      return Timed(sample, [&] { return s.Since(ctx.t_since).status(); });
    });
  if (scenario == "input_bindings")
    return Call([&](Sample* sample) {
      std::vector<std::string> emails = RandomEmails(ctx, rng, 100);
      return Timed(sample, [&] { return s.InputBindings(emails).status(); });
    });
  if (scenario == "pull")
    return Call([&](Sample* sample) {
      Entid e = ctx.issue_eids[rng.Below(ctx.n_issues)];
      return Timed(sample, [&] { return s.Pull(e).status(); });
    });
  return Status::InvalidArgument("unknown read scenario '" + scenario + "'");
}

// Evicts the store's pages from the OS page cache: `how` "all" drops every cache when the
// kernel lets us (drop_caches), else, or for "file", the store files' own pages
// (posix_fadvise); "none" keeps them. Returns the method used.
std::string DropCaches(const std::string& store, const std::string& how) {
  if (how == "none") return "cache_kept";
  sync();
  if (how == "all") {
    int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
    if (fd >= 0) {
      bool ok = write(fd, "1", 1) == 1;
      close(fd);
      if (ok) return "drop_caches";
    }
  }
  bool any = false;
  for (const char* suffix : {"", "-wal", "-shm"}) {
    int fd = open((store + suffix).c_str(), O_RDONLY);
    if (fd < 0) continue;
    fdatasync(fd);
    any |= posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0;
    close(fd);
  }
  return any ? "fadvise_dontneed" : "cache_not_dropped";
}

}  // namespace

Status Bench(const Context& ctx, const RunInfo& run, const Rules& rules,
             const std::vector<std::string>& scenarios, int clients) {
  for (const auto& scenario : scenarios) {
    std::vector<ClientResult> results;
    MENTAT_RETURN_IF_ERROR(RunClients(
        ctx, run, clients,
        [&](int client, Session& s, const std::function<void()>& start, ClientResult* out) {
          Rng rng = ClientRng(run, scenario, client);
          // A variant's first call is stopped a little after the probe limit, so that a
          // query far past it costs one probe, not its whole run (the point is "ceiling").
          auto call =
              ReadCall(scenario, ctx, s, rng, static_cast<int64_t>(rules.probe_s * 1100) + 100);
          if (!call.ok()) {
            out->errors = 1;
            out->first_error = call.status().ToString();
            start();
            return;
          }
          TimedLoop(rules, clients, *call, start, out);
        },
        &results));
    MENTAT_RETURN_IF_ERROR(WriteRow(ctx, run, scenario, "read", clients, results));
  }
  return Status::OK();
}

Status Sweep(const Context& ctx, const RunInfo& run, const Rules& rules,
             const std::vector<int>& clients, int slices) {
  // Each point's window is cut into `slices` parts run in turn over the client counts
  // (1 2 4 8 1 2 4 8 ...), so that a slow spell of a shared machine falls on every count
  // alike instead of on one of them; a point's rows and time are its slices' together.
  slices = std::max(1, slices);
  Rules slice = rules;
  slice.min_s = rules.min_s / slices;
  slice.max_s = rules.max_s / slices;
  slice.min_n = (rules.min_n + slices - 1) / slices;
  std::vector<std::vector<ClientResult>> merged(clients.size());
  for (int k = 0; k < slices; ++k) {
    for (size_t p = 0; p < clients.size(); ++p) {
      const int n = clients[p];
      std::vector<ClientResult> results;
      MENTAT_RETURN_IF_ERROR(RunClients(
          ctx, run, n,
          [&](int client, Session& s, const std::function<void()>& start, ClientResult* out) {
            Rng rng = ClientRng(run, "concurrency_sweep", client * slices + k);
            std::vector<Call> calls;
            for (const char* sc : {"point_lookup", "ref_traversal", "pull"}) {
              auto c = ReadCall(sc, ctx, s, rng);
              if (c.ok()) calls.push_back(*c);
            }
            // q1, q2 and pull in equal parts, each client starting at another one.
            size_t i = static_cast<size_t>(client);
            TimedLoop(
                slice, n, [&](Sample* sample) { return calls[i++ % calls.size()](sample); }, start,
                out);
          },
          &results));
      merged[p].resize(results.size());
      for (size_t c = 0; c < results.size(); ++c) {
        ClientResult& m = merged[p][c];
        const ClientResult& r = results[c];
        m.samples_ms.insert(m.samples_ms.end(), r.samples_ms.begin(), r.samples_ms.end());
        m.cpu_ms.insert(m.cpu_ms.end(), r.cpu_ms.begin(), r.cpu_ms.end());
        m.errors += r.errors;
        m.elapsed_s += r.elapsed_s;
        m.ceiling |= r.ceiling;
        if (m.first_error.empty()) m.first_error = r.first_error;
      }
    }
  }
  for (size_t p = 0; p < clients.size(); ++p)
    MENTAT_RETURN_IF_ERROR(
        WriteRow(ctx, run, "concurrency_sweep", "read", clients[p], merged[p],
                 slices > 1 ? std::to_string(slices) + " slices" : std::string()));
  return Status::OK();
}

Status Mixed(const Context& ctx, const RunInfo& run, double seconds, int readers) {
  Rules rules;  // warm-ups and the probe only; the window is fixed
  std::vector<ClientResult> results;
  MENTAT_RETURN_IF_ERROR(RunClients(
      ctx, run, readers + 1,
      [&](int client, Session& s, const std::function<void()>& start, ClientResult* out) {
        Rng rng = ClientRng(run, "write_mixed", client);
        if (client > 0) {  // a reader: q1 and q2 in turn
          auto q1 = ReadCall("point_lookup", ctx, s, rng);
          auto q2 = ReadCall("ref_traversal", ctx, s, rng);
          int64_t i = client;
          TimedLoop(
              rules, readers, [&](Sample* sample) { return (i++ % 2 ? *q1 : *q2)(sample); }, start,
              out, seconds);
          return;
        }
        // The writer: one-datom transactions, a state change (to a different state) and a
        // label add in turn. It is the only writer, so it tracks the states itself.
        std::unordered_map<Entid, std::string> states;
        auto all = s.AllStates();
        if (!all.ok()) {
          out->errors = 1;
          out->first_error = all.status().ToString();
          start();
          return;
        }
        for (const auto& row : *all) states[row[0].as_int()] = ":" + row[1].str();
        int64_t i = 0;
        TimedLoop(
            rules, 1,
            [&](Sample* sample) {
              Entid e = ctx.issue_eids[rng.Below(ctx.n_issues)];
              if (i++ % 2 == 0) {
                std::string& cur = states[e];
                std::string next = cur;
                while (next == cur) next = kStates[rng.Below(kStates.size())];
                Status st = Timed(sample, [&] { return s.SetState(e, next); });
                if (st.ok()) cur = next;
                return st;
              }
              std::string label = LabelName(static_cast<int64_t>(rng.Below(ctx.n_labels)));
              return Timed(sample, [&] { return s.AddLabel(e, label); });
            },
            start, out, seconds);
      },
      &results));
  MENTAT_RETURN_IF_ERROR(WriteRow(ctx, run, "write_mixed", "write", 1, {results[0]}));
  return WriteRow(ctx, run, "write_mixed", "read", readers,
                  std::vector<ClientResult>(results.begin() + 1, results.end()));
}

Status ColdWarm(const Context& ctx, const RunInfo& run, const std::string& drop) {
  if (drop != "all" && drop != "file" && drop != "none")
    return Status::InvalidArgument("--drop is all, file or none, not '" + drop + "'");
  const std::string method = DropCaches(ctx.store, drop);
  auto one = [](const Sample& sample) {
    ClientResult r;
    r.samples_ms = {sample.ms};
    r.cpu_ms = {sample.cpu_ms};
    r.elapsed_s = sample.ms / 1000;
    return r;
  };
  std::unique_ptr<Backend> backend;
  std::unique_ptr<Session> session;
  Sample open_cost;
  MENTAT_RETURN_IF_ERROR(Timed(&open_cost, [&]() -> Status {
    MENTAT_ASSIGN_OR_RETURN(backend, OpenBackend(run.backend, ctx.store));
    MENTAT_ASSIGN_OR_RETURN(session, backend->Connect());
    return Status::OK();
  }));
  MENTAT_RETURN_IF_ERROR(WriteRow(ctx, run, "cold_vs_warm", "open", 1, {one(open_cost)}, method));
  Rng rng = ClientRng(run, "cold_vs_warm", 0);
  for (const char* op : {"point_lookup", "ref_traversal", "pull", "aggregate"}) {
    MENTAT_ASSIGN_OR_RETURN(Call call, ReadCall(op, ctx, *session, rng));
    ClientResult cold, warm;
    Sample sample;
    Status st = call(&sample);
    if (st.ok()) {
      cold = one(sample);
    } else {
      cold.errors = 1;
      cold.first_error = st.ToString();
    }
    for (int i = 0; i < 30; ++i) {
      st = call(&sample);
      if (st.ok()) {
        warm.samples_ms.push_back(sample.ms);
        warm.cpu_ms.push_back(sample.cpu_ms);
        warm.elapsed_s += sample.ms / 1000;
      } else if (warm.errors++ == 0) {
        warm.first_error = st.ToString();
      }
    }
    MENTAT_RETURN_IF_ERROR(
        WriteRow(ctx, run, "cold_vs_warm", std::string("cold_") + op, 1, {cold}, method));
    MENTAT_RETURN_IF_ERROR(
        WriteRow(ctx, run, "cold_vs_warm", std::string("warm_") + op, 1, {warm}));
  }
  return Status::OK();
}

std::vector<std::string> VariantScenarioNames() {
  std::vector<std::string> out;
  for (const auto& v : Variants()) out.push_back(std::string(kVariantPrefix) + v.name);
  return out;
}

Status Explain(const Context& ctx, const RunInfo& run) {
  MENTAT_ASSIGN_OR_RETURN(auto backend, OpenBackend(run.backend, ctx.store));
  MENTAT_ASSIGN_OR_RETURN(auto session, backend->Connect());
  std::string dir = run.out_dir + "/plans";
  std::filesystem::create_directories(dir);
  for (const auto& scenario : kReadScenarios) {
    auto plan = session->Explain(scenario, ctx);
    std::string path = dir + "/" + run.backend + "-" + ctx.scale + "-" + scenario + ".txt";
    std::ofstream out(path);
    out << (plan.ok() ? *plan : "error: " + plan.status().ToString()) << "\n";
    if (!out) return Status::Io("cannot write " + path);
  }
  return Status::OK();
}

Status QueryOnce(const Context& ctx, const RunInfo& run, const std::string& scenario,
                 const std::string& arg) {
  MENTAT_ASSIGN_OR_RETURN(auto backend, OpenBackend(run.backend, ctx.store));
  MENTAT_ASSIGN_OR_RETURN(auto session, backend->Connect());
  int64_t k = arg.empty() ? 0 : std::stoll(arg);
  Session& s = *session;
  Result<Rows> rows = Rows{};
  double t0 = Now();
  if (scenario == "point_lookup")
    rows = s.PointLookup(Email(k));
  else if (scenario == "ref_traversal")
    rows = s.RefTraversal(Email(k), std::nullopt);
  else if (scenario == "as_of")
    rows = s.RefTraversal(Email(k), ctx.t_mid);
  else if (scenario == "aggregate")
    rows = s.Aggregate();
  else if (scenario == "predicate_scan")
    rows = s.PredicateScan(arg.empty() ? 4 : k);
  else if (scenario == "since")
    rows = s.Since(ctx.t_since);
  else if (scenario == "input_bindings")
    rows = s.InputBindings({Email(1), Email(2), Email(k)});
  else if (scenario == "pull") {
    auto v = s.Pull(ctx.issue_eids.at(k));
    if (!v.ok()) return v.status();
    rows = Rows{{*v}};
  } else if (const Variant* v = FindVariant(scenario)) {
    // The variant with its k-th check input.
    std::vector<VariantArgs> all = v->check_args(ctx);
    if (all.empty() || k < 0 || k >= static_cast<int64_t>(all.size()))
      return Status::InvalidArgument(scenario + " has " + std::to_string(all.size()) +
                                     " check inputs");
    std::fprintf(stderr, "%s with %s\n", v->name.c_str(), all[k].label.c_str());
    t0 = Now();
    rows = s.RunVariant(*v, all[k], ctx, 0);
  } else {
    return Status::InvalidArgument("unknown scenario '" + scenario + "'");
  }
  double ms = (Now() - t0) * 1000;
  if (!rows.ok()) return rows.status();
  for (const auto& row : *rows) std::printf("%s\n", edn::Print(edn::Value::Vector(row)).c_str());
  std::fprintf(stderr, "%zu rows in %.3f ms\n", rows->size(), ms);
  return Status::OK();
}

}  // namespace mentat::scale
