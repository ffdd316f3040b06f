#include "progress.h"

#include <gtest/gtest.h>

namespace mentat::cli {
namespace {

TEST(Progress, WithCommas) {
  EXPECT_EQ(WithCommas(0), "0");
  EXPECT_EQ(WithCommas(999), "999");
  EXPECT_EQ(WithCommas(1000), "1,000");
  EXPECT_EQ(WithCommas(1234567), "1,234,567");
}

TEST(Progress, LineShowsPercentRateAndEta) {
  std::string line = ProgressLine("data.edn", 250, 1000, 5000, 2.0, 100);
  EXPECT_NE(line.find("data.edn ["), std::string::npos) << line;
  EXPECT_NE(line.find(" 25% "), std::string::npos) << line;
  EXPECT_NE(line.find("5,000 datoms"), std::string::npos) << line;
  EXPECT_NE(line.find("2,500 datoms/s"), std::string::npos) << line;
  EXPECT_NE(line.find("ETA 0:06"), std::string::npos) << line;  // 2 s for 25%: 6 s left
  EXPECT_LE(line.size(), 100u);
  // The bar is a quarter full.
  size_t open = line.find('['), close = line.find(']');
  std::string bar = line.substr(open + 1, close - open - 1);
  EXPECT_EQ(std::count(bar.begin(), bar.end(), '#'), static_cast<long>(bar.size() / 4));
}

TEST(Progress, NoRateOrEtaBeforeTimePasses) {
  std::string line = ProgressLine("f", 0, 1000, 0, 0.0, 80);
  EXPECT_EQ(line.find("datoms/s"), std::string::npos) << line;
  EXPECT_EQ(line.find("ETA"), std::string::npos) << line;
  EXPECT_NE(line.find(" 0% "), std::string::npos) << line;
}

TEST(Progress, FitsANarrowTerminal) {
  std::string line = ProgressLine("a-rather-long-file-name.edn", 10, 20, 123456, 10.0, 40);
  EXPECT_LE(line.size(), 40u);
}

}  // namespace
}  // namespace mentat::cli
