// Value constructors, ordering, equality and hashing.
//
// Ordering groups kinds into ranks (see Rank()); within a rank values compare by content,
// keywords and symbols by namespace, then name (util/named_order.h).
// Int and Float share a rank and compare numerically, with ties broken by kind, so
// Compare(a, b) == 0 exactly when a == b. List and Vector share a rank with no tie-break,
// which gives Clojure's (= '(1 2) [1 2]). BigInt and BigDec each have their own rank and
// compare numerically among themselves (BigDec ties broken by text, so 1.0M != 1.00M).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "mentat/edn.h"
#include "util/decimal.h"
#include "util/named_order.h"

namespace mentat::edn {

namespace {
// Collections being freed recursively on this thread, outermost first.
thread_local int tls_release_depth = 0;
constexpr int kRecursiveReleaseDepth = 256;
}  // namespace

void Value::ReleaseCollection() noexcept {
  if (tls_release_depth >= kRecursiveReleaseDepth) return ReleaseNested();
  ++tls_release_depth;
  rep_ = std::monostate();  // frees the elements now, at this depth
  --tls_release_depth;
}

void Value::ReleaseNested() noexcept {
  std::vector<Value> pending;
  // Moves out the collection children of `v` when `v` is their only owner (they are then
  // freed by the loop below instead of by v's destructor, recursively).
  auto detach = [&pending](Value& v) {
    if (auto* p = std::get_if<std::shared_ptr<const Vec>>(&v.rep_)) {
      if (!*p || p->use_count() != 1) return;
      for (Value& x : const_cast<Vec&>(**p))
        if (x.kind_ >= Kind::kList && x.kind_ <= Kind::kSet) pending.push_back(std::move(x));
    } else if (auto* m = std::get_if<std::shared_ptr<const MapEntries>>(&v.rep_)) {
      if (!*m || m->use_count() != 1) return;
      for (auto& [k, x] : const_cast<MapEntries&>(**m)) {
        if (k.kind_ >= Kind::kList && k.kind_ <= Kind::kSet) pending.push_back(std::move(k));
        if (x.kind_ >= Kind::kList && x.kind_ <= Kind::kSet) pending.push_back(std::move(x));
      }
    }
  };
  detach(*this);
  while (!pending.empty()) {
    Value v = std::move(pending.back());
    pending.pop_back();
    detach(v);
  }  // each `v` is freed here with its collection children already moved out
}

const char* KindName(Kind kind) {
  switch (kind) {
    case Kind::kNil:
      return "nil";
    case Kind::kBool:
      return "boolean";
    case Kind::kInt:
      return "integer";
    case Kind::kBigInt:
      return "bigint";
    case Kind::kFloat:
      return "float";
    case Kind::kBigDec:
      return "bigdec";
    case Kind::kChar:
      return "char";
    case Kind::kString:
      return "string";
    case Kind::kKeyword:
      return "keyword";
    case Kind::kSymbol:
      return "symbol";
    case Kind::kList:
      return "list";
    case Kind::kVector:
      return "vector";
    case Kind::kMap:
      return "map";
    case Kind::kSet:
      return "set";
    case Kind::kInst:
      return "inst";
    case Kind::kUuid:
      return "uuid";
    case Kind::kBytes:
      return "bytes";
    case Kind::kUri:
      return "uri";
  }
  return "unknown";
}

namespace {

int Rank(Kind k) {
  switch (k) {
    case Kind::kNil:
      return 0;
    case Kind::kBool:
      return 1;
    case Kind::kInt:
    case Kind::kFloat:
      return 2;
    case Kind::kBigInt:
      return 3;
    case Kind::kBigDec:
      return 4;
    case Kind::kChar:
      return 5;
    case Kind::kString:
      return 6;
    case Kind::kKeyword:
      return 7;
    case Kind::kSymbol:
      return 8;
    case Kind::kList:
    case Kind::kVector:
      return 9;
    case Kind::kMap:
      return 10;
    case Kind::kSet:
      return 11;
    case Kind::kInst:
      return 12;
    case Kind::kUuid:
      return 13;
    case Kind::kBytes:
      return 14;
    case Kind::kUri:
      return 15;
  }
  return 16;
}

template <typename T>
int Cmp(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

int CmpText(std::string_view a, std::string_view b) {
  int c = a.compare(b);  // char_traits<char> compares as unsigned char
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

// NaN equals itself and sorts after every other number; -0.0 equals 0.0.
int CmpDouble(double a, double b) {
  bool na = std::isnan(a), nb = std::isnan(b);
  if (na || nb) return Cmp(na, nb);
  return Cmp(a, b);
}

// Exact comparison of an int64 with a double (no rounding of the integer).
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

using decimal::Decimal;

Decimal ParseDecimal(std::string_view t) { return decimal::Parse(t); }

int CmpDecimalText(std::string_view a, std::string_view b) {
  Decimal x = ParseDecimal(a), y = ParseDecimal(b);
  bool xz = x.digits.empty(), yz = y.digits.empty();
  int sx = xz ? 0 : (x.neg ? -1 : 1);
  int sy = yz ? 0 : (y.neg ? -1 : 1);
  if (sx != sy) return Cmp(sx, sy);
  if (sx == 0) return 0;
  int mag = x.exp != y.exp ? Cmp(x.exp, y.exp) : CmpText(x.digits, y.digits);
  return sx < 0 ? -mag : mag;
}

int CmpNumbers(const Value& a, const Value& b) {
  int c;
  if (a.is_int() && b.is_int()) return Cmp(a.as_int(), b.as_int());
  if (a.is_float() && b.is_float()) return CmpDouble(a.as_double(), b.as_double());
  if (a.is_int()) {
    c = CmpIntDouble(a.as_int(), b.as_double());
  } else {
    c = -CmpIntDouble(b.as_int(), a.as_double());
  }
  if (c != 0) return c;
  return a.is_int() ? -1 : 1;  // numerically equal: integers first
}

template <typename Seq, typename ElemCmp>
int CmpSeq(const Seq& a, const Seq& b, ElemCmp elem) {
  size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    int c = elem(a[i], b[i]);
    if (c != 0) return c;
  }
  return Cmp(a.size(), b.size());
}

int CmpEntry(const std::pair<Value, Value>& a, const std::pair<Value, Value>& b) {
  int c = Compare(a.first, b.first);
  return c != 0 ? c : Compare(a.second, b.second);
}

// Compares `v` with the keyword `kw` as Compare(v, Value::Keyword(kw)) would.
int CmpWithKeyword(const Value& v, std::string_view kw) {
  int r = Rank(v.kind()), kr = Rank(Kind::kKeyword);
  if (r != kr) return Cmp(r, kr);
  return CompareNamed(v.str(), kw);
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

uint64_t HashText(std::string_view s) { return std::hash<std::string_view>()(s); }

std::string NormalizeBigInt(std::string digits) {
  size_t i = 0;
  bool neg = false;
  if (i < digits.size() && (digits[i] == '+' || digits[i] == '-')) neg = digits[i++] == '-';
  size_t first = i;
  while (first + 1 < digits.size() && digits[first] == '0') ++first;
  if (first == digits.size()) return "0";
  std::string out;
  if (neg && !(digits.size() - first == 1 && digits[first] == '0')) out.push_back('-');
  out.append(digits, first, std::string::npos);
  return out;
}

const Vec& EmptyVec() {
  static const Vec kEmpty;
  return kEmpty;
}

const MapEntries& EmptyEntries() {
  static const MapEntries kEmpty;
  return kEmpty;
}

}  // namespace

Value Value::Bool(bool b) { return Value(Kind::kBool, Rep(std::in_place_type<bool>, b)); }
Value Value::Int(int64_t i) { return Value(Kind::kInt, Rep(std::in_place_type<int64_t>, i)); }
Value Value::BigInt(std::string digits) {
  return Value(Kind::kBigInt,
               Rep(std::in_place_type<std::string>, NormalizeBigInt(std::move(digits))));
}
Value Value::Float(double d) { return Value(Kind::kFloat, Rep(std::in_place_type<double>, d)); }
Value Value::BigDec(std::string text) {
  if (!text.empty() && text[0] == '+') text.erase(0, 1);
  return Value(Kind::kBigDec, Rep(std::in_place_type<std::string>, std::move(text)));
}
Value Value::Char(char32_t c) { return Value(Kind::kChar, Rep(std::in_place_type<char32_t>, c)); }
Value Value::String(std::string s) {
  return Value(Kind::kString, Rep(std::in_place_type<std::string>, std::move(s)));
}
Value Value::Keyword(std::string_view ns_slash_name) {
  return Value(Kind::kKeyword, Rep(std::in_place_type<std::string>, ns_slash_name));
}
Value Value::Keyword(std::string_view ns, std::string_view name) {
  if (ns.empty()) return Keyword(name);
  std::string s;
  s.reserve(ns.size() + 1 + name.size());
  s.append(ns).push_back('/');
  s.append(name);
  return Value(Kind::kKeyword, Rep(std::in_place_type<std::string>, std::move(s)));
}
Value Value::Symbol(std::string_view ns_slash_name) {
  return Value(Kind::kSymbol, Rep(std::in_place_type<std::string>, ns_slash_name));
}
Value Value::List(Vec items) {
  return Value(Kind::kList, Rep(std::in_place_type<std::shared_ptr<const Vec>>,
                                std::make_shared<const Vec>(std::move(items))));
}
Value Value::Vector(Vec items) {
  return Value(Kind::kVector, Rep(std::in_place_type<std::shared_ptr<const Vec>>,
                                  std::make_shared<const Vec>(std::move(items))));
}

Value Value::Set(Vec items) {
  // The reader hands over sorted, duplicate-free elements; only check them then.
  bool sorted = true;
  for (size_t i = 1; i < items.size() && sorted; ++i) {
    sorted = Compare(items[i - 1], items[i]) < 0;
  }
  if (!sorted) {
    std::stable_sort(items.begin(), items.end(),
                     [](const Value& a, const Value& b) { return Compare(a, b) < 0; });
    items.erase(std::unique(items.begin(), items.end(),
                            [](const Value& a, const Value& b) { return Compare(a, b) == 0; }),
                items.end());
  }
  return Value(Kind::kSet, Rep(std::in_place_type<std::shared_ptr<const Vec>>,
                               std::make_shared<const Vec>(std::move(items))));
}

Value Value::Map(MapEntries entries) {
  bool sorted = true;
  for (size_t i = 1; i < entries.size() && sorted; ++i) {
    sorted = Compare(entries[i - 1].first, entries[i].first) < 0;
  }
  if (!sorted) {
    if (entries.size() <= 16) {
      // Small maps (a pulled entity's attributes): an insertion sort, stable and without
      // the temporary buffer std::stable_sort allocates.
      for (size_t i = 1; i < entries.size(); ++i)
        for (size_t j = i; j > 0 && Compare(entries[j - 1].first, entries[j].first) > 0; --j)
          std::swap(entries[j - 1], entries[j]);
    } else {
      std::stable_sort(entries.begin(), entries.end(),
                       [](const auto& a, const auto& b) { return Compare(a.first, b.first) < 0; });
    }
    // Stable sort keeps equal keys in input order: keep the last of each run.
    size_t w = 0;
    for (size_t i = 0; i < entries.size(); ++i) {
      if (w > 0 && Compare(entries[w - 1].first, entries[i].first) == 0) {
        entries[w - 1] = std::move(entries[i]);
      } else {
        if (w != i) entries[w] = std::move(entries[i]);
        ++w;
      }
    }
    entries.resize(w);
  }
  return Value(Kind::kMap, Rep(std::in_place_type<std::shared_ptr<const MapEntries>>,
                               std::make_shared<const MapEntries>(std::move(entries))));
}

Value Value::Inst(int64_t micros) {
  return Value(Kind::kInst, Rep(std::in_place_type<int64_t>, micros));
}
Value Value::MakeUuid(const Uuid& u) {
  return Value(Kind::kUuid, Rep(std::in_place_type<Uuid>, u));
}
Value Value::Bytes(std::string bytes) {
  return Value(Kind::kBytes, Rep(std::in_place_type<std::string>, std::move(bytes)));
}
Value Value::Uri(std::string text) {
  return Value(Kind::kUri, Rep(std::in_place_type<std::string>, std::move(text)));
}

const Vec& Value::items() const {
  if (const auto* p = std::get_if<std::shared_ptr<const Vec>>(&rep_)) return **p;
  return EmptyVec();
}

const MapEntries& Value::entries() const {
  if (const auto* p = std::get_if<std::shared_ptr<const MapEntries>>(&rep_)) return **p;
  return EmptyEntries();
}

size_t Value::size() const {
  if (const auto* p = std::get_if<std::shared_ptr<const Vec>>(&rep_)) return (*p)->size();
  if (const auto* p = std::get_if<std::shared_ptr<const MapEntries>>(&rep_)) return (*p)->size();
  return 0;
}

std::string_view Value::ns() const {
  if (kind_ != Kind::kKeyword && kind_ != Kind::kSymbol) return {};
  std::string_view s = str();
  size_t slash = s.find('/');
  if (slash == std::string_view::npos || slash == 0) return {};
  return s.substr(0, slash);
}

std::string_view Value::name() const {
  if (kind_ != Kind::kKeyword && kind_ != Kind::kSymbol) return {};
  std::string_view s = str();
  size_t slash = s.find('/');
  if (slash == std::string_view::npos || slash == 0) return s;
  return s.substr(slash + 1);
}

const Value* Value::get(const Value& key) const {
  const MapEntries& es = entries();
  auto it = std::lower_bound(es.begin(), es.end(), key,
                             [](const auto& e, const Value& k) { return Compare(e.first, k) < 0; });
  if (it == es.end() || Compare(it->first, key) != 0) return nullptr;
  return &it->second;
}

const Value* Value::get_keyword(std::string_view kw) const {
  const MapEntries& es = entries();
  auto it = std::lower_bound(es.begin(), es.end(), kw, [](const auto& e, std::string_view k) {
    return CmpWithKeyword(e.first, k) < 0;
  });
  if (it == es.end() || CmpWithKeyword(it->first, kw) != 0) return nullptr;
  return &it->second;
}

int Compare(const Value& a, const Value& b) {
  int ra = Rank(a.kind_), rb = Rank(b.kind_);
  if (ra != rb) return Cmp(ra, rb);
  switch (a.kind_) {
    case Kind::kNil:
      return 0;
    case Kind::kBool:
      return Cmp(a.as_bool(), b.as_bool());
    case Kind::kInt:
    case Kind::kFloat:
      return CmpNumbers(a, b);
    case Kind::kBigInt:
    case Kind::kBigDec: {
      int c = CmpDecimalText(a.str(), b.str());
      return c != 0 ? c : CmpText(a.str(), b.str());
    }
    case Kind::kChar:
      return Cmp(a.as_char(), b.as_char());
    case Kind::kKeyword:
    case Kind::kSymbol:
      return CompareNamed(a.str(), b.str());
    case Kind::kString:
    case Kind::kBytes:
    case Kind::kUri:
      return CmpText(a.str(), b.str());
    case Kind::kList:
    case Kind::kVector:
    case Kind::kSet:
      return CmpSeq(a.items(), b.items(), Compare);
    case Kind::kMap:
      return CmpSeq(a.entries(), b.entries(), CmpEntry);
    case Kind::kInst:
      return Cmp(a.as_inst_micros(), b.as_inst_micros());
    case Kind::kUuid:
      return Cmp(a.as_uuid(), b.as_uuid());
  }
  return 0;
}

bool operator==(const Value& a, const Value& b) {
  if (a.kind_ != b.kind_) {
    bool seqs = (a.kind_ == Kind::kList || a.kind_ == Kind::kVector) &&
                (b.kind_ == Kind::kList || b.kind_ == Kind::kVector);
    return seqs && a.items() == b.items();
  }
  switch (a.kind_) {
    case Kind::kNil:
      return true;
    case Kind::kBool:
      return a.as_bool() == b.as_bool();
    case Kind::kInt:
      return a.as_int() == b.as_int();
    case Kind::kFloat:
      return CmpDouble(a.as_double(), b.as_double()) == 0;
    case Kind::kBigInt:
    case Kind::kBigDec:
    case Kind::kString:
    case Kind::kKeyword:
    case Kind::kSymbol:
    case Kind::kBytes:
    case Kind::kUri:
      return a.str() == b.str();
    case Kind::kChar:
      return a.as_char() == b.as_char();
    case Kind::kList:
    case Kind::kVector:
    case Kind::kSet:
      return &a.items() == &b.items() || a.items() == b.items();
    case Kind::kMap:
      return &a.entries() == &b.entries() || a.entries() == b.entries();
    case Kind::kInst:
      return a.as_inst_micros() == b.as_inst_micros();
    case Kind::kUuid:
      return a.as_uuid() == b.as_uuid();
  }
  return false;
}

size_t Value::Hash() const {
  // Lists hash like vectors because they can be equal.
  Kind seed_kind = kind_ == Kind::kList ? Kind::kVector : kind_;
  uint64_t h = Mix(static_cast<uint64_t>(seed_kind) + 0x51ed270b27ULL);
  switch (kind_) {
    case Kind::kNil:
      return h;
    case Kind::kBool:
      return Combine(h, as_bool());
    case Kind::kInt:
    case Kind::kInst:
      return Combine(h, static_cast<uint64_t>(as_int()));
    case Kind::kFloat: {
      double d = as_double();
      if (d == 0) d = 0;  // -0.0 == 0.0
      if (std::isnan(d)) d = std::numeric_limits<double>::quiet_NaN();
      uint64_t bits;
      std::memcpy(&bits, &d, sizeof bits);
      return Combine(h, bits);
    }
    case Kind::kChar:
      return Combine(h, as_char());
    case Kind::kBigInt:
    case Kind::kBigDec:
    case Kind::kString:
    case Kind::kKeyword:
    case Kind::kSymbol:
    case Kind::kBytes:
    case Kind::kUri:
      return Combine(h, HashText(str()));
    case Kind::kList:
    case Kind::kVector:
    case Kind::kSet:
      for (const Value& v : items()) h = Combine(h, v.Hash());
      return h;
    case Kind::kMap:
      for (const auto& [k, v] : entries()) h = Combine(Combine(h, k.Hash()), v.Hash());
      return h;
    case Kind::kUuid: {
      uint64_t lo, hi;
      std::memcpy(&hi, as_uuid().data(), 8);
      std::memcpy(&lo, as_uuid().data() + 8, 8);
      return Combine(Combine(h, hi), lo);
    }
  }
  return h;
}

}  // namespace mentat::edn
