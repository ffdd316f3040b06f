// Arithmetic, comparison and number predicates. Integer arithmetic is 64-bit and fails
// on overflow, as Clojure's does; a float operand makes the result a float. (/ a b) of
// two integers is an integer when b divides a, else a float (there are no ratios).
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>

#include "script/core.h"
#include "script/print.h"

namespace mentat::script {

namespace {

[[noreturn]] void Overflow() { Fail("integer overflow"); }

Val Add(const FnObj& self, const Val& a, const Val& b) {
  if (a.is(Type::kInt) && b.is(Type::kInt)) {
    int64_t r;
    if (__builtin_add_overflow(a.as_int(), b.as_int(), &r)) Overflow();
    return Val::Int(r);
  }
  return Val::Float(NumArg(self, a) + NumArg(self, b));
}

Val Sub(const FnObj& self, const Val& a, const Val& b) {
  if (a.is(Type::kInt) && b.is(Type::kInt)) {
    int64_t r;
    if (__builtin_sub_overflow(a.as_int(), b.as_int(), &r)) Overflow();
    return Val::Int(r);
  }
  return Val::Float(NumArg(self, a) - NumArg(self, b));
}

Val Mul(const FnObj& self, const Val& a, const Val& b) {
  if (a.is(Type::kInt) && b.is(Type::kInt)) {
    int64_t r;
    if (__builtin_mul_overflow(a.as_int(), b.as_int(), &r)) Overflow();
    return Val::Int(r);
  }
  return Val::Float(NumArg(self, a) * NumArg(self, b));
}

Val Div(const FnObj& self, const Val& a, const Val& b) {
  if (a.is(Type::kInt) && b.is(Type::kInt)) {
    int64_t x = a.as_int(), y = b.as_int();
    if (y == 0) Fail("divide by zero");
    if (y == -1 && x == std::numeric_limits<int64_t>::min()) Overflow();
    if (x % y == 0) return Val::Int(x / y);
    return Val::Float(static_cast<double>(x) / static_cast<double>(y));
  }
  return Val::Float(NumArg(self, a) / NumArg(self, b));
}

using BinOp = Val (*)(const FnObj&, const Val&, const Val&);

Val Fold(const FnObj& self, const Val* a, size_t n, BinOp op, Val init) {
  if (n == 0) return init;
  Val acc = a[0];
  NumArg(self, acc);
  for (size_t i = 1; i < n; ++i) acc = op(self, acc, a[i]);
  return acc;
}

int NumCompare(const FnObj& self, const Val& a, const Val& b) {
  if (a.is(Type::kInt) && b.is(Type::kInt)) {
    return a.as_int() < b.as_int() ? -1 : a.as_int() > b.as_int() ? 1 : 0;
  }
  double x = NumArg(self, a), y = NumArg(self, b);
  if (std::isnan(x) || std::isnan(y)) return 2;  // every comparison with NaN is false
  if (a.is(Type::kInt) != b.is(Type::kInt)) {
    // Exact int/float comparison (Compare orders equal values int-first).
    int c = Compare(a, b);
    if (c != 0 && Compare(Val::Float(x), Val::Float(y)) == 0) return 0;
    return c;
  }
  return x < y ? -1 : x > y ? 1 : 0;
}

template <bool (*Test)(int)>
Val Chain(Interp&, const Val* a, size_t n, const FnObj& self) {
  for (size_t i = 0; i + 1 < n; ++i) {
    int c = NumCompare(self, a[i], a[i + 1]);
    if (c == 2 || !Test(c)) {
      for (size_t k = i + 2; k < n; ++k) NumArg(self, a[k]);
      return Val::Bool(false);
    }
  }
  if (n == 1) NumArg(self, a[0]);
  return Val::Bool(true);
}

bool Lt(int c) { return c < 0; }
bool Gt(int c) { return c > 0; }
bool Le(int c) { return c <= 0; }
bool Ge(int c) { return c >= 0; }
bool Eq(int c) { return c == 0; }

int64_t FloorMod(int64_t x, int64_t y) {
  int64_t r = x % y;
  return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
}

template <int kWhich>  // 0 quot, 1 rem, 2 mod
Val IntDiv(Interp&, const Val* a, size_t, const FnObj& self) {
  if (a[0].is(Type::kInt) && a[1].is(Type::kInt)) {
    int64_t x = a[0].as_int(), y = a[1].as_int();
    if (y == 0) Fail("divide by zero");
    if (y == -1) return Val::Int(kWhich == 0 ? (x == INT64_MIN ? (Overflow(), 0) : -x) : 0);
    if (kWhich == 0) return Val::Int(x / y);
    if (kWhich == 1) return Val::Int(x % y);
    return Val::Int(FloorMod(x, y));
  }
  double x = NumArg(self, a[0]), y = NumArg(self, a[1]);
  if (y == 0) Fail("divide by zero");
  double q = std::trunc(x / y);
  if (kWhich == 0) return Val::Float(q);
  double r = x - q * y;
  if (kWhich == 2 && r != 0 && ((r < 0) != (y < 0))) r += y;
  return Val::Float(r);
}

Val MinMax(const Val* a, size_t n, const FnObj& self, bool max) {
  Val best = a[0];
  NumArg(self, best);
  for (size_t i = 1; i < n; ++i) {
    int c = NumCompare(self, a[i], best);
    if (c == 2) return Val::Float(std::nan(""));
    if (max ? c > 0 : c < 0) best = a[i];
  }
  return best;
}

std::mt19937_64& Rng() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  return rng;
}

}  // namespace

void RegisterMath(Interp& in) {
  in.DefNative(
      "+",
      [](Interp&, const Val* a, size_t n, const FnObj& s) {
        return Fold(s, a, n, Add, Val::Int(0));
      },
      0, -1);
  in.DefNative(
      "*",
      [](Interp&, const Val* a, size_t n, const FnObj& s) {
        return Fold(s, a, n, Mul, Val::Int(1));
      },
      0, -1);
  in.DefNative(
      "-",
      [](Interp&, const Val* a, size_t n, const FnObj& s) {
        if (n == 1) return Sub(s, Val::Int(0), a[0]);
        return Fold(s, a, n, Sub, Val());
      },
      1, -1);
  in.DefNative(
      "/",
      [](Interp&, const Val* a, size_t n, const FnObj& s) {
        if (n == 1) return Div(s, Val::Int(1), a[0]);
        return Fold(s, a, n, Div, Val());
      },
      1, -1);
  in.DefNative(
      "inc",
      [](Interp&, const Val* a, size_t, const FnObj& s) { return Add(s, a[0], Val::Int(1)); }, 1,
      1);
  in.DefNative(
      "dec",
      [](Interp&, const Val* a, size_t, const FnObj& s) { return Sub(s, a[0], Val::Int(1)); }, 1,
      1);
  in.DefNative("quot", IntDiv<0>, 2, 2);
  in.DefNative("rem", IntDiv<1>, 2, 2);
  in.DefNative("mod", IntDiv<2>, 2, 2);
  in.DefNative(
      "max", [](Interp&, const Val* a, size_t n, const FnObj& s) { return MinMax(a, n, s, true); },
      1, -1);
  in.DefNative(
      "min", [](Interp&, const Val* a, size_t n, const FnObj& s) { return MinMax(a, n, s, false); },
      1, -1);
  in.DefNative(
      "abs",
      [](Interp&, const Val* a, size_t, const FnObj& s) {
        if (a[0].is(Type::kInt)) {
          if (a[0].as_int() == INT64_MIN) Overflow();
          return Val::Int(a[0].as_int() < 0 ? -a[0].as_int() : a[0].as_int());
        }
        return Val::Float(std::fabs(NumArg(s, a[0])));
      },
      1, 1);
  in.DefNative("<", Chain<Lt>, 1, -1);
  in.DefNative(">", Chain<Gt>, 1, -1);
  in.DefNative("<=", Chain<Le>, 1, -1);
  in.DefNative(">=", Chain<Ge>, 1, -1);
  in.DefNative("==", Chain<Eq>, 1, -1);
  in.DefNative(
      "zero?",
      [](Interp&, const Val* a, size_t, const FnObj& s) { return Val::Bool(NumArg(s, a[0]) == 0); },
      1, 1);
  in.DefNative(
      "pos?",
      [](Interp&, const Val* a, size_t, const FnObj& s) { return Val::Bool(NumArg(s, a[0]) > 0); },
      1, 1);
  in.DefNative(
      "neg?",
      [](Interp&, const Val* a, size_t, const FnObj& s) { return Val::Bool(NumArg(s, a[0]) < 0); },
      1, 1);
  in.DefNative(
      "even?",
      [](Interp&, const Val* a, size_t, const FnObj& s) {
        return Val::Bool(IntArg(s, a[0]) % 2 == 0);
      },
      1, 1);
  in.DefNative(
      "odd?",
      [](Interp&, const Val* a, size_t, const FnObj& s) {
        return Val::Bool(IntArg(s, a[0]) % 2 != 0);
      },
      1, 1);
  in.DefNative(
      "number?",
      [](Interp&, const Val* a, size_t, const FnObj&) { return Val::Bool(a[0].is_number()); }, 1,
      1);
  for (const char* name : {"integer?", "int?"}) {
    in.DefNative(
        name,
        [](Interp&, const Val* a, size_t, const FnObj&) { return Val::Bool(a[0].is(Type::kInt)); },
        1, 1);
  }
  for (const char* name : {"float?", "double?"}) {
    in.DefNative(
        name,
        [](Interp&, const Val* a, size_t, const FnObj&) {
          return Val::Bool(a[0].is(Type::kFloat));
        },
        1, 1);
  }
  in.DefNative(
      "NaN?",
      [](Interp&, const Val* a, size_t, const FnObj& s) {
        return Val::Bool(std::isnan(NumArg(s, a[0])));
      },
      1, 1);
  for (const char* name : {"int", "long"}) {
    in.DefNative(
        name,
        [](Interp&, const Val* a, size_t, const FnObj& s) {
          if (a[0].is(Type::kChar)) return Val::Int(a[0].as_char());
          if (a[0].is(Type::kInt)) return a[0];
          double d = NumArg(s, a[0]);
          if (!(d > -9.3e18 && d < 9.3e18)) Fail(s.name + ": value out of range: " + PrBrief(a[0]));
          return Val::Int(static_cast<int64_t>(d));
        },
        1, 1);
  }
  in.DefNative(
      "double",
      [](Interp&, const Val* a, size_t, const FnObj& s) { return Val::Float(NumArg(s, a[0])); }, 1,
      1);
  in.DefNative(
      "char",
      [](Interp&, const Val* a, size_t, const FnObj& s) {
        if (a[0].is(Type::kChar)) return a[0];
        int64_t c = IntArg(s, a[0]);
        if (c < 0 || c > 0x10FFFF) Fail("char: value out of range: " + std::to_string(c));
        return Val::Char(static_cast<char32_t>(c));
      },
      1, 1);
  in.DefNative(
      "bit-and",
      [](Interp&, const Val* a, size_t, const FnObj& s) {
        return Val::Int(IntArg(s, a[0]) & IntArg(s, a[1]));
      },
      2, 2);
  in.DefNative(
      "bit-or",
      [](Interp&, const Val* a, size_t, const FnObj& s) {
        return Val::Int(IntArg(s, a[0]) | IntArg(s, a[1]));
      },
      2, 2);
  in.DefNative(
      "bit-xor",
      [](Interp&, const Val* a, size_t, const FnObj& s) {
        return Val::Int(IntArg(s, a[0]) ^ IntArg(s, a[1]));
      },
      2, 2);
  in.DefNative(
      "bit-not",
      [](Interp&, const Val* a, size_t, const FnObj& s) { return Val::Int(~IntArg(s, a[0])); }, 1,
      1);
  in.DefNative(
      "bit-shift-left",
      [](Interp&, const Val* a, size_t, const FnObj& s) {
        return Val::Int(
            static_cast<int64_t>(static_cast<uint64_t>(IntArg(s, a[0])) << (IntArg(s, a[1]) & 63)));
      },
      2, 2);
  in.DefNative(
      "bit-shift-right",
      [](Interp&, const Val* a, size_t, const FnObj& s) {
        return Val::Int(IntArg(s, a[0]) >> (IntArg(s, a[1]) & 63));
      },
      2, 2);
  in.DefNative(
      "rand",
      [](Interp&, const Val* a, size_t n, const FnObj& s) {
        double r = std::uniform_real_distribution<double>(0, 1)(Rng());
        return Val::Float(n == 1 ? r * NumArg(s, a[0]) : r);
      },
      0, 1);
  in.DefNative(
      "rand-int",
      [](Interp&, const Val* a, size_t, const FnObj& s) {
        int64_t hi = IntArg(s, a[0]);
        if (hi <= 0) Fail("rand-int needs a positive bound");
        return Val::Int(std::uniform_int_distribution<int64_t>(0, hi - 1)(Rng()));
      },
      1, 1);
  in.DefNative(
      "compare",
      [](Interp&, const Val* a, size_t, const FnObj&) {
        return Val::Int(ClojureCompare(a[0], a[1]));
      },
      2, 2);
  in.DefNative(
      "parse-long",
      [](Interp& in, const Val* a, size_t, const FnObj& s) {
        const std::string& t = StrArg(s, a[0]);
        in.meter().Text(t.size());
        size_t i = (!t.empty() && (t[0] == '+' || t[0] == '-')) ? 1 : 0;
        if (i >= t.size()) return Val();
        for (size_t k = i; k < t.size(); ++k) {
          if (t[k] < '0' || t[k] > '9') return Val();
        }
        errno = 0;
        long long v = std::strtoll(t.c_str(), nullptr, 10);
        return errno == ERANGE ? Val() : Val::Int(v);
      },
      1, 1);
  in.DefNative(
      "parse-double",
      [](Interp& in, const Val* a, size_t, const FnObj& s) {
        const std::string& t = StrArg(s, a[0]);
        in.meter().Text(t.size());
        if (t.empty() || std::isspace(static_cast<unsigned char>(t[0]))) return Val();
        char* end = nullptr;
        double d = std::strtod(t.c_str(), &end);
        return end == t.c_str() + t.size() ? Val::Float(d) : Val();
      },
      1, 1);
}

int ClojureCompare(const Val& a, const Val& b) {
  if (a.is_number() && b.is_number()) {
    double x = a.as_number(), y = b.as_number();
    if (a.is(Type::kInt) && b.is(Type::kInt)) {
      return a.as_int() < b.as_int() ? -1 : a.as_int() > b.as_int() ? 1 : 0;
    }
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (a.is_nil() || b.is_nil()) return a.is_nil() ? (b.is_nil() ? 0 : -1) : 1;
  if (a.is_sequential() && b.is_sequential()) {
    size_t na = Count(a), nb = Count(b);
    if (na != nb) return na < nb ? -1 : 1;
    ValVec xs = ToVector(a), ys = ToVector(b);
    for (size_t i = 0; i < na; ++i) {
      int c = ClojureCompare(xs[i], ys[i]);
      if (c != 0) return c;
    }
    return 0;
  }
  bool same = a.type() == b.type() || (a.is(Type::kBigInt) && b.is(Type::kBigInt));
  if (!same || a.is(Type::kMap) || a.is(Type::kSet) || a.type() >= Type::kFn) {
    Fail(std::string("cannot compare a ") + TypeName(a.type()) + " with a " + TypeName(b.type()));
  }
  int c = Compare(a, b);
  return c < 0 ? -1 : c > 0 ? 1 : 0;
}

}  // namespace mentat::script
