// mentat-test-runner: runs data-driven .test files (format: test/README.md) against a
// backend (the library or the CLI).
//
//   mentat-test-runner --backend lib FILE...
//   mentat-test-runner --backend cli --mentat build/mentat FILE...
//   mentat-test-runner --backend pg --pg CONNINFO FILE...   (the library on PostgreSQL)
#include <algorithm>
#include <cctype>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "backend.h"

namespace mentat::testing {
namespace {

struct Record {
  int line = 0;
  std::string header;
  std::string body;
  bool has_expected = false;
  std::string expected;
  std::string only;     // `onlyif ENGINE` before the header: the record runs on that engine only
  std::string pending;  // `pending ENGINE REASON`: known to fail on that engine
};

std::vector<Record> ParseFile(const std::string& text) {
  std::vector<Record> out;
  std::istringstream in(text);
  std::string line;
  int n = 0;
  Record* cur = nullptr;
  std::string only, pending;
  enum { kNone, kBody, kExpected } state = kNone;
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    bool blank = line.find_first_not_of(" \t") == std::string::npos;
    if (state == kNone) {
      if (blank || line[0] == '#') continue;
      if (line.rfind("onlyif ", 0) == 0) {
        only = line.substr(7);
        continue;
      }
      if (line.rfind("pending ", 0) == 0) {
        pending = line.substr(8);
        continue;
      }
      out.push_back(
          Record{n, line, "", false, "", std::exchange(only, ""), std::exchange(pending, "")});
      cur = &out.back();
      state = kBody;
      continue;
    }
    if (blank) {
      state = kNone;
      continue;
    }
    if (state == kBody && line == "----") {
      cur->has_expected = true;
      state = kExpected;
      continue;
    }
    std::string& dst = state == kBody ? cur->body : cur->expected;
    dst += dst.empty() ? line : "\n" + line;
  }
  return out;
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool Contains(const std::string& hay, const std::string& needle) {
  return Lower(hay).find(Lower(needle)) != std::string::npos;
}

// Structural match where the symbol `_` in `expected` matches anything. Unordered
// compares sequences as multisets.
bool Match(const edn::Value& expected, const edn::Value& actual, bool ordered);

bool MatchSeqUnordered(const edn::Vec& exp, const edn::Vec& act) {
  if (exp.size() != act.size()) return false;
  std::vector<bool> used(act.size(), false);
  for (const auto& e : exp) {
    bool found = false;
    for (size_t i = 0; i < act.size() && !found; ++i) {
      if (!used[i] && Match(e, act[i], true)) used[i] = found = true;
    }
    if (!found) return false;
  }
  return true;
}

bool Match(const edn::Value& expected, const edn::Value& actual, bool ordered) {
  if (expected.is_symbol("_")) return true;
  if ((expected.is_vector() || expected.is_list()) && (actual.is_vector() || actual.is_list())) {
    if (!ordered) return MatchSeqUnordered(expected.items(), actual.items());
    if (expected.size() != actual.size()) return false;
    for (size_t i = 0; i < expected.size(); ++i)
      if (!Match(expected.items()[i], actual.items()[i], true)) return false;
    return true;
  }
  if (expected.is_map() && actual.is_map()) {
    if (expected.size() != actual.size()) return false;
    for (const auto& [k, v] : expected.entries()) {
      const edn::Value* got = actual.get(k);
      if (!got || !Match(v, *got, true)) return false;
    }
    return true;
  }
  return expected == actual;
}

class FileRunner {
 public:
  FileRunner(Backend* b, std::string file, bool oracle = false, std::string engine = "sqlite")
      : b_(b), file_(std::move(file)), oracle_(oracle), engine_(std::move(engine)) {}

  // Returns {passed, failed}.
  std::pair<int, int> Run(const std::string& text) {
    int passed = 0, failed = 0;
    Status st = b_->Reset();
    if (!st.ok()) {
      std::cerr << file_ << ": cannot start a store: " << st.ToString() << "\n";
      return {0, 1};
    }
    for (const auto& r : ParseFile(text)) {
      if (!r.only.empty() && r.only != engine_) continue;  // another engine's assertion
      std::string why = RunRecord(r);
      // A record known to fail on this engine fails as pending; passing, it must lose the
      // mark.
      const bool is_pending = r.pending.rfind(engine_ + " ", 0) == 0 || r.pending == engine_;
      if (is_pending) {
        if (why.empty()) {
          why = "passes now on " + engine_ + ": remove its 'pending " + r.pending + "' line";
        } else {
          ++pending_;
          continue;
        }
      }
      if (why.empty()) {
        ++passed;
      } else {
        ++failed;
        std::cerr << file_ << ":" << r.line << ": FAILED: " << r.header << "\n"
                  << "  " << Subst(r.body).substr(0, 400) << "\n  " << why << "\n";
      }
    }
    return {passed, failed};
  }

 private:
  std::string Subst(const std::string& s) const {
    std::string out;
    size_t i = 0;
    while (i < s.size()) {
      size_t open = s.find("{{", i);
      if (open == std::string::npos) break;
      size_t close = s.find("}}", open);
      if (close == std::string::npos) break;
      std::string name = s.substr(open + 2, close - open - 2);
      auto it = vars_.find(name);
      out += s.substr(i, open - i);
      out += it == vars_.end() ? "{{" + name + "}}" : it->second;
      i = close + 2;
    }
    return out + s.substr(i);
  }

  // Splits a trailing JSON object off a header tail.
  static void SplitJson(const std::string& tail, std::string* text, std::string* json) {
    size_t brace = tail.find('{');
    *text = tail.substr(0, brace);
    *json = brace == std::string::npos ? "" : tail.substr(brace);
    while (!text->empty() && text->back() == ' ') text->pop_back();
  }

  std::string ExpectError(const Status& st, const std::string& text, bool ok) {
    if (ok) return "expected an error containing '" + text + "', but it succeeded";
    if (!Contains(st.message(), text))
      return "expected an error containing '" + text + "', got: " + st.ToString();
    return "";
  }

  std::string Compare(const edn::Value& actual, bool ordered, const std::string& expected_text) {
    auto expected = edn::Read(Subst(expected_text));
    if (!expected.ok()) return "bad expected EDN: " + expected.status().ToString();
    bool equal = Match(*expected, actual, ordered);
    if (equal) return "";
    return "expected: " + edn::Print(*expected) + "\n  actual:   " + edn::Print(actual);
  }

  std::string RunRecord(const Record& r) {
    std::istringstream h(r.header);
    std::string kind;
    h >> kind;
    std::string tail;
    std::getline(h, tail);
    size_t b = tail.find_first_not_of(' ');
    tail = b == std::string::npos ? "" : tail.substr(b);
    std::string body = Subst(r.body);
    tail = Subst(tail);

    if (kind == "transact") {
      bool expect_error = tail.rfind("error", 0) == 0;
      Result<edn::Value> before = b_->Datoms(":aevt");
      auto res = b_->Transact(body);
      if (expect_error) {
        std::string why =
            ExpectError(res.status(), tail.size() > 6 ? tail.substr(6) : "", res.ok());
        if (!why.empty()) return why;
        auto after = b_->Datoms(":aevt");
        if (before.ok() && after.ok() && !(*before == *after))
          return "a failed transaction changed the store";
        return "";
      }
      if (!res.ok()) return "transact failed: " + res.status().ToString();
      const edn::Value* tempids = res->get_keyword("tempids");
      if (tempids)
        for (const auto& [k, v] : tempids->entries()) vars_[k.str()] = edn::Print(v);
      if (const edn::Value* tx = res->get_keyword("tx-id")) {
        if (vars_.count("tx")) vars_["tx-1"] = vars_["tx"];
        vars_["tx"] = edn::Print(*tx);
      }
      if (!r.has_expected) return "";
      auto expected = edn::Read(Subst(r.expected));
      if (!expected.ok() || !expected->is_map()) return "expected must be an EDN map";
      for (const auto& [k, v] : expected->entries()) {
        const edn::Value* got = res->get(k);
        if (!got) return "the report has no " + edn::Print(k);
        bool eq = Match(v, *got, !k.is_keyword("tx-data"));
        if (!eq)
          return "report " + edn::Print(k) + ": expected " + edn::Print(v) +
                 "\n  actual: " + edn::Print(*got);
      }
      return "";
    }
    if (kind == "query") {
      bool ordered = false;
      if (tail.rfind("ordered", 0) == 0) {
        ordered = true;
        tail = tail.size() > 8 ? tail.substr(8) : "";
      }
      bool expect_error = tail.rfind("error", 0) == 0;
      std::string text, json;
      SplitJson(expect_error ? (tail.size() > 6 ? tail.substr(6) : "") : tail, &text, &json);
      json = Subst(json);
      auto res = b_->Query(body, json);
      if (expect_error) return ExpectError(res.status(), text, res.ok());
      if (!res.ok()) return "query failed: " + res.status().ToString();
      if (!r.has_expected) return "a query record needs ---- and an expected result";
      std::string diff = Compare(*res, ordered, r.expected);
      if (!diff.empty() || !oracle_ || json.find("\"planner\"") != std::string::npos) return diff;
      // The differential oracle: the same query with the planner off (no optimizer pass,
      // the written clause order) must give the same answer.
      std::string off = json.empty() || json.find('{') == std::string::npos
                            ? std::string("{\"planner\": false}")
                            : json.substr(0, json.find('{') + 1) + "\"planner\": false, " +
                                  json.substr(json.find('{') + 1);
      if (json.find_first_not_of(" {}", json.find('{')) == std::string::npos)
        off = "{\"planner\": false}";
      auto plain = b_->Query(body, off);
      if (!plain.ok()) return "with the planner off the query failed: " + plain.status().ToString();
      diff = Compare(*plain, ordered, r.expected);
      return diff.empty() ? "" : "with the planner off: " + diff;
    }
    if (kind == "pull") {
      edn::Reader reader(tail);
      auto eid = reader.Next();
      if (!eid.ok() || !eid->has_value()) return "pull needs an entity: pull EID [error TEXT]";
      std::string eid_text = Subst(tail.substr(0, reader.offset()));
      std::string rest = tail.substr(reader.offset());
      size_t rb = rest.find_first_not_of(' ');
      rest = rb == std::string::npos ? "" : rest.substr(rb);
      auto res = b_->Pull(body, eid_text);
      if (rest.rfind("error", 0) == 0)
        return ExpectError(res.status(), rest.size() > 6 ? rest.substr(6) : "", res.ok());
      if (!res.ok()) return "pull failed: " + res.status().ToString();
      return Compare(*res, true, r.expected);
    }
    if (kind == "entity") {
      // entity EID [error TEXT]: the touched entity map.
      edn::Reader reader(tail);
      auto eid = reader.Next();
      if (!eid.ok() || !eid->has_value()) return "entity needs an entity: entity EID [error TEXT]";
      std::string eid_text = tail.substr(0, reader.offset());
      std::string rest = tail.substr(reader.offset());
      size_t rb = rest.find_first_not_of(' ');
      rest = rb == std::string::npos ? "" : rest.substr(rb);
      auto res = b_->Entity(eid_text);
      if (rest.rfind("error", 0) == 0)
        return ExpectError(res.status(), rest.size() > 6 ? rest.substr(6) : "", res.ok());
      if (!res.ok()) return "entity failed: " + res.status().ToString();
      if (!r.has_expected) return "an entity record needs ---- and an expected result";
      return Compare(*res, true, r.expected);
    }
    if (kind == "datoms") {
      bool expect_error = tail.rfind("error", 0) == 0;
      auto res = b_->Datoms(body);
      if (expect_error)
        return ExpectError(res.status(), tail.size() > 6 ? tail.substr(6) : "", res.ok());
      if (!res.ok()) return "datoms failed: " + res.status().ToString();
      return Compare(*res, true, r.expected);
    }
    if (kind == "explain-contains") {
      std::string text, json;
      SplitJson(tail, &text, &json);
      auto res = b_->Explain(body, Subst(json));
      if (!res.ok()) return "explain failed: " + res.status().ToString();
      if (!Contains(*res, text)) return "explain does not contain '" + text + "':\n" + *res;
      return "";
    }
    return "unknown record kind '" + kind + "'";
  }

  Backend* b_;
  std::string file_;
  bool oracle_ = false;  // also run each query with the planner off (the library backend)
  std::string engine_;   // "sqlite" or "postgresql": selects `onlyif` records
 public:
  int pending_ = 0;  // records that failed as their `pending` line says they do
 private:
  std::map<std::string, std::string> vars_;
};

}  // namespace
}  // namespace mentat::testing

int main(int argc, char** argv) {
  std::string backend = "lib", mentat_bin, pg;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--backend" && i + 1 < argc)
      backend = argv[++i];
    else if (a == "--mentat" && i + 1 < argc)
      mentat_bin = argv[++i];
    else if (a == "--pg" && i + 1 < argc)
      pg = argv[++i];
    else
      files.push_back(a);
  }
  std::unique_ptr<mentat::testing::Backend> b;
  if (backend == "lib")
    b = mentat::testing::MakeLibraryBackend();
  else if (backend == "cli")
    b = mentat::testing::MakeCliBackend(mentat_bin);
#ifndef MENTAT_RUNNER_NO_PG
  else if (backend == "pg")
    b = mentat::testing::MakePgBackend(pg);
#endif
  if (!b) {
    std::cerr << "unknown backend '" << backend << "'\n";
    return 2;
  }
  int passed = 0, failed = 0, pending = 0;
  for (const auto& f : files) {
    std::ifstream in(f);
    if (!in) {
      std::cerr << "cannot read " << f << "\n";
      ++failed;
      continue;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    mentat::testing::FileRunner runner(b.get(), f, backend == "lib" || backend == "pg",
                                       backend == "pg" ? "postgresql" : "sqlite");
    auto [p, fl] = runner.Run(ss.str());
    passed += p;
    failed += fl;
    pending += runner.pending_;
  }
  std::cout << backend << ": " << passed << " passed, " << failed << " failed";
  if (pending) std::cout << ", " << pending << " pending (known to fail on this engine)";
  std::cout << std::endl;
  return failed == 0 ? 0 : 1;
}
