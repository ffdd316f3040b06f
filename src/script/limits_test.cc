// Sandbox tests: every limit, the interrupt, and the absence of host access.
#include <gtest/gtest.h>
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include "mentat/script.h"
#include "script/isolated_test_util.h"

namespace mentat::script {
namespace {

Status EvalStatus(Interpreter& in, std::string_view src) {
  Result<edn::Value> r = in.Eval(src);
  return r.ok() ? Status::OK() : r.status();
}

// The address space a child may use beyond what it inherits: an allocation the memory
// limit misses fails (as "script memory exhausted") instead of taking the machine.
constexpr size_t kChildAddressSpace = size_t{768} << 20;

// Evaluates `source` (EvalToString) in a child process killed after `deadline` seconds,
// so that a script the limits miss fails the test instead of hanging it: "ok VALUE", the
// error status, or how the child ended.
std::string EvalIsolated(const Options& o, const std::string& source, double deadline = 20) {
  std::vector<testing::Outcome> r = testing::RunIsolated(
      1, [] {},
      [&](size_t) {
        Interpreter in(o);
        Result<std::string> v = in.EvalToString(source);
        return v.ok() ? "ok " + *v : v.status().ToString();
      },
      deadline, kChildAddressSpace);
  std::string text = r[0].text;
  if (text.size() > 300) text = text.substr(0, 300) + "...";  // keeps failures readable
  return text;
}

std::string StepLimit(int64_t steps) {
  return "interrupted: script step limit exceeded (" + std::to_string(steps) + " steps)";
}
std::string MemoryLimit(int64_t bytes) {
  return "interrupted: script memory limit exceeded (" + std::to_string(bytes) + " bytes)";
}

TEST(ScriptLimits, StepLimit) {
  Options o;
  o.max_steps = 5000;
  Interpreter in(o);
  Status st = EvalStatus(in, "(loop [] (recur))");
  EXPECT_EQ(st.code(), Code::kInterrupted);
  EXPECT_EQ(st.message(), "script step limit exceeded (5000 steps)");
  // A catch in the script cannot intercept a limit.
  st = EvalStatus(in, "(try (loop [] (recur)) (catch Exception e :caught))");
  EXPECT_EQ(st.message(), "script step limit exceeded (5000 steps)");
  // Builtins charge steps for the elements they walk.
  st = EvalStatus(in, "(count (vec (range 100000)))");
  EXPECT_EQ(st.code(), Code::kInterrupted);
  // The count restarts with every Eval, and the interpreter stays usable.
  EXPECT_TRUE(EvalStatus(in, "(reduce + (range 1000))").ok());
}

TEST(ScriptLimits, DefaultStepLimitIsTenMillion) {
  EXPECT_EQ(Options().max_steps, 10'000'000);
  EXPECT_EQ(Options().max_memory_bytes, 64 * 1024 * 1024);
  EXPECT_EQ(Options().max_depth, 1000);
}

// A host value too large for the script's memory is refused with a Status (the limit once
// escaped the public API as an exception), and nothing is defined.
TEST(ScriptLimits, DefineRefusesValuesPastTheLimits) {
  Options o;
  o.max_memory_bytes = 1 << 20;
  Interpreter in(o);
  Status big = in.Define("big", edn::Value::String(std::string(4 << 20, 'x')));
  EXPECT_EQ(big.code(), Code::kInterrupted) << big.ToString();
  EXPECT_NE(big.message().find("memory limit"), std::string::npos) << big.ToString();
  edn::Value deep = edn::Value::Int(1);
  for (int i = 0; i < 5000; ++i) deep = edn::Value::Vector({deep});
  Status nested = in.Define("deep", deep);
  EXPECT_EQ(nested.code(), Code::kInterrupted) << nested.ToString();
  EXPECT_FALSE(EvalStatus(in, "big").ok());
  EXPECT_TRUE(in.Define("small", edn::Value::Int(3)).ok());
  EXPECT_EQ(*in.EvalToString("(inc small)"), "4");
}

TEST(ScriptLimits, MemoryLimit) {
  Options o;
  o.max_memory_bytes = 1 << 20;
  Interpreter in(o);
  Status st = EvalStatus(in,
                         "(def s (apply str (repeat 1000 \"x\")))"
                         "(loop [v [] i 0] (recur (conj v (str s i)) (inc i)))");
  EXPECT_EQ(st.code(), Code::kInterrupted);
  EXPECT_EQ(st.message(), "script memory limit exceeded (1048576 bytes)");
  // One call that would allocate without bound fails up front.
  st = EvalStatus(in, "(vec (range 100000000000))");
  EXPECT_EQ(st.message(), "script memory limit exceeded (1048576 bytes)");
  st = EvalStatus(in, "(def big (atom [])) (dotimes [i 100000] (swap! big conj (str s i)))");
  EXPECT_EQ(st.code(), Code::kInterrupted);
  // Freed values give their memory back: the interpreter is usable again.
  EXPECT_TRUE(EvalStatus(in, "(reset! big nil) (count (vec (range 10000)))").ok());
  // Printed output counts too.
  st = EvalStatus(in, "(dotimes [i 100000] (println s i))");
  EXPECT_EQ(st.code(), Code::kInterrupted);
  EXPECT_FALSE(in.TakeOutput().empty());
  EXPECT_TRUE(EvalStatus(in, "(println 1)").ok());
}

TEST(ScriptLimits, DepthLimit) {
  Interpreter in;
  Status st = EvalStatus(in, "(defn down [n] (inc (down n))) (down 0)");
  EXPECT_EQ(st.code(), Code::kInterrupted);
  EXPECT_EQ(st.message(), "script depth limit exceeded (1000 nested calls)");
  // Depth below the limit is fine.
  Result<std::string> r =
      in.EvalToString("(defn sum [n] (if (zero? n) 0 (+ n (sum (dec n))))) (sum 900)");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, "405450");
  // Higher-order builtins count too.
  st = EvalStatus(in, "(defn m [n] (first (map m [n]))) (m 0)");
  EXPECT_EQ(st.message(), "script depth limit exceeded (1000 nested calls)");
}

// With no depth limit, the stack guard still turns runaway recursion into an error.
TEST(ScriptLimits, StackGuardOnSmallThreadStack) {
  struct Arg {
    std::string message;
  } arg;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 1 << 20);  // 1 MiB
  pthread_t t;
  auto body = [](void* p) -> void* {
    Options o;
    o.max_depth = 0;
    o.max_steps = 0;
    Interpreter in(o);
    Result<edn::Value> r = in.Eval("(defn down [n] (inc (down n))) (down 0)");
    static_cast<Arg*>(p)->message = r.ok() ? "ok" : r.status().message();
    return nullptr;
  };
  ASSERT_EQ(pthread_create(&t, &attr, body, &arg), 0);
  pthread_join(t, nullptr);
  pthread_attr_destroy(&attr);
  EXPECT_EQ(arg.message, "script stack depth exceeded (C++ stack nearly full)");
}

TEST(ScriptLimits, DeeplyNestedValues) {
  Interpreter in;
  Status st =
      EvalStatus(in, "(def v (loop [v [] i 0] (if (< i 5000) (recur [v] (inc i)) v))) (pr-str v)");
  EXPECT_EQ(st.code(), Code::kInterrupted);
  EXPECT_EQ(st.message(), "value nested deeper than 2000 levels");
  // Freeing it does not recurse.
  EXPECT_TRUE(EvalStatus(in, "(def v nil)").ok());
  Options big;
  big.max_memory_bytes = 0;
  Interpreter in2(big);
  EXPECT_TRUE(EvalStatus(in2, "(count (apply list (range 500000)))").ok());
}

TEST(ScriptLimits, Interrupt) {
  Options o;
  o.max_steps = 200'000'000;  // only a backstop: the interrupt ends the loop long before
  Interpreter in(o);
  std::atomic<bool> done{false};
  Status st;
  std::thread runner([&]() {
    st = EvalStatus(in, "(loop [i 0] (recur (inc i)))");
    done = true;
  });
  // Interrupt until the runner stops (it may not have started when the first one lands).
  while (!done) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    in.interrupt();
  }
  runner.join();
  EXPECT_EQ(st.code(), Code::kInterrupted);
  EXPECT_EQ(st.message(), "script interrupted");
  // An interrupt while idle does not affect the next script.
  in.interrupt();
  EXPECT_TRUE(EvalStatus(in, "(+ 1 2)").ok());
}

// Issue 20, item 6: equality, hashing, comparing and printing walk a (range) one element
// at a time, and charge a step each, so the step limit stops them.
TEST(ScriptLimits, EqualityHashingAndPrintingOfRangesAreMetered) {
  Options o;
  o.max_steps = 100'000;
  for (const char* src : {
           "(= (range 1000000000000) (range 1000000000000))",
           "(not= (range 1000000000000) (range 1000000000000))",
           "(hash (range 1000000000000))",
           "(hash [[(range 1000000000000)]])",
           "(= #{(range 1000000000000)} #{(range 1000000000000)})",
           "(= [(range 1000000000000)] (list (range 1000000000000)))",
           "(str (range 1000000000000))",
           "(pr-str {:a (range 1000000000000)})",
           "(clojure.string/join \",\" (range 1000000000000))",
       }) {
    EXPECT_EQ(EvalIsolated(o, src), StepLimit(100'000)) << src;
  }
  // The float range of the report is eager, and compare materializes its arguments: they
  // stop at a limit too.
  for (const char* src : {"(= (range 1e12) (range 1e12))",
                          "(compare [1 (range 1000000000000)] [1 (range 1000000000000)])"}) {
    std::string r = EvalIsolated(o, src);
    EXPECT_TRUE(r == StepLimit(100'000) || r == MemoryLimit(o.max_memory_bytes)) << r;
  }
  // The value of the last form is converted (Eval) or printed (EvalToString) under the
  // same limits.
  o.max_memory_bytes = 0;
  EXPECT_EQ(EvalIsolated(o, "(range 1000000000000)"), StepLimit(100'000));
  std::vector<testing::Outcome> eval = testing::RunIsolated(
      1, [] {},
      [&](size_t) {
        Interpreter in(o);
        Result<edn::Value> v = in.Eval("(range 1000000000000)");
        return v.ok() ? std::string("ok") : v.status().ToString();
      },
      20, kChildAddressSpace);
  EXPECT_EQ(eval[0].text, StepLimit(100'000));
}

// ... and interrupt() stops them when there is no step limit.
TEST(ScriptLimits, InterruptStopsBuiltinWalks) {
  for (const char* src :
       {"(hash (range 1000000000000))", "(= (range 1000000000000) (range 1000000000000))",
        "(count (pr-str (range 1000000000000)))"}) {
    std::vector<testing::Outcome> r = testing::RunIsolated(
        1, [] {},
        [&](size_t) {
          Options o;
          o.max_steps = 0;
          o.max_memory_bytes = 0;
          Interpreter in(o);
          std::atomic<bool> done{false};
          Status st;
          std::thread runner([&]() {
            st = EvalStatus(in, src);
            done = true;
          });
          while (!done) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
            in.interrupt();
          }
          runner.join();
          return st.ToString();
        },
        20, kChildAddressSpace);
    EXPECT_EQ(r[0].text, "interrupted: script interrupted") << src;
  }
}

// format computes the room a conversion needs and charges it before formatting: a
// precision of 200,000,000 fails at the memory limit without allocating 200 MB (the
// child's address space could not hold it), and nothing is cut at 511 characters.
TEST(ScriptLimits, FormatChargesWhatItNeedsAndCutsNothing) {
  Options o;
  EXPECT_EQ(EvalIsolated(o, "(format \"%.200000000f\" 1.0)"), MemoryLimit(64 << 20));
  EXPECT_EQ(EvalIsolated(o, "(format \"%2000000000d\" 1)"), MemoryLimit(64 << 20));
  EXPECT_EQ(EvalIsolated(o, "(format \"%-2000000000s\" \"x\")"), MemoryLimit(64 << 20));
  Interpreter in;
  auto r = in.EvalToString(
      "[(count (format \"%600d\" 1)) (count (format \"%.600f\" 1.0))"
      " (count (format \"%600s|\" \"x\")) (count (format \"%-600.3s|\" \"abcdef\"))"
      " (count (format \"%600.400e\" 1.0)) (format \"%5.1f|%-4d|%04x|%s\" 3.14159 7 255 nil)]");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, "[600 602 601 601 600 \"  3.1|7   |00ff|\"]");
  Status st = EvalStatus(in, "(format \"%99999999999d\" 1)");
  EXPECT_EQ(st.message(), "1:1: format: width or precision too large");
  // Without a memory limit the text is as long as asked.
  Options big;
  big.max_memory_bytes = 0;
  Interpreter unlimited(big);
  r = unlimited.EvalToString("(count (format \"%.3000000f\" 1.0))");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, "3000002");
}

// Text being built (str, join, replace, printing, repeat) is charged as it grows: past the
// memory limit it fails before the machine has to hold it.
TEST(ScriptLimits, BuildingTextIsChargedAsItGrows) {
  Options o;
  o.max_steps = 0;
  const std::string s = "(def s (apply str (repeat 10000 \"x\"))) ";
  for (const char* src : {
           "(count (apply str (repeat 100000000 \"x\")))",
           "(count (apply str (repeat 100000 s)))",
           "(count (clojure.string/join (repeat 100000 s)))",
           "(count (clojure.string/replace s \"\" s))",
           "(count (clojure.string/replace s \"x\" s))",
           "(count (clojure.string/replace s #\"x\" s))",
           "(count (clojure.string/replace s #\"x+\" (apply str (repeat 5000 \"$0\"))))",
           "(count (pr-str (repeat 100000 s)))",
           "(count (with-out-str (dotimes [i 100000] (print s))))",
       }) {
    EXPECT_EQ(EvalIsolated(o, s + src), MemoryLimit(64 << 20)) << src;
  }
}

// Walking text charges a step per 16 bytes: a loop over a 1 MB string stops at the step
// limit instead of scanning terabytes.
TEST(ScriptLimits, TextWalksAreMetered) {
  Options o;
  o.max_steps = 1'000'000;
  const std::string s =
      "(def k (apply str (repeat 1000 \"y\"))) (def s (apply str (repeat 1000 k)))"
      " (def kw (keyword s)) ";
  for (const char* src : {
           "(count s)",
           "(= s (str s))",
           "(hash (str s))",
           "(compare s (str s))",
           "(clojure.string/includes? s \"x\")",
           "(clojure.string/index-of s \"x\")",
           "(clojure.string/blank? s)",
           "(clojure.string/trim s)",
           "(subs s 999999)",
           "(keyword s)",
           "(namespace kw)",
           "(name kw)",
           "(simple-keyword? kw)",
           "(parse-long s)",
           "(parse-double s)",
           "(seq s)",
           "(first s)",
           "(read-string s)",
           "(gensym s)",
           "(ex-info s {})",
           "(clojure.string/upper-case s)",
           "(clojure.string/starts-with? s s)",
           "(clojure.string/split-lines s)",
       }) {
    std::string loop = s + "(dotimes [i 1000000] " + src + ")";
    EXPECT_EQ(EvalIsolated(o, loop), StepLimit(1'000'000)) << src;
  }
}

// Substring search is linear (std::string::find is quadratic at worst).
TEST(ScriptLimits, SubstringSearchIsLinear) {
  Options o;
  // A needle of 1 MB that almost matches at each of a million places: a quadratic search
  // compares 10^12 bytes (many seconds), a linear one a few megabytes.
  const std::string s =
      "(def k (apply str (repeat 1000 \"a\"))) (def a (apply str (repeat 2000 k)))"
      " (def b (str (apply str (repeat 1000 k)) \"b\")) ";
  EXPECT_EQ(EvalIsolated(o, s + "(clojure.string/includes? a b)", 5), "ok false");
  EXPECT_EQ(EvalIsolated(o, s + "(clojure.string/index-of a b)", 5), "ok nil");
  EXPECT_EQ(EvalIsolated(o, s + "(count (clojure.string/replace a b \"\"))", 5), "ok 2000000");
  // Many matches: each costs its distance from the last.
  EXPECT_EQ(EvalIsolated(o, s + "(count (clojure.string/replace a \"a\" \"bb\"))", 5),
            "ok 4000000");
  Interpreter in;
  auto r = in.EvalToString(
      "[(clojure.string/index-of \"xxabcxabc\" \"abc\") (clojure.string/replace \"a.b.c\" "
      "\".\" \"--\") (clojure.string/includes? \"abc\" \"\") (clojure.string/index-of \"abc\" "
      "\"d\")]");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, "[2 \"a--b--c\" true nil]");
}

// A key path recurses once per key; a long one is refused, not a stack overflow.
TEST(ScriptLimits, LongKeyPathsAreRefused) {
  Options o;
  for (const char* src :
       {"(assoc-in {} (vec (range 1000000)) 1)", "(update-in {} (vec (range 1000000)) identity)"}) {
    EXPECT_EQ(EvalIsolated(o, src), "interrupted: value nested deeper than 2000 levels") << src;
  }
  Interpreter in;
  auto r = in.EvalToString("(get-in (assoc-in {} (range 1000) 1) (range 1000))");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, "1");
}

// Huge step charges saturate (no signed overflow), and calls with many arguments pay
// for them.
TEST(ScriptLimits, StepChargesSaturate) {
  Options o;
  EXPECT_EQ(EvalIsolated(o, "(repeat 9223372036854775807 1)"), StepLimit(10'000'000));
  o.max_steps = 1'000'000;
  EXPECT_EQ(EvalIsolated(o, "(def p (apply partial + (range 50000))) (dotimes [i 1000000] (p))"),
            StepLimit(1'000'000));
  EXPECT_EQ(EvalIsolated(o,
                         "(def j (apply juxt (repeat 50000 identity))) (dotimes [i 1000000] "
                         "(j 1))"),
            StepLimit(1'000'000));
}

// Opening a store costs its time and its memory; an in-memory store's datoms count.
TEST(ScriptLimits, StoresAreCharged) {
  Options o;
  EXPECT_EQ(EvalIsolated(o, "(dotimes [i 1000000] (mentat.store/open \"\"))"),
            StepLimit(10'000'000));
  o.max_steps = 0;
  EXPECT_EQ(EvalIsolated(o, "(count (mapv (fn [_] (mentat.store/open \"\")) (range 100000)))"),
            MemoryLimit(64 << 20));
}

// Error messages show at most 1,000 bytes of a value, and walk no more of it: a type error
// about an infinite (range) is a type error, not a limit.
TEST(ScriptLimits, ErrorMessagesShowValuesBriefly) {
  Interpreter in;
  Status st = EvalStatus(in, "(inc (range))");
  EXPECT_EQ(st.code(), Code::kInvalidArgument) << st.ToString();
  EXPECT_EQ(st.message().rfind("1:1: inc expects a number, got (0 1 2 3 ", 0), 0u) << st.message();
  EXPECT_LT(st.message().size(), 1100u);
  EXPECT_EQ(st.message().substr(st.message().size() - 3), "...");
  st = EvalStatus(in, "(throw (ex-info \"boom\" {:v (vec (range 100000))}))");
  EXPECT_EQ(st.message().rfind("1:1: boom {:v [0 1 2 ", 0), 0u) << st.message();
  EXPECT_LT(st.message().size(), 1100u);
  st = EvalStatus(in, "(+ 1 (apply str (repeat 100000 \"\u00e9\")))");
  EXPECT_LT(st.message().size(), 1100u);
  EXPECT_EQ(st.message().rfind("1:1: + expects a number, got \"\u00e9\u00e9", 0), 0u);
  // Short values print whole.
  st = EvalStatus(in, "(inc [1 2 3])");
  EXPECT_EQ(st.message(), "1:1: inc expects a number, got [1 2 3]");
}

TEST(ScriptSandbox, NoHostAccess) {
  Interpreter in;
  for (const char* f : {"slurp", "spit", "load-file", "sh", "System/exit", "eval", "defmacro"}) {
    Status st = EvalStatus(in, std::string("(") + f + " \"/etc/passwd\")");
    EXPECT_EQ(st.message(), std::string("1:2: unable to resolve symbol: ") + f);
  }
  Status st = EvalStatus(in, "(require '[clojure.java.io :as io])");
  EXPECT_EQ(st.code(), Code::kNotFound);
  // Only in-memory stores unless the host allows a path.
  st = EvalStatus(in, "(mentat.store/open \"/tmp/mentat-script-sandbox.db\")");
  EXPECT_EQ(st.code(), Code::kUnsupported);
  EXPECT_NE(st.message().find("opening files is not allowed"), std::string::npos);
  EXPECT_TRUE(EvalStatus(in, "(mentat.store/open \":memory:\")").ok());
  EXPECT_TRUE(EvalStatus(in, "(mentat.store/open)").ok());

  char dir[] = "/tmp/mentat-script-test-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string path = std::string(dir) + "/s.db";
  Options o;
  o.allow_open = [&](const std::string& p) { return p == path; };
  Interpreter allowed(o);
  Result<std::string> r = allowed.EvalToString("(def c (mentat.store/open \"" + path +
                                               "\")) (mentat.store/close c) :ok");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, ":ok");
  st = EvalStatus(allowed, "(mentat.store/open \"/tmp/elsewhere.db\")");
  EXPECT_EQ(st.code(), Code::kUnsupported);

  // Options::read_only: a store file the script opens is read-only (reads work, writes fail,
  // nothing is written); in-memory stores stay writable.
  Options ro = o;
  ro.read_only = true;
  Interpreter reader(ro);
  const std::string open = "(def c (mentat.store/open \"" + path + "\"))";
  ASSERT_TRUE(
      allowed.EvalToString(open + " (mentat.store/transact c [{:db/doc \"before\"}])").ok());
  auto before = allowed.EvalToString("(mentat.store/basis-t (mentat.store/db c))");
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  st = EvalStatus(reader, open + " (mentat.store/transact c [{:db/doc \"written\"}])");
  EXPECT_EQ(st.code(), Code::kUnsupported) << st.ToString();
  EXPECT_NE(st.message().find("read-only"), std::string::npos) << st.ToString();
  auto reads = reader.EvalToString(
      "(mentat.store/q (mentat.store/db c) '[:find ?d . :where [_ :db/doc ?d] [(= ?d "
      "\"before\")]])");
  ASSERT_TRUE(reads.ok()) << reads.status().ToString();
  EXPECT_EQ(*reads, "\"before\"");
  EXPECT_TRUE(
      EvalStatus(reader, "(mentat.store/transact (mentat.store/open) [{:db/doc \"x\"}])").ok());
  EXPECT_EQ(*allowed.EvalToString("(mentat.store/basis-t (mentat.store/db c))"), *before);
  ASSERT_TRUE(allowed.EvalToString("(mentat.store/close c)").ok());
  std::remove(path.c_str());
  std::remove((path + "-wal").c_str());
  std::remove((path + "-shm").c_str());
  rmdir(dir);
}

}  // namespace
}  // namespace mentat::script
