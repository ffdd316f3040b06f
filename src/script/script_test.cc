// Language tests: special forms, closures, recur, destructuring, errors, printing.
#include "mentat/script.h"

#include <gtest/gtest.h>

namespace mentat::script {
namespace {

std::string Ev(Interpreter& in, std::string_view src) {
  Result<std::string> r = in.EvalToString(src);
  return r.ok() ? *r : "ERROR " + r.status().ToString();
}

std::string Ev(std::string_view src) {
  Interpreter in;
  return Ev(in, src);
}

TEST(Script, Literals) {
  EXPECT_EQ(Ev("1"), "1");
  EXPECT_EQ(Ev("\"a\\nb\""), "\"a\\nb\"");
  EXPECT_EQ(Ev("[1 2.5 :k \\c nil true]"), "[1 2.5 :k \\c nil true]");
  EXPECT_EQ(Ev("{:b 2 :a 1}"), "{:a 1, :b 2}");
  EXPECT_EQ(Ev("#{3 1 2}"), "#{1 2 3}");
  EXPECT_EQ(Ev("'(1 2 x)"), "(1 2 x)");
  EXPECT_EQ(Ev("()"), "()");
  EXPECT_EQ(Ev(""), "nil");
  EXPECT_EQ(Ev("#inst \"2020-01-01T00:00:00Z\""), "#inst \"2020-01-01T00:00:00.000Z\"");
}

// @x, #(...) and #"re" are script syntax: the EDN reader refuses them unless asked.
TEST(Script, ReaderFormsBeyondEdn) {
  EXPECT_EQ(Ev("(def a (atom 1)) [@a (swap! a inc) @a]"), "[1 2 2]");
  EXPECT_EQ(Ev("(map #(+ % 10) [1 2])"), "(11 12)");
  EXPECT_EQ(Ev("(#(vector %1 %3 %&) 1 2 3 4 5)"), "[1 3 (4 5)]");
  EXPECT_EQ(Ev("(#(vector %2 %) 1 2)"), "[2 1]");
  EXPECT_EQ(Ev("(re-find #\"[0-9]+\\.[0-9]\" \"v 12.5x\")"), "\"12.5\"");
  EXPECT_EQ(Ev("(re-matches #\"\\d+\" \"42\")"), "\"42\"");
  EXPECT_EQ(Ev("(#(%))"),
            "ERROR invalid argument: 1:1: wrong number of arguments (0) passed to fn");
  EXPECT_EQ(Ev("(map #(#(%)) [1])"), "ERROR parse error: 1:8: nested #()s are not allowed");
  EXPECT_EQ(Ev("@"), "ERROR parse error: 1:1: @ must be followed by a form");
  EXPECT_EQ(Ev("(re-find #\"abc"), "ERROR parse error: 1:10: unterminated regex literal");
  EXPECT_FALSE(edn::Read("@x").ok());
  EXPECT_FALSE(edn::Read("#(inc %)").ok());
  EXPECT_FALSE(edn::Read("#\"x\"").ok());
  edn::ReadOptions script;
  script.script_syntax = true;
  Result<edn::Value> v = edn::Read("#(inc %)", script);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(edn::Print(*v), "(fn [%1] (let [% %1] (inc %)))");
  v = edn::Read("#(f %2 %&)", script);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(edn::Print(*v), "(fn [%1 %2 & %&] (f %2 %&))");
}

// Every function the scripting issue lists exists (as a function value).
TEST(Script, CoreLibraryOfTheIssue) {
  const char* names =
      "+ - * / < > <= >= = not= str keyword name namespace list vector hash-map hash-set get "
      "get-in assoc assoc-in dissoc update conj cons first rest next nth count seq empty? "
      "contains? keys vals into concat map filter remove reduce range take drop sort sort-by "
      "group-by frequencies some every? apply partial comp identity atom deref swap! reset! "
      "ex-info ex-data ex-message pr-str prn println read-string re-find re-matches";
  EXPECT_EQ(Ev(std::string("(remove fn? [") + names + "])"), "()");
  EXPECT_EQ(Ev("(remove fn? [mentat.store/open mentat.store/close mentat.store/db "
               "mentat.store/as-of mentat.store/since mentat.store/history mentat.store/transact "
               "mentat.store/with mentat.store/q mentat.store/pull mentat.store/entity "
               "mentat.store/read mentat.store/datoms mentat.store/entities])"),
            "()");
}

TEST(Script, Arithmetic) {
  EXPECT_EQ(Ev("(+ 1 2 3)"), "6");
  EXPECT_EQ(Ev("(- 10 1 2)"), "7");
  EXPECT_EQ(Ev("(- 5)"), "-5");
  EXPECT_EQ(Ev("(* 2 3.0)"), "6.0");
  EXPECT_EQ(Ev("(/ 6 3)"), "2");
  EXPECT_EQ(Ev("(/ 1 2)"), "0.5");
  EXPECT_EQ(Ev("[(quot -7 2) (rem -7 2) (mod -7 2)]"), "[-3 -1 1]");
  EXPECT_EQ(Ev("[(< 1 2 3) (< 1 3 2) (>= 3 3 1) (== 1 1.0) (= 1 1.0)]"),
            "[true false true true false]");
  EXPECT_EQ(Ev("[(max 1 5 3) (min 4 2.0) (inc 1) (dec 1) (abs -3)]"), "[5 2.0 2 0 3]");
  EXPECT_NE(Ev("(+ 9223372036854775807 1)").find("integer overflow"), std::string::npos);
  EXPECT_NE(Ev("(/ 1 0)").find("divide by zero"), std::string::npos);
}

TEST(Script, DefLetFnClosures) {
  EXPECT_EQ(Ev("(def x 2) (let [y 3] (* x y))"), "6");
  EXPECT_EQ(Ev("(defn add [a b] (+ a b)) (add 1 2)"), "3");
  EXPECT_EQ(Ev("(defn mk [n] (fn [x] (+ x n))) ((mk 10) 5)"), "15");
  EXPECT_EQ(Ev("(let [f (fn [& xs] xs)] [(f) (f 1 2)])"), "[nil (1 2)]");
  EXPECT_EQ(Ev("(defn f ([] 0) ([a] 1) ([a & r] (count r))) [(f) (f 1) (f 1 2 3)]"), "[0 1 2]");
  EXPECT_EQ(Ev("((fn fact [n] (if (< n 2) 1 (* n (fact (dec n))))) 10)"), "3628800");
  // Each closure captures its own loop value.
  EXPECT_EQ(Ev("(map (fn [f] (f)) (loop [i 0 acc []] (if (< i 3) (recur (inc i) (conj acc (fn [] "
               "i))) acc)))"),
            "(0 1 2)");
  EXPECT_EQ(Ev("(let [a 1] (let [f (fn [] (fn [] a))] ((f))))"), "1");
}

TEST(Script, RecurDoesNotGrowTheStack) {
  EXPECT_EQ(Ev("(loop [i 0 acc 0] (if (< i 100000) (recur (inc i) (+ acc i)) acc))"), "4999950000");
  EXPECT_EQ(Ev("(defn cnt [n acc] (if (zero? n) acc (recur (dec n) (inc acc)))) (cnt 50000 0)"),
            "50000");
  EXPECT_NE(Ev("(fn [] (inc (recur)))").find("tail position"), std::string::npos);
  EXPECT_NE(Ev("(loop [a 1] (recur 1 2))").find("recur expects 1 arguments"), std::string::npos);
}

TEST(Script, Conditionals) {
  EXPECT_EQ(Ev("[(if nil 1 2) (if false 1) (when true 1 2) (when false 1)]"), "[2 nil 2 nil]");
  EXPECT_EQ(Ev("(cond (= 1 2) :a (= 1 1) :b :else :c)"), ":b");
  EXPECT_EQ(Ev("[(and) (and 1 2) (and 1 nil 2) (or) (or nil false 3) (or nil)]"),
            "[true 2 nil nil 3 nil]");
  EXPECT_EQ(Ev("(case 2 1 :one (2 3) :two-or-three :other)"), ":two-or-three");
  EXPECT_EQ(Ev("(case 9 1 :one :other)"), ":other");
  EXPECT_NE(Ev("(case 9 1 :one)").find("no matching clause: 9"), std::string::npos);
  EXPECT_EQ(Ev("[(if-let [x 1] x 0) (if-let [x nil] x 0) (when-let [[a b] [1 2]] (+ a b))]"),
            "[1 0 3]");
  EXPECT_EQ(Ev("(condp = 3 1 :a 3 :c :none)"), ":c");
}

TEST(Script, Destructuring) {
  EXPECT_EQ(Ev("(let [[a b & r :as all] [1 2 3 4]] [a b r all])"), "[1 2 (3 4) [1 2 3 4]]");
  EXPECT_EQ(Ev("(let [{:keys [a b] :or {b 9} :as m} {:a 1}] [a b m])"), "[1 9 {:a 1}]");
  EXPECT_EQ(Ev("(let [{x :x [y] :ys} {:x 1 :ys [2]}] [x y])"), "[1 2]");
  EXPECT_EQ(Ev("(let [{:strs [s]} {\"s\" 5}] s)"), "5");
  EXPECT_EQ(Ev("((fn [[a b] {:keys [c]}] [a b c]) [1 2] {:c 3})"), "[1 2 3]");
  EXPECT_EQ(Ev("(loop [[x & xs] [1 2 3] acc 0] (if x (recur xs (+ acc x)) acc))"), "6");
  EXPECT_EQ(Ev("(let [{:keys [a/b]} {:a/b 1}] b)"), "1");
}

TEST(Script, ThreadingAndLoops) {
  EXPECT_EQ(Ev("(-> 1 inc (* 10) (- 1))"), "19");
  EXPECT_EQ(Ev("(->> [1 2 3] (map inc) (reduce +))"), "9");
  EXPECT_EQ(Ev("(for [x [1 2 3] y [:a :b] :when (odd? x)] [x y])"),
            "([1 :a] [1 :b] [3 :a] [3 :b])");
  EXPECT_EQ(Ev("(for [x (range 10) :while (< x 3)] x)"), "(0 1 2)");
  EXPECT_EQ(Ev("(for [x [1 2] :let [y (* x 10)]] y)"), "(10 20)");
  EXPECT_EQ(Ev("(let [a (atom 0)] (doseq [x [1 2 3] y [10 20]] (swap! a + (* x y))) @a)"), "180");
  EXPECT_EQ(Ev("(let [a (atom 0)] (doseq [x [1 2 3] y [10 20]] (swap! a + (* x y))) (deref a))"),
            "180");
  EXPECT_EQ(Ev("(let [a (atom [])] (dotimes [i 3] (swap! a conj i)) (deref a))"), "[0 1 2]");
  EXPECT_EQ(Ev("(let [a (atom 0)] (while (< (deref a) 5) (swap! a inc)) (deref a))"), "5");
  EXPECT_EQ(Ev("(some-> {:a {:b 1}} :a :b inc)"), "2");
  EXPECT_EQ(Ev("(some-> {:a nil} :a :b inc)"), "nil");
  EXPECT_EQ(Ev("(cond-> 1 true inc false (* 100) true (* 2))"), "4");
  EXPECT_EQ(Ev("(as-> 1 x (+ x 1) (* x x))"), "4");
}

TEST(Script, TryCatchThrow) {
  EXPECT_EQ(Ev("(try (throw (ex-info \"boom\" {:a 1})) (catch Exception e [(ex-message e) (ex-data "
               "e)]))"),
            "[\"boom\" {:a 1}]");
  EXPECT_EQ(Ev("(try (/ 1 0) (catch ArithmeticException e 1))").substr(0, 5), "ERROR");
  EXPECT_EQ(Ev("(try (/ 1 0) (catch Exception e (ex-message e)))"), "\"divide by zero\"");
  EXPECT_EQ(Ev("(let [a (atom 0)] (try 1 (finally (reset! a 2))) (deref a))"), "2");
  EXPECT_EQ(Ev("(let [a (atom 0)] (try (try (throw (ex-info \"x\" {})) (finally (reset! a 1))) "
               "(catch Exception e (deref a))))"),
            "1");
  // ExceptionInfo catches only ex-info exceptions.
  EXPECT_EQ(Ev("(try (try (/ 1 0) (catch ExceptionInfo e :info)) (catch Exception e :other))"),
            ":other");
  Interpreter in;
  Result<edn::Value> r = in.Eval("(defn f [] (throw (ex-info \"bad thing\" {:k 1})))\n(f)");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "1:12: bad thing {:k 1}");
  r = in.Eval("(let [x 1]\n  (undefined-fn x))");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "2:4: unable to resolve symbol: undefined-fn");
  r = in.Eval("(throw 42)");
  EXPECT_NE(r.status().message().find("throw needs an exception"), std::string::npos);
  r = in.Eval("(nth [1 2] 5)");
  EXPECT_EQ(r.status().message(), "1:1: index 5 out of bounds");
  r = in.Eval("((fn [a] a))");
  EXPECT_EQ(r.status().message(), "1:1: wrong number of arguments (0) passed to fn");
  r = in.Eval("(+ 1 \"a\")");
  EXPECT_EQ(r.status().message(), "1:1: + expects a number, got \"a\"");
}

TEST(Script, ParseErrors) {
  Interpreter in;
  Result<edn::Value> r = in.Eval("(def x 1)\n(+ 1");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kParse);
  // Nothing ran: the whole source is read first.
  EXPECT_FALSE(in.Eval("x").ok());
}

TEST(Script, DefinitionsPersistAcrossEvals) {
  Interpreter in;
  ASSERT_TRUE(in.Eval("(def counter (atom 0)) (defn bump [] (swap! counter inc))").ok());
  ASSERT_TRUE(in.Eval("(bump) (bump)").ok());
  EXPECT_EQ(Ev(in, "(deref counter)"), "2");
  ASSERT_TRUE(in.Define("host-value", edn::Value::Vector({edn::Value::Int(7)})).ok());
  EXPECT_EQ(Ev(in, "(first host-value)"), "7");
}

TEST(Script, EvalConvertsToEdn) {
  Interpreter in;
  Result<edn::Value> r = in.Eval("{:a [1 2] :b #{\"x\"}}");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(edn::Print(*r), "{:a [1 2], :b #{\"x\"}}");
  r = in.Eval("(fn named [] 1)");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->is_symbol());
  EXPECT_EQ(edn::Print(*r), "#mentat/fn \"named\"");
}

TEST(Script, Output) {
  Interpreter in;
  ASSERT_TRUE(in.Eval("(println \"a\" 1 [\"b\"]) (prn \"a\" \\c) (print :x)").ok());
  EXPECT_EQ(in.TakeOutput(), "a 1 [b]\n\"a\" \\c\n:x");
  EXPECT_EQ(in.TakeOutput(), "");
  EXPECT_EQ(Ev(in, "(with-out-str (println 1) (print 2))"), "\"1\\n2\"");
  std::string sink;
  Options o;
  o.output = [&](std::string_view t) { sink.append(t); };
  Interpreter in2(o);
  ASSERT_TRUE(in2.Eval("(prn {:a 1})").ok());
  EXPECT_EQ(sink, "{:a 1}\n");
}

}  // namespace
}  // namespace mentat::script
