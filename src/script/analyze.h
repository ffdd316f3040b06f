// The analyzer: turns read forms into Node trees (see eval.h), expanding the built-in
// macros (expand.cc) and destructuring patterns (destructure.cc) on the way.
//
// Compile errors (unknown symbols, malformed special forms, recur outside a tail
// position) raise ScriptError with the form's position.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "mentat/edn.h"
#include "script/eval.h"

namespace mentat::script {

class Analyzer {
 public:
  explicit Analyzer(Interp& in) : in_(in) {}

  // Compiles a top-level form; *nslots receives the size of its frame.
  Node* AnalyzeTop(const edn::Value& form, int* nslots);

  // A fresh symbol name for macro expansions ("prefix__123").
  static edn::Value Gensym(std::string_view prefix);

 private:
  struct Scope;
  struct Ctx {
    bool tail = false;
    const std::vector<int>* recur = nullptr;  // recur target slots (tail positions only)
  };

  Node* Analyze(const edn::Value& form, Scope* s, const Ctx& ctx);
  Node* AnalyzeSymbol(const edn::Value& sym, Scope* s);
  Node* AnalyzeList(const edn::Value& form, Scope* s, const Ctx& ctx);
  Node* AnalyzeBody(const edn::Vec& forms, size_t from, edn::Pos pos, Scope* s, const Ctx& ctx);
  Node* AnalyzeCall(const edn::Value& form, Scope* s);
  Node* AnalyzeIf(const edn::Value& form, Scope* s, const Ctx& ctx);
  Node* AnalyzeDef(const edn::Value& form, Scope* s);
  Node* AnalyzeLet(const edn::Value& form, Scope* s, const Ctx& ctx, bool loop);
  Node* AnalyzeRecur(const edn::Value& form, Scope* s, const Ctx& ctx);
  Node* AnalyzeFn(const edn::Value& form, Scope* s);
  Node* AnalyzeTry(const edn::Value& form, Scope* s, const Ctx& ctx);
  Node* AnalyzeCollection(const edn::Value& form, Scope* s);
  Node* Const(Val v, edn::Pos pos);

  // Resolves a local (or captures it from enclosing functions); nullptr when not local.
  Node* ResolveLocal(const std::string& name, Scope* s, edn::Pos pos);
  int NewSlot(Scope* s);

  Interp& in_;
};

// Expands a built-in macro call; std::nullopt when `head` is not a macro.
std::optional<edn::Value> ExpandMacro(const std::string& head, const edn::Value& form);

// Rewrites binding pairs with destructuring patterns into plain symbol bindings:
// [[a b] v] -> [t v, a (nth t 0 nil), b (nth t 1 nil)]. Appends to `out` as
// alternating symbol, init.
void Destructure(const edn::Value& pattern, const edn::Value& init, edn::Vec* out);

// True when `v` is a plain (non-namespaced) symbol.
bool IsLocalName(const edn::Value& v);

// Raises a compile error at `pos`.
[[noreturn]] void SyntaxError(edn::Pos pos, std::string message);

}  // namespace mentat::script
