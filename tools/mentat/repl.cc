#include "repl.h"

// readline.h needs stdio.h first.
#include <stdio.h>
// clang-format off
#include <readline/readline.h>
#include <readline/history.h>
// clang-format on
#include <signal.h>
#include <sys/select.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <set>

#include "input.h"
#include "interrupt.h"

namespace mentat::cli {

std::string DefaultHistoryFile() {
  if (const char* h = std::getenv("MENTAT_HISTORY")) return h;
  const char* home = std::getenv("HOME");
  if (!home || !*home) return "";
  return std::string(home) + "/.mentat_history";
}

namespace {

const char* const kFormats[] = {"table", "edn", "json", "csv"};
const char* const kQueryWords[] = {":find",
                                   ":where",
                                   ":in",
                                   ":with",
                                   ":keys",
                                   ":strs",
                                   ":syms",
                                   ":db/id",
                                   ":db/add",
                                   ":db/retract",
                                   ":db/retractEntity",
                                   ":db.fn/retractEntity",
                                   ":db/cas",
                                   ":db.fn/cas",
                                   ":as",
                                   ":limit",
                                   ":default"};

}  // namespace

Completion Complete(Session& session, std::string_view before, std::string_view word) {
  Completion out;
  std::set<std::string> cands;
  auto add = [&](const std::string& c) {
    if (c.size() >= word.size() && c.compare(0, word.size(), word) == 0) cands.insert(c);
  };
  std::string name, rest;
  SplitCommand(before, &name, &rest);
  if (name.empty()) {
    if (word.empty() || word[0] == '.') {
      for (const auto& c : Commands()) {
        add(c.name);
        if (c.alias) add(c.alias);
      }
    }
  } else {
    const CommandInfo* info = name[0] == '.' ? FindCommand(name) : nullptr;
    std::string cmd = info ? info->name : "";
    bool first_arg = rest.empty();
    bool option = word.size() >= 1 && word[0] == '-';
    if (option && cmd == ".import") {
      for (const char* o : {"--csv", "--edn", "--batch"}) add(o);
    } else if (option && cmd == ".export") {
      for (const char* o : {"--since", "--batch"}) add(o);
    } else if (cmd == ".open" || cmd == ".read" || cmd == ".import" || cmd == ".export") {
      out.files = true;
      return out;
    } else if (cmd == ".format" && first_arg) {
      for (const char* f : kFormats) add(f);
    } else if (cmd == ".timer" && first_arg) {
      add("on");
      add("off");
    } else if (cmd == ".tune" && first_arg) {
      for (const char* t : {"dry", "adaptive", "schema", "off"}) add(t);
    } else if (cmd == ".help" && first_arg) {
      for (const auto& c : Commands()) {
        add(c.name);
        add(c.name + 1);
      }
    } else if (cmd == ".datoms" && first_arg) {
      for (const char* i : {":eavt", ":aevt", ":avet", ":vaet"}) add(i);
    }
    if (!word.empty() && word[0] == ':' && cmd != ".format" && cmd != ".timer") {
      if (cmd.empty() || cmd == ".query" || cmd == ".explain" || cmd == ".pull" ||
          cmd == ".transact")
        for (const char* w : kQueryWords) add(w);
      if (Store* store = session.store()) {
        auto schema = store->schema();
        bool reverse = word.find("/_") != std::string_view::npos;
        for (const auto& [e, ident] : schema->idents()) {
          add(":" + ident);
          const Attribute* a = schema->attribute(e);
          size_t slash = ident.find('/');
          if (reverse && a && a->type == ValueType::kRef && slash != std::string::npos)
            add(":" + ident.substr(0, slash + 1) + "_" + ident.substr(slash + 1));
        }
      }
    }
  }
  out.words.assign(cands.begin(), cands.end());
  return out;
}

namespace {

// State shared with readline's C callbacks (one REPL per process).
struct Repl {
  Session* session = nullptr;
  std::string history_file;
  std::string pending;  // lines of an incomplete command
  std::string ready;    // a complete command to run
  bool have_ready = false;
  bool eof = false;
  std::vector<std::string> matches;
};
Repl* g_repl = nullptr;

char* MatchGenerator(const char*, int state) {
  static size_t next = 0;
  if (state == 0) next = 0;
  if (next >= g_repl->matches.size()) return nullptr;
  return strdup(g_repl->matches[next++].c_str());
}

char** AttemptCompletion(const char* text, int start, int) {
  std::string before = g_repl->pending.empty() ? "" : g_repl->pending + "\n";
  before.append(rl_line_buffer, start);
  Completion c = Complete(*g_repl->session, before, text);
  if (c.files) {
    rl_attempted_completion_over = 0;  // readline's file name completion
    return nullptr;
  }
  rl_attempted_completion_over = 1;
  if (c.words.empty()) return nullptr;
  g_repl->matches = std::move(c.words);
  return rl_completion_matches(text, MatchGenerator);
}

void AddHistory(const std::string& command) {
  std::string flat = FlattenForHistory(command);
  if (flat.empty()) return;
  HIST_ENTRY* last = history_length > 0 ? history_get(history_base + history_length - 1) : nullptr;
  if (last && flat == last->line) return;
  add_history(flat.c_str());
  if (!g_repl->history_file.empty()) append_history(1, g_repl->history_file.c_str());
}

void OnLine(char* line) {
  if (!line) {
    g_repl->eof = true;
    rl_callback_handler_remove();
    return;
  }
  std::string text = line;
  std::free(line);
  Repl& r = *g_repl;
  if (r.pending.empty()) {
    size_t b = text.find_first_not_of(" \t\r");
    if (b == std::string::npos) return;
  }
  r.pending += r.pending.empty() ? text : "\n" + text;
  if (!IsComplete(r.pending)) {
    rl_set_prompt(kContinuationPrompt);
    return;
  }
  AddHistory(r.pending);
  r.ready = std::move(r.pending);
  r.pending.clear();
  r.have_ready = true;
  rl_callback_handler_remove();  // the command's output comes before the next prompt
}

// Waits for input on stdin or for SIGINT without losing a signal that arrives just
// before the wait. Returns false on SIGINT.
bool WaitForInput() {
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigprocmask(SIG_BLOCK, &block, &old);
  bool interrupted = TakePromptInterrupt();
  if (!interrupted) {
    fd_set fds;
    FD_ZERO(&fds);
    FD_SET(STDIN_FILENO, &fds);
    int r = pselect(STDIN_FILENO + 1, &fds, nullptr, nullptr, nullptr, &old);
    if (r < 0 && errno == EINTR) interrupted = TakePromptInterrupt();
  }
  sigprocmask(SIG_SETMASK, &old, nullptr);
  return !interrupted;
}

}  // namespace

int RunRepl(Session& session, const ReplOptions& options) {
  Repl repl;
  repl.session = &session;
  repl.history_file = options.history_file;
  g_repl = &repl;
  InstallInterruptHandler(InterruptMode::kRepl);

  rl_readline_name = "mentat";
  rl_catch_signals = 0;  // SIGINT is ours
  rl_attempted_completion_function = AttemptCompletion;
  static char kBreaks[] = " \t\n\"()[]{},'`@~^";
  rl_completer_word_break_characters = kBreaks;
  rl_basic_word_break_characters = kBreaks;
  using_history();
  if (!repl.history_file.empty()) {
    if (read_history(repl.history_file.c_str()) != 0) write_history(repl.history_file.c_str());
  }

  if (options.banner) {
    std::cout << "mentat " << MENTAT_VERSION << " - "
              << (session.path().empty() ? "in-memory store" : session.path())
              << "\nEnter .help for the commands, Ctrl-D to leave.\n"
              << std::flush;
  }
  int failures = 0;
  rl_callback_handler_install(kPrompt, OnLine);
  while (!repl.eof && !session.exit_requested()) {
    if (!WaitForInput()) {
      // Ctrl-C at the prompt: drop the input, start a fresh prompt.
      rl_replace_line("", 0);
      rl_callback_sigcleanup();
      rl_callback_handler_remove();
      std::fputs("^C\n", stdout);
      std::fflush(stdout);
      repl.pending.clear();
      rl_callback_handler_install(kPrompt, OnLine);
      continue;
    }
    rl_callback_read_char();
    if (repl.have_ready) {
      repl.have_ready = false;
      if (!session.Run(repl.ready)) ++failures;
      std::cout.flush();
      if (session.exit_requested()) break;
      rl_callback_handler_install(kPrompt, OnLine);
    }
  }
  if (repl.eof) {
    if (!repl.pending.empty()) {
      std::cerr << FormatError(
                       "", "",
                       Status::InvalidArgument("the last command was incomplete (unbalanced "
                                               "brackets) and did not run"))
                << "\n";
      ++failures;
    }
    std::fputs("\n", stdout);
  } else {
    rl_callback_handler_remove();
  }
  if (!repl.history_file.empty()) history_truncate_file(repl.history_file.c_str(), 10000);
  g_repl = nullptr;
  return failures;
}

}  // namespace mentat::cli
