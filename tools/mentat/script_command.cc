// .eval and `mentat run FILE`: scripts (mentat::script) against the open store.
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "interrupt.h"
#include "mentat/script.h"
#include "session.h"

namespace mentat::cli {

Status Session::EvalScript(const std::string& source) {
  if (!interpreter_) {
    script::Options options;
    options.allow_open = [](const std::string&) { return true; };  // the shell's user's files
    options.output = [this](std::string_view text) { out_ << text; };
    interpreter_ = std::make_unique<script::Interpreter>(std::move(options));
    if (store_) interpreter_->SetStore(store_.get(), "conn");
  }
  // Ctrl-C sets the cancel flag from the signal handler; a watcher turns it into
  // Interpreter::interrupt(), which is not meant to be called from a signal handler.
  std::atomic<bool> done{false};
  std::thread watcher([&] {
    while (!done.load()) {
      if (CancelFlag().load()) {
        interpreter_->interrupt();
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  auto value = interpreter_->Eval(source);
  done.store(true);
  watcher.join();
  out_.flush();
  if (!value.ok()) return value.status();
  PrintValue(out_, style_, *value);
  return Status::OK();
}

Status Session::Eval(const std::string& rest) {
  if (rest.empty()) return Status::InvalidArgument("usage: .eval SCRIPT");
  return EvalScript(rest);
}

bool Session::RunScriptFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    err_ << FormatError("run", "", Status::NotFound("cannot read '" + path + "'"), err_color_)
         << std::endl;
    return false;
  }
  std::stringstream text;
  text << in.rdbuf();
  Status st;
  {
    CommandScope scope(store_.get());
    st = EvalScript(text.str());
  }
  out_.flush();
  if (st.ok()) return true;
  err_ << FormatError("run " + path, text.str(), st, err_color_) << std::endl;
  return false;
}

}  // namespace mentat::cli
