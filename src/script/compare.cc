// Equality, the total order and hashing of script values. The order mirrors
// edn::Compare for data, so maps and sets print in the same order as the EDN printer's.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "script/coll.h"
#include "util/named_order.h"

namespace mentat::script {

namespace {

int Rank(Type t) {
  switch (t) {
    case Type::kNil:
      return 0;
    case Type::kBool:
      return 1;
    case Type::kInt:
    case Type::kFloat:
      return 2;
    case Type::kBigInt:
      return 3;
    case Type::kBigDec:
      return 4;
    case Type::kChar:
      return 5;
    case Type::kString:
      return 6;
    case Type::kKeyword:
      return 7;
    case Type::kSymbol:
      return 8;
    case Type::kList:
    case Type::kSeq:
    case Type::kVector:
      return 9;
    case Type::kMap:
      return 10;
    case Type::kSet:
      return 11;
    case Type::kInst:
      return 12;
    case Type::kUuid:
      return 13;
    case Type::kBytes:
      return 14;
    default:
      return 15 + static_cast<int>(t);
  }
}

template <typename T>
int Cmp(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

int CmpDouble(double a, double b) {
  bool na = std::isnan(a), nb = std::isnan(b);
  if (na || nb) return Cmp(na, nb);
  return Cmp(a, b);
}

int CmpIntDouble(int64_t i, double d) {
  if (std::isnan(d)) return -1;
  constexpr double kTwo63 = 9223372036854775808.0;
  if (d >= kTwo63) return -1;
  if (d < -kTwo63) return 1;
  double t = std::trunc(d);
  int64_t ti = static_cast<int64_t>(t);
  if (i != ti) return i < ti ? -1 : 1;
  double frac = d - t;
  return frac > 0 ? -1 : (frac < 0 ? 1 : 0);
}

int CmpNumbers(const Val& a, const Val& b) {
  if (a.is(Type::kInt) && b.is(Type::kInt)) return Cmp(a.as_int(), b.as_int());
  if (a.is(Type::kFloat) && b.is(Type::kFloat)) return CmpDouble(a.as_double(), b.as_double());
  int c = a.is(Type::kInt) ? CmpIntDouble(a.as_int(), b.as_double())
                           : -CmpIntDouble(b.as_int(), a.as_double());
  if (c != 0) return c;
  return a.is(Type::kInt) ? -1 : 1;
}

int CmpText(const std::string& a, const std::string& b) {
  CurrentMeter().Text(std::min(a.size(), b.size()));
  int c = a.compare(b);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

// Steps through a list, seq or vector, a step per element.
class Cursor {
 public:
  explicit Cursor(const Val& v) : v_(v), meter_(CurrentMeter()) {}
  bool Next(Val* out) {
    meter_.Step();
    return Advance(out);
  }

 private:
  bool Advance(Val* out) {
    if (v_.is(Type::kVector)) {
      if (i_ >= VecCount(v_)) return false;
      *out = VecNth(v_, i_++);
      return true;
    }
    if (v_.is(Type::kList)) {
      const ListObj* c = v_.as<ListObj>();
      if (!c) return false;
      *out = c->first;
      v_ = c->rest;
      return true;
    }
    if (v_.is(Type::kSeq)) {
      const SeqView* s = v_.as<SeqView>();
      if (s->kind == SeqKind::kVec) {
        i_ = s->i;
        v_ = s->src;
        return Advance(out);
      }
      *out = s->First();
      v_ = s->Rest();
      return true;
    }
    return false;
  }

  Val v_;
  size_t i_ = 0;
  Meter& meter_;
};

int CmpSequential(const Val& a, const Val& b) {
  Cursor ca(a), cb(b);
  Val x, y;
  for (;;) {
    bool hx = ca.Next(&x), hy = cb.Next(&y);
    if (!hx || !hy) return Cmp(hx, hy);
    int c = Compare(x, y);
    if (c != 0) return c;
  }
}

// Entry by entry in key order, then by size; a step per pair.
int CmpTrees(const Val& a, const Val& b, bool map) {
  Meter& m = CurrentMeter();
  TreeCursor ca(a.as<TNode>()), cb(b.as<TNode>());
  for (;;) {
    m.Step();
    TNode* x = ca.Next();
    TNode* y = cb.Next();
    if (!x || !y) return Cmp(TreeSize(a.as<TNode>()), TreeSize(b.as<TNode>()));
    int c = Compare(x->key, y->key);
    if (c == 0 && map) c = Compare(x->val, y->val);
    if (c != 0) return c;
  }
}

uint64_t Mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

uint64_t Combine(uint64_t h, uint64_t v) { return Mix(h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6))); }

edn::Value BigEdn(const Val& v) {
  CurrentMeter().Text(v.str().size());
  return v.is(Type::kBigInt) ? edn::Value::BigInt(v.str()) : edn::Value::BigDec(v.str());
}

}  // namespace

int Compare(const Val& a, const Val& b) {
  int ra = Rank(a.type()), rb = Rank(b.type());
  if (ra != rb) return Cmp(ra, rb);
  switch (a.type()) {
    case Type::kNil:
      return 0;
    case Type::kBool:
      return Cmp(a.as_bool(), b.as_bool());
    case Type::kInt:
    case Type::kFloat:
      return CmpNumbers(a, b);
    case Type::kBigInt:
    case Type::kBigDec:
      return Compare(BigEdn(a), BigEdn(b));
    case Type::kChar:
      return Cmp(a.as_char(), b.as_char());
    case Type::kInst:
      return Cmp(a.as_int(), b.as_int());
    case Type::kKeyword:
    case Type::kSymbol:
      CurrentMeter().Text(std::min(a.str().size(), b.str().size()));
      return CompareNamed(a.str(), b.str());
    case Type::kString:
    case Type::kBytes:
    case Type::kUuid:
      return CmpText(a.str(), b.str());
    case Type::kList:
    case Type::kSeq:
    case Type::kVector: {
      if (a.obj() == b.obj() && a.type() == b.type()) return 0;
      NestGuard nest;
      return CmpSequential(a, b);
    }
    case Type::kMap:
    case Type::kSet: {
      if (a.obj() == b.obj()) return 0;
      NestGuard nest;
      return CmpTrees(a, b, a.is(Type::kMap));
    }
    default:
      return Cmp(reinterpret_cast<uintptr_t>(a.obj()), reinterpret_cast<uintptr_t>(b.obj()));
  }
}

bool Equal(const Val& a, const Val& b) {
  if (a.type() == b.type()) {
    switch (a.type()) {
      case Type::kNil:
        return true;
      case Type::kBool:
      case Type::kInt:
      case Type::kChar:
      case Type::kInst:
        return a.as_int() == b.as_int();
      case Type::kFloat:
        return CmpDouble(a.as_double(), b.as_double()) == 0;
      case Type::kString:
      case Type::kKeyword:
      case Type::kSymbol:
      case Type::kBytes:
      case Type::kUuid:
        if (a.obj() == b.obj()) return true;
        if (a.str().size() != b.str().size()) return false;
        CurrentMeter().Text(a.str().size());
        return a.str() == b.str();
      default:
        if (a.obj() == b.obj()) return true;
        break;
    }
  }
  if (a.is_sequential() && b.is_sequential()) {
    if (Count(a) != Count(b)) return false;
    return Compare(a, b) == 0;
  }
  if ((a.is(Type::kMap) && b.is(Type::kMap)) || (a.is(Type::kSet) && b.is(Type::kSet))) {
    if (TreeSize(a.as<TNode>()) != TreeSize(b.as<TNode>())) return false;
    return Compare(a, b) == 0;
  }
  if (a.type() != b.type()) return false;
  return Compare(a, b) == 0;
}

uint64_t Hash(const Val& v) {
  switch (v.type()) {
    case Type::kNil:
      return Mix(1);
    case Type::kBool:
      return Mix(2 + static_cast<uint64_t>(v.as_bool()));
    case Type::kInt:
      return Combine(3, static_cast<uint64_t>(v.as_int()));
    case Type::kFloat: {
      double d = v.as_double();
      if (d == 0) d = 0;
      if (std::isnan(d)) d = std::nan("");
      uint64_t bits;
      std::memcpy(&bits, &d, sizeof bits);
      return Combine(4, bits);
    }
    case Type::kChar:
      return Combine(5, v.as_char());
    case Type::kInst:
      return Combine(6, static_cast<uint64_t>(v.as_int()));
    case Type::kString:
    case Type::kKeyword:
    case Type::kSymbol:
    case Type::kBigInt:
    case Type::kBigDec:
    case Type::kBytes:
    case Type::kUuid:
      CurrentMeter().Text(v.str().size());
      return Combine(7 + static_cast<uint64_t>(v.type()), std::hash<std::string>()(v.str()));
    case Type::kList:
    case Type::kSeq:
    case Type::kVector: {
      NestGuard nest;
      uint64_t h = Mix(40);
      Cursor c(v);
      Val x;
      while (c.Next(&x)) h = Combine(h, Hash(x));
      return h;
    }
    case Type::kMap:
    case Type::kSet: {
      NestGuard nest;
      uint64_t h = Mix(v.is(Type::kMap) ? 41 : 42);
      TreeForEach(v.as<TNode>(), [&](TNode* n) {
        h = Combine(h, Hash(n->key));
        if (v.is(Type::kMap)) h = Combine(h, Hash(n->val));
        return true;
      });
      return h;
    }
    default:
      return Mix(reinterpret_cast<uintptr_t>(v.obj()));
  }
}

}  // namespace mentat::script
