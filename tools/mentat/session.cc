// Session core: the command table, dispatch, errors, and the commands that only change
// the session (.open, .format, .timer, .help, .read, .exit). The data commands are in
// commands.cc, .import and .export in transfer.cc.
#include "session.h"

#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "input.h"
#include "interrupt.h"

namespace mentat::cli {

const std::vector<CommandInfo>& Commands() {
  static const std::vector<CommandInfo> kCommands = {
      {".open", nullptr, "PATH", "open (or create) the store at PATH",
       "Closes the current store. An empty PATH (\"\") or :memory: opens an in-memory store."},
      {".close", nullptr, "", "close the store (other commands then need .open)",
       "As in the Rust mentat shell. .open PATH (or .open :memory:) opens another."},
      {".transact", ".t", "EDN", "transact EDN transaction data and print the report",
       "EDN is a vector of entity maps and [:db/add e a v] / [:db/retract e a v] forms.\n"
       "Example: .t [{:db/id \"a\" :person/name \"Ada\"}]"},
      {".query", ".q", "QUERY [OPTIONS_JSON]", "run a Datalog query",
       "OPTIONS_JSON: {\"inputs\": [...], \"asOf\": t, \"since\": t, \"history\": true,\n"
       "\"timeout\": ms, \"planner\": false}. A bare [:find ...] runs as a query too.\n"
       "Example: .q [:find ?n :in $ ?min :where [?p :person/age ?a] [(> ?a ?min)]\n"
       "             [?p :person/name ?n]] {\"inputs\": [30]}"},
      {".explain", nullptr, "QUERY [OPTIONS_JSON]", "show how a query is planned and run",
       "Also .explain_query and .eq (as in the Rust mentat shell)."},
      {".pull", nullptr, "PATTERN EID", "pull a pattern for an entity",
       "EID is an entity id, an ident or a lookup ref.\n"
       "Example: .pull [:person/name {:person/friend [:person/name]}] [:person/name \"Ada\"]"},
      {".entity", nullptr, "EID", "print an entity's attributes",
       "EID is an entity id, an ident or a lookup ref."},
      {".datoms", nullptr, "INDEX [COMPONENTS...]",
       "print the datoms of an index whose leading components match",
       "INDEX is :eavt, :aevt, :avet or :vaet. Example: .datoms :avet :person/name \"Ada\""},
      {".log", nullptr, "[FROM [TO]]", "print the transactions from FROM up to TO (the log)",
       "FROM and TO are tx ids, t values (1 is the first transaction), #inst instants or\n"
       "nil (open); FROM is included, TO is not (Datomic's tx-range). Each datom is a\n"
       "row [t e a v tx added]. Example: .log 1 3"},
      {".schema", nullptr, "[ATTR]", "print the schema (or one attribute)", ""},
      {".stats", nullptr, "", "print datom counts per attribute and the store's size", ""},
      {".check", nullptr, "", "check the store for damage and broken invariants",
       "Runs SQLite's integrity check and mentat's own checks (Store::check): every\n"
       "datom's attribute exists and its value has the attribute's type, each datom is in\n"
       "its attribute index, partition marks lie above every id in use, history intervals\n"
       "are ordered and disjoint from the current datoms, cardinality and uniqueness hold,\n"
       "statistics and fulltext rows match. Prints what was checked, or each problem and\n"
       "fails. Also `mentat check STORE` (read-only)."},
      {".vacuum", nullptr, "", "rewrite the store file without free pages (after excision)",
       "Checkpoints and truncates the WAL, then runs SQLite's VACUUM (Store::vacuum): the\n"
       "bytes of excised datoms ({:db/excise e}, doc/transactions.md) are then gone from\n"
       "the file. Fails while another process uses the store."},
      {".tune", nullptr, "[dry|adaptive|schema|off]", "tune the value indexes",
       "Runs one value-index tuning pass and prints what it did: adaptive indexes created\n"
       "for attributes that queries filter by value often, idle ones dropped\n"
       "(doc/performance.md). dry (or --dry-run) only shows what would change; adaptive,\n"
       "schema and off set the index mode (also MENTAT_AUTO_INDEX), then tune."},
      {".cache", nullptr, "[ATTR [forward]]", "cache an attribute's values in memory",
       "Keeps every current value of a cardinality-one attribute in memory, so that\n"
       "queries that have found their entities read it without an index probe each\n"
       "(doc/performance.md, \"Attribute caches\"); answers are unchanged. Without ATTR,\n"
       "lists the cached attributes. For this session's store only. Also .uncache ATTR."},
      {".uncache", nullptr, "ATTR", "stop caching an attribute", ""},
      {".import", nullptr, "FILE [OPTIONS]", "load an EDN, CSV, JSON or JSON Lines file",
       "EDN: one transaction per top-level form. CSV (*.csv, --csv), JSON (*.json, --json:\n"
       "an array of objects) and JSON Lines (*.jsonl, --jsonl): one entity per record,\n"
       "columns naming attributes; new attributes are created with types read from the\n"
       "values. --as NS (unqualified columns are :NS/col), --map COL=ATTR, --unique COL\n"
       "(an identity: importing again upserts), --ref COL=ATTR (cells are lookup refs on\n"
       "ATTR), --dry-run (print the schema and the first entities, write nothing),\n"
       "--on-error skip|abort, --batch N (records per transaction, default 1000). Also\n"
       "mentat import STORE FILE [OPTIONS]. Ctrl-C stops after the running transaction;\n"
       "every committed transaction stays (doc/cli.md \"Import\")."},
      {".export", nullptr, "[FILE] [--since T] [--batch N]",
       "dump the store as EDN that .import reads back",
       "The schema first, then the entities with tempids, in transactions of about N\n"
       "datoms (default 10000). Without FILE, or with FILE -, writes to the output (also\n"
       ".dump). --since T (a transaction id or an instant) dumps only the current datoms\n"
       "asserted after T."},
      {".eval", nullptr, "SCRIPT", "evaluate a script and print its value",
       "A Clojure-flavoured script (doc/script.md); `conn` is the open store, definitions\n"
       "persist. Example: .eval (mentat.store/q (mentat.store/db conn)\n"
       "                          '[:find (count ?e) . :where [?e :db/ident]])"},
      {".read", nullptr, "FILE", "run the commands in FILE", ""},
      {".format", nullptr, "[FORMAT]", "set (or show) the output format",
       "FORMAT: table, edn, json, jsonl, csv, markdown or line (doc/cli.md \"Output\").\n"
       "Also .mode (as in sqlite3)."},
      {".timer", nullptr, "[on|off]", "print how long each command took", ""},
      {".output", nullptr, "[FILE]", "send output to FILE (no FILE: standard output)",
       "Every later command's output goes to FILE (created or truncated), until .output\n"
       "without FILE (or .output stdout). Errors still go to standard error."},
      {".once", nullptr, "FILE", "send the next command's output to FILE", ""},
      {".pager", nullptr, "[on|off]", "page long output in the interactive shell",
       "In the interactive shell, output longer than the terminal goes through $PAGER\n"
       "(default less -FRX; PAGER=\"\" turns it off). .pager off prints it directly."},
      {".width", nullptr, "[N]", "set (or show) the widest a table cell prints",
       "Cells wider than N characters are cut with '…' in the table, markdown and line\n"
       "formats; 0 is unlimited. Default: 60 on a terminal, unlimited when piped."},
      {".help", nullptr, "[COMMAND]", "list the commands, or describe one", ""},
      {".exit", ".quit", "", "leave (Ctrl-D does too)", "Also .e (as in the Rust mentat shell)."},
  };
  return kCommands;
}

const CommandInfo* FindCommand(const std::string& name) {
  std::string n = !name.empty() && name[0] != '.' ? "." + name : name;
  // Names users of sqlite3 and of the Rust mentat shell type out of habit.
  static const std::pair<const char*, const char*> kMoreAliases[] = {
      {".mode", ".format"}, {".e", ".exit"}, {".explain_query", ".explain"},
      {".eq", ".explain"},  {".?", ".help"}, {".dump", ".export"},
  };
  for (const auto& [alias, target] : kMoreAliases) {
    if (n == alias) n = target;
  }
  for (const auto& c : Commands()) {
    if (n == c.name || (c.alias && n == c.alias)) return &c;
  }
  return nullptr;
}

std::string FormatError(const std::string& command_name, const std::string& text, const Status& st,
                        bool color) {
  std::string msg = std::string(Red(color)) + "error:" + Reset(color) + " ";
  if (!command_name.empty()) msg += command_name + ": ";
  msg += st.message().empty() ? st.ToString() : st.message();
  unsigned line = 0, col = 0;
  if (ErrorPosition(st.message(), &line, &col)) {
    std::string caret = CaretLines(text, line, col);
    if (!caret.empty()) msg += "\n" + caret;
  }
  return msg;
}

Session::Session(std::ostream& out, std::ostream& err)
    : base_out_(out), out_(out.rdbuf()), err_(err) {}

Session::~Session() = default;

Status Session::Open(const std::string& path) {
  std::string p = path == ":memory:" ? "" : path;
  auto s = Store::open(p, store_options_);
  if (!s.ok()) return s.status();
  SetInterruptStore(nullptr);  // the old store is about to close
  // The script interpreter's values (conn, db values, definitions holding them) refer to
  // the old store: a fresh interpreter is made for the new one on the next .eval.
  interpreter_.reset();
  store_ = std::move(*s);
  path_ = p;
  SetInterruptStore(store_.get());
  return Status::OK();
}

Status Session::RequireStore() {
  if (!store_) return Status::InvalidArgument("no store is open (use .open PATH)");
  return Status::OK();
}

std::string Session::ErrorText(const std::string& command, const Status& st) const {
  std::string name, rest;
  SplitCommand(command, &name, &rest);
  if (LooksLikeQuery(command)) return FormatError(".query", command, st, err_color_);
  if (name.empty() || name[0] != '.') return FormatError("", command, st, err_color_);
  return FormatError(name, rest, st, err_color_);
}

bool Session::Run(const std::string& command) {
  Status st = Execute(command);
  if (st.ok()) return true;
  out_.flush();
  err_ << ErrorText(command, st) << std::endl;
  return false;
}

Status Session::Execute(const std::string& command) {
  std::string name, rest;
  SplitCommand(command, &name, &rest);
  if (name.empty()) return Status::OK();
  if (LooksLikeQuery(command)) {
    name = ".query";
    rest = command;
  }
  if (fit_terminal_) style_.max_width = TerminalWidth(STDOUT_FILENO);
  auto start = std::chrono::steady_clock::now();
  Status st;
  {
    CommandScope scope(store_.get());
    if (before_command_for_test_) before_command_for_test_();
    // Paged: the output is gathered and shown at the end (not for the commands that
    // move the output themselves).
    const CommandInfo* info = FindCommand(name);
    bool paging =
        pager_ && !output_file_ && info != FindCommand(".output") && info != FindCommand(".once");
    std::ostringstream paged;
    if (paging) out_.rdbuf(paged.rdbuf());
    st = Dispatch(name, rest, command);
    if (paging) {
      out_.flush();
      if (!output_file_) out_.rdbuf(base_out_.rdbuf());
      Page(paged.str());
    }
  }
  out_.flush();
  if (once_ && FindCommand(name) != FindCommand(".once")) RestoreOutput();
  if (timer_ && name != ".timer") {
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    char buf[64];
    std::snprintf(buf, sizeof buf, "time: %.3f ms\n", ms);
    err_ << buf << std::flush;
  }
  return st;
}

Status Session::Dispatch(const std::string& name, const std::string& rest,
                         const std::string& command) {
  const CommandInfo* info = name[0] == '.' ? FindCommand(name) : nullptr;
  if (!info) {
    if (name[0] == '[' || name[0] == '{' || name[0] == '(')
      return Status::InvalidArgument("'" + FlattenForHistory(command).substr(0, 40) +
                                     "' is not a command (queries go after .q, transactions "
                                     "after .t)");
    // Hints: the commands that start with what was typed, else those a typo away.
    std::string hint;
    for (int pass = 0; pass < 2 && hint.empty(); ++pass) {
      for (const auto& c : Commands()) {
        std::string n = c.name;
        bool near = pass == 0 ? name.size() > 1 && n.rfind(name, 0) == 0
                              : EditDistance(name, n) <= std::max<size_t>(1, name.size() / 4);
        if (near) hint += (hint.empty() ? "" : ", ") + n;
      }
    }
    return Status::InvalidArgument("unknown command '" + name + "' (" +
                                   (hint.empty() ? "try .help" : "did you mean " + hint + "?") +
                                   ")");
  }
  std::string cmd = info->name;
  if (cmd == ".help") return Help(rest);
  if (cmd == ".exit") {
    exit_ = true;
    return Status::OK();
  }
  if (cmd == ".open") {
    auto words = SplitWords(rest);
    if (words.size() != 1) return Status::InvalidArgument("usage: .open PATH");
    return Open(words[0]);
  }
  if (cmd == ".close") {
    if (!rest.empty()) return Status::InvalidArgument("usage: .close");
    SetInterruptStore(nullptr);
    interpreter_.reset();  // its values refer to the store
    store_.reset();
    path_.clear();
    return Status::OK();
  }
  if (cmd == ".transact") return Transact(rest);
  if (cmd == ".query") return Query(rest, false);
  if (cmd == ".explain") return Query(rest, true);
  if (cmd == ".pull") return Pull(rest);
  if (cmd == ".entity") return Entity(rest);
  if (cmd == ".datoms") return Datoms(rest);
  if (cmd == ".log") return Log(rest);
  if (cmd == ".schema") return Schema(rest);
  if (cmd == ".stats") return Stats(rest);
  if (cmd == ".check") return Check(rest);
  if (cmd == ".vacuum") return Vacuum(rest);
  if (cmd == ".tune") return Tune(rest);
  if (cmd == ".cache") return Cache(rest);
  if (cmd == ".uncache") return Uncache(rest);
  if (cmd == ".eval") return Eval(rest);
  if (cmd == ".import") return Import(rest);
  if (cmd == ".export") return Export(rest);
  if (cmd == ".read") return Read(rest);
  if (cmd == ".format") return FormatCommand(rest);
  if (cmd == ".timer") return TimerCommand(rest);
  if (cmd == ".output") return OutputCommand(rest, false);
  if (cmd == ".once") return OutputCommand(rest, true);
  if (cmd == ".width") return WidthCommand(rest);
  if (cmd == ".pager") return PagerCommand(rest);
  return Status::Internal("command " + cmd + " has no handler");
}

int Session::RunStream(std::istream& in, const std::string& source) {
  int failures = 0;
  std::string pending, line;
  size_t line_no = 0, start_line = 0;
  // Runs `pending`; a failure's message gets, for a named file, the file and the line where
  // the error is (the position in the message counts from the command's first line).
  auto run = [&]() {
    Status st = Execute(pending);
    if (st.ok()) return true;
    out_.flush();
    std::string text = ErrorText(pending, st);
    if (!source.empty()) {
      unsigned err_line = 0, err_col = 0;
      size_t at = start_line;
      size_t lines = 1 + std::count(pending.begin(), pending.end(), '\n');
      // (A script error may point into a function another command defined: no offset.)
      if (ErrorPosition(st.message(), &err_line, &err_col) && err_line > 0 && err_line <= lines)
        at += err_line - 1;
      text += "\n  at " + source + ":" + std::to_string(at);
    }
    err_ << text << std::endl;
    return false;
  };
  while (!exit_ && std::getline(in, line)) {
    ++line_no;
    if (pending.empty()) {
      size_t b = line.find_first_not_of(" \t\r");
      if (b == std::string::npos || line[b] == ';' || line[b] == '#') continue;
      start_line = line_no;
    }
    pending += pending.empty() ? line : "\n" + line;
    if (!IsComplete(pending)) continue;
    bool ok = run();
    pending.clear();
    if (!ok) {
      ++failures;
      if (bail_) return failures;
    }
    if (CancelFlag().load()) return failures + 1;  // Ctrl-C stops the batch
  }
  if (!pending.empty() && !exit_ && !run()) ++failures;  // fails: unbalanced
  return failures;
}

Status Session::Help(const std::string& rest) {
  if (!rest.empty()) {
    const CommandInfo* c = FindCommand(rest);
    if (!c) return Status::InvalidArgument("no command '" + rest + "' (try .help)");
    out_ << c->name << (c->alias ? std::string(", ") + c->alias : "") << (*c->args ? " " : "")
         << c->args << "\n  " << c->summary << "\n";
    std::string details = c->details;
    size_t start = 0;
    while (start < details.size()) {
      size_t end = details.find('\n', start);
      if (end == std::string::npos) end = details.size();
      out_ << "  " << details.substr(start, end - start) << "\n";
      start = end + 1;
    }
    return Status::OK();
  }
  for (const auto& c : Commands()) {
    std::string head = std::string(c.name) + (c.alias ? std::string(", ") + c.alias : "") +
                       (*c.args ? " " : "") + c.args;
    out_ << head << std::string(head.size() < 40 ? 40 - head.size() : 1, ' ') << c.summary << "\n";
  }
  return Status::OK();
}

Status Session::FormatCommand(const std::string& rest) {
  if (rest.empty()) {
    out_ << FormatName(style_.format) << "\n";
    return Status::OK();
  }
  Format f;
  if (!ParseFormat(rest, &f))
    return Status::InvalidArgument("unknown format '" + rest + "' (" + std::string(kFormatNames) +
                                   ")");
  style_.format = f;
  return Status::OK();
}

Status Session::TimerCommand(const std::string& rest) {
  if (rest.empty()) {
    out_ << (timer_ ? "on" : "off") << "\n";
  } else if (rest == "on") {
    timer_ = true;
  } else if (rest == "off") {
    timer_ = false;
  } else {
    return Status::InvalidArgument("usage: .timer on|off");
  }
  return Status::OK();
}

void Session::RestoreOutput() {
  out_.flush();
  out_.rdbuf(base_out_.rdbuf());
  output_file_.reset();
  once_ = false;
}

Status Session::OutputCommand(const std::string& rest, bool once) {
  auto words = SplitWords(rest);
  if (words.size() > 1)
    return Status::InvalidArgument(once ? "usage: .once FILE" : "usage: .output [FILE]");
  if (words.empty() || (!once && (words[0] == "stdout" || words[0] == "-"))) {
    if (once) return Status::InvalidArgument("usage: .once FILE");
    RestoreOutput();
    return Status::OK();
  }
  auto file = std::make_unique<std::ofstream>(words[0], std::ios::out | std::ios::trunc);
  if (!*file) return Status::Io("cannot write '" + words[0] + "'");
  RestoreOutput();
  output_file_ = std::move(file);
  out_.rdbuf(output_file_->rdbuf());
  once_ = once;
  return Status::OK();
}

Status Session::PagerCommand(const std::string& rest) {
  if (rest.empty()) {
    out_ << (pager_ ? "on" : "off") << "\n";
  } else if (rest == "on" || rest == "off") {
    pager_ = rest == "on";
  } else {
    return Status::InvalidArgument("usage: .pager on|off");
  }
  return Status::OK();
}

void Session::Page(const std::string& text) {
  size_t lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
  struct winsize ws {};
  size_t rows = ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 ? ws.ws_row : 0;
  const char* env = std::getenv("PAGER");
  std::string cmd = env ? env : "less -FRX";
  if (rows == 0 || lines < rows || cmd.empty()) {
    base_out_ << text;
    return;
  }
  base_out_.flush();
  // A pager quit before the end closes the pipe: not a reason to die of SIGPIPE.
  struct sigaction ignore {
  }, old{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &old);
  FILE* p = popen(cmd.c_str(), "w");
  if (!p) {
    base_out_ << text;
  } else {
    std::fwrite(text.data(), 1, text.size(), p);
    pclose(p);
  }
  sigaction(SIGPIPE, &old, nullptr);
}

Status Session::WidthCommand(const std::string& rest) {
  if (rest.empty()) {
    out_ << style_.max_cell << "\n";
    return Status::OK();
  }
  char* end = nullptr;
  long long n = std::strtoll(rest.c_str(), &end, 10);
  if (!end || *end != '\0' || n < 0 || n > 1000000)
    return Status::InvalidArgument("usage: .width N (a number of characters; 0: unlimited)");
  style_.max_cell = static_cast<size_t>(n);
  return Status::OK();
}

Status Session::Read(const std::string& rest) {
  auto words = SplitWords(rest);
  if (words.size() != 1) return Status::InvalidArgument("usage: .read FILE");
  if (read_depth_ >= 16) return Status::InvalidArgument(".read nested too deeply");
  std::ifstream in(words[0]);
  if (!in) return Status::NotFound("cannot read '" + words[0] + "'");
  ++read_depth_;
  int failures = RunStream(in, words[0]);
  --read_depth_;
  if (failures > 0)
    return Status::InvalidArgument(std::to_string(failures) +
                                   (failures == 1 ? " command" : " commands") + " in '" + words[0] +
                                   "' failed");
  return Status::OK();
}

void Session::PrintSummary(const std::string& text, const std::vector<std::string>& keys,
                           const std::vector<edn::Value>& values) {
  if (style_.format == Format::kTable) {
    out_ << text << "\n";
    return;
  }
  if (style_.format == Format::kCsv) {
    PrintRows(out_, style_, keys, {values}, edn::Value());
    return;
  }
  edn::MapEntries m;
  for (size_t i = 0; i < keys.size() && i < values.size(); ++i)
    m.emplace_back(edn::Value::Keyword(keys[i]), values[i]);
  PrintValue(out_, style_, edn::Value::Map(std::move(m)));
}

}  // namespace mentat::cli
