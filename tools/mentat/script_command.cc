// .eval and `mentat run FILE`: scripts (mentat::script) against the open store.
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
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
    options.read_only = store_options_.read_only;                  // --read-only: no path writes
    options.output = [this](std::string_view text) { out_ << text; };
    interpreter_ = std::make_unique<script::Interpreter>(std::move(options));
    if (store_) interpreter_->SetStore(store_.get(), "conn");
  }
  // Ctrl-C sets the cancel flag from the signal handler; a watcher turns it into
  // Interpreter::interrupt(), which is not meant to be called from a signal handler.
  // Interpreter::interrupt() only stops an evaluation that has started (one requested
  // while the source is still being read is forgotten when the run begins), so the
  // watcher repeats it until the evaluation returns.
  if (CancelFlag().load()) return Status::Interrupted("script interrupted");
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::thread watcher([&] {
    std::unique_lock<std::mutex> lock(mu);
    while (!done) {
      if (CancelFlag().load()) interpreter_->interrupt();
      cv.wait_for(lock, std::chrono::milliseconds(20));
    }
  });
  if (before_eval_for_test_) before_eval_for_test_();
  auto value = interpreter_->Eval(source);
  {
    std::lock_guard<std::mutex> lock(mu);
    done = true;
  }
  cv.notify_one();
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
