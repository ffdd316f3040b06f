// A CLI session: an open store, an output format, and the dot-commands.
#pragma once

#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "mentat/store.h"
#include "output.h"

namespace mentat::cli {

struct CommandInfo {
  const char* name;   // ".transact"
  const char* alias;  // ".t" or nullptr
  const char* args;   // "EDN"
  const char* help;
};

// Every command, in help order.
const std::vector<CommandInfo>& Commands();

class Session {
 public:
  Session(std::ostream& out, std::ostream& err) : out_(out), err_(err) {}

  // Opens the store at `path` ("" for in-memory), replacing the current one.
  Status Open(const std::string& path);
  // Runs one command (a line, or several lines whose brackets balance). Errors are
  // returned (the caller prints them); results go to the output stream.
  Status Execute(const std::string& command);
  bool exit_requested() const { return exit_; }

  void set_format(Format f) { format_ = f; }
  Format format() const { return format_; }
  Store* store() { return store_.get(); }

 private:
  Status Help(const std::string& rest);
  Status Transact(const std::string& rest);
  Status Query(const std::string& rest, bool explain);
  Status Datoms(const std::string& rest);
  Status Schema(const std::string& rest);
  Status RequireStore();

  std::ostream& out_;
  std::ostream& err_;
  std::unique_ptr<Store> store_;
  std::string path_;
  Format format_ = Format::kEdn;
  bool timer_ = false;
  bool exit_ = false;
};

// "error: .transact: 1:5: ..." with, for parse errors, the offending line and a caret
// under the column.
std::string FormatError(const std::string& command_name, const std::string& text,
                        const Status& st);

}  // namespace mentat::cli
