// SQL functions used by compiled queries: Clojure-like str, ratio-free division, subs,
// regular expressions (util/regex.h, RE2 syntax; compiled patterns are cached per
// statement with sqlite3_set_auxdata), and the entity sets of entity_sets.cc.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mentat/edn.h"
#include "mentat/status.h"
#include "schema/codec.h"
#include "storage/sqlite_api.h"
#include "util/case.h"
#include "util/decimal.h"
#include "util/named_order.h"
#include "util/regex.h"

namespace mentat::query {

namespace {

// Java's Double.toString, which Clojure's str uses: "1.0", "0.5", "1.0E20".
std::string FormatDouble(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  char buf[64];
  for (int p = 1; p <= 17; ++p) {
    snprintf(buf, sizeof buf, "%.*g", p, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  std::string s = buf;
  double a = std::fabs(d);
  if (a != 0 && (a < 1e-3 || a >= 1e7)) {
    // Scientific: mantissa with at least one decimal, 'E', exponent without '+' or zeros.
    char m[64];
    int exp = 0;
    for (int p = 1; p <= 17; ++p) {
      snprintf(m, sizeof m, "%.*e", p - 1, d);
      if (std::strtod(m, nullptr) == d) break;
    }
    std::string ms = m;
    auto e = ms.find('e');
    exp = std::stoi(ms.substr(e + 1));
    std::string mant = ms.substr(0, e);
    if (mant.find('.') == std::string::npos) mant += ".0";
    return mant + "E" + std::to_string(exp);
  }
  if (s.find('e') != std::string::npos) {
    snprintf(buf, sizeof buf, "%.17f", d);
    s = buf;
    while (!s.empty() && s.back() == '0') s.pop_back();
  }
  if (s.find('.') == std::string::npos) s += ".0";
  if (s.back() == '.') s += "0";
  return s;
}

void ResultString(sqlite3_context* ctx, const std::string& s) {
  sqlite3_result_text(ctx, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
}

void StrFn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  sqlite3_value* v = argv[0];
  switch (sqlite3_value_type(v)) {
    case SQLITE_INTEGER:
      ResultString(ctx, std::to_string(sqlite3_value_int64(v)));
      break;
    case SQLITE_FLOAT:
      ResultString(ctx, FormatDouble(sqlite3_value_double(v)));
      break;
    case SQLITE_TEXT:
      sqlite3_result_value(ctx, v);
      break;
    case SQLITE_BLOB: {
      const auto* p = static_cast<const uint8_t*>(sqlite3_value_blob(v));
      int n = sqlite3_value_bytes(v);
      if (n == 16) {
        edn::Uuid u;
        for (int i = 0; i < 16; ++i) u[i] = p[i];
        ResultString(ctx, edn::FormatUuid(u));
      } else {
        static const char* kHex = "0123456789abcdef";
        std::string s;
        for (int i = 0; i < n; ++i) {
          s += kHex[p[i] >> 4];
          s += kHex[p[i] & 15];
        }
        ResultString(ctx, s);
      }
      break;
    }
    default:
      ResultString(ctx, "");
      break;
  }
}

// mentat_decimal_key(x): the stored form (util/decimal.h) of a number compared with a
// bigint or bigdec; a key (BLOB) as it is; NULL for anything else.
void DecimalKeyFn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  sqlite3_value* v = argv[0];
  std::optional<std::string> key;
  switch (sqlite3_value_type(v)) {
    case SQLITE_INTEGER:
      key = schema::DecimalKey(edn::Value::Int(sqlite3_value_int64(v)));
      break;
    case SQLITE_FLOAT:
      key = schema::DecimalKey(edn::Value::Float(sqlite3_value_double(v)));
      break;
    case SQLITE_BLOB:
      return sqlite3_result_value(ctx, v);
    default:
      break;
  }
  if (!key) return sqlite3_result_null(ctx);
  sqlite3_result_blob(ctx, key->data(), static_cast<int>(key->size()), SQLITE_TRANSIENT);
}

// mentat_fmt_decimal(key, integer): the text of a bigint (integer 1) or bigdec key, as str
// prints it.
void FmtDecimalFn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  if (sqlite3_value_type(argv[0]) != SQLITE_BLOB) return sqlite3_result_null(ctx);
  std::string_view key(static_cast<const char*>(sqlite3_value_blob(argv[0])),
                       static_cast<size_t>(sqlite3_value_bytes(argv[0])));
  auto d = decimal::FromKey(key);
  if (!d) return sqlite3_result_null(ctx);
  ResultString(ctx, decimal::Format(*d, sqlite3_value_int(argv[1]) != 0));
}

void FmtInstFn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL) return sqlite3_result_null(ctx);
  ResultString(ctx, edn::FormatInstant(sqlite3_value_int64(argv[0])));
}

void FmtUuidFn(sqlite3_context* ctx, int argc, sqlite3_value** argv) { StrFn(ctx, argc, argv); }

// (/ a b): a long when exact, else a double; NULL on division by zero.
void DivFn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL || sqlite3_value_type(argv[1]) == SQLITE_NULL)
    return sqlite3_result_null(ctx);
  if (sqlite3_value_type(argv[0]) == SQLITE_INTEGER &&
      sqlite3_value_type(argv[1]) == SQLITE_INTEGER) {
    int64_t a = sqlite3_value_int64(argv[0]), b = sqlite3_value_int64(argv[1]);
    if (b == 0) return sqlite3_result_null(ctx);
    if (b == -1 && a == INT64_MIN) return sqlite3_result_double(ctx, -static_cast<double>(a));
    if (a % b == 0) return sqlite3_result_int64(ctx, a / b);
    return sqlite3_result_double(ctx, static_cast<double>(a) / static_cast<double>(b));
  }
  double b = sqlite3_value_double(argv[1]);
  if (b == 0) return sqlite3_result_null(ctx);
  sqlite3_result_double(ctx, sqlite3_value_double(argv[0]) / b);
}

// Counts UTF-8 code points; `s` is valid UTF-8 from SQLite.
size_t Utf8Len(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

size_t Utf8Offset(const std::string& s, size_t chars) {
  size_t i = 0, n = 0;
  while (i < s.size() && n < chars) {
    ++i;
    while (i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) ++i;
    ++n;
  }
  return i;
}

// (subs s start end?): NULL when out of range (Clojure throws).
void SubsFn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  if (sqlite3_value_type(argv[0]) != SQLITE_TEXT) return sqlite3_result_null(ctx);
  std::string s(reinterpret_cast<const char*>(sqlite3_value_text(argv[0])),
                sqlite3_value_bytes(argv[0]));
  int64_t len = static_cast<int64_t>(Utf8Len(s));
  int64_t start = sqlite3_value_int64(argv[1]);
  int64_t end = argc > 2 ? sqlite3_value_int64(argv[2]) : len;
  if (start < 0 || end > len || start > end) return sqlite3_result_null(ctx);
  size_t b = Utf8Offset(s, static_cast<size_t>(start));
  size_t e = Utf8Offset(s, static_cast<size_t>(end));
  ResultString(ctx, s.substr(b, e - b));
}

// upper-case / lower-case: full Unicode mappings (util/case.h); SQLite's upper() and
// lower() change ASCII only.
template <bool kUpper>
void CaseFn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL) return sqlite3_result_null(ctx);
  std::string_view s(reinterpret_cast<const char*>(sqlite3_value_text(argv[0])),
                     static_cast<size_t>(sqlite3_value_bytes(argv[0])));
  ResultString(ctx, kUpper ? text::UpperCase(s) : text::LowerCase(s));
}

// COLLATE mentat_named: keywords (TEXT with their colon) by namespace, then name.
int NamedCollation(void*, int na, const void* a, int nb, const void* b) {
  return CompareNamed(std::string_view(static_cast<const char*>(a), static_cast<size_t>(na)),
                      std::string_view(static_cast<const char*>(b), static_cast<size_t>(nb)));
}

using RegexPtr = std::shared_ptr<const regex::Regex>;

void DeleteRegex(void* p) { delete static_cast<RegexPtr*>(p); }

// The compiled pattern of argv[0], kept with the statement while the argument is constant.
RegexPtr RegexArg(sqlite3_context* ctx, sqlite3_value** argv) {
  if (auto* kept = static_cast<RegexPtr*>(sqlite3_get_auxdata(ctx, 0))) return *kept;
  if (sqlite3_value_type(argv[0]) != SQLITE_TEXT) {
    sqlite3_result_error(ctx, "re-find: the pattern must be a string", -1);
    return nullptr;
  }
  std::string_view pat(reinterpret_cast<const char*>(sqlite3_value_text(argv[0])),
                       static_cast<size_t>(sqlite3_value_bytes(argv[0])));
  auto re = regex::Regex::Compile(pat);
  if (!re.ok()) {
    sqlite3_result_error(ctx, re.status().message().c_str(), -1);
    return nullptr;
  }
  RegexPtr compiled = *re;
  // set_auxdata deletes the holder at once when the argument is not constant.
  sqlite3_set_auxdata(ctx, 0, new RegexPtr(compiled), DeleteRegex);
  return compiled;
}

// The subject of a regex function (argv[1]); false, with a NULL result, when it is not text.
bool Subject(sqlite3_context* ctx, sqlite3_value** argv, std::string_view* s) {
  if (sqlite3_value_type(argv[1]) != SQLITE_TEXT) {
    sqlite3_result_null(ctx);
    return false;
  }
  *s = std::string_view(reinterpret_cast<const char*>(sqlite3_value_text(argv[1])),
                        static_cast<size_t>(sqlite3_value_bytes(argv[1])));
  return true;
}

// mentat_re_find(pattern, s) / mentat_re_matches: the match, NULL when there is none.
// mentat_re_find_group(pattern, s, i) / mentat_re_matches_group: group i of the match
// (0: the whole match), NULL when there is no match or the group took no part.
// One row calls them more than once on one subject (the groups in turn; a function bound
// to a variable for the row's filter, then for its value): the last match is kept per
// thread, so the pattern runs once per row.
struct LastGroups {
  RegexPtr re;
  bool whole = false;
  std::string subject;
  bool ok = false;
  std::vector<std::optional<std::string>> groups;
};

const LastGroups& MatchOf(const RegexPtr& re, bool whole, std::string_view s) {
  thread_local LastGroups last;
  if (last.re != re || last.whole != whole || last.subject != s) {
    regex::Match m;
    last.ok = whole ? re->FullMatch(s, &m) : re->Find(s, 0, &m);
    last.groups.clear();
    for (const auto& x : m.groups)
      last.groups.push_back(x ? std::optional<std::string>(std::string(*x)) : std::nullopt);
    last.re = re;
    last.whole = whole;
    last.subject.assign(s);
  }
  return last;
}

void ResultGroup(sqlite3_context* ctx, const RegexPtr& re, bool whole, std::string_view s,
                 int64_t g) {
  const LastGroups& last = MatchOf(re, whole, s);
  if (!last.ok || g < 0 || static_cast<size_t>(g) >= last.groups.size() ||
      !last.groups[static_cast<size_t>(g)])
    return sqlite3_result_null(ctx);
  ResultString(ctx, *last.groups[static_cast<size_t>(g)]);
}

void ReFn(sqlite3_context* ctx, sqlite3_value** argv, bool whole) {
  RegexPtr re = RegexArg(ctx, argv);
  std::string_view s;
  if (!re || !Subject(ctx, argv, &s)) return;
  ResultGroup(ctx, re, whole, s, 0);
}

void ReGroupFn(sqlite3_context* ctx, sqlite3_value** argv, bool whole) {
  RegexPtr re = RegexArg(ctx, argv);
  std::string_view s;
  if (!re || !Subject(ctx, argv, &s)) return;
  ResultGroup(ctx, re, whole, s, sqlite3_value_int64(argv[2]));
}

void ReFindGroupFn(sqlite3_context* ctx, int, sqlite3_value** argv) { ReGroupFn(ctx, argv, false); }
void ReMatchesGroupFn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  ReGroupFn(ctx, argv, true);
}

void ReFindFn(sqlite3_context* ctx, int, sqlite3_value** argv) { ReFn(ctx, argv, false); }
void ReMatchesFn(sqlite3_context* ctx, int, sqlite3_value** argv) { ReFn(ctx, argv, true); }

// ---- Entity sets (entity_sets.cc) ----
// mentat_eset(e), an aggregate, collects integers into a set passed on as an SQLite
// pointer value (sqlite3_result_pointer): SQLite frees it with the statement's registers,
// and a pointer value cannot be forged from SQL text. mentat_in_eset(set, e) is 1 when e is
// in it. A set is a bitmap over [min, max] when that is at most 64 bits per member, else a
// sorted vector.
constexpr char kEntitySetType[] = "mentat_eset";
std::atomic<bool> g_entity_sets_usable{false};

class EntitySet {
 public:
  explicit EntitySet(std::vector<int64_t> ids) {
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    if (ids.empty()) return;
    lo_ = ids.front();
    // max - min as unsigned cannot overflow; + 1 can only when it is not a bitmap.
    uint64_t last = static_cast<uint64_t>(ids.back()) - static_cast<uint64_t>(lo_);
    if (last / 64 < ids.size()) {
      span_ = last + 1;
      bits_.assign(last / 64 + 1, 0);
      for (int64_t id : ids) {
        uint64_t o = static_cast<uint64_t>(id) - static_cast<uint64_t>(lo_);
        bits_[o >> 6] |= uint64_t{1} << (o & 63);
      }
    } else {
      sorted_ = std::move(ids);
    }
  }
  bool Contains(int64_t id) const {
    if (!bits_.empty()) {
      uint64_t o = static_cast<uint64_t>(id) - static_cast<uint64_t>(lo_);
      return o < span_ && ((bits_[o >> 6] >> (o & 63)) & 1);
    }
    return std::binary_search(sorted_.begin(), sorted_.end(), id);
  }

 private:
  int64_t lo_ = 0;
  uint64_t span_ = 0;
  std::vector<uint64_t> bits_;
  std::vector<int64_t> sorted_;
};

struct EntitySetBuilder {
  std::vector<int64_t>* ids;  // owned; the aggregate context is zeroed memory
};

void EsetStep(sqlite3_context* ctx, int, sqlite3_value** argv) {
  auto* b =
      static_cast<EntitySetBuilder*>(sqlite3_aggregate_context(ctx, sizeof(EntitySetBuilder)));
  if (!b) return sqlite3_result_error_nomem(ctx);
  if (sqlite3_value_type(argv[0]) != SQLITE_INTEGER) return;
  if (!b->ids) b->ids = new std::vector<int64_t>();
  b->ids->push_back(sqlite3_value_int64(argv[0]));
}

void EsetFinal(sqlite3_context* ctx) {
  auto* b = static_cast<EntitySetBuilder*>(sqlite3_aggregate_context(ctx, 0));
  std::vector<int64_t> ids;
  if (b && b->ids) {
    ids = std::move(*b->ids);
    delete b->ids;
    b->ids = nullptr;
  }
  sqlite3_result_pointer(ctx, new EntitySet(std::move(ids)), kEntitySetType,
                         [](void* p) { delete static_cast<EntitySet*>(p); });
}

void InEsetFn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  const auto* set = static_cast<const EntitySet*>(sqlite3_value_pointer(argv[0], kEntitySetType));
  if (!set)
    return sqlite3_result_error(
        ctx, "mentat_in_eset: the first argument is not a set made by mentat_eset", -1);
  sqlite3_result_int(ctx, sqlite3_value_type(argv[1]) == SQLITE_INTEGER &&
                              set->Contains(sqlite3_value_int64(argv[1])));
}

}  // namespace

Status RegisterTupleFunctions(sqlite3* db);  // sql_tuple_functions.cc

Status RegisterFunctions(sqlite3* db) {
  struct Fn {
    const char* name;
    int argc;
    void (*fn)(sqlite3_context*, int, sqlite3_value**);
  };
  static const Fn kFns[] = {
      {"mentat_str", 1, StrFn},
      {"mentat_fmt_inst", 1, FmtInstFn},
      {"mentat_fmt_uuid", 1, FmtUuidFn},
      {"mentat_decimal_key", 1, DecimalKeyFn},
      {"mentat_fmt_decimal", 2, FmtDecimalFn},
      {"mentat_div", 2, DivFn},
      {"mentat_subs", 2, SubsFn},
      {"mentat_subs", 3, SubsFn},
      {"mentat_re_find", 2, ReFindFn},
      {"mentat_re_matches", 2, ReMatchesFn},
      {"mentat_upper", 1, CaseFn<true>},
      {"mentat_lower", 1, CaseFn<false>},
      {"mentat_re_find_group", 3, ReFindGroupFn},
      {"mentat_re_matches_group", 3, ReMatchesGroupFn},
  };
  for (const Fn& f : kFns) {
    int rc = sqlite3_create_function_v2(db, f.name, f.argc,
                                        SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
                                        nullptr, f.fn, nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK)
      return Status::Internal(std::string("cannot register ") + f.name + ": " + sqlite3_errstr(rc));
  }
  if (int rc = sqlite3_create_collation_v2(db, "mentat_named", SQLITE_UTF8, nullptr, NamedCollation,
                                           nullptr);
      rc != SQLITE_OK)
    return Status::Internal(std::string("cannot register the collation mentat_named: ") +
                            sqlite3_errstr(rc));
  int rc = sqlite3_create_function_v2(db, "mentat_eset", 1, SQLITE_UTF8 | SQLITE_INNOCUOUS, nullptr,
                                      nullptr, EsetStep, EsetFinal, nullptr);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_function_v2(db, "mentat_in_eset", 2,
                                    SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, nullptr,
                                    InEsetFn, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK)
    return Status::Internal(std::string("cannot register the entity set functions: ") +
                            sqlite3_errstr(rc));
  MENTAT_RETURN_IF_ERROR(RegisterTupleFunctions(db));
  if (!g_entity_sets_usable.load(std::memory_order_acquire)) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT mentat_in_eset((SELECT mentat_eset(7)), 7)", -1, &st,
                           nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) == 1)
      g_entity_sets_usable.store(true, std::memory_order_release);
    sqlite3_finalize(st);
  }
  return Status::OK();
}

bool EntitySetsUsable() { return g_entity_sets_usable.load(std::memory_order_acquire); }

std::string FormatDoubleForStr(double d) { return FormatDouble(d); }

}  // namespace mentat::query
