// Helpers for tests against PostgreSQL (the *_pgtest.cc files, built into pg_tests).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>

#include "pg/connection.h"

namespace mentat::pg {

// The connection string of the test cluster: MENTAT_TEST_PG, which ctest sets from the
// cluster its "pg" fixture started (tools/pg-cluster.sh). Without it the calling test
// fails: these tests never skip.
inline std::string TestConninfo() {
  const char* c = std::getenv("MENTAT_TEST_PG");
  if (!c || !*c) {
    ADD_FAILURE() << "MENTAT_TEST_PG is not set: run pg_tests through ctest (fixture pg), or "
                     "set it to a libpq connection string (tools/pg-cluster.sh start DIR "
                     "prints one)";
    return "host=/nonexistent-mentat-test-cluster dbname=mentat connect_timeout=1";
  }
  return c;
}

// The connection string of the test cluster's streaming standby: MENTAT_TEST_PG_STANDBY,
// else the one ctest's fixture "pgstandby" starts beside the primary (test/CMakeLists.txt:
// the primary's directory with "-standby", port 5433).
inline std::string TestStandbyConninfo() {
  const char* c = std::getenv("MENTAT_TEST_PG_STANDBY");
  if (c && *c) return c;
  std::string primary = TestConninfo();
  size_t host = primary.find("host="), end = primary.find(' ', host);
  size_t port = primary.find("port=");
  if (host == std::string::npos || end == std::string::npos || port == std::string::npos) {
    ADD_FAILURE() << "cannot tell the standby from MENTAT_TEST_PG (" << primary
                  << "): set MENTAT_TEST_PG_STANDBY";
    return "host=/nonexistent-mentat-test-standby dbname=mentat connect_timeout=1";
  }
  std::string s = primary.substr(0, end) + "-standby" + primary.substr(end);
  port = s.find("port=");
  size_t port_end = s.find(' ', port);
  return s.substr(0, port) + "port=5433" +
         (port_end == std::string::npos ? "" : s.substr(port_end));
}

// Creates a schema no other test uses (tests run in parallel processes) and puts it first
// on `c`'s search path; returns its name.
inline std::string TestSchema(Connection& c) {
  static std::atomic<int> n{0};
  std::string name = "t" + std::to_string(::getpid()) + "_" + std::to_string(n++);
  Status st = c.Exec("DROP SCHEMA IF EXISTS " + name + " CASCADE; CREATE SCHEMA " + name +
                     "; SET search_path = " + name);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return name;
}

}  // namespace mentat::pg
