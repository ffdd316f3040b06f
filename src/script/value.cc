// Heap accounting, iterative freeing, and the basic Val constructors.
#include "script/value.h"

#include <pthread.h>

#include <algorithm>

#include "script/coll.h"

namespace mentat::script {

namespace {

thread_local Heap* tls_heap = nullptr;
thread_local Meter* tls_meter = nullptr;
thread_local Meter tls_idle_meter;  // charged outside the interpreter; never stops anything

// Objects whose refcount reached zero while another object was being freed. Draining it
// in a loop keeps freeing iterative however deep the structure is.
struct FreeQueue {
  bool draining = false;
  std::vector<Obj*> pending;
};
thread_local FreeQueue tls_free;

const std::string kEmpty;

thread_local int tls_nesting = 0;
thread_local const char* tls_stack_low = nullptr;  // lowest usable address plus a margin
constexpr size_t kStackMargin = 256 * 1024;

}  // namespace

void SetStackBounds() {
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return;
  void* addr = nullptr;
  size_t size = 0;
  if (pthread_attr_getstack(&attr, &addr, &size) == 0 && size > 2 * kStackMargin) {
    tls_stack_low = static_cast<const char*>(addr) + kStackMargin;
  }
  pthread_attr_destroy(&attr);
}

void CheckStack() {
  char probe;
  if (tls_stack_low &&
      reinterpret_cast<uintptr_t>(&probe) < reinterpret_cast<uintptr_t>(tls_stack_low)) {
    throw LimitError{Status::Interrupted("script stack depth exceeded (C++ stack nearly full)")};
  }
}

NestGuard::NestGuard() {
  CheckStack();
  if (++tls_nesting > kMaxNesting) {
    --tls_nesting;
    throw LimitError{
        Status::Interrupted("value nested deeper than " + std::to_string(kMaxNesting) + " levels")};
  }
}
NestGuard::~NestGuard() { --tls_nesting; }

Obj::~Obj() {
  if (tls_heap) tls_heap->Uncharge(bytes);
}

void Destroy(Obj* o) {
  FreeQueue& q = tls_free;
  if (q.draining) {
    q.pending.push_back(o);
    return;
  }
  q.draining = true;
  delete o;
  while (!q.pending.empty()) {
    Obj* next = q.pending.back();
    q.pending.pop_back();
    delete next;
  }
  q.draining = false;
}

void Heap::Charge(Obj* o, size_t bytes) {
  o->bytes = static_cast<uint32_t>(bytes > UINT32_MAX ? UINT32_MAX : bytes);
  live_ += o->bytes;
  if (limit_ > 0 && live_ > limit_) Exceeded();
}

void Heap::ChargeRaw(int64_t bytes) {
  live_ += bytes;
  if (limit_ > 0 && live_ > limit_) {
    live_ -= bytes;
    Exceeded();
  }
}

void Heap::Exceeded() const {
  throw LimitError{
      Status::Interrupted("script memory limit exceeded (" + std::to_string(limit_) + " bytes)")};
}

Heap* CurrentHeap() { return tls_heap; }

HeapScope::HeapScope(Heap* heap) : saved_(tls_heap) { tls_heap = heap; }
HeapScope::~HeapScope() { tls_heap = saved_; }

// ---- Steps ----

namespace {

int64_t SaturatingAdd(int64_t a, int64_t b) { return b > INT64_MAX - a ? INT64_MAX : a + b; }

}  // namespace

void Meter::Begin(int64_t max_steps) {
  steps_ = 0;
  max_steps_ = max_steps > 0 ? max_steps : 0;
  run_gen_ = interrupt_gen_.load();
  next_check_ = kCheckEvery;
  if (max_steps_ > 0 && max_steps_ < next_check_) next_check_ = max_steps_;
}

void Meter::Overrun(int64_t n) {
  steps_ = SaturatingAdd(steps_, n < 0 ? 0 : n);
  Check();
}

void Meter::Check() {
  if (max_steps_ > 0 && steps_ > max_steps_) {
    throw LimitError{Status::Interrupted("script step limit exceeded (" +
                                         std::to_string(max_steps_) + " steps)")};
  }
  if (interrupt_gen_.load(std::memory_order_relaxed) != run_gen_) {
    throw LimitError{Status::Interrupted("script interrupted")};
  }
  // Without a limit the count only paces the interrupt checks: restart it, so that it
  // never overflows.
  if (max_steps_ == 0) steps_ = 0;
  next_check_ = SaturatingAdd(steps_, kCheckEvery);
  if (max_steps_ > 0 && max_steps_ < next_check_) next_check_ = max_steps_;
}

Meter& CurrentMeter() { return tls_meter ? *tls_meter : tls_idle_meter; }

MeterScope::MeterScope(Meter* meter) : saved_(tls_meter) { tls_meter = meter; }
MeterScope::~MeterScope() { tls_meter = saved_; }

// ---- Text being built ----

void TextBuf::Grow(size_t n) {
  // std::string at least doubles its capacity when it grows: charge what it will allocate.
  size_t cap = std::max(s_.size() + n, 2 * s_.capacity());
  if (heap_) {
    heap_->ChargeRaw(static_cast<int64_t>(cap) - charged_);
    charged_ = static_cast<int64_t>(cap);
  }
  s_.reserve(cap);
  Sync();
}

void TextBuf::Sync() {
  if (heap_ && static_cast<int64_t>(s_.capacity()) > charged_) {
    int64_t more = static_cast<int64_t>(s_.capacity()) - charged_;
    heap_->ChargeRaw(more);
    charged_ += more;
  }
}

void TextBuf::Refund() {
  if (heap_) heap_->RefundRaw(charged_);
  charged_ = 0;
}

std::string TextBuf::Take() {
  Refund();
  pending_ = 0;
  return std::move(s_);
}

Val TextBuf::ToVal(Type t) { return Val::Text(t, Take()); }

const char* TypeName(Type t) {
  switch (t) {
    case Type::kNil:
      return "nil";
    case Type::kBool:
      return "boolean";
    case Type::kInt:
      return "integer";
    case Type::kFloat:
      return "float";
    case Type::kChar:
      return "char";
    case Type::kInst:
      return "inst";
    case Type::kString:
      return "string";
    case Type::kKeyword:
      return "keyword";
    case Type::kSymbol:
      return "symbol";
    case Type::kBigInt:
      return "bigint";
    case Type::kBigDec:
      return "bigdec";
    case Type::kBytes:
      return "bytes";
    case Type::kUuid:
      return "uuid";
    case Type::kList:
      return "list";
    case Type::kSeq:
      return "seq";
    case Type::kVector:
      return "vector";
    case Type::kMap:
      return "map";
    case Type::kSet:
      return "set";
    case Type::kFn:
      return "function";
    case Type::kAtom:
      return "atom";
    case Type::kError:
      return "exception";
    case Type::kRegex:
      return "regex";
    case Type::kDb:
      return "db";
    case Type::kConn:
      return "connection";
  }
  return "unknown";
}

Val Val::Text(Type t, std::string s) {
  CurrentMeter().Text(s.size());
  size_t extra = s.capacity() > 15 ? s.capacity() : 0;
  Ref<StrObj> o = Make<StrObj>(extra, std::move(s));
  return Object(t, o.get());
}
Val Val::String(std::string s) { return Text(Type::kString, std::move(s)); }
Val Val::Keyword(std::string_view s) { return Text(Type::kKeyword, std::string(s)); }
Val Val::Symbol(std::string_view s) { return Text(Type::kSymbol, std::string(s)); }

const std::string& Val::str() const { return is_text() ? as<StrObj>()->s : kEmpty; }

std::string_view Val::ns() const {
  const std::string& s = str();
  CurrentMeter().Text(s.size());
  size_t slash = s.find('/');
  if (slash == std::string::npos || s == "/") return {};
  return std::string_view(s).substr(0, slash);
}

std::string_view Val::name() const {
  const std::string& s = str();
  CurrentMeter().Text(s.size());
  size_t slash = s.find('/');
  if (slash == std::string::npos || s == "/") return s;
  return std::string_view(s).substr(slash + 1);
}

Val Cons(Val first, Val rest) {
  CurrentMeter().Step();
  Ref<ListObj> cell = Make<ListObj>(0);
  cell->count = 1 + Count(rest);
  cell->first = std::move(first);
  cell->rest = std::move(rest);
  return Val::Object(Type::kList, cell.get());
}

Val ListOf(ValVec items) {
  Val out = Val::EmptyList();
  for (size_t i = items.size(); i-- > 0;) out = Cons(std::move(items[i]), std::move(out));
  return out;
}

void ListBuilder::Add(Val x) {
  CurrentMeter().Step();
  Ref<ListObj> cell = Make<ListObj>(0);
  cell->first = std::move(x);
  cell->rest = Val::EmptyList();
  Val v = Val::Object(Type::kList, cell.get());
  if (tail_) {
    tail_->rest = std::move(v);
  } else {
    head_ = std::move(v);
  }
  tail_ = cell.get();
  ++n_;
}

Val ListBuilder::Build() {
  // The counts are known only now; the cells are still the builder's alone.
  size_t left = n_;
  for (ListObj* c = head_.as<ListObj>(); c; c = c->rest.as<ListObj>()) c->count = left--;
  Val out = std::move(head_);
  head_ = Val::EmptyList();
  tail_ = nullptr;
  n_ = 0;
  return out;
}

void Fail(std::string message, Code code) {
  CurrentMeter().Text(message.size());
  Ref<ErrorObj> e = Make<ErrorObj>(message.size());
  e->message = std::move(message);
  e->code = code;
  throw ScriptError{Val::Object(Type::kError, e.get())};
}

void FailStatus(const Status& status) {
  if (status.code() == Code::kInterrupted) throw LimitError{status};
  Fail(status.message(), status.code());
}

}  // namespace mentat::script
