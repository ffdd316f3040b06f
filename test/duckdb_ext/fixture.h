// Shared set-up for tests that load the extension into a real DuckDB.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "duckdb_host.h"

namespace mentat::duckdb_host {

// A fresh DuckDB with the extension loaded and a temporary directory for stores.
class DuckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/mentat-duck-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto db = DuckHost::Open(library_);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(*db);
    auto con = db_->Connect();
    ASSERT_TRUE(con.ok()) << con.status().ToString();
    con_ = std::move(*con);
    auto loaded = con_->Query("LOAD " + Quote(DefaultExtensionPath()));
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  }
  void TearDown() override {
    con_.reset();
    db_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // A store path inside the temporary directory.
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  // Runs `sql`, failing the test on error.
  QueryOutput Run(const std::string& sql) {
    auto r = con_->Query(sql);
    EXPECT_TRUE(r.ok()) << sql << "\n" << r.status().ToString();
    return r.ok() ? *r : QueryOutput{};
  }
  // Runs `sql`, which must fail; returns DuckDB's message.
  std::string Error(const std::string& sql) {
    auto r = con_->Query(sql);
    EXPECT_FALSE(r.ok()) << sql << " unexpectedly succeeded";
    return r.ok() ? "" : r.status().message();
  }

  std::string library_;  // "" for the default libduckdb.so
  std::string dir_;
  std::unique_ptr<DuckHost> db_;
  std::unique_ptr<Connection> con_;
};

}  // namespace mentat::duckdb_host
