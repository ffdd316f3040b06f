// mentat::script: a sandboxed, Clojure-flavoured scripting language over the store.
//
//   mentat::script::Interpreter in;
//   auto out = in.EvalToString(R"(
//     (def conn (mentat.store/open))
//     (mentat.store/transact conn [{:db/ident :person/name
//                                   :db/valueType :db.type/string
//                                   :db/cardinality :db.cardinality/one}])
//     (mentat.store/transact conn [{:person/name "Ada"}])
//     (mentat.store/q (mentat.store/db conn) '[:find ?n . :where [_ :person/name ?n]]))");
//   // *out == "\"Ada\""
//
// The language: EDN syntax plus 'quote; special forms def let fn if do loop recur try
// catch finally throw quote; the macros defn when when-not when-let if-let cond condp case
// and or -> ->> as-> some-> cond-> doseq for dotimes while declare assert; destructuring;
// closures; a Clojure core library (see src/script/README.md). Sequences are eager (ranges are
// the one lazy sequence). recur never grows the C++ stack.
//
// The store, in the mentat.store namespace (also reachable through an alias after
// (require '[mentat.store :as d])):
//   (open) (open "path") (close conn) (db conn) (basis-t db) (as-of db t) (since db t)
//   (history db) (transact conn tx-data) (with db tx-data) (q db query & inputs)
//   (pull db eid pattern) (entity db eid) (read db eid attr) (datoms db index & comps)
//   (entities db attr)
// A db value is an immutable snapshot: transactions after it was taken are invisible to
// it. transact and with return {:tx-id :tx-instant :tempids :db-before :db-after
// :tx-data}; with is speculative (nothing is written) and its :db-after supports entity,
// read, datoms and entities (db-before plus the speculative datoms) but not q or pull.
//
// Sandbox: a script cannot touch files, the network or processes. The only way out is
// mentat.store/open of a file path, which Options::allow_open must permit (the default
// permits in-memory stores only). Limits on steps, memory and call depth stop a runaway
// script with an "interrupted" Status naming the limit; interrupt() stops it from another
// thread. A script's catch cannot intercept a limit or an interrupt.
//
// Thread safety: an Interpreter is used by one thread at a time; interrupt() may be
// called from any thread. No exception crosses this API.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "mentat/edn.h"
#include "mentat/status.h"

namespace mentat {
class Db;
class Store;
}  // namespace mentat

namespace mentat::script {

struct Options {
  // Evaluation steps per Eval call (0: unlimited).
  int64_t max_steps = 10'000'000;
  // Approximate bytes of live script values, including captured output (0: unlimited).
  int64_t max_memory_bytes = 64 * 1024 * 1024;
  // Nested function calls (0: unlimited). Deep C++ recursion is also refused before the
  // thread's stack runs out.
  int max_depth = 1000;
  // Decides whether (mentat.store/open "path") may open the file at `path`. Unset: only
  // in-memory stores ("" and ":memory:") may be opened. The CLI allows every path.
  std::function<bool(const std::string& path)> allow_open;
  // Opens every store file the script opens read-only: its writes fail with kUnsupported
  // ("read-only"), as the host's own store does when the host opened it so (the CLI's
  // --read-only). In-memory stores stay writable: they touch no file.
  bool read_only = false;
  // Receives what print, println, pr and prn write. Unset: it is kept, and
  // Interpreter::TakeOutput() returns it.
  std::function<void(std::string_view text)> output;
};

class Interpreter {
 public:
  explicit Interpreter(Options options = {});
  ~Interpreter();
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  // Reads and evaluates every top-level form of `source`; returns the last form's value
  // (nil for an empty source). Definitions persist across calls. Functions, atoms, db
  // values and other non-data values become a symbol holding their printed form.
  // Errors: kParse for unreadable source ("line:col: message"); an uncaught script
  // exception returns its code (kInvalidArgument for script errors, the store's code for
  // store errors such as kCasMismatch) and "line:col: message"; a limit or interrupt
  // returns kInterrupted.
  Result<edn::Value> Eval(std::string_view source);
  // As Eval, but returns the last value printed as EDN (pr-str).
  Result<std::string> EvalToString(std::string_view source);

  // Stops a running Eval (with kInterrupted) from any thread; also interrupts queries
  // running on the stores the script opened or was given. No effect when idle.
  void interrupt();

  // Makes `store` the script's default connection: (mentat.store/open) with no argument
  // returns it, and `name` (if not empty) is defined as a variable holding it. The store
  // is not owned and must outlive the interpreter; (mentat.store/close) on it only
  // detaches it. Without a default store, (mentat.store/open) opens a new in-memory store.
  void SetStore(Store* store, std::string_view name = "conn");

  // Defines a global variable holding `value`. Errors: kInterrupted when the value passes
  // the memory limit or nests deeper than scripts allow (nothing is defined then).
  Status Define(std::string_view name, const edn::Value& value);

  // Applies the function that `fn_source` evaluates to ("(fn [db e] ...)", or the name of
  // one such as "clojure.core/string?") to `args`, after a db value of `db` when `db` is
  // given; returns its value as EDN. Each distinct source is evaluated once per interpreter
  // and kept. The db value reads `db` as its store serves it (q, pull, entity, datoms...);
  // it carries no connection, so the function cannot transact. Errors as Eval (the limits
  // count from this call). REQUIRES: `db`'s store outlives the call.
  Result<edn::Value> Apply(std::string_view fn_source, const Db* db,
                           const std::vector<edn::Value>& args);

  // Output written since the last call, when Options::output is unset.
  std::string TakeOutput();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mentat::script
