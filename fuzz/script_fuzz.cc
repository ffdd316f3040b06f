// Fuzz target: the scripting language (include/mentat/script.h) with the fuzz store as its
// default connection.
//
// The input is a script, run on a fresh copy of the fuzz store. Small step, memory and depth limits
// keep every run short. Invariants: never a crash or an internal error; errors have messages; the
// sandbox holds (only in-memory stores may be opened).
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_store.h"
#include "mentat/script.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using mentat::fuzz::Fail;
  if (size > 8 * 1024) return 0;
  // A fresh store per input: scripts transact, and every input must replay the same.
  auto store = mentat::fuzz::MakeFuzzStore();
  mentat::script::Options o;
  o.max_steps = 200'000;
  o.max_memory_bytes = 16 * 1024 * 1024;
  o.max_depth = 200;
  o.allow_open = [](const std::string& path) { return path.empty() || path == ":memory:"; };
  o.output = [](std::string_view) {};
  mentat::script::Interpreter in(o);
  in.SetStore(store.get());
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto r = in.EvalToString(text);
  if (!r.ok()) {
    if (r.status().code() == mentat::Code::kInternal)
      Fail("internal error: " + r.status().ToString());
    if (r.status().message().empty()) Fail("an error without a message");
  }
  return 0;
}
