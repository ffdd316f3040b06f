// mentat: the command-line shell. See `mentat --help`.
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "input.h"
#include "session.h"

namespace {

const char* kUsage =
    "usage: mentat [OPTIONS] [STORE] [COMMAND ...]\n"
    "\n"
    "Opens STORE (a file, created if missing; in-memory when omitted) and runs each\n"
    "COMMAND argument in order. Without command arguments, commands are read from\n"
    "standard input (one per line, or spanning lines until brackets balance).\n"
    "\n"
    "options:\n"
    "  --format FMT   output format: table, edn, json or csv (default: table on a\n"
    "                 terminal, edn otherwise)\n"
    "  -f FILE        read commands from FILE\n"
    "  --help         show this help\n"
    "  --version      show the version\n"
    "\n"
    "commands (see .help):\n";

void PrintUsage(std::ostream& os) {
  os << kUsage;
  for (const auto& c : mentat::cli::Commands()) {
    os << "  " << c.name << (c.alias ? std::string(", ") + c.alias : "") << " " << c.args
       << "\n";
  }
}

// Runs commands from `in`, accumulating lines until brackets balance. Returns the number
// of failed commands.
int RunStream(std::istream& in, mentat::cli::Session& session) {
  int failures = 0;
  std::string pending, line;
  auto run = [&](const std::string& cmd) {
    mentat::Status st = session.Execute(cmd);
    if (!st.ok()) {
      std::string name, rest;
      mentat::cli::SplitCommand(cmd, &name, &rest);
      std::cerr << mentat::cli::FormatError(name, rest, st) << std::endl;
      ++failures;
    }
  };
  while (!session.exit_requested() && std::getline(in, line)) {
    if (pending.empty()) {
      size_t b = line.find_first_not_of(" \t\r");
      if (b == std::string::npos || line[b] == ';' || line[b] == '#') continue;
    }
    pending += pending.empty() ? line : "\n" + line;
    if (!mentat::cli::IsComplete(pending)) continue;
    run(pending);
    pending.clear();
  }
  if (!pending.empty() && !session.exit_requested()) run(pending);
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  using mentat::cli::Format;
  mentat::cli::Session session(std::cout, std::cerr);
  session.set_format(isatty(STDOUT_FILENO) ? Format::kTable : Format::kEdn);
  std::string store_path;
  bool have_store = false;
  std::vector<std::string> commands;
  std::string command_file;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      PrintUsage(std::cout);
      return 0;
    }
    if (arg == "--version") {
      std::cout << "mentat " << MENTAT_VERSION << "\n";
      return 0;
    }
    if (arg == "--format" || arg.rfind("--format=", 0) == 0) {
      std::string value;
      if (arg == "--format") {
        if (i + 1 >= argc) {
          std::cerr << "error: --format needs a value (table, edn, json or csv)\n";
          return 1;
        }
        value = argv[++i];
      } else {
        value = arg.substr(9);
      }
      Format f;
      if (!mentat::cli::ParseFormat(value, &f)) {
        std::cerr << "error: unknown format '" << value << "' (table, edn, json or csv)\n";
        return 1;
      }
      session.set_format(f);
      continue;
    }
    if (arg == "-f") {
      if (i + 1 >= argc) {
        std::cerr << "error: -f needs a file name\n";
        return 1;
      }
      command_file = argv[++i];
      continue;
    }
    if (arg.size() > 1 && arg[0] == '-' && !have_store) {
      std::cerr << "error: unknown option '" << arg << "'\nhint: mentat --help lists the options\n";
      return 1;
    }
    if (!have_store && (arg.empty() || arg[0] != '.')) {
      store_path = arg;
      have_store = true;
      continue;
    }
    commands.push_back(arg);
  }

  mentat::Status st = session.Open(store_path);
  if (!st.ok()) {
    std::cerr << "error: cannot open store '" << store_path << "': " << st.message() << "\n";
    return 1;
  }
  int failures = 0;
  if (!commands.empty()) {
    for (const auto& cmd : commands) {
      if (session.exit_requested()) break;
      mentat::Status cst = session.Execute(cmd);
      if (!cst.ok()) {
        std::string name, rest;
        mentat::cli::SplitCommand(cmd, &name, &rest);
        std::cerr << mentat::cli::FormatError(name, rest, cst) << std::endl;
        ++failures;
      }
    }
  } else if (!command_file.empty()) {
    std::ifstream in(command_file);
    if (!in) {
      std::cerr << "error: cannot read '" << command_file << "'\n";
      return 1;
    }
    failures = RunStream(in, session);
  } else {
    failures = RunStream(std::cin, session);
  }
  return failures == 0 ? 0 : 1;
}
