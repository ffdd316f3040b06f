// The evaluator: compiled forms (Node trees) run against frames of local slots.
//
// The analyzer (analyze.cc) resolves every symbol at compile time: locals become slot
// indices in the current function's frame, variables of enclosing functions are copied
// into the closure when it is created (flat closures), globals become Var pointers.
// `recur` assigns the loop's (or function's) slots and raises a flag that the enclosing
// loop checks, so tail calls through recur never grow the C++ stack.
//
// Errors: builtins and `throw` raise ScriptError (a C++ exception carrying an ErrorObj),
// which `try`/`catch` in the script can intercept. Limits and interrupts raise LimitError,
// which the script cannot catch. Neither crosses the public API (interpreter.cc converts).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "mentat/edn.h"
#include "script/value.h"

namespace mentat::script {

struct Var {
  std::string name;  // "x", or "ns/x" for namespaced builtins
  Val value;
  bool bound = false;
};

enum class Op : uint8_t {
  kConst,
  kLocal,     // slot in the current frame
  kCaptured,  // index into the running closure's captured values
  kSelf,      // the running closure (a named fn referring to itself)
  kGlobal,
  kIf,      // kids: test, then, else
  kDo,      // kids: forms
  kLet,     // kids: inits..., body; slots: one per init
  kLoop,    // as kLet; recur targets the slots
  kRecur,   // kids: new values; slots: targets
  kFn,      // fn: template; kids: capture sources (evaluated in the creating frame)
  kCall,    // kids: function, args...
  kDef,     // var; kids: init (optional)
  kTry,     // kids: body; catches; finally_node
  kThrow,   // kids: the exception
  kVector,  // kids: elements
  kMap,     // kids: k, v, k, v ...
  kSet,     // kids: elements
};

struct Node;

struct CatchClause {
  bool info_only = false;  // (catch ExceptionInfo e ...) catches only ex-info exceptions
  int slot = 0;
  Node* body = nullptr;
};

struct Node {
  Op op = Op::kConst;
  edn::Pos pos;
  Val value;
  int slot = 0;
  Var* var = nullptr;
  const FnTemplate* fn = nullptr;
  std::vector<Node*> kids;
  std::vector<int> slots;
  std::vector<CatchClause> catches;
  Node* finally_node = nullptr;
};

struct Arity {
  int nparams = 0;  // fixed parameters
  bool variadic = false;
  int nslots = 0;
  Node* body = nullptr;
};

struct FnTemplate {
  std::string name;
  std::vector<Arity> arities;
  int ncaptures = 0;
};

struct Frame {
  Val* slots = nullptr;
  const FnObj* self = nullptr;
};

// Owns compiled code; closures point into it, so it lives as long as the interpreter.
struct Arena {
  std::vector<std::unique_ptr<Node>> nodes;
  std::vector<std::unique_ptr<FnTemplate>> fns;
  Node* NewNode(Op op, edn::Pos pos) {
    nodes.push_back(std::make_unique<Node>());
    nodes.back()->op = op;
    nodes.back()->pos = pos;
    return nodes.back().get();
  }
  FnTemplate* NewFn() {
    fns.push_back(std::make_unique<FnTemplate>());
    return fns.back().get();
  }
};

struct Limits {
  int64_t max_steps = 0;  // 0: unlimited
  int max_depth = 0;      // 0: unlimited
};

class Interp {
 public:
  explicit Interp(Limits limits);
  ~Interp();

  // ---- Globals ----
  Var* Intern(const std::string& name);
  Var* FindVar(const std::string& name) const;
  // Registers a builtin under `name` (also reachable as clojure.core/name when `core`).
  void DefNative(const std::string& name, NativeFn fn, int min_args, int max_args,
                 bool core = true);
  // Builtins by name, immune to user redefinition (clojure.core/x in macro expansions).
  const Val* CoreFn(const std::string& name) const;
  // Every name DefNative registered, in registration order (the metering test walks it).
  const std::vector<std::string>& builtins() const { return builtins_; }
  std::map<std::string, std::string>& aliases() { return aliases_; }
  Arena& arena() { return arena_; }

  // ---- Evaluation ----
  // Compiles and runs one top-level form. Throws ScriptError / LimitError.
  Val EvalForm(const edn::Value& form);
  Val Apply(const Val& f, const Val* args, size_t n);
  Val Call(const Val& f, std::initializer_list<Val> args) {
    return Apply(f, args.begin(), args.size());
  }

  // ---- Limits ----
  void BeginRun();  // resets the step count and takes the stack bounds
  // Charge the step meter (see Meter); helpers without the Interp at hand charge
  // CurrentMeter(), which is this meter while a MeterScope for it is alive.
  void Step() { meter_.Step(); }
  void Steps(int64_t n) { meter_.Steps(n); }
  void RequestInterrupt() { meter_.RequestInterrupt(); }
  Meter& meter() { return meter_; }
  Heap& heap() { return heap_; }
  const Limits& limits() const { return limits_; }

  // ---- Output (println, prn ...) ----
  std::function<void(std::string_view)>& output() { return output_; }
  void Write(std::string_view text);

  // Host data for the store bindings (store_fns.cc).
  std::shared_ptr<void> store_state;

 private:
  friend class EvalImpl;
  Val Eval(const Node* n, Frame& f);
  Val EvalTry(const Node* n, Frame& f);
  [[gnu::noinline]] Val EvalCall(const Node* n, Frame& f);
  [[gnu::noinline]] void EvalRecur(const Node* n, Frame& f);
  [[gnu::noinline]] Val MakeClosure(const Node* n, Frame& f);
  [[gnu::noinline]] Val EvalCollection(const Node* n, Frame& f);
  [[gnu::noinline]] Val EvalDef(const Node* n, Frame& f);
  [[noreturn]] void EvalThrow(const Node* n, Frame& f);
  [[gnu::noinline]] Val ApplyData(const Val& f, const Val* args, size_t n);
  Val Invoke(const FnObj* fo, const Val* args, size_t n);

  Limits limits_;
  Heap heap_;
  Arena arena_;
  std::unordered_map<std::string, std::unique_ptr<Var>> vars_;
  std::unordered_map<std::string, Val> core_;
  std::vector<std::string> builtins_;
  std::map<std::string, std::string> aliases_;
  std::function<void(std::string_view)> output_;

  Meter meter_;
  int depth_ = 0;
  bool recur_ = false;
};

// Argument helpers for builtins: fail with the function's name.
[[noreturn]] void ArityError(const FnObj& self, size_t n);
int64_t IntArg(const FnObj& self, const Val& v, const char* what = "an integer");
double NumArg(const FnObj& self, const Val& v);
const std::string& StrArg(const FnObj& self, const Val& v);

}  // namespace mentat::script
