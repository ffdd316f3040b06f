// The conformance corpus: every test/script/NAME.clj runs in a fresh interpreter and
// must print exactly test/script/NAME.out: what the script wrote (println, prn ...)
// followed by the last form's value as EDN and a newline, or "ERROR <status>\n" when the
// script fails. A script whose first line is ";; requires: query" (or pull) is skipped
// until that part of the store is available.
//
// MENTAT_SCRIPT_CORPUS_UPDATE=1 rewrites the .out files from the current output (review
// the diff before committing).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "mentat/script.h"
#include "mentat/store.h"

namespace mentat::script {
namespace {

namespace fs = std::filesystem;

fs::path CorpusDir() { return fs::path(MENTAT_SOURCE_DIR) / "test" / "script"; }

std::vector<std::string> CorpusNames() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(CorpusDir(), ec)) {
    if (entry.path().extension() == ".clj") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class Corpus : public ::testing::TestWithParam<std::string> {};

TEST_P(Corpus, Script) {
  fs::path clj = CorpusDir() / (GetParam() + ".clj");
  fs::path out = CorpusDir() / (GetParam() + ".out");
  std::string source = ReadFile(clj);
  Interpreter in;
  Result<std::string> r = in.EvalToString(source);
  std::string actual = in.TakeOutput();
  actual += r.ok() ? *r + "\n" : "ERROR " + r.status().ToString() + "\n";
  if (std::getenv("MENTAT_SCRIPT_CORPUS_UPDATE")) {
    std::ofstream(out, std::ios::binary) << actual;
    return;
  }
  ASSERT_TRUE(fs::exists(out)) << out << " is missing";
  EXPECT_EQ(actual, ReadFile(out)) << clj;
}

std::string TestName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Script, Corpus, ::testing::ValuesIn(CorpusNames()), TestName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Corpus);

}  // namespace
}  // namespace mentat::script
