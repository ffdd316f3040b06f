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

// What one call cost: wall time on the monotonic clock, and the CPU time of the calling
// thread (the backend runs in it; on a busy machine CPU time is the figure that does not
// include waiting for a core).
struct Sample {
  double ms = 0;
  double cpu_ms = 0;
};

// One call: prepares its inputs untimed, then times only the call into the backend and
// stores its cost in *sample.
using Call = std::function<Status(Sample* sample)>;

// What one client measured.
struct ClientResult {
  std::vector<double> samples_ms;  // successful calls only
  std::vector<double> cpu_ms;      // their CPU times, in the same order
  int64_t errors = 0;
  double elapsed_s = 0;  // the length of its timed window
  bool ceiling = false;  // its first call was slower than the probe limit
  std::string first_error;
};

// Seconds of CPU time the calling thread has used.
double ThreadCpu();

// Runs `f` and returns its status; *sample gets its wall and CPU time.
template <typename F>
Status Timed(Sample* sample, F&& f) {
  double c0 = ThreadCpu();
  double t0 = Now();
  Status st = f();
  double t1 = Now();
  sample->ms = (t1 - t0) * 1000;
  sample->cpu_ms = (ThreadCpu() - c0) * 1000;
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
