// Clients as threads or processes, the timed loop and the raw.csv rows.
//
// Process clients are forked before any store is opened in the parent (an SQLite
// connection must not cross a fork); each opens its own backend, warms up, reports ready
// on a pipe and waits for the parent's go byte, so every client's timed window starts
// together. Each writes its samples to a file the parent reads after waitpid.
#include "timing.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <barrier>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <functional>
#include <thread>

namespace mentat::scale {

const char* kRawHeader =
    "scenario,backend,scale,n_datoms,clients,op,count,p50_ms,p95_ms,p99_ms,max_ms,"
    "throughput_ops_s,errors,rep,note,cpu_p50_ms";

namespace {

uint64_t Fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}

Status WriteResult(const std::string& path, const ClientResult& r) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return Status::Io("cannot write " + path);
  int64_t head[4] = {r.errors, r.ceiling ? 1 : 0, static_cast<int64_t>(r.samples_ms.size()),
                     static_cast<int64_t>(r.first_error.size())};
  std::fwrite(head, sizeof head, 1, f);
  std::fwrite(&r.elapsed_s, sizeof r.elapsed_s, 1, f);
  std::fwrite(r.first_error.data(), 1, r.first_error.size(), f);
  std::fwrite(r.samples_ms.data(), sizeof(double), r.samples_ms.size(), f);
  std::fwrite(r.cpu_ms.data(), sizeof(double), r.cpu_ms.size(), f);
  return std::fclose(f) == 0 ? Status::OK() : Status::Io("cannot write " + path);
}

Status ReadResult(const std::string& path, ClientResult* r) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return Status::Io("a client left no result (" + path + ")");
  int64_t head[4];
  bool ok = std::fread(head, sizeof head, 1, f) == 1 &&
            std::fread(&r->elapsed_s, sizeof r->elapsed_s, 1, f) == 1;
  if (ok) {
    r->errors = head[0];
    r->ceiling = head[1] != 0;
    r->samples_ms.resize(head[2]);
    r->cpu_ms.resize(head[2]);
    r->first_error.resize(head[3]);
    ok = std::fread(r->first_error.data(), 1, head[3], f) == static_cast<size_t>(head[3]) &&
         std::fread(r->samples_ms.data(), sizeof(double), head[2], f) ==
             static_cast<size_t>(head[2]) &&
         std::fread(r->cpu_ms.data(), sizeof(double), head[2], f) == static_cast<size_t>(head[2]);
  }
  std::fclose(f);
  std::remove(path.c_str());
  return ok ? Status::OK() : Status::Io("a client's result is short (" + path + ")");
}

void ConnectAndRun(Backend* shared, const Context& ctx, const RunInfo& run, int client,
                   const ClientBody& body, const std::function<void()>& start,
                   const std::function<void()>& give_up, ClientResult* out) {
  std::unique_ptr<Backend> own;
  Backend* backend = shared;
  if (!backend) {
    auto b = OpenBackend(run.backend, ctx.store);
    if (!b.ok()) {
      out->errors = 1;
      out->first_error = b.status().ToString();
      give_up();
      return;
    }
    own = std::move(*b);
    backend = own.get();
  }
  auto session = backend->Connect();
  if (!session.ok()) {
    out->errors = 1;
    out->first_error = session.status().ToString();
    give_up();
    return;
  }
  body(client, **session, start, out);
}

double Percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(q * sorted.size()));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

}  // namespace

double ThreadCpu() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

Rng ClientRng(const RunInfo& run, const std::string& scenario, int client) {
  return Rng(run.seed ^ Fnv1a(scenario) ^ (static_cast<uint64_t>(run.rep) << 32) ^
             (static_cast<uint64_t>(client) * 0x9e3779b97f4a7c15ULL));
}

Status RunClients(const Context& ctx, const RunInfo& run, int clients, const ClientBody& body,
                  std::vector<ClientResult>* results) {
  results->assign(clients, ClientResult{});
  if (!run.processes) {
    MENTAT_ASSIGN_OR_RETURN(auto backend, OpenBackend(run.backend, ctx.store));
    std::barrier sync(clients);
    std::vector<std::thread> threads;
    for (int c = 0; c < clients; ++c) {
      threads.emplace_back([&, c] {
        bool started = false;
        ConnectAndRun(
            backend.get(), ctx, run, c, body,
            [&] {
              started = true;
              sync.arrive_and_wait();
            },
            [&] {
              if (!started) sync.arrive_and_drop();
              started = true;
            },
            &(*results)[c]);
        if (!started) sync.arrive_and_drop();
      });
    }
    for (auto& t : threads) t.join();
    return Status::OK();
  }

  int ready[2], go[2];
  if (pipe(ready) != 0 || pipe(go) != 0) return Status::Io("pipe failed");
  std::fflush(nullptr);
  const std::string prefix = run.out_dir + "/.client-" + std::to_string(getpid()) + "-";
  std::vector<pid_t> pids;
  for (int c = 0; c < clients; ++c) {
    pid_t pid = fork();
    if (pid < 0) return Status::Io("fork failed");
    if (pid == 0) {
      close(ready[0]);
      close(go[1]);
      bool signalled = false;
      auto signal_ready = [&] {
        if (signalled) return;
        signalled = true;
        char b = 'r';
        if (write(ready[1], &b, 1) != 1) _exit(3);
      };
      ClientResult r;
      ConnectAndRun(
          nullptr, ctx, run, c, body,
          [&] {
            signal_ready();
            char b;
            if (read(go[0], &b, 1) != 1) _exit(3);
          },
          signal_ready, &r);
      signal_ready();
      Status st = WriteResult(prefix + std::to_string(c), r);
      std::fflush(nullptr);
      _exit(st.ok() ? 0 : 2);
    }
    pids.push_back(pid);
  }
  close(ready[1]);
  close(go[0]);
  // Wait until every client is ready (or has died: read then sees the end of the pipe).
  int got = 0;
  char b;
  while (got < clients && read(ready[0], &b, 1) == 1) ++got;
  std::string gos(clients, 'g');
  if (write(go[1], gos.data(), gos.size()) != static_cast<ssize_t>(gos.size())) {
    // A client died before reading: its result file will be missing, reported below.
  }
  close(go[1]);
  close(ready[0]);
  for (int c = 0; c < clients; ++c) {
    int wstatus = 0;
    waitpid(pids[c], &wstatus, 0);
    Status st = ReadResult(prefix + std::to_string(c), &(*results)[c]);
    if (!st.ok()) {
      (*results)[c].errors += 1;
      (*results)[c].first_error = st.ToString();
    }
  }
  return Status::OK();
}

void TimedLoop(const Rules& rules, int clients, const Call& call,
               const std::function<void()>& start, ClientResult* out, double fixed_s) {
  for (int w = 0; w < rules.warmups; ++w) {
    Sample sample;
    Status st = call(&sample);
    // A first call slower than the probe limit marks the point, whether it finished or was
    // stopped by a timeout (variants set one just past the limit).
    if (w == 0 && sample.ms > rules.probe_s * 1000) {
      out->ceiling = true;
      start();
      return;
    }
    if (!st.ok() && w == 0) {
      // The first call failed: the point is an error, not a measurement.
      out->errors = 1;
      out->first_error = st.ToString();
      start();
      return;
    }
  }
  start();
  const int64_t min_n = (rules.min_n + clients - 1) / clients;
  const double t0 = Now();
  while (true) {
    Sample sample;
    Status st = call(&sample);
    if (st.ok()) {
      out->samples_ms.push_back(sample.ms);
      out->cpu_ms.push_back(sample.cpu_ms);
    } else {
      if (out->errors++ == 0) out->first_error = st.ToString();
    }
    double el = Now() - t0;
    out->elapsed_s = el;
    if (fixed_s > 0) {
      if (el >= fixed_s) break;
      continue;
    }
    if (el >= rules.max_s) break;
    if (el >= rules.min_s && static_cast<int64_t>(out->samples_ms.size()) + out->errors >= min_n)
      break;
  }
}

Status WriteRow(const Context& ctx, const RunInfo& run, const std::string& scenario,
                const std::string& op, int clients, const std::vector<ClientResult>& results,
                const std::string& note_in) {
  std::vector<double> all, cpu;
  int64_t errors = 0;
  double elapsed = 0;
  bool ceiling = false;
  std::string first_error;
  for (const auto& r : results) {
    all.insert(all.end(), r.samples_ms.begin(), r.samples_ms.end());
    cpu.insert(cpu.end(), r.cpu_ms.begin(), r.cpu_ms.end());
    errors += r.errors;
    elapsed = std::max(elapsed, r.elapsed_s);
    ceiling |= r.ceiling;
    if (first_error.empty()) first_error = r.first_error;
  }
  std::sort(all.begin(), all.end());
  std::sort(cpu.begin(), cpu.end());
  std::string note = note_in;
  if (ceiling) note = "ceiling";
  if (!first_error.empty()) note += (note.empty() ? "" : "; ") + first_error;
  std::replace(note.begin(), note.end(), ',', ';');
  std::replace(note.begin(), note.end(), '\n', ' ');
  double ops = elapsed > 0 ? all.size() / elapsed : 0;
  std::string line = scenario + "," + run.backend + "," + ctx.scale + "," +
                     std::to_string(ctx.n_datoms) + "," + std::to_string(clients) + "," + op + "," +
                     std::to_string(all.size()) + "," + Fixed(Percentile(all, 0.50), 4) + "," +
                     Fixed(Percentile(all, 0.95), 4) + "," + Fixed(Percentile(all, 0.99), 4) + "," +
                     Fixed(all.empty() ? 0 : all.back(), 4) + "," + Fixed(ops, 2) + "," +
                     std::to_string(errors) + "," + std::to_string(run.rep) + "," + note + "," +
                     Fixed(Percentile(cpu, 0.50), 4);
  std::fprintf(
      stderr, "  %-16s %-10s %-3s c=%-3d %-20s n=%-8zu p50=%10.4f p99=%10.4f ms %10.1f/s%s%s\n",
      scenario.c_str(), run.backend.c_str(), ctx.scale.c_str(), clients, op.c_str(), all.size(),
      Percentile(all, 0.5), Percentile(all, 0.99), ops, note.empty() ? "" : "  ", note.c_str());
  return AppendLine(run.out_dir + "/raw.csv", kRawHeader, line);
}

}  // namespace mentat::scale
