// The interactive shell: readline line editing, a persistent history file, commands that
// continue over lines until their brackets balance, tab completion of commands, options
// and idents, Ctrl-C to cancel the input or interrupt the running command, Ctrl-D to
// leave.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "session.h"

namespace mentat::cli {

inline constexpr const char* kPrompt = "mentat> ";
inline constexpr const char* kContinuationPrompt = "   ...> ";

struct ReplOptions {
  std::string history_file;  // "" keeps no history file
  bool banner = true;
};

// $MENTAT_HISTORY when set ("" turns the history file off), else ~/.mentat_history.
std::string DefaultHistoryFile();

// Runs the shell on the terminal (stdin and stdout) until .exit or Ctrl-D. Installs the
// REPL's SIGINT handler. Returns the number of commands that failed.
int RunRepl(Session& session, const ReplOptions& options);

// What to complete, for the word `word` typed after `before` (the command so far,
// including earlier lines of a multi-line command).
struct Completion {
  std::vector<std::string> words;  // candidates that start with `word`, sorted
  bool files = false;              // complete file names instead
};
Completion Complete(Session& session, std::string_view before, std::string_view word);

}  // namespace mentat::cli
