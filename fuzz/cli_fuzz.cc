// Fuzz target: the CLI's command interpreter (tools/mentat Session) on an in-memory
// store: command splitting, bracket balancing, every command's argument parsing and the
// output formats.
//
// The input is a script, one command per line (as the CLI reads them). Commands that
// touch the file system (.open, .import, .export, .read, .save ...) are skipped: only the
// commands in kAllowed run. Invariants: never a crash.
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>

#include "fuzz_store.h"
#include "session.h"

namespace {

const char* kAllowed[] = {".transact", ".t",      ".query",  ".q",    ".explain",
                          ".datoms",   ".schema", ".format", ".help", ".pull",
                          ".entity",   ".timer",  ".with"};

bool Allowed(const std::string& cmd) {
  size_t b = cmd.find_first_not_of(" \t\r");
  if (b == std::string::npos) return true;
  if (cmd[b] != '.') return true;  // bare EDN: a query or an error, never a file
  size_t e = cmd.find_first_of(" \t\r\n", b);
  std::string name = cmd.substr(b, e == std::string::npos ? std::string::npos : e - b);
  for (const char* a : kAllowed)
    if (name == a) return true;
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 8 * 1024) return 0;
  std::ostringstream out, err;
  mentat::cli::Session session(out, err);
  if (!session.Open("").ok()) mentat::fuzz::Fail("cannot open an in-memory session");
  (void)session.Execute(std::string(".transact ") + mentat::fuzz::kFuzzSchema);
  std::string_view text(reinterpret_cast<const char*>(data), size);
  size_t pos = 0;
  int commands = 0;
  while (pos <= text.size() && commands < 64) {
    size_t nl = text.find('\n', pos);
    std::string cmd(
        text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos));
    pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
    if (!Allowed(cmd)) continue;
    (void)session.Execute(cmd);
    ++commands;
  }
  return 0;
}
