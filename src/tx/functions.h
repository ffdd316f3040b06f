// Transaction functions and predicates (Datomic's :db/fn, :db.attr/preds and
// :db.entity/preds; doc/transactions.md "Transaction functions", "Predicates").
//
// The transactor finds the calls and the predicates and what each names; evaluating them
// is the host's (the store runs them in the script language, with the sandbox's limits),
// through the Functions interface, so that this layer knows nothing of the language.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "mentat/edn.h"
#include "mentat/schema.h"
#include "mentat/status.h"
#include "storage/sqlite.h"
#include "tx/apply.h"

namespace mentat::tx {

// What the host evaluates functions with.
class Functions {
 public:
  virtual ~Functions() = default;
  // Applies the function that `source` (script text) evaluates to. With `with_db`, the first
  // argument is the database as the write transaction sees it now (before the
  // transaction's datoms while calls are expanded, after them while predicates run), then
  // `args`. Returns the function's value as EDN. Errors: the script's, unprefixed.
  virtual Result<edn::Value> Apply(const std::string& source, bool with_db,
                                   const std::vector<edn::Value>& args) = 0;
};

// The script source of a :db/fn value given as Datomic's function map (#db/fn {:lang
// "clojure" :params [db e] :code "..." :requires [...]}): "(fn [db e] ...)". A string is
// kept as it is. Errors: kSchema naming what is wrong with the map.
Result<edn::Value> FunctionSource(const edn::Value& v);

// True when `form` (a list form of transaction data) calls a transaction function: its
// operation is a keyword or symbol other than the built-in operations.
bool IsCall(const edn::Value& form);

// `data` with every call [:my/fn arg ...] replaced by the forms it returns, expanded in turn
// (calls nested up to 64 deep, a million in all). std::nullopt when `data` holds no call.
// Each call reads the entity whose ident is its operation: its :db/fn source, applied to
// the database before the transaction and the call's arguments. Errors: kInvalidArgument
// for an operation that names no function, or a function whose value is not transaction
// data; the function's own errors with their code, prefixed "transaction function :my/fn:".
// `fns` may be null: a call is then kUnsupported.
Result<std::optional<edn::Value>> ExpandCalls(storage::Connection* c, const Schema& schema,
                                              Functions* fns, const edn::Value& data);

// The script source a predicate symbol stands for: the :db/fn of the entity whose ident has
// the symbol's name, else the symbol itself (a function of the script language, such as
// clojure.core/string?).
Result<std::string> PredicateSource(storage::Connection* c, const Schema& schema,
                                    const edn::Value& symbol);

// Checks every value `changes` asserts against the :db.attr/preds of its attribute: each
// is applied to the value and must return a true value. Errors: kSchema naming the
// attribute, the entity, the value and the predicate; the predicate's own errors,
// prefixed. REQUIRES: inside the write transaction, after Write (predicates added in this
// transaction count).
Status CheckAttributePredicates(storage::Connection* c, const Schema& schema,
                                const Changes& changes, Functions* fns);

}  // namespace mentat::tx
