#include "pg/connection.h"

#include <libpq-fe.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "util/json_text.h"

namespace mentat::pg {

namespace {

// Type OIDs of the parameter kinds (pg_type.h: INT8OID, FLOAT8OID, TEXTOID, BYTEAOID,
// BOOLOID); a NULL of unknown kind is left for the server to infer (0).
constexpr Oid kInt8 = 20, kFloat8 = 701, kText = 25, kBytea = 17, kBool = 16, kFloat4 = 700,
              kInt4 = 23, kInt2 = 21, kVarchar = 1043, kName = 19, kNumeric = 1700, kOid = 26,
              kJsonb = 3802;

// Whether waiting statements (Connection::later_) include a transaction's own, not only
// SETs (which wait outside a transaction too).
template <class Waiting>
bool AnyWrites(const Waiting& later) {
  return std::any_of(later.begin(), later.end(), [](const auto& w) { return w.sql.empty(); });
}

Oid OidOf(Kind k) {
  switch (k) {
    case Kind::kInt:
      return kInt8;
    case Kind::kReal:
      return kFloat8;
    case Kind::kText:
      return kText;
    case Kind::kBlob:
      return kBytea;
    case Kind::kNull:
      return 0;
  }
  return 0;
}

void PutBE(std::string* out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t GetBE(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

const char kHex[] = "0123456789abcdef";

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void AppendUtf8(std::string* out, uint32_t cp) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xc0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xe0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else {
    out->push_back(static_cast<char>(0xf0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  }
}

// The JSON string starting at `p` (its opening quote), unescaped.
std::string JsonUnquote(std::string_view p) {
  std::string out;
  out.reserve(p.size());
  for (size_t i = 1; i < p.size(); ++i) {
    char ch = p[i];
    if (ch == '"') break;
    if (ch != '\\' || i + 1 >= p.size()) {
      out.push_back(ch);
      continue;
    }
    char e = p[++i];
    switch (e) {
      case 'n':
        out.push_back('\n');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case 'b':
        out.push_back('\b');
        break;
      case 'f':
        out.push_back('\f');
        break;
      case 'u': {
        uint32_t cp = 0;
        for (int k = 0; k < 4 && i + 1 < p.size(); ++k) cp = cp * 16 + HexDigit(p[++i]);
        if (cp >= 0xd800 && cp < 0xdc00 && i + 6 < p.size() && p[i + 1] == '\\' &&
            p[i + 2] == 'u') {
          uint32_t lo = 0;
          for (int k = 0; k < 4; ++k) lo = lo * 16 + HexDigit(p[i + 3 + k]);
          cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
          i += 6;
        }
        AppendUtf8(&out, cp);
        break;
      }
      default:
        out.push_back(e);
    }
  }
  return out;
}

// The JSON value stored for a parameter of `kind` whose binary form is `bytes` (doc/postgres.md
// "Values"), in jsonb's binary format (a version byte, then the text).
std::string JsonbOf(Kind kind, const std::string& bytes) {
  std::string out(1, '\x01');
  switch (kind) {
    case Kind::kInt:
      out += std::to_string(static_cast<int64_t>(GetBE(bytes.data(), 8)));
      break;
    case Kind::kReal: {
      uint64_t bits = GetBE(bytes.data(), 8);
      double d;
      std::memcpy(&d, &bits, 8);
      out += JsonDouble(d);
      break;
    }
    case Kind::kText:
      out += JsonString(bytes);
      break;
    case Kind::kBlob:
      out += "{\"b\": \"";
      for (unsigned char b : bytes) {
        out.push_back(kHex[b >> 4]);
        out.push_back(kHex[b & 15]);
      }
      out += "\"}";
      break;
    case Kind::kNull:
      out += "null";
      break;
  }
  return out;
}

// The storage class of a jsonb value's text (after the version byte).
Kind JsonKind(std::string_view t) {
  if (t.empty()) return Kind::kNull;
  switch (t[0]) {
    case '"':
      return Kind::kText;
    case '{':
      return t.find("\"b\"") != std::string_view::npos ? Kind::kBlob : Kind::kReal;
    case 'n':
      return Kind::kNull;
    case 't':
    case 'f':
      return Kind::kInt;
    default:
      return t.find_first_of(".eE") == std::string_view::npos ? Kind::kInt : Kind::kReal;
  }
}

// A numeric in PostgreSQL's binary form (ndigits, weight, sign, dscale, base-10000 digits)
// as decimal text ("NaN", "Infinity" and "-Infinity" as such), and whether it has no
// fraction.
std::string NumericText(const char* p, int len, bool* integral) {
  *integral = true;
  if (len < 8) return "0";
  int ndigits = static_cast<int16_t>(GetBE(p, 2));
  int weight = static_cast<int16_t>(GetBE(p + 2, 2));
  auto sign = static_cast<uint16_t>(GetBE(p + 4, 2));
  int dscale = static_cast<int16_t>(GetBE(p + 6, 2));
  if (sign == 0xC000 || sign == 0xD000 || sign == 0xF000) {
    *integral = false;
    return sign == 0xC000 ? "NaN" : sign == 0xD000 ? "Infinity" : "-Infinity";
  }
  *integral = dscale == 0;
  auto digit = [&](int i) -> int {
    return i >= 0 && i < ndigits && 8 + 2 * i + 1 < len ? static_cast<int>(GetBE(p + 8 + 2 * i, 2))
                                                        : 0;
  };
  std::string out = sign == 0x4000 ? "-" : "";
  // The integer part: groups 0..weight.
  if (weight < 0) {
    out += "0";
  } else {
    for (int i = 0; i <= weight; ++i) {
      char buf[8];
      std::snprintf(buf, sizeof buf, i == 0 ? "%d" : "%04d", digit(i));
      out += buf;
    }
  }
  if (dscale > 0) {
    std::string frac;
    for (int i = weight + 1; static_cast<int>(frac.size()) < dscale; ++i) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "%04d", digit(i));
      frac += buf;
    }
    out += "." + frac.substr(0, static_cast<size_t>(dscale));
  }
  return out;
}

double NumericValue(const char* p, int len, bool* integral) {
  return std::strtod(NumericText(p, len, integral).c_str(), nullptr);
}

// The same numeric as an integer, exactly when it fits.
int64_t NumericInt(const char* p, int len) {
  if (len < 8) return 0;
  int ndigits = static_cast<int16_t>(GetBE(p, 2));
  int weight = static_cast<int16_t>(GetBE(p + 2, 2));
  auto sign = static_cast<uint16_t>(GetBE(p + 4, 2));
  __int128 v = 0;
  for (int i = 0; i <= weight; ++i) {
    v *= 10000;
    if (i < ndigits && 8 + 2 * i + 1 < len) v += static_cast<int64_t>(GetBE(p + 8 + 2 * i, 2));
  }
  if (sign == 0x4000) v = -v;
  return static_cast<int64_t>(v);
}
}  // namespace

bool IsPostgresName(std::string_view name) {
  if (name.rfind("postgresql://", 0) == 0 || name.rfind("postgres://", 0) == 0) return true;
  size_t eq = name.find('=');
  if (eq == std::string_view::npos || eq == 0) return false;
  size_t slash = name.find('/');
  if (slash != std::string_view::npos && slash < eq) return false;
  // A keyword string starts with a libpq keyword: letters and underscores, then '='
  // (optionally after spaces).
  size_t i = 0;
  while (i < name.size() && name[i] == ' ') ++i;
  size_t start = i;
  while (i < name.size() && (std::isalpha(static_cast<unsigned char>(name[i])) || name[i] == '_'))
    ++i;
  if (i == start) return false;
  while (i < name.size() && name[i] == ' ') ++i;
  return i < name.size() && name[i] == '=';
}

Status ErrorStatus(std::string_view sqlstate, std::string_view message) {
  std::string msg(message);
  while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
  if (msg.rfind("ERROR:  ", 0) == 0) msg = msg.substr(8);
  std::string code(sqlstate);
  if (code == "40001" || code == "40P01" || code == "55P03") return Status::Busy(msg);
  if (code == "57014") {
    if (msg.find("statement timeout") != std::string::npos)
      return Status::Interrupted("interrupted: timeout: " + msg);
    return Status::Interrupted("interrupted");
  }
  if (code.rfind("23", 0) == 0) return Status::Conflict(msg);
  if (code == "25006" || code == "0A000") return Status::Unsupported(msg);
  if (code.rfind("42", 0) == 0) return Status::InvalidArgument(msg);
  return Status::Io(msg);
}

std::string PgPlaceholders(std::string_view sql, std::vector<int>* occurrences) {
  std::string out;
  out.reserve(sql.size() + 8);
  int next = 1;
  size_t i = 0;
  auto copy_until = [&](char close) {
    out.push_back(sql[i++]);
    while (i < sql.size()) {
      char ch = sql[i++];
      out.push_back(ch);
      if (ch == close) {
        if (i < sql.size() && sql[i] == close) {  // a doubled quote stays inside
          out.push_back(sql[i++]);
          continue;
        }
        return;
      }
    }
  };
  while (i < sql.size()) {
    char ch = sql[i];
    if (ch == '\'' || ch == '"') {
      copy_until(ch);
    } else if (ch == '-' && i + 1 < sql.size() && sql[i + 1] == '-') {
      size_t end = sql.find('\n', i);
      if (end == std::string_view::npos) end = sql.size();
      out.append(sql.substr(i, end - i));
      i = end;
    } else if (ch == '/' && i + 1 < sql.size() && sql[i + 1] == '*') {
      size_t end = sql.find("*/", i + 2);
      end = end == std::string_view::npos ? sql.size() : end + 2;
      out.append(sql.substr(i, end - i));
      i = end;
    } else if (ch == '?') {
      ++i;
      size_t start = i;
      while (i < sql.size() && std::isdigit(static_cast<unsigned char>(sql[i]))) ++i;
      out.push_back('$');
      int n = next;
      if (i > start) {
        n = std::atoi(std::string(sql.substr(start, i - start)).c_str());
        next = std::max(next, n + 1);
      } else {
        ++next;
      }
      if (occurrences) {
        occurrences->push_back(n);
        out += std::to_string(occurrences->size());
      } else {
        out += std::to_string(n);
      }
    } else {
      out.push_back(ch);
      ++i;
    }
  }
  return out;
}

// ---- Statement ----

Statement::~Statement() {
  if (result_) PQclear(result_);
  conn_->Drain();
  // Waiting statements may name this one's server-side statements, dropped below.
  if (!conn_->closing_ && !conn_->later_.empty()) {
    Status st = conn_->Flush();
    if (!st.ok() && conn_->later_error_.ok()) conn_->later_error_ = st;
  }
  // Best effort: in a failed transaction the server refuses it, and the names go with the
  // session.
  auto drop = [this](const std::string& name) {
    if (!conn_->closing_ && PQtransactionStatus(conn_->conn_) != PQTRANS_INERROR)
      PQclear(PQexec(conn_->conn_, ("DEALLOCATE " + name).c_str()));
  };
  for (const auto& [sig, name] : prepared_) drop(name);
  if (described_ && !typed_only_) drop(untyped_);
}

void Statement::Bind(int i, Kind k, std::string bytes) {
  if (i < 1) return;
  if (params_.size() < static_cast<size_t>(i)) params_.resize(static_cast<size_t>(i));
  Param& p = params_[static_cast<size_t>(i) - 1];
  if (k != Kind::kNull) p.kind = k;
  p.null = k == Kind::kNull;
  p.bytes = std::move(bytes);
}

void Statement::BindInt(int i, int64_t v) {
  std::string b;
  PutBE(&b, static_cast<uint64_t>(v), 8);
  Bind(i, Kind::kInt, std::move(b));
}

void Statement::BindDouble(int i, double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  std::string b;
  PutBE(&b, bits, 8);
  Bind(i, Kind::kReal, std::move(b));
}

void Statement::BindText(int i, std::string_view v) { Bind(i, Kind::kText, std::string(v)); }
void Statement::BindBlob(int i, std::string_view v) { Bind(i, Kind::kBlob, std::string(v)); }
void Statement::BindNull(int i) { Bind(i, Kind::kNull, std::string()); }

Status Statement::Describe() {
  conn_->Drain();
  // The transaction's state below is the server's after the waiting statements.
  MENTAT_RETURN_IF_ERROR(conn_->Flush());
  PGconn* c = conn_->conn_;
  std::string name = "m" + std::to_string(conn_->next_name_++);
  // Inside a transaction a failed prepare would abort it: the first try runs in a
  // savepoint.
  const bool in_txn = PQtransactionStatus(c) == PQTRANS_INTRANS;
  if (in_txn) PQclear(PQexec(c, "SAVEPOINT mentat_prepare"));
  PGresult* r = PQprepare(c, name.c_str(), sql_.c_str(), 0, nullptr);
  if (in_txn)
    PQclear(PQexec(c, PQresultStatus(r) == PGRES_COMMAND_OK
                          ? "RELEASE mentat_prepare"
                          : "ROLLBACK TO mentat_prepare; RELEASE mentat_prepare"));
  if (PQresultStatus(r) != PGRES_COMMAND_OK) {
    const char* state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    // A parameter the server cannot type from its context (`to_jsonb($1)`): the statement
    // is prepared for the kinds bound, execution by execution.
    if (state && (std::string_view(state) == "42P18" || std::string_view(state) == "42725")) {
      PQclear(r);
      typed_only_ = true;
      described_ = true;
      return Status::OK();
    }
    Status st = conn_->Error("prepare", r);
    PQclear(r);
    return st;
  }
  PQclear(r);
  r = PQdescribePrepared(c, name.c_str());
  if (PQresultStatus(r) != PGRES_COMMAND_OK) {
    Status st = conn_->Error("describe", r);
    PQclear(r);
    return st;
  }
  inferred_.assign(static_cast<size_t>(PQnparams(r)), 0);
  for (int i = 0; i < PQnparams(r); ++i) inferred_[static_cast<size_t>(i)] = PQparamtype(r, i);
  PQclear(r);
  untyped_ = std::move(name);
  described_ = true;
  return Status::OK();
}

Status Statement::Execute(bool later) {
  // (A COMMIT on its way, CommitAsync, is read in the pipeline this execution goes out in,
  // or before a statement that goes alone: no round trip of its own.)
  if (!conn_->later_error_.ok()) return std::exchange(conn_->later_error_, Status::OK());
  if (!described_) MENTAT_RETURN_IF_ERROR(Describe());
  // The server's parameters: one per occurrence of a SQLite parameter (each typed by its
  // own context), or the bound ones in order for SQL written with $N.
  const size_t n =
      !occ_.empty() ? occ_.size() : std::max(params_.size(), typed_only_ ? 0 : inferred_.size());
  if (typed_only_ || inferred_.size() < n) inferred_.resize(n, 0);
  // Each parameter goes as the type the server inferred when that is a JSON value (the
  // value column), else as the type of the kind it was bound with; a statement whose types
  // all agree with the inferred ones runs as first prepared.
  std::string sig;
  sig.reserve(n);
  std::vector<Oid> types(n);
  std::vector<const char*> values(n);
  std::vector<int> lengths(n), formats(n, 1);
  std::vector<std::string> json(n);
  static const Param kUnbound;
  bool as_inferred = true;
  for (size_t i = 0; i < n; ++i) {
    const size_t from = occ_.empty() ? i : static_cast<size_t>(occ_[i] - 1);
    const Param& p = from < params_.size() ? params_[from] : kUnbound;
    const bool is_json = inferred_[i] == kJsonb;
    types[i] = is_json ? kJsonb : OidOf(p.kind);
    // A parameter the server could not type and nothing was bound to: as text.
    if (types[i] == 0 && (typed_only_ || inferred_[i] == 0)) types[i] = kText;
    if (typed_only_ || (types[i] != 0 && types[i] != inferred_[i])) as_inferred = false;
    sig.push_back(is_json ? 'j' : static_cast<char>('0' + static_cast<int>(p.kind)));
    const std::string* bytes = &p.bytes;
    if (is_json && !p.null) {
      json[i] = JsonbOf(p.kind, p.bytes);
      bytes = &json[i];
    }
    values[i] = p.null ? nullptr : bytes->data();
    lengths[i] = static_cast<int>(bytes->size());
  }
  PGconn* c = conn_->conn_;
  const std::string* name = &untyped_;
  if (!as_inferred) {
    auto it = prepared_.find(sig);
    if (it == prepared_.end()) {
      conn_->Drain();
      std::string fresh = "m" + std::to_string(conn_->next_name_++);
      PGresult* r = PQprepare(c, fresh.c_str(), sql_.c_str(), static_cast<int>(n), types.data());
      if (PQresultStatus(r) != PGRES_COMMAND_OK) {
        Status st = conn_->Error("prepare", r);
        PQclear(r);
        return st;
      }
      PQclear(r);
      it = prepared_.emplace(sig, std::move(fresh)).first;
    }
    name = &it->second;
  }
  if (result_) PQclear(result_);
  result_ = nullptr;
  ++conn_->executions_;
  conn_->QueueTimeout();
  if (later) {
    Connection::Later w;
    w.name = *name;
    w.values.resize(n);
    w.null.resize(n);
    for (size_t i = 0; i < n; ++i) {
      w.null[i] = values[i] == nullptr;
      if (values[i]) w.values[i].assign(values[i], static_cast<size_t>(lengths[i]));
    }
    conn_->later_.push_back(std::move(w));
    rows_ = 0;
    changes_ = 0;
    row_ = -1;
    executed_ = true;
    if (conn_->later_.size() >= Connection::kLaterBatch) return conn_->Flush();
    return Status::OK();
  }
  if (!conn_->later_.empty() && !conn_->envelope_) {
    MENTAT_ASSIGN_OR_RETURN(result_, conn_->RunAfterLater(name, static_cast<int>(n), values.data(),
                                                          lengths.data(), formats.data()));
  } else if (Statement* probe = std::exchange(conn_->envelope_, nullptr); probe && probe != this) {
    MENTAT_ASSIGN_OR_RETURN(result_,
                            conn_->RunEnveloped(probe, *name, static_cast<int>(n), values.data(),
                                                lengths.data(), formats.data()));
  } else {
    conn_->Drain();
    result_ = PQexecPrepared(c, name->c_str(), static_cast<int>(n), values.data(), lengths.data(),
                             formats.data(), /*resultFormat=*/1);
  }
  ExecStatusType s = PQresultStatus(result_);
  if (s != PGRES_TUPLES_OK && s != PGRES_COMMAND_OK) {
    // (Its pipeline's SETs, if any, were undone with it.)
    conn_->server_timeout_known_ = false;
    Status st = conn_->Error("execute", result_);
    PQclear(result_);
    result_ = nullptr;
    return st;
  }
  rows_ = s == PGRES_TUPLES_OK ? PQntuples(result_) : 0;
  const char* tuples = PQcmdTuples(result_);
  changes_ = tuples && *tuples ? std::strtoll(tuples, nullptr, 10) : 0;
  row_ = -1;
  executed_ = true;
  return Status::OK();
}

Result<bool> Statement::Step() {
  if (!executed_) MENTAT_RETURN_IF_ERROR(Execute());
  if (row_ + 1 >= rows_) {
    row_ = rows_;
    return false;
  }
  ++row_;
  return true;
}

Status Statement::Run() {
  if (!executed_) MENTAT_RETURN_IF_ERROR(Execute());
  row_ = rows_;
  return Status::OK();
}

Status Statement::RunLater() {
  if (executed_) return Status::OK();
  return Execute(/*later=*/true);
}

void Statement::Reset() {
  if (result_) PQclear(result_);
  result_ = nullptr;
  executed_ = false;
  row_ = -1;
  rows_ = 0;
  for (Param& p : params_) {
    p.null = true;
    p.bytes.clear();
  }
}

int Statement::ColumnCount() const { return result_ ? PQnfields(result_) : 0; }

Kind Statement::ColumnType(int i) const {
  if (!result_ || row_ < 0 || row_ >= rows_ || PQgetisnull(result_, row_, i)) return Kind::kNull;
  switch (PQftype(result_, i)) {
    case kInt8:
    case kInt4:
    case kInt2:
    case kBool:
    case kOid:
      return Kind::kInt;
    case kFloat8:
    case kFloat4:
      return Kind::kReal;
    case kBytea:
      return Kind::kBlob;
    case kNumeric: {
      bool integral;
      NumericValue(PQgetvalue(result_, row_, i), PQgetlength(result_, row_, i), &integral);
      return integral ? Kind::kInt : Kind::kReal;
    }
    case kJsonb:
      return JsonKind(JsonText(i));
    default:
      return Kind::kText;
  }
}

std::string_view Statement::JsonText(int i) const {
  const char* p = PQgetvalue(result_, row_, i);
  int len = PQgetlength(result_, row_, i);
  if (len < 1) return {};
  return std::string_view(p + 1, static_cast<size_t>(len - 1));  // after the version byte
}

int64_t Statement::ColumnInt(int i) const {
  Kind k = ColumnType(i);
  if (k == Kind::kNull) return 0;
  const char* p = PQgetvalue(result_, row_, i);
  switch (PQftype(result_, i)) {
    case kInt8:
      return static_cast<int64_t>(GetBE(p, 8));
    case kInt4:
    case kOid:
      return static_cast<int32_t>(GetBE(p, 4));
    case kInt2:
      return static_cast<int16_t>(GetBE(p, 2));
    case kBool:
      return p[0] != 0;
    case kFloat8:
    case kFloat4:
      return static_cast<int64_t>(ColumnDouble(i));
    case kNumeric:
      if (k == Kind::kInt) return NumericInt(p, PQgetlength(result_, row_, i));
      return static_cast<int64_t>(ColumnDouble(i));
    case kJsonb: {
      std::string_view t = JsonText(i);
      if (k == Kind::kInt)
        return t[0] == 't' ? 1 : std::strtoll(std::string(t).c_str(), nullptr, 10);
      if (k == Kind::kReal) return static_cast<int64_t>(ColumnDouble(i));
      return std::strtoll(std::string(ColumnText(i)).c_str(), nullptr, 10);
    }
    default:
      return std::strtoll(std::string(ColumnText(i)).c_str(), nullptr, 10);
  }
}

double Statement::ColumnDouble(int i) const {
  Kind k = ColumnType(i);
  if (k == Kind::kNull) return 0;
  const char* p = PQgetvalue(result_, row_, i);
  switch (PQftype(result_, i)) {
    case kFloat8: {
      uint64_t bits = GetBE(p, 8);
      double d;
      std::memcpy(&d, &bits, 8);
      return d;
    }
    case kFloat4: {
      auto bits = static_cast<uint32_t>(GetBE(p, 4));
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    case kInt8:
    case kInt4:
    case kInt2:
    case kBool:
    case kOid:
      return static_cast<double>(ColumnInt(i));
    case kNumeric: {
      bool integral;
      return NumericValue(p, PQgetlength(result_, row_, i), &integral);
    }
    case kJsonb: {
      std::string_view t = JsonText(i);
      if (k == Kind::kInt) return static_cast<double>(ColumnInt(i));
      if (k == Kind::kReal && t[0] == '{') {
        if (t.find("-Infinity") != std::string_view::npos) return -HUGE_VAL;
        if (t.find("Infinity") != std::string_view::npos) return HUGE_VAL;
        return std::nan("");
      }
      if (k == Kind::kReal) return std::strtod(std::string(t).c_str(), nullptr);
      return std::strtod(std::string(ColumnText(i)).c_str(), nullptr);
    }
    default:
      return std::strtod(std::string(ColumnText(i)).c_str(), nullptr);
  }
}

std::string_view Statement::ColumnText(int i) const {
  Kind k = ColumnType(i);
  if (k == Kind::kNull) return {};
  const Oid type = PQftype(result_, i);
  if (type == kJsonb || type == kNumeric || type == kInt8 || type == kInt4 || type == kInt2 ||
      type == kFloat8 || type == kFloat4 || type == kOid || type == kBool) {
    // Decoded into the column's scratch string, valid until the next Step or Reset.
    if (scratch_.size() <= static_cast<size_t>(i)) scratch_.resize(static_cast<size_t>(i) + 1);
    std::string& out = scratch_[static_cast<size_t>(i)];
    if (type == kJsonb && k == Kind::kText) {
      out = JsonUnquote(JsonText(i));
    } else if (type == kJsonb && k == Kind::kBlob) {
      std::string_view t = JsonText(i);
      size_t q = t.find(':');
      q = q == std::string_view::npos ? t.size() : t.find('"', q);
      out.clear();
      for (size_t j = q + 1; j + 1 < t.size() && t[j] != '"'; j += 2)
        out.push_back(static_cast<char>(HexDigit(t[j]) * 16 + HexDigit(t[j + 1])));
    } else if (type == kNumeric) {
      bool integral;
      out = NumericText(PQgetvalue(result_, row_, i), PQgetlength(result_, row_, i), &integral);
    } else if (k == Kind::kInt) {
      out = std::to_string(ColumnInt(i));
    } else {
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.17g", ColumnDouble(i));
      out = buf;
    }
    return out;
  }
  // Text, varchar, name and bytea: their binary form is their bytes.
  return std::string_view(PQgetvalue(result_, row_, i),
                          static_cast<size_t>(PQgetlength(result_, row_, i)));
}

std::string_view Statement::ColumnBlob(int i) const { return ColumnText(i); }

// ---- Connection ----

Connection::Connection(pg_conn* c) : conn_(c) {}

Connection::~Connection() {
  closing_ = true;
  cache_.clear();
  {
    std::lock_guard<std::mutex> l(cancel_mu_);
    if (cancel_) PQfreeCancel(cancel_);
    cancel_ = nullptr;
  }
  PQfinish(conn_);
}

Status Connection::Error(std::string_view what, pg_result* r) const {
  const char* state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
  const char* msg = r ? PQresultErrorMessage(r) : nullptr;
  if (!msg || !*msg) msg = PQerrorMessage(conn_);
  if (PQstatus(conn_) == CONNECTION_BAD)
    return Status::Io(std::string("postgresql ") + std::string(what) +
                      ": connection lost: " + (msg ? msg : ""));
  return ErrorStatus(state ? state : "", msg ? msg : "");
}

Result<std::unique_ptr<Connection>> Connection::Open(const std::string& conninfo) {
  PGconn* c = PQconnectdb(conninfo.c_str());
  if (!c) return Status::Io("postgresql: out of memory connecting");
  if (PQstatus(c) != CONNECTION_OK) {
    std::string msg = PQerrorMessage(c);
    while (!msg.empty() && msg.back() == '\n') msg.pop_back();
    PQfinish(c);
    return Status::Io("cannot connect to PostgreSQL: " + msg);
  }
  std::unique_ptr<Connection> conn(new Connection(c));
  MENTAT_RETURN_IF_ERROR(conn->Exec(
      "SET client_encoding = 'UTF8'; SET TIME ZONE 'UTC'; SET client_min_messages = warning"));
  {
    std::lock_guard<std::mutex> l(conn->cancel_mu_);
    conn->cancel_ = PQgetCancel(c);
  }
  return conn;
}

Status Connection::Exec(std::string_view sql) {
  Drain();
  const bool rollback = sql.substr(0, 8) == "ROLLBACK";
  if (!rollback) QueueTimeout();  // (a ROLLBACK would undo it)
  MENTAT_RETURN_IF_ERROR(Flush());
  PGresult* r = PQexec(conn_, std::string(sql).c_str());
  ExecStatusType s = PQresultStatus(r);
  Status st = s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK ? Status::OK() : Error("exec", r);
  PQclear(r);
  // A rolled back transaction takes the SETs sent in it along.
  if (rollback || !st.ok()) server_timeout_known_ = false;
  return st;
}

void Connection::QueueTimeout() {
  if (server_timeout_known_ && server_timeout_ == wanted_timeout_) return;
  // An aborted transaction runs nothing but its ROLLBACK: the SET goes after it.
  if (later_.empty() && PQtransactionStatus(conn_) == PQTRANS_INERROR) return;
  Later w;
  w.sql = wanted_timeout_ ? "SET statement_timeout = " + std::to_string(*wanted_timeout_)
                          : "SET statement_timeout TO DEFAULT";
  later_.push_back(std::move(w));
  server_timeout_ = wanted_timeout_;
  server_timeout_known_ = true;
}

bool Connection::SendLater(const std::vector<Later>& batch) {
  bool sent = true;
  std::vector<const char*> ptrs;
  std::vector<int> lens, fmts;
  for (const Later& w : batch) {
    if (!w.sql.empty()) {
      sent = sent && PQsendQueryParams(conn_, w.sql.c_str(), 0, nullptr, nullptr, nullptr, nullptr,
                                       /*resultFormat=*/1);
      continue;
    }
    const size_t k = w.values.size();
    ptrs.assign(k, nullptr);
    lens.assign(k, 0);
    fmts.assign(k, 1);
    for (size_t i = 0; i < k; ++i) {
      if (!w.null[i]) ptrs[i] = w.values[i].data();
      lens[i] = static_cast<int>(w.values[i].size());
    }
    sent = sent && PQsendQueryPrepared(conn_, w.name.c_str(), static_cast<int>(k), ptrs.data(),
                                       lens.data(), fmts.data(), /*resultFormat=*/1);
  }
  return sent;
}

Result<CachedStatement> Connection::Cached(const std::string& sql) {
  auto it = cache_.find(sql);
  if (it == cache_.end()) it = cache_.emplace(sql, NewStatement(sql)).first;
  return CachedStatement(it->second.get());
}

std::unique_ptr<Statement> Connection::Prepare(const std::string& sql) { return NewStatement(sql); }

std::unique_ptr<Statement> Connection::NewStatement(const std::string& sql) {
  std::vector<int> occurrences;
  std::string text = PgPlaceholders(sql, &occurrences);
  std::unique_ptr<Statement> st(new Statement(this, std::move(text)));
  st->occ_ = std::move(occurrences);
  return st;
}

Result<int64_t> Connection::QueryInt(const std::string& sql, int64_t fallback) {
  MENTAT_ASSIGN_OR_RETURN(auto st, Cached(sql));
  MENTAT_ASSIGN_OR_RETURN(bool row, st->Step());
  if (!row || st->ColumnType(0) == Kind::kNull) return fallback;
  return st->ColumnInt(0);
}

Status Connection::ClearCache() {
  cache_.clear();
  return Status::OK();
}

Status Connection::CopyStart(const std::string& copy_sql) {
  Drain();
  MENTAT_RETURN_IF_ERROR(Flush());
  PGresult* r = PQexec(conn_, copy_sql.c_str());
  if (PQresultStatus(r) != PGRES_COPY_IN) {
    Status st = Error("copy", r);
    PQclear(r);
    return st.ok() ? Status::Internal("COPY did not start") : st;
  }
  PQclear(r);
  copy_failed_ = false;
  return Status::OK();
}

Status Connection::CopyPut(std::string_view data) {
  if (copy_failed_) return Status::OK();  // CopyFinish reports it
  // In pieces of at most 1 MiB: libpq buffers what it sends.
  constexpr size_t kPiece = size_t{1} << 20;
  for (size_t off = 0; off < data.size(); off += kPiece) {
    size_t n = std::min(kPiece, data.size() - off);
    if (PQputCopyData(conn_, data.data() + off, static_cast<int>(n)) != 1) {
      copy_failed_ = true;
      break;
    }
  }
  return Status::OK();
}

Result<int64_t> Connection::CopyFinish(const std::string& abort) {
  PQputCopyEnd(conn_, !abort.empty() ? abort.c_str() : copy_failed_ ? "client error" : nullptr);
  int64_t rows = 0;
  Status st;
  while (PGresult* res = PQgetResult(conn_)) {
    if (PQresultStatus(res) != PGRES_COMMAND_OK) {
      if (st.ok()) st = Error("copy", res);
    } else {
      const char* n = PQcmdTuples(res);
      rows = n && *n ? std::strtoll(n, nullptr, 10) : 0;
    }
    PQclear(res);
  }
  if (st.ok() && copy_failed_) st = Status::Io("COPY: sending the rows failed");
  // The server reports a dropped COPY as a cancellation; the caller's reason says more.
  if (!abort.empty()) st = Status::Interrupted("COPY dropped: " + abort);
  copy_failed_ = false;
  if (!st.ok()) return st;
  return rows;
}

Result<int64_t> Connection::CopyIn(const std::string& copy_sql, std::string_view data) {
  MENTAT_RETURN_IF_ERROR(CopyStart(copy_sql));
  MENTAT_RETURN_IF_ERROR(CopyPut(data));
  return CopyFinish();
}

void Connection::Cancel() {
  std::lock_guard<std::mutex> l(cancel_mu_);
  if (!cancel_) return;
  char err[256];
  PQcancel(cancel_, err, sizeof err);
}

Status Connection::EndPipeline(bool sent, size_t statements, pg_result** results) {
  for (size_t i = 0; sent && i < statements; ++i) {
    results[i] = PQgetResult(conn_);
    if (!results[i]) {
      sent = false;
      break;
    }
    while (pg_result* extra = PQgetResult(conn_)) PQclear(extra);
  }
  pg_result* sync = sent ? PQgetResult(conn_) : nullptr;
  const bool synced = sync && PQresultStatus(sync) == PGRES_PIPELINE_SYNC;
  if (sync) PQclear(sync);
  Status st;
  if (!sent || !synced) st = Error("pipeline", nullptr);
  if (!PQexitPipelineMode(conn_) && st.ok()) st = Error("pipeline", nullptr);
  return st;
}

Result<pg_result*> Connection::RunEnveloped(Statement* probe, const std::string& name, int n,
                                            const char* const* values, const int* lengths,
                                            const int* formats) {
  // Outside a transaction only SETs wait (SetStatementTimeout): they go out after BEGIN,
  // so they are the transaction's (undone with it, like the statement's work).
  if (AnyWrites(later_)) MENTAT_RETURN_IF_ERROR(Flush());
  std::vector<Later> sets = std::move(later_);
  later_.clear();
  if (!probe->described_) MENTAT_RETURN_IF_ERROR(probe->Describe());
  bool after_commit;
  MENTAT_RETURN_IF_ERROR(EnterPipeline(&after_commit));
  envelope_sent_ = true;
  bool sent =
      PQsendQueryParams(conn_, "BEGIN ISOLATION LEVEL REPEATABLE READ", 0, nullptr, nullptr,
                        nullptr, nullptr, 0) &&
      SendLater(sets) &&
      PQsendQueryPrepared(conn_, probe->untyped_.c_str(), 0, nullptr, nullptr, nullptr, 1) &&
      PQsendQueryPrepared(conn_, name.c_str(), n, values, lengths, formats, 1) &&
      (!envelope_commit_ ||
       PQsendQueryParams(conn_, "COMMIT", 0, nullptr, nullptr, nullptr, nullptr, 0)) &&
      PQpipelineSync(conn_);
  if (after_commit) sent = ReadPendingCommit() && sent;
  // BEGIN, the SETs, the probe, the statement, COMMIT.
  std::vector<pg_result*> all(1 + sets.size() + (envelope_commit_ ? 3 : 2), nullptr);
  Status st = EndPipeline(sent, all.size(), all.data());
  for (size_t i = 1; st.ok() && i <= sets.size(); ++i)
    if (!all[i] || PQresultStatus(all[i]) != PGRES_COMMAND_OK) st = Error("execute", all[i]);
  if (!st.ok()) server_timeout_known_ = false;
  pg_result* results[4] = {all[0], all[1 + sets.size()], all[2 + sets.size()],
                           envelope_commit_ ? all[3 + sets.size()] : nullptr};
  for (size_t i = 1; i <= sets.size(); ++i)
    if (all[i]) PQclear(all[i]);
  // A failed statement leaves the transaction aborted: it ends here (else it stays open
  // for the statements after).
  if (PQtransactionStatus(conn_) == PQTRANS_INERROR ||
      (!st.ok() && PQtransactionStatus(conn_) == PQTRANS_INTRANS))
    (void)Exec("ROLLBACK");
  auto ok = [](pg_result* r) {
    return r && (PQresultStatus(r) == PGRES_TUPLES_OK || PQresultStatus(r) == PGRES_COMMAND_OK);
  };
  // The probe's rows, as its own execution would leave them (it ran before the statement,
  // so they stand whatever the statement did).
  if (st.ok() && ok(results[0]) && ok(results[1])) {
    if (probe->result_) PQclear(probe->result_);
    probe->result_ = std::exchange(results[1], nullptr);
    probe->rows_ = PQntuples(probe->result_);
    probe->row_ = -1;
    probe->executed_ = true;
  }
  // The first failure is the answer: BEGIN's or the probe's as an error, the statement's
  // own as its result (Execute reports it).
  pg_result* out = nullptr;
  if (st.ok()) {
    for (int i = 0; i < 2 && st.ok(); ++i)
      if (results[i] && !ok(results[i])) st = Error("execute", results[i]);
    if (st.ok() && results[2] && PQresultStatus(results[2]) != PGRES_PIPELINE_ABORTED)
      out = std::exchange(results[2], nullptr);
    else if (st.ok())
      st = Error("pipeline", nullptr);
  }
  for (pg_result* x : results)
    if (x) PQclear(x);
  if (!st.ok()) return st;
  return out;
}

void Connection::CommitAsync() {
  Drain();
  if (Status st = Flush(); !st.ok() && later_error_.ok()) later_error_ = st;
  // In pipeline mode, so that the next command that pipelines (RunEnveloped,
  // RunAfterLater) goes out after it and reads its answer first, without waiting for it
  // on its own.
  if (!PQenterPipelineMode(conn_)) {
    PQclear(PQexec(conn_, "COMMIT"));
    return;
  }
  // (When a send fails, Drain still reads what there is and leaves pipeline mode.)
  commit_pending_ = true;
  if (PQsendQueryParams(conn_, "COMMIT", 0, nullptr, nullptr, nullptr, nullptr, 0))
    PQpipelineSync(conn_);
}

Status Connection::EnterPipeline(bool* after_commit) {
  // A COMMIT on its way (CommitAsync) is in pipeline mode already: what follows goes
  // after it.
  *after_commit = commit_pending_;
  if (!*after_commit && !PQenterPipelineMode(conn_)) return Error("pipeline", nullptr);
  return Status::OK();
}

bool Connection::ReadPendingCommit() const {
  commit_pending_ = false;
  PGresult* r = PQgetResult(conn_);
  if (!r) return false;
  // A COMMIT that failed (cancelled by an interrupt meant for a statement after it) undid
  // the transaction's SETs.
  if (PQresultStatus(r) != PGRES_COMMAND_OK) server_timeout_known_ = false;
  PQclear(r);
  while (PGresult* extra = PQgetResult(conn_)) PQclear(extra);
  PGresult* sync = PQgetResult(conn_);
  const bool synced = sync && PQresultStatus(sync) == PGRES_PIPELINE_SYNC;
  if (sync) PQclear(sync);
  return synced;
}

void Connection::Drain() const {
  if (!commit_pending_) return;
  (void)ReadPendingCommit();
  PQexitPipelineMode(conn_);
  // A COMMIT that did not end the transaction (cancelled by an interrupt meant for the
  // statement after it): rolled back, so the next command starts outside one.
  const PGTransactionStatusType t = PQtransactionStatus(conn_);
  if (t == PQTRANS_INERROR || t == PQTRANS_INTRANS) {
    PQclear(PQexec(conn_, "ROLLBACK"));
    server_timeout_known_ = false;
  }
}

bool Connection::InTransaction() const {
  // Waiting statements run in a transaction (or begin one); a SET waits outside one too.
  if (AnyWrites(later_)) return true;
  // A COMMIT on its way (CommitAsync) ends the transaction (Drain rolls back one it did
  // not end).
  if (commit_pending_) return false;
  PGTransactionStatusType t = PQtransactionStatus(conn_);
  return t == PQTRANS_INTRANS || t == PQTRANS_INERROR || t == PQTRANS_ACTIVE;
}

Status Connection::Flush() {
  if (later_.empty()) return Status::OK();
  return RunAfterLater(nullptr, 0, nullptr, nullptr, nullptr).status();
}

void Connection::DiscardLater() {
  for (const Later& w : later_)
    if (!w.sql.empty()) server_timeout_known_ = false;
  later_.clear();
  later_error_ = Status::OK();
}

Result<pg_result*> Connection::RunAfterLater(const std::string* name, int n,
                                             const char* const* values, const int* lengths,
                                             const int* formats) {
  std::vector<Later> batch = std::move(later_);
  later_.clear();
  bool after_commit;
  MENTAT_RETURN_IF_ERROR(EnterPipeline(&after_commit));
  bool sent = SendLater(batch);
  if (name)
    sent = sent && PQsendQueryPrepared(conn_, name->c_str(), n, values, lengths, formats, 1);
  sent = sent && PQpipelineSync(conn_);
  if (after_commit) sent = ReadPendingCommit() && sent;
  std::vector<pg_result*> results(batch.size() + (name ? 1 : 0), nullptr);
  Status st = EndPipeline(sent, results.size(), results.data());
  for (size_t i = 0; st.ok() && i < batch.size(); ++i) {
    const ExecStatusType s = PQresultStatus(results[i]);
    if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK) st = Error("execute", results[i]);
  }
  if (!st.ok()) server_timeout_known_ = false;
  pg_result* out = nullptr;
  if (st.ok() && name) {
    if (PQresultStatus(results.back()) == PGRES_PIPELINE_ABORTED)
      st = Error("pipeline", nullptr);
    else
      out = std::exchange(results.back(), nullptr);
  }
  for (pg_result* x : results)
    if (x) PQclear(x);
  if (!st.ok()) return st;
  return out;
}

}  // namespace mentat::pg
