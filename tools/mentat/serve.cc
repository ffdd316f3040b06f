// mentat serve: the HTTP/JSON API (doc/server.md) over cpp-httplib (Debian's
// libcpp-httplib-dev, built with OpenSSL).
#include "serve.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <netdb.h>
#include <signal.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "edn/json_edn.h"
#include "mentat/log.h"
#include "mentat/store.h"
#include "serve_tokens.h"

namespace mentat::cli {

const char* const kServeUsage =
    "usage: mentat serve STORE --listen HOST:PORT (--tokens FILE | --no-auth) [OPTIONS]\n"
    "\n"
    "Serves STORE (a file, created if missing; a postgresql:// name; \"\" for in-memory)\n"
    "over HTTP: POST /transact, /q, /pull, /entity; GET /datoms, /tx-range, /health\n"
    "(doc/server.md). Requests carry Authorization: Bearer TOKEN; /health needs none.\n"
    "Stops on SIGTERM or SIGINT after the requests in flight finish.\n"
    "\n"
    "options:\n"
    "  --listen HOST:PORT    address to listen on (default 127.0.0.1:8080; port 0: any)\n"
    "  --tokens FILE         bearer tokens, one per line: TOKEN [read-write|read-only]\n"
    "  --no-auth             no tokens (only on a loopback address)\n"
    "  --tls-cert FILE       serve HTTPS with this certificate (PEM) ...\n"
    "  --tls-key FILE        ... and this private key (PEM)\n"
    "  --max-body BYTES      largest request body (default 16777216; larger: 413)\n"
    "  --timeout MS          longest a request may run (default 30000; then 504)\n"
    "  --max-concurrent N    requests served at once (default 64; more: 429)\n"
    "  --access-log FILE     one line per request (default -: standard error; '' none)\n"
    "  --read-only           open the store read-only\n"
    "  --replica NAME        a PostgreSQL standby that reads may go to (repeatable)\n";

namespace {

using nlohmann::json;

bool ParseInt(const std::string& s, int64_t lo, int64_t hi, int64_t* out) {
  try {
    size_t used = 0;
    long long v = std::stoll(s, &used);
    if (used != s.size() || v < lo || v > hi) return false;
    *out = v;
    return true;
  } catch (...) {
    return false;
  }
}

// True for 127.0.0.0/8, ::1 and names that resolve only to them ("localhost").
bool IsLoopback(const std::string& host) {
  addrinfo hints{}, *res = nullptr;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 || !res) return false;
  bool all = true;
  for (addrinfo* a = res; a; a = a->ai_next) {
    if (a->ai_family == AF_INET) {
      auto* in = reinterpret_cast<sockaddr_in*>(a->ai_addr);
      all = all && (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    } else if (a->ai_family == AF_INET6) {
      auto* in6 = reinterpret_cast<sockaddr_in6*>(a->ai_addr);
      all = all && IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
    } else {
      all = false;
    }
  }
  freeaddrinfo(res);
  return all;
}

int HttpStatus(const Status& st) {
  switch (st.code()) {
    case Code::kInvalidArgument:
    case Code::kParse:
    case Code::kSchema:
      return 400;
    case Code::kNotFound:
      return 404;
    case Code::kConflict:
    case Code::kCasMismatch:
      return 409;
    case Code::kInterrupted:
      return 504;
    case Code::kBusy:
      return 503;
    case Code::kUnsupported:
      return 501;
    default:
      return 500;
  }
}

bool WantsEdn(const httplib::Request& req) {
  std::string accept = req.get_header_value("Accept");
  if (accept.find("application/edn") != std::string::npos) return true;
  if (!accept.empty() && accept.find("*/*") == std::string::npos) return false;
  return req.get_header_value("Content-Type").find("application/edn") != std::string::npos;
}

bool WantsNdjson(const httplib::Request& req) {
  return req.get_header_value("Accept").find("application/x-ndjson") != std::string::npos;
}

bool BodyIsEdn(const httplib::Request& req) {
  return req.get_header_value("Content-Type").find("application/edn") != std::string::npos;
}

std::string JsonText(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

void SendError(httplib::Response& res, int status, const std::string& code,
               const std::string& message, bool edn) {
  res.status = status;
  if (edn) {
    res.set_content(
        edn::Print(edn::Value::Map({{edn::Value::Keyword("error"), edn::Value::String(message)},
                                    {edn::Value::Keyword("code"), edn::Value::String(code)}})) +
            "\n",
        "application/edn");
  } else {
    res.set_content(JsonText(json{{"error", message}, {"code", code}}) + "\n", "application/json");
  }
}

void SendStatus(httplib::Response& res, const Status& st, bool edn) {
  std::string message = st.message();
  if (st.code() == Code::kInterrupted) message = "query time limit: " + message;
  SendError(res, HttpStatus(st), CodeName(st.code()), message, edn);
}

// A report as JSON: its own keys (:tx-id, :tempids, :tx-data; :t, :data) without the
// colon, the rest as EdnToJson gives it.
json ReportJson(const edn::Value& v) {
  if (v.is_vector()) {
    json out = json::array();
    for (const auto& x : v.items()) out.push_back(ReportJson(x));
    return out;
  }
  if (!v.is_map()) return EdnToJson(v);
  json out = json::object();
  for (const auto& [k, x] : v.entries()) {
    std::string key;
    if (k.is_keyword() && k.ns().empty()) {
      key = std::string(k.name());
    } else {
      json j = EdnToJson(k);
      key = j.is_string() ? j.get<std::string>() : j.dump();
    }
    out[key] = EdnToJson(x);
  }
  return out;
}

void SendReport(httplib::Response& res, const edn::Value& v, bool edn) {
  if (edn) {
    res.set_content(edn::Print(v) + "\n", "application/edn");
  } else {
    res.set_content(JsonText(ReportJson(v)) + "\n", "application/json");
  }
}

void SendValue(httplib::Response& res, const edn::Value& v, bool edn) {
  if (edn) {
    res.set_content(edn::Print(v) + "\n", "application/edn");
  } else {
    res.set_content(JsonText(EdnToJson(v)) + "\n", "application/json");
  }
}

// A request body, as a map of its fields: a JSON object, or an EDN map with keyword keys
// (:query, :as-of ...), into JSON names (query, asOf ...). EDN values stay EDN text.
struct Body {
  json fields = json::object();
  // For EDN bodies: the values of the fields, as EDN.
  std::map<std::string, edn::Value> edn_fields;
  std::map<std::string, std::string> edn_names;  // camelCase -> the keyword as sent
  bool edn = false;
};

std::string CamelCase(const std::string& s) {
  std::string out;
  bool up = false;
  for (char c : s) {
    if (c == '-') {
      up = true;
    } else {
      out += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
      up = false;
    }
  }
  return out;
}

Result<Body> ParseBody(const httplib::Request& req) {
  Body b;
  b.edn = BodyIsEdn(req);
  if (req.body.find_first_not_of(" \t\r\n") == std::string::npos)
    return Status::InvalidArgument("the request has no body");
  if (!b.edn) {
    try {
      b.fields = json::parse(req.body);
    } catch (const json::exception& e) {
      return Status::InvalidArgument(std::string("the body is not JSON: ") + e.what() +
                                     " (send EDN with Content-Type: application/edn)");
    }
    if (!b.fields.is_object()) return Status::InvalidArgument("the body must be a JSON object");
    return b;
  }
  auto v = edn::Read(req.body);
  if (!v.ok()) return Status(v.status().code(), "body: " + v.status().message());
  if (!v->is_map()) return Status::InvalidArgument("the EDN body must be a map");
  for (const auto& [k, x] : v->entries()) {
    if (!k.is_keyword())
      return Status::InvalidArgument("the EDN body's keys must be keywords, not " + edn::Print(k));
    std::string camel = CamelCase(std::string(k.str()));
    b.edn_fields[camel] = x;
    b.edn_names[camel] = ":" + std::string(k.str());
  }
  return b;
}

// The text of a field that holds EDN (a query, a pattern, transaction data): a JSON string
// of EDN, or an EDN value (EDN bodies: a string or the form itself).
Result<std::string> EdnTextField(const Body& b, const std::string& name, bool required) {
  if (b.edn) {
    auto it = b.edn_fields.find(name);
    if (it == b.edn_fields.end()) {
      if (required) return Status::InvalidArgument("the body needs :" + name);
      return std::string();
    }
    return it->second.is_string() ? std::string(it->second.str()) : edn::Print(it->second);
  }
  auto it = b.fields.find(name);
  if (it == b.fields.end()) {
    if (required) return Status::InvalidArgument("the body needs \"" + name + "\"");
    return std::string();
  }
  if (!it->is_string())
    return Status::InvalidArgument("\"" + name + "\" must be a string of EDN text");
  return it->get<std::string>();
}

// Query options: asOf, since, history, and for queries (`query` given) timeout (capped by
// the server's) and inputs (JSON through options_from_json; EDN bodies: EDN values as
// they are). Pulls and entities take only the database (asOf, since, history).
Result<QueryOptions> OptionsOf(const Body& b, const std::string* query, int64_t max_timeout) {
  json o = json::object();
  std::vector<edn::Value> edn_inputs;
  bool has_edn_inputs = false;
  static const char* kQueryKeys[] = {"asOf", "since", "history", "timeout", "inputs"};
  static const char* kDbKeys[] = {"asOf", "since", "history"};
  const std::string expected =
      query ? "query, inputs, asOf, since, history, timeout" : "pattern, eid, asOf, since, history";
  auto known = [&](const std::string& k) {
    for (const char* key : kQueryKeys)
      if (k == key &&
          (query || std::find(std::begin(kDbKeys), std::end(kDbKeys), k) != std::end(kDbKeys)))
        return true;
    return false;
  };
  if (b.edn) {
    for (const auto& [k, v] : b.edn_fields) {
      if (k == "query" || k == "pattern" || k == "eid") continue;
      auto named = b.edn_names.find(k);
      const std::string name = named != b.edn_names.end() ? named->second : ":" + k;
      if (!known(k))
        return Status::InvalidArgument("unknown field " + name + " (expected " + expected +
                                       ", as keywords)");
      if (k == "inputs") {
        if (!v.is_vector() && !v.is_list())
          return Status::InvalidArgument(name + " must be a vector of input values");
        edn_inputs = v.items();
        has_edn_inputs = true;
      } else if (k == "history") {
        if (!v.is_bool()) return Status::InvalidArgument(name + " must be true or false");
        o[k] = v.as_bool();
      } else if (k == "asOf" || k == "since" || k == "timeout") {
        if (v.is_int())
          o[k] = v.as_int();
        else if (v.is_inst())
          o[k] = "#inst \"" + edn::FormatInstant(v.as_inst_micros()) + "\"";
        else if (k == "timeout")
          return Status::InvalidArgument(name + " must be a number of milliseconds");
        else
          return Status::InvalidArgument(name + " must be a tx id (a number) or an #inst");
      }
    }
  } else {
    for (auto it = b.fields.begin(); it != b.fields.end(); ++it) {
      const std::string& k = it.key();
      if (k == "query" || k == "pattern" || k == "eid") continue;
      if (!known(k))
        return Status::InvalidArgument("unknown field \"" + k + "\" (expected " + expected + ")");
      o[k] = it.value();
    }
  }
  // Without a query, the options name only the database: no inputs to shape.
  MENTAT_ASSIGN_OR_RETURN(
      QueryOptions opts,
      options_from_json(query ? *query : "[:find ?x :where [?x _ _]]", JsonText(o)));
  if (has_edn_inputs)
    for (auto& x : edn_inputs) opts.inputs.emplace_back(std::move(x));
  if (!opts.timeout_ms || *opts.timeout_ms <= 0 || *opts.timeout_ms > max_timeout)
    opts.timeout_ms = max_timeout;
  return opts;
}

// The database a read sees: the current one, or as of, since, history.
Db DbOf(Store& store, const QueryOptions& o) {
  Db db = store.db();
  if (o.as_of) db = db.as_of(*o.as_of);
  if (o.since) db = db.since(*o.since);
  if (o.history) db = db.history();
  return db;
}

// An entity id from a body field: a number, or EDN text (an ident, a lookup ref).
Result<edn::Value> EidOf(const Body& b) {
  if (b.edn) {
    auto it = b.edn_fields.find("eid");
    if (it == b.edn_fields.end()) return Status::InvalidArgument("the body needs :eid");
    return it->second;
  }
  auto it = b.fields.find("eid");
  if (it == b.fields.end()) return Status::InvalidArgument("the body needs \"eid\"");
  if (it->is_number_integer() || it->is_number_unsigned())
    return edn::Value::Int(it->get<int64_t>());
  if (!it->is_string())
    return Status::InvalidArgument("\"eid\" must be an entity id or EDN text (:ident, [attr v])");
  auto v = edn::Read(it->get<std::string>());
  if (!v.ok()) return Status(v.status().code(), "eid: " + v.status().message());
  return v;
}

std::atomic<httplib::Server*> g_server{nullptr};
std::atomic<bool> g_stop{false};

void OnSignal(int) { g_stop.store(true); }

class AccessLog {
 public:
  explicit AccessLog(const std::string& where) {
    if (where == "-") {
      out_ = &std::cerr;
    } else if (!where.empty()) {
      file_.open(where, std::ios::app);
      out_ = file_ ? &file_ : nullptr;
    }
  }
  bool ok(const std::string& where) const { return where.empty() || out_ != nullptr; }
  void Write(const std::string& line) {
    if (!out_) return;
    std::lock_guard<std::mutex> lock(mu_);
    *out_ << line << '\n';
    out_->flush();
  }

 private:
  std::mutex mu_;
  std::ofstream file_;
  std::ostream* out_ = nullptr;
};

std::string NowIso() {
  auto now = std::chrono::system_clock::now();
  int64_t micros =
      std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count();
  return edn::FormatInstant(micros);
}

thread_local std::chrono::steady_clock::time_point t_request_start;
thread_local const char* t_token_kind = "-";

}  // namespace

bool ParseServeArgs(const std::vector<std::string>& argv, ServeOptions* o, std::string* error) {
  bool have_store = false;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= argv.size()) {
        *error = a + " needs a value\nhint: mentat serve --help";
        return false;
      }
      *out = argv[++i];
      return true;
    };
    std::string v;
    int64_t n = 0;
    if (a == "--listen") {
      if (!value(&v)) return false;
      size_t colon = v.rfind(':');
      if (colon == std::string::npos || !ParseInt(v.substr(colon + 1), 0, 65535, &n)) {
        *error = "--listen takes HOST:PORT, not '" + v + "'";
        return false;
      }
      o->host = v.substr(0, colon);
      if (o->host.size() > 1 && o->host.front() == '[' && o->host.back() == ']')
        o->host = o->host.substr(1, o->host.size() - 2);
      if (o->host.empty()) o->host = "0.0.0.0";
      o->port = static_cast<int>(n);
    } else if (a == "--tokens") {
      if (!value(&o->tokens_file)) return false;
    } else if (a == "--no-auth") {
      o->no_auth = true;
    } else if (a == "--tls-cert") {
      if (!value(&o->tls_cert)) return false;
    } else if (a == "--tls-key") {
      if (!value(&o->tls_key)) return false;
    } else if (a == "--max-body" || a == "--timeout" || a == "--max-concurrent") {
      if (!value(&v)) return false;
      int64_t hi = a == "--max-concurrent" ? 100000 : INT64_MAX / 2;
      if (!ParseInt(v, 1, hi, &n)) {
        *error = a + " takes a positive number, not '" + v + "'";
        return false;
      }
      if (a == "--max-body") o->max_body = static_cast<size_t>(n);
      if (a == "--timeout") o->query_timeout_ms = n;
      if (a == "--max-concurrent") o->max_concurrent = static_cast<int>(n);
    } else if (a == "--access-log") {
      if (!value(&o->access_log)) return false;
    } else if (a == "--read-only") {
      o->read_only = true;
    } else if (a == "--replica") {
      if (!value(&v)) return false;
      o->replicas.push_back(v);
    } else if (a == "-h" || a == "--help") {
      *error = "";
      return false;
    } else if (!a.empty() && a[0] == '-' && a != "-") {
      *error = "unknown serve option '" + a + "'\nhint: mentat serve --help lists them";
      return false;
    } else if (!have_store) {
      o->store = a;
      have_store = true;
    } else {
      *error = "serve takes one store; unexpected '" + a + "'";
      return false;
    }
  }
  if (!have_store) {
    *error = "serve needs a store\nhint: mentat serve STORE --listen HOST:PORT --tokens FILE";
    return false;
  }
  if (o->tokens_file.empty() && !o->no_auth) {
    *error = "serve needs --tokens FILE (or --no-auth, on a loopback address only)";
    return false;
  }
  if (!o->tokens_file.empty() && o->no_auth) {
    *error = "--tokens and --no-auth exclude each other";
    return false;
  }
  if (o->tls_cert.empty() != o->tls_key.empty()) {
    *error = "TLS needs both --tls-cert and --tls-key";
    return false;
  }
  return true;
}

int RunServe(const ServeOptions& o) {
  if (o.no_auth && !IsLoopback(o.host)) {
    std::cerr << "error: --no-auth is allowed only on a loopback address (127.0.0.1, ::1, "
                 "localhost), not "
              << o.host << "\n";
    return 1;
  }
  Tokens tokens;
  if (!o.no_auth) {
    auto t = Tokens::Load(o.tokens_file);
    if (!t.ok()) {
      std::cerr << "error: " << t.status().message() << "\n";
      return 1;
    }
    tokens = std::move(*t);
  }
  AccessLog log(o.access_log);
  if (!log.ok(o.access_log)) {
    std::cerr << "error: cannot open the access log '" << o.access_log << "'\n";
    return 1;
  }
  Options so;
  so.read_only = o.read_only;
  so.create = !o.read_only;
  so.replicas = o.replicas;
  auto opened = Store::open(o.store, so);
  if (!opened.ok()) {
    std::cerr << "error: cannot open store '" << o.store << "': " << opened.status().message()
              << "\n";
    return 1;
  }
  std::shared_ptr<Store> store(std::move(*opened));

  std::unique_ptr<httplib::Server> svr;
  if (!o.tls_cert.empty()) {
    auto ssl = std::make_unique<httplib::SSLServer>(o.tls_cert.c_str(), o.tls_key.c_str());
    if (!ssl->is_valid()) {
      std::cerr << "error: cannot use the TLS certificate '" << o.tls_cert << "' and key '"
                << o.tls_key << "'\n";
      return 1;
    }
    svr = std::move(ssl);
  } else {
    svr = std::make_unique<httplib::Server>();
  }
  // A few threads more than requests allowed at once, so that those beyond the limit
  // get their 429 at once instead of waiting for a thread.
  const int threads = o.max_concurrent + 4;
  svr->new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  svr->set_payload_max_length(o.max_body);
  svr->set_keep_alive_max_count(100000);
  svr->set_tcp_nodelay(true);
  svr->set_read_timeout(30, 0);
  auto in_flight = std::make_shared<std::atomic<int>>(0);

  svr->set_logger([&log](const httplib::Request& req, const httplib::Response& res) {
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                          t_request_start)
                    .count();
    char took[32];
    std::snprintf(took, sizeof took, "%.3f", ms);
    log.Write(NowIso() + " " + req.remote_addr + " " + t_token_kind + " " + req.method + " " +
              req.path + " " + std::to_string(res.status) + " " + std::to_string(res.body.size()) +
              " " + took + "ms");
  });
  svr->set_pre_routing_handler([](const httplib::Request&, httplib::Response&) {
    t_request_start = std::chrono::steady_clock::now();
    t_token_kind = "-";
    return httplib::Server::HandlerResponse::Unhandled;
  });
  svr->set_exception_handler(
      [](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "unexpected exception";
        try {
          std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        SendError(res, 500, "internal error", what, WantsEdn(req));
      });
  svr->set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    std::string msg = res.status == 413   ? "the request body is larger than the server allows"
                      : res.status == 404 ? "no such endpoint: " + req.method + " " + req.path
                                          : "request failed";
    SendError(res, res.status, res.status == 413 ? "too large" : "http", msg, WantsEdn(req));
  });

  // Each endpoint: authentication (a write endpoint needs a read-write token), the
  // concurrency limit, then the handler.
  const int64_t max_timeout = o.query_timeout_ms;
  const int max_concurrent = o.max_concurrent;
  auto guarded = [&tokens, no_auth = o.no_auth, in_flight, max_concurrent](
                     bool write,
                     std::function<void(const httplib::Request&, httplib::Response&)> fn) {
    return [&tokens, no_auth, in_flight, max_concurrent, write, fn](const httplib::Request& req,
                                                                    httplib::Response& res) {
      bool edn = WantsEdn(req);
      if (!no_auth) {
        std::string auth = req.get_header_value("Authorization");
        const std::string kBearer = "Bearer ";
        auto access = auth.rfind(kBearer, 0) == 0 ? tokens.Find(auth.substr(kBearer.size()))
                                                  : TokenAccess::kNone;
        if (access == TokenAccess::kNone) {
          res.set_header("WWW-Authenticate", "Bearer");
          SendError(res, 401, "unauthorized",
                    auth.empty() ? "this endpoint needs Authorization: Bearer TOKEN"
                                 : "the token is not valid",
                    edn);
          return;
        }
        t_token_kind = access == TokenAccess::kReadWrite ? "rw" : "ro";
        if (write && access != TokenAccess::kReadWrite) {
          SendError(res, 403, "forbidden", "a read-only token cannot transact", edn);
          return;
        }
      }
      if (in_flight->fetch_add(1) >= max_concurrent) {
        in_flight->fetch_sub(1);
        res.set_header("Retry-After", "1");
        SendError(res, 429, "too many requests",
                  "the server is serving " + std::to_string(max_concurrent) +
                      " requests already; retry later",
                  edn);
        return;
      }
      struct Release {
        std::shared_ptr<std::atomic<int>> n;
        ~Release() { n->fetch_sub(1); }
      } release{in_flight};
      fn(req, res);
    };
  };

  svr->Get("/health", [store](const httplib::Request& req, httplib::Response& res) {
    auto t = store->last_tx();
    if (!t.ok()) return SendStatus(res, t.status(), WantsEdn(req));
    int64_t basis_t = *t >= ids::kTxStart ? tx_to_t(*t) : 0;
    if (WantsEdn(req)) {
      res.set_content("{:status \"ok\" :basis-t " + std::to_string(basis_t) + "}\n",
                      "application/edn");
    } else {
      res.set_content(JsonText(json{{"status", "ok"}, {"basisT", basis_t}}) + "\n",
                      "application/json");
    }
  });

  svr->Post(
      "/transact", guarded(true, [store](const httplib::Request& req, httplib::Response& res) {
        bool edn = WantsEdn(req);
        std::string text;
        if (BodyIsEdn(req)) {
          // An EDN body is the transaction data itself, or a map with :tx-data.
          auto v = edn::Read(req.body);
          if (!v.ok()) return SendStatus(res, v.status(), edn);
          if (v->is_map()) {
            const edn::Value* data = v->get(edn::Value::Keyword("tx-data"));
            if (!data)
              return SendError(res, 400, "invalid argument", "an EDN map body needs :tx-data", edn);
            text = edn::Print(*data);
          } else {
            text = req.body;
          }
        } else {
          auto b = ParseBody(req);
          if (!b.ok()) return SendStatus(res, b.status(), edn);
          auto it = b->fields.find("tx-data");
          if (it == b->fields.end()) it = b->fields.find("txData");
          if (it == b->fields.end() || !it->is_string())
            return SendError(res, 400, "invalid argument",
                             "the body needs \"tx-data\": a string of EDN transaction data", edn);
          text = it->get<std::string>();
        }
        auto r = store->transact(std::string_view(text));
        if (!r.ok()) return SendStatus(res, r.status(), edn);
        auto schema = store->schema();
        SendReport(res, r->ToEdn(schema.get()), edn);
      }));

  svr->Post(
      "/q",
      guarded(false, [store, max_timeout](const httplib::Request& req, httplib::Response& res) {
        bool edn = WantsEdn(req);
        auto b = ParseBody(req);
        if (!b.ok()) return SendStatus(res, b.status(), edn);
        auto query = EdnTextField(*b, "query", true);
        if (!query.ok()) return SendStatus(res, query.status(), edn);
        auto o = OptionsOf(*b, &*query, max_timeout);
        if (!o.ok()) return SendStatus(res, o.status(), edn);
        auto r = store->q(*query, *o);
        if (!r.ok()) return SendStatus(res, r.status(), edn);
        if (WantsNdjson(req)) {
          // One line of columns, then one line per row: written as the client reads.
          auto result = std::make_shared<QueryResult>(std::move(*r));
          res.set_chunked_content_provider(
              "application/x-ndjson", [result](size_t, httplib::DataSink& sink) {
                json cols = result->columns;
                std::string line = JsonText(json{{"columns", cols}}) + "\n";
                if (!sink.write(line.data(), line.size())) return false;
                bool maps = !result->map_keys.empty();
                for (const auto& row : result->rows) {
                  json out;
                  if (maps) {
                    out = json::object();
                    for (size_t i = 0; i < row.size() && i < result->map_keys.size(); ++i)
                      out[std::string(result->map_keys[i].str())] = EdnToJson(row[i]);
                  } else {
                    out = json::array();
                    for (const auto& v : row) out.push_back(EdnToJson(v));
                  }
                  line = JsonText(out) + "\n";
                  if (!sink.write(line.data(), line.size())) return false;
                }
                sink.done();
                return true;
              });
          return;
        }
        if (edn) return SendValue(res, r->ToEdn(), true);
        json cols = r->columns;
        res.set_content(JsonText(json{{"columns", cols}, {"result", EdnToJson(r->ToEdn())}}) + "\n",
                        "application/json");
      }));

  svr->Post("/pull", guarded(false, [store, max_timeout](const httplib::Request& req,
                                                         httplib::Response& res) {
              bool edn = WantsEdn(req);
              auto b = ParseBody(req);
              if (!b.ok()) return SendStatus(res, b.status(), edn);
              auto pattern = EdnTextField(*b, "pattern", true);
              if (!pattern.ok()) return SendStatus(res, pattern.status(), edn);
              auto eid = EidOf(*b);
              if (!eid.ok()) return SendStatus(res, eid.status(), edn);
              auto o = OptionsOf(*b, nullptr, max_timeout);
              if (!o.ok()) return SendStatus(res, o.status(), edn);
              auto r = DbOf(*store, *o).pull(*pattern, *eid);
              if (!r.ok()) return SendStatus(res, r.status(), edn);
              SendValue(res, *r, edn);
            }));

  svr->Post("/entity", guarded(false, [store, max_timeout](const httplib::Request& req,
                                                           httplib::Response& res) {
              bool edn = WantsEdn(req);
              auto b = ParseBody(req);
              if (!b.ok()) return SendStatus(res, b.status(), edn);
              auto eid = EidOf(*b);
              if (!eid.ok()) return SendStatus(res, eid.status(), edn);
              auto o = OptionsOf(*b, nullptr, max_timeout);
              if (!o.ok()) return SendStatus(res, o.status(), edn);
              auto e = DbOf(*store, *o).entity(*eid);
              if (!e.ok()) return SendStatus(res, e.status(), edn);
              auto touched = e->touch();
              if (!touched.ok()) return SendStatus(res, touched.status(), edn);
              SendValue(res, *touched, edn);
            }));

  svr->Get(
      "/datoms", guarded(false, [store](const httplib::Request& req, httplib::Response& res) {
        bool edn = WantsEdn(req);
        std::string index = req.has_param("index") ? req.get_param_value("index") : "eavt";
        if (!index.empty() && index[0] == ':') index.erase(0, 1);
        std::vector<edn::Value> components;
        if (req.has_param("components")) {
          auto c = edn::Read(req.get_param_value("components"));
          if (!c.ok()) return SendStatus(res, c.status(), edn);
          if (!c->is_vector())
            return SendError(res, 400, "invalid argument", "components must be an EDN vector", edn);
          components = c->items();
        }
        std::optional<size_t> limit;
        if (req.has_param("limit")) {
          int64_t n = 0;
          if (!ParseInt(req.get_param_value("limit"), 0, INT64_MAX, &n))
            return SendError(res, 400, "invalid argument", "limit must be a number", edn);
          limit = static_cast<size_t>(n);
        }
        // The database: asOf / since (a tx id), history (true).
        Db db = store->db();
        for (const char* name : {"asOf", "since"}) {
          if (!req.has_param(name)) continue;
          int64_t t = 0;
          if (!ParseInt(req.get_param_value(name), 0, INT64_MAX, &t))
            return SendError(res, 400, "invalid argument", std::string(name) + " must be a tx id",
                             edn);
          db = std::string(name) == "asOf" ? db.as_of(TxPoint::Tx(t)) : db.since(TxPoint::Tx(t));
        }
        if (req.has_param("history") && req.get_param_value("history") == "true") db = db.history();
        auto d = db.datoms(index, components);
        if (!d.ok()) return SendStatus(res, d.status(), edn);
        auto schema = store->schema();
        edn::Vec rows;
        for (const auto& x : *d) {
          if (limit && rows.size() >= *limit) break;
          const std::string* ident = schema->ident(x.a);
          rows.push_back(edn::Value::Vector(
              {edn::Value::Int(x.e), ident ? edn::Value::Keyword(*ident) : edn::Value::Int(x.a),
               x.v, edn::Value::Int(x.tx), edn::Value::Bool(x.added)}));
        }
        if (WantsNdjson(req)) {
          std::string body;
          for (const auto& r : rows) body += JsonText(EdnToJson(r)) + "\n";
          res.set_content(body, "application/x-ndjson");
          return;
        }
        SendValue(res, edn::Value::Vector(std::move(rows)), edn);
      }));

  svr->Get("/tx-range",
           guarded(false, [store](const httplib::Request& req, httplib::Response& res) {
             bool edn = WantsEdn(req);
             auto point = [&](const char* name) -> Result<std::optional<TxPoint>> {
               if (!req.has_param(name)) return std::optional<TxPoint>();
               std::string v = req.get_param_value(name);
               int64_t n = 0;
               if (ParseInt(v, INT64_MIN / 2, INT64_MAX, &n))
                 return std::optional<TxPoint>(TxPoint::Tx(n));
               auto t = edn::ParseInstant(v);
               if (!t.ok())
                 return Status::InvalidArgument(std::string(name) +
                                                " must be a t, a tx id or an RFC 3339 instant");
               return std::optional<TxPoint>(TxPoint::Instant(*t));
             };
             auto from = point("from");
             if (!from.ok()) return SendStatus(res, from.status(), edn);
             auto to = point("to");
             if (!to.ok()) return SendStatus(res, to.status(), edn);
             std::optional<size_t> limit;
             if (req.has_param("limit")) {
               int64_t n = 0;
               if (!ParseInt(req.get_param_value("limit"), 0, INT64_MAX, &n))
                 return SendError(res, 400, "invalid argument", "limit must be a number", edn);
               limit = static_cast<size_t>(n);
             }
             auto txs = store->tx_range(*from, *to, limit);
             if (!txs.ok()) return SendStatus(res, txs.status(), edn);
             SendReport(res, LogToEdn(*txs, *store->schema()), edn);
           }));

  // Port 0: any free port (the line below names it).
  int port = o.port;
  if (port == 0) {
    port = svr->bind_to_any_port(o.host);
  } else if (!svr->bind_to_port(o.host, port)) {
    port = -1;
  }
  if (port < 0) {
    std::cerr << "error: cannot listen on " << o.host << ":" << o.port << "\n";
    return 1;
  }

  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
  g_server.store(svr.get());
  std::thread stopper([&svr] {
    while (!g_stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    svr->stop();
  });
  std::cerr << "mentat serve: listening on " << (o.tls_cert.empty() ? "http" : "https") << "://"
            << (o.host.find(':') != std::string::npos ? "[" + o.host + "]" : o.host) << ":" << port
            << " (store " << (o.store.empty() ? "in memory" : o.store) << ", "
            << (o.no_auth
                    ? "no auth"
                    : std::to_string(tokens.size()) + (tokens.size() == 1 ? " token" : " tokens"))
            << ")" << std::endl;
  bool ok = svr->listen_after_bind();
  g_stop.store(true);
  stopper.join();
  g_server.store(nullptr);
  std::cerr << "mentat serve: stopped" << std::endl;
  return ok || g_stop.load() ? 0 : 1;
}

}  // namespace mentat::cli
