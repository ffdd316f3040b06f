// Test helpers for the store's tests: a temporary directory removed with its contents.
#pragma once

#include <stdlib.h>

#include <cstdlib>
#include <string>

namespace mentat::testing {

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/mentat-store-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  ~TempDir() { std::system(("rm -rf " + dir_).c_str()); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

 private:
  std::string dir_;
};

}  // namespace mentat::testing
