// Command-line arguments of the mentat binary.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "output.h"

namespace mentat::cli {

struct Args {
  bool help = false;
  bool version = false;
  std::optional<Format> format;  // unset: table on a terminal, else edn
  std::string command_file;      // -f FILE
  std::string run_file;          // run FILE (a script)
  std::string store;             // "" : in-memory
  std::vector<std::string> commands;
  bool read_only = false;
  bool no_color = false;
  bool bail = false;
  bool timer = false;
  std::vector<std::string> replicas;  // --replica NAME (PostgreSQL standbys)
  std::string init_file;              // --init FILE (default ~/.mentatrc)
  bool no_init = false;               // -n: no init file
  // mentat migrate SRC DST
  std::string migrate_src, migrate_dst;
};

// Parses `mentat [OPTIONS] [STORE] [COMMAND ...]` and `mentat [OPTIONS] [STORE] run FILE`.
// The first argument that is not an option and does not look like a command (".q", a
// bare "[:find ...]") is the store. False with `*error` set (with a hint) on a bad
// argument.
bool ParseArgs(const std::vector<std::string>& argv, Args* args, std::string* error);

void PrintUsage(std::ostream& os);

}  // namespace mentat::cli
