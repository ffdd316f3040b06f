// Timing machinery of the scale driver: clients as threads or processes, the timed loop
// under the suite's rules, and the rows of raw.csv.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "commands.h"
#include "rng.h"
#include "scale.h"

namespace mentat::scale {

// One call: prepares its inputs untimed, then times only the call into the backend and
// stores the latency in *ms.
using Call = std::function<Status(double* ms)>;

// What one client measured.
struct ClientResult {
  std::vector<double> samples_ms;  // successful calls only
  int64_t errors = 0;
  double elapsed_s = 0;  // the length of its timed window
  bool ceiling = false;  // its first call was slower than the probe limit
  std::string first_error;
};

// Runs `f` and returns its status; *ms gets its latency on the monotonic clock.
template <typename F>
Status Timed(double* ms, F&& f) {
  double t0 = Now();
  Status st = f();
  *ms = (Now() - t0) * 1000;
  return st;
}

// The body of one client: it connects (done by the harness), prepares, calls `start()`
// exactly once (which waits until every client is ready), then runs its timed window.
using ClientBody = std::function<void(int client, Session& session,
                                      const std::function<void()>& start, ClientResult* out)>;

// Runs `clients` clients of `run.backend` on `ctx.store`, as processes (run.processes) or
// threads, and returns their results. A client that cannot connect reports an error.
Status RunClients(const Context& ctx, const RunInfo& run, int clients, const ClientBody& body,
                  std::vector<ClientResult>* results);

// The standard timed window: `rules.warmups` discarded calls (the first one probed against
// rules.probe_s), start(), then calls until min_s and min_n (split between `clients`) are
// both reached, or max_s. When `fixed_s` > 0 the window is exactly that long instead.
void TimedLoop(const Rules& rules, int clients, const Call& call,
               const std::function<void()>& start, ClientResult* out, double fixed_s = 0);

// Appends one raw.csv row merging `results` (the clients of one point).
Status WriteRow(const Context& ctx, const RunInfo& run, const std::string& scenario,
                const std::string& op, int clients, const std::vector<ClientResult>& results,
                const std::string& note = "");

// A client's random stream: depends on the seed, the rep, the scenario and the client.
Rng ClientRng(const RunInfo& run, const std::string& scenario, int client);

}  // namespace mentat::scale
