// mentat-scale: the scale suite's generator and driver. run.sh calls it; see README.md.
//
// Exit status: 0 when done, 1 when a correctness check failed, 2 on any other error.
#include <sqlite3.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"

namespace {

using namespace mentat::scale;

constexpr const char* kUsage = R"(usage: mentat-scale COMMAND [FLAGS]

  gen      --scale xs|s|m|l --out DIR [--seed N]
  load     --data DIR --store PATH [--out OUT]
  load-graph --data DIR --store PATH   the extra graph phase (graph.edn) the variants need
  bench    COMMON [--scenarios "point_lookup as_of ... variant/NAME ... | variants"] [--clients N] RULES
  sweep    COMMON --clients "1 2 4 8" [--slices 3] RULES
  mixed    COMMON [--seconds 60] [--readers 8]
  coldwarm COMMON [--drop all|file|none]
  check    COMMON --phase before|after [--allow-unavailable]
  check    COMMON --phase variants [--variants "variants" | "variant/NAME ..."] [--timeout-s 600]
           each variant's rows against sqlite-sql's and meta.json's truth
  variants each variant scenario's name, one a line
  explain  COMMON
  query    COMMON SCENARIO [USER-OR-ISSUE-INDEX]   (a variant: the index of a check input)
  backends [NAME...]   each backend: "NAME available" or "NAME unavailable: why";
                       exits 1 when a named one is unavailable
  version

COMMON: --backend embedded|sqlite-sql|sqlite-ext|duckdb --data DIR --store PATH [--out OUT] [--rep N]
        [--threads] (clients as threads instead of processes) [--seed N]
RULES:  [--min-s 10] [--min-n 30] [--max-s 60] [--probe-s 20]
)";

struct Flags {
  std::map<std::string, std::string> values;
  std::vector<std::string> positional;
  std::string Get(const std::string& k, const std::string& def = "") const {
    auto it = values.find(k);
    return it == values.end() ? def : it->second;
  }
  bool Has(const std::string& k) const { return values.count(k) > 0; }
};

bool IsBoolFlag(const std::string& k) { return k == "threads" || k == "allow-unavailable"; }

std::vector<std::string> Words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// The word "variants" stands for every variant scenario ("variant/<name>").
std::vector<std::string> ExpandVariants(const std::vector<std::string>& words) {
  std::vector<std::string> out;
  for (const auto& w : words) {
    if (w == "variants") {
      for (const auto& v : VariantScenarioNames()) out.push_back(v);
    } else {
      out.push_back(w);
    }
  }
  return out;
}

int Fail(const mentat::Status& st) {
  std::fprintf(stderr, "mentat-scale: %s\n", st.ToString().c_str());
  return 2;
}

int Run(const std::string& cmd, const Flags& f) {
  if (cmd == "version") {
    std::printf("mentat-scale gen_version %d, sqlite %s, compiler %s%s\n", kGenVersion,
                sqlite3_libversion(), __VERSION__,
#ifdef NDEBUG
                ""
#else
                ", assertions on"
#endif
    );
    std::printf("duckdb %s\n", DuckdbVersion().c_str());
    return 0;
  }
  if (cmd == "backends") {
    std::vector<std::string> names = f.positional.empty() ? BackendNames() : f.positional;
    int rc = 0;
    for (const auto& name : names) {
      std::string why = BackendAvailability(name);
      if (why.empty()) {
        std::printf("%s available\n", name.c_str());
      } else {
        std::printf("%s unavailable: %s\n", name.c_str(), why.c_str());
        rc = 1;
      }
    }
    return f.positional.empty() ? 0 : rc;
  }
  if (cmd == "variants") {
    for (const auto& v : VariantScenarioNames()) std::printf("%s\n", v.c_str());
    return 0;
  }
  if (cmd == "gen") {
    if (!f.Has("scale") || !f.Has("out")) return Fail(mentat::Status::InvalidArgument(kUsage));
    auto st = Generate(f.Get("scale"), f.Get("out"),
                       std::stoull(f.Get("seed", std::to_string(kDefaultSeed))));
    return st.ok() ? 0 : Fail(st);
  }
  if (cmd == "load") {
    auto st = Load(f.Get("data"), f.Get("store"), f.Get("out"));
    return st.ok() ? 0 : Fail(st);
  }
  if (cmd == "load-graph") {
    auto st = LoadGraph(f.Get("data"), f.Get("store"));
    return st.ok() ? 0 : Fail(st);
  }
  auto ctx = LoadContext(f.Get("data"), f.Get("store"));
  if (!ctx.ok()) return Fail(ctx.status());
  // The variants read the graph phase.
  bool wants_graph = cmd == "check" && f.Get("phase") == "variants";
  for (const auto& w : ExpandVariants(Words(f.Get("scenarios"))))
    wants_graph |= w.rfind("variant/", 0) == 0;
  if (cmd == "query" && !f.positional.empty())
    wants_graph |= f.positional[0].rfind("variant/", 0) == 0;
  if (wants_graph && !ctx->graph)
    return Fail(mentat::Status::InvalidArgument(
        ctx->store + " has no graph, which the variants read: mentat-scale load-graph --data " +
        ctx->data_dir + " --store " + ctx->store + " (run.sh: GRAPH=1)"));
  RunInfo run;
  run.backend = f.Get("backend", "embedded");
  run.out_dir = f.Get("out", ".");
  std::error_code ec;
  std::filesystem::create_directories(run.out_dir, ec);
  if (ec)
    return Fail(mentat::Status::Io("cannot create --out " + run.out_dir + ": " + ec.message()));
  run.rep = std::stoi(f.Get("rep", "1"));
  run.processes = !f.Has("threads");
  run.seed = std::stoull(f.Get("seed", std::to_string(kDefaultSeed)));
  Rules rules;
  rules.min_s = std::stod(f.Get("min-s", "10"));
  rules.min_n = std::stoll(f.Get("min-n", "30"));
  rules.max_s = std::stod(f.Get("max-s", "60"));
  rules.probe_s = std::stod(f.Get("probe-s", "20"));
  mentat::Status st;
  if (cmd == "bench") {
    auto scenarios = ExpandVariants(Words(f.Get("scenarios")));
    if (scenarios.empty()) scenarios = kReadScenarios;
    st = Bench(*ctx, run, rules, scenarios, std::stoi(f.Get("clients", "1")));
  } else if (cmd == "sweep") {
    std::vector<int> clients;
    for (const auto& w : Words(f.Get("clients", "1 2 4 8"))) clients.push_back(std::stoi(w));
    st = Sweep(*ctx, run, rules, clients, std::stoi(f.Get("slices", "3")));
  } else if (cmd == "mixed") {
    st = Mixed(*ctx, run, std::stod(f.Get("seconds", "60")), std::stoi(f.Get("readers", "8")));
  } else if (cmd == "coldwarm") {
    st = ColdWarm(*ctx, run, f.Get("drop", "all"));
  } else if (cmd == "check" && f.Get("phase") == "variants") {
    bool failed = false;
    auto names = ExpandVariants(Words(f.Get("variants", "variants")));
    st = CheckVariantsPhase(*ctx, run, names, std::stod(f.Get("timeout-s", "600")),
                            f.Has("allow-unavailable"), &failed);
    if (st.ok() && failed) return 1;
  } else if (cmd == "check") {
    bool failed = false;
    st = Check(*ctx, run, f.Get("phase"), f.Has("allow-unavailable"), &failed);
    if (st.ok() && failed) return 1;
  } else if (cmd == "explain") {
    st = Explain(*ctx, run);
  } else if (cmd == "query") {
    if (f.positional.empty()) return Fail(mentat::Status::InvalidArgument(kUsage));
    st = QueryOnce(*ctx, run, f.positional[0], f.positional.size() > 1 ? f.positional[1] : "");
  } else {
    return Fail(mentat::Status::InvalidArgument("unknown command '" + cmd + "'\n" + kUsage));
  }
  return st.ok() ? 0 : Fail(st);
}

}  // namespace

int main(int argc, char** argv) {
  // The allocator state the library sets on its first connection (storage/sqlite.cc:
  // RaiseAllocatorThresholds), before any backend runs, so that the hand-written SQL's
  // statements do not page-fault their ephemeral tables' caches in either.
  {
    void* volatile block = std::malloc(size_t{8} << 20);
    std::free(block);
  }
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  Flags f;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) == 0) {
      std::string k = a.substr(2);
      if (IsBoolFlag(k)) {
        f.values[k] = "1";
      } else if (i + 1 < argc) {
        f.values[k] = argv[++i];
      } else {
        std::fprintf(stderr, "mentat-scale: %s needs a value\n", a.c_str());
        return 2;
      }
    } else {
      f.positional.push_back(a);
    }
  }
  try {
    return Run(argv[1], f);
  } catch (const std::exception& e) {  // std::stoi and JSON access on bad input
    std::fprintf(stderr, "mentat-scale: %s\n", e.what());
    return 2;
  }
}
