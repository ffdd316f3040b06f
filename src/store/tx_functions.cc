#include "store/tx_functions.h"

namespace mentat {

Result<edn::Value> ScriptFunctions::Apply(const std::string& source, bool with_db,
                                          const std::vector<edn::Value>& args) {
  if (!store_) return Status::Unsupported("transaction functions cannot run here");
  if (!interp_) interp_ = std::make_unique<script::Interpreter>();
  if (!with_db) return interp_->Apply(source, nullptr, args);
  Db db = store_->db();
  return interp_->Apply(source, &db, args);
}

}  // namespace mentat
