// Script values: Val (a 16-byte tagged value) and the reference-counted heap objects it
// points to.
//
// Values never leave the interpreter's thread (Interpreter::Eval converts results to
// edn::Value), so reference counts are not atomic. Every heap object is charged to the
// thread's current Heap (set by a HeapScope at each interpreter entry point): the live
// byte count is what the memory limit checks. Freeing is iterative (a thread-local queue),
// so dropping a long list or a deeply nested value never recurses deeply.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mentat/edn.h"
#include "mentat/status.h"

namespace mentat::script {

// ---- Heap objects and references ----

struct Obj {
  uint32_t rc = 0;
  uint32_t bytes = 0;  // bytes charged to the heap
  Obj() = default;
  Obj(const Obj&) = delete;
  Obj& operator=(const Obj&) = delete;
  virtual ~Obj();
};

// Frees `o` (refcount reached zero) without recursing through its children.
void Destroy(Obj* o);

inline void Retain(Obj* o) {
  if (o) ++o->rc;
}
inline void Release(Obj* o) {
  if (o && --o->rc == 0) Destroy(o);
}

template <typename T>
class Ref {
 public:
  Ref() = default;
  explicit Ref(T* p) : p_(p) { Retain(p_); }
  Ref(const Ref& o) : p_(o.p_) { Retain(p_); }
  Ref(Ref&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  template <typename U>
  Ref(const Ref<U>& o) : p_(o.get()) {  // NOLINT: upcast
    Retain(p_);
  }
  ~Ref() { Release(p_); }
  Ref& operator=(Ref o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  T* get() const { return p_; }
  T* operator->() const { return p_; }
  T& operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }

 private:
  T* p_ = nullptr;
};

// ---- Errors thrown inside the interpreter (never across the public API) ----

// A resource limit or an interrupt: stops the script; `catch` in the script cannot
// intercept it.
struct LimitError {
  Status status;
};

// Guards recursion into nested values (printing, comparing, hashing, converting): past
// kMaxNesting levels it throws a LimitError instead of exhausting the C++ stack.
class NestGuard {
 public:
  static constexpr int kMaxNesting = 2000;
  NestGuard();
  ~NestGuard();
  NestGuard(const NestGuard&) = delete;
  NestGuard& operator=(const NestGuard&) = delete;
};

// Records the current thread's stack bounds (at an interpreter entry point).
void SetStackBounds();
// Throws a LimitError when less than a safety margin of C++ stack is left.
void CheckStack();

// ---- Accounting ----

class Heap {
 public:
  int64_t live() const { return live_; }
  void set_limit(int64_t bytes) { limit_ = bytes; }
  int64_t limit() const { return limit_; }
  // Charges `o` (just created) with `bytes`; throws LimitError past the limit.
  void Charge(Obj* o, size_t bytes);
  void Uncharge(uint32_t bytes) { live_ -= bytes; }
  // Temporary buffers (materialized sequences, text being built) charge and refund
  // directly; ChargeRaw throws LimitError (charging nothing) past the limit.
  void ChargeRaw(int64_t bytes);
  void RefundRaw(int64_t bytes) { live_ -= bytes; }
  [[noreturn]] void Exceeded() const;

 private:
  int64_t live_ = 0;
  int64_t limit_ = 0;  // 0: no limit
};

// The heap of the interpreter running on this thread (nullptr outside the interpreter).
Heap* CurrentHeap();

// Charges `bytes` to the current heap for the scope's lifetime (a transient buffer that is
// not a script object: an edn tree being read, a value being converted).
class ScopedCharge {
 public:
  ScopedCharge() : heap_(CurrentHeap()) {}
  explicit ScopedCharge(int64_t bytes) : ScopedCharge() { Add(bytes); }
  ~ScopedCharge() { Release(); }
  ScopedCharge(const ScopedCharge&) = delete;
  ScopedCharge& operator=(const ScopedCharge&) = delete;
  // Throws LimitError past the limit.
  void Add(int64_t bytes) {
    if (!heap_) return;
    heap_->ChargeRaw(bytes);
    charged_ += bytes;
  }
  // Refunds everything now.
  void Release() {
    if (heap_) heap_->RefundRaw(charged_);
    charged_ = 0;
  }

 private:
  Heap* heap_;
  int64_t charged_ = 0;
};

// An allocator charging what it allocates to the heap current when it was made, before
// allocating: the temporary buffers of builtins (a materialized sequence, the arguments
// of apply) count against the memory limit, and one too large fails before it exists.
template <typename T>
struct Charged {
  using value_type = T;
  using propagate_on_container_copy_assignment = std::true_type;
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;
  Charged() : heap(CurrentHeap()) {}
  template <typename U>
  Charged(const Charged<U>& o) : heap(o.heap) {}  // NOLINT: rebinding
  T* allocate(size_t n) {
    if (heap) heap->ChargeRaw(static_cast<int64_t>(n * sizeof(T)));
    try {
      return std::allocator<T>().allocate(n);
    } catch (...) {
      if (heap) heap->RefundRaw(static_cast<int64_t>(n * sizeof(T)));
      throw;
    }
  }
  void deallocate(T* p, size_t n) {
    std::allocator<T>().deallocate(p, n);
    if (heap) heap->RefundRaw(static_cast<int64_t>(n * sizeof(T)));
  }
  template <typename U>
  bool operator==(const Charged<U>& o) const {
    return heap == o.heap;
  }
  Heap* heap;
};

// ---- Steps ----

// Text costs a step per kBytesPerStep bytes scanned, copied or produced.
constexpr int64_t kBytesPerStep = 16;

// The step budget of one interpreter run. Evaluation charges a step per node; builtins a
// step per element they walk (iteration, equality, hashing, printing, conversion) or add
// to a collection, and a step per kBytesPerStep bytes of text. A charge past the limit,
// or the first one after an interrupt was requested (checked every kCheckEvery steps),
// throws LimitError. Thread safety: RequestInterrupt() may be called from any thread,
// the rest only from the thread running the interpreter.
class Meter {
 public:
  static constexpr int64_t kCheckEvery = 1024;

  // Starts a run: the count restarts at zero against `max_steps` (0: unlimited), and
  // interrupts requested before now are forgotten.
  void Begin(int64_t max_steps);
  void Step() {
    if (++steps_ > next_check_) Check();
  }
  // REQUIRES: n >= 0. Saturates instead of overflowing.
  void Steps(int64_t n) {
    if (n > next_check_ - steps_) {
      Overrun(n);
    } else {
      steps_ += n;
    }
  }
  // The steps for `bytes` bytes of text.
  void Text(size_t bytes) { Steps(static_cast<int64_t>(bytes / kBytesPerStep)); }
  void RequestInterrupt() { interrupt_gen_.fetch_add(1, std::memory_order_relaxed); }
  // Steps charged since Begin() (without a limit, only since the last interrupt check).
  int64_t steps() const { return steps_; }

 private:
  [[gnu::noinline]] void Overrun(int64_t n);
  [[gnu::noinline]] void Check();

  int64_t steps_ = 0;
  int64_t next_check_ = INT64_MAX;  // the count at which Check() runs next
  int64_t max_steps_ = 0;
  std::atomic<uint64_t> interrupt_gen_{0};
  uint64_t run_gen_ = 0;
};

// The meter of the interpreter running on this thread; outside the interpreter, an idle
// meter without a limit (so builtins and helpers can always charge it).
Meter& CurrentMeter();

// Makes `meter` current on this thread for the scope's lifetime.
class MeterScope {
 public:
  explicit MeterScope(Meter* meter);
  ~MeterScope();
  MeterScope(const MeterScope&) = delete;
  MeterScope& operator=(const MeterScope&) = delete;

 private:
  Meter* saved_;
};

// Makes `heap` current on this thread for the scope's lifetime.
class HeapScope {
 public:
  explicit HeapScope(Heap* heap);
  ~HeapScope();
  HeapScope(const HeapScope&) = delete;
  HeapScope& operator=(const HeapScope&) = delete;

 private:
  Heap* saved_;
};

// Allocates a T, charges sizeof(T) + extra bytes to the current heap.
template <typename T, typename... A>
Ref<T> Make(size_t extra, A&&... args) {
  Ref<T> r(new T(std::forward<A>(args)...));
  if (Heap* h = CurrentHeap()) h->Charge(r.get(), sizeof(T) + extra);
  return r;
}

// ---- Val ----

enum class Type : uint8_t {
  kNil,
  kBool,
  kInt,
  kFloat,
  kChar,
  kInst,  // microseconds since the epoch
  // StrObj-backed
  kString,
  kKeyword,
  kSymbol,
  kBigInt,
  kBigDec,
  kBytes,
  kUuid,  // 16 raw bytes in a StrObj
  // collections (a null object is the empty collection)
  kList,    // ListObj: a cons cell
  kSeq,     // SeqObj: a non-empty view over a vector, map, set, string or range
  kVector,  // VecObj
  kMap,     // TNode root
  kSet,     // TNode root
  // opaque
  kFn,
  kAtom,
  kError,
  kRegex,
  kDb,
  kConn,
};

const char* TypeName(Type t);

struct StrObj;
struct ListObj;
struct SeqObj;
struct VecObj;
struct TNode;

class Val {
 public:
  Val() : t_(Type::kNil), i_(0) {}
  Val(const Val& o) : t_(o.t_), i_(o.i_) {
    if (heap()) Retain(o_);
  }
  Val(Val&& o) noexcept : t_(o.t_), i_(o.i_) {
    o.t_ = Type::kNil;
    o.i_ = 0;
  }
  ~Val() {
    if (heap()) Release(o_);
  }
  Val& operator=(const Val& o) {
    Val tmp(o);
    Swap(tmp);
    return *this;
  }
  Val& operator=(Val&& o) noexcept {
    Val tmp(std::move(o));
    Swap(tmp);
    return *this;
  }
  void Swap(Val& o) noexcept {
    std::swap(t_, o.t_);
    std::swap(i_, o.i_);
  }

  static Val Nil() { return Val(); }
  static Val Bool(bool b) { return Val(Type::kBool, b ? 1 : 0); }
  static Val Int(int64_t i) { return Val(Type::kInt, i); }
  static Val Float(double d) {
    Val v;
    v.t_ = Type::kFloat;
    v.d_ = d;
    return v;
  }
  static Val Char(char32_t c) { return Val(Type::kChar, c); }
  static Val Inst(int64_t micros) { return Val(Type::kInst, micros); }
  // Wraps a heap object (kString..kConn); `o` may be null only for collections.
  static Val Object(Type t, Obj* o) {
    Val v;
    v.t_ = t;
    v.o_ = o;
    Retain(o);
    return v;
  }
  static Val String(std::string s);
  static Val Keyword(std::string_view ns_slash_name);
  static Val Symbol(std::string_view ns_slash_name);
  // Any StrObj-backed type. Creating text costs a step per kBytesPerStep bytes (so every
  // builtin returning text is metered) and its memory.
  static Val Text(Type t, std::string s);
  static Val EmptyList() { return Object(Type::kList, nullptr); }
  static Val EmptyVector() { return Object(Type::kVector, nullptr); }
  static Val EmptyMap() { return Object(Type::kMap, nullptr); }
  static Val EmptySet() { return Object(Type::kSet, nullptr); }

  Type type() const { return t_; }
  bool heap() const { return t_ >= Type::kString; }
  bool is_nil() const { return t_ == Type::kNil; }
  bool truthy() const { return !(t_ == Type::kNil || (t_ == Type::kBool && i_ == 0)); }
  bool is(Type t) const { return t_ == t; }
  bool is_number() const { return t_ == Type::kInt || t_ == Type::kFloat; }
  bool is_text() const { return t_ >= Type::kString && t_ <= Type::kUuid; }
  bool is_named() const { return t_ == Type::kKeyword || t_ == Type::kSymbol; }
  bool is_coll() const { return t_ >= Type::kList && t_ <= Type::kSet; }
  // List or seq (possibly the empty list).
  bool is_seq() const { return t_ == Type::kList || t_ == Type::kSeq; }
  bool is_sequential() const { return is_seq() || t_ == Type::kVector; }

  bool as_bool() const { return i_ != 0; }
  int64_t as_int() const { return i_; }
  double as_double() const { return d_; }
  char32_t as_char() const { return static_cast<char32_t>(i_); }
  double as_number() const { return t_ == Type::kInt ? static_cast<double>(i_) : d_; }
  Obj* obj() const { return o_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(o_);
  }
  // Text of StrObj-backed values.
  const std::string& str() const;
  // Namespace ("" when none) and name of keywords and symbols (they scan the text, and
  // charge it to the current meter).
  std::string_view ns() const;
  std::string_view name() const;

 private:
  Val(Type t, int64_t i) : t_(t), i_(i) {}
  Type t_;
  union {
    int64_t i_;
    double d_;
    Obj* o_;
  };
};

struct StrObj : Obj {
  explicit StrObj(std::string text) : s(std::move(text)) {}
  std::string s;
};

// A temporary buffer of values (charged to the current heap as it grows).
using ValVec = std::vector<Val, Charged<Val>>;

// Text a builtin is building (str, format, join, printing). The buffer's growth is
// charged to the heap before it happens, and the bytes appended to the meter, so text
// larger than the memory limit fails (LimitError) before it is allocated. The charge
// lasts as long as the buffer: Take() hands the text over uncharged, ToVal() moves it
// into a script string (which charges itself).
class TextBuf {
 public:
  TextBuf() : heap_(CurrentHeap()), meter_(&CurrentMeter()) {}
  ~TextBuf() { Refund(); }
  TextBuf(const TextBuf&) = delete;
  TextBuf& operator=(const TextBuf&) = delete;

  // Makes room for `n` more bytes, charging first.
  void Reserve(size_t n) {
    if (n > s_.capacity() - s_.size()) Grow(n);
  }
  void Append(std::string_view t) {
    t = t.substr(0, Room(t.size()));
    Reserve(t.size());
    s_.append(t);
    Count(t.size());
  }
  void Append(size_t n, char c) {
    n = Room(n);
    Reserve(n);
    s_.append(n, c);
    Count(n);
  }
  void Push(char c) { Append(1, c); }
  // Keeps at most `cap` + 1 bytes: appends past them are dropped (see full()), so a
  // printer can stop walking a value once it has enough of it.
  void set_cap(size_t cap) { cap_ = cap; }
  bool full() const { return s_.size() > cap_; }
  // How many of `n` more bytes the cap lets in.
  size_t Room(size_t n) const { return full() ? 0 : std::min(n, cap_ + 1 - s_.size()); }
  // Appends `n` bytes for the caller to fill in, returning where they start (valid until
  // the next change; the byte after them may be overwritten with a NUL).
  char* Extend(size_t n) {
    Reserve(n);
    size_t at = s_.size();
    s_.resize(at + n);
    Count(n);
    return s_.data() + at;
  }
  // Appends through `fn(std::string*)`, for printers that write to a std::string (make
  // room with Reserve() first: growth past it is charged after the fact).
  template <typename Fn>
  void AppendWith(Fn&& fn) {
    size_t before = s_.size();
    fn(&s_);
    if (s_.size() > cap_ + 1) s_.resize(cap_ + 1);
    Sync();
    Count(s_.size() - before);
  }
  size_t size() const { return s_.size(); }
  bool empty() const { return s_.empty(); }
  const std::string& str() const { return s_; }
  std::string Take();
  Val ToVal(Type t = Type::kString);

 private:
  void Grow(size_t n);
  void Sync();
  void Refund();
  void Count(size_t n) {
    pending_ += n;
    if (pending_ >= static_cast<size_t>(kBytesPerStep)) {
      meter_->Text(pending_);
      pending_ %= kBytesPerStep;
    }
  }

  Heap* heap_;
  Meter* meter_;
  std::string s_;
  int64_t charged_ = 0;  // the capacity charged to heap_
  size_t pending_ = 0;   // bytes appended but not yet charged as a step
  size_t cap_ = SIZE_MAX - 1;
};

// A cons cell. `rest` is a list (possibly empty) or a seq.
struct ListObj : Obj {
  Val first;
  Val rest;
  size_t count = 1;
};

// A non-empty sequence view.
struct SeqObj : Obj {
  virtual Val First() const = 0;
  virtual Val Rest() const = 0;  // the empty list at the end
  virtual size_t Count() const = 0;
};

// Builds (first . rest), a step; `rest` must be a list or seq.
Val Cons(Val first, Val rest);
// A list of `items` in order.
Val ListOf(ValVec items);

// Builds a list front to back, without a buffer: a cell (and a step, as Cons) per Add.
class ListBuilder {
 public:
  void Add(Val x);
  size_t size() const { return n_; }
  // The list (empty when nothing was added); the builder is left empty.
  Val Build();

 private:
  Val head_ = Val::EmptyList();
  ListObj* tail_ = nullptr;  // the last cell, private to the builder until Build()
  size_t n_ = 0;
};

// Thrown (as a C++ exception) by builtins and `throw`; the script can catch it.
struct ErrorObj : Obj {
  std::string message;
  Val data;  // ex-data: a map, or nil
  Val cause;
  bool info = false;  // created by ex-info
  Code code = Code::kInvalidArgument;
  edn::Pos pos;  // where it was raised, when known
};

struct ScriptError {
  Val error;  // kError
};

// Raises a script error (catchable) with `message`.
[[noreturn]] void Fail(std::string message, Code code = Code::kInvalidArgument);
[[noreturn]] void FailStatus(const Status& status);

class Interp;
struct FnTemplate;
using NativeFn = Val (*)(Interp& in, const Val* args, size_t n, const struct FnObj& self);

// A function: a closure over a compiled template, or a native (builtin) function with
// optional bound data (partial, comp ...).
struct FnObj : Obj {
  const FnTemplate* tmpl = nullptr;
  std::vector<Val> captured;  // closure: captured values
  NativeFn native = nullptr;
  std::vector<Val> data;  // native: bound values
  std::string name;       // natives; closures use tmpl->name
  int min_args = 0;
  int max_args = -1;  // -1: variadic
};

struct AtomObj : Obj {
  Val value;
};

// Opaque objects with their own printed form (db values, connections, regexes).
struct OpaqueObj : Obj {
  virtual std::string Describe() const = 0;
};

}  // namespace mentat::script
