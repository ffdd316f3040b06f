// Store::pull and friends: the glue to the pull subsystem (src/pull), filled in when it
// lands.
#include "mentat/store.h"

namespace mentat {

Result<edn::Value> Store::pull(std::string_view pattern, const edn::Value& eid) {
  return db().pull(pattern, eid);
}
Result<std::vector<edn::Value>> Store::pull_many(std::string_view pattern,
                                                 const std::vector<edn::Value>& eids) {
  return db().pull_many(pattern, eids);
}
Result<edn::Value> Db::pull(std::string_view, const edn::Value&) const {
  return Status::Unsupported("pull is not available yet");
}
Result<std::vector<edn::Value>> Db::pull_many(std::string_view,
                                              const std::vector<edn::Value>&) const {
  return Status::Unsupported("pull is not available yet");
}

}  // namespace mentat
