#include "args.h"

#include <gtest/gtest.h>

namespace mentat::cli {
namespace {

Args Parse(std::vector<std::string> argv, bool ok = true, std::string* error = nullptr) {
  Args args;
  std::string err;
  EXPECT_EQ(ParseArgs(argv, &args, &err), ok) << err;
  if (error) *error = err;
  return args;
}

TEST(Args, StoreAndCommands) {
  Args a = Parse({"my.db", ".schema", "[:find ?e :where [?e :a]]"});
  EXPECT_EQ(a.store, "my.db");
  EXPECT_EQ(a.commands, (std::vector<std::string>{".schema", "[:find ?e :where [?e :a]]"}));
  a = Parse({".schema"});  // no store: in-memory
  EXPECT_EQ(a.store, "");
  EXPECT_EQ(a.commands.size(), 1u);
  a = Parse({"./my.db", ".schema"});  // a relative path is a store, not a command
  EXPECT_EQ(a.store, "./my.db");
  EXPECT_EQ(Parse({"../x.db"}).store, "../x.db");
  a = Parse({"my.db", ".t [1]", "later-arg"});  // after the first command, all are commands
  EXPECT_EQ(a.commands, (std::vector<std::string>{".t [1]", "later-arg"}));
}

TEST(Args, ACommandNameTakesTheArgumentsAfterIt) {
  Args a = Parse({"s.db", ".q", "[:find ?e :where [?e :a]]", "{\"inputs\": []}", ".datoms", ":eavt",
                  "65536", ".import", "my file.edn", "--batch", "5", ".schema"});
  EXPECT_EQ(a.commands, (std::vector<std::string>{".q [:find ?e :where [?e :a]] {\"inputs\": []}",
                                                  ".datoms :eavt 65536",
                                                  ".import \"my file.edn\" --batch 5", ".schema"}));
  a = Parse({".format", "csv", "[:find ?e . :where [?e :a]]"});
  EXPECT_EQ(a.commands, (std::vector<std::string>{".format csv", "[:find ?e . :where [?e :a]]"}));
}

TEST(Args, Options) {
  Args a = Parse({"--format", "json", "--bail", "--timer", "--no-color", "--read-only", "-f",
                  "cmds.txt", "s.db"});
  EXPECT_EQ(a.format, Format::kJson);
  EXPECT_TRUE(a.bail && a.timer && a.no_color && a.read_only);
  EXPECT_EQ(a.command_file, "cmds.txt");
  EXPECT_EQ(a.store, "s.db");
  EXPECT_EQ(Parse({"--format=csv"}).format, Format::kCsv);
  EXPECT_EQ(Parse({"--file=x"}).command_file, "x");
  EXPECT_TRUE(Parse({"-h"}).help);
  EXPECT_TRUE(Parse({"--version"}).version);
  EXPECT_EQ(Parse({"--", "-weird.db"}).store, "-weird.db");
}

TEST(Args, ErrorsCarryAHint) {
  std::string err;
  Parse({"--fromat", "edn"}, false, &err);
  EXPECT_EQ(err,
            "unknown option '--fromat'\nhint: did you mean --format? mentat --help lists "
            "the options");
  Parse({"-x"}, false, &err);
  EXPECT_EQ(err, "unknown option '-x'\nhint: mentat --help lists the options");
  Parse({"--format", "xml"}, false, &err);
  EXPECT_NE(err.find("table, edn, json, jsonl, csv, markdown or line"), std::string::npos);
  Parse({"--format"}, false, &err);
  EXPECT_NE(err.find("needs a value"), std::string::npos);
}

TEST(Args, Run) {
  Args a = Parse({"run", "script.clj"});
  EXPECT_EQ(a.run_file, "script.clj");
  EXPECT_EQ(a.store, "");
  a = Parse({"s.db", "run", "script.clj"});
  EXPECT_EQ(a.store, "s.db");
  EXPECT_EQ(a.run_file, "script.clj");
  std::string err;
  Parse({"run"}, false, &err);
  EXPECT_NE(err.find("run needs a script file"), std::string::npos);
  Parse({"run", "a.clj", ".schema"}, false, &err);
  EXPECT_NE(err.find("unexpected argument"), std::string::npos);
}

}  // namespace
}  // namespace mentat::cli
