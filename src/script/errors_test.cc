// Every compile and runtime error message, pinned (the message after "line:col: ").
#include <gtest/gtest.h>

#include "mentat/script.h"

namespace mentat::script {
namespace {

struct Case {
  const char* source;
  const char* message;  // expected Status message, without the "line:col: " prefix
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.source; }

// "LINE:COL: message" -> "message".
std::string StripPos(const std::string& m) {
  size_t i = 0;
  for (int part = 0; part < 2; ++part) {
    size_t digits = i;
    while (i < m.size() && m[i] >= '0' && m[i] <= '9') ++i;
    if (i == digits || i >= m.size() || m[i] != ':') return m;
    ++i;
  }
  return i < m.size() && m[i] == ' ' ? m.substr(i + 1) : m;
}

class ErrorMessages : public ::testing::TestWithParam<Case> {};

TEST_P(ErrorMessages, Pinned) {
  Interpreter in;
  Result<edn::Value> r = in.Eval(GetParam().source);
  ASSERT_FALSE(r.ok()) << GetParam().source;
  EXPECT_EQ(StripPos(r.status().message()), GetParam().message) << GetParam().source;
}

const Case kCompileErrors[] = {
    {"(if)", "if takes a test, a then form and an optional else form"},
    {"(if 1 2 3 4)", "if takes a test, a then form and an optional else form"},
    {"(def)", "def takes a symbol, an optional docstring and a value"},
    {"(def 1 2)", "def takes a symbol, an optional docstring and a value"},
    {"(def a/b 1)", "cannot def a namespaced symbol: a/b"},
    {"(def if 1)", "cannot redefine special form if"},
    {"(def x 1 2)", "the docstring of def must be a string"},
    {"(let x 1)", "let needs a vector of bindings"},
    {"(let [x] x)", "let needs an even number of binding forms"},
    {"(loop [x] x)", "loop needs an even number of binding forms"},
    {"(let [1 2] 3)", "unsupported binding form: 1"},
    {"(let [[a &] [1]] a)", "& must be followed by a binding form"},
    {"(let [[a :as] [1]] a)", ":as must be followed by a symbol"},
    {"(let [{:keys x} {}] 1)", ":keys needs a vector of symbols"},
    {"(let [{:keys [1]} {}] 1)", ":keys needs symbols, got 1"},
    {"(let [{:or 1} {}] 1)", ":or needs a map"},
    {"(let [{1 :a} {}] 1)", "bad map destructuring key 1"},
    {"(recur 1)", "recur can only be used in a tail position of a loop or fn"},
    {"(loop [a 1] (recur))", "recur expects 1 arguments, got 0"},
    {"(loop [a 1] (try (recur 2)))", "recur can only be used in a tail position of a loop or fn"},
    {"(fn)", "fn needs a parameter vector"},
    {"(fn 1)", "fn needs a parameter vector or ([params] body) arities"},
    {"(fn a/b [] 1)", "bad fn name a/b"},
    {"(fn [a/b] 1)", "bad parameter name a/b"},
    {"(fn [& a b] 1)", "& must be followed by exactly one parameter"},
    {"(fn ([a] 1) ([b] 2))", "fn has two arities with 1 parameters"},
    {"(fn ([& a] 1) ([b & c] 2))", "fn can have only one variadic arity"},
    {"(quote)", "quote takes one form"},
    {"(throw)", "throw takes one expression"},
    {"(catch Exception e 1)", "catch is only allowed at the end of a try"},
    {"(try 1 (catch Exception e 2) 3)", "only catch and finally clauses may follow them in a try"},
    {"(try 1 (finally 2) (catch Exception e 3))", "finally must be the last clause"},
    {"(try 1 (catch Exception))",
     "catch needs a class and a binding symbol: (catch Exception e ...)"},
    {"(try 1 (catch IOException e 2))", "unknown exception class IOException"},
    {"(nope 1)", "unable to resolve symbol: nope"},
    {"(mentat.store/nope)", "unable to resolve symbol: mentat.store/nope"},
    {"(clojure.core/nope)", "unable to resolve symbol: nope"},
    {"(map if [1])", "special form if used as a value"},
    {"(cond 1)", "cond needs an even number of forms"},
    {"(defn)", "usage: (defn name [params] body...)"},
    {"(defn 1 [])", "defn needs a name"},
    {"(when)", "usage: (when test body...)"},
    {"(if-not 1)", "usage: (if-not test then else?)"},
    {"(if-let [a] 1)", "if-let needs a binding vector of one pattern and one value"},
    {"(if-let [a 1])", "if-let takes a then and an else form"},
    {"(when-let a 1)", "when-let needs a binding vector of one pattern and one value"},
    {"(dotimes [i] 1)", "dotimes needs a binding vector [name count]"},
    {"(doseq [x] 1)", "doseq needs a binding vector [name coll ...]"},
    {"(for [x [1]] 1 2)", "for takes a binding vector and one body expression"},
    {"(doseq [x [1] :until true] x)", "unknown modifier :until (expected :let, :when or :while)"},
    {"(doseq [x [1] :when] x)", "doseq needs a binding vector [name coll ...]"},
    {"(cond-> 1 true)", "cond-> needs pairs of test and form"},
    {"(as-> 1)", "usage: (as-> expr name forms...)"},
    {"(condp =)", "usage: (condp pred expr test result ... default?)"},
    {"(case)", "usage: (case expr constant result ... default?)"},
    {"(assert)", "usage: (assert expr message?)"},
    {"(while)", "usage: (while test body...)"},
};
INSTANTIATE_TEST_SUITE_P(Compile, ErrorMessages, ::testing::ValuesIn(kCompileErrors));

const Case kRuntimeErrors[] = {
    {"(count 1)", "count is not supported on a integer"},
    {"(seq 1)", "don't know how to create a sequence from a integer"},
    {"(nth {:a 1} 0)", "nth is not supported on a map"},
    {"(nth [1] 3)", "index 3 out of bounds"},
    {"(nth [1] -1)", "index -1 out of bounds"},
    {"(contains? 1 1)", "contains? is not supported on a integer"},
    {"(conj {} 1)", "conj on a map needs a [key value] vector or a map, got a integer"},
    {"(conj 1 1)", "conj is not supported on a integer"},
    {"(assoc [1] 5 1)", "assoc on a vector needs an index from 0 to 1"},
    {"(assoc 1 1 1)", "assoc is not supported on a integer"},
    {"(assoc {} 1 2 3)", "assoc expects an even number of keys and values"},
    {"(assoc-in {} [] 1)", "assoc-in needs a non-empty key path"},
    {"(dissoc [1] 0)", "dissoc expects a map, got a vector"},
    {"(disj [1] 1)", "disj expects a set, got a vector"},
    {"(keys [1])", "keys expects a map, got a vector"},
    {"(pop [])", "cannot pop an empty collection"},
    {"(pop #{1})", "pop is not supported on a set"},
    {"(subvec [1 2] 1 5)", "subvec: index out of bounds"},
    {"(subvec '(1) 0)", "subvec expects a vector"},
    {"(hash-map :a)", "no value supplied for key: :a"},
    {"(+ 1 nil)", "+ expects a number, got nil"},
    {"(+ 9223372036854775807 1)", "integer overflow"},
    {"(* 9223372036854775807 2)", "integer overflow"},
    {"(- -9223372036854775807 2)", "integer overflow"},
    {"(abs -9223372036854775808)", "integer overflow"},
    {"(/ 1 0)", "divide by zero"},
    {"(mod 1 0)", "divide by zero"},
    {"(quot 1.0 0)", "divide by zero"},
    {"(even? 1.5)", "even? expects an integer, got 1.5"},
    {"(int 1e300)", "int: value out of range: 1e300"},
    {"(char -1)", "char: value out of range: -1"},
    {"(rand-int 0)", "rand-int needs a positive bound"},
    {"(compare 1 :a)", "cannot compare a integer with a keyword"},
    {"(compare {} {})", "cannot compare a map with a map"},
    {"(sort [1 :a])", "cannot compare a keyword with a integer"},
    {"(range 0 10 0)", "range: the step must not be zero"},
    {"(iterate inc 0)",
     "iterate would build an infinite sequence (sequences are eager here; use "
     "loop, range or repeat with a count)"},
    {"(repeat 1)",
     "repeat would build an infinite sequence (sequences are eager here; use loop, "
     "range or repeat with a count)"},
    {"(partition 0 [1])", "partition needs a positive size and step"},
    {"(rand-nth [])", "rand-nth of an empty collection"},
    {"(:a)", "a keyword called as a function takes 1 or 2 arguments"},
    {"({:a 1})", "a map or set called as a function takes 1 or 2 arguments"},
    {"([1] :x)", "a vector called as a function takes an index"},
    {"(1 2)", "a integer is not a function: 1"},
    {"((fn [a] a) 1 2)", "wrong number of arguments (2) passed to fn"},
    {"(inc)", "wrong number of arguments (0) passed to inc"},
    {"(str/join [1])", "unable to resolve symbol: str/join"},
    {"(subs \"abc\" 5)", "subs: index 5 out of bounds"},
    {"(subs \"abc\" 2 1)", "subs: end before start"},
    {"(name 1)", "name expects a string, keyword or symbol, got 1"},
    {"(namespace \"a\")", "namespace expects a keyword or symbol, got \"a\""},
    {"(symbol 1)", "symbol expects a string, keyword or symbol, got 1"},
    {"(format \"%d\" \"x\")", "format expects an integer, got \"x\""},
    {"(format \"%d\")", "format: not enough arguments for the format string"},
    {"(format \"%q\" 1)", "format: unsupported conversion %q"},
    {"(format \"%\")", "format: incomplete format specifier"},
    {"(re-find \"(\" \"a\")", "invalid regular expression \"(\": missing ): ("},
    {"(re-find \"(?=a)\" \"a\")",
     "invalid regular expression \"(?=a)\": invalid perl operator: (?= (look-around is not "
     "supported: matching is linear-time)"},
    {"(re-find 1 \"a\")", "re-find expects a regex (re-pattern) or a pattern string, got 1"},
    {"(clojure.string/replace \"abc\" #\"(b)\" \"$2\")",
     "clojure.string/replace: replacement \"$2\": no group 2 in (b)"},
    {"(clojure.string/upper-case 1)", "clojure.string/upper-case expects a string, got 1"},
    {"(deref 1)", "deref expects an atom, got 1"},
    {"(swap! 1 inc)", "swap! expects an atom, got 1"},
    {"(ex-info 1 {})", "ex-info expects a string, got 1"},
    {"(ex-info \"m\" 1)", "ex-info expects a map of data, got 1"},
    {"(throw 1)", "throw needs an exception (from ex-info), got a integer"},
    {"(throw (ex-info \"custom\" {:k 1}))", "custom {:k 1}"},
    {"(throw (ex-info \"no data\" {}))", "no data"},
    {"(read-string \"(\")", "read-string: 1:1: unterminated list"},
    {"(require 'foo.bar)", "namespace foo.bar is not available (scripts cannot load files)"},
    {"(require 1)", "require expects a namespace symbol or [ns :as alias]"},
    {"(def x) x", "var x is unbound"},
    {"(assert false)", "Assert failed: false"},
    {"(case 1 2 3)", "no matching clause: 1"},
    {"(condp = 1 2 3)", "no matching clause: 1"},
    {"(inst-ms 1)", "inst-ms expects an inst"},
};
INSTANTIATE_TEST_SUITE_P(Runtime, ErrorMessages, ::testing::ValuesIn(kRuntimeErrors));

TEST(ErrorPositions, PointAtTheFailingCall) {
  Interpreter in;
  Result<edn::Value> r = in.Eval("(defn f [x]\n  (let [y (inc x)]\n    (nth y 0)))\n(f 1)");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "3:5: nth is not supported on a integer");
  r = in.Eval("\n\n   (loop [a 1] (recur))");
  EXPECT_EQ(r.status().message(), "3:16: recur expects 1 arguments, got 0");
  r = in.Eval("(map (fn [x] (/ x 0)) [1])");
  EXPECT_EQ(r.status().message(), "1:14: divide by zero");
}

}  // namespace
}  // namespace mentat::script
