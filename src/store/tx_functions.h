// The store's transaction functions and predicates (tx/functions.h): script functions
// (include/mentat/script.h) run by one interpreter per transaction, with the sandbox's
// default limits, on database values of the store that read through the writer's
// connection (StoreImpl::writer_scope), so they see the transaction's own writes.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "mentat/script.h"
#include "mentat/store.h"
#include "tx/functions.h"

namespace mentat {

class ScriptFunctions : public tx::Functions {
 public:
  // `store` may be null (no function can run); it must outlive this object.
  explicit ScriptFunctions(Store* store) : store_(store) {}
  Result<edn::Value> Apply(const std::string& source, bool with_db,
                           const std::vector<edn::Value>& args) override;

 private:
  Store* store_;
  std::unique_ptr<script::Interpreter> interp_;  // created at the first call
};

}  // namespace mentat
