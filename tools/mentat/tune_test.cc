#include "tune.h"

#include <gtest/gtest.h>

#include <sstream>
#include <vector>

namespace mentat::cli {
namespace {

// Stand-ins for the shapes Store::tune_indexes may take.
struct NoTuning {};

struct Strings {
  bool last_dry_run = false;
  Result<std::vector<std::string>> tune_indexes(bool dry_run) {
    last_dry_run = dry_run;
    return std::vector<std::string>{"CREATE INDEX a", "DROP INDEX b"};
  }
};

struct Action {
  std::string what;
  std::string ToString() const { return "action: " + what; }
};
struct Actions {
  AutoIndex mode = AutoIndex::kOff;
  Result<std::vector<Action>> tune_indexes(bool) { return std::vector<Action>{}; }
  Status set_auto_index(AutoIndex m) {
    mode = m;
    return Status::OK();
  }
};

struct Failing {
  Status tune_indexes(bool) { return Status::Busy("locked"); }
};

TEST(Tune, NotAvailableWithoutTheApi) {
  NoTuning store;
  std::ostringstream out;
  Status st = TuneIndexes(store, true, out);
  EXPECT_EQ(st.code(), Code::kUnsupported);
  EXPECT_NE(st.message().find("not available: this build of mentat does not tune indexes"),
            std::string::npos);
  bool reopened = false;
  st = SetAutoIndexMode(store, AutoIndex::kSchema, [&] {
    reopened = true;
    return Status::OK();
  });
  EXPECT_EQ(st.code(), Code::kUnsupported);
  EXPECT_FALSE(reopened);
}

TEST(Tune, PrintsThePlannedActions) {
  Strings store;
  std::ostringstream out;
  ASSERT_TRUE(TuneIndexes(store, true, out).ok());
  EXPECT_TRUE(store.last_dry_run);
  EXPECT_EQ(out.str(), "CREATE INDEX a\nDROP INDEX b\n");
  bool reopened = false;
  ASSERT_TRUE(SetAutoIndexMode(store, AutoIndex::kAdaptive, [&] {
                reopened = true;
                return Status::OK();
              }).ok());
  EXPECT_TRUE(reopened);  // no set_auto_index: the store is reopened with the mode
}

TEST(Tune, UsesSetAutoIndexAndSaysWhenNothingChanges) {
  Actions store;
  std::ostringstream out;
  ASSERT_TRUE(
      SetAutoIndexMode(store, AutoIndex::kSchema, [] { return Status::Internal("no"); }).ok());
  EXPECT_EQ(store.mode, AutoIndex::kSchema);
  ASSERT_TRUE(TuneIndexes(store, false, out).ok());
  EXPECT_EQ(out.str(), "no index changes\n");
  Action a{"x"};
  std::ostringstream one;
  PrintActions(one, a);
  EXPECT_EQ(one.str(), "action: x\n");
}

TEST(Tune, ErrorsPassThrough) {
  Failing store;
  std::ostringstream out;
  EXPECT_EQ(TuneIndexes(store, false, out).code(), Code::kBusy);
}

}  // namespace
}  // namespace mentat::cli
