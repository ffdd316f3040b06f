// The deterministic dataset generator (SCALE_SUITE.md "Dataset").
//
// Output, one EDN transaction per line so loaders can stream the files:
//   schema.edn   the schema, one transaction
//   base.edn     users then labels, up to 2,000 entities per transaction
//   issues.edn   500 issues per transaction; issues by tempid "i<k>", refs by lookup ref
//   history.edn  one [:db/add @@<k> :issue/state <s>] per transaction; a loader replaces
//                @@<k> with the entity id it recorded for tempid "i<k>"
//   graph.edn    the graph for recursion (SCALE_SUITE.md "A graph for recursion"), an extra
//                load phase a run can leave out (`mentat-scale load-graph`): its two
//                attributes, then [:db/add @@<k> :issue/blocks @@<j>] and :issue/parent
//                datoms, the graph of 500 issues per transaction
//   meta.json    the sizes, the named points as tx ordinals and the truth the checks use
// Transaction ordinals count every transaction of the four base files in order from 0 (the
// schema); graph.edn comes after them. Every value of the base dataset comes from one Rng
// stream in a fixed order, and the graph from a second one, so a seed and a scale give the
// same bytes on every machine and the four base files are those of generator version 1.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "commands.h"
#include "rng.h"

namespace mentat::scale {
namespace {

struct ScaleSize {
  const char* name;
  int64_t users, issues, labels;
};
constexpr ScaleSize kScales[] = {{"xs", 200, 13000, 50},
                                 {"s", 1600, 130000, 200},
                                 {"m", 16000, 1300000, 500},
                                 {"l", 160000, 13000000, 1000}};

constexpr const char* kSchema =
    "[{:db/ident :user/email       :db/valueType :db.type/string  :db/cardinality "
    ":db.cardinality/one  :db/unique :db.unique/identity :db/index true} "
    "{:db/ident :user/name        :db/valueType :db.type/string  :db/cardinality "
    ":db.cardinality/one} "
    "{:db/ident :label/name       :db/valueType :db.type/string  :db/cardinality "
    ":db.cardinality/one  :db/unique :db.unique/identity :db/index true} "
    "{:db/ident :issue/title      :db/valueType :db.type/string  :db/cardinality "
    ":db.cardinality/one} "
    "{:db/ident :issue/state      :db/valueType :db.type/keyword :db/cardinality "
    ":db.cardinality/one  :db/index true} "
    "{:db/ident :issue/priority   :db/valueType :db.type/long    :db/cardinality "
    ":db.cardinality/one  :db/index true} "
    "{:db/ident :issue/assignee   :db/valueType :db.type/ref     :db/cardinality "
    ":db.cardinality/one  :db/index true} "
    "{:db/ident :issue/reporter   :db/valueType :db.type/ref     :db/cardinality "
    ":db.cardinality/one  :db/index true} "
    "{:db/ident :issue/label      :db/valueType :db.type/ref     :db/cardinality "
    ":db.cardinality/many :db/index true} "
    "{:db/ident :issue/created-at :db/valueType :db.type/instant :db/cardinality "
    ":db.cardinality/one}]";
// Datoms of the schema transaction: ident, valueType and cardinality of 10 attributes,
// 2 :db/unique, 7 :db/index, and its :db/txInstant.
constexpr int64_t kSchemaDatoms = 30 + 2 + 7 + 1;
// graph.edn's first transaction: the graph's attributes (ident, valueType, cardinality and
// :db/index of each, and its :db/txInstant).
constexpr const char* kGraphSchema =
    "[{:db/ident :issue/blocks :db/valueType :db.type/ref :db/cardinality "
    ":db.cardinality/many :db/index true} "
    "{:db/ident :issue/parent :db/valueType :db.type/ref :db/cardinality "
    ":db.cardinality/one :db/index true}]";
constexpr int64_t kGraphSchemaDatoms = 4 * 2 + 1;

constexpr const char* kKinds[] = {"crash", "ui glitch", "perf regression", "typo",
                                  "feature request"};
constexpr int64_t kBaseMicros = 1735689600LL * 1000000;  // 2025-01-01T00:00Z
constexpr int64_t kIssuesPerTx = 500;
constexpr int64_t kEntitiesPerBaseTx = 2000;

// The graph (SCALE_SUITE.md "A graph for recursion"), from its own Rng stream so the base
// dataset's values are those of generator version 1:
// - :issue/blocks: issue k blocks 0..2 distinct issues among the kBlocksWindow before it
//   (a DAG: edges go to lower indexes);
// - :issue/parent: the last kChainLength issues form one chain (each the parent of the
//   next; the first has no parent); of the others, one in kRootOneIn is a root and the
//   rest have a parent drawn uniformly among the earlier non-chain issues, moved up the
//   parent's ancestors until the child's depth is at most kMaxDepth.
constexpr uint64_t kGraphStream = 0x6772617068ULL;  // "graph"
constexpr int64_t kBlocksWindow = 50;
constexpr int64_t kChainLength = 3000;
constexpr int64_t kMaxDepth = 12;
constexpr uint64_t kRootOneIn = 5;

std::string Title(int64_t k, uint8_t kind) {
  return "Issue " + std::to_string(k) + ": " + kKinds[kind];
}

class LineFile {
 public:
  explicit LineFile(const std::string& path) : f_(std::fopen(path.c_str(), "w")) {}
  ~LineFile() {
    if (f_) std::fclose(f_);
  }
  bool ok() const { return f_ != nullptr; }
  void Write(const std::string& line) {
    std::fwrite(line.data(), 1, line.size(), f_);
    std::fputc('\n', f_);
    ++lines_;
  }
  Status Close(const std::string& path) {
    bool bad = std::ferror(f_) != 0;
    bad |= std::fclose(f_) != 0;
    f_ = nullptr;
    return bad ? Status::Io("cannot write " + path) : Status::OK();
  }
  int64_t lines() const { return lines_; }

 private:
  FILE* f_;
  int64_t lines_ = 0;
};

nlohmann::json StateCounts(const std::vector<uint8_t>& state) {
  std::vector<int64_t> n(kStates.size(), 0);
  for (uint8_t s : state) ++n[s];
  nlohmann::json j = nlohmann::json::object();
  for (size_t i = 0; i < kStates.size(); ++i) j[kStates[i]] = n[i];
  return j;
}

int64_t OpenPriorityAtLeast(const std::vector<uint8_t>& state, const std::vector<uint8_t>& priority,
                            int min) {
  int64_t n = 0;
  for (size_t k = 0; k < state.size(); ++k) n += state[k] == 0 && priority[k] >= min;
  return n;
}

// Issues reachable from `k` along `edges` (k itself only through a cycle; the graphs here
// have none).
int64_t Reachable(const std::vector<std::vector<int32_t>>& edges, int64_t k) {
  std::vector<char> seen(edges.size(), 0);
  std::vector<int32_t> stack(edges[k].begin(), edges[k].end());
  int64_t n = 0;
  while (!stack.empty()) {
    int32_t j = stack.back();
    stack.pop_back();
    if (seen[j]) continue;
    seen[j] = 1;
    ++n;
    stack.insert(stack.end(), edges[j].begin(), edges[j].end());
  }
  return n;
}

// What the variants' checks know about the graph without a database (variants.cc reads it):
// the chain, and for the probe issues (three non-chain issues and a root with a subtree of
// a few hundred issues): the number of issues they block transitively, that block them
// transitively, their ancestors (their depth) and descendants.
nlohmann::json GraphTruth(const std::vector<std::vector<int32_t>>& blocks,
                          const std::vector<int32_t>& parent, const std::vector<int32_t>& depth,
                          int64_t chain_first, int64_t n_blocks, int64_t n_parents) {
  const int64_t n = static_cast<int64_t>(blocks.size());
  std::vector<std::vector<int32_t>> blocked_by(n), children(n);
  for (int64_t k = 0; k < n; ++k) {
    for (int32_t j : blocks[k]) blocked_by[j].push_back(static_cast<int32_t>(k));
    if (parent[k] >= 0) children[parent[k]].push_back(static_cast<int32_t>(k));
  }
  // Subtree sizes, children before parents (a parent has a lower index than its children).
  std::vector<int64_t> subtree(n, 1);
  for (int64_t k = n - 1; k >= 0; --k)
    if (parent[k] >= 0) subtree[parent[k]] += subtree[k];
  std::vector<int64_t> probes = {chain_first / 4, chain_first / 2, chain_first - 1};
  int64_t root = -1;
  for (int64_t k = 0; k < chain_first && root < 0; ++k)
    if (parent[k] < 0 && subtree[k] >= 100 && subtree[k] <= 1000) root = k;
  if (root >= 0) probes.push_back(root);
  nlohmann::json p = nlohmann::json::object();
  for (int64_t k : probes) {
    p[std::to_string(k)] = {{"blocks_reach", Reachable(blocks, k)},
                            {"blocked_by_reach", Reachable(blocked_by, k)},
                            {"ancestors", depth[k]},
                            {"descendants", subtree[k] - 1}};
  }
  int32_t max_depth = 0;
  for (int64_t k = 0; k < chain_first; ++k) max_depth = std::max(max_depth, depth[k]);
  return {{"n_blocks", n_blocks},
          {"n_parents", n_parents},
          {"chain_first", chain_first},
          {"chain_length", n - chain_first},
          {"max_tree_depth", max_depth},
          {"descendants_root", root},
          {"probes", probes},
          {"by_probe", p}};
}

}  // namespace

Status Generate(const std::string& scale, const std::string& out_dir, uint64_t seed) {
  const ScaleSize* size = nullptr;
  for (const auto& s : kScales)
    if (scale == s.name) size = &s;
  if (!size) return Status::InvalidArgument("unknown scale '" + scale + "' (xs s m l)");
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) return Status::Io("cannot create " + out_dir + ": " + ec.message());
  const int64_t n_users = size->users, n_issues = size->issues, n_labels = size->labels;
  Rng rng(seed);

  // schema.edn
  {
    LineFile f(out_dir + "/schema.edn");
    if (!f.ok()) return Status::Io("cannot write " + out_dir + "/schema.edn");
    f.Write(kSchema);
    MENTAT_RETURN_IF_ERROR(f.Close(out_dir + "/schema.edn"));
  }

  // base.edn: users, then labels.
  int64_t n_base_tx = 0;
  {
    LineFile f(out_dir + "/base.edn");
    if (!f.ok()) return Status::Io("cannot write " + out_dir + "/base.edn");
    std::string tx = "[";
    int64_t in_tx = 0;
    for (int64_t k = 0; k < n_users + n_labels; ++k) {
      if (k < n_users) {
        tx += "{:user/email \"" + Email(k) + "\" :user/name \"" + UserName(k) + "\"}";
      } else {
        tx += "{:label/name \"" + LabelName(k - n_users) + "\"}";
      }
      if (++in_tx == kEntitiesPerBaseTx || k == n_users + n_labels - 1) {
        f.Write(tx + "]");
        tx = "[";
        in_tx = 0;
      } else {
        tx += ' ';
      }
    }
    n_base_tx = f.lines();
    MENTAT_RETURN_IF_ERROR(f.Close(out_dir + "/base.edn"));
  }

  // issues.edn
  std::vector<uint8_t> state(n_issues), priority(n_issues);
  std::vector<uint8_t> kind(n_issues);
  std::vector<int32_t> assignee(n_issues);
  int64_t n_label_refs = 0, n_issue_tx = 0;
  // The graph: blocks[k] (targets), parent[k] (-1: none), depth[k] (edges to its root).
  Rng graph_rng(seed ^ kGraphStream);
  const int64_t chain_len = std::min<int64_t>(kChainLength, n_issues / 2);
  const int64_t chain_first = n_issues - chain_len;
  std::vector<std::vector<int32_t>> blocks(n_issues);
  std::vector<int32_t> parent(n_issues, -1), depth(n_issues, 0);
  int64_t n_blocks = 0, n_parents = 0;
  // graph.edn: the graph's datoms of 500 issues per transaction, issues named "@@<k>",
  // which the loader resolves (load.cc).
  LineFile graph_file(out_dir + "/graph.edn");
  if (!graph_file.ok()) return Status::Io("cannot write " + out_dir + "/graph.edn");
  graph_file.Write(kGraphSchema);
  const std::vector<int64_t> fixed_issues = {0, n_issues / 2, n_issues - 1};
  {
    LineFile f(out_dir + "/issues.edn");
    if (!f.ok()) return Status::Io("cannot write " + out_dir + "/issues.edn");
    std::string tx = "[", graph_ops;
    for (int64_t k = 0; k < n_issues; ++k) {
      // The graph of issue k (from graph_rng only, so the base values stay those of
      // version 1).
      {
        const int64_t lo = std::max<int64_t>(0, k - kBlocksWindow);
        const int64_t n_out = std::min<int64_t>(graph_rng.Between(0, 2), k - lo);
        while (static_cast<int64_t>(blocks[k].size()) < n_out) {
          int32_t j = static_cast<int32_t>(lo + graph_rng.Below(k - lo));
          if (std::find(blocks[k].begin(), blocks[k].end(), j) == blocks[k].end())
            blocks[k].push_back(j);
        }
        std::sort(blocks[k].begin(), blocks[k].end());
        if (k > chain_first) {
          parent[k] = static_cast<int32_t>(k - 1);
        } else if (k > 0 && k < chain_first && graph_rng.Below(kRootOneIn) != 0) {
          int32_t p = static_cast<int32_t>(graph_rng.Below(k));
          while (depth[p] >= kMaxDepth) p = parent[p];
          parent[k] = p;
        }
        if (parent[k] >= 0) depth[k] = depth[parent[k]] + 1;
        const std::string self = "[:db/add @@" + std::to_string(k) + " ";
        for (int32_t j : blocks[k])
          graph_ops += " " + self + ":issue/blocks @@" + std::to_string(j) + "]";
        if (parent[k] >= 0)
          graph_ops += " " + self + ":issue/parent @@" + std::to_string(parent[k]) + "]";
        n_blocks += static_cast<int64_t>(blocks[k].size());
        n_parents += parent[k] >= 0;
      }
      kind[k] = static_cast<uint8_t>(rng.Below(5));
      state[k] = static_cast<uint8_t>(rng.Below(kStates.size()));
      priority[k] = static_cast<uint8_t>(rng.Between(1, 5));
      assignee[k] = static_cast<int32_t>(rng.Below(n_users));
      int64_t reporter = static_cast<int64_t>(rng.Below(n_users));
      int64_t n_lab = rng.Between(0, std::min<int64_t>(3, n_labels));
      std::vector<int64_t> labels;
      while (static_cast<int64_t>(labels.size()) < n_lab) {
        int64_t l = static_cast<int64_t>(rng.Below(n_labels));
        bool dup = false;
        for (int64_t x : labels) dup |= x == l;
        if (!dup) labels.push_back(l);
      }
      int64_t minutes = rng.Between(0, 525600);
      tx += "{:db/id \"i" + std::to_string(k) + "\" :issue/title \"" + Title(k, kind[k]) +
            "\" :issue/state " + kStates[state[k]] + " :issue/priority " +
            std::to_string(priority[k]) + " :issue/assignee [:user/email \"" + Email(assignee[k]) +
            "\"] :issue/reporter [:user/email \"" + Email(reporter) +
            "\"] :issue/created-at #inst \"" +
            edn::FormatInstant(kBaseMicros + minutes * 60 * 1000000) + "\"";
      if (!labels.empty()) {
        tx += " :issue/label [";
        for (size_t j = 0; j < labels.size(); ++j)
          tx += std::string(j ? " " : "") + "[:label/name \"" + LabelName(labels[j]) + "\"]";
        tx += "]";
      }
      tx += "}";
      n_label_refs += n_lab;
      if ((k + 1) % kIssuesPerTx == 0 || k == n_issues - 1) {
        f.Write(tx + "]");
        tx = "[";
        if (!graph_ops.empty()) graph_file.Write("[" + graph_ops.substr(1) + "]");
        graph_ops.clear();
      } else {
        tx += ' ';
      }
    }
    n_issue_tx = f.lines();
    MENTAT_RETURN_IF_ERROR(f.Close(out_dir + "/issues.edn"));
  }
  const int64_t n_graph_tx = graph_file.lines();
  MENTAT_RETURN_IF_ERROR(graph_file.Close(out_dir + "/graph.edn"));
  // The graph phase's datoms: its schema, one :db/txInstant per later transaction, the links.
  const int64_t n_graph_datoms = kGraphSchemaDatoms + (n_graph_tx - 1) + n_blocks + n_parents;
  const std::vector<uint8_t> state_before = state;

  // history.edn: 5% of the issues, distinct, in random order (a partial Fisher-Yates
  // shuffle), each to a different state.
  const int64_t n_hist = n_issues * 5 / 100;
  const int64_t n_final_tenth = n_hist / 10;
  std::vector<int64_t> changed;  // issue indexes in history order
  {
    LineFile f(out_dir + "/history.edn");
    if (!f.ok()) return Status::Io("cannot write " + out_dir + "/history.edn");
    std::vector<int32_t> order(n_issues);
    for (int64_t k = 0; k < n_issues; ++k) order[k] = static_cast<int32_t>(k);
    for (int64_t h = 0; h < n_hist; ++h) {
      int64_t j = h + static_cast<int64_t>(rng.Below(n_issues - h));
      std::swap(order[h], order[j]);
      int64_t k = order[h];
      uint8_t r = static_cast<uint8_t>(rng.Below(kStates.size() - 1));
      state[k] = r >= state[k] ? r + 1 : r;
      changed.push_back(k);
      f.Write("[[:db/add @@" + std::to_string(k) + " :issue/state " + kStates[state[k]] + "]]");
    }
    MENTAT_RETURN_IF_ERROR(f.Close(out_dir + "/history.edn"));
  }

  // The truth.
  const int64_t n_tx = 1 + n_base_tx + n_issue_tx + n_hist;
  const int64_t t_mid = n_base_tx + n_issue_tx;  // the last issue transaction
  const int64_t t_since = t_mid + (n_hist - n_final_tenth);
  std::set<int64_t> since_issues(changed.end() - n_final_tenth, changed.end());
  const std::vector<int64_t> probe_users = {0, n_users / 2, n_users - 1};
  nlohmann::json assigned_before = nlohmann::json::object(),
                 assigned_after = nlohmann::json::object();
  for (int64_t u : probe_users) {
    assigned_before[std::to_string(u)] = nlohmann::json::array();
    assigned_after[std::to_string(u)] = nlohmann::json::array();
  }
  for (int64_t k = 0; k < n_issues; ++k) {
    for (int64_t u : probe_users) {
      if (assignee[k] != u) continue;
      assigned_before[std::to_string(u)].push_back({k, kStates[state_before[k]]});
      assigned_after[std::to_string(u)].push_back({k, kStates[state[k]]});
    }
  }
  // Probe issues: three fixed ones and the first (by index) whose state changed.
  std::vector<int64_t> probe_issues = fixed_issues;
  {
    std::set<int64_t> sorted_changed(changed.begin(), changed.end());
    for (int64_t k : sorted_changed) {
      if (std::find(probe_issues.begin(), probe_issues.end(), k) == probe_issues.end()) {
        probe_issues.push_back(k);
        break;
      }
    }
  }
  nlohmann::json probes = nlohmann::json::object();
  for (int64_t k : probe_issues) {
    probes[std::to_string(k)] = {{"title", Title(k, kind[k])},
                                 {"state", kStates[state[k]]},
                                 {"state_before", kStates[state_before[k]]},
                                 {"priority", priority[k]}};
  }
  const int64_t n_datoms = kSchemaDatoms + 2 * n_users + n_labels + n_base_tx + 6 * n_issues +
                           n_label_refs + n_issue_tx + n_hist;
  nlohmann::json meta = {
      {"gen_version", kGenVersion},
      {"scale", scale},
      {"seed", seed},
      {"n_users", n_users},
      {"n_issues", n_issues},
      {"n_labels", n_labels},
      {"n_label_refs", n_label_refs},
      {"n_hist", n_hist},
      {"n_tx", n_tx},
      {"n_datoms", n_datoms},
      {"files", {"schema.edn", "base.edn", "issues.edn", "history.edn"}},
      {"tx_counts", {1, n_base_tx, n_issue_tx, n_hist}},
      {"graph",
       {{"file", "graph.edn"},
        {"n_tx", n_graph_tx},
        {"n_datoms", n_graph_datoms},
        {"n_blocks", n_blocks},
        {"n_parents", n_parents}}},
      {"t_mid", t_mid},
      {"t_since", t_since},
      {"truth",
       {{"states_before", StateCounts(state_before)},
        {"states_after", StateCounts(state)},
        {"open_priority_ge_4_before", OpenPriorityAtLeast(state_before, priority, 4)},
        {"open_priority_ge_4", OpenPriorityAtLeast(state, priority, 4)},
        {"point_lookup_users", {0, n_users / 2, n_users - 1}},
        {"input_binding_users", {1, 2, n_users - 1}},
        {"probe_users", probe_users},
        {"assigned_before", assigned_before},
        {"assigned_after", assigned_after},
        {"probe_issues", probes},
        {"since_distinct_issues", static_cast<int64_t>(since_issues.size())},
        {"graph", GraphTruth(blocks, parent, depth, chain_first, n_blocks, n_parents)}}}};
  std::ofstream m(out_dir + "/meta.json");
  m << meta.dump(1) << "\n";
  if (!m) return Status::Io("cannot write " + out_dir + "/meta.json");
  std::fprintf(stderr,
               "gen: scale=%s users=%lld issues=%lld labels=%lld history=%lld tx=%lld "
               "datoms=%lld -> %s\n",
               scale.c_str(), static_cast<long long>(n_users), static_cast<long long>(n_issues),
               static_cast<long long>(n_labels), static_cast<long long>(n_hist),
               static_cast<long long>(n_tx), static_cast<long long>(n_datoms), out_dir.c_str());
  return Status::OK();
}

}  // namespace mentat::scale
