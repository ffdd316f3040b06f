#include "calls.h"

#include <nlohmann/json.hpp>

#include "json_shapes.h"

namespace mentat::sqlite_ext {

std::optional<std::string> TextArg(sqlite3_value* v) {
  if (sqlite3_value_type(v) == SQLITE_NULL) return std::nullopt;
  const unsigned char* p = sqlite3_value_text(v);  // before _bytes: it sets the length
  int n = sqlite3_value_bytes(v);
  if (!p) return std::string();
  return std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(n));
}

Result<QueryOptions> ParseQueryOptions(std::string_view query,
                                       const std::optional<std::string>& json) {
  if (!json) return QueryOptions{};
  size_t b = json->find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return QueryOptions{};
  size_t e = json->find_last_not_of(" \t\r\n");
  std::string_view t = std::string_view(*json).substr(b, e - b + 1);
  if (t == "null") return QueryOptions{};
  if (t.front() == '{' && t.back() == '}' &&
      t.substr(1, t.size() - 2).find_first_not_of(" \t\r\n") == std::string_view::npos)
    return QueryOptions{};
  // Note: options_from_json parses `query` again (query::Prepared::Parse, uncached) to
  // shape the inputs; on a point lookup that is about 40% of the call.
  auto opts = options_from_json(query, t);
  if (opts.ok()) return opts;
  // The Rust extension's wording for the two shapes that are not options at all, with
  // options_from_json's.
  try {
    if (!nlohmann::json::parse(t.begin(), t.end()).is_object())
      return Status::InvalidArgument("options must be a JSON object: " + opts.status().message());
  } catch (const nlohmann::json::exception&) {
    return Status::InvalidArgument("options are not valid JSON: " + opts.status().message());
  }
  return opts;
}

namespace {

// Whether the host connection has been interrupted (sqlite3_interrupt: Ctrl-C in the
// sqlite3 shell, Python's Connection.interrupt()) while mentat works on a connection of its
// own. sqlite3_is_interrupted() arrived in SQLite 3.41; on every version, a statement
// stepped on an interrupted connection that is running a statement (the one that called
// this function) fails with SQLITE_INTERRUPT, and stepping "SELECT 1" costs about 50 ns.
class HostInterruptProbe {
 public:
  explicit HostInterruptProbe(sqlite3* host) : host_(host) {}
  ~HostInterruptProbe() { sqlite3_finalize(stmt_); }
  HostInterruptProbe(const HostInterruptProbe&) = delete;
  HostInterruptProbe& operator=(const HostInterruptProbe&) = delete;

  bool Interrupted() {
    if (!stmt_ && sqlite3_prepare_v2(host_, "SELECT 1", -1, &stmt_, nullptr) != SQLITE_OK)
      return false;
    int rc = sqlite3_step(stmt_);
    sqlite3_reset(stmt_);
    return rc == SQLITE_INTERRUPT;
  }

 private:
  sqlite3* host_;
  sqlite3_stmt* stmt_ = nullptr;
};

}  // namespace

Result<std::optional<QueryResult>> RunQuery(HostContext* ctx,
                                            const std::optional<std::string>& db_path,
                                            const std::string& query,
                                            const std::optional<std::string>& options) {
  MENTAT_ASSIGN_OR_RETURN(QueryOptions opts, ParseQueryOptions(query, options));
  MENTAT_ASSIGN_OR_RETURN(StoreRef ref, AcquireStore(ctx, db_path, Access::kRead));
  if (!ref.get()) return std::optional<QueryResult>();
  // On the host's own connection (host mode) its interrupt reaches the statements directly;
  // on a store file of mentat's own connections, the query polls it.
  HostInterruptProbe probe(ctx->db);
  if (!IsHostPath(db_path)) opts.interrupted = [&probe] { return probe.Interrupted(); };
  MENTAT_ASSIGN_OR_RETURN(QueryResult r, ref.get()->q(query, opts));
  return std::optional<QueryResult>(std::move(r));
}

void ResultValue(sqlite3_context* c, const edn::Value& v) {
  auto text = [&](const std::string& s) {
    sqlite3_result_text(c, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
  };
  switch (v.kind()) {
    case edn::Kind::kNil:
      sqlite3_result_null(c);
      return;
    case edn::Kind::kBool:
      sqlite3_result_int(c, v.as_bool() ? 1 : 0);
      return;
    case edn::Kind::kInt:
      sqlite3_result_int64(c, v.as_int());
      return;
    case edn::Kind::kFloat:
      sqlite3_result_double(c, v.as_double());
      return;
    case edn::Kind::kBytes:
      sqlite3_result_blob(c, v.str().data(), static_cast<int>(v.str().size()), SQLITE_TRANSIENT);
      return;
    case edn::Kind::kString:
    case edn::Kind::kBigInt:
    case edn::Kind::kBigDec:
    case edn::Kind::kSymbol:
    case edn::Kind::kUri:
      text(v.str());
      return;
    case edn::Kind::kKeyword:
      text(":" + v.str());
      return;
    case edn::Kind::kInst:
      text(IsoMicros(v.as_inst_micros()));
      return;
    case edn::Kind::kUuid:
      text(edn::FormatUuid(v.as_uuid()));
      return;
    default:
      text(QueryValueJson(v));  // char, collections, pulled maps
      return;
  }
}

int SqliteCode(const Status& st) {
  switch (st.code()) {
    case Code::kBusy:
      return SQLITE_BUSY;
    case Code::kInterrupted:
      return SQLITE_INTERRUPT;
    default:
      return SQLITE_ERROR;
  }
}

void ResultStatus(sqlite3_context* c, const char* fn, const Status& st) {
  std::string msg = std::string(fn) + ": " + st.ToString();
  sqlite3_result_error(c, msg.data(), static_cast<int>(msg.size()));
  if (SqliteCode(st) != SQLITE_ERROR) sqlite3_result_error_code(c, SqliteCode(st));
}

}  // namespace mentat::sqlite_ext
