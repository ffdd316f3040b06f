// Store::q and friends: the glue to the query engine (src/query), filled in when the
// query engine lands.
#include "mentat/store.h"

namespace mentat {

Result<QueryResult> Store::q(std::string_view query, std::vector<Input> inputs) {
  return db().q(query, std::move(inputs));
}
Result<QueryResult> Store::q(std::string_view query, const QueryOptions& options) {
  return db().q(query, options);
}
Result<std::string> Store::q_explain(std::string_view query, const QueryOptions& options) {
  return db().q_explain(query, options);
}
Result<QueryResult> Db::q(std::string_view query, std::vector<Input> inputs) const {
  QueryOptions o;
  o.inputs = std::move(inputs);
  return q(query, o);
}
Result<QueryResult> Db::q(std::string_view, const QueryOptions&) const {
  return Status::Unsupported("queries are not available yet");
}
Result<std::string> Db::q_explain(std::string_view, const QueryOptions&) const {
  return Status::Unsupported("queries are not available yet");
}
Result<QueryOptions> options_from_json(std::string_view, std::string_view) {
  return Status::Unsupported("query options are not available yet");
}
edn::Value QueryResult::ToEdn() const { return edn::Value(); }

}  // namespace mentat
