// Bad input: the corpus in corpus/*.txt (see corpus/README.md) and generated pathological
// inputs, run through the library and the CLI. Every input must fail with an error that
// says what is wrong; nothing may crash or hang (an alarm kills a hung test).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>

#include "corpus.h"
#include "mentat/script.h"
#include "util.h"

namespace mentat::reliability {
namespace {

// The error must be present, not an internal error, and mention `expect`.
void ExpectError(const Status& st, const Record& r, const std::string& file) {
  std::string where = file + ":" + std::to_string(r.line) + " " + r.body.substr(0, 60);
  ASSERT_FALSE(st.ok()) << where << ": accepted";
  EXPECT_NE(st.code(), Code::kInternal) << where << ": " << st.ToString();
  EXPECT_FALSE(st.message().empty()) << where;
  if (r.expect != "*") {
    EXPECT_NE(Lower(st.message()).find(Lower(r.expect)), std::string::npos)
        << where << ": " << st.ToString();
  }
}

class BadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    alarm(600);  // a hang fails the test instead of stalling the suite
    auto s = Store::open(dir_.Path("bank.db"));
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
    ASSERT_TRUE(SetUpBank(store_.get()).ok());
  }
  void TearDown() override { alarm(0); }

  TempDir dir_;
  std::unique_ptr<Store> store_;
};

TEST_F(BadInput, MalformedEdnFailsWithAPosition) {
  for (const Record& r : LoadCorpus("edn.txt")) {
    auto v = edn::ReadAll(r.body);
    ExpectError(v.status(), r, "edn.txt");
    if (v.ok()) continue;
    EXPECT_EQ(v.status().code(), Code::kParse) << r.body;
    unsigned line = 0, col = 0;
    EXPECT_EQ(std::sscanf(v.status().message().c_str(), "%u:%u:", &line, &col), 2)
        << "no line:column in " << v.status().ToString();
  }
}

TEST_F(BadInput, MalformedTransactionsWriteNothing) {
  auto before = store_->last_tx();
  ASSERT_TRUE(before.ok());
  auto datoms_before = store_->datoms(":eavt", {});
  ASSERT_TRUE(datoms_before.ok());
  for (const Record& r : LoadCorpus("tx.txt")) {
    auto t = store_->transact(r.body);
    ExpectError(t.status(), r, "tx.txt");
    auto w = store_->with(r.body);
    EXPECT_FALSE(w.ok()) << "with accepted what transact refused: " << r.body;
  }
  EXPECT_EQ(*store_->last_tx(), *before);
  auto datoms_after = store_->datoms(":eavt", {});
  ASSERT_TRUE(datoms_after.ok());
  EXPECT_EQ(datoms_after->size(), datoms_before->size());
  // The store still works.
  EXPECT_TRUE(store_->transact("[{:acct/id 99 :acct/balance 0}]").ok());
}

TEST_F(BadInput, MalformedQueriesFail) {
  for (const Record& r : LoadCorpus("query.txt")) {
    auto q = store_->q(r.body);
    ExpectError(q.status(), r, "query.txt");
    auto e = store_->q_explain(r.body);
    if (!e.ok()) {
      EXPECT_NE(e.status().code(), Code::kInternal) << e.status().ToString();
    }
  }
}

TEST_F(BadInput, MalformedPullPatternsFail) {
  for (const Record& r : LoadCorpus("pull.txt")) {
    auto p = store_->pull(r.body,
                          edn::Value::Vector({edn::Value::Keyword("acct/id"), edn::Value::Int(1)}));
    ExpectError(p.status(), r, "pull.txt");
  }
}

TEST_F(BadInput, MalformedOptionsFail) {
  for (const Record& r : LoadCorpus("options.txt")) {
    size_t nl = r.body.find('\n');
    ASSERT_NE(nl, std::string::npos) << "options.txt:" << r.line << " needs two lines";
    auto o = options_from_json(r.body.substr(0, nl), r.body.substr(nl + 1));
    ExpectError(o.status(), r, "options.txt");
    if (!o.ok()) {
      EXPECT_EQ(o.status().code(), Code::kInvalidArgument) << o.status().ToString();
    }
  }
}

// The built-in idents and attributes (the bootstrap, doc/format.md) hold the store
// together: renaming or retracting them, or changing a built-in attribute, must be
// refused (otherwise no schema can be installed afterwards: "unknown attribute
// :db/ident"), and the refused transaction writes nothing. Their :db/doc may change.
TEST_F(BadInput, BuiltInIdentsCannotBeRenamedOrRetracted) {
  const char* kTx[] = {
      "[[:db/add :db/ident :db/ident :db/ident2]]",
      "[[:db/retract :db/ident :db/ident :db/ident]]",
      "[[:db/add :db/txInstant :db/ident :db/txInstant2]]",
      "[[:db/add :db.type/long :db/ident :db.type/int]]",
      "[[:db/add :db.cardinality/one :db/ident :one]]",
      "[[:db/retract :db.part/user :db/ident :db.part/user]]",
      "[[:db/retractEntity :db.unique/identity]]",
      "[[:db/add :db/doc :db/cardinality :db.cardinality/many]]",
      "[[:db/add :db/txInstant :db/unique :db.unique/value]]",
      "[[:db/add :db/txInstant :db/index false]]",
      "[{:db/id :db/valueType :db/ident :x/y} {:db/ident :ok/attr :db/valueType "
      ":db.type/long :db/cardinality :db.cardinality/one}]",
  };
  for (const char* tx : kTx) {
    auto s = Store::open("");
    ASSERT_TRUE(s.ok());
    auto before = (*s)->last_tx();
    auto datoms_before = (*s)->datoms(":eavt", {});
    ASSERT_TRUE(before.ok() && datoms_before.ok());
    auto r = (*s)->transact(tx);
    ASSERT_FALSE(r.ok()) << tx << " was accepted";
    EXPECT_EQ(r.status().code(), Code::kSchema) << tx << ": " << r.status().ToString();
    EXPECT_NE(r.status().message().find("built-in entity :db"), std::string::npos)
        << tx << ": " << r.status().ToString();
    EXPECT_EQ(*(*s)->last_tx(), *before) << tx;
    auto datoms_after = (*s)->datoms(":eavt", {});
    ASSERT_TRUE(datoms_after.ok());
    EXPECT_EQ(datoms_after->size(), datoms_before->size()) << tx;
    auto schema = (*s)->transact(
        "[{:db/ident :a/b :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]");
    EXPECT_TRUE(schema.ok()) << tx << ": " << schema.status().ToString();
  }
  // Documentation of a built-in is not part of the vocabulary.
  auto s = Store::open("");
  ASSERT_TRUE(s.ok());
  auto doc = (*s)->transact(R"([[:db/add :db/ident :db/doc "names an entity"]])");
  EXPECT_TRUE(doc.ok()) << doc.status().ToString();
}

TEST_F(BadInput, MalformedScriptsFailWithinTheirLimits) {
  std::string escape = "/tmp/mentat-script-sandbox-escape.db";
  for (const Record& r : LoadCorpus("script.txt")) {
    script::Options o;
    o.max_steps = 1'000'000;
    o.max_memory_bytes = 64 * 1024 * 1024;
    o.max_depth = 1000;
    o.output = [](std::string_view) {};
    script::Interpreter in(o);
    in.SetStore(store_.get());
    auto start = std::chrono::steady_clock::now();
    auto v = in.EvalToString(r.body);
    ExpectError(v.status(), r, "script.txt");
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::steady_clock::now() - start)
                  .count();
    EXPECT_LT(ms, 30000) << r.body << " took " << ms << " ms";
  }
  EXPECT_FALSE(std::filesystem::exists(escape)) << "a script created " << escape;
  int64_t sum = 0, count = 0;
  ASSERT_TRUE(SumBalances(store_->db(), &sum, &count).ok());
  EXPECT_EQ(sum, kAccounts * kInitialBalance);
}

TEST_F(BadInput, PathologicalInputsFailFast) {
  std::vector<std::pair<std::string, std::string>> cases;
  cases.push_back({"deep vectors", std::string(200000, '[') + std::string(200000, ']')});
  cases.push_back({"deep maps", [] {
                     std::string s;
                     for (int i = 0; i < 50000; ++i) s += "{:a ";
                     return s;
                   }()});
  cases.push_back({"deep lists unclosed", std::string(100000, '(')});
  cases.push_back({"deep sets", [] {
                     std::string s;
                     for (int i = 0; i < 50000; ++i) s += "#{";
                     return s;
                   }()});
  cases.push_back({"deep discard", [] {
                     std::string s;
                     for (int i = 0; i < 50000; ++i) s += "#_";
                     return s;
                   }()});
  cases.push_back({"deep tags", [] {
                     std::string s;
                     for (int i = 0; i < 50000; ++i) s += "#inst ";
                     return s;
                   }()});
  cases.push_back({"nul bytes", std::string("[1 2 \0 3]", 9)});
  cases.push_back({"invalid utf-8 string", "[\"\xff\xfe\xc0\x80\"]"});
  cases.push_back({"invalid utf-8 keyword", "[:\xff\xfe]"});
  cases.push_back({"lone continuation bytes", "\x80\x81\x82"});
  cases.push_back({"huge integer", "[" + std::string(100000, '9') + "]"});
  cases.push_back({"huge exponent", "[1e" + std::string(5000, '9') + "]"});
  cases.push_back({"huge unterminated string", "\"" + std::string(1 << 20, 'x')});
  cases.push_back({"many unclosed strings", std::string(100000, '"') + "\""});
  for (const auto& [name, text] : cases) {
    auto start = std::chrono::steady_clock::now();
    auto v = edn::ReadAll(text);
    (void)v;  // some are valid EDN; none may crash
    auto t = store_->transact(text);
    EXPECT_FALSE(t.ok()) << name << " was accepted as a transaction";
    if (!t.ok()) {
      EXPECT_FALSE(t.status().message().empty()) << name;
    }
    auto q = store_->q(text);
    EXPECT_FALSE(q.ok()) << name << " was accepted as a query";
    auto p = store_->pull(text, edn::Value::Int(1));
    EXPECT_FALSE(p.ok()) << name << " was accepted as a pull pattern";
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::steady_clock::now() - start)
                  .count();
    EXPECT_LT(ms, 20000) << name << " took " << ms << " ms";
  }
}

// --read-only means that no path writes: not a script opening the store again by its path,
// not the script's default store, not .transact, .import, .tune, nor a store opened with
// .open. Each fails with a non-zero exit, and the store is unchanged.
TEST_F(BadInput, CliReadOnlyMeansNoPathWrites) {
  store_.reset();
  std::string path = dir_.Path("bank.db");
  std::string edn = dir_.Path("tx.edn");
  ASSERT_TRUE(WriteFile(edn, "[{:acct/id 500 :acct/balance 1}]\n"));
  auto last = [&]() {
    auto s = Store::open(path);
    EXPECT_TRUE(s.ok());
    auto t = (*s)->last_tx();
    return t.ok() ? *t : 0;
  };
  const Entid before = last();
  const std::string tx = "[{:acct/id 500 :acct/balance 1}]";
  for (const std::string& command : std::vector<std::string>{
           ".eval (mentat.store/transact (mentat.store/open \"" + path + "\") " + tx + ")",
           ".eval (mentat.store/transact (mentat.store/open) " + tx + ")",
           ".eval (let [c (mentat.store/open \"" + path +
               "\")] (mentat.store/with (mentat.store/db c) " + tx + ") (mentat.store/transact c " +
               tx + "))",
           ".transact " + tx, ".import " + edn, ".tune adaptive", ".open " + path + "\n.t " + tx}) {
    std::string script = dir_.Path("ro.txt");
    ASSERT_TRUE(WriteFile(script, command + "\n"));
    Child c = Spawn({CliPath(), "--read-only", path}, dir_.path(), script);
    ASSERT_GT(c.pid, 0);
    Exit e = Wait(c, 30000);
    std::string err = ReadFile(c.stderr_path);
    EXPECT_TRUE(e.exited && e.code == 1) << command << ": " << e.Describe() << "\n" << err;
    EXPECT_NE(err.find("read-only"), std::string::npos) << command << ": " << err;
    EXPECT_EQ(last(), before) << command << " wrote to a read-only store";
  }
}

// A store created on a full disk (here a file-size limit) fails to open with the cause,
// not "check the permissions", while the disk stays full, and opens once there is room.
TEST_F(BadInput, CliOnAFullDiskNamesTheCause) {
  store_.reset();
  std::string path = dir_.Path("full.db");
  std::string script = dir_.Path("full.sh");
  ASSERT_TRUE(WriteFile(script, "ulimit -f 8; trap '' XFSZ; exec \"$@\"\n"));
  for (int attempt = 0; attempt < 2; ++attempt) {
    Child c = Spawn({"/bin/sh", script, CliPath(), path, ".stats"}, dir_.path());
    ASSERT_GT(c.pid, 0);
    Exit e = Wait(c, 30000);
    std::string err = ReadFile(c.stderr_path);
    EXPECT_TRUE(e.exited && e.code == 1) << e.Describe() << ": " << err;
    EXPECT_EQ(err.find("permissions"), std::string::npos) << "attempt " << attempt << ": " << err;
    EXPECT_NE(err.find("File too large"), std::string::npos)
        << "attempt " << attempt << ": " << err;
  }
  Child c = Spawn({CliPath(), path, ".stats"}, dir_.path());
  Exit e = Wait(c, 30000);
  EXPECT_TRUE(e.exited && e.code == 0) << e.Describe() << ": " << ReadFile(c.stderr_path);
}

TEST_F(BadInput, CliRejectsBadScriptsCleanly) {
  store_.reset();
  std::string path = dir_.Path("bank.db");
  int n = 0;
  for (const Record& r : LoadCorpus("cli.txt")) {
    std::string script = dir_.Path("script" + std::to_string(n++) + ".txt");
    ASSERT_TRUE(WriteFile(script, r.body + "\n"));
    Child c = Spawn({CliPath(), path}, dir_.path(), script);
    ASSERT_GT(c.pid, 0);
    Exit e = Wait(c, 30000);
    std::string err = ReadFile(c.stderr_path);
    std::string where = "cli.txt:" + std::to_string(r.line) + " " + r.body.substr(0, 60);
    EXPECT_TRUE(e.exited) << where << ": " << e.Describe() << "\n" << err;
    EXPECT_NE(e.code, 0) << where << ": exit 0\n" << err;
    EXPECT_NE(Lower(err).find(Lower(r.expect == "*" ? "error" : r.expect)), std::string::npos)
        << where << ": stderr: " << err;
  }
  // The store is intact after all of that.
  EXPECT_EQ(IntegrityCheck(path), "ok");
  auto s = Store::open(path);
  ASSERT_TRUE(s.ok());
  int64_t sum = 0, count = 0;
  ASSERT_TRUE(SumBalances((*s)->db(), &sum, &count).ok());
  EXPECT_EQ(sum, kAccounts * kInitialBalance);
}

}  // namespace
}  // namespace mentat::reliability
