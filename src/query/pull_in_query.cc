// The pull_in_query pass: on an engine where each statement is a round trip (PostgreSQL),
// a scalar or tuple find that pulls one entity reads that entity's datoms in its own
// statement, so the pull's first level needs no statement of its own. The query's SELECT
// becomes a subquery (its one row, by its own LIMIT 1) joined laterally with the entity's
// current datoms in (a, v) order: one row per datom, the find's columns repeated, or one
// row with NULLs when the entity has none. Execution::Run decodes the find from the first
// row and the datoms from all of them; the pull (pull::PullMany) takes them as its first
// level and reads only what lies beyond it (reverse attributes, nested patterns) with
// statements of its own.
//
// It applies when the pulled variable is an entity id in SQL (a ref column), the pull
// reads the current database (an as-of or since view keeps the pull's own statement,
// whose time bounds are the view's), the projection is done in SQL (no C++ aggregation),
// and exactly one find element pulls.
#include <optional>
#include <string>
#include <vector>

#include "query/analyze.h"
#include "query/ast.h"

namespace mentat::query {

std::optional<std::string> ReadPullInQuery(Compiled* out, const ParsedQuery& q,
                                           const AnalyzeEnv& env) {
  if (out->cpp_mode || out->limit_after_decode) return std::nullopt;
  if (q.find_kind != ParsedQuery::FindKind::kScalar && q.find_kind != ParsedQuery::FindKind::kTuple)
    return std::nullopt;
  int elem = -1;
  for (size_t i = 0; i < out->find.size(); ++i) {
    const ProjElem& pe = out->find[i];
    if (pe.kind == FindElem::Kind::kAgg) return std::nullopt;
    if (pe.kind != FindElem::Kind::kPull) continue;
    if (elem >= 0) return std::nullopt;  // two pulls: their rows would multiply
    elem = static_cast<int>(i);
  }
  if (elem < 0) return std::nullopt;
  ProjElem& pulled = out->find[static_cast<size_t>(elem)];
  if (pulled.out.type != VT::kRef || pulled.out.col < 0 || !pulled.out.parts.empty())
    return std::nullopt;
  auto src = env.sources.find(pulled.pull_src);
  if (src != env.sources.end() && (src->second.as_of || src->second.since)) return std::nullopt;
  // The find's columns by name from the subquery, then the datom's a and v.
  const std::string entity = "mentat_q.c" + std::to_string(pulled.out.col);
  std::vector<std::string> outer;
  for (ProjElem& pe : out->find) pe.out = ReadByName(pe.out, "mentat_q.", &outer);
  out->pull_elem = elem;
  out->pull_col = static_cast<int>(outer.size());
  std::string list;
  for (const std::string& c : outer) list += c + ", ";
  out->sql = "SELECT " + list + "mentat_p.a, mentat_p.v FROM (" + out->sql +
             ") AS mentat_q LEFT JOIN LATERAL (SELECT a, v FROM datoms WHERE e = CAST(" + entity +
             " AS bigint) ORDER BY a, v) AS mentat_p ON true ORDER BY mentat_p.a, mentat_p.v";
  return "(pull " + q.find[static_cast<size_t>(elem)].var +
         " ...): the entity's datoms read by the query's statement (LEFT JOIN LATERAL)";
}

}  // namespace mentat::query
