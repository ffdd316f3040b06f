// The public Interpreter (include/mentat/script.h): reading, the error boundary, output.
#include <map>
#include <new>

#include "mentat/script.h"
#include "mentat/store.h"
#include "script/convert.h"
#include "script/core.h"
#include "script/print.h"
#include "script/store_fns.h"

namespace mentat::script {

struct Interpreter::Impl {
  explicit Impl(Options o)
      : options(std::move(o)), in(Limits{options.max_steps, options.max_depth}) {}

  // Runs `fn` (which evaluates) with the interpreter's heap and step meter current,
  // converting every interpreter exception into a Status.
  template <typename T, typename Fn>
  Result<T> Guard(Fn&& fn) {
    HeapScope scope(&in.heap());
    MeterScope meter(&in.meter());
    try {
      return fn();
    } catch (const ScriptError& e) {
      return ErrorStatus(e.error);
    } catch (const LimitError& e) {
      return e.status;
    } catch (const std::bad_alloc&) {
      return Status::Interrupted("script memory exhausted");
    } catch (const std::exception& e) {
      return Status::Internal(std::string("script: ") + e.what());
    }
  }

  // Runs in a catch handler, where a LimitError would escape: the data is printed briefly
  // and outside the limits (the script has already stopped).
  static Status ErrorStatus(const Val& error) {
    HeapScope no_heap(nullptr);
    MeterScope no_meter(nullptr);
    const ErrorObj* e = error.as<ErrorObj>();
    std::string msg;
    if (e->pos.known()) msg = std::to_string(e->pos.line) + ":" + std::to_string(e->pos.col) + ": ";
    msg += e->message;
    if (e->info && e->data.is(Type::kMap) && e->data.obj()) msg += " " + PrBrief(e->data);
    Code code = e->code == Code::kOk ? Code::kInvalidArgument : e->code;
    return Status(code, msg);
  }

  Result<Val> Run(std::string_view source) {
    edn::ReadOptions ro;
    ro.allow_quote = true;
    ro.script_syntax = true;
    Result<edn::Vec> forms = edn::ReadAll(source, ro);
    if (!forms.ok()) return forms.status();
    return Guard<Val>([&]() -> Result<Val> {
      in.BeginRun();
      Val last;
      for (const edn::Value& form : *forms) last = in.EvalForm(form);
      return last;
    });
  }

  Options options;
  Interp in;
  std::string captured;
  std::map<std::string, Val, std::less<>> applied;  // Apply's functions by source
};

Interpreter::Interpreter(Options options) : impl_(std::make_unique<Impl>(std::move(options))) {
  Interp& in = impl_->in;
  HeapScope scope(&in.heap());
  RegisterCore(in);
  StateOf(in).allow_open = impl_->options.allow_open;
  StateOf(in).read_only = impl_->options.read_only;
  if (impl_->options.output) {
    in.output() = impl_->options.output;
  } else {
    Impl* impl = impl_.get();
    in.output() = [impl](std::string_view text) {
      impl->in.heap().ChargeRaw(static_cast<int64_t>(text.size()));
      impl->captured.append(text);
    };
  }
  in.heap().set_limit(impl_->options.max_memory_bytes);
}

Interpreter::~Interpreter() = default;

Result<edn::Value> Interpreter::Eval(std::string_view source) {
  HeapScope scope(&impl_->in.heap());  // script values must die inside the heap's scope
  Result<Val> v = impl_->Run(source);
  if (!v.ok()) return v.status();
  return impl_->Guard<edn::Value>([&]() -> Result<edn::Value> { return ToEdn(*v); });
}

Result<std::string> Interpreter::EvalToString(std::string_view source) {
  HeapScope scope(&impl_->in.heap());
  Result<Val> v = impl_->Run(source);
  if (!v.ok()) return v.status();
  return impl_->Guard<std::string>([&]() -> Result<std::string> { return PrStr(*v); });
}

Result<edn::Value> Interpreter::Apply(std::string_view fn_source, const Db* db,
                                      const std::vector<edn::Value>& args) {
  HeapScope scope(&impl_->in.heap());
  auto it = impl_->applied.find(fn_source);
  if (it == impl_->applied.end()) {
    Result<Val> f = impl_->Run(fn_source);
    if (!f.ok()) return f.status();
    it = impl_->applied.emplace(std::string(fn_source), *f).first;
  }
  const Val& f = it->second;
  Interp& in = impl_->in;
  return impl_->Guard<edn::Value>([&]() -> Result<edn::Value> {
    in.BeginRun();
    std::vector<Val> av;
    av.reserve(args.size() + 1);
    if (db) av.push_back(HostDb(in, *db));
    for (const edn::Value& a : args) av.push_back(FromEdn(a));
    Val r = in.Apply(f, av.data(), av.size());
    return ToEdn(r, true, "the function's value");
  });
}

void Interpreter::interrupt() {
  impl_->in.RequestInterrupt();
  StateOf(impl_->in).InterruptAll();
}

void Interpreter::SetStore(Store* store, std::string_view name) {
  Interp& in = impl_->in;
  HeapScope scope(&in.heap());
  StateOf(in).default_store = store;
  Val conn = HostConn(in, store);
  if (!name.empty()) {
    Var* var = in.Intern(std::string(name));
    var->value = conn;
    var->bound = true;
  }
}

Status Interpreter::Define(std::string_view name, const edn::Value& value) {
  Interp& in = impl_->in;
  auto defined = impl_->Guard<bool>([&]() -> Result<bool> {
    Val v = FromEdn(value);  // may pass the memory or nesting limit
    Var* var = in.Intern(std::string(name));
    var->value = std::move(v);
    var->bound = true;
    return true;
  });
  return defined.ok() ? Status::OK() : defined.status();
}

std::string Interpreter::TakeOutput() {
  impl_->in.heap().RefundRaw(static_cast<int64_t>(impl_->captured.size()));
  std::string out = std::move(impl_->captured);
  impl_->captured.clear();
  return out;
}

}  // namespace mentat::script
