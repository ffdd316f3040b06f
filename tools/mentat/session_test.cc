#include "session.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "interrupt.h"
#include "repl.h"

namespace mentat::cli {
namespace {

class SessionTest : public ::testing::Test {
 protected:
  SessionTest() : session_(out_, err_) {}
  void SetUp() override {
    ASSERT_TRUE(session_.Open("").ok());
    session_.set_format(Format::kEdn);
    ASSERT_TRUE(
        Run(".t [{:db/ident :p/name :db/valueType :db.type/string"
            " :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}"
            " {:db/ident :p/friend :db/valueType :db.type/ref"
            " :db/cardinality :db.cardinality/many}]"));
  }
  bool Run(const std::string& command) {
    out_.str("");
    err_.str("");
    return session_.Run(command);
  }
  std::ostringstream out_, err_;
  Session session_;
};

TEST_F(SessionTest, TransactAndReadBack) {
  ASSERT_TRUE(Run(".t [{:db/id \"a\" :p/name \"Ada\"}]"));
  EXPECT_EQ(out_.str().substr(0, 23), "{:tempids {\"a\" 65536}, ");
  ASSERT_TRUE(Run(".datoms :avet :p/name"));
  EXPECT_EQ(out_.str(), "[[65536 :p/name \"Ada\" 268435458 true]]\n");
  session_.set_format(Format::kCsv);
  ASSERT_TRUE(Run(".datoms :avet :p/name \"Ada\""));
  EXPECT_EQ(out_.str(), "e,a,v,tx,added\n65536,:p/name,Ada,268435458,true\n");
  EXPECT_EQ(err_.str(), "");
}

TEST_F(SessionTest, ErrorsNameTheCommandAndPointAtTheText) {
  EXPECT_FALSE(Run(".t [{:p/name 42}]"));
  EXPECT_EQ(err_.str(),
            "error: .t: 1:11: value type mismatch for :p/name: expected a string, got integer "
            "42 in [:db/add _ :p/name 42]\n"
            "  [{:p/name 42}]\n"
            "            ^\n");
  EXPECT_EQ(out_.str(), "");
  EXPECT_FALSE(Run(".schem"));
  EXPECT_EQ(err_.str(), "error: .schem: unknown command '.schem' (did you mean .schema?)\n");
  EXPECT_FALSE(Run(".scema"));
  EXPECT_EQ(err_.str(), "error: .scema: unknown command '.scema' (did you mean .schema?)\n");
  EXPECT_FALSE(Run(".zzzzzz"));
  EXPECT_EQ(err_.str(), "error: .zzzzzz: unknown command '.zzzzzz' (try .help)\n");
  EXPECT_FALSE(Run("(+ 1 2)"));
  EXPECT_EQ(err_.str(),
            "error: '(+ 1 2)' is not a command (queries go after .q, transactions after .t)\n");
  EXPECT_FALSE(Run(".transact"));
  EXPECT_EQ(err_.str(), "error: .transact: usage: .transact EDN\n");
}

TEST_F(SessionTest, ErrorTextCaretForSuffixPositions) {
  EXPECT_EQ(session_.ErrorText(".q [:find ?x\n :wher [?x]]",
                               Status::Parse("unknown query section :wher at 2:2")),
            "error: .q: unknown query section :wher at 2:2\n   :wher [?x]]\n   ^");
  EXPECT_EQ(session_.ErrorText("[:find ?x :wher [?x]]", Status::Parse("bad at 1:11")),
            "error: .query: bad at 1:11\n  [:find ?x :wher [?x]]\n            ^");
}

TEST_F(SessionTest, BareQueriesRunAsQueries) {
  out_.str("");
  Status st = session_.Execute("[:find ?e . :where [?e :db/ident :p/name]]");
  if (st.ok()) {
    EXPECT_EQ(out_.str(), "26\n");
  } else {
    EXPECT_EQ(st.code(), Code::kUnsupported) << st.ToString();
  }
}

TEST_F(SessionTest, FormatTimerHelpExit) {
  ASSERT_TRUE(Run(".format"));
  EXPECT_EQ(out_.str(), "edn\n");
  ASSERT_TRUE(Run(".format table"));
  EXPECT_EQ(session_.format(), Format::kTable);
  EXPECT_FALSE(Run(".format yaml"));
  EXPECT_EQ(session_.format(), Format::kTable);
  ASSERT_TRUE(Run(".timer on"));
  ASSERT_TRUE(Run(".schema"));
  EXPECT_EQ(err_.str().substr(0, 6), "time: ");
  ASSERT_TRUE(Run(".timer off"));
  ASSERT_TRUE(Run(".help import"));
  EXPECT_EQ(out_.str().substr(0, 14), ".import FILE [");
  EXPECT_FALSE(session_.exit_requested());
  ASSERT_TRUE(Run(".quit"));
  EXPECT_TRUE(session_.exit_requested());
}

TEST_F(SessionTest, RunStreamJoinsLinesAndCountsFailures) {
  std::istringstream in(
      "; comment\n"
      "\n"
      ".t [{:p/name \"Ada\"}\n"
      "    {:p/name \"Bob\"}]\n"
      "# another comment\n"
      ".nope\n"
      ".datoms :avet :p/name\n"
      ".exit\n"
      ".nope-again\n");
  out_.str("");
  err_.str("");
  EXPECT_EQ(session_.RunStream(in), 1);
  EXPECT_NE(out_.str().find("[[65536 :p/name \"Ada\" 268435458 true] [65537 :p/name \"Bob\""),
            std::string::npos)
      << out_.str();
  EXPECT_EQ(err_.str(), "error: .nope: unknown command '.nope' (try .help)\n");
}

TEST_F(SessionTest, BailStopsAtTheFirstFailure) {
  session_.set_bail(true);
  std::istringstream in(".nope\n.t [{:p/name \"Ada\"}]\n");
  EXPECT_EQ(session_.RunStream(in), 1);
  EXPECT_TRUE(Run(".datoms :avet :p/name"));
  EXPECT_EQ(out_.str(), "[]\n");
}

TEST_F(SessionTest, ExportImportAndRead) {
  std::string dir = ::testing::TempDir(), pid = std::to_string(getpid());
  std::string dump = dir + "/session-test-dump-" + pid + ".edn";
  std::string cmds = dir + "/session-test-" + pid + ".mentat";
  ASSERT_TRUE(Run(".t [{:db/id \"a\" :p/name \"Ada\"} {:p/name \"Bob\" :p/friend \"a\"}]"));
  ASSERT_TRUE(Run(".export " + dump));
  EXPECT_EQ(out_.str(), "{:datoms 10, :entities 4, :file \"" + dump + "\", :transactions 2}\n");
  {
    std::ofstream f(cmds);
    f << ".import " << dump << "\n.datoms :aevt :p/friend\n";
  }
  Session other(out_, err_);
  ASSERT_TRUE(other.Open("").ok());
  out_.str("");
  ASSERT_TRUE(other.Run(".read " + cmds));
  EXPECT_NE(out_.str().find(":transactions 2}"), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find(":p/friend 65536"), std::string::npos) << out_.str();
  EXPECT_FALSE(other.Run(".read " + dir + "/no-such-file"));
  std::remove(dump.c_str());
  std::remove(cmds.c_str());
}

TEST_F(SessionTest, EntityAndStats) {
  ASSERT_TRUE(Run(".t [{:db/id \"a\" :p/name \"Ada\"} {:p/name \"Bob\" :p/friend \"a\"}]"));
  ASSERT_TRUE(Run(".entity [:p/name \"Bob\"]"));
  EXPECT_NE(out_.str().find(":p/name \"Bob\""), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find(":db/id 65537"), std::string::npos) << out_.str();
  EXPECT_FALSE(Run(".entity [:p/name \"Nobody\"]"));
  ASSERT_TRUE(Run(".stats"));
  EXPECT_NE(out_.str().find(":attributes {"), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find(":p/friend 1"), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find(":p/name 2"), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find(":entities 2"), std::string::npos) << out_.str();
}

// .tune: modes, dry runs, and an adaptive index earned by value-filtered queries.
TEST_F(SessionTest, Tune) {
  EXPECT_FALSE(Run(".tune sideways"));
  EXPECT_NE(err_.str().find("usage: .tune [dry|adaptive|schema|off]"), std::string::npos);
  char dir_template[] = "/tmp/mentat-tune-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  std::string path = std::string(dir_template) + "/t.db";
  ASSERT_TRUE(Run(".open " + path));
  ASSERT_TRUE(
      Run(".t [{:db/ident :p/name :db/valueType :db.type/string"
          " :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}"
          " {:db/ident :p/age :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]"));
  std::string people = ".t [";
  for (int i = 0; i < 30; ++i)
    people += "{:p/name \"n" + std::to_string(i) + "\" :p/age " + std::to_string(i) + "}";
  ASSERT_TRUE(Run(people + "]"));
  for (const char* cmd : {".tune dry", ".tune --dry-run", ".tune", ".tune schema", ".tune off"}) {
    EXPECT_TRUE(Run(cmd)) << cmd << ": " << err_.str();
    EXPECT_EQ(err_.str(), "") << cmd;
    EXPECT_EQ(out_.str(), "no index changes\n") << cmd;
  }
  // Adaptive: 16 value-filtered queries earn :p/age a value index (the pass runs by itself
  // after the 16th); then `.tune schema` drops it.
  ASSERT_TRUE(Run(".tune adaptive"));
  for (int i = 0; i < 16; ++i) {
    ASSERT_TRUE(
        Run(".q [:find ?n . :where [?e :p/age " + std::to_string(i) + "] [?e :p/name ?n]]"));
    EXPECT_EQ(out_.str(), "\"n" + std::to_string(i) + "\"\n");
  }
  ASSERT_TRUE(Run(".explain [:find ?n . :where [?e :p/age 3] [?e :p/name ?n]]"));
  EXPECT_NE(out_.str().find("datoms_avet (a=? AND v=?)"), std::string::npos) << out_.str();
  ASSERT_TRUE(Run(".tune dry"));
  EXPECT_EQ(out_.str(), "no index changes\n");
  ASSERT_TRUE(Run(".tune schema"));
  EXPECT_EQ(out_.str(), "drop value index on :p/age (mode schema)\n");
  ASSERT_TRUE(Run(".q [:find ?n . :where [?e :p/age 29] [?e :p/name ?n]]"));
  EXPECT_EQ(out_.str(), "\"n29\"\n");
  ASSERT_TRUE(session_.Open("").ok());
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
  rmdir(dir_template);
}

// .cache / .uncache: attribute caches; queries read them and answer the same.
TEST_F(SessionTest, Cache) {
  char dir_template[] = "/tmp/mentat-cache-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  std::string path = std::string(dir_template) + "/c.db";
  ASSERT_TRUE(Run(".open " + path));
  ASSERT_TRUE(Run(
      ".t [{:db/ident :p/name :db/valueType :db.type/string"
      " :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}"
      " {:db/ident :p/age :db/valueType :db.type/long :db/cardinality :db.cardinality/one}"
      " {:db/ident :p/tag :db/valueType :db.type/string :db/cardinality :db.cardinality/many}]"));
  ASSERT_TRUE(Run(".t [{:p/name \"ann\" :p/age 30} {:p/name \"bob\" :p/age 40}]"));
  ASSERT_TRUE(Run(".cache"));
  EXPECT_EQ(out_.str(), "no cached attributes\n");
  ASSERT_TRUE(Run(".cache :p/age"));
  EXPECT_EQ(out_.str(), "caching :p/age forward\n");
  ASSERT_TRUE(Run(".cache p/age forward"));
  ASSERT_TRUE(Run(".cache"));
  EXPECT_EQ(out_.str(), ":p/age forward\n");
  const std::string q = ".q [:find ?a . :in $ ?n :where [?e :p/name ?n] [?e :p/age ?a]] ";
  ASSERT_TRUE(Run(q + "{\"inputs\": [\"bob\"]}"));
  EXPECT_EQ(out_.str(), "40\n");
  ASSERT_TRUE(Run(".explain [:find ?a . :where [?e :p/name \"bob\"] [?e :p/age ?a]]"));
  EXPECT_NE(out_.str().find("from the attribute cache"), std::string::npos) << out_.str();
  ASSERT_TRUE(Run(".t [[:db/add [:p/name \"bob\"] :p/age 41]]"));
  ASSERT_TRUE(Run(q + "{\"inputs\": [\"bob\"]}"));
  EXPECT_EQ(out_.str(), "41\n");
  EXPECT_FALSE(Run(".cache :p/tag"));
  EXPECT_NE(err_.str().find("cardinality-one"), std::string::npos) << err_.str();
  EXPECT_FALSE(Run(".cache :p/age reverse"));
  EXPECT_NE(err_.str().find("only forward attribute caches"), std::string::npos) << err_.str();
  EXPECT_FALSE(Run(".cache :p/nope"));
  EXPECT_NE(err_.str().find("unknown attribute :p/nope"), std::string::npos) << err_.str();
  EXPECT_FALSE(Run(".cache :p/age sideways"));
  EXPECT_NE(err_.str().find("usage: .cache"), std::string::npos) << err_.str();
  ASSERT_TRUE(Run(".uncache :p/age"));
  EXPECT_EQ(out_.str(), "no longer caching :p/age\n");
  EXPECT_FALSE(Run(".uncache :p/age"));
  EXPECT_NE(err_.str().find(":p/age is not cached"), std::string::npos) << err_.str();
  ASSERT_TRUE(Run(".explain [:find ?a . :where [?e :p/name \"bob\"] [?e :p/age ?a]]"));
  EXPECT_EQ(out_.str().find("from the attribute cache"), std::string::npos) << out_.str();
  ASSERT_TRUE(session_.Open("").ok());
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
  rmdir(dir_template);
}

TEST_F(SessionTest, EvalDefinitionsPersistAndPrintTheLastValue) {
  ASSERT_TRUE(Run(".eval (defn twice [x] (* 2 x))"));
  EXPECT_EQ(out_.str(), "#'user/twice\n");
  ASSERT_TRUE(Run(".eval (println \"hi\") (twice 21)"));
  EXPECT_EQ(out_.str(), "hi\n42\n");
  ASSERT_TRUE(
      Run(".eval (mentat.store/q (mentat.store/db conn) "
          "'[:find ?a . :where [?a :db/ident :p/name]])"));
  EXPECT_NE(out_.str(), "nil\n");
}

// A Ctrl-C that arrives after .eval started but before the interpreter's run begins
// (while the source is read) must still stop the script, not be forgotten.
TEST_F(SessionTest, EvalInterruptBeforeTheRunStartsIsNotLost) {
  session_.set_before_eval_for_test([] {
    RequestCancel();
    // Long enough for the watcher to pass the interrupt on before Eval begins.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  });
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(Run(".eval (loop [i 0] (recur (inc i)))"));
  session_.set_before_eval_for_test(nullptr);
  EXPECT_NE(err_.str().find("script interrupted"), std::string::npos) << err_.str();
  EXPECT_EQ(err_.str().find("step limit"), std::string::npos) << err_.str();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  // The interpreter and the store stay usable.
  ASSERT_TRUE(Run(".eval (+ 1 2)"));
  EXPECT_EQ(out_.str(), "3\n");
}

TEST_F(SessionTest, EvalInterruptDuringTheRun) {
  // Soon after the start: an unloaded machine runs the default 10,000,000 steps in about
  // 200 ms. A cancel that lands before the run starts is not lost (the test above).
  std::thread canceller([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    RequestCancel();
  });
  EXPECT_FALSE(Run(".eval (loop [i 0] (recur (inc i)))"));
  canceller.join();
  EXPECT_NE(err_.str().find("error: .eval: script interrupted"), std::string::npos) << err_.str();
  ASSERT_TRUE(Run(".eval (+ 1 2)"));
  EXPECT_EQ(out_.str(), "3\n");
}

// .open gives scripts a fresh interpreter bound to the new store: nothing a script kept
// (conn, db values, definitions) can reach the closed store.
TEST_F(SessionTest, OpenRecreatesTheScriptInterpreter) {
  char dir_template[] = "/tmp/mentat-open-eval-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  std::string path = std::string(dir_template) + "/other.db";
  ASSERT_TRUE(Run(".t [{:p/name \"Ada\"}]"));
  ASSERT_TRUE(Run(".eval (def old-conn conn) (def old-db (mentat.store/db conn)) (def x 1)"));
  ASSERT_TRUE(Run(".open " + path));
  ASSERT_TRUE(
      Run(".t [{:db/ident :q/v :db/valueType :db.type/long"
          " :db/cardinality :db.cardinality/one}]"));
  ASSERT_TRUE(Run(".t [{:q/v 7}]"));
  ASSERT_TRUE(
      Run(".eval (mentat.store/q (mentat.store/db conn) '[:find ?v . :where [_ :q/v ?v]])"));
  EXPECT_EQ(out_.str(), "7\n");
  ASSERT_TRUE(Run(".eval (:path (mentat.store/db conn))"));  // db values are not maps: nil
  EXPECT_FALSE(Run(".eval old-db"));
  EXPECT_NE(err_.str().find("old-db"), std::string::npos) << err_.str();
  EXPECT_FALSE(Run(".eval x"));
  // A failed .open keeps the store and the interpreter.
  ASSERT_TRUE(Run(".eval (def y 2)"));
  EXPECT_FALSE(Run(".open /nonexistent-dir/x/y.db"));
  ASSERT_TRUE(Run(".eval y"));
  EXPECT_EQ(out_.str(), "2\n");
  std::remove(path.c_str());
  std::remove((path + "-wal").c_str());
  std::remove((path + "-shm").c_str());
  rmdir(dir_template);
}

// A Ctrl-C that lands after a command started but before its query does (Store::interrupt
// only stops running queries) is repeated by the watcher until the query stops.
TEST_F(SessionTest, QueryInterruptBeforeTheQueryStartsIsNotLost) {
  StartInterruptWatcher();
  std::string tx = ".t [";
  for (int i = 0; i < 600; ++i) tx += "{:p/name \"n" + std::to_string(i) + "\"} ";
  ASSERT_TRUE(Run(tx + "]"));
  session_.set_before_command_for_test([] {
    RequestCancel();
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
  });
  auto start = std::chrono::steady_clock::now();
  // 600^3 combinations: far longer than the bound below when not interrupted.
  EXPECT_FALSE(
      Run(".q [:find (count ?a) . :where [?a :p/name ?x] [?b :p/name ?y] "
          "[?c :p/name ?z] [(< ?x ?y)] [(< ?y ?z)]]"));
  session_.set_before_command_for_test(nullptr);
  EXPECT_NE(err_.str().find("interrupted"), std::string::npos) << err_.str();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
  ASSERT_TRUE(Run(".q [:find ?n . :where [?e :p/name \"n7\"] [?e :p/name ?n]]"));
  EXPECT_EQ(out_.str(), "\"n7\"\n");
}

TEST_F(SessionTest, CloseThenOpen) {
  ASSERT_TRUE(Run(".eval (def x 1)"));
  ASSERT_TRUE(Run(".close"));
  EXPECT_FALSE(Run(".schema"));
  EXPECT_EQ(err_.str(), "error: .schema: no store is open (use .open PATH)\n");
  EXPECT_FALSE(Run(".q [:find ?e :where [?e :db/ident]]"));
  EXPECT_FALSE(Run(".close extra"));
  ASSERT_TRUE(Run(".open :memory:"));
  ASSERT_TRUE(Run(".q [:find ?e . :where [?e :db/ident :db/ident]]"));
  EXPECT_EQ(out_.str(), "1\n");
  EXPECT_FALSE(Run(".eval x"));  // a fresh interpreter
}

TEST_F(SessionTest, CompletesCommandsArgumentsAndIdents) {
  using W = std::vector<std::string>;
  EXPECT_EQ(Complete(session_, "", ".sch").words, W{".schema"});
  EXPECT_EQ(Complete(session_, "", ".t").words, (W{".t", ".timer", ".transact", ".tune"}));
  EXPECT_EQ(Complete(session_, ".format ", "j").words, W{"json"});
  EXPECT_EQ(Complete(session_, ".timer ", "").words, (W{"off", "on"}));
  EXPECT_EQ(Complete(session_, ".help ", "tr").words, W{"transact"});
  EXPECT_EQ(Complete(session_, ".datoms ", ":a").words, (W{":aevt", ":avet"}));
  EXPECT_EQ(Complete(session_, ".q [", ":fi").words, W{":find"});
  EXPECT_EQ(Complete(session_, ".q [:find ?e :where [?e ", ":p/").words,
            (W{":p/friend", ":p/name"}));
  EXPECT_EQ(Complete(session_, ".pull [", ":p/_").words, W{":p/_friend"});
  EXPECT_EQ(Complete(session_, ".t [{:db/id 1\n  ", ":p/n").words, W{":p/name"});
  EXPECT_TRUE(Complete(session_, ".import ", "da").files);
  EXPECT_TRUE(Complete(session_, ".open ", "").files);
  EXPECT_EQ(Complete(session_, ".import x.csv ", "--b").words, W{"--batch"});
  EXPECT_EQ(Complete(session_, ".export x.edn ", "--").words, (W{"--batch", "--since"}));
}

TEST_F(SessionTest, OutputAndOnceSendResultsToAFile) {
  char dir[] = "/tmp/mentat-output-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string all = std::string(dir) + "/all.txt", one = std::string(dir) + "/one.txt";
  auto read = [](const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  };
  const std::string q1 = ".q [:find ?i . :where [?i :db/ident :p/name]]";
  const std::string q2 = ".q [:find ?i . :where [?i :db/ident :db/ident]]";
  ASSERT_TRUE(Run(q1));
  std::string expected = out_.str();
  ASSERT_TRUE(Run(q2));
  expected += out_.str();
  ASSERT_TRUE(Run(".output " + all));
  ASSERT_TRUE(Run(q1));
  EXPECT_EQ(out_.str(), "");
  ASSERT_TRUE(Run(q2));
  EXPECT_EQ(out_.str(), "");
  ASSERT_TRUE(Run(".output"));
  EXPECT_EQ(read(all), expected);
  ASSERT_TRUE(Run(q1));
  EXPECT_NE(out_.str(), "");
  ASSERT_TRUE(Run(".once " + one));
  ASSERT_TRUE(Run(".q [:find ?i . :where [?i :db/ident :db/ident]]"));
  EXPECT_EQ(out_.str(), "");
  ASSERT_TRUE(Run(".q [:find ?i . :where [?i :db/ident :db/ident]]"));
  EXPECT_NE(out_.str(), "");  // back on the session's output
  EXPECT_EQ(read(one), out_.str());
  EXPECT_FALSE(Run(".once"));
  EXPECT_FALSE(Run(".output /nonexistent-dir/x.txt"));
  EXPECT_NE(err_.str().find("cannot write"), std::string::npos);
  std::remove(all.c_str());
  std::remove(one.c_str());
  rmdir(dir);
}

TEST_F(SessionTest, WidthCutsTableCells) {
  session_.set_format(Format::kTable);
  ASSERT_TRUE(Run(".t [{:p/name \"abcdefghijklmnopqrstuvwxyz\"}]"));
  ASSERT_TRUE(Run(".width 8"));
  ASSERT_TRUE(Run(".q [:find ?n :where [_ :p/name ?n]]"));
  EXPECT_NE(out_.str().find("abcdefg…"), std::string::npos) << out_.str();
  ASSERT_TRUE(Run(".width"));
  EXPECT_EQ(out_.str(), "8\n");
  ASSERT_TRUE(Run(".width 0"));
  ASSERT_TRUE(Run(".q [:find ?n :where [_ :p/name ?n]]"));
  EXPECT_NE(out_.str().find("abcdefghijklmnopqrstuvwxyz"), std::string::npos);
  EXPECT_FALSE(Run(".width -3"));
}

TEST_F(SessionTest, TransactInTableFormatPrintsASummary) {
  session_.set_format(Format::kTable);
  ASSERT_TRUE(
      Run(".t [{:db/id \"a\" :p/name \"Ada\" :p/friend \"b\"} {:db/id \"b\" :p/name \"Bo\"}]"));
  const std::string out = out_.str();
  EXPECT_NE(out.find(": 3 datoms added, 0 retracted"), std::string::npos) << out;
  EXPECT_NE(out.find("tempids: \"a\" 65536 \"b\" 65537"), std::string::npos) << out;
  EXPECT_NE(out.find(":p/name   | 2     | 0"), std::string::npos) << out;
  EXPECT_NE(out.find(":p/friend | 1     | 0"), std::string::npos) << out;
  EXPECT_EQ(out.find(":tx-data"), std::string::npos) << out;
  // EDN keeps the whole report, refs with their idents.
  session_.set_format(Format::kEdn);
  ASSERT_TRUE(
      Run(".t [{:db/ident :p/kind :db/valueType :db.type/ref"
          " :db/cardinality :db.cardinality/one}]"));
  EXPECT_NE(out_.str().find(":db/valueType :db.type/ref"), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find(":tx-data"), std::string::npos);
}

}  // namespace
}  // namespace mentat::cli
