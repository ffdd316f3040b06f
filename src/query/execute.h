// Pass 5/6: running a Compiled query (execute.cc, execute_rules.cc) and turning its rows
// into a QueryResult (project.cc).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "query/analyze.h"
#include "query/relation.h"

namespace mentat::query {

// Checks interrupt() and the deadline; installed as SQLite's progress handler while a
// statement runs.
class Interrupter {
 public:
  Interrupter(const ExecContext& ctx, std::optional<int64_t> timeout_ms);
  ~Interrupter();
  Status Check() const;
  bool Fired() const;
  // Converts an SQLite error caused by the progress handler into the right status.
  Status Translate(Status st) const;

 private:
  const ExecContext& ctx_;
  std::optional<std::chrono::steady_clock::time_point> deadline_;
  int64_t timeout_ms_ = 0;
};

class Execution {
 public:
  Execution(const ExecContext& ctx, const ParsedQuery& q, const Compiled& c,
            std::vector<const edn::Value*> inputs, const Interrupter& intr)
      : ctx_(ctx), q_(q), c_(c), inputs_(std::move(inputs)), intr_(intr) {}

  // Encodes inputs into relations and runtime types.
  Status Prepare();
  // Evaluates recursive rules to their fixpoint.
  Status EvalRules();
  Result<QueryResult> Run();

  // Binds the parameters of `unit` into `st`; `rels` gives the relation of each RelSpec.
  Status Bind(storage::Statement& st, const Unit& unit, const std::vector<const Relation*>& rels);

 private:
  const edn::Value* SlotValue(int slot) const;
  VT SlotType(int slot) const;
  // Encodes an input value for a place of type `t`; nullopt when an ident or lookup ref
  // resolves to nothing.
  Result<std::optional<schema::DbVal>> Encode(const edn::Value& v, VT t, const std::string& src,
                                              const std::string& what);
  Result<std::optional<Entid>> ResolveLookupRef(const edn::Value& ref, const std::string& src);
  const DbView& View(const std::string& src) const;
  edn::Value Decode(const storage::Statement& st, const OutCol& oc) const;
  Result<QueryResult> Project(std::vector<std::vector<edn::Value>> rows);
  Status Pull(std::vector<std::vector<edn::Value>>* rows);

  const ExecContext& ctx_;
  const ParsedQuery& q_;
  const Compiled& c_;
  std::vector<const edn::Value*> inputs_;
  const Interrupter& intr_;
  std::vector<VT> slot_types_;
  std::vector<std::unique_ptr<Relation>> input_rels_;  // per RelSpec (inputs, constants)
  std::vector<std::unique_ptr<Relation>> rule_full_;   // per RuleRel
  std::vector<const Relation*> main_rels_;
};

// C++ aggregation (project.cc).
Result<edn::Value> Aggregate(const std::string& fn, int64_t n, std::vector<edn::Value> values,
                             const edn::Value& form);

}  // namespace mentat::query
