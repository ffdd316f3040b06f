// mentat: the command-line shell. See `mentat --help` and doc/cli.md.
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "args.h"
#include "interrupt.h"
#include "progress.h"
#include "repl.h"
#include "serve.h"
#include "session.h"

int main(int argc, char** argv) {
  using mentat::cli::Args;
  using mentat::cli::Format;
  using mentat::cli::Session;
  std::vector<std::string> argv_strings(argv + 1, argv + argc);
  if (!argv_strings.empty() && argv_strings[0] == "serve") {
    mentat::cli::ServeOptions serve;
    std::string error;
    if (!mentat::cli::ParseServeArgs({argv_strings.begin() + 1, argv_strings.end()}, &serve,
                                     &error)) {
      if (error.empty()) {
        std::cout << mentat::cli::kServeUsage;
        return 0;
      }
      std::cerr << "error: " << error << "\n";
      return 1;
    }
    return mentat::cli::RunServe(serve);
  }
  Args args;
  std::string error;
  if (!mentat::cli::ParseArgs(argv_strings, &args, &error)) {
    std::cerr << "error: " << error << "\n";
    return 1;
  }
  if (args.help) {
    mentat::cli::PrintUsage(std::cout);
    return 0;
  }
  if (args.version) {
    std::cout << "mentat " << MENTAT_VERSION << "\n";
    return 0;
  }

  if (!args.migrate_src.empty()) {
    mentat::cli::Progress bar(isatty(STDERR_FILENO), STDERR_FILENO, "migrate", 0);
    auto report =
        mentat::migrate(args.migrate_src, args.migrate_dst, [&](int64_t done, int64_t total) {
          bar.SetTotal(static_cast<uint64_t>(total));
          bar.Update(static_cast<uint64_t>(done), static_cast<uint64_t>(done));
        });
    bar.Clear();
    if (!report.ok()) {
      std::cerr << "error: " << report.status().message() << "\n";
      return 1;
    }
    std::cout << mentat::edn::Print(report->ToEdn()) << "\n";
    return 0;
  }

  const bool tty_in = isatty(STDIN_FILENO), tty_out = isatty(STDOUT_FILENO);
  const bool repl =
      args.commands.empty() && args.command_file.empty() && args.run_file.empty() && tty_in;
  Session session(std::cout, std::cerr);
  mentat::cli::OutputStyle& style = session.style();
  style.format = args.format.value_or(tty_out ? Format::kTable : Format::kEdn);
  style.color = !args.no_color && mentat::cli::ColorWanted(STDOUT_FILENO);
  style.max_cell = tty_out ? 60 : 0;  // .width: cut cells on a terminal only
  session.set_fit_terminal(tty_out);
  session.set_error_color(!args.no_color && mentat::cli::ColorWanted(STDERR_FILENO));
  session.set_progress(isatty(STDERR_FILENO));
  session.set_timer(args.timer);
  session.set_bail(args.bail);
  mentat::Options store_options;
  store_options.read_only = args.read_only;
  store_options.create = !args.read_only;
  store_options.replicas = args.replicas;
  session.set_store_options(store_options);

  mentat::Status st = session.Open(args.store);
  if (!st.ok()) {
    // Store errors usually name the file already.
    if (!args.store.empty() && st.message().find(args.store) != std::string::npos) {
      std::cerr << "error: " << st.message() << "\n";
    } else {
      std::cerr << "error: cannot open store '" << args.store << "': " << st.message() << "\n";
    }
    return 1;
  }
  // The init file: --init FILE, else ~/.mentatrc when there is one (-n: none), run before
  // anything else, as sqlite3 runs ~/.sqliterc.
  std::string init = args.init_file;
  if (init.empty() && !args.no_init) {
    const char* home = std::getenv("HOME");
    std::string rc = home && *home ? std::string(home) + "/.mentatrc" : "";
    if (!rc.empty() && access(rc.c_str(), R_OK) == 0) init = rc;
  }
  if (!init.empty()) {
    std::ifstream in(init);
    if (!in) {
      std::cerr << "error: cannot read the init file '" << init << "'\n";
      return 1;
    }
    if (session.RunStream(in, init) != 0 && args.bail) return 1;
  }
  if (repl) {
    session.set_pager(tty_out);
    mentat::cli::ReplOptions options;
    options.history_file = mentat::cli::DefaultHistoryFile();
    options.banner = tty_out;
    return mentat::cli::RunRepl(session, options) == 0 ? 0 : 1;
  }

  mentat::cli::InstallInterruptHandler(mentat::cli::InterruptMode::kBatch);
  int failures = 0;
  for (const auto& cmd : args.commands) {
    if (session.exit_requested()) break;
    if (!session.Run(cmd)) {
      ++failures;
      if (args.bail || mentat::cli::CancelFlag().load()) return 1;
    }
  }
  if (!args.run_file.empty() && !session.exit_requested()) {
    if (!session.RunScriptFile(args.run_file)) ++failures;
  }
  if (!args.command_file.empty() && !session.exit_requested()) {
    std::ifstream in(args.command_file);
    if (!in) {
      std::cerr << "error: cannot read '" << args.command_file << "'\n";
      return 1;
    }
    failures += session.RunStream(in, args.command_file);
  } else if (args.commands.empty() && args.run_file.empty()) {
    failures += session.RunStream(std::cin);
  }
  return failures == 0 ? 0 : 1;
}
