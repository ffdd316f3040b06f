// Sandbox tests: every limit, the interrupt, and the absence of host access.
#include <gtest/gtest.h>
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include "mentat/script.h"

namespace mentat::script {
namespace {

Status EvalStatus(Interpreter& in, std::string_view src) {
  Result<edn::Value> r = in.Eval(src);
  return r.ok() ? Status::OK() : r.status();
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
