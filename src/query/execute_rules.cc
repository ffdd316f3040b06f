// Semi-naive bottom-up evaluation of recursive rules, stratum by stratum.
//
// Each round runs every clause of the stratum once per occurrence of a relation of the
// same stratum, with that occurrence reading only the rows derived in the previous
// round (the delta) and the others reading everything derived so far. New rows (not yet
// in the relation) form the next delta; evaluation stops when a round derives nothing.
// Relations only grow and are finite, so this terminates. A stratum the recursive_cte
// pass made one WITH RECURSIVE statement (compile.cc) runs that statement instead: SQLite
// evaluates it the same way, a row of the queue at a time against each recursive SELECT.
// One the rules_in_query pass put in the query's statement is evaluated there.
#include "query/execute.h"

namespace mentat::query {

using schema::DbVal;

Status Execution::SeedRow(const RuleRel& rr, std::vector<DbVal>* row, bool* keep) {
  row->assign(rr.arity, DbVal());
  *keep = true;
  for (int j = 0; j < rr.arity && *keep; ++j) {
    const SeedVal& sv = rr.seed[j];
    const edn::Value* v = sv.constant ? &*sv.constant : SlotValue(sv.slot);
    if (!v) return Status::InvalidArgument("missing input for a rule argument");
    VT t = IsStatic(rr.types[j]) ? rr.types[j] : VT::kAny;
    MENTAT_ASSIGN_OR_RETURN(auto enc, Encode(*v, t, rr.source, "rule argument"));
    if (enc) {
      (*row)[j] = std::move(*enc);
    } else {
      *keep = false;
    }
  }
  return Status::OK();
}

Status Execution::BindCte(storage::Statement& stmt, const Stratum& st, bool in_query) {
  const int offset = in_query ? st.query_offset : 0;
  for (size_t i = 0; i < st.units.size(); ++i)
    MENTAT_RETURN_IF_ERROR(Bind(stmt, c_.rule_units[st.units[i]].unit, main_rels_,
                                offset + st.unit_offsets[i],
                                in_query ? &st.query_used[i] : nullptr));
  for (const auto& [r, first] : st.seeds) {
    const RuleRel& rr = c_.rule_rels[r];
    std::vector<DbVal> row;
    bool keep = false;
    MENTAT_RETURN_IF_ERROR(SeedRow(rr, &row, &keep));
    for (int j = 0; j < rr.arity; ++j) {
      if (keep) {
        schema::Bind(stmt, offset + first + j, row[j]);
      } else {
        stmt.BindNull(offset + first + j);
      }
    }
    stmt.BindInt(offset + first + rr.arity, keep ? 1 : 0);
  }
  return Status::OK();
}

Status Execution::EvalCte(const Stratum& st) {
  MENTAT_ASSIGN_OR_RETURN(auto stmt, ctx_.conn->Cached(st.cte_sql));
  MENTAT_RETURN_IF_ERROR(BindCte(*stmt, st, false));
  std::vector<DbVal> row;
  size_t n = 0;
  for (;;) {
    auto step = stmt->Step();
    if (!step.ok()) return intr_.Translate(step.status());
    if (!*step) break;
    int r = static_cast<int>(stmt->ColumnInt(0));
    if (r < 0 || r >= static_cast<int>(rule_full_.size()))
      return Status::Internal("recursive statement: no rule relation " + std::to_string(r));
    row.resize(c_.rule_rels[r].arity);
    for (size_t k = 0; k < row.size(); ++k) row[k] = schema::Column(*stmt, static_cast<int>(k) + 1);
    rule_full_[r]->Insert(row.data());
    if ((++n & 4095) == 0) MENTAT_RETURN_IF_ERROR(intr_.Check());
  }
  return Status::OK();
}

Status Execution::EvalRules(bool all) {
  for (const Stratum& st : c_.strata) {
    if (st.in_query && !all) continue;  // read by the query's statement (Run)
    if (!st.cte_sql.empty()) {
      MENTAT_RETURN_IF_ERROR(intr_.Check());
      MENTAT_RETURN_IF_ERROR(EvalCte(st));
      continue;
    }
    std::set<int> mine(st.rule_rels.begin(), st.rule_rels.end());
    std::map<int, std::unique_ptr<Relation>> delta;
    for (int r : st.rule_rels) delta[r] = std::make_unique<Relation>(c_.rule_rels[r].arity);
    bool first = true;
    for (;;) {
      MENTAT_RETURN_IF_ERROR(intr_.Check());
      std::map<int, std::unique_ptr<Relation>> fresh;
      for (int r : st.rule_rels) fresh[r] = std::make_unique<Relation>(c_.rule_rels[r].arity);
      for (int u : st.units) {
        const RuleClauseUnit& cu = c_.rule_units[u];
        std::vector<int> occs;
        for (int rel : cu.rels)
          if (mine.count(c_.rels[rel].rule_rel)) occs.push_back(rel);
        // The first round runs every clause against empty relations of this stratum (only
        // clauses without recursive occurrences produce rows); later rounds run each
        // recursive occurrence against the delta.
        std::vector<int> runs;
        if (first) {
          runs.push_back(-1);
        } else {
          for (int rel : occs)
            if (!delta[c_.rels[rel].rule_rel]->empty()) runs.push_back(rel);
        }
        for (int delta_rel : runs) {
          std::vector<const Relation*> rels = main_rels_;
          for (int rel : occs) {
            int rr = c_.rels[rel].rule_rel;
            rels[rel] = rel == delta_rel ? delta[rr].get() : rule_full_[rr].get();
          }
          MENTAT_ASSIGN_OR_RETURN(auto stmt, ctx_.conn->Cached(cu.sql));
          MENTAT_RETURN_IF_ERROR(Bind(*stmt, cu.unit, rels));
          Relation* full = rule_full_[cu.head_rel].get();
          Relation* out = fresh[cu.head_rel].get();
          std::vector<DbVal> row(c_.rule_rels[cu.head_rel].arity);
          size_t n = 0;
          for (;;) {
            auto step = stmt->Step();
            if (!step.ok()) return intr_.Translate(step.status());
            if (!*step) break;
            for (size_t k = 0; k < row.size(); ++k)
              row[k] = schema::Column(*stmt, static_cast<int>(k));
            if (!full->Contains(row.data())) out->Insert(row.data());
            if ((++n & 4095) == 0) MENTAT_RETURN_IF_ERROR(intr_.Check());
          }
        }
      }
      if (first) {
        // Magic relations start from their seed row (demand.cc).
        for (int r : st.rule_rels) {
          const RuleRel& rr = c_.rule_rels[r];
          if (!rr.magic) continue;
          std::vector<DbVal> row;
          bool keep = false;
          MENTAT_RETURN_IF_ERROR(SeedRow(rr, &row, &keep));
          if (keep && !rule_full_[r]->Contains(row.data())) fresh[r]->Insert(row.data());
        }
      }
      first = false;
      bool any = false;
      for (int r : st.rule_rels) {
        Relation* f = fresh[r].get();
        Relation* full = rule_full_[r].get();
        for (size_t i = 0; i < f->size(); ++i) {
          std::vector<DbVal> row(f->arity());
          for (int k = 0; k < f->arity(); ++k) row[k] = f->at(i, k);
          full->Insert(row.data());
        }
        any = any || !f->empty();
        delta[r] = std::move(fresh[r]);
      }
      if (!any) break;
    }
  }
  return Status::OK();
}

}  // namespace mentat::query
