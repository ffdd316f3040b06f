// `mentat serve STORE --listen HOST:PORT --tokens FILE`: mentat's HTTP/JSON API over one
// store (doc/server.md): POST /transact, /q, /pull, /entity; GET /datoms, /tx-range,
// /health. Bearer tokens (read-write or read-only), TLS, limits on body size, query time
// and concurrent requests, graceful shutdown on SIGTERM or SIGINT, an access log.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mentat::cli {

struct ServeOptions {
  std::string store;  // a file, "" in-memory, or a PostgreSQL name
  std::string host = "127.0.0.1";
  int port = 8080;                    // 0: any free port (printed on start)
  std::string tokens_file;            // --tokens FILE
  bool no_auth = false;               // --no-auth: loopback addresses only
  std::string tls_cert, tls_key;      // --tls-cert FILE --tls-key FILE
  size_t max_body = 16u << 20;        // --max-body BYTES: larger bodies get 413
  int64_t query_timeout_ms = 30000;   // --timeout MS: the most a request may run (504)
  int max_concurrent = 64;            // --max-concurrent N: more requests in flight get 429
  std::string access_log = "-";       // --access-log FILE ("-": standard error; "": none)
  bool read_only = false;             // --read-only: the store is opened read-only
  std::vector<std::string> replicas;  // --replica NAME
};

// Parses the arguments after `serve`. False with *error set (naming the argument) on a
// bad one.
bool ParseServeArgs(const std::vector<std::string>& argv, ServeOptions* options,
                    std::string* error);

// Runs the server until SIGTERM or SIGINT, then finishes the requests in flight and
// returns 0; 1 (with a message on standard error) when it cannot start.
int RunServe(const ServeOptions& options);

// The usage text of `mentat serve`.
extern const char* const kServeUsage;

}  // namespace mentat::cli
