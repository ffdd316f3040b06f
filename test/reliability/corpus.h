// The bad-input corpus (corpus/README.md): records of an expected error text and a body,
// read by the library, SQLite-extension and DuckDB-extension bad-input tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "util.h"

namespace mentat::reliability {

struct Record {
  std::string expect;  // "*" or a substring of the error message
  std::string body;
  int line = 0;  // of the "=== " line in the corpus file
};

// The records of corpus/<name>; a missing or empty file fails the calling test.
inline std::vector<Record> LoadCorpus(const std::string& name) {
  std::string text = ReadFile(SourceDir() + "/corpus/" + name);
  EXPECT_FALSE(text.empty()) << "missing corpus file " << name;
  std::vector<Record> out;
  int line = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string l = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? text.size() : nl + 1;
    ++line;
    if (l.rfind("=== ", 0) == 0) {
      out.push_back({l.substr(4), "", line});
    } else if (!out.empty()) {
      out.back().body += (out.back().body.empty() ? "" : "\n") + l;
    }
  }
  return out;
}

inline std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace mentat::reliability
