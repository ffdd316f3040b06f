#include "import.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace mentat::cli {
namespace {

using edn::Value;

constexpr const char* kSchema = R"([
  {:db/ident :p/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one
   :db/unique :db.unique/identity}
  {:db/ident :p/age :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
  {:db/ident :p/score :db/valueType :db.type/double :db/cardinality :db.cardinality/one}
  {:db/ident :p/ok :db/valueType :db.type/boolean :db/cardinality :db.cardinality/one}
  {:db/ident :p/born :db/valueType :db.type/instant :db/cardinality :db.cardinality/one}
  {:db/ident :p/id :db/valueType :db.type/uuid :db/cardinality :db.cardinality/one}
  {:db/ident :p/kind :db/valueType :db.type/keyword :db/cardinality :db.cardinality/one}
  {:db/ident :p/blob :db/valueType :db.type/bytes :db/cardinality :db.cardinality/one}
  {:db/ident :p/friend :db/valueType :db.type/ref :db/cardinality :db.cardinality/many}
  {:db/ident :p/likes :db/valueType :db.type/string :db/cardinality :db.cardinality/many}
  {:db/ident :color/red}])";

class ImportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = Store::open("").value();
    ASSERT_TRUE(store_->transact(kSchema).ok());
  }
  // The datoms of the entity named `name`, as {attr value-or-vector}.
  Value Entity(const std::string& name) {
    auto datoms =
        store_->datoms(":eavt", {Value::Vector({Value::Keyword("p/name"), Value::String(name)})});
    EXPECT_TRUE(datoms.ok()) << datoms.status().ToString();
    edn::MapEntries m;
    auto schema = store_->schema();
    std::map<std::string, edn::Vec> by_attr;
    for (const auto& d : *datoms) by_attr[*schema->ident(d.a)].push_back(d.v);
    for (auto& [a, vs] : by_attr)
      m.emplace_back(Value::Keyword(a), vs.size() == 1 ? vs[0] : Value::Vector(vs));
    return Value::Map(m);
  }
  size_t Count(const char* attr) { return store_->datoms(":aevt", {Value::Keyword(attr)})->size(); }
  std::unique_ptr<Store> store_;
};

TEST_F(ImportTest, EdnOneTransactionPerForm) {
  std::string text =
      ";; people\n"
      "[{:db/id \"a\" :p/name \"Ada\" :p/age 36}]\n"
      "[{:db/id \"b\" :p/name \"Bob\"} [:db/add \"b\" :p/friend [:p/name \"Ada\"]]]\n"
      "[[:db/retract [:p/name \"Ada\"] :p/age 36]]\n";
  ImportOptions options;
  options.collect_tempids = true;
  std::vector<std::pair<uint64_t, uint64_t>> progress;
  options.progress = [&](uint64_t done, uint64_t datoms) { progress.emplace_back(done, datoms); };
  ImportStats stats;
  ASSERT_TRUE(ImportText(*store_, text, "people.edn", options, &stats).ok());
  EXPECT_EQ(stats.transactions, 3u);
  EXPECT_EQ(stats.datoms, 5u);  // 2 + 2 + 1 retraction
  EXPECT_EQ(stats.tempids.size(), 2u);
  EXPECT_EQ(stats.tempids["a"],
            store_->datoms(":avet", {Value::Keyword("p/name"), Value::String("Ada")})->at(0).e);
  ASSERT_EQ(progress.size(), 3u);
  EXPECT_LT(progress[0].first, progress[1].first);
  EXPECT_EQ(progress[2].second, 5u);
  EXPECT_EQ(Count("p/age"), 0u);
  EXPECT_EQ(Count("p/friend"), 1u);
}

TEST_F(ImportTest, EdnErrorKeepsEarlierTransactionsAndPointsIntoTheFile) {
  std::string text =
      "[{:p/name \"Ada\"}]\n"
      "[{:p/name \"Bob\"\n"
      "  :p/age \"old\"}]\n"
      "[{:p/name \"Cy\"}]\n";
  ImportStats stats;
  Status st = ImportText(*store_, text, "x.edn", {}, &stats);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), Code::kSchema) << st.ToString();
  EXPECT_EQ(st.message(),
            "x.edn:3:10: value type mismatch for :p/age: expected a long, got string \"old\" in "
            "[:db/add _ :p/age \"old\"]\n"
            "    :p/age \"old\"}]\n"
            "           ^\n"
            "committed before the error: 1 transaction (1 datom)");
  EXPECT_EQ(stats.transactions, 1u);
  EXPECT_EQ(Count("p/name"), 1u);  // Ada only: Bob's transaction wrote nothing
}

TEST_F(ImportTest, EdnParseErrorAndNonVectorForms) {
  ImportStats stats;
  Status st = ImportText(*store_, "[{:p/name \"Ada\"}]\n[{:p/name }", "y.edn", {}, &stats);
  EXPECT_EQ(st.code(), Code::kParse);
  EXPECT_EQ(st.message().substr(0, 10), "y.edn:2:2:") << st.message();
  EXPECT_NE(st.message().find("committed before the error: 1 transaction"), std::string::npos);
  ImportStats stats2;
  st = ImportText(*store_, "\n  {:p/name \"Zed\"}", "z.edn", {}, &stats2);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_EQ(st.message(),
            "z.edn:2:3: expected a transaction (a vector of entity maps and list forms), got "
            "map\n    {:p/name \"Zed\"}\n    ^\ncommitted before the error: nothing");
}

TEST_F(ImportTest, CancelStopsBetweenTransactions) {
  std::string text;
  for (int i = 0; i < 10; ++i) text += "[{:p/name \"n" + std::to_string(i) + "\" :p/age 1}]\n";
  std::atomic<bool> cancel{false};
  ImportOptions options;
  options.cancel = &cancel;
  options.progress = [&](uint64_t, uint64_t datoms) {
    if (datoms >= 6) cancel.store(true);  // after the third transaction
  };
  ImportStats stats;
  Status st = ImportText(*store_, text, "c.edn", options, &stats);
  EXPECT_EQ(st.code(), Code::kInterrupted);
  EXPECT_EQ(st.message(),
            "interrupted: c.edn: committed 3 transactions (6 datoms); the rest was not imported");
  EXPECT_EQ(stats.transactions, 3u);
  EXPECT_EQ(Count("p/name"), 3u);
  EXPECT_EQ(Count("p/age"), 3u);
}

TEST_F(ImportTest, CsvTypesEveryValueByItsAttribute) {
  std::string text =
      ":p/name,p/age,:p/score,:p/ok,:p/born,:p/id,:p/kind,:p/blob,:p/likes,:p/likes\n"
      "Ada,36,9.5,true,1815-12-10T00:00:00Z,4f1c1d8e-1a2b-4c3d-8e9f-0a1b2c3d4e5f,:x/y,00ff,a,b\n"
      "\"Lovelace, Ada\",,,no,,,plain,,,\n";
  ImportStats stats;
  ASSERT_TRUE(ImportText(*store_, text, "p.csv", {}, &stats).ok());
  EXPECT_EQ(stats.transactions, 1u);
  EXPECT_EQ(stats.datoms, 13u);
  auto inst = edn::ParseInstant("1815-12-10T00:00:00Z");
  auto uuid = edn::ParseUuid("4f1c1d8e-1a2b-4c3d-8e9f-0a1b2c3d4e5f");
  EXPECT_EQ(Entity("Ada"),
            Value::Map({{Value::Keyword("p/name"), Value::String("Ada")},
                        {Value::Keyword("p/age"), Value::Int(36)},
                        {Value::Keyword("p/score"), Value::Float(9.5)},
                        {Value::Keyword("p/ok"), Value::Bool(true)},
                        {Value::Keyword("p/born"), Value::Inst(*inst)},
                        {Value::Keyword("p/id"), Value::MakeUuid(*uuid)},
                        {Value::Keyword("p/kind"), Value::Keyword("x/y")},
                        {Value::Keyword("p/blob"), Value::Bytes(std::string("\x00\xff", 2))},
                        {Value::Keyword("p/likes"),
                         Value::Vector({Value::String("a"), Value::String("b")})}}));
  EXPECT_EQ(Entity("Lovelace, Ada"),
            Value::Map({{Value::Keyword("p/name"), Value::String("Lovelace, Ada")},
                        {Value::Keyword("p/ok"), Value::Bool(false)},
                        {Value::Keyword("p/kind"), Value::Keyword("plain")}}));
}

TEST_F(ImportTest, CsvRefsIdsAndBatches) {
  ASSERT_TRUE(store_->transact("[{:p/name \"Ada\"}]").ok());
  std::string text =
      ":db/id,:p/name,:p/friend\n"
      "b,Bob,\"[:p/name \"\"Ada\"\"]\"\n"
      "c,Cy,b\n"  // a tempid of the same batch
      ",Dee,:color/red\n"
      "\"[:p/name \"\"Ada\"\"]\",,:color/red\n";  // an existing entity, by lookup ref
  ImportOptions options;
  options.csv_batch_rows = 3;
  ImportStats stats;
  ASSERT_TRUE(ImportText(*store_, text, "r.csv", options, &stats).ok());
  EXPECT_EQ(stats.transactions, 2u);
  auto friends = [&](const std::string& name) {
    Value entity = Entity(name);
    const Value* v = entity.get_keyword("p/friend");
    return v ? *v : Value();
  };
  auto id = [&](const std::string& name) {
    return store_->datoms(":avet", {Value::Keyword("p/name"), Value::String(name)})->at(0).e;
  };
  EXPECT_EQ(friends("Bob"), Value::Int(id("Ada")));
  EXPECT_EQ(friends("Cy"), Value::Int(id("Bob")));
  EXPECT_EQ(friends("Dee"), Value::Int(*store_->schema()->entid("color/red")));
  EXPECT_EQ(friends("Ada"), Value::Int(*store_->schema()->entid("color/red")));
  EXPECT_EQ(Count("p/name"), 4u);
}

TEST_F(ImportTest, CsvErrorsNameTheLineAndColumn) {
  ImportStats stats;
  // An attribute the schema lacks is created, its type read from the values.
  Status st = ImportText(*store_, ":p/name,:p/height\nA,1\n", "h.csv", {}, &stats);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_NE(store_->schema()->attribute("p/height"), nullptr);
  EXPECT_EQ(store_->schema()->attribute("p/height")->type, ValueType::kLong);
  ASSERT_TRUE(store_->transact("[[:db/retractEntity [:p/name \"A\"]]]").ok());
  stats = ImportStats();
  st = ImportText(*store_, ":p/name,:p/age\nA,1\nB,x\n", "v.csv", {}, &stats);
  EXPECT_EQ(st.message(),
            "v.csv:3: column :p/age: expected a long, got \"x\"\ncommitted before the error: "
            "nothing");
  st = ImportText(*store_, ":p/name\nA,1\n", "w.csv", {}, &stats);
  EXPECT_EQ(st.message(),
            "w.csv:2: the row has 2 fields but the header names 1 columns\ncommitted before the "
            "error: nothing");
  st = ImportText(*store_, ":p/name,:p/ok\nA,maybe\n", "b.csv", {}, &stats);
  EXPECT_NE(st.message().find("expected a boolean"), std::string::npos);
  EXPECT_EQ(Count("p/name"), 0u);
}

TEST_F(ImportTest, CsvTransactionErrorNamesTheRows) {
  ImportOptions options;
  options.csv_batch_rows = 2;
  ImportStats stats;
  // Rows 2-3 commit; rows 4-5 give the same tempid two names.
  Status st = ImportText(*store_, ":db/id,:p/name\n,A\n,B\nx,C\nx,D\n", "t.csv", options, &stats);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message().substr(0, 15), "t.csv:lines 4-5") << st.message();
  EXPECT_NE(st.message().find("committed before the error: 1 transaction (2 datoms)"),
            std::string::npos)
      << st.message();
}

TEST_F(ImportTest, FileFormatsAndMissingFiles) {
  ImportStats stats;
  Status st = ImportFile(*store_, "/nonexistent/x.edn", {}, &stats);
  EXPECT_EQ(st.code(), Code::kNotFound);
  EXPECT_EQ(FileSize("/nonexistent/x.edn"), 0u);
  // CSV by option even without the .csv name.
  ImportOptions options;
  options.format = ImportFormat::kCsv;
  ASSERT_TRUE(ImportText(*store_, ":p/name\nZ\n", "data.txt", options, &stats).ok());
  EXPECT_EQ(Count("p/name"), 1u);
}

// Writes `text` into a pipe from a thread; the read end as a path (/dev/fd/N).
class Pipe {
 public:
  explicit Pipe(std::string text) {
    EXPECT_EQ(pipe(fds_), 0);
    writer_ = std::thread([this, t = std::move(text)] {
      size_t off = 0;
      while (off < t.size()) {
        ssize_t n = write(fds_[1], t.data() + off, std::min<size_t>(t.size() - off, 65536));
        if (n <= 0) break;
        off += static_cast<size_t>(n);
      }
      close(fds_[1]);
    });
  }
  ~Pipe() {
    close(fds_[0]);  // a reader that stopped early unblocks the writer
    writer_.join();
  }
  std::string path() const { return "/dev/fd/" + std::to_string(fds_[0]); }

 private:
  int fds_[2] = {-1, -1};
  std::thread writer_;
};

// A pipe or device is read as a stream, in a window of bounded size: transactions that
// straddle the reads (here 3 MiB of them, with multibyte characters) import as from a
// file, and an error's line:column counts from the start of the stream.
TEST_F(ImportTest, EdnFromAPipeStreamsInBoundedMemory) {
  std::string text;
  int n = 0;
  while (text.size() < (size_t{3} << 20)) {
    std::string i = std::to_string(n++);
    text += "[{:p/name \"n" + i + " caf\xC3\xA9 \xE2\x82\xAC\" :p/likes [\"" +
            std::string(97, 'x') + "\"]}]\n";
  }
  {
    Pipe pipe(text);
    ImportStats stats;
    Status st = ImportFile(*store_, pipe.path(), {}, &stats);
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(stats.transactions, static_cast<uint64_t>(n));
  }
  EXPECT_EQ(Count("p/name"), static_cast<size_t>(n));
  EXPECT_EQ(Entity("n" + std::to_string(n - 1) + " caf\xC3\xA9 \xE2\x82\xAC").size(), 2u);
  // An error deep in the stream names its line and column in the stream.
  {
    Pipe pipe(text + "[{:p/name \"late\"}]\n  [{:p/age \"not a long\"}]\n");
    ImportStats stats;
    Status st = ImportFile(*store_, pipe.path(), {}, &stats);
    ASSERT_FALSE(st.ok());
    std::string want = pipe.path() + ":" + std::to_string(n + 2) + ":";
    EXPECT_EQ(st.message().rfind(want, 0), 0u) << st.message().substr(0, 200);
    EXPECT_NE(st.message().find("expected a long"), std::string::npos)
        << st.message().substr(0, 300);
  }
}

// An endless device (.import /dev/zero once grew to 4.7 GB in 10 s): the first bytes are
// not EDN, and that is the error, after reading a bounded amount.
TEST_F(ImportTest, AnEndlessDeviceFailsAtOnce) {
  ImportStats stats;
  auto t0 = std::chrono::steady_clock::now();
  Status st = ImportFile(*store_, "/dev/zero", {}, &stats);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("/dev/zero:1:1:"), std::string::npos) << st.message().substr(0, 200);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
  // As CSV it is read whole up to the bound, then refused.
  ImportOptions csv;
  csv.format = ImportFormat::kCsv;
  st = ImportFile(*store_, "/dev/zero", csv, &stats);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("import it from a regular file"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace mentat::cli
