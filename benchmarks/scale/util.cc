// Shared helpers of the scale driver: names, the dataset context, files, clocks.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "scale.h"

namespace mentat::scale {

Result<Rows> Session::RunVariant(const Variant&, const VariantArgs&, const Context&, int64_t) {
  return Status::Unsupported("this backend does not run the variants");
}

std::string Email(int64_t user) { return "user" + std::to_string(user) + "@example.com"; }
std::string UserName(int64_t user) { return "User " + std::to_string(user); }
std::string LabelName(int64_t k) { return "label-" + std::to_string(k); }
std::string SetStateTx(Entid issue, const std::string& state) {
  return "[[:db/add " + std::to_string(issue) + " :issue/state " + state + "]]";
}
std::string AddLabelTx(Entid issue, const std::string& label) {
  return "[[:db/add " + std::to_string(issue) + " :issue/label [:label/name \"" + label + "\"]]]";
}

int64_t IssueIndexFromTitle(std::string_view title) {
  constexpr std::string_view kPrefix = "Issue ";
  if (title.substr(0, kPrefix.size()) != kPrefix) return -1;
  int64_t k = 0;
  size_t i = kPrefix.size();
  if (i >= title.size() || title[i] < '0' || title[i] > '9') return -1;
  for (; i < title.size() && title[i] >= '0' && title[i] <= '9'; ++i) k = k * 10 + (title[i] - '0');
  return i < title.size() && title[i] == ':' ? k : -1;
}

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Status AppendLine(const std::string& path, const std::string& header, const std::string& line) {
  std::error_code ec;
  auto dir = std::filesystem::path(path).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);  // OUT may be new
  bool fresh = !std::filesystem::exists(path) || std::filesystem::file_size(path) == 0;
  FILE* f = std::fopen(path.c_str(), "a");
  if (!f) return Status::Io("cannot append to " + path + ": " + std::strerror(errno));
  if (fresh && !header.empty()) std::fprintf(f, "%s\n", header.c_str());
  std::fprintf(f, "%s\n", line.c_str());
  return std::fclose(f) == 0 ? Status::OK() : Status::Io("cannot write " + path);
}

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

Result<Context> LoadContext(const std::string& data_dir, const std::string& store, bool meta_only) {
  Context ctx;
  ctx.data_dir = data_dir;
  ctx.store = store;
  MENTAT_ASSIGN_OR_RETURN(std::string meta_text, ReadFile(data_dir + "/meta.json"));
  ctx.meta = nlohmann::json::parse(meta_text, nullptr, /*allow_exceptions=*/false);
  if (ctx.meta.is_discarded() || !ctx.meta.is_object())
    return Status::Corrupt(data_dir + "/meta.json is not a JSON object");
  if (ctx.meta.value("gen_version", 0) != kGenVersion)
    return Status::InvalidArgument(data_dir + "/meta.json is from another generator version");
  ctx.scale = ctx.meta.value("scale", "");
  ctx.n_users = ctx.meta.value("n_users", int64_t{0});
  ctx.n_issues = ctx.meta.value("n_issues", int64_t{0});
  ctx.n_labels = ctx.meta.value("n_labels", int64_t{0});
  ctx.n_datoms = ctx.meta.value("n_datoms", int64_t{0});
  if (meta_only) return ctx;

  MENTAT_ASSIGN_OR_RETURN(std::string load_text, ReadFile(store + ".load.json"));
  auto load = nlohmann::json::parse(load_text, nullptr, false);
  if (load.is_discarded() || !load.is_object())
    return Status::Corrupt(store + ".load.json is not a JSON object");
  if (load.value("seed", uint64_t{0}) != ctx.meta.value("seed", uint64_t{1}) ||
      load.value("scale", "") != ctx.scale)
    return Status::InvalidArgument(store + " was loaded from another dataset; load it again");
  ctx.t_mid = load.value("t_mid_tx", Entid{0});
  ctx.t_since = load.value("t_since_tx", Entid{0});
  ctx.graph = load.contains("graph");
  if (ctx.graph) ctx.n_datoms += ctx.meta["graph"].value("n_datoms", int64_t{0});

  std::ifstream in(store + ".issues", std::ios::binary);
  if (!in) return Status::NotFound("cannot read " + store + ".issues");
  ctx.issue_eids.resize(ctx.n_issues);
  in.read(reinterpret_cast<char*>(ctx.issue_eids.data()),
          static_cast<std::streamsize>(ctx.n_issues * sizeof(Entid)));
  if (in.gcount() != static_cast<std::streamsize>(ctx.n_issues * sizeof(Entid)))
    return Status::Corrupt(store + ".issues is short");
  return ctx;
}

std::vector<std::string> BackendNames() {
  return {"embedded", "embedded-cache", "embedded-nocounts", "sqlite-sql", "sqlite-ext", "duckdb",
          "pg",       "pg-sql"};
}

namespace {

// "<base>-without-<pass>[+<pass>...]": base and the passes (none when the name has no such
// suffix).
std::pair<std::string, std::vector<std::string>> SplitWithout(const std::string& name) {
  size_t at = name.find("-without-");
  if (at == std::string::npos) return {name, {}};
  std::vector<std::string> passes;
  std::string rest = name.substr(at + 9);
  for (size_t b = 0; b <= rest.size();) {
    size_t e = rest.find('+', b);
    if (e == std::string::npos) e = rest.size();
    passes.push_back(rest.substr(b, e - b));
    b = e + 1;
  }
  return {name.substr(0, at), passes};
}

}  // namespace

std::string BackendAvailability(const std::string& full) {
  auto [name, without] = SplitWithout(full);
  if (!without.empty() && name != "embedded" && name != "pg")
    return "only embedded and pg take -without-<pass>";
  if (name == "embedded" || name == "embedded-cache" || name == "embedded-nocounts" ||
      name == "sqlite-sql" || name == "sqlite-ext")
    return "";
  if (name == "duckdb") return DuckdbAvailability();
  if (name == "pg" || name == "pg-sql") {
    const char* pg = std::getenv("MENTAT_SCALE_PG");
    return pg && *pg ? ""
                     : "MENTAT_SCALE_PG is not set (run.sh sets it: it starts a PostgreSQL cluster "
                       "and migrates the store into it)";
  }
  return "unknown backend (embedded, embedded-cache, embedded-nocounts, sqlite-sql, sqlite-ext, "
         "duckdb, pg, pg-sql; embedded and pg also as NAME-without-PASS[+PASS...])";
}

Result<std::unique_ptr<Backend>> OpenBackend(const std::string& full, const std::string& store) {
  if (!std::filesystem::exists(store)) return Status::NotFound("no store at " + store);
  auto [name, without] = SplitWithout(full);
  if (!without.empty() && name != "embedded" && name != "pg")
    return Status::InvalidArgument("backend " + full + ": only embedded and pg take -without-");
  if (name == "embedded") return OpenEmbedded(store, false, without, full);
  if (name == "embedded-cache") return OpenEmbedded(store, true, {}, full);
  if (name == "embedded-nocounts") return OpenEmbedded(store, false, {"value_counts"}, full);
  if (name == "sqlite-sql") return OpenSqliteSql(store);
  if (name == "sqlite-ext") return OpenSqliteExt(store);
  if (name == "duckdb") return OpenDuckdb(store);
  // mentat on PostgreSQL: the same store migrated into a schema there (run.sh), named by
  // MENTAT_SCALE_PG; `store` still names the SQLite file whose context files (ids) it shares.
  if (name == "pg") {
    if (!BackendAvailability("pg").empty())
      return Status::Unsupported("pg: " + BackendAvailability("pg"));
    return OpenEmbedded(std::getenv("MENTAT_SCALE_PG"), false, without, full);
  }
  // Hand-written SQL over the same PostgreSQL schema (backend_pg_sql.cc).
  if (name == "pg-sql") {
    if (!BackendAvailability("pg-sql").empty())
      return Status::Unsupported("pg-sql: " + BackendAvailability("pg-sql"));
    return OpenPgSql(std::getenv("MENTAT_SCALE_PG"));
  }
  return Status::InvalidArgument(
      "unknown backend '" + name +
      "' (embedded, embedded-cache, embedded-nocounts, sqlite-sql, sqlite-ext, duckdb, pg, "
      "pg-sql)");
}

ScenarioCall ExplainCall(const std::string& scenario, const Context& ctx) {
  std::string_view q;
  nlohmann::json o = nlohmann::json::object();
  if (scenario == "point_lookup" || scenario == "ref_traversal" || scenario == "as_of") {
    q = scenario == "point_lookup" ? kQ1PointLookup : kQ2RefTraversal;
    o = nlohmann::json{{"inputs", {Email(0)}}};
    if (scenario == "as_of") o["asOf"] = ctx.t_mid;
  } else if (scenario == "aggregate") {
    q = kQ3Aggregate;
  } else if (scenario == "predicate_scan") {
    q = kQ4PredicateScan;
    o = {{"inputs", {4}}};
  } else if (scenario == "since") {
    q = kQSince;
    o = {{"since", ctx.t_since}};
  } else if (scenario == "input_bindings") {
    q = kQInputBindings;
    std::vector<std::string> emails;
    for (int64_t u = 0; u < std::min<int64_t>(100, ctx.n_users); ++u) emails.push_back(Email(u));
    o = {{"inputs", {emails}}};
  } else if (scenario == "pull") {
    q = kQPull;
    o = {{"inputs", {ctx.issue_eids.empty() ? 0 : ctx.issue_eids[0]}}};
  }
  return {q, o};
}

}  // namespace mentat::scale
