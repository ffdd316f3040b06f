#include "args.h"

#include <algorithm>
#include <cctype>

#include "input.h"
#include "session.h"

namespace mentat::cli {

namespace {

const char* kUsage =
    "usage: mentat [OPTIONS] [STORE] [COMMAND ...]\n"
    "       mentat [OPTIONS] [STORE] run SCRIPT_FILE\n"
    "       mentat [OPTIONS] check STORE\n"
    "       mentat migrate SRC DST\n"
    "       mentat import STORE FILE [.import's options]\n"
    "       mentat serve STORE --listen HOST:PORT --tokens FILE (mentat serve --help)\n"
    "\n"
    "Opens STORE (a file, created if missing; a store in PostgreSQL for a postgresql:// URI\n"
    "or a libpq keyword string, with an optional schema=NAME; in-memory when omitted) and\n"
    "runs each COMMAND argument in order (a command name alone takes the arguments after it:\n"
    "mentat my.db .q '[:find ...]'). Without commands, reads commands from standard input:\n"
    "an interactive shell on a terminal, else one command per line (a command continues\n"
    "over lines until its brackets balance).\n"
    "\n"
    "options:\n"
    "  --format FMT    output format: table, edn, json, jsonl, csv, markdown or line\n"
    "                  (default: table on a terminal, edn otherwise)\n"
    "  -f, --file FILE run the commands in FILE\n"
    "  --read-only     open the store read-only (it must exist)\n"
    "  --bail          stop at the first command that fails\n"
    "  --timer         print how long each command took\n"
    "  --replica NAME  a PostgreSQL standby that reads may go to (repeatable)\n"
    "  --no-color      no colours (also when NO_COLOR is set)\n"
    "  --init FILE     run the commands in FILE first (default: ~/.mentatrc, if any)\n"
    "  -n, --no-init   do not run ~/.mentatrc\n"
    "  -h, --help      show this help\n"
    "  -V, --version   show the version\n"
    "\n"
    "migrate copies the store SRC into a new store DST (SQLite to PostgreSQL or back), with\n"
    "its whole history and the same ids, and verifies the copy.\n"
    "\n"
    "Exit status: 0 when every command succeeded, 1 otherwise.\n"
    "Environment: MENTAT_HISTORY (the shell's history file, default ~/.mentat_history;\n"
    "empty for none), NO_COLOR.\n"
    "\n"
    "commands (.help COMMAND describes one):\n";

const char* const kOptions[] = {"--format",   "--file", "--read-only", "--bail", "--timer",
                                "--no-color", "--help", "--version",   "--init", "--no-init"};

std::string Hint(const std::string& arg) {
  std::string name = arg.substr(0, arg.find('='));
  const char* best = nullptr;
  size_t best_d = 3;
  for (const char* o : kOptions) {
    size_t d = EditDistance(name, o);
    if (d < best_d) {
      best = o;
      best_d = d;
    }
  }
  std::string hint = "\nhint: ";
  if (best) hint += "did you mean " + std::string(best) + "? ";
  return hint + "mentat --help lists the options";
}

// ".schema" and "[:find ...]" are commands; "./my.db" and "../my.db" are paths.
bool LooksLikeCommand(const std::string& arg) {
  if (arg.empty()) return false;
  if (arg[0] == '[' || arg[0] == '{') return true;
  return arg[0] == '.' && arg.size() > 1 && std::isalpha(static_cast<unsigned char>(arg[1]));
}

}  // namespace

void PrintUsage(std::ostream& os) {
  os << kUsage;
  for (const auto& c : Commands()) {
    std::string head = std::string("  ") + c.name + (c.alias ? std::string(", ") + c.alias : "") +
                       (*c.args ? " " : "") + c.args;
    os << head << std::string(head.size() < 42 ? 42 - head.size() : 1, ' ') << c.summary << "\n";
  }
}

bool ParseArgs(const std::vector<std::string>& argv, Args* args, std::string* error) {
  bool have_store = false, options_done = false;
  bool absorbing = false;  // the last command was a bare name: arguments follow
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    auto value = [&](const std::string& opt, std::string* out) {
      if (arg.size() > opt.size() && arg[opt.size()] == '=') {
        *out = arg.substr(opt.size() + 1);
        return true;
      }
      if (i + 1 >= argv.size()) {
        *error = opt + " needs a value\nhint: mentat --help lists the options";
        return false;
      }
      *out = argv[++i];
      return true;
    };
    auto is = [&](const char* opt) {
      std::string o = opt;
      return arg == o || (arg.rfind(o + "=", 0) == 0);
    };
    if (!options_done && args->commands.empty() && arg.size() > 1 && arg[0] == '-') {
      if (arg == "--") {
        options_done = true;
      } else if (arg == "-h" || arg == "--help") {
        args->help = true;
      } else if (arg == "-V" || arg == "--version") {
        args->version = true;
      } else if (is("--format")) {
        std::string f;
        if (!value("--format", &f)) return false;
        Format parsed;
        if (!ParseFormat(f, &parsed)) {
          *error = "unknown format '" + f + "'\nhint: --format takes " + kFormatNames;
          return false;
        }
        args->format = parsed;
      } else if (arg == "-f" || is("--file")) {
        if (!value(arg == "-f" ? "-f" : "--file", &args->command_file)) return false;
      } else if (arg == "--read-only") {
        args->read_only = true;
      } else if (arg == "--bail") {
        args->bail = true;
      } else if (arg == "--timer") {
        args->timer = true;
      } else if (arg == "--replica") {
        if (i + 1 >= argv.size()) {
          *error = "--replica needs a PostgreSQL standby's connection string";
          return false;
        }
        args->replicas.push_back(argv[++i]);
      } else if (arg == "--no-color" || arg == "--no-colour") {
        args->no_color = true;
      } else if (is("--init")) {
        if (!value("--init", &args->init_file)) return false;
      } else if (arg == "-n" || arg == "--no-init") {
        args->no_init = true;
      } else {
        *error = "unknown option '" + arg + "'" + Hint(arg);
        return false;
      }
      continue;
    }
    if (!have_store && args->commands.empty() && args->run_file.empty() && arg == "check" &&
        i + 1 < argv.size()) {
      // mentat check STORE: .check on STORE opened read-only.
      args->store = argv[++i];
      have_store = true;
      args->read_only = true;
      args->commands.push_back(".check");
      continue;
    }
    if (!have_store && args->commands.empty() && args->run_file.empty() && arg == "import" &&
        i + 2 < argv.size()) {
      // mentat import STORE FILE [FLAGS...]: .import FILE FLAGS... on STORE.
      args->store = argv[++i];
      have_store = true;
      std::string cmd = ".import";
      for (++i; i < argv.size(); ++i) {
        const std::string& w = argv[i];
        bool quote = w.find_first_of(" \t\"") != std::string::npos;
        cmd += " " + (quote ? "\"" + w + "\"" : w);
      }
      args->commands.push_back(cmd);
      return true;
    }
    if (!have_store && args->commands.empty() && args->run_file.empty() && arg == "migrate") {
      if (i + 2 >= argv.size()) {
        *error =
            "migrate needs a source and a destination\nhint: mentat migrate SRC DST (each a "
            "file or a postgresql:// name)";
        return false;
      }
      args->migrate_src = argv[++i];
      args->migrate_dst = argv[++i];
      if (i + 1 < argv.size()) {
        *error = "migrate takes two stores, then nothing: '" + argv[i + 1] + "'";
        return false;
      }
      return true;
    }
    if (args->commands.empty() && args->run_file.empty() && arg == "run") {
      if (i + 1 >= argv.size()) {
        *error =
            "run needs a script file\nhint: mentat [STORE] run SCRIPT_FILE (a store named "
            "run is ./run)";
        return false;
      }
      args->run_file = argv[++i];
      continue;
    }
    if (!have_store && args->commands.empty() && args->run_file.empty() && !LooksLikeCommand(arg)) {
      args->store = arg;
      have_store = true;
      continue;
    }
    if (!args->run_file.empty()) {
      *error = "unexpected argument '" + arg + "' after run " + args->run_file +
               "\nhint: mentat [STORE] run SCRIPT_FILE";
      return false;
    }
    // A bare command name takes the arguments that follow it until the next command:
    // `mentat s.db .q '[:find ...]'` is `.q [:find ...]`.
    bool dot_command =
        arg.size() > 1 && arg[0] == '.' && std::isalpha(static_cast<unsigned char>(arg[1]));
    // A bare query is a command of its own, unless it is what .q or .explain was waiting for.
    bool wants_query =
        absorbing && (args->commands.back() == ".q" || args->commands.back() == ".query" ||
                      args->commands.back() == ".explain");
    if (absorbing && !dot_command && (wants_query || !LooksLikeQuery(arg))) {
      const std::string& cmd = args->commands.back();
      std::string name = cmd.substr(0, cmd.find(' '));
      bool file_arg = name == ".open" || name == ".import" || name == ".export" || name == ".read";
      bool quote = file_arg && arg.find_first_of(" \t") != std::string::npos;
      args->commands.back() += " " + (quote ? "\"" + arg + "\"" : arg);
      continue;
    }
    absorbing = arg[0] == '.' && arg.find_first_of(" \t\n") == std::string::npos;
    args->commands.push_back(arg);
  }
  return true;
}

}  // namespace mentat::cli
