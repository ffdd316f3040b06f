// A CLI session: an open store, an output style, and the dot-commands.
//
// The batch mode and the REPL both feed commands to a Session. A command is one line, or
// several lines whose brackets balance; results go to the output stream, errors (with the
// command's name and, for parse errors, the offending line and a caret) to the error
// stream. Not thread-safe.
#pragma once

#include <fstream>
#include <functional>
#include <istream>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "mentat/script.h"
#include "mentat/store.h"
#include "output.h"

namespace mentat::cli {

struct CommandInfo {
  const char* name;     // ".transact"
  const char* alias;    // ".t" or nullptr
  const char* args;     // "EDN"
  const char* summary;  // one line for .help
  const char* details;  // more for .help COMMAND ("" when the summary says it all)
};

// Every command, in help order.
const std::vector<CommandInfo>& Commands();
// The command named `name` (long name or alias, with or without the dot), or nullptr.
const CommandInfo* FindCommand(const std::string& name);

class Session {
 public:
  Session(std::ostream& out, std::ostream& err);
  ~Session();

  // Opens the store at `path` ("" for in-memory), replacing the current one.
  Status Open(const std::string& path);
  // Options for stores opened from now on.
  void set_store_options(const Options& options) { store_options_ = options; }

  // Runs one command. Errors are returned, not printed.
  Status Execute(const std::string& command);
  // Runs one command and prints its error, if any, to the error stream. True on success.
  bool Run(const std::string& command);
  // Runs the commands of `in` (lines joined until brackets balance; blank lines and lines
  // starting with ';' or '#' between commands are skipped) until the end, .exit, Ctrl-C
  // or (with set_bail) the first failure. `source` names the file the commands come from
  // (-f FILE, .read FILE): each error then ends with "  at FILE:LINE".
  // Returns the number of commands that failed.
  int RunStream(std::istream& in, const std::string& source = "");
  // Evaluates the script in the file at `path` (`mentat run FILE`) and prints its value,
  // or its error. True on success.
  bool RunScriptFile(const std::string& path);

  bool exit_requested() const { return exit_; }
  OutputStyle& style() { return style_; }
  void set_format(Format f) { style_.format = f; }
  Format format() const { return style_.format; }
  void set_error_color(bool on) { err_color_ = on; }
  // Show a progress bar on stderr for long commands (when stderr is a terminal).
  void set_progress(bool on) { progress_ = on; }
  void set_timer(bool on) { timer_ = on; }
  // Interactive use: output longer than the terminal goes through $PAGER (default
  // "less -FRX"; PAGER set to "" turns it off), until .pager off.
  void set_pager(bool on) { pager_ = on; }
  // Fit tables to the width of the terminal on standard output, read before each command
  // (the window may have been resized).
  void set_fit_terminal(bool on) { fit_terminal_ = on; }
  // Stop RunStream at the first failing command.
  void set_bail(bool on) { bail_ = on; }
  Store* store() { return store_.get(); }
  const std::string& path() const { return path_; }

  // Called when a command has started, before it runs (tests: a Ctrl-C at that moment).
  void set_before_command_for_test(std::function<void()> f) {
    before_command_for_test_ = std::move(f);
  }
  // Called by .eval just before the interpreter runs (tests: a Ctrl-C at that moment).
  void set_before_eval_for_test(std::function<void()> f) { before_eval_for_test_ = std::move(f); }

  // The error message printed for `st` from the command `command`.
  std::string ErrorText(const std::string& command, const Status& st) const;

 private:
  Status Dispatch(const std::string& name, const std::string& rest, const std::string& command);
  Status Help(const std::string& rest);
  Status Transact(const std::string& rest);
  // Prints a transaction report as .t does (a summary in the table formats).
  void PrintTxReport(const TxReport& r);
  Status Query(const std::string& rest, bool explain);
  Status Pull(const std::string& rest);
  Status Entity(const std::string& rest);
  Status Datoms(const std::string& rest);
  Status Log(const std::string& rest);
  Status Schema(const std::string& rest);
  Status Stats(const std::string& rest);
  Status Check(const std::string& rest);
  Status Vacuum(const std::string& rest);
  Status Tune(const std::string& rest);
  Status Cache(const std::string& rest);
  Status Uncache(const std::string& rest);
  Status Eval(const std::string& rest);
  // Evaluates `source` with the session's interpreter (created on first use, with the
  // open store as `conn`; definitions persist across calls) and prints the last value.
  Status EvalScript(const std::string& source);
  Status Import(const std::string& rest);
  Status Export(const std::string& rest);
  Status Read(const std::string& rest);
  Status FormatCommand(const std::string& rest);
  Status TimerCommand(const std::string& rest);
  // .output [FILE] (every later command's output; no FILE or "stdout": standard output
  // again) and .once FILE (the next command's only).
  Status OutputCommand(const std::string& rest, bool once);
  void RestoreOutput();
  // .width [N]: the widest a table cell prints (0: unlimited).
  Status WidthCommand(const std::string& rest);
  // .pager [on|off]; and showing one command's output `text` through the pager when it
  // is longer than the terminal.
  Status PagerCommand(const std::string& rest);
  void Page(const std::string& text);
  Status RequireStore();
  // A summary: a text line in the table format, else a map (EDN, JSON) or a CSV row.
  void PrintSummary(const std::string& text, const std::vector<std::string>& keys,
                    const std::vector<edn::Value>& values);

  std::ostream& base_out_;  // where output goes without .output/.once
  std::ostream out_;        // base_out_'s buffer, or output_file_'s
  std::ostream& err_;
  std::unique_ptr<std::ofstream> output_file_;  // .output FILE, .once FILE
  bool once_ = false;                           // .once: back to base_out_ after a command
  bool pager_ = false;                          // set_pager, .pager: long output paged
  std::unique_ptr<Store> store_;
  std::unique_ptr<script::Interpreter> interpreter_;  // declared after store_: freed first
  std::string path_;
  Options store_options_;
  OutputStyle style_;
  bool err_color_ = false;
  bool progress_ = false;
  bool timer_ = false;
  bool fit_terminal_ = false;
  bool exit_ = false;
  bool bail_ = false;
  int read_depth_ = 0;
  std::function<void()> before_eval_for_test_;
  std::function<void()> before_command_for_test_;
};

// "error: .transact: 1:5: ..." with, for "LINE:COL: " messages about `text`, the
// offending line and a caret under the column. `color` makes "error:" red.
std::string FormatError(const std::string& command_name, const std::string& text, const Status& st,
                        bool color = false);

}  // namespace mentat::cli
