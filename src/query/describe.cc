// What a query's results look like, from its parse alone (mentat::describe_query).
#include "query/ast.h"
#include "query/query.h"

namespace mentat {

namespace query {

QueryResult Describe(const ParsedQuery& q) {
  QueryResult r;
  switch (q.find_kind) {
    case ParsedQuery::FindKind::kRel:
      r.shape = QueryResult::Shape::kRelation;
      break;
    case ParsedQuery::FindKind::kColl:
      r.shape = QueryResult::Shape::kCollection;
      break;
    case ParsedQuery::FindKind::kTuple:
      r.shape = QueryResult::Shape::kTuple;
      break;
    case ParsedQuery::FindKind::kScalar:
      r.shape = QueryResult::Shape::kScalar;
      break;
  }
  if (q.find_names.size() == q.find.size()) {
    r.columns = q.find_names;
  } else {
    r.columns.reserve(q.find.size());
    for (const FindElem& f : q.find) r.columns.push_back(edn::Print(f.form));
  }
  r.map_keys = q.keys;
  return r;
}

}  // namespace query

Result<QueryResult> describe_query(std::string_view text) {
  MENTAT_ASSIGN_OR_RETURN(auto prepared, query::Prepared::Parse(text));
  return query::Describe(prepared->parsed());
}

}  // namespace mentat
