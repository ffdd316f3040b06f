// Fuzz target: options_from_json (the query options of the CLI and both extensions).
//
// The input is a query, a newline, and the options JSON. Invariants: never a crash or an
// internal error; errors are invalid-argument or parse errors with a message.
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_store.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 16 * 1024) return 0;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  size_t nl = text.find('\n');
  std::string_view query =
      nl == std::string_view::npos ? "[:find ?e :where [?e :f/name _]]" : text.substr(0, nl);
  std::string_view json = nl == std::string_view::npos ? text : text.substr(nl + 1);
  auto o = mentat::options_from_json(query, json);
  if (!o.ok()) {
    auto code = o.status().code();
    if (code == mentat::Code::kInternal)
      mentat::fuzz::Fail("internal error: " + o.status().ToString());
    if (o.status().message().empty()) mentat::fuzz::Fail("an error without a message");
  }
  return 0;
}
