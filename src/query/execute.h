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
#include "storage/deadline.h"

namespace mentat::query {

// Checks interrupt(), the deadline and the caller's stop check (ExecContext::stop) while a
// query runs: from SQLite's progress handler on mentat's own connections, and from the
// engine's loops (Check). A borrowed connection's progress handler belongs to its host
// (SQLite cannot give it back once replaced), so there the deadline is a DeadlineWatch
// that interrupts the connection, and interrupt() and the host's own interrupt reach the
// connection through sqlite3_interrupt().
class Interrupter {
 public:
  Interrupter(const ExecContext& ctx, std::optional<int64_t> timeout_ms);
  ~Interrupter();
  Status Check() const;
  // Polls the stop check: call on the query's thread only.
  bool Fired() const;
  // Converts an SQLite error caused by the progress handler into the right status.
  Status Translate(Status st) const;

 private:
  bool Interrupted() const;
  bool TimedOut() const;

  const ExecContext& ctx_;
  std::optional<std::chrono::steady_clock::time_point> deadline_;
  int64_t timeout_ms_ = 0;
  bool handler_ = false;     // our progress handler is installed
  bool pg_timeout_ = false;  // PostgreSQL: statement_timeout set for this query
  std::unique_ptr<storage::DeadlineWatch> watch_;  // the deadline on a borrowed connection
  mutable bool stopped_ = false;                   // ExecContext::stop said so (latched)
};

class Execution {
 public:
  Execution(const ExecContext& ctx, const ParsedQuery& q, const Compiled& c,
            std::vector<const edn::Value*> inputs, const Interrupter& intr)
      : ctx_(ctx), q_(q), c_(c), inputs_(std::move(inputs)), intr_(intr) {}

  // Encodes inputs into relations and runtime types.
  Status Prepare();
  // Evaluates recursive rules to their fixpoint: every stratum (`all`), or those the
  // query's statement does not read itself (Stratum::in_query).
  Status EvalRules(bool all = false);
  Result<QueryResult> Run();
  // Runs `sql` (written against the main unit's parameters) and returns its first column
  // of its first row as an integer (explain analyze's prefix counts).
  Result<int64_t> CountWithMainParams(const std::string& sql);

  // Binds the parameters of `unit` into `st`; `rels` gives the relation of each RelSpec.
  // Binds `unit`'s parameters, ?1 of the unit as ?(offset + 1) of `st`.
  // `used`, when given, replaces unit.used (the parameters the statement's text reads).
  Status Bind(storage::Statement& st, const Unit& unit, const std::vector<const Relation*>& rels,
              int offset = 0, const std::vector<bool>* used = nullptr);
  // A magic relation's seed row (demand.cc); *keep false when a value does not encode.
  Status SeedRow(const RuleRel& rr, std::vector<schema::DbVal>* row, bool* keep);
  // Stratum `st` by its one WITH RECURSIVE statement (Stratum::cte_sql).
  Status EvalCte(const Stratum& st);
  // Binds the parameters of stratum `st`'s WITH RECURSIVE statement (cte_sql), or
  // (`in_query`) those of its part of the query's statement.
  Status BindCte(storage::Statement& stmt, const Stratum& st, bool in_query);

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
  // :offset and :limit applied to decoded rows (C++ aggregates, or a per-row typed result
  // whose duplicates only show once decoded).
  Status OffsetAndLimit(std::vector<std::vector<edn::Value>>* rows) const;
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
  // The datoms of the pulled entity the statement read (Compiled::pull_elem), for Pull.
  std::vector<PulledDatom> pulled_;
  bool pulled_read_ = false;
};

// C++ aggregation (project.cc).
Result<edn::Value> Aggregate(const std::string& fn, int64_t n, std::vector<edn::Value> values,
                             const edn::Value& form);

}  // namespace mentat::query
